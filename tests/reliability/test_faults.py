"""Faults injected by the stub: allocation failure, queue errors, GPU memory faults.

* Allocation failure anywhere in a sequence of work: the failing call raises
  `rocpy.OutOfMemoryError` (its family's subclass, with the runtime's status),
  nothing made before it leaks, and the same sequence then runs to completion
  with the right data.
* A queue error in the middle of a batch of HSA dispatches: the packets before
  it complete, the error reaches the user where documented (the queue's
  ``on_error`` callback, then every later use of the queue), the queue refuses
  further work, and another queue on the same agent keeps working.  On HIP the
  launch that fails returns the error at once.
* A GPU memory fault: as on ROCr, the process cannot continue; before the abort,
  rocpy's system event handler prints a report naming the agent and the address
  (HSA), or the runtime reports the fault (HIP).  Run in subprocesses.
"""
from __future__ import annotations

import signal
import time

import numpy as np
import pytest
from rel_support import allocations, has_hsa, settle

import rocpy
import rocpy.stub
from rocpy import hip

WORDS = 1024


# ---- allocation failure mid-sequence ---------------------------------------------------------

def hip_sequence(dev, paths, made: list) -> np.ndarray:
    """Work that allocates at many points; every object made goes to `made`. The result."""
    ctx = dev.context
    s = dev.create_stream()
    made.append(s)
    a = ctx.alloc(WORDS * 4)
    made.append(a)
    h = hip.Context.host().alloc_host(WORDS * 4)
    made.append(h)
    h.numpy(np.float32)[:] = np.arange(WORDS, dtype=np.float32)
    a.copy_from(h, stream=s)
    b = ctx.alloc(WORDS * 4, stream=s)          # stream-ordered
    made.append(b)
    b.fill(np.float32(2.0), stream=s)
    m = ctx.alloc_managed(WORDS * 4)
    made.append(m)
    mod = hip.Module.load(paths["vadd"], dev)
    made.append(mod)
    mod["vadd"].launch(WORDS // 256, 256, (a, b, m, np.int32(WORDS)), stream=s)
    c = ctx.alloc(WORDS * 4)
    made.append(c)
    c.copy_from(m, stream=s)
    out = np.empty(WORDS, np.float32)
    c.copy_to(out, stream=s)                    # pageable destination, kept alive by s
    g = hip.Graph(dev)
    made.append(g)
    g.add_memset(a, 0)
    x = g.instantiate()
    made.append(x)
    x.launch(s)
    s.sync()
    return out


def _close_all(made):
    for obj in reversed(made):
        if not obj.closed:
            if isinstance(obj, hip.Stream):
                obj.sync()
            obj.close()
    made.clear()


HIP_OWN_POINTS = 5  # hip_sequence's own allocations: a, h, b, m, c
HSA_POINTS = 5


def hip_points(paths) -> int:
    """Allocations hip_sequence makes (checked below): its own, and one device
    global per variable of the code object Module.load loads (hipamd's module
    globals), whose count depends on the compiler (HIP 5.2's hipcc adds three)."""
    from kernels.symbols import variables
    from rocpy.codeobject import load
    return HIP_OWN_POINTS + len(variables(load(paths["vadd"]).code_object(0).data))


def test_the_sequences_allocate_where_the_tables_say(dev, kernel_paths):
    """One past the last allocation point, the armed fault never fires: all are covered."""
    made: list = []
    points = hip_points(kernel_paths)
    rocpy.stub.inject("alloc", skip=points - 1, count=1)
    with pytest.raises(rocpy.OutOfMemoryError):
        hip_sequence(dev, kernel_paths, made)
    _close_all(made)
    rocpy.stub.inject("alloc", skip=points, count=1)
    hip_sequence(dev, kernel_paths, made)
    rocpy.stub.clear_faults()
    _close_all(made)


def _clean(allocations_before: int) -> bool:
    """Nothing of rocpy alive and the stub's allocations back (as the no_leaks fixture)."""
    live = settle()
    deadline = time.monotonic() + 5.0
    while allocations() != allocations_before and time.monotonic() < deadline:
        time.sleep(0.01)  # a stream's last release may still be on its way
    return live == {} and allocations() == allocations_before


def test_hip_allocation_failure_mid_sequence(dev, kernel_paths):
    """Every allocation point fails in turn (their number is the code object's, so
    one test walks them): the error, nothing leaked, then the sequence works."""
    before = allocations()
    for skip in range(hip_points(kernel_paths)):
        made: list = []
        rocpy.stub.inject("alloc", skip=skip, count=1)
        try:
            with pytest.raises(rocpy.OutOfMemoryError) as info:
                hip_sequence(dev, kernel_paths, made)
            err = info.value
            assert isinstance(err, rocpy.HipError) and err.name == "hipErrorOutOfMemory", (skip, err)
        finally:
            rocpy.stub.clear_faults()
            _close_all(made)
        assert _clean(before), f"leak after failing allocation {skip}"
        out = hip_sequence(dev, kernel_paths, made)       # the next operations work, with the right data
        np.testing.assert_array_equal(out, np.arange(WORDS, dtype=np.float32) + 2.0)
        _close_all(made)
        assert _clean(before), f"leak after the rerun {skip}"


def test_every_allocation_failing_in_turn_leaves_nothing(dev):
    """Allocation kinds one by one: the failure names the call, the counts stay flat."""
    ctx = dev.context
    s = dev.create_stream()
    calls = {"hipMalloc": lambda: ctx.alloc(64), "hipHostMalloc": lambda: ctx.alloc_host(64),
             "hipMallocManaged": lambda: ctx.alloc_managed(64),
             "hipMallocAsync": lambda: ctx.alloc(64, stream=s)}
    before = rocpy.stub.live_allocations()
    for call, fn in calls.items():
        rocpy.stub.inject("alloc")
        with pytest.raises(rocpy.OutOfMemoryError, match=call):
            fn()
        assert rocpy.stub.live_allocations() == before
        assert rocpy.debug.live_objects() == {"Stream": 1}
        fn().close(stream=s)                  # the next one works
        s.sync()
        rocpy.debug.collect()
    s.sync()
    s.close()


@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
@pytest.mark.parametrize("skip", range(HSA_POINTS + 1))
def test_hsa_allocation_failure_mid_sequence(skip, hsa_rt, kernel_paths):
    from rocpy import hsa
    gpu, cpu = hsa_rt.gpu_agents[0], hsa_rt.cpu_agents[0]
    pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
    made: list = []

    def sequence():
        b = pool.allocate(WORDS * 4)
        made.append(b)
        b.allow_access([gpu])
        exe = hsa.Executable.load(gpu, kernel_paths["fill"])
        made.append(exe)
        q = gpu.create_queue()               # the kernarg ring is an allocation too
        made.append(q)
        c = pool.allocate(WORDS * 4)
        made.append(c)
        q.dispatch(exe.kernel("fill"), WORDS, 64, (b, np.uint32(9), np.int32(WORDS)))
        q.sync(timeout=10)
        hsa.copy(c, b, WORDS * 4)
        return c.numpy(np.uint32).copy()

    rocpy.stub.inject("alloc", skip=skip, count=1)
    try:
        if skip == HSA_POINTS:             # one past the last allocation point: never fires
            assert (sequence() == 9).all()
            return
        with pytest.raises((rocpy.OutOfMemoryError, rocpy.HsaError)) as info:
            sequence()
        assert isinstance(info.value, rocpy.HsaError), info.value
        assert info.value.name in ("HSA_STATUS_ERROR_OUT_OF_RESOURCES", "HSA_STATUS_ERROR_INVALID_ALLOCATION")
    finally:
        rocpy.stub.clear_faults()
        for obj in reversed(made):
            obj.close()
        made.clear()
    assert (sequence() == 9).all()
    for obj in reversed(made):
        obj.close()


# ---- queue errors --------------------------------------------------------------------------------

@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
@pytest.mark.parametrize("batch", [False, True], ids=["dispatch", "dispatch_many"])
@pytest.mark.parametrize("fail_at", [0, 5, 19])
def test_queue_error_in_a_batch_of_dispatches(fail_at, batch, hsa_rt, kernel_paths):
    from rocpy import hsa
    gpu, cpu = hsa_rt.gpu_agents[0], hsa_rt.cpu_agents[0]
    pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
    k = hsa.Executable.load(gpu, kernel_paths["fill"]).kernel("fill")
    seen: list = []
    bad = gpu.create_queue(on_error=seen.append)
    good = gpu.create_queue()
    bufs = [pool.allocate(256) for _ in range(20)]
    for b in bufs:
        b.allow_access([gpu])
    sigs = [hsa.Signal(1) for _ in range(20)]
    rocpy.stub.inject("queue_error", skip=fail_at, count=1)

    def submit_then_synchronize():
        if batch:
            bad.dispatch_many([k.prepare(64, 64, (b, np.uint32(i + 1), np.int32(64)), completion_signal=s)
                               for i, (b, s) in enumerate(zip(bufs, sigs))])
        else:
            for i, (b, s) in enumerate(zip(bufs, sigs)):
                bad.dispatch(k, 64, 64, (b, np.uint32(i + 1), np.int32(64)), completion_signal=s)
        bad.sync(timeout=10)

    # the documented point: the queue's next use raises the queue's error: the
    # synchronize, or a later dispatch of the loop when the packet processor
    # reached the faulty packet before the loop ended (signals of packets never
    # submitted stay 1, as those the queue dropped)
    with pytest.raises(rocpy.HsaError) as info:
        submit_then_synchronize()
    assert info.value.name == "HSA_STATUS_ERROR_EXCEPTION"
    deadline = time.monotonic() + 5
    while not seen and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(seen) == 1 and seen[0].name == "HSA_STATUS_ERROR_EXCEPTION"
    assert bad.error is not None
    # packets before the faulty one ran; it and those after did not
    assert [s.load() for s in sigs] == [0] * fail_at + [1] * (20 - fail_at)
    for i in range(fail_at):
        assert (bufs[i].numpy(np.uint32, 64) == i + 1).all()
    # the failed queue refuses further use, every time
    for use in (lambda: bad.dispatch(k, 64, 64, (bufs[0], np.uint32(7), np.int32(64))), lambda: bad.barrier_and([]),
                lambda: bad.sync(timeout=1),
                lambda: bad.dispatch_many([k.prepare(64, 64, (bufs[0], np.uint32(7), np.int32(64)))])):
        with pytest.raises(rocpy.HsaError):
            use()
    # another queue of the same agent keeps working
    done = hsa.Signal(1)
    good.dispatch(k, 64, 64, (bufs[-1], np.uint32(77), np.int32(64)), completion_signal=done)
    assert done.wait("eq", 0, timeout=10) == 0
    assert (bufs[-1].numpy(np.uint32, 64) == 77).all()
    for o in (bad, good, done, *sigs, *bufs):
        o.close()
    k = None


def test_hip_launch_failure_is_reported_at_the_launch(dev, kernels):
    """HIP: the injected launch failure is the launch's own error; the stream carries on."""
    s = dev.create_stream()
    b = dev.context.alloc(WORDS * 4)
    k = kernels["fill"]
    rocpy.stub.inject("queue_error", skip=3, count=1)
    results = []
    for i in range(6):
        try:
            k.launch(WORDS // 256, 256, (b, np.uint32(i), np.int32(WORDS)), stream=s)
            results.append("ok")
        except rocpy.HipError as e:
            results.append(e.name)
    assert results == ["ok"] * 3 + ["hipErrorLaunchFailure"] + ["ok"] * 2
    s.sync()
    assert (b.copy_to(np.empty(WORDS, np.uint32)) == 5).all()
    s.close()
    b.close()


# ---- GPU memory faults (the process dies: subprocesses) -------------------------------------------

HSA_FAULT = """
    import numpy as np
    import sys, numpy as np, rocpy, rocpy.stub
    from rocpy import hsa
    rt = hsa.Runtime(); gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
    pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
    k = hsa.Executable.load(gpu, sys.argv[1]).kernel("fill")
    q = gpu.create_queue()
    b = pool.allocate(256); b.allow_access([gpu])
    print("address", hex(b.ptr if sys.argv[2] == "injected" else 0xdead000), flush=True)
    if sys.argv[2] == "injected":
        rocpy.stub.inject("memory_fault")
        q.dispatch(k, 64, 64, (b, np.uint32(1), np.int32(64)))
    else:                                   # a pointer no allocation covers
        q.dispatch(k, 64, 64, (0xdead000, np.uint32(1), np.int32(64)))
    q.sync(timeout=10)
    print("survived", flush=True)
"""


@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
@pytest.mark.parametrize("how", ["injected", "bad pointer"])
def test_hsa_memory_fault_is_reported_then_aborts(how, py, kernel_paths):
    proc = py(HSA_FAULT, args=(kernel_paths["fill"], how.split()[0]))
    assert proc.returncode == -signal.SIGABRT, (proc.returncode, proc.stderr)
    assert "survived" not in proc.stdout
    address = proc.stdout.split()[1]
    lines = proc.stderr.strip().splitlines()
    report = [line for line in lines if line.startswith("rocpy: GPU memory fault")]
    assert len(report) == 1, proc.stderr
    assert "agent gfx90a" in report[0] and f"address {address}" in report[0], report[0]
    # rocpy's report comes before the runtime's abort message
    assert lines.index(report[0]) < next(i for i, line in enumerate(lines) if line.startswith("rocpy stub:"))


HIP_FAULT = """
    import sys, numpy as np, rocpy, rocpy.stub
    from rocpy import hip
    dev = hip.Device(0)
    k = hip.Module.load(sys.argv[1], dev)["vadd"]
    s = dev.create_stream()
    a = dev.context.alloc(1024)
    how = sys.argv[2]
    if how == "injected":
        rocpy.stub.inject("memory_fault")
        k.launch(1, 256, (a, a, a, np.int32(256)), stream=s)
    elif how == "null":
        k.launch(1, 256, (a, None, a, np.int32(256)), stream=s)
    elif how == "freed":
        b = dev.context.alloc(1024); p = b.ptr; b.close()
        k.launch(1, 256, (a, p, a, np.int32(256)), stream=s)
    else:                                    # past the end of an allocation
        k.launch(1, 512, (a, a, a, np.int32(512)), stream=s)
    s.sync()
    print("survived", flush=True)
"""


@pytest.mark.parametrize("how", ["injected", "null", "freed", "past the end"])
def test_hip_memory_fault_aborts_with_a_report(how, py, kernel_paths):
    """Regression (null, freed, past the end): the stub's built-in kernels dereferenced
    whatever they were given (SIGSEGV, or silent writes to freed memory); now a fault."""
    proc = py(HIP_FAULT, args=(kernel_paths["vadd"], how.split()[0]))
    assert proc.returncode == -signal.SIGABRT, (proc.returncode, proc.stderr[-2000:])
    assert "survived" not in proc.stdout
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("rocpy stub: hipModuleLaunchKernel: Memory access fault by GPU node-"), line
    if how == "null":
        assert "on address 0x0 " in line
