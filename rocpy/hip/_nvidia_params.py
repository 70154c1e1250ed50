"""Kernel parameter layout on the nvidia backend, from the CUDA driver.

cubins carry no AMDGPU metadata; the driver knows each parameter's offset and
size (``cuFuncGetParamInfo``, in the driver API since CUDA 12.4, so present in
any current driver even under the 11.8 runtime this backend is built with).
The driver gives no types: those come from the kernel's mangled name (or
``Module.load(param_types=)``) through `rocpy.codeobject.paramtypes`, as on AMD.
"""
from __future__ import annotations

import ctypes
from typing import Any

_CUDA_SUCCESS = 0
_CUDA_ERROR_INVALID_VALUE = 1
_MAX_PARAMS = 4096          # CUDA's parameter space is 32 KiB; never loop forever


def _driver_function() -> Any:
    lib = ctypes.CDLL("libcuda.so.1")
    fn = getattr(lib, "cuFuncGetParamInfo", None)
    if fn is None:
        raise NotImplementedError("this CUDA driver has no cuFuncGetParamInfo (needs CUDA 12.4+)")
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                   ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    return fn


def param_layout(function_address: int) -> list[tuple[int, int]]:
    """``[(offset, size), ...]`` of a ``CUfunction``'s parameters, in order."""
    get = _driver_function()
    offset, size = ctypes.c_size_t(), ctypes.c_size_t()
    out: list[tuple[int, int]] = []
    for index in range(_MAX_PARAMS):
        status = get(ctypes.c_void_p(function_address), index, ctypes.byref(offset),
                     ctypes.byref(size))
        if status == _CUDA_ERROR_INVALID_VALUE:
            break
        if status != _CUDA_SUCCESS:
            raise RuntimeError(f"cuFuncGetParamInfo failed with CUresult {status}")
        out.append((offset.value, size.value))
    return out
