"""``rocpy cpukern build SRC -o OUT --offload-arch T``: one file of GPU code objects and
the CPU build (`rocpy.cpukern.build_combined`).

The output loads with ``hipModuleLoad`` everywhere: the stub (and its drop-in
libraries) run the CPU build, a ROCm runtime the code object for its GPU.
Options the compilers take (``-D``, ``-U``, ``-I``, ``-O``, ``-std=``) go to both.
``--cpu-only`` writes only the CPU build: put it beside a hipcc program as
``PROGRAM.cpukern`` and the stub runs the program's kernels from it.
``--rdc`` writes a unit (`rocpy.cpukern.compile_unit`) and ``rocpy cpukern link
UNIT... -o OUT`` links units into one CPU build (the stub's hiprtcLinkComplete).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

NAME = "cpukern"
HELP = "build HIP kernels for the stub's CPU (and GPUs) into one code object file"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``cpukern`` and its actions on an argparse subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(NAME, help=HELP, description=HELP + ".")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    b = actions.add_parser("build", help="SRC -> OUT: the GPU code objects (hipcc) and the CPU build",
                           description="Compile SRC with hipcc --genco for each --offload-arch and "
                           "with the host C++ compiler for the stub's CPU; write one offload "
                           "bundle holding both to OUT.")
    b.add_argument("source", metavar="SRC", help="the HIP source file")
    b.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write")
    b.add_argument("--offload-arch", action="append", default=[], metavar="TARGET",
                   dest="targets", help="a GPU target id (e.g. gfx90a, gfx90a:xnack-); repeat "
                   "for more; at least one")
    b.add_argument("--cpu-only", action="store_true",
                   help="only the CPU build (no hipcc): the file a hipcc program finds beside "
                   "itself as PROGRAM.cpukern (or $ROCPY_CPUKERN_BUILD) on the stub")
    b.add_argument("--rdc", action="store_true",
                   help="relocatable device code (-fgpu-rdc): a unit for 'rocpy cpukern link' "
                   "(no hipcc; --offload-arch is not needed)")
    b.add_argument("--name-expression", action="append", default=[], metavar="EXPR",
                   dest="name_expressions", help="a kernel to instantiate in both halves, e.g. "
                   "'scale<float>' (hiprtcAddNameExpression); repeat for more")
    b.add_argument("-D", action="append", default=[], metavar="NAME[=VALUE]", dest="defines")
    b.add_argument("-U", action="append", default=[], metavar="NAME", dest="undefines")
    b.add_argument("-I", action="append", default=[], metavar="DIR", dest="includes")
    b.add_argument("-O", default=None, metavar="LEVEL", dest="opt")
    b.add_argument("-std", default=None, metavar="STD", dest="std", help="e.g. -std=c++17")
    k = actions.add_parser("link", help="UNIT... -> OUT: one CPU build of units built with --rdc",
                           description="Link units written by 'build --rdc' (a kernel in one "
                           "may call a __device__ function another defines) into one CPU build.")
    k.add_argument("units", nargs="+", metavar="UNIT", help="a unit from 'build --rdc'")
    k.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write")
    k.add_argument("--offload-arch", action="append", default=[], metavar="TARGET",
                   dest="targets", help="a GPU target id: the units' sources linked for it "
                   "by hipcc -fgpu-rdc; repeat for more (none: the CPU build alone)")
    parser.set_defaults(run=run)
    return parser


def _options(args: argparse.Namespace) -> list[str]:
    opts = [f"-D{d}" for d in args.defines] + [f"-U{u}" for u in args.undefines]
    opts += [f"-I{os.path.abspath(i)}" for i in args.includes]
    if args.opt is not None:
        opts.append(f"-O{args.opt}")
    if args.std is not None:
        opts.append(f"-std{args.std}" if args.std.startswith("=") else f"-std={args.std}")
    return opts


def _write(path: str, data: bytes, action: str) -> int:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        sys.stderr.write(f"rocpy cpukern {action}: cannot write {path!r}: {exc.strerror}\n")
        return 1
    return 0


def _link(args: argparse.Namespace) -> int:
    from .. import cpukern
    units = []
    for path in args.units:
        try:
            with open(path, "rb") as f:
                units.append(f.read())
        except OSError as exc:
            sys.stderr.write(f"rocpy cpukern link: cannot read {path!r}: {exc.strerror}\n")
            return 2
    try:
        data = cpukern.link_units(units, os.path.basename(args.output), args.targets)
    except cpukern.CpuCompileError as exc:
        sys.stderr.write(f"rocpy cpukern link: {exc}\n")
        return 1
    return _write(args.output, data, "link")


def run(args: argparse.Namespace) -> int:
    """Build ``args.source`` into ``args.output`` (or link ``args.units``); 0, or 1 with
    the reason on stderr."""
    from .. import cpukern
    if args.action == "link":
        return _link(args)
    if not args.targets and not args.cpu_only and not args.rdc:
        sys.stderr.write("rocpy cpukern build: give at least one --offload-arch "
                         "(e.g. --offload-arch=gfx90a)\n")
        return 2
    try:
        with open(args.source, encoding="utf-8") as f:
            source = f.read()
    except OSError as exc:
        sys.stderr.write(f"rocpy cpukern build: cannot read {args.source!r}: {exc.strerror}\n")
        return 2
    name = os.path.basename(args.source)
    # the source's own folder, as a compiler searches it for #include "..."
    opts = [f"-I{os.path.dirname(os.path.abspath(args.source))}", *_options(args)]
    try:
        if args.rdc:
            data = cpukern.compile_unit(source, name, {}, opts, args.name_expressions)
        elif args.cpu_only:
            cpu = cpukern.build(source, name, {}, opts, args.name_expressions)
            data = cpukern.combine(cpu.data, {})
        else:
            data = cpukern.build_combined(source, args.targets, name=name, options=opts,
                                          name_expressions=args.name_expressions)
    except cpukern.CpuCompileError as exc:
        sys.stderr.write(f"rocpy cpukern build: {exc}\n")
        return 1
    return _write(args.output, data, "build")
