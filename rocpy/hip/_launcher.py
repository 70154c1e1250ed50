"""cuda.core's launch shape: ``launch(stream, LaunchConfig(grid=, block=), kernel, *args)``.

A spelling over `Kernel.launch` (which stays the compiled fast path and the one place a
launch is validated and enqueued), so code written for ``cuda.core.experimental.launch``
moves to rocpy with an import change.  Grid and block are checked when the configuration
is made, with the same rules and messages as `Kernel.launch`; the device's limits (block
size, shared memory) at the launch, since a configuration belongs to no device.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from ._launch_plan import _dims
from .module import Kernel


@dataclass(frozen=True, init=False)
class LaunchConfig:
    """How a kernel is launched (cuda.core's ``LaunchConfig``), keyword-only.

    Args:
        grid: Blocks in the grid: an int or 1 to 3 ints (HIP and cuda.core count
            blocks, not threads); stored as three ints.
        block: Threads in a block: an int or 1 to 3 ints; stored as three ints.
        shmem_size: Dynamic shared memory (LDS) per block, in bytes.

    Raises:
        TypeError: ``grid``/``block`` not ints (a bool, a float, a 2-D array...), or
            ``shmem_size`` not an int.
        rocpy.HipError: ``hipErrorInvalidConfiguration`` for no or more than three
            dimensions or a dimension below 1; ``ValueError`` for a negative
            ``shmem_size``.
    """

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shmem_size: int = 0

    def __init__(self, *, grid: Any, block: Any, shmem_size: Any = 0) -> None:
        if isinstance(shmem_size, bool) or not hasattr(shmem_size, "__index__"):
            raise TypeError(f"shmem_size is an int, not {type(shmem_size).__name__}")
        shmem = operator.index(shmem_size)
        if shmem < 0:
            raise ValueError(f"shmem_size must be at least 0, got {shmem}")
        object.__setattr__(self, "grid", _dims(grid, "grid"))
        object.__setattr__(self, "block", _dims(block, "block"))
        object.__setattr__(self, "shmem_size", shmem)


def launch(stream: Any, config: LaunchConfig, kernel: Kernel, *kernel_args: Any) -> None:
    """Enqueue ``kernel`` on ``stream`` as ``config`` says, with ``kernel_args``
    (cuda.core's ``launch``): the same as
    ``kernel.launch(config.grid, config.block, kernel_args, stream=stream,
    shared_mem=config.shmem_size)``, whose argument rules and errors apply.

    Args:
        stream: A `Stream`, an object with ``__hip_stream__``/``__cuda_stream__``,
            or None for the kernel's device's null stream.
        config: A `LaunchConfig`.
        kernel: A `Kernel`.
        *kernel_args: The kernel's arguments, in order.

    Raises:
        TypeError: ``config`` is not a `LaunchConfig` or ``kernel`` not a `Kernel`.
    """
    if not isinstance(config, LaunchConfig):
        raise TypeError(f"config must be a rocpy.hip.LaunchConfig, not {type(config).__name__}")
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a rocpy.hip.Kernel, not {type(kernel).__name__}")
    kernel.launch(config.grid, config.block, kernel_args, stream, config.shmem_size)


__all__ = ["LaunchConfig", "launch"]
