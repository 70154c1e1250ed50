"""Where rocpy's time over C goes, measured in one process, variants interleaved each
round by rocpy bench's harness (rocpy/bench/harness.py: balanced orders, warm-up
dropped), medians in microseconds per operation.

Launch (an empty kernel, 100 launches per timed call, the stream synchronized after
each, untimed): ``k.launch(1, 1, (), s)`` with the real runtime; the same compiled path
with a runtime function that does nothing (benchmarks/c/hip_ref_loops.c
``ref_nop_launch``: what rocpy's own code, the Python loop and the GIL release cost on
this CPU); raw cffi ``hipModuleLaunchKernel``; the C loop of hip_ref_loops.c with
``extra`` NULL and with a 0-byte argument buffer (what rocpy passes for a kernel
without arguments); and what releasing the GIL around a call costs on this CPU (a
no-op C function through ctypes.CDLL, which releases it, and ctypes.PyDLL, which does
not: rocpy's launch releases it, as cuda.core's, CuPy's and Triton's launchers do).

Copy (4 KiB each way and device to device, 16 async copies and one synchronize per
timed call, as rocpy bench's copy cases): rocpy, raw cffi, the C loop, and CuPy and
cuda.core where installed, each on its own stream and on rocpy's: whether a gap to C or to CuPy is
the caller's or the stream's; and on nvidia the CUDA runtime under rocpy called per
copy through ctypes with the GIL released and held: what the release costs there; and
the C loop with the CPU busy after each copy, the time it spent there taken off
(``ref_copy_between``): spinning 300 ns, as far apart as a binding's calls arrive (150,
300 and 600 ns on 2026-12-04: no slower), and touching 64 or 256 KiB, as an interpreter
evicts cache between calls; and the
C loop calling each CUDA runtime the process has loaded (rocpy's under HIP's wrapper,
CuPy's) directly (``ref_copy_through``): which runtime is the faster, in one process.

    python benchmarks/device/floor.py [--only launch|copy] [--rounds N] [--json FILE]

The C rows need ``bash benchmarks/c/hip_ref.sh nvidia`` (build/hip-ref/); without it,
or off nvidia, the rows that need the library are left out.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

LAUNCHES = 100
COPIES = 16
COPY_BYTES = 4096
Variants = dict[str, Callable[[], object]]
#: C copies with the CPU busy after each (what it spent there taken off the row): spinning
#: 300 ns, a caller as slow as a binding; touching 64 or 256 KiB, one as untidy as an
#: interpreter (cache); whether either makes the runtime's part of a copy slower
BETWEEN = {"300 ns spin": {"gap_ns": 300}, "64 KiB touched": {"touch_bytes": 64 << 10},
           "256 KiB touched": {"touch_bytes": 256 << 10}}


def _between(what: str) -> str:
    return f"C (rocpy's stream), {what} between, that time off"


def _nop_kernel(module: Any, nop_address: int) -> Any:
    """The module's ``empty`` with its compiled Launcher calling ``nop_address`` in place
    of hipModuleLaunchKernel."""
    from rocpy.hip import _launch_plan
    from rocpy.hip._api import api
    k = module["empty"]
    k._launcher = _launch_plan._hot_launcher(k, api(), nop_address)
    return k


def _repeat(fn: Callable[..., object], n: int, *args: Any, **kwargs: Any) -> Callable[[], None]:
    """``n`` calls of ``fn(*args, **kwargs)``; an int result other than 0 (a failed
    status) raises."""
    def run() -> None:
        for _ in range(n):
            r = fn(*args, **kwargs)
            if type(r) is int and r != 0:
                raise RuntimeError(f"{getattr(fn, '__name__', fn)} returned {r!r}")
    return run


def _medians(variants: Variants, rounds: int, settle: Callable[[], object],
             per: int) -> dict[str, float]:
    """Each variant timed once per round (the harness's orders), ``settle`` after each
    (untimed); the median per operation, in microseconds."""
    from rocpy.bench import Case, run_cases
    case = Case("floor", variants, ops=per, settle=settle)
    result = run_cases([case], repeat=rounds, warmup=3).cases[0]
    return {name: v.stats.median for name, v in result.variants.items()}


def _print(title: str, medians: dict[str, float], base_name: str) -> None:
    base = medians.get(base_name)
    print(f"== {title}" + (f"; over {base_name}" if base is not None else ""))
    for name, m in medians.items():
        print(f"  {name:36s} {m:8.3f}" + (f"  {m - base:+.3f}" if base is not None else ""))


def _launch_variants(env: dict[str, Any]) -> Variants:
    from rocpy import hip
    from rocpy.hip import ffi, lib
    s, loops, library = env["stream"], env["loops"], env["library"]
    k = hip.Module.load(env["kernel_file"], env["device"])["empty"]
    variants: Variants = {"rocpy": _repeat(k.launch, LAUNCHES, 1, 1, (), s)}
    if loops is not None:
        nop = ctypes.cast(loops._lib.ref_nop_launch, ctypes.c_void_p).value or 0
        nop_kernel = _nop_kernel(hip.Module.load(env["kernel_file"], env["device"]), nop)
        variants["rocpy, runtime call a no-op"] = _repeat(nop_kernel.launch, LAUNCHES, 1, 1, (),
                                                          s)
    fn, h, sh = lib.hipModuleLaunchKernel, k.handle, s.handle
    extra = getattr(k, "_extra", None) or ffi.NULL
    variants["raw cffi"] = _repeat(fn, LAUNCHES, h, 1, 1, 1, 1, 1, 1, 0, sh, ffi.NULL, extra)
    if loops is not None:
        variants["C, extra NULL"] = lambda: loops.launch(LAUNCHES)
        variants["C, 0-byte extra"] = lambda: loops.launch_extra0(LAUNCHES)
        variants["ctypes no-op, GIL released"] = _repeat(ctypes.CDLL(library).ref_nop, LAUNCHES)
        variants["ctypes no-op, GIL held"] = _repeat(ctypes.PyDLL(library).ref_nop, LAUNCHES)
    return variants


def _cudart_paths() -> list[str]:
    """The CUDA runtime libraries this process has loaded (rocpy's nvidia backend links
    one; CuPy may load another), each once."""
    found: list[str] = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if "/libcudart.so" in path and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def _cuda_core(stream: Any) -> tuple[Any, tuple[Any, Any]]:
    """cuda.core and two of its streams: its own, and rocpy's ``stream`` wrapped
    (``Device.create_stream`` takes an object with ``__cuda_stream__``)."""
    from rocpy.bench.compare import cuda_core_module
    cc = cuda_core_module()
    dev = cc.Device(0)
    dev.set_current()
    if not hasattr(cc.Buffer, "from_handle"):
        raise AttributeError("cuda.core.Buffer.from_handle")
    return cc, (dev.create_stream(), dev.create_stream(stream))


def _copy_variants(env: dict[str, Any], direction: str,
                   memory: str) -> tuple[Variants, dict[str, list[float]]]:
    """The copy rows, and for each busy-between row the time per copy its CPU spent
    between copies (us, one entry per call), for `main` to take off."""
    import numpy as np

    from rocpy.bench.cases.copy import _KINDS, Memory, _raw_copy, _rocpy_copy
    from rocpy.hip import lib
    s, loops, dev = env["stream"], env["loops"], env["device"]
    buffers = env.setdefault("buffers", {})
    if not buffers:
        buffers["dev_a"] = dev.context.alloc(COPY_BYTES)
        buffers["dev_b"] = dev.context.alloc(COPY_BYTES)
        buffers["pinned"] = dev.context.alloc_host(COPY_BYTES)
        buffers["pageable"] = np.ones(COPY_BYTES, np.uint8)
        buffers["dev_a"].fill(1)
    host = buffers[memory] if memory != "device" else None
    dst, src = {"H2D": (buffers["dev_a"], host), "D2H": (host, buffers["dev_a"]),
                "D2D": (buffers["dev_b"], buffers["dev_a"])}[direction]
    d, sp = Memory.address(dst), Memory.address(src)
    kind = getattr(lib, _KINDS[direction])
    sh = s.handle
    stream_sync = lib.hipStreamSynchronize
    shi = s.__hip_stream__()[1]                # the handle as an int (C, ctypes, CuPy)
    # the bench's own rocpy and raw copy loops (rocpy/bench/cases/copy.py)
    variants: Variants = {
        "rocpy (rocpy's stream)": _rocpy_copy(dst, src, direction, COPIES, s),
        "raw cffi (rocpy's stream)": _raw_copy(d, sp, COPY_BYTES, direction, COPIES, s)}
    spent: dict[str, list[float]] = {}
    if loops is not None:
        variants["C (its own stream)"] = loops.copier(d, sp, COPY_BYTES, kind, COPIES)
        variants["C (rocpy's stream)"] = loops.copier(d, sp, COPY_BYTES, kind, COPIES, shi)
        for what, how in BETWEEN.items():
            copies = loops.copier(d, sp, COPY_BYTES, kind, COPIES, shi, **how)
            spent[_between(what)] = times = []

            def busy_between(copies: Callable[[], None] = copies,
                             times: list[float] = times) -> None:
                copies()
                times.append(loops.between_ns() / 1e3 / COPIES)
            variants[_between(what)] = busy_between
        # the same C loop calling each loaded runtime's cudaMemcpyAsync itself (rocpy's,
        # under HIP's inline wrapper, and CuPy's): which runtime is faster, in this process
        for path in _cudart_paths():
            via = ctypes.cast(ctypes.CDLL(path).cudaMemcpyAsync, ctypes.c_void_p).value or 0
            variants[f"C -> {Path(path).name} (rocpy's stream)"] = loops.copier(
                d, sp, COPY_BYTES, kind, COPIES, shi, via=via)
    cudart = env.get("rocpy_cudart")
    if cudart is not None:
        # the CUDA runtime under rocpy (HIP's NVIDIA platform inlines hipMemcpyAsync into
        # cudaMemcpyAsync) called per copy from Python: ctypes.CDLL releases the GIL around
        # each call, PyDLL keeps it; against raw cffi (which releases it) and C
        for how, loader in (("GIL released", ctypes.CDLL), ("GIL held", ctypes.PyDLL)):
            fn = loader(cudart).cudaMemcpyAsync
            fn.restype = ctypes.c_int
            fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                           ctypes.c_void_p)
            batch = _repeat(fn, COPIES, d, sp, COPY_BYTES, kind, shi)

            def per_call(batch: Callable[[], None] = batch) -> None:
                batch()
                stream_sync(sh)
            variants[f"ctypes cudaMemcpyAsync, {how}"] = per_call
    cupy = env.get("cupy")
    if cupy is not None:
        rt, cs = cupy.cuda.runtime, env["cupy_stream"]
        ckind = {"H2D": rt.memcpyHostToDevice, "D2H": rt.memcpyDeviceToHost,
                 "D2D": rt.memcpyDeviceToDevice}[direction]
        own = _repeat(rt.memcpyAsync, COPIES, d, sp, COPY_BYTES, ckind, cs.ptr)
        theirs = _repeat(rt.memcpyAsync, COPIES, d, sp, COPY_BYTES, ckind, shi)

        def cupy_own() -> None:
            own()
            cs.synchronize()

        def cupy_rocpy_stream() -> None:
            theirs()
            rt.streamSynchronize(shi)
        variants["CuPy (its own stream)"] = cupy_own
        variants["CuPy (rocpy's stream)"] = cupy_rocpy_stream
    core = env.get("cuda.core")
    if core is not None:
        # cuda.core's Buffer.copy_from (cuMemcpyAsync) between the same addresses, on its
        # own stream and on rocpy's (wrapped through rocpy's __cuda_stream__)
        cc, streams = core
        dst_b, src_b = cc.Buffer.from_handle(d, COPY_BYTES), cc.Buffer.from_handle(sp, COPY_BYTES)
        for where, cstream in zip(("its own stream", "rocpy's stream"), streams):
            batch = _repeat(dst_b.copy_from, COPIES, src_b, stream=cstream)

            def core_copies(batch: Callable[[], None] = batch, cstream: Any = cstream) -> None:
                batch()
                cstream.sync()
            try:                 # a peer's problem leaves its rows out, never the run
                core_copies()
            except Exception as exc:
                print(f"floor: no cuda.core row on {where} ({type(exc).__name__}: {exc})")
                continue
            variants[f"cuda.core ({where})"] = core_copies
    return variants, spent


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=("launch", "copy"))
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--json")
    args = p.parse_args(argv)
    import rocpy
    from rocpy import _hotpath, hip
    from rocpy.bench.c_reference import C_LOOPS, CLoops
    from rocpy.bench.cases import compile_kernels
    if _hotpath.module() is None:
        print("floor: the compiled path is off (ROCPY_HOT=0 or not built)")
        return 1
    backend = rocpy.backend().name
    # rocpy's CUDA runtime: the one loaded before any peer's
    rocpy_cudart = next(iter(_cudart_paths()), None) if backend == "nvidia" else None
    if backend == "stub":
        from rocpy import stub
        for name in ("empty", "vadd"):
            stub.use_builtin(name)
    dev = hip.Device(0)
    s = dev.create_stream(non_blocking=True)
    kernel_file = compile_kernels(dev, backend)
    library = str(Path(__file__).resolve().parents[2] / C_LOOPS)
    loops = CLoops(library, kernel_file) if backend == "nvidia" and Path(library).exists() \
        else None
    env: dict[str, Any] = {"device": dev, "stream": s, "loops": loops, "library": library,
                           "kernel_file": kernel_file, "backend": backend,
                           "rocpy_cudart": rocpy_cudart}
    if backend == "nvidia":
        try:
            import cupy
            env["cupy"], env["cupy_stream"] = cupy, cupy.cuda.Stream(non_blocking=True)
        except Exception:       # not installed, or no CUDA for it: no CuPy rows
            pass
        try:
            env["cuda.core"] = _cuda_core(s)
        except Exception as exc:     # not installed, or an API this script does not know
            print(f"floor: no cuda.core rows ({type(exc).__name__}: {exc})")

    def settle() -> None:
        s.sync()
        if loops is not None:
            loops.sync()
    out: dict[str, dict[str, float]] = {}
    label = f"{backend}, {dev.name}: us per {{}}, median of {args.rounds} rounds"
    if args.only in (None, "launch"):
        out["launch"] = _medians(_launch_variants(env), args.rounds, settle, LAUNCHES)
        _print("launch floor (" + label.format("empty launch") + f" of {LAUNCHES})",
               out["launch"], "C, extra NULL")
    if args.only in (None, "copy"):
        for direction, memory in (("H2D", "pageable"), ("D2H", "pageable"), ("D2D", "device"),
                                  ("H2D", "pinned")):
            name = f"{direction} {memory} 4 KiB"
            variants, spent = _copy_variants(env, direction, memory)
            out[name] = _medians(variants, args.rounds // 4 or 1, settle, COPIES)
            for row, times in spent.items():
                out[name][row] -= statistics.median(times)
            _print(f"copy floor, {name} (" + label.format("copy") + f" of {COPIES})", out[name],
                   "C (its own stream)")
    if args.json:
        Path(args.json).write_text(json.dumps({"backend": backend, "rounds": args.rounds,
                                               "medians_us": out}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
