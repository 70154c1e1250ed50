"""Rule 1: every blocking wait is interruptible (issue 20).

Each case runs in a subprocess on the stub: a kernel whose emulation blocks on
a gate (it never finishes unless the test opens the gate) is queued, SIGINT
arrives while the wait blocks on it, and the wait must raise
`KeyboardInterrupt` while the kernel still runs.  Before the wait layer
(`rocpy/hip/_wait.py`, `_native/fast/wait.c`), each of these waits was one C
call that returned only when the gate opened (after 10 s here): "returned".

Afterwards the gate opens, the same wait completes normally, the interrupted
wait's helper job finishes and unpins what it held, and nothing is left alive.
"""
from __future__ import annotations

import json

import pytest

INTERRUPT = """
    import json, os, signal, sys, threading, time
    import numpy as np, rocpy, rocpy.stub, rocpy.debug
    from rocpy import hip
    try:
        from rocpy.hip import _wait
    except ImportError:                               # before the wait layer: nothing to poll
        _wait = type("NoWait", (), {"poll_abandoned": staticmethod(lambda: 0)})
    dev = hip.Device(0)
    gate = threading.Event()
    k = hip.Module.load(sys.argv[1], dev)["fill"]
    params = k.params
    def emulate(d):                 # the fill, once the gate opens (10 s at most)
        gate.wait(10)
        p, value, n = (d.arg(a.offset, f) for a, f in zip(params, "QIi"))
        d.array(p, np.uint32, n)[:] = value
        finished.set()
    finished = threading.Event()
    rocpy.stub.register_kernel("fill", emulate)
    buf = dev.context.alloc(256)
    case = sys.argv[2]
    s = {"null_copy": None, "per_thread": hip.Stream.per_thread(dev)}.get(case) or \\
        dev.create_stream()
    k.launch(1, 64, (buf, np.uint32(7), np.int32(64)), stream=s)
    ev = s.record() if case == "event" else None
    out = np.zeros(64, np.uint32)
    wait = {"stream": lambda: s.sync(), "event": lambda: ev.sync(),
            "device_sync": lambda: dev.sync(), "context": lambda: dev.context.sync(),
            "null_copy": lambda: buf.copy_to(out), "per_thread": lambda: s.sync(),
            "stream_exit": lambda: s.__exit__(None, None, None)}[case]
    sent = []
    def kick():
        time.sleep(0.3)
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=kick, daemon=True).start()
    result = {}
    try:
        wait()
        result["outcome"] = "returned"
    except KeyboardInterrupt:
        result["outcome"] = "interrupted"
        result["latency_s"] = time.monotonic() - sent[0]
    result["kernel_running"] = not finished.is_set()
    gate.set()
    if case not in ("stream_exit",):
        wait()                                    # the same wait, now completing
    if case == "null_copy":
        result["copied"] = int(out[0])
    if case != "stream_exit" and s is not None and s.kind == "owned":
        s.close()
    if ev is not None:
        ev.close()
    buf.close()
    del k
    deadline = time.monotonic() + 5
    while _wait.poll_abandoned() and time.monotonic() < deadline:
        time.sleep(0.01)
    result["abandoned"] = _wait.poll_abandoned()
    dev.sync()
    rocpy.debug.collect()
    result["live"] = rocpy.debug.live_objects()
    print(json.dumps(result))
"""

CASES = ["stream", "event", "device_sync", "context", "null_copy", "per_thread", "stream_exit"]


@pytest.mark.parametrize("case", CASES)
def test_sigint_interrupts_a_blocking_wait(case, py, kernel_paths):
    proc = py(INTERRUPT, args=(kernel_paths["fill"], case), timeout=60)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["outcome"] == "interrupted", result
    assert result["kernel_running"], result      # interrupted while the kernel still ran
    assert result["abandoned"] == 0, result
    assert result["live"] == {}, result
    if case == "null_copy":
        assert result["copied"] == 7


CLOSE_WHILE_HELPER_WAITS = """
    import json, os, signal, sys, threading, time
    import numpy as np, rocpy, rocpy.stub, rocpy.debug
    from rocpy import hip
    try:
        from rocpy.hip import _wait
    except ImportError:                               # before the wait layer: nothing to poll
        _wait = type("NoWait", (), {"poll_abandoned": staticmethod(lambda: 0)})
    dev = hip.Device(0)
    gate = threading.Event()
    rocpy.stub.register_kernel("fill", lambda d: gate.wait(10) and None)
    k = hip.Module.load(sys.argv[1], dev)["fill"]
    buf = dev.context.alloc(256)
    s = dev.create_stream()
    k.launch(1, 64, (buf, np.uint32(7), np.int32(64)), stream=s)
    threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    interrupted = False
    try:
        s.sync()
    except KeyboardInterrupt:
        interrupted = True
    pinned = _wait.poll_abandoned()
    s.close()                                    # the helper still waits on its handle
    closed = s.closed
    gate.set()
    deadline = time.monotonic() + 5
    while _wait.poll_abandoned() and time.monotonic() < deadline:
        time.sleep(0.01)
    buf.close()
    del k
    dev.sync()
    rocpy.debug.collect()
    print(json.dumps({"interrupted": interrupted, "pinned": pinned, "closed": closed,
                      "live": rocpy.debug.live_objects()}))
"""


def test_close_after_an_interrupted_wait_waits_for_the_helper(py, kernel_paths):
    """The stream an interrupted wait's helper still waits on is closed: it is closed
    for Python at once and destroyed only after the helper's call returned."""
    proc = py(CLOSE_WHILE_HELPER_WAITS, args=(kernel_paths["fill"],), timeout=60)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result == {"interrupted": True, "pinned": 1, "closed": True, "live": {}}
