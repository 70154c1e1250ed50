"""The install scripts pass shellcheck (Debian's ``shellcheck`` package)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from .conftest import PACKAGING, ROOT

pytestmark = PACKAGING

SCRIPTS = ("tools/install.sh", "tools/fresh_debian.sh", ".ci/run")


def test_install_scripts_pass_shellcheck():
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    out = subprocess.run([shellcheck, *(str(ROOT / s) for s in SCRIPTS)], capture_output=True,
                         text=True, timeout=120)
    assert (out.returncode, out.stdout) == (0, "")
