"""`Linker`: programs compiled separately (``-fgpu-rdc``) linked into one `Module`.

::

    a = rocpy.hip.Program(caller_src, name="a.hip").compile_bitcode(dev)
    b = rocpy.hip.Program(callee_src, name="b.hip").compile_bitcode(dev)
    mod = rocpy.hip.Linker(a, b).link(dev)       # a kernel of a may call b's functions

cuda.core's shape (``Linker(*object_codes).link(...)``) over hipRTC's linker
(``hiprtcLinkCreate`` ... ``hiprtcLinkComplete``, headers of ROCm 5.7 on); the
inputs are what `Program.compile_bitcode` returns (``hiprtcGetBitcode``: LLVM
bitcode on ROCm, a unit of the CPU build on the stub, docs/cpu-kernels.md).  A
failed link raises `rocpy.HiprtcError` (``HIPRTC_ERROR_LINKING``) with the
linker's error log in the message and in ``.log``; a backend whose hipRTC has
no linker raises `rocpy.NotSupportedError`.
"""
from __future__ import annotations

from typing import Any

from ..errors import NotSupportedError, hiprtc_error
from ._api import api
from .device import as_device
from .module import Module

_LOG_BYTES = 64 * 1024


class Linker:
    """Bitcode to link (``bytes``, from `Program.compile_bitcode`); see the module docstring.

    After `link`, ``log`` holds the linker's error log (empty on success) and
    ``code`` the linked code object's bytes.
    """

    def __init__(self, *inputs: bytes) -> None:
        for i, data in enumerate(inputs):
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise TypeError(f"inputs[{i}] must be bytes (Program.compile_bitcode's), "
                                f"not {type(data).__name__}")
            if not len(data):
                raise ValueError(f"inputs[{i}] is empty")
        if not inputs:
            raise ValueError("inputs: give at least one bitcode to link")
        self.inputs: tuple[bytes, ...] = tuple(bytes(d) for d in inputs)
        self.log: str = ""
        self.code: bytes | None = None

    def __repr__(self) -> str:
        return f"<Linker of {len(self.inputs)} input(s)>"

    def link(self, device: Any = None) -> Module:
        """Link the inputs for ``device`` (default: current) and load the result.

        Raises:
            rocpy.HiprtcError: the link failed (``HIPRTC_ERROR_LINKING``); ``.log`` says why.
            rocpy.NotSupportedError: the backend's hipRTC has no linker.
        """
        a = api()
        if not (a.has("hiprtcLinkCreate") and a.has("hiprtcLinkComplete")):
            raise NotSupportedError("this backend's hipRTC has no linker (hiprtcLinkCreate: "
                                    "ROCm 5.7 headers on)")
        dev = as_device(device)
        ffi = a.ffi
        lib: Any = a.lib          # the 5.2 headers (the typed stubs) declare no linker
        log = ffi.new("char[]", _LOG_BYTES)
        opts = ffi.new("hiprtcJIT_option[]", [lib.HIPRTC_JIT_ERROR_LOG_BUFFER,
                                             lib.HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES])
        vals = ffi.new("void *[]", [log, ffi.cast("void *", _LOG_BYTES)])
        state = ffi.new("hiprtcLinkState *")
        st = lib.hiprtcLinkCreate(2, opts, vals, state)
        if st:
            raise hiprtc_error(st, "hiprtcLinkCreate")
        try:
            for i, data in enumerate(self.inputs):
                st = lib.hiprtcLinkAddData(state[0], lib.HIPRTC_JIT_INPUT_LLVM_BITCODE,
                                           ffi.from_buffer(data), len(data), f"input{i}".encode(),
                                           0, ffi.NULL, ffi.NULL)
                if st:
                    raise hiprtc_error(st, "hiprtcLinkAddData")
            out, size = ffi.new("void **"), ffi.new("size_t *")
            st = lib.hiprtcLinkComplete(state[0], out, size)
            self.log = ffi.string(log).decode("utf-8", "replace")
            if st:
                err = hiprtc_error(st, "hiprtcLinkComplete")
                full = type(err)(err.status, err.name, f"{err.message}; log:\n{self.log.strip()}",
                                 err.call)
                full.log = self.log  # type: ignore[attr-defined]
                raise full
            self.code = bytes(ffi.buffer(out[0], size[0]))   # the state owns it: copy first
        finally:
            lib.hiprtcLinkDestroy(state[0])
        return Module._load(self.code, dev, {})


__all__ = ["Linker"]
