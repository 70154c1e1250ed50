"""Memory-pool, IPC, host-registration and occupancy statuses that changed
between releases (read in hipamd / clr at the tags named; the stub's rules
table, stub_version.c, has the same rows).  The other rows' tests sit with
their calls (test_mempool.py, test_ipc.py, test_link.py, test_memory.py,
test_occupancy.py); these need a setup of their own."""
from __future__ import annotations

import textwrap

from rocm_versions import expect, version_sensitive

from .helpers import BACKEND, hipamd, run_python, stub_only

pytestmark = [hipamd, version_sensitive]

TWO_DEVICES = textwrap.dedent("""
    from rocpy import hip
    lib, ffi = hip.lib, hip.ffi
    name = lambda st: ffi.string(lib.hipGetErrorName(st)).decode()
    pool, cur = ffi.new("hipMemPool_t *"), ffi.new("hipMemPool_t *")
    assert lib.hipDeviceGetDefaultMemPool(pool, 1) == 0
    print(name(lib.hipDeviceSetMemPool(0, pool[0])))
    assert lib.hipDeviceGetMemPool(cur, 0) == 0
    print(cur[0] == pool[0])
""")


# hipDeviceSetMemPool: hipamd rocm-5.5.0 compares the pool's device
# (MemoryPool::Device()->deviceId()) with the one named; 5.2-5.4 make
# another device's pool the current one
@stub_only
def test_set_mem_pool_of_another_device():
    r = run_python(TWO_DEVICES, ROCPY_BACKEND=BACKEND, ROCPY_STUB_DEVICES="2")
    assert r.returncode == 0, r.stderr
    status, taken = r.stdout.split()
    assert status == expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidDevice"})
    assert taken == str(status == "hipSuccess")
