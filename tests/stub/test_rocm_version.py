"""ROCPY_STUB_ROCM: which release the stub emulates, read once (stub_version.c)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import rocpy

pytestmark = pytest.mark.skipif(not rocpy.backend().is_stub, reason="the stub's release switch")

PROBE = ("from rocpy import stub; from rocpy import hip; v = hip.ffi.new('int *'); "
         "hip.lib.hipRuntimeGetVersion(v); "
         "print(stub.rocm_version(), stub.built_version(), v[0], "
         "sorted(r.name for r in stub.rules() if r.active))")


def probe(value: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ROCPY_STUB_ROCM"}
    if value is not None:
        env["ROCPY_STUB_ROCM"] = value
    env["ROCPY_BACKEND"] = "stub"
    return subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env=env, timeout=120)


def test_default_is_the_headers_release():
    from rocpy import hip, stub
    out = probe(None)
    assert out.returncode == 0, out.stderr
    built = stub.built_version()
    assert out.stdout.split(")")[0] + ")" == str(built)
    assert f" {hip.lib.HIP_VERSION} " in out.stdout


@pytest.mark.parametrize("value,release,hip_version", [
    ("5.7", (5, 7), 50700000), ("6.2", (6, 2), 60200000), ("7.0", (7, 0), 70000000),
    ("6.2.1", (6, 2), 60200000), ("5.0", (5, 0), 50000000), ("5.4", (5, 4), 50400000)])
def test_release_from_the_environment(value, release, hip_version):
    from rocpy import stub
    out = probe(value)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"{release} ")
    if release == stub.built_version():   # the headers' own release: their HIP_VERSION, patch and all
        from rocpy import hip
        hip_version = hip.lib.HIP_VERSION
    assert f" {hip_version} " in out.stdout
    # exactly the rules whose releases bracket the emulated one are in force
    expected = sorted(r.name for r in stub.rules()
                      if r.since <= release and (r.until is None or release < r.until))
    assert out.stdout.strip().endswith(str(expected))


@pytest.mark.parametrize("value", ["7", "x7.0", "6.", "4.5", "8.0", "6.2a", "6.2.", "6,2", "6.100"])
def test_a_release_the_stub_does_not_emulate_is_refused(value):
    out = probe(value)
    assert out.returncode != 0
    assert f"ROCPY_STUB_ROCM='{value}' is not a ROCm release the stub emulates" in out.stderr


def test_rules_name_release_and_upstream():
    from rocpy import stub
    rules = stub.rules()
    assert len(rules) >= 10
    for r in rules:
        assert r.name and r.upstream and (5, 0) <= r.since <= (7, 99)
        assert r.until is None or r.until > r.since
        now = stub.rocm_version()
        assert r.active == (r.since <= now and (r.until is None or now < r.until))
    assert {r.since for r in rules} >= {(5, 3), (5, 5), (5, 6), (5, 7), (6, 1), (6, 4), (7, 0)}


def test_rocm_version_needs_the_stub(monkeypatch):
    from rocpy import _backend, stub

    class Real:
        name = "amd"
    monkeypatch.setattr(_backend, "current", lambda: Real())
    with pytest.raises(RuntimeError, match="the backend is 'amd'"):
        stub.rocm_version()


# HSA_AMD_INTERFACE_VERSION_MINOR -> the releases whose hsa_ext_amd.h has it
# (ROCR-Runtime tags rocm-5.0.0 ... rocm-6.2.4, rocm-rel-6.3.0.1; rocm-systems
# release/rocm-rel-7.0; the 6.4 and 7.2 trees from ROCm's sources)
INTERFACE_MINOR = {0: ((5, 0), (5, 5)), 1: ((5, 6), (5, 6)), 3: ((5, 7), (5, 7)),
                   4: ((6, 0), (6, 1)), 6: ((6, 2), (6, 3)), 7: ((6, 4), (6, 4)),
                   11: ((7, 0), (7, 0)), 15: ((7, 2), (7, 2))}


def test_the_hsa_half_follows_the_hsa_headers():
    from rocpy import hsa, stub
    minor = getattr(hsa.lib, "HSA_AMD_INTERFACE_VERSION_MINOR", 0)
    if minor not in INTERFACE_MINOR:
        pytest.skip(f"HSA interface minor {minor}: not in the table of known releases")
    first, last = INTERFACE_MINOR[minor]
    hip_release = stub.built_version()
    # headers of one ROCm: HIP's release; a mixed pair (Debian 13: HIP 5.7 with
    # ROCr 6.1's headers, minor 4): the newest release with that minor
    assert stub.built_hsa_version() == (hip_release if first <= hip_release <= last else last)
    if "ROCPY_STUB_ROCM" not in os.environ:
        assert stub.hsa_version() == stub.built_hsa_version()
        assert stub.rocm_version() == hip_release


def test_rocpy_stub_rocm_sets_both_halves():
    env = {k: v for k, v in os.environ.items() if k != "ROCPY_STUB_ROCM"}
    env.update(ROCPY_STUB_ROCM="6.2", ROCPY_BACKEND="stub")
    out = subprocess.run([sys.executable, "-c", "from rocpy import stub; "
                          "print(stub.rocm_version(), stub.hsa_version())"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(6,", "2)", "(6,", "2)"]
