"""Kernel-argument refusals no other test reached (coverage): a foreign array without a
usable data pointer, a cffi value that is not a pointer, a by-value struct of the wrong
size.  Both packers (generated and generic) must raise the same error."""
from __future__ import annotations

import numpy as np
import pytest

from packing import pack
from rocpy.codeobject import ArgumentTypeError, ArgumentValueError, KernargLayout

# scale(float* x, int n): a typed pointer parameter
SCALE = KernargLayout.from_params([(0, 8, "global_buffer"), (8, 4)], name="_Z5scalePfi")
# one 12-byte by-value struct (no type known: raw bytes of exactly that size)
STRUCT = KernargLayout.from_params([(0, 12)], name="take_struct")
POINTER = r"_Z5scalePfi: args\[0\] \(float\* global_buffer, 8 bytes at offset 0\): "


class Foreign:
    def __init__(self, **iface):
        self.iface = {"shape": (4,), "typestr": "|u1", "version": 3, **iface}

    @property
    def __cuda_array_interface__(self):
        return self.iface


def test_foreign_array_without_an_int_data_pointer():
    with pytest.raises(ArgumentTypeError, match=POINTER + r".*Foreign.__cuda_array_interface__ "
                                                          r"has no data pointer$") as e:
        pack(SCALE, (Foreign(), 1))
    assert e.value.index == 0
    for bad, name in (("0x1000", "str"), (True, "bool"), (1.0, "float")):
        with pytest.raises(ArgumentTypeError, match=POINTER + r".*data pointer is "
                                                              f"{name}, not an int$"):
            pack(SCALE, (Foreign(data=(bad, False)), 1))
    assert pack(SCALE, (Foreign(data=(0x1000, False)), 1))[:8] == (0x1000).to_bytes(8, "little")


def test_cffi_value_that_is_not_a_pointer():
    from rocpy.hip import ffi
    value = ffi.new("dim3 *")[0]                 # a struct, by value
    with pytest.raises(ArgumentTypeError, match=POINTER + r"cffi object <cdata '(struct )?dim3' .*> is not "
                                                          r"a pointer$"):
        pack(SCALE, (value, 1))
    array = ffi.new("float[4]")                  # an array is a pointer
    assert pack(SCALE, (array, 1))[:8] == int(ffi.cast("uintptr_t", array)).to_bytes(8, "little")


def test_by_value_struct_of_the_wrong_size():
    prefix = r"^take_struct: args\[0\] \(by_value, 12 bytes at offset 0\): "
    with pytest.raises(ArgumentValueError, match=prefix + "memoryview of 8 bytes given for a "
                                                          "12-byte parameter$"):
        pack(STRUCT, (memoryview(bytearray(8)),))
    with pytest.raises(ArgumentValueError, match=prefix + r"numpy.ndarray of 16 bytes given"):
        pack(STRUCT, (np.zeros(4, np.float32),))
    assert pack(STRUCT, (np.arange(3, dtype=np.float32),))[:12] == \
        np.arange(3, dtype=np.float32).tobytes()
