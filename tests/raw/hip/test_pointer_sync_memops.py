"""hipPointerSetAttribute (5.5+ headers) and HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS
(hipamd hip_memory.cpp hipPointerSetAttribute / ihipPointerSetAttribute /
ihipPointerGetAttributes; stub: rocpy/_native/stub/hip_pointer_attr.c).
Until 6.1 the attribute always reads true; from 6.2 it reads what was set
(default false) and only 0 or 1 may be set (STUB_RULE_POINTER_SYNC_MEMOPS_*)."""
from __future__ import annotations

import pytest
from rocm_versions import expect, version_sensitive

from .helpers import check, ffi, hipamd, lib, malloc, ok

pytestmark = [hipamd, version_sensitive,
              pytest.mark.skipif(not hasattr(lib, "hipPointerSetAttribute"),
                                 reason="hipPointerSetAttribute: 5.5+ headers")]
SYNC = lib.HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS if hasattr(lib, "hipPointerSetAttribute") else 0


def read(ptr):
    v = ffi.new("bool *")
    status = lib.hipPointerGetAttribute(v, SYNC, ptr)
    return status, v[0]


def test_set_is_read_back_where_the_release_stores_it():
    d = malloc(64)
    ok(read(d)[0])
    assert read(d)[1] is expect({(5, 2): True, (6, 2): False})
    one = ffi.new("unsigned int *", 1)
    ok(lib.hipPointerSetAttribute(one, SYNC, d))
    interior = ffi.cast("char *", d) + 8                       # the allocation holding it
    assert read(interior)[1] is True
    zero = ffi.new("unsigned int *", 0)
    ok(lib.hipPointerSetAttribute(zero, SYNC, interior))
    assert read(d)[1] is expect({(5, 2): True, (6, 2): False})
    ok(lib.hipFree(d))


def test_bad_arguments():
    d = malloc(16)
    v = ffi.new("unsigned int *", 0)
    check(lib.hipPointerSetAttribute(ffi.NULL, SYNC, d), "hipErrorInvalidValue")
    check(lib.hipPointerSetAttribute(v, SYNC, ffi.NULL), "hipErrorInvalidValue")
    for other in (lib.HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, 0xFFFFFFFF):
        check(lib.hipPointerSetAttribute(v, ffi.cast("hipPointer_attribute", other), d),
              "hipErrorInvalidValue")
    host = ffi.new("int *")
    check(lib.hipPointerSetAttribute(v, SYNC, host), "hipErrorInvalidDevicePointer")
    two = ffi.new("unsigned int *", 2)
    check(lib.hipPointerSetAttribute(two, SYNC, d),
          expect({(5, 2): "hipSuccess", (6, 2): "hipErrorInvalidValue"}))
    # an unknown pointer's attribute: hipamd 6.2 writes false and fails
    status, value = read(host)
    check(status, expect({(5, 2): "hipSuccess", (6, 2): "hipErrorInvalidValue"}))
    assert value is expect({(5, 2): True, (6, 2): False})
    ok(lib.hipFree(d))
    check(lib.hipPointerSetAttribute(v, SYNC, d), "hipErrorInvalidDevicePointer")
