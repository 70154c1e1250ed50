"""Separate compilation of the CPU build (rocpy/cpukern/_rdc.py): units, and the link
that joins them (what the stub's hiprtc and hipLink* do with -fgpu-rdc programs)."""
from __future__ import annotations

import pytest

from rocpy import cli, cpukern
from rocpy.codeobject.bundle import read_bundle

from linked_units import CALLEE, CALLER, check_apply  # tests/linked_units.py



def test_a_unit_is_a_bundle_of_an_object_and_its_information(compiler):
    unit = cpukern.compile_unit(CALLER, "caller.hip", options=["-DX=1"])
    info, obj = cpukern.read_unit(unit)
    assert obj[:4] == b"\x7fELF" and obj[16] == 1            # ET_REL: a relocatable object
    assert info["kernels"] == ["apply"] and info["source"] == CALLER
    assert info["options"] == ["-DX=1"] and str(info["entry"]).startswith("rocpy_cpukern_unit_")
    assert {e.id for e in read_bundle(unit)[1]} >= {cpukern.UNIT_INFO_ID}
    assert cpukern.is_unit(unit) and not cpukern.is_unit(b"BC\xc0\xde")


def test_units_of_different_sources_have_different_entries(compiler):
    a = cpukern.read_unit(cpukern.compile_unit(CALLER))[0]["entry"]
    b = cpukern.read_unit(cpukern.compile_unit(CALLEE))[0]["entry"]
    assert a != b


def test_link_runs_a_kernel_calling_into_another_unit(dev, compiler, stub_only):
    from rocpy import hip
    data = cpukern.link_units([cpukern.compile_unit(CALLER, "caller.hip"),
                               cpukern.compile_unit(CALLEE, "callee.hip")],
                              targets=[dev.target_id])
    assert cpukern.carries_cpu_build(data)
    mod = hip.Module.load(data)
    check_apply(dev, mod, 16)


def test_link_errors_name_the_symbol(compiler):
    caller = cpukern.compile_unit(CALLER, "caller.hip")
    with pytest.raises(cpukern.CpuCompileError, match="undefined reference.*twice"):
        cpukern.link_units([caller])
    callee = cpukern.compile_unit(CALLEE, "callee.hip")
    again = cpukern.compile_unit(CALLEE + "\n", "again.hip")       # the same definitions
    with pytest.raises(cpukern.CpuCompileError, match="multiple definition"):
        cpukern.link_units([caller, callee, again])
    with pytest.raises(cpukern.CpuCompileError, match="no inputs"):
        cpukern.link_units([])
    with pytest.raises(cpukern.CpuCompileError, match="LLVM bitcode"):
        cpukern.link_units([cpukern.combine(b"\x7fELF" + b"\0" * 60, {})])
    with pytest.raises(cpukern.CpuCompileError, match="not a rocpy CPU unit"):
        cpukern.read_unit(b"BC\xc0\xde")


def test_compile_unit_reports_compile_errors(compiler):
    with pytest.raises(cpukern.CpuCompileError, match="undeclared"):
        cpukern.compile_unit("__device__ int f() { return undeclared; }", "bad.hip")
    with pytest.raises(TypeError, match="source must be str"):
        cpukern.compile_unit(b"x")                                # type: ignore[arg-type]


def test_cli_build_rdc_and_link(compiler, tmp_path, capsys):
    (tmp_path / "a.hip").write_text(CALLER)
    (tmp_path / "b.hip").write_text(CALLEE)
    for u in ("a", "b"):
        assert cli.main(["cpukern", "build", "--rdc", str(tmp_path / f"{u}.hip"),
                         "-o", str(tmp_path / f"{u}.unit")]) == 0
    out = tmp_path / "ab.co"
    assert cli.main(["cpukern", "link", str(tmp_path / "a.unit"), str(tmp_path / "b.unit"),
                     "-o", str(out)]) == 0
    assert cpukern.cpu_build_of(out.read_bytes())[:4] == b"\x7fELF"
    assert cli.main(["cpukern", "link", str(tmp_path / "a.unit"), "-o", str(tmp_path / "x")]) == 1
    assert "undefined reference" in capsys.readouterr().err
    assert cli.main(["cpukern", "link", str(tmp_path / "none.unit"), "-o", str(tmp_path / "x")]) == 2
    assert "cannot read" in capsys.readouterr().err
