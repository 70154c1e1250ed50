"""Declared is not exported: placeholders for what the library lacks."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from built_modules import built_module

amd = built_module("amd")
pytestmark = pytest.mark.skipif(amd is None, reason="the amd backend is not built here")


def _info():
    return json.loads(amd.ffi.string(amd.lib.rocpy_build_info()).decode())


def _nm_exports(path: str) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


@pytest.mark.skipif(shutil.which("nm") is None, reason="binutils' nm is not installed")
def test_missing_list_is_what_nm_says_the_libraries_lack(installed_api):
    info = _info()
    exported = set()
    for path in info["libraries"].values():
        exported |= _nm_exports(path)
    expected = sorted(n for n in installed_api.library_functions() if n not in exported)
    assert info["missing"] == expected


def test_placeholders_return_the_generic_failure():
    info = _info()
    lib, ffi = amd.lib, amd.ffi
    for name in info["missing"]:
        if name == "hipLaunchHostFunc":
            assert lib.hipLaunchHostFunc(ffi.NULL, ffi.NULL, ffi.NULL) == lib.hipErrorNotSupported


def test_debian_52_lacks_hiplaunchhostfunc():
    if amd.lib.HIP_VERSION // 100000 != 502:
        pytest.skip(f"only HIP 5.2 is known to lack it (this is {amd.lib.HIP_VERSION})")
    assert {"hipLaunchHostFunc", "hipGraphKernelNodeGetAttribute",
            "hipGraphKernelNodeSetAttribute", "hipTexRefGetMipMappedArray"} <= set(_info()["missing"])


def test_real_library_reports_no_gpu_with_real_names():
    lib, ffi = amd.lib, amd.ffi
    status = lib.hsa_init()
    if status == lib.HSA_STATUS_SUCCESS:
        lib.hsa_shut_down()
        pytest.skip("this machine has an AMD GPU")
    assert ffi.string(ffi.cast("hsa_status_t", status)) == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"
    count = ffi.new("int *")
    err = lib.hipGetDeviceCount(count)
    assert ffi.string(ffi.cast("hipError_t", err)) == "hipErrorNoDevice"
    assert ffi.string(lib.hipGetErrorName(err)) == b"hipErrorNoDevice"
