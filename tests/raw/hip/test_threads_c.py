"""The stub's HIP half under ThreadSanitizer, in C programs built from the
stub's C sources alone: c/hip_threads.c runs eight threads over streams,
events, the null and per-thread streams, allocations and captures, and
checks its data; c/hip_destroy_race.c destroys a stream and an event while
other threads launch, record, query and synchronize on them (the stub's
hip_hold).  C, not Python: the GIL would order the threads for TSan."""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess

import pytest

from .helpers import stub_only

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
STUB = os.path.join(ROOT, "rocpy", "_native", "stub")
GENERATED = os.path.join(ROOT, "build", "rocpy-generated")     # written by the stub's build
DEFAULTS = os.path.join(GENERATED, "stub_defaults.c")


def build(source: str, out: str, sanitizer: str) -> bool:
    import rocpy._lib_stub as stub
    from rocpy._build.api import PLATFORMS
    plat = PLATFORMS["amd"]
    # the headers the stub module was built against (its rocpy_features.h says what they have)
    inc = json.loads(stub.ffi.string(stub.lib.rocpy_build_info()).decode())["include_dir"]
    cmd = ["gcc", "-std=c11", "-D_GNU_SOURCE", "-O1", "-g", "-pthread", f"-fsanitize={sanitizer}",
           *[f"-D{d}" for d in plat.defines], f"-I{inc}", f"-I{STUB}", f"-I{GENERATED}",
           os.path.join(HERE, "c", source), *sorted(glob.glob(os.path.join(STUB, "*.c"))),
           DEFAULTS, "-o", out]
    return subprocess.run(cmd, capture_output=True).returncode == 0


def run_sanitized(tmp_path, source: str, *args: str) -> str:
    """Build c/<source> with TSan (ASan + UBSan where gcc has no TSan), run
    it, and return its output; a sanitizer report or a non-zero exit fails."""
    exe = str(tmp_path / os.path.splitext(source)[0])
    for sanitizer in ("thread", "address,undefined"):
        if build(source, exe, sanitizer):
            break
    else:
        pytest.skip("gcc cannot build with a sanitizer here")
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update(ROCPY_STUB_DEVICES="1", TSAN_OPTIONS="halt_on_error=1",
               ASAN_OPTIONS="detect_leaks=0")
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and "Sanitizer" not in r.stderr, r.stderr[-6000:]
    return r.stdout


needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None or not os.path.exists(DEFAULTS),
                               reason="gcc and a built stub are needed")


# stub: no data race, no wrong data, with every thread at once
@stub_only
@needs_gcc
def test_threads_under_thread_sanitizer(tmp_path):
    assert run_sanitized(tmp_path, "hip_threads.c").startswith("ok ")


# stub: no data race and no use after free when a stream or an event is
# destroyed while other threads' calls use it
@stub_only
@needs_gcc
def test_destroy_while_in_use_under_thread_sanitizer(tmp_path, hip_kernel):
    assert run_sanitized(tmp_path, "hip_destroy_race.c", hip_kernel("fill")).startswith("ok ")
