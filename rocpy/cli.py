"""The ``rocpy`` command: one subcommand per module in `COMMANDS`.

Each module exposes ``add_parser(subparsers)``, which registers its
subcommand and sets ``run`` as the parser default, and ``run(args) -> int``.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import List, Optional

#: Modules providing subcommands, in the order ``--help`` lists them.
COMMANDS = ("rocpy._cli.info", "rocpy._cli.bench", "rocpy._cli.inspect", "rocpy._cli.selftest",
            "rocpy._cli.stub", "rocpy._cli.cpukern")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    from . import __version__
    parser = argparse.ArgumentParser(prog="rocpy", description="rocpy command-line tools")
    parser.add_argument("--version", action="version", version=f"rocpy {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMANDS:
        importlib.import_module(name).add_parser(subparsers)
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Run ``rocpy COMMAND ...``; return the exit status."""
    args = build_parser().parse_args(argv)
    try:
        status = args.run(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader went away (``rocpy info | head``): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):  # stdout is not a real file
            pass
        return 1
    result: int = status
    return result
