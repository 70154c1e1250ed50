"""Misuse of the HSA layer (rocpy.hsa, where it is stable): closed objects, bad arguments.

The same rules as the HIP layer's: a closed object refuses use with
`rocpy.ClosedError`; a wrong type is a `TypeError`, a wrong value a
`ValueError` (`LaunchConfigError`, `ArgumentCountError`... for kernels) or the
runtime's `HsaError`; nothing reaches the runtime with a dead handle.
"""
from __future__ import annotations

import numpy as np
import pytest
from rel_support import has_hsa

import rocpy
from rocpy.codeobject.errors import (
    ArgumentCountError,
    ArgumentTypeError,
    LaunchConfigError,
)

pytestmark = pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")


@pytest.fixture
def env(hsa_env):
    return hsa_env


def _closed(make):
    obj = make()
    obj.close()
    return obj


# what is closed -> {member: fn(closed, env)}; every call must raise ClosedError
CLOSED = {
    "Signal": (lambda e: e["hsa"].Signal(1), {
        "load": lambda o, e: o.load(), "value": lambda o, e: o.value, "store": lambda o, e: o.store(1),
        "silent_store": lambda o, e: o.silent_store(1), "exchange": lambda o, e: o.exchange(1),
        "cas": lambda o, e: o.cas(1, 0), "add": lambda o, e: o.add(1), "subtract": lambda o, e: o.subtract(1),
        "and_": lambda o, e: o.and_(1), "or_": lambda o, e: o.or_(1), "xor": lambda o, e: o.xor(1),
        "wait": lambda o, e: o.wait("eq", 0, timeout=0.01), "on": lambda o, e: o.on("eq", 0, print),
        "wait_any": lambda o, e: e["hsa"].Signal.wait_any([e["signal"], o], timeout=0.01),
        "as completion of dispatch": lambda o, e: e["queue"].dispatch(e["kernel"], 64, 64, e["args"],
                                                                      completion_signal=o),
        "as barrier dependency": lambda o, e: e["queue"].barrier_and([o]),
        "as barrier completion": lambda o, e: e["queue"].barrier_or([e["signal"]], completion_signal=o),
        "as copy completion": lambda o, e: e["hsa"].copy_async(e["buf"], e["buf"], 64, completion=o),
        "as copy dependency": lambda o, e: e["hsa"].copy_async(e["buf"], e["buf"], 64,
                                                               completion=e["signal"], deps=[o]),
        "as Dispatch completion": lambda o, e: e["kernel"].prepare(64, 64, e["args"], completion_signal=o),
        "dispatch_time": lambda o, e: e["queue"].dispatch_time(o),
    }),
    "Buffer": (lambda e: e["pool"].allocate(256), {
        "numpy": lambda o, e: o.numpy(), "fill": lambda o, e: o.fill(0), "copy_from": lambda o, e: o.copy_from(e["buf"], 64),
        "copy_to": lambda o, e: o.copy_to(e["buf"], 64), "allow_access": lambda o, e: o.allow_access([e["gpu"]]),
        "__int__": lambda o, e: int(o), "__index__": lambda o, e: o.__index__(),
        "handle": lambda o, e: o.handle, "hsa.copy dst": lambda o, e: e["hsa"].copy(o, e["buf"], 64),
        "hsa.copy src": lambda o, e: e["hsa"].copy(e["buf"], o, 64), "hsa.fill": lambda o, e: e["hsa"].fill(o, 0, 4),
        "hsa.copy_async": lambda o, e: e["hsa"].copy_async(o, e["buf"], 64, completion=e["signal"]),
    }),
    "Queue": (lambda e: e["gpu"].create_queue(), {
        "dispatch": lambda o, e: o.dispatch(e["kernel"], 64, 64, e["args"]),
        "dispatch_many": lambda o, e: o.dispatch_many([e["kernel"].prepare(64, 64, e["args"])]),
        "barrier_and": lambda o, e: o.barrier_and([]), "barrier_or": lambda o, e: o.barrier_or([]),
        "sync": lambda o, e: o.sync(), "read_index": lambda o, e: o.read_index,
        "write_index": lambda o, e: o.write_index, "profiling=": lambda o, e: setattr(o, "profiling", True),
        "dispatch_time": lambda o, e: o.dispatch_time(e["signal"]), "handle": lambda o, e: o.handle,
    }),
    "Executable": (lambda e: e["hsa"].Executable.load(e["gpu"], e["exe"].code_object.data), {
        "kernel": lambda o, e: o.kernel("fill"), "handle": lambda o, e: o.handle,
    }),
    "Kernel": (lambda e: e["hsa"].Executable.load(e["gpu"], e["exe"].code_object.data).kernel("fill"), {
        "dispatch": lambda o, e: e["queue"].dispatch(o, 64, 64, e["args"]),
        "prepare": lambda o, e: o.prepare(64, 64, e["args"]),
        "Dispatch": lambda o, e: e["hsa"].Dispatch(o, 64, 64, e["args"]),
    }),
    "Runtime": (lambda e: e["hsa"].Runtime(), {
        "agents": lambda o, e: o.agents, "gpu_agents": lambda o, e: o.gpu_agents, "info": lambda o, e: o.info(
            "HSA_SYSTEM_INFO_TIMESTAMP", "u64"), "extension_supported": lambda o, e: o.extension_supported("images"),
        "Signal(runtime=)": lambda o, e: e["hsa"].Signal(1, runtime=o),
    }),
    "LockedMemory": (lambda e: e["hsa"].lock(bytearray(4096), agents=[e["gpu"]]), {
        "__int__": lambda o, e: int(o), "__enter__": lambda o, e: o.__enter__(),
        "hsa.copy": lambda o, e: e["hsa"].copy(e["buf"], o, 64),
    }),
}
CLOSED_CASES = [(t, m) for t in CLOSED for m in CLOSED[t][1]]


@pytest.mark.parametrize("type_name,member", CLOSED_CASES, ids=[f"{t}.{m}" for t, m in CLOSED_CASES])
def test_closed_hsa_object_refuses_use(type_name, member, env):
    make, calls = CLOSED[type_name]
    obj = _closed(lambda: make(env))
    with pytest.raises(rocpy.ClosedError):
        calls[member](obj, env)
    # the rest still works
    env["queue"].dispatch(env["kernel"], 64, 64, env["args"])
    env["queue"].sync(timeout=5)
    assert (env["buf"].numpy(np.uint32, 64) == 1).all()


# ---- closed objects the GPU would use: the process must survive (run in a subprocess) -------

def test_closed_buffer_as_a_kernel_argument_is_refused(py, kernel_paths):
    """A closed hsa.Buffer passed to a dispatch: must raise ClosedError, not let the GPU
    touch freed memory (on the stub and on ROCr: a memory fault, the process aborts)."""
    proc = py("""
        import numpy as np
        import sys, rocpy
        from rocpy import hsa
        rt = hsa.Runtime(); gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
        pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
        k = hsa.Executable.load(gpu, sys.argv[1]).kernel("fill")
        q = gpu.create_queue()
        b = pool.allocate(256); b.allow_access([gpu]); b.close()
        for via in ("dispatch", "prepare"):
            try:
                if via == "dispatch":
                    q.dispatch(k, 64, 64, (b, np.uint32(1), np.int32(64)))
                else:
                    q.dispatch_many([k.prepare(64, 64, (b, np.uint32(1), np.int32(64)))])
                q.sync(timeout=5)
                print(via, "accepted")
            except rocpy.ClosedError:
                print(via, "refused")
    """, args=(kernel_paths["fill"],))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["dispatch", "refused", "prepare", "refused"]


def test_closed_locked_memory_as_a_kernel_argument_is_refused(py, kernel_paths):
    proc = py("""
        import numpy as np
        import sys, rocpy
        from rocpy import hsa
        rt = hsa.Runtime(); gpu = rt.gpu_agents[0]
        k = hsa.Executable.load(gpu, sys.argv[1]).kernel("fill")
        q = gpu.create_queue()
        mem = hsa.lock(bytearray(4096), agents=[gpu]); mem.close()
        try:
            q.dispatch(k, 64, 64, (mem, np.uint32(1), np.int32(64))); q.sync(timeout=5); print("accepted")
        except rocpy.ClosedError:
            print("refused")
    """, args=(kernel_paths["fill"],))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["refused"]


# ---- bad arguments ------------------------------------------------------------------------------

T, V = TypeError, ValueError
BAD = [
    # (id, fn(env), expected exception)
    *[(f"pool.allocate({v!r})", lambda e, v=v: e["pool"].allocate(v), T) for v in (None, 1.5, "8")],
    *[(f"pool.allocate({v!r})", lambda e, v=v: e["pool"].allocate(v), V) for v in (0, -1)],
    ("pool.allocate(2**63)", lambda e: e["pool"].allocate(2**63), rocpy.HsaError),
    ("pool.allocate(True)", lambda e: e["pool"].allocate(True), T),
    ("pool.allocate(2**64)", lambda e: e["pool"].allocate(2**64), (V, rocpy.HsaError)),
    *[(f"create_queue(size={v!r})", lambda e, v=v: e["gpu"].create_queue(size=v), V)
      for v in (0, 3, -4)],
    ("create_queue(size=1.5)", lambda e: e["gpu"].create_queue(size=1.5), T),   # a type error
    ("create_queue(size=2**40)", lambda e: e["gpu"].create_queue(size=2**40), (V, rocpy.HsaError)),
    ("create_queue(kind='bogus')", lambda e: e["gpu"].create_queue(kind="bogus"), V),
    ("create_queue(on_error=5)", lambda e: e["gpu"].create_queue(on_error=5), T),
    ("cpu.create_queue()", lambda e: e["cpu"].create_queue(), rocpy.HsaError),
    ("create_queue(kernarg_bytes=0)", lambda e: e["gpu"].create_queue(kernarg_bytes=0), V),
    *[(f"dispatch(grid={g!r})", lambda e, g=g: e["queue"].dispatch(e["kernel"], g, 64, e["args"]),
       LaunchConfigError) for g in (0, -1, 2**33, (1, 1, 1, 1), None, 1.5)],
    *[(f"dispatch(workgroup={w!r})", lambda e, w=w: e["queue"].dispatch(e["kernel"], 64, w, e["args"]),
       LaunchConfigError) for w in (0, 2048, (1025,), (32, 32, 2))],
    *[(f"dispatch({n} args)", lambda e, n=n: e["queue"].dispatch(e["kernel"], 64, 64, e["args"][:n]),
       ArgumentCountError) for n in (0, 1, 2)],
    ("dispatch(4 args)", lambda e: e["queue"].dispatch(e["kernel"], 64, 64, (*e["args"], 1)),
     ArgumentCountError),
    ("dispatch(str pointer)", lambda e: e["queue"].dispatch(e["kernel"], 64, 64, ("x", np.uint32(1), np.int32(64))),
     ArgumentTypeError),
    ("dispatch(kernel=None)", lambda e: e["queue"].dispatch(None, 64, 64, ()), T),
    ("dispatch(kernel of HIP)", lambda e: e["queue"].dispatch("fill", 64, 64, ()), T),
    ("dispatch(completion_signal=5)", lambda e: e["queue"].dispatch(e["kernel"], 64, 64, e["args"],
                                                                     completion_signal=5), T),
    ("dispatch(dynamic_lds=-1)", lambda e: e["queue"].dispatch(e["kernel"], 64, 64, e["args"],
                                                                dynamic_lds=-1), LaunchConfigError),
    ("dispatch(fences='bogus')", lambda e: e["queue"].dispatch(e["kernel"], 64, 64, e["args"],
                                                                fences="bogus"), V),
    ("barrier_or(6 deps)", lambda e: e["queue"].barrier_or([e["signal"]] * 6), V),   # AND chains
    ("barrier_and([5])", lambda e: e["queue"].barrier_and([5]), T),
    ("barrier_and(None)", lambda e: e["queue"].barrier_and(None), T),
    ("dispatch_many([5])", lambda e: e["queue"].dispatch_many([5]), T),
    ("dispatch_many(count=-1)", lambda e: e["queue"].dispatch_many(e["kernel"].prepare(64, 64, e["args"]),
                                                                   count=-1), V),
    *[(f"Signal({v!r})", lambda e, v=v: e["hsa"].Signal(v), T) for v in (None, 1.5, "1", True)],
    *[(f"Signal({v})", lambda e, v=v: e["hsa"].Signal(v), OverflowError) for v in (2**63, -2**63 - 1)],
    ("Signal(consumers=[None])", lambda e: e["hsa"].Signal(1, consumers=[None]), T),
    ("signal.load('bogus')", lambda e: e["signal"].load("bogus"), V),
    ("signal.wait('bogus')", lambda e: e["signal"].wait("bogus"), V),
    *[(f"signal.wait(timeout={t!r})", lambda e, t=t: e["signal"].wait("eq", 0, timeout=t), V)
      for t in (-1, float("nan"))],
    ("signal.on(None)", lambda e: e["signal"].on("eq", 0), T),
    ("wait_any([])", lambda e: e["hsa"].Signal.wait_any([]), V),
    ("wait_any([5])", lambda e: e["hsa"].Signal.wait_any([5], timeout=0.01), T),
    ("buf.numpy(count past)", lambda e: e["buf"].numpy(np.uint8, count=10**6), V),
    ("buf.numpy(offset -1)", lambda e: e["buf"].numpy(np.uint8, offset=-1), V),
    ("buf.fill(-1)", lambda e: e["buf"].fill(-1), V),
    ("buf.fill(2**40)", lambda e: e["buf"].fill(2**40), V),
    ("buf.fill(count past)", lambda e: e["buf"].fill(0, count=10**6), V),
    ("hsa.copy(size past)", lambda e: e["hsa"].copy(e["buf"], e["buf"], 10**6), V),
    ("hsa.copy(size -1)", lambda e: e["hsa"].copy(e["buf"], e["buf"], -1), V),
    ("hsa.copy(size 1.5)", lambda e: e["hsa"].copy(e["buf"], e["buf"], 1.5), T),
    ("hsa.copy(size True)", lambda e: e["hsa"].copy(e["buf"], e["buf"], True), T),
    ("copy_async(size 2**64)", lambda e: e["hsa"].copy_async(e["buf"], e["buf"], 2**64,
                                                             completion=e["signal"]), V),
    ("buf.fill(1.5)", lambda e: e["buf"].fill(1.5), T),
    ("buf.fill(count='4')", lambda e: e["buf"].fill(0, count="4"), T),
    ("hsa.copy(None, buf)", lambda e: e["hsa"].copy(None, e["buf"], 8), T),
    ("hsa.copy(0, 0)", lambda e: e["hsa"].copy(0, 0, 8), rocpy.HsaError),
    ("copy_async(size past)", lambda e: e["hsa"].copy_async(e["buf"], e["buf"], 10**6,
                                                            completion=e["signal"]), V),
    ("copy_async(completion=None)", lambda e: e["hsa"].copy_async(e["buf"], e["buf"], 8, completion=None),
     T),
    ("buf.allow_access([None])", lambda e: e["buf"].allow_access([None]), T),
    ("buf.allow_access([])", lambda e: e["buf"].allow_access([]), V),
    ("hsa.lock(None)", lambda e: e["hsa"].lock(None), T),
    ("hsa.lock(bytes)", lambda e: e["hsa"].lock(b"abc"), V),
    ("hsa.lock(empty)", lambda e: e["hsa"].lock(bytearray()), V),
    ("Executable.load(None, ...)", lambda e: e["hsa"].Executable.load(None, e["exe"].code_object.data), T),
    ("Executable.load(cpu, ...)", lambda e: e["hsa"].Executable.load(e["cpu"], e["exe"].code_object.data),
     V),
    ("Executable.load(gpu, junk)", lambda e: e["hsa"].Executable.load(e["gpu"], b"junk"), rocpy.RocpyError),
    ("Executable.load(5, ...)", lambda e: e["hsa"].Executable.load(5, e["exe"].code_object.data), T),
    ("rt.info(2**40)", lambda e: e["rt"].info(2**40, "u64"), V),
    ("rt.info(1.5)", lambda e: e["rt"].info(1.5, "u64"), T),
    ("agent.info(-2**40)", lambda e: e["gpu"].info(-2**40, "u32"), V),
    ("pool.info(2**40)", lambda e: e["pool"].info(2**40, "u32"), V),
    ("create_queue(agent=None)", lambda e: e["hsa"].Queue(None), T),
    ("create_queue(group_segment_size=-1)", lambda e: e["gpu"].create_queue(group_segment_size=-1), V),
    ("create_queue(private_segment_size=2**32)",
     lambda e: e["gpu"].create_queue(private_segment_size=2**32), V),
    ("barrier_and(completion_signal=5)", lambda e: e["queue"].barrier_and([], completion_signal=5), T),
    ("dispatch_time('x')", lambda e: e["queue"].dispatch_time("x"), T),
    ("copy_async(deps=[None])", lambda e: e["hsa"].copy_async(e["buf"], e["buf"], 8, completion=e["signal"],
                                                              deps=[None]), T),
    ("copy_async(dst_agent=5)", lambda e: e["hsa"].copy_async(e["buf"], e["buf"], 8, completion=e["signal"],
                                                              dst_agent=5), T),
    ("hsa.lock(agents=[None])", lambda e: e["hsa"].lock(bytearray(64), agents=[None]), T),
    ("Signal(runtime=5)", lambda e: e["hsa"].Signal(1, runtime=5), T),
    ("exe.kernel('nope')", lambda e: e["exe"].kernel("nope"), KeyError),
    ("pools(segment='bogus')", lambda e: e["gpu"].pools(segment="bogus"), V),
    ("agent.info('bogus')", lambda e: e["gpu"].info("bogus", "u32"), V),
    ("rt.extension_supported('bogus')", lambda e: e["rt"].extension_supported("bogus"), V),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_hsa_argument(case, env):
    _, fn, expected = case
    with pytest.raises(expected):
        fn(env)
    env["queue"].dispatch(env["kernel"], 64, 64, env["args"])
    env["queue"].sync(timeout=5)


def test_kernel_of_another_agent_is_refused(py, kernel_paths):
    """(two stub GPUs) A kernel loaded for GPU 0 dispatched on a queue of GPU 1."""
    proc = py("""
        import numpy as np
        import sys, rocpy
        from rocpy import hsa
        rt = hsa.Runtime(); g0, g1 = rt.gpu_agents
        k = hsa.Executable.load(g0, sys.argv[1]).kernel("fill")
        q1 = g1.create_queue()
        for via in ("dispatch", "dispatch_many"):
            try:
                if via == "dispatch":
                    q1.dispatch(k, 64, 64, (None, np.uint32(1), np.int32(0)))
                else:
                    q1.dispatch_many([k.prepare(64, 64, (None, np.uint32(1), np.int32(0)))])
                print(via, "accepted")
            except ValueError:
                print(via, "refused")
        q1.sync(timeout=5)
    """, env={"ROCPY_STUB_DEVICES": "2"}, args=(kernel_paths["fill"],))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["dispatch", "refused", "dispatch_many", "refused"]


# ---- views and threads ---------------------------------------------------------------------------

def test_numpy_view_keeps_the_memory_after_close(env):
    """``close()`` while a numpy view lives only marks the buffer closed; the
    memory is freed once the last view is gone (as for HIP buffers)."""
    import rocpy.debug
    before = rocpy.debug.live_objects().get("Buffer", 0)
    buf = env["pool"].allocate(4096)
    view = buf.numpy(np.uint32)
    view[:] = 7
    buf.close()
    with pytest.raises(rocpy.ClosedError):
        buf.numpy()
    with pytest.raises(rocpy.ClosedError):
        buf.ptr
    assert rocpy.debug.live_objects().get("Buffer", 0) == before + 1   # still allocated
    view[:] += 1                                                          # still valid memory
    assert (view == 8).all()
    del view
    rocpy.debug.collect()
    assert rocpy.debug.live_objects().get("Buffer", 0) == before


def test_closing_a_queue_while_other_threads_dispatch(py, kernel_paths):
    """Threads dispatching and synchronizing while another closes the queue:
    each call either completes or raises ClosedError; nothing crashes (the
    release frees the queue's C state under the lock the submissions take)."""
    proc = py("""
        import numpy as np
        import sys, threading, time, rocpy
        from rocpy import hsa
        rt = hsa.Runtime(); gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
        pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
        k = hsa.Executable.load(gpu, sys.argv[1]).kernel("fill")
        buf = pool.allocate(4096); buf.allow_access([gpu])
        outcomes = {"ok": 0, "closed": 0, "other": []}
        lock = threading.Lock()
        for round in range(20):
            q = gpu.create_queue(size=64)
            start = threading.Barrier(5)
            def work(i):
                start.wait()
                for n in range(200):
                    try:
                        if n % 50 == 49:
                            q.sync(timeout=5)
                        elif i % 2:
                            q.dispatch_many([k.prepare(64, 64, (buf, np.uint32(1), np.int32(64)))])
                        else:
                            q.dispatch(k, 64, 64, (buf, np.uint32(1), np.int32(64)))
                        key = "ok"
                    except rocpy.ClosedError:
                        key = "closed"
                    except Exception as e:
                        with lock:
                            outcomes["other"].append(repr(e))
                        return
                    with lock:
                        outcomes[key] += 1
            threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            start.wait()
            time.sleep(0.0005 * round)      # close at a different point of the work each round
            q.close()
            for t in threads:
                t.join()
        print(outcomes["ok"] > 0, outcomes["closed"] > 0, outcomes["other"])
    """, args=(kernel_paths["fill"],), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True", "[]"], proc.stdout
