"""The two kernel-argument packers (generated and generic) run side by side."""
from __future__ import annotations

from typing import Any


def pack(layout: Any, args: Any) -> bytes:
    """Both paths; they must agree on the bytes or on the exception (which is raised)."""
    outcomes: list[Any] = []
    for f in (layout.pack, layout._generic_pack):
        try:
            outcomes.append(f(args))
        except Exception as exc:  # noqa: BLE001 - compared below
            outcomes.append(exc)
    a, b = outcomes
    if isinstance(a, Exception):
        assert type(a) is type(b) and str(a) == str(b)
        raise a
    assert a == b
    return a
