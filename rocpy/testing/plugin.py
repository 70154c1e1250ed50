"""The pytest plugin of rocpy (entry point ``pytest11: rocpy``).

Options: ``--rocpy-backend {auto,amd,nvidia,stub}`` (sets ``ROCPY_BACKEND``
before rocpy picks a backend); ini ``rocpy_check_leaks = true`` applies the
leak check to every test, ``rocpy_leak_timeout`` (seconds, default 10).

Markers: ``gpu`` (needs a real GPU: skipped on the stub, saying why),
``stub_only`` (needs the stub's controls: skipped on a real GPU),
``backend(*names)`` (runs only on the named backends), ``abandons_allocations``
(the leak check leaves the stub's allocation count alone).

Fixtures: ``rocpy_backend``, ``rocpy_device``, ``rocpy_stream``,
``rocpy_stub``, ``rocpy_leak_check``, ``rocpy_worker_gpu``.

With pytest-xdist each worker sees one GPU of the machine (its
``ROCR_VISIBLE_DEVICES``/``HIP_VISIBLE_DEVICES``/``CUDA_VISIBLE_DEVICES`` set
from the worker id before rocpy loads a backend): worker *i* of *n* takes GPU
*i mod count*.  See docs/pytest-plugin.md.
"""
from __future__ import annotations

import os
from typing import Any, Iterator

import pytest

from . import _workers

BACKEND_CHOICES = ("auto", "amd", "nvidia", "stub")
_GPU_KEY = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rocpy")
    group.addoption("--rocpy-backend", choices=BACKEND_CHOICES, default=None,
                    help="the backend rocpy uses (sets ROCPY_BACKEND; default: its value, else auto)")
    parser.addini("rocpy_check_leaks", type="bool", default=False,
                  help="fail every test that leaves rocpy objects or stub allocations behind")
    parser.addini("rocpy_leak_timeout", default="10",
                  help="seconds a leak check waits for releases that trail the work")


def _apply_backend_option(value: str | None) -> None:
    if not value:
        return
    from rocpy import _backend
    chosen = _backend._current
    if chosen is not None and value != "auto" and chosen.info.name != value:
        raise pytest.UsageError(f"--rocpy-backend={value}: this process already uses the "
                                f"{chosen.info.name} backend (rocpy was used before the option "
                                "was read: set ROCPY_BACKEND instead)")
    os.environ["ROCPY_BACKEND"] = value


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> None:
    """Entry-point route: the option applies before any conftest imports rocpy."""
    ns = early_config.known_args_namespace
    _apply_backend_option(getattr(ns, "rocpy_backend", None))
    _workers.assign_from_env()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    _apply_backend_option(config.getoption("rocpy_backend"))
    config.stash[_GPU_KEY] = _workers.assign(getattr(config.option, "numprocesses", None))
    config.addinivalue_line("markers", "gpu: needs a real GPU (amd or nvidia backend); skipped on "
                            "the stub")
    config.addinivalue_line("markers", "stub_only: needs the stub runtime's controls (faults, "
                            "emulations, allocation counters); skipped on a real GPU")
    config.addinivalue_line("markers", "backend(*names): runs only on the named rocpy backends "
                            "(amd, nvidia, stub)")
    config.addinivalue_line("markers", "abandons_allocations(reason): the test leaves native "
                            "allocations behind on purpose (e.g. what a device reset abandons); the "
                            "leak check still checks rocpy's objects, not the stub's count")


def pytest_report_header(config: pytest.Config) -> str | None:
    gpu = config.stash.get(_GPU_KEY, None)
    return f"rocpy: {gpu.describe()}" if gpu is not None else None


def _skip_reason(item: pytest.Item) -> str | None:
    marks = {m.name: m for m in item.iter_markers() if m.name in ("gpu", "stub_only", "backend")}
    if not marks:
        return None
    import rocpy
    info = rocpy.backend()
    if "gpu" in marks and info.is_stub:
        return f"needs a GPU; the backend is the stub ({info.reason})"
    if "stub_only" in marks and not info.is_stub:
        return f"needs the stub's controls; the backend is {info.name}"
    for mark in item.iter_markers("backend"):
        if info.name not in mark.args:
            return f"runs on {', '.join(mark.args)}; the backend is {info.name}"
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    reason = _skip_reason(item)
    if reason:
        pytest.skip(reason)


# ---- fixtures -------------------------------------------------------------------------

@pytest.fixture(scope="session")
def rocpy_backend() -> Any:
    """`rocpy.backend()`: the backend's name, why it was chosen, ``is_stub``."""
    import rocpy
    return rocpy.backend()


@pytest.fixture(scope="session")
def rocpy_worker_gpu(pytestconfig: pytest.Config) -> Any:
    """This process's share of the machine: ``.index`` (the GPU it took, None when not
    partitioned), ``.variable`` (the environment variable that selects it), ``.count``."""
    return pytestconfig.stash[_GPU_KEY]


@pytest.fixture(scope="session")
def rocpy_device() -> Any:
    """``rocpy.hip.Device(0)``: under pytest-xdist, this worker's own GPU."""
    from rocpy import hip
    return hip.Device(0)


@pytest.fixture
def rocpy_stream(rocpy_device: Any) -> Iterator[Any]:
    """A new stream on `rocpy_device`, synchronized and closed after the test."""
    stream = rocpy_device.create_stream()
    try:
        yield stream
    finally:
        stream.sync()
        stream.close()


@pytest.fixture
def rocpy_stub(rocpy_backend: Any) -> Iterator[Any]:
    """The stub's controls (`rocpy.testing.StubControls`): ``inject``, ``emulate``,
    ``live_allocations``; faults disarmed and emulations removed after the test.
    Skips on a real GPU."""
    if not rocpy_backend.is_stub:
        pytest.skip(f"uses the stub's controls; the backend is {rocpy_backend.name}")
    from . import StubControls
    controls = StubControls()
    try:
        yield controls
    finally:
        controls.close()


def _leak_check(request: pytest.FixtureRequest) -> Iterator[None]:
    from . import LeakCheck, LeakError
    config = request.config
    counted = request.node.get_closest_marker("abandons_allocations") is None
    check = LeakCheck(timeout=float(config.getini("rocpy_leak_timeout")),
                      allocations=counted).start()
    yield
    try:
        check.finish()
    except LeakError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def rocpy_leak_check() -> None:
    """Fails the test if a rocpy object (`rocpy.debug.live_objects`) or, on the stub,
    a native allocation outlives it (after the devices' work completed; not the
    allocations of a test marked ``abandons_allocations``).

    Where it is named does not matter: the check itself is the plugin's autouse
    fixture, which pytest sets up before the test's other function-scoped fixtures
    and tears down after them, so a `rocpy_stream` (or any fixture that closes what
    it made) is never counted, and what such a fixture leaves behind is."""


@pytest.fixture(autouse=True)
def _rocpy_auto_leak_check(request: pytest.FixtureRequest) -> Iterator[None]:
    # Autouse fixtures come first within their scope, whatever the order of the test's
    # arguments: the one place the check runs, for the ini option and the named fixture.
    if request.config.getini("rocpy_check_leaks") or "rocpy_leak_check" in request.fixturenames:
        yield from _leak_check(request)
    else:
        yield
