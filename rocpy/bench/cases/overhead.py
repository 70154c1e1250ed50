"""What each Pythonic call adds over the raw cffi call: ``raw`` against ``rocpy``.

``raw`` calls the ``rocpy.hip.lib`` / ``rocpy.hsa.lib`` function with
arguments prepared beforehand (the floor for any Python binding); ``rocpy``
goes through the object (argument checks and packing, stream bookkeeping,
keep-alive of what the work uses, error checks).  Each timed call makes
``OPS`` calls; results are per call.  Both variants always run (this family
is a comparison by design).

On the stub a gate kernel holds the stream while a case is timed, so the
calls only enqueue (`rocpy.bench.cases.Gate`); on a GPU the work runs, and the
stream is synchronized after each timed batch, untimed (`Case.settle`), as
``benchmarks/c/hip_ref.c`` does: without it the batches of all repetitions
queue up, and a launch waits for the device's queue (4-argument launches
measured the GPU's ``vadd`` throughput, 4.5 us, not the enqueue).  On nvidia with
``--compare``, the launch cases have a third variant, ``C``: hip_ref.c's loops from
benchmarks/c/hip_ref_loops.c, timed in the same rounds (`rocpy.bench.c_reference.c_loops`).
"""
from __future__ import annotations

from typing import Any

from ..harness import Case
from . import Bench, Env, Gate, Unavailable

OPS = 100


def _loop(fn: Any, ops: int, *args: Any) -> Any:
    def run() -> None:
        for _ in range(ops):
            fn(*args)
    return run


def _checked(fn: Any, ops: int, *args: Any, ok: tuple[int, ...] = (0,), keep: Any = None) -> Any:
    """``ops`` calls of ``fn(*args)``, each checked; ``keep``: what ``args`` point into."""
    def run(_keep: Any = keep) -> None:
        for _ in range(ops):
            if fn(*args) not in ok:
                raise RuntimeError(f"{getattr(fn, '__name__', 'call')} failed")
    return run


def build(env: Env) -> list[Bench]:
    from rocpy import hip
    from rocpy.hip import ffi, lib
    ops = OPS if not env.plan.quick else OPS // 2
    s, dev = env.stream, env.device
    sh = s.handle
    gate = Gate(env)
    before = (lambda: gate.hold(s)) if gate.enabled else None
    after = lambda: gate.release(s)
    from ..c_reference import c_loops
    loops = c_loops(env)          # nvidia --compare: hip_ref.c's launch loops, in-process
    settle: Any = None if gate.enabled else s.sync
    if loops is not None and settle is not None:
        s_sync, c_sync = s.sync, loops.sync

        def settle_both() -> None:
            s_sync()
            c_sync()
        settle = settle_both
    not_ready = lib.hipErrorNotReady
    benches = []

    def add(name: str, raw: Any, mine: Any, title: str, per: str, c: Any = None,
            **params: Any) -> None:
        api, raw_call = title.split(" vs ")
        raw_call = raw_call.split(",")[0]
        variants = {"raw": raw, "rocpy": mine}
        if c is not None:
            variants["C"] = c
        case = Case(name, variants, reference="raw", ops=ops, settle=settle)
        benches.append(Bench(case,
                             "overhead", "latency",
                             dict(params, calls=ops, per=per, api=api, raw_call=raw_call),
                             before=before, after=after, title=title))

    ev = env.keep(hip.Event(dev, timing=False))
    eh = ev.handle
    add("event record", _checked(lib.hipEventRecord, ops, eh, sh), _loop(ev.record, ops, s),
        "Event.record(s) vs hipEventRecord", "call")
    add("event query", _checked(lib.hipEventQuery, ops, eh, ok=(0, not_ready)),
        _loop(ev.query, ops), "Event.query() vs hipEventQuery", "call")
    add("stream query", _checked(lib.hipStreamQuery, ops, sh, ok=(0, not_ready)),
        _loop(s.query, ops), "Stream.query() vs hipStreamQuery", "call")
    done = env.keep(hip.Event(dev, timing=False))      # complete: recorded on an idle stream
    idle = env.keep(dev.create_stream(non_blocking=True))
    done.record(idle)
    idle.sync()
    add("event sync (complete)", _checked(lib.hipEventSynchronize, ops, done.handle),
        _loop(done.sync, ops), "Event.sync() vs hipEventSynchronize, a complete event", "call")
    try:
        k = env.kernel("empty")
    except Unavailable as exc:
        env.skip("overhead", str(exc), "launch (enqueue)")
    else:
        from .dispatch import _raw_launcher
        fn, args = _raw_launcher(k, s)
        add("launch (enqueue)", _checked(fn, ops, *args), _loop(k.launch, ops, 1, 1, (), s),
            "Kernel.launch(1, 1, (), s) vs hipModuleLaunchKernel, enqueue only", "launch",
            c=None if loops is None else (lambda: loops.launch(ops)))
        from .dispatch import four_args
        k4, args4 = four_args(env)
        packed = k4._packed(args4, 1, 1, 0)     # (kbuf, size_p, extra): kept by the raw loop
        add("4-arg launch (enqueue)",
            _checked(fn, ops, k4.handle, 1, 1, 1, 1, 1, 1, 0, sh, ffi.NULL, packed[2], keep=packed),
            _loop(k4.launch, ops, 1, 1, args4, s),
            "Kernel.launch(1, 1, (a, b, c, np.int32(1)), s) vs hipModuleLaunchKernel "
            "(a buffer packed once), enqueue only", "launch",
            c=None if loops is None else (lambda: loops.launch4(ops)))
    nbytes = 4096
    src = env.keep(dev.context.alloc(nbytes))
    dst = env.keep(dev.context.alloc(nbytes))
    src.fill(1)
    add("4 KiB D2D copy (enqueue)",
        _checked(lib.hipMemcpyAsync, ops, ffi.cast("void *", dst.ptr), ffi.cast("void *", src.ptr),
                 nbytes, lib.hipMemcpyDeviceToDevice, sh),
        _loop(dst.copy_from, ops, src, s),
        "DeviceBuffer.copy_from(src, s) vs hipMemcpyAsync, 4 KiB, enqueue only", "copy")

    from rocpy import _backend
    if _backend.current().has_hsa:
        from rocpy import hsa
        sig = env.keep(hsa.Signal(1))
        add("HSA signal load", _loop(hsa.lib.hsa_signal_load_scacquire, ops, sig.handle),
            _loop(sig.load, ops), "hsa.Signal.load() vs hsa_signal_load_scacquire", "call")
    return benches
