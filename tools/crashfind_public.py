"""The crash-finder's corpus of the public (Pythonic) layer: issue 20's classes, generally.

Cases of api ``"py"`` run a Python expression in the worker (`PY_PRELUDE`
defines the objects) and are classified by what it did:

  status      it returned what the case expects (``"ok"``: returned at all;
              ``("value", v)``: returned ``v``), or raised a clear exception
              (``("raise", word)``: TypeError, ValueError, BufferError,
              LookupError or a rocpy error, with ``word`` (the argument's
              name) in its message);
  unexpected  it returned, or raised something else: an internal error that
              reached the user (cffi's OverflowError, SystemError, a numpy
              error, AttributeError), or a message not naming the argument;
  crash       the worker died or hung (a segfault from an object dtype, a
              wait that SIGINT could not interrupt).

The classes:
  * numpy integers of every width for every integer parameter (must work);
  * out-of-range and wrong-typed values for the same parameters (a clear
    error naming the parameter, never cffi's OverflowError);
  * dtypes holding Python objects or of size 0 wherever memory is viewed or
    copied (TypeError, never a segfault);
  * SIGINT during every blocking wait, queued behind a kernel that never
    finishes on its own (KeyboardInterrupt within a few slices).
"""
from __future__ import annotations

from typing import Any

NP_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

PY_PRELUDE = r'''
import signal as _signal, threading as _threading, time as _time
import numpy as np

def _py_objects():
    import rocpy, rocpy.stub
    from rocpy import hip
    dev = hip.Device(0)
    ctx = dev.context
    o = {"rocpy": rocpy, "hip": hip, "np": np, "dev": dev, "ctx": ctx,
         "buf": keep(ctx.alloc(256)), "host": keep(ctx.alloc_host(256)),
         "stream": keep(dev.create_stream())}
    return o

def _hsa_objects():
    from rocpy import hsa
    rt = keep(hsa.Runtime())
    gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
    pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
    b = keep(pool.allocate(4096)); b.allow_access([gpu])
    return {"hsa": hsa, "rt": rt, "gpu": gpu, "cpu": cpu, "hpool": pool, "hbuf": b,
            "hsig": keep(hsa.Signal(0))}

_gate = _threading.Event()

def gated(stream=None):
    """A vadd that runs until this case's gate opens (10 s at most), on `stream`."""
    global _gate
    import rocpy.stub
    from rocpy import hip
    gate = _gate = _threading.Event()
    rocpy.stub.register_kernel("vadd", lambda d: gate.wait(10) and None)
    dev = hip.Device(0)
    k = keep(hip.Module.load(os.environ["CRASHFIND_VADD"], dev)["vadd"])
    bufs = [keep(dev.context.alloc(256)) for _ in range(3)]
    k.launch(1, 64, (*bufs, np.int32(64)), stream=stream)

def interrupted(fn, after=0.2, within=3.0):
    """'interrupted' if SIGINT `after` seconds into fn() raised KeyboardInterrupt
    within `within` seconds; 'late' if later; 'returned' if fn returned."""
    sent = []
    def kick():
        _time.sleep(after); sent.append(_time.monotonic()); os.kill(os.getpid(), _signal.SIGINT)
    _threading.Thread(target=kick, daemon=True).start()
    try:
        fn()
        outcome = "returned"
    except KeyboardInterrupt:
        outcome = "interrupted" if _time.monotonic() - sent[0] < within else "late"
    _gate.set()
    return outcome
'''


def _ints() -> list[tuple[str, str, str, Any, tuple[Any, ...], tuple[Any, ...]]]:
    """(name, setup, template with {v}, a valid value, out-of-range values, arg name) per
    integer parameter: the template is an expression."""
    hip = "o = _py_objects(); globals().update(o)"
    hsa = hip + "; globals().update(_hsa_objects())"
    return [
        ("Context.alloc", hip, "ctx.alloc({v}).close()", 64, (-1, 2**64, 2**70), "size"),
        ("Context.alloc_host", hip, "ctx.alloc_host({v}).close()", 64, (-1, 2**64), "size"),
        ("Buffer.typed(shape)", hip, "buf.typed(np.uint8, ({v},))", 256, (-1, 2**70), "shape"),
        ("HostBuffer.numpy(shape)", hip, "host.numpy(np.uint8, {v})", 256, (-5, 2**70), "shape"),
        ("Device", hip, "hip.Device({v})", 0, (2**31, 2**70), "device"),
        ("create_stream(priority)", hip, "dev.create_stream(priority={v}).close()", 0,
         (2**31, 2**70), "priority"),
        ("Device.attribute", hip, "dev.attribute({v})", 0, (2**31, 2**70), "attribute"),
        ("hsa Buffer.numpy(offset)", hsa, "hbuf.numpy('uint8', offset={v})", 4,
         (-1, 2**70), "offset"),
        ("hsa Buffer.numpy(count)", hsa, "hbuf.numpy('uint8', count={v})", 4, (-1, 2**70),
         "items"),
        ("hsa create_queue(size)", hsa, "gpu.create_queue(size={v}).close()", 1024,
         (2**32, 2**70), "size"),
        ("hsa create_queue(kernarg_bytes)", hsa,
         "gpu.create_queue(kernarg_bytes={v}).close()", 1 << 14, (0, 2**70), "kernarg"),
        ("hsa create_queue(kernarg_segments)", hsa,
         "gpu.create_queue(kernarg_segments={v}).close()", 2, (0, 2**40), "kernarg_segments"),
        ("hsa Signal.wait_any(values)", hsa,
         "hsa.Signal.wait_any([hsig], 'eq', {v}, timeout=1)", 0, (), "value"),
        ("hsa fill(value)", hsa, "hbuf.fill({v})", 7, (-1, 2**32), "value"),
        ("hsa copy(size)", hsa, "hsa.copy(hbuf, hbuf, {v})", 64, (-1, 2**64), "size"),
    ]


WRONG_TYPES = ("1.5", "'8'", "[8]", "True", "None")
NONE_MEANS_DEFAULT = {"Device", "hsa Buffer.numpy(count)", "hsa create_queue(size)",
                      "HostBuffer.numpy(shape)"}
SEQUENCE_OK = {"HostBuffer.numpy(shape)", "hsa Signal.wait_any(values)"}   # lists are valid there
_MAX = {"int8": 127, "int16": 2**15 - 1, "int32": 2**31 - 1, "int64": 2**63 - 1, "uint8": 255,
        "uint16": 2**16 - 1, "uint32": 2**32 - 1, "uint64": 2**64 - 1}

OBJECT_DTYPES = ("object", "'O'", "'V0'", "[('a', 'O')]", "np.dtype([])")

_DTYPE_CALLS = [
    ("HostBuffer.numpy", "host.numpy({d})"),
    ("Buffer.typed", "buf.typed({d})"),
    ("Buffer.typed.numpy", "buf.typed({d}).numpy()"),
    ("Buffer.copy_to(array)", "buf.copy_to(np.empty(32, {d}))"),
    ("Buffer.copy_from(array)", "buf.copy_from(np.empty(32, {d}))"),
    ("hsa Buffer.numpy", "hbuf.numpy({d})"),
]

# (name, setup, the blocking call): each queued behind a gated kernel
_BLOCKING = [
    ("Stream.sync", "gated(stream)", "stream.sync()"),
    ("Event.sync", "gated(stream); ev = keep(stream.record())", "ev.sync()"),
    ("Device.sync", "gated(stream)", "dev.sync()"),
    ("Context.sync", "gated(stream)", "ctx.sync()"),
    ("Stream.__exit__", "gated(stream)", "stream.__exit__(None, None, None)"),
    ("per-thread Stream.sync", "pt = hip.Stream.per_thread(dev); gated(pt)",
     "pt.sync()"),
    ("null-stream copy_to", "gated(None)", "buf.copy_to(np.empty(256, np.uint8))"),
    ("null-stream copy_from", "gated(None)", "buf.copy_from(np.zeros(256, np.uint8))"),
    ("null-stream fill", "gated(None)", "buf.fill(1)"),
    ("hsa Signal.wait", "globals().update(_hsa_objects()); s1 = keep(hsa.Signal(1))",
     "s1.wait('eq', 0)"),
    ("hsa Signal.wait_any", "globals().update(_hsa_objects()); s1 = keep(hsa.Signal(1))",
     "hsa.Signal.wait_any([s1], 'eq', 0)"),
    ("hsa Queue.sync", "globals().update(_hsa_objects()); q = keep(gpu.create_queue()); "
     "s1 = keep(hsa.Signal(1)); q.barrier_and([s1])", "q.sync()"),
]


def public_cases(case: Any) -> list[Any]:
    """The corpus, as ``case(name, api, code, expect, setup)`` objects (crashfind's `Case`)."""
    cases = []
    for name, setup, template, valid, bad, arg in _ints():
        for t in NP_INTS:
            v = f"np.{t}({valid})"
            if valid > _MAX[t]:
                continue
            cases.append(case(f"py:numpy-int:{name}:{t}", "py", template.format(v=v), "ok", setup))
        for b in bad:
            cases.append(case(f"py:out-of-range:{name}:{b}", "py", template.format(v=b),
                              ("raise", arg), setup))
        for w in WRONG_TYPES:
            if w == "None" and name in NONE_MEANS_DEFAULT or w == "[8]" and name in SEQUENCE_OK:
                continue                                  # valid there
            cases.append(case(f"py:wrong-type:{name}:{w}", "py", template.format(v=w),
                              ("raise", ""), setup))
    for name, template in _DTYPE_CALLS:
        setup = "o = _py_objects(); globals().update(o)"
        if name.startswith("hsa"):
            setup += "; globals().update(_hsa_objects())"
        for d in OBJECT_DTYPES:
            cases.append(case(f"py:dtype:{name}:{d}", "py", template.format(d=d),
                              ("raise", ""), setup))
    for name, setup, call in _BLOCKING:
        cases.append(case(f"py:sigint:{name}", "py", f"interrupted(lambda: {call})",
                          ("value", "interrupted"), "o = _py_objects(); globals().update(o); " + setup))
    return cases


CLEAR = ("TypeError", "ValueError", "BufferError", "LookupError", "KeyError", "IndexError",
         "ClosedError", "HipError", "HsaError", "InvalidValueError", "TimeoutError")


def py_matches(expect: Any, status: int | None, name: str) -> bool:
    """Whether a py case's outcome (status 0: returned ``name``; else ``name`` is
    ``"Type: message"`` of what it raised, with its class's MRO names first) is expected."""
    if expect == "ok":
        return status == 0
    kind, word = expect
    if kind == "value":
        return status == 0 and name == word
    if status == 0:
        return False
    mro, _, message = name.partition("|")
    types = mro.split(",")
    if "OverflowError" in types or "SystemError" in types or "AttributeError" in types:
        return False
    return any(t in CLEAR for t in types) and word in message
