"""One GPU per pytest-xdist worker: the controller counts the GPUs once, each
worker narrows its ``*_VISIBLE_DEVICES`` to one of them before rocpy loads a
backend.

The count travels to the workers in ``ROCPY_TEST_GPUS`` (``BACKEND:COUNT``),
set in the controller's environment before xdist starts its workers; setting
it yourself (e.g. ``ROCPY_TEST_GPUS=amd:8``) skips the probe.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

ENV = "ROCPY_TEST_GPUS"
_PROBE = ("import rocpy\nfrom rocpy import hip\n"
          "print(rocpy.backend().name, hip.device_count())")


@dataclass(frozen=True)
class GpuShare:
    """What this process took: ``index`` (the GPU among those visible to the whole
    run, None when not partitioned), the ``variable`` set and its ``value``."""
    worker: str | None
    count: int | None
    index: int | None = None
    variable: str | None = None
    value: str | None = None

    def describe(self) -> str:
        if self.worker is None:
            return "not a pytest-xdist worker: every visible GPU"
        if self.index is None:
            return f"worker {self.worker} shares the run's GPUs (count: {self.count})"
        return (f"worker {self.worker} uses GPU {self.index} of {self.count} "
                f"({self.variable}={self.value})")


def _worker_number(worker: str) -> int:
    digits = "".join(ch for ch in worker if ch.isdigit())
    return int(digits) if digits else 0


def probe() -> tuple[str, int]:
    """The backend and device count a fresh interpreter sees with this environment
    (a subprocess, so the controller itself holds no GPU)."""
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))
    if proc.returncode != 0:
        raise RuntimeError(f"rocpy could not count the GPUs: {proc.stderr.strip()[-500:]}")
    name, count = proc.stdout.split()[-2:]
    return name, int(count)


def _selector(backend: str) -> str:
    """The variable that narrows this backend's devices without fighting one the user set."""
    if backend == "nvidia":
        return "CUDA_VISIBLE_DEVICES"
    # HIP_VISIBLE_DEVICES filters what ROCR_VISIBLE_DEVICES left: narrow the one in use
    return "HIP_VISIBLE_DEVICES" if os.environ.get("HIP_VISIBLE_DEVICES") else "ROCR_VISIBLE_DEVICES"


def prepare_controller(numprocesses: Any) -> None:
    """In the xdist controller (before it starts workers): count the GPUs once."""
    if not numprocesses or os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get(ENV):
        return
    name, count = probe()
    os.environ[ENV] = f"{name}:{count}"


def assign_from_env() -> GpuShare:
    """In a worker: narrow the visible devices to this worker's GPU (idempotent)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    spec = os.environ.get(ENV)
    if worker is None or not spec:
        return GpuShare(worker, None)
    backend, _, text = spec.partition(":")
    count = int(text or 0)
    if count <= 1:
        return GpuShare(worker, count)
    index = _worker_number(worker) % count
    variable = _selector(backend)
    marker = f"_ROCPY_TEST_{variable}"
    original = os.environ.get(marker, os.environ.get(variable, ""))
    os.environ[marker] = original
    listed = [v for v in original.split(",") if v.strip()]
    value = listed[index] if len(listed) == count else str(index)
    os.environ[variable] = value
    return GpuShare(worker, count, index, variable, value)


def assign(numprocesses: Any) -> GpuShare:
    """pytest_configure's step: the controller probes, a worker narrows."""
    prepare_controller(numprocesses)
    return assign_from_env()
