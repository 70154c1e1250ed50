"""Runtime callbacks through the call queue and the dispatcher thread (rocpy/_dispatcher.py)."""
from __future__ import annotations

import gc
import importlib.util
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from rocpy import debug
from rocpy._dispatcher import CallbackErrors, Dispatcher, NativeCallQueue, PyCallQueue
from rocpy._handle import Handle
from rocpy.errors import CallbackError, CallbackWarning

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAST = os.path.join(ROOT, "rocpy", "_native", "fast")

# Threads made in C, with no Python thread state: they stand for runtime threads.
PUSHERS_C = r"""
#include <pthread.h>
#include "callqueue.h"

struct pusher { uint64_t token; int count; };

static void *push_all(void *arg)
{
    struct pusher *p = arg;
    for (int i = 0; i < p->count; i++)
        rocpy_callqueue_push(p->token, i, 0);
    return NULL;
}

int push_from_threads(int nthreads, int count, uint64_t first_token)
{
    pthread_t threads[64];
    struct pusher args[64];
    if (nthreads > 64)
        return -1;
    for (int t = 0; t < nthreads; t++) {
        args[t].token = first_token + t;
        args[t].count = count;
        pthread_create(&threads[t], NULL, push_all, &args[t]);
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(threads[t], NULL);
    return 0;
}
"""


@pytest.fixture(scope="module")
def native(tmp_path_factory):
    """The C call queue, compiled on its own with a helper that pushes from C threads."""
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    with open(os.path.join(FAST, "callqueue.cdef")) as f:
        ffi.cdef(f.read() + "int push_from_threads(int nthreads, int count, uint64_t first_token);")
    ffi.set_source("_rocpy_callqueue_test", PUSHERS_C,
                   sources=[os.path.join(FAST, "callqueue.c")], include_dirs=[FAST],
                   extra_compile_args=["-pthread", "-std=c99"], extra_link_args=["-pthread"])
    try:
        path = ffi.compile(tmpdir=str(tmp_path_factory.mktemp("callqueue")))
    except Exception as exc:  # a machine without a C compiler
        pytest.skip(f"cannot compile callqueue.c: {exc}")
    spec = importlib.util.spec_from_file_location("_rocpy_callqueue_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=["python", "native"])
def started(request):
    """A started dispatcher over each queue implementation; stopped afterwards."""
    if request.param == "native":
        mod = request.getfixturevalue("native")
        call_queue = NativeCallQueue(mod.ffi, mod.lib)
    else:
        call_queue = PyCallQueue()
    d = Dispatcher(call_queue)
    d.start()
    yield d
    assert d.stop(timeout=5)


def run_and_wait(d: Dispatcher, pushes, timeout: float = 5.0) -> None:
    """Push (token, a, b) triples, then wait until the dispatcher ran past them."""
    done = threading.Event()
    for item in pushes:
        assert d.queue.push(*item)
    assert d.queue.push(d.register(lambda a, b: done.set()), 0, 0)
    assert done.wait(timeout)


def test_python_queue_drains_before_reporting_shutdown():
    q = PyCallQueue(batch=2)
    for i in range(3):
        assert q.push(i, i * 10, -i)
    q.shutdown()
    assert not q.push(9, 0, 0) and q.dropped() == 1
    assert q.pop() == [(0, 0, 0), (1, 10, -1)]
    assert q.pop() == [(2, 20, -2)]
    assert q.pop() == []
    q.reopen()
    assert q.push(4, 0, 0) and q.pop() == [(4, 0, 0)]


def test_native_queue_drains_then_reports_shutdown_and_drops_later_pushes(native):
    q = NativeCallQueue(native.ffi, native.lib, batch=4)
    q.reopen()
    dropped = q.dropped()
    for i in range(600):  # past the initial ring, so it grows
        assert q.push(7, i, 2 * i)
    q.shutdown()
    assert not q.push(7, 0, 0) and q.dropped() == dropped + 1
    items = []
    while True:
        batch = q.pop()
        if not batch:
            break
        assert len(batch) <= 4
        items += batch
    assert items == [(7, i, 2 * i) for i in range(600)]
    q.reopen()


def test_native_pop_blocks_with_the_gil_released_and_wakes_on_shutdown(native):
    q = NativeCallQueue(native.ffi, native.lib)
    q.reopen()
    result = []
    popper = threading.Thread(target=lambda: result.append(q.pop()))
    popper.start()
    popper.join(0.2)
    assert popper.is_alive()  # blocked in C, and this thread still runs
    q.shutdown()
    popper.join(5)
    assert result == [[]]
    q.reopen()


def test_native_trampolines_push_token_and_arguments(native):
    ffi, lib = native.ffi, native.lib
    q = NativeCallQueue(ffi, lib)
    q.reopen()
    token = ffi.cast("void *", 42)
    lib.rocpy_callqueue_host_fn(token)
    lib.rocpy_callqueue_stream_cb(ffi.cast("void *", 0x1000), 3, token)
    assert lib.rocpy_callqueue_signal_handler(-5, token) is False
    lib.rocpy_callqueue_queue_error(0x1008, ffi.cast("void *", 0x2000), token)
    assert q.pop() == [(42, 0, 0), (42, 3, 0x1000), (42, -5, 0), (42, 0x1008, 0x2000)]


def test_callbacks_from_c_threads_all_arrive_in_order_on_the_dispatcher(native):
    d = Dispatcher(NativeCallQueue(native.ffi, native.lib))
    seen: dict[int, list[int]] = {}
    threads = set()

    def record(token):
        def cb(a, b):
            seen.setdefault(token, []).append(a)
            threads.add(threading.current_thread().name)
        return cb

    tokens = [d.register(record(t), once=False) for t in range(8)]
    assert tokens == list(range(tokens[0], tokens[0] + 8))
    d.start()
    dropped = native.lib.rocpy_callqueue_dropped()
    try:
        assert native.lib.push_from_threads(8, 5000, tokens[0]) == 0
        run_and_wait(d, [])
    finally:
        assert d.stop(5)
    assert native.lib.rocpy_callqueue_dropped() == dropped
    assert threads == {"rocpy-dispatcher"}
    assert seen == {t: list(range(5000)) for t in range(8)}


def test_callback_runs_once_with_its_arguments_on_the_dispatcher_thread(started):
    calls = []
    token = started.register(lambda a, b: calls.append((a, b, started.is_dispatcher_thread())))
    run_and_wait(started, [(token, 1, 2), (token, 3, 4)])
    assert calls == [(1, 2, True)]
    assert not started.is_dispatcher_thread()
    assert started.pending_tokens() == 0


def test_persistent_callback_stays_until_unregistered(started):
    calls = []
    token = started.register(lambda a, b: calls.append(a), once=False)
    run_and_wait(started, [(token, 1, 0), (token, 2, 0)])
    started.unregister(token)
    run_and_wait(started, [(token, 3, 0), (123456, 0, 0)])  # unknown tokens are ignored
    assert calls == [1, 2]


def test_callback_exception_is_warned_stored_and_raised_on_next_use(started):
    errors = CallbackErrors()
    after = []

    def bad(a, b):
        raise KeyError(f"boom {a}")

    t1 = started.register(bad, errors=errors)
    t2 = started.register(bad, errors=errors)
    t3 = started.register(lambda a, b: after.append(a))
    with pytest.warns(CallbackWarning) as record:
        run_and_wait(started, [(t1, 1, 0), (t2, 2, 0), (t3, 3, 0)])
    texts = [str(w.message) for w in record]
    assert len(texts) == 2 and "boom 1" in texts[0] and "boom 2" in texts[1]
    assert all("Traceback" in text for text in texts)
    assert after == [3]  # the dispatcher survived
    with pytest.raises(CallbackError, match="KeyError.*boom 1.*and 1 more") as info:
        errors.check()
    assert [str(e) for e in info.value.errors] == ["'boom 1'", "'boom 2'"]
    assert isinstance(info.value.__cause__, KeyError)
    errors.check()  # reported once only


def test_gc_inside_a_callback_releases_on_the_reaper_without_deadlock(started):
    destroyed = []

    class Res(Handle):
        pass

    before = debug.live_objects()
    r = Res(1, (lambda: destroyed.append(threading.current_thread().name),))
    r.me = r  # only the collector can free it
    holder = [r]
    del r

    def collect_here(a, b):
        holder.clear()
        gc.collect()

    run_and_wait(started, [(started.register(collect_here), 0, 0)])
    assert debug.collect()
    assert destroyed == ["rocpy-reaper"]
    assert debug.live_objects() == before


def test_stop_runs_queued_callbacks_first():
    d = Dispatcher(PyCallQueue())
    gate = threading.Event()
    ran = []
    t_slow = d.register(lambda a, b: (gate.wait(5), ran.append("slow")))
    t_next = d.register(lambda a, b: ran.append("next"))
    d.queue.push(t_slow, 0, 0)
    d.queue.push(t_next, 0, 0)
    d.start()
    threading.Timer(0.1, gate.set).start()
    assert d.stop(timeout=5)
    assert ran == ["slow", "next"]
    assert not d.queue.push(t_next, 0, 0)


EXIT_SCRIPT = textwrap.dedent("""
    import atexit, sys, threading, time
    log = open(sys.argv[1], "w", buffering=1)
    atexit.register(log.close)     # registered first: runs after rocpy's hook
    from rocpy._dispatcher import dispatcher
    from rocpy._handle import Handle

    d = dispatcher()
    started = threading.Event()

    def slow(a, b):
        started.set()
        time.sleep(0.3)            # still running when the interpreter exits
        log.write("slow\\n")

    def fast(a, b):
        log.write(f"fast {a}\\n")

    def make_garbage(a, b):
        h = Handle("h", (lambda: log.write(threading.current_thread().name + " released h\\n"),))

    def runtime_thread():          # keeps calling back during and after exit
        token = d.register(fast, once=False)
        while True:
            d.queue.push(token, -1, 0)
            time.sleep(0.05)

    d.queue.push(d.register(slow), 0, 0)
    started.wait(5)
    for i in range(3):
        d.queue.push(d.register(fast), i, 0)
    d.queue.push(d.register(make_garbage), 0, 0)
    d.register(fast)               # registered, never called
    keep = Handle("live", (lambda: log.write("released live\\n"),))
    threading.Thread(target=runtime_thread, daemon=True).start()
""")


def test_exit_with_pending_callbacks_runs_them_and_prints_nothing(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(EXIT_SCRIPT)
    log = tmp_path / "log.txt"
    proc = subprocess.run([sys.executable, "-X", "dev", str(script), str(log)],
                          check=False, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    lines = [line for line in log.read_text().splitlines() if line != "fast -1"]
    assert lines[:4] == ["slow", "fast 0", "fast 1", "fast 2"]
    assert sorted(lines[4:]) == ["released live", "rocpy-reaper released h"]
