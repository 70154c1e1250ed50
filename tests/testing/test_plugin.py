"""rocpy's pytest plugin (rocpy.testing.plugin), run on small suites with pytester.

Each inner run is a subprocess with plugin autoloading off and the plugin named
(``-p rocpy.testing.plugin``), so it behaves the same whether or not the
entry point is installed, and picks its backend afresh."""
from __future__ import annotations

import os

import pytest

import rocpy
from rocpy.testing import _workers


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STUB = rocpy.backend().is_stub
needs_stub = pytest.mark.skipif(not STUB, reason="the inner suites run on the stub")


@pytest.fixture
def inner(pytester, monkeypatch):
    """``inner(*args, **env)`` runs pytester's suite in a subprocess with the plugin."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name in ("ROCPY_BACKEND", "ROCPY_TEST_GPUS", "PYTEST_XDIST_WORKER", "ROCPY_STUB_DEVICES",
                 "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)

    def run(*args: str, **env: str):
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        return pytester.runpytest_subprocess("-p", "rocpy.testing.plugin", "-p", "no:cacheprovider",
                                             *args, timeout=240)
    return run


@needs_stub
def test_markers_skip_with_a_reason_on_the_stub(pytester, inner):
    pytester.makepyfile("""
        import pytest

        @pytest.mark.gpu
        def test_needs_gpu():
            raise AssertionError("ran on the stub")

        @pytest.mark.stub_only
        def test_stub_only():
            pass

        @pytest.mark.backend("nvidia")
        def test_nvidia_only():
            raise AssertionError("ran on the stub")

        @pytest.mark.backend("amd", "stub")
        def test_amd_or_stub():
            pass
    """)
    result = inner("-rs")
    result.assert_outcomes(passed=2, skipped=2)
    result.stdout.fnmatch_lines(["*needs a GPU; the backend is the stub*",
                                 "*runs on nvidia; the backend is stub*"])


def test_backend_option_sets_rocpy_backend(pytester, inner):
    pytester.makepyfile("""
        import os
        def test_env():
            assert os.environ["ROCPY_BACKEND"] == "nvidia"
    """)
    inner("--rocpy-backend=nvidia").assert_outcomes(passed=1)


def test_backend_option_refuses_a_choice_it_does_not_know(pytester, inner):
    pytester.makepyfile("def test_x():\n    pass\n")
    result = inner("--rocpy-backend=cuda")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--rocpy-backend: invalid choice: 'cuda'*"])


def test_backend_option_after_rocpy_chose_is_a_usage_error(pytester, inner):
    # something chose the stub before the plugin's configure step could apply the option
    pytester.makeconftest("import os, rocpy\nos.environ['ROCPY_BACKEND'] = 'stub'\nrocpy.backend()\n")
    pytester.makepyfile("def test_x():\n    pass\n")
    other = "nvidia"
    result = inner(f"--rocpy-backend={other}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--rocpy-backend={other}: this process already uses the*"])


@needs_stub
def test_leak_check_fails_a_test_that_keeps_an_object(pytester, inner):
    pytester.makepyfile("""
        kept = []

        def test_leaks(rocpy_leak_check, rocpy_device):
            kept.append(rocpy_device.create_stream())

        def test_clean(rocpy_leak_check, rocpy_stream):
            kept.clear()                  # what the first test left goes now
            rocpy_stream.sync()
    """)
    pytester.makeini("[pytest]\nrocpy_leak_timeout = 1\n")
    result = inner()
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*rocpy objects still alive after the test: {'Stream': 1}*"])


@needs_stub
def test_leak_check_runs_outside_the_tests_fixtures_whatever_their_order(pytester, inner):
    # The check is set up before every function-scoped fixture and torn down after them:
    # a stream fixture named before it is not a leak; a fixture that keeps what it made is.
    pytester.makeconftest("""
        import pytest
        kept = []

        @pytest.fixture
        def leaky_stream(rocpy_device):
            kept.append(rocpy_device.create_stream())    # never closed
            yield kept[-1]
    """)
    pytester.makepyfile("""
        def test_stream_named_first(rocpy_stream, rocpy_leak_check):
            rocpy_stream.sync()

        def test_stream_named_last(rocpy_leak_check, rocpy_stream):
            rocpy_stream.sync()

        def test_leaky_fixture_named_first(leaky_stream, rocpy_leak_check):
            leaky_stream.sync()
    """)
    pytester.makeini("[pytest]\nrocpy_leak_timeout = 1\n")
    result = inner()
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at teardown of test_leaky_fixture_named_first*",
                                 "rocpy objects still alive after the test: {'Stream': 1}"])
    result.stdout.no_fnmatch_line("*ERROR*test_stream_named_*")


@needs_stub
def test_leak_check_counts_stub_allocations(pytester, inner):
    pytester.makepyfile("""
        from rocpy.hip import ffi, lib

        def test_raw_malloc(rocpy_leak_check):
            p = ffi.new("void **")
            assert lib.hipMalloc(p, 256) == 0
    """)
    pytester.makeini("[pytest]\nrocpy_leak_timeout = 1\n")
    result = inner()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*stub allocations: * before the test, * after*"])


@needs_stub
def test_ini_option_checks_every_test(pytester, inner):
    pytester.makeini("[pytest]\nrocpy_check_leaks = true\nrocpy_leak_timeout = 1\n")
    pytester.makepyfile("""
        import rocpy.hip
        kept = []

        def test_leaks():
            kept.append(rocpy.hip.Device(0).create_stream())
    """)
    result = inner()
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*rocpy objects still alive after the test*"])


@needs_stub
def test_stub_controls_are_undone_after_each_test(pytester, inner):
    pytester.makepyfile("""
        import pytest
        import rocpy.stub.control as control
        from rocpy.errors import OutOfMemoryError

        def test_arms(rocpy_stub, rocpy_device):
            rocpy_stub.emulate("my_kernel", lambda d: None)
            assert "my_kernel" in control._handles
            rocpy_stub.inject("alloc", skip=5)

        def test_after(rocpy_stub, rocpy_device):
            assert "my_kernel" not in control._handles
            for _ in range(8):
                rocpy_device.context.alloc(64).close()   # the fault armed above is gone
    """)
    inner("-p", "no:randomly").assert_outcomes(passed=2)


@pytest.fixture
def environ(monkeypatch):
    """A copy of os.environ for the test: what assign_from_env sets goes with it."""
    monkeypatch.setattr(os, "environ", dict(os.environ))


def test_worker_takes_its_gpu(monkeypatch, environ):
    for name in ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "_ROCPY_TEST_ROCR_VISIBLE_DEVICES",
                 "_ROCPY_TEST_HIP_VISIBLE_DEVICES", "_ROCPY_TEST_CUDA_VISIBLE_DEVICES",
                 "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ROCPY_TEST_GPUS", "amd:4")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw6")
    share = _workers.assign_from_env()
    assert (share.index, share.variable, share.value) == (2, "ROCR_VISIBLE_DEVICES", "2")
    assert os.environ["ROCR_VISIBLE_DEVICES"] == "2"
    assert _workers.assign_from_env() == share          # idempotent: the original list is kept


def test_worker_picks_from_the_list_the_user_set(monkeypatch, environ):
    monkeypatch.delenv("_ROCPY_TEST_HIP_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "4,5,7")
    monkeypatch.setenv("ROCPY_TEST_GPUS", "amd:3")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw2")
    share = _workers.assign_from_env()
    assert (share.variable, share.value) == ("HIP_VISIBLE_DEVICES", "7")


def test_nvidia_workers_narrow_cuda_visible_devices(monkeypatch, environ):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("_ROCPY_TEST_CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("ROCPY_TEST_GPUS", "nvidia:8")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw9")
    assert _workers.assign_from_env().describe() == \
        "worker gw9 uses GPU 1 of 8 (CUDA_VISIBLE_DEVICES=1)"


def test_one_gpu_is_shared(monkeypatch, environ):
    monkeypatch.setenv("ROCPY_TEST_GPUS", "amd:1")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    share = _workers.assign_from_env()
    assert share.index is None and share.count == 1


def test_the_workers_environment_stays_in_the_test():
    # the tests above ran on a copy of os.environ: nothing they narrowed leaked here
    assert "_ROCPY_TEST_ROCR_VISIBLE_DEVICES" not in os.environ


@needs_stub
def test_xdist_workers_each_get_their_own_stub_device(pytester, inner, tmp_path):
    pytest.importorskip("xdist")
    out = tmp_path / "seen"
    out.mkdir()
    pytester.makepyfile(f"""
        import os
        import rocpy.stub

        def test_where(rocpy_worker_gpu, rocpy_device):
            assert rocpy.stub.device_count() == 1
            name = os.environ["PYTEST_XDIST_WORKER"]
            with open(os.path.join({str(out)!r}, name), "w") as f:
                f.write(os.environ["ROCR_VISIBLE_DEVICES"] + " " + rocpy_worker_gpu.describe())
    """)
    result = inner("-p", "xdist", "-n", "3", "--dist", "each", ROCPY_STUB_DEVICES="3")
    result.assert_outcomes(passed=3)
    seen = {p.name: p.read_text() for p in out.iterdir()}
    assert sorted(v.split()[0] for v in seen.values()) == ["0", "1", "2"]
    assert seen["gw1"].startswith("1 worker gw1 uses GPU 1 of 3 (ROCR_VISIBLE_DEVICES=1)")


@needs_stub
def test_a_test_may_declare_abandoned_allocations(pytester, inner):
    pytester.makeini("[pytest]\nrocpy_leak_timeout = 1\n")
    pytester.makepyfile("""
        import pytest
        from rocpy.hip import ffi, lib

        @pytest.mark.abandons_allocations("kept on purpose")
        def test_abandons(rocpy_leak_check):
            p = ffi.new("void **")
            assert lib.hipMalloc(p, 256) == 0
    """)
    inner().assert_outcomes(passed=1)
