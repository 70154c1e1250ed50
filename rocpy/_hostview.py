"""`HostView`: the borrowed child handle that numpy arrays (and DLPack consumers) hold.

Both layers' buffers hand one to every zero-copy view they make: while a
view lives, closing its buffer only marks the buffer closed, and the memory
is freed once the last view is gone (the `Handle` rule for parents with
live children).
"""
from __future__ import annotations

from typing import Any

from ._handle import Handle


class HostView(Handle):
    """A borrowed child of a buffer that a numpy array (or DLPack consumer) holds.

    ``iface``, when given, is served as ``__array_interface__`` (so that
    ``np.asarray(view)`` is a zero-copy array whose base is the view).
    """

    __slots__ = ("_iface",)

    def __init__(self, buffer: Any, iface: dict[str, Any] | None = None) -> None:
        super().__init__(buffer._require_open(), parents=(buffer,))
        self._iface = iface

    @property
    def __array_interface__(self) -> dict[str, Any]:
        iface = self._iface
        if iface is None or self._h is None:
            raise AttributeError("__array_interface__")
        return iface
