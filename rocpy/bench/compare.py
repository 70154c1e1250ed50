"""What ``rocpy bench --compare`` puts next to rocpy, in the same process and run.

* ``raw``: the same runtime calls through ``rocpy.hip.lib`` / ``rocpy.hsa.lib``
  with arguments prepared beforehand (the cases define it; always available);
* C: ``C loop`` variants calling C loops inside rocpy's extension, and the C
  references of ``benchmarks/c`` (`rocpy.bench.c_reference`);
* peers (`Peer`): hip-python on AMD; cuda.core and CuPy on NVIDIA.  Each is
  imported only when ``--compare`` asks for it; a peer that is not installed,
  does not apply to this backend, or fails its setup is skipped with a note,
  and a peer variant that fails its first call is left out of that case.

Peers copy between the same allocations rocpy's cases use (addresses) and
launch their own load of the same code object.  On NVIDIA they enqueue on
rocpy's stream (``env.stream``, wrapped through its ``__cuda_stream__``), as the
C loops do: which of two streams made alike a copy goes to moves a 4 KiB
pageable copy by up to 0.6 us on the H200, for every caller (benchmarks/
results/2026-12-04-h200-nvidia-session10-copy-floor.txt, and floor.py's rows
"on its own stream" / "on rocpy's"), so one stream leaves each caller's own
cost.  hip-python keeps a stream of its own.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
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
        self.own_stream = cp.cuda.Stream(non_blocking=True)   # graph capture only
        # rocpy's stream (the module docstring says why); CuPy never destroys it
        self.stream = cp.cuda.ExternalStream(env.stream.__cuda_stream__()[1])
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
        # captured on CuPy's own stream (rocpy does not see a capture it did not begin),
        # launched on the shared one
        f, own, s = self._function(), self.own_stream, self.stream
        own.begin_capture()
        try:
            for _ in range(n):
                f((1,), (1,), (), stream=own)
        finally:
            graph = own.end_capture()

        def run() -> None:
            graph.launch(s)
            s.synchronize()
        return run


def cuda_core_module() -> Any:
    """cuda.core's namespace: ``cuda.core`` (0.3+ exports ``Device`` there), else
    ``cuda.core.experimental``; ImportError where neither is installed."""
    try:
        cc = _import("cuda.core")
        if not hasattr(cc, "Device"):
            raise AttributeError("cuda.core.Device")
    except (ImportError, AttributeError):
        cc = _import("cuda.core.experimental")
    return cc


class CudaCore(Peer):
    """NVIDIA's cuda.core: ``launch(stream, config, kernel)`` and ``Buffer`` copies."""

    name = "cuda.core"
    backends = ("nvidia",)
    package = "cuda-core"

    def setup(self, env: Any) -> None:
        self.env = env
        self.cc = cc = cuda_core_module()
        self.dev = cc.Device(env.device.index)
        self.dev.set_current()
        # rocpy's stream, wrapped (the module docstring says why); closing the wrapper
        # leaves rocpy's stream alone
        self.stream = self.dev.create_stream(env.stream)
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


__all__ = ["PEERS", "CuPy", "CudaCore", "HipPython", "Peer", "active"]
