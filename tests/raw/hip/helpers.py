"""Helpers of the raw HIP tests (C-level calls through rocpy.hip.lib).

Every test module here says which kind of behaviour it checks:

* platform-independent -- what HIP promises on every platform; runs on the
  stub, amd and nvidia backends;
* ``@hipamd`` -- what AMD's hipamd (ROCm 5.2, the installed headers) does
  where HIP's NVIDIA platform differs (status codes of bad input, the last
  error kept after successes...); skipped on nvidia;
* ``@stub_only`` -- the stub's own machinery (fault injection, kernel
  emulations, live allocation counts); skipped on real backends.
"""
from __future__ import annotations

import threading
import time

import pytest

import rocpy
from rocpy import hip

BACKEND = rocpy.backend().name
ffi = hip.ffi


class _DevicePointersAsIntegers:
    """HIP's NVIDIA platform declares ``hipDeviceptr_t`` as an integer
    (``CUdeviceptr``) where AMD has a pointer (a platform difference): there,
    a pointer passed for an integer parameter is passed as its address."""

    def __init__(self, raw) -> None:
        self._raw = raw

    def __getattr__(self, name: str):
        attr = getattr(self._raw, name)
        try:
            args = ffi.typeof(attr).args
        except TypeError:
            return attr                       # a constant
        integer = [i for i, t in enumerate(args) if t.kind == "primitive"
                   and t.cname in ("unsigned long long", "unsigned long")]
        if not integer:
            return attr

        def call(*values):
            values = list(values)
            for i in integer:
                v = values[i] if i < len(values) else None
                if isinstance(v, ffi.CData) and ffi.typeof(v).kind == "pointer":
                    values[i] = int(ffi.cast("uintptr_t", v))
            return attr(*values)
        return call


lib = _DevicePointersAsIntegers(hip.lib) if BACKEND == "nvidia" else hip.lib

# the header's ((hipStream_t)2), a cast the constant pipeline does not carry
PER_THREAD = ffi.cast("hipStream_t", 2)

hipamd = pytest.mark.skipif(BACKEND == "nvidia", reason="hipamd-specific behaviour")
stub_only = pytest.mark.stub_only  # the plugin skips it on a real GPU, saying why


def name(status: int) -> str:
    # the enum's own name: on HIP's NVIDIA platform hipGetErrorName returns
    # CUDA's names ("cudaSuccess"), a platform difference tested separately
    return ffi.string(ffi.cast("hipError_t", status))


def requires(*functions: str):
    """Skip where the platform lacks a function (HIP 5.2's NVIDIA headers
    declare graphs, capture and arrays for nvcc only: rocpy.hip.missing)."""
    absent = [f for f in functions if f in hip.missing or not hasattr(lib, f)]
    return pytest.mark.skipif(bool(absent), reason=f"{', '.join(absent)} not on this platform")


def check(status: int, expected: str = "hipSuccess") -> None:
    """Assert a status by its name, so a failure message names both."""
    assert name(status) == expected, f"got {name(status)} ({status}), expected {expected}"


def ok(status: int) -> None:
    check(status, "hipSuccess")


def device_count() -> int:
    n = ffi.new("int *")
    lib.hipGetDeviceCount(n)
    return n[0]


def run_python(code: str, **env: str):
    """Run code in a fresh interpreter (device configuration is read once)."""
    import os
    import subprocess
    import sys
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full, timeout=120)


def malloc(size: int) -> object:
    p = ffi.new("void **")
    ok(lib.hipMalloc(p, size))
    return p[0]


def host_malloc(size: int, flags: int = 0) -> object:
    p = ffi.new("void **")
    ok(lib.hipHostMalloc(p, size, flags))
    return p[0]


def stream(flags: int = 0) -> object:
    s = ffi.new("hipStream_t *")
    ok(lib.hipStreamCreateWithFlags(s, flags))
    return s[0]


def event(flags: int = 0) -> object:
    e = ffi.new("hipEvent_t *")
    ok(lib.hipEventCreateWithFlags(e, flags))
    return e[0]


class HostLog:
    """Host functions that append to a shared log, optionally after a delay:
    ``log.enqueue(stream, "A", delay=0.1)``.  Keeps the callbacks alive."""

    def __init__(self) -> None:
        self.entries: list = []
        self._lock = threading.Lock()
        self._keep: list = []

    def _callback(self, tag, delay):
        def fn(_user):
            if delay:
                time.sleep(delay)
            with self._lock:
                self.entries.append(tag)
        cb = ffi.callback("void(void *)", fn)
        self._keep.append(cb)
        return cb

    def enqueue(self, s, tag, delay: float = 0.0) -> None:
        if "hipLaunchHostFunc" in hip.missing:      # NVIDIA platform: not in C
            fn = self._callback(tag, delay)
            cb = ffi.callback("void(hipStream_t, hipError_t, void *)", lambda _s, _e, u: fn(u))
            self._keep.append(cb)
            ok(lib.hipStreamAddCallback(s, cb, ffi.NULL, 0))
        else:
            ok(lib.hipLaunchHostFunc(s, self._callback(tag, delay), ffi.NULL))

    def host_fn(self, tag, delay: float = 0.0):
        return self._callback(tag, delay)


def memory_type(attrs) -> int:
    """hipPointerAttribute_t's memory type: ``memoryType`` until HIP 6.0 named it
    ``type`` (5.7 has both, in a union)."""
    return attrs.type if hasattr(attrs, "type") else attrs.memoryType
