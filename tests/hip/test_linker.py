"""rocpy.hip.Linker and Program.compile_bitcode: programs compiled with -fgpu-rdc and
linked into one Module (hipRTC's linker; on the stub, units of the CPU build)."""
from __future__ import annotations

import pytest

import rocpy
from rocpy import hip
from rocpy.hip._api import api

from linked_units import CALLEE, CALLER, check_apply  # tests/linked_units.py


has_linker = api().has("hiprtcLinkCreate") and api().has("hiprtcGetBitcode")
needs_linker = pytest.mark.skipif(not has_linker, reason="the headers declare no hiprtc linker")


def test_inputs_are_checked():
    with pytest.raises(ValueError, match="at least one"):
        hip.Linker()
    with pytest.raises(TypeError, match=r"inputs\[1\] must be bytes"):
        hip.Linker(b"x", "y")                     # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"inputs\[0\] is empty"):
        hip.Linker(b"")


@pytest.mark.skipif(has_linker, reason="the headers declare the linker")
def test_without_a_linker(dev):
    with pytest.raises(rocpy.NotSupportedError, match="hiprtcLinkCreate"):
        hip.Linker(b"BC").link(dev)
    with pytest.raises(rocpy.NotSupportedError, match="hiprtcGetBitcode"):
        hip.Program(CALLEE).compile_bitcode(dev)


@needs_linker
def test_link_runs_a_kernel_calling_into_another_program(dev):
    if rocpy.backend().name == "stub":
        from rocpy import _toolchain
        if _toolchain.find_hipcc() is None or _toolchain.find_cxx() is None:
            pytest.skip("the stub links with hipcc and a host C++ compiler")
    a = hip.Program(CALLER, name="caller.hip").compile_bitcode(dev)
    b = hip.Program(CALLEE, name="callee.hip").compile_bitcode(dev)
    linker = hip.Linker(a, b)
    mod = linker.link(dev)
    assert linker.code and linker.log == ""
    check_apply(dev, mod, 32)


@needs_linker
def test_a_failed_link_raises_with_the_log(dev):
    if rocpy.backend().name == "stub":
        from rocpy import _toolchain
        if _toolchain.find_cxx() is None:
            pytest.skip("the stub compiles units with a host C++ compiler")
    a = hip.Program(CALLER, name="caller.hip").compile_bitcode(dev)
    linker = hip.Linker(a)
    with pytest.raises(rocpy.HiprtcError, match="HIPRTC_ERROR_LINKING") as info:
        linker.link(dev)
    assert "twice" in info.value.log and linker.code is None    # type: ignore[attr-defined]
