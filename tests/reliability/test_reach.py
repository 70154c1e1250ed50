"""Rule 2: memory is freed only after everything that can reach it let go (issue 20).

What can reach memory: numpy views and DLPack consumers (a `HostView` child),
queued copies, pending packets and graph nodes (a `rocpy._handle.Borrow`).
``close()`` meanwhile marks the object closed; the release runs after the last
of them is gone.  `Device.reset` refuses while views of the device's memory
live (hipDeviceReset frees it; the stub does too).

Each case that crashed or read freed memory before runs in a subprocess.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from rel_support import has_graphs, has_hsa

import rocpy
import rocpy.debug
from rocpy import hip


def last_json(proc):
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- DLPack deleters run while an exception propagates ----------------------------------

DLPACK_UNDER_EXCEPTION = """
    import json, time, warnings
    import numpy as np, rocpy, rocpy.debug
    from rocpy import hip
    warnings.simplefilter("error")
    dev = hip.Device(0)
    b = dev.context.alloc(16)
    seen = []
    try:
        np.add(np.from_dlpack(b), undefined)       # noqa: F821 - the NameError is the point
    except NameError:
        seen.append("NameError")
    try:
        np.from_dlpack(b).reshape(3)
    except ValueError:
        seen.append("ValueError")
    b.close()
    rocpy.debug.collect()
    print(json.dumps({"seen": seen, "live": rocpy.debug.live_objects()}))
"""


def test_dlpack_deleters_called_with_an_exception_set(py):
    """Before: SystemError from the Python deleter, then SIGSEGV / a leaked buffer."""
    result = last_json(py(DLPACK_UNDER_EXCEPTION))
    assert result == {"seen": ["NameError", "ValueError"], "live": {}}


def test_dlpack_deleters_are_c_functions():
    from rocpy.hip import _dlpack
    native = _dlpack._Native.bind()
    lib = hip.lib
    ffi = hip.ffi
    assert int(_dlpack._ffi.cast("uintptr_t", native.legacy)) == \
        int(ffi.cast("uintptr_t", ffi.addressof(lib, "rocpy_dlpack_deleter")))
    assert native.destructor == int(ffi.cast("uintptr_t",
                                             ffi.addressof(lib, "rocpy_dlpack_capsule_destructor")))


# ---- Device.reset and views ---------------------------------------------------------------

@pytest.mark.stub_only
@pytest.mark.parametrize("view", ["dlpack", "typed_numpy"])
def test_reset_refused_while_views_of_device_memory_live(view):
    dev = hip.Device(0)
    buf = dev.context.alloc(64)
    arr = np.from_dlpack(buf) if view == "dlpack" else buf.typed(np.uint8).numpy()
    with pytest.raises(rocpy.HipError) as info:
        dev.reset()
    assert info.value.name == "hipErrorIllegalState"
    assert "view" in str(info.value) and "Device.reset" in str(info.value)
    arr[:] = 3                                     # still valid memory: nothing was reset
    assert not buf.closed
    del arr
    dev.reset()
    assert buf.closed
    rocpy.debug.collect()
    assert rocpy.debug.live_objects() == {}


RESET_WHILE_ALLOCATING = """
    import json, threading
    import rocpy, rocpy.debug
    from rocpy import hip
    from rocpy.errors import ClosedError
    dev = hip.Device(0)
    stop = threading.Event()
    def churn():
        while not stop.is_set():
            try:
                bufs = [dev.context.alloc(4096) for _ in range(8)]
                del bufs
            except ClosedError:
                pass                               # the context was reset under us: clear
    threads = [threading.Thread(target=churn) for _ in range(3)]
    for t in threads: t.start()
    for _ in range(30):
        dev.reset()
    stop.set()
    for t in threads: t.join()
    dev.sync()
    rocpy.debug.collect()
    import rocpy.stub
    print(json.dumps({"live": rocpy.debug.live_objects()}))
"""


def test_reset_while_other_threads_allocate(py):
    """Before: hipDeviceReset freed buffers other threads then freed again (heap corruption)."""
    for _ in range(2):
        result = last_json(py(RESET_WHILE_ALLOCATING, env={"MALLOC_CHECK_": "3"}, timeout=120))
        assert result == {"live": {}}


# ---- graphs -------------------------------------------------------------------------------

GRAPH_BUFFER_CLOSED = """
    import json, sys
    import numpy as np, rocpy, rocpy.debug
    from rocpy import hip
    dev = hip.Device(0)
    k = hip.Module.load(sys.argv[1], dev)["fill"]
    buf = dev.context.alloc(256)
    g = hip.Graph(dev)
    g.add_kernel(k, 1, 64, (buf, np.uint32(5), np.int32(64)))
    exe = g.instantiate()
    g.close()
    view = buf[0:256]
    buf.close()                                    # the graph still reaches it
    view.close()
    closed = buf.closed
    live_before = rocpy.debug.live_objects().get("DeviceBuffer", 0)
    exe.launch()
    hip.Device(0).sync()
    exe.close()
    del k
    rocpy.debug.collect()
    print(json.dumps({"closed": closed, "held": live_before, "live": rocpy.debug.live_objects()}))
"""


@pytest.mark.skipif(not has_graphs(), reason="this backend's HIP has no graphs")
def test_graph_launch_after_its_buffer_closed(py, kernel_paths):
    """Before: the executable graph launched on freed memory (a fault on the stub)."""
    result = last_json(py(GRAPH_BUFFER_CLOSED, args=(kernel_paths["fill"],)))
    assert result == {"closed": True, "held": 1, "live": {}}


# ---- HSA: queued copies and packets -------------------------------------------------------

COPY_SOURCE_CLOSED = """
    import json, time
    import numpy as np, rocpy, rocpy.debug as debug
    from rocpy import hsa
    rt = hsa.Runtime(); gpu = rt.gpu_agents[0]; cpu = rt.cpu_agents[0]
    host_pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
    coarse = gpu.pools(segment="global", fine_grained=False)[0]
    src = host_pool.allocate(4096); src.allow_access([gpu]); src.numpy(np.uint8)[:] = 9
    dst = coarse.allocate(4096)
    gate, done = hsa.Signal(1), hsa.Signal(1)
    hsa.copy_async(dst, src, 4096, deps=[gate], completion=done)
    src.close(); done.close(); gate_closed = False
    debug.collect()
    held = debug.live_objects().get("Buffer", 0)
    gate.store(0)
    deadline = time.monotonic() + 10
    while debug.live_objects().get("Buffer", 0) > 1 and time.monotonic() < deadline:
        debug.collect(); time.sleep(0.01)
    out = host_pool.allocate(4096); out.allow_access([gpu]); hsa.copy(out, dst, 4096)
    values = sorted(set(out.numpy(np.uint8).tolist()))
    out.close(); dst.close(); gate.close(); rt.close()
    debug.collect()
    print(json.dumps({"held": held, "values": values, "live": debug.live_objects()}))
"""


@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
def test_copy_async_source_closed_before_the_copy_runs(py):
    """Before: the source was freed at once; the stub's copy engine then faults
    (freed memory is unmapped: the rule in hsa_copy.c's run_copy)."""
    result = last_json(py(COPY_SOURCE_CLOSED))
    assert result == {"held": 2, "values": [9], "live": {}}


SIGNAL_OF_A_QUEUED_PACKET = """
    import numpy as np
    import json, sys, time
    import rocpy, rocpy.debug as debug
    from rocpy import hsa
    rt = hsa.Runtime(); gpu = rt.gpu_agents[0]; cpu = rt.cpu_agents[0]
    pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
    k = hsa.Executable.load(gpu, sys.argv[1]).kernel("fill")
    buf = pool.allocate(256); buf.allow_access([gpu])
    q = gpu.create_queue()
    gate, done, bdone = hsa.Signal(1), hsa.Signal(1), hsa.Signal(1)
    q.barrier_and([gate], bdone)                   # everything after waits for the gate
    q.dispatch(k, 64, 64, (buf, np.uint32(4), np.int32(64)), completion_signal=done)
    done.close(); bdone.close()                    # closed while a queued packet names them
    gate.store(0)
    error = None
    try:
        q.sync(timeout=10)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    value = int(buf.numpy("uint32")[0])
    q.close(); buf.close(); gate.close(); del k; rt.close()
    debug.collect()
    print(json.dumps({"error": error, "value": value, "live": debug.live_objects()}))
"""


@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
def test_closing_a_signal_a_queued_packet_uses(py, kernel_paths):
    """Before: HSA_STATUS_ERROR_INVALID_PACKET_FORMAT from the queue (the packet named
    a destroyed signal)."""
    result = last_json(py(SIGNAL_OF_A_QUEUED_PACKET, args=(kernel_paths["fill"],)))
    assert result == {"error": None, "value": 4, "live": {}}
