"""`Queue`: an AQL queue, its dispatches, barriers, indices and errors.

::

    q = gpu.create_queue(size=4096, on_error=lambda exc: print(exc))
    q.dispatch(k, grid=(n,), workgroup=(256,), args=(a, b, c, n), completion_signal=sig)
    q.barrier_and([s1, s2], completion_signal=s3)
    d = k.prepare(...) / hsa.Dispatch(k, ...)        # a prepared packet and its arguments
    q.dispatch_many([d1, d2, ...])                    # N packets, one doorbell
    q.synchronize()                                   # everything submitted so far is done

Submission is C (``rocpy/_native/fast/hsa/aql.c``): kernarg bytes copied into
the queue's kernarg ring (one allocation from the CPU agent's kernarg pool,
bump-allocated in segments), a slot reserved with
hsa_queue_add_write_index_scacq_screl (waiting for space when the ring is
full), the packet body written, the header published with one 32-bit
atomic release store, and the doorbell rung.  A kernarg segment is recycled
after the barrier-AND packet that closed it completed, i.e. after every
dispatch that used it.  What those dispatches use (the argument objects,
the completion signal) is kept alive until then: a segment's objects are
released by rocpy's reaper once the segment retired, or by `synchronize`.
The kernels a queue dispatched live as long as the queue.  An explicit
``close()`` of a buffer or signal that queued work still uses is not
deferred (as in C): use `Dispatch` objects, which hold them, or close after
the work completed.

Queue errors (the queue's error callback, through rocpy's C trampoline and
dispatcher thread) are raised by the queue's next use, every use after, and
passed to ``on_error(exc)`` when given.  A packet that fails stops the
queue, as on hardware.
"""
from __future__ import annotations

import struct
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import _args, _reaper
from .._dispatcher import dispatcher
from .._handle import Borrow, Handle, borrow_all
from ..codeobject.errors import ArgumentCountError
from ..errors import hsa_error
from ._common import (
    UINT32_MAX,
    agent_handle,
    api,
    check_timeout,
    signal_handle,
    ticks,
    timestamp_frequency,
    unsigned,
)
from ._queue_state import QueueFailed, Retired, Ring, destroy
from .dispatch import Dispatch
from .executable import Kernel, fence_bits
from .signal import Signal

if TYPE_CHECKING:
    from .agent import Agent

DEFAULT_SIZE = 4096
DEFAULT_KERNARG_BYTES = 1 << 20
DEFAULT_KERNARG_SEGMENTS = 4
MAX_KERNARG_SEGMENTS = 1 << 16   # each is a signal: a bound before the loop creating them
# How long one blocking HSA wait lasts before rocpy looks for queue errors (and
# Python for Ctrl-C).  Not shorter: ROCr's interrupt-signal wait polls 200 us,
# then sleeps the time left truncated to whole milliseconds, so the last partial
# millisecond of every slice is a busy loop (a 1 ms slice was 80 % busy).
_WAIT_SLICE = 0.05

_FULL = -4   # ROCPY_AQL_FULL (aql.h): no space within one wait slice, nothing submitted

_BARRIER = struct.Struct("<HHI5QQQ")   # hsa_barrier_and_packet_t / hsa_barrier_or_packet_t


@dataclass(frozen=True)
class DispatchTime:
    """When a dispatch ran (hsa_amd_profiling_get_dispatch_time), in system timestamp ticks."""

    start: int
    end: int
    frequency: int

    @property
    def seconds(self) -> float:
        """``end - start`` in seconds."""
        return (self.end - self.start) / self.frequency


class Queue(Handle):
    """An AQL queue of a GPU agent (hsa_queue_create), destroyed at release.

    Options: ``size`` in packets (a power of two within the agent's
    ``queue_min_size``..``queue_max_size``; default 4096), ``type``
    (``'multi'`` or ``'single'``), ``on_error(exc)`` (called on rocpy's
    dispatcher thread when the queue fails), ``private_segment_size`` and
    ``group_segment_size`` (hints; default: no limit), ``profiling`` (record
    dispatch timestamps), ``kernarg_bytes``/``kernarg_segments`` (the
    kernarg ring: default 1 MiB in 4 segments).
    """

    # at exit a queue goes before the buffers and signals its packets use:
    # destroying a signal a barrier waits on would start dispatches on freed memory
    _release_first_at_exit = True

    __slots__ = (
        "_agent_h",
        "_agent_hv",
        "_aql",
        "_bad",
        "_dispatch_c",
        "_failed",
        "_gen",
        "_kernels",
        "_lib",
        "_lock",
        "_pending",
        "_profiling",
        "_refs",
        "_retire",
        "_ring",
        "_seg_bytes",
        "_templates",
        "agent",
        "base_address",
        "doorbell",
        "id",
        "size",
        "type",
    )

    def __init__(self, agent: Agent, size: int | None = None, type: str = "multi",
                 on_error: Callable[[BaseException], Any] | None = None, *,
                 private_segment_size: int | None = None, group_segment_size: int | None = None,
                 profiling: bool = False, kernarg_bytes: int = DEFAULT_KERNARG_BYTES,
                 kernarg_segments: int = DEFAULT_KERNARG_SEGMENTS) -> None:
        ffi, lib = api()
        h_agent = agent_handle(agent)
        if on_error is not None and not callable(on_error):
            raise TypeError(f"on_error must be callable, not {on_error.__class__.__name__}")
        if size is None:
            size = DEFAULT_SIZE
            if agent.queue_max_size:      # 0 on agents without a packet processor
                size = min(max(size, agent.queue_min_size), agent.queue_max_size)
        size = _args.integer(size, "size")
        if size <= 0 or size & (size - 1) or size > UINT32_MAX:
            raise ValueError(f"queue size must be a positive power of two below 2**32, got {size!r}")
        kernarg_segments = _args.integer(kernarg_segments, "kernarg_segments", 1, MAX_KERNARG_SEGMENTS)
        kernarg_bytes = _args.integer(kernarg_bytes, "kernarg_bytes", 1, _args.U64)
        types = {"multi": lib.HSA_QUEUE_TYPE_MULTI, "single": lib.HSA_QUEUE_TYPE_SINGLE}
        if type not in types:
            raise ValueError(f"queue type must be 'multi' or 'single', not {type!r}")
        if kernarg_segments < 1 or kernarg_bytes < kernarg_segments * 4096:
            raise ValueError("the kernarg ring needs at least one segment of 4096 bytes: "
                             "kernarg_bytes >= 4096 * kernarg_segments")
        private = UINT32_MAX if private_segment_size is None else \
            unsigned(private_segment_size, 32, "private_segment_size")
        group = UINT32_MAX if group_segment_size is None else \
            unsigned(group_segment_size, 32, "group_segment_size")

        failed = QueueFailed(lib, on_error, f"AQL queue of {agent.name!r} (asynchronous error)")
        d = dispatcher()
        token = d.register(failed, once=False)
        trampoline = ffi.cast("void (*)(hsa_status_t, hsa_queue_t *, void *)",
                              ffi.addressof(lib, "rocpy_callqueue_queue_error"))
        out = ffi.new("hsa_queue_t **")
        st = lib.hsa_queue_create(h_agent, size, types[type], trampoline, ffi.cast("void *", token),
                                  private, group, out)
        if st:
            d.unregister(token)
            raise hsa_error(st, "hsa_queue_create")
        queue = out[0]
        kernarg = None
        retire: list[Any] = []
        aql = ffi.NULL
        try:
            kernarg = self._kernarg_memory(agent, kernarg_bytes)
            for _ in range(kernarg_segments):
                sig = ffi.new("hsa_signal_t *")
                st = lib.hsa_signal_create(0, 0, ffi.NULL, sig)
                if st:
                    raise hsa_error(st, "hsa_signal_create")
                retire.append(sig[0])
            retire_array = ffi.new("hsa_signal_t[]", retire)
            aql = lib.rocpy_aql_create(queue, kernarg, kernarg_bytes, kernarg_segments,
                                       retire_array, ticks(_WAIT_SLICE))
            if aql == ffi.NULL:
                raise MemoryError("cannot allocate the queue's submission state")
            if profiling:
                st = lib.hsa_amd_profiling_set_profiler_enabled(queue, 1)
                if st:
                    raise hsa_error(st, "hsa_amd_profiling_set_profiler_enabled")
        except BaseException:
            d.unregister(token)
            lib.hsa_queue_destroy(queue)
            if aql != ffi.NULL:
                lib.rocpy_aql_free(aql)
            for sig in retire:
                lib.hsa_signal_destroy(sig)
            if kernarg is not None:
                lib.hsa_amd_memory_pool_free(kernarg)
            raise
        with failed.lock:
            failed.aql = aql
        ring = Ring(lib, aql, retire)
        pending = _reaper.PendingList(ordered=True)
        lock = threading.Lock()
        self._lib = lib
        self._aql = aql
        self._ring = ring
        self._failed = failed
        self._bad = False
        self._gen = 0
        self._refs: list[Any] = []
        self._pending = pending
        self._templates: dict[Any, bytes] = {}
        self._kernels: set[Kernel] = set()
        self._dispatch_c = lib.rocpy_aql_dispatch
        self._lock = lock
        self._agent_h = h_agent
        self._agent_hv = agent._hv
        self._profiling = bool(profiling)
        self._retire = retire
        self._seg_bytes = kernarg_bytes // kernarg_segments // 64 * 64
        self.agent = agent
        self.id = int(queue.id)
        self.size = int(queue.size)
        self.type = type
        self.doorbell = int(queue.doorbell_signal.handle)
        self.base_address = int(ffi.cast("uintptr_t", queue.base_address))
        super().__init__(queue, (destroy, lib, queue, aql, ring, failed, token, kernarg,
                                 tuple(retire), pending, lock), parents=(agent.runtime,))
        failed.queue_ref = weakref.ref(self)
        if failed.status:   # failed before we could see it
            self._bad = True

    @staticmethod
    def _kernarg_memory(agent: Agent, nbytes: int) -> Any:
        """The kernarg ring: CPU kernarg pool memory the queue's GPU may read."""
        ffi, lib = api()
        pools = [p for cpu in agent.runtime._listed_agents() if cpu.is_cpu
                 for p in cpu.pools(kernarg=True)]
        if not pools:
            raise RuntimeError("the HSA runtime lists no kernarg pool on a CPU agent")
        out = ffi.new("void **")
        st = lib.hsa_amd_memory_pool_allocate(pools[0]._require_open(), nbytes, 0, out)
        if st:
            raise hsa_error(st, "hsa_amd_memory_pool_allocate")
        gpu = ffi.new("hsa_agent_t[1]", [agent._require_open()])
        st = lib.hsa_amd_agents_allow_access(1, gpu, ffi.NULL, out[0])
        if st:
            lib.hsa_amd_memory_pool_free(out[0])
            raise hsa_error(st, "hsa_amd_agents_allow_access")
        return out[0]

    def __repr__(self) -> str:
        state = "closed" if self._h is None else ("failed" if self._failed.status else "active")
        return f"<hsa.Queue {state} id={self.id} size={self.size} on {self.agent.name!r}>"

    def close(self, stream: Any = None) -> None:
        """Destroy the queue now (what is still queued is dropped, as hsa_queue_destroy does)."""
        self._bad = True
        super().close(stream)
        with self._lock:
            self._refs = []          # the queue is gone: so is what its packets used
            self._templates = {}
            self._kernels = set()

    # ---- state ------------------------------------------------------------------------

    def _check(self) -> None:
        """Raise what makes the queue unusable: closed, callback errors, then the queue error."""
        self._require_open()
        failed = self._failed
        failed.errors.check()
        if failed.status:
            raise failed.error()
        self._bad = False

    @property
    def error(self) -> BaseException | None:
        """The queue's error (an `HsaError`), once the runtime reported one; else None."""
        return self._failed.error() if self._failed.status else None

    @property
    def read_index(self) -> int:
        """The read index (hsa_queue_load_read_index_scacquire)."""
        return self._lib.hsa_queue_load_read_index_scacquire(self._require_open())

    @property
    def write_index(self) -> int:
        """The write index (hsa_queue_load_write_index_scacquire)."""
        return self._lib.hsa_queue_load_write_index_scacquire(self._require_open())

    @property
    def profiling(self) -> bool:
        """Whether dispatches record timestamps (hsa_amd_profiling_set_profiler_enabled)."""
        return self._profiling

    @profiling.setter
    def profiling(self, enable: bool) -> None:
        if self._bad:
            self._check()
        with self._lock:
            st = self._lib.hsa_amd_profiling_set_profiler_enabled(self._require_open(),
                                                                  1 if enable else 0)
        if st:
            raise hsa_error(st, "hsa_amd_profiling_set_profiler_enabled")
        self._profiling = bool(enable)

    def dispatch_time(self, signal: Signal) -> DispatchTime:
        """When the dispatch that completed `signal` ran, in system ticks (profiling on).

        hsa_amd_profiling_get_dispatch_time already returns system-domain
        times (ROCr GpuAgent::TranslateTime): no further conversion.
        """
        ffi, lib = api()
        self._require_open()
        h = signal_handle(signal)
        out = ffi.new("hsa_amd_profiling_dispatch_time_t *")
        st = lib.hsa_amd_profiling_get_dispatch_time(self._agent_h, h, out)
        if st:
            raise hsa_error(st, "hsa_amd_profiling_get_dispatch_time")
        return DispatchTime(out.start, out.end, timestamp_frequency())

    # ---- submission (under self._lock) ----------------------------------------------------

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

    def _wait_for_space(self, retry: Callable[[], int] | None) -> int:
        """After ROCPY_AQL_FULL (one wait slice without ring space or a free kernarg
        segment, nothing submitted): raise the queue's error if it failed, note a
        kernarg generation the attempt opened, then `retry()`.  Returning to
        Python between slices is what lets Ctrl-C interrupt a full queue."""
        if self._failed.status or self._h is None:
            self._check()
        gen = self._lib.rocpy_aql_generation(self._live_aql())
        if gen != self._gen:
            self._submitted(gen, None)
        return retry() if retry is not None else _FULL

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
            signal_handle(completion_signal, "completion_signal")   # raises the right error
        else:
            sig = completion_signal._hv
        with self._lock:
            if self._h is None:       # closed by another thread: close frees the C state
                raise self._closed_error()
            # the packet processor reaches the signal until the packet retires: a close()
            # meanwhile releases it after that (a Borrow), not under the queued packet
            held = Borrow(completion_signal) if sig else None
            gen = self._dispatch_c(self._aql, packet, kernarg, kernel._kernarg_len, sig)
            while gen == _FULL:
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
                    if gen != _FULL:
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
                if gen != _FULL:
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

    def _barrier(self, kind: str, deps: Sequence[Signal | None], completion_signal: Signal | None,
                 barrier: bool, fences: Any) -> None:
        if self._bad:
            self._check()
        lib = self._lib
        deps = list(deps)
        if len(deps) > 5:
            raise ValueError(f"a barrier packet takes at most 5 dependency signals (HSA's limit); "
                             f"{len(deps)} given: chain barriers through intermediate signals")
        handles = []
        for i, s in enumerate(deps):
            if s is None:
                handles.append(0)
            elif isinstance(s, Signal):
                s._use()
                handles.append(s._hv)
            else:
                raise TypeError(f"deps[{i}] must be an hsa.Signal or None, not {type(s).__name__}")
        handles += [0] * (5 - len(handles))
        sig = 0
        if completion_signal is not None:
            signal_handle(completion_signal, "completion_signal")
            sig = completion_signal._hv
        ptype = lib.HSA_PACKET_TYPE_BARRIER_AND if kind == "and" else lib.HSA_PACKET_TYPE_BARRIER_OR
        header = ((ptype << lib.HSA_PACKET_HEADER_TYPE) |
                  ((1 if barrier else 0) << lib.HSA_PACKET_HEADER_BARRIER) | fence_bits(fences))
        packet = _BARRIER.pack(header, 0, 0, *handles, 0, sig)
        with self._lock:
            gen = lib.rocpy_aql_dispatch(self._live_aql(), packet, b"", 0, 0)
            while gen == _FULL:
                gen = self._wait_for_space(
                    lambda: lib.rocpy_aql_dispatch(self._live_aql(), packet, b"", 0, 0))
            self._submitted(gen, borrow_all((*deps, completion_signal)))

    def barrier_and(self, deps: Sequence[Signal | None], completion_signal: Signal | None = None,
                    *, barrier: bool = False, fences: Any = None) -> None:
        """A barrier-AND packet: later packets wait until every signal in `deps` is 0.

        At most 5 dependencies (None entries are ignored); `completion_signal`
        is decremented once they are all 0.
        """
        self._barrier("and", deps, completion_signal, barrier, fences)

    def barrier_or(self, deps: Sequence[Signal | None], completion_signal: Signal | None = None,
                   *, barrier: bool = False, fences: Any = None) -> None:
        """A barrier-OR packet: later packets wait until any signal in `deps` is 0."""
        self._barrier("or", deps, completion_signal, barrier, fences)

    def synchronize(self, timeout: float | None = None) -> None:
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
            while gen == _FULL:
                gen = self._wait_for_space(lambda: lib.rocpy_aql_close_segment(self._live_aql()))
            self._submitted(gen, None)
            closed = gen - 1
        ring = self._ring
        hint = ticks(_WAIT_SLICE)
        while not ring.wait(closed, hint):
            if self._failed.status or self._h is None:
                self._check()
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"the queue did not drain within {limit} s")
        if self._failed.status or self._h is None:   # it ended by failing or closing
            self._check()
        self._pending.poll()

    @property
    def kernarg_generation(self) -> int:
        """How many kernarg segments this queue has filled (for tests and diagnostics)."""
        return self._gen


def _ffi_null() -> Any:
    ffi, _ = api()
    return ffi.NULL
