"""What ``rocpy bench --compare`` puts next to rocpy, in the same process and run.

* ``raw``: the same runtime calls through ``rocpy.hip.lib`` / ``rocpy.hsa.lib``
  with arguments prepared beforehand (the cases define it; always available);
* C: ``C loop`` variants calling C loops inside rocpy's extension, and the C
  reference programs of ``benchmarks/c`` where they are built (``hip_ref``: the
  HIP calls of the dispatch and copy cases made from C, for nvidia and the
  stub; ``stub_hsa_bench``: the stub's HSA runtime driven from C), run after
  the cases and set against them (`c_references`);
* peers (`Peer`): hip-python on AMD; cuda.core and CuPy on NVIDIA.  Each is
  imported only when ``--compare`` asks for it; a peer that is not installed,
  does not apply to this backend, or fails its setup is skipped with a note,
  and a peer variant that fails its first call is left out of that case.

Peers copy between the same allocations rocpy's cases use (addresses), on a
stream of their own, and launch their own load of the same code object.
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

#: How peers are imported (tests replace it to simulate a missing package).
_import = importlib.import_module


class Peer:
    """A library timed next to rocpy; subclasses define ``v_<kind>`` variant builders.

    Kinds: ``copy(direction, memory, dst, src, nbytes, ops)`` (``ops`` async
    copies then a synchronize), ``small_copy(direction, dst, src, nbytes)``
    (one synchronous copy), ``launch_sync()``, ``launch_batch(n)``,
    ``graph(n)``.  A builder returns a no-argument callable, or None when the
    peer has no equivalent.
    """

    name = "peer"
    backends: tuple[str, ...] = ()
    package = ""

    def __init__(self) -> None:
        self.env: Any = None

    def setup(self, env: Any) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def variant(self, kind: str, **params: Any) -> Callable[[], object] | None:
        build = getattr(self, "v_" + kind, None)
        if build is None:
            return None
        try:
            result: Callable[[], object] | None = build(**params)
            return result
        except Exception as exc:  # a peer's problem is a note, never a failed run
            self.env.note(f"{self.name}: no {kind.replace('_', ' ')} variant "
                          f"({type(exc).__name__}: {exc})")
            return None

    def kernel_image(self) -> bytes:
        with open(self.env.kernel_file(), "rb") as f:
            return f.read()


def _status(result: Any, call: str) -> tuple[Any, ...]:
    """hip-python's ``(err, *values)`` returns: raise on failure, return the values."""
    if isinstance(result, tuple):
        err, rest = result[0], result[1:]
    else:
        err, rest = result, ()
    code = getattr(err, "value", err)
    if code not in (0, None):
        raise RuntimeError(f"{call} returned {err}")
    return rest


class HipPython(Peer):
    """AMD's hip-python (``from hip import hip``): the same HIP calls through its Cython layer."""

    name = "hip-python"
    backends = ("amd",)
    package = "hip-python"

    def setup(self, env: Any) -> None:
        self.env = env
        self.hip = hip = _import("hip.hip")
        _status(hip.hipSetDevice(env.device.index), "hipSetDevice")
        (self.stream,) = _status(hip.hipStreamCreate(), "hipStreamCreate")
        self._func = None

    def close(self) -> None:
        self.hip.hipStreamDestroy(self.stream)

    def _kind(self, direction: str) -> Any:
        k = self.hip.hipMemcpyKind
        return {"H2D": k.hipMemcpyHostToDevice, "D2H": k.hipMemcpyDeviceToHost,
                "D2D": k.hipMemcpyDeviceToDevice}[direction]

    def v_copy(self, direction: str, memory: str, dst: int, src: int, nbytes: int,
               ops: int) -> Callable[[], object]:
        hip, stream, kind = self.hip, self.stream, self._kind(direction)
        memcpy, sync = hip.hipMemcpyAsync, hip.hipStreamSynchronize

        def run() -> None:
            for _ in range(ops):
                _status(memcpy(dst, src, nbytes, kind, stream), "hipMemcpyAsync")
            _status(sync(stream), "hipStreamSynchronize")
        return run

    def v_small_copy(self, direction: str, dst: int, src: int, nbytes: int) -> Callable[[], object]:
        memcpy, kind = self.hip.hipMemcpy, self._kind(direction)
        return lambda: _status(memcpy(dst, src, nbytes, kind), "hipMemcpy")

    def _function(self) -> Any:
        if self._func is None:
            hip = self.hip
            (module,) = _status(hip.hipModuleLoadData(self.kernel_image()), "hipModuleLoadData")
            (self._func,) = _status(hip.hipModuleGetFunction(module, b"empty"),
                                    "hipModuleGetFunction")
        return self._func

    def v_launch_sync(self) -> Callable[[], object]:
        hip, f, s = self.hip, self._function(), self.stream
        launch, sync = hip.hipModuleLaunchKernel, hip.hipStreamSynchronize

        def run() -> None:
            _status(launch(f, 1, 1, 1, 1, 1, 1, 0, s, None, None), "hipModuleLaunchKernel")
            _status(sync(s), "hipStreamSynchronize")
        return run

    def v_launch_batch(self, n: int) -> Callable[[], object]:
        hip, f, s = self.hip, self._function(), self.stream
        launch, sync = hip.hipModuleLaunchKernel, hip.hipStreamSynchronize

        def run() -> None:
            for _ in range(n):
                _status(launch(f, 1, 1, 1, 1, 1, 1, 0, s, None, None), "hipModuleLaunchKernel")
            _status(sync(s), "hipStreamSynchronize")
        return run

    def v_graph(self, n: int) -> Callable[[], object]:
        hip, f, s = self.hip, self._function(), self.stream
        _status(hip.hipStreamBeginCapture(s, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal),
                "hipStreamBeginCapture")
        for _ in range(n):
            _status(hip.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, None, None),
                    "hipModuleLaunchKernel")
        (graph,) = _status(hip.hipStreamEndCapture(s), "hipStreamEndCapture")
        (exe,) = _status(hip.hipGraphInstantiate(graph, None, None, 0), "hipGraphInstantiate")
        launch, sync = hip.hipGraphLaunch, hip.hipStreamSynchronize

        def run() -> None:
            _status(launch(exe, s), "hipGraphLaunch")
            _status(sync(s), "hipStreamSynchronize")
        return run


class CuPy(Peer):
    """CuPy: ``cupy.cuda.runtime`` copies and a ``RawModule`` launch on a CuPy stream."""

    name = "CuPy"
    backends = ("nvidia",)
    package = "cupy-cuda12x"

    def setup(self, env: Any) -> None:
        self.env = env
        self.cp = cp = _import("cupy")
        cp.cuda.Device(env.device.index).use()
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.rt = cp.cuda.runtime
        self._func = None

    def _kind(self, direction: str) -> int:
        rt = self.rt
        kinds: dict[str, int] = {"H2D": rt.memcpyHostToDevice, "D2H": rt.memcpyDeviceToHost,
                                 "D2D": rt.memcpyDeviceToDevice}
        return kinds[direction]

    def v_copy(self, direction: str, memory: str, dst: int, src: int, nbytes: int,
               ops: int) -> Callable[[], object]:
        memcpy, kind, sp, sync = self.rt.memcpyAsync, self._kind(direction), self.stream.ptr, \
            self.stream.synchronize

        def run() -> None:
            for _ in range(ops):
                memcpy(dst, src, nbytes, kind, sp)
            sync()
        return run

    def v_small_copy(self, direction: str, dst: int, src: int, nbytes: int) -> Callable[[], object]:
        memcpy, kind = self.rt.memcpy, self._kind(direction)
        return lambda: memcpy(dst, src, nbytes, kind)

    def _function(self) -> Any:
        if self._func is None:
            self._func = self.cp.RawModule(path=self.env.kernel_file()).get_function("empty")
        return self._func

    def v_launch_sync(self) -> Callable[[], object]:
        f, s = self._function(), self.stream

        def run() -> None:
            f((1,), (1,), (), stream=s)
            s.synchronize()
        return run

    def v_launch_batch(self, n: int) -> Callable[[], object]:
        f, s = self._function(), self.stream

        def run() -> None:
            for _ in range(n):
                f((1,), (1,), (), stream=s)
            s.synchronize()
        return run

    def _vadd(self) -> Any:
        if getattr(self, "_vadd_func", None) is None:
            self._vadd_func = self.cp.RawModule(path=self.env.kernel_file()).get_function("vadd")
        return self._vadd_func

    def v_launch4_sync(self, pointers: tuple[int, ...]) -> Callable[[], object]:
        import numpy as np
        f, s, args = self._vadd(), self.stream, (*pointers, np.int32(1))

        def run() -> None:
            f((1,), (1,), args, stream=s)
            s.synchronize()
        return run

    def v_launch4_batch(self, pointers: tuple[int, ...], n: int) -> Callable[[], object]:
        import numpy as np
        f, s, args = self._vadd(), self.stream, (*pointers, np.int32(1))

        def run() -> None:
            for _ in range(n):
                f((1,), (1,), args, stream=s)
            s.synchronize()
        return run

    def v_graph(self, n: int) -> Callable[[], object]:
        f, s = self._function(), self.stream
        s.begin_capture()
        try:
            for _ in range(n):
                f((1,), (1,), (), stream=s)
        finally:
            graph = s.end_capture()

        def run() -> None:
            graph.launch(s)
            s.synchronize()
        return run


class CudaCore(Peer):
    """NVIDIA's cuda.core: ``launch(stream, config, kernel)`` and ``Buffer`` copies."""

    name = "cuda.core"
    backends = ("nvidia",)
    package = "cuda-core"

    def setup(self, env: Any) -> None:
        self.env = env
        try:
            cc = _import("cuda.core")      # 0.3+ exports Device here; older ones in .experimental
            if not hasattr(cc, "Device"):
                raise AttributeError("cuda.core.Device")
        except (ImportError, AttributeError):
            cc = _import("cuda.core.experimental")
        self.cc = cc
        self.dev = cc.Device(env.device.index)
        self.dev.set_current()
        self.stream = self.dev.create_stream()
        self._code: Any = None

    def close(self) -> None:
        self.stream.close()

    def _get_kernel(self, name: str) -> Any:
        cc = self.cc
        if self._code is None:
            data = self.kernel_image()
            oc = cc.ObjectCode
            self._code = oc.from_cubin(data) if hasattr(oc, "from_cubin") else oc(data, "cubin")
        return self._code.get_kernel(name)

    def _launcher(self, name: str = "empty", args: tuple[Any, ...] = ()) -> Callable[[], object]:
        cc = self.cc
        k, s = self._get_kernel(name), self.stream
        config = cc.LaunchConfig(grid=1, block=1)
        try:
            cc.launch(s, config, k, *args)      # cuda.core 0.2+

            def launch() -> None:
                cc.launch(s, config, k, *args)
        except TypeError:                       # 0.1: launch(kernel, config), stream in config
            config = cc.LaunchConfig(grid=1, block=1, stream=s)
            cc.launch(k, config, *args)

            def launch() -> None:
                cc.launch(k, config, *args)
        s.sync()
        return launch

    def v_launch4_sync(self, pointers: tuple[int, ...]) -> Callable[[], object]:
        import numpy as np
        launch, sync = self._launcher("vadd", (*pointers, np.int32(1))), self.stream.sync

        def run() -> None:
            launch()
            sync()
        return run

    def v_launch4_batch(self, pointers: tuple[int, ...], n: int) -> Callable[[], object]:
        import numpy as np
        launch, sync = self._launcher("vadd", (*pointers, np.int32(1))), self.stream.sync

        def run() -> None:
            for _ in range(n):
                launch()
            sync()
        return run

    def v_launch_sync(self) -> Callable[[], object]:
        launch, sync = self._launcher(), self.stream.sync

        def run() -> None:
            launch()
            sync()
        return run

    def v_launch_batch(self, n: int) -> Callable[[], object]:
        launch, sync = self._launcher(), self.stream.sync

        def run() -> None:
            for _ in range(n):
                launch()
            sync()
        return run

    def v_copy(self, direction: str, memory: str, dst: int, src: int, nbytes: int,
               ops: int) -> Callable[[], object] | None:
        buf = self.cc.Buffer
        if not hasattr(buf, "from_handle"):
            return None
        d, s = buf.from_handle(dst, nbytes), buf.from_handle(src, nbytes)
        stream, sync = self.stream, self.stream.sync
        copy = d.copy_from

        def run() -> None:
            for _ in range(ops):
                copy(s, stream=stream)
            sync()
        return run


PEERS: tuple[type[Peer], ...] = (HipPython, CuPy, CudaCore)


def active(env: Any) -> list[Peer]:
    """The peers set up for this run (once per run; notes say why others are missing)."""
    if not env.plan.compare:
        return []
    peers = getattr(env, "_peers", None)
    if peers is not None:
        result: list[Peer] = peers
        return result
    peers = []
    elsewhere = []
    for cls in PEERS:
        if env.backend not in cls.backends:
            elsewhere.append(f"{cls.name} ({'/'.join(cls.backends)})")
            continue
        peer = cls()
        try:
            peer.setup(env)
        except ImportError as exc:
            env.note(f"--compare: {cls.name} is not installed (pip install {cls.package}): "
                     f"skipped [{exc}]")
            continue
        except Exception as exc:
            env.note(f"--compare: {cls.name} could not be set up, skipped "
                     f"({type(exc).__name__}: {exc})")
            continue
        env.at_close(peer.close)
        peers.append(peer)
    if elsewhere:
        env.note(f"--compare: {', '.join(elsewhere)} compare on those backends only, not on "
                 f"{env.backend}")
    env._peers = peers
    return peers


# ---- C reference programs ------------------------------------------------------------------

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


#: hip_ref.c's launch loops as a library (benchmarks/c/hip_ref_loops.c, nvidia), where
#: benchmarks/c/hip_ref.sh leaves it
C_LOOPS = "build/hip-ref/libhip_ref_loops.so"


class CLoops:
    """benchmarks/c/hip_ref_loops.c loaded in this process: ``launch(n)``, ``launch4(n)``
    (n launches of ``empty`` / the 4-argument ``vadd`` from C) and ``sync()`` of its
    stream, each raising RuntimeError on a failed call: the "C" variant of the launch
    cases, timed in the same rounds as the others."""

    def __init__(self, path: str, kernel_file: str) -> None:
        import ctypes
        lib = ctypes.CDLL(path)
        for name in ("ref_open", "ref_launch", "ref_launch4", "ref_sync"):
            getattr(lib, name).restype = ctypes.c_int
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

    def sync(self) -> None:
        self._check(self._lib.ref_sync(), "ref_sync")


def c_loops(env: Any) -> CLoops | None:
    """The in-process C launch loops for ``env`` (nvidia, ``--compare``, built by
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
                 "the launch cases have no in-process C variant")
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


__all__ = ["C_LOOPS", "C_PROGRAMS", "CLoops", "PEERS", "CuPy", "CudaCore", "HipPython", "Peer", "active", "c_program",
           "c_references", "stub_hsa_bench_path"]
