"""hsa.Runtime: hsa_init/hsa_shut_down counting, system info, extensions, fault reports."""
from __future__ import annotations

import pickle
import signal as os_signal

import pytest

from rocpy import debug, hsa
from rocpy.errors import ClosedError, HsaError, HsaNotInitializedError


def test_runtime_is_a_counted_context_manager():
    with hsa.Runtime() as rt:
        assert not rt.closed
        assert debug.live_objects() == {"Runtime": 1}
    assert rt.closed
    assert debug.live_objects() == {}
    rt.close()  # idempotent


def test_runtimes_nest_and_close_in_any_order():
    outer = hsa.Runtime()
    inner = hsa.Runtime()
    assert hsa.Runtime.current() is inner
    outer.close()
    assert hsa.Runtime.current() is inner
    assert inner.version >= (1, 0)        # the runtime is still up for inner
    inner.close()
    assert debug.live_objects() == {}


def test_runtime_stays_up_while_its_objects_live():
    rt = hsa.Runtime()
    sig = hsa.Signal(5, runtime=rt)
    rt.close()
    assert rt.closed
    assert debug.live_objects() == {"Runtime": 1, "Signal": 1}   # hsa_shut_down deferred
    sig.add(1)
    assert sig.load() == 6
    sig.close()
    assert debug.live_objects() == {}


def test_objects_without_a_runtime_share_an_implicit_one():
    a = hsa.Signal(1)
    b = hsa.Signal(2)
    assert a.runtime is b.runtime
    assert debug.live_objects() == {"Runtime": 1, "Signal": 2}
    a.close()
    b.close()
    debug.collect()
    assert debug.live_objects() == {}


def test_shut_down_count_is_right(stub_only):
    from rocpy.hsa import lib
    with hsa.Runtime():
        with hsa.Runtime():
            pass
        assert lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_VERSION_MAJOR,
                                       hsa.ffi.new("uint16_t *")) == 0
    # every hsa_init of rocpy was matched: the runtime is down
    st = lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_VERSION_MAJOR, hsa.ffi.new("uint16_t *"))
    assert st == lib.HSA_STATUS_ERROR_NOT_INITIALIZED


def test_system_information(rt):
    major, minor = rt.version
    assert major >= 1 and minor >= 0
    assert rt.timestamp_frequency > 0
    t0 = rt.timestamp
    assert rt.timestamp >= t0
    assert rt.endianness == "little"
    assert rt.machine_model == "large"
    assert rt.signal_max_wait > 0
    assert isinstance(rt.svm_supported, bool)
    assert isinstance(rt.svm_accessible_by_default, bool)
    assert rt.xnack_enabled in (None, True, False)
    assert isinstance(rt.build_version, (str, type(None)))


def test_info_by_name_and_unknown_attribute(rt):
    assert rt.info("HSA_SYSTEM_INFO_VERSION_MAJOR", "u16") == rt.version[0]
    with pytest.raises(ValueError, match="no HSA_NOT_A_THING"):
        rt.info("HSA_NOT_A_THING", "u16")
    with pytest.raises(HsaError) as e:
        rt.info(0x7fffffff, "u64")
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    assert e.value.call == "hsa_system_get_info"


def test_extensions(rt, stub_only):
    assert "amd_profiler" in rt.extensions
    assert rt.extension_supported("amd_profiler")
    assert rt.extension_supported("HSA_EXTENSION_AMD_PROFILER", 1, 0)
    assert not rt.extension_supported("images")
    with pytest.raises(ValueError, match="unknown HSA extension 'warp_drive'"):
        rt.extension_supported("warp_drive")


def test_agents_are_listed_once(rt):
    agents = rt.agents
    assert agents == rt.agents
    assert [a is b for a, b in zip(agents, rt.agents)] == [True] * len(agents)
    assert all(a.is_gpu for a in rt.gpu_agents)
    assert all(a.is_cpu for a in rt.cpu_agents)
    assert len(rt.cpu_agents) >= 1
    assert len(rt.gpu_agents) + len(rt.cpu_agents) <= len(agents)


def test_closed_runtime_refuses_use():
    rt = hsa.Runtime()
    rt.close()
    with pytest.raises(ClosedError, match="Runtime is closed"):
        _ = rt.agents
    with pytest.raises(ClosedError):
        rt.info("HSA_SYSTEM_INFO_VERSION_MAJOR", "u16")


def test_agents_refuse_use_once_the_runtime_is_down():
    rt = hsa.Runtime()
    gpu = rt.agents[0]
    name = gpu.name
    rt.close()
    assert gpu.name == name                     # read while the runtime was up
    with pytest.raises(ClosedError, match="runtime it came from was shut down"):
        gpu.pools()


def test_agents_stay_usable_while_an_object_keeps_the_runtime_up():
    rt = hsa.Runtime()
    cpu = rt.cpu_agents[0]
    sig = hsa.Signal(0, runtime=rt)
    rt.close()
    assert cpu.pools()                           # the runtime is up: sig holds it
    sig.close()
    with pytest.raises(ClosedError):
        cpu.pools()


def test_runtime_cannot_be_pickled(rt):
    with pytest.raises(TypeError, match="cannot be copied or pickled"):
        pickle.dumps(rt)


def test_hsa_errors_name_the_call_and_status(stub_only):
    from rocpy.hsa import ffi, lib
    # without rocpy's Runtime and with nothing else open, HSA is not initialized
    out = ffi.new("uint16_t *")
    st = lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_VERSION_MAJOR, out)
    from rocpy.errors import hsa_error
    err = hsa_error(st, "hsa_system_get_info")
    assert isinstance(err, HsaNotInitializedError)
    assert err.name == "HSA_STATUS_ERROR_NOT_INITIALIZED"


# ---- the GPU memory fault report ---------------------------------------------------------

def test_fault_report_prints_agent_address_and_access(rt, gpu, capfd):
    from rocpy.hsa import ffi, lib
    event = ffi.new("hsa_amd_event_t *")
    event.event_type = lib.HSA_AMD_GPU_MEMORY_FAULT_EVENT
    event.memory_fault.agent = gpu.handle
    event.memory_fault.virtual_address = 0xdead0000 + id(event) % 4096 * 16
    event.memory_fault.fault_reason_mask = (lib.HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT |
                                            lib.HSA_AMD_MEMORY_FAULT_READ_ONLY)
    before = lib.rocpy_hsa_reported_events()
    assert lib.rocpy_hsa_report_system_event(event, ffi.NULL) == lib.HSA_STATUS_ERROR
    # the same fault seen by a second registration of the handler prints once
    assert lib.rocpy_hsa_report_system_event(event, ffi.NULL) == lib.HSA_STATUS_ERROR
    assert lib.rocpy_hsa_reported_events() == before + 1
    err = capfd.readouterr().err
    assert err.count("rocpy: GPU memory fault") == 1
    assert f"agent {gpu.name}" in err
    assert f"0x{event.memory_fault.virtual_address:x}" in err
    assert "page not present or supervisor privilege, write access to a read-only page" in err
    assert "The HSA runtime aborts the process" in err


def test_fault_reason_text():
    from rocpy.hsa import ffi, lib
    buf = ffi.new("char[256]")
    lib.rocpy_hsa_fault_reason_text(0, buf, 256)
    assert ffi.string(buf) == b"unknown reason"
    lib.rocpy_hsa_fault_reason_text(lib.HSA_AMD_MEMORY_FAULT_NX, buf, 256)
    assert ffi.string(buf) == b"execute access to a page marked no-execute"
    lib.rocpy_hsa_fault_reason_text(0xff, buf, 16)      # truncated, still terminated
    assert len(ffi.string(buf)) < 16


FAULTING_DISPATCH = """
    import numpy as np
    from rocpy import hsa, stub
    with hsa.Runtime() as rt:
        gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
        exe = hsa.Executable.load(gpu, {path!r})
        host = cpu.pools(fine_grained=True, kernarg=False)[0]
        a, b, c = (host.allocate(4096) for _ in range(3))
        {grant}
        q = gpu.create_queue()
        sig = hsa.Signal(1)
        {inject}
        print("BUFFER", hex(a.ptr), flush=True)
        q.dispatch(exe.kernel("vadd"), 1024, 256, (a, b, c, np.int32(1024)), completion_signal=sig)
        sig.wait("eq", 0, timeout=30)
        print("NOT REACHED", flush=True)
"""


@pytest.mark.parametrize("case", ["unmapped buffer", "injected"])
def test_gpu_memory_fault_is_reported_before_the_abort(vadd_path, stub_only, case, run_python):
    if case == "unmapped buffer":   # the GPU was never granted access to host memory
        code = FAULTING_DISPATCH.format(path=vadd_path, grant="", inject="")
    else:
        code = FAULTING_DISPATCH.format(path=vadd_path, grant="for x in (a, b, c): x.allow_access([gpu])",
                                        inject="stub.inject('memory_fault')")
    proc = run_python(code)
    assert proc.returncode == -os_signal.SIGABRT, proc.stderr
    assert "NOT REACHED" not in proc.stdout
    address = proc.stdout.split("BUFFER", 1)[1].split()[0]
    report = [line for line in proc.stderr.splitlines() if line.startswith("rocpy: GPU memory fault")]
    assert len(report) == 1, proc.stderr
    assert "on agent gfx" in report[0]
    assert f"accessing address {address}" in report[0]
    assert "page not present" in report[0]
    # then the runtime's own message, as without rocpy
    assert proc.stderr.index("rocpy: GPU memory fault") < proc.stderr.index("Memory access fault by GPU")
