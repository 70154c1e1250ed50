"""Status codes to exceptions (rocpy/errors.py): with a fake ffi/lib, then the real backend."""
from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocpy import errors
from rocpy.errors import (
    ClosedError,
    HipError,
    HipInvalidHandleError,
    HipInvalidValueError,
    HipNotReadyError,
    HipOutOfMemoryError,
    HiprtcError,
    HiprtcInvalidValueError,
    HsaError,
    HsaInvalidHandleError,
    HsaInvalidValueError,
    HsaNotInitializedError,
    InvalidValueError,
    NotReadyError,
    OutOfMemoryError,
    RocpyError,
    check_hip,
    check_hsa,
    hip_error,
    hiprtc_error,
    hsa_error,
)


class FakeEnum:
    def __init__(self, ctype: str, value: int) -> None:
        self.ctype, self.value = ctype, value


class FakeFFI:
    """What errors.py uses of cffi: cast to an enum, string of an enum or a char*."""

    NULL = None

    def __init__(self, enums: dict[str, dict[int, str]]) -> None:
        self.enums = enums

    def cast(self, ctype: str, value: int) -> FakeEnum:
        return FakeEnum(ctype, value)

    def string(self, cdata):
        if isinstance(cdata, FakeEnum):
            return self.enums[cdata.ctype].get(cdata.value, str(cdata.value))
        return cdata

    def new(self, ctype: str) -> list:
        return [None]


class FakeLib:
    # hsa_ext_amd.h adds statuses in an anonymous enum: constants only
    HSA_STATUS_ERROR_INVALID_MEMORY_POOL = 40
    HSA_AMD_AGENT_INFO_SOMETHING = 40  # same value, another enum: must not be chosen

    def __init__(self, hip: dict[int, bytes], hsa: dict[int, bytes], hiprtc: dict[int, bytes]):
        self.hip, self.hsa, self.hiprtc = hip, hsa, hiprtc
        self.lookups = 0

    def hipGetErrorString(self, status: int) -> bytes:
        self.lookups += 1
        return self.hip.get(status, b"unknown error")

    def hsa_status_string(self, status: int, out: list) -> int:
        self.lookups += 1
        if status not in self.hsa:
            return 0x1001
        out[0] = self.hsa[status]
        return 0

    def hiprtcGetErrorString(self, status: int) -> bytes:
        return self.hiprtc[status]


HIP_ENUM = {1: "hipErrorInvalidValue", 2: "hipErrorMemoryAllocation", 400: "hipErrorInvalidHandle",
            600: "hipErrorNotReady", 999: "hipErrorUnknown"}
HSA_ENUM = {0x1001: "HSA_STATUS_ERROR_INVALID_ARGUMENT", 0x100B: "HSA_STATUS_ERROR_NOT_INITIALIZED"}


@pytest.fixture
def fake():
    ffi = FakeFFI({"hipError_t": HIP_ENUM, "hsa_status_t": HSA_ENUM,
                   "hiprtcResult": {3: "HIPRTC_ERROR_INVALID_INPUT"}})
    lib = FakeLib(hip={1: b"invalid argument", 2: b"out of memory", 600: b"device not ready"},
                  hsa={0x1001: b"HSA_STATUS_ERROR_INVALID_ARGUMENT: A bad argument",
                       40: b"The memory pool is invalid."},
                  hiprtc={3: b"HIPRTC_ERROR_INVALID_INPUT"})
    for family in (errors.HIP, errors.HSA, errors.HIPRTC):
        family.bind(ffi, lib)
    yield ffi, lib
    for family in (errors.HIP, errors.HSA, errors.HIPRTC):
        family.bind(None, None)


def test_str_names_call_status_message_and_code(fake):
    err = hip_error(2, "hipMalloc")
    assert str(err) == "hipMalloc failed: hipErrorOutOfMemory (out of memory) [2]"
    assert (err.status, err.name, err.message, err.call) == (
        2, "hipErrorOutOfMemory", "out of memory", "hipMalloc")


def test_out_of_memory_is_catchable_family_neutral_and_as_memory_error(fake):
    with pytest.raises(OutOfMemoryError) as info:
        check_hip(2, "hipMalloc")
    assert type(info.value) is HipOutOfMemoryError
    assert isinstance(info.value, (HipError, MemoryError, RocpyError))
    assert not isinstance(info.value, HsaError)


def test_classes_follow_names_not_numbers(fake):
    ffi, lib = fake
    ffi.enums["hipError_t"] = {7001: "hipErrorNotReady", 7002: "hipErrorInvalidValue"}
    errors.HIP.bind(ffi, lib)
    assert type(hip_error(7001, "hipEventQuery")) is HipNotReadyError
    assert isinstance(hip_error(7001, "hipEventQuery"), NotReadyError)
    err = hip_error(7002, "hipMemset")
    assert type(err) is HipInvalidValueError and isinstance(err, (InvalidValueError, ValueError))
    assert type(hip_error(1, "x")) is HipError  # 1 is no longer InvalidValue here


def test_invalid_handle_and_unknown_statuses(fake):
    assert type(hip_error(400, "hipStreamDestroy")) is HipInvalidHandleError
    err = hip_error(999, "hipDeviceSynchronize")
    assert type(err) is HipError and err.name == "hipErrorUnknown"
    unknown = hip_error(12345, "hipFoo")
    assert type(unknown) is HipError
    assert (unknown.name, unknown.message) == ("12345", "unknown error")


def test_hsa_statuses_use_the_runtime_text(fake):
    err = hsa_error(0x1001, "hsa_signal_create")
    assert type(err) is HsaInvalidValueError
    assert err.message == "HSA_STATUS_ERROR_INVALID_ARGUMENT: A bad argument"
    assert str(err).startswith("hsa_signal_create failed: HSA_STATUS_ERROR_INVALID_ARGUMENT (")
    nomsg = hsa_error(0x100B, "hsa_queue_create")
    assert type(nomsg) is HsaNotInitializedError and nomsg.message == "unknown status"


def test_hsa_extension_status_found_among_the_constants(fake):
    err = hsa_error(40, "hsa_amd_memory_pool_allocate")
    assert err.name == "HSA_STATUS_ERROR_INVALID_MEMORY_POOL"
    assert type(err) is HsaInvalidHandleError
    assert err.message == "The memory pool is invalid."


def test_hiprtc_statuses(fake):
    err = hiprtc_error(3, "hiprtcCompileProgram")
    assert type(err) is HiprtcInvalidValueError and isinstance(err, HiprtcError)
    assert str(err) == ("hiprtcCompileProgram failed: HIPRTC_ERROR_INVALID_INPUT "
                        "(HIPRTC_ERROR_INVALID_INPUT) [3]")


def test_lookups_are_cached_per_code_and_success_costs_none(fake):
    _, lib = fake
    check_hip(0, "hipMalloc")
    check_hsa(0, "hsa_init")
    assert lib.lookups == 0
    for _ in range(3):
        with pytest.raises(HipError):
            check_hip(1, "hipMemcpy")
    assert lib.lookups == 1
    assert hip_error(1, "a").call == "a" and hip_error(1, "b").call == "b"
    assert lib.lookups == 1


def test_a_failing_lookup_still_gives_an_error(fake):
    ffi, _ = fake

    class BrokenLib:
        def hipGetErrorString(self, status):
            raise RuntimeError("library gone")

    errors.HIP.bind(ffi, BrokenLib())
    err = hip_error(2, "hipMalloc")
    assert type(err) is HipOutOfMemoryError and err.message == "unknown status"


def test_without_a_backend_the_number_stands_in_for_the_name(monkeypatch):
    def no_backend():
        raise ImportError("rocpy._backend is not built")

    monkeypatch.setattr(errors, "_backend_api", no_backend)
    errors.HIP.bind(None, None)
    err = hip_error(2, "hipMalloc")
    assert (type(err), err.name, err.message) == (HipError, "2", "unknown status")
    errors.HIP.bind(None, None)


def test_errors_survive_pickling(fake):
    err = pickle.loads(pickle.dumps(hip_error(2, "hipMalloc")))
    assert type(err) is HipOutOfMemoryError
    assert str(err) == "hipMalloc failed: hipErrorOutOfMemory (out of memory) [2]"


def test_closed_error_is_a_value_error():
    assert issubclass(ClosedError, ValueError) and issubclass(ClosedError, RocpyError)


def test_callback_error_summarizes_its_errors():
    err = errors.CallbackError([KeyError("a"), ValueError("b")])
    assert str(err) == "a callback raised KeyError: 'a' (and 1 more)"


@given(status=st.integers(min_value=1, max_value=2**31 - 1), call=st.text(min_size=1))
def test_any_status_gives_an_error_naming_call_and_code(status, call):
    ffi = FakeFFI({"hipError_t": HIP_ENUM})
    errors.HIP.bind(ffi, FakeLib({}, {}, {}))
    try:
        err = hip_error(status, call)
    finally:
        errors.HIP.bind(None, None)
    assert isinstance(err, HipError)
    assert str(err).startswith(f"{call} failed: ") and str(err).endswith(f"[{status}]")


# --- the real backend, once rocpy._backend is built ---------------------------------

@pytest.fixture
def backend():
    module = pytest.importorskip("rocpy._backend", reason="rocpy._backend is not there yet")
    try:
        current = module.current()
    except Exception as exc:  # the extension modules are not built here
        pytest.skip(f"no backend module loads: {exc}")
    for family in (errors.HIP, errors.HSA, errors.HIPRTC):
        family.bind(None, None)
    return current


def runtime_text(ffi, ptr) -> str:
    return "unknown status" if ptr == ffi.NULL else ffi.string(ptr).decode()


@pytest.mark.parametrize("name, cls", [
    ("hipErrorInvalidValue", HipInvalidValueError),
    ("hipErrorOutOfMemory", HipOutOfMemoryError),
    ("hipErrorNotReady", HipNotReadyError),
    ("hipErrorInvalidHandle", HipInvalidHandleError),
])
def test_real_hip_statuses(backend, name, cls):
    status = getattr(backend.lib, name)
    err = hip_error(status, "hipTest")
    assert type(err) is cls and err.name == name
    assert err.message == runtime_text(backend.ffi, backend.lib.hipGetErrorString(status))


@pytest.mark.parametrize("name, cls", [
    ("HSA_STATUS_ERROR_INVALID_ARGUMENT", HsaInvalidValueError),
    ("HSA_STATUS_ERROR_INVALID_SIGNAL", HsaInvalidHandleError),
    ("HSA_STATUS_ERROR_INVALID_MEMORY_POOL", HsaInvalidHandleError),  # an anonymous enum
])
def test_real_hsa_statuses(backend, name, cls):
    if backend.name == "nvidia":
        pytest.skip("the nvidia backend has no HSA")
    ffi, lib = backend.ffi, backend.lib
    status = getattr(lib, name)
    err = hsa_error(status, "hsa_test")
    assert type(err) is cls and err.name == name
    out = ffi.new("const char **")
    text = runtime_text(ffi, out[0]) if lib.hsa_status_string(status, out) == 0 else "unknown status"
    assert err.message == text
