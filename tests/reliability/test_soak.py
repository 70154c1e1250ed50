"""Soak: create/destroy cycles of every owned type; counters and RSS stay flat.

CYCLES of each type (10^4 in CI; 10^5 with ROCPY_SLOW=1), half closed
explicitly and half dropped for the reaper to release, some with work in
flight.  At the end, once idle: ``live_objects() == {}``, the stub's live
allocation count is back to its start, and the process's resident set did not
grow between the middle and the end of the run (a leak grows linearly; the
allowance covers allocator noise).  RSS is read from /proc/self/statm.
"""
from __future__ import annotations

import gc
import os
import resource

import numpy as np
import pytest
from rel_support import SLOW, has_hsa, quiesce, wait_live

import rocpy
import rocpy.debug
import rocpy.stub
from rocpy import hip

CYCLES = 100_000 if SLOW else 10_000
PAGE = resource.getpagesize()
# growth allowed between the middle and the end of a run (allocator noise, caches)
ALLOWANCE = 4 << 20


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def hip_factories(dev, paths, stream):
    ctx = dev.context
    module_bytes = open(paths["empty"], "rb").read()
    graph_src = hip.Graph(dev)
    graph_src.add_empty()

    def graph():
        g = hip.Graph(dev)
        g.add_empty()
        return g

    def buffer_with_work():
        b = ctx.alloc(256)
        b.fill(1, stream=stream)
        return b

    kept = ctx.alloc(256)

    def stream_with_work():       # dropped on odd cycles with its work possibly in flight
        s = dev.create_stream()
        kept.fill(2, stream=s)
        return s

    return {
        # name: (make, cycles divisor: the expensive kinds do fewer cycles)
        "Stream": (dev.create_stream, 1),
        "Stream(non_blocking)": (lambda: dev.create_stream(non_blocking=True), 1),
        "Stream(with work)": (stream_with_work, 1),
        "Event": (lambda: hip.Event(dev), 1),
        "DeviceBuffer": (lambda: ctx.alloc(256), 1),
        "DeviceBuffer(with work)": (buffer_with_work, 1),
        "DeviceBuffer(stream-ordered)": (lambda: ctx.alloc(256, stream=stream), 1),
        "HostBuffer": (lambda: ctx.alloc_host(256), 1),
        "ManagedBuffer": (lambda: ctx.alloc_managed(256), 1),
        "Buffer view": (lambda: ctx.alloc(256)[16:32], 1),
        "numpy view of HostBuffer": (lambda: ctx.alloc_host(256).numpy(), 1),
        "Module": (lambda: hip.Module.load(module_bytes, dev), 4),
        "Graph": (graph, 2),
        "GraphExec": (graph_src.instantiate, 2),
    }, (graph_src, kept)


def soak(make, cycles: int, stream=None) -> tuple[int, int]:
    """Run the cycles; the RSS growth from the middle to the end, and the peak live count."""
    mid = None
    for i in range(cycles):
        obj = make()
        if i % 2 == 0 and hasattr(obj, "close"):
            if stream is not None and isinstance(obj, hip.Buffer) and i % 4 == 0:
                obj.close(stream=stream)               # freed in stream order
            else:
                obj.close()
        del obj                                        # odd cycles: the reaper releases it
        if i % 1000 == 999:
            if stream is not None:
                stream.sync()
            rocpy.debug.collect()
        if i == cycles // 2:
            quiesce()
            gc.collect()
            mid = rss()
    quiesce()
    gc.collect()
    return rss() - mid


@pytest.fixture
def hip_types(kernel_paths):
    dev = hip.Device(0)
    s = dev.create_stream()
    factories, held = hip_factories(dev, kernel_paths, s)
    yield factories, s
    s.sync()
    dev.sync()
    s.close()
    for obj in held:
        obj.close()


HIP_TYPES = ["Stream", "Stream(non_blocking)", "Stream(with work)", "Event", "DeviceBuffer", "DeviceBuffer(with work)",
             "DeviceBuffer(stream-ordered)", "HostBuffer", "ManagedBuffer", "Buffer view",
             "numpy view of HostBuffer", "Module", "Graph", "GraphExec"]


@pytest.mark.parametrize("name", HIP_TYPES)
def test_hip_create_destroy_cycles(name, hip_types, capsys):
    factories, stream = hip_types
    make, divisor = factories[name]
    cycles = CYCLES // divisor
    before_alloc = rocpy.stub.live_allocations()
    growth = soak(make, cycles, stream)
    stream.sync()
    fixture = {"Stream": 1, "Graph": 1, "DeviceBuffer": 1}
    assert wait_live(fixture) == fixture
    assert rocpy.stub.live_allocations() == before_alloc
    with capsys.disabled():
        print(f"\n[soak] {name}: {cycles} cycles, RSS {growth / 1024:+.0f} KiB from the middle to the end")
    assert growth < ALLOWANCE, f"RSS grew {growth} bytes over the second half of {cycles} cycles"


@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
@pytest.mark.parametrize("name", ["Signal", "Buffer", "LockedMemory", "Queue", "Executable", "Runtime",
                                  "Dispatch", "Signal.on"])
def test_hsa_create_destroy_cycles(name, kernel_paths, capsys):
    from rocpy import hsa
    with hsa.Runtime() as rt:
        gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
        pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
        code = open(kernel_paths["fill"], "rb").read()
        kernel = hsa.Executable.load(gpu, code).kernel("fill")

        def handler():
            s = hsa.Signal(1)
            s.on("eq", 0, abs)              # fires (value 0) on the dispatcher thread
            s.store(0)
            return s

        makers = {
            "Signal": (lambda: hsa.Signal(1), 1), "Buffer": (lambda: pool.allocate(4096), 1),
            "LockedMemory": (lambda: hsa.lock(bytearray(4096), agents=[gpu]), 1),
            "Queue": (lambda: gpu.create_queue(size=64, kernarg_bytes=4096, kernarg_segments=1), 10),
            "Executable": (lambda: hsa.Executable.load(gpu, code), 10),
            "Runtime": (hsa.Runtime, 1),
            "Dispatch": (lambda: kernel.prepare(64, 64, (None, np.uint32(1), np.int32(0))), 1),
            "Signal.on": (handler, 2),
        }
        make, divisor = makers[name]
        cycles = CYCLES // divisor
        before_alloc = rocpy.stub.live_allocations()
        growth = soak(make, cycles)
        from rocpy.hip._callbacks import _dispatcher_barrier
        _dispatcher_barrier()
        rocpy.debug.collect()
        assert rocpy.stub.live_allocations() == before_alloc
        kernel = None
    with capsys.disabled():
        print(f"\n[soak] hsa.{name}: {cycles} cycles, RSS {growth / 1024:+.0f} KiB from the middle to the end")
    assert growth < ALLOWANCE, f"RSS grew {growth} bytes over the second half of {cycles} cycles"


def test_rss_is_read_from_statm():
    before = rss()
    block = np.ones(16 << 20, np.uint8)        # 16 MiB touched
    assert rss() - before > 8 << 20
    del block
    assert os.path.exists("/proc/self/statm")
