"""Whether the compiled hot path (`rocpy._hot`) is in use.

`rocpy._hot` is a stable-ABI CPython extension built by ``setup.py`` next to
the cffi modules (rocpy/_native/hot/hot.c).  Where it is missing (a build
without a C compiler for it, another interpreter) rocpy runs the pure-Python
path, which gives the same kernel arguments and the same exceptions.
``ROCPY_HOT=0`` turns it off at import; tests switch it per object with
`disabled`, since each object chooses once, when it is made.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

try:
    from . import _hot as _compiled
except ImportError:  # pragma: no cover - the fallback is tested with disabled()
    _compiled = None

if _compiled is not None:
    from .errors import hip_error
    _compiled.set_error_factory(hip_error)

_enabled = _compiled is not None and os.environ.get("ROCPY_HOT", "1") != "0"


def module() -> Any:
    """`rocpy._hot`, or None where the pure-Python path is in use."""
    return _compiled if _enabled else None


def compiled() -> Any:
    """`rocpy._hot` where it was built, whether or not in use (for what only speeds up
    reads, such as its slot descriptors)."""
    return _compiled


def available() -> bool:
    """Whether the extension was built and imported (whatever `disabled` says)."""
    return _compiled is not None


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Objects made inside use the pure-Python path (for differential tests)."""
    global _enabled
    saved, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = saved
