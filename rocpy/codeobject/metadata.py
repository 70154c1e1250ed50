"""The ``NT_AMDGPU_METADATA`` note (code object v3 and later), decoded into dataclasses.

The note's descriptor is a msgpack map (LLVM AMDGPUUsage, "Code Object V3
Metadata" and later): ``amdhsa.version``, ``amdhsa.target``,
``amdhsa.printf`` and ``amdhsa.kernels``, a list of maps whose keys start with
a dot (``.name``, ``.args``, ``.kernarg_segment_size`` ...).  Every value is
type-checked; anything malformed raises `CodeObjectError` naming the kernel,
argument and key.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Tuple

import msgpack

from .descriptor import KernelDescriptor
from .errors import CodeObjectError

if TYPE_CHECKING:
    from .kernargs import KernargLayout

#: Largest kernarg segment accepted from metadata (bytes).
MAX_KERNARG_SIZE = 1 << 20
#: Value kinds whose argument is an address or a runtime handle.
POINTER_KINDS = frozenset({"global_buffer", "dynamic_shared_pointer", "image", "sampler",
                           "pipe", "queue"})


def natural_alignment(offset: int, size: int, limit: int) -> int:
    """Largest power of two (at most ``limit``) dividing both ``size`` and ``offset``.

    The metadata gives no alignment per argument; the compiler placed each
    argument at a multiple of its alignment, and a scalar's alignment is its
    size, so this is the alignment the argument's offset and size imply.
    """
    align = 1
    while align < limit and size % (align * 2) == 0 and offset % (align * 2) == 0:
        align *= 2
    return align


@dataclass(frozen=True)
class KernelArg:
    """One kernel argument (``.args`` entry), explicit or hidden.

    ``index`` is its position in the metadata list; ``align`` is inferred by
    `natural_alignment`.  ``name``, ``type_name``, ``access`` and the
    ``is_*`` qualifiers appear when the compiler recorded them (OpenCL with
    ``-cl-kernel-arg-info``; HIP with ``-fhip-kernel-arg-name`` gives names).
    """

    index: int
    offset: int
    size: int
    value_kind: str
    align: int
    name: Optional[str] = None
    type_name: Optional[str] = None
    value_type: Optional[str] = None
    address_space: Optional[str] = None
    access: Optional[str] = None
    actual_access: Optional[str] = None
    pointee_align: Optional[int] = None
    is_const: bool = False
    is_restrict: bool = False
    is_volatile: bool = False
    is_pipe: bool = False

    @property
    def is_hidden(self) -> bool:
        """True for arguments the runtime fills (``hidden_*`` value kinds)."""
        return self.value_kind.startswith("hidden_")

    @property
    def is_pointer(self) -> bool:
        """True for addresses and handles (global buffers, images, queues ...)."""
        return self.value_kind in POINTER_KINDS


@dataclass(frozen=True)
class KernelInfo:
    """A kernel: its metadata, and (when read from an ELF) its kernel descriptor.

    ``args`` are the explicit arguments in declaration order, ``hidden_args``
    those the runtime fills.  ``layout`` is the cached argument packer.
    Sizes are in bytes.
    """

    name: str
    symbol: str
    args: Tuple[KernelArg, ...]
    hidden_args: Tuple[KernelArg, ...]
    kernarg_segment_size: int
    kernarg_segment_align: int
    group_segment_fixed_size: int
    private_segment_fixed_size: int
    wavefront_size: int
    sgpr_count: int
    vgpr_count: int
    max_flat_workgroup_size: int
    agpr_count: Optional[int] = None
    sgpr_spill_count: Optional[int] = None
    vgpr_spill_count: Optional[int] = None
    uses_dynamic_stack: Optional[bool] = None
    language: Optional[str] = None
    language_version: Optional[Tuple[int, ...]] = None
    kind: Optional[str] = None
    reqd_workgroup_size: Optional[Tuple[int, ...]] = None
    workgroup_size_hint: Optional[Tuple[int, ...]] = None
    uniform_work_group_size: Optional[bool] = None
    workgroup_processor_mode: Optional[bool] = None
    descriptor: Optional[KernelDescriptor] = None
    descriptor_address: Optional[int] = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @functools.cached_property
    def layout(self) -> "KernargLayout":
        """The kernel's `KernargLayout`, built on first use and kept."""
        from .kernargs import KernargLayout
        return KernargLayout.from_metadata(self)


@dataclass(frozen=True)
class CodeObjectMetadata:
    """The whole note: ``version`` (``amdhsa.version``), ``target``, ``printf`` formats, kernels."""

    version: Tuple[int, ...]
    target: Optional[str]
    printf: Tuple[str, ...]
    kernels: Tuple[KernelInfo, ...]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


def parse_metadata(blob: bytes, where: str = "metadata note") -> CodeObjectMetadata:
    """Decode the msgpack descriptor of an ``NT_AMDGPU_METADATA`` note."""
    try:
        root = msgpack.unpackb(blob, raw=False, strict_map_key=False)
    except (msgpack.UnpackException, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise CodeObjectError(f"{where}: malformed msgpack ({type(exc).__name__}: {exc})") \
            from None
    get = _Getter(root, where)
    version = tuple(get.items("amdhsa.version", int, required=True))
    kernels_raw = get.items("amdhsa.kernels", dict)
    kernels = tuple(_kernel(k, where, i) for i, k in enumerate(kernels_raw))
    return CodeObjectMetadata(version, get.string("amdhsa.target"),
                              tuple(get.items("amdhsa.printf", str)), kernels, root)


class _Getter:
    """Typed access to one msgpack map; errors name ``where`` and the key."""

    def __init__(self, mapping: Any, where: str) -> None:
        if not isinstance(mapping, dict):
            raise CodeObjectError(f"{where}: expected a map, found {type(mapping).__name__}")
        self.map = mapping
        self.where = where

    def _get(self, key: str, types: Tuple[type, ...], what: str, required: bool) -> Any:
        value = self.map.get(key)
        if value is None:
            if required:
                raise CodeObjectError(f"{self.where}: missing {key}")
            return None
        if type(value) not in types:
            raise CodeObjectError(f"{self.where}: {key} is {value!r}, expected {what}")
        return value

    def integer(self, key: str, required: bool = False, limit: int = 1 << 32) -> Any:
        value = self._get(key, (int,), "an integer", required)
        if value is not None and not 0 <= value < limit:
            raise CodeObjectError(f"{self.where}: {key} is {value}, outside 0..{limit - 1}")
        return value

    def string(self, key: str, required: bool = False) -> Any:
        return self._get(key, (str,), "a string", required)

    def boolean(self, key: str) -> Any:
        return self._get(key, (bool,), "a boolean", False)

    def items(self, key: str, item: type, required: bool = False) -> List[Any]:
        value = self._get(key, (list,), "a list", required) or []
        for i, element in enumerate(value):
            if type(element) is not item:
                raise CodeObjectError(f"{self.where}: {key}[{i}] is {element!r}, "
                                      f"expected {item.__name__}")
        return value

    def ints(self, key: str) -> Optional[Tuple[int, ...]]:
        value = self.items(key, int)
        return tuple(value) if value else None


def _kernel(raw: Any, base: str, index: int) -> KernelInfo:
    get = _Getter(raw, f"{base}: amdhsa.kernels[{index}]")
    name = get.string(".name", required=True)
    where = get.where = f"{base}: kernel {name!r}"
    size = get.integer(".kernarg_segment_size", required=True, limit=MAX_KERNARG_SIZE + 1)
    align = get.integer(".kernarg_segment_align", required=True, limit=1 << 16)
    if align & (align - 1) or not align:
        raise CodeObjectError(f"{where}: .kernarg_segment_align {align} is not a power of two")
    args = [_arg(a, i, f"{where}: .args[{i}]", size, align)
            for i, a in enumerate(get.items(".args", dict))]
    return KernelInfo(
        name=name,
        symbol=get.string(".symbol", required=True),
        args=tuple(a for a in args if not a.is_hidden),
        hidden_args=tuple(a for a in args if a.is_hidden),
        kernarg_segment_size=size,
        kernarg_segment_align=align,
        group_segment_fixed_size=get.integer(".group_segment_fixed_size", required=True),
        private_segment_fixed_size=get.integer(".private_segment_fixed_size", required=True),
        wavefront_size=get.integer(".wavefront_size", required=True),
        sgpr_count=get.integer(".sgpr_count", required=True),
        vgpr_count=get.integer(".vgpr_count", required=True),
        max_flat_workgroup_size=get.integer(".max_flat_workgroup_size", required=True),
        agpr_count=get.integer(".agpr_count"),
        sgpr_spill_count=get.integer(".sgpr_spill_count"),
        vgpr_spill_count=get.integer(".vgpr_spill_count"),
        uses_dynamic_stack=get.boolean(".uses_dynamic_stack"),
        language=get.string(".language"),
        language_version=get.ints(".language_version"),
        kind=get.string(".kind"),
        reqd_workgroup_size=get.ints(".reqd_workgroup_size"),
        workgroup_size_hint=get.ints(".workgroup_size_hint"),
        uniform_work_group_size=_flag(get, ".uniform_work_group_size"),
        workgroup_processor_mode=_flag(get, ".workgroup_processor_mode"),
        raw=raw,
    )


def _flag(get: _Getter, key: str) -> Optional[bool]:
    """A flag LLVM writes as an integer 0/1 (some versions) or a boolean."""
    value = get.map.get(key)
    if value is None or type(value) is bool:
        return value
    return bool(get.integer(key, limit=2))


def _arg(raw: Any, index: int, where: str, segment_size: int, segment_align: int) -> KernelArg:
    get = _Getter(raw, where)
    name = get.string(".name")
    if name is not None:
        get.where = f"{where} ({name!r})"
    offset = get.integer(".offset", required=True, limit=MAX_KERNARG_SIZE + 1)
    size = get.integer(".size", required=True, limit=MAX_KERNARG_SIZE + 1)
    kind = get.string(".value_kind", required=True)
    if offset + size > segment_size:
        raise CodeObjectError(f"{get.where}: {size} bytes at offset {offset} run past the "
                              f"kernarg segment ({segment_size} bytes)")
    return KernelArg(
        index=index, offset=offset, size=size, value_kind=kind,
        align=natural_alignment(offset, size, max(segment_align, 1)),
        name=name,
        type_name=get.string(".type_name"),
        value_type=get.string(".value_type"),
        address_space=get.string(".address_space"),
        access=get.string(".access"),
        actual_access=get.string(".actual_access"),
        pointee_align=get.integer(".pointee_align"),
        is_const=bool(get.boolean(".is_const")),
        is_restrict=bool(get.boolean(".is_restrict")),
        is_volatile=bool(get.boolean(".is_volatile")),
        is_pipe=bool(get.boolean(".is_pipe")),
    )
