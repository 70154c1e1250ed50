"""The C references ``rocpy bench --compare`` sets rocpy against: the programs of
``benchmarks/c`` where they are built (``hip_ref``: the HIP calls of the dispatch and
copy cases made from C, for nvidia and the stub; ``stub_hsa_bench``: the stub's HSA
runtime driven from C), run after the cases and set against them (`c_references`),
and hip_ref's launch and copy loops loaded in-process (`c_loops`, nvidia), timed as the
"C" variant of the launch and small-copy cases in the same rounds as the others.
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

#: The C reference programs of benchmarks/c: name -> (backend it measures, where its build
#: script leaves it, how to build it).
C_PROGRAMS = {
    "hip_ref_stub": ("stub", "build/hip-ref/hip_ref_stub", "bash benchmarks/c/hip_ref.sh stub"),
    "hip_ref": ("nvidia", "build/hip-ref/hip_ref", "bash benchmarks/c/hip_ref.sh nvidia"),
    "stub_hsa_bench": ("stub", "build/bench-c/stub_hsa_bench", "make -C benchmarks/c"),
}


def _repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def c_program(name: str) -> str | None:
    """The built C reference program ``name`` (`C_PROGRAMS`), or None.

    Looked up in ``$ROCPY_BENCH_C`` (a folder) when set, else where its build
    script leaves it in a source checkout.
    """
    folder = os.environ.get("ROCPY_BENCH_C")
    path = os.path.join(folder, name) if folder else \
        os.path.join(_repo_root(), C_PROGRAMS[name][1])
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def stub_hsa_bench_path() -> str | None:
    """``benchmarks/c``'s stub_hsa_bench, if built (see `c_program`)."""
    return c_program("stub_hsa_bench")


#: hip_ref.c's launch and copy loops as a library (benchmarks/c/hip_ref_loops.c, nvidia),
#: where benchmarks/c/hip_ref.sh leaves it
C_LOOPS = "build/hip-ref/libhip_ref_loops.so"


class CLoops:
    """benchmarks/c/hip_ref_loops.c loaded in this process: ``launch(n)``, ``launch4(n)``,
    ``launch_extra0(n)`` (n launches of ``empty`` / the 4-argument ``vadd`` / ``empty``
    with a 0-byte ``extra``, from C), ``copier(...)`` (a batch of async copies and a
    synchronize, on its stream or a given one) and ``sync()`` of its stream, each
    raising RuntimeError on a failed call: the "C" variant of the launch and copy cases,
    timed in the same rounds as the others."""

    def __init__(self, path: str, kernel_file: str) -> None:
        import ctypes
        lib = ctypes.CDLL(path)
        for name in ("ref_open", "ref_launch", "ref_launch4", "ref_launch_extra0", "ref_copy",
                     "ref_copy_on", "ref_copy_between", "ref_copy_through", "ref_sync"):
            getattr(lib, name).restype = ctypes.c_int
        copy_args = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                     ctypes.c_int)
        lib.ref_copy.argtypes = copy_args
        lib.ref_copy_on.argtypes = (*copy_args, ctypes.c_void_p)
        lib.ref_copy_between.argtypes = (*copy_args, ctypes.c_void_p, ctypes.c_long,
                                         ctypes.c_long)
        lib.ref_between_ns.restype = ctypes.c_longlong
        lib.ref_copy_through.argtypes = (ctypes.c_void_p, *copy_args, ctypes.c_void_p)
        self._lib = lib
        self._check(lib.ref_open(kernel_file.encode()), "ref_open")

    @staticmethod
    def _check(status: int, call: str) -> None:
        if status:
            raise RuntimeError(f"hip_ref_loops {call} failed with status {status}")

    def launch(self, n: int) -> None:
        self._check(self._lib.ref_launch(n), "ref_launch")

    def launch4(self, n: int) -> None:
        self._check(self._lib.ref_launch4(n), "ref_launch4")

    def launch_extra0(self, n: int) -> None:
        self._check(self._lib.ref_launch_extra0(n), "ref_launch_extra0")

    def copier(self, dst: int, src: int, size: int, kind: int, ops: int,
               stream: int | None = None, *, gap_ns: int = 0, touch_bytes: int = 0,
               via: int = 0) -> Callable[[], None]:
        """A call making ``ops`` ``hipMemcpyAsync(dst, src, size, kind)`` and one
        ``hipStreamSynchronize`` in C (one ctypes call per batch), on ``stream`` (a handle
        as an int) or, None, on the library's own stream.  On ``stream`` only: with
        ``gap_ns`` or ``touch_bytes``, the CPU touches that much memory and spins until
        that long has passed after each copy (``ref_copy_between``; `between_ns` gives
        the time it took); with ``via``, the address of a function of
        ``cudaMemcpyAsync``'s signature, that function makes the copies
        (``ref_copy_through``)."""
        between = bool(gap_ns or touch_bytes)
        if (between or via) and stream is None:
            raise ValueError("copier: gap_ns, touch_bytes and via need a stream")
        if between and via:
            raise ValueError("copier: gap_ns/touch_bytes or via, not both")
        if between:
            name, copy = "ref_copy_between", functools.partial(
                self._lib.ref_copy_between, dst, src, size, kind, ops, stream, gap_ns,
                touch_bytes)
        elif via:
            name, copy = "ref_copy_through", functools.partial(
                self._lib.ref_copy_through, via, dst, src, size, kind, ops, stream)
        elif stream is None:
            name, copy = "ref_copy", functools.partial(self._lib.ref_copy, dst, src, size, kind,
                                                        ops)
        else:
            name, copy = "ref_copy_on", functools.partial(self._lib.ref_copy_on, dst, src, size,
                                                           kind, ops, stream)
        check = self._check

        def run() -> None:
            status = copy()
            if status:
                check(status, name)
        return run

    def sync(self) -> None:
        self._check(self._lib.ref_sync(), "ref_sync")

    def between_ns(self) -> int:
        """Nanoseconds the CPU spent between copies (``gap_ns``/``touch_bytes``) since the
        last call."""
        return int(self._lib.ref_between_ns())


def c_loops(env: Any) -> CLoops | None:
    """The in-process C launch and copy loops for ``env`` (nvidia, ``--compare``, built by
    ``bash benchmarks/c/hip_ref.sh nvidia``), or None with a note saying why not."""
    if not env.plan.compare or env.backend != "nvidia":
        return None
    if hasattr(env, "_c_loops"):
        cached: CLoops | None = env._c_loops
        return cached
    folder = os.environ.get("ROCPY_BENCH_C")
    path = os.path.join(folder, os.path.basename(C_LOOPS)) if folder else \
        os.path.join(_repo_root(), C_LOOPS)
    loops = None
    if not os.path.isfile(path):
        env.note(f"--compare: {C_LOOPS} is not built (bash benchmarks/c/hip_ref.sh nvidia): "
                 "the launch and copy cases have no in-process C variant")
    else:
        try:
            loops = CLoops(path, env.kernel_file())
        except Exception as exc:
            env.note(f"--compare: hip_ref_loops failed, no in-process C variant "
                     f"({type(exc).__name__}: {exc})")
    env._c_loops = loops
    return loops


def _run_json(env: Any, name: str, cmd: list[str], out: str | None = None) -> Any:
    """Run a C reference; its JSON (from ``out``, else stdout), or None with a note."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        if proc.returncode != 0:
            raise RuntimeError((proc.stderr or proc.stdout).strip()[:200] or
                               f"exit {proc.returncode}")
        if out is None:
            return json.loads(proc.stdout)
        with open(out) as f:
            return json.load(f)
    except Exception as exc:
        env.note(f"--compare: {name} failed, skipped ({type(exc).__name__}: {exc})")
        return None


def _pair(results: dict[str, Any], case: str, metric: str, c_us: Any, what: str
          ) -> dict[str, Any] | None:
    """rocpy's median in ``case`` against the C program's ``c_us`` (us per operation)."""
    r = results.get(case)
    if r is None or not c_us or "rocpy" not in r.variants:
        return None
    mine = r.variants["rocpy"].stats.median
    return {"case": case, "variant": "rocpy", "metric": metric, "what": what,
            "ours_us": mine, "c_us": float(c_us), "ratio": mine / float(c_us)}


#: Copies smaller than this are not set against hip_ref's (see `_hip_ref_pairs`).
MIN_PAIRED_COPY = 1 << 20


def _hip_ref_pairs(results: dict[str, Any], metrics: dict[str, Any]) -> list[dict[str, Any]]:
    pairs = [
        _pair(results, "launch + sync", "launch_sync_us", metrics.get("launch_sync_us"),
              "launch + hipStreamSynchronize"),
        _pair(results, "launch (enqueue)", "launch_enqueue_us", metrics.get("launch_enqueue_us"),
              "hipModuleLaunchKernel, batched enqueue"),
        _pair(results, "H2D 64 B hipMemcpy", "copy_latency_us", metrics.get("copy_latency_us"),
              "small pinned H2D hipMemcpy (C: 4 bytes)"),
        _pair(results, "4-arg launch (enqueue)", "launch4_enqueue_us",
              metrics.get("launch4_enqueue_us"),
              "4-argument hipModuleLaunchKernel (a buffer packed once), batched enqueue"),
        _pair(results, "4-arg launch + sync", "launch4_sync_us", metrics.get("launch4_sync_us"),
              "4-argument launch + hipStreamSynchronize"),
    ]
    series = {"h2d_pinned": ("H2D", "pinned"), "d2h_pinned": ("D2H", "pinned"),
              "h2d_pageable": ("H2D", "pageable"), "d2h_pageable": ("D2H", "pageable"),
              "d2d": ("D2D", "device")}
    by_key = {}
    for r in results.values():
        if r.bytes_per_op:
            parts = r.name.split(" ", 2)
            by_key[(parts[0], parts[1], r.bytes_per_op)] = r
    for key, sizes in (metrics.get("bandwidth_gbps") or {}).items():
        if key not in series:
            continue
        for size, gbps in sizes.items():
            r = by_key.get((*series[key], int(size)))
            # the C program times the bench's own operation (since 2026-12-02 session 4);
            # small copies stay unpaired: per-call costs, not bandwidth, rule them
            if r is None or not gbps or int(size) < MIN_PAIRED_COPY:
                continue
            c_us = int(size) / float(gbps) / 1e3
            pairs.append(_pair(results, r.name, f"bandwidth_gbps.{key}.{size}", c_us,
                               "the bench's copy: hipMemcpyAsync batch + hipStreamSynchronize"))
    return [p for p in pairs if p is not None]


def c_references(env: Any, results: dict[str, Any]) -> list[dict[str, Any]]:
    """Run the C reference programs built for this backend; set their figures against ours.

    ``results`` maps case names to `rocpy.bench.harness.CaseResult`.  ``hip_ref``
    (benchmarks/c/hip_ref.c: the HIP calls of the dispatch and copy cases, made
    from C) exists for nvidia and the stub; ``stub_hsa_bench`` drives the
    stub's HSA runtime from C.
    """
    if not env.plan.compare:
        return []
    mine = [n for n, (backend, _, _) in C_PROGRAMS.items() if backend == env.backend]
    if not mine:
        env.note(f"--compare: benchmarks/c has no C reference program for the {env.backend} "
                 "backend")
        return []
    try:
        kernel = env.kernel_file()
    except Exception as exc:
        env.note(f"--compare: the C reference programs need the empty kernel: skipped ({exc})")
        return []
    refs = []
    for name in mine:
        path = c_program(name)
        if path is None:
            env.note(f"--compare: the C reference program {name} is not built "
                     f"({C_PROGRAMS[name][2]}, or set ROCPY_BENCH_C): skipped")
            continue
        if name == "stub_hsa_bench":
            with tempfile.TemporaryDirectory(prefix="rocpy-bench-c-") as tmp:
                out = os.path.join(tmp, "c.json")
                metrics = _run_json(env, name, [path, kernel, "--json", out], out)
            if metrics is None:
                continue
            theirs = (metrics.get("dispatch_round_trip_us") or {}).get("median")
            pairs: Sequence[dict[str, Any] | None]
            pairs = [_pair(results, "HSA dispatch + wait", "dispatch_round_trip_us", theirs,
                           "one AQL dispatch + completion-signal wait")]
            kind = "C program (benchmarks/c/stub_hsa_bench.c)"
        else:
            # the stub always runs the quick variant: the full one copies 1 GiB buffers
            quick = env.plan.quick or env.simulation
            metrics = _run_json(env, name, [path, kernel] + (["--quick"] if quick else []))
            if metrics is None:
                continue
            pairs = _hip_ref_pairs(results, metrics)
            kind = "C program (benchmarks/c/hip_ref.c)"
        refs.append({"name": name, "program": path, "kind": kind, "metrics": metrics,
                     "compared": [p for p in pairs if p is not None]})
    return refs


__all__ = ["C_LOOPS", "C_PROGRAMS", "CLoops", "c_loops", "c_program", "c_references",
           "stub_hsa_bench_path"]
