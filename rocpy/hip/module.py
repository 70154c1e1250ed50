"""`Module` and `Kernel`: code loaded on a device, and launching its kernels.

::

    mod = rocpy.hip.Module.load("vadd.hsaco", device=dev)   # bundle or ELF; cubin/PTX on nvidia
    k = mod["vadd"]
    k.params                    # KernelArg: offsets, sizes, kinds (from the code object)
    k.launch(grid=n // 256, block=256, args=(a, b, c, np.int32(n)), stream=s)

On AMD (and the stub) the file is read with `rocpy.codeobject`: the code
object matching the device's target ID is chosen (an error lists the file's
targets when none does) and loaded with ``hipModuleLoadData``; argument
layouts come from its metadata.  On NVIDIA the cubin, PTX or fatbin goes to
the driver as is and layouts come from ``cuFuncGetParamInfo``.

Launches use HIP's convention: ``grid`` counts **blocks** (not work-items),
``block`` threads per block; each an int or 1 to 3 ints.
"""
from __future__ import annotations

import os
import re
import threading
import types
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from .. import codeobject
from .._handle import Handle
from ..errors import HipError, hip_error
from . import _api, _cai
from ._api import api, use_device
from ._lane import mark as _mark
from .device import Device, as_device
from ._launch_plan import (_buffer_types, _dims, _hot_launcher, _index, _launch_args,
                           _packable, _plain, _register_buffers, kernarg_buffer, kernel_layout)
from .stream import Stream, as_stream


class KernelNotFoundError(HipError, LookupError):
    """No kernel of that name in the module (``hipErrorNotFound``)."""


def _unload(h: Any) -> None:
    """Release recipe: ``hipModuleUnload``; raises on failure."""
    st = api().lib.hipModuleUnload(h)
    if st:
        raise hip_error(st, "hipModuleUnload")


def _read(source: Any) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "<bytes>"
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        with open(path, "rb") as f:
            return f.read(), path
    raise TypeError(f"Module.load takes bytes or a path, not {type(source).__name__}")


def _carries_cpu_build(data: bytes) -> bool:
    from ..cpukern import carries_cpu_build
    return carries_cpu_build(data)


def _nvidia_names(data: bytes) -> tuple[str, ...]:
    """Kernel names of a cubin (its ``.text.<name>`` sections) or PTX (``.entry``)."""
    if data[:4] == b"\x7fELF":
        try:
            import io

            from elftools.elf.elffile import ELFFile
            elf = ELFFile(io.BytesIO(data))
            return tuple(s.name[len(".text."):] for s in elf.iter_sections()
                         if s.name.startswith(".text."))
        except Exception:
            return ()
    if b".entry" in data[:1 << 20] or b".version" in data[:4096]:
        text = data.decode("utf-8", "replace")
        return tuple(re.findall(r"\.entry\s+([A-Za-z_$][\w$]*)", text))
    return ()


class Module(Handle):
    """Code loaded on one device (``hipModuleLoadData``); ``mod["name"]`` is a `Kernel`.

    Load with `Module.load`.  Kernels hold their module, so the module lives
    while any of its kernels (or work using them) does.
    """

    __slots__ = ("_dev", "_ctx", "_image", "_code", "_names", "_kernels", "_source", "_mlock",
                 "_ptypes")
    _survives_reset = True    # hipamd keeps modules across hipDeviceReset (Device.reset)

    _dev: Device
    _ctx: Any
    _image: bytes
    _code: Any
    _names: tuple[str, ...]
    _kernels: weakref.WeakValueDictionary[str, Kernel]
    _source: str
    _mlock: threading.Lock
    _ptypes: dict[str, tuple[tuple[str, ...], bool]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("load a Module with Module.load(path_or_bytes, device=...)")

    @classmethod
    def load(cls, source: Any, device: Any = None, *,
             param_types: Mapping[str, Sequence[str]] | None = None) -> Module:
        """Load a code object file (path or bytes) on ``device`` (default: current).

        AMD/stub: an offload bundle (plain or compressed) or an AMDGPU ELF;
        the entry for the device's target is chosen
        (`rocpy.codeobject.NoMatchingTargetError` lists the file's targets
        when none matches).  nvidia: a cubin, PTX text or fatbin.

        ``param_types`` declares the parameter types of ``extern "C"`` kernels
        (``{"vadd": ("float*", "float*", "float*", "int")}``), whose names carry
        none: with them, `Kernel.launch` converts Python numbers by value;
        without, it refuses bare numbers for their 2/4/8-byte values.  A list
        that disagrees with the kernel's metadata (count, pointer or value,
        builtin sizes) raises ``ValueError`` at ``mod[name]``.  Kernels with
        mangled names are typed from their names anyway.

        Args:
            source: A path (str or os.PathLike) or the file's bytes.
            device: The `Device` (or its index) to load on; None: the current one.
            param_types: Parameter type names per ``extern "C"`` kernel.

        Returns:
            The loaded `Module`; ``module[name]`` is a `Kernel`.

        Raises:
            rocpy.codeobject.NoMatchingTargetError: no entry serves the device's target.
            rocpy.codeobject.CodeObjectError: the file is not a code object.
            rocpy.HipError: ``hipModuleLoadData`` failed (the runtime's status).
        """
        declared: dict[str, tuple[tuple[str, ...], bool]] = {}
        if param_types is not None:
            if not isinstance(param_types, Mapping):
                raise TypeError(f"param_types must be a mapping of kernel name to type names, "
                                f"not {type(param_types).__name__}")
            for name, types_ in param_types.items():
                if not isinstance(name, str) or isinstance(types_, (str, bytes)) or \
                        not all(isinstance(t, str) for t in types_):
                    raise TypeError(f"param_types[{name!r}] must be a sequence of type names "
                                    f"(str), not {types_!r}")
                declared[name] = (tuple(types_), True)
        return cls._load(source, device, declared)

    @classmethod
    def _load(cls, source: Any, device: Any,
              declared: Mapping[str, tuple[tuple[str, ...], bool]]) -> Module:
        """`load`; ``declared``: kernel name -> (types, strict): strict lists (the
        caller's) must agree with the metadata, others (parsed from source) are
        used only where they do."""
        a = api()
        dev = as_device(device)
        data, where = _read(source)
        code = None
        if a.name == "nvidia":
            is_text = data.lstrip()[:1] in (b".", b"/")
            # PTX is text and must be NUL-terminated
            image = data + b"\0" if is_text and not data.endswith(b"\0") else data
            names = _nvidia_names(data)
        else:
            co_file = codeobject.load(data) if where == "<bytes>" else \
                codeobject.CodeObjectFile(data, where)
            code = co_file.select(dev.target_id)
            image = code.data
            if a.name == "stub" and _carries_cpu_build(data):
                image = data     # the whole file: the stub's loader takes the CPU build from it
            names = tuple(code.kernels)
        use_device(dev._index)
        out = a.ffi.new("hipModule_t *")
        buf = a.ffi.from_buffer(image)
        st = a.lib.hipModuleLoadData(out, buf)
        if st:
            targets = f" (device target {dev.target_id})"
            _api.raise_status(st, "hipModuleLoadData", f"loading {where}{targets}")
        h = out[0]
        mod = cls.__new__(cls)
        try:
            Handle.__init__(mod, h, (_unload, h), parents=(dev.context,))
        except BaseException:
            a.lib.hipModuleUnload(h)
            raise
        mod._dev = dev
        mod._ctx = dev.context
        mod._image = image
        mod._code = code
        mod._names = names
        # weak: a parent must not hold its children (the handle table holds the
        # children's parents, so a strong cycle through it would never be collected)
        mod._kernels = weakref.WeakValueDictionary()
        mod._source = where
        mod._mlock = threading.Lock()
        mod._ptypes = dict(declared)
        return mod

    @property
    def device(self) -> Device:
        """The device the module is loaded on."""
        return self._dev

    @property
    def code_object(self) -> Any:
        """The `rocpy.codeobject.CodeObject` loaded (None on nvidia)."""
        return self._code

    @property
    def names(self) -> tuple[str, ...]:
        """Kernel names in the module (from metadata; cubin sections or PTX entries on nvidia)."""
        return self._names

    @property
    def kernels(self) -> Mapping[str, Kernel]:
        """Every kernel by name (read-only)."""
        return types.MappingProxyType({name: self[name] for name in self._names})

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __getitem__(self, name: str) -> Kernel:
        """The kernel ``name``; `KernelNotFoundError` (a LookupError) lists the known ones."""
        if not isinstance(name, str):
            raise TypeError(f"kernel names are str, not {type(name).__name__}")
        h = self._require_open()
        k = self._kernels.get(name)
        if k is not None and k._h is not None:
            return k
        a = api()
        use_device(self._dev._index)
        out = a.ffi.new("hipFunction_t *")
        st = a.lib.hipModuleGetFunction(out, h, name.encode())
        if st:
            known = ", ".join(self._names) or "none known"
            err = hip_error(st, "hipModuleGetFunction")
            cls = KernelNotFoundError if st == a.lib.hipErrorNotFound else type(err)
            raise cls(err.status, err.name, f"no kernel {name!r} in {self._source} "
                                            f"(kernels: {known})", "hipModuleGetFunction")
        with self._mlock:
            k = self._kernels.get(name)
            if k is None or k._h is None:
                k = self._kernels[name] = Kernel._make(self, name, out[0])
        return k

    def __repr__(self) -> str:
        if self._h is None:
            return "<Module closed>"
        return f"<Module {self._source} on Device {self._dev._index}: {list(self._names)}>"


class Kernel(Handle):
    """A kernel of a `Module` (``hipFunction_t``, borrowed: its module owns it).

    ``params`` describes the explicit arguments; `launch` packs them with a
    cached packer (`rocpy.codeobject.KernargLayout`) into one kernarg buffer
    passed through ``extra`` (``HIP_LAUNCH_PARAM_BUFFER_POINTER``).
    """

    __slots__ = ("_module", "_dev", "_dev_index", "_name", "_info", "_layout", "_pack_into",
                 "_geom_args", "_kfirst", "_extra", "_fn", "_null",
                 "_gkey", "_max_threads", "_max_block", "_max_grid",
                 "_max_shared", "_nullp", "_bufs", "_noargs", "_launcher", "_hot_launch")

    _module: Module
    _dev: Device
    _dev_index: int
    _name: str
    _info: Any
    _layout: codeobject.KernargLayout
    _pack_into: Any
    _geom_args: bool
    _kfirst: Any
    _extra: Any
    _fn: Any
    _max_threads: int
    _max_block: tuple[int, int, int]
    _max_grid: tuple[int, int, int]
    _max_shared: int
    _nullp: Any
    _bufs: list[Any]
    _noargs: bool
    _launcher: Any
    _hot_launch: Any
    _null: Stream | None
    _gkey: tuple[tuple[Any, Any, Any], tuple[int, ...]] | None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("get a Kernel with module['name']")

    @classmethod
    def _make(cls, module: Module, name: str, handle: Any) -> Kernel:
        a = api()
        ffi, lib = a.ffi, a.lib
        dev = module._dev
        k = cls.__new__(cls)
        k._module = module
        k._dev = dev
        k._dev_index = dev._index
        k._name = name
        if module._code is not None:
            k._info = module._code.kernels.get(name)
        else:
            k._info = None
        layout = kernel_layout(module, name, handle, k._info)
        Handle.__init__(k, handle, parents=(module,))
        k._layout = layout
        # the layout's generated pack_into, called positionally: (buffer, offset, args,
        # grid, block, grid_blocks, dynamic_lds, hidden); it raises naming a bad argument
        k._pack_into = layout.packers[1]
        k._geom_args = bool(layout.hidden)
        if k._info is None:
            _register_buffers()
        k._nullp = ffi.NULL
        # nothing to pack (no parameters, no hidden arguments): one constant buffer serves all
        k._noargs = not layout.params and not layout.hidden
        # One kernarg buffer per kernel, reused by every launch.  Reuse is safe
        # once hipModuleLaunchKernel returns: hipamd copies the arguments at
        # the call (hip_module.cpp ihipLaunchKernelCommand: each parameter is
        # copied with kernel->parameters().set(i, size, kernargs + offset),
        # then NDRangeKernelCommand::captureAndValidate() copies them into the
        # command; with DEBUG_HIP_KERNARG_COPY_OPT, AllocCaptureSetValidate
        # copies the buffer); graph kernel nodes copy ``extra``'s buffer too
        # (hipGraphKernelNode::copyParams); CUDA's cuLaunchKernel copies its
        # parameter buffer at launch; the stub copies in hip_launch_prepare.
        # Buffers are taken from a small pool (list.pop/append are atomic), so
        # threads launching the same kernel at once each pack their own.
        # ``_kfirst`` keeps the first buffer, which ``_extra`` (argument-less launches) uses,
        # alive when a failed pack drops it from the pool.
        k._kfirst = k._new_buffer()
        k._extra = k._kfirst[1]
        k._bufs = [k._kfirst]
        k._fn = lib.hipModuleLaunchKernel
        k._null = None
        k._gkey = None      # ((grid, block, shared_mem), dims) of the last immutable geometry
        max_threads = dev.max_threads_per_block
        out = ffi.new("int *")
        st = lib.hipFuncGetAttribute(out, lib.HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, handle)
        if not st and out[0] > 0:
            max_threads = min(max_threads, out[0])
        k._max_threads = max_threads
        k._max_block = dev.max_block_dims
        k._max_grid = dev.max_grid_dims
        k._max_shared = dev.shared_memory_per_block
        k._launcher = _hot_launcher(k, a)
        # called as f(kernel, grid, block, args, stream, shared_mem), compiled or not
        k._hot_launch = k._launcher.launch if k._launcher is not None else cls._launch_py
        return k

    # ---- what it is -------------------------------------------------------------

    @property
    def name(self) -> str:
        """The kernel's symbol name."""
        return self._name

    @property
    def module(self) -> Module:
        """The module it belongs to."""
        return self._module

    @property
    def device(self) -> Device:
        """The device it runs on."""
        return self._dev

    @property
    def info(self) -> Any:
        """The code object's `rocpy.codeobject.KernelInfo` (None on nvidia)."""
        return self._info

    @property
    def layout(self) -> codeobject.KernargLayout:
        """The cached argument packer."""
        return self._layout

    @property
    def params(self) -> tuple[Any, ...]:
        """The explicit parameters (`rocpy.codeobject.KernelArg`: offset, size, kind, name)."""
        return self._layout.params

    @property
    def max_threads_per_block(self) -> int:
        """The largest block this kernel can launch with (device and launch bounds)."""
        return self._max_threads

    def attribute(self, name: str) -> int:
        """A ``hipFuncGetAttribute`` value: ``"num_regs"``, ``"shared_size_bytes"``,
        ``"local_size_bytes"``, ``"max_threads_per_block"``, ``"const_size_bytes"``,
        ``"max_dynamic_shared_size_bytes"``, ``"binary_version"``, ``"ptx_version"``."""
        if not isinstance(name, str):
            raise TypeError(f"a function attribute is named by a str, not {type(name).__name__}")
        a = api()
        full = "HIP_FUNC_ATTRIBUTE_" + name.upper()
        if not hasattr(a.lib, full):
            raise _api.invalid("Kernel.attribute", f"unknown function attribute {name!r}")
        out = a.ffi.new("int *")
        st = a.lib.hipFuncGetAttribute(out, getattr(a.lib, full), self._require_open())
        if st:
            raise hip_error(st, "hipFuncGetAttribute")
        result: int = out[0]
        return result

    def __repr__(self) -> str:
        if self._h is None:
            return f"<Kernel {self._name} closed>"
        return f"<Kernel {self._name}({len(self._layout.params)} args) on Device {self._dev_index}>"

    # ---- launching ------------------------------------------------------------------

    def _geometry(self, grid: Any, block: Any, shared_mem: Any) -> tuple[int, ...]:
        """Validate a launch configuration against the device's limits; the six dims."""
        gx, gy, gz = _dims(grid, "grid")
        bx, by, bz = _dims(block, "block")
        threads = bx * by * bz
        if threads > self._max_threads:
            raise _api.fail("hipErrorInvalidConfiguration", "Kernel.launch",
                            f"block {block!r} has {threads} threads; {self._name} on Device "
                            f"{self._dev_index} allows at most {self._max_threads}")
        mb, mg = self._max_block, self._max_grid
        for axis, b, g, lb, lg in zip("xyz", (bx, by, bz), (gx, gy, gz), mb, mg):
            if b > lb:
                raise _api.fail("hipErrorInvalidConfiguration", "Kernel.launch",
                                f"block {axis} = {b} exceeds the device's {lb}")
            if g > lg:
                raise _api.fail("hipErrorInvalidConfiguration", "Kernel.launch",
                                f"grid {axis} = {g} blocks exceeds the device's {lg}")
            if g * b > 0xFFFFFFFF:
                raise _api.fail("hipErrorInvalidConfiguration", "Kernel.launch",
                                f"grid {axis} x block {axis} = {g * b} work-items does not fit "
                                "HIP's 32-bit global size")
        shared_mem = _index(shared_mem, "shared_mem")
        if not 0 <= shared_mem <= self._max_shared:
            raise _api.invalid("Kernel.launch", f"shared_mem = {shared_mem} bytes; the device "
                                                f"allows 0..{self._max_shared} per block")
        return gx, gy, gz, bx, by, bz

    def _configure(self, grid: Any, block: Any, shared_mem: Any) -> tuple[Any, ...]:
        """The validated six dims and the hidden arguments' bytes (None without any),
        for the compiled path, which caches them for immutable geometry."""
        dims = self._geometry(grid, block, shared_mem)
        layout = self._layout
        tail = None
        if layout._hidden_kinds:
            tail = layout._hidden_tail(None, _packable(block), _packable(grid),
                                       _index(shared_mem, "shared_mem"), None)
        return dims + (tail,)

    def launch(self, grid: Any, block: Any, args: Sequence[Any] = (), stream: Any = None,
               shared_mem: int = 0) -> None:
        """Enqueue the kernel: ``grid`` blocks of ``block`` threads, on ``stream``.

        ``grid`` and ``block`` are ints or 1 to 3 ints (HIP's convention:
        ``grid`` counts blocks).  ``args`` follow the kernel's parameters:
        buffers, ints, None or objects with ``__cuda_array_interface__`` for
        pointers; numbers for values, converted by value from the parameter's
        type (C++ kernels' mangled names, hipRTC sources, ``param_types=``; see
        `rocpy.codeobject.argconv`); where the type is unknown (``extern "C"``
        from a file), ``np.int32(n)``/``np.float32(x)`` say it; bytes or numpy
        structs for structs.  ``stream`` is a `Stream`, an object with
        ``__hip_stream__``/``__cuda_stream__``, or None for the device's null stream;
        ``shared_mem`` is dynamic LDS in bytes.  The configuration is checked
        against the device's limits before the call
        (``hipErrorInvalidConfiguration``/``hipErrorInvalidValue``); the
        arguments (and this kernel) are kept alive until the launch completes.

        Args:
            grid: Blocks in the grid (an int, or 1 to 3 ints).
            block: Threads in a block (an int, or 1 to 3 ints).
            args: The kernel's arguments, in order.
            stream: The stream to launch on; None: the device's null stream.
            shared_mem: Dynamic shared memory (LDS) per block, in bytes.

        Raises:
            rocpy.codeobject.KernelArgumentError: an argument does not fit its
                parameter (its subclasses say how: count, type, range, value).
            rocpy.HipError: the configuration is outside the device's limits, or
                the launch failed (the runtime's status).
            rocpy.ClosedError: the kernel's module was closed.
        """
        if self._h is None:
            raise self._closed_error()
        self._hot_launch(self, grid, block, args, stream, shared_mem)

    def _launch_py(self, grid: Any, block: Any, args: Any, stream: Any, shared_mem: Any) -> None:
        """`launch` in Python: the fallback of the compiled path, and where that path
        hands anything but its fast cases (so validation and messages live here only).
        Called unbound, as the compiled path calls it."""
        h = self._h
        if h is None:
            raise self._closed_error()
        s: Stream | None
        if type(stream) is Stream:
            s = stream
        elif stream is None:
            s = self._null
            if s is None or s._h is None:
                s = self._null = Stream._null(self._dev)
        else:
            s = as_stream(stream, self._dev)
        sh = s._enter()   # open, callback errors raised, the current device set if needed
        args = _launch_args(args)
        for a in args:   # foreign arrays: after their producer's stream (CAI v3)
            t = type(a)
            if t is not int and a is not None and t not in _buffer_types() and \
                    hasattr(t, "__cuda_array_interface__"):
                iface = _cai.interface(a)
                if iface is not None:
                    _cai.wait_for_producer(iface, _api.address(sh), "Kernel.launch")
        # cached by value for immutable geometry only (a list mutated between launches,
        # or an array, which must never be compared, is revalidated every time)
        # the cache is one tuple (geometry, dims), replaced whole: threads see a consistent one
        cached = self._gkey
        if cached is not None and _plain(grid) and _plain(block) and \
                type(shared_mem) is int and cached[0] == (grid, block, shared_mem):
            dims = cached[1]
        else:
            dims = self._geometry(grid, block, shared_mem)
            shared_mem = _index(shared_mem, "shared_mem")
            if _plain(grid) and _plain(block):
                self._gkey = ((grid, block, shared_mem), dims)
            grid, block = _packable(grid), _packable(block)
        lane = s._lane
        if lane.ready != self._dev_index:  # another device, the null stream, or a capture
            if s._dev_index != self._dev_index:
                raise _api.invalid("Kernel.launch", f"{self._name} is loaded on Device "
                                                    f"{self._dev_index}, the stream is on "
                                                    f"Device {s._dev_index}")
            if s._capture is not None:
                self._launch_captured(s, sh, args, grid, block, shared_mem)
                return
        gx, gy, gz, bx, by, bz = dims
        if self._noargs and not args:
            st = self._fn(h, gx, gy, gz, bx, by, bz, shared_mem, sh, self._nullp, self._extra)
            if st:
                raise hip_error(st, "hipModuleLaunchKernel")
            self._hold_launch(s, args)
            return
        bufs = self._bufs
        try:
            buf = bufs.pop()
        except IndexError:  # another thread is packing: use one more buffer
            buf = self._new_buffer()
        if self._geom_args:
            self._pack_into(buf[0], 0, args, None, block, grid, shared_mem, None)
        else:
            self._pack_into(buf[0], 0, args, None, None, None, 0, None)
        st = self._fn(h, gx, gy, gz, bx, by, bz, shared_mem, sh, self._nullp, buf[1])
        bufs.append(buf)
        if st:
            raise hip_error(st, "hipModuleLaunchKernel")
        self._hold_launch(s, args)

    def _hold_launch(self, s: Stream, args: Sequence[Any]) -> None:
        """Hold what a launch on ``s`` uses until it completes: this kernel (its module),
        with ``args`` where there are any.  Not again where the stream's unfenced batch
        ends with the same objects and no query of it is in progress (the device is
        still marked): one reference keeps alive what two would, and what releases that
        item covers this launch too (`_OrderedHandle._hold_once`, the one rule)."""
        if args:
            s._hold_once(self, args)
        else:
            s._hold_once(self)

    def _new_buffer(self) -> tuple[Any, Any, Any, Any]:
        """A kernarg buffer: (view to pack into, ``extra`` for the launch, then the
        memory both point to, which must live as long as they are used)."""
        return kernarg_buffer(self._layout.size)

    def _packed(self, args: Sequence[Any], grid: Any, block: Any, shared_mem: int) -> tuple[Any, ...]:
        """A fresh kernarg buffer and ``extra`` array (for captures and graph nodes)."""
        view, extra, kbuf, size_p = self._new_buffer()
        if self._geom_args:
            self._pack_into(view, 0, args, None, block, grid, shared_mem, None)
        else:
            self._pack_into(view, 0, args, None, None, None, 0, None)
        return kbuf, size_p, extra

    def _launch_captured(self, s: Stream, sh: Any, args: Sequence[Any], grid: Any, block: Any,
                         shared_mem: int) -> None:
        # A capture keeps its own copy of the kernarg buffer, alive as long as the graph,
        # whatever the runtime does with ``extra`` while capturing.
        kbuf, size_p, extra = self._packed(args, grid, block, shared_mem)
        gx, gy, gz, bx, by, bz = self._geometry(grid, block, shared_mem)
        st = self._fn(self._h, gx, gy, gz, bx, by, bz, shared_mem, sh, self._nullp, extra)
        if st:
            raise hip_error(st, "hipModuleLaunchKernel")
        s._lane.box[0].append((self, args, kbuf, size_p, extra))
