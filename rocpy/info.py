"""What this machine offers rocpy: backend, runtime versions, devices, agents, pools.

`collect()` gathers what ``rocminfo`` and ``hipInfo`` show, as JSON-ready
data (``rocpy info`` prints it; `rocpy.bench` records part of it with its
results)::

    >>> from rocpy.info import collect
    >>> data = collect()
    >>> data["backend"]["name"], data["hip"]["devices"][0]["name"]
    ('stub', 'AMD Instinct MI210')

Nothing here fails because one value cannot be read: each section reads what
it can, and what it could not read is listed in ``errors`` (where, and the
exception).  The stub backend is marked ``simulation: true`` everywhere it
appears: its devices are a CPU simulation, not hardware.
"""
from __future__ import annotations

import os
import platform
from collections.abc import Callable
from typing import Any

SCHEMA = "rocpy.info/1"


class _Errors:
    """Collects what could not be read, so that one bad value never hides the rest."""

    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def get(self, where: str, fn: Callable[[], Any], default: Any = None) -> Any:
        try:
            return fn()
        except Exception as exc:  # a runtime refusing one query is information, not a crash
            self.items.append({"where": where, "error": f"{type(exc).__name__}: {exc}"})
            return default


def hip_version_text(value: int | None, backend: str) -> str | None:
    """A HIP version number as text: ``50221153`` -> ``'5.2.21153'``.

    On the nvidia backend HIP reports CUDA's numbers (``11080`` -> ``'11.8'``).
    """
    if value is None:
        return None
    if backend == "nvidia" or value < 1_000_000:
        return f"{value // 1000}.{value % 1000 // 10}"
    return f"{value // 10_000_000}.{value // 100_000 % 100}.{value % 100_000}"


def host_info() -> dict[str, Any]:
    """The host: OS, CPU, Python and rocpy."""
    from . import __version__
    from .bench.harness import _cpu_name
    mem = None
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        pass
    return {"rocpy": __version__,
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "platform": platform.platform(), "machine": platform.machine(),
            "cpu": _cpu_name(), "cpu_count": os.cpu_count(), "memory": mem}


def backend_info() -> dict[str, Any]:
    """Which backend was taken, why, and what else was tried."""
    import rocpy
    info = rocpy.backend()
    build = info.build or {}
    return {"name": info.name, "simulation": info.is_stub, "reason": info.reason,
            "tried": dict(info.tried),
            "platform": build.get("platform"), "include_dir": build.get("include_dir"),
            "libraries": build.get("libraries") or {},
            "missing_functions": list(build.get("missing") or [])}


def _versions(errors: _Errors, backend: str) -> dict[str, Any]:
    from . import hip
    ffi, lib = hip.ffi, hip.lib
    out: dict[str, Any] = {}

    def read(fn: Any) -> int:
        v = ffi.new("int *")
        st = fn(v)
        if st:
            from .errors import hip_error
            raise hip_error(st, getattr(fn, "__name__", "hip version query"))
        return int(v[0])
    runtime = errors.get("hipRuntimeGetVersion", lambda: read(lib.hipRuntimeGetVersion))
    driver = errors.get("hipDriverGetVersion", lambda: read(lib.hipDriverGetVersion))
    headers = getattr(lib, "HIP_VERSION", None)
    out["hip_runtime"] = hip_version_text(runtime, backend)
    out["hip_runtime_number"] = runtime
    out["hip_driver"] = hip_version_text(driver, backend)
    out["hip_driver_number"] = driver
    out["hip_headers"] = hip_version_text(headers, "amd") if headers else None
    if backend == "stub":   # the releases the stub emulates: HIP's and ROCr's may differ
        from . import stub
        out["stub_rocm"] = {"hip": "%d.%d" % stub.rocm_version(), "hsa": "%d.%d" % stub.hsa_version()}
    return out


def _device(dev: Any, errors: _Errors) -> dict[str, Any]:
    where = f"Device({dev.index})"
    p = errors.get(f"{where}.properties", lambda: dev.properties)
    d: dict[str, Any] = {"index": dev.index}
    if p is None:
        return d

    def prop(name: str) -> Any:
        value = getattr(p, name, None)
        return list(value) if isinstance(value, tuple) else value
    mem = errors.get(f"{where}.mem_info", dev.mem_info)
    d.update({
        "name": prop("name"),
        "target_id": errors.get(f"{where}.target_id", lambda: dev.target_id),
        "compute_capability": list(dev.compute_capability),
        "pci_bus_id": errors.get(f"{where}.pci_bus_id", lambda: dev.pci_bus_id),
        "compute_units": prop("multiProcessorCount"),
        "wavefront_size": prop("warpSize"),
        "clock_mhz": (prop("clockRate") or 0) // 1000,
        "memory_clock_mhz": (prop("memoryClockRate") or 0) // 1000,
        "memory_bus_width": prop("memoryBusWidth"),
        "total_memory": prop("totalGlobalMem"),
        "free_memory": mem.free if mem else None,
        "l2_cache": prop("l2CacheSize"),
        "shared_memory_per_block": prop("sharedMemPerBlock"),
        "max_shared_memory_per_cu": prop("maxSharedMemoryPerMultiProcessor"),
        "registers_per_block": prop("regsPerBlock"),
        "max_threads_per_block": prop("maxThreadsPerBlock"),
        "max_block_dims": prop("maxThreadsDim"),
        "max_grid_dims": prop("maxGridSize"),
        "max_threads_per_cu": prop("maxThreadsPerMultiProcessor"),
        "total_constant_memory": prop("totalConstMem"),
        "concurrent_kernels": bool(prop("concurrentKernels")),
        "managed_memory": bool(prop("managedMemory")),
        "can_map_host_memory": bool(prop("canMapHostMemory")),
        "ecc": bool(prop("ECCEnabled")),
        "integrated": bool(prop("integrated")),
        "large_bar": bool(prop("isLargeBar")) if hasattr(p, "isLargeBar") else None,
        "stream_priorities": list(errors.get(f"{where}.stream_priority_range",
                                             lambda: dev.stream_priority_range, ()) or ()),
    })
    return d


def hip_devices(errors: _Errors) -> dict[str, Any]:
    """HIP's devices (``hipGetDeviceProperties``) and the peer-access matrix."""
    from . import hip
    count = errors.get("hipGetDeviceCount", hip.device_count, 0) or 0
    devices = [hip.Device(i) for i in range(count)]
    peer: list[list[bool | None]] = []
    for a in devices:
        row: list[bool | None] = []
        for b in devices:
            if a is b:
                row.append(None)
            else:
                row.append(errors.get(f"hipDeviceCanAccessPeer({a.index}, {b.index})",
                                      lambda a=a, b=b: a.can_access_peer(b)))  # type: ignore[misc]
        peer.append(row)
    return {"device_count": count, "devices": [_device(d, errors) for d in devices],
            "peer_access": peer}


def _pool(pool: Any, agents: list[Any], errors: _Errors, where: str) -> dict[str, Any]:
    def get(name: str) -> Any:
        return errors.get(f"{where}.{name}", lambda: getattr(pool, name))
    flags = get("flags")
    access = {}
    for i, other in enumerate(agents):
        acc = errors.get(f"{where}.access(agent {i})", lambda o=other: pool.access(o))  # type: ignore[misc]
        if acc is not None:
            access[str(i)] = {"access": acc.access, "hops": acc.hops,
                              "links": sorted({link.type for link in acc.links})}
    return {"segment": get("segment"), "flags": sorted(flags) if flags is not None else None,
            "size": get("size"), "allocatable": get("alloc_allowed"),
            "granule": get("alloc_granule"), "alignment": get("alloc_alignment"),
            "alloc_max_size": get("alloc_max_size"), "accessible_by_all": get("accessible_by_all"),
            "access": access}


_AGENT_FIELDS = (
    "name", "product_name", "vendor_name", "type", "node", "uuid", "target", "isa_name",
    "profile", "compute_units", "simds_per_cu", "max_waves_per_cu", "wavefront_size",
    "workgroup_max_size", "workgroup_max_dim", "grid_max_size", "grid_max_dim",
    "max_clock_mhz", "chip_id", "bdf_id", "cacheline_size", "cache_sizes", "queues_max",
    "queue_min_size", "queue_max_size", "queue_type", "features")


def _agent(index: int, agent: Any, agents: list[Any], errors: _Errors) -> dict[str, Any]:
    where = f"agent {index}"
    out: dict[str, Any] = {"index": index}
    for name in _AGENT_FIELDS:
        value = errors.get(f"{where}.{name}", lambda n=name: getattr(agent, n))  # type: ignore[misc]
        if isinstance(value, (tuple, frozenset, set)):
            value = sorted(value) if isinstance(value, (frozenset, set)) else list(value)
        out[name] = value
    pools = errors.get(f"{where}.pools", agent.pools, []) or []
    out["pools"] = [_pool(p, agents, errors, f"{where} pool {i}") for i, p in enumerate(pools)]
    return out


def hsa_system(errors: _Errors) -> dict[str, Any]:
    """The HSA runtime (``rocminfo``'s view): system attributes, agents and their pools."""
    import rocpy

    from ._backend import current
    if not current().has_hsa:
        return {"available": False,
                "reason": f"there is no HSA runtime on the {rocpy.backend().name} backend"}
    from . import hsa
    rt = errors.get("hsa_init", hsa.Runtime)
    if rt is None:
        return {"available": False, "reason": errors.items[-1]["error"]}
    try:
        freq = errors.get("timestamp_frequency", lambda: rt.timestamp_frequency)
        system = {
            "version": ".".join(map(str, errors.get("version", lambda: rt.version, ()) or ())),
            "build": errors.get("build_version", lambda: rt.build_version),
            "timestamp_frequency_hz": freq,
            "signal_max_wait": errors.get("signal_max_wait", lambda: rt.signal_max_wait),
            "machine_model": errors.get("machine_model", lambda: rt.machine_model),
            "endianness": errors.get("endianness", lambda: rt.endianness),
            "svm_supported": errors.get("svm_supported", lambda: rt.svm_supported),
            "svm_accessible_by_default": errors.get("svm_accessible_by_default",
                                                    lambda: rt.svm_accessible_by_default),
            "xnack_enabled": errors.get("xnack_enabled", lambda: rt.xnack_enabled),
            "extensions": errors.get("extensions", lambda: rt.extensions, []),
        }
        agents = errors.get("hsa_iterate_agents", lambda: rt.agents, []) or []
        return {"available": True, "system": system,
                "agents": [_agent(i, a, agents, errors) for i, a in enumerate(agents)]}
    finally:
        rt.close()


def collect() -> dict[str, Any]:
    """Everything `rocpy info` shows, as JSON-ready data (schema ``rocpy.info/1``)."""
    errors = _Errors()
    data: dict[str, Any] = {"schema": SCHEMA, "host": host_info()}
    try:
        data["backend"] = backend_info()
    except Exception as exc:  # no backend loads at all (ROCPY_BACKEND names one that cannot run)
        data["backend"] = {"name": None, "simulation": False, "reason": str(exc), "tried": {}}
        data["simulation"] = False
        data["versions"] = {}
        data["hip"] = {"device_count": 0, "devices": [], "peer_access": []}
        data["hsa"] = {"available": False, "reason": str(exc)}
        data["errors"] = [{"where": "backend", "error": f"{type(exc).__name__}: {exc}"}]
        return data
    name = data["backend"]["name"]
    data["simulation"] = data["backend"]["simulation"]
    data["versions"] = _versions(errors, name)
    data["hip"] = hip_devices(errors)
    data["hsa"] = hsa_system(errors)
    if data["hsa"].get("available"):
        system = data["hsa"]["system"]
        data["versions"]["hsa"] = system.get("version")
        data["versions"]["hsa_build"] = system.get("build")
    data["errors"] = errors.items
    return data


__all__ = ["SCHEMA", "backend_info", "collect", "hip_devices", "hip_version_text", "host_info",
           "hsa_system"]
