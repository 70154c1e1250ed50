"""Emulations a user can trust (the stub): an emulation that raises is a failed
launch reported at the next synchronization, carrying the exception; the
built-in emulations never run in place of a user's kernel of the same name."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import rocpy
from rocpy import hip

pytestmark = pytest.mark.skipif(not rocpy.backend().is_stub, reason="emulations exist on the stub only")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture
def stub():
    from rocpy import stub
    yield stub
    stub.unregister_kernel("vadd")
    stub.take_failures()


def vadd_args(dev, n=64):
    bufs = [dev.context.alloc(4 * n) for _ in range(3)]
    bufs[0].copy_from(np.arange(n, dtype=np.float32) * 3)
    bufs[1].copy_from(np.arange(n, dtype=np.float32))
    return bufs, (bufs[0], bufs[1], bufs[2], np.int32(n))


def test_a_raising_emulation_is_a_failed_launch(dev, load, stub):
    from rocpy.stub import control
    k = load("vadd")

    def broken(d):
        raise ZeroDivisionError("the emulation's own bug")
    stub.register_kernel("vadd", broken)
    bufs, args = vadd_args(dev)
    with dev.create_stream() as s:
        k.launch(1, 64, args, s)            # enqueued fine
        with pytest.raises(rocpy.HipError) as info:
            s.sync()
        assert info.value.name == "hipErrorLaunchFailure"
        cause = info.value.__cause__
        assert isinstance(cause, rocpy.CallbackError)
        assert isinstance(cause.errors[0], ZeroDivisionError)
        assert "the emulation's own bug" in str(cause)
        assert cause.errors[0].__traceback__ is not None   # the traceback travels with it
        s.sync()                                   # reported once; the stream works on
        stub.register_kernel("vadd", lambda d: None)
        k.launch(1, 64, args, s)
        s.sync()
    assert control.take_failures() == []
    for b in bufs:
        b.close()


def test_the_process_survives_a_raising_emulation():
    """Before: the stub aborted (exit 134) when an emulation raised."""
    code = """if True:
        import numpy as np, rocpy
        from rocpy import hip, stub
        dev = hip.Device(0)
        import sys; sys.path.insert(0, {root!r})
        from tests.kernels.compile import compile_hip
        import tempfile
        k = hip.Module.load(compile_hip("vadd", tempfile.mkdtemp()), dev)["vadd"]
        stub.register_kernel("vadd", lambda d: 1 / 0)
        b = dev.context.alloc(256)
        k.launch(1, 1, (b, b, b, np.int32(1)))
        try:
            dev.sync()
        except rocpy.HipError as e:
            print("raised", e.name, type(e.__cause__).__name__)
    """.format(root=ROOT)
    if not __import__("shutil").which("hipcc"):
        pytest.skip("hipcc not installed")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, ROCPY_BACKEND="stub"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "raised hipErrorLaunchFailure CallbackError"
    assert "ZeroDivisionError" in done.stderr


def test_a_users_vadd_is_not_the_builtin():
    """A user's kernel named vadd, with no emulation, fails naming it: rocpy's
    built-in vadd (a + b) runs only where it was enabled (rocpy's own tests
    enable it through $ROCPY_STUB_BUILTINS)."""
    code = """if True:
        import numpy as np, rocpy, sys, tempfile
        from rocpy import hip
        sys.path.insert(0, {root!r})
        from tests.kernels.compile import compile_hip
        dev = hip.Device(0)
        k = hip.Module.load(compile_hip("vadd", tempfile.mkdtemp()), dev)["vadd"]
        b = dev.context.alloc(256)
        try:
            k.launch(1, 1, (b, b, b, np.int32(1)))
        except rocpy.HipError as e:
            print("refused", e.name)
    """.format(root=ROOT)
    if not __import__("shutil").which("hipcc"):
        pytest.skip("hipcc not installed")
    env = {k: v for k, v in os.environ.items() if k != "ROCPY_STUB_BUILTINS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env=dict(env, ROCPY_BACKEND="stub"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "refused hipErrorLaunchFailure"
    assert "kernel 'vadd' has no way to run on the stub" in done.stderr


def test_a_users_emulation_wins_over_the_builtin(dev, load, stub):
    """rocpy's suite enables the built-in vadd (a + b); the user's emulation of
    the same name (a - b) takes precedence once registered."""
    k = load("vadd")
    bufs, args = vadd_args(dev)
    out = np.zeros(64, np.float32)
    k.launch(1, 64, args)
    dev.sync()
    bufs[2].copy_to(out)
    assert np.array_equal(out, np.arange(64, dtype=np.float32) * 4)

    def vsub(d):
        a, b, c, n = (d.arg(o, f) for o, f in ((0, "Q"), (8, "Q"), (16, "Q"), (24, "i")))
        d.array(c, np.float32, n)[:] = d.array(a, np.float32, n) - d.array(b, np.float32, n)
    stub.register_kernel("vadd", vsub)
    k.launch(1, 64, args)
    dev.sync()
    bufs[2].copy_to(out)
    assert np.array_equal(out, np.arange(64, dtype=np.float32) * 2)
    for b in bufs:
        b.close()


def test_use_builtin_errors(stub):
    with pytest.raises(ValueError, match="no built-in emulation named 'nope'"):
        stub.use_builtin("nope")
    with pytest.raises(TypeError, match="must be a str"):
        stub.use_builtin(3)
    stub.use_builtin("vadd")            # rocpy's suite has it on already: idempotent


def test_the_builtin_namespace_is_not_a_users(stub):
    with pytest.raises(ValueError, match="cannot register"):
        stub.register_kernel("rocpy.builtin.vadd", lambda d: 0)


def test_arguments_by_name_and_type(dev, load, stub):
    k = load("vadd")
    bufs, args = vadd_args(dev)
    seen = {}

    def vsub(d):
        seen.update(d.args)
        a = d.args
        d.array(a["c"], np.float32, a["n"])[:] = (d.array(a["a"], np.float32, a["n"]) -
                                                 d.array(a["b"], np.float32, a["n"]))
    stub.register_kernel("vadd", vsub, signature="const float *a, const float *b, float *c, int n")
    k.launch(1, 64, args)
    dev.sync()
    assert seen == {"a": bufs[0].ptr, "b": bufs[1].ptr, "c": bufs[2].ptr, "n": 64}
    out = np.zeros(64, np.float32)
    bufs[2].copy_to(out)
    assert np.array_equal(out, np.arange(64, dtype=np.float32) * 2)
    for b in bufs:
        b.close()


def test_args_without_a_signature_says_how(dev, load, stub):
    k = load("vadd")
    bufs, args = vadd_args(dev)
    stub.register_kernel("vadd", lambda d: d.args)
    k.launch(1, 64, args)
    with pytest.raises(rocpy.HipError) as info:
        dev.sync()
    assert "no signature was registered" in str(info.value.__cause__.errors[0])
    for b in bufs:
        b.close()


def test_signature_layout_and_errors():
    from rocpy.stub.signature import Signature
    s = Signature("char c, double d, const float *__restrict__ p, unsigned int n, short h")
    assert s.fields == [("c", "b", 0), ("d", "d", 8), ("p", "Q", 16), ("n", "I", 24), ("h", "h", 28)]
    assert s.size == 30
    with pytest.raises(ValueError, match="unknown type 'struct3'"):
        Signature("struct3 x")
    with pytest.raises(ValueError, match="cannot read parameter"):
        Signature("float")
    with pytest.raises(ValueError, match="repeats"):
        Signature("int a, int a")
    with pytest.raises(TypeError, match="must be a str"):
        Signature(3)
    with pytest.raises(ValueError, match="fewer than the signature's 30"):
        s.unpack(memoryview(bytes(8)), "k")


def test_register_with_a_bad_signature_registers_nothing(stub):
    from rocpy.stub import control
    with pytest.raises(ValueError, match="unknown type"):
        stub.register_kernel("rocpy_sig_test", lambda d: 0, signature="vec3 v")
    assert "rocpy_sig_test" not in control._handles


def test_a_mangled_name_gives_the_types_without_a_signature(dev, stub, kernel_cache):
    """A C++ kernel's symbol encodes its parameter types: the emulation gets them as
    ``arg0``... without a signature (issue 25: by type where the mangled name gives it)."""
    from kernels.compile import compile_hip, find_hipcc
    if find_hipcc() is None:
        pytest.skip("hipcc is not installed")
    mod = hip.Module.load(compile_hip("mangled", kernel_cache), dev)
    k = mod["_Z5scalePfif"]                  # scale(float* x, int n, float a)
    seen = {}
    stub.register_kernel("_Z5scalePfif", lambda d: seen.update(d.args))
    buf = dev.context.alloc(64)
    k.launch(1, 16, (buf, 16, 2.5))           # typed from the same name: plain numbers
    dev.sync()
    assert seen == {"arg0": buf.ptr, "arg1": 16, "arg2": 2.5}
    buf.close()
    mod.close()


def test_signatures_from_symbols():
    from rocpy.stub.signature import from_symbol
    assert from_symbol("_Z5scalePfif").fields == [("arg0", "Q", 0), ("arg1", "i", 8),
                                                  ("arg2", "f", 12)]
    assert from_symbol("_Z6kconstPKfPKiPVj").size == 24
    assert from_symbol("vadd") is None                   # extern "C": no types
    assert from_symbol("_Z4kvec15HIP_vector_typeIfLj4EEPS_IfLj2EES_IiLj3EE") is None  # by-value vectors
    assert from_symbol("_Z3kfpPFviEPi") is None          # unreadable: a function pointer
