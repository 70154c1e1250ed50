"""The pipeline over another ROCm's headers (ROCPY_TEST_HEADERS=<dir with hsa/ and hip/>).

Used with Debian 13's packages (HIP 5.7, HSA 6.1) and with a 6.x/7.x tree
assembled from ROCm/ROCR-Runtime runtime/hsa-runtime/inc, ROCm/HIP include and
ROCm/clr hipamd/include (plus a hip_version.h, which ROCm generates at build
time). Those headers are never committed.
"""
from __future__ import annotations

import os

import pytest

from header_census import census
from module_builder import build_module

TREE = os.environ.get("ROCPY_TEST_HEADERS")
pytestmark = pytest.mark.skipif(
    not TREE, reason="set ROCPY_TEST_HEADERS to a ROCm include tree to run the pipeline over it")


@pytest.fixture(scope="module")
def other(tmp_path_factory):
    return build_module(TREE, str(tmp_path_factory.mktemp("other")), "_rocpy_other")


def test_every_declaration_reachable(other):
    from rocpy._build.preprocess import preprocess
    api, mod = other
    pre = preprocess(api.platform.headers, api.include_dirs, api.platform.defines)
    ref = census(pre.text, pre.macros)
    names = set(dir(mod.lib))
    for kind in ("functions", "enum_constants", "constants"):
        wanted = getattr(ref, kind)
        assert len(wanted & names) / len(wanted) >= 0.99, sorted(wanted - names)


def test_documented_names_work_after_renaming_macros(other):
    api, mod = other
    prop = mod.ffi.new("hipDeviceProp_t *")
    assert mod.lib.hipGetDeviceProperties(prop, 0) == mod.lib.hipErrorNotSupported
    for alias, target in api.consts.function_aliases.items():
        assert hasattr(mod.lib, alias) and target in api.functions
