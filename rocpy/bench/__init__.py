"""Benchmarks: the timing harness (`rocpy.bench.harness`) used by ``rocpy bench``."""
from .harness import (
    Case,
    CaseResult,
    Progress,
    Results,
    Stats,
    VariantResult,
    run_cases,
)

__all__ = ["Case", "CaseResult", "Progress", "Results", "Stats", "VariantResult", "run_cases"]
