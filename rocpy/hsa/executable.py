"""`Executable` and `Kernel`: code objects loaded for an agent.

::

    exe = hsa.Executable.load(gpu, "vadd.hsaco")    # offload bundle or ELF, path or bytes
    k = exe.kernel("vadd")
    k.object, k.kernarg_segment_size, k.group_segment_size, k.params
    q.dispatch(k, grid=(n,), workgroup=(256,), args=(a, b, c, np.int32(n)))

`Executable.load` picks the code object for the agent's target with
`rocpy.codeobject` (a bundle may hold several), then does what ROCr's own
users do: hsa_code_object_reader_create_from_memory,
hsa_executable_create_alt, hsa_executable_load_agent_code_object,
hsa_executable_freeze.  The reader and the code object's bytes live as long
as the executable.  A `Kernel` holds its Executable: the executable is
destroyed only after its last kernel object is gone.

Kernel arguments are packed by the shared packer (`KernelInfo.layout`,
metadata offsets, hidden arguments filled as ROCm fills them); HSA gives the
grid in work-items.
"""
from __future__ import annotations

import os
import struct
import threading
from typing import TYPE_CHECKING, Any

from .. import codeobject
from .._handle import Handle
from ..codeobject.errors import ArgumentCountError, LaunchConfigError
from ..errors import NotSupportedError, hsa_error
from ._common import agent_handle, api, read_info

if TYPE_CHECKING:
    from ..codeobject import CodeObject, KernargLayout, KernelArg, KernelInfo
    from .agent import Agent


DYNAMIC_STACK_BYTES = 1024   # HIP's default stack per work-item (hipLimitStackSize), ROCclr's

# Hidden arguments ROCclr fills with runtime objects rocpy cannot provide yet
# (VirtualGPU::submitKernelInternal): zeros would make the kernel dereference
# null on a GPU, so a kernel declaring one is refused.  hidden_multigrid_sync_arg
# is 0 there for every launch that is not cooperative, as rocpy's are.
UNSUPPORTED_HIDDEN = {
    "hidden_printf_buffer": "the printf buffer (ROCclr allocates it and prints it after the kernel)",
    "hidden_hostcall_buffer": "the hostcall buffer (ROCclr's hostcall listener thread serves it; "
                              "HIP's printf uses it)",
    "hidden_heap_v1": "the device heap (device malloc/new, a failing assert; ROCclr allocates "
                      "and initializes it)",
    "hidden_default_queue": "a device-side enqueue queue",
    "hidden_completion_action": "device-side enqueue",
    "hidden_queue_ptr": "the queue pointer (the dispatching queue's amd_queue_t)",
    "hidden_private_base": "the private aperture base (from the dispatching queue)",
    "hidden_shared_base": "the shared aperture base (from the dispatching queue)",
}


def _destroy(lib: Any, executable: Any, reader: Any, _data: Any) -> None:
    st = lib.hsa_executable_destroy(executable)
    st2 = lib.hsa_code_object_reader_destroy(reader)
    if st:
        raise hsa_error(st, "hsa_executable_destroy")
    if st2:
        raise hsa_error(st2, "hsa_code_object_reader_destroy")




class Executable(Handle):
    """A frozen HSA executable holding one code object loaded for one agent."""

    def __init__(self, agent: Agent, code: CodeObject) -> None:
        ffi, lib = api()
        h_agent = agent_handle(agent)
        data = ffi.from_buffer(code.data)
        reader = ffi.new("hsa_code_object_reader_t *")
        st = lib.hsa_code_object_reader_create_from_memory(data, len(code.data), reader)
        if st:
            raise hsa_error(st, "hsa_code_object_reader_create_from_memory")
        exe = ffi.new("hsa_executable_t *")
        try:
            profile = lib.HSA_PROFILE_FULL if agent.profile == "full" else lib.HSA_PROFILE_BASE
            st = lib.hsa_executable_create_alt(profile, lib.HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                               ffi.NULL, exe)
            if st:
                raise hsa_error(st, "hsa_executable_create_alt")
            try:
                st = lib.hsa_executable_load_agent_code_object(exe[0], h_agent, reader[0], ffi.NULL,
                                                               ffi.NULL)
                if st:
                    raise hsa_error(st, "hsa_executable_load_agent_code_object")
                st = lib.hsa_executable_freeze(exe[0], ffi.NULL)
                if st:
                    raise hsa_error(st, "hsa_executable_freeze")
            except BaseException:
                lib.hsa_executable_destroy(exe[0])
                raise
        except BaseException:
            lib.hsa_code_object_reader_destroy(reader[0])
            raise
        self.agent = agent
        self.code_object = code
        self._lock = threading.Lock()
        self._kernels: dict[str, Kernel] = {}
        # the recipe holds the code object's bytes: the reader points into them
        super().__init__(exe[0], (_destroy, lib, exe[0], reader[0], (data, code.data)),
                         parents=(agent.runtime,))

    @classmethod
    def load(cls, agent: Agent, source: str | os.PathLike[str] | bytes | bytearray | memoryview
             ) -> Executable:
        """Load a code object (ELF) or offload bundle, from a path or bytes, for `agent`.

        The bundle entry for the agent's target is chosen as ROCm chooses it;
        `rocpy.codeobject.NoMatchingTargetError` lists what the file holds
        when none fits.

        Args:
            agent: The GPU `Agent` to load for.
            source: A path (str or os.PathLike) or the file's bytes.

        Returns:
            The frozen `Executable`; ``exe.kernel(name)`` gives its kernels.

        Raises:
            ValueError: ``agent`` has no ISA (a CPU agent).
            rocpy.codeobject.NoMatchingTargetError: no entry serves the agent's target.
            rocpy.HsaError: ROCr refused the code object (its status).
        """
        agent_handle(agent)
        target = agent.target
        if target is None:
            raise ValueError(f"{agent!r} has no ISA: code objects load on GPU agents")
        if isinstance(source, (str, os.PathLike)):
            with open(source, "rb") as f:
                source = f.read()
        from ..cpukern import offer_to_stub
        code = codeobject.load(source).select(target)
        # on the stub, the CPU build of a combined file (rocpy.cpukern) runs its kernels
        with offer_to_stub(bytes(source)):
            return cls(agent, code)

    def close(self, stream: Any = None) -> None:
        """Destroy the executable once no `Kernel` of it is alive (now if none is)."""
        with self._lock:
            kernels = list(self._kernels.values())
            self._kernels.clear()
        for k in kernels:
            k.close()
        super().close(stream)

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"handle={self._h.handle:#x}"
        return f"<hsa.Executable {state} {sorted(self.code_object.kernels)} for {self.agent.name!r}>"

    @property
    def kernel_names(self) -> list[str]:
        """The kernels of the code object, by name."""
        return sorted(self.code_object.kernels)

    def kernel(self, name: str) -> Kernel:
        """The kernel `name` (its metadata name, e.g. ``'vadd'``; the ``.kd`` symbol works too)."""
        self._require_open()
        with self._lock:
            k = self._kernels.get(name)
        if k is not None and k._h is not None:
            return k
        info = self.code_object.kernels.get(name)
        if info is None:
            by_symbol = {i.symbol: i for i in self.code_object.kernels.values()}
            info = by_symbol.get(name)
        if info is None:
            raise KeyError(f"no kernel {name!r} in this executable; it has "
                           f"{', '.join(self.kernel_names) or 'no kernels'}")
        k = Kernel(self, info)
        with self._lock:
            self._kernels[name] = k
        return k

    __getitem__ = kernel

    def __contains__(self, name: object) -> bool:
        return name in self.code_object.kernels


_PACKET = struct.Struct("<HHHHHHIIIIIQQQQ")   # hsa_kernel_dispatch_packet_t
_SCOPES = {"none": 0, "agent": 1, "system": 2}


def fence_bits(fences: Any) -> int:
    """Header bits for ``fences``: None (system, system), a scope, or (acquire, release)."""
    _, lib = api()
    if fences is None:
        acq = rel = "system"
    elif isinstance(fences, str):
        acq = rel = fences
    else:
        try:
            acq, rel = fences
        except (TypeError, ValueError):
            raise ValueError("fences must be None, a scope ('none', 'agent', 'system') or an "
                             f"(acquire, release) pair of scopes, not {fences!r}") from None
    try:
        a, r = _SCOPES[acq], _SCOPES[rel]
    except (KeyError, TypeError):
        raise ValueError(f"fence scopes must be 'none', 'agent' or 'system', not {fences!r}") from None
    return ((a << lib.HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
            (r << lib.HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE))


def _dims(value: Any, what: str, limit: int) -> tuple[int, ...]:
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not 1 <= len(items) <= 3:
        raise LaunchConfigError(f"{what} must be an int or 1 to 3 ints, got {value!r}")
    out = []
    for d in items:
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            raise LaunchConfigError(f"{what} must be an int or 1 to 3 ints, got {value!r}")
        d = d.__index__()
        if not 1 <= d <= limit:
            raise LaunchConfigError(f"{what} sizes must be between 1 and {limit}, got {value!r}")
        out.append(d)
    return tuple(out)


class Kernel(Handle):
    """A kernel of an `Executable` (``executable``; borrowed: the executable owns it).

    ``object`` is the kernel object (the code descriptor's address) that AQL
    packets name; segment sizes and alignment come from
    hsa_executable_symbol_get_info, ``info``/``params``/``layout`` from the
    code object metadata.
    """

    def __init__(self, executable: Executable, info: KernelInfo) -> None:
        ffi, lib = api()
        agent = executable.agent
        sym = ffi.new("hsa_executable_symbol_t *")
        st = lib.hsa_executable_get_symbol_by_name(executable._require_open(),
                                                   info.symbol.encode(),
                                                   ffi.new("hsa_agent_t *", agent._require_open()),
                                                   sym)
        if st:
            raise hsa_error(st, "hsa_executable_get_symbol_by_name")

        def get(attr: str, kind: str) -> Any:
            return read_info(lib.hsa_executable_symbol_get_info, (sym[0],), getattr(lib, attr), kind,
                             "hsa_executable_symbol_get_info")

        self.name: str = info.name
        self.symbol: str = info.symbol
        self.info = info
        self.executable = executable
        self.agent = agent
        self._agent_hv: int = agent._hv
        self.object: int = get("HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT", "u64")
        self.kernarg_segment_size: int = get("HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE",
                                             "u32")
        self.kernarg_segment_alignment: int = get(
            "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT", "u32")
        self.group_segment_size: int = get("HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE",
                                           "u32")
        self.private_segment_size: int = get(
            "HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE", "u32")
        self.dynamic_callstack: bool = get("HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK",
                                           "bool")
        self.layout: KernargLayout = info.layout
        # bytes each dispatch copies: what the metadata packs, at least what HSA reserves
        self._kernarg_pad = max(0, self.kernarg_segment_size - self.layout.size)
        self._nargs = len(self.layout.params)
        self._packs = bool(self._nargs or self.layout.hidden)
        # the layout's generated packer, positional: (args, grid, block, grid_blocks, lds, hidden)
        self._pack = self.layout.packers[0]
        self._no_args = bytes(self.kernarg_segment_size)
        self._pad_bytes = bytes(self._kernarg_pad)
        # the bytes every dispatch copies to the kernarg ring
        self._kernarg_len = (self.layout.size + self._kernarg_pad if self._packs
                             else self.kernarg_segment_size)
        self._max_wg = (agent.workgroup_max_size, agent.workgroup_max_dim)
        # borrowed, refers to its executable by attribute (a cycle the collector
        # frees); dispatches keep the executable itself alive
        super().__init__(sym[0], None)

    @property
    def _dynamic_stack(self) -> bool:
        return bool(self.dynamic_callstack or self.info.uses_dynamic_stack)

    @property
    def private_size_needed(self) -> int:
        """The private segment bytes per work-item a dispatch must give this kernel.

        Its fixed size; with a dynamic call stack (recursion, indirect calls)
        max(fixed size, `DYNAMIC_STACK_BYTES`), as ROCclr's
        VirtualGPU::submitKernelInternal sets (max(StackSize(), private size)).
        """
        fixed = self.private_segment_size
        return max(fixed, DYNAMIC_STACK_BYTES) if self._dynamic_stack else fixed

    def _check_hidden(self) -> None:
        """Refuse a kernel whose metadata asks for a hidden argument rocpy cannot fill."""
        for a in self.layout.hidden:
            what = UNSUPPORTED_HIDDEN.get(a.value_kind)
            if what is not None:
                raise NotSupportedError(
                    f"kernel {self.name!r} declares hidden argument {a.value_kind} "
                    f"(offset {a.offset}): {what}; rocpy.hsa cannot provide it yet and a zero "
                    "would fault on a GPU. Launch it through rocpy.hip, or build it without "
                    "(code object v4: -mcode-object-version=4)")

    def _check_kernel_limits(self, g3: tuple[int, ...], w3: tuple[int, ...], total: int) -> None:
        """The kernel's own workgroup rules from its metadata (hipamd ihipLaunchKernel_validate,
        ihipModuleLaunchKernel): the hardware does not check them, the kernel computes garbage."""
        info = self.info
        limit = info.max_flat_workgroup_size
        if limit and total > limit:
            raise LaunchConfigError(f"a workgroup of {total} work-items; kernel {self.name!r} was "
                                    f"compiled for at most {limit} (max_flat_workgroup_size, "
                                    "__launch_bounds__)")
        reqd = info.reqd_workgroup_size
        if reqd and tuple(reqd) + (1,) * (3 - len(reqd)) != tuple(w3):
            raise LaunchConfigError(f"kernel {self.name!r} requires workgroup {tuple(reqd)} "
                                    f"(reqd_work_group_size), got {tuple(w3)}")
        if info.uniform_work_group_size and any(g % w for g, w in zip(g3, w3)):
            raise LaunchConfigError(f"kernel {self.name!r} was compiled for uniform workgroups "
                                    f"(uniform_work_group_size): grid {tuple(g3)} is not a "
                                    f"multiple of workgroup {tuple(w3)}")

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"object={self.object:#x}"
        return f"<hsa.Kernel {self.name} {state} kernarg={self.kernarg_segment_size}>"

    @property
    def params(self) -> tuple[KernelArg, ...]:
        """The explicit parameters (names, kinds, sizes, offsets) from the metadata."""
        return self.layout.params

    @property
    def wavefront_size(self) -> int:
        """Work-items per wavefront the kernel was compiled for (32 or 64), from its metadata."""
        return self.info.wavefront_size

    def prepare(self, grid: Any, workgroup: Any, args: Any = (), **options: Any) -> Any:
        """A `rocpy.hsa.Dispatch` of this kernel, for `Queue.dispatch_many`."""
        from .dispatch import Dispatch
        return Dispatch(self, grid, workgroup, args, **options)

    def pack(self, args: Any = (), grid: Any = None, workgroup: Any = None,
             dynamic_lds: int = 0) -> bytes:
        """The kernarg segment for `args` (grid in work-items), as the dispatch copies it."""
        if not self._packs:
            if args:
                raise ArgumentCountError(f"{self.name}() takes 0 arguments ({len(args)} given)")
            return self._no_args
        data = self._pack(args, grid, workgroup, None, dynamic_lds, None)
        return data + self._pad_bytes if self._kernarg_pad else data

    def packet(self, grid: Any, workgroup: Any, *, barrier: bool = True, fences: Any = None,
               group_segment_size: int | None = None, private_segment_size: int | None = None,
               dynamic_lds: int = 0, completion_signal: int = 0) -> bytes:
        """The 64-byte kernel dispatch packet (header included; no kernarg address).

        Checks the agent's limits and the kernel's own (metadata:
        ``max_flat_workgroup_size``, ``reqd_workgroup_size``,
        ``uniform_work_group_size``); the private segment defaults to what
        the kernel needs: its fixed size, and for a dynamic call stack at
        least HIP's default stack (`DYNAMIC_STACK_BYTES`), as ROCclr does.
        """
        _, lib = api()
        g = _dims(grid, "grid", (1 << 32) - 1)
        max_size, max_dim = self._max_wg
        w = _dims(workgroup, "workgroup", 65535)
        for i, (n, m) in enumerate(zip(w, max_dim)):
            if n > m:
                raise LaunchConfigError(f"workgroup dimension {i} is {n}; the agent allows {m}")
        total = 1
        for n in w:
            total *= n
        if total > max_size:
            raise LaunchConfigError(f"a workgroup of {total} work-items; the agent allows "
                                    f"{max_size}")
        ndim = max(len(g), len(w))
        g3 = g + (1,) * (3 - len(g))
        w3 = w + (1,) * (3 - len(w))
        self._check_kernel_limits(g3, w3, total)
        self._check_hidden()
        if dynamic_lds < 0:
            raise LaunchConfigError(f"dynamic_lds must be non-negative, got {dynamic_lds}")
        group = (self.group_segment_size + dynamic_lds if group_segment_size is None
                 else group_segment_size)
        private = self.private_size_needed if private_segment_size is None else private_segment_size
        if private < self.private_size_needed:
            raise LaunchConfigError(
                f"private_segment_size={private} is less than kernel {self.name!r} needs "
                f"({self.private_size_needed} bytes per work-item"
                + (", a dynamic call stack" if self._dynamic_stack else "") + ")")
        if not 0 <= group < 1 << 32 or not 0 <= private < 1 << 32:
            raise LaunchConfigError("segment sizes must fit in 32 bits unsigned")
        header = ((lib.HSA_PACKET_TYPE_KERNEL_DISPATCH << lib.HSA_PACKET_HEADER_TYPE) |
                  ((1 if barrier else 0) << lib.HSA_PACKET_HEADER_BARRIER) | fence_bits(fences))
        setup = ndim << lib.HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS
        return _PACKET.pack(header, setup, w3[0], w3[1], w3[2], 0, g3[0], g3[1], g3[2], private,
                            group, self.object, 0, 0, completion_signal)
