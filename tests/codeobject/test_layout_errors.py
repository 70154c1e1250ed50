"""Malformed kernel layouts, target IDs and descriptors no other test reached (coverage):
each raises its own error type, naming the kernel or the parameter."""
from __future__ import annotations

import pytest

from rocpy.codeobject import CodeObjectError, KernargLayout
from rocpy.codeobject.descriptor import SIZE, KernelDescriptor
from rocpy.codeobject.target import InvalidTargetIdError, parse_target_id


def test_explicit_arguments_out_of_offset_order():
    with pytest.raises(CodeObjectError, match="^k: explicit arguments are not in offset order$"):
        KernargLayout.from_params([(8, 4), (0, 4)], name="k")


def test_arguments_past_the_segment():
    with pytest.raises(CodeObjectError, match=r"^k: arguments end at 8 bytes, kernarg segment "
                                              r"is 4 bytes \(limit \d+\)$"):
        KernargLayout.from_params([(0, 8)], size=4, name="k")
    assert KernargLayout.from_params([(0, 8)], size=8, name="k").size == 8


@pytest.mark.parametrize("param", [(-1, 4), (0, 0), (0, -4)])
def test_parameter_offsets_and_sizes(param):
    with pytest.raises(ValueError, match=rf"^parameter 0: offset {param[0]} and size {param[1]} "
                                         "must be non-negative and positive$"):
        KernargLayout.from_params([param], name="k")


@pytest.mark.parametrize("bad", [None, 906, b"gfx906"])
def test_target_id_must_be_a_string(bad):
    with pytest.raises(InvalidTargetIdError, match=f"^target ID must be a string, not "
                                                   f"{type(bad).__name__}$"):
        parse_target_id(bad)


def test_kernel_descriptor_needs_its_64_bytes():
    for n in (0, SIZE - 1, SIZE + 1):
        with pytest.raises(CodeObjectError, match=f"^kernel descriptor needs {SIZE} bytes, "
                                                  f"got {n}$"):
            KernelDescriptor.from_bytes(bytes(n), "gfx90a")
