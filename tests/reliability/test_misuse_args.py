"""Bad arguments to the HIP layer: each raises its documented exception, before any native call.

The rules (the modules' docstrings):

* a wrong *type* (None, a str for a size, a float for an index...) is a `TypeError`;
* a wrong *value* is `rocpy.InvalidValueError` carrying the status HIP gives that
  input (``hipErrorInvalidValue``, ``hipErrorInvalidDevice``,
  ``hipErrorInvalidConfiguration``), or the runtime's own error where the runtime
  decides (``hipErrorOutOfMemory`` for sizes nothing can hold);
* nothing else escapes: no `AttributeError`, no cffi `OverflowError`.

Each table row is ``(id, call(env), expected class, expected status name or None)``; the
tables are crossed with the value lists below, so every sized call meets every bad
size, every typed parameter every wrong type.
"""
from __future__ import annotations

import numpy as np
import pytest
from rel_support import skip_without_graphs

import rocpy
from rocpy import hip
from rocpy._handle import Handle

N = 64
HUGE = (2**63, 2**64, 2**70)                 # no device holds these; 2**64+ is no size_t
NEGATIVE = (-1, -(2**63))
NOT_INTS = (None, 1.5, "16", b"16", [16], True, object())

# (id, fn(env, value)) for every parameter that is a size in bytes
SIZED = {
    "Context.alloc": lambda env, v: env["ctx"].alloc(v),
    "Context.alloc(stream)": lambda env, v: env["ctx"].alloc(v, stream=env["stream"]),
    "Context.alloc_host": lambda env, v: env["ctx"].alloc_host(v),
    "Context.alloc_managed": lambda env, v: env["ctx"].alloc_managed(v),
    "host Context.alloc_host": lambda env, v: hip.Context.host().alloc_host(v),
}


def _expected_for_size(value):
    if value is True or not isinstance(value, int):
        return TypeError, None
    if value < 0:
        return rocpy.InvalidValueError, "hipErrorInvalidValue"
    return rocpy.OutOfMemoryError, "hipErrorOutOfMemory"


SIZE_CASES = [(name, v) for name in SIZED for v in (*NOT_INTS, *NEGATIVE, *HUGE)]


@pytest.fixture
def env(dev, kernels):
    ctx = dev.context
    s = dev.create_stream()
    bufs = [ctx.alloc(N) for _ in range(3)]
    host = ctx.alloc_host(N)
    e = {"dev": dev, "ctx": ctx, "stream": s, "buf": bufs[0], "buf2": bufs[1], "host": host,
         "odd": ctx.alloc(6), "kernel": kernels["vadd"], "event": hip.Event(dev),
         "args": (bufs[0], bufs[1], bufs[2], np.int32(N // 4))}
    yield e
    s.sync()
    for o in (s, host, e["odd"], e["event"], *bufs):
        o.close()
    e.clear()


def check(fn, expected, status):
    with pytest.raises(expected) as info:
        fn()
    err = info.value
    if status is not None:
        assert isinstance(err, rocpy.HipError), f"{err!r} is not a HipError"
        assert err.name == status, f"{err.name} != {status}: {err}"
    assert not isinstance(err, (AttributeError, OverflowError)) or expected in (AttributeError,
                                                                             OverflowError)


@pytest.mark.parametrize("name,value", SIZE_CASES, ids=[f"{n}-{v!r}"[:60] for n, v in SIZE_CASES])
def test_bad_sizes(name, value, env):
    expected, status = _expected_for_size(value)
    check(lambda: SIZED[name](env, value), expected, status)


# ---- every other parameter ----------------------------------------------------------------------
# (id, fn(env), expected class, status name or None)

V, T = rocpy.InvalidValueError, TypeError
INV, DEV, CFG = "hipErrorInvalidValue", "hipErrorInvalidDevice", "hipErrorInvalidConfiguration"

CASES = [
    # devices
    *[(f"Device({v!r})", lambda e, v=v: hip.Device(v), T, None) for v in (None, 1.5, "0", True, [0])],
    *[(f"Device({v})", lambda e, v=v: hip.Device(v), V, DEV) for v in (-1, 1, 2**31, 2**70)],
    *[(f"Event(device={v!r})", lambda e, v=v: hip.Event(v), V, DEV) for v in (-1, 7)],
    *[(f"Graph({v!r})", lambda e, v=v: hip.Graph(v), V, DEV) for v in (-1, 7)],
    *[(f"{m}({v!r})", lambda e, m=m, v=v: getattr(e["dev"], m)(v), T, None)
      for m in ("can_access_peer", "enable_peer_access", "disable_peer_access")
      for v in (None, "1", 1.5, True)],
    *[(f"{m}({v!r})", lambda e, m=m, v=v: getattr(e["dev"], m)(v), V, DEV)
      for m in ("can_access_peer", "enable_peer_access") for v in (-1, 7, 2**40)],
    ("attribute(None)", lambda e: e["dev"].attribute(None), T, None),
    ("attribute(1.5)", lambda e: e["dev"].attribute(1.5), T, None),
    ("attribute('bogus')", lambda e: e["dev"].attribute("bogus"), V, INV),
    *[(f"attribute({v})", lambda e, v=v: e["dev"].attribute(v), V, INV) for v in (-5, 2**40, 10**6)],
    *[(f"limit({v!r})", lambda e, v=v: e["dev"].limit(v), T, None) for v in (None, 5, b"stack_size")],
    ("limit('bogus')", lambda e: e["dev"].limit("bogus"), V, INV),
    # streams
    *[(f"create_stream(priority={v!r})", lambda e, v=v: e["dev"].create_stream(priority=v), T, None)
      for v in (None, 1.5, True, b"high")],
    *[(f"create_stream(priority={v!r})", lambda e, v=v: e["dev"].create_stream(priority=v), V, INV)
      for v in ("bogus", 2**40, -(2**40))],
    *[(f"create_stream(cu_mask={v!r})", lambda e, v=v: e["dev"].create_stream(cu_mask=v), T, None)
      for v in ("x", 1.5, [1.5], [None])],
    *[(f"create_stream(cu_mask={v!r})", lambda e, v=v: e["dev"].create_stream(cu_mask=v), V, INV)
      for v in (0, -1, [], [0], [2**33], [-1])],
    *[(f"from_handle({v!r})", lambda e, v=v: hip.Stream.from_handle(v), T, None)
      for v in (None, 1.5, "0x10", True)],
    *[(f"from_handle({v!r})", lambda e, v=v: hip.Stream.from_handle(v), V, INV)
      for v in (-1, 2**64, 2**70)],
    ("Stream.wait(5)", lambda e: e["stream"].wait(5), T, None),
    *[(f"Stream.record({v!r})", lambda e, v=v: e["stream"].record(v), T, None)
      for v in (5, "ev", 1.5)],
    ("Stream.add_callback(None)", lambda e: e["stream"].add_callback(None), T, None),
    ("Stream.capture('bogus')", lambda e: e["stream"].capture("bogus").__enter__(), V, INV),
    *[(f"{what}(stream={v!r})", lambda e, what=what, v=v: {
        "copy_from": lambda: e["buf"].copy_from(e["buf2"], stream=v),
        "copy_to": lambda: e["buf"].copy_to(e["buf2"], stream=v),
        "fill": lambda: e["buf"].fill(0, stream=v),
        "record": lambda: e["event"].record(v),
        "alloc": lambda: e["ctx"].alloc(N, stream=v),
        "launch": lambda: e["kernel"].launch(1, 1, e["args"], stream=v),
        "close": lambda: e["ctx"].alloc(N).close(stream=v),
    }[what](), T, None)
      for what in ("copy_from", "copy_to", "fill", "record", "alloc", "launch", "close")
      for v in (1, "s", 1.5, object())],
    # events
    ("Event(interprocess, timing)", lambda e: hip.Event(e["dev"], interprocess=True), V, INV),
    ("Event - None", lambda e: e["event"] - None, T, None),
    ("Event - stream", lambda e: e["event"] - e["stream"], T, None),
    ("unrecorded - Event", lambda e: hip.Event(e["dev"]) - e["event"],
     rocpy.InvalidHandleError, "hipErrorInvalidHandle"),
    ("no timing - no timing", lambda e: e["stream"].record(timing=False)
     - e["stream"].record(timing=False), rocpy.InvalidHandleError, "hipErrorInvalidHandle"),
    # copies: endpoints of the wrong type, size or writability
    *[(f"copy_from({type(v).__name__})", lambda e, v=v: e["buf"].copy_from(v), T, None)
      for v in (None, 5, "abc", [0] * N, 1.5)],
    *[(f"copy_to({type(v).__name__})", lambda e, v=v: e["buf"].copy_to(v), T, None)
      for v in (None, 5, "abc", [0] * N)],
    *[(f"copy_from(size {n})", lambda e, n=n: e["buf"].copy_from(np.zeros(n, np.uint8)), V, INV)
      for n in (0, 1, N - 1, N + 1, 10 * N)],
    *[(f"copy_to(size {n})", lambda e, n=n: e["buf"].copy_to(np.zeros(n, np.uint8)), V, INV)
      for n in (0, 1, N - 1, N + 1)],
    ("copy_from(smaller buffer)", lambda e: e["buf"].copy_from(e["odd"]), V, INV),
    ("copy_to(smaller buffer)", lambda e: e["buf"].copy_to(e["odd"]), V, INV),
    ("copy_from(async, size)", lambda e: e["buf"].copy_from(np.zeros(3, np.uint8), stream=e["stream"]),
     V, INV),
    ("copy_to(bytes)", lambda e: e["buf"].copy_to(bytes(N)), V, INV),
    ("copy_to(read-only array)", lambda e: e["buf"].copy_to(np.frombuffer(bytes(N), np.uint8)), V, INV),
    ("copy_to(strided array)", lambda e: e["buf"].copy_to(np.zeros(2 * N, np.uint8)[::2]), V, INV),
    ("copy_to(read-only memoryview)", lambda e: e["buf"].copy_to(memoryview(bytes(N))), V, INV),
    # fills
    *[(f"fill({v!r})", lambda e, v=v: e["buf"].fill(v), T, None)
      for v in (None, 1.5, "a", np.float64(1), np.uint16(1), np.complex64(1), [1])],
    *[(f"fill({v!r})", lambda e, v=v: e["buf"].fill(v), V, INV) for v in (-1, 256, 2**40)],
    ("fill(u32) on 6 bytes", lambda e: e["odd"].fill(np.uint32(1)), V, INV),
    # views and typed views
    *[(f"buf[{k!r}]", lambda e, k=k: e["buf"][k], T, None) for k in (0, "a", None, 1.5)],
    *[(f"buf[{k!r}]", lambda e, k=k: e["buf"][k], V, INV)
      for k in (slice(0, N + 1), slice(-N - 1, 4), slice(8, 4), slice(0, 8, 2), slice(0, 8, -1))],
    ("buf[1.5:3]", lambda e: e["buf"][1.5:3], T, None),
    *[(f"typed({d}, {s})", lambda e, d=d, s=s: e["buf"].typed(d, s), V, INV)
      for d, s in ((np.float32, (N,)), (np.float32, (-1,)), (np.float64, (3,)),
                   ("V7", None))],
    *[(f"typed({d!r})", lambda e, d=d: e["buf"].typed(d), T, None) for d in ("V0", object, "O")],
    ("typed(bogus dtype)", lambda e: e["buf"].typed("bogus"), T, None),
    ("host.numpy(shape)", lambda e: e["host"].numpy(np.float32, (N,)), V, INV),
    # direct construction is refused
    *[(f"{cls}()", lambda e, cls=cls: getattr(hip, cls)(), T, None)
      for cls in ("Context", "DeviceBuffer", "HostBuffer", "ManagedBuffer", "Stream", "Kernel",
                  "GraphExec", "Module")],
    ("host context alloc", lambda e: hip.Context.host().alloc(N), V, INV),
    # modules and kernels
    *[(f"Module.load({v!r})", lambda e, v=v: hip.Module.load(v), T, None) for v in (None, 5, 1.5)],
    ("Module.load(missing file)", lambda e: hip.Module.load("/nonexistent/x.hsaco"), FileNotFoundError,
     None),
    *[(f"Module.load(garbage {n})", lambda e, n=n: hip.Module.load(b"\0" * n), rocpy.RocpyError, None)
      for n in (0, 1, 64, 4096)],
    ("Module.load(garbage bundle)", lambda e: hip.Module.load(
        b"__CLANG_OFFLOAD_BUNDLE__" + b"\xff" * 4072), rocpy.RocpyError, None),
    *[(f"module[{v!r}]", lambda e, v=v: e["kernel"].module[v], T, None) for v in (None, 0, b"vadd")],
    ("module['nope']", lambda e: e["kernel"].module["nope"], hip.KernelNotFoundError,
     "hipErrorNotFound"),
    ("module['nope'] is a LookupError", lambda e: e["kernel"].module["nope"], LookupError, None),
    *[(f"Kernel.attribute({v!r})", lambda e, v=v: e["kernel"].attribute(v), T, None) for v in (None, 3)],
    ("Kernel.attribute('bogus')", lambda e: e["kernel"].attribute("bogus"), V, INV),
    # graphs
    *[(f"add_memset({v!r}, 0)", lambda e, v=v: hip.Graph(e["dev"]).add_memset(v, 0), T, None)
      for v in (None, 5, np.zeros(4))],
    ("add_memset(buf, 300)", lambda e: hip.Graph(e["dev"]).add_memset(e["buf"], 300), V, INV),
    ("add_memset(buf, None)", lambda e: hip.Graph(e["dev"]).add_memset(e["buf"], None), T, None),
    ("add_memset(odd, u32)", lambda e: hip.Graph(e["dev"]).add_memset(e["odd"], np.uint32(1)), V, INV),
    *[(f"add_kernel({v!r})", lambda e, v=v: hip.Graph(e["dev"]).add_kernel(v, 1, 1), T, None)
      for v in (None, "vadd", 5)],
    ("add_copy(None, buf)", lambda e: hip.Graph(e["dev"]).add_copy(None, e["buf"]), T, None),
    ("add_copy(size mismatch)", lambda e: hip.Graph(e["dev"]).add_copy(e["buf"], e["odd"]), V, INV),
    ("add_host(None)", lambda e: hip.Graph(e["dev"]).add_host(None), T, None),
    ("add_empty(deps=5)", lambda e: hip.Graph(e["dev"]).add_empty(deps=5), T, None),
    ("add_empty(deps=[5])", lambda e: hip.Graph(e["dev"]).add_empty(deps=[5]), V, INV),
    ("add_empty(deps=other graph)", lambda e: hip.Graph(e["dev"]).add_empty(
        deps=[hip.Graph(e["dev"]).add_empty()]), V, INV),
    ("GraphExec.launch(5)", lambda e: _exec(e).launch(5), T, None),
    # programs and DLPack
    *[(f"Program({v!r})", lambda e, v=v: hip.Program(v), T, None) for v in (None, 5, ["x"])],
    *[(f"from_dlpack({v!r})", lambda e, v=v: hip.from_dlpack(v), T, None) for v in (None, 5, "x")],
    *[(f"__dlpack__(stream={v!r})", lambda e, v=v: e["buf"].__dlpack__(stream=v), BufferError, None)
      for v in ("x", 1.5, True)],
    ("__dlpack__(dl_device bogus)", lambda e: e["buf"].__dlpack__(dl_device=(99, 0)), BufferError, None),
]


def _exec(e):
    g = hip.Graph(e["dev"])
    g.add_empty()
    return g.instantiate()


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_argument(case, env):
    skip_without_graphs(case[0])
    _, fn, expected, status = case
    check(lambda: fn(env), expected, status)
    env["buf"].fill(1, stream=env["stream"])   # the process and the objects still work
    env["stream"].sync()


def test_tables_have_no_duplicate_ids():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_no_error_escapes_as_attribute_or_overflow_error(env):
    """A sweep of junk through every method taking a value: only the documented classes."""
    junk = (None, -1, 2**64, 2**70, 1.5, "x", b"x", [], object(), True)
    d, s, b, k = env["dev"], env["stream"], env["buf"], env["kernel"]
    calls = {
        "Device": hip.Device, "Device().default_stream": lambda v: hip.Device(v).default_stream, "Stream.per_thread": hip.Stream.per_thread,
        "from_handle": hip.Stream.from_handle, "attribute": d.attribute, "limit": d.limit,
        "can_access_peer": d.can_access_peer, "create_stream(priority)": lambda v: d.create_stream(priority=v),
        "create_stream(cu_mask)": lambda v: d.create_stream(cu_mask=v),
        "create_event": lambda v: hip.Event(v), "alloc": d.context.alloc, "alloc_host": d.context.alloc_host,
        "alloc_managed": d.context.alloc_managed, "copy_from": b.copy_from, "copy_to": b.copy_to,
        "fill": b.fill, "getitem": b.__getitem__, "typed": b.typed, "wait": s.wait, "record": s.record,
        "add_callback": s.add_callback, "capture": lambda v: s.capture(v).__enter__(),
        "launch(grid)": lambda v: k.launch(v, 1, env["args"], stream=s),
        "launch(block)": lambda v: k.launch(1, v, env["args"], stream=s),
        "launch(args)": lambda v: k.launch(1, 1, v, stream=s),
        "launch(shared_mem)": lambda v: k.launch(1, 1, env["args"], stream=s, shared_mem=v),
        "launch(stream)": lambda v: k.launch(1, 1, env["args"], stream=v),
        "end - start": lambda v: env["event"] - v, "Module.load": hip.Module.load,
        "module[]": k.module.__getitem__, "Kernel.attribute": k.attribute,
        "Program": hip.Program, "from_dlpack": hip.from_dlpack,
        "dlpack(stream)": lambda v: b.__dlpack__(stream=v),
    }
    allowed = (TypeError, ValueError, rocpy.RocpyError, BufferError, LookupError, OSError)
    escaped = []
    for name, fn in calls.items():
        for v in junk:
            try:
                out = fn(v)
            except allowed:
                continue
            except BaseException as exc:
                escaped.append(f"{name}({v!r}): {type(exc).__name__}: {exc}")
                continue
            if isinstance(out, Handle):
                out.close()
    s.sync()
    assert not escaped, "\n".join(escaped)
