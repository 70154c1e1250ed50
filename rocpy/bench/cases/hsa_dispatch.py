"""AQL dispatch through rocpy.hsa (amd and stub backends: where the HSA API runs).

* dispatch + wait: one ``Queue.dispatch`` of ``empty`` with a completion
  signal, then ``Signal.wait`` until the packet processor decremented it:
  the round trip of one packet;
* batch: ``Queue.dispatch_many`` of one prepared dispatch ``BATCH`` times
  (one doorbell), then ``Queue.sync``; per packet.

With ``--compare``: ``raw`` writes the packet through the same C submission
helper rocpy uses (``rocpy_aql_dispatch``, with the packet and arguments
built beforehand) and waits with ``hsa_signal_wait_scacquire``, both called
through cffi; ``C loop`` builds and submits the batch in one C call
(``rocpy_bench_dispatch_loop``, ``fast/hsa/aql.c``).
"""
from __future__ import annotations

from typing import Any

from ..harness import Case
from . import Bench, Env, Unavailable

BATCH = 100
TIMEOUT = 60.0


def gpu_agent(env: Env) -> Any:
    """The HSA GPU agent that is the HIP device the other families benchmark (an open
    `hsa.Runtime` kept by ``env``), or `Unavailable` when the backend has no HSA GPU."""
    from rocpy import _backend
    if not _backend.current().has_hsa:
        raise Unavailable(f"there is no HSA runtime on the {env.backend} backend")
    from rocpy import hsa
    rt = env.keep(hsa.Runtime())
    gpus = rt.gpu_agents
    if not gpus:
        raise Unavailable("the HSA runtime lists no GPU agent")
    try:
        mine = env.device.hsa_agent
        return next((a for a in gpus if a == mine), gpus[0])
    except Exception:
        return gpus[0]


def build(env: Env) -> list[Bench]:
    from rocpy import hsa
    agent = gpu_agent(env)
    path = env.kernel_file()
    exe = env.keep(hsa.Executable.load(agent, path))
    k = exe.kernel("empty")
    n = BATCH if not env.plan.quick else BATCH // 2
    size = 1024
    while size < 4 * n and size < agent.queue_max_size:
        size *= 2
    q = env.keep(agent.create_queue(size=max(size, agent.queue_min_size)))
    sig = env.keep(hsa.Signal(1))
    one = env.keep(k.prepare(1, 1))
    compare_on = env.plan.compare
    benches = []

    dispatch, store, wait = q.dispatch, sig.store, sig.wait

    def rocpy_round_trip() -> None:
        store(1)
        dispatch(k, 1, 1, completion_signal=sig)
        if wait("eq", 0, timeout=TIMEOUT) != 0:
            raise TimeoutError("the dispatch did not complete")

    many, drain = q.dispatch_many, q.sync

    def rocpy_batch() -> None:
        many(one, count=n)
        drain(timeout=TIMEOUT)

    variants = {"rocpy": rocpy_round_trip}
    batch = {"rocpy": rocpy_batch}
    if compare_on:
        lib = hsa.lib
        aql = getattr(q, "_aql", None)
        if aql is None or not hasattr(lib, "rocpy_aql_dispatch"):
            env.note("HSA dispatch: the C submission helper is not reachable; no raw variant")
        else:
            packet, kernarg = k.packet(1, 1), k.pack((), 1, 1)
            kn, shv, sh = len(kernarg), sig._hv, sig.handle
            submit = lib.rocpy_aql_dispatch
            sstore, swait = lib.hsa_signal_store_screlease, lib.hsa_signal_wait_scacquire
            eq, blocked = lib.HSA_SIGNAL_CONDITION_EQ, lib.HSA_WAIT_STATE_BLOCKED
            forever = (1 << 64) - 1

            def raw_round_trip() -> None:
                sstore(sh, 1)
                if submit(aql, packet, kernarg, kn, shv) < 0:
                    raise RuntimeError("rocpy_aql_dispatch failed")
                while swait(sh, eq, 0, forever, blocked) != 0:
                    pass
            variants["raw"] = raw_round_trip
            loop = lib.rocpy_bench_dispatch_loop
            lock, obj = q._lock, k.object

            def c_batch() -> None:
                with lock:
                    if loop(aql, n, obj, kernarg, kn, 1, 1, 0) < 0:
                        raise RuntimeError("rocpy_bench_dispatch_loop failed")
                drain(timeout=TIMEOUT)
            batch["C loop"] = c_batch
    benches.append(Bench(Case("HSA dispatch + wait", variants,
                              reference="raw" if "raw" in variants else "rocpy", ops=1),
                         "hsa_dispatch", "latency", {"packets": 1},
                         title="HSA: one AQL dispatch + completion-signal wait (round trip)"))
    benches.append(Bench(Case(f"HSA {n} packets + drain", batch,
                              reference="C loop" if "C loop" in batch else "rocpy", ops=n),
                         "hsa_dispatch", "latency", {"packets": n},
                         title=f"HSA: {n} prepared dispatches, one doorbell, queue drained "
                               "(per packet)"))
    return benches
