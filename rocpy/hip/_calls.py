"""The HIP layer's hot runtime calls, by address: compiled where `rocpy._hot` is
in use, cffi otherwise; same statuses either way.

Each ``bind_*`` returns a callable taking ints (handles and addresses as
`rocpy.hip._lane` keeps them) and returning the runtime's status: through
``rocpy._hot.call_*`` with the function's address taken from the backend's cffi
module (``ffi.addressof(lib, name)``), or the cffi function with the ints cast
back.  Call sites bind once, at their first call.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import _hotpath
from ._api import api


def _address(name: str) -> int:
    a = api()
    return int(a.ffi.cast("uintptr_t", a.ffi.addressof(a.lib, name)))


def bind_p(name: str, ctype: str) -> Callable[[int], int]:
    """``int name(ctype)``: one handle."""
    hot = _hotpath.module()
    if hot is not None:
        return functools.partial(hot.call_p, _address(name))
    a = api()
    fn, cast = getattr(a.lib, name), a.ffi.cast
    return lambda x: fn(cast(ctype, x))


def bind_pp(name: str, ctype_a: str, ctype_b: str) -> Callable[[int, int], int]:
    """``int name(ctype_a, ctype_b)``: two handles."""
    hot = _hotpath.module()
    if hot is not None:
        return functools.partial(hot.call_pp, _address(name))
    a = api()
    fn, cast = getattr(a.lib, name), a.ffi.cast
    return lambda x, y: fn(cast(ctype_a, x), cast(ctype_b, y))


def bind_ppu(name: str, ctype_a: str, ctype_b: str) -> Callable[[int, int, int], int]:
    """``int name(ctype_a, ctype_b, unsigned)``."""
    hot = _hotpath.module()
    if hot is not None:
        return functools.partial(hot.call_ppu, _address(name))
    a = api()
    fn, cast = getattr(a.lib, name), a.ffi.cast
    return lambda x, y, u: fn(cast(ctype_a, x), cast(ctype_b, y), u)


def bind_memcpy_async() -> Callable[[int, int, int, int, int], int]:
    """``hipMemcpyAsync(dst, src, nbytes, kind, stream)``."""
    hot = _hotpath.module()
    if hot is not None:
        return functools.partial(hot.call_memcpy_async, _address("hipMemcpyAsync"))
    a = api()
    fn, cast = a.lib.hipMemcpyAsync, a.ffi.cast
    return lambda d, s, n, k, st: fn(cast("void *", d), cast("void *", s), n, k,
                                     cast("hipStream_t", st))


def address_of(handle: Any) -> int:
    """A cffi handle as the int these calls take."""
    return int(api().ffi.cast("uintptr_t", handle))
