"""rocpy.hsa against the rules of real hardware that the stub enforces as ROCr does (issue 18).

Each test fails on the code before the fix: see the comment at each.
"""
from __future__ import annotations

import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from rocpy import debug, hsa
from rocpy.codeobject import LaunchConfigError
from rocpy.errors import HsaError
from rocpy.hsa.memory import AccessError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from kernels.compile import find_llvm_tool  # noqa: E402

_PACKET = struct.Struct("<HHHHHHIIIIIQQQQ")   # hsa_kernel_dispatch_packet_t


@pytest.fixture
def coarse(gpu):
    return gpu.pools(segment="global", fine_grained=False)[0]


# ---- 1. copies of memory the GPU was never granted -------------------------------------------

def test_copy_of_ungranted_pool_memory_is_refused(gpu, cpu, coarse, host_pool):
    # before the fix: hsa_memory_copy ran the GPU's blit on unmapped memory, the stub
    # faults as ROCr's VM fault handler does and the process aborts
    host, dev = host_pool.allocate(4096), coarse.allocate(4096)
    with pytest.raises(AccessError, match=r"^src is not accessible to gpu .*src.allow_access"):
        hsa.copy(dev, host, 4096)
    with pytest.raises(AccessError, match=r"^dst is not accessible to gpu"):
        dev.copy_to(host)
    with pytest.raises(AccessError, match=r"^src is not accessible"):
        dev.copy_from(host)
    done = hsa.Signal(1)
    with pytest.raises(AccessError, match=r"^src is not accessible to gpu .*runs the copy"):
        hsa.copy_async(dev, host, 4096, completion=done)
    assert done.load() == 1
    # plain host memory: ROCr locks it for the copy itself
    arr = np.arange(1024, dtype=np.int32)
    hsa.copy(dev, _cdata(arr), 4096)
    host.allow_access([gpu])
    dev.copy_to(host)
    assert (host.numpy(np.int32) == arr).all()
    hsa.copy(host, dev, 0)             # nothing to copy: nothing to check


def test_copy_async_on_the_cpu_engine_needs_the_cpu_to_reach_gpu_memory(gpu, cpu, coarse, host_pool):
    host, dev = host_pool.allocate(64), coarse.allocate(64)
    done = hsa.Signal(1)
    with pytest.raises(AccessError, match=r"^src is not accessible to cpu"):
        hsa.copy_async(host, dev, 64, completion=done, src_agent=cpu)


def test_locked_memory_for_another_agent_is_refused(gpu, cpu, coarse):
    arr = np.zeros(256, dtype=np.uint8)
    dev = coarse.allocate(256)
    mem = hsa.lock(arr, [cpu])
    try:
        with pytest.raises(AccessError, match=r"^dst is not accessible .*hsa.lock"):
            hsa.copy(mem, dev, 256)
    finally:
        mem.close()


def _cdata(arr: np.ndarray):
    from rocpy.hsa._common import api
    ffi, _ = api()
    return ffi.from_buffer(arr)


# ---- 2. dispatch times are system-domain already -----------------------------------------------

def test_dispatch_time_is_in_the_system_domain(rt, gpu, q, vadd, shared):
    # before the fix: dispatch_time converted the system times again
    # (hsa_amd_profiling_convert_tick_to_system_domain), a GPU tick domain apart
    n = 64
    a, b, c = shared(n * 4), shared(n * 4), shared(n * 4)
    q.profiling = True
    done = hsa.Signal(1)
    before = rt.timestamp
    q.dispatch(vadd, n, 64, (a, b, c, np.int32(n)), completion_signal=done)
    done.wait("eq", 0, timeout=30, raise_on_timeout=True)
    after = rt.timestamp
    t = q.dispatch_time(done)
    assert before <= t.start <= t.end <= after
    assert t.frequency == rt.timestamp_frequency
    assert 0 <= t.seconds <= (after - before) / t.frequency


# ---- 3. private segment for a dynamic call stack ---------------------------------------------

def test_dynamic_stack_gets_at_least_hips_stack(gpu, limits):
    k = limits.kernel("recursive")
    if not (k.dynamic_callstack or k.info.uses_dynamic_stack):
        pytest.skip("this compiler gives the recursive kernel a fixed stack (clang 17 does)")
    assert k.dynamic_callstack and k.info.uses_dynamic_stack
    assert k.private_size_needed == max(k.private_segment_size, hsa.executable.DYNAMIC_STACK_BYTES)
    # a dynamic-stack kernel whose fixed frame is small: before the fix its packet
    # carried only the fixed size (64), the stub then refuses the dispatch
    k.private_segment_size = 64
    packet = _PACKET.unpack(k.packet(64, 64))
    assert packet[9] == 1024
    with pytest.raises(LaunchConfigError, match=r"private_segment_size=16 is less than .*1024 .*dynamic"):
        k.packet(64, 64, private_segment_size=16)


def test_recursive_kernel_runs_with_its_private_segment(gpu, q, limits, shared, stub_only):
    k = limits.kernel("recursive")
    out = shared(64 * 4)
    done = hsa.Signal(1)
    q.dispatch(k, 64, 64, (out, np.int32(10)), completion_signal=done)
    done.wait("eq", 0, timeout=30, raise_on_timeout=True)
    assert (out.numpy(np.int32) == 55).all()


# ---- 4. the kernel's own workgroup limits ------------------------------------------------------

def test_launch_bounds_are_checked(q, limits, shared):
    # before the fix: only the agent's 1024 was checked; the stub refuses the packet
    # (queue error) as the kernel would compute garbage on hardware
    k = limits.kernel("bounded")
    assert k.info.max_flat_workgroup_size == 64
    out = shared(256 * 4)
    with pytest.raises(LaunchConfigError, match=r"128 work-items; kernel 'bounded' .* at most 64"):
        q.dispatch(k, 256, 128, (out,))
    done = hsa.Signal(1)
    q.dispatch(k, 256, 64, (out,), completion_signal=done)
    done.wait("eq", 0, timeout=30, raise_on_timeout=True)
    q.sync()
    if _is_stub():
        assert (out.numpy(np.int32) == 64).all()


def test_reqd_and_uniform_workgroups_are_checked(q, wgrules, shared):
    fixed, uniform = wgrules.kernel("fixed32"), wgrules.kernel("uniform")
    out = shared(256 * 4)
    with pytest.raises(LaunchConfigError, match=r"requires workgroup \(32, 1, 1\).*got \(16, 1, 1\)"):
        q.dispatch(fixed, 64, 16, (out,))
    with pytest.raises(LaunchConfigError, match=r"uniform workgroups .*grid \(100, 1, 1\).*\(64, 1, 1\)"):
        q.dispatch(uniform, 100, 64, (out,))
    with pytest.raises(LaunchConfigError, match="uniform"):
        hsa.Dispatch(uniform, 100, 64, (out,))
    done = hsa.Signal(2)
    q.dispatch(fixed, 64, 32, (out,), completion_signal=done)
    q.dispatch(uniform, 128, 64, (out,), completion_signal=done)
    done.wait("eq", 0, timeout=30, raise_on_timeout=True)
    assert q.error is None


def test_the_stub_refuses_what_the_kernel_was_not_compiled_for(gpu, limits, wgrules, shared, stub_only):
    # rocpy's checks bypassed (packet fields written past Kernel.packet): the stub
    # stops the queue with ROCr's bad-packet status
    cases = [(limits.kernel("bounded"), 128, 128, None),
             (wgrules.kernel("fixed32"), 64, 16, None),
             (wgrules.kernel("uniform"), 100, 64, None),
             (limits.kernel("recursive"), 64, 64, 0)]
    statuses = []
    for k, grid, wg, private in cases:
        errors = []
        with gpu.create_queue(on_error=errors.append) as queue:
            out = shared(256 * 4)
            d = hsa.Dispatch(k, 64, 32, (out,) + ((np.int32(3),) if k.name == "recursive" else ()))
            fields = list(_PACKET.unpack(d._packet))
            fields[2], fields[6] = wg, grid
            if private is not None:
                fields[9] = private
            packet = _PACKET.pack(*fields)
            d._record = packet[:48] + d._record[48:56] + packet[56:] + d._record[64:]
            queue.dispatch_many([d])
            with pytest.raises(HsaError) as e:
                queue.sync(timeout=30)
            statuses.append(e.value.name)
            d.close()
    assert statuses == ["HSA_STATUS_ERROR_INVALID_ARGUMENT"] * 3 + [
        "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION"]


# ---- 5. hidden arguments rocpy cannot fill -------------------------------------------------------

def test_v5_kernel_with_hidden_buffers_is_refused(gpu, q, hip_kernel, shared):
    # before the fix: the hostcall/heap/queue pointers were packed as zeros; the
    # stub (as a GPU) faults on the null pointer and the process aborts
    from rocpy.errors import NotSupportedError
    path = hip_kernel("vadd", archs=(gpu.name,), flags=("-mcode-object-version=5",))
    a = shared(256)
    with hsa.Executable.load(gpu, path) as exe:
        k = exe.kernel("vadd")
        kinds = [h.value_kind for h in k.layout.hidden]
        if "hidden_hostcall_buffer" not in kinds:
            pytest.skip("this compiler declares no hostcall buffer for vadd (clang 17 drops "
                        "the unused ones; clang 15 declares them all)")
        assert "hidden_multigrid_sync_arg" in kinds
        with pytest.raises(NotSupportedError, match=r"'vadd' declares hidden argument "
                                                    r"hidden_hostcall_buffer \(offset \d+\): the hostcall"):
            q.dispatch(k, 64, 64, (a, a, a, np.int32(64)))
        with pytest.raises(NotSupportedError, match="hidden_hostcall_buffer"):
            k.prepare(64, 64, (a, a, a, np.int32(64)))
    assert q.write_index == 0


# ---- 6. the barrier bit --------------------------------------------------------------------------

def test_dependent_dispatches_are_ordered_by_default(q, vadd, fill, shared):
    # before the fix: no barrier bit by default; the stub (as hardware may) starts
    # the second packet before the first finished, so vadd read the old a
    n = 256
    a, b, c = shared(n * 4), shared(n * 4), shared(n * 4)
    a.numpy(np.float32)[:] = 0
    b.numpy(np.float32)[:] = 1
    q.dispatch(fill, n, 64, (a, np.float32(5).view(np.uint32), np.int32(n)))
    q.dispatch(vadd, n, 64, (a, b, c, np.int32(n)))
    q.sync(timeout=30)
    assert (c.numpy(np.float32) == 6).all()


def test_without_the_barrier_bit_packets_overlap(q, vadd, fill, shared, stub_only):
    from rocpy import stub
    assert stub.aql_overlap()            # on in the tests
    n = 256
    a, b, c = shared(n * 4), shared(n * 4), shared(n * 4)
    a.numpy(np.float32)[:] = 0
    b.numpy(np.float32)[:] = 1
    d1 = hsa.Dispatch(fill, n, 64, (a, np.float32(5).view(np.uint32), np.int32(n)), barrier=False)
    d2 = hsa.Dispatch(vadd, n, 64, (a, b, c, np.int32(n)), barrier=False)
    q.dispatch_many([d1, d2])
    q.sync(timeout=30)
    assert (c.numpy(np.float32) == 1).all()        # vadd ran before fill finished
    before = stub.aql_overlap(False)
    try:
        q.dispatch_many([d1, d2])
        q.sync(timeout=30)
        assert (c.numpy(np.float32) == 6).all()    # strictly in order: the race hidden
    finally:
        stub.aql_overlap(before)
    d1.close()
    d2.close()


# ---- 8. waits that do not spin ------------------------------------------------------------------

@pytest.fixture
def slow(gpu, limits, stub_only):
    """`bounded` emulated as a kernel that runs 0.3 s."""
    import time

    from rocpy import stub
    stub.register_kernel("bounded", lambda d: time.sleep(0.3))
    return limits.kernel("bounded")


def _busy_fraction(action) -> float:
    import time

    from rocpy import stub
    busy, start = stub.hsa_busy_wait_ns(), time.monotonic_ns()
    action()
    return (stub.hsa_busy_wait_ns() - busy) / (time.monotonic_ns() - start)


def test_synchronize_does_not_spin(q, slow, shared):
    # before the fix: 10 ms slices, whose last partial millisecond ROCr's
    # interrupt wait spins (8 % of the wait)
    out = shared(64 * 4)
    q.dispatch(slow, 64, 64, (out,))
    assert _busy_fraction(lambda: q.sync(timeout=30)) < 0.05


def test_waiting_for_a_kernarg_segment_does_not_spin(gpu, slow, shared):
    # before the fix: the C fast path waited in 1 ms slices for the next kernarg
    # segment to retire: 80 % of the wait spinning on ROCr
    out = shared(64 * 4)
    with gpu.create_queue(kernarg_bytes=2 * 4096, kernarg_segments=2) as q:
        def fill_both_segments():
            for _ in range(3 * 4096 // 64):      # the third segment's worth reuses the first
                q.dispatch(slow, 64, 64, (out,))
        from rocpy import stub
        stub.register_kernel("bounded", _sleep_first())
        assert _busy_fraction(fill_both_segments) < 0.05
        q.sync(timeout=60)


@pytest.mark.parametrize("how", ["dispatch", "dispatch_many", "repeat"])
def test_ctrl_c_interrupts_a_dispatch_into_a_full_queue(gpu, limits, shared, stub_only, how):
    # before the fix: the C fast path waited for ring space without returning to
    # Python, so Ctrl-C waited for the GPU (here 2 s)
    import signal
    import threading
    import time

    from rocpy import stub
    from rocpy.hsa._queue_submit import FULL as _FULL
    assert _FULL == hsa.lib.ROCPY_AQL_FULL
    stub.register_kernel("bounded", _sleep_first(2.0))
    k = limits.kernel("bounded")
    out = shared(64 * 4)
    size = gpu.queue_min_size
    with gpu.create_queue(size=size) as q:
        d = hsa.Dispatch(k, 64, 64, (out,))
        timer = threading.Timer(0.3, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT))
        start = time.monotonic()
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            for _ in range(4 * size):
                if how == "dispatch":
                    q.dispatch(k, 64, 64, (out,))
                elif how == "dispatch_many":
                    q.dispatch_many([d] * 8)
                else:
                    q.dispatch_many(d, count=8)
        waited = time.monotonic() - start
        timer.join()
        assert waited < 1.0                 # within a wait slice or two of the signal
        q.sync(timeout=30)           # what was submitted still runs; the queue works
        q.dispatch(k, 64, 64, (out,))
        q.sync(timeout=30)
        d.close()


def _sleep_first(seconds: float = 0.3):
    import time
    first = [True]

    def run(d):
        if first[0]:
            first[0] = False
            time.sleep(seconds)
    return run


# ---- 10. zero-size copy_async ------------------------------------------------------------------

def test_zero_size_copy_async_keeps_nothing(gpu, coarse, shared):
    # before the fix: the buffers and signals were kept until the signal reached 0,
    # which ROCr never does for 0 bytes: they leaked (the leak check fails)
    src, dst = shared(64), coarse.allocate(64)
    done = hsa.Signal(1)
    hsa.copy_async(dst, src, 0, completion=done)
    assert done.wait("lt", 1, timeout=0.05) == 1   # never signalled, as ROCr
    del src, dst, done
    debug.collect()
    assert "Buffer" not in debug.live_objects() and "Signal" not in debug.live_objects()


# ---- fixtures: the kernels -------------------------------------------------------------------------

def _is_stub() -> bool:
    import rocpy
    return rocpy.backend().is_stub


def _fib(n: int) -> int:
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


@pytest.fixture
def limits(gpu, hip_kernel):
    path = hip_kernel("limits", archs=(gpu.name,))
    names = []
    if _is_stub():
        from rocpy import stub

        def bounded(d):
            out = d.array(d.arg(0, "Q"), np.int32, d.grid[0])
            out[:] = d.block[0]

        def recursive(d):
            out = d.array(d.arg(0, "Q"), np.int32, d.grid[0])
            out[:] = _fib(d.arg(8, "i"))
        for name, fn in (("bounded", bounded), ("recursive", recursive)):
            stub.register_kernel(name, fn)
            names.append(name)
    with hsa.Executable.load(gpu, path) as exe:
        yield exe
    if names:
        from rocpy import stub
        for name in names:
            stub.unregister_kernel(name)


@pytest.fixture(scope="session")
def wgrules_path(kernel_cache):
    """tests/kernels/wgrules.cl as a bare ELF, `uniform` marked .uniform_work_group_size: 1."""
    clang, lld = find_llvm_tool("clang"), find_llvm_tool("ld.lld")
    if clang is None or lld is None:
        pytest.skip("clang and ld.lld are needed for bare ELF kernels")
    out = os.path.join(kernel_cache, "wgrules.so")
    if not os.path.exists(out):
        asm = out[:-3] + ".s"
        subprocess.run([clang, "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-x", "cl",
                        "-cl-std=CL1.2", "-nogpulib", "-O2", "-S",
                        os.path.join(os.path.dirname(HERE), "kernels", "wgrules.cl"), "-o", asm],
                       check=True, capture_output=True)
        with open(asm) as f:
            text = f.read()
        marked = text.replace("    .name:           uniform\n",
                              "    .name:           uniform\n    .uniform_work_group_size: 1\n")
        assert marked != text
        with open(asm, "w") as f:
            f.write(marked)
        subprocess.run([clang, "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-c", asm,
                        "-o", out[:-3] + ".o"], check=True, capture_output=True)
        subprocess.run([lld, "-shared", out[:-3] + ".o", "-o", out], check=True, capture_output=True)
    return out


@pytest.fixture
def wgrules(gpu, wgrules_path):
    if gpu.name != "gfx90a":
        pytest.skip("wgrules is built for gfx90a")
    names = []
    if _is_stub():
        from rocpy import stub

        def fixed32(d):
            d.array(d.arg(0, "Q"), np.int32, d.grid[0])[:] = 32

        def uniform(d):
            d.array(d.arg(0, "Q"), np.int32, d.grid[0])[:] = 1
        for name, fn in (("fixed32", fixed32), ("uniform", uniform)):
            stub.register_kernel(name, fn)
            names.append(name)
    with hsa.Executable.load(gpu, wgrules_path) as exe:
        yield exe
    if names:
        from rocpy import stub
        for name in names:
            stub.unregister_kernel(name)


