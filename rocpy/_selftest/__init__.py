"""``rocpy selftest``: checks of what the stub can only imitate, run on the real runtime.

`run()` exercises the HSA path (copies with and without access grants,
dispatch ordering with and without barriers, visibility after
``sync()`` per fence scope, ``dispatch_time`` against a kernel of
known duration, launch-geometry probes, dynamic LDS, launch bounds,
recursion, a full queue at its minimum size) and the HIP path (copies,
launch probes, event timing), and reports each check as pass, fail or
skip.  The same checks run on the stub (where every one passes) as tests of
the suite (tests/cli/test_selftest.py); on NVIDIA only the HIP ones run.
"""
from __future__ import annotations

import contextlib
import time
import traceback
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable

from . import hip_checks, hsa_checks


@dataclass(frozen=True)
class Result:
    """One check's outcome: ``status`` is ``'pass'``, ``'fail'`` or ``'skip'``."""

    name: str
    status: str
    detail: str
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def names() -> list[str]:
    """Every check, in the order `run` runs them."""
    return list(hsa_checks.CHECKS) + list(hip_checks.CHECKS)


def _run_group(make: Callable[[Any], Any], checks: dict[str, Callable[[Any], str]],
               wanted: set[str] | None) -> Iterable[Result]:
    chosen = {n: f for n, f in checks.items() if wanted is None or n in wanted}
    if not chosen:
        return
    with contextlib.ExitStack() as stack:
        try:
            ctx = make(stack)
        except (LookupError, FileNotFoundError, OSError) as e:
            for n in chosen:
                yield Result(n, "skip", str(e), 0.0)
            return
        except Exception as e:  # the setup itself failed: every check fails with it
            for n in chosen:
                yield Result(n, "fail", f"setup: {type(e).__name__}: {e}", 0.0)
            return
        for n, check in chosen.items():
            t0 = time.monotonic()
            try:
                detail = check(ctx)
                status = "pass"
            except LookupError as e:
                status, detail = "skip", str(e)
            except Exception as e:
                status = "fail"
                detail = f"{type(e).__name__}: {e}"
                last = traceback.extract_tb(e.__traceback__)[-1]
                detail += f" (at {last.name}:{last.lineno})"
            yield Result(n, status, detail, time.monotonic() - t0)


def run(only: Iterable[str] | None = None) -> list[Result]:
    """Run the checks (all, or those named in `only`); never raises for a failing check."""
    import rocpy
    wanted = set(only) if only is not None else None
    if wanted is not None and not wanted <= set(names()):
        raise ValueError(f"unknown checks: {sorted(wanted - set(names()))}")
    results: list[Result] = []
    from .. import _backend
    if _backend.current().has_hsa:
        results += _run_group(hsa_checks.HsaContext, hsa_checks.CHECKS, wanted)
    else:
        results += [Result(n, "skip", f"the {rocpy.backend().name} backend has no HSA runtime", 0.0)
                    for n in hsa_checks.CHECKS if wanted is None or n in wanted]
    results += _run_group(hip_checks.HipContext, hip_checks.CHECKS, wanted)
    return results
