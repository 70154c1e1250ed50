"""The host context and peer copies on two devices (issue 13).

The checks live in ``multi_device_checks.py``.  The device count is fixed
when a process starts, so on the stub they run once in a subprocess with
``ROCPY_STUB_DEVICES=2`` (one JSON summary, one test per check reading it);
on a real backend with two or more devices (``ROCPY_BACKEND=amd`` or
``nvidia``), or a stub this pytest started with two, they run here, in this
process (the conformance ``no_leaks`` fixture checks every one); with one
real device they skip.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rocpy import hip

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "multi_device_checks.py")
BACKEND = __import__("rocpy").backend().name
# a real backend runs the checks in this process; so does a stub started with two
# devices (ROCPY_STUB_DEVICES=2 pytest ...), which tries that path without a GPU
SUBPROCESS = BACKEND == "stub" and hip.device_count() < 2


def _checks_module():
    spec = importlib.util.spec_from_file_location("multi_device_checks", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod                 # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


checks = _checks_module()


@pytest.fixture(scope="module")
def stub_summary(kernel_file):
    """Every check run in one subprocess on a two-device stub: the JSON it printed."""
    env = dict(os.environ, ROCPY_BACKEND="stub", ROCPY_STUB_DEVICES="2",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, SCRIPT, kernel_file("vadd"), kernel_file("spin_fill")],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["backend"] == "stub" and summary["devices"] == 2, summary
    return summary


@pytest.mark.parametrize("name", checks.NAMES)
def test_two_devices(name, request, kernel_file):
    if SUBPROCESS:
        result = request.getfixturevalue("stub_summary")["checks"][name]
        if result != "ok":
            pytest.fail(f"{name} failed in the 2-device stub subprocess:\n{result}")
        return
    if hip.device_count() < 2:
        pytest.skip(f"needs two devices; the {BACKEND} backend has {hip.device_count()}")
    kit = checks.Kit(hip.Device(0), hip.Device(1), np.random.default_rng(1234),
                     kernel_file("vadd"), kernel_file("spin_fill"))
    getattr(checks, "check_" + name)(kit)


def test_live_objects_back_to_zero(request):
    """After every check, nothing of rocpy's is alive (in-process: the no_leaks fixture)."""
    if not SUBPROCESS:
        if hip.device_count() < 2:
            pytest.skip(f"needs two devices; the {BACKEND} backend has {hip.device_count()}")
        assert checks.settle() == {}
        return
    summary = request.getfixturevalue("stub_summary")
    assert summary["live"] == {}, summary["live"]
    assert set(summary["checks"]) == set(checks.NAMES)
