"""`Addressed`: an owned handle that is an address of ``size`` bytes (a pool
`Buffer`, attached `IpcMemory`): ``ptr``, ``nbytes``, ``int()`` and
``operator.index`` in one place."""
from __future__ import annotations

from collections.abc import Callable

from .._handle import Handle


class Addressed(Handle):
    """A `Handle` whose native handle is an address (an int) of ``size`` bytes.

    The subclass sets ``size`` before ``Handle.__init__``.  ``ptr`` refuses
    once released, so no kernel, copy or ``int()`` gets freed or detached memory.
    """

    __slots__ = ()

    size: int

    @property
    def nbytes(self) -> int:
        """The size in bytes (``size``, under the name HIP buffers use)."""
        return self.size

    @property
    def ptr(self) -> int:
        """The address in this process (raises `rocpy.ClosedError` once released)."""
        result: int = self._require_open()
        return result

    # the property's getter itself (mypy reads a property in its class body as a method)
    __int__: Callable[[Addressed], int] = ptr.fget  # type: ignore[attr-defined]
    __index__: Callable[[Addressed], int] = ptr.fget  # type: ignore[attr-defined]
