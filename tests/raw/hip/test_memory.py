"""Allocations (hipamd hip_memory.cpp, hip_hmm.cpp, hip_mempool.cpp)."""
from __future__ import annotations

import numpy as np

from rocm_versions import expect, version_sensitive

from .helpers import (BACKEND, HostLog, check, ffi, hipamd, host_malloc, lib, malloc,
                      memory_type, ok, stream, stub_only)


def mem_info():
    free_, total = ffi.new("size_t *"), ffi.new("size_t *")
    ok(lib.hipMemGetInfo(free_, total))
    return free_[0], total[0]


# platform-independent
def test_malloc_free_and_accounting():
    free0, total = mem_info()
    p = malloc(1 << 20)
    free1, _ = mem_info()
    if BACKEND == "stub":
        assert free0 - free1 == 1 << 20
    ok(lib.hipFree(p))
    if BACKEND == "stub":
        assert mem_info()[0] == free0
    ok(lib.hipFree(ffi.NULL))
    q = ffi.new("void **")
    ok(lib.hipMalloc(q, 0))
    assert q[0] == ffi.NULL
    check(lib.hipMalloc(ffi.NULL, 16), "hipErrorInvalidValue")
    if BACKEND != "nvidia":                 # hipamd-specific
        check(lib.hipMemGetInfo(ffi.NULL, ffi.NULL), "hipErrorInvalidValue")


# platform-independent
def test_malloc_beyond_the_device_is_out_of_memory():
    _, total = mem_info()
    q = ffi.new("void **")
    check(lib.hipMalloc(q, total + (1 << 30)), "hipErrorOutOfMemory")
    check(lib.hipMalloc(q, 1 << 62), "hipErrorOutOfMemory")
    check(lib.hipMallocManaged(q, 1 << 62, lib.hipMemAttachGlobal), "hipErrorOutOfMemory")
    check(lib.hipHostMalloc(q, 1 << 62, 0), "hipErrorOutOfMemory")


# stub: an injected allocation failure is hipErrorOutOfMemory
@stub_only
def test_injected_allocation_fault():
    q = ffi.new("void **")
    lib.rocpy_stub_inject(lib.ROCPY_STUB_FAULT_ALLOC, 0, 1)
    try:
        check(lib.hipMalloc(q, 64), "hipErrorOutOfMemory")
        ok(lib.hipMalloc(q, 64))
        ok(lib.hipFree(q[0]))
        lib.rocpy_stub_inject(lib.ROCPY_STUB_FAULT_ALLOC, 0, 1)
        check(lib.hipHostMalloc(q, 64, 0), "hipErrorOutOfMemory")
    finally:
        lib.rocpy_stub_clear_faults()


# hipamd-specific: an unknown or interior pointer is hipErrorInvalidValue
@hipamd
def test_free_of_unknown_pointer():
    p = malloc(256)
    check(lib.hipFree(ffi.cast("char *", p) + 16), "hipErrorInvalidValue")
    ok(lib.hipFree(p))
    check(lib.hipFree(p), "hipErrorInvalidValue")
    local = ffi.new("char[64]")
    check(lib.hipFree(local), "hipErrorInvalidValue")
    check(lib.hipHostFree(local), "hipErrorInvalidValue")


# hipamd-specific: hipFree takes pinned memory too, after waiting for the
# devices that may use it
@hipamd
def test_free_waits_and_accepts_host_memory():
    h = host_malloc(4096)
    log = HostLog()
    s = stream(lib.hipStreamNonBlocking)
    log.enqueue(s, "pending", delay=0.05)
    ok(lib.hipFree(h))
    assert log.entries == ["pending"]
    d = malloc(64)
    ok(lib.hipHostFree(d))
    ok(lib.hipStreamDestroy(s))


# hipamd-specific: flag checks and what hipHostGetFlags returns
@hipamd
def test_host_malloc_flags():
    q = ffi.new("void **")
    check(lib.hipHostMalloc(q, 64, lib.hipHostMallocCoherent | lib.hipHostMallocNonCoherent),
          "hipErrorInvalidValue")
    check(lib.hipHostMalloc(ffi.NULL, 64, 0), "hipErrorInvalidValue")
    ok(lib.hipHostMalloc(q, 0, 0))
    assert q[0] == ffi.NULL
    flags = ffi.new("unsigned int *")
    for f in (lib.hipHostMallocDefault, lib.hipHostMallocPortable, lib.hipHostMallocMapped,
              lib.hipHostMallocWriteCombined,
              lib.hipHostMallocPortable | lib.hipHostMallocMapped,
              lib.hipHostMallocCoherent, lib.hipHostMallocNonCoherent, lib.hipHostMallocNumaUser):
        ok(lib.hipHostMalloc(q, 64, f))
        ok(lib.hipHostGetFlags(flags, q[0]))
        assert flags[0] == f & 0xffff        # 5.2 keeps the low 16 bits of the flags
        ok(lib.hipHostFree(q[0]))
    check(lib.hipHostAlloc(q, 64, 0x80), "hipErrorInvalidValue")
    ok(lib.hipHostAlloc(q, 64, lib.hipHostMallocMapped))
    ok(lib.hipHostFree(q[0]))
    d = malloc(64)
    ok(lib.hipHostGetFlags(flags, d))
    assert flags[0] == 0
    ok(lib.hipFree(d))
    local = ffi.new("char[8]")
    check(lib.hipHostGetFlags(flags, local), "hipErrorInvalidValue")
    check(lib.hipHostGetFlags(ffi.NULL, local), "hipErrorInvalidValue")


# platform-independent
def test_host_memory_is_usable_from_host_and_device_pointer():
    h = host_malloc(4096, lib.hipHostMallocMapped)
    arr = np.frombuffer(ffi.buffer(h, 4096), dtype=np.uint8)
    arr[:] = 7
    dptr = ffi.new("void **")
    ok(lib.hipHostGetDevicePointer(dptr, h, 0))
    out = np.zeros(4096, dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), dptr[0], 4096, lib.hipMemcpyDefault))
    assert (out == 7).all()
    check(lib.hipHostGetDevicePointer(ffi.NULL, h, 0), "hipErrorInvalidValue")
    ok(lib.hipHostFree(h))


# hipamd-specific statuses (the already-registered status is CUDA's: hipamd
# does not detect a second registration)
@hipamd
@version_sensitive
def test_host_register():
    buf = np.zeros(8192, dtype=np.uint8)
    p = ffi.from_buffer(buf)
    ok(lib.hipHostRegister(p, buf.nbytes, lib.hipHostRegisterDefault))
    check(lib.hipHostRegister(p, buf.nbytes, 0), "hipErrorHostMemoryAlreadyRegistered")
    check(lib.hipHostRegister(ffi.cast("char *", p) + 4096, 64, 0),
          "hipErrorHostMemoryAlreadyRegistered")
    dptr = ffi.new("void **")
    ok(lib.hipHostGetDevicePointer(dptr, p, 0))
    d = malloc(8192)
    ok(lib.hipMemset(d, 3, 8192))
    ok(lib.hipMemcpy(dptr[0], d, 8192, lib.hipMemcpyDeviceToHost))
    assert (buf == 3).all()
    ok(lib.hipHostUnregister(p))
    check(lib.hipHostUnregister(p), "hipErrorHostMemoryNotRegistered")
    check(lib.hipHostUnregister(ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipHostRegister(ffi.NULL, 64, 0), "hipErrorInvalidValue")
    check(lib.hipHostRegister(p, 0, 0), "hipErrorInvalidValue")
    # flags > 15: refused from hipamd 5.4 (ihipHostRegister), registered before
    st = lib.hipHostRegister(p, 64, 0x100)
    check(st, expect({(5, 2): "hipSuccess", (5, 4): "hipErrorInvalidValue"}))
    if st == 0:
        ok(lib.hipHostUnregister(p))
    ok(lib.hipFree(d))


# platform-independent
def test_managed_memory():
    q = ffi.new("void **")
    ok(lib.hipMallocManaged(q, 4096, lib.hipMemAttachGlobal))
    arr = np.frombuffer(ffi.buffer(q[0], 4096), dtype=np.uint32)
    ok(lib.hipMemsetD32(q[0], 0x01020304, 1024))
    ok(lib.hipDeviceSynchronize())
    assert (arr == 0x01020304).all()
    attrs = ffi.new("hipPointerAttribute_t *")
    if BACKEND == "nvidia":
        # platform difference: HIP 5.2's NVIDIA hipPointerGetAttributes has no
        # hipMemoryType for CUDA's managed memory and returns hipErrorInvalidValue
        check(lib.hipPointerGetAttributes(attrs, q[0]), "hipErrorInvalidValue")
    else:
        ok(lib.hipPointerGetAttributes(attrs, q[0]))
        assert attrs.isManaged == 1
    ok(lib.hipFree(q[0]))
    ok(lib.hipMallocManaged(q, 64, lib.hipMemAttachHost))
    ok(lib.hipFree(q[0]))
    check(lib.hipMallocManaged(q, 64, 0), "hipErrorInvalidValue")
    check(lib.hipMallocManaged(q, 64, lib.hipMemAttachSingle), "hipErrorInvalidValue")
    if BACKEND != "nvidia":   # CUDA accepts a zero-size managed allocation
        check(lib.hipMallocManaged(q, 0, lib.hipMemAttachGlobal), "hipErrorInvalidValue")
    check(lib.hipMallocManaged(ffi.NULL, 64, lib.hipMemAttachGlobal), "hipErrorInvalidValue")


# hipamd-specific: hipPointerAttribute_t for each kind of memory
@hipamd
def test_pointer_attributes():
    attrs = ffi.new("hipPointerAttribute_t *")
    d = malloc(4096)
    ok(lib.hipPointerGetAttributes(attrs, ffi.cast("char *", d) + 100))
    assert memory_type(attrs) == lib.hipMemoryTypeDevice and attrs.device == 0
    assert attrs.devicePointer == ffi.cast("char *", d) + 100
    assert attrs.hostPointer == ffi.NULL and attrs.isManaged == 0 and attrs.allocationFlags == 0
    h = host_malloc(4096, lib.hipHostMallocMapped)
    ok(lib.hipPointerGetAttributes(attrs, h))
    assert memory_type(attrs) == lib.hipMemoryTypeHost and attrs.hostPointer == h
    assert attrs.devicePointer == h and attrs.allocationFlags == lib.hipHostMallocMapped
    buf = np.zeros(4096, dtype=np.uint8)
    reg = ffi.from_buffer(buf)
    ok(lib.hipHostRegister(reg, 4096, 0))
    ok(lib.hipPointerGetAttributes(attrs, reg))
    assert memory_type(attrs) == lib.hipMemoryTypeHost
    ok(lib.hipHostUnregister(reg))
    check(lib.hipPointerGetAttributes(attrs, reg), "hipErrorInvalidValue")
    check(lib.hipPointerGetAttributes(attrs, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipPointerGetAttributes(ffi.NULL, d), "hipErrorInvalidValue")
    size = ffi.new("size_t *")
    ok(lib.hipMemPtrGetInfo(d, size))
    assert size[0] == 4096
    base, psize = ffi.new("hipDeviceptr_t *"), ffi.new("size_t *")
    ok(lib.hipMemGetAddressRange(base, psize, ffi.cast("char *", d) + 5))
    assert base[0] == d and psize[0] == 4096
    check(lib.hipMemGetAddressRange(base, psize, reg), "hipErrorInvalidDevicePointer")
    ok(lib.hipFree(d))
    ok(lib.hipHostFree(h))


# hipamd-specific flags of hipExtMallocWithFlags
@hipamd
def test_ext_malloc_with_flags():
    q = ffi.new("void **")
    ok(lib.hipExtMallocWithFlags(q, 256, lib.hipDeviceMallocFinegrained))
    ok(lib.hipFree(q[0]))
    check(lib.hipExtMallocWithFlags(q, 256, 0x40), "hipErrorInvalidValue")
    check(lib.hipExtMallocWithFlags(q, 16, lib.hipMallocSignalMemory), "hipErrorInvalidValue")


# platform-independent: stream-ordered allocation from the default pool; the
# memory goes back when the stream reaches the free
def test_malloc_async_is_stream_ordered():
    s = stream()
    q = ffi.new("void **")
    ok(lib.hipMallocAsync(q, 1 << 20, s))
    ok(lib.hipMemsetAsync(q[0], 9, 1 << 20, s))
    out = np.zeros(16, dtype=np.uint8)
    ok(lib.hipMemcpyAsync(ffi.from_buffer(out), q[0], 16, lib.hipMemcpyDeviceToHost, s))
    log = HostLog()
    log.enqueue(s, "before free", delay=0.05)
    free_before = mem_info()[0]
    ok(lib.hipFreeAsync(q[0], s))
    if BACKEND == "stub":
        assert mem_info()[0] == free_before      # not yet: the stream is busy
    ok(lib.hipStreamSynchronize(s))
    if BACKEND == "stub":
        assert mem_info()[0] == free_before + (1 << 20)
    assert (out == 9).all() and log.entries == ["before free"]
    ok(lib.hipStreamDestroy(s))


# hipamd-specific statuses of the stream-ordered allocator
@hipamd
def test_malloc_async_bad_input():
    q = ffi.new("void **")
    check(lib.hipMallocAsync(q, 0, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipMallocAsync(ffi.NULL, 64, ffi.NULL), "hipErrorInvalidValue")
    s = stream()
    ok(lib.hipStreamDestroy(s))
    check(lib.hipMallocAsync(q, 64, s), "hipErrorInvalidValue")
    check(lib.hipFreeAsync(ffi.NULL, ffi.NULL), "hipErrorInvalidValue")
    local = ffi.new("char[8]")
    check(lib.hipFreeAsync(local, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipMallocAsync(q, 64, ffi.NULL))
    ok(lib.hipFreeAsync(q[0], ffi.NULL))
