"""Helpers of the packaging tests: a copy of the source tree, virtual environments.

These tests build rocpy for real (a minute or two each on two cores); they are
marked ``packaging`` (``-m "not packaging"`` leaves them out) and run in CI.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: What a copy of the checkout leaves out: build outputs, environments, caches.
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "*.so", "*.o",
                                     "__pycache__", ".pytest_cache", ".hypothesis", ".devkit",
                                     ".whl", ".gl", "_cffi_out", "tests")


#: Every module here starts ``pytestmark = PACKAGING`` (``-m "not packaging"`` leaves them out).
PACKAGING = [pytest.mark.packaging, pytest.mark.slow]


def copy_source(dest: Path) -> Path:
    """The checkout's sources (no tests, no build outputs) copied to ``dest``."""
    shutil.copytree(ROOT, dest, ignore=_NOT_SOURCE)
    return dest


def run(cmd, *, cwd=None, env=None, timeout=1800) -> subprocess.CompletedProcess:
    """Run ``cmd``; on failure, fail the test with the end of its output.

    The timeout only catches a hang: a build takes ~1 min alone, but 4+ on a loaded machine."""
    out = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=timeout)
    if out.returncode != 0:
        tail = "\n".join((out.stdout + out.stderr).strip().splitlines()[-30:])
        pytest.fail(f"{' '.join(map(str, cmd))} exited {out.returncode}:\n{tail}")
    return out


def make_venv(path: Path, *, inherit: bool = False) -> Path:
    """A virtual environment at ``path``; returns its python.

    ``inherit``: this environment's packages stay importable there (a ``.pth``
    naming its site directories), so pip finds the dependencies installed and
    downloads nothing."""
    run([sys.executable, "-m", "venv", path])
    python = path / "bin" / "python"
    if inherit:
        purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        site_dir = Path(purelib.stdout.strip())
        ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
        (site_dir / "_inherited.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python
