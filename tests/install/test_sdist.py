"""The sdist is complete and builds: sdist -> abi3 wheel -> fresh venv -> import, smoke test.

One build (a minute or two): the sdist is built with ``python -m build``
(isolated: the build requirements come from pyproject.toml alone), the wheel
from the tarball with pip, and that wheel installed into a fresh virtual
environment with its dependencies, where a stub round trip runs.
"""
from __future__ import annotations

import glob
import json
import os
import sys
import tarfile
from pathlib import Path

import pytest

import rocpy

from .conftest import PACKAGING, ROOT, copy_source, make_venv, run

pytestmark = PACKAGING

SMOKE = r"""
import json, sys
import numpy as np
import rocpy
from importlib import metadata
assert rocpy.__file__.startswith(sys.prefix), rocpy.__file__      # the installed copy
dev = rocpy.Device(0)
buf = dev.context.alloc(64)
buf.copy_from(np.arange(16, dtype=np.int32))
back = np.zeros(16, dtype=np.int32)
buf.copy_to(back)
buf.close()
st = rocpy.hsa.lib.hsa_init()
rocpy.hsa.lib.hsa_shut_down()
print(json.dumps({"backend": rocpy.backend().name, "back": back.tolist(), "hsa_init": st,
                  "version": rocpy.__version__, "dist_version": metadata.version("rocpy"),
                  "license": metadata.metadata("rocpy")["License-Expression"],
                  "live": {str(k): v for k, v in rocpy.debug.live_objects().items()}}))
"""


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    pytest.importorskip("build", reason="`build` is a test dependency (pip install -e '.[test]')")
    tmp = tmp_path_factory.mktemp("sdist")
    src = copy_source(tmp / "src")
    run([sys.executable, "-m", "build", "--sdist", "--outdir", tmp / "dist", src])
    (tarball,) = glob.glob(str(tmp / "dist" / "rocpy-*.tar.gz"))
    return Path(tarball)


def test_sdist_holds_everything_the_build_reads(sdist):
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    needed = {"setup.py", "build_ffi.py", "pyproject.toml", "LICENSE", "README.md"}
    for pattern in ("rocpy/_build/*.py", "rocpy/_native/**/*.c", "rocpy/_native/**/*.h",
                    "rocpy/_native/**/*.cdef"):
        needed |= {os.path.relpath(p, ROOT) for p in glob.glob(str(ROOT / pattern), recursive=True)}
    assert needed - names == set()
    assert not [n for n in names if n.endswith((".so", ".o", ".pyc"))]


def test_sdist_builds_an_abi3_wheel_that_installs_and_runs(sdist, tmp_path):
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, sdist])
    (wheel,) = glob.glob(str(wheels / "*.whl"))
    # one wheel for every CPython from 3.10 on: the modules use the limited API
    assert os.path.basename(wheel).startswith(f"rocpy-{rocpy.__version__}-cp310-abi3-linux_")

    python = make_venv(tmp_path / "fresh")
    run([python, "-m", "pip", "install", "-q", wheel])
    env = dict(os.environ, ROCPY_BACKEND="stub")
    env.pop("PYTHONPATH", None)
    out = run([python, "-c", SMOKE], cwd=tmp_path, env=env)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"backend": "stub", "back": list(range(16)), "hsa_init": 0,
                      "version": rocpy.__version__, "dist_version": rocpy.__version__,
                      "license": "MIT", "live": {}}
    version = run([tmp_path / "fresh" / "bin" / "rocpy", "--version"], cwd=tmp_path, env=env)
    assert version.stdout.strip() == f"rocpy {rocpy.__version__}"
