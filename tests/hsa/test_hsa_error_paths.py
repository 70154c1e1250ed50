"""Error paths of rocpy.hsa that no other test reached (measured with coverage: each
test names the raise it reaches).  Every one asserts the exception type and message."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from rocpy import hsa
from rocpy.codeobject import ArgumentCountError, LaunchConfigError
from rocpy.errors import ClosedError


def test_signal_attach_and_ipc_memory_refuse_a_runtime_of_the_wrong_type(rt, gpu):
    # signal.py Signal.attach, ipc.py IpcMemory.__init__: the runtime= type check
    with hsa.Signal(1, ipc=True) as sig:
        handle = sig.ipc_handle()
        with pytest.raises(TypeError, match="^runtime must be an hsa.Runtime, not int$"):
            hsa.Signal.attach(handle, runtime=3)
    buf = gpu.pools(segment="global", fine_grained=False)[0].allocate(4096)
    mem_handle = hsa.ipc_export(buf)
    with pytest.raises(TypeError, match="^runtime must be an hsa.Runtime, not str$"):
        hsa.IpcMemory(mem_handle, [gpu], runtime="rt")
    buf.close()


def test_ipc_export_size_must_be_an_int(rt, gpu):
    buf = gpu.pools(segment="global", fine_grained=False)[0].allocate(4096)
    for bad in ("4096", 4096.0, True):
        with pytest.raises(TypeError, match=f"^size must be an int, not {type(bad).__name__}$"):
            hsa.ipc_export(buf, size=bad)
    assert hsa.ipc_export(buf, size=np.int64(4096)).size == 4096   # numpy integers are ints
    buf.close()


def test_cas_names_the_memory_orders(sig_zero):
    with pytest.raises(ValueError, match=r"^cas: memory order must be one of .*scacq_screl.*"
                                         r"not 'sequential'$"):
        sig_zero.cas(0, 1, order="sequential")
    assert sig_zero.load() == 0                  # nothing was exchanged


def test_fill_needs_a_count_it_can_work_out(rt, host_pool):
    buf = host_pool.allocate(4096)
    with pytest.raises(ValueError, match="^fill of a raw address needs count=$"):
        hsa.fill(buf.ptr, 0)
    odd = host_pool.allocate(6)
    with pytest.raises(ValueError, match="^the buffer's 6 bytes are not whole 32-bit words: "
                                         "pass count=$"):
        hsa.fill(odd, 0)
    hsa.fill(odd, 0x01010101, count=1)           # an explicit count works
    assert bytes(odd.numpy(np.uint8)[:4]) == b"\x01" * 4
    odd.close()
    buf.close()


def test_fill_statuses_of_rocr(gpu):
    # hsa_amd_memory_fill: ROCr refuses an address not 4-byte aligned, and a count past
    # the allocation; rocpy passes both through as the status
    from rocpy.errors import HsaInvalidValueError
    dev = gpu.pools(segment="global", fine_grained=False)[0].allocate(4096)
    with pytest.raises(HsaInvalidValueError, match="^hsa_amd_memory_fill failed") as e:
        hsa.fill(dev.ptr + 2, 0, count=1)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    with pytest.raises(HsaInvalidValueError, match="^hsa_amd_memory_fill failed") as e:
        hsa.fill(dev.ptr, 0, count=1025)          # a raw address: rocpy cannot know its size
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ALLOCATION" and e.value.call == "hsa_amd_memory_fill"
    hsa.fill(dev, 7)                             # the whole buffer is fine
    dev.close()


def test_dispatch_record_refuses_what_is_not_a_kernel(rt):
    with pytest.raises(TypeError, match="^kernel must be an hsa.Kernel, not str$"):
        hsa.Dispatch("empty", 1, 1)


def test_packet_fences_must_be_a_scope_or_a_pair(empty):
    for bad in (5, ("agent",), ("agent", "none", "system")):
        with pytest.raises(ValueError, match=r"^fences must be None, a scope \('none', 'agent', "
                                             r"'system'\) or an \(acquire, release\) pair"):
            empty.packet(64, 64, fences=bad)


def test_segment_sizes_past_32_bits_are_refused(empty):
    for kw in ({"group_segment_size": 1 << 32}, {"private_segment_size": 1 << 32}):
        with pytest.raises(LaunchConfigError, match="^segment sizes must fit in 32 bits unsigned$"):
            empty.packet(64, 64, **kw)


def test_packing_arguments_for_a_kernel_without_any(empty):
    with pytest.raises(ArgumentCountError, match=r"^empty\(\) takes 0 arguments \(2 given\)$"):
        empty.pack((1, 2))
    assert empty.pack(()) == empty.pack()


def test_dispatch_of_a_kernel_closed_after_its_packet_was_cached(gpu, empty_path, q):
    # _queue_submit.py: the packet template is cached per (kernel, grid, workgroup); the
    # closed check after the cache hit is the one that refuses a closed executable's kernel
    exe = hsa.Executable.load(gpu, empty_path)
    kernel = exe.kernel("empty")
    done = hsa.Signal(1)
    q.dispatch(kernel, 64, 64, completion_signal=done)
    assert done.wait("eq", 0, timeout=30) == 0
    exe.close()
    with pytest.raises(ClosedError, match="closed"):
        q.dispatch(kernel, 64, 64)
    assert q.write_index == 1                    # nothing was submitted
    done.close()


def test_signal_group_closed_while_waited_on(rt):
    signals = [hsa.Signal(1) for _ in range(2)]
    group = hsa.SignalGroup(signals)
    closer = threading.Timer(0.2, group.close)
    closer.start()
    with pytest.raises(ClosedError, match="^hsa.SignalGroup was closed while waited on$"):
        group.wait_any("eq", 0)
    closer.join()
    for s in signals:
        s.close()


@pytest.fixture
def sig_zero(rt):
    with hsa.Signal(0) as s:
        yield s
