"""Kernel arguments convert by value from the parameter types (argconv's Slot
plan), and parameters of unknown type refuse bare Python numbers.  Every case
is checked on the generated packer and the generic converter path alike."""
from __future__ import annotations

import ctypes
import struct

import numpy as np
import pytest

from packing import pack
from rocpy.codeobject import (ArgumentRangeError, ArgumentTypeError, ArgumentValueError,
                              KernargLayout)

# scale(float* x, int n, float a), its mangled name carrying the types
SCALE = KernargLayout.from_params([(0, 8, "global_buffer"), (8, 4), (12, 4)],
                                  name="_Z5scalePfif")
# the same layout with no types (an extern "C" kernel)
UNTYPED = KernargLayout.from_params([(0, 8, "global_buffer"), (8, 4), (12, 4)], name="scale")
# kall(bool, char, unsigned char, short, unsigned short, unsigned int, long, unsigned long,
#      double, _Float16)
ALL = KernargLayout.from_params(
    [(0, 1), (1, 1), (2, 1), (4, 2), (6, 2), (8, 4), (16, 8), (24, 8), (32, 8), (40, 2)],
    name="_Z4kallbchstjlmdDF16_")


def fields(blob: bytes):
    return struct.unpack("<Qif", blob)


def test_the_issue_case_converts_by_value():
    assert fields(pack(SCALE, (0x1000, 3, 2.5))) == (0x1000, 3, 2.5)
    assert fields(pack(SCALE, (0, 3, 2))) == (0, 3, 2.0)          # int for a float: by value
    with pytest.raises(ArgumentTypeError, match=r"args\[1\] \(int by_value.*got float"):
        pack(SCALE, (0, 2.5, 3))                                    # the silently wrong case


def test_range_errors_name_the_argument_and_type():
    with pytest.raises(ArgumentRangeError) as e:
        pack(SCALE, (0, 1 << 31, 1.0))
    assert isinstance(e.value, OverflowError) and isinstance(e.value, ArgumentValueError)
    assert e.value.index == 1 and "args[1]" in str(e.value) and "int (4 bytes)" in str(e.value)
    assert fields(pack(SCALE, (0, -(1 << 31), 1.0)))[1] == -(1 << 31)
    with pytest.raises(ArgumentRangeError, match=r"args\[2\].*out of range for float"):
        pack(SCALE, (0, 1, 1e39))
    with pytest.raises(ArgumentRangeError, match=r"out of range for float"):
        pack(SCALE, (0, 1, 1 << 200))
    with pytest.raises(ArgumentRangeError, match=r"args\[2\] .*unsigned char"):
        pack(ALL, (True, 0, 256, 0, 0, 0, 0, 0, 0.0, 0.0))
    with pytest.raises(ArgumentRangeError, match=r"args\[5\] .*unsigned int"):
        pack(ALL, (True, 0, 0, 0, 0, -1, 0, 0, 0.0, 0.0))
    with pytest.raises(ArgumentRangeError, match=r"args\[0\] .*bool"):
        pack(ALL, (2, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0))
    with pytest.raises(ArgumentRangeError, match=r"args\[1\] .*char"):
        pack(ALL, (True, 128, 0, 0, 0, 0, 0, 0, 0.0, 0.0))


def test_every_builtin_type():
    args = (True, -5, 200, -300, 60000, 4000000000, -(1 << 62), (1 << 64) - 1, 0.1, 1.5)
    blob = pack(ALL, args)
    assert struct.unpack("<?bBxhHIxxxxqQde", blob[:42]) == args[:8] + (0.1, 1.5)
    with pytest.raises((ArgumentValueError, OverflowError)):
        pack(ALL, (True, 0, 0, 0, 0, 0, 0, 0, 0.0, 70000.0))      # beyond half's range


def test_numpy_scalars():
    # the exact width: by value, any signedness, range-checked
    assert fields(pack(SCALE, (0, np.int32(-3), np.float32(2.5)))) == (0, -3, 2.5)
    assert fields(pack(SCALE, (0, np.uint32(7), 1.0)))[1] == 7
    with pytest.raises(ArgumentRangeError, match=r"args\[1\]"):
        pack(SCALE, (0, np.uint32(1 << 31), 1.0))
    with pytest.raises(ArgumentRangeError, match=r"args\[5\]"):
        pack(ALL, (True, 0, 0, 0, 0, np.int32(-1), 0, 0, 0.0, 0.0))
    # another width: refused (never narrowed, never widened)
    for bad in (np.int64(3), np.int16(3), np.uint8(3)):
        with pytest.raises(ArgumentTypeError, match=r"args\[1\].*pass a numpy integer of 4"):
            pack(SCALE, (0, bad, 1.0))
    for bad in (np.float64(2.5), np.float16(2.5)):
        with pytest.raises(ArgumentTypeError, match=r"args\[2\]"):
            pack(SCALE, (0, 1, bad))
    # another kind: refused (no reinterpretation of bits)
    with pytest.raises(ArgumentTypeError, match=r"numpy.float32 \(floating\).*integer type"):
        pack(SCALE, (0, np.float32(3), 1.0))
    with pytest.raises(ArgumentTypeError, match=r"numpy.int32 \(integer\).*floating type"):
        pack(SCALE, (0, 1, np.int32(3)))
    with pytest.raises(ArgumentTypeError):
        pack(SCALE, (0, 1, np.array([1], dtype=np.int32)))
    assert pack(ALL, (np.bool_(True), np.int8(-1), np.uint8(1), np.int16(2), np.uint16(3),
                      np.uint32(4), np.int64(5), np.uint64(6), np.float64(7),
                      np.float16(8)))[:1] == b"\x01"


def test_ctypes_values():
    assert fields(pack(SCALE, (0, ctypes.c_int32(-4), ctypes.c_float(0.5)))) == (0, -4, 0.5)
    with pytest.raises(ArgumentTypeError):
        pack(SCALE, (0, ctypes.c_int64(4), 1.0))
    with pytest.raises(ArgumentTypeError):
        pack(SCALE, (0, ctypes.c_float(4), 1.0))
    with pytest.raises(ArgumentTypeError):
        pack(SCALE, (0, 1, ctypes.c_double(1)))


def test_bool_and_wrong_types():
    assert fields(pack(SCALE, (0, True, 1.0)))[1] == 1
    for bad in ("3", None, [3], 3j):
        with pytest.raises(ArgumentTypeError, match=r"args\[1\]"):
            pack(SCALE, (0, bad, 1.0))
    for bad in (True, "2.5", None, 2j):
        with pytest.raises(ArgumentTypeError, match=r"args\[2\]"):
            pack(SCALE, (0, 1, bad))


@pytest.mark.parametrize("value", [3, 2.5, True, -1, 1 << 40])
def test_unknown_types_refuse_bare_numbers(value):
    with pytest.raises(ArgumentTypeError) as e:
        pack(UNTYPED, (0, value, np.float32(1)))
    msg = str(e.value)
    assert "args[1]" in msg and "unknown" in msg
    assert "np.int32(...)" in msg and "np.float32(...)" in msg and "ctypes" in msg


def test_unknown_types_take_values_that_state_their_type():
    assert fields(pack(UNTYPED, (0, np.int32(3), np.float32(2.5)))) == (0, 3, 2.5)
    assert fields(pack(UNTYPED, (0, ctypes.c_int32(3), ctypes.c_float(2.5)))) == (0, 3, 2.5)
    assert fields(pack(UNTYPED, (0, struct.pack("<i", 3), np.array([2.5], np.float32))))[1:] \
        == (3, 2.5)
    # an np.float32 for what is in truth an int is the caller's explicit choice of bits
    assert fields(pack(UNTYPED, (0, np.float32(1), np.uint32(1))))[1] == 0x3F800000
    with pytest.raises(ArgumentTypeError, match=r"args\[1\].*8 bytes"):
        pack(UNTYPED, (0, np.int64(3), np.float32(1)))
    with pytest.raises(ArgumentTypeError, match=r"args\[1\].*c_(long|int64) of 8 bytes"):
        pack(UNTYPED, (0, ctypes.c_int64(3), np.float32(1)))
    with pytest.raises(ArgumentTypeError, match=r"args\[1\]"):
        pack(UNTYPED, (0, "3", np.float32(1)))


class _Buf:
    ptr = 0x2000


def test_unknown_8_byte_values_take_pointers_and_refuse_numbers():
    layout = KernargLayout.from_params([(0, 8), (8, 1)], name="k")
    assert pack(layout, (_Buf(), 5))[:9] == struct.pack("<QB", 0x2000, 5)
    assert pack(layout, (None, -1))[:9] == struct.pack("<Qb", 0, -1)
    assert pack(layout, (np.float64(1.5), 0))[:8] == struct.pack("<d", 1.5)
    with pytest.raises(ArgumentTypeError, match=r"args\[0\].*np.int64\(\.\.\.\).*buffer/None"):
        pack(layout, (0x2000, 0))
    with pytest.raises(ArgumentRangeError, match=r"args\[1\]"):
        pack(layout, (None, 256))            # 1-byte values of unknown type are integers
    with pytest.raises(ArgumentTypeError, match=r"args\[1\]"):
        pack(layout, (None, 1.0))


def test_declared_types_and_structs():
    layout = KernargLayout.from_params([(0, 4), (4, 4), (8, 8)], name="k",
                                       types=("unsigned int", "Pair", "double"))
    assert [p.type_name for p in layout.params] == ["unsigned int", "Pair", "double"]
    blob = pack(layout, (7, b"abcd", 2))
    assert struct.unpack("<I4sd", blob) == (7, b"abcd", 2.0)
    with pytest.raises(ArgumentTypeError, match=r"args\[1\].*struct"):
        pack(layout, (7, 5, 2.0))            # a struct by value takes bytes only
    with pytest.raises(ArgumentValueError, match=r"args\[1\]"):
        pack(layout, (7, b"abc", 2.0))
