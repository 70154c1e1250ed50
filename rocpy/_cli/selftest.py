"""``rocpy selftest [--json] [CHECK ...]``: run `rocpy._selftest` and print a pass/fail report.

Exit status 0 when no check failed (skips allowed), 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from . import stdout

NAME = "selftest"
HELP = "exercise the GPU through HSA and HIP and report what works (copies, ordering, timing...)"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``selftest`` on an argparse subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(NAME, help=HELP, description=HELP + ".")
    parser.add_argument("--json", action="store_true", help="print JSON (schema rocpy.selftest/1)")
    parser.add_argument("checks", nargs="*", metavar="CHECK", help="run only these checks")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the checks; print the report; 0 if none failed."""
    import rocpy
    from .. import _selftest
    out = stdout(out)
    try:
        results = _selftest.run(args.checks or None)
    except ValueError as e:
        print(f"rocpy selftest: {e}; known: {', '.join(_selftest.names())}", file=sys.stderr)
        return 2
    failed = [r for r in results if r.status == "fail"]
    if args.json:
        json.dump({"schema": "rocpy.selftest/1", "backend": rocpy.backend().name,
                   "passed": not failed, "checks": [r.as_dict() for r in results]}, out, indent=2)
        out.write("\n")
    else:
        out.write(f"rocpy selftest on the {rocpy.backend().name} backend\n")
        for r in results:
            out.write(f"  {r.status.upper():4}  {r.name:22} {r.detail}\n")
        counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "skip")}
        out.write(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped\n")
    return 1 if failed else 0
