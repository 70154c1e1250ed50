"""The cases ``rocpy bench`` times, one module per family, and what runs them.

Families (``FAMILIES``): ``copy`` (bandwidth over sizes, small-copy
latency), ``dispatch`` (HIP kernel launches: batched, round trip, graph
replay), ``hsa_dispatch`` (AQL dispatch through rocpy.hsa, where the backend
has HSA), ``overhead`` (what each Pythonic call adds over the raw cffi call),
and, only when named (``EXTRA_FAMILIES``), ``kernargs`` (kernel argument packing
against ``struct.pack``), ``peer`` (copies between two devices) and
``hsa_submit`` (the producer's cost of an AQL dispatch, the queue held).
Each module has ``build(env) -> list[Bench]`` and raises `Unavailable` when
the family cannot run here (the reason is reported, the run goes on).

Every `Bench` wraps a harness `Case` (`rocpy.bench.harness`): variants timed
interleaved, warm-up dropped, median and spread kept, never one sample.
`measure` first calls each variant twice, which smoke-tests it (a peer that
fails is dropped with a note instead of failing the run) and estimates how
many repetitions fit the case's time budget.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..harness import Case, CaseResult, Progress, run_cases

#: Family names in the order they run, and the module defining each.
FAMILIES = ("copy", "dispatch", "hsa_dispatch", "overhead")
#: Families run only when named (``--only``): what ``benchmarks/bench_kernargs.py``,
#: ``bench_peer.py`` (peer copies need two devices) and ``bench_hsa_dispatch.py`` run.
EXTRA_FAMILIES = ("kernargs", "peer", "hsa_submit")
ALIASES = {"hsa": "hsa_dispatch", "copies": "copy", "launch": "dispatch"}

#: The kernels the benchmarks launch: ``empty`` and the 4-argument ``vadd`` (3
#: buffers and an int; the stub has built-in C emulations of both) and a gate the
#: stub holds a stream on (`Gate`).
KERNEL_SOURCE = r"""// rocpy bench kernels (compiled once per target into the cache folder)
#ifndef __CUDACC__
#include <hip/hip_runtime.h>
#endif
extern "C" __global__ void empty() {}
extern "C" __global__ void rocpy_bench_gate() {}
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


class Unavailable(Exception):
    """A family or case cannot run here; the message says why (reported, never fatal)."""


class NoCompiler(Unavailable):
    """No compiler for the benchmark kernels is installed."""


@dataclasses.dataclass
class Plan:
    """How much work: sizes, repetitions and the time budget per case."""

    quick: bool = False
    sizes: Sequence[int] = ()
    repeat: int | None = None        # fixed by --repeat; None: fitted to the budget
    warmup: int = 3
    budget_s: float = 0.8            # wall time one case may take (repeat fitted to it)
    min_repeat: int = 10
    max_repeat: int = 200
    compare: bool = False
    families: Sequence[str] = FAMILIES


@dataclasses.dataclass
class Bench:
    """One timed case and what it measures.

    ``kind`` is ``'bandwidth'`` (``params`` has ``direction``, ``memory``,
    ``size``) or ``'latency'``.  ``before``/``after`` run around the timing
    (hold a stream on a gate, ...).  ``reference`` variants other than
    rocpy's own are added only with ``--compare`` (raw cffi, peers).
    """

    case: Case
    family: str
    kind: str
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    before: Callable[[], object] | None = None
    after: Callable[[], object] | None = None
    title: str | None = None         # a longer description for tables


@dataclasses.dataclass
class Measured:
    """A bench and its result (None if it could not be measured; ``error`` says why)."""

    bench: Bench
    result: CaseResult | None
    error: str | None = None


def cache_dir() -> str:
    """Where compiled benchmark kernels are kept: ``$ROCPY_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/rocpy``, else ``~/.cache/rocpy``."""
    d = os.environ.get("ROCPY_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "rocpy")
    return d


from ..._toolchain import find_hipcc, find_nvcc  # noqa: E402,F401  (the one lookup)


def _run_compiler(cmd: list[str], out: str, env: dict[str, str] | None = None) -> None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"cannot run {cmd[0]}: {exc}") from None
    if proc.returncode != 0 or not os.path.exists(out):
        log = (proc.stderr or proc.stdout).strip().splitlines()
        raise Unavailable(f"{os.path.basename(cmd[0])} failed to compile the benchmark kernels"
                          + (f": {log[0]}" if log else f" (exit {proc.returncode})"))


def compile_kernels(device: Any, backend: str) -> str:
    """The benchmark kernels (`KERNEL_SOURCE`) compiled for ``device``; the cached file's path.

    amd and stub: ``hipcc --genco --offload-arch=<target ID>``, or hipRTC
    where the backend has it and no hipcc is installed; nvidia: ``nvcc
    -cubin``.  Raises `Unavailable` when nothing can compile them.
    """
    target = device.target_id
    if backend == "nvidia":
        compiler = find_nvcc()
        suffix = ".cubin"
    else:
        compiler = find_hipcc()
        suffix = ".hsaco"
    stamp = ""
    if compiler:
        with contextlib.suppress(OSError):   # a reinstalled compiler compiles afresh
            stamp = str(os.stat(os.path.realpath(compiler)).st_mtime_ns)
    key = f"{KERNEL_SOURCE}\0{compiler or 'hiprtc'}\0{stamp}"
    digest = hashlib.sha1(key.encode()).hexdigest()[:12]
    folder = cache_dir()
    name = f"bench-{target.replace(':', '_')}-{digest}{suffix}"
    path = os.path.join(folder, name)
    if os.path.exists(path):
        return path
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-"):
            pass
    except OSError:
        folder = os.path.join(tempfile.gettempdir(), f"rocpy-cache-{os.getuid()}")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    with tempfile.TemporaryDirectory(prefix="rocpy-bench-") as tmp:
        src = os.path.join(tmp, "bench.hip")
        with open(src, "w") as f:
            f.write(KERNEL_SOURCE)
        out = os.path.join(tmp, "bench" + suffix)
        if compiler is None:
            raise NoCompiler("no nvcc found (set CUDA_HOME)" if backend == "nvidia" else
                             "no hipcc found (install hipcc, or set HIPCC or ROCM_PATH)")
        if backend == "nvidia":
            _run_compiler([compiler, "-cubin", f"-arch={device.arch}", "-x", "cu", src, "-o", out],
                          out)
        else:
            _run_compiler([compiler, "--genco", f"--offload-arch={target}", src, "-o", out], out,
                          dict(os.environ, HIP_PLATFORM="amd"))
        tmp_out = path + f".{os.getpid()}.tmp"
        shutil.copyfile(out, tmp_out)
        os.replace(tmp_out, path)   # atomic: a concurrent run never reads half a file
    return path


class Env:
    """What every family shares: the backend, the device and a stream, the compiled
    kernels, notes for the report, and everything to close at the end."""

    def __init__(self, plan: Plan, device_index: int = 0) -> None:
        import rocpy
        from rocpy import hip
        self.plan = plan
        self.info = rocpy.backend()
        self.backend = self.info.name
        if self.backend == "stub":      # the benchmark kernels empty/vadd: the stub's built-ins
            from rocpy import stub
            for name in ("empty", "vadd"):
                stub.use_builtin(name)
        self.simulation = self.info.is_stub
        self.notes: list[str] = []
        self.skipped: list[dict[str, str]] = []
        self.references: list[dict[str, Any]] = []
        self.device = hip.Device(device_index)
        self.stream = self.device.create_stream(non_blocking=True)
        self._stack = contextlib.ExitStack()
        self._kernel_path: str | None = None
        self._kernel_error: str | None = None
        self._module: Any = None

    # ---- reporting ----------------------------------------------------------------------

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def skip(self, family: str, reason: str, case: str | None = None) -> None:
        entry = {"family": family, "reason": reason}
        if case:
            entry["case"] = case
        self.skipped.append(entry)

    # ---- resources ----------------------------------------------------------------------

    def keep(self, obj: Any) -> Any:
        """Close ``obj`` (anything with ``close()``) when the run ends; returns it."""
        self._stack.callback(obj.close)
        return obj

    def at_close(self, fn: Callable[[], object]) -> None:
        self._stack.callback(fn)

    def kernel_file(self) -> str:
        """The compiled benchmark kernels (compiled once, cached); raises `Unavailable`."""
        if self._kernel_path is None:
            if self._kernel_error is not None:
                raise Unavailable(self._kernel_error)
            try:
                self._kernel_path = compile_kernels(self.device, self.backend)
            except NoCompiler as exc:
                if self.backend != "amd":
                    self._kernel_error = f"{exc}: the cases that launch kernels are skipped"
                    raise Unavailable(self._kernel_error) from None
                self._kernel_path = self._hiprtc_kernels(str(exc))
            except Unavailable as exc:
                self._kernel_error = str(exc)
                raise
        return self._kernel_path

    def _hiprtc_kernels(self, why: str) -> str:
        """amd without hipcc: compile through hipRTC, cache the code object."""
        from rocpy import hip
        folder = cache_dir()
        digest = hashlib.sha1(KERNEL_SOURCE.encode()).hexdigest()[:12]
        path = os.path.join(folder, f"bench-{self.device.target_id.replace(':', '_')}-hiprtc-"
                                    f"{digest}.hsaco")
        if os.path.exists(path):
            return path
        try:
            prog = hip.Program(KERNEL_SOURCE, name="rocpy_bench.hip")
            prog.compile(self.device).close()
        except Exception as exc:
            self._kernel_error = (f"{why}, and hipRTC failed too ({exc}): the cases that "
                                  "launch kernels are skipped")
            raise Unavailable(self._kernel_error) from None
        try:
            os.makedirs(folder, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(prog.code or b"")
            os.replace(tmp, path)
        except OSError:     # no cache: keep it in a temporary file for this run
            fd, path = tempfile.mkstemp(suffix=".hsaco", prefix="rocpy-bench-")
            with os.fdopen(fd, "wb") as f:
                f.write(prog.code or b"")
            self.at_close(lambda: os.unlink(path))
        return path

    def module(self) -> Any:
        """The benchmark kernels loaded on the device (a `rocpy.hip.Module`)."""
        if self._module is None:
            from rocpy import hip
            self._module = self.keep(hip.Module.load(self.kernel_file(), self.device))
        return self._module

    def kernel(self, name: str = "empty") -> Any:
        """A kernel of `module` (``empty`` or ``rocpy_bench_gate``)."""
        return self.module()[name]

    def close(self) -> None:
        try:
            self.stream.sync()
        finally:
            self._stack.close()
            self.stream.close()


class Gate:
    """Holds a stream on the stub so that timed calls only enqueue.

    Without it each call also pays for waking the stub's worker thread, which
    is the stub's cost, not the binding's.
    A no-op on real backends, and where no kernel could be compiled.
    """

    def __init__(self, env: Env) -> None:
        self.enabled: bool = False
        self.kernel: Any = None
        if env.backend != "stub":
            return
        try:
            self.kernel = env.kernel("rocpy_bench_gate")
        except Unavailable:
            env.note("the stub's streams run while the overhead cases are timed (no gate kernel "
                     "could be compiled): their times include waking the stub's worker")
            return
        import threading

        from rocpy import stub
        self.released = threading.Event()
        self.released.set()

        def hold(_dispatch: Any) -> None:
            self.released.wait(120.0)   # never forever, even if the run dies mid-case
        stub.register_kernel("rocpy_bench_gate", hold)
        env.at_close(lambda: stub.unregister_kernel("rocpy_bench_gate"))
        env.at_close(self.released.set)
        self.enabled = True

    def hold(self, stream: Any) -> None:
        if self.enabled:
            self.released.clear()
            self.kernel.launch(1, 1, (), stream=stream)

    def release(self, stream: Any) -> None:
        if self.enabled:
            self.released.set()
        stream.sync()


def load_family(name: str) -> Any:
    """The module defining family ``name``."""
    import importlib
    return importlib.import_module(f"{__name__}.{name}")


def build(env: Env) -> list[Bench]:
    """Every bench of the plan's families; families that cannot run are noted and skipped."""
    benches: list[Bench] = []
    for name in env.plan.families:
        try:
            benches += load_family(name).build(env)
        except Unavailable as exc:
            env.skip(name, str(exc))
        except Exception as exc:  # a family that breaks while setting up must not end the run
            env.skip(name, f"setting up failed: {type(exc).__name__}: {exc}")
    return benches


# ---- running -----------------------------------------------------------------------------


def _smoke(bench: Bench, env: Env) -> tuple[Case | None, float, str | None]:
    """Call each variant twice; drop variants that fail; the second calls' total seconds."""
    case = bench.case
    ok: dict[str, Callable[[], object]] = {}
    total = 0.0
    for name, fn in case.variants.items():
        try:
            fn()
            t0 = time.perf_counter()
            fn()
            total += time.perf_counter() - t0
            ok[name] = fn
        except Exception as exc:
            msg = f"{case.name}: variant {name!r} failed and was left out ({type(exc).__name__}: {exc})"
            if name == "rocpy" or len(case.variants) == 1:
                return None, 0.0, f"{type(exc).__name__}: {exc}"
            env.note(msg)
    if not ok:
        return None, 0.0, "every variant failed"
    reference = case.reference if case.reference in ok else next(iter(ok))
    if len(ok) == len(case.variants):
        return case, total, None
    return (Case(case.name, ok, reference=reference, ops=case.ops, unit=case.unit,
                 bytes_per_op=case.bytes_per_op), total, None)


def repeats(plan: Plan, per_rep_s: float) -> int:
    """Repetitions for one case: ``plan.repeat``, or as many as fit the budget (bounded)."""
    if plan.repeat is not None:
        return plan.repeat
    if per_rep_s <= 0:
        return plan.max_repeat
    fit = int(plan.budget_s / per_rep_s) - plan.warmup
    return max(plan.min_repeat, min(plan.max_repeat, fit))


def measure(bench: Bench, env: Env,
            progress: Callable[[Progress, int], object] | None = None) -> Measured:
    """Time one bench with the harness (smoke test, fitted repetitions, before/after)."""
    plan = env.plan
    if bench.before is not None:
        bench.before()
    try:
        case, per_rep, error = _smoke(bench, env)
        if case is None:
            return Measured(bench, None, error)
        rep = repeats(plan, per_rep)
        hook: Callable[[Progress], object] | None = None
        if progress is not None:
            report, total = progress, rep + plan.warmup
            hook = lambda p: report(p, total)  # noqa: E731
        try:
            res = run_cases([case], repeat=rep, warmup=plan.warmup, progress=hook)
        except Exception as exc:
            return Measured(bench, None, f"{type(exc).__name__}: {exc}")
        return Measured(bench, res.cases[0])
    finally:
        if bench.after is not None:
            bench.after()


__all__ = [
    "ALIASES",
    "EXTRA_FAMILIES",
    "FAMILIES",
    "KERNEL_SOURCE",
    "Bench",
    "Env",
    "Gate",
    "Measured",
    "Plan",
    "Unavailable",
    "build",
    "cache_dir",
    "compile_kernels",
    "find_hipcc",
    "find_nvcc",
    "measure",
    "repeats",
]
