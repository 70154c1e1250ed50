"""The generated packers against the generic converters: same bytes, same errors.

`KernargLayout.pack`/`pack_into` run a function generated per layout; the
generic path (`_generic_pack`, `_generic_pack_into`: one converter call per
argument, then one ``struct.pack``) is the reference.  For layouts of the
compiled test kernels and synthetic ones (from `from_params`, and typed
`KernelArg` lists as OpenCL metadata gives them), random arguments (mostly
plausible for each parameter, some anything) and random launch geometries
must give byte-identical output, or an exception of the same type with the
same message, index and parameter name.
"""
from __future__ import annotations

import math
import struct
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import rocpy  # noqa: E402
from rocpy.codeobject import KernargLayout, KernelArg, argconv, load  # noqa: E402

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])
BOUNDARIES = sorted({s * (1 << b) + d for b in (7, 8, 15, 16, 31, 32, 47, 63, 64)
                     for s in (1, -1) for d in (-1, 0, 1)} | {0, 1, -1})
NUMPY_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
               np.uint64, np.longlong, np.ulonglong, np.float16, np.float32, np.float64,
               np.complex64, np.bool_]
HIDDEN = ["hidden_block_count_x", "hidden_block_count_y", "hidden_block_count_z",
          "hidden_group_size_x", "hidden_group_size_y", "hidden_group_size_z",
          "hidden_remainder_x", "hidden_remainder_y", "hidden_remainder_z",
          "hidden_global_offset_x", "hidden_grid_dims", "hidden_dynamic_lds_size",
          "hidden_hostcall_buffer", "hidden_none"]
TYPE_NAMES = {1: ["char", "uchar", "bool", None], 2: ["short", "ushort", "half", None],
              4: ["int", "uint", "float", "unsigned int", None],
              8: ["long", "ulong", "double", "size_t", None]}


class Buffer:
    """A stand-in for a rocpy buffer: ``.ptr`` is whatever it was given."""

    def __init__(self, ptr):
        self.ptr = ptr


class Closed:
    """A closed rocpy buffer: reading ``.ptr`` raises `rocpy.ClosedError`."""

    @property
    def ptr(self):
        raise rocpy.ClosedError("<Closed buffer> is closed")


class Registered:
    """A plain pointer class registered for untyped 8-byte parameters."""

    __slots__ = ("_h",)

    def __init__(self, h):
        self._h = h

    @property
    def ptr(self):
        if self._h is None:
            raise rocpy.ClosedError("<Registered> is closed")
        return self._h


argconv.register_pointer_type(Registered)


class AsInt:
    def __init__(self, value):
        self.value = value

    def __int__(self):
        return self.value


class AsIndex(AsInt):
    def __index__(self):
        return self.value


def numpy_scalar(t, raw):
    """A numpy scalar of type ``t`` with these bytes (NaN payloads included)."""
    size = np.dtype(t).itemsize
    return np.frombuffer(raw[:size].ljust(size, b"\0"), dtype=t)[0]


def cffi_values():
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    keep = ffi.new("int[4]")
    return [ffi.cast("void *", 0x1234000), ffi.cast("void *", 0), keep, ffi.cast("int", 5),
            ffi.NULL]


CFFI = cffi_values()
ints = st.one_of(st.sampled_from(BOUNDARIES), st.integers(-(1 << 70), 1 << 70))
floats = st.one_of(st.floats(width=16), st.floats(width=32), st.floats(),
                   st.sampled_from([1e39, -1e39, 70000.0, 1e300, math.inf, -math.nan]))
NANS = [b"\x01\x7c", b"\x01\x00\x80\x7f", b"\x01\x00\x00\x00\x00\x00\xf0\x7f",
        b"\x00\x00\xc0\xff", b"\xff\xff\xff\xff\xff\xff\xff\xff"]   # signalling, payloads
numpies = st.builds(numpy_scalar, st.sampled_from(NUMPY_TYPES),
                    st.one_of(st.binary(min_size=8, max_size=8), st.sampled_from(NANS)))
odd = st.sampled_from([None, True, False, "0x10", [], [1], (), object(), Fraction(1, 3),
                       Fraction(10**400, 3), Decimal("1.5"), 1j, AsInt(0x5000), AsInt(-1),
                       AsIndex(7), AsIndex(1 << 70), Closed(), Registered(None),
                       np.zeros(2, np.int32), np.zeros((), np.int64), np.float64(math.nan)]
                      + CFFI)
pointers = st.builds(Buffer, st.one_of(ints, st.sampled_from(["0x10", None, 1.0, True]),
                                       st.builds(np.uint64, st.integers(0, (1 << 64) - 1))))
registered = st.builds(Registered, st.one_of(ints, st.sampled_from([None, "1"])))
blobs = st.one_of(st.binary(max_size=40), st.binary(max_size=40).map(bytearray),
                  st.binary(max_size=40).map(memoryview),
                  st.integers(0, 10).map(lambda n: np.arange(n, dtype=np.int32)))
anything = st.one_of(odd, ints, floats, numpies, odd, pointers, registered, blobs)


def plausible(arg: KernelArg):
    """Values most likely right for ``arg``'s kind of parameter (some just wrong)."""
    size, (what, kind) = arg.size, argconv._classify(arg)
    numpy_of = {k: [t for t in NUMPY_TYPES if np.dtype(t).itemsize == size
                    and np.dtype(t).kind == k] for k in "iuf"}
    raw = st.one_of(st.binary(min_size=8, max_size=8), st.sampled_from(NANS))

    def numpy(kinds):
        types = [t for k in kinds for t in numpy_of[k]]
        return [st.builds(numpy_scalar, st.sampled_from(types), raw)] if types else []
    if what == "pointer":
        return st.one_of(st.integers(0, (1 << (8 * size)) - 1), pointers, registered,
                         st.sampled_from([None, True, False, -1, 1 << 64, 1.0] + CFFI))
    if what == "float":
        return st.one_of(floats, floats, ints, *numpy("f"))
    if what == "raw":
        exact = st.binary(min_size=size, max_size=size)
        return st.one_of(exact, exact.map(bytearray), blobs,
                         exact.map(lambda b: np.frombuffer(b, np.uint8)))
    bits = 8 * size
    lo = 0 if kind == "unsigned" else -(1 << (bits - 1))
    hi = (1 << (bits - 1)) if kind == "signed" else (1 << bits)
    fitting = st.integers(lo, hi - 1)
    return st.one_of(fitting, fitting, ints, st.booleans(), *numpy("iu"),
                     *((floats, registered, *numpy("f")) if kind is None else ()))


def geometry():
    return st.one_of(valid_geometry(), any_geometry())


def valid_geometry():
    def dims(most):
        return st.one_of(st.integers(1, most), st.lists(st.integers(1, most), min_size=1,
                                                        max_size=3).map(tuple))
    return st.fixed_dictionaries({"block": dims(1024)}, optional={
        "grid": dims(1 << 16), "dynamic_lds": st.integers(0, 1 << 16),
        "hidden": st.dictionaries(st.sampled_from(HIDDEN), st.integers(0, 255), max_size=2)})


def any_geometry():
    dims = st.one_of(st.integers(-1, 3000), st.lists(st.integers(0, 70000), min_size=0,
                                                      max_size=4).map(tuple),
                     st.sampled_from([None, 2.0, 2.5, "4", [4, 2], (1 << 33,), True]))
    return st.fixed_dictionaries({}, optional={
        "grid": dims, "block": dims, "grid_blocks": dims,
        "dynamic_lds": st.one_of(st.integers(-1, 1 << 33), st.sampled_from([1.0, "8", None])),
        "hidden": st.one_of(st.none(), st.dictionaries(st.sampled_from(HIDDEN),
                                                       st.one_of(ints, st.just("x")),
                                                       max_size=3))})


def outcome(fn, *args, **kwargs):
    """What ``fn`` returns, or the exception's type, message, index and parameter."""
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - every exception is compared
        return ("raised", type(exc), str(exc), getattr(exc, "index", None),
                getattr(exc, "param", None))


def check(layout: KernargLayout, args, geom, buffer_size: int, offset: int) -> None:
    generic = outcome(layout._generic_pack, args, **geom)
    assert outcome(layout.pack, args, **geom) == generic
    assert outcome(layout.pack, args, **geom) == generic  # again: the geometry memo
    pack, _ = layout.packers
    assert outcome(pack, args, geom.get("grid"), geom.get("block"), geom.get("grid_blocks"),
                   geom.get("dynamic_lds", 0), geom.get("hidden")) == generic
    expected, got = bytearray(b"\xa5" * buffer_size), bytearray(b"\xa5" * buffer_size)
    want = outcome(layout._generic_pack_into, expected, offset, args, **geom)
    assert outcome(layout.pack_into, got, offset, args, **geom) == want
    assert got == expected


def draw_args(data, layout: KernargLayout):
    tenths = data.draw(st.sampled_from([0, 0, 1, 3]))   # how often an argument is anything
    args = [data.draw(anything if data.draw(st.integers(0, 9)) < tenths else plausible(p))
            for p in layout.params]
    count = data.draw(st.sampled_from([len(args)] * 18 + [len(args) + 1, max(len(args) - 1, 0)]))
    return (args + [0])[:count] if count > len(args) else args[:count]


def draw_buffer(data, layout: KernargLayout):
    offset = data.draw(st.sampled_from([0, 0, layout.alignment, 8, 4, -8, 1]))
    slack = data.draw(st.sampled_from([0, 0, 16, -1]))
    return max(offset, 0) + layout.size + slack, offset


# ---- layouts -----------------------------------------------------------------------

@st.composite
def synthetic(draw):
    """A layout as `from_params` or OpenCL metadata describes one."""
    params, offset = [], 0
    for i in range(draw(st.integers(0, 8))):
        size = draw(st.sampled_from([1, 2, 4, 8, 8, 8, 12, 16, 24]))
        kind = draw(st.sampled_from(["by_value", "by_value", "global_buffer",
                                     "dynamic_shared_pointer", "image"]))
        align = min(size & -size, 8)
        offset = -(-offset // align) * align + draw(st.sampled_from([0, 0, 0, align]))
        type_name = draw(st.sampled_from(TYPE_NAMES.get(size, [None]))) \
            if kind == "by_value" else None
        params.append(KernelArg(i, offset, size, kind, align, name=f"p{i}",
                                type_name=type_name))
        offset += size
    hidden, n = [], len(params)
    for j, kind in enumerate(draw(st.lists(st.sampled_from(HIDDEN), max_size=8))):
        size = draw(st.sampled_from([2, 4, 8, 3]))
        offset = -(-offset // 8) * 8 + draw(st.sampled_from([0, 0, 8]))
        hidden.append(KernelArg(n + j, offset, size, kind, 1))
        offset += size
    size = -(-offset // 8) * 8 + draw(st.sampled_from([0, 0, 8, 64]))
    if draw(st.booleans()):
        untyped = [(p.offset, p.size, p.value_kind) for p in params + hidden]
        return KernargLayout.from_params(untyped, size=size, name="syn")
    return KernargLayout(params, hidden, size, 8, "syn")


@SETTINGS
@given(data=st.data())
def test_synthetic_layouts(data):
    layout = data.draw(synthetic())
    for _ in range(3):
        check(layout, draw_args(data, layout), data.draw(geometry()), *draw_buffer(data, layout))


@pytest.fixture(scope="module")
def compiled(artifacts):
    """Every kernel layout of the compiled test code objects that could be built."""
    layouts = {}
    for name in ("hip-v5", "hip-v4", "hip-gfx1030", "cl-gfx1100-v5", "cl-gfx90a-v4",
                 "cl-gfx1030-v3"):
        if name in artifacts.files:
            f = load(artifacts.files[name])
            for index in range(len(f.targets)):
                for kernel in f.code_object(index).kernels.values():
                    layouts[f"{name}:{kernel.name}"] = kernel.layout
    if not layouts:
        pytest.skip(f"no compiled kernels: {artifacts.missing}")
    return layouts


@SETTINGS
@given(data=st.data())
def test_compiled_layouts(compiled, data):
    layout = compiled[data.draw(st.sampled_from(sorted(compiled)))]
    geom = data.draw(st.one_of(geometry(), st.just({"grid": (64, 2), "block": (32, 2)})))
    check(layout, draw_args(data, layout), geom, *draw_buffer(data, layout))


# ---- a few cases spelled out -----------------------------------------------------------

SPECIALS = ([None, True, False, np.True_, np.False_, 0, -1, 1 << 200, -(1 << 1100), 2.5, -0.0,
             1e39, 70000.0, math.inf, math.nan, Fraction(10**400, 3), Fraction(-7, 2), "1",
             Buffer(0x1000), Buffer(-1), Closed(), Registered(0x2000), AsIndex(3), AsInt(4)]
            + BOUNDARIES + CFFI + [numpy_scalar(t, raw) for t in NUMPY_TYPES for raw in NANS]
            + [np.array(1.5, np.float32), np.zeros(1, np.float64)]
            + [bytes(n) for n in (1, 2, 4, 8, 12)])


@pytest.mark.parametrize("size", [1, 2, 4, 8, 12])
@pytest.mark.parametrize("kind,type_name", [("by_value", None), ("global_buffer", None),
                                            ("by_value", "signed"), ("by_value", "unsigned"),
                                            ("by_value", "float")])
def test_every_slot_kind_with_special_values(size, kind, type_name):
    names = {"signed": {1: "char", 2: "short", 4: "int", 8: "long"},
             "unsigned": {1: "uchar", 2: "ushort", 4: "uint", 8: "ulong"},
             "float": {2: "half", 4: "float", 8: "double"}}
    name = names[type_name].get(size) if type_name else None
    if type_name and name is None:
        pytest.skip(f"no {type_name} type of {size} bytes")
    arg = KernelArg(0, 8, size, kind, 1, name="x", type_name=name)
    hidden = [KernelArg(1, 24, 4, "hidden_block_count_x", 4)]
    for layout in (KernargLayout([arg], [], 24, 8, "k"), KernargLayout([arg], hidden, 32, 8, "k")):
        for value in SPECIALS:
            check(layout, (value,), {"grid": 8, "block": 4}, 40, 8)


def vadd():
    return KernargLayout.from_params(
        [(0, 8, "global_buffer"), (8, 8, "global_buffer"), (16, 4, "by_value"),
         (24, 4, "hidden_block_count_x"), (28, 2, "hidden_group_size_x"),
         (30, 2, "hidden_grid_dims")], size=40, name="vadd")


def test_examples_match():
    layout = vadd()
    for args in [(Buffer(0x1000), None, np.int32(-5)), (1, 2, 3.5), (1, 2, np.float32(2.5)),
                 (CFFI[0], Registered(0x2000), True), (1, 2, np.uint32(7))]:
        check(layout, args, {"grid": 100, "block": 32}, 64, 8)


def test_closed_buffer_propagates():
    layout = vadd()
    with pytest.raises(rocpy.ClosedError, match="is closed"):
        layout.pack((Closed(), 0, 0), grid=1, block=1)
    untyped = KernargLayout.from_params([(0, 8)])
    with pytest.raises(rocpy.ClosedError, match="is closed"):
        untyped.pack((Registered(None),))
    assert untyped.pack((Registered(0x40),)) == struct.pack("<Q", 0x40)


N0 = np.int32(0)  # vadd's n: its type is unknown (extern "C"), so numpy states it


def test_geometry_memo_never_reuses_a_mutated_list():
    layout = vadd()
    grid = [64]
    first = layout.pack((0, 0, N0), grid=grid, block=32)
    grid[0] = 128
    assert layout.pack((0, 0, N0), grid=grid, block=32) != first
    block = (32,)
    a = layout.pack((0, 0, N0), grid=(64,), block=block)
    assert layout.pack((0, 0, N0), grid=(64,), block=block) == a
    assert layout.pack((0, 0, N0), grid=(128,), block=block) != a


def test_names_never_reach_the_source():
    """Layout and parameter names are data: nothing in them is compiled."""
    evil = "x):\n    raise SystemExit\n#"
    layout = KernargLayout([KernelArg(0, 0, 4, "by_value", 4, name=evil, type_name=evil)], [],
                           8, 8, name=evil)
    assert layout.pack((struct.pack("<i", 5),)) == struct.pack("<i4x", 5)   # a struct type
    with pytest.raises(TypeError, match="expected 4 bytes"):
        layout.pack(("5",))


def test_register_pointer_type_refuses_non_pointers():
    for cls in (int, float, bytes, np.ndarray, object, type("NoPtr", (), {})):
        with pytest.raises(TypeError, match="not a plain pointer class"):
            argconv.register_pointer_type(cls)


def test_rocpy_buffers_open_and_closed():
    """Real rocpy.hip buffers (stub or device): ``.ptr`` inline, ClosedError once closed."""
    try:
        from rocpy import hip
        from rocpy.hip._launch_plan import _register_buffers
        buf = hip.Device(0).context.alloc(64)
    except Exception as exc:  # noqa: BLE001 - no HIP runtime here: nothing to test
        pytest.skip(f"no rocpy.hip buffer: {exc}")
    _register_buffers()
    layouts = [vadd(), KernargLayout.from_params([(0, 8), (8, 8), (16, 4)], name="cubin")]
    try:
        for layout in layouts:
            for args in [(buf, buf, np.int32(3)), (buf, None, np.uint32(1)),
                         (None, buf, np.float32(2.0))]:
                check(layout, args, {"grid_blocks": 2, "block": 32}, 48, 8)
            assert layout.pack((buf, None, np.int32(0)), grid=1, block=1)[:8] == \
                struct.pack("<Q", buf.ptr)
    finally:
        buf.close()
    for layout in layouts:
        check(layout, (None, buf, np.int32(0)), {"grid": 1, "block": 1}, 48, 0)
        with pytest.raises(rocpy.ClosedError):
            layout.pack((None, buf, np.int32(0)), grid=1, block=1)
