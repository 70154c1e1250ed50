"""hipPointerGetAttribute / hipDrvPointerGetAttributes (hipamd hip_memory.cpp
ihipPointerGetAttributes; stub: hip_pointer_attr.c).

Expectations from ROCm/hip-tests at rocm-5.7.1 (``catch/unit/memory/
hipPointerGetAttribute.cc``, ``hipDrvPtrGetAttributes.cc``), each cited by
file and line."""
from __future__ import annotations

import pytest
from rocm_versions import expect, version_sensitive

from .helpers import check, device_count, ffi, hipamd, host_malloc, lib, malloc, ok

pytestmark = hipamd

A = lib


def attr(kind, a, ptr):
    v = ffi.new(kind)
    ok(lib.hipPointerGetAttribute(v, a, ptr))
    return v[0]


# hipPointerGetAttribute.cc:61 (MemoryTypes): pitched memory is device
# memory (:76), arrays are hipMemoryTypeArray (:90, :109)
def test_memory_types():
    p, pitch = ffi.new("void **"), ffi.new("size_t *")
    ok(lib.hipMallocPitch(p, pitch, 64, 4))
    assert attr("unsigned *", A.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, p[0]) == lib.hipMemoryTypeDevice
    ok(lib.hipFree(p[0]))
    arr = ffi.new("hipArray_t *")
    d = ffi.new("hipChannelFormatDesc *", lib.hipCreateChannelDesc(8, 0, 0, 0,
                                                                   lib.hipChannelFormatKindSigned))
    ok(lib.hipMallocArray(arr, d, 16, 16, 0))
    assert attr("unsigned *", A.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, arr[0]) == lib.hipMemoryTypeArray
    ok(lib.hipFreeArray(arr[0]))
    e = ffi.new("hipExtent *")
    e.width = e.height = e.depth = 10
    d32 = ffi.new("hipChannelFormatDesc *", lib.hipCreateChannelDesc(32, 0, 0, 0,
                                                                     lib.hipChannelFormatKindFloat))
    ok(lib.hipMalloc3DArray(arr, d32, e[0], 0))
    assert attr("unsigned *", A.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, arr[0]) == lib.hipMemoryTypeArray
    ok(lib.hipFreeArray(arr[0]))
    pinned = host_malloc(64)
    assert attr("unsigned *", A.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, pinned) == lib.hipMemoryTypeHost
    ok(lib.hipHostFree(pinned))


# hipPointerGetAttribute.cc:240 (MappedMem): device and managed memory are
# mapped (:262, :263)
def test_mapped_and_managed():
    d = malloc(256)
    m = ffi.new("void **")
    ok(lib.hipMallocManaged(m, 256, lib.hipMemAttachGlobal))
    assert attr("bool *", A.HIP_POINTER_ATTRIBUTE_MAPPED, d) is True
    assert attr("bool *", A.HIP_POINTER_ATTRIBUTE_MAPPED, m[0]) is True
    assert attr("bool *", A.HIP_POINTER_ATTRIBUTE_IS_MANAGED, m[0]) is True
    assert attr("bool *", A.HIP_POINTER_ATTRIBUTE_IS_MANAGED, d) is False
    ok(lib.hipFree(d))
    ok(lib.hipFree(m[0]))


# hipDrvPtrGetAttributes.cc:137-:174: device pointer, type, ordinal, range
# of device memory; host pointer NULL for device memory, itself for pinned
def test_driver_attributes():
    n = 1024
    d = malloc(n)
    attrs = ffi.new("hipPointer_attribute[5]", [A.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER,
                                                 A.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                                 A.HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                                 A.HIP_POINTER_ATTRIBUTE_RANGE_SIZE,
                                                 A.HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR])
    dev_ptr, mtype, ordinal = ffi.new("void **"), ffi.new("unsigned *"), ffi.new("int *")
    size, start = ffi.new("unsigned *"), ffi.new("void **")
    data = ffi.new("void *[5]", [dev_ptr, mtype, ordinal, size, start])
    inner = ffi.cast("char *", d) + 100
    ok(lib.hipDrvPointerGetAttributes(5, attrs, data, inner))
    assert dev_ptr[0] == inner                                  # :137
    assert mtype[0] == lib.hipMemoryTypeDevice                  # :141
    assert ordinal[0] == 0                                      # :143
    assert size[0] == n                                         # :144
    assert start[0] == d                                        # :145
    assert attr("void **", A.HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, d) == d
    host = ffi.new("void **")
    check(lib.hipPointerGetAttribute(host, A.HIP_POINTER_ATTRIBUTE_HOST_POINTER, d),
          "hipErrorInvalidValue")
    assert host[0] == ffi.NULL                                  # :159
    pinned = host_malloc(64)
    assert attr("void **", A.HIP_POINTER_ATTRIBUTE_HOST_POINTER, pinned) == pinned   # :173
    ok(lib.hipHostFree(pinned))
    ok(lib.hipFree(d))


# hipamd's answers for what it does not support, and for bad input
@version_sensitive
def test_pointer_attribute_negative():
    d = malloc(64)
    v = ffi.new("uint64_t *")
    check(lib.hipPointerGetAttribute(ffi.NULL, A.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, d),
          "hipErrorInvalidValue")
    check(lib.hipPointerGetAttribute(v, A.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, ffi.NULL),
          "hipErrorInvalidValue")
    for unsupported in ("CONTEXT", "P2P_TOKENS", "IS_LEGACY_HIP_IPC_CAPABLE",
                        "ALLOWED_HANDLE_TYPES", "IS_GPU_DIRECT_RDMA_CAPABLE", "MEMPOOL_HANDLE"):
        check(lib.hipPointerGetAttribute(v, getattr(A, "HIP_POINTER_ATTRIBUTE_" + unsupported), d),
              "hipErrorNotSupported")
    check(lib.hipPointerGetAttribute(v, ffi.cast("hipPointer_attribute", 999), d),
          "hipErrorInvalidValue")
    local = ffi.new("char[16]")
    ordinal = ffi.new("int *")
    check(lib.hipPointerGetAttribute(ordinal, A.HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, local),
          "hipErrorInvalidValue")
    assert ordinal[0] == -2                                     # hipamd's default, as CUDA's
    mt = ffi.new("unsigned *")
    check(lib.hipPointerGetAttribute(mt, A.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, local),
          "hipErrorInvalidValue")
    # always true until 6.1; 6.2 reads the stored flag, false until set
    # (STUB_RULE_POINTER_SYNC_MEMOPS_STORED; test_pointer_sync_memops.py)
    assert attr("bool *", A.HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, d) is \
        expect({(5, 2): True, (6, 2): False})
    # hipDrvPointerGetAttributes: null arguments; otherwise success, every
    # attribute written (defaults where it fails)
    attrs = ffi.new("hipPointer_attribute[1]", [A.HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL])
    data = ffi.new("void *[1]", [ordinal])
    check(lib.hipDrvPointerGetAttributes(0, attrs, data, d), "hipErrorInvalidValue")
    check(lib.hipDrvPointerGetAttributes(1, ffi.NULL, data, d), "hipErrorInvalidValue")
    check(lib.hipDrvPointerGetAttributes(1, attrs, ffi.NULL, d), "hipErrorInvalidValue")
    check(lib.hipDrvPointerGetAttributes(1, attrs, data, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipDrvPointerGetAttributes(1, attrs, data, local))
    assert ordinal[0] == -2
    ok(lib.hipFree(d))


# hipPointerGetAttribute.cc:160: memory of device 0 seen from device 1
@pytest.mark.multidevice
def test_other_device_memory_ordinal():
    d = malloc(64)
    ok(lib.hipSetDevice(1))
    assert attr("unsigned *", A.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, d) == lib.hipMemoryTypeDevice
    assert attr("int *", A.HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d) == 0      # :180
    ok(lib.hipSetDevice(0))
    ok(lib.hipFree(d))
    assert device_count() >= 2
