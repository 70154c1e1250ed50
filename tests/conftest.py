"""The suite's one harness: the rocpy pytest plugin (markers ``gpu``/``stub_only``/
``backend``, leak checks, stub controls), the project's markers (declared in
pyproject.toml) and their skips, and the fixtures every folder shares.

Folder conftests add only fixtures and, for their own items, ``pytest_runtest_setup``
skips (a runtest hook of a folder's conftest sees that folder's items only); no
conftest but this one decides skips by marker.
"""
from __future__ import annotations

import os
import signal
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the stub's HSA queues start packets without the barrier bit before earlier
# ones finish (as hardware may), so a missing barrier gives wrong results
os.environ.setdefault("ROCPY_STUB_AQL_OVERLAP", "1")
# rocpy's own test kernels (tests/kernels: empty, vadd, fill) run as the stub's
# built-in emulations, which a kernel of the same name gets only when asked for
os.environ.setdefault("ROCPY_STUB_BUILTINS", "empty,vadd,fill")
# the Ctrl-C tests need SIGINT to raise KeyboardInterrupt here and in the children they
# start; a suite launched in the background of a non-interactive shell (CI runners,
# `cmd &`) inherits SIGINT ignored, which Python then leaves ignored, and so do children
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from kernels.compile import compile_hip, find_hipcc  # noqa: E402
from live import kernel_loader, spin_fill  # noqa: E402


def _plugin_from_entry_point() -> bool:
    """True when pytest loads rocpy.testing.plugin itself (an installed rocpy)."""
    if os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return False
    from importlib.metadata import entry_points
    return any(ep.value == "rocpy.testing.plugin" for ep in entry_points(group="pytest11"))


# a source checkout has no entry point: load the plugin from here
pytest_plugins = ["pytester"] + ([] if _plugin_from_entry_point() else ["rocpy.testing.plugin"])


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


def _project_skip(item) -> str | None:
    """Why the project's markers (pyproject.toml) skip `item` on this backend."""
    import rocpy
    backend = rocpy.backend().name
    if item.get_closest_marker("amd_code") and backend == "nvidia":
        return "AMD code objects; the backend is nvidia"
    if item.get_closest_marker("graphs"):
        from rocpy import hip
        if not hasattr(hip.lib, "hipGraphCreate"):
            return "this backend's HIP has no graph API"
    return None


def pytest_runtest_setup(item):
    reason = _project_skip(item)
    if reason:
        pytest.skip(reason)
