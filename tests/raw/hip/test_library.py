"""Libraries (hip_library.c; clr hipamd/src/hip_library.cpp): lazily built
code objects, their kernels, a kernel's library and name.  The 7.2 headers
declare them (tools/other_headers.sh); earlier builds skip."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import BACKEND, check, ffi, hipamd, lib, malloc, ok, requires
from .test_module import arg, params

pytestmark = [pytest.mark.skipif(BACKEND == "nvidia", reason="AMD code objects"), hipamd,
              requires("hipLibraryLoadData", "hipLibraryUnload")]


def load_data(image, njit=0):
    lib_ = ffi.new("hipLibrary_t *")
    status = lib.hipLibraryLoadData(lib_, image, ffi.NULL, ffi.NULL, njit, ffi.NULL, ffi.NULL, 0)
    return status, lib_[0]


def load_file(path, njit=0):
    lib_ = ffi.new("hipLibrary_t *")
    name = path.encode() if isinstance(path, str) else path
    status = lib.hipLibraryLoadFromFile(lib_, name, ffi.NULL, ffi.NULL, njit, ffi.NULL, ffi.NULL, 0)
    return status, lib_[0]


def kernel(library, name):
    k = ffi.new("hipKernel_t *")
    ok(lib.hipLibraryGetKernel(k, library, name.encode()))
    return k[0]


def count(library):
    n = ffi.new("unsigned int *")
    ok(lib.hipLibraryGetKernelCount(n, library))
    return n[0]


@requires("hipLibraryGetKernel")
def test_a_library_kernel_launches(hip_kernel):
    """A kernel is its module's function: hipModuleLaunchKernel runs it."""
    data = open(hip_kernel("vadd"), "rb").read()
    image = ffi.new("char[]", data)
    st, library = load_data(image)
    ok(st)
    k = kernel(library, "vadd")
    n = 256
    a, b, c = malloc(n * 4), malloc(n * 4), malloc(n * 4)
    ok(lib.hipMemsetD32(a, 0x3F800000, n))
    ok(lib.hipMemsetD32(b, 0x40000000, n))
    p, keep = params(arg("void *", a), arg("void *", b), arg("void *", c), arg("int", n))
    ok(lib.hipModuleLaunchKernel(ffi.cast("hipFunction_t", k), 1, 1, 1, n, 1, 1, 0, ffi.NULL, p, ffi.NULL))
    out = np.zeros(n, dtype=np.float32)
    ok(lib.hipMemcpy(ffi.from_buffer(out), c, n * 4, lib.hipMemcpyDeviceToHost))
    assert (out == 3.0).all()
    for d in (a, b, c):
        ok(lib.hipFree(d))
    ok(lib.hipLibraryUnload(library))


@requires("hipLibraryGetKernelCount", "hipLibraryLoadFromFile")
def test_count_from_file_and_data(hip_kernel):
    path = hip_kernel("args")
    st, from_file = load_file(path)
    ok(st)
    assert count(from_file) == 3
    image = ffi.new("char[]", open(path, "rb").read())
    st, from_data = load_data(image)
    ok(st)
    assert count(from_data) == 3
    ok(lib.hipLibraryUnload(from_file))
    ok(lib.hipLibraryUnload(from_data))


@requires("hipLibraryGetKernelCount")
def test_bytes_that_are_no_code_object_fail_at_the_first_query():
    """The load only records the image (LibraryContainer is built lazily): the
    first query answers the module loader's status."""
    junk = ffi.new("char[64]", b"not a code object")
    st, library = load_data(junk)
    ok(st)
    n = ffi.new("unsigned int *")
    check(lib.hipLibraryGetKernelCount(n, library), "hipErrorInvalidKernelFile")
    ok(lib.hipLibraryUnload(library))


@requires("hipLibraryLoadFromFile")
def test_load_bad_arguments(hip_kernel, tmp_path):
    image = ffi.new("char[]", open(hip_kernel("vadd"), "rb").read())
    lib_ = ffi.new("hipLibrary_t *")
    check(lib.hipLibraryLoadData(ffi.NULL, image, ffi.NULL, ffi.NULL, 0, ffi.NULL, ffi.NULL, 0),
          "hipErrorInvalidValue")
    check(load_data(ffi.NULL)[0], "hipErrorInvalidValue")
    check(load_data(image, njit=1)[0], "hipErrorInvalidValue")         # no JIT options
    check(lib.hipLibraryLoadFromFile(ffi.NULL, hip_kernel("vadd").encode(), ffi.NULL, ffi.NULL, 0,
                                     ffi.NULL, ffi.NULL, 0), "hipErrorInvalidValue")
    check(load_file(str(tmp_path / "absent.co"))[0], "hipErrorInvalidValue")
    check(load_file(ffi.NULL)[0], "hipErrorInvalidValue")
    check(load_file(hip_kernel("vadd"), njit=2)[0], "hipErrorInvalidValue")
    check(lib.hipLibraryUnload(ffi.NULL), "hipErrorInvalidHandle")
    empty = tmp_path / "empty.co"
    empty.write_bytes(b"")
    st, library = load_file(str(empty))
    ok(st)                                                            # it exists
    n = ffi.new("unsigned int *")
    check(lib.hipLibraryGetKernelCount(n, library), "hipErrorInvalidKernelFile")
    ok(lib.hipLibraryUnload(library))
    check(lib.hipLibraryUnload(library), "hipErrorInvalidHandle")   # twice
    del lib_


@requires("hipLibraryGetKernel", "hipLibraryGetKernelCount")
def test_query_bad_arguments(hip_kernel):
    image = ffi.new("char[]", open(hip_kernel("vadd"), "rb").read())
    st, library = load_data(image)
    ok(st)
    k, n = ffi.new("hipKernel_t *"), ffi.new("unsigned int *")
    check(lib.hipLibraryGetKernel(k, library, b"nope"), "hipErrorNotFound")
    check(lib.hipLibraryGetKernel(k, library, b""), "hipErrorNotFound")
    check(lib.hipLibraryGetKernel(ffi.NULL, library, b"vadd"), "hipErrorInvalidValue")
    check(lib.hipLibraryGetKernel(k, library, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipLibraryGetKernel(k, ffi.NULL, b"vadd"), "hipErrorInvalidValue")
    check(lib.hipLibraryGetKernelCount(ffi.NULL, library), "hipErrorInvalidValue")
    check(lib.hipLibraryGetKernelCount(n, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipLibraryUnload(library))


@requires("hipLibraryEnumerateKernels", "hipKernelGetName", "hipKernelGetLibrary")
def test_enumerate_names_and_owner(hip_kernel):
    image = ffi.new("char[]", open(hip_kernel("args"), "rb").read())
    st, library = load_data(image)
    ok(st)
    ks = ffi.new("hipKernel_t[4]")
    ok(lib.hipLibraryEnumerateKernels(ks, 4, library))                 # more room than kernels
    assert ks[3] == ffi.NULL
    name = ffi.new("const char **")
    names = set()
    for i in range(3):
        ok(lib.hipKernelGetName(name, ks[i]))
        names.add(ffi.string(name[0]).decode())
        owner = ffi.new("hipLibrary_t *")
        ok(lib.hipKernelGetLibrary(owner, ks[i]))
        assert owner[0] == library
    assert names == {"scalars", "by_struct", "dyn_lds"}
    assert kernel(library, "dyn_lds") in [ks[i] for i in range(3)]       # the same handle
    two = ffi.new("hipKernel_t[2]")
    ok(lib.hipLibraryEnumerateKernels(two, 1, library))                 # fewer: the first
    assert two[0] == ks[0] and two[1] == ffi.NULL
    ok(lib.hipLibraryEnumerateKernels(two, 0, library))
    check(lib.hipLibraryEnumerateKernels(ffi.NULL, 1, library), "hipErrorInvalidValue")
    check(lib.hipLibraryEnumerateKernels(two, 1, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipKernelGetName(ffi.NULL, ks[0]), "hipErrorInvalidValue")
    check(lib.hipKernelGetName(name, ffi.NULL), "hipErrorInvalidValue")
    owner = ffi.new("hipLibrary_t *")
    check(lib.hipKernelGetLibrary(ffi.NULL, ks[0]), "hipErrorInvalidValue")
    check(lib.hipKernelGetLibrary(owner, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipLibraryUnload(library))
    # an unloaded library's kernels belong to nothing
    check(lib.hipKernelGetLibrary(owner, ks[0]), "hipErrorInvalidHandle")
    check(lib.hipKernelGetName(name, ks[0]), "hipErrorInvalidHandle")


@requires("hipKernelGetLibrary", "hipModuleGetFunction")
def test_a_module_function_is_no_library_kernel(hip_kernel):
    """Only kernels a library handed out are registered to one
    (PlatformState::GetFunctionLibrary)."""
    m = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoad(m, hip_kernel("vadd").encode()))
    f = ffi.new("hipFunction_t *")
    ok(lib.hipModuleGetFunction(f, m[0], b"vadd"))
    owner = ffi.new("hipLibrary_t *")
    check(lib.hipKernelGetLibrary(owner, ffi.cast("hipKernel_t", f[0])), "hipErrorInvalidHandle")
    ok(lib.hipModuleUnload(m[0]))
