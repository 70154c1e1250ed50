#!/usr/bin/env python3
"""Find tests that cannot fail: ``python3 tools/vacuous_tests.py [tests/]``.

A test function is reported when nothing in it can fail it: no ``assert``, no
``pytest.raises``/``warns``/``fail``, no ``raise``, and no call of a function
of the suite that does one of those (helpers and fixtures such as ``ok()``,
``check()``, ``run_script()`` are found by name, transitively).  A test that
``return``s early instead of skipping (it passes where it should say it was
skipped) is reported too, and so is ``pytest.raises(Exception)`` (or
``BaseException``): it passes on any error, a bug's ``TypeError`` included, so
it does not say which error the code must raise.  Exit status 1 when anything is found;
tests/test_vacuous.py runs it over the suite.

Calling the code under test and relying on it to raise is a real test only
when the code is meant to raise on failure: such tests say what they check
with an assert on the result, which is what this asks for.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

_FAILS = {"raises", "warns", "fail", "deprecated_call", "approx"}


_CHECK_METHODS = ("assert", "check", "expect", "fnmatch_lines", "re_match_lines")


def _called_names(node: ast.AST) -> set[str]:
    """Plain-name calls (``ok(...)``, ``check(...)``, a fixture's callable); a method call
    counts only when named as a check (``result.assert_outcomes``, ``fact.check``):
    ``s.sync()`` is the code under test, whatever else in the suite shares its name."""
    names = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Name):
                names.add(n.func.id)
            elif isinstance(n.func, ast.Attribute) and n.func.attr.startswith(_CHECK_METHODS):
                names.add("<check method>")
    return names


def _fails_directly(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, (ast.Assert, ast.Raise)):
            return True
        if isinstance(n, ast.Attribute) and n.attr in _FAILS and \
                isinstance(n.value, ast.Name) and n.value.id == "pytest":
            return True
    return False


def _functions(paths: list[Path]) -> dict[Path, list[ast.FunctionDef]]:
    out = {}
    for p in paths:
        try:
            tree = ast.parse(p.read_text(), str(p))
        except SyntaxError:
            continue
        out[p] = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return out


def checkers(funcs: dict[Path, list[ast.FunctionDef]]) -> set[str]:
    """Names of the suite's functions that can fail a test (to a fixpoint)."""
    by_name: dict[str, list[ast.FunctionDef]] = {}
    for fs in funcs.values():
        for f in fs:
            by_name.setdefault(f.name, []).append(f)
    found = {name for name, fs in by_name.items() if any(_fails_directly(f) for f in fs)}
    while True:
        more = {name for name, fs in by_name.items() if name not in found
                and any(_called_names(f) & found for f in fs)}
        if not more:
            return found
        found |= more


def _early_return(f: ast.FunctionDef) -> int | None:
    """``if COND: return`` and nothing else in the branch: the test passes where it
    should have said it was skipped."""
    for stmt in f.body:
        if isinstance(stmt, ast.If) and len(stmt.body) == 1 and \
                isinstance(stmt.body[0], ast.Return) and stmt.body[0].value is None:
            return stmt.body[0].lineno
    return None


_TOO_BROAD = {"Exception", "BaseException"}


def _broad_raises(f: ast.FunctionDef) -> list[int]:
    """Lines of ``pytest.raises(Exception)``/``BaseException`` (also as one arm of a
    conditional or a tuple): a check that any error at all passes."""
    lines = []
    for n in ast.walk(f):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                n.func.attr == "raises" and isinstance(n.func.value, ast.Name) and \
                n.func.value.id == "pytest" and n.args:
            if any(isinstance(m, ast.Name) and m.id in _TOO_BROAD for m in ast.walk(n.args[0])):
                lines.append(n.lineno)
    return lines


def scan(root: Path) -> list[str]:
    """``path:line: name: why`` for each test that cannot fail under ``root``."""
    funcs = _functions(sorted(root.rglob("*.py")))
    can_fail = checkers(funcs)
    problems = []
    for path, fs in funcs.items():
        if not path.name.startswith("test_"):
            continue
        for f in fs:
            if not f.name.startswith("test_"):
                continue
            params = {a.arg for a in f.args.args}
            calls = _called_names(f)
            if not (_fails_directly(f) or calls & can_fail or "<check method>" in calls
                    or params & can_fail):
                problems.append(f"{path}:{f.lineno}: {f.name}: nothing in it can fail")
            line = _early_return(f)
            if line is not None:
                problems.append(f"{path}:{line}: {f.name}: returns early (pytest.skip says why)")
            for line in _broad_raises(f):
                problems.append(f"{path}:{line}: {f.name}: pytest.raises(Exception) passes on "
                                "any error (name the one expected)")
    return problems


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "tests"
    problems = scan(root)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
