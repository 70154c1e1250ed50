"""Kernel.launch converts by value from the parameter types: C++ kernels' mangled
names, Module.load(param_types=) for extern "C" ones; and refuses bare numbers
where no type is known.  Both paths (compiled and Python) give the same bytes and
the same errors."""
from __future__ import annotations

import numpy as np
import pytest

import rocpy
import rocpy.stub
from rocpy import _hotpath, hip
from rocpy.codeobject import ArgumentRangeError, ArgumentTypeError

KSCALE = "_Z6kscalePfif"   # kscale(float* x, int n, float a), tests/kernels/mangled.hip

pytestmark = pytest.mark.stub_only


@pytest.fixture
def recorded():
    seen = []
    rocpy.stub.register_kernel(KSCALE, lambda d: seen.append(bytes(d.kernarg[:16])))
    yield seen
    rocpy.stub.unregister_kernel(KSCALE)


def _outcome(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - compared
        return type(exc), str(exc)
    return "ok"


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_mangled_kernel_converts_by_value(dev, kernel_file, recorded, compiled):
    import struct
    path = kernel_file("mangled")
    if compiled and not _hotpath.available():
        pytest.skip("rocpy._hot is not built")
    ctx = _hotpath.disabled() if not compiled else _nullcontext()
    with ctx:
        mod = hip.Module.load(path, dev)
        k = mod[KSCALE]
    assert (k._launcher is not None) is compiled
    buf = dev.context.alloc(64)
    k.launch(1, 16, (buf, 3, 2.5))
    k.launch(1, 16, (buf, np.int32(-1), 2))
    k.launch(1, 16, (buf, True, np.float32(0.25)))
    dev.sync()
    assert [struct.unpack("<Qif", r)[1:] for r in recorded] == [(3, 2.5), (-1, 2.0), (1, 0.25)]
    with pytest.raises(ArgumentTypeError, match=r"args\[1\] \(int by_value.*got float"):
        k.launch(1, 16, (buf, 2.5, 3))
    with pytest.raises(ArgumentRangeError, match=r"args\[1\]"):
        k.launch(1, 16, (buf, -(1 << 31) - 1, 3))
    with pytest.raises(ArgumentTypeError, match=r"args\[2\].*numpy.float64"):
        k.launch(1, 16, (buf, 1, np.float64(1)))
    buf.close()
    mod.close()


class _nullcontext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_both_paths_agree_on_every_case(dev, kernel_file, recorded):
    if not _hotpath.available():
        pytest.skip("rocpy._hot is not built")
    path = kernel_file("mangled")
    hot_mod = hip.Module.load(path, dev)
    with _hotpath.disabled():
        slow_mod = hip.Module.load(path, dev)
    hot, slow = hot_mod[KSCALE], slow_mod[KSCALE]
    buf = dev.context.alloc(64)
    cases = [(buf, 3, 2.5), (buf, 2.5, 3), (buf, np.uint32(7), 1), (buf, np.uint32(1 << 31), 1),
             (buf, np.int64(1), 1.0), (buf, 1, np.int32(1)), (buf, 1, 1e39), (buf, 1, True),
             (None, -(1 << 31), float("inf")), (buf.ptr, 1 << 31, 0.0), (buf, "1", 0.0)]
    for case in cases:
        a = _outcome(lambda: hot.launch(1, 1, case))
        b = _outcome(lambda: slow.launch(1, 1, case))
        assert a == b, case
        if a == "ok":
            dev.sync()
            assert recorded[-1] == recorded[-2], case
    buf.close()
    hot_mod.close()
    slow_mod.close()


def test_param_types_declare_extern_c_kernels(dev, kernel_file):
    path = kernel_file("fill")                  # fill(unsigned *p, unsigned value, int n)
    mod = hip.Module.load(path, dev, param_types={"fill": ("unsigned*", "unsigned int", "int")})
    k = mod["fill"]
    assert [p.type_name for p in k.params] == ["unsigned*", "unsigned int", "int"]
    buf = dev.context.alloc(64)
    k.launch(1, 16, (buf, 5, 16))
    out = np.empty(16, np.uint32)
    buf.copy_to(out)
    assert (out == 5).all()
    with pytest.raises(ArgumentRangeError, match=r"args\[1\] .*unsigned int"):
        k.launch(1, 16, (buf, -1, 16))
    buf.close()
    mod.close()
    bare = hip.Module.load(path, dev)["fill"]      # no types: bare numbers refused
    with pytest.raises(ArgumentTypeError, match=r"np.int32\(\.\.\.\)"):
        bare.launch(1, 16, (None, 5, 16))


def test_param_types_misuse(dev, kernel_file):
    path = kernel_file("fill")
    for bad in (["fill"], {"fill": "int"}, {"fill": (1, 2, 3)}, {1: ("int",)}):
        with pytest.raises(TypeError, match="param_types"):
            hip.Module.load(path, dev, param_types=bad)
    mod = hip.Module.load(path, dev, param_types={"fill": ("unsigned*", "int")})
    with pytest.raises(ValueError, match=r"param_types\['fill'\].*3 parameters"):
        mod["fill"]
    mod.close()
    mod = hip.Module.load(path, dev, param_types={"fill": ("unsigned*", "double", "int")})
    with pytest.raises(ValueError, match="does not match"):
        mod["fill"]                              # double is 8 bytes, the value 4
    mod.close()
