"""Closed objects refuse use: every public member of every HIP type, on a closed object.

The table below names, for each type, what each public member is called
with; a closed object must answer `rocpy.ClosedError` (naming the type),
make no native call, and leave the process and its other objects working.
Members that only report what the object was (its size, device, flags...)
stay readable after ``close()``; they are listed as such.  A test checks
that the table covers every public member the types have, so a new method
cannot slip in untested.

Also here: closed objects given as *arguments* (a closed stream, event,
buffer or kernel passed to an open object's method).
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest
from rel_support import has_graphs, skip_without_graphs

import rocpy
from rocpy import hip

N = 64

# ---- what each member is called with ------------------------------------------------------
# Each entry: member -> fn(obj, env) exercising it.  `env` holds open objects to pass.

_HANDLE_BASE = {
    "close": lambda o, env: o.close(),          # idempotent: must not raise
    "closed": lambda o, env: o.closed,
    "owned": lambda o, env: o.owned,
    "invalidate": None,                         # internal to rocpy's ownership (device reset)
    "invalidate_descendants": None,
    "handle": lambda o, env: o.handle,
    "__enter__": lambda o, env: o.__enter__(),
    "__exit__": lambda o, env: o.__exit__(None, None, None),
}

_BUFFER = {
    **_HANDLE_BASE,
    "copy_from": lambda o, env: o.copy_from(np.zeros(o.nbytes, np.uint8)),
    "copy_to": lambda o, env: o.copy_to(np.zeros(o.nbytes, np.uint8)),
    "fill": lambda o, env: o.fill(0),
    "typed": lambda o, env: o.typed(np.uint8),
    "ptr": lambda o, env: o.ptr,
    "__int__": lambda o, env: int(o),
    "__getitem__": lambda o, env: o[0:4],
    "__dlpack__": lambda o, env: o.__dlpack__(),
    # what the buffer was: readable after close
    "nbytes": lambda o, env: o.nbytes,
    "__len__": lambda o, env: len(o),
    "context": lambda o, env: o.context,
    "device": lambda o, env: o.device,
    "is_view": lambda o, env: o.is_view,
    "__dlpack_device__": lambda o, env: o.__dlpack_device__(),
}

CALLS: dict[str, dict] = {
    "Stream": {
        **_HANDLE_BASE,
        "sync": lambda o, env: o.sync(),
        "query": lambda o, env: o.query(),
        "wait": lambda o, env: o.wait(env["event"]),
        "record": lambda o, env: o.record(),
        "add_callback": lambda o, env: o.add_callback(print),
        "capture": lambda o, env: o.capture().__enter__(),
        "is_capturing": lambda o, env: o.is_capturing,
        "priority": lambda o, env: o.priority,
        "__hip_stream__": lambda o, env: o.__hip_stream__(),
        # cached at creation: readable after close
        "flags": lambda o, env: o.flags,
        "non_blocking": lambda o, env: o.non_blocking,
        "device": lambda o, env: o.device,
        "context": lambda o, env: o.context,
        "kind": lambda o, env: o.kind,
        # class-level factories: not uses of the closed object
        "null": None, "per_thread": None, "from_handle": None,
    },
    "Event": {
        **_HANDLE_BASE,
        "record": lambda o, env: o.record(env["stream"]),
        "query": lambda o, env: o.query(),
        "sync": lambda o, env: o.sync(),
        "end - start": lambda o, env: env["event"] - o,
        "device": lambda o, env: o.device,
        "timing": lambda o, env: o.timing,
        "blocking": lambda o, env: o.blocking,
        "interprocess": lambda o, env: o.interprocess,
    },
    "DeviceBuffer": dict(_BUFFER),
    "HostBuffer": {**_BUFFER, "numpy": lambda o, env: o.numpy()},
    "ManagedBuffer": {**_BUFFER, "numpy": lambda o, env: o.numpy()},
    "Module": {
        **_HANDLE_BASE,
        "__getitem__": lambda o, env: o["vadd"],
        "kernels": lambda o, env: o.kernels,
        # what was loaded: readable after close
        "names": lambda o, env: o.names,
        "__contains__": lambda o, env: "vadd" in o,
        "device": lambda o, env: o.device,
        "code_object": lambda o, env: o.code_object,
        "load": None,
    },
    "Kernel": {
        **_HANDLE_BASE,
        "launch": lambda o, env: o.launch(1, 1, env["vadd_args"], stream=env["stream"]),
        "attribute": lambda o, env: o.attribute("num_regs"),
        "name": lambda o, env: o.name,
        "module": lambda o, env: o.module,
        "device": lambda o, env: o.device,
        "info": lambda o, env: o.info,
        "layout": lambda o, env: o.layout,
        "params": lambda o, env: o.params,
        "max_threads_per_block": lambda o, env: o.max_threads_per_block,
    },
    "Graph": {
        **_HANDLE_BASE,
        "add_kernel": lambda o, env: o.add_kernel(env["kernel"], 1, 1, env["vadd_args"]),
        "add_copy": lambda o, env: o.add_copy(env["buffer"], env["buffer2"]),
        "add_memset": lambda o, env: o.add_memset(env["buffer"], 0),
        "add_host": lambda o, env: o.add_host(print),
        "add_empty": lambda o, env: o.add_empty(),
        "instantiate": lambda o, env: o.instantiate(),
        "__len__": lambda o, env: len(o),
    },
    "GraphExec": {**_HANDLE_BASE, "launch": lambda o, env: o.launch(env["stream"])},
}

# members that report what the object was: no ClosedError after close
READABLE = {
    "close", "closed", "owned", "__exit__", "flags", "non_blocking", "device", "context", "kind",
    "timing", "blocking", "interprocess", "nbytes", "__len__", "is_view", "__dlpack_device__",
    "names", "__contains__", "code_object", "name", "module", "info", "layout", "params",
    "max_threads_per_block",
}
# Graph.__len__ asks the runtime: it refuses
REFUSES = {("Graph", "__len__")}

_DUNDERS = {"__enter__", "__exit__", "__int__", "__len__", "__getitem__", "__contains__",
            "__dlpack__", "__dlpack_device__", "__hip_stream__"}


def public_members(cls: type) -> set[str]:
    return {name for name in dir(cls)
            if (not name.startswith("_") or name in _DUNDERS)
            and not isinstance(inspect.getattr_static(cls, name), (staticmethod, classmethod))
            or name in ("null", "per_thread", "from_handle", "load")}


@pytest.mark.parametrize("type_name", sorted(CALLS))
def test_the_table_covers_every_public_member(type_name):
    cls = getattr(hip, type_name)
    missing = public_members(cls) - set(CALLS[type_name])
    assert not missing, f"{type_name} members with no misuse case: {sorted(missing)}"


# ---- objects ----------------------------------------------------------------------------------

@pytest.fixture
def env(dev, kernels):
    """Open objects that closed ones are passed to, or are passed as arguments."""
    ctx = dev.context
    s = dev.create_stream()
    bufs = [ctx.alloc(N) for _ in range(3)]
    objects = {"stream": s, "event": hip.Event(dev), "buffer": bufs[0], "buffer2": bufs[1],
               "kernel": kernels["vadd"], "vadd_args": (bufs[0], bufs[1], bufs[2], np.int32(N // 4))}
    yield objects
    s.sync()
    for o in (s, objects["event"], *bufs):
        o.close()
    objects.clear()


def make(type_name: str, dev, kernel_paths, env):
    """A new object of `type_name` (its owner kept in the returned list)."""
    ctx = dev.context
    if type_name == "Stream":
        return [dev.create_stream()]
    if type_name == "Event":
        return [hip.Event(dev)]
    if type_name == "DeviceBuffer":
        return [ctx.alloc(N)]
    if type_name == "HostBuffer":
        return [ctx.alloc_host(N)]
    if type_name == "ManagedBuffer":
        return [ctx.alloc_managed(N)]
    if type_name == "Module":
        return [hip.Module.load(kernel_paths["vadd"], dev)]
    if type_name == "Kernel":
        mod = hip.Module.load(kernel_paths["vadd"], dev)
        return [mod["vadd"], mod]
    if type_name == "Graph":
        return [hip.Graph(dev)]
    if type_name == "GraphExec":
        g = hip.Graph(dev)
        g.add_empty()
        return [g.instantiate(), g]
    raise AssertionError(type_name)


CASES = [(t, m) for t in sorted(CALLS) for m in sorted(CALLS[t]) if CALLS[t][m] is not None]


@pytest.mark.parametrize("type_name,member", CASES, ids=[f"{t}.{m}" for t, m in CASES])
def test_closed_object_refuses_use(type_name, member, dev, kernel_paths, env):
    skip_without_graphs(f"{type_name}.{member}")
    held = make(type_name, dev, kernel_paths, env)
    obj = held[0]
    obj.close()
    call = CALLS[type_name][member]
    if member in READABLE and (type_name, member) not in REFUSES:
        call(obj, env)                   # what the object was stays readable
    else:
        with pytest.raises(rocpy.ClosedError, match=type_name):
            call(obj, env)
    assert obj.closed
    # the process and the other objects still work
    env["buffer"].fill(7, stream=env["stream"])
    env["stream"].sync()
    for extra in held[1:]:
        extra.close()


# ---- closed objects as arguments ---------------------------------------------------------------

def _closed(factory):
    obj = factory()
    obj.close()
    return obj


ARGUMENT_CASES = {
    # what is closed -> fn(closed, env)
    "stream: Buffer.copy_from": ("stream", lambda c, env: env["buffer"].copy_from(env["buffer2"], stream=c)),
    "stream: Buffer.copy_to": ("stream", lambda c, env: env["buffer"].copy_to(np.zeros(N, np.uint8), stream=c)),
    "stream: Buffer.fill": ("stream", lambda c, env: env["buffer"].fill(1, stream=c)),
    "stream: Buffer.close": ("stream", lambda c, env: env["dev"].context.alloc(N).close(stream=c)),
    "stream: Context.alloc": ("stream", lambda c, env: env["dev"].context.alloc(N, stream=c)),
    "stream: Event.record": ("stream", lambda c, env: env["event"].record(c)),
    "stream: Stream.wait": ("stream", lambda c, env: env["stream"].wait(c)),
    "stream: Kernel.launch": ("stream", lambda c, env: env["kernel"].launch(1, 1, env["vadd_args"],
                                                                             stream=c)),
    "stream: GraphExec.launch": ("stream", lambda c, env: env["exec"].launch(c)),
    "event: Stream.wait": ("event", lambda c, env: env["stream"].wait(c)),
    "event: Stream.record": ("event", lambda c, env: env["stream"].record(c)),
    "event: Event - Event": ("event", lambda c, env: env["event"] - c),
    "buffer: Buffer.copy_from": ("buffer", lambda c, env: env["buffer"].copy_from(c)),
    "buffer: Buffer.copy_to": ("buffer", lambda c, env: env["buffer"].copy_to(c)),
    "buffer: async copy_from": ("buffer", lambda c, env: env["buffer"].copy_from(c, stream=env["stream"])),
    "buffer: Kernel.launch": ("buffer", lambda c, env: env["kernel"].launch(
        1, 1, (c, env["buffer"], env["buffer2"], np.int32(4)), stream=env["stream"])),
    "buffer: Graph.add_copy": ("buffer", lambda c, env: env["graph"].add_copy(c, env["buffer"])),
    "buffer: Graph.add_memset": ("buffer", lambda c, env: env["graph"].add_memset(c, 0)),
    "buffer: Graph.add_kernel": ("buffer", lambda c, env: env["graph"].add_kernel(
        env["kernel"], 1, 1, (c, env["buffer"], env["buffer2"], np.int32(4)))),
    "buffer: from_dlpack": ("buffer", lambda c, env: hip.from_dlpack(c.typed(np.uint8))),
    "kernel: Graph.add_kernel": ("kernel", lambda c, env: env["graph"].add_kernel(c, 1, 1, env["vadd_args"])),
}


@pytest.mark.parametrize("case", sorted(ARGUMENT_CASES))
def test_closed_argument_is_refused(case, dev, kernel_paths, env):
    skip_without_graphs(case)
    kind, call = ARGUMENT_CASES[case]
    g = hip.Graph(dev) if has_graphs() else None
    env.update(dev=dev, graph=g, exec=None)
    if g is not None:
        g.add_empty()
        env["exec"] = g.instantiate()
    mod = hip.Module.load(kernel_paths["vadd"], dev)
    factories = {"stream": dev.create_stream, "event": lambda: hip.Event(dev),
                 "buffer": lambda: dev.context.alloc(N), "kernel": lambda: mod["vadd"]}
    closed = _closed(factories[kind])
    with pytest.raises(rocpy.ClosedError):
        call(closed, env)
    # what refused is still usable
    env["kernel"].launch(1, N // 4, env["vadd_args"], stream=env["stream"])
    env["stream"].sync()
    if g is not None:
        env["exec"].close()
        g.close()
    mod.close()
    del env["exec"], env["graph"]


def test_buffer_close_on_a_closed_stream_keeps_the_buffer(dev):
    """Regression: close(stream=closed) used to claim the buffer and park its free in the
    dead stream until that stream object was collected; now it refuses and frees nothing."""
    s = dev.create_stream()
    s.close()
    buf = dev.context.alloc(N)
    with pytest.raises(rocpy.ClosedError, match="Stream"):
        buf.close(stream=s)
    assert not buf.closed
    buf.fill(3)                       # still usable
    live = rocpy.debug.live_objects()
    assert live.get("DeviceBuffer") == 1
    buf.close()
    assert "DeviceBuffer" not in rocpy.debug.live_objects()


def test_devices_and_contexts_ignore_close(dev):
    """Devices and contexts belong to HIP: close() does nothing and they stay usable."""
    ctx = dev.context
    dev.close()
    ctx.close()
    assert not dev.closed and not ctx.closed
    buf = ctx.alloc(N)
    dev.sync()
    assert ctx.devices == (dev,)
    buf.close()


def test_view_of_a_closed_buffer_refuses(dev):
    buf = dev.context.alloc(N)
    view = buf[8:16]
    buf.close()                        # the view keeps the memory; the parent is closed
    with pytest.raises(rocpy.ClosedError):
        buf[0:4]
    view.fill(1)                       # a live view still works
    view.close()
    with pytest.raises(rocpy.ClosedError):
        view.fill(1)


def test_typed_view_of_a_closed_buffer_refuses(dev):
    buf = dev.context.alloc(N)
    t = buf.typed(np.float32)
    buf.close()
    for call in (lambda: t.copy_from(np.zeros(N // 4, np.float32)), lambda: t.ptr,
                 lambda: t.__dlpack__(), lambda: t.numpy()):
        with pytest.raises(rocpy.ClosedError):
            call()
