"""Backend selection: ROCPY_BACKEND, the reason given, and errors (subprocesses:
the choice is made once per process)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _run(code: str, **env) -> subprocess.CompletedProcess:
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full, timeout=120)


def _has_gpu() -> bool:
    return _run("import rocpy; print(rocpy.backend().name)", ROCPY_BACKEND="auto").stdout.strip() != "stub"


def test_auto_explains_why_it_took_the_stub():
    if _has_gpu():
        pytest.skip("this machine has a GPU")
    out = _run("import rocpy; b = rocpy.backend(); print(b.name); print(b.reason)",
               ROCPY_BACKEND="auto")
    assert out.returncode == 0, out.stderr
    name, reason = out.stdout.splitlines()[:2]
    assert name == "stub"
    assert "no GPU found" in reason
    try:
        import rocpy._lib_amd  # noqa: F401
        assert "HSA_STATUS_ERROR_OUT_OF_RESOURCES" in reason
    except ImportError:
        assert "amd" in reason


def test_explicit_stub():
    out = _run("import rocpy; b = rocpy.backend(); print(b.name, b.is_stub)", ROCPY_BACKEND="stub")
    assert out.stdout.split() == ["stub", "True"]


def _amd_built() -> bool:
    import importlib.util
    return importlib.util.find_spec("rocpy._lib_amd") is not None


def test_explicit_amd_without_gpu_loads_the_real_runtime_and_surfaces_its_statuses():
    # the C API and AMD's own bindings load the libraries and report their statuses;
    # a backend asked for by name does the same (auto skips it: see above)
    if not _amd_built():
        pytest.skip("rocpy._lib_amd is not built (no ROCm libraries at build time)")
    if _has_gpu():
        pytest.skip("this machine has a GPU")
    code = """
import rocpy
b = rocpy.backend()
print(b.name)
print(b.reason)
try:
    rocpy.Device(0)
except rocpy.NoDeviceError as exc:
    print(type(exc).__name__, exc.name)
try:
    rocpy.hsa.Runtime()
except rocpy.HsaError as exc:
    print(type(exc).__name__, exc.name)
print(rocpy.debug.live_objects())
"""
    out = _run(code, ROCPY_BACKEND="amd")
    assert out.returncode == 0, out.stderr
    name, reason, hip, hsa, live = out.stdout.splitlines()
    assert name == "amd"
    assert "HSA_STATUS_ERROR_OUT_OF_RESOURCES" in reason and "loaded anyway" in reason
    assert hip.split() == ["HipNoDeviceError", "hipErrorNoDevice"]
    assert hsa.split()[1] == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"
    assert hsa.split()[0].startswith("Hsa")
    assert live == "{}"


def test_explicit_backend_that_is_not_built_is_refused_with_how_to_build():
    # nvidia is built only with ROCPY_BUILD_NVIDIA=1
    import importlib.util
    if importlib.util.find_spec("rocpy._lib_nvidia") is not None:
        pytest.skip("the nvidia backend is built here")
    out = _run("import rocpy\ntry:\n    rocpy.backend()\nexcept rocpy.NotBuiltError as e:\n"
               "    print(isinstance(e, rocpy.RocpyError), e)", ROCPY_BACKEND="nvidia")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("True rocpy's extension modules are not built (no rocpy._lib_nvidia")
    assert "tools/install.sh" in out.stdout


@pytest.fixture(scope="module")
def unbuilt_tree(tmp_path_factory):
    """A copy of the rocpy package without its compiled modules (a source tree never built)."""
    import shutil
    import rocpy
    dest = tmp_path_factory.mktemp("unbuilt")
    shutil.copytree(os.path.dirname(rocpy.__file__), dest / "rocpy",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    return str(dest)


@pytest.mark.parametrize("code", [
    "import rocpy.hsa; rocpy.hsa.lib",
    "import rocpy; rocpy.hip.lib",
    "import rocpy; rocpy.backend()",
])
def test_unbuilt_extension_modules_raise_a_clear_error(unbuilt_tree, code):
    # -S: no .pth files, so an editable install of another checkout cannot supply the
    # modules; the site directories stay reachable (numpy) through PYTHONPATH
    import site
    path = os.pathsep.join([unbuilt_tree, *site.getsitepackages()])
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=unbuilt_tree,
                         env=dict(os.environ, PYTHONPATH=path, ROCPY_BACKEND="auto"))
    assert out.returncode != 0
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("rocpy._backend.NotBuiltError: rocpy's extension modules are not "
                           "built (no rocpy._lib_amd, rocpy._lib_nvidia, rocpy._lib_stub")
    assert "bash tools/install.sh" in last and "KeyError" not in out.stderr


def test_subpackages_are_attributes_after_import_rocpy():
    code = ("import rocpy; print(rocpy.hsa.__name__, rocpy.hip.__name__, rocpy.codeobject.__name__, "
            "rocpy.hsa.lib is rocpy.hip.lib, hasattr(rocpy.hsa.lib, 'hsa_init'))")
    out = _run(code, ROCPY_BACKEND="stub")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["rocpy.hsa", "rocpy.hip", "rocpy.codeobject", "True", "True"]


def test_unknown_attribute_is_still_an_attribute_error():
    out = _run("import rocpy\ntry:\n    rocpy.nosuch\nexcept AttributeError as e:\n    print(e)")
    assert out.stdout.strip() == "module 'rocpy' has no attribute 'nosuch'"


def test_unknown_backend_is_refused():
    out = _run("import rocpy; rocpy.backend()", ROCPY_BACKEND="cuda")
    assert out.returncode != 0 and "is not one of auto, amd, nvidia, stub" in out.stderr


def test_choice_never_changes_after_first_use():
    code = ("import os, rocpy; a = rocpy.backend(); os.environ['ROCPY_BACKEND'] = 'amd'; "
            "print(rocpy.backend() is a)")
    assert _run(code, ROCPY_BACKEND="stub").stdout.strip() == "True"


def test_raw_modules_are_public():
    code = ("import rocpy.hsa, rocpy.hip; print(rocpy.hsa.lib is rocpy.hip.lib, "
            "hasattr(rocpy.hip.lib, 'hipGetDeviceCount'), rocpy.hip.missing)")
    out = _run(code, ROCPY_BACKEND="stub")
    assert out.stdout.split() == ["True", "True", "()"]


def test_importing_rocpy_chooses_nothing_yet():
    code = "import sys, rocpy; print(any(m.startswith('rocpy._lib_') for m in sys.modules))"
    assert _run(code).stdout.strip() == "False"
