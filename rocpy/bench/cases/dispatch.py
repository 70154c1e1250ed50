"""HIP kernel dispatch latency: launch plus synchronize, batched enqueue, graph replay.

All launch the ``empty`` kernel (one block of one thread) on one stream, and
the 4-argument ``vadd`` (three buffers and ``np.int32(1)``: packed at every
launch; the raw variant reuses one buffer packed beforehand):

* launch + sync: one ``Kernel.launch`` then ``Stream.sync`` per timed
  call: the round trip a host waits for;
* batched: ``BATCH`` launches then one synchronize; per launch;
* graph replay: a graph of ``BATCH`` launches captured from the stream,
  instantiated once, launched and synchronized; per kernel node.

With ``--compare``: ``raw`` makes the same ``hipModuleLaunchKernel`` /
``hipGraphLaunch`` / ``hipStreamSynchronize`` calls through ``rocpy.hip.lib``
with prepared arguments, and the peers launch their own load of the same
code object.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..harness import Case
from . import Bench, Env

BATCH = 100


def _raw_launcher(kernel: Any, stream: Any) -> tuple[Any, tuple[Any, ...]]:
    """``hipModuleLaunchKernel`` and its prepared arguments for a (1, 1) launch of ``kernel``."""
    from rocpy.hip import ffi, lib
    # the kernel's own prepared ``extra`` (its argument buffer): what Kernel.launch passes
    extra = getattr(kernel, "_extra", None) or ffi.NULL
    return lib.hipModuleLaunchKernel, (kernel.handle, 1, 1, 1, 1, 1, 1, 0, stream.handle,
                                       ffi.NULL, extra)


def build(env: Env) -> list[Bench]:
    from rocpy.hip import lib

    from .. import compare
    k = env.kernel("empty")
    s = env.stream
    n = BATCH if not env.plan.quick else BATCH // 2
    launch, sync = k.launch, s.sync
    compare_on = env.plan.compare
    peers = compare.active(env) if compare_on else []
    raw_launch, raw_args = _raw_launcher(k, s)
    raw_sync, sh = lib.hipStreamSynchronize, s.handle
    benches = []

    def rocpy_round_trip() -> None:
        launch(1, 1, (), s)
        sync()

    def raw_round_trip() -> None:
        if raw_launch(*raw_args) or raw_sync(sh):
            raise RuntimeError("hipModuleLaunchKernel/hipStreamSynchronize failed")

    def rocpy_batch() -> None:
        for _ in range(n):
            launch(1, 1, (), s)
        sync()

    def raw_batch() -> None:
        for _ in range(n):
            if raw_launch(*raw_args):
                raise RuntimeError("hipModuleLaunchKernel failed")
        if raw_sync(sh):
            raise RuntimeError("hipStreamSynchronize failed")

    for name, title, mine, raw, ops, kind, extra in (
            ("launch + sync", "kernel launch + stream synchronize (round trip)",
             rocpy_round_trip, raw_round_trip, 1, "launch_sync", {}),
            (f"{n} launches + 1 sync",
             f"batched enqueue: {n} launches, then one synchronize (per launch)",
             rocpy_batch, raw_batch, n, "launch_batch", {"n": n})):
        variants: dict[str, Callable[[], object]] = {"rocpy": mine}
        if compare_on:
            variants["raw"] = raw
            for peer in peers:
                fn = peer.variant(kind, **extra)
                if fn is not None:
                    variants[peer.name] = fn
        benches.append(Bench(Case(name, variants, reference="raw" if compare_on else "rocpy",
                                  ops=ops), "dispatch", "latency", {"launches": ops}, title=title))

    benches += _four_arguments(env, n, peers, compare_on)
    try:
        with s.capture(mode="thread_local") as graph:
            for _ in range(n):
                launch(1, 1, (), s)
        env.keep(graph)
        exe = env.keep(graph.instantiate())
    except Exception as exc:
        env.skip("dispatch", f"graph capture failed here ({type(exc).__name__}: {exc})",
                 "graph replay")
        return benches
    glaunch, graw = exe.launch, lib.hipGraphLaunch
    eh = exe.handle

    def rocpy_graph() -> None:
        glaunch(s)
        sync()

    def raw_graph() -> None:
        if graw(eh, sh) or raw_sync(sh):
            raise RuntimeError("hipGraphLaunch/hipStreamSynchronize failed")

    variants = {"rocpy": rocpy_graph}
    if compare_on:
        variants["raw"] = raw_graph
        for peer in peers:
            fn = peer.variant("graph", n=n)
            if fn is not None:
                variants[peer.name] = fn
    benches.append(Bench(Case(f"graph of {n}, replay + sync", variants,
                              reference="raw" if compare_on else "rocpy", ops=n),
                         "dispatch", "latency", {"launches": n, "graph": True},
                         title=f"graph replay: {n} kernel nodes, launch + synchronize "
                               "(per kernel)"))
    return benches


def four_args(env: Env) -> tuple[Any, tuple[Any, ...]]:
    """The ``vadd`` kernel and its arguments (three 4-byte buffers, ``np.int32(1)``)."""
    import numpy as np
    k = env.kernel("vadd")
    bufs = [env.keep(env.device.context.alloc(4)) for _ in range(3)]
    for b in bufs:
        b.fill(0)
    return k, (bufs[0], bufs[1], bufs[2], np.int32(1))


def _four_arguments(env: Env, n: int, peers: list[Any], compare_on: bool) -> list[Bench]:
    """4-argument launch + sync, and batched 4-argument enqueue (per launch)."""
    from rocpy.hip import lib
    k, args = four_args(env)
    s = env.stream
    launch, sync = k.launch, s.sync
    hold = kbuf, size_p, extra = k._packed(args, 1, 1, 0)   # alive while the closures are
    raw_launch, raw_sync, sh = lib.hipModuleLaunchKernel, lib.hipStreamSynchronize, s.handle
    from rocpy.hip import ffi
    raw_args = (k.handle, 1, 1, 1, 1, 1, 1, 0, sh, ffi.NULL, extra)
    pointers = tuple(b.ptr for b in args[:3])

    def rocpy_round_trip() -> None:
        launch(1, 1, args, s)
        sync()

    def raw_round_trip(_hold: Any = hold) -> None:
        if raw_launch(*raw_args) or raw_sync(sh):
            raise RuntimeError("hipModuleLaunchKernel/hipStreamSynchronize failed")

    def rocpy_batch() -> None:
        for _ in range(n):
            launch(1, 1, args, s)
        sync()

    def raw_batch(_hold: Any = hold) -> None:
        for _ in range(n):
            if raw_launch(*raw_args):
                raise RuntimeError("hipModuleLaunchKernel failed")
        if raw_sync(sh):
            raise RuntimeError("hipStreamSynchronize failed")

    benches = []
    for name, title, mine, raw, ops, kind, extra_params in (
            ("4-arg launch + sync", "4-argument kernel (3 buffers + int): launch + synchronize",
             rocpy_round_trip, raw_round_trip, 1, "launch4_sync", {}),
            (f"4-arg: {n} launches + 1 sync",
             f"4-argument kernel: {n} launches, then one synchronize (per launch)",
             rocpy_batch, raw_batch, n, "launch4_batch", {"n": n})):
        variants = {"rocpy": mine}
        if compare_on:
            variants["raw"] = raw
            for peer in peers:
                fn = peer.variant(kind, pointers=pointers, **extra_params)
                if fn is not None:
                    variants[peer.name] = fn
        benches.append(Bench(Case(name, variants, reference="raw" if compare_on else "rocpy",
                                  ops=ops), "dispatch", "latency",
                             {"launches": ops, "arguments": 4}, title=title))
    return benches
