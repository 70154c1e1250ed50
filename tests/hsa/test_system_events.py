"""System events on the Runtime: GPU memory faults reach Python handlers; ROCr's abort rule."""
from __future__ import annotations

import signal as os_signal

import pytest

from rocpy import ClosedError, debug, hsa


def fake_fault(gpu, address=0xbad000, mask=None):
    from rocpy.hsa import ffi, lib
    event = ffi.new("hsa_amd_event_t *")
    event.event_type = lib.HSA_AMD_GPU_MEMORY_FAULT_EVENT
    event.memory_fault.agent = gpu.handle
    event.memory_fault.virtual_address = address
    event.memory_fault.fault_reason_mask = (lib.HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT
                                            | lib.HSA_AMD_MEMORY_FAULT_READ_ONLY) if mask is None else mask
    return event


def test_handler_sees_the_fault_and_handles_it(rt, gpu, capfd):
    from rocpy.hsa import ffi, lib
    seen = []
    rt.on_system_event(lambda e: seen.append(e) or True)
    assert len(rt.system_event_handlers) == 1
    # rocpy's one registered C handler: the Python handler first, SUCCESS means handled
    assert lib.rocpy_hsa_report_system_event(fake_fault(gpu, 0xbad010), ffi.NULL) == lib.HSA_STATUS_SUCCESS
    (event,) = seen
    assert isinstance(event, hsa.MemoryFault)
    assert event.agent == gpu and event.address == 0xbad010
    assert event.reasons == {"page_not_present", "read_only"}
    assert event.reason_mask == lib.HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT | lib.HSA_AMD_MEMORY_FAULT_READ_ONLY
    assert "rocpy: GPU memory fault" not in capfd.readouterr().err   # handled: no report


def test_unhandled_falls_through_to_the_report(rt, gpu, capfd):
    from rocpy.hsa import ffi, lib
    calls = []
    rt.on_system_event(lambda e: calls.append("none"))             # None: not handled
    rt.on_system_event(lambda e: calls.append("false") or False)

    def broken(e):
        calls.append("raise")
        raise RuntimeError("handler bug")
    rt.on_system_event(broken)
    assert lib.rocpy_hsa_report_system_event(fake_fault(gpu, 0xbad020), ffi.NULL) == lib.HSA_STATUS_ERROR
    assert calls == ["none", "false", "raise"]
    err = capfd.readouterr().err
    assert "exception in an HSA system event handler" in err and "handler bug" in err
    assert "rocpy: GPU memory fault" in err and "0xbad020" in err


def test_handlers_go_with_their_runtime(gpu):
    from rocpy.hsa import ffi, lib
    seen = []
    with hsa.Runtime() as inner:
        inner.on_system_event(lambda e: seen.append(e) or True)
    # closed: its handler is forgotten (HSA cannot unregister; rocpy's hook finds none)
    assert lib.rocpy_hsa_report_system_event(fake_fault(gpu, 0xbad030), ffi.NULL) == lib.HSA_STATUS_ERROR
    assert seen == [] and inner.system_event_handlers == []
    with pytest.raises(ClosedError):
        inner.on_system_event(lambda e: True)


def test_other_event_types_and_bad_handlers(rt, gpu):
    from rocpy.hsa import ffi, lib
    seen = []
    rt.on_system_event(lambda e: seen.append(e) or True)
    event = ffi.new("hsa_amd_event_t *")
    event.event_type = 7                      # a type newer headers may add
    assert lib.rocpy_hsa_report_system_event(event, ffi.NULL) == lib.HSA_STATUS_SUCCESS
    assert seen == [hsa.SystemEvent(7)]
    with pytest.raises(TypeError, match="callable"):
        rt.on_system_event("print")


FAULT = """
    import numpy as np
    from rocpy import hsa, stub
    with hsa.Runtime() as rt:
        gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
        exe = hsa.Executable.load(gpu, {path!r})
        host = cpu.pools(fine_grained=True, kernarg=False)[0]
        a, b, c = (host.allocate(4096) for _ in range(3))
        for x in (a, b, c):
            x.allow_access([gpu])
        def handler(event):
            print("EVENT", type(event).__name__, event.agent.name, sorted(event.reasons), flush=True)
            return {handled}
        rt.on_system_event(handler)
        q = gpu.create_queue()
        sig = hsa.Signal(1)
        stub.inject("memory_fault")
        q.dispatch(exe.kernel("vadd"), 1024, 256, (a, b, c, np.int32(1024)), completion_signal=sig)
        print("VALUE", sig.wait("eq", 0, timeout=1), flush=True)
        q.close(); sig.close(); exe.close()
        for x in (a, b, c):
            x.close()
    print("SURVIVED", flush=True)
"""


def test_handled_fault_keeps_the_process(vadd_path, gpu, stub_only, run_python):
    proc = run_python(FAULT.format(path=vadd_path, handled=True))
    assert proc.returncode == 0, proc.stderr
    assert f"EVENT MemoryFault {gpu.name} ['page_not_present']" in proc.stdout
    assert "VALUE 1" in proc.stdout          # the faulted dispatch never completes
    assert "SURVIVED" in proc.stdout
    assert "Memory access fault by GPU" not in proc.stderr


def test_unhandled_fault_aborts_after_the_handler(vadd_path, gpu, stub_only, run_python):
    proc = run_python(FAULT.format(path=vadd_path, handled=False))
    assert proc.returncode == -os_signal.SIGABRT, proc.stderr
    assert "EVENT MemoryFault" in proc.stdout and "SURVIVED" not in proc.stdout
    # then rocpy's report, then the runtime's own message
    assert proc.stderr.index("rocpy: GPU memory fault") < proc.stderr.index("Memory access fault by GPU")
    assert debug.live_objects() == {"Runtime": 1}
