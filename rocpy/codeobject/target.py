"""AMDGPU target IDs: ``gfx90a:sramecc+:xnack-`` and the rules for matching them.

A target ID is a processor name plus optional settings of the two target
features ROCm knows, ``sramecc`` and ``xnack``: ``+`` (on), ``-`` (off), or
absent (*any*: the code runs either way).  A code object serves a device when
the processors are the same and every feature the code object specifies has
the same setting on the device (ROCm's rule, as in HIP's
``isCodeObjectCompatibleWithDevice``).  Devices report every feature they
support, e.g. ``gfx90a:sramecc+:xnack-``; a device ID without a feature only
matches code objects that leave that feature as *any*.

Generic processors (code object v6: ``gfx9-generic``, ``gfx11-generic`` ...)
serve every processor of their family listed in `GENERIC_FAMILIES`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, Optional, Tuple, Union

from .errors import InvalidTargetIdError

#: ``e_flags & 0xff`` (EF_AMDGPU_MACH) to processor name, AMDGCN processors only.
#: 0x40 and 0x4b were gfx940 and gfx941 until LLVM 19 retired them.
MACH_NAMES: Dict[int, str] = {
    0x020: "gfx600", 0x021: "gfx601", 0x022: "gfx700", 0x023: "gfx701",
    0x024: "gfx702", 0x025: "gfx703", 0x026: "gfx704", 0x028: "gfx801",
    0x029: "gfx802", 0x02a: "gfx803", 0x02b: "gfx810", 0x02c: "gfx900",
    0x02d: "gfx902", 0x02e: "gfx904", 0x02f: "gfx906", 0x030: "gfx908",
    0x031: "gfx909", 0x032: "gfx90c", 0x033: "gfx1010", 0x034: "gfx1011",
    0x035: "gfx1012", 0x036: "gfx1030", 0x037: "gfx1031", 0x038: "gfx1032",
    0x039: "gfx1033", 0x03a: "gfx602", 0x03b: "gfx705", 0x03c: "gfx805",
    0x03d: "gfx1035", 0x03e: "gfx1034", 0x03f: "gfx90a", 0x040: "gfx940",
    0x041: "gfx1100", 0x042: "gfx1013", 0x043: "gfx1150", 0x044: "gfx1103",
    0x045: "gfx1036", 0x046: "gfx1101", 0x047: "gfx1102", 0x048: "gfx1200",
    0x049: "gfx1250", 0x04a: "gfx1151", 0x04b: "gfx941", 0x04c: "gfx942",
    0x04e: "gfx1201", 0x04f: "gfx950", 0x051: "gfx9-generic",
    0x052: "gfx10-1-generic", 0x053: "gfx10-3-generic", 0x054: "gfx11-generic",
    0x055: "gfx1152", 0x058: "gfx1153", 0x059: "gfx12-generic",
    0x05a: "gfx1251", 0x05f: "gfx9-4-generic",
}

#: Processors that support the ``xnack`` feature (the others always lack it).
XNACK_PROCESSORS: FrozenSet[str] = frozenset({
    "gfx801", "gfx810", "gfx900", "gfx902", "gfx904", "gfx906", "gfx908",
    "gfx909", "gfx90a", "gfx90c", "gfx940", "gfx941", "gfx942", "gfx950",
    "gfx1010", "gfx1011", "gfx1012", "gfx1013", "gfx9-generic",
    "gfx9-4-generic", "gfx10-1-generic",
})

#: Processors that support the ``sramecc`` feature.
SRAMECC_PROCESSORS: FrozenSet[str] = frozenset({
    "gfx906", "gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950",
    "gfx9-4-generic",
})

#: Generic processor -> the processors its code runs on.
GENERIC_FAMILIES: Dict[str, FrozenSet[str]] = {
    "gfx9-generic": frozenset({"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}),
    "gfx9-4-generic": frozenset({"gfx940", "gfx941", "gfx942", "gfx950"}),
    "gfx10-1-generic": frozenset({"gfx1010", "gfx1011", "gfx1012", "gfx1013"}),
    "gfx10-3-generic": frozenset({"gfx1030", "gfx1031", "gfx1032", "gfx1033",
                                  "gfx1034", "gfx1035", "gfx1036"}),
    "gfx11-generic": frozenset({"gfx1100", "gfx1101", "gfx1102", "gfx1103",
                                "gfx1150", "gfx1151", "gfx1152", "gfx1153"}),
    "gfx12-generic": frozenset({"gfx1200", "gfx1201"}),
}

_PROCESSOR = re.compile(r"gfx[0-9a-f]{3,4}|gfx[0-9]+(?:-[0-9]+)?-generic")
_FEATURE = re.compile(r"(sramecc|xnack)([+-])")
_TRIPLE_PREFIX = re.compile(r"amdgcn-[^-:]*-[^-:]*--?")


@dataclass(frozen=True)
class TargetId:
    """A parsed target ID.

    ``processor`` is the processor name (``gfx90a``); ``xnack`` and
    ``sramecc`` are True (``+``), False (``-``) or None (unspecified: *any*).
    ``str()`` gives the canonical form, features in alphabetical order:
    ``gfx90a:sramecc+:xnack-``.
    """

    processor: str
    sramecc: Optional[bool] = None
    xnack: Optional[bool] = None

    @property
    def gfx(self) -> str:
        """The processor name; an alias of `processor`."""
        return self.processor

    @property
    def is_generic(self) -> bool:
        """True for generic processors such as ``gfx11-generic``."""
        return self.processor.endswith("-generic")

    def __str__(self) -> str:
        text = self.processor
        for name, value in (("sramecc", self.sramecc), ("xnack", self.xnack)):
            if value is not None:
                text += f":{name}{'+' if value else '-'}"
        return text

    def matches(self, device: Union[str, "TargetId"]) -> bool:
        """Whether code compiled for this target runs on ``device``.

        ``device`` is the device's target ID (``gfx90a:sramecc+:xnack-``) as a
        string or `TargetId`.  The processor must be the same (or be served
        by this generic processor); each feature this target specifies must
        have the same setting on the device; features this target leaves
        unspecified match anything.
        """
        dev = device if isinstance(device, TargetId) else parse_target_id(device)
        if self.processor != dev.processor and \
                dev.processor not in GENERIC_FAMILIES.get(self.processor, ()):
            return False
        for mine, theirs in ((self.sramecc, dev.sramecc), (self.xnack, dev.xnack)):
            if mine is not None and mine != theirs:
                return False
        return True


def parse_target_id(text: str) -> TargetId:
    """Parse ``gfx90a``, ``gfx90a:xnack+``, ``amdgcn-amd-amdhsa--gfx908:sramecc-``.

    Raises `InvalidTargetIdError` for an unknown shape, an unknown or
    repeated feature, or a setting other than ``+``/``-``.
    """
    if not isinstance(text, str):
        raise InvalidTargetIdError(f"target ID must be a string, not {type(text).__name__}")
    body = text.strip()
    prefix = _TRIPLE_PREFIX.match(body)
    if prefix:
        body = body[prefix.end():]
    processor, *features = body.split(":")
    if not _PROCESSOR.fullmatch(processor):
        raise InvalidTargetIdError(f"invalid target ID {text!r}: {processor!r} is not a "
                                   "processor name such as 'gfx90a'")
    settings: Dict[str, bool] = {}
    for feature in features:
        m = _FEATURE.fullmatch(feature)
        if not m:
            raise InvalidTargetIdError(
                f"invalid target ID {text!r}: feature {feature!r} is not one of "
                "'sramecc+', 'sramecc-', 'xnack+', 'xnack-'")
        if m.group(1) in settings:
            raise InvalidTargetIdError(f"invalid target ID {text!r}: {m.group(1)} given twice")
        settings[m.group(1)] = m.group(2) == "+"
    return TargetId(processor, settings.get("sramecc"), settings.get("xnack"))


def select_target(candidates: Tuple[TargetId, ...], device: Union[str, TargetId]) -> Optional[int]:
    """Index of the candidate that serves ``device``, or None.

    The first matching candidate for the device's own processor wins; a
    generic candidate is taken only when no specific one matches.
    """
    dev = device if isinstance(device, TargetId) else parse_target_id(device)
    generic = None
    for i, cand in enumerate(candidates):
        if cand.matches(dev):
            if not cand.is_generic:
                return i
            if generic is None:
                generic = i
    return generic
