"""Synchronous copies on the legacy null stream (rocpy/hip/_copy.py `on_null`,
the compiled `copy_sync_core` in rocpy/_native/hot/hot_calls.c) and the kind every
copy passes.

- **The pre-wait is taken exactly when rocpy enqueued something since the last
  completed null-stream wait** (rocpy/_native/hot/hot_idle.c): a kernel whose
  emulation blocks on a gate is queued by each enqueue path, then a synchronous
  copy runs on a thread; while the gate is closed the copy must be inside the
  interruptible wait (a helper thread blocked in the runtime call), not inside
  ``hipMemcpy``.  With a mark missing, the copy skips the wait and blocks in
  ``hipMemcpy`` itself (no helper busy): these tests fail.
- **The kind**: explicit (``hipMemcpyHostToDevice`` ...) where both ends' memory is
  known, ``hipMemcpyDefault`` for managed memory; compiled and Python paths agree
  (the stub records the kind each copy passed: `rocpy.stub.last_memcpy_kind`).
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import rocpy
from rocpy import _hotpath, hip
from rocpy.hip import _lane, _methods, _wait

pytestmark = pytest.mark.stub_only
N = 256
HTOH, HTOD, DTOH, DTOD, DEFAULT = 0, 1, 2, 3, 4


@pytest.fixture
def gate(kernel_file, dev):
    """(the "fill" kernel of a compiled and of a pure-Python module, the gate): its
    emulation waits for the gate (10 s at most), then fills."""
    import rocpy.stub
    opened = threading.Event()
    path = kernel_file("fill")
    m = hip.Module.load(path, dev)
    with _hotpath.disabled():         # kernels choose their path when made
        m_py = hip.Module.load(path, dev)
        k_py = m_py["fill"]
    k = m["fill"]
    assert k._launcher is not None and k_py._launcher is None
    params = k.params

    def emulate(d):
        opened.wait(10)
        p, value, n = (d.arg(a.offset, f) for a, f in zip(params, "QIi"))
        d.array(p, np.uint32, n)[:] = value
    rocpy.stub.register_kernel("fill", emulate)
    value = [k, k_py, opened]
    del k, k_py
    try:
        yield value
    finally:
        opened.set()
        dev.sync()
        rocpy.stub.unregister_kernel("fill")
        value.clear()            # pytest holds the fixture's value until teardown ends
        m.close()
        m_py.close()


def _copy_waits_first(buf, out, opened):
    """Run ``buf.copy_to(out)`` on a thread while the gate is closed: whether it waited
    in rocpy's interruptible wait (a helper busy in the runtime's call), and the data."""
    busy0 = _wait.helpers()[1]
    t = threading.Thread(target=buf.copy_to, args=(out,))
    t.start()
    deadline = time.monotonic() + 5
    waited = False
    while time.monotonic() < deadline and t.is_alive():
        if _wait.helpers()[1] > busy0:
            waited = True
            break
        time.sleep(0.01)
    alive = t.is_alive()
    opened.set()
    t.join(10)
    assert alive, "the copy returned while the kernel before it was still gated"
    return waited


ENQUEUES = ["compiled launch", "python launch", "launch on the null stream",
            "stream.wait on a gated non-blocking stream"]


@pytest.mark.parametrize("how", ENQUEUES)
def test_a_sync_copy_waits_interruptibly_for_what_rocpy_enqueued(how, gate, dev):
    k, k_py, opened = gate
    buf = dev.context.alloc(N)
    out = np.zeros(N // 4, np.uint32)
    args = (buf, np.uint32(7), np.int32(N // 4))
    s = dev.create_stream()
    nb = dev.create_stream(non_blocking=True)
    try:
        buf.copy_to(out)                        # a completed null-stream copy: idle
        assert _lane.idle(dev.index)
        if how == "compiled launch":
            k.launch(1, 64, args, stream=s)
        elif how == "python launch":
            k_py.launch(1, 64, args, stream=s)
        elif how == "launch on the null stream":
            k.launch(1, 64, args)
        else:
            k.launch(1, 64, args, stream=nb)   # not waited for by the null stream ...
            buf.copy_to(out)                   # ... so this copy completes and covers it
            assert _lane.idle(dev.index)
            s.wait(nb)                         # now the blocking stream s waits for it
        assert not _lane.idle(dev.index)
        assert _copy_waits_first(buf, out, opened)
        assert (out == 7).all()
        assert _lane.idle(dev.index)           # the completed wait covered the marks
    finally:
        opened.set()
        for x in (s, nb):
            x.sync()
            x.close()
        buf.close()


def test_an_idle_device_copies_in_one_compiled_call(dev):
    """No pre-wait where nothing is pending: the compiled copy does it (the Python
    `on_null` is not called), with identical bytes."""
    if _hotpath.module() is None:
        pytest.skip("rocpy._hot is not built or ROCPY_HOT=0")
    from rocpy.hip import _copy
    _methods.install()                          # done by the first stream or event made
    buf = dev.context.alloc(N)
    src = np.arange(N, dtype=np.uint8)
    calls = []
    real = _copy.on_null
    buf.copy_from(src)                          # earlier tests' marks: this one covers them
    assert _lane.idle(dev.index)
    _copy.on_null = lambda *a: calls.append(a) or real(*a)
    try:
        buf.copy_from(src)                      # idle: compiled, no on_null
        out = buf.copy_to(np.zeros(N, np.uint8))
        assert calls == []
        _lane.mark(dev.index)                   # something pending: the Python path waits
        buf.copy_to(out)
        assert len(calls) == 1 and _lane.idle(dev.index)
        assert (out == src).all()
    finally:
        _copy.on_null = real
        buf.close()


def test_raw_work_rocpy_cannot_see_is_still_ordered_by_the_runtime(dev):
    """A raw ``hipMemsetAsync`` on a blocking stream marks nothing; the synchronous copy
    after it still sees its result (the null stream's implicit sync, hipamd's
    iHipWaitActiveStreams; the stub's null stream waits for blocking streams)."""
    from rocpy.hip._api import api
    lib, ffi = api().lib, api().ffi
    buf = dev.context.alloc(1 << 20)
    s = dev.create_stream()
    out = np.zeros(1 << 20, np.uint8)
    try:
        buf.copy_to(out)
        assert _lane.idle(dev.index)
        h = ffi.cast("hipStream_t", s._lane.addr)
        assert lib.hipMemsetAsync(ffi.cast("void *", buf.ptr), 0x5A, 1 << 20, h) == 0
        assert _lane.idle(dev.index)            # invisible to rocpy
        buf.copy_to(out)
        assert (out == 0x5A).all()
    finally:
        s.sync()
        s.close()
        buf.close()


def test_the_idle_counters_follow_one_rule():
    """The compiled counters and the pure-Python ones (where rocpy._hot is not built)
    agree over a sequence of marks and covers, stale covers and devices out of range."""
    py = _lane._PyIdle()
    hot = _hotpath.compiled()
    if hot is None:
        pytest.skip("rocpy._hot is not built")
    dev = 63                                    # a device index no test uses
    base = hot.marks(dev)
    hot.cover(dev, base)
    steps = [("mark",), ("mark",), ("cover", 1), ("idle",), ("cover", 2), ("idle",),
             ("cover", 1), ("idle",), ("mark",), ("cover", 5), ("idle",), ("cover", 3),
             ("idle",)]
    got = {"hot": [], "py": []}
    for step in steps:
        for name, impl, off in (("hot", hot, base), ("py", py, 0)):
            if step[0] == "mark":
                impl.mark(dev)
            elif step[0] == "cover":
                impl.cover(dev, step[1] + off)
            got[name].append((bool(impl.idle(dev)), impl.marks(dev) - off))
    assert got["hot"] == got["py"]
    assert got["py"][-1] == (True, 3)
    for impl in (hot, py):
        assert not impl.idle(64) and not impl.idle(-1) and impl.marks(64) == 0


def _ends(ctx):
    return {
        "device": lambda: ctx.alloc(N),
        "host": lambda: ctx.alloc_host(N),
        "managed": lambda: ctx.alloc_managed(N),
        "numpy": lambda: np.zeros(N, np.uint8),
        "bytearray": lambda: bytearray(N),
    }


SIDE = {"device": 1, "host": 0, "managed": -1, "numpy": 0, "bytearray": 0}


def _expected(src, dst):
    a, b = SIDE[src], SIDE[dst]
    return DEFAULT if a < 0 or b < 0 else a * 2 + b


PAIRS = [(a, b) for a in SIDE for b in SIDE
         if a in ("device", "host", "managed") or b in ("device", "host", "managed")]


@pytest.mark.parametrize("src,dst", PAIRS)
@pytest.mark.parametrize("on", ["sync", "stream"])
def test_every_copy_passes_the_explicit_kind_compiled_and_python_alike(src, dst, on, dev):
    import rocpy.stub
    ends = _ends(dev.context)
    streams = {}
    hot_s = dev.create_stream()
    with _hotpath.disabled():
        py_s = dev.create_stream()
    made = []
    kinds = {}
    try:
        for path, s in (("compiled", hot_s), ("python", py_s)):
            a, b = ends[src](), ends[dst]()
            made += [a, b]
            if isinstance(a, hip.memory.Buffer):
                a.copy_from(bytes(range(256)))
            stream = s if on == "stream" else None
            if isinstance(a, hip.memory.Buffer):
                copy = (lambda a=a, b=b: a.copy_to(b, stream)) if path == "compiled" else \
                    (lambda a=a, b=b: _methods.PYTHON.get("Buffer.copy_to",
                                                           type(a).copy_to)(a, b, stream))
            else:
                copy = (lambda a=a, b=b: b.copy_from(a, stream)) if path == "compiled" else \
                    (lambda a=a, b=b: _methods.PYTHON.get("Buffer.copy_from",
                                                           type(b).copy_from)(b, a, stream))
            copy()
            kinds[path] = rocpy.stub.last_memcpy_kind()
            s.sync()
            streams[path] = bytes(b.copy_to(bytearray(N)) if isinstance(b, hip.memory.Buffer)
                                  else memoryview(b).cast("B"))
        assert kinds == {"compiled": _expected(src, dst), "python": _expected(src, dst)}
        if src in ("numpy", "bytearray"):
            assert streams["compiled"] == streams["python"] == bytes(N)
        else:
            assert streams["compiled"] == streams["python"] == bytes(range(256))
    finally:
        for x in made:
            if isinstance(x, hip.memory.Buffer):
                x.close()
        for s in (hot_s, py_s):
            s.sync()
            s.close()
