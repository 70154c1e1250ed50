"""Peer copy bandwidth between two devices: rocpy against raw ``rocpy.hip.lib`` calls.

For each size, three cases, their two variants timed interleaved
(`rocpy.bench.harness`):

* ``dev0->dev1``: device 0 memory into device 1 memory, on a stream of device 0;
* ``dev1->dev0``: the other way, on a stream of device 1;
* ``bidirectional``: both at once, each on its source device's stream, then both
  synchronized (bandwidth counts the bytes of both copies).

``raw`` calls ``hipMemcpyPeerAsync`` + ``hipStreamSynchronize`` with arguments
made beforehand; ``rocpy`` calls ``DeviceBuffer.copy_from(src, stream=s)`` +
``s.sync()`` (``hipMemcpyAsync``, hipMemcpyDefault).  Peer access is
enabled both ways first (the copies also work without it, staged).  Before
timing, each variant's result is checked against random data.

On the stub this is a CPU simulation (memcpy in the stub's worker threads): the
figures say what the Python layer and the stub cost, not what a GPU link does.
The stub is started with two devices (``ROCPY_STUB_DEVICES=2``, set here when
missing).  A real backend needs two devices.

    python benchmarks/bench_peer.py [--json FILE] [--sizes 65536,1048576,...]
                                    [--repeat N] [--warmup N]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import rocpy
from rocpy import hip
from rocpy.bench.harness import Case, Results, run_cases
from rocpy.errors import hip_error

DEFAULT_SIZES = (4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20)


def _check(status: int, call: str) -> None:
    if status:
        raise hip_error(status, call)


def cases_for(size: int, d0: hip.Device, d1: hip.Device, s0: hip.Stream, s1: hip.Stream,
              keep: list) -> list[Case]:
    lib, ffi = hip.lib, hip.ffi
    a0, b0 = d0.context.alloc(size), d0.context.alloc(size)     # a: sources, b: destinations
    a1, b1 = d1.context.alloc(size), d1.context.alloc(size)
    keep += [a0, b0, a1, b1]
    rng = np.random.default_rng(size)
    p = {name: ffi.cast("void *", buf.ptr) for name, buf in
         (("a0", a0), ("b0", b0), ("a1", a1), ("b1", b1))}
    h0, h1 = s0.handle, s1.handle
    i0, i1 = d0.index, d1.index
    peer = lib.hipMemcpyPeerAsync
    sync = lib.hipStreamSynchronize

    def raw_01() -> None:
        _check(peer(p["b1"], i1, p["a0"], i0, size, h0), "hipMemcpyPeerAsync")
        _check(sync(h0), "hipStreamSynchronize")

    def raw_10() -> None:
        _check(peer(p["b0"], i0, p["a1"], i1, size, h1), "hipMemcpyPeerAsync")
        _check(sync(h1), "hipStreamSynchronize")

    def raw_bi() -> None:
        _check(peer(p["b1"], i1, p["a0"], i0, size, h0), "hipMemcpyPeerAsync")
        _check(peer(p["b0"], i0, p["a1"], i1, size, h1), "hipMemcpyPeerAsync")
        _check(sync(h0), "hipStreamSynchronize")
        _check(sync(h1), "hipStreamSynchronize")

    def rocpy_01() -> None:
        b1.copy_from(a0, stream=s0)
        s0.sync()

    def rocpy_10() -> None:
        b0.copy_from(a1, stream=s1)
        s1.sync()

    def rocpy_bi() -> None:
        b1.copy_from(a0, stream=s0)
        b0.copy_from(a1, stream=s1)
        s0.sync()
        s1.sync()

    # every variant moves the right bytes (random data, checked on the host)
    n = size // 4
    for variant in (raw_bi, rocpy_bi, raw_01, rocpy_10, rocpy_01, raw_10):
        x0, x1 = (rng.integers(0, 2**32, n, dtype=np.uint32) for _ in range(2))
        a0.copy_from(x0)
        a1.copy_from(x1)
        b0.fill(0)
        b1.fill(0)
        variant()
        out0, out1 = np.empty(n, np.uint32), np.empty(n, np.uint32)
        b0.copy_to(out0)
        b1.copy_to(out1)
        name = variant.__name__
        if name.endswith(("01", "bi")) and not np.array_equal(out1, x0):
            raise AssertionError(f"{name}: device 1 did not receive device 0's data")
        if name.endswith(("10", "bi")) and not np.array_equal(out0, x1):
            raise AssertionError(f"{name}: device 0 did not receive device 1's data")

    label = _size_label(size)
    return [
        Case(f"dev0->dev1 {label}", {"raw": raw_01, "rocpy": rocpy_01}, unit="us",
             bytes_per_op=size),
        Case(f"dev1->dev0 {label}", {"raw": raw_10, "rocpy": rocpy_10}, unit="us",
             bytes_per_op=size),
        Case(f"bidirectional {label}", {"raw": raw_bi, "rocpy": rocpy_bi}, unit="us",
             bytes_per_op=2 * size),
    ]


def _size_label(size: int) -> str:
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def _repeat_for(size: int, repeat: int) -> int:
    """Fewer repetitions for big copies (at least 10)."""
    return max(10, min(repeat, int(repeat * (1 << 20) / max(size, 1 << 20))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES),
                        help="bytes per copy, comma separated")
    parser.add_argument("--repeat", type=int, default=100,
                        help="timed repetitions per case (fewer above 1 MiB, at least 10)")
    parser.add_argument("--warmup", type=int, default=5)
    opts = parser.parse_args()
    sizes = [int(s) for s in opts.sizes.split(",") if s]

    backend = rocpy.backend()
    if backend.name == "stub" and hip.device_count() < 2 and "ROCPY_STUB_DEVICES" not in os.environ:
        env = dict(os.environ, ROCPY_STUB_DEVICES="2", ROCPY_BACKEND="stub")
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    if hip.device_count() < 2:
        print(f"bench_peer needs two devices; the {backend.name} backend has "
              f"{hip.device_count()}", file=sys.stderr)
        return 2

    d0, d1 = hip.Device(0), hip.Device(1)
    peer = d0.can_access_peer(d1) and d1.can_access_peer(d0)
    if peer:
        d0.enable_peer_access(d1)
        d1.enable_peer_access(d0)
    s0, s1 = d0.create_stream(non_blocking=True), d1.create_stream(non_blocking=True)
    measured: list[Results] = []
    for size in sizes:
        keep: list = []
        cases = cases_for(size, d0, d1, s0, s1, keep)
        measured.append(run_cases(cases, repeat=_repeat_for(size, opts.repeat),
                                  warmup=opts.warmup))
        for buf in keep:
            buf.close()
    s0.close()
    s1.close()

    simulation = backend.name == "stub"
    meta = dict(measured[0].meta, devices=[d0.name, d1.name], targets=[d0.target_id,
                                                                      d1.target_id],
                peer_access=peer, backend_reason=backend.reason,
                simulation="CPU simulation (the stub runtime): not GPU link bandwidth"
                if simulation else None,
                sizes=sizes)
    config = dict(measured[0].config, repeat={str(s): _repeat_for(s, opts.repeat) for s in sizes})
    results = Results([c for r in measured for c in r.cases], meta, config)
    title = f"peer copies on {backend.name} ({d0.name} <-> {d1.name}), peer access " \
            f"{'enabled' if peer else 'unavailable'}"
    if simulation:
        title += "\n*** CPU SIMULATION (stub runtime): memcpy on the host, not a GPU link ***"
    print(title)
    print(results.table())
    if opts.json:
        results.save(opts.json)
        print(f"wrote {opts.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
