"""The compiled path's slot reads and writes in place (rocpy/_native/hot/hot.c
`member_bind`, `member_read`, `member_write`): where a class's member descriptor passes
the layout checks, the slot is read at its offset in the object; everything else goes
through the descriptor or by name.  Proved here: each registered slot's offset is where
CPython keeps that slot (read back with ctypes); read-only and non-member descriptors
are never accessed in place; an unset slot raises what the descriptor raises; a
subclass's object is read at its base class's offset; writes keep reference counts
exact."""
from __future__ import annotations

import ctypes
import functools
import subprocess
import sys
import textwrap

import pytest

import rocpy
from rocpy import _hotpath

pytestmark = pytest.mark.skipif(not _hotpath.available() or _hotpath.module() is None,
                                reason="rocpy._hot is not built or ROCPY_HOT=0")

CPYTHON = sys.implementation.name == "cpython"


def at(obj: object, offset: int) -> int | None:
    """The object pointer stored `offset` bytes into `obj` (CPython: id is the address)."""
    return ctypes.c_void_p.from_address(id(obj) + offset).value


@pytest.mark.skipif(not CPYTHON, reason="offsets are CPython's")
def test_every_registered_slot_is_read_where_cpython_keeps_it(dev):
    s = dev.create_stream()
    a, b = dev.context.alloc(64), dev.context.alloc(64)
    a.copy_from(b, s)                     # registers the members (rocpy.hip._methods)
    s.sync()
    offsets = rocpy._hot.slot_offsets()
    assert set(offsets) == {"_h", "_lane", "_nbytes", "_last", "_weak", "pending",
                            "_dev_index"}
    assert all(off > 0 for off in offsets.values()), offsets
    cases = {"_h": a, "_lane": s, "_nbytes": a, "_last": a, "_weak": s, "_dev_index": a,
             "pending": s._lane.errors}
    for name, obj in cases.items():
        assert at(obj, offsets[name]) == id(getattr(obj, name)), name
    a.close()
    b.close()
    s.close()


def test_read_only_and_non_member_descriptors_are_not_accessed_in_place():
    class Slots:
        __slots__ = ("x", "y")

    assert rocpy._hot.slot_offset(Slots.__dict__["y"]) > 0
    assert rocpy._hot.slot_offset(functools.partial.__dict__["func"]) == 0   # READONLY
    for not_a_slot in (property(lambda self: 1), 3, Slots):
        with pytest.raises(TypeError, match="a slot is given by its member descriptor"):
            rocpy._hot.slot_offset(not_a_slot)


def test_compiled_copies_write_the_last_stream_without_leaking_it(dev):
    s = dev.create_stream()
    a, b = dev.context.alloc(64), dev.context.alloc(64)
    a.copy_from(b, s)
    s.sync()
    weak = s._weak
    before = sys.getrefcount(weak)
    for _ in range(1000):
        a.copy_from(b, s)
        b.copy_to(a, s)
    s.sync()
    assert a._last is weak and b._last is weak
    assert sys.getrefcount(weak) == before
    a.close()
    b.close()
    s.close()


# A class standing in for hsa.Signal with a kind-6 method over libc's labs, in its own
# interpreter (registering kind 6 replaces the state rocpy.hsa.Signal uses).
UNSET = textwrap.dedent("""
    import ctypes
    import rocpy._hot as hot
    labs = ctypes.cast(ctypes.CDLL(None).labs, ctypes.c_void_p).value
    class Handle:
        __slots__ = ("_h",)
    class Sig(Handle):
        __slots__ = ("_bad", "_hv")
        def load(self, order="scacquire"):
            return "python"
    class Sub(Sig):
        __slots__ = ("extra",)
    aux = (Handle.__dict__["_h"], Sig.__dict__["_bad"], Sig.__dict__["_hv"])
    assert all(hot.slot_offset(d) > 0 for d in aux)
    Sig.load = hot.method(6, labs, Sig.__dict__["load"], 0, aux, {}, Sig)
    for cls in (Sig, Sub):
        s = cls()
        s._h = 1
        s._bad = False
        try:
            s.load()
        except AttributeError as e:
            compiled = str(e)
        try:
            s._hv
        except AttributeError as e:
            assert compiled == str(e), (compiled, str(e))
        s._hv = 42
        assert s.load() == 42, cls
        del s._h
        try:
            s.load()
        except AttributeError as e:
            assert "_h" in str(e)
        else:
            raise AssertionError("an unset _h was read")
    print("ok")
""")


def test_an_unset_slot_raises_as_its_descriptor_and_subclasses_read_in_place():
    r = subprocess.run([sys.executable, "-c", UNSET], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
