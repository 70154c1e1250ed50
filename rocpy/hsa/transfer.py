"""Copies and fills: `copy` (blocking), `copy_async` (the copy engine), `fill`.

::

    hsa.copy(dst, src, nbytes)                                  # hsa_memory_copy
    hsa.copy_async(buf, host, 1 << 20, completion=sig, deps=[ready])
    hsa.fill(buf, 0xFFFFFFFF)                                   # 32-bit words

Ends are `Buffer`\\ s, `LockedMemory`, cffi pointers or int addresses;
sizes are checked against the Buffers' and locked memory's sizes.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import _args, _keepalive
from .._handle import borrow_all
from ..errors import hsa_error
from ._common import agent_handle, api, signal_handle, unsigned
from .locked import LockedMemory
from .memory import AccessError, Buffer

if TYPE_CHECKING:
    from .agent import Agent
    from .signal import Signal

def _address(x: Any, what: str) -> int:
    """The address of a Buffer, LockedMemory, cffi pointer or int."""
    if isinstance(x, (Buffer, LockedMemory)):
        result: int = x._require_open()
        return result
    if hasattr(type(x), "__index__") and not isinstance(x, bool):
        return _args.unsigned(x, 64, what)          # an address (numpy ints too)
    ffi, _ = api()
    if isinstance(x, ffi.CData):
        return int(ffi.cast("uintptr_t", x))
    raise TypeError(f"{what} must be an hsa.Buffer, a locked host pointer, a cffi pointer or "
                    f"an int address, not {type(x).__name__}")


def _agent_of(x: Any, given: Agent | None, what: str) -> Any:
    if given is not None:
        return agent_handle(given, f"{what}_agent")
    if isinstance(x, Buffer):
        return x.agent._require_open()
    if isinstance(x, LockedMemory):
        return x.cpu._require_open()
    raise ValueError(f"{what}: the agent of a raw address must be given ({what}_agent=)")


def _gpu_of(x: Any) -> Any:
    """The GPU agent whose memory `x` is, or None (system memory, or a raw address)."""
    if isinstance(x, Buffer) and x.agent.is_gpu:
        return x.agent
    return None


def _reachable(x: Any, agent: Any) -> bool:
    """Whether `agent` may access `x` as rocpy knows it (raw addresses: unknown, assumed)."""
    if isinstance(x, Buffer):
        return x._reachable_by(agent)
    if isinstance(x, LockedMemory):
        return agent.is_cpu or not x.agents or any(a._hv == agent._hv for a in x.agents)
    return True


def _refuse_unreachable(x: Any, agent: Any, what: str, how: str) -> None:
    if not _reachable(x, agent):
        fix = (f"{what}.allow_access([agent])" if isinstance(x, Buffer)
               else "lock it for that agent (hsa.lock(array, agents=[...]))")
        raise AccessError(f"{what} is not accessible to {agent.type} {agent.name!r}, which "
                          f"{how}: on a GPU the copy faults and the process aborts; grant access "
                          f"first: {fix}")


def copy(dst: Any, src: Any, size: int) -> None:
    """Copy `size` bytes now (hsa_memory_copy; blocks until done).

    `dst` and `src` are Buffers, locked host memory, cffi pointers or int
    addresses.  A copy between a GPU's memory and system memory runs on that
    GPU (ROCr Runtime::CopyMemory: a blit kernel); system memory rocpy
    allocated or locked must then be accessible to it (`Buffer.allow_access`,
    `hsa.lock(..., agents=)`), else `AccessError`: on hardware the GPU would
    fault.  Plain host memory (numpy arrays, raw addresses) ROCr locks itself.
    """
    ffi, lib = api()
    d, s, size = _ends(dst, src, size)
    if size:
        dg, sg = _gpu_of(dst), _gpu_of(src)
        if dg is not None and sg is None:
            _refuse_unreachable(src, dg, "src", "copies it (hsa_memory_copy)")
        elif sg is not None and dg is None:
            _refuse_unreachable(dst, sg, "dst", "copies it (hsa_memory_copy)")
    st = lib.hsa_memory_copy(ffi.cast("void *", d), ffi.cast("void *", s), size)
    if st:
        raise hsa_error(st, "hsa_memory_copy")


def _ends(dst: Any, src: Any, size: Any) -> tuple[int, int, int]:
    """The addresses of a copy's two ends and its checked size (each end must hold it)."""
    d, s = _address(dst, "dst"), _address(src, "src")
    size = unsigned(size, 64, "size")
    _check_fits(dst, size, "dst")
    _check_fits(src, size, "src")
    return d, s, size


def _check_fits(x: Any, size: int, what: str) -> None:
    n = getattr(x, "size", None) if isinstance(x, (Buffer, LockedMemory)) else None
    if n is not None and size > n:
        raise ValueError(f"{what} has {n} bytes, the copy is {size} bytes")


def copy_async(dst: Any, src: Any, size: int, *, completion: Signal, deps: Sequence[Signal] = (),
               dst_agent: Agent | None = None, src_agent: Agent | None = None) -> None:
    """Copy `size` bytes on the copy engine (hsa_amd_memory_async_copy).

    Starts once every signal in `deps` is 0; decrements `completion` when
    done.  The agents default to the buffers' owners (the CPU for locked
    host memory); give them for raw addresses.  The copy runs on the source
    agent if it is a GPU, else on the destination agent (ROCr
    Runtime::CopyMemory), which must be able to access both ends
    (`AccessError` otherwise).  Buffers, locked memory and signals stay
    alive until `completion` drops to 0 or below, even when closed meanwhile
    (their release then waits for it).  A copy of 0 bytes does nothing and
    never signals (as ROCr): nothing is kept for it.

    Args:
        dst: The destination: a buffer, locked memory or a raw address.
        src: The source, the same kinds.
        size: Bytes to copy.
        completion: The `Signal` decremented when the copy is done.
        deps: Signals that must reach 0 before the copy starts.
        dst_agent: The agent owning ``dst``; None: the buffer's owner.
        src_agent: The agent owning ``src``; None: the buffer's owner.

    Raises:
        AccessError: the agent running the copy cannot access both ends.
        rocpy.HsaError: ROCr refused the copy (its status).
    """
    _submit_async("hsa_amd_memory_async_copy", (), dst, src, size, completion, deps,
                  dst_agent, src_agent)


def _submit_async(call: str, extra: tuple[Any, ...], dst: Any, src: Any, size: int,
                  completion: Signal, deps: Sequence[Signal], dst_agent: Agent | None,
                  src_agent: Agent | None) -> None:
    """`copy_async`'s checks and keep-alives around `call` (extra arguments after the signal)."""
    ffi, lib = api()
    fn = getattr(lib, call)
    d, s, size = _ends(dst, src, size)
    da, sa = _agent_of(dst, dst_agent, "dst"), _agent_of(src, src_agent, "src")
    if size:
        engine = _engine_agent(dst, dst_agent, src, src_agent)
        if engine is not None:
            _refuse_unreachable(dst, engine, "dst", "runs the copy")
            _refuse_unreachable(src, engine, "src", "runs the copy")
    done = signal_handle(completion, "completion")
    deps = list(deps)
    handles = ffi.new("hsa_signal_t[]", max(len(deps), 1))
    for i, dep in enumerate(deps):
        handles[i] = signal_handle(dep, "each of deps")
    # the copy engine reaches both ends and the signals until completion drops to 0:
    # a close() meanwhile must not free them (it frees after the borrows are dropped)
    borrows = borrow_all((dst, src, completion, *deps))
    st = fn(ffi.cast("void *", d), da, ffi.cast("void *", s), sa, size,
            len(deps), handles if deps else ffi.NULL, done, *extra)
    if st:
        raise hsa_error(st, call)
    if size:   # ROCr returns at once for 0 bytes: the signal never moves
        load = lib.hsa_signal_load_relaxed   # on the raw handle: the borrow keeps it valid
        _keepalive.keep_alive_until(lambda: load(done) <= 0, dst, src, completion, deps, borrows)


def _engine_agent(dst: Any, dst_agent: Any, src: Any, src_agent: Any) -> Any:
    """The rocpy Agent that runs an async copy: the source's if a GPU, else the destination's."""
    def agent(x: Any, given: Any) -> Any:
        if given is not None:
            return given
        if isinstance(x, Buffer):
            return x.agent
        if isinstance(x, LockedMemory):
            return x.cpu
        return None
    s, d = agent(src, src_agent), agent(dst, dst_agent)
    if s is not None and s.is_gpu:
        return s
    return d if d is not None else s


def fill(dst: Any, value: int, count: int | None = None) -> None:
    """Set `count` 32-bit words at `dst` to `value` (hsa_amd_memory_fill).

    `count` defaults to the whole Buffer (its size must be a multiple of 4).
    """
    ffi, lib = api()
    d = _address(dst, "dst")
    if count is None:
        n = getattr(dst, "size", None)
        if n is None:
            raise ValueError("fill of a raw address needs count=")
        if n % 4:
            raise ValueError(f"the buffer's {n} bytes are not whole 32-bit words: pass count=")
        count = n // 4
    count = unsigned(count, 62, "count")
    _check_fits(dst, count * 4, "dst")
    value = unsigned(value, 32, "value")
    st = lib.hsa_amd_memory_fill(ffi.cast("void *", d), value, count)
    if st:
        raise hsa_error(st, "hsa_amd_memory_fill")
