"""rocpy.hsa.ipc: memory and signals shared between processes (hsa_amd_ipc_*)."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import rocpy
from rocpy import ClosedError, HsaError, debug, hsa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "hsa_ipc_two_processes.py")


@pytest.fixture
def dev_pool(gpu):
    return gpu.pools(segment="global", fine_grained=False)[0]


def put(dst, array):
    hsa.copy(dst, hsa.ffi.from_buffer(array), array.nbytes)


def get(src, n):
    out = np.zeros(n, np.uint32)
    hsa.copy(hsa.ffi.from_buffer(out), src, out.nbytes)
    return out


def test_example_two_processes():
    """Data and signals both ways between two spawned processes; the exporter frees first."""
    env = dict(os.environ, ROCPY_BACKEND=rocpy.backend().name)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, EXAMPLE], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "child's mapping after the parent freed: ok" in proc.stdout
    assert "attach while the child holds it: accepted" in proc.stdout
    assert "attach after the last detach: HSA_STATUS_ERROR_INVALID_ARGUMENT" in proc.stdout
    assert "ipc between two processes: ok" in proc.stdout


def test_memory_attached_in_the_exporting_process(dev_pool):
    buf = dev_pool.allocate(1000)
    put(buf, np.arange(250, dtype=np.uint32))
    handle = hsa.ipc_export(buf)
    assert handle.size == 1000 and handle.kind == "memory" and len(handle.data) == 32
    with hsa.IpcMemory.attach(handle) as mem:
        assert mem.ptr != buf.ptr            # a mapping of its own, as ROCr's IPCAttach makes
        assert mem.size == 1000 and debug.live_objects()["IpcMemory"] == 1
        assert (get(mem, 250) == np.arange(250)).all()
        put(mem, np.full(250, 7, np.uint32))  # and back
        assert (get(buf, 250) == 7).all()
    buf.close()


def test_importer_keeps_the_memory_after_the_exporter_frees(dev_pool):
    buf = dev_pool.allocate(4096)
    put(buf, np.arange(1024, dtype=np.uint32))
    handle = hsa.ipc_export(buf)
    mem = hsa.IpcMemory(handle, [buf.agent])
    buf.close()
    assert (get(mem, 1024) == np.arange(1024)).all()
    # "a handle is valid while the allocation it references remains accessible in any process"
    second = hsa.IpcMemory.attach(handle)
    assert (get(second, 1024) == np.arange(1024)).all()
    second.close()
    mem.close()
    with pytest.raises(HsaError) as e:        # nobody has it any more
        hsa.IpcMemory.attach(handle)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    mem.close()                               # closing twice is a no-op
    with pytest.raises(ClosedError):
        mem.ptr


def test_memory_misuse(dev_pool, host_pool, rt):
    buf = dev_pool.allocate(1000)
    for size in (999, 4097):                  # ROCr: the allocation's own size only
        with pytest.raises(HsaError) as e:
            hsa.ipc_export(buf, size)
        assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
        assert e.value.call == "hsa_amd_ipc_memory_create"
    with pytest.raises(ValueError, match="size"):
        hsa.ipc_export(buf, 0)
    with pytest.raises(TypeError, match="hsa.Buffer"):
        hsa.ipc_export(buf.ptr)
    garbage = hsa.IpcHandle(bytes(range(32)), 1000)
    with pytest.raises(HsaError) as e:
        hsa.IpcMemory.attach(garbage)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    handle = hsa.ipc_export(buf)
    forged = bytearray(handle.data)
    forged[8] ^= 1                            # another fd: the checksum no longer holds
    with pytest.raises(HsaError) as e:
        hsa.IpcMemory.attach(hsa.IpcHandle(bytes(forged), 1000))
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    with pytest.raises(ValueError, match="32 bytes"):
        hsa.IpcHandle(b"short", 4)
    with pytest.raises(ValueError, match="kind"):
        hsa.IpcHandle(handle.data, 4, "file")
    with pytest.raises(TypeError, match="IpcHandle"):
        hsa.IpcMemory.attach(handle.data)
    with pytest.raises(ValueError, match="at least one agent"):
        hsa.IpcMemory.attach(handle, [])
    with pytest.raises(TypeError, match="agents"):
        hsa.IpcMemory.attach(handle, ["gpu"])
    buf.close()
    with pytest.raises(ClosedError):
        hsa.ipc_export(buf)
    assert debug.live_objects() == {"Runtime": 1}


def test_raw_detach_misuse(dev_pool):
    from rocpy.hsa import ffi, lib
    buf = dev_pool.allocate(4096)
    mem = hsa.IpcMemory.attach(hsa.ipc_export(buf))
    inner = ffi.cast("void *", mem.ptr + 64)
    assert lib.hsa_amd_ipc_memory_detach(inner) == lib.HSA_STATUS_ERROR_INVALID_ARGUMENT
    assert lib.hsa_amd_ipc_memory_detach(ffi.cast("void *", buf.ptr)) == lib.HSA_STATUS_ERROR_INVALID_ARGUMENT
    address = mem.ptr
    mem.close()
    # a second detach of the same mapping: the thunk's unmap fails
    assert lib.hsa_amd_ipc_memory_detach(ffi.cast("void *", address)) == lib.HSA_STATUS_ERROR_INVALID_ARGUMENT
    buf.close()


def test_signal_shared_and_closed_in_either_order(rt):
    sig = hsa.Signal(5, ipc=True)
    assert sig.attributes == frozenset({"ipc"})
    handle = sig.ipc_handle()
    assert handle.kind == "signal"
    other = hsa.Signal.attach(handle)
    assert other.load() == 5 and "attached" in other.attributes
    other.subtract(2)
    assert sig.load() == 3
    assert sig.wait("eq", 3, timeout=1) == 3
    sig.close()                               # the exporter first: the importer's page stays
    other.store(9)
    assert other.wait("eq", 9, timeout=1) == 9
    third = hsa.Signal.attach(handle)         # valid while a process holds it
    assert third.load() == 9
    third.close()
    other.close()
    with pytest.raises(HsaError) as e:        # nobody holds it: refused
        hsa.Signal.attach(handle)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    again = hsa.Signal(1, ipc=True)
    imported = hsa.Signal.attach(again.ipc_handle())
    imported.close()                          # the importer first
    assert again.load() == 1
    again.close()
    assert debug.live_objects() == {"Runtime": 1}


def test_signal_misuse(rt, dev_pool):
    plain = hsa.Signal(1)
    with pytest.raises(HsaError) as e:        # ROCr: "Signal must be IPC enabled."
        plain.ipc_handle()
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    assert e.value.call == "hsa_amd_ipc_signal_create"
    buf = dev_pool.allocate(4096)
    with pytest.raises(HsaError) as e:        # memory, not a signal's ABI block
        hsa.Signal.attach(hsa.ipc_export(buf))
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    with pytest.raises(HsaError) as e:
        hsa.Signal.attach(hsa.IpcHandle(bytes(32), 4096, "signal"))
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    with pytest.raises(TypeError, match="IpcHandle"):
        hsa.Signal.attach(b"\0" * 32)
    plain.close()
    with pytest.raises(ClosedError):
        plain.ipc_handle()
    buf.close()


def test_ipc_handle_pickles(dev_pool):
    import pickle
    buf = dev_pool.allocate(64)
    handle = hsa.ipc_export(buf)
    assert pickle.loads(pickle.dumps(handle)) == handle
    buf.close()
