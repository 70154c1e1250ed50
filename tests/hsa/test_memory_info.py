"""hsa memory beyond allocation: pointer info objects, copy engines, async-copy times, SVM."""
from __future__ import annotations

import mmap

import numpy as np
import pytest

from rocpy import hsa
from rocpy.errors import ClosedError, HsaError, NotSupportedError


@pytest.fixture
def coarse(gpu):
    return gpu.pools(segment="global", fine_grained=False)[0]


_MAPS: list = []


@pytest.fixture
def pages():
    """Anonymous page-aligned host memory the runtime knows nothing about (SVM material).

    Kept mapped for the session: the stub (unlike KFD) cannot see an munmap, so
    attributes set on an address would reach a later mapping at the same address."""
    m = mmap.mmap(-1, 4 * 4096)
    _MAPS.append(m)
    return np.frombuffer(m, dtype=np.uint8)


def _addr(view) -> int:
    return view.__array_interface__["data"][0]


# ---- pointer info -------------------------------------------------------------------------

def test_pointer_info_of_pool_memory(gpu, cpu, coarse, host_pool):
    dev = coarse.allocate(10000)
    info = hsa.pointer_info(dev)
    assert info.type == "hsa" and info.known
    assert info.size == 10000 and info.agent_base == info.host_base == dev.ptr
    assert info.owner is gpu and info.accessible == (gpu,)
    assert info.flags == {"coarse_grained"}
    inner = hsa.pointer_info(dev.ptr + 100, runtime=gpu.runtime)
    assert inner.host_base == dev.ptr and inner.offset == 100
    host = host_pool.allocate(4096)
    host.allow_access([gpu])
    info = hsa.pointer_info(host)
    assert info.owner is cpu and set(info.accessible) == {cpu, gpu}
    assert "fine_grained" in info.flags
    dev.close()
    host.close()


def test_pointer_info_of_locked_and_unknown_memory(gpu, cpu):
    arr = np.zeros(4096, np.uint8)
    with hsa.lock(arr, [gpu]) as ptr:
        info = hsa.pointer_info(ptr, runtime=gpu.runtime)
        assert info.type == "locked" and info.size >= arr.nbytes and gpu in info.accessible
    info = hsa.pointer_info(_addr(arr), runtime=gpu.runtime)
    assert info.type == "unknown" and not info.known
    assert info.size == 0 and info.owner is None and info.accessible == () and info.offset == 0


def test_pointer_info_errors(gpu, coarse):
    with pytest.raises(ValueError, match="ptr is NULL"):
        hsa.pointer_info(0, runtime=gpu.runtime)
    with pytest.raises(TypeError, match="ptr must be"):
        hsa.pointer_info("x", runtime=gpu.runtime)
    dev = coarse.allocate(64)
    dev.close()
    with pytest.raises(ClosedError):
        hsa.pointer_info(dev)


# ---- async-copy profiling -------------------------------------------------------------------

def test_async_copy_times(gpu, cpu, coarse, host_pool):
    src = host_pool.allocate(1 << 16)
    src.allow_access([gpu])
    dev = coarse.allocate(1 << 16)
    before, done = hsa.Signal(1), hsa.Signal(1)
    hsa.copy_async(dev, src, 1 << 16, completion=before)        # profiling off
    before.wait("eq", 0, timeout=10, raise_on_timeout=True)
    with pytest.raises(HsaError) as e:
        hsa.copy_time(before)                                     # no profiled copy signalled it
    assert e.value.name == "HSA_STATUS_ERROR" and e.value.call == "hsa_amd_profiling_get_async_copy_time"
    hsa.copy_profiling(True)
    try:
        t0 = gpu.runtime.timestamp
        hsa.copy_async(dev, src, 1 << 16, completion=done)
        done.wait("eq", 0, timeout=10, raise_on_timeout=True)
        t1 = gpu.runtime.timestamp
    finally:
        hsa.copy_profiling(False)
    t = hsa.copy_time(done)
    # system-domain ticks (ROCr translates the GPU's): within the host clock's window
    assert t0 <= t.start <= t.end <= t1
    assert t.frequency == gpu.runtime.timestamp_frequency and t.seconds >= 0
    with pytest.raises(TypeError, match="completion must be an hsa.Signal"):
        hsa.copy_time(3)
    for s in (before, done):
        s.close()


# ---- copy engines ----------------------------------------------------------------------------

_ON_ENGINE = hasattr(hsa.lib, "hsa_amd_memory_async_copy_on_engine")


@pytest.mark.skipif(_ON_ENGINE, reason="the headers declare the copy-engine calls")
def test_copy_engines_need_newer_headers(gpu, cpu, coarse, host_pool):
    src = host_pool.allocate(64)
    dev = coarse.allocate(64)
    done = hsa.Signal(1)
    with pytest.raises(NotSupportedError, match="hsa_amd_memory_async_copy_on_engine"):
        hsa.copy_on_engine(dev, src, 64, engine=0, completion=done)
    with pytest.raises(NotSupportedError, match="hsa_amd_memory_copy_engine_status"):
        hsa.engine_status(gpu, cpu)


@pytest.mark.skipif(not _ON_ENGINE, reason="the headers (ROCm < 5.7) lack the copy-engine calls")
def test_copy_on_engine(gpu, cpu, coarse, host_pool):
    src = host_pool.allocate(4096)
    src.allow_access([gpu])
    src.numpy(np.uint8)[:] = 7
    dev = coarse.allocate(4096)
    back = host_pool.allocate(4096)
    back.allow_access([gpu])
    assert hsa.engine_status(dst_agent=gpu, src_agent=cpu) == {0, 1}   # both idle
    first, done = hsa.Signal(1), hsa.Signal(1)
    hsa.copy_on_engine(dev, src, 4096, engine=0, completion=first)
    first.wait("eq", 0, timeout=10, raise_on_timeout=True)
    hsa.copy_on_engine(back, dev, 4096, engine=1, completion=done)
    done.wait("eq", 0, timeout=10, raise_on_timeout=True)
    first.close()
    assert (back.numpy(np.uint8) == 7).all()
    # the stub's GPUs have 2 SDMA engines: engine 2 does not exist
    with pytest.raises(HsaError) as e:
        hsa.copy_on_engine(dev, src, 4096, engine=2, completion=done)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    with pytest.raises(ValueError, match="engine"):
        hsa.copy_on_engine(dev, src, 4096, engine=32, completion=done)
    with pytest.raises(HsaError) as e:
        hsa.engine_status(gpu, gpu)                       # ROCr: the agents must differ
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_AGENT"
    with pytest.raises(HsaError) as e:
        hsa.engine_status(cpu, cpu)
    assert e.value.name in ("HSA_STATUS_ERROR_INVALID_AGENT", "HSA_STATUS_ERROR")
    with pytest.raises(TypeError, match="dst_agent must be an hsa.Agent"):
        hsa.engine_status(1, cpu)
    done.close()


@pytest.mark.skipif(not _ON_ENGINE, reason="the headers (ROCm < 5.7) lack the copy-engine calls")
def test_gfx90a_sdma0_is_host_to_device_only(gpu, cpu, coarse, host_pool, stub_only):
    """ROCr GpuAgent::DmaCopyOnEngine/DmaCopyStatus: on gfx90a SDMA0 takes H2D copies only."""
    if gpu.name != "gfx90a":
        pytest.skip("the rule is gfx90a's")
    back = host_pool.allocate(64)
    back.allow_access([gpu])
    dev = coarse.allocate(64)
    done = hsa.Signal(1)
    with pytest.raises(HsaError) as e:
        hsa.copy_on_engine(back, dev, 64, engine=0, completion=done)     # D2H on SDMA0
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    assert 0 not in hsa.engine_status(dst_agent=cpu, src_agent=gpu)
    assert 0 in hsa.engine_status(dst_agent=gpu, src_agent=cpu)
    done.close()


# ---- SVM ----------------------------------------------------------------------------------

def test_svm_defaults_and_round_trip(rt, gpu, cpu, pages):
    assert rt.svm_supported
    a = hsa.svm_attributes(pages, pages.nbytes, agents=[gpu, cpu])
    assert a.global_flag == "fine_grained" and a.granularity == 9
    assert a.preferred is None and a.prefetch is None
    assert a.access[cpu] == "accessible"
    assert a.access[gpu] == ("accessible" if rt.xnack_enabled else "none")
    hsa.svm_set_attributes(pages, pages.nbytes, fine_grained=False, read_only=True,
                           granularity=30, preferred=gpu, accessible_in_place=[gpu])
    a = hsa.svm_attributes(pages, pages.nbytes, agents=[gpu])
    assert a.global_flag == "coarse_grained" and a.read_only and not a.read_mostly
    assert a.granularity == 18                       # ROCr caps it at 1 GiB
    assert a.preferred is gpu and a.access[gpu] == "in_place"
    hsa.svm_set_attributes(pages, pages.nbytes, preferred=None, no_access=[gpu])
    a = hsa.svm_attributes(pages, pages.nbytes, agents=[gpu])
    assert a.preferred is None and a.access[gpu] == "none"


def test_svm_attributes_combine_over_a_range(rt, gpu, pages):
    base = _addr(pages)
    hsa.svm_set_attributes(base, 4096, fine_grained=False, accessible=[gpu])
    a = hsa.svm_attributes(base, 2 * 4096, agents=[gpu])     # one coarse page, one default
    assert a.global_flag == "indeterminate"
    assert a.access[gpu] == ("accessible" if rt.xnack_enabled else "none")
    assert hsa.svm_attributes(base + 100, 10, agents=[gpu]).global_flag == "coarse_grained"


def test_svm_access_decides_what_a_copy_engine_may_reach(rt, gpu, cpu, coarse, pages, stub_only):
    """A GPU copy engine reaches plain host memory only once SVM granted the GPU access."""
    if rt.xnack_enabled:
        pytest.skip("with XNACK every GPU has access by default")
    dev = coarse.allocate(4096)
    hsa.fill(dev, 0x01010101)
    done = hsa.Signal(1)
    with pytest.raises(HsaError) as e:
        hsa.copy_async(_addr(pages), dev, 4096, dst_agent=cpu, completion=done)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    hsa.svm_set_attributes(pages, 4096, accessible=[gpu])
    hsa.copy_async(_addr(pages), dev, 4096, dst_agent=cpu, completion=done)
    done.wait("eq", 0, timeout=10, raise_on_timeout=True)
    assert (pages[:4096] == 1).all()
    hsa.svm_set_attributes(pages, 4096, no_access=[gpu])
    again = hsa.Signal(1)        # not `done`: its copy keeps what it used until it is 0
    with pytest.raises(HsaError):
        hsa.copy_async(_addr(pages), dev, 4096, dst_agent=cpu, completion=again)
    again.close()


def test_svm_errors(rt, gpu, cpu, coarse, pages):
    n = pages.nbytes
    with pytest.raises(HsaError) as e:                       # an agent twice: ConfirmNew
        hsa.svm_set_attributes(pages, n, accessible=[gpu], no_access=[gpu])
    assert e.value.name == "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS"
    dev = coarse.allocate(4096)
    with pytest.raises(HsaError) as e:                       # runtime memory: KFD refuses
        hsa.svm_set_attributes(dev.ptr, 4096, accessible=[gpu])
    assert e.value.name == "HSA_STATUS_ERROR" and e.value.call == "hsa_amd_svm_attributes_set"
    with pytest.raises(HsaError) as e:
        hsa.svm_attributes(dev.ptr, 4096)
    assert e.value.name == "HSA_STATUS_ERROR"
    dev.close()
    with pytest.raises(ValueError, match="size must be positive"):
        hsa.svm_attributes(pages, 0)
    with pytest.raises(ValueError, match="ptr is NULL"):
        hsa.svm_set_attributes(0, 4096, read_only=True)
    with pytest.raises(ValueError, match="at least one attribute"):
        hsa.svm_set_attributes(pages, n)
    with pytest.raises(TypeError, match="each of accessible must be an hsa.Agent"):
        hsa.svm_set_attributes(pages, n, accessible=[1])
    with pytest.raises(TypeError, match="ptr must be"):
        hsa.svm_attributes("x", 4096)


def test_svm_errors_raw(rt, gpu, pages, stub_only):
    """What rocpy's arguments cannot express: bad attributes and agents, ROCr's statuses."""
    from rocpy.hsa import ffi, lib
    p = ffi.cast("void *", _addr(pages))

    def set_(*pairs):
        arr = ffi.new("hsa_amd_svm_attribute_pair_t[]", list(pairs))
        return lib.hsa_amd_svm_attributes_set(p, 4096, arr, len(pairs))

    def get(*pairs):
        arr = ffi.new("hsa_amd_svm_attribute_pair_t[]", list(pairs))
        return lib.hsa_amd_svm_attributes_get(p, 4096, arr, len(pairs))

    A = lib
    assert set_((A.HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG, 77)) == A.HSA_STATUS_ERROR_INVALID_ARGUMENT
    assert set_((A.HSA_AMD_SVM_ATTRIB_READ_ONLY, 1), (A.HSA_AMD_SVM_ATTRIB_READ_ONLY, 0)) == \
        A.HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS
    assert set_((A.HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, gpu._hv)) == A.HSA_STATUS_ERROR_INVALID_ARGUMENT
    assert set_((A.HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE, 12345)) == A.HSA_STATUS_ERROR_INVALID_AGENT
    assert set_((A.HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION, 12345)) == A.HSA_STATUS_ERROR_INVALID_AGENT
    assert get((A.HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE, gpu._hv)) == A.HSA_STATUS_ERROR_INVALID_ARGUMENT
    assert get((A.HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, 12345)) == A.HSA_STATUS_ERROR_INVALID_AGENT
    unmapped = mmap.mmap(-1, 4096)
    addr = np.frombuffer(unmapped, np.uint8).__array_interface__["data"][0]
    unmapped.close()                                          # no longer mapped: KFD refuses
    arr = ffi.new("hsa_amd_svm_attribute_pair_t[]", [(A.HSA_AMD_SVM_ATTRIB_READ_ONLY, 1)])
    assert lib.hsa_amd_svm_attributes_set(ffi.cast("void *", addr), 4096, arr, 1) == A.HSA_STATUS_ERROR


def test_svm_prefetch(rt, gpu, cpu, pages):
    dep, done = hsa.Signal(1), hsa.Signal(1)
    hsa.svm_prefetch(pages, pages.nbytes, gpu, completion=done, deps=[dep])
    assert done.wait("eq", 0, timeout=0.05) == 1              # waits for its dependency
    dep.store(0)
    done.wait("eq", 0, timeout=10, raise_on_timeout=True)
    assert hsa.svm_attributes(pages, pages.nbytes).prefetch is gpu
    hsa.svm_prefetch(pages, 4096, cpu)                          # no completion signal
    with pytest.raises(TypeError, match="agent must be an hsa.Agent"):
        hsa.svm_prefetch(pages, 4096, None)
    closed = hsa.Signal(1)
    closed.close()
    with pytest.raises(ClosedError):
        hsa.svm_prefetch(pages, 4096, gpu, completion=closed)
    for s in (dep, done):
        s.close()
