"""IPC memory and event handles (hipamd hip_memory.cpp hipIpc*MemHandle,
hip_event_ipc.cpp; stub: rocpy/_native/stub/hip_ipc.c).

Expectations from ROCm/hip-tests at rocm-5.7.1 (``catch/unit/device/
hipIpc*MemHandle.cc``, ``catch/unit/event/Unit_hipEventIpc.cc``), each cited
by file and line.  hip-tests 5.7 follows hipamd 5.5+ (and ROCm/clr), which
changed three statuses of hipamd 5.2: those tests give both
(tests/rocm_versions.py; the stub's rules table has the same rows)."""
from __future__ import annotations

import textwrap

from rocm_versions import expect, version_sensitive

from .helpers import (check, ffi, hipamd, host_malloc, lib, malloc, ok, run_python,
                      stream, stub_only)

pytestmark = hipamd

# hipamd hip_memory.cpp hipIpcGetMemHandle: IpcCreate failing (rocm-5.5.0 on: InvalidValue)
NOT_DEVICE_MEMORY = {(5, 2): "hipErrorInvalidDevicePointer", (5, 5): "hipErrorInvalidValue"}


def mem_handle(ptr):
    h = ffi.new("hipIpcMemHandle_t *")
    ok(lib.hipIpcGetMemHandle(h, ptr))
    return h


# the handle names the allocation and the pointer's offset; in the process
# that made it, 5.2-5.4 open it (the stub maps the same memory), 5.5+ refuse
# (hipErrorInvalidContext, hip-tests hipIpcOpenMemHandle.cc:60 -- hipamd
# rocm-5.5.0 hipIpcOpenMemHandle's owners_process_id check)
@version_sensitive
def test_get_and_open_in_the_same_process():
    d = malloc(4096)
    h = mem_handle(ffi.cast("char *", d) + 256)
    out = ffi.new("void **")
    st = lib.hipIpcOpenMemHandle(out, h[0], lib.hipIpcMemLazyEnablePeerAccess)
    check(st, expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidContext"}))
    if st == 0:
        assert int(ffi.cast("uintptr_t", out[0])) == int(ffi.cast("uintptr_t", d)) + 256
        ok(lib.hipIpcCloseMemHandle(out[0]))
    ok(lib.hipFree(d))


@version_sensitive
def test_mem_handle_negative():
    h = ffi.new("hipIpcMemHandle_t *")
    d = malloc(1024 * 4)
    check(lib.hipIpcGetMemHandle(ffi.NULL, d), "hipErrorInvalidValue")
    check(lib.hipIpcGetMemHandle(h, ffi.NULL), "hipErrorInvalidValue")
    # hipIpcGetMemHandle.cc:134 (one past the end): hip-tests expects
    # InvalidValue (5.5+); 5.2's IpcCreate failure is hipErrorInvalidDevicePointer
    check(lib.hipIpcGetMemHandle(h, ffi.cast("char *", d) + 4096), expect(NOT_DEVICE_MEMORY))
    pinned = host_malloc(64)
    check(lib.hipIpcGetMemHandle(h, pinned), expect(NOT_DEVICE_MEMORY))   # device memory only
    ok(lib.hipHostFree(pinned))
    good = mem_handle(d)
    ok(lib.hipFree(d))
    # hipIpcGetMemHandle.cc:112 (freed memory): the same two answers
    check(lib.hipIpcGetMemHandle(h, d), expect(NOT_DEVICE_MEMORY))
    out = ffi.new("void **")
    # memory freed since the handle was made: IpcAttach fails (5.5+ refuse
    # the handle's own process before attaching)
    check(lib.hipIpcOpenMemHandle(out, good[0], lib.hipIpcMemLazyEnablePeerAccess),
          expect({(5, 2): "hipErrorInvalidDevicePointer", (5, 5): "hipErrorInvalidContext"}))
    # hipamd: a null pointer, flags other than hipIpcMemLazyEnablePeerAccess,
    # a handle of size 0 are hipErrorInvalidValue
    check(lib.hipIpcOpenMemHandle(ffi.NULL, good[0], 0), "hipErrorInvalidValue")
    check(lib.hipIpcOpenMemHandle(out, good[0], 5), "hipErrorInvalidValue")
    check(lib.hipIpcOpenMemHandle(out, ffi.new("hipIpcMemHandle_t *")[0], 0),
          "hipErrorInvalidValue")


@version_sensitive
def test_close_mem_handle_negative():
    d = malloc(1024)
    mem_handle(d)
    check(lib.hipIpcCloseMemHandle(ffi.NULL), "hipErrorInvalidValue")
    # hipIpcCloseMemHandle.cc:127 (the originating pointer): hip-tests
    # expects InvalidValue (hipamd 5.5+); 5.2's IpcDetach failure is
    # hipErrorInvalidHandle
    check(lib.hipIpcCloseMemHandle(d),
          expect({(5, 2): "hipErrorInvalidHandle", (5, 5): "hipErrorInvalidValue"}))
    ok(lib.hipFree(d))


# stub: the device memory of one process is not another's (listed in
# rocpy.hip.stub_unsupported)
@stub_only
def test_mem_handle_of_another_process_is_not_supported():
    d = malloc(64)
    h = mem_handle(d)
    raw = bytes(ffi.buffer(h))
    code = textwrap.dedent(f"""
        from rocpy import hip
        lib, ffi = hip.lib, hip.ffi
        h = ffi.new("hipIpcMemHandle_t *")
        ffi.buffer(h)[:] = bytes.fromhex("{raw.hex()}")
        out = ffi.new("void **")
        st = lib.hipIpcOpenMemHandle(out, h[0], lib.hipIpcMemLazyEnablePeerAccess)  # 0 in 5.x, 1 in 7.x
        print(ffi.string(lib.hipGetErrorName(st)).decode())
    """)
    r = run_python(code, ROCPY_BACKEND="stub")
    assert r.stdout.strip() == "hipErrorNotSupported", r.stderr
    ok(lib.hipFree(d))


def ipc_event():
    e = ffi.new("hipEvent_t *")
    ok(lib.hipEventCreateWithFlags(e, lib.hipEventDisableTiming | lib.hipEventInterprocess))
    return e[0]


# Unit_hipEventIpc.cc:69-95: an interprocess event records and synchronises
# like any other, has no timing; :105 its handle; :115 opening it in the
# process that made it is hipErrorInvalidContext
def test_ipc_event_in_its_own_process():
    start, stop = ipc_event(), ipc_event()
    ok(lib.hipEventRecord(start, ffi.NULL))
    ok(lib.hipEventRecord(stop, ffi.NULL))
    ok(lib.hipEventSynchronize(stop))
    ok(lib.hipEventQuery(stop))
    ms = ffi.new("float *")
    assert lib.hipEventElapsedTime(ms, start, stop) != 0                # :95
    h = ffi.new("hipIpcEventHandle_t *")
    ok(lib.hipIpcGetEventHandle(h, start))                             # :105
    opened = ffi.new("hipEvent_t *")
    check(lib.hipIpcOpenEventHandle(opened, h[0]), "hipErrorInvalidContext")   # :115
    ok(lib.hipEventDestroy(start))
    ok(lib.hipEventDestroy(stop))


def test_ipc_event_negative():
    h = ffi.new("hipIpcEventHandle_t *")
    e = ffi.new("hipEvent_t *")
    ok(lib.hipEventCreate(e))
    # hipIpcGetEventHandle: null arguments; an event without
    # hipEventInterprocess is hipErrorInvalidConfiguration (Event::GetHandle)
    check(lib.hipIpcGetEventHandle(ffi.NULL, e[0]), "hipErrorInvalidValue")
    check(lib.hipIpcGetEventHandle(h, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipIpcGetEventHandle(h, e[0]), "hipErrorInvalidConfiguration")
    ok(lib.hipEventDestroy(e[0]))
    # hipIpcOpenEventHandle: a null event; a handle naming no shared memory
    # (IPCEvent::OpenHandle's failed mapping)
    check(lib.hipIpcOpenEventHandle(ffi.NULL, h[0]), "hipErrorInvalidValue")
    check(lib.hipIpcOpenEventHandle(e, ffi.new("hipIpcEventHandle_t *")[0]),
          "hipErrorInvalidValue")


# an event handle opened in another process sees this process's records:
# pending while the stream is held, complete once it passes (IPCEvent's
# shared signal ring)
def test_ipc_event_across_processes():    # the module's hipamd mark skips it on nvidia
    s = stream()
    gate = host_malloc(4)
    ffi.cast("uint32_t *", gate)[0] = 0        # fresh memory holds anything
    ok(lib.hipStreamWaitValue32(s, gate, 1, lib.hipStreamWaitValueEq, 0xffffffff))
    e = ipc_event()
    ok(lib.hipEventRecord(e, s))
    h = ffi.new("hipIpcEventHandle_t *")
    ok(lib.hipIpcGetEventHandle(h, e))
    raw = bytes(ffi.buffer(h)).hex()
    code = textwrap.dedent(f"""
        import sys
        from rocpy import hip
        lib, ffi = hip.lib, hip.ffi
        name = lambda st: ffi.string(lib.hipGetErrorName(st)).decode()
        h = ffi.new("hipIpcEventHandle_t *")
        ffi.buffer(h)[:] = bytes.fromhex("{raw}")
        e = ffi.new("hipEvent_t *")
        print(name(lib.hipIpcOpenEventHandle(e, h[0])))
        print(name(lib.hipEventQuery(e[0])), flush=True)
        sys.stdin.readline()
        print(name(lib.hipEventSynchronize(e[0])))
        print(name(lib.hipEventQuery(e[0])))
        print(name(lib.hipEventDestroy(e[0])))
    """)
    import os
    import subprocess
    import sys
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ))
    try:
        first = [child.stdout.readline().strip() for _ in range(2)]
        assert first == ["hipSuccess", "hipErrorNotReady"], child.stderr.read()
        ffi.cast("uint32_t *", gate)[0] = 1
        ok(lib.hipStreamSynchronize(s))
        out, err = child.communicate("go\n", timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
    assert out.split() == ["hipSuccess", "hipSuccess", "hipSuccess"], err
    ok(lib.hipEventDestroy(e))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipHostFree(gate))
