"""Differential tests: the compiled hot path (`rocpy._hot`) against the pure-Python path.

The same kernel file is loaded twice, once per path (`rocpy._hotpath.disabled`
makes the second module's kernels and its stream pure Python), and every case
runs through both: valid launches must hand the runtime byte-identical kernel
arguments (the stub's emulation records the whole kernarg segment, hidden
arguments included) with the same geometry; invalid ones must raise the same
exception (type, message, status).  The error cases are those of
tests/reliability/test_misuse_kernels.py (argument counts, every bad value per
parameter kind, every geometry case) plus the copy and stream misuse below.
The autouse ``no_leaks`` fixture checks ``live_objects()`` back to ``{}``.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import rocpy
import rocpy.stub
from rocpy import _hotpath, hip
from rocpy.hip._lane import PyLane

pytestmark = pytest.mark.skipif(not _hotpath.available(), reason="rocpy._hot is not built")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "reliability"))
import test_misuse_kernels as misuse  # noqa: E402  (its case tables)


class Side:
    """One path: a module of ``file``, its kernel ``name``, a stream, buffers."""

    def __init__(self, path: str, name: str, dev: hip.Device, compiled: bool,
                 bufs: list | None = None, types: dict | None = None) -> None:
        self.mod = hip.Module.load(path, dev, param_types=types)
        self.k = self.mod[name]
        self.s = dev.create_stream()
        self.owner = bufs is None   # the fallback side uses the same buffers (same bytes)
        self.bufs = bufs if bufs is not None else [dev.context.alloc(misuse.N) for _ in range(3)]
        assert (self.k._launcher is not None) is compiled
        assert (type(self.s._lane) is not PyLane) is compiled

    def close(self) -> None:
        self.s.sync()
        self.s.close()
        if self.owner:
            for b in self.bufs:
                b.close()
        self.mod.close()
        self.k = self.mod = self.s = None   # the module's release waits for its kernels
        self.bufs = []


@pytest.fixture(scope="module")
def cov5_file(kernel_cache, kernel_file):
    """``cov5_file("args")``: a test kernel as code object v5 (hidden arguments: block
    counts, group sizes, remainders, grid dims after the explicit ones)."""
    from kernels.compile import find_hipcc
    arch = hip.Device(0).arch
    root = os.path.join(os.path.dirname(__file__), "..", "kernels")

    def build(name: str) -> str:
        out = os.path.join(kernel_cache, f"{name}-{arch}-v5.hsaco")
        if not os.path.exists(out):
            subprocess.run([find_hipcc(), "--genco", f"--offload-arch={arch}",
                            "-mcode-object-version=5", os.path.join(root, f"{name}.hip"),
                            "-o", out], check=True, capture_output=True,
                           env=dict(os.environ, HIP_PLATFORM="amd"))
        return out
    return build


@pytest.fixture
def sides(kernel_file, cov5_file, dev):
    """``sides(file, name)`` -> (compiled, fallback); ``file`` "args-v5": code object v5."""
    made = []

    def make(file: str, name: str, typed: bool = True) -> tuple[Side, Side]:
        """``typed``: the parameter types declared from the kernel's source (as a
        hipRTC program's are), else none (extern "C" from a code object)."""
        path = cov5_file(file[:-3]) if file.endswith("-v5") else kernel_file(file)
        types = _declared(file.replace("-v5", "")) if typed else None
        hot = Side(path, name, dev, True, types=types)
        with _hotpath.disabled():
            slow = Side(path, name, dev, False, hot.bufs, types=types)
        made.extend((slow, hot))
        return hot, slow
    yield make
    for side in made:
        side.close()
    made.clear()


def _declared(file: str) -> dict:
    from rocpy.codeobject import paramtypes
    root = os.path.join(os.path.dirname(__file__), "..", "kernels")
    with open(os.path.join(root, f"{file}.hip")) as f:
        return paramtypes.parse_declarations(f.read())


@pytest.fixture
def recorder():
    """``recorder(name)`` -> list of (kernarg bytes, grid, block) of each dispatch."""
    names = []

    def record(name: str) -> list:
        seen: list = []
        rocpy.stub.register_kernel(name, lambda d: seen.append((bytes(d.kernarg), d.grid,
                                                                 d.block)))
        names.append(name)
        return seen
    if not rocpy.backend().is_stub:
        pytest.skip("records kernel arguments through the stub's emulation hook")
    yield record
    for name in names:
        rocpy.stub.unregister_kernel(name)


def outcome(fn):
    """What a call did: ('ok', None) or the exception's (type, message, status)."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the exception is the result compared
        return type(exc), str(exc), getattr(exc, "status", None)
    return "ok", None


def both(hot: Side, slow: Side, call) -> None:
    """``call(side)`` on each path; the outcomes must be equal (and not a crash)."""
    a, b = outcome(lambda: call(hot)), outcome(lambda: call(slow))
    assert a == b


# ---- byte-identical arguments --------------------------------------------------------


def _scalar_cases(buf):
    big = 2**63 - 1
    return [
        (1, 2, 3, 4, 1.5, 2.5, 7, buf),
        (-1, -2, -3, -4, -1.5, -2.5, 0, buf.ptr),
        (np.int8(-1), np.int16(-2), np.int32(-3), np.int64(-4), np.float32(1.25),
         np.float64(2.5), np.uint8(255), buf),
        (np.uint8(200), np.uint16(60000), np.uint32(2**32 - 1), np.uint64(2**64 - 1),
         np.int32(5), np.int64(6), np.int8(-128), None),
        (True, False, True, False, True, False, True, buf),
        (-128, 32767, -2**31, -2**63, 3.4e38, -1e308, 255, 0),
        (255, 65535, 2**32 - 1, 2**64 - 1, 1e-45, 5e-324, 0, 2**64 - 1),
        (0, 0, 0, big, float("inf"), float("nan"), 1, buf),    # the float rules are Python's
        (0, 0, 0, 0, 0.1, 0.1, 0, buf[8:16]),                  # a view: its own address
    ]


def _untyped_cases(buf):
    return [
        (np.int8(-1), np.int16(-2), np.int32(-3), np.int64(-4), np.float32(1.25),
         np.float64(2.5), np.uint8(255), buf),
        (np.uint8(200), np.uint16(60000), np.uint32(2**32 - 1), np.uint64(2**64 - 1),
         np.int32(5), np.int64(6), 7, None),
        (1, np.int16(1), np.float32(1), np.float64(1), np.int32(1), np.uint64(1), 1, 0),
        (1, 2, 3, 4, 1.5, 2.5, 7, buf),            # refused: bare numbers, unknown types
        (b"\x01", b"\x02\x00", bytearray(4), memoryview(bytes(8)), np.float32(0),
         np.float64(0), True, buf.ptr),
    ]


@pytest.mark.parametrize("typed", [True, False], ids=["typed", "untyped"])
def test_scalars_pack_byte_identically(sides, recorder, typed):
    """Each case on both paths: the same bytes, or the same exception (out-of-range and
    wrong-width values are errors of the typed plan, bare numbers of the untyped)."""
    hot, slow = sides("args", "scalars", typed)
    seen = recorder("scalars")
    ok = 0
    for case in (_scalar_cases if typed else _untyped_cases)(hot.bufs[0]):
        before = len(seen)
        results = []
        for side in (hot, slow):
            results.append(outcome(lambda side=side: side.k.launch(1, 1, case, side.s)))
            side.s.sync()
        assert results[0] == results[1], case
        if results[0][0] == "ok":
            ok += 1
            (a, ga, ba), (b, gb, bb) = seen[-2], seen[-1]
            assert a == b and ga == gb and ba == bb, case
        else:
            assert len(seen) == before, case
    assert ok >= 4


def test_struct_by_value_and_hidden_arguments_pack_byte_identically(sides, recorder):
    hot, slow = sides("args", "by_struct")
    seen = recorder("by_struct")
    size = next(p.size for p in hot.k.params if p.value_kind == "by_value")
    for grid, block in ((1, 1), ((3, 2), (4, 1, 2)), ([2, 2, 2], [2, 2]), (np.int64(5), 8)):
        for side in (hot, slow):
            payload = bytes(range(size))
            side.k.launch(grid, block, (payload, hot.bufs[0], bytearray(payload)), side.s)
            side.s.sync()
        (a, ga, ba), (b, gb, bb) = seen[-2], seen[-1]
        assert a == b and ga == gb and ba == bb, (grid, block)
    assert len(seen) == 8


def test_hidden_arguments_follow_the_geometry(sides, recorder):
    """Code object v5: the cached hidden arguments must follow each new geometry, and
    equal the Python packer's for each (ints, tuples, lists, numpy values, LDS sizes)."""
    hot, slow = sides("scale-v5", "scale")
    seen = recorder("scale")
    assert hot.k.layout._hidden_kinds, "hipcc gave no hidden arguments"
    end = hot.k.layout._explicit_end
    for grid, block, shm in ((1, 64, 0), (2, 32, 0), ((2, 3), (8, 2), 16), [2, 32, 0],
                             (1, 64, 0), ([3, 1], [4, 2, 2], 8), (np.int32(2), 32, np.int64(4)),
                             (5, (7,), 0), (5, 7, 0)):
        for side in (hot, slow):
            side.k.launch(grid, block, (side.bufs[0], 1.5, np.int32(4)), side.s, shared_mem=shm)
            side.s.sync()
        assert seen[-2][0][end:] == seen[-1][0][end:] and seen[-2][1:] == seen[-1][1:], \
            (grid, block, shm)
    assert len({s[0][end:] for s in seen}) >= 5   # the hidden values changed with the geometry


# ---- the geometry cache (issue 21's correctness items) -------------------------------


def test_a_mutated_grid_list_is_revalidated_and_used(sides, recorder):
    hot, slow = sides("scale-v5", "scale")
    seen = recorder("scale")
    for side in (hot, slow):
        grid, args = [1], (side.bufs[0], 1.5, np.int32(1))
        side.k.launch(grid, 4, args, side.s)
        grid[0] = 0
        with pytest.raises(rocpy.InvalidValueError, match="at least 1") as info:
            side.k.launch(grid, 4, args, side.s)
        assert info.value.name == "hipErrorInvalidConfiguration"
        grid[0] = 3
        side.k.launch(grid, 4, args, side.s)
        side.s.sync()
    assert [g for _, g, _ in seen] == [(4, 1, 1), (12, 1, 1)] * 2
    assert seen[0][0] == seen[2][0] and seen[1][0] == seen[3][0] and seen[0][0] != seen[1][0]


@pytest.mark.parametrize("grid,block,shm", [
    (np.int64(2), np.int32(4), 0), (np.array([2, 1]), (4, 1), 0), ((np.uint16(2),), [np.int8(4)], 0),
    (2, 4, np.int64(0)), (np.array([2]), np.array([4, 1, 1]), np.uint32(8)),
], ids=["np-scalars", "np-array-grid", "np-in-sequences", "np-shared-mem", "np-arrays"])
def test_numpy_integers_are_accepted_as_geometry(grid, block, shm, sides, recorder):
    hot, slow = sides("scale-v5", "scale")
    seen = recorder("scale")
    for side in (hot, slow):
        args = (side.bufs[0], np.float32(1.5), 1)
        side.k.launch(grid, block, args, side.s, shared_mem=shm)
        side.s.sync()
    assert seen[0] == seen[1] and seen[0][1][0] == 8


@pytest.mark.parametrize("grid,match", [
    (np.array([[1, 1]]), "grid is an int or 1 to 3 ints, not ndarray"),
    (np.array([1.5]), "grid dimensions are ints, not float64"),
    (np.array([True]), "grid dimensions are ints, not bool"),
], ids=["2-D", "float-array", "bool-array"])
def test_arrays_that_are_not_dims_are_a_clear_type_error(grid, match, sides):
    hot, slow = sides("scale-v5", "scale")
    for side in (hot, slow):
        args = (side.bufs[0], np.float32(1.5), 1)
        with pytest.raises(TypeError, match=match):
            side.k.launch(grid, 4, args, side.s)


def test_args_from_a_generator_are_accepted_and_a_non_iterable_refused(sides, recorder):
    hot, slow = sides("scale-v5", "scale")
    seen = recorder("scale")
    for side in (hot, slow):
        values = (side.bufs[0], np.float32(1.5), np.int32(1))
        side.k.launch(1, 4, (v for v in values), side.s)
        side.s.sync()
        with pytest.raises(TypeError, match="args must be a sequence of the kernel's arguments, "
                                            "not int"):
            side.k.launch(1, 4, 5, side.s)
    assert seen[0] == seen[1]


# ---- identical exceptions: the misuse suite's cases ----------------------------------


@pytest.mark.parametrize("name,count", misuse.COUNT_CASES,
                         ids=[f"{n}-{c}args" for n, c in misuse.COUNT_CASES])
def test_wrong_argument_count_raises_identically(name, count, sides):
    hot, slow = sides(name, name)

    def call(side):
        filler = (side.bufs[0], side.bufs[1], side.bufs[2], np.int32(1), np.int32(1))
        side.k.launch(1, 64, filler[:count], side.s)
    both(hot, slow, call)


@pytest.mark.parametrize("name,index,label,make,expected", misuse.TYPE_CASES,
                         ids=[f"{n}-arg{i}-{label}" for n, i, label, _, _ in misuse.TYPE_CASES])
def test_wrong_argument_raises_identically(name, index, label, make, expected, sides):
    hot, slow = sides(name, name)
    value = make()

    def call(side):
        args = list(misuse.good_args(name, side.bufs))
        args[index] = value
        side.k.launch(1, 64, tuple(args), side.s)
    a, b = outcome(lambda: call(hot)), outcome(lambda: call(slow))
    assert a[0] is expected or issubclass(a[0], expected)
    if expected is rocpy.ClosedError:   # the message names the object, which differs
        assert a[0] is b[0] and a[2] == b[2]
    else:
        assert a == b


@pytest.mark.parametrize("label,grid,block,shared,expected", misuse.GEOMETRY,
                         ids=[c[0] for c in misuse.GEOMETRY])
def test_bad_geometry_raises_identically(label, grid, block, shared, expected, sides):
    hot, slow = sides("vadd", "vadd")

    def call(side):
        side.k.launch(grid, block, misuse.good_args("vadd", side.bufs), side.s, shared_mem=shared)
    a = outcome(lambda: call(hot))
    assert a[0] != "ok"
    assert a == outcome(lambda: call(slow))


def test_launch_on_a_closed_stream_or_with_callback_errors_raises_identically(sides):
    hot, slow = sides("vadd", "vadd")
    for side in (hot, slow):   # what a failed host callback leaves for the next use
        side.s._errors.add(ZeroDivisionError("from a callback"))
    both(hot, slow, lambda side: side.k.launch(1, 64, misuse.good_args("vadd", side.bufs),
                                               side.s))
    closed = []
    for side in (hot, slow):
        s = side.s.device.create_stream()
        s.close()
        closed.append(s)
    a = outcome(lambda: hot.k.launch(1, 64, misuse.good_args("vadd", hot.bufs), closed[0]))
    b = outcome(lambda: slow.k.launch(1, 64, misuse.good_args("vadd", slow.bufs), closed[1]))
    assert a[0] is b[0] is rocpy.ClosedError


# ---- copies, records, queries ----------------------------------------------------------


def test_copies_give_the_same_bytes_and_errors(sides):
    hot, slow = sides("vadd", "vadd")
    host = np.arange(misuse.N, dtype=np.uint8)
    for side in (hot, slow):
        a, b, c = side.bufs
        a.copy_from(host, side.s)
        b.copy_from(a, side.s)           # the compiled copy: buffer to buffer on a Stream
        b[:16].copy_to(c[16:32], side.s)
        side.s.sync()
        assert bytes(b.copy_to(bytearray(misuse.N))) == host.tobytes()
        assert bytes(c[16:32].copy_to(bytearray(16))) == host[:16].tobytes()
        assert a._last is not None and b._last is not None
    small = {}
    for side in (hot, slow):
        small[id(side)] = side.s.device.context.alloc(8)

    def mismatch(side):
        side.bufs[0].copy_from(small[id(side)], side.s)

    def closed_stream(side):
        s = side.s.device.create_stream()
        s.close()
        side.bufs[0].copy_to(side.bufs[1], s)

    def not_a_buffer(side):
        side.bufs[0].copy_from(3, side.s)

    for call in (mismatch, closed_stream, not_a_buffer):
        a, b = outcome(lambda: call(hot)), outcome(lambda: call(slow))
        assert a[0] is b[0] and a[0] != "ok" and a[2] == b[2]
        if call is not closed_stream:
            assert a == b
    for buf in small.values():
        buf.close()


def test_event_record_query_and_stream_query_agree(sides, dev):
    hot, slow = sides("vadd", "vadd")
    for side in (hot, slow):
        ev = hip.Event(dev, timing=False)
        assert ev.record(side.s) is ev
        with dev.create_stream() as other:
            other.wait(ev)                      # hipStreamWaitEvent by address
            other.wait(side.s)
            other.sync()
        side.s.sync()
        assert ev.query() and side.s.query()
        ev.close()
        assert outcome(lambda: ev.query())[0] is rocpy.ClosedError
        assert outcome(lambda: side.s.wait(ev))[0] is rocpy.ClosedError


def test_the_compiled_packer_takes_the_fast_cases_itself(sides):
    """The cases above really go through C: ``Launcher.pack`` (what the launch writes)
    answers them, equal to the Python packer's bytes, and declines the others."""
    hot, _ = sides("args", "scalars")
    layout, launcher = hot.k.layout, hot.k._launcher
    end = layout._explicit_end
    buf = hot.bufs[0]
    # typed (declared from the source): ints for integers, floats for floats, numpy
    # scalars of the parameter's own type
    fast = [(1, 2, 3, 4, 5.0, 6.0, 7, buf),
            (np.int8(-1), np.int16(-2), np.int32(-3), np.int64(-4), np.float32(1),
             np.float64(2), np.uint8(255), buf[8:]),
            (True, False, True, False, -1.5, 2.5, True, None)]
    for case in fast:
        assert launcher.pack(case) == layout.pack(case)[:end], case
    declined = [(1.5,) + fast[0][1:],                      # a float for a char: refused
                fast[0][:4] + (5,) + fast[0][5:],           # an int for a float: by value, Python
                (np.uint8(1),) + fast[0][1:],               # other signedness: range-checked
                fast[0][:7] + ("0x10",),                    # a str for a pointer
                fast[0][:3] + (2**64,) + fast[0][4:],       # out of range: Python's error
                fast[0][:-1]]                               # wrong count
    for case in declined:
        assert launcher.pack(case) is None, case
    untyped, _ = sides("args", "scalars", typed=False)
    layout, launcher = untyped.k.layout, untyped.k._launcher
    assert launcher.pack(fast[0]) is None                   # bare numbers: Python refuses
    case = (1, b"\x02\x00", b"\x03\x00\x00\x00", bytes(8), bytes(4), bytes(8), 7, buf)
    assert launcher.pack(case) == layout.pack(case)[:end]   # bytes of the size: inline


def test_threads_launching_one_kernel_never_mix_geometries(sides, recorder, dev):
    """Eight threads launch the same kernel, each with its own grid, alternating with a
    list (revalidated every time): every dispatch's hidden block count matches its
    grid, so no launch took another thread's cached geometry or hidden arguments."""
    import struct
    import threading
    hot, _ = sides("scale-v5", "scale")
    seen = recorder("scale")
    offset = next(a.offset for a in hot.k.layout.hidden if a.value_kind == "hidden_block_count_x")
    errors = []

    def work(i):
        try:
            with dev.create_stream() as s:
                for j in range(100):
                    grid = i + 1 if j % 2 else [i + 1]
                    hot.k.launch(grid, 4, (hot.bufs[0], np.float32(1.5), 4), s)
                s.sync()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(seen) == 800
    for kernarg, grid, block in seen:
        assert struct.unpack_from("<I", kernarg, offset)[0] * block[0] == grid[0]
    assert {g[0] for _, g, _ in seen} == {4 * (i + 1) for i in range(8)}


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the compiled path reads numpy scalars' "
                    "bytes through the buffer protocol of the 3.11 limited API")
def test_numpy_scalars_for_untyped_slots_stay_compiled(kernel_file, dev, recorder, monkeypatch):
    """An extern "C" kernel from a code object has no types: numpy scalars of the slot's
    width are packed in C (their bytes), not handed to the Python packer (the H200 run
    of the merged tree had every 4-argument launch fall back: 11.5 µs instead of ~5)."""
    from rocpy.hip import module
    fallbacks = []
    python_launch = module.Kernel._launch_py

    def counted(*args):
        fallbacks.append(args)
        return python_launch(*args)
    monkeypatch.setattr(module.Kernel, "_launch_py", counted)
    mod = hip.Module.load(kernel_file("vadd"), dev)      # no declared types
    k = mod["vadd"]
    seen = recorder("vadd")
    s = dev.create_stream()
    bufs = [dev.context.alloc(64) for _ in range(3)]
    k.launch(1, 1, (*bufs, np.int32(16)), s)       # the benchmark's 4-argument launch
    k.launch(1, 1, (*bufs, np.float32(2.5)), s)
    s.sync()
    assert [kernarg[24:28] for kernarg, _, _ in seen] == [np.int32(16).tobytes(),
                                                          np.float32(2.5).tobytes()]
    assert not fallbacks, "a numpy scalar of an untyped slot's width went to the Python packer"
    # 8-byte by-value slots of unknown type given a buffer or None (on NVIDIA, whose
    # parameter info has sizes only, every pointer parameter is such a slot)
    mod2 = hip.Module.load(kernel_file("args"), dev)
    scalars = mod2["scalars"]
    seen2 = recorder("scalars")
    scalars.launch(1, 1, (7, np.int16(7), np.int32(7), bufs[0], np.float32(7), None, 7, bufs[1]), s)
    s.sync()
    kernarg = seen2[0][0]
    l_at, d_at = scalars.params[3].offset, scalars.params[5].offset
    assert kernarg[l_at:l_at + 8] == bufs[0].ptr.to_bytes(8, "little")
    assert kernarg[d_at:d_at + 8] == bytes(8)
    assert not fallbacks, "a buffer or None for an untyped 8-byte slot went to the Python packer"
    mod2.close()
    s.close()
    for b in bufs:
        b.close()
    mod.close()


# ---- Kernel.launch as a compiled method (rocpy/_native/hot/hot_method.c) -----------------


def _call_forms(side):
    a, b, c = side.bufs
    args = (a, b, c, np.int32(4))
    return {
        "positional": ((1, 64, args, side.s, 0), {}),
        "keywords": ((1, 64), {"args": args, "stream": side.s, "shared_mem": 0}),
        "all keywords": ((), {"grid": 1, "block": 64, "args": args, "stream": side.s}),
        "stream keyword only": ((1, 64, args), {"stream": side.s}),
        "null stream": ((1, 64, args), {}),
        "no args": ((1, 64), {"stream": side.s}),
        "missing block": ((1,), {"args": args}),
        "unknown keyword": ((1, 64, args), {"streams": side.s}),
        "grid twice": ((1, 64), {"grid": 1}),
        "too many": ((1, 64, args, side.s, 0, 0), {}),
        "shared_mem as a list": ((1, 64, args, side.s, [0]), {}),
    }


@pytest.mark.parametrize("form", [
    "positional", "keywords", "all keywords", "stream keyword only", "null stream", "no args",
    "missing block", "unknown keyword", "grid twice", "too many", "shared_mem as a list"])
def test_the_compiled_launch_method_agrees_with_the_python_definition(form, sides, recorder):
    """Every way of calling ``Kernel.launch``: the compiled descriptor and the Python
    definition (`_methods.PYTHON`) launch the same bytes or raise the same exception."""
    from rocpy.hip import _methods, module
    if _hotpath.module() is None:
        pytest.skip("ROCPY_HOT=0")
    seen = recorder("vadd")
    hot, slow = sides("vadd", "vadd")
    assert type(module.Kernel.__dict__["launch"]).__name__ == "Method"
    got = []
    for side, launch in ((hot, lambda *a, **k: hot.k.launch(*a, **k)),
                         (hot, lambda *a, **k: _methods.PYTHON["Kernel.launch"](hot.k, *a, **k)),
                         (slow, lambda *a, **k: slow.k.launch(*a, **k))):
        pos, kw = _call_forms(side)[form]
        n = len(seen)
        res = outcome(lambda: launch(*pos, **kw))
        side.s.sync()
        hip.Device(0).sync()
        got.append((res, seen[n:]))
    assert got[0] == got[1] == got[2]


def test_the_compiled_launch_method_on_a_closed_module_raises_as_python(sides):
    from rocpy.hip import _methods
    hot, slow = sides("vadd", "vadd")
    k = hot.k
    hot.s.sync()
    k._h, saved = None, k._h          # as a closed module leaves its kernels
    try:
        a = outcome(lambda: k.launch(1, 64, (), hot.s))
        b = outcome(lambda: _methods.PYTHON["Kernel.launch"](k, 1, 64, (), hot.s))
    finally:
        k._h = saved
    assert a == b and a[0] is not None and a[0] != "ok"


def test_the_launch_descriptor_called_directly_launches_as_the_bound_call(sides, recorder):
    """``k.launch(...)`` is ``descr(k, ...)`` (a method descriptor with vectorcall): the
    same launch; any other first argument goes to the Python definition as it is."""
    from rocpy.hip import _methods, module
    if _hotpath.module() is None:
        pytest.skip("ROCPY_HOT=0")
    seen = recorder("vadd")
    hot, _ = sides("vadd", "vadd")
    d = module.Kernel.__dict__["launch"]
    args = (*hot.bufs, np.int32(4))
    d(hot.k, 1, 64, args, hot.s)
    bound = hot.k.launch
    bound(1, 64, args, hot.s)
    hot.s.sync()
    assert len(seen) == 2 and seen[0] == seen[1]
    for bad in ((), (3, 1, 64), (None, 1, 64)):
        a, b = outcome(lambda: d(*bad)), outcome(lambda: _methods.PYTHON["Kernel.launch"](*bad))
        assert a == b and a[0] in (TypeError, AttributeError)
