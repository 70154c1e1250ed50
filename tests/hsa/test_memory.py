"""hsa memory: owned Buffers, CPU access rules, copies, fills, locked host memory."""
from __future__ import annotations

import gc

import numpy as np
import pytest

from rocpy import debug, hsa
from rocpy.errors import ClosedError, HsaError, HsaInvalidValueError


@pytest.fixture
def coarse(gpu):
    return gpu.pools(segment="global", fine_grained=False)[0]


@pytest.fixture
def fine(gpu):
    pools = gpu.pools(segment="global", fine_grained=True)
    if not pools:
        pytest.skip("no fine-grained GPU pool")
    return pools[0]


def test_allocate_and_free(coarse, stub_only):
    from rocpy import stub
    before = stub.live_allocations()
    buf = coarse.allocate(1 << 20)
    assert buf.size == buf.nbytes == 1 << 20 and buf.ptr and int(buf) == buf.ptr
    assert buf.pool is coarse and buf.agent == coarse.agent
    assert debug.live_objects() == {"Runtime": 1, "Buffer": 1}
    assert stub.live_allocations() == before + 1
    buf.close()
    buf.close()
    assert stub.live_allocations() == before
    assert debug.live_objects() == {"Runtime": 1}


def test_collected_buffer_is_freed(coarse, stub_only):
    from rocpy import stub
    before = stub.live_allocations()
    coarse.allocate(4096)
    debug.collect()
    assert stub.live_allocations() == before


def test_bad_sizes(coarse):
    with pytest.raises(ValueError, match="positive"):
        coarse.allocate(0)
    with pytest.raises(TypeError, match="must be an int"):
        coarse.allocate(4096.0)
    with pytest.raises(HsaInvalidValueError) as e:
        coarse.allocate(coarse.alloc_max_size + 4096)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ALLOCATION"
    assert e.value.call == "hsa_amd_memory_pool_allocate"


def test_pool_that_does_not_allow_allocation(gpu):
    group = gpu.pools(segment="group")
    if not group:
        pytest.skip("no group segment pool")
    assert not group[0].alloc_allowed
    with pytest.raises(HsaError) as e:
        group[0].allocate(256)
    assert e.value.name in ("HSA_STATUS_ERROR_INVALID_ALLOCATION",
                            "HSA_STATUS_ERROR_INVALID_ARGUMENT")


def test_injected_allocation_failure(coarse, stub_only):
    from rocpy import stub
    stub.inject("alloc")
    with pytest.raises(HsaError) as e:
        coarse.allocate(4096)
    assert e.value.name == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"


# ---- CPU access --------------------------------------------------------------------------

def test_cpu_may_not_touch_coarse_grained_gpu_memory(coarse, cpu):
    buf = coarse.allocate(4096)
    with pytest.raises(hsa.AccessError, match="coarse-grained memory of gpu"):
        buf.numpy()
    buf.allow_access([cpu])               # mapping it changes nothing: not coherent
    with pytest.raises(hsa.AccessError, match="copy it to host memory"):
        buf.numpy(np.float32)
    assert isinstance(hsa.AccessError("x"), PermissionError)


def test_fine_grained_gpu_memory_needs_access_for_the_cpu(fine, cpu, stub_only):
    buf = fine.allocate(4096)
    with pytest.raises(hsa.AccessError, match="allow_access"):
        buf.numpy()
    buf.allow_access([cpu])
    view = buf.numpy(np.uint32)
    view[:] = 7
    assert buf.numpy(np.uint32).sum() == 7 * 1024


def test_host_memory_views(host_pool):
    buf = host_pool.allocate(4096)
    a = buf.numpy(np.float32)
    assert a.shape == (1024,) and a.dtype == np.float32
    a[:] = np.arange(1024)
    assert buf.numpy(np.float32, count=4, offset=8).tolist() == [2.0, 3.0, 4.0, 5.0]
    assert buf.numpy().nbytes == 4096
    with pytest.raises(ValueError, match="do not fit"):
        buf.numpy(np.float64, count=513)
    with pytest.raises(ValueError, match="outside"):
        buf.numpy(offset=4097)


def test_a_view_keeps_its_buffer_alive(host_pool):
    view = host_pool.allocate(4096).numpy(np.uint8)
    debug.collect()
    assert debug.live_objects().get("Buffer") == 1
    view[:] = 1
    del view
    debug.collect()
    assert "Buffer" not in debug.live_objects()


def test_closed_buffer_refuses_use(host_pool, gpu):
    buf = host_pool.allocate(4096)
    buf.close()
    for use in (buf.numpy, lambda: buf.allow_access([gpu]), lambda: buf.fill(0),
                lambda: int(buf), lambda: hsa.copy(buf, buf, 16)):
        with pytest.raises(ClosedError, match="Buffer is closed"):
            use()


def test_allow_access_checks(host_pool, gpu):
    buf = host_pool.allocate(4096)
    with pytest.raises(ValueError, match="at least one agent"):
        buf.allow_access([])
    buf.allow_access([gpu])


def test_regions_allocate_too(gpu):
    region = gpu.regions(kernarg=True)[0]
    buf = region.allocate(256)
    buf.numpy(np.uint8)[:] = 3        # system memory: the CPU may access it
    assert buf.numpy(np.uint8).sum() == 3 * 256
    buf.close()


# ---- copies and fills -----------------------------------------------------------------------

def test_copy_round_trip_through_gpu_memory(coarse, host_pool):
    src, dst = host_pool.allocate(4096), host_pool.allocate(4096)
    dev = coarse.allocate(4096)
    for b in (src, dst):               # the GPU's blit kernel reaches them (ROCr CopyMemory)
        b.allow_access([coarse.agent])
    src.numpy(np.int32)[:] = np.arange(1024)
    dev.copy_from(src)
    dev.copy_to(dst)
    assert (dst.numpy(np.int32) == np.arange(1024)).all()
    with pytest.raises(ValueError, match="has 4096 bytes, the copy is 8192"):
        hsa.copy(dev, src, 8192)
    with pytest.raises(TypeError, match="must be an hsa.Buffer"):
        hsa.copy(dev, "src", 16)


def test_fill(coarse, host_pool):
    dev = coarse.allocate(4096)
    out = host_pool.allocate(4096)
    out.allow_access([coarse.agent])
    dev.fill(0xDEADBEEF)
    hsa.copy(out, dev, 4096)
    assert (out.numpy(np.uint32) == 0xDEADBEEF).all()
    hsa.fill(dev, 1, count=16)
    hsa.copy(out, dev, 4096)
    assert out.numpy(np.uint32)[:17].tolist() == [1] * 16 + [0xDEADBEEF]
    with pytest.raises(ValueError, match="32 bits"):
        dev.fill(1 << 32)
    with pytest.raises(ValueError, match="has 4096 bytes"):
        hsa.fill(dev, 0, count=1025)


def test_copy_async_waits_for_its_dependencies(gpu, cpu, coarse, host_pool):
    src = host_pool.allocate(4096)
    src.allow_access([gpu])
    src.numpy(np.uint8)[:] = 9
    dev = coarse.allocate(4096)
    dep, done = hsa.Signal(1), hsa.Signal(1)
    hsa.copy_async(dev, src, 4096, deps=[dep], completion=done)
    assert done.wait("eq", 0, timeout=0.05) == 1          # held back by dep
    dep.store(0)
    assert done.wait("eq", 0, timeout=10, raise_on_timeout=True) == 0
    out = host_pool.allocate(4096)
    out.allow_access([gpu])
    hsa.copy(out, dev, 4096)
    assert (out.numpy(np.uint8) == 9).all()


def test_copy_async_keeps_its_buffers_until_done(gpu, coarse, host_pool):
    src = host_pool.allocate(4096)
    src.allow_access([gpu])
    dep, done = hsa.Signal(1), hsa.Signal(1)
    hsa.copy_async(coarse.allocate(4096), src, 4096, deps=[dep], completion=done)
    del src
    debug.collect()
    assert debug.live_objects()["Buffer"] == 2            # the copy still uses them
    dep.store(0)
    done.wait("eq", 0, timeout=10, raise_on_timeout=True)
    deadline = 100
    while debug.live_objects().get("Buffer") and deadline:
        debug.collect()
        deadline -= 1
    assert "Buffer" not in debug.live_objects()


def test_copy_async_argument_errors(gpu, coarse, host_pool):
    dev = coarse.allocate(64)
    done = hsa.Signal(1)
    with pytest.raises(ValueError, match="the agent of a raw address must be given"):
        hsa.copy_async(dev, dev.ptr, 64, completion=done)
    closed = hsa.Signal(0)
    closed.close()
    with pytest.raises(ClosedError):
        hsa.copy_async(dev, dev, 64, completion=closed)


def test_copy_async_the_runtime_refuses(gpu, cpu, coarse, host_pool, stub_only):
    # host memory the GPU was not granted: the stub refuses the copy (rocpy's
    # own check is bypassed by giving a raw address)
    src = host_pool.allocate(64)
    dev = coarse.allocate(64)
    done = hsa.Signal(1)
    with pytest.raises(HsaInvalidValueError) as e:
        hsa.copy_async(dev, src.ptr, 64, src_agent=cpu, completion=done)
    assert e.value.call == "hsa_amd_memory_async_copy"


# ---- locked host memory -----------------------------------------------------------------------

def test_lock_yields_the_agent_pointer(gpu, cpu, coarse):
    host = np.arange(1024, dtype=np.float32)
    dev = coarse.allocate(host.nbytes)
    done = hsa.Signal(1)
    with hsa.lock(host, [gpu]) as ptr:
        assert isinstance(ptr, int) and ptr
        assert debug.live_objects()["LockedMemory"] == 1
        hsa.copy_async(dev, ptr, host.nbytes, src_agent=cpu, completion=done)
        done.wait("eq", 0, timeout=10, raise_on_timeout=True)
    assert "LockedMemory" not in debug.live_objects()
    back = np.zeros_like(host)
    done.store(1)
    with hsa.lock(back) as ptr:                 # every GPU
        hsa.copy_async(ptr, dev, host.nbytes, dst_agent=cpu, completion=done)
        done.wait("eq", 0, timeout=10, raise_on_timeout=True)
    assert (back == host).all()


def test_lock_refuses_what_cannot_be_locked():
    with pytest.raises(ValueError, match="read-only"):
        hsa.lock(b"immutable bytes")
    with pytest.raises(ValueError, match="empty"):
        hsa.lock(bytearray())
    with pytest.raises(ValueError, match="non-contiguous"):
        hsa.lock(np.zeros((8, 8))[:, ::2])
    gc.collect()


def test_locked_memory_keeps_the_host_object(gpu):
    locked = hsa.lock(bytearray(4096), [gpu])
    assert locked.size == 4096 and locked.host_ptr and locked.ptr
    assert "LockedMemory" in repr(locked)
    locked.close()
    with pytest.raises(ClosedError):
        int(locked)
