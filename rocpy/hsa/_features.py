"""HSA functions the headers rocpy was built against may lack (newer than the build's ROCm)."""
from __future__ import annotations

from typing import Any

from ..errors import NotSupportedError
from ._common import api


def function(name: str) -> Any:
    """``lib.<name>``, or `NotSupportedError` naming it where the build's headers lack it."""
    _, lib = api()
    fn = getattr(lib, name, None)
    if fn is None:
        raise NotSupportedError(f"{name} is not declared by the HSA headers rocpy was built "
                                "against (it needs a newer ROCm's hsa_ext_amd.h): rebuild "
                                "rocpy against those headers to use it")
    return fn


def has(name: str) -> bool:
    """Whether the build's headers declare `name`."""
    _, lib = api()
    return getattr(lib, name, None) is not None
