"""Each refusal of the demangler (rocpy.codeobject.demangle) that no other test reached
(coverage), with an input that reaches it: `Unknown` naming the construct and the
offset, and no parameter types (the layout then falls back to untyped)."""
from __future__ import annotations

import pytest

from rocpy.codeobject.demangle import Unknown, demangle, parameter_types

CASES = [
    ("_ZSv", "bad substitution"),
    ("_Z1kILv", "bad literal"),
    ("_Z1kIPfLZN", "external name literal"),
    ("_ZNEv", "empty nested name"),
    ("_Z1kKRf", "qualified reference or pack"),
    ("_Z3varIJiPdEERDpT_", "pointer to a pack"),
    ("_Z3varILb1EdEvDpT_", "non-type template parameter used as a type"),
    ("_Z1kDpv", "pack expansion of a non-pack"),
    ("_Z1kIJLin2E", "non-type pack"),
    ("_ZN1kStf", "std:: inside a name"),
    ("_ZNIiE", "template arguments without a name"),
    ("_ZNT_", "template parameter as a name prefix"),
    ("_ZSa", "substitution as a name without template arguments"),
    ("_Z5scaliePfNS_", "a non-class type as a name prefix"),
]


@pytest.mark.parametrize(("mangled", "what"), CASES)
def test_refusal_names_the_construct_and_where(mangled, what):
    with pytest.raises(Unknown, match=rf"^{what} at offset \d+ of {mangled!r}$"):
        demangle(mangled)
    assert parameter_types(mangled) is None
