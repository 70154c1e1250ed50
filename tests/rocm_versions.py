"""Expectations that differ between ROCm releases, each written once.

``expect({(5, 2): "hipErrorContextIsDestroyed", (5, 7): "hipErrorInvalidHandle"})``
gives the value of the newest release at or below the runtime's: on the stub the
release it emulates (``ROCPY_STUB_ROCM``, else the headers'), on a real GPU the
one ``hipRuntimeGetVersion`` reports.  ``hsa=True`` asks for the HSA half's
release instead: ROCr facts follow the HSA headers' release, which need not be
HIP's (Debian 13 pairs HIP 5.7 with ROCr 6.1).  Tests that use it are marked
``version_sensitive`` (CI runs them under 5.2 and the newest release too).
"""
from __future__ import annotations

import functools
from typing import Mapping, TypeVar

import pytest

T = TypeVar("T")

version_sensitive = pytest.mark.version_sensitive


@functools.lru_cache(maxsize=None)
def runtime_release(hsa: bool = False) -> tuple[int, int] | None:
    """``(major, minor)`` of the HIP runtime in use (``hsa``: of ROCr); None on
    HIP's NVIDIA platform (hipRuntimeGetVersion is CUDA's there).  On a GPU
    both halves come from one ROCm install: hipRuntimeGetVersion tells it."""
    import rocpy
    from rocpy import hip
    backend = rocpy.backend().name
    if backend == "nvidia":
        return None
    if backend == "stub":
        from rocpy import stub
        return stub.hsa_version() if hsa else stub.rocm_version()
    out = hip.ffi.new("int *")
    if hip.lib.hipRuntimeGetVersion(out) != 0:
        raise RuntimeError("hipRuntimeGetVersion failed")
    return out[0] // 10_000_000, out[0] // 100_000 % 100


def at_least(major: int, minor: int, *, hsa: bool = False) -> bool:
    """Whether the runtime (``hsa``: ROCr) is release ``major.minor`` or newer."""
    release = runtime_release(hsa)
    return release is not None and release >= (major, minor)


def expect(by_release: Mapping[tuple[int, int], T], *, hsa: bool = False) -> T:
    """The value for the runtime's release (``hsa``: ROCr's): that of the newest
    key not newer than it."""
    release = runtime_release(hsa)
    if release is None:
        pytest.skip("a ROCm release's behaviour: HIP's NVIDIA platform has no ROCm release")
    older = [r for r in by_release if r <= release]
    if not older:
        raise ValueError(f"no expectation for ROCm {release[0]}.{release[1]}: "
                         f"the oldest given is {min(by_release)}")
    return by_release[max(older)]
