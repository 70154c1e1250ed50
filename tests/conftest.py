"""Fixtures shared by the whole test suite."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the stub's HSA queues start packets without the barrier bit before earlier
# ones finish (as hardware may), so a missing barrier gives wrong results
os.environ.setdefault("ROCPY_STUB_AQL_OVERLAP", "1")
# rocpy's own test kernels (tests/kernels: empty, vadd, fill) run as the stub's
# built-in emulations, which a kernel of the same name gets only when asked for
os.environ.setdefault("ROCPY_STUB_BUILTINS", "empty,vadd,fill")

from kernels.compile import compile_hip, find_hipcc  # noqa: E402
from live import kernel_loader, spin_fill  # noqa: E402


@pytest.fixture(scope="session")
def kernel_cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("kernels"))


@pytest.fixture(scope="session")
def hip_kernel(kernel_cache):
    """``hip_kernel("vadd", archs=("gfx90a",))`` -> path of a compiled offload bundle.

    ``flags=("-mcode-object-version=5",)`` passes extra hipcc flags."""
    if find_hipcc() is None:
        pytest.skip("hipcc is not installed: no test kernels can be compiled")

    def build(name: str, archs: tuple[str, ...] = ("gfx90a",),
              flags: tuple[str, ...] = ()) -> str:
        return compile_hip(name, kernel_cache, archs, flags)
    return build


@pytest.fixture
def load(kernel_file, dev):
    """``load("vadd")`` -> the kernel, from a module loaded for this test (the suites
    that use it define ``kernel_file`` and ``dev``)."""
    return kernel_loader(kernel_file, dev)


@pytest.fixture
def spin(load, dev):
    """``spin(buf, value, ms, stream=None)``: enqueue a fill that takes about ``ms``
    (a sleeping emulation on the stub)."""
    yield from spin_fill(load, dev)


def pytest_configure(config):
    config.addinivalue_line("markers", "version_sensitive: the expectation differs between ROCm "
                            "releases (tests/rocm_versions.py); CI runs these under ROCPY_STUB_ROCM=7.0 too")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``device`` need a real GPU backend; on the stub they skip, saying why."""
    import rocpy
    info = rocpy.backend()
    if not info.is_stub:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU; the backend is the stub ({info.reason})")
    for item in items:
        if "device" in item.keywords:
            item.add_marker(skip)
