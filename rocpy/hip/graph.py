"""`Graph` and `GraphExec`: work recorded once and launched many times.

Captured from a stream::

    with s.capture() as g:
        k.launch(grid, block, args, stream=s)
        out.copy_from(buf, stream=s)
    exe = g.instantiate()
    exe.launch(s)

or built node by node::

    g = rocpy.hip.Graph(dev)
    fill = g.add_memset(buf, np.uint32(7))
    run = g.add_kernel(k, grid, block, args, deps=[fill])
    back = g.add_copy(host_array, buf, deps=[run])
    g.add_host(print, "done", deps=[back])
    g.instantiate().launch(s)

A graph keeps alive what its nodes use (buffers, host arrays, kernels and
their packed arguments); an executable graph keeps what it was instantiated
from, so either may be closed first.  Buffers a node reaches are borrowed
(`rocpy._handle.Borrow`): closing one only marks it closed, and its memory is
freed once no graph or executable graph that could launch on it is left.  Host nodes run on rocpy's dispatcher
thread; their exceptions are raised as `rocpy.CallbackError` by the next
`GraphExec.launch` or by ``sync()`` of a stream it was launched on.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from .. import _dispatcher
from .._dispatcher import CallbackErrors, dispatcher
from .._handle import Borrow, Handle
from ..errors import ClosedError, NotSupportedError, hip_error
from . import _api, _wait
from ._api import api, use_device
from .device import as_device


def _destroy_graph(h: Any) -> None:
    """Release recipe: ``hipGraphDestroy``; raises on failure."""
    st = api().lib.hipGraphDestroy(h)
    if st:
        raise hip_error(st, "hipGraphDestroy")


def _destroy_exec(h: Any) -> None:
    """Release recipe: ``hipGraphExecDestroy``; raises on failure."""
    st = api().lib.hipGraphExecDestroy(h)
    if st:
        raise hip_error(st, "hipGraphExecDestroy")


class _Token:
    """A dispatcher registration for a host node; unregistered when the last graph using it dies."""

    __slots__ = ("token", "__weakref__")

    def __init__(self, token: int) -> None:
        self.token = token

    def __del__(self) -> None:
        d = _dispatcher._default
        if d is not None:
            d.unregister(self.token)


class GraphNode:
    """A node of a `Graph`, to name as a dependency of later nodes."""

    __slots__ = ("graph", "kind", "_h")

    def __init__(self, graph: Graph, handle: Any, kind: str) -> None:
        self.graph: Graph = graph
        self.kind: str = kind
        self._h = handle

    def __repr__(self) -> str:
        return f"<GraphNode {self.kind}>"


class Graph(Handle):
    """A HIP graph (``hipGraph_t``): nodes with dependencies; see the module docstring.

    ``Graph(device)`` makes an empty one; `Stream.capture` yields one that is
    filled when its ``with`` block ends (using it earlier raises
    `rocpy.ClosedError`).
    """

    __slots__ = ("_ctx", "_keep", "_tokens", "_errors", "_state", "_why", "_has_host")

    _keep: list[Any]
    _tokens: list[Any]
    _why: str | None

    def __init__(self, device: Any = None) -> None:
        a = api()
        if not a.has("hipGraphCreate"):
            raise NotSupportedError("graphs are not in this backend's HIP "
                                    "(HIP 5.x's NVIDIA platform has no graph API)")
        dev = as_device(device)
        use_device(dev._index)
        out = a.ffi.new("hipGraph_t *")
        st = a.lib.hipGraphCreate(out, 0)
        if st:
            raise hip_error(st, "hipGraphCreate")
        self._setup(dev.context)
        h = out[0]
        super().__init__(h, (_destroy_graph, h), parents=(dev.context,))
        self._state = "ready"

    def _setup(self, ctx: Any) -> None:
        self._ctx = ctx
        self._keep = []
        self._tokens = []
        self._errors = CallbackErrors()
        self._why = None
        self._has_host = False

    @classmethod
    def _capturing(cls, ctx: Any) -> Graph:
        g = cls.__new__(cls)
        g._h = None
        g._setup(ctx)
        g._state = "capturing"
        return g

    def _fill(self, handle: Any) -> None:
        Handle.__init__(self, handle, (_destroy_graph, handle), parents=(self._ctx,))
        self._state = "ready"
        self._keep.append(_borrows(self._keep))   # what the captured nodes reach

    def _abandon(self, why: str) -> None:
        self._state = "failed"
        self._why = why
        self._keep = []
        self._tokens = []

    def _closed_error(self) -> ClosedError:
        if self._state == "capturing":
            return ClosedError("the Graph is still being captured: use it after the with block")
        if self._state == "failed":
            return ClosedError(f"the Graph is empty: {self._why}")
        return super()._closed_error()

    def close(self, stream: Any = None) -> None:
        """Destroy the graph now (executable graphs made from it stay usable)."""
        if self._state != "ready":
            return
        super().close(stream)
        self._keep = []
        self._tokens = []

    @property
    def owned(self) -> bool:
        """True: rocpy destroys the graph."""
        return True

    def __repr__(self) -> str:
        if self._state != "ready" or self._h is None:
            return f"<Graph {self._state if self._h is None else 'ready'}>"
        return f"<Graph {len(self)} nodes>"

    def __len__(self) -> int:
        """The number of nodes (``hipGraphGetNodes``)."""
        a = api()
        n = a.ffi.new("size_t *")
        st = a.lib.hipGraphGetNodes(self._require_open(), a.ffi.NULL, n)
        if st:
            raise hip_error(st, "hipGraphGetNodes")
        result: int = n[0]
        return result

    # ---- host nodes' callbacks ---------------------------------------------------

    def _register_host_fn(self, fn: Callable[..., object], args: tuple[Any, ...]) -> int:
        token = dispatcher().register(lambda _a, _b: fn(*args), errors=self._errors, once=False)
        self._tokens.append(_Token(token))
        self._has_host = True
        return token

    def _forget_host_fn(self, token: int) -> None:
        self._tokens = [t for t in self._tokens if t.token != token]

    # ---- building -----------------------------------------------------------------

    def _deps(self, deps: Any) -> tuple[Any, int]:
        ffi = api().ffi
        if deps is None:
            return ffi.NULL, 0
        if isinstance(deps, GraphNode):
            deps = (deps,)
        nodes = list(deps)
        for d in nodes:
            if not isinstance(d, GraphNode) or d.graph is not self:
                raise _api.invalid("Graph", f"{d!r} is not a node of this graph")
        if not nodes:
            return ffi.NULL, 0
        return ffi.new("hipGraphNode_t[]", [d._h for d in nodes]), len(nodes)

    def _added(self, st: int, call: str, out: Any, kind: str, keep: Any) -> GraphNode:
        if st:
            raise hip_error(st, call)
        self._keep.append((keep, _borrows(keep)))
        return GraphNode(self, out[0], kind)

    def add_kernel(self, kernel: Any, grid: Any, block: Any, args: Iterable[Any] = (),
                   *, shared_mem: int = 0, deps: Any = ()) -> GraphNode:
        """A kernel node: like `Kernel.launch` (grid in blocks); arguments are packed now."""
        from .module import Kernel
        if not isinstance(kernel, Kernel):
            raise TypeError(f"Graph.add_kernel takes a Kernel, not {type(kernel).__name__}")
        h = self._require_open()
        a = api()
        ffi, lib = a.ffi, a.lib
        kh = kernel._require_open()
        args = tuple(args)
        gx, gy, gz, bx, by, bz = kernel._geometry(grid, block, shared_mem)
        kbuf, size_p, extra = kernel._packed(args, grid, block, shared_mem)
        p = ffi.new("hipKernelNodeParams *")
        p.blockDim.x, p.blockDim.y, p.blockDim.z = bx, by, bz
        p.gridDim.x, p.gridDim.y, p.gridDim.z = gx, gy, gz
        p.func = ffi.cast("void *", kh)
        p.kernelParams = ffi.NULL
        p.extra = extra
        p.sharedMemBytes = shared_mem
        dep, n = self._deps(deps)
        use_device(kernel._dev_index)
        out = ffi.new("hipGraphNode_t *")
        st = lib.hipGraphAddKernelNode(out, h, dep, n, p)
        return self._added(st, "hipGraphAddKernelNode", out, "kernel",
                           (kernel, args, kbuf, size_p, extra))

    def add_copy(self, dst: Any, src: Any, deps: Any = ()) -> GraphNode:
        """A copy node from ``src`` to ``dst`` (buffers, numpy arrays, bytes-like).

        Sizes must match.
        """
        from ._copy import other_end as _other_end
        h = self._require_open()
        a = api()
        call = "Graph.add_copy"
        dptr, dn, dkeep = _other_end(dst, True, call)
        sptr, sn, skeep = _other_end(src, False, call)
        if dn != sn:
            raise _api.invalid(call, f"the source has {sn} bytes, the destination {dn}")
        dep, n = self._deps(deps)
        out = a.ffi.new("hipGraphNode_t *")
        st = a.lib.hipGraphAddMemcpyNode1D(out, h, dep, n, a.ffi.cast("void *", dptr),
                                           a.ffi.cast("void *", sptr), dn, a.lib.hipMemcpyDefault)
        return self._added(st, "hipGraphAddMemcpyNode1D", out, "copy", (dkeep, skeep))

    def add_memset(self, dst: Any, value: Any, deps: Any = ()) -> GraphNode:
        """A fill node: ``value`` as in `Buffer.fill` (a byte, or a 4-byte numpy scalar)."""
        from .memory import Buffer, _fill_pattern
        if not isinstance(dst, Buffer):
            raise TypeError(f"Graph.add_memset fills a buffer, not {type(dst).__name__}")
        h = self._require_open()
        a = api()
        ptr, nbytes = dst.ptr, dst.nbytes
        elem, pattern = _fill_pattern(value, nbytes, "Graph.add_memset")
        p = a.ffi.new("hipMemsetParams *")
        p.dst = a.ffi.cast("void *", ptr)
        p.elementSize = elem
        p.height = 1
        p.pitch = 0
        p.value = pattern
        p.width = nbytes // elem
        dep, n = self._deps(deps)
        out = a.ffi.new("hipGraphNode_t *")
        st = a.lib.hipGraphAddMemsetNode(out, h, dep, n, p)
        return self._added(st, "hipGraphAddMemsetNode", out, "memset", dst)

    def add_host(self, fn: Callable[..., object], *args: Any, deps: Any = ()) -> GraphNode:
        """A host node: ``fn(*args)`` on rocpy's dispatcher thread at each launch."""
        if not callable(fn):
            raise TypeError(f"add_host takes a callable, not {type(fn).__name__}")
        h = self._require_open()
        a = api()
        from ._callbacks import _callback_trampolines
        token = self._register_host_fn(fn, args)
        p = a.ffi.new("hipHostNodeParams *")
        p.fn = _callback_trampolines()[0]
        p.userData = a.ffi.cast("void *", token)
        dep, n = self._deps(deps)
        out = a.ffi.new("hipGraphNode_t *")
        st = a.lib.hipGraphAddHostNode(out, h, dep, n, p)
        if st:
            self._forget_host_fn(token)
        return self._added(st, "hipGraphAddHostNode", out, "host", None)

    def add_empty(self, deps: Any = ()) -> GraphNode:
        """A node that does nothing (joins dependencies)."""
        h = self._require_open()
        a = api()
        dep, n = self._deps(deps)
        out = a.ffi.new("hipGraphNode_t *")
        st = a.lib.hipGraphAddEmptyNode(out, h, dep, n)
        return self._added(st, "hipGraphAddEmptyNode", out, "empty", None)

    def instantiate(self) -> GraphExec:
        """An executable graph (``hipGraphInstantiate``)."""
        h = self._require_open()
        a = api()
        dev_index = -1 if self._ctx._is_host else self._ctx._devices[0]._index
        if dev_index >= 0:
            use_device(dev_index)
        out = a.ffi.new("hipGraphExec_t *")
        st = a.lib.hipGraphInstantiate(out, h, a.ffi.NULL, a.ffi.NULL, 0)
        if st:
            raise hip_error(st, "hipGraphInstantiate")
        x = GraphExec.__new__(GraphExec)
        eh = out[0]
        try:
            Handle.__init__(x, eh, (_destroy_exec, eh), parents=(self._ctx,))
        except BaseException:
            a.lib.hipGraphExecDestroy(eh)
            raise
        x._keep = (list(self._keep), list(self._tokens))
        x._errors = self._errors
        x._has_host = self._has_host
        x._dev_index = dev_index
        return x


def _borrows(keep: Any) -> list[Any]:
    """A `Borrow` of every buffer (or other handle) a node reaches: a ``close()`` of
    one while a graph or executable graph could still launch on it only marks it
    closed, and frees it once those are gone too (the executable graph shares
    these borrows through the keep list it copies)."""
    from .typed import TypedBuffer
    found: list[Any] = []
    stack = [keep]
    while stack:
        obj = stack.pop()
        if isinstance(obj, Handle):
            if obj._h is not None:
                found.append(Borrow(obj))
        elif isinstance(obj, TypedBuffer):
            stack.append(obj.buffer)
        elif isinstance(obj, (tuple, list)):
            stack.extend(obj)
    return found


class GraphExec(Handle):
    """An executable graph (``hipGraphExec_t``), made by `Graph.instantiate`."""

    __slots__ = ("_keep", "_errors", "_has_host", "_dev_index")

    _keep: tuple[Sequence[Any], Sequence[Any]]
    _errors: CallbackErrors
    _has_host: bool
    _dev_index: int

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("make a GraphExec with Graph.instantiate()")

    def launch(self, stream: Any = None) -> None:
        """Enqueue the whole graph on ``stream`` (default: the null stream).

        Raises `rocpy.CallbackError` first if a host node raised in an
        earlier launch.
        """
        from .stream import Stream, as_stream
        h = self._require_open()
        if self._errors.pending:
            self._errors.check()
        s = stream if type(stream) is Stream else as_stream(stream)
        sh = s._enter()
        st = api().lib.hipGraphLaunch(h, sh)
        if st:
            raise hip_error(st, "hipGraphLaunch")
        if self._has_host:
            s._watch_callbacks(self._errors)
        s._hold((self, self._keep))   # the keep list too: a close() meanwhile drops only ours

    def close(self, stream: Any = None) -> None:
        """Destroy the executable graph; what its nodes reach is let go once no
        launch still in flight uses it."""
        super().close(stream)
        self._keep = ((), ())


@contextlib.contextmanager
def capture(stream: Any, mode: str = "global") -> Iterator[Graph]:
    """`Stream.capture`: begin a capture on ``stream``, yield the `Graph` it fills at exit."""
    a = api()
    lib = a.lib
    if not a.has("hipStreamBeginCapture"):
        raise NotSupportedError("stream capture is not in this backend's HIP "
                                "(HIP 5.x's NVIDIA platform has no graph API)")
    modes = {"global": lib.hipStreamCaptureModeGlobal,
             "thread_local": lib.hipStreamCaptureModeThreadLocal,
             "relaxed": lib.hipStreamCaptureModeRelaxed}
    if mode not in modes:
        raise _api.invalid("Stream.capture", f"mode {mode!r} is not one of {', '.join(modes)}")
    h = stream._enter()
    if stream._capture is not None:
        raise _api.fail("hipErrorIllegalState", "Stream.capture",
                        "this stream is already capturing")
    graph = Graph._capturing(stream._ctx)
    st = lib.hipStreamBeginCapture(h, modes[mode])
    if st:
        graph._abandon("the capture could not begin")
        raise hip_error(st, "hipStreamBeginCapture")
    _wait.captures[0] += 1          # waits stay on this thread meanwhile (capture rules)
    saved = stream._divert(graph)
    ok = False
    try:
        yield graph
        ok = True
    finally:
        _wait.captures[0] -= 1
        stream._undivert(saved)
        out = a.ffi.new("hipGraph_t *")
        stream._use_device()
        st = lib.hipStreamEndCapture(h, out)
        if ok and not st:
            graph._fill(out[0])
        else:
            if out[0] != a.ffi.NULL:
                lib.hipGraphDestroy(out[0])
            graph._abandon("the with block raised" if not ok else
                           "the capture failed (it was invalidated or unjoined)")
            if ok:
                raise hip_error(st, "hipStreamEndCapture")
