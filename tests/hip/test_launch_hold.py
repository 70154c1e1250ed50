"""What a kernel launch holds until it completes (`Kernel._hold_launch` and its compiled
twin ``lane_hold_once`` in rocpy/_native/hot/hot_lane.c): the kernel, with the arguments
where there are any, not again where the stream's unfenced batch ends with the same
objects, unless a query of the stream is in progress.  Every test runs on both paths and
expects the same."""
from __future__ import annotations

import contextlib
import gc
import weakref

import numpy as np
import pytest

from rocpy import _hotpath
from rocpy.hip import _lane
from rocpy.hip import stream as stream_module
from rocpy.hip._lane import PyLane

PATHS = ["compiled", "python"]


@pytest.fixture
def side(request, dev, load):
    """``side(name)`` -> (kernel, stream) on the path the test is parametrized with."""
    made = []

    def make(name: str):
        compiled = request.param == "compiled"
        if compiled and _hotpath.module() is None:
            pytest.skip("rocpy._hot is not built or ROCPY_HOT=0")
        with contextlib.nullcontext() if compiled else _hotpath.disabled():
            k, s = load(name), dev.create_stream()
        assert (k._launcher is not None) is compiled
        assert (type(s._lane) is not PyLane) is compiled
        made.append(s)
        return k, s
    yield make
    for s in made:
        s.sync()
        s.close()


@pytest.mark.parametrize("side", PATHS, indirect=True)
def test_one_kernel_launched_again_and_again_is_held_once_and_marks_every_launch(side, dev):
    k, s = side("empty")
    marks = _lane.marks(dev._index)
    n = stream_module.FENCE_EVERY * 2 + 5
    for _ in range(n):
        k.launch(1, 1, (), s)
    assert s._lane.box[0] == [k]
    assert len(s._pending) == 0                 # nothing to fence: one item held
    assert _lane.marks(dev._index) == marks + n  # a null-stream copy still waits for them
    s.sync()
    assert s._lane.box[0] == []


@pytest.mark.parametrize("side", PATHS, indirect=True)
def test_the_same_argument_objects_are_held_once_other_ones_each_time(side, dev):
    k, s = side("vadd")
    bufs = [dev.context.alloc(64) for _ in range(3)]
    t = (bufs[0], bufs[1], bufs[2], np.int32(16))
    same = (bufs[0], bufs[1], bufs[2], np.int32(16))      # equal, another tuple
    as_list = list(t)
    held = s._lane.box[0]
    for args in (t, t, t, same, as_list, as_list, t):
        k.launch(1, 16, args, s)
    assert [item[1] for item in held] == [t, same, as_list, t]
    assert all(type(item) is tuple and item[0] is k for item in held)
    refs = [weakref.ref(b) for b in bufs]
    del t, same, as_list, bufs, args
    gc.collect()
    assert all(r() is not None for r in refs)    # the one held item keeps them alive
    s.sync()
    for r in refs:
        r().close()


@pytest.mark.parametrize("side", PATHS, indirect=True)
def test_a_query_in_progress_makes_a_launch_hold_again(side):
    k, s = side("empty")
    k.launch(1, 1, (), s)
    s._lane.querying += 1     # as Stream.query counts itself while the runtime answers
    try:
        k.launch(1, 1, (), s)
        k.launch(1, 1, (), s)
    finally:
        s._lane.querying -= 1
    assert s._lane.box[0] == [k, k, k]
    k.launch(1, 1, (), s)
    assert s._lane.box[0] == [k, k, k]


@pytest.mark.parametrize("side", PATHS, indirect=True)
def test_a_query_counts_itself_while_it_runs(side, monkeypatch):
    """A launch on another thread during a query must hold what it uses: the query drops
    what was held when it began if it finds the stream complete."""
    k, s = side("empty")
    s.query()                 # binds stream._stream_query (rocpy/hip/_calls.py)
    k.launch(1, 1, (), s)
    seen = []
    if type(s._lane) is PyLane:
        real = stream_module._stream_query

        def query(addr):
            st = real(addr)
            seen.append(s._lane.querying)
            if st == 0 and len(s._lane.box[0]) == 1:
                k.launch(1, 1, (), s)        # what another thread may do meanwhile
            return st
        monkeypatch.setattr(stream_module, "_stream_query", query)
        while not s.query():
            pass
        assert set(seen) == {1}
        assert s._lane.box[0] == [k]         # held by the launch made during the query
    else:
        while not s.query():                 # the compiled query: back to 0 after it
            pass
        assert s._lane.box[0] == []
    assert s._lane.querying == 0
