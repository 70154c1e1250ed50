"""No test of the suite is vacuous: tools/vacuous_tests.py finds none (a test with
nothing that can fail it, or one that returns where it should skip)."""
from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("vacuous_tests", ROOT / "tools" / "vacuous_tests.py")
vacuous = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vacuous)


def test_the_suite_has_no_vacuous_test():
    assert vacuous.scan(ROOT / "tests") == []


def test_the_scan_finds_each_kind(tmp_path):
    (tmp_path / "helpers.py").write_text("def ok(st):\n    assert st == 0\n")
    (tmp_path / "test_x.py").write_text(textwrap.dedent("""
        import pytest
        from helpers import ok

        def test_calls_only(dev):
            dev.sync()

        def test_returns_on_nvidia():
            if BACKEND == "nvidia":
                return
            ok(0)

        def test_asserts():
            assert 1

        def test_helper():
            ok(0)

        def test_raises():
            with pytest.raises(ValueError):
                int("x")

        def test_result_method(result):
            result.assert_outcomes(passed=1)

        def test_any_error(buf):
            with pytest.raises(Exception, match="closed"):
                buf.use()

        def test_any_error_where_a_name_is_missing(buf):
            with pytest.raises(rocpy.ClosedError if hasattr(rocpy, "ClosedError") else BaseException):
                buf.use()

        def test_named_errors(buf):
            with pytest.raises((ValueError, TypeError)):
                buf.use()
    """))
    found = [line.split(": ", 1)[1] for line in vacuous.scan(tmp_path)]
    broad = "pytest.raises(Exception) passes on any error (name the one expected)"
    assert found == ["test_calls_only: nothing in it can fail",
                     "test_returns_on_nvidia: returns early (pytest.skip says why)",
                     f"test_any_error: {broad}",
                     f"test_any_error_where_a_name_is_missing: {broad}"]
