"""examples/hsa_vadd.py, the README's worked example, runs and checks its result."""
from __future__ import annotations

import os
import subprocess
import sys

import rocpy

EXAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "examples", "hsa_vadd.py")


def test_hsa_vadd_example(vadd_path):
    env = dict(os.environ, ROCPY_BACKEND=rocpy.backend().name)
    root = os.path.dirname(os.path.dirname(EXAMPLE))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, EXAMPLE, vadd_path], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "vadd of 1048576 floats: ok" in proc.stdout
