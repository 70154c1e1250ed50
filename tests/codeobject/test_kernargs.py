"""Kernel argument packing: offsets, hidden arguments, conversions and errors."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from rocpy.codeobject import (ArgumentCountError, ArgumentRangeError, ArgumentTypeError, ArgumentValueError,
                              CodeObjectError, KernargLayout, KernelArgumentError,
                              LaunchConfigError, load)


class Buffer:
    """Stands in for a rocpy device buffer: anything with an integer ``.ptr``."""

    def __init__(self, ptr):
        self.ptr = ptr


class Handle:
    """A pointer-like object converted with ``__int__``."""

    def __int__(self):
        return 0xABC000


@pytest.fixture(scope="module")
def v5(artifacts):
    """gfx90a code object v5, compiled with argument names."""
    return load(artifacts.get("hip-v5")).select("gfx90a:sramecc+:xnack-").kernels


@pytest.fixture(scope="module")
def v4(artifacts):
    """gfx90a code object v4: hidden arguments only where the kernel uses them."""
    return load(artifacts.get("hip-v4")).select("gfx90a:sramecc+:xnack-").kernels


@pytest.fixture(scope="module")
def cl(artifacts):
    """OpenCL kernels: every parameter has a type name."""
    return load(artifacts.get("cl-gfx1100-v5")).select("gfx1100").kernels


def hidden_at(kernel, blob):
    """Hidden argument values in ``blob`` by value kind (last one wins for repeats)."""
    codes = {1: "B", 2: "H", 4: "I", 8: "Q"}
    return {a.value_kind: struct.unpack_from("<" + codes[a.size], blob, a.offset)[0]
            for a in kernel.hidden_args if a.size in codes}


def xyz(hidden, what):
    """The x, y, z values of ``hidden_<what>_{x,y,z}``."""
    return tuple(hidden[f"hidden_{what}_{axis}"] for axis in "xyz")


def test_layout_offsets_and_alignment(v5):
    layout = v5["vadd"].layout
    assert layout is v5["vadd"].layout            # built once, cached
    assert [(p.name, p.offset, p.size, p.align) for p in layout.params] == [
        ("a", 0, 8, 8), ("b", 8, 8, 8), ("c", 16, 8, 8), ("n", 24, 4, 4)]
    assert layout.size == 288 and layout.alignment == 8
    scalars = v5["scalars"].layout
    assert [(p.offset, p.size, p.align) for p in scalars.params] == [
        (0, 1, 1), (2, 2, 2), (4, 4, 4), (8, 8, 8), (16, 4, 4), (24, 8, 8), (32, 1, 1), (40, 8, 8)]
    assert v5["bystruct"].layout.params[0].align == 8


def test_pack_places_each_argument(v5):
    k = v5["vadd"]
    blob = k.layout.pack((Buffer(0x7F0000001000), 0x7F0000002000, Handle(), np.int32(-5)),
                         grid=(1000,), block=(256,))
    assert len(blob) == k.kernarg_segment_size
    assert struct.unpack_from("<QQQi", blob, 0) == (0x7F0000001000, 0x7F0000002000, 0xABC000, -5)


def test_hidden_arguments_one_dimension(v5):
    k = v5["vadd"]
    h = hidden_at(k, k.layout.pack((0, 0, 0, np.int32(0)), grid=(1000,), block=(256,)))
    assert xyz(h, "block_count") == (3, 1, 1)
    assert xyz(h, "group_size") == (256, 1, 1)
    assert xyz(h, "remainder") == (232, 0, 0)
    assert h["hidden_grid_dims"] == 1
    for kind in ("hidden_global_offset_x", "hidden_global_offset_y", "hidden_hostcall_buffer",
                 "hidden_multigrid_sync_arg", "hidden_heap_v1", "hidden_queue_ptr"):
        assert h.get(kind, 0) == 0, kind   # the runtime would fill these; nothing here does


def test_hidden_arguments_three_dimensions(v5):
    layout = v5["vadd"].layout
    blocks = layout.pack((0, 0, 0, np.int32(0)), grid_blocks=(4, 3, 2), block=(8, 4, 2))
    items = layout.pack((0, 0, 0, np.int32(0)), grid=(32, 12, 4), block=(8, 4, 2))
    assert blocks == items
    h = hidden_at(v5["vadd"], blocks)
    assert xyz(h, "block_count") == (4, 3, 2)
    assert xyz(h, "group_size") == (8, 4, 2)
    assert xyz(h, "remainder") == (0, 0, 0)
    assert h["hidden_grid_dims"] == 3
    h = hidden_at(v5["vadd"], layout.pack((0, 0, 0, np.int32(0)), grid=(100, 7), block=(32, 2)))
    assert (h["hidden_block_count_y"], h["hidden_remainder_y"], h["hidden_grid_dims"]) == (3, 1, 2)
    h = hidden_at(v5["vadd"], layout.pack((0, 0, 0, np.int32(0)), grid=64, block=64))
    assert h["hidden_grid_dims"] == 1


def test_hidden_overrides(v5):
    k = v5["vadd"]
    pointers = [a.value_kind for a in k.hidden_args
                if a.size == 8 and not a.value_kind.startswith("hidden_global_offset")
                and a.value_kind != "hidden_none"]
    if not pointers:
        pytest.skip("this compiler gives vadd no pointer-sized hidden arguments")
    kind = pointers[0]
    h = hidden_at(k, k.layout.pack((0, 0, 0, np.int32(0)), grid=64, block=64,
                                   hidden={kind: 0xDEAD000, "hidden_made_up": 1}))
    assert h[kind] == 0xDEAD000
    with pytest.raises(LaunchConfigError, match=kind):
        k.layout.pack((0, 0, 0, np.int32(0)), grid=64, block=64, hidden={kind: -1})


def test_v4_kernel_needs_no_geometry(v4):
    assert v4["vadd"].hidden_args == ()
    assert v4["vadd"].layout.pack((1, 2, 3, np.int32(4))) == struct.pack("<QQQi", 1, 2, 3, 4)
    pf = v4["pf"]
    assert [a.value_kind for a in pf.hidden_args][:3] == [
        "hidden_global_offset_x", "hidden_global_offset_y", "hidden_global_offset_z"]
    assert pf.layout.pack((np.int32(7),)) == struct.pack("<i", 7) + bytes(pf.kernarg_segment_size - 4)


def test_scalars_of_every_width(v5):
    layout = v5["scalars"].layout
    blob = layout.pack((-3, np.int16(30000), np.int32(-7), np.int64(1 << 40), np.float32(1.5),
                        np.float64(-2.25), True, Buffer(0x1000)), grid=1, block=1)
    assert struct.unpack_from("<b", blob, 0)[0] == -3
    assert struct.unpack_from("<h", blob, 2)[0] == 30000
    assert struct.unpack_from("<i", blob, 4)[0] == -7
    assert struct.unpack_from("<q", blob, 8)[0] == 1 << 40
    assert struct.unpack_from("<f", blob, 16)[0] == 1.5     # untyped: the numpy type decides
    assert struct.unpack_from("<d", blob, 24)[0] == -2.25
    assert blob[32] == 1
    numpy_args = (np.int8(-3), np.int16(30000), np.int32(-7), np.int64(1 << 40),
                  np.float32(1.5), np.float64(-2.25), np.bool_(True), 0x1000)
    assert layout.pack(numpy_args, grid=1, block=1) == blob
    assert layout.pack((255, np.uint16(65535), np.uint32(2**32 - 1), np.uint64(2**64 - 1),
                        np.float32(0), np.float64(0), 0, 0), grid=1, block=1)[:4] == \
        b"\xff\x00\xff\xff"
    with pytest.raises(ArgumentTypeError, match=r"args\[1\].*unknown.*np.int16"):
        layout.pack((0, 1, np.int32(0), np.int64(0), np.float32(0), np.float64(0), 0, 0),
                    grid=1, block=1)


def test_typed_scalars_from_opencl(cl):
    layout = cl["clk"].layout
    names = [p.name for p in layout.params]
    args = {n: 0 for n in names}
    args.update(s=bytes(24), v4=np.arange(4, dtype=np.float32), f=2.5, d=-1.0, h=0.5, ch=-128,
                uc=255, ui=4_000_000_000, l=-(1 << 62), a=Buffer(0x10), tmp=64, img=0x20, smp=0x30)
    blob = layout.pack([args[n] for n in names])
    off = {p.name: p.offset for p in layout.params}
    assert struct.unpack_from("<f", blob, off["f"])[0] == 2.5
    assert struct.unpack_from("<e", blob, off["h"])[0] == 0.5
    assert struct.unpack_from("<b", blob, off["ch"])[0] == -128
    assert struct.unpack_from("<I", blob, off["ui"])[0] == 4_000_000_000
    assert struct.unpack_from("<4f", blob, off["v4"]) == (0.0, 1.0, 2.0, 3.0)
    assert struct.unpack_from("<I", blob, off["tmp"])[0] == 64
    assert struct.unpack_from("<Q", blob, off["img"])[0] == 0x20

    def bad(name, value):
        return [value if n == name else args[n] for n in names]
    for name, value, cls, text in [
        ("i", 1.5, ArgumentTypeError, "expected an integer"),
        ("ui", -1, ArgumentValueError, "out of range for uint"),
        ("ch", 200, ArgumentValueError, r"out of range for char \(1 bytes\) \(-128..127\)"),
        ("f", 1e39, ArgumentRangeError, "out of range for float"),
        ("f", np.int32(1), ArgumentTypeError, "integer.*floating"),
        ("i", np.float32(1), ArgumentTypeError, "floating.*integer"),
        ("i", np.int64(1), ArgumentTypeError, "8 bytes.*int"),
        ("f", True, ArgumentTypeError, "got bool"),
        ("d", np.float32(1.0), ArgumentTypeError, "numpy.float32 of 4 bytes"),
        ("v4", b"\0" * 15, ArgumentValueError, "15 bytes given for a 16-byte parameter"),
        ("s", "abc", ArgumentTypeError, "got str"),
    ]:
        with pytest.raises(cls, match=text) as info:
            layout.pack(bad(name, value))
        index = names.index(name)
        assert f"args[{index}] ('{name}', " in str(info.value)
        assert (info.value.index, info.value.param) == (index, name)


def test_struct_by_value(v5):
    layout = v5["bystruct"].layout
    pair = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "i1")], align=True)
    value = np.array([(7, 2.5, 3)], dtype=pair)[0]
    blob = layout.pack((value, Buffer(0x40)), grid=1, block=1)
    assert struct.unpack_from("<i4xdb", blob, 0) == (7, 2.5, 3)
    assert layout.pack((value.tobytes(), 0x40), grid=1, block=1) == blob
    assert layout.pack((np.frombuffer(value.tobytes(), np.int32), 0x40), grid=1, block=1) == blob
    with pytest.raises(ArgumentValueError,
                       match=r"args\[0\] \('p', by_value, 24 bytes at offset 0\): bytes of 23"):
        layout.pack((b"x" * 23, 0), grid=1, block=1)
    with pytest.raises(ArgumentTypeError, match="got int"):
        layout.pack((5, 0), grid=1, block=1)


def test_pointer_conversions(v5):
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    layout = v5["vadd"].layout
    blob = layout.pack((ffi.cast("void *", 0x1234000), None, np.uint64(0x5000), np.int32(1)),
                       grid=1, block=1)
    assert struct.unpack_from("<QQQ", blob) == (0x1234000, 0, 0x5000)
    for value, cls, text in [
        (1.0, ArgumentTypeError, "expected a device pointer .* got float"),
        (np.zeros(4), ArgumentTypeError, "got numpy.ndarray"),
        (True, ArgumentTypeError, "got bool"),
        ("0x10", ArgumentTypeError, "got str"),
        (Buffer("0x10"), ArgumentTypeError, r"\.ptr is str"),
        (-1, ArgumentValueError, "does not fit in 8 bytes"),
        (1 << 64, ArgumentValueError, "does not fit in 8 bytes"),
    ]:
        with pytest.raises(cls, match=text) as info:
            layout.pack((0, value, 0, 0), grid=1, block=1)
        assert "vadd: args[1] ('b', global_buffer, 8 bytes at offset 8)" in str(info.value)


def test_argument_count(v5, v4):
    with pytest.raises(ArgumentCountError, match=r"vadd\(\) takes 4 arguments \(3 given\)"):
        v5["vadd"].layout.pack((0, 0, 0), grid=1, block=1)
    with pytest.raises(TypeError, match=r"takes 1 arguments \(2 given\)"):
        v4["pf"].layout.pack((1, 2))


def test_unnamed_parameters_are_named_by_index(v4):
    with pytest.raises(ArgumentValueError, match=r"scalars: args\[0\] \(by_value, 1 byte at "
                                                 r"offset 0\): 256 is out of range") as info:
        v4["scalars"].layout.pack((256, 0, 0, 0, 0.0, 0.0, False, 0))
    assert isinstance(info.value, KernelArgumentError) and info.value.param is None


@pytest.mark.parametrize("kwargs,text", [
    ({}, "pass block= and one of grid="),
    ({"grid": 4}, "pass block= and one of grid="),
    ({"grid": 4, "grid_blocks": 4, "block": 1}, "one of grid="),
    ({"grid": 4, "block": 0}, "block must be a positive int"),
    ({"grid": 4, "block": (1, 2, 3, 4)}, "block must be"),
    ({"grid": (4.5,), "block": 1}, "grid must be"),
    ({"grid": "4", "block": 1}, "grid must be"),
    ({"grid_blocks": 1 << 32, "block": 1}, "hidden_block_count_x = 4294967296 does not fit"),
    ({"grid": 4, "block": 1, "dynamic_lds": -1}, "dynamic_lds must be"),
])
def test_launch_config_errors(v5, kwargs, text):
    with pytest.raises(LaunchConfigError, match=text) as info:
        v5["vadd"].layout.pack((0, 0, 0, np.int32(0)), **kwargs)
    assert isinstance(info.value, ValueError)


def test_pack_into(v5):
    layout = v5["vadd"].layout
    args = (0x1000, 0x2000, 0x3000, np.int32(42))
    buf = bytearray(b"\xff" * 1024)
    layout.pack_into(buf, 64, args, grid=(512,), block=(128,))
    assert buf[64:64 + layout.size] == layout.pack(args, grid=(512,), block=(128,))
    assert buf[:64] == b"\xff" * 64 and buf[64 + layout.size] == 0xFF
    with pytest.raises(ValueError, match="not a non-negative multiple"):
        layout.pack_into(buf, 4, args, grid=512, block=128)
    with pytest.raises(ValueError, match="the kernarg segment needs 288"):
        layout.pack_into(bytearray(300), 16, args, grid=512, block=128)
    with pytest.raises(ArgumentTypeError):
        layout.pack_into(buf, 0, (0, 0, 0, "x"), grid=512, block=128)


def test_from_params_matches_metadata(v5):
    k = v5["vadd"]
    params = [(a.offset, a.size, a.value_kind, a.name) for a in k.args + k.hidden_args]
    layout = KernargLayout.from_params(params, size=k.kernarg_segment_size, name="vadd")
    args = (Buffer(0x1000), 0x2000, 0x3000, np.int32(7))
    assert layout.pack(args, grid=(300, 2), block=(64, 2)) == \
        k.layout.pack(args, grid=(300, 2), block=(64, 2))
    assert [p.name for p in layout.params] == ["a", "b", "c", "n"]


def test_from_params_without_metadata():
    # What the NVIDIA backend has: offsets and sizes; untyped 8 bytes take pointers too.
    layout = KernargLayout.from_params([(0, 8), (8, 4, "by_value"),
                                        (16, 4, "hidden_dynamic_lds_size")])
    assert layout.size == 24
    blob = layout.pack((Buffer(0x7000), np.int32(3)), grid=1, block=1, dynamic_lds=4096)
    assert struct.unpack("<Qi4xI4x", blob) == (0x7000, 3, 4096)
    with pytest.raises(CodeObjectError, match="overlaps"):
        KernargLayout.from_params([(0, 8, "by_value"), (4, 4, "by_value")])
    with pytest.raises(ValueError, match=r"parameter 0: expected \(offset, size\[, kind"):
        KernargLayout.from_params([(0,)])
    assert KernargLayout.from_params([]).pack(()) == b""
