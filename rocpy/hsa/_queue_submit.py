"""`Queue`'s kernel submission: single dispatches, prepared batches, `sync`.

Submission is C (``rocpy/_native/fast/hsa/aql.c``): kernarg bytes copied into
the queue's kernarg ring (one allocation from the CPU agent's kernarg pool,
bump-allocated in segments), a slot reserved with
hsa_queue_add_write_index_scacq_screl (waiting for space when the ring is
full), the packet body written, the header published with one 32-bit
atomic release store, and the doorbell rung.  A kernarg segment is recycled
after the barrier-AND packet that closed it completed, i.e. after every
dispatch that used it.  What those dispatches use (the argument objects,
the completion signal) is kept alive until then: a segment's objects are
released by rocpy's reaper once the segment retired, or by `sync`.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .. import _args
from .._handle import Borrow
from ..codeobject.errors import ArgumentCountError
from ..errors import ClosedError
from ._common import api, check_timeout, signal_handle, ticks
from ._queue_native import WAIT_SLICE
from ._queue_state import Retired
from .dispatch import Dispatch
from .executable import Kernel
from .signal import Signal

if TYPE_CHECKING:
    from .agent import Agent

FULL = -4   # ROCPY_AQL_FULL (aql.h): no space within one wait slice, nothing submitted


class Submission:
    """The submission half of `Queue` (a mixin: the state is the Queue's)."""

    # mypy checks assignments against a class's own __slots__; a mixin's state is its Queue's
    if not TYPE_CHECKING:
        __slots__ = ()
    _aql: Any
    _agent_hv: int
    _bad: bool
    _dispatch_c: Any
    _failed: Any
    _gen: int
    _h: Any
    _kernels: set[Kernel]
    _lib: Any
    _lock: Any
    _pending: Any
    _refs: list[Any]
    _ring: Any
    _seg_bytes: int
    _templates: dict[Any, bytes]
    agent: Agent
    # Queue defines _check; Handle _closed_error

    if TYPE_CHECKING:   # Queue's and Handle's
        def _check(self) -> None: ...
        def _closed_error(self) -> ClosedError: ...

    def _live_aql(self) -> Any:
        """The C submission state; under ``self._lock`` (the release frees it under that lock)."""
        if self._h is None:
            raise self._closed_error()
        return self._aql

    def _submitted(self, gen: int, refs: Any) -> None:
        """After a C submission: keep `refs` for the generation; raise C errors."""
        if gen != self._gen:
            if gen < 0:
                self._refs.append(refs)
                self._c_error(gen)
            # the old generation's segments retire when their closing barriers complete
            old, self._refs = self._refs, []
            self._pending.keep_alive(Retired(self._ring, self._gen), old)
            self._gen = gen
        self._refs.append(refs)

    def _hold(self, obj: Any) -> None:
        """`rocpy._keepalive.Timeline`: keep ``obj`` until the packets submitted so far
        complete.  A queue's point is its kernarg generation: ``obj`` joins the
        current one, which retires after every packet submitted in it (its closing
        barrier); a closed queue has no work left, and keeps nothing."""
        with self._lock:
            if self._h is not None:
                self._refs.append(obj)

    def _keep_alive(self, *objs: Any) -> None:
        """`rocpy._keepalive.Timeline`: `_hold` (the current generation is the point),
        what ``Handle.close(stream=queue)`` uses."""
        self._hold(objs)

    def _wait_for_space(self, retry: Callable[[], int] | None) -> int:
        """After ROCPY_AQLFULL (one wait slice without ring space or a free kernarg
        segment, nothing submitted): raise the queue's error if it failed, note a
        kernarg generation the attempt opened, then `retry()`.  Returning to
        Python between slices is what lets Ctrl-C interrupt a full queue."""
        if self._failed.status or self._h is None:
            self._check()
        gen = self._lib.rocpy_aql_generation(self._live_aql())
        if gen != self._gen:
            self._submitted(gen, None)
        return retry() if retry is not None else FULL

    def _c_error(self, code: int) -> None:
        lib = self._lib
        if code == lib.ROCPY_AQL_FAILED:
            self._check()
            raise RuntimeError("the queue failed")  # unreachable: _check raises
        if code == lib.ROCPY_AQL_TOO_LARGE:
            raise ValueError(f"the kernel arguments do not fit in one kernarg segment "
                             f"({self._seg_bytes} bytes): create the queue with a larger "
                             "kernarg_bytes")
        raise ValueError(f"malformed dispatch record (code {code})")

    def dispatch(self, kernel: Kernel, grid: Any, workgroup: Any, args: Sequence[Any] = (), *,
                 completion_signal: Signal | None = None, barrier: bool = True,
                 fences: Any = None, group_segment_size: int | None = None,
                 private_segment_size: int | None = None, dynamic_lds: int = 0) -> None:
        """Submit one kernel dispatch packet.

        ``grid`` in work-items and ``workgroup`` in work-items per group (an
        int or 1 to 3 ints); ``args`` packed from the kernel's metadata;
        ``completion_signal`` decremented when the kernel is done;
        ``barrier`` (default True, as ROCclr sets it on every HIP dispatch)
        waits for every earlier packet: without it the packet may start
        before earlier ones finish, so only independent work may pass
        ``barrier=False``; ``fences`` None (system
        acquire and release), one scope or an (acquire, release) pair of
        ``'none'``/``'agent'``/``'system'``; the segment sizes default to the
        kernel's (plus ``dynamic_lds`` bytes of group memory).

        Args:
            kernel: An `rocpy.hsa.Kernel` of an executable loaded for this queue's agent.
            grid: Work-items in the grid (an int or 1 to 3 ints).
            workgroup: Work-items per group (an int or 1 to 3 ints).
            args: The kernel's arguments, packed by its metadata.
            completion_signal: A `Signal` the packet decrements when done.
            barrier: Wait for every earlier packet first.
            fences: The acquire and release scopes; None: system.
            group_segment_size: Group (LDS) bytes; None: the kernel's.
            private_segment_size: Private bytes per work-item; None: the kernel's.
            dynamic_lds: Extra group bytes for dynamic shared memory.

        Raises:
            rocpy.codeobject.KernelArgumentError: an argument does not fit its parameter.
            rocpy.codeobject.LaunchConfigError: the grid or workgroup is not
                1 to 3 sizes within the agent's limits.
            rocpy.HsaError: the queue has failed (its error).
        """
        if self._bad:
            self._check()
        if (not barrier or dynamic_lds or fences is not None or group_segment_size is not None
                or private_segment_size is not None):
            key: tuple[Any, ...] = (kernel, grid, workgroup, barrier, fences, group_segment_size,
                                    private_segment_size, dynamic_lds)
        else:
            key = (kernel, grid, workgroup)
        try:
            packet = self._templates[key]
        except (KeyError, TypeError):
            packet = self._template(key, kernel, grid, workgroup, barrier, fences,
                                    group_segment_size, private_segment_size, dynamic_lds)
        if kernel._h is None:
            raise kernel._closed_error()
        if kernel._packs:            # Kernel.pack, inlined: one call less per dispatch
            kernarg = kernel._pack(args, grid, workgroup, None, dynamic_lds, None)
            if kernel._kernarg_pad:
                kernarg += kernel._pad_bytes
        elif args:
            raise ArgumentCountError(f"{kernel.name}() takes 0 arguments ({len(args)} given)")
        else:
            kernarg = kernel._no_args
        if completion_signal is None:
            sig = 0
        elif type(completion_signal) is not Signal or completion_signal._h is None:
            sig = signal_handle(completion_signal, "completion_signal")  # raises the right error
        else:
            sig = completion_signal._hv
        with self._lock:
            if self._h is None:       # closed by another thread: close frees the C state
                raise self._closed_error()
            # the packet processor reaches the signal until the packet retires: a close()
            # meanwhile releases it after that (a Borrow), not under the queued packet
            held = Borrow(completion_signal) if sig else None  # type: ignore[arg-type]  # sig: a signal
            gen = self._dispatch_c(self._aql, packet, kernarg, kernel._kernarg_len, sig)
            while gen == FULL:
                gen = self._wait_for_space(lambda: self._dispatch_c(
                    self._live_aql(), packet, kernarg, kernel._kernarg_len, sig))
            if gen != self._gen:
                self._submitted(gen, (args, held))
            else:
                # the kernel is kept by self._kernels; keep the arguments and the signal
                if args:
                    self._refs.append(args)
                if sig:
                    self._refs.append(held)

    def _template(self, key: tuple[Any, ...], kernel: Any, grid: Any, workgroup: Any,
                  barrier: bool, fences: Any, gss: int | None, pss: int | None, lds: int) -> bytes:
        if not isinstance(kernel, Kernel):
            raise TypeError(f"kernel must be an hsa.Kernel, not {type(kernel).__name__}")
        kernel._require_open()
        if kernel._agent_hv != self._agent_hv:
            raise ValueError(f"kernel {kernel.name!r} was loaded for {kernel.agent!r}, not for "
                             f"this queue's agent {self.agent!r}")
        packet = kernel.packet(grid, workgroup, barrier=barrier, fences=fences,
                               group_segment_size=gss, private_segment_size=pss, dynamic_lds=lds)
        self._kernels.add(kernel)       # what this queue's packets name lives as long as it
        try:
            if len(self._templates) > 1024:
                self._templates.clear()
            self._templates[key] = packet
        except TypeError:
            pass  # unhashable (lists): fine, just not cached
        return packet

    def dispatch_many(self, dispatches: Sequence[Dispatch] | Dispatch, count: int | None = None
                      ) -> None:
        """Submit prepared dispatches with one doorbell.

        ``dispatches`` is a sequence of `Dispatch` (made by `Kernel.prepare`
        or `Dispatch(...)`), or one `Dispatch` with ``count`` to submit it
        ``count`` times.  Their packets and arguments are copied as prepared;
        the C fast path writes them all and rings the doorbell once.
        """
        if self._bad:
            self._check()
        lib = self._lib
        if isinstance(dispatches, Dispatch):
            d = dispatches
            n = 1 if count is None else _args.unsigned(count, 32, "count")   # C's uint32_t
            if d._for != self._agent_hv:
                self._refuse([d])
            if not n:
                return
            with self._lock:
                left = n
                while True:
                    gen = lib.rocpy_aql_submit_repeat(self._live_aql(), d._packet, d._kernarg,
                                                      len(d._kernarg), 0, left)
                    if gen != FULL:
                        break
                    left -= lib.rocpy_aql_done(self._aql)
                    self._wait_for_space(None)
                self._submitted(gen, d)
            return
        if count is not None:
            raise TypeError("count= goes with a single Dispatch")
        items = tuple(dispatches)
        hv = self._agent_hv
        try:
            records = [d._record for d in items if d._for == hv]   # open, for this agent
        except AttributeError:
            records = []
        if len(records) != len(items):
            self._refuse(items)
        if not records:
            return
        with self._lock:
            while True:
                blob = b"".join(records)
                gen = lib.rocpy_aql_submit(self._live_aql(), blob, len(blob), len(records),
                                           _ffi_null())
                if gen != FULL:
                    break
                records = records[lib.rocpy_aql_done(self._aql):]
                self._wait_for_space(None)
            self._submitted(gen, items)

    def _refuse(self, items: Sequence[Any]) -> None:
        for i, d in enumerate(items):
            if not isinstance(d, Dispatch):
                raise TypeError(f"dispatches[{i}] must be an hsa.Dispatch, not {type(d).__name__}")
            if d._h is None:
                raise d._closed_error()
            if d._agent_hv != self._agent_hv:
                raise ValueError(f"dispatches[{i}] was prepared for {d.kernel.agent!r}, not for "
                                 f"this queue's agent {self.agent!r}")

    def sync(self, timeout: float | None = None) -> None:
        """Wait until everything submitted so far completed; then release what it kept alive.

        Raises the queue's error if it fails meanwhile, `TimeoutError` after
        ``timeout`` seconds.
        """
        if self._bad:
            self._check()
        lib = self._lib
        limit = check_timeout(timeout)
        deadline = None if limit is None else time.monotonic() + limit
        with self._lock:
            gen = lib.rocpy_aql_close_segment(self._live_aql())
            while gen == FULL:
                gen = self._wait_for_space(lambda: lib.rocpy_aql_close_segment(self._live_aql()))
            self._submitted(gen, None)
            closed = gen - 1
        ring = self._ring
        hint = ticks(WAIT_SLICE)
        while not ring.wait(closed, hint):
            if self._failed.status or self._h is None:
                self._check()
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"the queue did not drain within {limit} s")
        if self._failed.status or self._h is None:   # it ended by failing or closing
            self._check()
        self._pending.poll()


def _ffi_null() -> Any:
    ffi, _ = api()
    return ffi.NULL
