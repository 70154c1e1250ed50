"""`rocpy selftest`: every check passes on the stub, the CLI reports and exits as documented."""
from __future__ import annotations

import io
import json

import pytest

import rocpy
from rocpy import _selftest, debug
from rocpy.cli import build_parser


@pytest.fixture(autouse=True)
def hipcc_or_skip():
    from rocpy._selftest.kernels import find_hipcc
    if find_hipcc() is None:
        pytest.skip("hipcc is not installed: the selftest kernels cannot be built")


@pytest.mark.parametrize("name", _selftest.names())
def test_check_passes(name):
    (result,) = _selftest.run([name])
    assert result.name == name
    expected = "pass" if rocpy.backend().is_stub or not name.startswith("hsa.") else result.status
    assert result.status == expected, result.detail
    debug.collect()
    assert "Buffer" not in debug.live_objects() and "Queue" not in debug.live_objects()


def test_unknown_check_is_refused():
    with pytest.raises(ValueError, match=r"unknown checks: \['nope'\]"):
        _selftest.run(["nope"])
    args = build_parser().parse_args(["selftest", "nope"])
    assert args.run(args, io.StringIO()) == 2


def test_cli_json_report():
    out = io.StringIO()
    args = build_parser().parse_args(["selftest", "--json", "hsa.copies", "hip.copies"])
    assert args.run(args, out) == 0
    data = json.loads(out.getvalue())
    assert data["schema"] == "rocpy.selftest/1" and data["passed"] is True
    assert [c["name"] for c in data["checks"]] == ["hsa.copies", "hip.copies"]
    assert {c["status"] for c in data["checks"]} == {"pass"}


def test_cli_text_report_and_failure_status(monkeypatch):
    from rocpy._selftest import hip_checks

    def broken(ctx):
        raise AssertionError("deliberately wrong")
    monkeypatch.setitem(hip_checks.CHECKS, "hip.copies", broken)
    out = io.StringIO()
    args = build_parser().parse_args(["selftest", "hip.copies", "hip.launch"])
    assert args.run(args, out) == 1
    text = out.getvalue()
    assert "FAIL  hip.copies" in text and "deliberately wrong" in text
    assert "PASS  hip.launch" in text and "1 passed, 1 failed, 0 skipped" in text
