"""cuda.core's launch shape, ``launch(stream, LaunchConfig(...), kernel, *args)``: the same
launch as `Kernel.launch`, its configuration checked when made."""
from __future__ import annotations

import numpy as np
import pytest

import rocpy
from rocpy import hip
from rocpy.hip import LaunchConfig, launch


def test_launch_runs_the_kernel_as_kernel_launch_does(dev, load, rng):
    vadd = load("vadd")
    n = 1000
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    ctx = dev.context
    A, B, C = ctx.alloc(a.nbytes), ctx.alloc(b.nbytes), ctx.alloc(a.nbytes)
    config = LaunchConfig(grid=(n + 255) // 256, block=256)
    with dev.create_stream() as s:
        A.copy_from(a, stream=s)
        B.copy_from(b, stream=s)
        launch(s, config, vadd, A, B, C, np.int32(n))
        out = np.empty_like(a)
        C.copy_to(out, stream=s)
        s.sync()
    np.testing.assert_array_equal(out, a + b)
    for buf in (A, B, C):
        buf.close()


def test_the_configuration_is_normalised_and_frozen():
    c = LaunchConfig(grid=np.int64(4), block=[32, 2], shmem_size=np.int32(64))
    assert (c.grid, c.block, c.shmem_size) == ((4, 1, 1), (32, 2, 1), 64)
    assert type(c.shmem_size) is int
    with pytest.raises(AttributeError):
        c.grid = (1, 1, 1)  # type: ignore[misc]
    with pytest.raises(TypeError):
        LaunchConfig((1,), (1,))  # type: ignore[misc]   keyword-only, as cuda.core's options


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(grid=2.0, block=1), TypeError, "grid is an int or 1 to 3 ints, not float"),
    (dict(grid=1, block=True), TypeError, "block is an int or 1 to 3 ints, not bool"),
    (dict(grid=1, block=1, shmem_size="64"), TypeError, "shmem_size is an int, not str"),
    (dict(grid=1, block=1, shmem_size=-1), ValueError, "shmem_size must be at least 0, got -1"),
])
def test_bad_configurations_are_refused_when_made(kwargs, error, text):
    with pytest.raises(error, match=text):
        LaunchConfig(**kwargs)


@pytest.mark.parametrize("kwargs, text", [
    (dict(grid=(1, 1, 1, 1), block=1), "grid has 1 to 3 dimensions, got 4"),
    (dict(grid=1, block=(32, 0)), r"block \(32, 0\): every dimension must be at least 1"),
])
def test_impossible_geometry_is_hip_invalid_configuration(kwargs, text):
    with pytest.raises(rocpy.HipError, match=text) as info:
        LaunchConfig(**kwargs)
    assert info.value.name == "hipErrorInvalidConfiguration"


def test_launch_refuses_what_is_not_a_config_or_kernel(dev, load):
    vadd = load("vadd")
    with pytest.raises(TypeError, match="config must be a rocpy.hip.LaunchConfig, not tuple"):
        launch(None, (1, 1), vadd)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="kernel must be a rocpy.hip.Kernel, not str"):
        launch(None, LaunchConfig(grid=1, block=1), "vadd")  # type: ignore[arg-type]


def test_the_device_limits_are_checked_at_launch(dev, load):
    vadd = load("vadd")
    config = LaunchConfig(grid=1, block=vadd.max_threads_per_block + 1)
    with pytest.raises(rocpy.HipError, match="threads; vadd on Device") as info:
        launch(None, config, vadd, None, None, None, np.int32(0))
    assert info.value.name == "hipErrorInvalidConfiguration"
    big = LaunchConfig(grid=1, block=1, shmem_size=dev.shared_memory_per_block + 1)
    with pytest.raises(rocpy.HipError, match="shared_mem = ") as info:
        launch(None, big, vadd, None, None, None, np.int32(0))
    assert info.value.name == "hipErrorInvalidValue"


def test_top_level_names():
    assert rocpy.launch is hip.launch and rocpy.LaunchConfig is hip.LaunchConfig
