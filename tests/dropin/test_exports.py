"""The drop-in libraries export what the real ones do, under the same version
nodes, plus the shared core under the private node; the HIP library finds
the HSA one through ``$ORIGIN``."""
from __future__ import annotations

import glob
import os

import pytest
from elftools.elf.elffile import ELFFile

from rocpy._build import dropin
from rocpy._build.api import describe

from .helpers import libdir


@pytest.fixture(scope="module")
def api():
    return describe("amd")


def dynamic(path: str) -> dict[str, list[str]]:
    with open(path, "rb") as f:
        section = ELFFile(f).get_section_by_name(".dynamic")
        out: dict[str, list[str]] = {}
        for tag in section.iter_tags():
            for key, attr in (("DT_NEEDED", "needed"), ("DT_RUNPATH", "runpath"),
                              ("DT_RPATH", "rpath"), ("DT_SONAME", "soname")):
                if tag.entry.d_tag == key:
                    out.setdefault(key, []).append(getattr(tag, attr))
        return out


def hip_library() -> str:
    return next(p for p in glob.glob(os.path.join(libdir(), "libamdhip64.so.*")) if not os.path.islink(p))


def test_names_and_links():
    hsa = os.path.join(libdir(), "libhsa-runtime64.so.1")
    hip = hip_library()
    assert dynamic(hsa)["DT_SONAME"] == ["libhsa-runtime64.so.1"]
    assert "DT_RUNPATH" not in dynamic(hsa) and "DT_RPATH" not in dynamic(hsa)
    d = dynamic(hip)
    assert d["DT_SONAME"] == [os.path.basename(hip)]
    assert d["DT_RUNPATH"] == ["$ORIGIN"] and "DT_RPATH" not in d
    assert "libhsa-runtime64.so.1" in d["DT_NEEDED"]
    # the unversioned names, for bindings that dlopen them (hip-python)
    assert os.readlink(os.path.join(libdir(), "libamdhip64.so")) == os.path.basename(hip)
    assert os.readlink(os.path.join(libdir(), "libhsa-runtime64.so")) == "libhsa-runtime64.so.1"


@pytest.mark.parametrize("key", ["hsa", "hip"])
def test_same_symbols_and_nodes_as_the_real_library(api, key):
    real_path = api.install.libraries.get(key)
    if not real_path:
        pytest.skip(f"no installed real {key} library to compare with")
    ours_path = os.path.join(libdir(), "libhsa-runtime64.so.1") if key == "hsa" else hip_library()
    real = dropin.real_exports(api.install.libraries, key, os.path.basename(ours_path))
    if real is None:
        pytest.skip("the installed real library is another major version")
    ours = dropin.read_exports(ours_path)
    # the same nodes, with the same parents, in the same order (ours adds the private one)
    assert [n for n in ours.nodes if n[0] != dropin.PRIVATE_NODE] == real.nodes
    # everything we export that the real library has is under the real node
    for name, node in ours.symbols.items():
        if node == dropin.PRIVATE_NODE:
            assert name.startswith(("stub_", "rocpy_stub_")), name
            continue
        assert real.symbols.get(name) == node, name
    # every function the headers declare and the real library exports, we export too
    declared = set(api.library_functions())
    lacking = sorted(n for n in real.symbols if n in declared and n not in ours.symbols)
    assert lacking == []


def test_core_under_the_private_node():
    hsa = dropin.read_exports(os.path.join(libdir(), "libhsa-runtime64.so.1"))
    private = {n for n, node in hsa.symbols.items() if node == dropin.PRIVATE_NODE}
    assert {"stub_device", "stub_kernel_lookup", "rocpy_stub_register_kernel"} <= private
    hip = dropin.read_exports(hip_library())
    assert not any(node == dropin.PRIVATE_NODE for node in hip.symbols.values())


def test_version_script_without_the_real_library():
    lib = dropin.Library("hip", "libamdhip64.so.5", "hip_5.2")
    text = dropin.version_script(lib, {"hipMalloc", "hipFree", "stub_x", "helper"},
                                 {"hipMalloc", "hipFree", "hipUndefinedHere"}, None, {"stub_x"})
    assert text == ("hip_5.2 {\n  global:\n    hipFree;\n    hipMalloc;\n};\n"
                    "ROCPY_STUB_PRIVATE {\n  global:\n    stub_x;\n  local: *;\n};\n")


def test_header_version_and_split():
    assert dropin.header_version({"HIP_VERSION_MAJOR": "5", "HIP_VERSION_MINOR": "2"}) == (5, 2)
    assert [lib.soname for lib in dropin.libraries((6, 2), True)] == \
        ["libhsa-runtime64.so.1", "libamdhip64.so.6", "libhiprtc.so.6"]
    assert dropin.owner("rocpy/_native/stub/hip_rtc.c", True) == "hiprtc"
    assert dropin.owner("rocpy/_native/stub/hip_rtc.c", False) == "hip"
    assert dropin.owner("rocpy/_native/stub/stub_kernel.c", True) == "hsa"
    assert dropin.owner("build/rocpy-generated/stub_defaults_hip.c", True) == "hip"
    assert dropin.owner("build/rocpy-generated/stub_defaults_hsa.c", True) == "hsa"
    assert dropin.owner("build/rocpy-generated/stub_defaults_hiprtc.c", False) == "hip"
    assert dropin.owner("build/rocpy-generated/stub_defaults_hiprtc.c", True) == "hiprtc"
