"""``rocpy bench``: argument errors, the JSON schema, the plot, --compare without peers,
skipped families, and a real ``--quick`` run.  Tiny sizes and repetitions keep it fast;
no timing is asserted (a timing never fails a test)."""
from __future__ import annotations

import argparse
import json
import types

import pytest

from rocpy._cli import bench as bench_cli
from rocpy.bench import c_reference, compare
from rocpy.bench.progress import ProgressDisplay
from rocpy.bench.cases import FAMILIES

from .conftest import BACKEND, needs_compiler

stub_only = pytest.mark.skipif(BACKEND != "stub", reason=f"checks the stub's labels; "
                                                           f"the backend is {BACKEND}")
TINY = ["--repeat", "3", "--warmup", "0", "--no-progress", "--plain"]


def _bench(cli, tmp_path, *argv, name="r.json"):
    path = tmp_path / name
    status, out, err = cli(["bench", *argv, *TINY, "--json", str(path)])
    data = json.loads(path.read_text()) if path.exists() else None
    return status, out, err, data


# ---- arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize("argv, message", [
    (["--repeat", "0"], "argument --repeat: must be at least 1"),
    (["--repeat", "many"], "argument --repeat: 'many' is not an integer"),
    (["--warmup", "-1"], "argument --warmup: must be 0 or more"),
    (["--min-repeat", "0"], "argument --min-repeat: must be at least 1"),
    (["--size-max", "lots"], "argument --size-max: 'lots' is not a size"),
    (["--size-max", "0"], "argument --size-max: '0': the size must be at least 1 byte"),
    (["--size-max", "2T"], "larger than 1 TiB"),
    (["--only", "copy,warp"], "argument --only: unknown family 'warp'"),
    (["--plot", "out.txt"], "--plot out.txt: name a .png, .svg or .pdf file"),
    (["--device", "-1"], "argument --device: must be 0 or more"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
])
def test_argument_errors_exit_2_with_a_message(cli, argv, message):
    status, out, err = cli(["bench", *argv])
    assert status == 2
    assert "rocpy bench: error:" in err or "rocpy: error:" in err
    assert message in err
    assert out == ""


def test_plot_without_matplotlib_is_an_argument_error(cli, monkeypatch, tmp_path):
    import builtins
    real = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("No module named 'matplotlib'")
        return real(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    status, _, err = cli(["bench", "--plot", str(tmp_path / "p.png")])
    assert status == 2 and "--plot needs matplotlib" in err


def test_bad_device_index_is_an_error(cli):
    status, _, err = cli(["bench", "--device", "7", "--only", "overhead", *TINY])
    assert status == 1
    assert "rocpy bench: error:" in err and "Traceback" not in err


@pytest.mark.parametrize("text, value", [("4096", 4096), ("64M", 64 << 20), ("64MiB", 64 << 20),
                                         ("1G", 1 << 30), ("1.5k", 1536), ("16 KB", 16 << 10)])
def test_parse_size(text, value):
    assert bench_cli.parse_size(text) == value


def test_sizes():
    assert bench_cli.sizes_up_to(64 << 20, quick=False)[:3] == [4096, 16384, 65536]
    assert bench_cli.sizes_up_to(64 << 20, quick=False)[-1] == 64 << 20
    assert bench_cli.sizes_up_to(16 << 20, quick=True) == [4096, 65536, 1 << 20, 16 << 20]
    assert bench_cli.sizes_up_to(100_000, quick=False) == [4096, 16384, 65536, 100_000]
    assert bench_cli.sizes_up_to(1000, quick=True) == [1000]


def test_default_plan_keeps_the_stub_small():
    args = argparse.Namespace(quick=False, size_max=None, warmup=None, repeat=None,
                              compare=False, only=None)
    assert max(bench_cli.make_plan(args, simulation=True).sizes) == 64 << 20
    assert max(bench_cli.make_plan(args, simulation=False).sizes) == 1 << 30
    args.quick = True
    assert max(bench_cli.make_plan(args, simulation=True).sizes) == 16 << 20


def test_min_repeat_raises_the_fewest_repetitions_a_budget_gives():
    """--min-repeat: a case too slow for its budget still gets that many repetitions
    (the large copies, for the paired test of issue 21's goal); --repeat still fixes
    them; a minimum above --quick's maximum raises the maximum with it."""
    from rocpy.bench.cases import repeats
    args = argparse.Namespace(quick=False, size_max=None, warmup=None, repeat=None,
                              compare=False, only=None, min_repeat=None)
    plan = bench_cli.make_plan(args, simulation=False)
    assert (plan.min_repeat, repeats(plan, per_rep_s=10.0)) == (10, 10)
    args.min_repeat = 40
    plan = bench_cli.make_plan(args, simulation=False)
    assert repeats(plan, per_rep_s=10.0) == 40 and repeats(plan, per_rep_s=1e-6) == 500
    args.quick = True
    plan = bench_cli.make_plan(args, simulation=False)
    assert (plan.min_repeat, plan.max_repeat, repeats(plan, per_rep_s=1e-6)) == (40, 40, 40)
    args.repeat = 3
    assert repeats(bench_cli.make_plan(args, simulation=False), per_rep_s=10.0) == 3


# ---- a run and its JSON --------------------------------------------------------------------


def _check_case(case):
    assert isinstance(case["name"], str) and case["name"]
    assert case["family"] in FAMILIES
    assert case["kind"] in ("bandwidth", "latency")
    assert case["unit"] == "us" and isinstance(case["ops"], int) and case["ops"] >= 1
    assert case["reference"] in case["variants"] and "rocpy" in case["variants"]
    assert isinstance(case["params"], dict) and isinstance(case["title"], str)
    for v in case["variants"].values():
        for key in ("median", "mean", "min", "max", "p10", "p90", "q1", "q3"):
            assert isinstance(v[key], float) and v[key] > 0, key
        assert v["min"] <= v["p10"] <= v["median"] <= v["p90"] <= v["max"]
        assert v["n"] == len(v["samples_ns"]) == 3          # --repeat 3: never one sample
        assert all(isinstance(s, int) for s in v["samples_ns"])
    if case["kind"] == "bandwidth":
        assert case["bytes_per_op"] == case["params"]["size"]
        assert set(case["params"]) >= {"direction", "memory", "size"}
        assert all(isinstance(v["gbps"], float) for v in case["variants"].values())


@needs_compiler
def test_json_schema(cli, tmp_path):
    status, out, err, data = _bench(cli, tmp_path, "--size-max", "16K")
    assert status == 0, err
    assert data["schema"] == "rocpy.bench/1" and data["tool"] == "rocpy bench"
    for key, kind in (("date", str), ("simulation", bool), ("backend", dict), ("machine", dict),
                      ("device", dict), ("meta", dict), ("config", dict), ("cases", list),
                      ("notes", list), ("skipped", list), ("references", list),
                      ("elapsed_s", float), ("interrupted", bool)):
        assert isinstance(data[key], kind), key
    b = data["backend"]
    assert b["name"] == BACKEND and isinstance(b["reason"], str)
    assert b["simulation"] is data["simulation"] is (BACKEND == "stub")
    assert data["meta"]["backend"] == BACKEND and data["meta"]["date"] == data["date"]
    assert isinstance(data["machine"]["cpu"], str) and isinstance(data["machine"]["cpu_count"], int)
    assert isinstance(data["device"]["name"], str) and isinstance(data["device"]["target_id"], str)
    assert data["config"]["repeat"] == 3 and data["config"]["sizes"] == [4096, 16384]
    families = {c["family"] for c in data["cases"]}
    assert families >= {"copy", "dispatch", "overhead"}
    if BACKEND != "nvidia":
        assert "hsa_dispatch" in families
    for case in data["cases"]:
        _check_case(case)
    bw = [c for c in data["cases"] if c["kind"] == "bandwidth"]
    assert {(c["params"]["direction"], c["params"]["memory"]) for c in bw} == {
        ("H2D", "pinned"), ("H2D", "pageable"), ("D2H", "pinned"), ("D2H", "pageable"),
        ("D2D", "device")}
    assert {c["params"]["size"] for c in bw} == {4096, 16384}
    over = [c for c in data["cases"] if c["family"] == "overhead"]
    assert over and all(set(c["variants"]) == {"raw", "rocpy"} and c["reference"] == "raw"
                        for c in over)
    assert data["skipped"] == []
    # the table
    assert "Copy bandwidth, GB/s" in out and "Latency, microseconds per operation" in out
    assert "Per-call overhead" in out and f"JSON written to {tmp_path / 'r.json'}" in out


@stub_only
def test_stub_figures_are_labelled_a_simulation(cli, tmp_path):
    status, out, _, data = _bench(cli, tmp_path, "--only", "copy", "--size-max", "4K")
    assert status == 0
    assert data["simulation"] is True and data["backend"]["simulation"] is True
    assert data["device"]["simulated"] is True
    assert "CPU simulation" in data["backend"]["label"]
    assert "CPU SIMULATION" in out.splitlines()[0]                 # the run's title
    assert out.count("CPU SIMULATION, not GPU figures") >= 2        # every table title


@needs_compiler
def test_plot_is_written(cli, tmp_path):
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib")
    png = tmp_path / "r.png"
    status, out, err, data = _bench(cli, tmp_path, "--only", "copy,dispatch", "--size-max", "8K",
                                    "--plot", str(png))
    assert status == 0, err
    blob = png.read_bytes()
    assert len(blob) > 10_000 and blob[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot written to {png}" in out
    from rocpy.bench.plot import title_of
    title = title_of(data)
    assert ("CPU SIMULATION" in title) is (BACKEND == "stub")


def test_only_selects_families(cli, tmp_path):
    status, _, _, data = _bench(cli, tmp_path, "--only", "overhead")
    assert status == 0
    assert {c["family"] for c in data["cases"]} == {"overhead"}
    assert data["config"]["families"] == ["overhead"]


# ---- --compare -----------------------------------------------------------------------------


@needs_compiler
def test_compare_adds_raw_and_ratios(cli, tmp_path):
    status, out, err, data = _bench(cli, tmp_path, "--compare", "--only", "copy,dispatch,hsa",
                                    "--size-max", "4K")
    assert status == 0, err
    for case in data["cases"]:
        _check_case(case)
        assert len(case["variants"]) >= 2
        assert case["reference"] != "rocpy"
        ratio = case["variants"]["rocpy"]["ratio"]
        assert isinstance(ratio, float) and ratio > 0
    hsa = [c for c in data["cases"] if c["family"] == "hsa_dispatch"]
    if BACKEND != "nvidia":
        assert any("C loop" in c["variants"] for c in hsa)
    assert "ratio" in out and "rocpy time / raw time" in out
    # no peer applies to the stub: a note says where they run; the missing C program is noted
    if BACKEND == "stub":
        assert any("compare on those backends only" in n for n in data["notes"])
        assert any("program stub_hsa_bench is not built" in n for n in data["notes"])
        assert any("program hip_ref_stub is not built" in n for n in data["notes"])


@needs_compiler
def test_compare_notes_a_missing_peer(cli, tmp_path, monkeypatch):
    """A peer that applies here but is not installed: skipped with a note, the run goes on."""
    monkeypatch.setattr(compare.HipPython, "backends", (BACKEND,))
    real = compare._import

    def missing(name):
        if name.split(".")[0] == "hip":
            raise ModuleNotFoundError("No module named 'hip'")
        return real(name)
    monkeypatch.setattr(compare, "_import", missing)
    status, out, err, data = _bench(cli, tmp_path, "--compare", "--only", "dispatch")
    assert status == 0, err
    assert any("hip-python is not installed (pip install hip-python)" in n for n in data["notes"])
    assert "hip-python is not installed" in out
    assert all("hip-python" not in c["variants"] for c in data["cases"])
    assert all("raw" in c["variants"] for c in data["cases"])


@needs_compiler
def test_compare_survives_a_broken_peer(cli, tmp_path, monkeypatch):
    """A peer whose setup fails is skipped; one whose variant fails is left out of the case."""
    class Broken(compare.Peer):
        name, backends, package = "broken", (BACKEND,), "broken"

        def setup(self, env):
            raise RuntimeError("no device for me")

    class Flaky(compare.Peer):
        name, backends, package = "flaky", (BACKEND,), "flaky"

        def setup(self, env):
            self.env = env

        def v_launch_sync(self):
            def run():
                raise RuntimeError("launch failed")
            return run

        def v_launch_batch(self, n):
            return lambda: None          # works: stays in its case

    monkeypatch.setattr(compare, "PEERS", (Broken, Flaky))
    status, _, err, data = _bench(cli, tmp_path, "--compare", "--only", "dispatch")
    assert status == 0, err
    notes = "\n".join(data["notes"])
    assert "broken could not be set up" in notes and "no device for me" in notes
    assert "variant 'flaky' failed and was left out" in notes
    cases = {c["name"]: c for c in data["cases"]}
    assert "flaky" not in cases["launch + sync"]["variants"]
    assert "flaky" in next(c for n, c in cases.items() if "launches" in n)["variants"]


@stub_only
@needs_compiler
def test_compare_runs_the_c_references_where_built(cli, tmp_path, monkeypatch):
    import os
    built = {name: os.path.join(c_reference._repo_root(), where)
             for name, (backend, where, _) in c_reference.C_PROGRAMS.items() if backend == "stub"}
    built = {n: p for n, p in built.items() if os.access(p, os.X_OK)}
    if not built:
        pytest.skip("no C reference is built (make -C benchmarks/c; "
                    "bash benchmarks/c/hip_ref.sh stub)")
    folder = tmp_path / "c"
    folder.mkdir()
    for name, path in built.items():
        (folder / name).symlink_to(path)
    monkeypatch.setenv("ROCPY_BENCH_C", str(folder))
    status, out, err, data = _bench(cli, tmp_path, "--compare", "--only", "hsa,dispatch,overhead")
    assert status == 0, err
    refs = {r["name"]: r for r in data["references"]}
    assert set(refs) == set(built)
    for ref in refs.values():
        assert ref["compared"], ref
        for pair in ref["compared"]:
            assert pair["c_us"] > 0 and pair["ours_us"] > 0 and pair["ratio"] > 0
        assert f"C reference: {ref['name']}" in out
    if "stub_hsa_bench" in refs:
        assert refs["stub_hsa_bench"]["compared"][0]["case"] == "HSA dispatch + wait"
    if "hip_ref_stub" in refs:
        cases = {p["case"] for p in refs["hip_ref_stub"]["compared"]}
        assert {"launch + sync", "launch (enqueue)"} <= cases


# ---- what cannot run is skipped with a reason ----------------------------------------------


def test_no_compiler_skips_the_kernel_cases_with_a_note(cli, tmp_path, monkeypatch):
    from rocpy.bench import cases
    monkeypatch.setenv("ROCPY_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(cases, "find_hipcc", lambda: None)
    monkeypatch.setattr(cases, "find_nvcc", lambda: None)
    if BACKEND == "amd":
        pytest.skip("amd falls back to hipRTC")
    status, out, err, data = _bench(cli, tmp_path, "--only", "dispatch,overhead")
    assert status == 0, err
    skipped = {(s["family"], s.get("case")): s["reason"] for s in data["skipped"]}
    assert "no hipcc found" in skipped[("dispatch", None)] or \
        "no nvcc found" in skipped[("dispatch", None)]
    assert ("overhead", "launch (enqueue)") in skipped
    names = {c["name"] for c in data["cases"]}
    assert "event record" in names and "launch (enqueue)" not in names
    assert "Skipped" in out and "the cases that launch kernels are skipped" in out


def test_all_families_unavailable_exits_1(cli, tmp_path, monkeypatch):
    from rocpy.bench import cases

    def unavailable(name):
        def build(env):
            raise cases.Unavailable(f"{name} cannot run (simulated)")
        return types.SimpleNamespace(build=build)
    monkeypatch.setattr(cases, "load_family", unavailable)
    status, out, _, data = _bench(cli, tmp_path, "--only", "copy,overhead")
    assert status == 1
    assert data["cases"] == [] and len(data["skipped"]) == 2
    assert "copy cannot run (simulated)" in out


# ---- the real thing, end to end ------------------------------------------------------------


@needs_compiler
def test_quick_run_finishes_and_writes_json(subprocess_cli, tmp_path):
    path = tmp_path / "quick.json"
    proc = subprocess_cli(["bench", "--quick", "--json", str(path)], timeout=180)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    data = json.loads(path.read_text())
    assert data["config"]["quick"] is True
    assert {c["family"] for c in data["cases"]} >= {"copy", "dispatch", "overhead"}
    for case in data["cases"]:
        for v in case["variants"].values():
            assert v["n"] >= 5          # the quick plan's floor: never one sample
    if BACKEND == "stub":
        assert max(c["params"]["size"] for c in data["cases"] if c["kind"] == "bandwidth") \
            == 16 << 20
        assert data["simulation"] is True
    assert "Copy bandwidth" in proc.stdout


# ---- resources and progress ----------------------------------------------------------------


@needs_compiler
def test_a_run_leaves_no_live_objects(cli, tmp_path):
    import time

    import rocpy.debug
    from rocpy import hip
    status, _, err, _ = _bench(cli, tmp_path, "--compare", "--size-max", "8K")
    assert status == 0, err
    for i in range(hip.device_count()):
        hip.Device(i).sync()
    deadline = time.monotonic() + 5
    while True:
        rocpy.debug.collect()
        live = rocpy.debug.live_objects()
        if not live or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert live == {}


def test_progress_degrades_to_nothing(monkeypatch):
    import builtins

    from rocpy.bench.harness import Progress
    real = builtins.__import__

    def without(*names):
        def imp(name, *args, **kwargs):
            if name.split(".")[0] in names:
                raise ImportError(f"No module named {name!r}")
            return real(name, *args, **kwargs)
        return imp
    monkeypatch.setattr(builtins, "__import__", without("rich", "tqdm"))
    bar = ProgressDisplay(3, bar=True)
    assert bar.kind is None
    bar.case("x")
    bar.hook(Progress("x", 0, 1, 1, 4), 4)      # no-ops, no errors
    bar.finish_case()
    bar.close()
    monkeypatch.setattr(builtins, "__import__", real)
    assert ProgressDisplay(3, bar=False).kind is None


def test_progress_bar_follows_the_harness_hook(monkeypatch, capsys):
    pytest.importorskip("rich")
    from rocpy.bench.harness import Progress
    bar = ProgressDisplay(2, bar=True)
    assert bar.kind == "rich"
    bar.case("first")
    bar.hook(Progress("first", 0, 1, 2, 4), 4)
    assert bar.bar.tasks[0].completed == pytest.approx(0.5)
    bar.finish_case()
    assert bar.bar.tasks[0].completed == 1
    bar.close()
    assert capsys.readouterr().out == ""          # progress goes to stderr, never stdout


@stub_only
@needs_compiler
def test_amd_without_hipcc_falls_back_to_hiprtc(tmp_path, monkeypatch):
    """The amd path when hipcc is missing: `rocpy.hip.Program` compiles (hipRTC there; on the
    stub Program itself uses hipcc, which exercises the same caching)."""
    from rocpy.bench import cases
    monkeypatch.setenv("ROCPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cases, "find_hipcc", lambda: None)
    env = cases.Env(cases.Plan(families=("dispatch",)))
    try:
        env.backend = "amd"
        path = env.kernel_file()
        assert "hiprtc" in path and path.startswith(str(tmp_path / "cache"))
        assert env.kernel("empty").name == "empty"
    finally:
        env.close()
    env = cases.Env(cases.Plan(families=("dispatch",)))
    try:
        env.backend = "amd"
        assert env.kernel_file() == path             # cached: not compiled again
    finally:
        env.close()


def test_latency_box_plot_has_a_legend_of_its_colours():
    pytest.importorskip("matplotlib", reason="the plot needs matplotlib")
    from matplotlib.figure import Figure

    from rocpy.bench.plot import VARIANT_COLOR, _latency
    cases = [{"name": "launch", "kind": "latency", "ops": 1,
              "variants": {"raw": {"samples_ns": [1000, 1200]},
                           "rocpy": {"samples_ns": [1500, 1600]}}},
             {"name": "sync", "kind": "latency", "ops": 1,
              "variants": {"rocpy": {"samples_ns": [900, 950]}}}]
    ax = Figure().subplots()
    assert _latency(ax, cases)
    legend = ax.get_legend()
    assert legend is not None and legend.get_title().get_text() == "variant"
    assert [t.get_text() for t in legend.get_texts()] == ["raw", "rocpy"]
    from matplotlib.colors import to_rgba
    assert [tuple(h.get_facecolor()) for h in legend.legend_handles] == [
        to_rgba(VARIANT_COLOR.get(n, "#eeeeee")) for n in ("raw", "rocpy")]


def _shared_library(folder, name: str, source: str):
    """``source`` (C) compiled into ``folder/name``, a shared library; skips without a
    C compiler."""
    import shutil
    import subprocess
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    src, lib = folder / (name + ".c"), folder / name
    src.write_text(source)
    subprocess.run([cc, "-shared", "-fPIC", str(src), "-o", str(lib)], check=True)
    return lib


FAKE_LOOPS = r"""
#include <stddef.h>
#include <string.h>
static int launched, launched4, launched0, synced, copies;
int ref_open(const char *k) { return k[0] == 'x' ? 400 : 0; }
int ref_launch(int n) { launched += n; return n < 0 ? 1 : 0; }
int ref_launch4(int n) { launched4 += n; return 0; }
int ref_launch_extra0(int n) { launched0 += n; return 0; }
int ref_copy(void *dst, const void *src, size_t size, int kind, int ops)
{
    if (kind == 9)
        return 11;
    for (int i = 0; i < ops; i++, copies++)
        memcpy(dst, src, size);
    return 0;
}
static void *copied_on;
int ref_copy_on(void *dst, const void *src, size_t size, int kind, int ops, void *stream)
{
    copied_on = stream;
    return ref_copy(dst, src, size, kind, ops);
}
void *copy_stream(void) { return copied_on; }
static long spaced_by, touched;
int ref_copy_between(void *dst, const void *src, size_t size, int kind, int ops, void *stream,
                     long gap_ns, long touch_bytes)
{
    spaced_by = gap_ns;
    touched = touch_bytes;
    return ref_copy_on(dst, src, size, kind, ops, stream);
}
long long ref_between_ns(void) { return 1000LL * spaced_by + touched; }
long copy_gap(void) { return spaced_by; }
long copy_touch(void) { return touched; }
typedef int (*copy_fn)(void *, const void *, size_t, int, void *);
int ref_copy_through(void *fn, void *dst, const void *src, size_t size, int kind, int ops,
                     void *stream)
{
    for (int i = 0; i < ops; i++) {
        int e = ((copy_fn)fn)(dst, src, size, kind, stream);
        if (e)
            return e;
    }
    return 0;
}
static int through_calls;
int fake_memcpy_async(void *dst, const void *src, size_t size, int kind, void *stream)
{
    through_calls++;
    memcpy(dst, src, size);
    return kind == 9 ? 12 : 0;
}
int through(void) { return through_calls; }
int ref_sync(void) { synced++; return 0; }
int counts(void) { return launched * 10000 + launched4 * 100 + launched0 * 10 + synced; }
int copied(void) { return copies; }
"""


def test_the_in_process_c_loops_call_the_library_and_raise_its_status(tmp_path, monkeypatch):
    """`c_reference.CLoops` over a library with hip_ref_loops.c's functions (a fake
    that counts), and `c_loops`: None off nvidia, a note where the library is missing."""
    import ctypes
    from types import SimpleNamespace

    from rocpy.bench import c_reference, compare
    lib = _shared_library(tmp_path, "libhip_ref_loops.so", FAKE_LOOPS)
    loops = c_reference.CLoops(str(lib), "kernel.cubin")
    loops.launch(3)
    loops.launch4(2)
    loops.launch_extra0(5)
    loops.sync()
    assert ctypes.CDLL(str(lib)).counts() == 3 * 10000 + 2 * 100 + 5 * 10 + 1
    with pytest.raises(RuntimeError, match="ref_launch failed with status 1"):
        loops.launch(-1)
    # copier: the pointers, size, kind and count reach ref_copy as given (a 64-bit address)
    import numpy as np
    src_a, dst_a = np.arange(64, dtype=np.uint8), np.zeros(64, np.uint8)
    copy = loops.copier(int(dst_a.ctypes.data), int(src_a.ctypes.data), 48, 1, 3)
    copy()
    assert (dst_a[:48] == src_a[:48]).all() and not dst_a[48:].any()
    assert ctypes.CDLL(str(lib)).copied() == 3
    with pytest.raises(RuntimeError, match="ref_copy failed with status 11"):
        loops.copier(int(dst_a.ctypes.data), int(src_a.ctypes.data), 8, 9, 1)()
    # on a given stream: ref_copy_on, with that handle (64-bit) as its last argument
    dst_a[:] = 0
    loops.copier(int(dst_a.ctypes.data), int(src_a.ctypes.data), 16, 1, 2, 0x7F00DEADBEEF)()
    fake = ctypes.CDLL(str(lib))
    fake.copy_stream.restype = ctypes.c_void_p
    assert fake.copy_stream() == 0x7F00DEADBEEF and fake.copied() == 5
    assert (dst_a[:16] == src_a[:16]).all() and not dst_a[16:].any()
    with pytest.raises(RuntimeError, match="ref_copy_on failed with status 11"):
        loops.copier(int(dst_a.ctypes.data), int(src_a.ctypes.data), 8, 9, 1, 1)()
    # busy between copies: ref_copy_between with the stream, the gap and the bytes touched;
    # between_ns reads what the library says it spent
    loops.copier(int(dst_a.ctypes.data), int(src_a.ctypes.data), 16, 1, 4, 0x7F00DEADBEE0,
                 gap_ns=250, touch_bytes=4096)()
    fake.copy_gap.restype = fake.copy_touch.restype = ctypes.c_long
    assert (fake.copy_gap(), fake.copy_touch(), fake.copy_stream(), fake.copied()) == \
        (250, 4096, 0x7F00DEADBEE0, 9)
    assert loops.between_ns() == 250 * 1000 + 4096
    with pytest.raises(RuntimeError, match="ref_copy_between failed with status 11"):
        loops.copier(int(dst_a.ctypes.data), int(src_a.ctypes.data), 8, 9, 1, 1, gap_ns=5)()
    with pytest.raises(ValueError, match="gap_ns, touch_bytes and via need a stream"):
        loops.copier(int(dst_a.ctypes.data), int(src_a.ctypes.data), 8, 1, 1, touch_bytes=64)
    # through a given cudaMemcpyAsync-like function: it makes the copies, its status raised
    fn = ctypes.cast(fake.fake_memcpy_async, ctypes.c_void_p).value
    dst_a[:] = 0
    loops.copier(int(dst_a.ctypes.data), int(src_a.ctypes.data), 24, 1, 3, 1, via=fn)()
    assert fake.through() == 3 and (dst_a[:24] == src_a[:24]).all() and not dst_a[24:].any()
    with pytest.raises(RuntimeError, match="ref_copy_through failed with status 12"):
        loops.copier(int(dst_a.ctypes.data), int(src_a.ctypes.data), 8, 9, 1, 1, via=fn)()
    with pytest.raises(ValueError, match="not both"):
        loops.copier(int(dst_a.ctypes.data), int(src_a.ctypes.data), 8, 1, 1, 1, gap_ns=5,
                     via=fn)
    with pytest.raises(RuntimeError, match="ref_open failed with status 400"):
        c_reference.CLoops(str(lib), "x.cubin")

    notes: list[str] = []
    env = SimpleNamespace(plan=SimpleNamespace(compare=True), backend="stub",
                          note=notes.append, kernel_file=lambda: "kernel.cubin")
    assert c_reference.c_loops(env) is None and notes == []
    env.backend = "nvidia"
    monkeypatch.setenv("ROCPY_BENCH_C", str(tmp_path / "empty"))
    assert c_reference.c_loops(env) is None
    assert any("is not built" in n for n in notes)
    env2 = SimpleNamespace(plan=env.plan, backend="nvidia", note=notes.append,
                           kernel_file=lambda: "kernel.cubin")
    monkeypatch.setenv("ROCPY_BENCH_C", str(tmp_path))
    found = c_reference.c_loops(env2)
    assert isinstance(found, c_reference.CLoops) and c_reference.c_loops(env2) is found


NOP_LAUNCH = r"""
static int calls;
int nop_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
               unsigned bz, unsigned shared, void *s, void **params, void **extra)
{ calls++; return 0; }
int nop_calls(void) { return calls; }
"""


@needs_compiler
@pytest.mark.skipif(BACKEND != "stub", reason="the stub's built-in empty kernel")
def test_floor_runs_and_its_no_op_kernel_calls_the_function_given(tmp_path, capsys):
    """benchmarks/device/floor.py on the stub: its rows are printed, and the kernel
    it makes for the binding-only row sends every launch to the function it was given
    (the no-op), none to the runtime."""
    import ctypes
    import importlib.util

    from .conftest import ROOT
    spec = importlib.util.spec_from_file_location(
        "floor", f"{ROOT}/benchmarks/device/floor.py")
    assert spec is not None and spec.loader is not None
    floor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(floor)
    assert floor.main(["--rounds", "4"]) == 0
    out = capsys.readouterr().out
    assert "launch floor (stub" in out and "rocpy " in out and "raw cffi" in out
    for case in ("H2D pageable", "D2H pageable", "D2D device", "H2D pinned"):
        assert f"copy floor, {case} 4 KiB" in out
    assert out.count("rocpy (rocpy's stream)") == 4 and out.count("raw cffi (rocpy's stream)") == 4

    nop = ctypes.CDLL(str(_shared_library(tmp_path, "libnop.so", NOP_LAUNCH)))
    from rocpy import hip, stub
    from rocpy.bench.cases import compile_kernels
    stub.use_builtin("empty")
    dev = hip.Device(0)
    module = hip.Module.load(compile_kernels(dev, "stub"), dev)
    k = floor._nop_kernel(module, ctypes.cast(nop.nop_launch, ctypes.c_void_p).value)
    with dev.create_stream(non_blocking=True) as s:
        for _ in range(3):
            k.launch(1, 1, (), s)
        s.sync()
    assert nop.nop_calls() == 3
    module.close()


def test_the_nvidia_peers_enqueue_on_rocpys_stream(monkeypatch):
    """CuPy and cuda.core get rocpy's stream (its ``__cuda_stream__`` handle, wrapped);
    CuPy captures graphs on a stream of its own and launches them on rocpy's."""
    from types import SimpleNamespace

    from rocpy.bench import compare
    made: list[tuple[str, object]] = []

    class FakeStream:
        def __init__(self, *args: object, **kwargs: object) -> None:
            self.args, self.ptr = args, args[0] if args else 0
            made.append((type(self).__name__, args))

        def synchronize(self) -> None:
            pass

    class Stream(FakeStream):
        """CuPy's own stream."""

    class ExternalStream(FakeStream):
        """A stream CuPy wraps and never destroys."""

    cupy = SimpleNamespace(cuda=SimpleNamespace(
        Device=lambda i: SimpleNamespace(use=lambda: None), Stream=Stream,
        ExternalStream=ExternalStream, runtime=SimpleNamespace()))

    class FakeDevice:
        def __init__(self, index: int) -> None:
            self.index = index

        def set_current(self) -> None:
            pass

        def create_stream(self, obj: object = None) -> object:
            made.append(("create_stream", obj))
            return SimpleNamespace(of=obj, close=lambda: None)

    core = SimpleNamespace(Device=FakeDevice)
    modules = {"cupy": cupy, "cuda.core": core}
    monkeypatch.setattr(compare, "_import", lambda name: modules[name])

    class RocpyStream:
        def __cuda_stream__(self) -> tuple[int, int]:
            return 0, 0x7F00DEADBEE0
    rocpy_stream = RocpyStream()
    env = SimpleNamespace(device=SimpleNamespace(index=0), stream=rocpy_stream)
    cp_peer, core_peer = compare.CuPy(), compare.CudaCore()
    cp_peer.setup(env)
    core_peer.setup(env)
    assert isinstance(cp_peer.stream, ExternalStream) and cp_peer.stream.ptr == 0x7F00DEADBEE0
    assert isinstance(cp_peer.own_stream, Stream) and cp_peer.own_stream is not cp_peer.stream
    assert core_peer.stream.of is rocpy_stream
    assert ("create_stream", rocpy_stream) in made


def _table_module():
    import importlib.util

    from .conftest import ROOT
    spec = importlib.util.spec_from_file_location("table", f"{ROOT}/benchmarks/table.py")
    assert spec is not None and spec.loader is not None
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    return table


def test_the_median_interval_has_the_binomial_coverage():
    """benchmarks/table.py `median_interval`: order statistics whose coverage
    1 - 2 P(Bin(n, 1/2) <= k) is at least 95 % (n = 10: k = 1, 97.9 %; k = 2 would be
    89 %), the whole range below 6 values, and an error for none."""
    table = _table_module()
    assert table.median_interval([float(x) for x in range(10)][::-1]) == (1.0, 8.0)
    assert table.median_interval([3.0, 1.0, 2.0, 5.0, 4.0]) == (1.0, 5.0)
    assert table.median_interval([float(x) for x in range(100)]) == (39.0, 60.0)
    with pytest.raises(ValueError, match="needs values"):
        table.median_interval([])


def test_the_table_judges_large_copies_on_paired_ratios(tmp_path, capsys):
    """A >= 64 MiB copy whose C / rocpy ratio in each repetition is 1.0 is met, one at
    0.9 throughout is missed, and one that swings around 0.99 is undecided."""
    table = _table_module()

    def case(name: str, rocpy: list[int], c: list[int]) -> dict:
        med = {"rocpy": sorted(rocpy)[len(rocpy) // 2], "C": sorted(c)[len(c) // 2]}
        return {"name": name, "bytes_per_op": 64 << 20, "ops": 1, "family": "copy",
                "variants": {k: {"median": med[k] / 1e3, "samples_ns": s}
                             for k, s in (("rocpy", rocpy), ("C", c))}}
    drift = [1000 * (i + 1) for i in range(10)]          # every repetition slower
    swing = [1020 if i % 2 else 950 for i in range(10)]  # median 0.985, interval to 1.02
    run = {"cases": [case("H2D pinned 64 MiB", drift, drift),
                     case("D2H pinned 64 MiB", [1000] * 10, [900] * 10),
                     case("D2D device 64 MiB", [1000] * 10, swing)]}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(run))
    assert table.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "paired (C / rocpy in each repetition, median, 95 % interval): 1 of 3 met, " \
           "1 missed, 1 undecided" in out
    assert "D2H pinned 64 MiB" in out and "0.9000 [0.9000, 0.9000] of 10 repetitions: missed" \
        in out
    assert "D2D device 64 MiB" in out and "undecided" in out
