"""Kernels and another device's memory (hipamd hip_peer.cpp, ROCclr's
Device::enableP2P): device memory of another GPU is mapped into the launching
GPU's page tables only once peer access to it is enabled from the launching
device.  Before that, a kernel touching it takes a GPU memory fault (the
process aborts); host, registered and managed memory are every device's, and
copies between devices never need peer access (the runtime stages them).

The stub keeps to what the API promises: a kernel enqueued after
hipDeviceDisablePeerAccess faults again (ROCclr leaves what it mapped mapped,
so real hardware may let such a kernel through)."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import BACKEND, ffi, lib, malloc, ok, run_python, stub_only

pytestmark = pytest.mark.skipif(BACKEND == "nvidia", reason="AMD code objects")


# platform-independent (AMD, needs two devices): with peer access enabled, a
# kernel on device 0 writes device 1's memory; copies need none
@pytest.mark.multidevice
def test_kernel_writes_peer_memory_with_peer_access(hip_kernel):
    n = 256
    ok(lib.hipSetDevice(1))
    d1 = malloc(n * 4)
    ok(lib.hipSetDevice(0))
    module = ffi.new("hipModule_t *")
    f = ffi.new("hipFunction_t *")
    ok(lib.hipModuleLoad(module, hip_kernel("fill").encode()))
    ok(lib.hipModuleGetFunction(f, module[0], b"fill"))
    args = [ffi.new("void **", d1), ffi.new("unsigned *", 0xFEED), ffi.new("int *", n)]
    params = ffi.new("void *[3]", [ffi.cast("void *", a) for a in args])
    ok(lib.hipDeviceEnablePeerAccess(1, 0))
    try:
        ok(lib.hipModuleLaunchKernel(f[0], 1, 1, 1, n, 1, 1, 0, ffi.NULL, params, ffi.NULL))
        ok(lib.hipDeviceSynchronize())
    finally:
        ok(lib.hipDeviceDisablePeerAccess(1))
    out = np.zeros(n, np.uint32)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d1, n * 4, lib.hipMemcpyDeviceToHost))
    assert (out == 0xFEED).all()
    # a copy device 1 -> device 0 without peer access
    d0 = malloc(n * 4)
    ok(lib.hipMemcpyPeer(d0, 0, d1, 1, n * 4))
    out[:] = 0
    ok(lib.hipMemcpy(ffi.from_buffer(out), d0, n * 4, lib.hipMemcpyDeviceToHost))
    assert (out == 0xFEED).all()
    ok(lib.hipModuleUnload(module[0]))
    ok(lib.hipFree(d0))
    ok(lib.hipFree(d1))


# ---- stub: the faults, in a process of its own with two stub devices ------------------

PRELUDE = """
import numpy as np
from rocpy import hip
lib, ffi = hip.lib, hip.ffi

def ok(status, what=''):
    assert status == 0, (what, status)

def load(dev, name='fill'):
    ok(lib.hipSetDevice(dev))
    m = ffi.new('hipModule_t *'); f = ffi.new('hipFunction_t *')
    ok(lib.hipModuleLoad(m, PATHS[name].encode()))
    ok(lib.hipModuleGetFunction(f, m[0], name.encode()))
    return f[0]

def malloc(dev, size=64):
    ok(lib.hipSetDevice(dev))
    p = ffi.new('void **'); ok(lib.hipMalloc(p, size))
    return p[0]

def addr(p):
    return hex(int(ffi.cast('uintptr_t', p)))

def launch(dev, f, *values, n=16):
    '''values: (ctype, value) pairs; a kernel of n work-items on dev's null stream'''
    ok(lib.hipSetDevice(dev))
    args = [ffi.new(t + ' *', v) for t, v in values]
    p = ffi.new('void *[]', [ffi.cast('void *', a) for a in args])
    ok(lib.hipModuleLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, ffi.NULL, p, ffi.NULL), 'launch')
    ok(lib.hipDeviceSynchronize(), 'sync')

def fill(dev, f, p, value, n=16):
    launch(dev, f, ('void *', p), ('unsigned', value), ('int', n), n=n)

def read(p, n=16):
    out = np.zeros(n, np.uint32)
    ok(lib.hipMemcpy(ffi.from_buffer(out), p, 4 * n, lib.hipMemcpyDeviceToHost))
    return out

f0 = load(0)
d1 = malloc(1)
print(addr(d1), flush=True)
"""


def run_two_devices(hip_kernel, body: str):
    paths = {"fill": hip_kernel("fill"), "vadd": hip_kernel("vadd")}
    return run_python(f"PATHS = {paths!r}\n" + PRELUDE + body + "\nprint('survived')\n",
                      ROCPY_STUB_DEVICES="2")


def fault_report(address: str, kernel: str = "fill", device: int = 0) -> str:
    return (f"Memory access fault by GPU node-{device + 1} on address {address} "
            f"(kernel {kernel} on device {device})")


def assert_faulted(r, address: str, kernel: str = "fill", device: int = 0) -> None:
    assert r.returncode == -6 and "survived" not in r.stdout, (r.returncode, r.stdout, r.stderr)
    assert fault_report(address, kernel, device) in r.stderr, r.stderr


# stub: no peer access -> fault naming the buffer; enabled -> written;
# disabled again -> fault again
@stub_only
@pytest.mark.parametrize("body,written", [
    ("fill(0, f0, d1, 7)", False),
    (("ok(lib.hipSetDevice(0)); ok(lib.hipDeviceEnablePeerAccess(1, 0))\n"
      "fill(0, f0, d1, 7)\n"
      "assert (read(d1) == 7).all(); print('written', flush=True)\n"
      "ok(lib.hipSetDevice(0)); ok(lib.hipDeviceDisablePeerAccess(1))\n"
      "fill(0, f0, d1, 8)"), True),
], ids=["never enabled", "enabled then disabled"])
def test_kernel_on_peer_memory_without_peer_access_faults(hip_kernel, body, written):
    r = run_two_devices(hip_kernel, body)
    assert_faulted(r, r.stdout.split()[0])
    assert ("written" in r.stdout) == written, r.stdout


# stub: the fault names the first address the kernel touches in the other
# device's memory (an interior pointer), for the output of vadd too
@stub_only
def test_fault_names_the_address_in_peer_memory(hip_kernel):
    r = run_two_devices(hip_kernel, (
        "a, b = malloc(0), malloc(0)\n"
        "inner = ffi.cast('char *', d1) + 16\n"
        "print(addr(inner), flush=True)\n"
        "vadd = load(0, 'vadd')\n"
        "launch(0, vadd, ('void *', a), ('void *', b), ('void *', inner), ('int', 8), n=8)"))
    assert_faulted(r, r.stdout.split()[1], kernel="vadd")


# stub: enabling is one way: device 0 reaching device 1 does not let device 1
# reach device 0
@stub_only
def test_peer_access_is_one_way(hip_kernel):
    r = run_two_devices(hip_kernel, (
        "d0 = malloc(0)\n"
        "print(addr(d0), flush=True)\n"
        "ok(lib.hipSetDevice(0)); ok(lib.hipDeviceEnablePeerAccess(1, 0))\n"
        "fill(0, f0, d1, 5); assert (read(d1) == 5).all()\n"
        "f1 = load(1)\n"
        "fill(1, f1, d1, 6); assert (read(d1) == 6).all()\n"   # its own memory
        "fill(1, f1, d0, 6)"))
    assert_faulted(r, r.stdout.split()[1], device=1)


# stub: an emulation registered from Python (which reaches memory through
# numpy, not the stub's reach check) faults on the pointer argument
@stub_only
def test_python_emulation_faults_on_peer_pointer_argument(hip_kernel):
    r = run_two_devices(hip_kernel, (
        "from rocpy import stub\n"
        "def emulate(d):\n"
        "    p, v, n = d.arg(0, 'Q'), d.arg(8, 'I'), d.arg(12, 'i')\n"
        "    d.array(p, np.uint32, n)[:] = v\n"
        "    print('emulated', flush=True)\n"
        "stub.register_kernel('fill', emulate)\n"
        "d0 = malloc(0); fill(0, f0, d0, 3); assert (read(d0) == 3).all()\n"
        "fill(0, f0, d1, 4)"))
    assert_faulted(r, r.stdout.split()[0])
    assert r.stdout.count("emulated") == 1, r.stdout


# stub: peer access is read when a launch is enqueued: a graph instantiated
# before peer access was enabled runs once it is, and faults once it is not
@stub_only
def test_graph_launch_sees_peer_access_at_launch(hip_kernel):
    r = run_two_devices(hip_kernel, (
        "ok(lib.hipSetDevice(0))\n"
        "s = ffi.new('hipStream_t *'); ok(lib.hipStreamCreate(s))\n"
        "g = ffi.new('hipGraph_t *'); x = ffi.new('hipGraphExec_t *')\n"
        "ok(lib.hipStreamBeginCapture(s[0], lib.hipStreamCaptureModeGlobal))\n"
        "args = [ffi.new('void **', d1), ffi.new('unsigned *', 9), ffi.new('int *', 16)]\n"
        "p = ffi.new('void *[3]', [ffi.cast('void *', a) for a in args])\n"
        "ok(lib.hipModuleLaunchKernel(f0, 1, 1, 1, 16, 1, 1, 0, s[0], p, ffi.NULL))\n"
        "ok(lib.hipStreamEndCapture(s[0], g))\n"
        "ok(lib.hipGraphInstantiate(x, g[0], ffi.NULL, ffi.NULL, 0))\n"
        "ok(lib.hipDeviceEnablePeerAccess(1, 0))\n"
        "ok(lib.hipGraphLaunch(x[0], s[0])); ok(lib.hipStreamSynchronize(s[0]))\n"
        "assert (read(d1) == 9).all(); print('written', flush=True)\n"
        "ok(lib.hipSetDevice(0)); ok(lib.hipDeviceDisablePeerAccess(1))\n"
        "ok(lib.hipGraphLaunch(x[0], s[0])); ok(lib.hipStreamSynchronize(s[0]))"))
    assert_faulted(r, r.stdout.split()[0])
    assert "written" in r.stdout


# stub: without any peer access, a kernel on device 0 reaches pinned,
# registered and managed memory (whichever device was current when they were
# made), and copies between the devices' memories work both ways
@stub_only
def test_host_memory_and_copies_need_no_peer_access(hip_kernel):
    r = run_two_devices(hip_kernel, (
        "ok(lib.hipSetDevice(1))\n"
        "h = ffi.new('void **'); ok(lib.hipHostMalloc(h, 64, 0))\n"
        "m = ffi.new('void **'); ok(lib.hipMallocManaged(m, 64, lib.hipMemAttachGlobal))\n"
        "reg = np.zeros(1024, np.uint32)\n"
        "ok(lib.hipHostRegister(ffi.from_buffer(reg), reg.nbytes, 0))\n"
        "for value, p in enumerate((h[0], m[0], ffi.from_buffer(reg)), 1):\n"
        "    fill(0, f0, p, value)\n"
        "    assert (np.frombuffer(ffi.buffer(p, 64), np.uint32) == value).all(), value\n"
        "d0 = malloc(0)\n"
        "fill(0, f0, d0, 11)\n"
        "ok(lib.hipMemcpyPeer(d1, 1, d0, 0, 64)); assert (read(d1) == 11).all()\n"
        "ok(lib.hipSetDevice(1)); ok(lib.hipMemcpy(d0, d1, 64, lib.hipMemcpyDeviceToDevice))\n"
        "f1 = load(1); fill(1, f1, d1, 12)\n"
        "ok(lib.hipSetDevice(0)); ok(lib.hipMemcpy(d0, d1, 64, lib.hipMemcpyDefault))\n"
        "assert (read(d0) == 12).all()\n"
        "print('all reached', flush=True)"))
    assert r.returncode == 0, r.stderr
    assert "all reached" in r.stdout and "survived" in r.stdout
