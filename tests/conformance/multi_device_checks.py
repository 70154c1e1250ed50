"""The checks of ``test_multi_device.py``: the host context and peer copies on two devices.

Each ``check_*`` function takes a `Kit` (the two devices, a random generator,
the compiled kernel files) and raises on failure.  They run either in the
pytest process (a real backend with at least two devices) or, on the stub,
in a subprocess started with ``ROCPY_STUB_DEVICES=2`` (the device count is
fixed when the stub starts):

    python tests/conformance/multi_device_checks.py VADD_FILE SPIN_FILE

runs every check and prints one JSON object ``{check: "ok" | traceback}``,
``live`` (`rocpy.debug.live_objects()` at the end) and ``devices``.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

import rocpy
from rocpy import hip

# tests/live.py: on the path under pytest (tests/conftest.py), not when this runs as a script
_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
from live import settle  # noqa: E402  (also test_multi_device.py's checks.settle)

N = 256 * 1024 + 17          # elements (uint32 / float32): not a multiple of anything


@dataclass
class Kit:
    d0: Any
    d1: Any
    rng: np.random.Generator
    vadd_file: str
    spin_file: str

    def data(self, n: int = N) -> np.ndarray:
        return self.rng.integers(0, 2**32, n, dtype=np.uint32)


def _back(buf: Any, n: int = N, stream: Any = None) -> np.ndarray:
    out = np.zeros(n, np.uint32)
    buf.copy_to(out, stream=stream)
    if stream is not None:
        stream.sync()
    return out


def _lib_status(name: str) -> int:
    return int(getattr(hip.lib, name))


# ---- the contexts --------------------------------------------------------------------

def check_host_context_spans_both(k: Kit) -> None:
    host = hip.Context.host()
    assert host.is_host and host is hip.Context.host()
    assert host.devices == (k.d0, k.d1), host.devices
    assert hip.device_count() == 2 or len(host.devices) == hip.device_count()


def check_primary_contexts_differ(k: Kit) -> None:
    c0, c1 = k.d0.context, k.d1.context
    assert c0 is not c1 and not c0.is_host and not c1.is_host
    assert c0.devices == (k.d0,) and c1.devices == (k.d1,)
    assert c0.device is k.d0 and c1.device is k.d1
    assert c0 is not hip.Context.host() and c1 is not hip.Context.host()
    a, b = c0.alloc(64), c1.alloc(64)
    assert a.device is k.d0 and b.device is k.d1
    assert a.context is c0 and b.context is c1
    a.close()
    b.close()


def check_peer_access_both_ways(k: Kit) -> None:
    assert k.d0.can_access_peer(k.d1) is True
    assert k.d1.can_access_peer(k.d0) is True
    assert k.d0.can_access_peer(k.d0) is False
    for a, b in ((k.d0, k.d1), (k.d1, k.d0)):
        a.enable_peer_access(b)
        a.enable_peer_access(b)                  # rocpy: enabling twice is not an error
        # ... the runtime reports it: hipErrorPeerAccessAlreadyEnabled
        hip.lib.hipSetDevice(a.index)
        st = hip.lib.hipDeviceEnablePeerAccess(b.index, 0)
        assert st == _lib_status("hipErrorPeerAccessAlreadyEnabled"), st
        a.disable_peer_access(b)
        a.disable_peer_access(b)                 # nor is disabling twice
        st = hip.lib.hipDeviceDisablePeerAccess(b.index)
        assert st == _lib_status("hipErrorPeerAccessNotEnabled"), st
        # a device is no peer of itself: the runtime says hipErrorInvalidDevice
        st = hip.lib.hipDeviceEnablePeerAccess(a.index, 0)
        assert st == _lib_status("hipErrorInvalidDevice"), st
    # leave it enabled both ways for the checks that follow
    k.d0.enable_peer_access(k.d1)
    k.d1.enable_peer_access(k.d0)


# ---- copies ----------------------------------------------------------------------------

def _pairs(k: Kit) -> list[tuple[str, Any, Any]]:
    return [("dev0->dev1", k.d0, k.d1), ("dev1->dev0", k.d1, k.d0)]


def check_device_to_device_sync(k: Kit) -> None:
    for name, src_dev, dst_dev in _pairs(k):
        data = k.data()
        src, dst = src_dev.context.alloc(data.nbytes), dst_dev.context.alloc(data.nbytes)
        src.copy_from(data)
        dst.copy_from(src)
        assert np.array_equal(_back(dst), data), name
        # copy_to the other way gives the same
        back = src_dev.context.alloc(data.nbytes)
        dst.copy_to(back)
        assert np.array_equal(_back(back), data), name
        for b in (src, dst, back):
            b.close()


def check_device_to_device_on_either_stream(k: Kit) -> None:
    for name, src_dev, dst_dev in _pairs(k):
        for stream_dev in (src_dev, dst_dev):
            data = k.data()
            src, dst = src_dev.context.alloc(data.nbytes), dst_dev.context.alloc(data.nbytes)
            with stream_dev.create_stream(non_blocking=True) as s:
                src.copy_from(data, stream=s)
                dst.copy_from(src, stream=s)
                out = _back(dst, stream=s)
            assert np.array_equal(out, data), f"{name} on a stream of device {stream_dev.index}"
            src.close()
            dst.close()


def check_views_across_devices(k: Kit) -> None:
    data = k.data()
    a, b = k.d0.context.alloc(data.nbytes), k.d1.context.alloc(data.nbytes)
    a.copy_from(data)
    b.fill(0)
    half = (data.nbytes // 2) // 4 * 4
    with k.d1.create_stream() as s:
        b[half:].copy_from(a[half:], stream=s)
        s.sync()
    out = _back(b)
    assert (out[:half // 4] == 0).all() and np.array_equal(out[half // 4:], data[half // 4:])
    a.close()
    b.close()


def check_host_pinned_to_each_device_and_back(k: Kit) -> None:
    host = hip.Context.host()
    for dev in (k.d0, k.d1):
        for on_stream in (False, True):
            data = k.data()
            h = host.alloc_host(data.nbytes)
            h.numpy(np.uint32)[:] = data
            d = dev.context.alloc(data.nbytes)
            h2 = host.alloc_host(data.nbytes)
            h2.numpy(np.uint32)[:] = 0
            if on_stream:
                with dev.create_stream(non_blocking=True) as s:
                    d.copy_from(h, stream=s)
                    d.copy_to(h2, stream=s)
                    s.sync()
            else:
                d.copy_from(h)
                d.copy_to(h2)
            assert np.array_equal(h2.numpy(np.uint32), data), (dev.index, on_stream)
            for b in (h, h2, d):
                b.close()
    # one pinned buffer feeding both devices, then each device's data back into it
    data = k.data()
    h = host.alloc_host(data.nbytes)
    h.numpy(np.uint32)[:] = data
    d0, d1 = k.d0.context.alloc(data.nbytes), k.d1.context.alloc(data.nbytes)
    with k.d0.create_stream() as s0, k.d1.create_stream() as s1:
        d0.copy_from(h, stream=s0)
        d1.copy_from(h, stream=s1)
        s0.sync()
        s1.sync()
    assert np.array_equal(_back(d0), data) and np.array_equal(_back(d1), data)
    for b in (h, d0, d1):
        b.close()


def check_managed_memory_across_devices(k: Kit) -> None:
    host = hip.Context.host()
    data = k.data()
    m = host.alloc_managed(data.nbytes)
    m.numpy(np.uint32)[:] = data
    d0, d1 = k.d0.context.alloc(data.nbytes), k.d1.context.alloc(data.nbytes)
    d0.copy_from(m)                                        # managed -> dev0
    with k.d1.create_stream() as s1:
        d1.copy_from(m, stream=s1)                          # managed -> dev1 on dev1's stream
        s1.sync()
    assert np.array_equal(_back(d0), data) and np.array_equal(_back(d1), data)
    # dev1 -> managed on a dev0 stream, then read on the host
    other = k.data()
    d1.copy_from(other)
    with k.d0.create_stream() as s0:
        m.copy_from(d1, stream=s0)
        s0.sync()
    assert np.array_equal(m.numpy(np.uint32), other)
    # managed memory of a primary context copies to the other device too
    m1 = k.d1.context.alloc_managed(data.nbytes)
    m1.copy_from(m)
    d0.copy_from(m1)
    assert np.array_equal(_back(d0), other)
    for b in (m, m1, d0, d1):
        b.close()


# ---- ordering across devices -------------------------------------------------------------

def _spin(k: Kit) -> Any:
    """The ``spin_fill`` kernel on device 0 (emulated by sleeping on the stub)."""
    mod = hip.Module.load(k.spin_file, k.d0)
    kern = mod["spin_fill"]
    if rocpy.backend().name == "stub":
        from rocpy import stub as rstub
        params, khz = kern.params, k.d0.clock_rate_khz

        def emulate(d: Any) -> None:
            p, value, n, cycles = (d.arg(a.offset, f) for a, f in zip(params, "QIiq"))
            time.sleep(cycles / (khz * 1000.0))
            d.array(p, np.uint32, n)[:] = value
        rstub.register_kernel("spin_fill", emulate)
    return kern


def check_events_order_work_across_devices(k: Kit) -> None:
    kern = _spin(k)
    try:
        n = N
        src = k.d0.context.alloc(n * 4)
        dst = k.d1.context.alloc(n * 4)
        src.fill(0)
        dst.fill(0)
        khz = k.d0.clock_rate_khz
        with k.d0.create_stream(non_blocking=True) as s0, \
                k.d1.create_stream(non_blocking=True) as s1:
            # a slow fill on device 0; device 1's copy of its result waits for it
            kern.launch((n + 255) // 256, 256,
                        (src, np.uint32(0xC0FFEE), np.int32(n), np.int64(int(khz * 150))),
                        stream=s0)
            ev = s0.record(timing=False)
            assert ev.device is k.d0
            s1.wait(ev)
            dst.copy_from(src, stream=s1)
            assert not s0.query(), "the spin finished before the check could see the ordering"
            out = _back(dst, n, stream=s1)
            assert ev.query()
        assert (out == 0xC0FFEE).all(), np.unique(out)[:8]
        # and back: a dev1 stream's copy, an event, a dev0 stream waits and copies on
        data = k.data()
        mid = k.d1.context.alloc(data.nbytes)
        last = k.d0.context.alloc(data.nbytes)
        with k.d0.create_stream() as s0, k.d1.create_stream() as s1:
            mid.copy_from(data, stream=s1)
            s0.wait(s1.record())
            last.copy_from(mid, stream=s0)
            s0.sync()
        assert np.array_equal(_back(last), data)
        # the timing of an event pair on device 1 around a peer copy
        with k.d1.create_stream() as s1:
            start = s1.record()
            mid.copy_from(last, stream=s1)
            end = s1.record()
            end.sync()
            assert (end - start) >= 0
        for b in (src, dst, mid, last):
            b.close()
    finally:
        mod = kern.module
        del kern
        mod.close()
        if rocpy.backend().name == "stub":
            from rocpy import stub as rstub
            rstub.unregister_kernel("spin_fill")


# ---- a kernel on device 1 ----------------------------------------------------------------

def check_kernel_on_device1_reads_host_context_memory(k: Kit) -> None:
    host = hip.Context.host()
    mod = hip.Module.load(k.vadd_file, k.d1)
    assert mod.device is k.d1
    vadd = mod["vadd"]
    n = N
    a = k.rng.standard_normal(n).astype(np.float32)
    b = k.rng.standard_normal(n).astype(np.float32)
    ha = host.alloc_host(a.nbytes, mapped=True)      # pinned, portable, mapped: host context
    mb = host.alloc_managed(b.nbytes)                # managed: host context
    ha.numpy(np.float32)[:] = a
    mb.numpy(np.float32)[:] = b
    c = k.d1.context.alloc(a.nbytes)
    with k.d1.create_stream() as s1:
        vadd.launch((n + 255) // 256, 256, (ha, mb, c, np.int32(n)), stream=s1)
        out = np.empty(n, np.float32)
        c.copy_to(out, stream=s1)
        s1.sync()
    np.testing.assert_allclose(out, a + b, rtol=0, atol=0)
    # the result travels to device 0 and back to the host context's memory
    c0 = k.d0.context.alloc(a.nbytes)
    c0.copy_from(c)
    ha.copy_from(c0)
    np.testing.assert_array_equal(ha.numpy(np.float32), a + b)
    for buf in (ha, mb, c, c0):
        buf.close()
    del vadd
    mod.close()


def check_kernel_on_device0_writes_device1_memory_with_peer_access(k: Kit) -> None:
    """With peer access enabled from device 0 to device 1, a kernel on device 0
    reads and writes device 1's memory (without it, the GPU faults: the stub's
    raw test ``tests/raw/hip/test_peer_kernel.py`` checks that in a process of its own)."""
    k.d0.enable_peer_access(k.d1)                  # may already be: not an error
    mod = hip.Module.load(k.vadd_file, k.d0)
    vadd = mod["vadd"]
    n = N
    a = k.rng.standard_normal(n).astype(np.float32)
    b = k.rng.standard_normal(n).astype(np.float32)
    da, db1, dc1 = (k.d0.context.alloc(a.nbytes), k.d1.context.alloc(b.nbytes),
                    k.d1.context.alloc(a.nbytes))
    da.copy_from(a)
    db1.copy_from(b)
    with k.d0.create_stream() as s0:
        vadd.launch((n + 255) // 256, 256, (da, db1, dc1, np.int32(n)), stream=s0)
        s0.sync()
    out = np.empty(n, np.float32)
    dc1.copy_to(out)
    np.testing.assert_array_equal(out, a + b)
    for buf in (da, db1, dc1):
        buf.close()
    del vadd
    mod.close()


CHECKS = [
    check_host_context_spans_both,
    check_primary_contexts_differ,
    check_peer_access_both_ways,
    check_device_to_device_sync,
    check_device_to_device_on_either_stream,
    check_views_across_devices,
    check_host_pinned_to_each_device_and_back,
    check_managed_memory_across_devices,
    check_events_order_work_across_devices,
    check_kernel_on_device1_reads_host_context_memory,
    check_kernel_on_device0_writes_device1_memory_with_peer_access,
]
NAMES = [fn.__name__[len("check_"):] for fn in CHECKS]


def main(argv: list[str]) -> int:
    vadd_file, spin_file = argv[1], argv[2]
    results: dict[str, Any] = {"backend": rocpy.backend().name,
                               "devices": hip.device_count(), "checks": {}, "seconds": {}}
    if hip.device_count() < 2:
        results["error"] = f"{hip.device_count()} device(s)"
        print(json.dumps(results))
        return 0
    kit = Kit(hip.Device(0), hip.Device(1), np.random.default_rng(1234), vadd_file, spin_file)
    for fn, name in zip(CHECKS, NAMES):
        t0 = time.perf_counter()
        try:
            fn(kit)
            results["checks"][name] = "ok"
        except Exception:  # noqa: BLE001 -- report every failure, keep going
            results["checks"][name] = traceback.format_exc()
        results["seconds"][name] = round(time.perf_counter() - t0, 3)
    del kit
    results["live"] = settle()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
