"""rocpy.hip.Program: run-time compilation (hipRTC; on the stub, rocpy's driver) into a Module."""
from __future__ import annotations

import numpy as np
import pytest

import rocpy
from rocpy import hip
from rocpy.hip import program as program_module

SCALE = """
extern "C" __global__ void scale(float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""


def _no_compiler() -> bool:
    from rocpy.hip._api import api
    a = api()
    return a.name == "nvidia" and not a.has("hiprtcCreateProgram")


@pytest.fixture
def compiler(dev):
    if rocpy.backend().name == "stub" and program_module._find_hipcc() is None:
        pytest.skip("the stub compiles with hipcc, which is not installed")
    if _no_compiler():
        pytest.skip("no hipRTC on this backend (see test_without_a_compiler)")


def test_without_a_compiler(dev):
    if not _no_compiler():
        pytest.skip("this backend can compile")
    with pytest.raises(rocpy.NotSupportedError):
        hip.Program(SCALE).compile(dev)


def test_compile_and_load(dev, compiler):
    prog = hip.Program(SCALE, name="scale.hip")
    mod = prog.compile(dev, options=["-O2"])
    assert "scale" in mod.names and prog.code is not None and prog.compiler
    k = mod["scale"]
    assert [p.size for p in k.params] == [8, 4, 4]
    mod.close()


@pytest.mark.stub_only
def test_compiled_kernel_runs_with_an_emulation(dev, compiler):
    import rocpy.stub
    mod = hip.Program(SCALE).compile(dev)
    k = mod["scale"]

    def emulate(d):
        x = d.array(d.arg(0, "Q"), np.float32, d.arg(12, "i"))
        x *= d.arg(8, "f")
    rocpy.stub.register_kernel("scale", emulate)
    try:
        buf = dev.context.alloc(256 * 4)
        buf.copy_from(np.ones(256, np.float32))
        k.launch(1, 256, (buf, 3.0, np.int32(256)))
        out = np.empty(256, np.float32)
        buf.copy_to(out)
        assert (out == 3).all()
    finally:
        rocpy.stub.unregister_kernel("scale")


def test_headers(dev, compiler):
    source = '#include "factor.h"\n' + SCALE.replace("*= a", "*= a * FACTOR")
    mod = hip.Program(source, headers={"factor.h": "#define FACTOR 2.0f\n"}).compile(dev)
    assert "scale" in mod.names
    mod.close()
    with pytest.raises(rocpy.HiprtcError, match="factor.h"):     # the header is what made it build
        hip.Program(source).compile(dev)


def test_compile_error_carries_the_log(dev, compiler):
    prog = hip.Program('extern "C" __global__ void broken() { this is not C++; }',
                       name="broken.hip")
    with pytest.raises(rocpy.HiprtcError) as info:
        prog.compile(dev)
    err = info.value
    assert err.name == "HIPRTC_ERROR_COMPILATION"
    assert "broken.hip" in err.log and "error" in err.log.lower()
    assert "error" in str(err).lower()


def test_no_compiler_is_not_supported(dev, monkeypatch):
    """A backend without hipRTC (Debian's ROCm builds) and no hipcc."""
    if rocpy.backend().name != "stub":
        pytest.skip("the stub's compiler path")
    monkeypatch.setattr(program_module.Program, "_use_hiprtc", lambda self: False)
    monkeypatch.setattr(program_module, "_find_hipcc", lambda: None)
    with pytest.raises(rocpy.NotSupportedError, match="hipcc"):
        hip.Program(SCALE).compile(dev)
    with pytest.raises(rocpy.NotSupportedError, match="name_expressions need hipRTC"):
        hip.Program(SCALE).compile(dev, name_expressions=["scale"])


@pytest.mark.stub_only
def test_the_stubs_hiprtc_without_compilers_fails_with_a_log(dev, monkeypatch):
    """The stub's hipRTC runs rocpy's driver, which finds neither compiler on an empty PATH."""
    import sys
    monkeypatch.setenv("ROCPY_PYTHON", sys.executable)
    monkeypatch.setenv("PATH", "")
    for var in ("HIPCC", "ROCM_PATH", "CXX", "ROCPY_CPUKERN_CXX"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(rocpy.HiprtcError) as info:
        hip.Program(SCALE).compile(dev)
    assert info.value.name == "HIPRTC_ERROR_COMPILATION"
    assert "no host C++ compiler found" in info.value.log


@pytest.mark.stub_only
def test_extern_c_kernels_are_typed_from_the_source(dev, compiler):
    """hipRTC sources' extern "C" kernels get their types from the declarations: the
    issue's case (a float and an int in the wrong order) is refused, not reinterpreted."""
    import rocpy.stub
    from rocpy.codeobject import ArgumentRangeError, ArgumentTypeError
    mod = hip.Program(SCALE).compile(dev)
    k = mod["scale"]
    assert [p.type_name for p in k.params] == ["float*", "float", "int"]
    seen = []
    rocpy.stub.register_kernel("scale", lambda d: seen.append((d.arg(8, "f"), d.arg(12, "i"))))
    try:
        buf = dev.context.alloc(64)
        k.launch(1, 16, (buf, 2, 16))            # plain Python numbers, by value
        dev.sync()
        assert seen == [(2.0, 16)]
        with pytest.raises(ArgumentTypeError, match=r"args\[2\] \(int .*got float"):
            k.launch(1, 16, (buf, 3, 2.5))
        with pytest.raises(ArgumentRangeError, match=r"args\[2\]"):
            k.launch(1, 16, (buf, 3.0, 1 << 32))
        buf.close()
    finally:
        rocpy.stub.unregister_kernel("scale")
    mod.close()


@pytest.mark.stub_only
def test_a_hung_hipcc_is_abandoned(dev, tmp_path, monkeypatch):
    hung = tmp_path / "hipcc"
    hung.write_text("#!/bin/sh\nexec sleep 60\n")
    hung.chmod(0o755)
    monkeypatch.setenv("HIPCC", str(hung))
    monkeypatch.setattr(program_module, "COMPILE_TIMEOUT_S", 1)
    # the hipcc path of backends without hipRTC (the stub's hipRTC runs rocpy's driver)
    monkeypatch.setattr(program_module.Program, "_use_hiprtc", lambda self: False)
    with pytest.raises(rocpy.HiprtcError, match="hipcc did not finish in 1 s") as info:
        hip.Program(SCALE).compile(dev)
    assert info.value.name == "HIPRTC_ERROR_COMPILATION"
