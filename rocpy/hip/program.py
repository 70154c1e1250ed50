"""`Program`: HIP C++ source compiled at run time into a `Module`.

::

    prog = rocpy.hip.Program('''
        extern "C" __global__ void scale(float *x, float a, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) x[i] *= a;
        }''', name="scale.hip")
    mod = prog.compile(dev, options=["-O3"])
    mod["scale"].launch(grid, block, (buf, np.float32(2), np.int32(n)))

With hipRTC (``hiprtc.h``) where the backend has it: for the device's target
(``--offload-arch=<target id>``; ``--gpu-architecture=compute_XY`` on
nvidia).  The stub's hipRTC compiles with rocpy's compiler driver
(``rocpy cpukern build``: hipcc's code object and the CPU build of
`rocpy.cpukern` in one file, so the kernels run; C programs on the drop-in
libraries get the same).  Where there is no hipRTC (Debian ROCm builds
without it, whose ``hiprtcCreateProgram`` is in `rocpy.hip.missing`), the
installed ``hipcc --genco`` compiles instead.  ``name_expressions``
(``'scale<float>'``) instantiate template kernels; ``lowered_names`` maps each
to its kernel's name in the module.  A failed compilation raises
`rocpy.HiprtcError` (``HIPRTC_ERROR_COMPILATION``) with the compiler's log in
the message and in ``.log``; no compiler at all raises
`rocpy.NotSupportedError`.  Use ``extern "C"`` to keep kernel names unmangled.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import HiprtcError, NotSupportedError, StatusError, hiprtc_error
from ._api import api
from .device import as_device
from ..codeobject import paramtypes
from .module import Module


from .._toolchain import COMPILE_TIMEOUT_S
from .._toolchain import find_hipcc as _find_hipcc


def _compile_error(call: str, log: str,
                   status_name: str = "HIPRTC_ERROR_COMPILATION") -> StatusError:
    lib = api().lib
    status = getattr(lib, status_name, 6)
    err = HiprtcError(status, status_name, f"compilation failed:\n{log.strip()}", call)
    err.log = log  # type: ignore[attr-defined]
    return err


class Program:
    """HIP source to compile; see the module docstring.

    ``headers`` maps include names to their source text.  After `compile`,
    ``log`` holds the compiler's output (also on success) and ``code`` the
    code object bytes.
    """

    def __init__(self, source: str | bytes, *, name: str = "program.hip",
                 headers: Mapping[str, str | bytes] | None = None) -> None:
        if not isinstance(source, (str, bytes)):
            raise TypeError(f"Program takes source text (str or bytes), not {type(source).__name__}")
        self.source: str = source.decode() if isinstance(source, bytes) else source
        self.name = name
        self.headers: dict[str, str] = {k: (v.decode() if isinstance(v, bytes) else str(v))
                        for k, v in (headers or {}).items()}
        self.log: str = ""
        self.code: bytes | None = None
        self.compiler: str | None = None
        #: name expression -> the kernel's (mangled) name, after `compile`
        self.lowered_names: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"<Program {self.name} ({len(self.source)} chars)>"

    def _use_hiprtc(self) -> bool:
        a = api()
        return a.has("hiprtcCreateProgram") and a.has("hiprtcCompileProgram")

    def compile(self, device: Any = None, *, options: Iterable[str] = (),
                name_expressions: Iterable[str] = ()) -> Module:
        """Compile for ``device`` (default: current) and load the result as a `Module`.

        Args:
            device: The `Device` (or its index) to compile for; None: the current one.
            options: Compiler options (``-O3``, ``-DNAME=1``, ...), passed as given.
            name_expressions: Kernels to instantiate (``'scale<float>'``, hipRTC's name
                expressions); their names in the module are in ``lowered_names`` after.

        Returns:
            The `Module` of the compiled code (also in ``self.code``, as bytes).

        Raises:
            rocpy.HiprtcError: the compilation failed; ``.log`` has the compiler's output.
            rocpy.NotSupportedError: the backend has no hipRTC and no hipcc was found, or
                has no hipRTC and ``name_expressions`` were given.
        """
        dev = as_device(device)
        opts = [str(o) for o in options]
        exprs = [str(e) for e in name_expressions]
        if self._use_hiprtc():
            code = self._hiprtc(dev, opts, exprs)
        elif exprs:
            raise NotSupportedError("name_expressions need hipRTC, which this backend lacks")
        else:
            code = self._hipcc(dev, opts)
        self.code = code
        # extern "C" kernels' names carry no types: take them from the declarations
        declared = {name: (types, False)
                    for name, types in paramtypes.parse_declarations(self.source).items()}
        return Module._load(code, dev, declared)

    def compile_bitcode(self, device: Any = None, *, options: Iterable[str] = ()) -> bytes:
        """Compile for ``device`` (default: current) with ``-fgpu-rdc``: the bitcode
        (``hiprtcGetBitcode``) that `rocpy.hip.Linker` links with others.

        Raises:
            rocpy.HiprtcError: the compilation failed; ``.log`` has the compiler's output.
            rocpy.NotSupportedError: the backend's hipRTC gives no bitcode.
        """
        if not (self._use_hiprtc() and api().has("hiprtcGetBitcode")):
            raise NotSupportedError("this backend's hipRTC gives no bitcode (hiprtcGetBitcode: "
                                    "ROCm 5.7 headers on)")
        opts = [str(o) for o in options]
        if "-fgpu-rdc" not in opts:
            opts.append("-fgpu-rdc")
        code = self._hiprtc(as_device(device), opts, [], bitcode=True)
        self.code = code
        return code

    # ---- hipRTC ---------------------------------------------------------------------

    def _hiprtc(self, dev: Any, opts: list[str], exprs: list[str], bitcode: bool = False) -> bytes:
        a = api()
        ffi, lib = a.ffi, a.lib
        if a.name == "nvidia":
            if not any(o.startswith(("--gpu-architecture", "-arch")) for o in opts):
                major, minor = dev.compute_capability
                opts.append(f"--gpu-architecture=compute_{major}{minor}")
        elif not any(o.startswith("--offload-arch") for o in opts):
            opts.append(f"--offload-arch={dev.target_id}")
        prog = ffi.new("hiprtcProgram *")
        names = [ffi.new("char[]", k.encode()) for k in self.headers]
        texts = [ffi.new("char[]", v.encode()) for v in self.headers.values()]
        st = lib.hiprtcCreateProgram(prog, self.source.encode(), self.name.encode(),
                                     len(names), ffi.new("char *[]", texts) if texts else ffi.NULL,
                                     ffi.new("char *[]", names) if names else ffi.NULL)
        if st:
            raise hiprtc_error(st, "hiprtcCreateProgram")
        self.compiler = "hiprtc"
        try:
            c_exprs = [ffi.new("char[]", e.encode()) for e in exprs]
            for e in c_exprs:
                st = lib.hiprtcAddNameExpression(prog[0], e)
                if st:
                    raise hiprtc_error(st, "hiprtcAddNameExpression")
            c_opts = [ffi.new("char[]", o.encode()) for o in opts]
            st = lib.hiprtcCompileProgram(prog[0], len(c_opts),
                                          ffi.new("char *[]", c_opts) if c_opts else ffi.NULL)
            self.log = self._rtc_log(prog[0])
            if st:
                err = hiprtc_error(st, "hiprtcCompileProgram")
                full = type(err)(err.status, err.name,
                                 f"{err.message}; log:\n{self.log.strip()}", err.call)
                full.log = self.log  # type: ignore[attr-defined]
                raise full
            size = ffi.new("size_t *")
            get_size, get = (("hiprtcGetBitcodeSize", "hiprtcGetBitcode") if bitcode else
                             ("hiprtcGetCodeSize", "hiprtcGetCode"))
            st = getattr(lib, get_size)(prog[0], size)
            if st:
                raise hiprtc_error(st, get_size)
            buf = ffi.new("char[]", size[0])
            st = getattr(lib, get)(prog[0], buf)
            if st:
                raise hiprtc_error(st, get)
            lowered = ffi.new("const char **")
            self.lowered_names = {}
            for e, c_e in zip(exprs, c_exprs):
                st = lib.hiprtcGetLoweredName(prog[0], c_e, lowered)
                if st:
                    raise hiprtc_error(st, "hiprtcGetLoweredName")
                self.lowered_names[e] = ffi.string(lowered[0]).decode()
            return bytes(ffi.buffer(buf, size[0]))
        finally:
            lib.hiprtcDestroyProgram(prog)

    def _rtc_log(self, prog: Any) -> str:
        a = api()
        size = a.ffi.new("size_t *")
        if a.lib.hiprtcGetProgramLogSize(prog, size) or size[0] <= 1:
            return ""
        buf = a.ffi.new("char[]", size[0])
        if a.lib.hiprtcGetProgramLog(prog, buf):
            return ""
        result: str = a.ffi.string(buf).decode("utf-8", "replace")
        return result

    # ---- hipcc ----------------------------------------------------------------------

    def _hipcc(self, dev: Any, opts: list[str]) -> bytes:
        if api().name == "nvidia":
            raise NotSupportedError("no hipRTC on this nvidia backend and hipcc cannot target it")
        hipcc = _find_hipcc()
        if hipcc is None:
            raise NotSupportedError("this backend has no hipRTC and no hipcc was found "
                                    "(install hipcc, or set HIPCC or ROCM_PATH)")
        self.compiler = hipcc
        with tempfile.TemporaryDirectory(prefix="rocpy-program-") as tmp:
            base = os.path.basename(self.name) or "program.hip"
            if not base.endswith((".hip", ".cpp", ".cu", ".cc")):
                base += ".hip"
            src = os.path.join(tmp, base)
            with open(src, "w") as f:
                f.write(self.source)
            for hname, text in self.headers.items():
                hpath = os.path.join(tmp, hname)
                os.makedirs(os.path.dirname(hpath), exist_ok=True)
                with open(hpath, "w") as f:
                    f.write(text)
            out = os.path.join(tmp, "program.hsaco")
            if not any(o.startswith("--offload-arch") for o in opts):
                opts = opts + [f"--offload-arch={dev.target_id}"]
            # hipRTC declares the HIP built-ins itself; hipcc needs the runtime header
            cmd = [hipcc, "--genco", "-include", "hip/hip_runtime.h", *opts, f"-I{tmp}", src,
                   "-o", out]
            env = dict(os.environ, HIP_PLATFORM="amd")
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp,
                                      timeout=COMPILE_TIMEOUT_S)
            except OSError as exc:
                raise NotSupportedError(f"cannot run {hipcc}: {exc}") from None
            except subprocess.TimeoutExpired:
                raise _compile_error("hipcc", f"hipcc did not finish in {COMPILE_TIMEOUT_S} s "
                                     "(rocpy._toolchain.COMPILE_TIMEOUT_S)") from None
            self.log = (proc.stdout + proc.stderr).replace(tmp + os.sep, "")
            if proc.returncode != 0 or not os.path.exists(out):
                raise _compile_error("hipcc", self.log or f"hipcc exited with {proc.returncode}")
            with open(out, "rb") as f:
                return f.read()


__all__ = ["Program"]
