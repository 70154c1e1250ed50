"""`rocpy._hot.Method` on the other Pythons rocpy supports: a method descriptor with
vectorcall made through the limited API's PyType_FromSpec (rocpy/_native/hot/hot_method.h
spells what 3.10's and 3.11's limited API lack).  3.10: the module compiled against its
headers with Py_LIMITED_API 0x030A0000, as setup.py builds it there; 3.12 and later: the
3.11 build itself (the stable ABI).  Each interpreter found runs the same check in a
subprocess on a class standing in for hsa.Signal (a kind-6 method over libc's labs);
interpreters not installed are skipped."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import textwrap

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
HOT = os.path.join(ROOT, "rocpy", "_native", "hot")

CHECK = textwrap.dedent("""
    import ctypes, functools, sys
    import rocpy._hot as hot
    labs = ctypes.cast(ctypes.CDLL(None).labs, ctypes.c_void_p).value
    class Handle:
        __slots__ = ("_h",)
    class Sig(Handle):
        __slots__ = ("_bad", "_hv")
        def load(self, order="scacquire"):
            return ("python", order)
    py = Sig.__dict__["load"]
    d = hot.method(6, labs, py, 0, (Handle.__dict__["_h"], Sig.__dict__["_bad"],
                   Sig.__dict__["_hv"]), {"relaxed": labs}, Sig)
    Sig.load = d
    assert type(d).__flags__ & (1 << 17) and type(d).__flags__ & (1 << 11)
    s = Sig(); s._h = 1; s._bad = False; s._hv = 42
    assert s.load() == s.load("relaxed") == s.load(order="relaxed") == 42
    assert s.load("bogus") == ("python", "bogus")
    bound = s.load
    assert bound() == 42 and d(s) == 42 and functools.partial(d, s)() == 42
    assert Sig.load is py
    s._bad = True
    assert s.load() == ("python", "scacquire")
    try:
        d()
    except TypeError as e:
        assert "self" in str(e)
    else:
        raise AssertionError("no TypeError")
    print("ok", sys.version_info[:2])
""")


def _interpreters() -> list[str]:
    found = []
    for minor in (10, 12, 13):
        cands = [shutil.which(f"python3.{minor}")]
        cands += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/3.{minor}.*/bin/python3")))
        for c in cands:
            if c and subprocess.run([c, "-c", f"import sys; assert sys.version_info[:2] == (3, {minor})"],
                                    capture_output=True).returncode == 0:
                found.append(c)
                break
    return found


@pytest.mark.parametrize("python", _interpreters() or [None])
def test_the_method_descriptor_works_on_other_pythons(python, tmp_path):
    if python is None:
        pytest.skip("no Python 3.10, 3.12 or 3.13 interpreter installed")
    pkg = tmp_path / "rocpy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    out = subprocess.run([python, "-c", "import sys, sysconfig; print(sys.version_info[1], "
                                        "sysconfig.get_paths()['include'])"],
                         capture_output=True, text=True, check=True).stdout.split()
    if int(out[0]) == 10:
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            pytest.skip("no C compiler")
        sources = sorted(glob.glob(os.path.join(HOT, "*.c")))
        subprocess.run([cc, "-O1", "-shared", "-fPIC", "-DPy_LIMITED_API=0x030A0000",
                        f"-I{out[1]}", *sources, "-o", str(pkg / "_hot.abi3.so")], check=True)
    else:
        built = os.path.join(ROOT, "rocpy", "_hot.abi3.so")
        if not os.path.exists(built):
            pytest.skip("rocpy._hot is not built")
        shutil.copy(built, pkg / "_hot.abi3.so")
    r = subprocess.run([python, "-c", CHECK], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok")
