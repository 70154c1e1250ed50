"""AQL queues: creation rules, indices, the packet processor (dispatches,
barriers, ordering, publication), malformed packets, faults, inactivation."""
from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest

from hsa_raw import (SECOND, UINT32_MAX, Kernel, accessible_agents, allocate, allow, assert_aborts, barrier, check,
                     dispatch, error_recorder, ffi, find_pool, header, keep, lib, queue, run_python, signal, wait_eq)

NULL = ffi.NULL


def create(agent, size, qtype=0, private=UINT32_MAX):
    q = ffi.new("hsa_queue_t**")
    return lib.hsa_queue_create(agent, size, qtype, NULL, NULL, private, UINT32_MAX, q), q[0]


@pytest.mark.parametrize("size,expected", [
    (64, "HSA_STATUS_SUCCESS"), (131072, "HSA_STATUS_SUCCESS"), (0, "HSA_STATUS_ERROR_INVALID_ARGUMENT"),
    (100, "HSA_STATUS_ERROR_INVALID_ARGUMENT"), (32, "HSA_STATUS_ERROR_INVALID_ARGUMENT"),
    (262144, "HSA_STATUS_ERROR_OUT_OF_RESOURCES")])
def test_queue_sizes(gpu, size, expected):
    status, q = create(gpu, size)
    check(status, getattr(lib, expected))
    if status == lib.HSA_STATUS_SUCCESS:
        assert q.size == size
        check(lib.hsa_queue_destroy(q))


def test_queue_create_bad_input(gpu, cpu):
    check(create(cpu, 64)[0], lib.HSA_STATUS_ERROR)                   # ROCr's CPU agent has no AQL processor
    check(create(ffi.new("hsa_agent_t*", {"handle": 9})[0], 64)[0], lib.HSA_STATUS_ERROR_INVALID_AGENT)
    check(create(gpu, 64, qtype=3)[0], lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(create(gpu, 64, qtype=lib.HSA_QUEUE_TYPE_COOPERATIVE)[0], lib.HSA_STATUS_ERROR_INVALID_QUEUE_CREATION)
    check(create(gpu, 64, private=300000)[0], lib.HSA_STATUS_ERROR_OUT_OF_RESOURCES)
    check(lib.hsa_queue_create(gpu, 64, 0, NULL, NULL, 0, 0, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    lib.rocpy_stub_inject(lib.ROCPY_STUB_FAULT_ALLOC, 0, 1)
    check(create(gpu, 64)[0], lib.HSA_STATUS_ERROR_OUT_OF_RESOURCES)   # the ring cannot be allocated


def test_queue_structure(gpu, cpu):
    q1, q2 = queue(gpu, 128), queue(gpu, 64)
    assert q1.size == 128 and q1.type == lib.HSA_QUEUE_TYPE_MULTI
    assert q1.features == lib.HSA_QUEUE_FEATURE_KERNEL_DISPATCH
    assert int(ffi.cast("uintptr_t", q1.base_address)) % 64 == 0
    assert q1.id != q2.id
    ring = ffi.cast("hsa_kernel_dispatch_packet_t*", q1.base_address)
    assert all(ring[i].header & 0xFF == lib.HSA_PACKET_TYPE_INVALID for i in range(128))
    assert lib.hsa_signal_load_relaxed(q1.doorbell_signal) == 0        # a real, live signal
    from hsa_raw import accessible_agents, pointer_info
    assert pointer_info(q1.base_address).sizeInBytes == 128 * 64
    assert accessible_agents(q1.base_address) == [cpu.handle, gpu.handle]
    for q in (q1, q2):
        check(lib.hsa_queue_destroy(q))


def test_destroy_bad_input(gpu):
    q = queue(gpu)
    check(lib.hsa_queue_destroy(q))
    check(lib.hsa_queue_destroy(q), lib.HSA_STATUS_ERROR_INVALID_QUEUE)
    check(lib.hsa_queue_destroy(ffi.new("hsa_queue_t*")), lib.HSA_STATUS_ERROR_INVALID_QUEUE)
    check(lib.hsa_queue_destroy(NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


@pytest.mark.parametrize("order", ["relaxed", "scacquire", "acquire"])
def test_index_loads(gpu, order):
    q = queue(gpu)
    lib.hsa_queue_store_write_index_relaxed(q, 5)
    assert getattr(lib, f"hsa_queue_load_write_index_{order}")(q) == 5
    assert getattr(lib, f"hsa_queue_load_read_index_{order}")(q) == 0
    check(lib.hsa_queue_destroy(q))


@pytest.mark.parametrize("order", ["relaxed", "screlease", "release"])
def test_index_stores(gpu, order):
    q = queue(gpu)
    getattr(lib, f"hsa_queue_store_write_index_{order}")(q, 7)
    assert lib.hsa_queue_load_write_index_relaxed(q) == 7
    check(lib.hsa_queue_destroy(q))
    q = queue(gpu)
    getattr(lib, f"hsa_queue_store_read_index_{order}")(q, 3)
    assert lib.hsa_queue_load_read_index_relaxed(q) == 3
    check(lib.hsa_queue_destroy(q))


@pytest.mark.parametrize("order", ["relaxed", "scacquire", "screlease", "scacq_screl", "acquire", "release",
                                   "acq_rel"])
def test_write_index_add_and_cas(gpu, order):
    q = queue(gpu)
    assert getattr(lib, f"hsa_queue_add_write_index_{order}")(q, 3) == 0
    cas = getattr(lib, f"hsa_queue_cas_write_index_{order}")
    assert cas(q, 9, 10) == 3
    assert cas(q, 3, 10) == 3
    assert lib.hsa_queue_load_write_index_relaxed(q) == 10
    check(lib.hsa_queue_destroy(q))


@pytest.fixture
def setup(gpu, cpu, kernel_path):
    """A queue with an error recorder, the vadd and empty kernels, kernarg memory the GPU may read."""
    callback, errors = error_recorder()
    s = SimpleNamespace(gpu=gpu, cpu=cpu, callback=callback, errors=errors, q=queue(gpu, 64, callback),
                        vadd=Kernel(kernel_path("vadd"), gpu, "vadd"),
                        empty=Kernel(kernel_path("empty"), gpu, "empty"),
                        kernarg=allocate(find_pool(cpu, fine=True, kernarg=True), 4096))
    check(lib.hsa_amd_memory_fill(s.kernarg, 0, 1024))     # pool memory comes uninitialised
    allow(s.kernarg, gpu)
    assert accessible_agents(s.kernarg) == [cpu.handle, gpu.handle]   # else the dispatches would fault
    yield s
    check(lib.hsa_queue_destroy(s.q))
    s.vadd.close()
    s.empty.close()
    check(lib.hsa_amd_memory_pool_free(s.kernarg))


def vadd_args(s, n):
    bufs = [allocate(find_pool(s.gpu), 4 * n) for _ in range(3)]
    a = np.arange(n, dtype=np.float32)
    b = np.full(n, 0.5, dtype=np.float32)
    check(lib.hsa_memory_copy(bufs[0], ffi.from_buffer(a), 4 * n))
    check(lib.hsa_memory_copy(bufs[1], ffi.from_buffer(b), 4 * n))
    args = ffi.cast("char*", s.kernarg)
    for i, p in enumerate(bufs):
        ffi.cast("void**", args + 8 * i)[0] = p
    ffi.cast("int*", args + 24)[0] = n
    return bufs, a + b


def test_vadd_dispatch(setup):
    s, n = setup, 1000
    bufs, expected = vadd_args(s, n)
    done = signal(1)
    index = dispatch(s.q, s.vadd.object, s.kernarg, grid=(n, 1, 1), block=(256, 1, 1), completion=done)
    assert wait_eq(done, 0) == 0
    out = np.zeros(n, dtype=np.float32)
    check(lib.hsa_memory_copy(ffi.from_buffer(out), bufs[2], 4 * n))
    assert (out == expected).all()
    assert lib.hsa_queue_load_read_index_scacquire(s.q) == index + 1
    ring = ffi.cast("hsa_kernel_dispatch_packet_t*", s.q.base_address)
    assert ring[index].header & 0xFF == lib.HSA_PACKET_TYPE_INVALID      # handed back to the producer
    assert s.errors == []
    check(lib.hsa_signal_destroy(done))
    for p in bufs:
        check(lib.hsa_amd_memory_pool_free(p))


def test_packets_run_in_order_around_the_ring(setup):
    s = setup
    done = signal(200)
    for _ in range(200):                               # the 64-slot ring wraps three times
        while lib.hsa_queue_load_write_index_relaxed(s.q) - lib.hsa_queue_load_read_index_scacquire(s.q) >= 64:
            time.sleep(0.0005)
        dispatch(s.q, s.empty.object, s.kernarg, completion=done)
    assert wait_eq(done, 0) == 0
    assert lib.hsa_queue_load_read_index_relaxed(s.q) == 200
    assert s.errors == []
    check(lib.hsa_signal_destroy(done))


def test_an_unpublished_packet_holds_back_those_after_it(setup):
    s = setup
    first, second = signal(1), signal(1)
    held = dispatch(s.q, s.empty.object, s.kernarg, completion=first, publish=False)
    dispatch(s.q, s.empty.object, s.kernarg, completion=second)     # published and rung
    assert wait_eq(second, 0, SECOND // 20) == 1
    assert lib.hsa_queue_load_read_index_relaxed(s.q) == held
    ffi.cast("uint16_t*", ffi.cast("hsa_kernel_dispatch_packet_t*", s.q.base_address) + held)[0] = \
        header(lib.HSA_PACKET_TYPE_KERNEL_DISPATCH)
    lib.hsa_signal_store_screlease(s.q.doorbell_signal, held)
    assert wait_eq(second, 0) == 0 and lib.hsa_signal_load_relaxed(first) == 0
    for x in (first, second):
        check(lib.hsa_signal_destroy(x))


def test_the_processor_sleeps_without_spinning(setup):
    s = setup
    done = signal(1)
    cpu0 = time.process_time()
    time.sleep(0.3)
    dispatch(s.q, s.empty.object, s.kernarg, completion=done)
    assert wait_eq(done, 0) == 0
    assert time.process_time() - cpu0 < 0.1
    check(lib.hsa_signal_destroy(done))


def test_barrier_and_waits_for_every_dependency(setup):
    s = setup
    d1, d2, done = signal(1), signal(1), signal(1)
    barrier(s.q, [d1, d2], done, kind="and")
    lib.hsa_signal_store_screlease(d1, 0)
    assert wait_eq(done, 0, SECOND // 20) == 1
    lib.hsa_signal_store_screlease(d2, 0)
    assert wait_eq(done, 0) == 0
    for x in (d1, d2, done):
        check(lib.hsa_signal_destroy(x))


def test_barrier_or_waits_for_any_dependency(setup):
    s = setup
    d1, d2, done, after = signal(1), signal(1), signal(1), signal(1)
    barrier(s.q, [d1, d2], done, kind="or")
    dispatch(s.q, s.empty.object, s.kernarg, completion=after)       # waits behind the barrier
    assert wait_eq(after, 0, SECOND // 20) == 1
    lib.hsa_signal_store_screlease(d2, 0)
    assert wait_eq(after, 0) == 0 and lib.hsa_signal_load_relaxed(done) == 0
    for x in (d1, d2, done, after):
        check(lib.hsa_signal_destroy(x))


def test_barrier_without_dependencies_completes(setup):
    done = signal(1)
    barrier(setup.q, [], done)
    assert wait_eq(done, 0) == 0
    check(lib.hsa_signal_destroy(done))


def test_destroy_interrupts_a_waiting_barrier(gpu):
    q = queue(gpu)
    dep = signal(1)
    barrier(q, [dep])
    time.sleep(0.02)
    check(lib.hsa_queue_destroy(q))
    check(lib.hsa_signal_destroy(dep))


def malformed(s, kind):
    if kind == "unknown type":
        return dispatch(s.q, s.empty.object, s.kernarg, packet_type=7)
    if kind == "agent dispatch":
        return dispatch(s.q, s.empty.object, s.kernarg, packet_type=lib.HSA_PACKET_TYPE_AGENT_DISPATCH)
    if kind == "vendor specific":
        return dispatch(s.q, s.empty.object, s.kernarg, packet_type=lib.HSA_PACKET_TYPE_VENDOR_SPECIFIC)
    if kind == "dimensions 0":
        return dispatch(s.q, s.empty.object, s.kernarg, dims=0)
    if kind == "workgroup 0":
        return dispatch(s.q, s.empty.object, s.kernarg, block=(0, 1, 1))
    if kind == "workgroup 2048":
        return dispatch(s.q, s.empty.object, s.kernarg, block=(1024, 2, 1))
    if kind == "group segment":
        return dispatch(s.q, s.empty.object, s.kernarg, group=128 * 1024)
    if kind == "unknown kernel object":
        return dispatch(s.q, 0xBAD0000, s.kernarg)
    if kind == "null kernel object":
        return dispatch(s.q, 0, s.kernarg)
    raise AssertionError(kind)


@pytest.mark.parametrize("kind,expected", [
    ("unknown type", "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT"),
    ("agent dispatch", "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT"),
    ("vendor specific", "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT"),
    ("dimensions 0", "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS"),
    ("workgroup 0", "HSA_STATUS_ERROR_INVALID_ARGUMENT"),
    ("workgroup 2048", "HSA_STATUS_ERROR_INVALID_ARGUMENT"),
    ("group segment", "HSA_STATUS_ERROR_INVALID_ALLOCATION"),
    ("unknown kernel object", "HSA_STATUS_ERROR_INVALID_CODE_OBJECT"),
    ("null kernel object", "HSA_STATUS_ERROR_INVALID_CODE_OBJECT"),
])
def test_malformed_packet_stops_the_queue(setup, kind, expected):
    s = setup
    before, after = signal(1), signal(1)
    dispatch(s.q, s.empty.object, s.kernarg, completion=before)
    bad = malformed(s, kind)
    dispatch(s.q, s.empty.object, s.kernarg, completion=after)
    assert wait_eq(before, 0) == 0
    deadline = time.monotonic() + 5
    while not s.errors and time.monotonic() < deadline:
        time.sleep(0.005)
    assert s.errors == [(getattr(lib, expected), int(ffi.cast("uintptr_t", s.q)))]
    assert wait_eq(after, 0, SECOND // 20) == 1        # nothing after the bad packet runs
    assert lib.hsa_queue_load_read_index_relaxed(s.q) == bad
    for x in (before, after):
        check(lib.hsa_signal_destroy(x))


def wait_errors(errors, n=1):
    deadline = time.monotonic() + 5
    while len(errors) < n and time.monotonic() < deadline:
        time.sleep(0.005)
    return [e[0] for e in errors]


def test_kernel_without_emulation(setup, kernel_path):
    s = setup
    scale = Kernel(kernel_path("scale"), s.gpu, "scale")
    dispatch(s.q, scale.object, s.kernarg)
    assert wait_errors(s.errors) == [lib.HSA_STATUS_ERROR_INVALID_CODE_OBJECT]
    scale.close()


def test_python_emulation_and_its_failure(setup, kernel_path):
    s = setup
    scale = Kernel(kernel_path("scale"), s.gpu, "scale")
    buf = allocate(find_pool(s.gpu), 512)
    ffi.cast("void**", s.kernarg)[0] = buf                  # scale(float *p, float f, int n)
    seen = []

    @ffi.callback("rocpy_stub_kernel_fn")
    def emulate(d, user):
        seen.append((ffi.string(d.name), d.grid[0], d.block[0], d.kernarg_size, d.group_segment_size, d.device))
        return len(seen) - 1                               # the second call fails (a wave trap)
    keep(emulate)
    assert lib.rocpy_stub_register_kernel(b"scale", emulate, NULL) == 0
    try:
        ok, failed = signal(1), signal(1)
        dispatch(s.q, scale.object, s.kernarg, grid=(128, 1, 1), block=(64, 1, 1), group=256, completion=ok)
        assert wait_eq(ok, 0) == 0
        assert seen == [(b"scale", 128, 64, scale.kernarg_size, 256, 0)]
        dispatch(s.q, scale.object, s.kernarg, completion=failed)
        assert wait_errors(s.errors) == [lib.HSA_STATUS_ERROR_EXCEPTION]
        assert lib.hsa_signal_load_relaxed(failed) == 1
    finally:
        lib.rocpy_stub_register_kernel(b"scale", ffi.cast("rocpy_stub_kernel_fn", 0), NULL)
    for x in (ok, failed):
        check(lib.hsa_signal_destroy(x))
    check(lib.hsa_amd_memory_pool_free(buf))
    scale.close()


def test_injected_queue_error(setup):
    s = setup
    lib.rocpy_stub_inject(lib.ROCPY_STUB_FAULT_QUEUE_ERROR, 1, 1)     # the second packet
    ok, bad = signal(1), signal(1)
    dispatch(s.q, s.empty.object, s.kernarg, completion=ok)
    dispatch(s.q, s.empty.object, s.kernarg, completion=bad)
    assert wait_eq(ok, 0) == 0
    assert wait_errors(s.errors) == [lib.HSA_STATUS_ERROR_EXCEPTION]
    assert lib.hsa_signal_load_relaxed(bad) == 1
    for x in (ok, bad):
        check(lib.hsa_signal_destroy(x))


def test_inactivated_queue_processes_nothing(setup):
    s = setup
    check(lib.hsa_queue_inactivate(s.q))
    done = signal(1)
    dispatch(s.q, s.empty.object, s.kernarg, completion=done)
    assert wait_eq(done, 0, SECOND // 20) == 1
    assert s.errors == []
    check(lib.hsa_queue_inactivate(ffi.new("hsa_queue_t*")), lib.HSA_STATUS_ERROR_INVALID_QUEUE)
    check(lib.hsa_signal_destroy(done))


def test_priority_and_cu_mask(gpu):
    q = queue(gpu)
    check(lib.hsa_amd_queue_set_priority(q, lib.HSA_AMD_QUEUE_PRIORITY_HIGH))
    check(lib.hsa_amd_queue_set_priority(q, 7), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_queue_set_priority(ffi.new("hsa_queue_t*"), 0), lib.HSA_STATUS_ERROR_INVALID_QUEUE)
    mask = ffi.new("uint32_t[4]")
    check(lib.hsa_amd_queue_cu_get_mask(q, 128, mask))
    assert list(mask) == [0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFF]   # 104 CUs
    check(lib.hsa_amd_queue_cu_set_mask(q, 32, ffi.new("uint32_t[1]", [0xF])))
    check(lib.hsa_amd_queue_cu_get_mask(q, 128, mask))
    assert list(mask) == [0xF, 0, 0, 0]
    check(lib.hsa_amd_queue_cu_set_mask(q, 33, mask), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_queue_cu_set_mask(q, 64, ffi.NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_queue_cu_get_mask(q, 0, mask), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_queue_destroy(q))


def test_cu_mask_is_cut_to_the_cu_count_silently(gpu):
    """ROCr AqlQueue::SetCUMasking without HSA_CU_MASK: a mask past the agent's CUs is cut
    to ceil(CUs / 32) dwords and the last dword to the CU count, and the status is
    SUCCESS (CU_MASK_REDUCED only comes from the process-wide HSA_CU_MASK)."""
    q = queue(gpu)
    mask = ffi.new("uint32_t[12]")
    # 104 CUs: bit 8 of dword 3 is CU 104, dwords 4.. do not exist
    check(lib.hsa_amd_queue_cu_set_mask(q, 192, ffi.new("uint32_t[6]", [1, 0, 0, 0x1FF, 5, 5])))
    check(lib.hsa_amd_queue_cu_get_mask(q, 384, mask))
    assert list(mask) == [1, 0, 0, 0xFF] + [0] * 8         # zero past the stored dwords
    check(lib.hsa_amd_queue_cu_get_mask(q, 32, mask))       # fewer dwords: only those written
    assert mask[0] == 1 and mask[3] == 0xFF
    # a mask of no CU goes to the driver as it is: accepted (rocpy.hsa refuses it itself)
    check(lib.hsa_amd_queue_cu_set_mask(q, 32, ffi.new("uint32_t[1]", [0])))
    check(lib.hsa_amd_queue_cu_get_mask(q, 128, mask))
    assert list(mask)[:4] == [0, 0, 0, 0]
    check(lib.hsa_amd_queue_cu_set_mask(q, 0, ffi.NULL))    # 0: every CU again
    check(lib.hsa_amd_queue_cu_get_mask(q, 128, mask))
    assert list(mask)[:4] == [0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFF]
    check(lib.hsa_queue_destroy(q))


FAULT_PRELUDE = """
    import time
    gpu, cpu = gpu_agents()[0], cpu_agent()
    k = Kernel({path!r}, gpu, "vadd")
    kernarg = allocate(find_pool(cpu, fine=True, kernarg=True), 64)
    check(lib.hsa_amd_memory_fill(kernarg, 0, 16))
    q = queue(gpu, 64, error_recorder()[0])
"""


def test_memory_fault_without_a_handler_aborts(kernel_path):
    proc = run_python(FAULT_PRELUDE.format(path=kernel_path("vadd")) + """
    dispatch(q, k.object, kernarg)          # kernarg memory not made accessible to the GPU
    time.sleep(5)
    print("survived")
    """)
    assert_aborts(proc, "GPU memory fault", "Memory access fault by GPU node-1", "Page not present")
    assert "survived" not in proc.stdout


def test_v5_hidden_buffers_left_zero_fault(hip_kernel):
    # vadd built for code object v5 declares hidden_hostcall_buffer, _heap_v1 and
    # _queue_ptr: zeros there are null dereferences on a GPU (ROCclr fills them)
    path = hip_kernel("vadd", flags=("-mcode-object-version=5",))
    data = open(path, "rb").read()         # the metadata note names the kinds in plain text
    if not any(kind in data for kind in (b"hidden_hostcall_buffer", b"hidden_heap_v1",
                                         b"hidden_queue_ptr")):
        pytest.skip("this compiler declares none of them for vadd (clang 17 drops the unused ones)")
    proc = run_python("""
    import time
    gpu, cpu = gpu_agents()[0], cpu_agent()
    k = Kernel({path!r}, gpu, "vadd")
    kernarg = allocate(find_pool(cpu, fine=True, kernarg=True), 512)
    check(lib.hsa_amd_memory_fill(kernarg, 0, 128))
    allow(kernarg, gpu)
    q = queue(gpu, 64, error_recorder()[0])
    dispatch(q, k.object, kernarg)
    time.sleep(5)
    print("survived")
    """.format(path=path))
    assert_aborts(proc, "GPU memory fault", "on address (nil)")
    assert "survived" not in proc.stdout


def test_injected_memory_fault_reaches_the_system_event_handler(kernel_path):
    proc = run_python(FAULT_PRELUDE.format(path=kernel_path("vadd")) + """
    allow(kernarg, gpu)
    events = []
    @ffi.callback("hsa_amd_system_event_callback_t")
    def handler(event, data):
        f = event.memory_fault
        events.append((event.event_type, f.agent.handle == gpu.handle, f.virtual_address, f.fault_reason_mask))
        return lib.HSA_STATUS_SUCCESS           # handled: no abort
    keep(handler)
    check(lib.hsa_amd_register_system_event_handler(handler, ffi.NULL))
    buf = allocate(find_pool(gpu), 64)
    ffi.cast("void**", kernarg)[0] = buf
    lib.rocpy_stub_inject(lib.ROCPY_STUB_FAULT_MEMORY_FAULT, 0, 1)
    done = signal(1)
    dispatch(q, k.object, kernarg, completion=done)
    deadline = time.monotonic() + 5
    while not events and time.monotonic() < deadline:
        time.sleep(0.01)
    print(events == [(lib.HSA_AMD_GPU_MEMORY_FAULT_EVENT, True, int(ffi.cast("uintptr_t", buf)),
                      lib.HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT)],
          lib.hsa_signal_load_relaxed(done))
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "1"], proc.stderr


def test_kernel_reaching_past_its_buffers_faults_and_aborts(kernel_path):
    proc = run_python(FAULT_PRELUDE.format(path=kernel_path("vadd")) + """
    allow(kernarg, gpu)
    bufs = [allocate(find_pool(gpu), 64) for _ in range(3)]   # 16 floats each, mapped to the GPU
    for i, p in enumerate(bufs):
        ffi.cast("void**", kernarg)[i] = p
    ffi.cast("int*", ffi.cast("char*", kernarg) + 24)[0] = 32    # vadd over 32 floats
    print(hex(int(ffi.cast("uintptr_t", bufs[0])) + 64), flush=True)
    dispatch(q, k.object, kernarg, grid=(32, 1, 1), block=(32, 1, 1))
    time.sleep(5)
    print("survived")
    """)
    past_the_end = proc.stdout.split()[0]      # the first byte the emulation could not reach
    assert_aborts(proc, "GPU memory fault", "Memory access fault by GPU node-1 (Agent handle: ",
                  f"on address {past_the_end}. Reason: Page not present")
    assert "survived" not in proc.stdout


def test_memory_fault_not_handled_by_the_handler_aborts(kernel_path):
    proc = run_python(FAULT_PRELUDE.format(path=kernel_path("vadd")) + """
    @ffi.callback("hsa_amd_system_event_callback_t")
    def handler(event, data):
        print("handler", flush=True)
        return lib.HSA_STATUS_ERROR
    keep(handler)
    check(lib.hsa_amd_register_system_event_handler(handler, ffi.NULL))
    allow(kernarg, gpu)
    ffi.cast("void**", kernarg)[0] = ffi.new("char[64]")     # a host pointer the GPU cannot reach
    dispatch(q, k.object, kernarg)
    time.sleep(5)
    """)
    assert_aborts(proc, "Memory access fault by GPU node-1")
    assert "handler" in proc.stdout


def test_default_error_handler_aborts(kernel_path):
    proc = run_python("""
    import time
    q = queue(gpu_agents()[0], 64)          # no callback: ROCr's default handler
    dispatch(q, 0xBAD, ffi.NULL)
    time.sleep(5)
    """)
    assert_aborts(proc, "Queue at", "inactivated due to async error", "HSA_STATUS_ERROR_INVALID_CODE_OBJECT")


def test_kernel_loaded_for_another_gpu_faults(kernel_path):
    proc = run_python("""
    import time
    g0, g1 = gpu_agents()
    k = Kernel({path!r}, g0, "empty")
    kernarg = allocate(find_pool(cpu_agent(), fine=True, kernarg=True), 64)
    allow(kernarg, g0, g1)
    q = queue(g1, 64, error_recorder()[0])
    dispatch(q, k.object, kernarg)
    time.sleep(5)
    """.format(path=kernel_path("empty")), env={"ROCPY_STUB_DEVICES": "2"})
    assert_aborts(proc, "Memory access fault by GPU node-2")


# ---- the kernel's own limits (hsa_aql.c) -----------------------------------------------------

def test_kernel_metadata_limits_stop_the_queue(setup, hip_kernel):
    # tests/kernels/limits.hip: bounded has .max_flat_workgroup_size 64; recursive a
    # dynamic stack (private segment: max(fixed, 1024)); the raw packets carry private 0
    s = setup
    path = hip_kernel("limits")
    cases = [("bounded", (128, 1, 1), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT),
             ("recursive", (64, 1, 1), lib.HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION)]
    for name, block, status in cases:
        k = Kernel(path, s.gpu, name)
        callback, errors = error_recorder()
        q = queue(s.gpu, 64, callback)
        dispatch(q, k.object, s.kernarg, grid=block, block=block)
        deadline = time.monotonic() + 10
        while not errors and time.monotonic() < deadline:
            time.sleep(0.001)
        assert [e[0] for e in errors] == [status], name
        check(lib.hsa_queue_destroy(q))
        k.close()
