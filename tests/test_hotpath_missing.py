"""rocpy works where the compiled hot path (rocpy._hot) is missing: the pure-Python
path serves launches' streams, copies, events, stream queries and HSA signals."""
from __future__ import annotations

import os
import subprocess
import sys

import rocpy

CHILD = r"""
import sys
sys.modules["rocpy._hot"] = None          # as if the extension was never built
import numpy as np
import rocpy
from rocpy import _hotpath, hip
assert not _hotpath.available() and _hotpath.module() is None
d = hip.Device(0)
s = d.create_stream()
a, b = d.context.alloc(64), d.context.alloc(64)
a.copy_from(np.arange(64, dtype=np.uint8), s)
b.copy_from(a, s)
e = hip.Event(d).record(s)
s.sync()
assert e.query() and s.query() and bytes(b.copy_to(bytearray(64))) == bytes(range(64))
assert type(s._lane).__name__ == "PyLane"
from rocpy import _backend
if _backend.current().has_hsa:
    from rocpy import hsa
    sig = hsa.Signal(3)
    sig.store(5)
    assert sig.load() == 5
    sig.close()
for x in (s, a, b, e):
    x.close()
print("ok")
"""


def test_rocpy_runs_without_the_compiled_extension():
    root = os.path.dirname(os.path.dirname(os.path.abspath(rocpy.__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          timeout=120, env=env, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
