"""``rocpy inspect``: text and JSON output, target selection, errors."""
from __future__ import annotations

import argparse
import json

import pytest

from rocpy._cli import inspect


def run(argv, capsys):
    parser = argparse.ArgumentParser(prog="rocpy")
    inspect.add_parser(parser.add_subparsers())
    args = parser.parse_args(argv)
    status = args.run(args)
    out, err = capsys.readouterr()
    return status, out, err


def test_text_output(artifacts, capsys):
    path = artifacts.get("hip-v5")
    status, out, err = run(["inspect", str(path)], capsys)
    assert status == 0 and err == ""
    assert "offload bundle" in out and "hipv4-amdgcn-amd-amdhsa--gfx90a" in out
    assert "target gfx90a  (code object v5" in out
    assert "kernel vadd  (symbol vadd.kd)" in out and "kernarg 288 bytes (align 8)" in out
    assert "wave64" in out
    rows = [line.split() for line in out.splitlines()]
    assert ["3", "24", "4", "4", "by_value", "n"] in rows
    assert ["4", "32", "4", "4", "hidden_block_count_x"] in rows
    assert "variables: " in out and "table (64 bytes)" in out


def test_json_output(artifacts, capsys):
    path = artifacts.get("hip-multi")
    status, out, _ = run(["inspect", "--json", str(path)], capsys)
    assert status == 0
    doc = json.loads(out)
    assert doc["format"] == "bundle"
    assert set(doc["targets"]) >= {"gfx90a:xnack-", "gfx90a:xnack+"}
    assert len(doc["code_objects"]) == len(doc["targets"])
    vadd = next(k for k in doc["code_objects"][0]["kernels"] if k["name"] == "vadd")
    assert [a["offset"] for a in vadd["args"]] == [0, 8, 16, 24]
    assert vadd["descriptor"]["kernarg_size"] == vadd["kernarg_segment_size"]


def test_target_option(artifacts, capsys):
    path = artifacts.get("hip-multi")
    status, out, _ = run(["inspect", "--json", "--target", "gfx90a:sramecc+:xnack+", str(path)],
                         capsys)
    assert status == 0
    doc = json.loads(out)
    assert [c["target"] for c in doc["code_objects"]] == ["gfx90a:xnack+"]
    status, _, err = run(["inspect", "--target", "gfx1201", str(path)], capsys)
    assert status == 1 and "no code object for device target 'gfx1201'" in err


def test_errors(tmp_path, capsys):
    bad = tmp_path / "bad.hsaco"
    bad.write_bytes(b"__CLANG_OFFLOAD_BUNDLE__\x01")
    status, out, err = run(["inspect", str(bad)], capsys)
    assert status == 1 and out == "" and "truncated offload bundle" in err
    status, _, err = run(["inspect", str(tmp_path / "missing.hsaco")], capsys)
    assert status == 1 and "No such file" in err


def test_registered_in_rocpy_cli(artifacts, capsys):
    cli = pytest.importorskip("rocpy.cli")
    assert cli.main(["inspect", str(artifacts.get("cl-gfx1100-v5"))]) == 0
    out = capsys.readouterr().out
    assert "ELF code object" in out and "target gfx1100" in out and "wave32" in out
    assert "float4" in out


def test_demangled_names_and_parameter_types(kernel_cache, capsys):
    from kernels.compile import compile_hip, find_hipcc
    if find_hipcc() is None:
        pytest.skip("hipcc is not installed")
    path = compile_hip("mangled", kernel_cache)
    status, out, err = run(["inspect", path], capsys)
    assert status == 0 and err == ""
    assert "kernel scale(float*, int, float)  (symbol _Z5scalePfif.kd, _Z5scalePfif)" in out
    assert "kernel void tk<float>(float*, float, int)" in out
    rows = [line.split() for line in out.splitlines()]
    assert ["1", "8", "4", "4", "by_value", "int"] in rows
    assert ["0", "0", "8", "8", "global_buffer", "float", "const*"] in rows
    # what the demangler cannot read is printed as it is, with no types
    assert "kernel _Z3kfpPFviEPi  (symbol _Z3kfpPFviEPi.kd)" in out
    status, out, _ = run(["inspect", "--json", path], capsys)
    kernels = {k["name"]: k for k in json.loads(out)["code_objects"][0]["kernels"]}
    assert kernels["_Z5scalePfif"]["demangled"] == "scale(float*, int, float)"
    assert [a["type_name"] for a in kernels["_Z5scalePfif"]["args"]] == ["float*", "int", "float"]
    assert kernels["_Z3kfpPFviEPi"]["demangled"] is None
