"""docs/testing.md's examples run: each ```python block in a fresh interpreter on
the stub, the ```sh block's rocpy stub commands."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "testing.md")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", open(DOC).read(), re.S)


def test_the_guide_has_examples():
    assert len(blocks("python")) == 2 and len(blocks("sh")) == 1


@pytest.mark.parametrize("index", range(2))
def test_python_example_runs(index, tmp_path):
    if shutil.which("hipcc") is None:
        pytest.skip("the examples compile their kernels with hipcc (no hipRTC compiler on the stub)")
    env = {k: v for k, v in os.environ.items() if k != "ROCPY_STUB_BUILTINS"}
    done = subprocess.run([sys.executable, "-c", blocks("python")[index]], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env=dict(env, ROCPY_BACKEND="stub", PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr


def test_sh_example_commands_run(tmp_path):
    lines = [line.split("#")[0].strip() for line in blocks("sh")[0].splitlines()]
    assert lines[0] == "rocpy stub libdir"
    env = dict(os.environ, PYTHONPATH=ROOT)
    rocpy_cmd = [sys.executable, "-m", "rocpy"]
    libdir = subprocess.run(rocpy_cmd + ["stub", "libdir"], capture_output=True, text=True, env=env)
    assert libdir.returncode == 0 and os.path.isdir(libdir.stdout.strip())
    envout = subprocess.run(rocpy_cmd + ["stub", "env"], capture_output=True, text=True, env=env)
    assert envout.stdout.startswith(f"export LD_LIBRARY_PATH={libdir.stdout.strip()}")
    prog = tmp_path / "my_program"
    prog.write_text('#!/bin/sh\necho "$LD_LIBRARY_PATH $1"\nexit 7\n')
    prog.chmod(0o755)
    done = subprocess.run(rocpy_cmd + ["stub", "run", "--", str(prog), "--args"], capture_output=True,
                          text=True, env=env)
    assert done.returncode == 7
    assert done.stdout.startswith(libdir.stdout.strip()) and done.stdout.strip().endswith("--args")
