"""``rocpy bench`` families run only when named (``kernargs``, ``peer``) and the
benchmark scripts that are thin wrappers over them.  No timing is asserted."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocpy.bench.cases import EXTRA_FAMILIES, FAMILIES

from .conftest import BACKEND

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--repeat", "3", "--warmup", "0", "--no-progress", "--plain"]


def _bench(cli, tmp_path, *argv):
    path = tmp_path / "r.json"
    status, out, err = cli(["bench", *argv, *TINY, "--json", str(path)])
    return status, out, err, (json.loads(path.read_text()) if path.exists() else None)


def test_extra_families_run_only_when_named():
    assert not set(EXTRA_FAMILIES) & set(FAMILIES)
    from rocpy._cli.bench import _families
    assert _families("kernargs,copy") == ("copy", "kernargs")
    with pytest.raises(argparse.ArgumentTypeError, match="choose from copy, dispatch, hsa_dispatch, overhead, "
                                        "kernargs, peer, hsa_submit"):
        _families("warp")


def test_kernargs_family(cli, tmp_path):
    status, out, err, data = _bench(cli, tmp_path, "--only", "kernargs")
    assert status == 0, err
    cases = data["cases"]
    assert {c["family"] for c in cases} == {"kernargs"} and data["skipped"] == []
    assert [c["name"] for c in cases] == ["pack, 3 ints + int", "pack, 3 buffers + np.int32",
                                          "pack_into bytearray"]
    for c in cases:
        assert c["reference"] == "struct.pack" and c["kind"] == "latency"
        assert {"struct.pack", "rocpy", "generic"} <= set(c["variants"])
    assert "kernargs" in out and "struct.pack *" in out


@pytest.mark.skipif(BACKEND != "stub", reason="the stub's device count is set by the test")
def test_peer_family_skips_with_one_device_and_runs_with_two(cli, tmp_path):
    from rocpy import hip
    if hip.device_count() < 2:
        status, _, err, data = _bench(cli, tmp_path, "--only", "peer")
        assert status == 1, err                 # nothing could run: said, and the JSON written
        assert data["cases"] == []
        assert data["skipped"][0]["family"] == "peer"
        assert "two devices" in data["skipped"][0]["reason"]
    path = tmp_path / "peer.json"
    env = dict(os.environ, ROCPY_BACKEND="stub")
    env.pop("ROCPY_STUB_DEVICES", None)     # the wrapper asks for two
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_peer.py"),
                           "--size-max", "8K", *TINY, "--json", str(path)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(path.read_text())
    assert data["skipped"] == []
    assert {(c["params"]["direction"], c["params"]["memory"]) for c in data["cases"]} == {
        ("dev0->dev1", "peer"), ("dev1->dev0", "peer"), ("bidirectional", "peer")}
    assert all(set(c["variants"]) == {"raw", "rocpy"} for c in data["cases"])


@pytest.mark.skipif(BACKEND == "nvidia", reason="there is no HSA on the nvidia backend")
def test_hsa_submit_family(cli, tmp_path):
    status, out, err, data = _bench(cli, tmp_path, "--only", "hsa_submit")
    assert status == 0, err
    assert data["skipped"] == []
    cases = {c["name"]: c for c in data["cases"]}
    assert set(cases) == {"dispatch, empty kernel", "dispatch, vadd (4 args)",
                          "batch of 100 vadd"}
    assert all(c["reference"] == "C" and c["family"] == "hsa_submit" for c in cases.values())
    assert set(cases["dispatch, vadd (4 args)"]["variants"]) == {"C", "cffi", "rocpy",
                                                               "rocpy+signal"}
    assert set(cases["batch of 100 vadd"]["variants"]) == {"C", "dispatch_many(list)",
                                                          "dispatch_many(count)"}
    assert "HSA submit" in out


def test_hsa_submit_refuses_more_repetitions_than_the_held_queue_takes(cli, tmp_path):
    from rocpy import _backend
    if not _backend.current().has_hsa:
        pytest.skip("there is no HSA runtime on this backend")
    path = tmp_path / "r.json"
    status, _, err = cli(["bench", "--only", "hsa_submit", "--repeat", "100000", "--warmup", "0",
                          "--no-progress", "--plain", "--json", str(path)])
    assert status == 1, err
    skipped = json.loads(path.read_text())["skipped"]
    assert skipped[0]["family"] == "hsa_submit" and "pass --repeat" in skipped[0]["reason"]
