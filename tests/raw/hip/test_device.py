"""Devices: count, current device, properties, attributes, synchronisation,
reset, peers, versions (hipamd hip_device.cpp, hip_device_runtime.cpp,
hip_peer.cpp)."""
from __future__ import annotations

import os
import sys
import threading

import pytest

from .helpers import (BACKEND, HostLog, check, device_count, ffi, hipamd, lib, malloc, ok,
                      run_python, stream, stub_only)


# platform-independent
def test_device_count_and_bad_pointer():
    n = ffi.new("int *")
    ok(lib.hipGetDeviceCount(n))
    assert n[0] >= 1
    check(lib.hipGetDeviceCount(ffi.NULL), "hipErrorInvalidValue")


# platform-independent
def test_set_and_get_device_are_per_thread():
    d = ffi.new("int *")
    ok(lib.hipGetDevice(d))
    assert d[0] == 0
    check(lib.hipSetDevice(device_count()), "hipErrorInvalidDevice")
    check(lib.hipSetDevice(-1), "hipErrorInvalidDevice")
    check(lib.hipGetDevice(ffi.NULL), "hipErrorInvalidValue")
    last = device_count() - 1
    ok(lib.hipSetDevice(last))
    seen = []

    def other():
        dd = ffi.new("int *")
        lib.hipGetDevice(dd)
        seen.append(dd[0])

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [0]                     # a new thread starts on device 0
    ok(lib.hipGetDevice(d))
    assert d[0] == last


# platform-independent: the fields every backend fills
def test_properties_are_consistent_with_attributes():
    p = ffi.new("hipDeviceProp_t *")
    ok(lib.hipGetDeviceProperties(p, 0))
    assert p.totalGlobalMem > 0 and p.multiProcessorCount > 0
    assert p.maxThreadsPerBlock == 1024
    assert p.warpSize in (32, 64)
    v = ffi.new("int *")
    for attr, field in [("hipDeviceAttributeMaxThreadsPerBlock", p.maxThreadsPerBlock),
                        ("hipDeviceAttributeWarpSize", p.warpSize),
                        ("hipDeviceAttributeMultiprocessorCount", p.multiProcessorCount),
                        ("hipDeviceAttributeMaxBlockDimX", p.maxThreadsDim[0]),
                        ("hipDeviceAttributeMaxGridDimX", p.maxGridSize[0]),
                        ("hipDeviceAttributeClockRate", p.clockRate),
                        ("hipDeviceAttributeMemoryBusWidth", p.memoryBusWidth),
                        ("hipDeviceAttributeL2CacheSize", p.l2CacheSize),
                        ("hipDeviceAttributeComputeCapabilityMajor", p.major),
                        ("hipDeviceAttributeComputeCapabilityMinor", p.minor),
                        ("hipDeviceAttributePciBusId", p.pciBusID),
                        ("hipDeviceAttributeMaxSharedMemoryPerBlock", p.sharedMemPerBlock),
                        ("hipDeviceAttributeConcurrentKernels", p.concurrentKernels),
                        ("hipDeviceAttributeCanMapHostMemory", p.canMapHostMemory),
                        ("hipDeviceAttributeManagedMemory", p.managedMemory)]:
        if attr == "hipDeviceAttributeManagedMemory" and BACKEND == "nvidia":
            continue   # HIP 5.2's NVIDIA hipGetDeviceProperties leaves managedMemory 0
        ok(lib.hipDeviceGetAttribute(v, getattr(lib, attr), 0))
        assert v[0] == field, attr
    check(lib.hipGetDeviceProperties(ffi.NULL, 0), "hipErrorInvalidValue")
    check(lib.hipGetDeviceProperties(p, device_count()), "hipErrorInvalidDevice")
    check(lib.hipDeviceGetAttribute(ffi.NULL, lib.hipDeviceAttributeWarpSize, 0),
          "hipErrorInvalidValue")
    check(lib.hipDeviceGetAttribute(v, lib.hipDeviceAttributeWarpSize, device_count()),
          "hipErrorInvalidDevice")


# hipamd-specific: the AMD fields, and what the stub's default gfx90a is
@stub_only
def test_stub_properties_describe_the_agent():
    p = ffi.new("hipDeviceProp_t *")
    ok(lib.hipGetDeviceProperties(p, 0))
    assert ffi.string(p.name) == b"AMD Instinct MI210"
    assert ffi.string(p.gcnArchName) == b"gfx90a:sramecc+:xnack-"
    assert (p.major, p.minor) == (9, 0)
    if hasattr(p, "gcnArch"):            # HIP 6.0 removed it
        assert p.gcnArch == 910
    assert p.totalGlobalMem == 64 << 30 and p.multiProcessorCount == 104
    assert p.sharedMemPerBlock == 65536 and p.warpSize == 64
    assert p.clockRate == 1700000 and p.maxGridSize[0] == 2**31 - 1
    assert p.l2CacheSize == 8 << 20 and p.memoryBusWidth == 4096


# hipamd-specific: gfx10/11 report wave32, and the arch flags
@stub_only
def test_stub_wave32_and_arch_flags_on_rdna():
    r = run_python(
        "from rocpy import hip\n"
        "p = hip.ffi.new('hipDeviceProp_t *')\n"
        "assert hip.lib.hipGetDeviceProperties(p, 0) == 0\n"
        "print(p.warpSize, hip.ffi.string(p.gcnArchName).decode(), p.major, p.minor,"
        " p.arch.hasDoubles, p.arch.hasDynamicParallelism)\n",
        ROCPY_STUB_ARCH="gfx1100")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["32", "gfx1100", "11", "0", "1", "0"]


# hipamd-specific: attributes hipamd 5.2 does not answer are hipErrorInvalidValue
@hipamd
def test_unknown_attribute_is_invalid_value():
    v = ffi.new("int *")
    check(lib.hipDeviceGetAttribute(v, lib.hipDeviceAttributeTotalGlobalMem, 0),
          "hipErrorInvalidValue")
    check(lib.hipDeviceGetAttribute(v, 9999, 0), "hipErrorInvalidValue")


# platform-independent
def test_device_queries():
    name = ffi.new("char[256]")
    ok(lib.hipDeviceGetName(name, 256, 0))
    assert ffi.string(name)
    total = ffi.new("size_t *")
    ok(lib.hipDeviceTotalMem(total, 0))
    p = ffi.new("hipDeviceProp_t *")
    ok(lib.hipGetDeviceProperties(p, 0))
    assert total[0] == p.totalGlobalMem
    major, minor = ffi.new("int *"), ffi.new("int *")
    ok(lib.hipDeviceComputeCapability(major, minor, 0))
    assert (major[0], minor[0]) == (p.major, p.minor)
    dev = ffi.new("hipDevice_t *")
    ok(lib.hipDeviceGet(dev, 0))
    assert dev[0] == 0
    bus = ffi.new("char[32]")
    ok(lib.hipDeviceGetPCIBusId(bus, 32, 0))
    back = ffi.new("int *")
    ok(lib.hipDeviceGetByPCIBusId(back, bus))
    assert back[0] == 0


# hipamd-specific statuses of the device queries (CUDA truncates names...)
@hipamd
def test_bad_device_queries():
    name = ffi.new("char[256]")
    check(lib.hipDeviceGetName(name, 2, 0), "hipErrorInvalidValue")
    check(lib.hipDeviceGetName(ffi.NULL, 256, 0), "hipErrorInvalidValue")
    check(lib.hipDeviceGetName(name, 256, device_count()), "hipErrorInvalidDevice")
    total = ffi.new("size_t *")
    check(lib.hipDeviceTotalMem(total, -1), "hipErrorInvalidDevice")
    dev = ffi.new("hipDevice_t *")
    check(lib.hipDeviceGet(dev, device_count()), "hipErrorInvalidDevice")
    bus = ffi.new("char[32]")
    back = ffi.new("int *")
    check(lib.hipDeviceGetByPCIBusId(back, b"zzzz"), "hipErrorInvalidValue")
    check(lib.hipDeviceGetPCIBusId(bus, 32, device_count()), "hipErrorInvalidDevice")


# platform-independent
def test_versions_are_the_emulated_release():
    v = ffi.new("int *")
    ok(lib.hipRuntimeGetVersion(v))
    runtime = v[0]
    ok(lib.hipDriverGetVersion(v))
    check(lib.hipRuntimeGetVersion(ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipDriverGetVersion(ffi.NULL), "hipErrorInvalidValue")
    if BACKEND == "stub":
        # the emulated release's (ROCPY_STUB_ROCM), the headers' own by default
        from rocpy import stub
        major, minor = stub.rocm_version()
        built = stub.built_version() == (major, minor)
        want = lib.HIP_VERSION if built else major * 10_000_000 + minor * 100_000
        assert runtime == want and v[0] == want


# hipamd-specific: least 1 (low), greatest -1 (high)
@hipamd
def test_stream_priority_range():
    least, greatest = ffi.new("int *"), ffi.new("int *")
    ok(lib.hipDeviceGetStreamPriorityRange(least, greatest))
    assert (least[0], greatest[0]) == (1, -1)
    ok(lib.hipDeviceGetStreamPriorityRange(ffi.NULL, ffi.NULL))


# hipamd-specific statuses for flags and limits
@hipamd
def test_device_flags_and_limits():
    f = ffi.new("unsigned int *")
    ok(lib.hipSetDeviceFlags(lib.hipDeviceScheduleBlockingSync))
    ok(lib.hipGetDeviceFlags(f))
    assert f[0] == lib.hipDeviceScheduleBlockingSync
    check(lib.hipSetDeviceFlags(0x1000), "hipErrorInvalidValue")
    ok(lib.hipSetDeviceFlags(lib.hipDeviceScheduleSpin))
    check(lib.hipGetDeviceFlags(ffi.NULL), "hipErrorInvalidValue")
    size = ffi.new("size_t *")
    ok(lib.hipDeviceGetLimit(size, lib.hipLimitMallocHeapSize))
    check(lib.hipDeviceGetLimit(size, lib.hipLimitPrintfFifoSize), "hipErrorUnsupportedLimit")
    check(lib.hipDeviceGetLimit(ffi.NULL, lib.hipLimitMallocHeapSize), "hipErrorInvalidValue")


# platform-independent
def test_choose_device():
    d = ffi.new("int *")
    p = ffi.new("hipDeviceProp_t *")
    ok(lib.hipChooseDevice(d, p))
    assert d[0] == 0
    check(lib.hipChooseDevice(ffi.NULL, p), "hipErrorInvalidValue")


# platform-independent
def test_device_synchronize_waits_for_every_stream():
    log = HostLog()
    blocking, nonblocking = stream(0), stream(lib.hipStreamNonBlocking)
    log.enqueue(blocking, "blocking", delay=0.05)
    log.enqueue(nonblocking, "nonblocking", delay=0.05)
    log.enqueue(ffi.NULL, "null")
    ok(lib.hipDeviceSynchronize())
    assert sorted(log.entries) == ["blocking", "nonblocking", "null"]
    ok(lib.hipStreamDestroy(blocking))
    ok(lib.hipStreamDestroy(nonblocking))


# hipamd-specific: reset destroys the device's streams and frees its memory;
# events and pinned host memory survive
@hipamd
def test_device_reset_destroys_streams_and_device_memory():
    before = lib.rocpy_stub_live_allocations() if BACKEND == "stub" else 0
    s = stream()
    e = ffi.new("hipEvent_t *")
    ok(lib.hipEventCreate(e))
    malloc(4096)
    malloc(1 << 20)
    host = ffi.new("void **")
    ok(lib.hipHostMalloc(host, 4096, 0))
    ok(lib.hipDeviceReset())
    check(lib.hipStreamDestroy(s), "hipErrorContextIsDestroyed")
    if BACKEND == "stub":
        assert lib.rocpy_stub_live_allocations() == before + 1   # the pinned buffer
    ok(lib.hipEventRecord(e[0], ffi.NULL))
    ok(lib.hipEventSynchronize(e[0]))
    ok(lib.hipEventDestroy(e[0]))
    ok(lib.hipHostFree(host[0]))
    free_, total = ffi.new("size_t *"), ffi.new("size_t *")
    ok(lib.hipMemGetInfo(free_, total))
    assert free_[0] == total[0] or BACKEND != "stub"


# platform-independent (needs two devices)
@pytest.mark.multidevice
def test_peer_access():
    can = ffi.new("int *")
    ok(lib.hipDeviceCanAccessPeer(can, 0, 1))
    assert can[0] == 1
    ok(lib.hipDeviceCanAccessPeer(can, 0, 0))
    assert can[0] == 0
    check(lib.hipDeviceCanAccessPeer(can, 0, device_count()), "hipErrorInvalidDevice")
    check(lib.hipDeviceCanAccessPeer(ffi.NULL, 0, 1), "hipErrorInvalidValue")
    ok(lib.hipSetDevice(0))
    ok(lib.hipDeviceEnablePeerAccess(1, 0))
    check(lib.hipDeviceEnablePeerAccess(1, 0), "hipErrorPeerAccessAlreadyEnabled")
    ok(lib.hipDeviceDisablePeerAccess(1))
    check(lib.hipDeviceDisablePeerAccess(1), "hipErrorPeerAccessNotEnabled")
    check(lib.hipDeviceEnablePeerAccess(0, 0), "hipErrorInvalidDevice")
    check(lib.hipDeviceEnablePeerAccess(1, 1), "hipErrorInvalidValue")
    check(lib.hipDeviceDisablePeerAccess(device_count()), "hipErrorInvalidDevice")


# platform-independent (needs two devices): memory and streams follow the
# current device, copies cross devices
@pytest.mark.multidevice
def test_memory_on_two_devices_and_peer_copy():
    import numpy as np
    ok(lib.hipSetDevice(1))
    d1 = malloc(4096)
    s1 = stream()
    attrs = ffi.new("hipPointerAttribute_t *")
    ok(lib.hipPointerGetAttributes(attrs, d1))
    assert attrs.device == 1
    ok(lib.hipSetDevice(0))
    d0 = malloc(4096)
    src = np.arange(1024, dtype=np.uint32)
    ok(lib.hipMemcpy(d0, ffi.from_buffer(src), 4096, lib.hipMemcpyHostToDevice))
    ok(lib.hipMemcpyPeer(d1, 1, d0, 0, 4096))
    check(lib.hipMemcpyPeer(d1, 7, d0, 0, 4096), "hipErrorInvalidDevice")
    dst = np.zeros(1024, dtype=np.uint32)
    ok(lib.hipMemcpyPeerAsync(d0, 0, d1, 1, 4096, s1))
    ok(lib.hipStreamSynchronize(s1))
    ok(lib.hipMemcpy(ffi.from_buffer(dst), d0, 4096, lib.hipMemcpyDeviceToHost))
    assert (dst == src).all()
    dev = ffi.new("int *")
    assert lib.hipGetStreamDeviceId(s1) == 1
    ok(lib.hipStreamDestroy(s1))
    ok(lib.hipFree(d0))
    ok(lib.hipFree(d1))
    ok(lib.hipGetDevice(dev))
    assert dev[0] == 0


# the multidevice tests again with two stub devices
@stub_only
@pytest.mark.skipif(device_count() >= 2, reason="already ran with two devices")
def test_multidevice_suite_with_two_stub_devices():
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-m", "multidevice", here],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, ROCPY_STUB_DEVICES="2"))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "passed" in r.stdout and "failed" not in r.stdout


# hipamd-specific (ROCm/clr's HIP_INIT_API): with no device every call but
# the count and versions is hipErrorNoDevice
@stub_only
def test_no_device():
    r = run_python(
        "from rocpy import hip\n"
        "lib, ffi = hip.lib, hip.ffi\n"
        "n = ffi.new('int *'); n[0] = 5\n"
        "p = ffi.new('void **')\n"
        "v = ffi.new('int *')\n"
        "print(lib.hipGetDeviceCount(n), n[0], lib.hipMalloc(p, 16), lib.hipSetDevice(0),"
        " lib.hipRuntimeGetVersion(v), lib.hipGetLastError())\n",
        ROCPY_STUB_DEVICES="0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["100", "0", "100", "100", "0", "100"]
