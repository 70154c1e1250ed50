"""How a kernel launch is planned: geometry checks, the argument layout, kernarg
buffers and the compiled launcher's parameter table.

`rocpy.hip.module` keeps `Module` and `Kernel` (what is loaded, and the launch
itself); this module holds what a `Kernel` is built from and checks a launch
with, none of which needs the kernel object:

- geometry: `_dims` (``grid``/``block``), `_index`, `_packable` (what the
  hidden-argument packer takes), `_plain` (what may be cached by value),
  `_launch_args`;
- the layout: `kernel_layout` (from the code object's metadata, declared
  types, or NVIDIA's parameter info);
- kernarg buffers: `kernarg_buffer` (``extra`` of ``hipModuleLaunchKernel``),
  `_launch_param_keys`;
- the compiled path: `_param_spec` (the conversion plan as
  `rocpy._hot.Launcher` reads it), `_hot_launcher`, `_buffer_types`,
  `_register_buffers`.
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import _hotpath, codeobject
from . import _api
from ._api import api
from .stream import Stream

if TYPE_CHECKING:
    from .module import Kernel, Module


def kernel_layout(module: Module, name: str, handle: Any,
                  info: Any) -> codeobject.KernargLayout:
    """The argument layout of kernel ``name`` of ``module``: its metadata's
    (``info``, a `rocpy.codeobject.KernelInfo`), retyped by the module's declared
    ``param_types``; on nvidia (no metadata) from ``cuFuncGetParamInfo``.
    ValueError where declared types (the caller's, strict) disagree with it."""
    a = api()
    declared, strict = module._ptypes.get(name, (None, False))
    if info is not None:
        layout = (info.layout if declared is None else
                  codeobject.KernargLayout.from_metadata(info, declared))
    elif a.name == "nvidia":
        from ._nvidia_params import param_layout
        pairs = param_layout(_api.address(handle))
        end = max((off + size for off, size in pairs), default=0)
        layout = codeobject.KernargLayout.from_params(pairs, size=end, name=name,
                                                      types=declared)
    else:
        raise _api.fail("hipErrorNotFound", "Module[name]",
                        f"no metadata for kernel {name!r}: cannot lay out its arguments")
    if strict and any(p.type_name is None for p in layout.params):
        raise ValueError(f"param_types[{name!r}] = {declared!r} does not match the "
                         f"kernel's {len(layout.params)} parameters "
                         f"({', '.join(f'{p.size} bytes' for p in layout.params)})")
    return layout


def kernarg_buffer(size: int) -> tuple[Any, Any, Any, Any]:
    """A kernarg buffer of ``size`` bytes: (view to pack into, ``extra`` for the launch,
    then the memory both point to, which must live as long as they are used)."""
    ffi = api().ffi
    pointer, size_key, end = _launch_param_keys()
    kbuf = ffi.new("char[]", max(size, 1))
    size_p = ffi.new("size_t *", size)
    extra = ffi.new("void *[5]", [pointer, kbuf, size_key, size_p, end])
    return ffi.buffer(kbuf), extra, kbuf, size_p


@functools.cache
def _register_buffers() -> None:
    """Let sizes-only layouts (cubins: untyped 8-byte parameters) take rocpy buffers'
    ``.ptr`` inline; pointer parameters of code object metadata need no registration."""
    from ..codeobject.argconv import register_pointer_type
    from .memory import DeviceBuffer, HostBuffer, ManagedBuffer
    for cls in (DeviceBuffer, HostBuffer, ManagedBuffer):
        register_pointer_type(cls)


def _launch_param_keys() -> tuple[Any, Any, Any]:
    """HIP_LAUNCH_PARAM_BUFFER_POINTER, _BUFFER_SIZE and _END as ``void *``.

    On AMD they are HIP's own (1, 2, 3).  On the NVIDIA platform HIP defines
    them as CUDA's CU_LAUNCH_PARAM_* (1, 2, 0), which come from cuda.h and are
    not in the nvidia backend's declarations.
    """
    a = api()
    lib, ffi = a.lib, a.ffi
    names = ("HIP_LAUNCH_PARAM_BUFFER_POINTER", "HIP_LAUNCH_PARAM_BUFFER_SIZE",
             "HIP_LAUNCH_PARAM_END")
    cuda = (1, 2, 0)
    return tuple(getattr(lib, n) if hasattr(lib, n) else ffi.cast("void *", v)
                 for n, v in zip(names, cuda))


def _index(value: Any, what: str) -> int:
    """One launch dimension or size: an int or numpy integer (``operator.index``)."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise TypeError(f"{what} must be an integer, not bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an integer, not {type(value).__name__}") from None


def _dims(value: Any, what: str) -> tuple[int, int, int]:
    """``grid``/``block``: an int, numpy integer, or 1 to 3 of them (a tuple, list or
    1-D numpy array); the three dimensions."""
    if type(value) is int:
        items: Sequence[Any] = (value,)
    elif isinstance(value, (tuple, list)):
        items = value
    elif getattr(value, "ndim", None) == 1 and hasattr(value, "tolist"):
        items = tuple(value)     # a 1-D numpy array: its elements, never its truth value
    elif isinstance(value, bool) or type(value).__name__ == "bool_" or \
            not hasattr(value, "__index__") or getattr(value, "ndim", None):
        raise TypeError(f"{what} is an int or 1 to 3 ints, not {type(value).__name__}")
    else:
        items = (value,)
    if not 1 <= len(items) <= 3:
        raise _api.fail("hipErrorInvalidConfiguration", "Kernel.launch",
                        f"{what} has 1 to 3 dimensions, got {len(items)}")
    dims = []
    for d in items:
        if isinstance(d, bool) or type(d).__name__ == "bool_" or not hasattr(d, "__index__"):
            raise TypeError(f"{what} dimensions are ints, not {type(d).__name__}")
        n = _index(d, f"{what} dimensions")
        if n < 1:
            raise _api.fail("hipErrorInvalidConfiguration", "Kernel.launch",
                            f"{what} {value!r}: every dimension must be at least 1")
        dims.append(n)
    while len(dims) < 3:
        dims.append(1)
    return dims[0], dims[1], dims[2]


def _packable(value: Any) -> Any:
    """Validated geometry as the hidden-argument packer takes it: a 1-D numpy array as
    a tuple of ints (its length is the dimension count), anything else as given."""
    if getattr(value, "ndim", 0) == 1 and hasattr(value, "tolist"):
        return tuple(operator.index(d) for d in value)
    return value


def _plain(value: Any) -> bool:
    """Geometry that may be cached by value: an exact int or a tuple of 1 to 3 exact
    ints (immutable; a list or array is revalidated at every launch)."""
    if type(value) is int:
        return True
    return type(value) is tuple and 1 <= len(value) <= 3 and \
        all(type(d) is int for d in value)


def _launch_args(args: Any) -> Sequence[Any]:
    """``args`` as the packer takes it: a tuple or list as is, another iterable (a
    generator) as a tuple; TypeError for anything else."""
    if type(args) is tuple or type(args) is list:
        return args
    if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
        raise TypeError(f"args must be a sequence of the kernel's arguments, "
                        f"not {type(args).__name__}")
    return tuple(args)


def _param_spec(layout: codeobject.KernargLayout) -> tuple[tuple[Any, ...], ...] | None:
    """The explicit parameters as `rocpy._hot.Launcher` reads them:
    ``(offset, size, what, untyped, lo, hi, numpy_types)``, from the conversion plan
    (`rocpy.codeobject.argconv.slot`) the Python packer is generated from; parameters
    of unknown type are raw bytes there, taken from bytes or a numpy scalar of the
    width (anything else goes to the Python packer)."""
    from ..codeobject import argconv
    spec: list[tuple[int, int, int, int, int, int, int, frozenset[type] | None]] = []
    for p in layout.params:
        plan = argconv.slot(p)
        size = p.size
        if plan.what == "pointer":
            spec.append((p.offset, size, 1, 0, 0, 0, 0, None))
        elif plan.what == "integer":
            types = (argconv._numpy_types(plan.numpy_kinds, size) or None
                     if plan.numpy_kinds else None)
            spec.append((p.offset, size, 2, 0, plan.lo, plan.hi % (1 << 64),
                         int(plan.kind == "signed"), types))
        elif plan.what == "float":
            types = argconv._numpy_types("f", size) or None
            spec.append((p.offset, size, 3, 0, 0, 0, 0, None if types is None else types))
        elif plan.what == "untyped":
            # numpy scalars of the width state their type: their bytes, in C too
            types = argconv._numpy_types("iuf", size) or None
            spec.append((p.offset, size, 4, 0, 0, 0, 0, types))
        else:
            spec.append((p.offset, size, 4, 0, 0, 0, 0, None))
    return tuple(spec)


def _hot_launcher(k: Kernel, a: Any, fn: int | None = None) -> Any:
    """The kernel's `rocpy._hot.Launcher`, or None where the compiled path is off.

    ``fn``: the launch function's address; None, the runtime's
    ``hipModuleLaunchKernel`` (benchmarks/device/floor.py gives a no-op, to time the
    binding alone)."""
    hot = _hotpath.module()
    if hot is None:
        return None
    from ..codeobject.argconv import _POINTER_TYPES
    ffi, lib = a.ffi, a.lib
    layout = k._layout
    if fn is None:
        fn = int(ffi.cast("uintptr_t", ffi.addressof(lib, "hipModuleLaunchKernel")))
    keys = tuple(int(ffi.cast("uintptr_t", key)) for key in _launch_param_keys())
    return hot.Launcher(fn, _api.address(k._h), k._dev_index, layout.size,
                        layout._explicit_end, keys, _param_spec(layout), Stream,
                        _POINTER_TYPES, _buffer_types(), type(k)._launch_py, type(k)._configure)


@functools.cache
def _buffer_types() -> frozenset[type]:
    """rocpy's buffer classes: their ``ptr`` property is ``_h`` (None once closed), which
    the compiled path reads directly; subclasses go through ``ptr``."""
    from .memory import DeviceBuffer, HostBuffer, ManagedBuffer
    return frozenset({DeviceBuffer, HostBuffer, ManagedBuffer})
