"""The ``rocpy`` command's subcommands (one module each) and what they share."""
from __future__ import annotations

import sys
from typing import TextIO


def stdout(out: TextIO | None) -> TextIO:
    """``out``, or else the current ``sys.stdout`` (looked up per call: captures see it)."""
    if out is not None:
        return out
    stream: TextIO = sys.stdout
    return stream
