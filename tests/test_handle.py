"""The ownership primitive (rocpy/_handle.py) against a fake native runtime."""
from __future__ import annotations

import copy
import gc
import os
import pickle
import subprocess
import sys
import textwrap
import threading
import time
import weakref

import pytest

from rocpy import _handle, _keepalive, _reaper, debug
from rocpy._handle import Handle
from rocpy.errors import ClosedError, ReleaseWarning

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class FakeError(Exception):
    pass


class FakeRuntime:
    """Native handles as integers; records every destroy with its thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 1
        self.live: set[int] = set()
        self.names: dict[int, str] = {}
        self.destroyed: list[tuple[str, str]] = []  # (name, thread name)
        self.misuse: list[str] = []
        self.fail: set[str] = set()

    def create(self, name: str) -> int:
        with self._lock:
            h = self._next
            self._next += 1
            self.live.add(h)
            self.names[h] = name
            return h

    def destroy(self, h: int) -> None:
        name = self.names.get(h, "?")
        with self._lock:
            if h not in self.live:
                self.misuse.append(f"destroy of dead handle {name}")
                raise FakeError(f"dead handle {name}")
            self.live.discard(h)
            self.destroyed.append((name, threading.current_thread().name))
        if name in self.fail:
            raise FakeError(f"cannot destroy {name}")

    def destroy_async(self, h: int, stream: FakeStream) -> None:
        self.destroy(h)
        self.destroyed[-1] = (self.names[h], f"async on {stream.name}")

    def order(self) -> list[str]:
        return [name for name, _ in self.destroyed]


class Res(Handle):
    __slots__ = ()

    def __init__(self, rt: FakeRuntime, name: str, *parents: object, owned: bool = True,
                 release_async: bool = False) -> None:
        h = rt.create(name)
        super().__init__(h, (rt.destroy, h) if owned else None, parents=parents,
                         release_async=(rt.destroy_async, h) if release_async else None)

    def use(self) -> int:
        return self._require_open()


class CyclicRes(Res):
    """Without __slots__: can sit in a reference cycle only the collector breaks."""


class FakeStream:
    """A stream whose enqueued work completes when the test says so."""

    def __init__(self, name: str = "s") -> None:
        self.name = name
        self.complete = False
        self.pending = _keepalive.PendingList()

    def _keep_alive(self, *objects: object) -> None:
        self.pending.keep_alive(lambda: self.complete, *objects)


def wait_for(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


@pytest.fixture
def rt():
    runtime = FakeRuntime()
    before = debug.live_objects()
    yield runtime
    assert debug.collect()
    assert runtime.misuse == []
    assert debug.live_objects() == before


def test_close_releases_once_and_twice_is_a_no_op(rt):
    r = Res(rt, "r")
    assert debug.live_objects().get("Res") == 1
    r.close()
    r.close()
    del r
    assert debug.collect()
    assert rt.destroyed == [("r", "MainThread")]
    assert "Res" not in debug.live_objects()


def test_use_after_close_raises_closed_error_naming_the_type(rt):
    r = Res(rt, "r")
    assert r.use() == r.handle
    r.close()
    assert r.closed
    with pytest.raises(ClosedError, match="^Res is closed$"):
        r.use()
    with pytest.raises(ValueError):
        _ = r.handle
    entered = []
    with pytest.raises(ClosedError, match="^Res is closed$"):
        with r:                      # __enter__ refuses: the body never runs
            entered.append(r)
    assert entered == []
    assert rt.order() == ["r"]       # and nothing was destroyed a second time


def test_context_manager_closes(rt):
    with Res(rt, "r") as r:
        assert not r.closed
    assert r.closed
    assert rt.order() == ["r"]


def test_collected_object_is_released_on_the_reaper_thread(rt):
    Res(rt, "r")
    assert debug.collect()
    assert rt.destroyed == [("r", "rocpy-reaper")]


def test_last_reference_dropped_on_another_thread_releases_on_the_reaper(rt):
    box = [Res(rt, "r")]
    t = threading.Thread(target=box.clear, name="dropper")
    t.start()
    t.join()
    assert debug.collect()
    assert rt.destroyed == [("r", "rocpy-reaper")]


def test_object_in_a_cycle_is_released_on_the_reaper_after_gc(rt):
    r = CyclicRes(rt, "cyc")
    r.me = r
    del r
    assert rt.destroyed == []
    gc.collect()
    assert debug.collect()
    assert rt.destroyed == [("cyc", "rocpy-reaper")]


def test_children_keep_their_parent_and_release_first(rt):
    ctx = Res(rt, "ctx")
    a = Res(rt, "a", ctx)
    b = Res(rt, "b", a)
    del ctx, a
    assert debug.collect()
    assert rt.destroyed == []
    del b
    assert debug.collect()
    assert rt.order() == ["b", "a", "ctx"]


def test_parent_closed_with_live_children_is_released_after_the_last(rt):
    ctx = Res(rt, "ctx")
    b1, b2 = Res(rt, "b1", ctx), Res(rt, "b2", ctx)
    ctx.close()
    assert ctx.closed and rt.destroyed == []
    assert debug.live_objects()["Res"] == 3  # still live natively
    b1.close()
    assert rt.order() == ["b1"]
    del b2
    assert debug.collect()
    assert rt.order() == ["b1", "b2", "ctx"]


def test_closed_parent_refuses_new_children_and_frees_the_new_handle(rt):
    ctx = Res(rt, "ctx")
    keep = Res(rt, "keep", ctx)
    ctx.close()
    with pytest.raises(ClosedError, match="Res is closed"):
        Res(rt, "late", ctx)
    assert rt.order() == ["late"]
    keep.close()
    assert rt.order() == ["late", "keep", "ctx"]


def test_closing_a_child_drops_its_parent_reference(rt):
    ctx = Res(rt, "ctx")
    ref = weakref.ref(ctx)
    child = Res(rt, "child", ctx)
    assert child._parents == (ctx,)
    del ctx
    child.close()
    assert child._parents == ()
    assert debug.collect()
    assert ref() is None
    assert rt.order() == ["child", "ctx"]


def test_borrowed_handles_are_never_destroyed(rt):
    ctx = Res(rt, "ctx")
    b = Res(rt, "borrowed", ctx, owned=False)
    assert not b.owned and ctx.owned
    assert debug.live_objects()["Res"] == 1
    Res(rt, "dropped", ctx, owned=False)
    b.close()
    assert b.closed
    ctx.close()
    assert debug.collect()
    assert rt.order() == ["ctx"]


def test_invalidate_descendants_marks_them_dead_without_release(rt):
    ctx = Res(rt, "ctx")
    buf = Res(rt, "buf", ctx)
    view = Res(rt, "view", buf)
    closed_early = Res(rt, "early", ctx)
    closed_early.close()
    ctx.invalidate_descendants("device reset")
    assert buf.closed and view.closed
    with pytest.raises(ClosedError, match="Res is no longer valid: device reset"):
        view.use()
    assert ctx.use() == ctx.handle
    buf.close()
    del view
    assert debug.live_objects()["Res"] == 1
    ctx.close()
    assert rt.order() == ["early", "ctx"]


class Survivor(Res):
    """What the runtime keeps across a reset (as hipamd keeps modules and events)."""

    __slots__ = ()
    _survives_reset = True


def test_invalidate_descendants_releases_survivors_only_when_asked(rt):
    ctx = Res(rt, "ctx")
    buf = Res(rt, "buf", ctx)
    kept = Survivor(rt, "kept", ctx)
    kept_child = Survivor(rt, "kept_child", kept)
    ctx.invalidate_descendants("device reset", release_survivors=True)
    assert buf.closed and kept.closed and kept_child.closed
    assert rt.order() == ["kept_child", "kept"]     # released, children first; buf abandoned
    other = Survivor(rt, "other", ctx)
    ctx.invalidate_descendants("device reset")      # not asked: abandoned like the rest
    assert other.closed and rt.order() == ["kept_child", "kept"]
    ctx.close()
    del buf, kept, kept_child, other
    assert debug.collect()
    assert rt.order() == ["kept_child", "kept", "ctx"]


def test_invalidate_includes_the_object_and_a_closed_waiting_parent(rt):
    top = Res(rt, "top")
    mid = Res(rt, "mid", top)
    leaf = Res(rt, "leaf", mid)
    mid.close()  # waits for leaf
    top.invalidate("runtime shut down")
    assert top.closed and leaf.closed
    with pytest.raises(ClosedError, match="runtime shut down"):
        top.use()
    leaf.close()
    assert debug.collect()
    assert rt.destroyed == []
    assert "Res" not in debug.live_objects()


def test_release_failure_on_close_raises_and_the_object_stays_closed(rt):
    rt.fail.add("bad")
    r = Res(rt, "bad")
    with pytest.raises(FakeError, match="cannot destroy bad"):
        r.close()
    assert r.closed
    r.close()
    assert rt.order() == ["bad"]


def test_release_failure_in_a_finalizer_becomes_a_warning(rt):
    rt.fail.add("bad")
    Res(rt, "bad")
    with pytest.warns(ReleaseWarning, match="releasing Res failed: cannot destroy bad"):
        assert debug.collect()
    assert rt.destroyed == [("bad", "rocpy-reaper")]


def test_copy_and_pickle_are_refused(rt):
    r = Res(rt, "r")
    for attempt in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError, match="cannot be copied"):
            attempt(r)
    r.close()
    assert rt.order() == ["r"]


def test_calls_from_a_finalizer_inside_rocpys_lock_are_deferred_to_the_reaper(rt):
    ctx = Res(rt, "ctx")
    r = Res(rt, "r", ctx)
    with _handle._lock:  # as if a collection ran a user's __del__ right here
        r.close()
        assert r.closed and rt.destroyed == []
        ctx.invalidate_descendants("reset")
        with pytest.raises(RuntimeError, match="finalizer"):
            Res(rt, "new")
    assert debug.collect()
    assert rt.destroyed == [("r", "rocpy-reaper")]
    ctx.close()


def test_pending_list_calls_from_inside_its_lock_are_deferred_to_the_reaper():
    pending = _keepalive.PendingList()
    with pending._lock:
        pending.keep_alive(lambda: False, object())
        assert len(pending) == 0
    assert _reaper.flush(5) and len(pending) == 1
    with pending._lock:
        pending.clear()
        assert len(pending) == 1
    assert _reaper.flush(5) and len(pending) == 0


def test_none_is_not_a_native_handle():
    with pytest.raises(ValueError):
        Handle(None)


def test_close_with_stream_uses_the_async_recipe(rt):
    s = FakeStream("s1")
    r = Res(rt, "r", release_async=True)
    r.close(stream=s)
    assert rt.destroyed == [("r", "async on s1")]
    assert len(s.pending) == 0


def test_close_with_stream_defers_until_the_stream_work_completes(rt):
    s = FakeStream()
    ctx = Res(rt, "ctx")
    r = Res(rt, "r", ctx)
    del ctx
    r.close(stream=s)
    assert r.closed
    assert debug.collect()
    assert rt.destroyed == [] and debug.live_objects()["Res"] == 2
    s.complete = True
    assert wait_for(lambda: rt.order() == ["r", "ctx"])
    assert rt.destroyed[0] == ("r", "rocpy-reaper")


def test_keep_alive_until_holds_objects_until_done(rt):
    done = threading.Event()
    r = Res(rt, "r")
    ref = weakref.ref(r)
    _keepalive.keep_alive_until(done.is_set, r)
    del r
    assert debug.collect()
    assert ref() is not None and rt.destroyed == []
    done.set()
    assert wait_for(lambda: rt.order() == ["r"])
    assert ref() is None


def test_ordered_pending_list_stops_at_the_first_incomplete_entry():
    checks: list[str] = []
    state = {"a": False, "b": True}

    def check(name: str):
        def done() -> bool:
            checks.append(name)
            return state[name]
        return done

    pending = _keepalive.PendingList()
    pending.keep_alive(check("a"), object())
    pending.keep_alive(check("b"), object())
    checks.clear()
    pending.poll()
    assert checks == ["a"] and len(pending) == 2
    state["a"] = True
    pending.poll()
    assert len(pending) == 0
    pending.keep_alive(check("a"), object())
    assert len(pending) == 0  # polled on add


def test_eight_threads_creating_and_closing_concurrently(rt):
    ctx = Res(rt, "ctx")
    start = threading.Barrier(8)
    per_thread = 300

    def work(i: int) -> None:
        start.wait()
        kept = []
        for n in range(per_thread):
            r = Res(rt, f"t{i}-{n}", ctx)
            if n % 3 == 0:
                r.close()
            elif n % 3 == 1:
                kept.append(r)
        for r in kept[::2]:
            r.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert debug.collect()
    assert len(rt.destroyed) == 8 * per_thread
    assert len(set(rt.order())) == 8 * per_thread
    assert debug.live_objects()["Res"] == 1
    ctx.close()
    assert rt.order()[-1] == "ctx"


EXIT_SCRIPT = textwrap.dedent("""
    import atexit, sys, threading
    log = open(sys.argv[1], "w", buffering=1)

    def made_after_the_exit_hook():
        global late
        late = Res("late")  # rocpy's hook already ran: leaked, never called
        log.close()
    atexit.register(made_after_the_exit_hook)

    from rocpy import _keepalive
    from rocpy._handle import Handle

    def destroy(name):
        log.write(name + " " + threading.current_thread().name + "\\n")

    class Res(Handle):
        def __init__(self, name, *parents, owned=True):
            super().__init__(name, (destroy, name) if owned else None, parents=parents)

    class Stream:
        polls = 0
        def done(self):
            self.polls += 1
            return self.polls > 3
        def _keep_alive(self, *objects):
            _keepalive.keep_alive_until(self.done, *objects)

    ctx = Res("ctx")
    a = Res("a", ctx)
    b = Res("b", a)
    c = Res("c", ctx)
    c_child = Res("c_child", c)
    c.close()                      # waits for c_child
    cyc = Res("cyc", ctx)
    cyc.me = cyc
    del cyc
    borrowed = Res("borrowed", ctx, owned=False)
    Res("d", ctx).close(stream=Stream())
""")


def run_script(script: str, tmp_path, *args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    path = tmp_path / "script.py"
    path.write_text(script)
    log = tmp_path / "log.txt"
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-X", "dev", str(path), str(log), *args],
                          check=False, capture_output=True, text=True, env=env, timeout=60)
    return proc, log.read_text().split("\n")[:-1] if log.exists() else []


def test_exit_releases_live_objects_children_first_and_prints_nothing(tmp_path):
    proc, lines = run_script(EXIT_SCRIPT, tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    names = [line.split()[0] for line in lines]
    assert sorted(names) == sorted(["ctx", "a", "b", "c", "c_child", "cyc", "d"])
    for child, parent in [("b", "a"), ("a", "ctx"), ("c_child", "c"), ("c", "ctx"),
                          ("cyc", "ctx"), ("d", "ctx")]:
        assert names.index(child) < names.index(parent)
    assert "d rocpy-reaper" in lines and "ctx MainThread" in lines


def test_release_failure_at_exit_is_a_warning_not_a_crash(tmp_path):
    script = textwrap.dedent("""
        import sys
        from rocpy._handle import Handle
        def destroy(name):
            raise RuntimeError("device lost")
        keep = Handle(1, (destroy, "x"))
    """)
    proc, _ = run_script(script, tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    assert "ReleaseWarning: releasing Handle failed: device lost" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_forked_child_never_releases_the_parents_handles(tmp_path):
    script = textwrap.dedent("""
        import atexit, os, sys, warnings
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12: fork with threads
        log = open(sys.argv[1], "a", buffering=1)
        atexit.register(log.close)
        from rocpy import debug
        from rocpy._handle import Handle
        def destroy(name):
            log.write(f"{name} {os.getpid()}\\n")
        kept = Handle(1, (destroy, "kept"))
        dropped_in_child = Handle(2, (destroy, "dropped"))
        pid = os.fork()
        if pid == 0:
            assert debug.live_objects() == {}
            del dropped_in_child
            child = Handle(3, (destroy, "child"))
            sys.exit(0)  # runs the exit hook in the child
        os.waitpid(pid, 0)
        log.write(f"parent {os.getpid()}\\n")
    """)
    proc, lines = run_script(script, tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    by_name = dict(line.split() for line in lines)
    parent = by_name.pop("parent")
    assert by_name.pop("child") != parent
    assert by_name == {"kept": parent, "dropped": parent}


REENTRY_SCRIPT = textwrap.dedent("""
    import collections, gc, sys
    from rocpy import _handle, _keepalive, _reaper, debug
    from rocpy._handle import Handle

    released = collections.Counter()
    inside = 0

    class Stream:
        pending = _keepalive.PendingList()
        def _keep_alive(self, *objects):
            self.pending.keep_alive(lambda: True, *objects)

    stream = Stream()

    class Owner:
        # user code freeing eagerly in __del__, in a cycle only the collector frees
        def __init__(self, res):
            self.res, self.me = res, self
        def __del__(self):
            global inside
            inside += _handle._held_here() or stream.pending._held_here()
            self.res.close(stream=stream)

    ops = ("create", "invalidate", "close", "live", "keep_alive", "sweep")
    for op in ops:
        for k in range(30):
            root = Handle(f"root{op}{k}", (released.update, [f"root{op}{k}"]))
            victim = Handle(f"v{op}{k}", (released.update, [f"v{op}{k}"]), parents=(root,))
            other = Handle(f"o{op}{k}", (released.update, [f"o{op}{k}"]), parents=(root,))
            stream.pending.keep_alive(lambda: False, object())
            gc.disable()
            Owner(victim)
            del victim
            gc.set_threshold(gc.get_count()[0] + k)  # collect at the k-th allocation from here
            gc.enable()
            if op == "create":
                Handle(f"new{op}{k}", (released.update, [f"new{op}{k}"]), parents=(root,)).close()
            elif op == "invalidate":
                root.invalidate_descendants("reset")
            elif op == "close":
                other.close()
            elif op == "live":
                debug.live_objects()
            elif op == "keep_alive":
                stream.pending.keep_alive(lambda: True, object())
            else:
                _reaper.sweep()
            gc.set_threshold(700)
            stream.pending.clear()
            del other, root
            assert debug.collect()
    assert debug.live_objects() == {}, debug.live_objects()
    print(inside, max(released.values()), len(released), len(ops))
""")


def test_a_finalizer_interrupting_rocpy_on_the_same_thread_defers_instead_of_deadlocking(tmp_path):
    path = tmp_path / "reentry.py"
    path.write_text(REENTRY_SCRIPT)
    proc = subprocess.run([sys.executable, str(path)], check=False, capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, PYTHONPATH=ROOT))
    assert proc.returncode == 0, proc.stderr
    inside, most, distinct, ops = map(int, proc.stdout.split())
    assert inside > 0  # some finalizers did run inside rocpy's critical sections
    assert most == 1  # nothing released twice
    assert distinct >= ops * 30 * 2  # roots and "other" children at least, every round
