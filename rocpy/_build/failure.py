"""C bodies that return a runtime's generic failure.

Used for two things that must agree: the placeholders of functions a header
declares but the library does not export, and the stub's default for every
function it does not simulate.
"""
from __future__ import annotations

from .declarations import Function

# status type -> the runtime's generic failure for "cannot do this"
GENERIC_FAILURE = {
    "hsa_status_t": "HSA_STATUS_ERROR",
    "hipError_t": "hipErrorNotSupported",
    "hiprtcResult": "HIPRTC_ERROR_INTERNAL_ERROR",
}


def failure_body(func: Function) -> str:
    """A function body returning the generic failure for ``func``'s result type."""
    unused = "".join(f"(void){name}; " for _, name in func.params)
    result = func.result
    if result == "void":
        return "{ " + unused + "}"
    if result in GENERIC_FAILURE:
        return "{ " + unused + f"return {GENERIC_FAILURE[result]}; }}"
    # zero, NULL or an all-zero struct, whatever the type is
    return "{ " + unused + result + " zero; memset(&zero, 0, sizeof zero); return zero; }"


def definition(func: Function, name: str, prefix: str = "") -> str:
    """A full C definition of ``func`` named ``name`` returning the generic failure."""
    return f"{prefix}{func.prototype(name)} {failure_body(func)}"
