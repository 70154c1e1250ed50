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

Everything that does not depend on the call is precomputed: each parameter
has a converter (`argconv`), the hidden arguments' bytes are cached per
geometry, and a packing function specialised to the layout is generated
once (`_specialise`), so `pack` is a few type tests per argument and one
``struct.pack``.
"""
from __future__ import annotations

import functools
import numbers
import operator
import struct
from types import CodeType
from typing import (TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, NoReturn,
                    Optional, Sequence, Tuple)

from . import argconv, paramtypes
from .errors import (ArgumentCountError, ArgumentRangeError, ArgumentTypeError, ArgumentValueError, CodeObjectError,
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
_UNSET = object()


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
        self.params: tuple[KernelArg, ...] = tuple(params)
        self.hidden: tuple[KernelArg, ...] = tuple(hidden)
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
        explicit, self._explicit_end = _format(list(zip(self.params, self._codes)), 0, name)
        tail, end = _format(hidden_slots, self._explicit_end, name)
        if end > size or size > MAX_KERNARG_SIZE:
            raise CodeObjectError(f"{name}: arguments end at {end} bytes, kernarg segment "
                                  f"is {size} bytes (limit {MAX_KERNARG_SIZE})")
        tail += f"{size - end}x" if size > end else ""
        self._struct = struct.Struct("<" + explicit + tail)
        # the hidden arguments, from the end of the explicit ones to the segment's end;
        # the generated functions pack their bytes as one item
        self._tail_struct = struct.Struct("<" + tail)
        tail_bytes = f"{size - self._explicit_end}s" if self._hidden_kinds else tail
        self._fast_struct = struct.Struct("<" + explicit + tail_bytes)
        self._needs_geometry = any(k in _GEOMETRY_KINDS for k in self._hidden_kinds)
        self._hidden_cache: Dict[Any, Tuple[int, ...]] = {}
        self._tail_cache: Dict[Any, bytes] = {}
        self._pack, self._pack_into = _specialise(self)

    def __repr__(self) -> str:
        return (f"<KernargLayout {self.name} {len(self.params)} args, "
                f"{len(self.hidden)} hidden, {self.size} bytes>")

    @classmethod
    def from_metadata(cls, kernel: "KernelInfo",
                      declared: Optional[Sequence[str]] = None) -> "KernargLayout":
        """The layout of a kernel from its code object metadata, the parameters typed
        by `rocpy.codeobject.paramtypes` (``declared``: types known from source)."""
        args = paramtypes.typed_args(kernel.args, kernel.name, declared)
        return cls(args, kernel.hidden_args, kernel.kernarg_segment_size,
                   kernel.kernarg_segment_align, kernel.name)

    @classmethod
    def from_params(cls, params: Iterable[Sequence[Any]], *, size: Optional[int] = None,
                    alignment: int = 8, name: str = "kernel",
                    types: Optional[Sequence[str]] = None) -> "KernargLayout":
        """A layout from ``(offset, size[, kind[, name]])`` tuples, in parameter order.

        ``kind`` is a metadata value kind: ``"global_buffer"`` for pointers,
        ``"by_value"`` (the default) for values, ``"hidden_..."`` for hidden
        arguments.  An 8-byte ``by_value`` also takes pointers, so the
        ``(offset, size)`` pairs of ``cuFuncGetParamInfo`` are enough.  ``size``
        defaults to the end of the last parameter rounded up to ``alignment``.
        Parameter types come from ``types`` (C spellings, one per explicit
        parameter) or else from ``name`` when it is a mangled name
        (`rocpy.codeobject.paramtypes`); without either, 2/4/8-byte values
        refuse bare Python numbers.
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
        explicit = paramtypes.typed_args([a for a in args if not a.is_hidden], name, types)
        return cls(explicit, [a for a in args if a.is_hidden], total, alignment, name)

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
        return self._pack(args, grid, block, grid_blocks, dynamic_lds, hidden)

    def pack_into(self, buffer: Any, offset: int, args: Sequence[Any], *, grid: Dims = None,
                  block: Dims = None, grid_blocks: Dims = None, dynamic_lds: int = 0,
                  hidden: Optional[Mapping[str, int]] = None) -> None:
        """Like `pack`, writing into ``buffer`` at ``offset`` (a multiple of ``alignment``)."""
        self._pack_into(buffer, offset, args, grid, block, grid_blocks, dynamic_lds, hidden)

    @property
    def packers(self) -> Tuple[Callable[..., bytes], Callable[..., None]]:
        """The generated ``(pack, pack_into)`` behind the methods, for hot loops.

        Positional parameters: ``pack(args, grid, block, grid_blocks,
        dynamic_lds, hidden)`` and ``pack_into(buffer, offset, args, grid,
        block, grid_blocks, dynamic_lds, hidden)``; same results and errors as
        the methods.
        """
        return self._pack, self._pack_into

    # ---- the generic path: what the generated functions must equal ------------------

    def _generic_pack(self, args: Sequence[Any], grid: Dims = None, block: Dims = None,
                      grid_blocks: Dims = None, dynamic_lds: int = 0,
                      hidden: Optional[Mapping[str, int]] = None) -> bytes:
        """`pack` through the converters one by one (reference for tests and benchmarks)."""
        values = self._values(args, grid, block, grid_blocks, dynamic_lds, hidden)
        try:
            return self._struct.pack(*values)
        except (struct.error, OverflowError):
            self._diagnose(values)
            raise

    def _generic_pack_into(self, buffer: Any, offset: int, args: Sequence[Any],
                           grid: Dims = None, block: Dims = None, grid_blocks: Dims = None,
                           dynamic_lds: int = 0,
                           hidden: Optional[Mapping[str, int]] = None) -> None:
        """`pack_into` through the converters one by one."""
        if offset < 0 or offset % self.alignment:
            self._bad_offset(offset)
        values = self._values(args, grid, block, grid_blocks, dynamic_lds, hidden)
        try:
            self._struct.pack_into(buffer, offset, *values)
        except (struct.error, OverflowError):
            self._check_room(buffer, offset)
            self._diagnose(values)
            raise

    def _values(self, args: Sequence[Any], grid: Dims, block: Dims, grid_blocks: Dims,
                dynamic_lds: int, hidden: Optional[Mapping[str, int]]) -> List[Any]:
        if len(args) != len(self._converters):
            self._count_error(args)
        try:
            values = [conv(a) for conv, a in zip(self._converters, args)]
        except argconv.Reject:
            self._reject(args)
        if self._hidden_kinds:
            values += self.hidden_values(grid=grid, block=block, grid_blocks=grid_blocks,
                                         dynamic_lds=dynamic_lds, hidden=hidden)
        return values

    # ---- errors (shared by the generic and the generated path) ---------------------

    def _count_error(self, args: Sequence[Any]) -> NoReturn:
        raise ArgumentCountError(f"{self.name}() takes {len(self._converters)} arguments "
                                 f"({len(args)} given)")

    def _bad_offset(self, offset: int) -> NoReturn:
        raise ValueError(f"{self.name}: kernarg offset {offset} is not a non-negative "
                         f"multiple of the segment alignment {self.alignment}")

    def _check_room(self, buffer: Any, offset: int) -> None:
        """After ``struct`` refused a pack_into: raise if the buffer is too small."""
        room = memoryview(buffer).nbytes - offset
        if room < self.size:
            raise ValueError(f"{self.name}: the buffer has {max(room, 0)} bytes from offset "
                             f"{offset}, the kernarg segment needs {self.size}") from None

    def _reject(self, args: Sequence[Any]) -> NoReturn:
        """Convert again one by one to find the refused argument, and raise naming it."""
        for i, (conv, arg) in enumerate(zip(self._converters, args)):
            try:
                conv(arg)
            except argconv.Reject as exc:
                cls = (ArgumentRangeError if exc.overflow else
                       ArgumentTypeError if exc.is_type else ArgumentValueError)
                raise cls(f"{self.describe(i)}: {exc}", i, self.params[i].name) from None
        raise ArgumentTypeError(f"{self.name}: an argument was refused, then accepted")

    def _diagnose(self, values: List[Any]) -> None:
        """Find which value ``struct`` refused and raise an error naming it."""
        for i, code in enumerate(self._codes):
            try:
                struct.pack("<" + code, values[i])
            except (struct.error, OverflowError) as exc:
                raise ArgumentRangeError(f"{self.describe(i)}: {values[i]!r} is out of range "
                                         f"for {argconv._named(self.params[i])} ({exc})", i,
                                         self.params[i].name) from None

    def _hidden_tail(self, grid: Dims, block: Dims, grid_blocks: Dims, dynamic_lds: int,
                     hidden: Optional[Mapping[str, int]]) -> bytes:
        """The bytes from the end of the explicit arguments to the end of the segment,
        cached per geometry as `hidden_values` is (the generated functions look here)."""
        tail = self._tail_struct.pack(*self.hidden_values(
            grid=grid, block=block, grid_blocks=grid_blocks, dynamic_lds=dynamic_lds,
            hidden=hidden))
        if hidden is None:
            if len(self._tail_cache) >= _CACHE_LIMIT:
                self._tail_cache.clear()
            try:
                self._tail_cache[grid, block, grid_blocks, dynamic_lds] = tail
            except TypeError:  # unhashable (lists): fine, just not cached
                pass
        return tail

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


def _format(slots: Sequence[Tuple[KernelArg, str]], end: int, name: str) -> Tuple[str, int]:
    """`struct` codes for ``slots`` (in offset order) placed from ``end``; and their end."""
    fmt = ""
    for arg, code in slots:
        if arg.offset < end:
            raise CodeObjectError(f"{name}: argument {arg.index} at offset {arg.offset} "
                                  f"overlaps the previous one (ends at {end})")
        fmt += f"{arg.offset - end}x{code}" if arg.offset > end else code
        end = arg.offset + arg.size
    return fmt, end


# ---- the generated packers ------------------------------------------------------------
#
# `_specialise` writes the Python source of ``pack`` and ``pack_into`` for one
# layout, with one block per parameter (`argconv.inline_source`), and compiles
# it (once per distinct source, `_compile`).  For vadd(float*, float*, float*,
# int) with hidden arguments, ``pack`` reads:
#
#     def pack(args, grid, block, grid_blocks, dynamic_lds, hidden):
#         if len(args) != 4:
#             count_error(args)
#         a0, a1, a2, a3 = args
#         try:
#             t = type(a0)
#             if t is int and 0 <= a0 < 18446744073709551616:
#                 v0 = a0
#             elif a0 is None:
#                 v0 = 0
#             else:
#                 p = getattr(a0, 'ptr', None)
#                 v0 = p if type(p) is int and 0 <= p < 18446744073709551616 else c0(a0)
#             ...                                  # a1, a2 alike
#             t = type(a3)
#             if t is int and -2147483648 <= a3 < 4294967296:
#                 v3 = a3 & 4294967295
#             elif t in I3:                        # numpy int32, uint32
#                 v3 = index(a3) & 4294967295
#             ...                                  # bool, float, numpy floats
#             else:
#                 v3 = c3(a3)                      # the converter: anything else
#         except Reject:
#             reject(args)                         # the generic path names the argument
#         if hidden is None:                       # the hidden arguments' bytes: those of
#             ...                                  # the last call if given the same objects,
#                                                  # else cached per geometry (`_hidden_tail`)
#         try:
#             return spack(v0, v1, v2, v3, tail)   # '<QQQI260s': the hidden bytes, one item
#         except (struct_error, OverflowError):
#             diagnose([v0, v1, v2, v3])
#             raise
#
# ``pack_into`` is the same with the offset check first.  The source holds only
# names made here and int literals; the layout's objects (converters, caches,
# error helpers) are in the namespace it runs in.  An inline case answers only
# where the converter would give the same value; a refusal reruns the generic
# conversion, so the errors are the generic path's, raised in the same order.

_PACK = """\
def pack(args, grid, block, grid_blocks, dynamic_lds, hidden):
{body}
    try:
        return spack({values})
    except (struct_error, OverflowError):
        diagnose([{explicit}])
        raise


def pack_into(buffer, offset, args, grid, block, grid_blocks, dynamic_lds, hidden):
    if offset < 0 or offset % alignment:
        bad_offset(offset)
{body}
    try:
        spack_into(buffer, offset, {values})
    except (struct_error, OverflowError):
        check_room(buffer, offset)
        diagnose([{explicit}])
        raise
"""

_TAIL = """\
if hidden is None:
    m = last[0]
    if grid is m[0] and block is m[1] and grid_blocks is m[2] and dynamic_lds is m[3]:
        tail = m[4]
    else:
        try:
            tail = tails[grid, block, grid_blocks, dynamic_lds]
            last[0] = (grid, block, grid_blocks, dynamic_lds, tail)
        except (KeyError, TypeError):
            tail = make_tail(grid, block, grid_blocks, dynamic_lds, None)
else:
    tail = make_tail(grid, block, grid_blocks, dynamic_lds, hidden)"""


def _indent(lines: Iterable[str], depth: int) -> List[str]:
    return [" " * depth + line for line in lines]


@functools.lru_cache(maxsize=256)
def _compile(source: str) -> CodeType:
    return compile(source, "<rocpy.codeobject generated packer>", "exec")


def _specialise(layout: KernargLayout) -> Tuple[Callable[..., bytes], Callable[..., None]]:
    """Generate and compile the layout's ``pack`` and ``pack_into`` (see above)."""
    n = len(layout.params)
    names: Dict[str, Any] = {
        "Reject": argconv.Reject, "struct_error": struct.error,
        "count_error": layout._count_error, "reject": layout._reject,
        "diagnose": layout._diagnose, "bad_offset": layout._bad_offset,
        "check_room": layout._check_room, "alignment": layout.alignment}
    body = [f"if len(args) != {argconv.int_literal(n)}:", "    count_error(args)"]
    explicit = [f"v{i}" for i in range(n)]
    if n:
        body.append(", ".join(f"a{i}" for i in range(n)) + ("," if n == 1 else "") + " = args")
        slots = []
        for i, (arg, conv) in enumerate(zip(layout.params, layout._converters)):
            lines, extra = argconv.inline_source(arg, i)
            slots += lines
            names.update(extra)
            names[f"c{i}"] = conv
        body += ["try:"] + _indent(slots, 4) + ["except Reject:", "    reject(args)"]
    values = list(explicit)
    if layout._hidden_kinds:
        body += _TAIL.splitlines()
        values.append("tail")
        # ``last``: the geometry objects of the latest cached call and their bytes, one
        # tuple (replaced whole, so threads see a consistent one); only keys the
        # cache holds get there, so a list mutated between calls is never reused
        names.update(tails=layout._tail_cache, make_tail=layout._hidden_tail,
                     last=[(_UNSET,) * 5])
    names.update(spack=layout._fast_struct.pack, spack_into=layout._fast_struct.pack_into)
    source = _PACK.format(body="\n".join(_indent(body, 4)), values=", ".join(values),
                          explicit=", ".join(explicit))
    exec(_compile(source), names)  # noqa: S102 - source made above from generated names
    return names["pack"], names["pack_into"]
