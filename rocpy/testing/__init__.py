"""Testing GPU code with rocpy: leak checks, stub controls, one GPU per pytest-xdist worker.

The pytest plugin (`rocpy.testing.plugin`, registered through the ``pytest11``
entry point, so installing rocpy enables it) gives fixtures and markers; this
module holds what they are made of, usable without pytest too::

    from rocpy.testing import LeakCheck
    with LeakCheck():            # raises LeakError if a rocpy object or stub allocation survives
        run_my_code()

See docs/pytest-plugin.md.
"""
from __future__ import annotations

import sys
import time
from typing import Any, Callable

import rocpy
import rocpy.debug

__all__ = ["LeakCheck", "LeakError", "StubControls", "settle", "stub_allocations"]


class LeakError(AssertionError):
    """Native objects or stub allocations outlived the code a `LeakCheck` watched."""


def settle(timeout: float = 10.0, poll: float = 0.01) -> dict[str, int]:
    """Wait until what finished work kept alive is released; return what is still alive.

    Synchronizes every HIP device (only where rocpy.hip is in use), then
    collects (`rocpy.debug.collect`) every ``poll`` seconds until nothing is
    alive or ``timeout`` passes: a stream's last release may trail its work.
    """
    deadline = time.monotonic() + timeout
    hip = sys.modules.get("rocpy.hip")
    if hip is not None:
        for i in range(hip.device_count()):
            hip.Device(i).sync()
    while True:
        rocpy.debug.collect(max(0.0, deadline - time.monotonic()))
        live = rocpy.debug.live_objects()
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(poll)


def stub_allocations() -> int | None:
    """The stub's count of live native allocations; None on a real backend."""
    if not rocpy.backend().is_stub:
        return None
    from rocpy import stub
    return stub.live_allocations()


class LeakCheck:
    """Fails code that leaves rocpy objects or (on the stub) native allocations behind.

    ``start()`` settles what earlier code left in flight and records the stub's
    allocation count; ``finish()`` disarms stub faults, waits up to ``timeout``
    for releases, then raises `LeakError` naming what is still alive.  Also a
    context manager.
    """

    def __init__(self, timeout: float = 10.0, allocations: bool = True) -> None:
        self.timeout = timeout
        self.allocations = allocations
        self.before: int | None = None

    def start(self) -> "LeakCheck":
        """Settle what earlier work left in flight and record the stub's allocation count."""
        if rocpy.debug.live_objects():
            settle(self.timeout)
        self.before = stub_allocations() if self.allocations else None
        return self

    def finish(self) -> None:
        """Synchronize, collect until nothing is alive or the timeout passes; raise `LeakError` if something is."""
        if rocpy.backend().is_stub:
            from rocpy import stub
            stub.clear_faults()
        deadline = time.monotonic() + self.timeout
        live = settle(self.timeout)
        if live:
            raise LeakError(f"rocpy objects still alive after the test: {live}")
        if self.before is None:
            return
        now = stub_allocations()
        # fewer than before is not this test's leak: what earlier code released natively
        # (a stream's last release trails its objects) finished during the test
        while now is not None and now > self.before and time.monotonic() < deadline:
            time.sleep(0.01)   # a stream's last native release may still be on its way
            now = stub_allocations()
        if now is not None and now > self.before:
            raise LeakError(f"stub allocations: {self.before} before the test, {now} after")

    def __enter__(self) -> "LeakCheck":
        return self.start()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.finish()


class StubControls:
    """The stub runtime's controls for one test; `close` undoes what the test armed.

    ``inject(kind, skip=0, count=1)`` arms a fault (``alloc``, ``queue_error``,
    ``memory_fault``), ``emulate(name, fn)`` registers a kernel emulation
    (unregistered at the end), ``live_allocations()`` counts native allocations.
    """

    def __init__(self) -> None:
        from rocpy import stub
        self.stub = stub
        self._emulated: list[str] = []

    def inject(self, kind: str, skip: int = 0, count: int = 1) -> None:
        """Arm a fault: `rocpy.stub.inject` (disarmed after the test)."""
        self.stub.inject(kind, skip, count)

    def clear_faults(self) -> None:
        """Disarm every armed fault (`rocpy.stub.clear_faults`)."""
        self.stub.clear_faults()

    def emulate(self, name: str, fn: Callable[[Any], int | None]) -> None:
        """Register ``fn`` as kernel ``name``'s emulation (`rocpy.stub.register_kernel`), unregistered after the test."""
        self.stub.register_kernel(name, fn)
        self._emulated.append(name)

    def live_allocations(self) -> int:
        """The stub's live native allocations (`rocpy.stub.live_allocations`)."""
        return self.stub.live_allocations()

    def device_count(self) -> int:
        """The number of simulated devices (`rocpy.stub.device_count`)."""
        return self.stub.device_count()

    def close(self) -> None:
        """Disarm faults and unregister the emulations this test registered."""
        self.stub.clear_faults()
        while self._emulated:
            self.stub.unregister_kernel(self._emulated.pop())
