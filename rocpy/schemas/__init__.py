"""JSON Schemas of rocpy's machine-readable output: ``info.json`` (``rocpy info
--json``, schema ``rocpy.info/1``) and ``bench.json`` (``rocpy bench --json``,
``rocpy.bench/1``), shipped as package data."""
from __future__ import annotations

import json
from importlib import resources
from typing import Any


def load(name: str) -> dict[str, Any]:
    """The schema ``name`` (``"info"`` or ``"bench"``) as a dict."""
    if name not in ("info", "bench"):
        raise ValueError(f"no schema {name!r}; one of info, bench")
    result: dict[str, Any] = json.loads(resources.files(__name__).joinpath(f"{name}.json").read_text())
    return result
