"""Where the empty launch's time over C goes, measured in one process: ``k.launch(1, 1,
(), s)`` with the real runtime, the same compiled path with a runtime function that
does nothing (benchmarks/c/hip_ref_loops.c ``ref_nop_launch``: what rocpy's own code,
the Python loop and the GIL release cost on this CPU), raw cffi
``hipModuleLaunchKernel``, and the C loop of hip_ref_loops.c with ``extra`` NULL and
with a 0-byte argument buffer (what rocpy passes for a kernel without arguments); and
what releasing the GIL around a call costs on this CPU (a no-op C function through
ctypes.CDLL, which releases it, and ctypes.PyDLL, which does not: rocpy's launch releases
it, as cuda.core's, CuPy's and Triton's launchers do).  100 launches per timed call, the stream synchronized after each (untimed), variants
interleaved each round; medians in microseconds per launch.

    python benchmarks/device/launch_floor.py [--rounds N] [--json FILE]

The C rows need ``bash benchmarks/c/hip_ref.sh nvidia`` (build/hip-ref/); without it,
or off nvidia, the rows that need the library are left out.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

LAUNCHES = 100


def _nop_kernel(module: Any, nop_address: int) -> Any:
    """The module's ``empty`` with its compiled Launcher calling ``nop_address`` in place
    of hipModuleLaunchKernel (rocpy/hip/_launch_plan.py `_hot_launcher`'s arguments)."""
    from rocpy import _hotpath
    from rocpy.codeobject.argconv import _POINTER_TYPES
    from rocpy.hip import Stream, _api, _launch_plan, ffi
    k = module["empty"]
    layout = k._layout
    keys = tuple(int(ffi.cast("uintptr_t", key)) for key in _launch_plan._launch_param_keys())
    k._launcher = _hotpath.module().Launcher(
        nop_address, _api.address(k._h), k._dev_index, layout.size, layout._explicit_end, keys,
        _launch_plan._param_spec(layout), Stream, _POINTER_TYPES, _launch_plan._buffer_types(),
        type(k)._launch_py, type(k)._configure)
    return k


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--json")
    args = p.parse_args(argv)
    import rocpy
    from rocpy import _hotpath, hip
    from rocpy.bench.c_reference import C_LOOPS, CLoops
    from rocpy.bench.cases import compile_kernels
    from rocpy.hip import ffi, lib
    if _hotpath.module() is None:
        print("launch_floor: the compiled path is off (ROCPY_HOT=0 or not built)")
        return 1
    backend = rocpy.backend().name
    if backend == "stub":
        from rocpy import stub
        for name in ("empty", "vadd"):
            stub.use_builtin(name)
    dev = hip.Device(0)
    s = dev.create_stream(non_blocking=True)
    kernel_file = compile_kernels(dev, backend)
    k = hip.Module.load(kernel_file, dev)["empty"]
    library = Path(__file__).resolve().parents[2] / C_LOOPS
    loops = CLoops(str(library), kernel_file) if backend == "nvidia" and library.exists() \
        else None
    variants: dict[str, Callable[[], object]] = {}
    launch = k.launch

    def rocpy_launches() -> None:
        for _ in range(LAUNCHES):
            launch(1, 1, (), s)
    variants["rocpy"] = rocpy_launches
    if loops is not None:
        nop = ctypes.cast(loops._lib.ref_nop_launch, ctypes.c_void_p).value or 0
        nop_module = hip.Module.load(kernel_file, dev)
        nop_launch = _nop_kernel(nop_module, nop).launch

        def nop_launches() -> None:
            for _ in range(LAUNCHES):
                nop_launch(1, 1, (), s)
        variants["rocpy, runtime call a no-op"] = nop_launches
    fn, h, sh = lib.hipModuleLaunchKernel, k.handle, s.handle
    extra = getattr(k, "_extra", None) or ffi.NULL

    def raw_launches() -> None:
        for _ in range(LAUNCHES):
            if fn(h, 1, 1, 1, 1, 1, 1, 0, sh, ffi.NULL, extra):
                raise RuntimeError("hipModuleLaunchKernel failed")
    variants["raw cffi"] = raw_launches
    if loops is not None:
        variants["C, extra NULL"] = lambda: loops.launch(LAUNCHES)
        variants["C, 0-byte extra"] = lambda: loops.launch_extra0(LAUNCHES)
        released = ctypes.CDLL(str(library)).ref_nop
        held = ctypes.PyDLL(str(library)).ref_nop

        def nop_calls(f: Any) -> Callable[[], None]:
            def run() -> None:
                for _ in range(LAUNCHES):
                    f()
            return run
        variants["ctypes no-op, GIL released"] = nop_calls(released)
        variants["ctypes no-op, GIL held"] = nop_calls(held)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(3):                                  # warm-up
        for run in variants.values():
            run()
        s.sync()
    for _ in range(args.rounds):
        for name, run in variants.items():
            t = time.perf_counter_ns()
            run()
            samples[name].append((time.perf_counter_ns() - t) / 1e3 / LAUNCHES)
            s.sync()
            if loops is not None:
                loops.sync()
    medians = {name: statistics.median(v) for name, v in samples.items()}
    base = medians.get("C, extra NULL")
    print(f"== launch floor ({backend}, {dev.name}): us per empty launch, median of "
          f"{args.rounds} rounds of {LAUNCHES}" + ("; over C with extra NULL" if base else ""))
    for name, m in medians.items():
        print(f"  {name:32s} {m:8.3f}" + (f"  {m - base:+.3f}" if base is not None else ""))
    if args.json:
        Path(args.json).write_text(json.dumps({"backend": backend, "rounds": args.rounds,
                                               "launches": LAUNCHES, "medians_us": medians}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
