"""Lifetime: interpreter exit with everything live, fork after init, device reset.

* Exit with live streams (work in flight), buffers, modules, graphs, HSA queues
  (one blocked on a barrier that never opens), signals, pending host callbacks
  and asynchronous handlers, and objects only the collector can free: the
  process exits with status 0 and prints nothing.
* Fork after the runtime started: HIP and HSA state is not fork-safe, so in the
  child every inherited object refuses use (`rocpy.ClosedError` naming the fork)
  and anything new raises `rocpy.errors.ForkError` (a `RocpyError`); the parent
  is unaffected.  A child forked before rocpy loaded its backend may use it.
* A device reset releases what hipamd keeps across it (modules, events)
  instead of leaking it.
"""
from __future__ import annotations

import time

import numpy as np
import pytest
from rel_support import has_hsa

import rocpy
import rocpy.stub
from rocpy import hip

EXIT_HIP = """
    import numpy as np
    import sys, threading, time, numpy as np, rocpy
    from rocpy import hip
    dev = hip.Device(0)
    k = hip.Module.load(sys.argv[1], dev)["fill"]
    streams = [dev.create_stream(non_blocking=bool(i % 2)) for i in range(4)]
    bufs = [dev.context.alloc(1 << 16) for _ in range(8)]
    host = hip.Context.host().alloc_host(1 << 16)
    view = host.numpy(np.uint32)                      # a numpy view outliving everything
    for i, s in enumerate(streams):
        for j in range(50):
            k.launch(64, 256, (bufs[i], np.uint32(j), np.int32(1 << 14)), stream=s)
        bufs[i + 4].copy_from(np.ones(1 << 14, np.uint32), stream=s)   # pageable source in flight
        s.add_callback(time.sleep, 0.2)               # a callback still running at exit
        s.add_callback(len, "queued behind it")      # callbacks queued behind it
    ev = streams[0].record()
    g = hip.Graph(dev); g.add_memset(bufs[7], 0); x = g.instantiate(); x.launch(streams[1])
    parent = dev.context.alloc(4096); child = parent[0:16]; parent.close()   # orphaned parent
    a, b = [], []; a.append(b); b.append(a); a.append(dev.context.alloc(64)); del a, b   # a cycle
    dropped = dev.create_stream(); bufs[0].fill(1, stream=dropped); del dropped   # collected in flight
    if sys.argv[2] == "thread":
        threading.Thread(target=lambda: [streams[0].query() for _ in range(10**6)], daemon=True).start()
    if sys.argv[2] == "exit":
        sys.exit(0)
"""

EXIT_HSA = """
    import numpy as np
    import sys, time, rocpy
    from rocpy import hsa
    rt = hsa.Runtime()
    gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
    pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
    k = hsa.Executable.load(gpu, sys.argv[1]).kernel("fill")
    q, blocked = gpu.create_queue(), gpu.create_queue()
    buf = pool.allocate(1 << 16); buf.allow_access([gpu])
    never = hsa.Signal(1)                          # never reaches 0
    blocked.barrier_and([never])                   # this queue waits forever
    for i in range(100):
        blocked.dispatch(k, 64, 64, (buf, np.uint32(i), np.int32(64)))
        q.dispatch(k, 1 << 14, 256, (buf, np.uint32(i), np.int32(1 << 14)))
    pending = hsa.Signal(1)
    pending.on("eq", 0, print)                     # a handler that never fires
    soon = hsa.Signal(1)
    soon.on("eq", 0, lambda v: time.sleep(0.2))    # one firing during exit
    soon.store(0)
    copy_done = hsa.Signal(1)
    hsa.copy_async(buf, buf, 1 << 16, completion=copy_done)
    implicit = hsa.Signal(5)
"""
CLOSE_RUNTIME = """
    rt.close()                                     # the runtime stays up for its children
"""


@pytest.mark.parametrize("how", ["end", "exit"])
def test_exit_with_live_hip_objects_prints_nothing(how, py, kernel_paths):
    proc = py(EXIT_HIP, args=(kernel_paths["fill"], how), timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_exit_while_a_daemon_thread_uses_a_stream(py, kernel_paths):
    """A daemon thread still querying a stream while the exit hook releases everything:
    no crash, no hang; at most that thread's clear ClosedError (the stream is gone)."""
    for _ in range(3):
        proc = py(EXIT_HIP, args=(kernel_paths["fill"], "thread"), timeout=60)
        assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
        if proc.stderr:
            assert "Exception in thread" in proc.stderr, proc.stderr
            assert "Segmentation" not in proc.stderr and "Fatal Python error" not in proc.stderr


HSA_EXIT_BUG = ("HSA-layer bug (handed over): at exit, buffers and signals are released before the "
                "queues whose packets use them; destroying the signal a queue's barrier waits for "
                "starts the queued dispatches on freed buffers: a GPU memory fault aborts the exit. "
                "Fix: `_release_first_at_exit = True` on rocpy.hsa.Queue (as on hip.Stream)")


@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
@pytest.mark.parametrize("queues_first", [False, True], ids=["as-is", "queues-marked"])
def test_exit_with_live_hsa_objects_prints_nothing(queues_first, py, kernel_paths):
    code = EXIT_HSA + CLOSE_RUNTIME
    if queues_first:   # what the hand-over asks of the HSA layer, applied here
        code = code.replace("rt = hsa.Runtime()", "hsa.Queue._release_first_at_exit = True; rt = hsa.Runtime()")
    for _ in range(3):  # the fault depends on how far the packet processor got: try a few times
        proc = py(code, args=(kernel_paths["fill"],), timeout=60)
        if not queues_first and proc.returncode == -6 and "GPU memory fault" in proc.stderr \
                and not getattr(__import__("rocpy.hsa").hsa.Queue, "_release_first_at_exit", False):
            pytest.xfail(HSA_EXIT_BUG)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
def test_exit_with_both_runtimes_and_a_failed_queue(py, kernel_paths):
    proc = py(EXIT_HSA.replace("rt = hsa.Runtime()", "hsa.Queue._release_first_at_exit = True; rt = hsa.Runtime()") + """
    import numpy as np
    import rocpy.stub
    failed = gpu.create_queue()
    rocpy.stub.inject("queue_error")
    failed.dispatch(k, 64, 64, (buf, np.uint32(1), np.int32(64)))       # its error arrives during exit, unread
    """ + CLOSE_RUNTIME + EXIT_HIP.replace("import sys, threading", "import threading"),
        args=(kernel_paths["fill"], "end"), timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


# ---- fork ---------------------------------------------------------------------------------------

FORK = """
    import os, sys, warnings, json
    warnings.simplefilter("ignore", DeprecationWarning)   # 3.12: fork with threads
    import numpy as np, rocpy
    from rocpy import hip
    from rocpy.errors import ForkError
    dev = hip.Device(0)
    s = dev.create_stream(); b = dev.context.alloc(64); ev = s.record()
    k = hip.Module.load(sys.argv[1], dev)["fill"]
    b.fill(3, stream=s)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        out = {}
        uses = {
            "stream.sync": s.sync, "buffer.fill": lambda: b.fill(1),
            "buffer.copy_to": lambda: b.copy_to(np.empty(64, np.uint8)), "event.query": ev.query,
            "kernel.launch": lambda: k.launch(1, 16, (b, np.uint32(1), np.int32(16)), stream=s),
            "new stream": dev.create_stream, "new buffer": lambda: dev.context.alloc(64),
            "new event": lambda: hip.Event(dev), "Device(0).sync": dev.sync,
            "rocpy.backend": rocpy.backend, "hip.lib": lambda: hip.Module.load(sys.argv[1], dev),
        }
        for name, fn in uses.items():
            try:
                fn(); out[name] = "ok"
            except rocpy.RocpyError as e:
                out[name] = [type(e).__name__, "forked" in str(e), isinstance(e, (rocpy.ClosedError, ForkError))]
            except Exception as e:
                out[name] = ["escaped", type(e).__name__, str(e)]
        out["live"] = rocpy.debug.live_objects()
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 65536):
        data += chunk
    _, status = os.waitpid(pid, 0)
    s.sync()
    b.fill(5); assert (b.copy_to(np.empty(64, np.uint8)) == 5).all()   # the parent is unaffected
    print(json.dumps({"child": json.loads(data), "status": status}))
"""


def test_fork_after_init_refuses_in_the_child(py, kernel_paths):
    import json
    proc = py(FORK, args=(kernel_paths["fill"],))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    result = json.loads(proc.stdout)
    assert result["status"] == 0
    child = result["child"]
    assert child.pop("live") == {}                  # the child owns nothing, releases nothing
    inherited = ("stream.sync", "buffer.fill", "buffer.copy_to", "event.query", "kernel.launch")
    for name, outcome in child.items():
        want = "ClosedError" if name in inherited else "ForkError"
        assert outcome == [want, True, True], (name, outcome)


@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
def test_fork_after_init_refuses_inherited_hsa_objects(py, kernel_paths):
    proc = py("""
        import os, sys, warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        import rocpy
        from rocpy import hsa
        rt = hsa.Runtime(); gpu = rt.gpu_agents[0]
        sig = hsa.Signal(1); q = gpu.create_queue()
        pid = os.fork()
        if pid == 0:
            codes = []
            for fn in (sig.load, lambda: sig.store(0), lambda: q.sync(), lambda: rt.agents):
                try:
                    fn(); codes.append("ok")
                except rocpy.ClosedError as e:
                    codes.append("forked" in str(e))
            for fn in (lambda: hsa.Signal(1), hsa.Runtime, lambda: hsa.lib.hsa_system_get_info):
                try:                # new objects: the child's HSA state is not usable either
                    fn(); codes.append("ok")
                except rocpy.ForkError as e:
                    codes.append("forked" in str(e))
            os._exit(0 if codes == [True] * 7 else 1)
        _, status = os.waitpid(pid, 0)
        print(status, sig.load())
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "1"]


def test_multiprocessing_fork_child_gets_a_clear_error(py):
    proc = py("""
        import multiprocessing as mp, warnings
        warnings.simplefilter("ignore", DeprecationWarning)
        from rocpy import hip
        hip.Device(0).create_stream().close()       # the runtime is up in the parent
        def child(q):
            try:
                hip.Device(0).context.alloc(64)
                q.put("allowed")
            except Exception as e:
                q.put(f"{type(e).__name__}: {e}")
        if __name__ == "__main__":
            ctx = mp.get_context("fork")
            q = ctx.Queue(); p = ctx.Process(target=child, args=(q,)); p.start()
            print(q.get(timeout=30)); p.join(30); print("exit", p.exitcode)
    """)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.strip().splitlines()
    assert first.startswith("ForkError: this process was forked from pid"), first
    assert "spawn" in first and second == "exit 0"


def test_fork_before_init_is_fine(py, kernel_paths):
    proc = py("""
        import os, sys, numpy as np
        import rocpy                                 # imported, backend not loaded yet
        pid = os.fork()
        if pid == 0:
            from rocpy import hip
            b = hip.Device(0).context.alloc(64); b.fill(9)
            ok = (b.copy_to(np.empty(64, np.uint8)) == 9).all(); b.close()
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        from rocpy import hip
        hip.Device(0).context.alloc(64).close()
        print(status)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0"


# ---- device reset -----------------------------------------------------------------------------------

@pytest.mark.stub_only
def test_reset_releases_what_survives_it(dev, kernel_paths):
    """Regression: a reset abandoned modules and events, which hipamd (and the stub) keep:
    their memory leaked.  Now they are released with the reset."""
    base = rocpy.stub.live_allocations()
    mod = hip.Module.load(kernel_paths["vadd"], dev)
    k = mod["vadd"]
    ev = hip.Event(dev)
    buf = dev.context.alloc(4096)
    s = dev.create_stream()
    ev.record(s)
    assert rocpy.stub.live_allocations() > base
    dev.reset()
    for obj in (mod, k, ev, buf, s):
        assert obj.closed
    with pytest.raises(rocpy.ClosedError, match="reset"):
        k.launch(1, 1, (None, None, None, np.int32(0)))
    rocpy.debug.collect()
    assert rocpy.stub.live_allocations() == base     # nothing of the module is left
    assert rocpy.debug.live_objects() == {}
    fresh = hip.Module.load(kernel_paths["vadd"], dev)   # and the device works
    fresh.close()


def test_exit_releases_what_runs_work_first(py):
    """Regression: the exit hook released newest first, so memory made after a queue was
    freed while the queue could still run work on it.  Work-runners now go first."""
    proc = py("""
        import sys
        from rocpy._handle import Handle
        class Runner(Handle):
            _release_first_at_exit = True
        class Memory(Handle):
            pass
        say = sys.stdout.write
        runner = Runner(1, (say, "runner;"))
        memory = [Memory(i, (say, f"memory{i};")) for i in range(3)]
        child = Memory(9, (say, "child of runner;"), parents=(runner,))
    """)
    assert proc.returncode == 0, proc.stderr
    # the runner first (after its child, which must go before it), then the rest, newest first
    assert proc.stdout == "child of runner;runner;memory2;memory1;memory0;"


# ---- dropped objects are released (no cycle through rocpy's own tables) -------------------------

DROPS = {
    "fill": lambda b, s: b.fill(1, stream=s),
    "fill u32": lambda b, s: b.fill(np.uint32(1), stream=s),
    "copy_from array": lambda b, s: b.copy_from(np.zeros(64, np.uint8), stream=s),
    "copy_to array": lambda b, s: b.copy_to(np.zeros(64, np.uint8), stream=s),
    "copy_from buffer": lambda b, s: b.copy_from(b.context.alloc(64), stream=s),
    "close in stream order": lambda b, s: b.context.alloc(64).close(stream=s),
}


@pytest.mark.parametrize("keep_buffer", [False, True], ids=["drop-both", "keep-buffer"])
@pytest.mark.parametrize("work", list(DROPS))
def test_a_dropped_stream_with_work_is_released(work, keep_buffer, dev):
    """Regression: a buffer remembered the stream of its last work (Buffer._last) while the
    stream held the buffer until that work was fenced, and the stream's release recipe,
    in rocpy's table of live objects, held what the stream held: a stream dropped with
    work in flight (no synchronize, no close) was never collected, nor its buffers."""
    s = dev.create_stream()
    b = dev.context.alloc(64)
    DROPS[work](b, s)
    del s
    if not keep_buffer:
        del b
    want = {"DeviceBuffer": 1} if keep_buffer else {}
    deadline = time.monotonic() + 5      # fences are polled by the reaper every few ms
    while True:
        dev.sync()
        rocpy.debug.collect()
        live = rocpy.debug.live_objects()
        if live == want or time.monotonic() > deadline:
            break
        time.sleep(0.005)
    assert live == want, live
    if keep_buffer:
        b.fill(2)                       # still usable, its last stream gone
        b.__dlpack__()                  # ordering after a collected stream: nothing to wait for
        b.close()
