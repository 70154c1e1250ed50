"""Kernel argument packing: `KernargLayout`, built once per kernel and cached.

A layout turns ``args`` plus the launch geometry into the bytes of the
kernarg segment: each explicit argument at its offset with its size, and the
hidden arguments filled as ROCm's runtime fills them
(``rocclr/device/rocm/rocvirtual.cpp``):

==============================  ============================================
``hidden_block_count_{x,y,z}``  work-items // block size (whole blocks)
``hidden_group_size_{x,y,z}``   block size
``hidden_remainder_{x,y,z}``    work-items % block size (partial last block)
``hidden_global_offset_*``      0
``hidden_grid_dims``            number of dimensions given (1 to 3)
``hidden_dynamic_lds_size``     ``dynamic_lds``
everything else                 0 / NULL (printf and hostcall buffers, heap,
                                default queue, completion action, multigrid
                                sync, queue pointer, apertures), unless
                                given in ``hidden=``
==============================  ============================================

Missing dimensions count as 1; HIP's runtime always launches three
dimensions, so pass 3-tuples to get its ``hidden_grid_dims`` of 3.  The grid
is given in **work-items** with ``grid=`` (HSA's convention: AQL
``grid_size``) or in **blocks** with ``grid_blocks=`` (HIP's and CUDA's
convention); exactly one of them.

Everything that does not depend on the call is precomputed: one
`struct.Struct` covers the whole segment, each parameter has a converter
(`argconv`), and hidden values are cached per geometry, so `pack` is a
list comprehension and one ``struct.pack``.
"""
from __future__ import annotations

import numbers
import operator
import struct
from typing import (TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, NoReturn, Optional,
                    Sequence, Tuple)

from . import argconv
from .errors import (ArgumentCountError, ArgumentTypeError, ArgumentValueError, CodeObjectError,
                     LaunchConfigError)
from .metadata import MAX_KERNARG_SIZE, KernelArg, natural_alignment

if TYPE_CHECKING:
    from .metadata import KernelInfo

Dims = Any  # an int, or a sequence of 1 to 3 ints
_HIDDEN_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}
_GEOMETRY_KINDS = frozenset(
    [f"hidden_{what}_{axis}" for what in ("block_count", "group_size", "remainder")
     for axis in "xyz"] + ["hidden_grid_dims"])
_CACHE_LIMIT = 256


class KernargLayout:
    """Where each kernel argument goes, and a fast packer for them.

    Build with `from_metadata` (code object metadata) or `from_params`
    (plain ``(offset, size, kind)`` descriptions).  ``params`` are the
    explicit parameters (`KernelArg`), ``hidden`` the hidden ones, ``size``
    the kernarg segment size and ``alignment`` its alignment, in bytes.
    """

    def __init__(self, params: Sequence[KernelArg], hidden: Sequence[KernelArg], size: int,
                 alignment: int, name: str = "kernel") -> None:
        self.name = name
        self.params = tuple(params)
        self.hidden = tuple(hidden)
        self.size = size
        self.alignment = alignment
        offsets = [a.offset for a in self.params]
        if offsets != sorted(offsets):
            raise CodeObjectError(f"{name}: explicit arguments are not in offset order")
        codes = [argconv.converter_for(a) for a in self.params]
        self._converters = [conv for _, conv in codes]
        self._codes = [code for code, _ in codes]
        self._hidden_kinds = [a.value_kind for a in self.hidden if a.size in _HIDDEN_CODES]
        hidden_slots = [(a, _HIDDEN_CODES[a.size]) for a in self.hidden
                        if a.size in _HIDDEN_CODES]
        fmt, end = "<", 0
        for arg, code in list(zip(self.params, self._codes)) + hidden_slots:
            if arg.offset < end:
                raise CodeObjectError(f"{name}: argument {arg.index} at offset {arg.offset} "
                                      f"overlaps the previous one (ends at {end})")
            fmt += f"{arg.offset - end}x{code}" if arg.offset > end else code
            end = arg.offset + arg.size
        if end > size or size > MAX_KERNARG_SIZE:
            raise CodeObjectError(f"{name}: arguments end at {end} bytes, kernarg segment "
                                  f"is {size} bytes (limit {MAX_KERNARG_SIZE})")
        self._struct = struct.Struct(fmt + (f"{size - end}x" if size > end else ""))
        self._needs_geometry = any(k in _GEOMETRY_KINDS for k in self._hidden_kinds)
        self._hidden_cache: Dict[Any, Tuple[int, ...]] = {}

    def __repr__(self) -> str:
        return (f"<KernargLayout {self.name} {len(self.params)} args, "
                f"{len(self.hidden)} hidden, {self.size} bytes>")

    @classmethod
    def from_metadata(cls, kernel: "KernelInfo") -> "KernargLayout":
        """The layout of a kernel from its code object metadata."""
        return cls(kernel.args, kernel.hidden_args, kernel.kernarg_segment_size,
                   kernel.kernarg_segment_align, kernel.name)

    @classmethod
    def from_params(cls, params: Iterable[Sequence[Any]], *, size: Optional[int] = None,
                    alignment: int = 8, name: str = "kernel") -> "KernargLayout":
        """A layout from ``(offset, size[, kind[, name]])`` tuples, in parameter order.

        ``kind`` is a metadata value kind: ``"global_buffer"`` for pointers,
        ``"by_value"`` (the default) for values, ``"hidden_..."`` for hidden
        arguments.  An 8-byte ``by_value`` also takes pointers, so the
        ``(offset, size)`` pairs of ``cuFuncGetParamInfo`` are enough.  ``size``
        defaults to the end of the last parameter rounded up to ``alignment``.
        """
        args: List[KernelArg] = []
        for i, p in enumerate(params):
            if not 2 <= len(p) <= 4:
                raise ValueError(f"parameter {i}: expected (offset, size[, kind[, name]]), "
                                 f"got {p!r}")
            offset, nbytes = int(p[0]), int(p[1])
            kind = str(p[2]) if len(p) > 2 else "by_value"
            if offset < 0 or nbytes <= 0:
                raise ValueError(f"parameter {i}: offset {offset} and size {nbytes} must be "
                                 "non-negative and positive")
            args.append(KernelArg(i, offset, nbytes, kind, natural_alignment(offset, nbytes, 16),
                                  name=p[3] if len(p) == 4 else None))
        end = max((a.offset + a.size for a in args), default=0)
        total = size if size is not None else -(-end // alignment) * alignment
        return cls([a for a in args if not a.is_hidden], [a for a in args if a.is_hidden],
                   total, alignment, name)

    def describe(self, index: int) -> str:
        """How error messages name ``args[index]``: position, name, kind, size, offset."""
        arg = self.params[index]
        label = f"{arg.name!r}, " if arg.name else ""
        type_name = f"{arg.type_name} " if arg.type_name else ""
        size = f"{arg.size} byte{'' if arg.size == 1 else 's'}"
        return (f"{self.name}: args[{index}] ({label}{type_name}{arg.value_kind}, "
                f"{size} at offset {arg.offset})")

    def pack(self, args: Sequence[Any], *, grid: Dims = None, block: Dims = None,
             grid_blocks: Dims = None, dynamic_lds: int = 0,
             hidden: Optional[Mapping[str, int]] = None) -> bytes:
        """The kernarg segment (``size`` bytes) for ``args`` and a launch geometry.

        ``grid`` is the total size in work-items (HSA), ``grid_blocks`` the
        size in blocks (HIP), ``block`` the block (workgroup) size: ints or
        1 to 3 ints.  Pass ``block`` and one of ``grid``/``grid_blocks`` when
        the kernel has geometry hidden arguments (they are ignored otherwise).
        ``hidden`` maps hidden value kinds (``"hidden_hostcall_buffer"``) to
        values that replace the defaults; kinds the kernel lacks are ignored.
        """
        values = self._values(args, grid, block, grid_blocks, dynamic_lds, hidden)
        try:
            return self._struct.pack(*values)
        except (struct.error, OverflowError):
            self._diagnose(values)
            raise

    def pack_into(self, buffer: Any, offset: int, args: Sequence[Any], *, grid: Dims = None,
                  block: Dims = None, grid_blocks: Dims = None, dynamic_lds: int = 0,
                  hidden: Optional[Mapping[str, int]] = None) -> None:
        """Like `pack`, writing into ``buffer`` at ``offset`` (a multiple of ``alignment``)."""
        if offset < 0 or offset % self.alignment:
            raise ValueError(f"{self.name}: kernarg offset {offset} is not a non-negative "
                             f"multiple of the segment alignment {self.alignment}")
        values = self._values(args, grid, block, grid_blocks, dynamic_lds, hidden)
        try:
            self._struct.pack_into(buffer, offset, *values)
        except (struct.error, OverflowError):
            room = memoryview(buffer).nbytes - offset
            if room < self.size:
                raise ValueError(f"{self.name}: the buffer has {max(room, 0)} bytes from offset "
                                 f"{offset}, the kernarg segment needs {self.size}") from None
            self._diagnose(values)
            raise

    def _values(self, args: Sequence[Any], grid: Dims, block: Dims, grid_blocks: Dims,
                dynamic_lds: int, hidden: Optional[Mapping[str, int]]) -> List[Any]:
        if len(args) != len(self._converters):
            raise ArgumentCountError(f"{self.name}() takes {len(self._converters)} arguments "
                                     f"({len(args)} given)")
        try:
            values = [conv(a) for conv, a in zip(self._converters, args)]
        except argconv.Reject:
            self._reject(args)
        if self._hidden_kinds:
            values += self.hidden_values(grid=grid, block=block, grid_blocks=grid_blocks,
                                         dynamic_lds=dynamic_lds, hidden=hidden)
        return values

    def _reject(self, args: Sequence[Any]) -> NoReturn:
        """Convert again one by one to find the refused argument, and raise naming it."""
        for i, (conv, arg) in enumerate(zip(self._converters, args)):
            try:
                conv(arg)
            except argconv.Reject as exc:
                cls = ArgumentTypeError if exc.is_type else ArgumentValueError
                raise cls(f"{self.describe(i)}: {exc}", i, self.params[i].name) from None
        raise ArgumentTypeError(f"{self.name}: an argument was refused, then accepted")

    def _diagnose(self, values: List[Any]) -> None:
        """Find which value ``struct`` refused and raise an error naming it."""
        for i, code in enumerate(self._codes):
            try:
                struct.pack("<" + code, values[i])
            except (struct.error, OverflowError) as exc:
                raise ArgumentValueError(f"{self.describe(i)}: {values[i]!r} does not fit "
                                         f"({exc})", i, self.params[i].name) from None

    def hidden_values(self, *, grid: Dims = None, block: Dims = None, grid_blocks: Dims = None,
                      dynamic_lds: int = 0,
                      hidden: Optional[Mapping[str, int]] = None) -> Tuple[int, ...]:
        """The values of the hidden arguments (of 1, 2, 4 or 8 bytes) in offset order."""
        key = (grid, block, grid_blocks, dynamic_lds)
        if hidden is None:
            try:
                return self._hidden_cache[key]
            except (KeyError, TypeError):
                pass
        lds = _whole(dynamic_lds)
        if lds is None or lds < 0:
            raise LaunchConfigError(f"dynamic_lds must be a non-negative int, got {dynamic_lds!r}")
        known = _geometry(grid, block, grid_blocks) if self._needs_geometry else {}
        known["hidden_dynamic_lds_size"] = lds
        if hidden:
            known.update(hidden)
        values = tuple(known.get(kind, 0) for kind in self._hidden_kinds)
        for arg, value in zip((a for a in self.hidden if a.size in _HIDDEN_CODES), values):
            if type(value) is not int or not 0 <= value < 1 << (8 * arg.size):
                raise LaunchConfigError(f"{self.name}: {arg.value_kind} = {value!r} does not "
                                        f"fit its {arg.size} bytes")
        if hidden is None:
            if len(self._hidden_cache) >= _CACHE_LIMIT:
                self._hidden_cache.clear()
            try:
                self._hidden_cache[key] = values
            except TypeError:  # unhashable (lists): fine, just not cached
                pass
        return values


def _whole(value: Any) -> Optional[int]:
    """``value`` as an int, or None.  Any number equal to an int counts as that
    int, as it does for the hidden-value cache, whose keys compare by equality."""
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, numbers.Real) and float(value).is_integer():
        return int(float(value))
    return None


def _dims(value: Dims, what: str) -> Tuple[int, ...]:
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    dims = tuple(_whole(d) for d in items)
    if not 1 <= len(dims) <= 3 or any(d is None or d < 1 for d in dims):
        raise LaunchConfigError(f"{what} must be a positive int or 1 to 3 positive ints, "
                                f"got {value!r}")
    return dims  # type: ignore[return-value]


def _geometry(grid: Dims, block: Dims, grid_blocks: Dims) -> Dict[str, int]:
    """Values of the geometry hidden arguments, as rocvirtual.cpp computes them."""
    if (grid is None) == (grid_blocks is None) or block is None:
        raise LaunchConfigError("this kernel has hidden arguments that depend on the launch: "
                                "pass block= and one of grid= (work-items) or grid_blocks= "
                                "(blocks)")
    b = _dims(block, "block")
    g = _dims(grid, "grid") if grid is not None else _dims(grid_blocks, "grid_blocks")
    ndim = max(len(g), len(b))
    b3 = b + (1,) * (3 - len(b))
    g3 = g + (1,) * (3 - len(g))
    if grid is None:
        g3 = tuple(n * m for n, m in zip(g3, b3))
    values = {"hidden_grid_dims": ndim}
    for axis, n, m in zip("xyz", g3, b3):
        values[f"hidden_block_count_{axis}"] = n // m
        values[f"hidden_group_size_{axis}"] = m
        values[f"hidden_remainder_{axis}"] = n % m
    return values
