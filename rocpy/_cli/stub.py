"""``rocpy stub env|run|libdir``: programs on the stub's drop-in ROCm libraries.

``env`` prints the shell lines (``export LD_LIBRARY_PATH=...``) that make
programs load ``libhsa-runtime64.so.1`` / ``libamdhip64.so.N`` from rocpy's
stub, ``run -- CMD ARGS`` runs one program so (its exit status is ours),
``libdir`` prints the folder.  See docs/testing.md.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any, TextIO

from . import stdout

NAME = "stub"
HELP = "run programs on the stub runtime's drop-in ROCm libraries (no GPU needed)"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``stub`` and its actions on an argparse subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(NAME, help=HELP, description=HELP + ".")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    actions.add_parser("env", help="print the environment (sh export lines) that loads the drop-in libraries")
    actions.add_parser("libdir", help="print the folder of the drop-in libraries")
    run_p = actions.add_parser("run", help="run CMD ARGS with the drop-in libraries: rocpy stub run -- CMD ARGS")
    run_p.add_argument("cmd", nargs=argparse.REMAINDER, help="the program and its arguments")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Do ``args.action``; return the exit status (``run`` replaces this process)."""
    from ..stub.dropin import DropInMissing, environment, libdir
    out = stdout(out)
    try:
        if args.action == "libdir":
            out.write(libdir() + "\n")
            return 0
        env = environment()
    except DropInMissing as exc:
        sys.stderr.write(f"rocpy stub: {exc}\n")
        return 1
    if args.action == "env":
        for key, value in env.items():
            out.write(f"export {key}={shlex.quote(value)}\n")
        return 0
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        sys.stderr.write("rocpy stub run: no program given (rocpy stub run -- CMD ARGS)\n")
        return 2
    out.flush()
    try:
        os.execvpe(cmd[0], cmd, {**os.environ, **env})
    except OSError as exc:
        sys.stderr.write(f"rocpy stub run: cannot run {cmd[0]!r}: {exc.strerror}\n")
        return 127 if isinstance(exc, FileNotFoundError) else 126
    return 0  # not reached
