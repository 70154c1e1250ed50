"""Running code in a fresh interpreter on the stub, for the CPU-kernel tests."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_child(code: str, timeout: float = 120, **extra: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter on the stub (for launches that end the process, or
    another stub configuration: ``extra`` environment)."""
    env = dict(os.environ, ROCPY_BACKEND="stub",
               PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests", "cpukern"), **extra)
    env.pop("PYTHONFAULTHANDLER", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)
