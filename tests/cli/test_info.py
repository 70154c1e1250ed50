"""``rocpy info``: JSON schema, text report, argument errors, failures kept local."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from .conftest import BACKEND, ROOT

stub_only = pytest.mark.skipif(BACKEND != "stub", reason=f"checks the stub's figures; "
                                                           f"the backend is {BACKEND}")


def _info_json(cli):
    status, out, err = cli(["info", "--json"])
    assert status == 0, err
    return json.loads(out)


def test_json_schema(cli):
    data = _info_json(cli)
    assert data["schema"] == "rocpy.info/1"
    assert set(data) >= {"host", "backend", "simulation", "versions", "hip", "hsa", "errors"}
    b = data["backend"]
    assert isinstance(b["name"], str) and b["name"] == BACKEND
    assert isinstance(b["reason"], str) and b["reason"]
    assert isinstance(b["tried"], dict) and BACKEND in b["tried"]
    assert isinstance(b["simulation"], bool) and data["simulation"] is b["simulation"]
    v = data["versions"]
    assert isinstance(v["hip_runtime"], str) and v["hip_runtime"][0].isdigit()
    assert isinstance(v["hip_runtime_number"], int)
    hip = data["hip"]
    assert hip["device_count"] == len(hip["devices"]) >= 1
    for d in hip["devices"]:
        assert isinstance(d["name"], str) and d["name"]
        assert isinstance(d["target_id"], str) and d["target_id"]
        for key in ("compute_units", "wavefront_size", "total_memory", "max_threads_per_block",
                    "clock_mhz"):
            assert isinstance(d[key], int) and d[key] > 0, key
        assert len(d["max_grid_dims"]) == 3
    assert len(hip["peer_access"]) == hip["device_count"]
    assert all(len(row) == hip["device_count"] for row in hip["peer_access"])
    assert isinstance(data["errors"], list)
    json.dumps(data)    # everything is plain JSON


@stub_only
def test_json_stub_is_a_simulation_with_hsa_agents_and_pools(cli):
    data = _info_json(cli)
    assert data["simulation"] is True and data["backend"]["simulation"] is True
    assert data["errors"] == []
    hsa = data["hsa"]
    assert hsa["available"] is True
    assert hsa["system"]["version"] == "1.1"
    assert data["versions"]["hsa"] == "1.1"
    from rocpy import stub      # the releases the two halves emulate (they may differ)
    assert data["versions"]["stub_rocm"] == {"hip": "%d.%d" % stub.rocm_version(),
                                             "hsa": "%d.%d" % stub.hsa_version()}
    types = [a["type"] for a in hsa["agents"]]
    assert "cpu" in types and "gpu" in types
    gpu = next(a for a in hsa["agents"] if a["type"] == "gpu")
    assert gpu["target"] == data["hip"]["devices"][0]["target_id"]
    assert gpu["wavefront_size"] == 64 and gpu["queue_max_size"] >= gpu["queue_min_size"] > 0
    assert gpu["features"] == ["kernel_dispatch"]
    pools = gpu["pools"]
    assert pools and all(isinstance(p["size"], int) for p in pools)
    globals_ = [p for p in pools if p["segment"] == "global"]
    assert globals_ and all(p["granule"] > 0 and p["allocatable"] for p in globals_)
    # the CPU agent reaches GPU memory only once granted
    assert {p["access"]["0"]["access"] for p in globals_} == {"disallowed_by_default"}


def test_text_report(cli):
    status, out, err = cli(["info", "--plain"])
    assert status == 0 and err == ""
    assert f"backend {BACKEND}" in out
    assert "HIP devices:" in out and "compute units" in out and "target ID" in out
    if BACKEND == "stub":
        assert "CPU SIMULATION" in out
        assert "HSA agents: 2" in out and "Memory pools of agent 1" in out
        assert "granule" in out


def test_argument_error(cli):
    status, _, err = cli(["info", "--bogus"])
    assert status == 2
    assert "unrecognized arguments: --bogus" in err


def test_a_value_that_cannot_be_read_is_reported_not_fatal(cli, monkeypatch):
    from rocpy import hsa
    if BACKEND == "nvidia":
        pytest.skip("no HSA on nvidia")

    def broken(self):
        raise RuntimeError("simulated refusal")
    monkeypatch.setattr(hsa.Agent, "compute_units", property(broken))
    status, out, _ = cli(["info", "--plain"])
    assert status == 0
    assert "Could not read" in out and "compute_units: RuntimeError: simulated refusal" in out
    status, out, _ = cli(["info", "--json"])
    errors = json.loads(out)["errors"]
    assert any(e["where"].endswith(".compute_units") for e in errors)


@stub_only
def test_peer_access_matrix_with_two_devices(subprocess_cli):
    proc = subprocess_cli(["info", "--json"], env={"ROCPY_STUB_DEVICES": "2"})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    peer = data["hip"]["peer_access"]
    assert len(peer) == 2 and peer[0][0] is None and peer[1][1] is None
    assert isinstance(peer[0][1], bool)
    proc = subprocess_cli(["info", "--plain"], env={"ROCPY_STUB_DEVICES": "2"})
    assert "Peer access" in proc.stdout and "Device 1" in proc.stdout


def test_no_backend_is_an_error_not_a_traceback(subprocess_cli):
    # a backend asked for by name runs wherever its module loads (amd without a GPU
    # does): the one that cannot is one not built, nvidia unless ROCPY_BUILD_NVIDIA=1
    import importlib.util
    if importlib.util.find_spec("rocpy._lib_nvidia") is not None:
        pytest.skip("needs a backend that is not built here")
    proc = subprocess_cli(["info"], env={"ROCPY_BACKEND": "nvidia"})
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "rocpy._lib_nvidia" in proc.stdout and "not built" in proc.stdout
    proc = subprocess_cli(["info", "--json"], env={"ROCPY_BACKEND": "nvidia"})
    assert proc.returncode == 1 and json.loads(proc.stdout)["backend"]["name"] is None


def test_broken_pipe_is_quiet(cache_dir):
    """``rocpy info | head -0``: the reader is gone before the first write."""
    import os
    env = dict(os.environ, PYTHONPATH=ROOT, ROCPY_CACHE_DIR=cache_dir)
    proc = subprocess.Popen([sys.executable, "-m", "rocpy", "info"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=ROOT)
    proc.stdout.close()          # before the process has written anything
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()


def test_help_lists_the_commands(cli):
    status, out, _ = cli(["--help"])
    assert status == 0
    assert "info" in out and "bench" in out and "inspect" in out
