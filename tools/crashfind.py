#!/usr/bin/env python3
"""Crash-finder: invalid calls through the raw layer, each classified.

A corpus of calls that break the API's rules on purpose (NULL, forged and
dangling handles, zero and huge sizes, calls before ``hsa_init``) runs
through ``rocpy.hip.lib`` / ``rocpy.hsa.lib`` on the stub, in worker
subprocesses.  Each case ends in one of:

  status     returned a status (the expected one: an error, or the one named);
  unexpected returned, but not what the case expects (success where an error
             is due, another status than the one named): worth a look;
  abort      the process aborted with the stub's clear message (stderr line
             starting with "rocpy stub:"), where the real runtime aborts too;
  crash      anything else: a signal (SIGSEGV...), an abort without the
             message, a sanitizer report, a hang, a Python error: a bug.

Workers run the cases of a batch in order and say which case they start;
when one dies, the case it was running is classified by its exit status and
its stderr, and a new worker goes on with the next case.

Out of the corpus on purpose: calls where ROCr and hipamd themselves
dereference what they are given without checking (queue index operations on
a forged or destroyed ``hsa_queue_t *``, copies from arbitrary host
addresses, which a runtime cannot tell from pageable memory).  NULL is in.

    python tools/crashfind.py              # the normal build in this tree
    python tools/crashfind.py --asan       # the stub built with ASan+UBSan
                                           # (a copy of the tree, as tools/sanitize.sh)
    python tools/crashfind.py -k hsa_signal -v --json out.json

Exit status: 1 if any case crashed, else 0.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crashfind_public import PY_PRELUDE, public_cases, py_matches  # noqa: E402
FORGED = 0xDEAD0000          # in no allocation, never mapped by the stub
BATCH = 40                   # cases per worker
CASE_TIMEOUT = 10.0          # seconds a single case may take before it is a hang

OUTCOMES = ("status", "unexpected", "abort", "crash")


@dataclass
class Case:
    """One invalid call: ``code`` is a Python expression evaluated in the worker
    (see PRELUDE) whose value is a status (or a tuple whose first item is).

    ``expect``: ``"error"`` (any failure status), ``"any"`` (a status, any),
    ``"abort"`` (the stub's abort), or a tuple of acceptable status names.
    """

    name: str
    api: str            # "hip" or "hsa"
    code: str
    expect: object = "error"
    setup: str = ""     # statements run before `code` (same namespace)


@dataclass
class Result:
    name: str
    outcome: str
    detail: str = ""
    status: str | None = None
    expect: object = None
    stderr: str = field(default="", repr=False)


# ---- the worker ------------------------------------------------------------------

PRELUDE = r'''
import gc, json, os, sys
from rocpy import _backend
B = _backend.current()
lib, ffi = B.lib, B.ffi
NULL = ffi.NULL
FORGED = %d
_keep = []

def keep(x):
    _keep.append(x)
    return x

def out(ctype):
    return keep(ffi.new(ctype))

# ---- HIP ----
def hip_ok(st, what):
    if st:
        raise RuntimeError(f"setup: {what} returned {st}")

def stream():
    p = out("hipStream_t *"); hip_ok(lib.hipStreamCreate(p), "hipStreamCreate"); return p[0]
def dead_stream():
    s = stream(); hip_ok(lib.hipStreamDestroy(s), "hipStreamDestroy"); return s
def event(flags=0):
    p = out("hipEvent_t *"); hip_ok(lib.hipEventCreateWithFlags(p, flags), "hipEventCreate"); return p[0]
def dead_event():
    e = event(); hip_ok(lib.hipEventDestroy(e), "hipEventDestroy"); return e
def dmalloc(n=64):
    p = out("void **"); hip_ok(lib.hipMalloc(p, n), "hipMalloc"); return p[0]
def dead_dmalloc(n=64):
    p = dmalloc(n); hip_ok(lib.hipFree(p), "hipFree"); return p
def hmalloc(n=64):
    p = out("void **"); hip_ok(lib.hipHostMalloc(p, n, 0), "hipHostMalloc"); return p[0]
def graph():
    p = out("hipGraph_t *"); hip_ok(lib.hipGraphCreate(p, 0), "hipGraphCreate"); return p[0]
def dead_graph():
    g = graph(); hip_ok(lib.hipGraphDestroy(g), "hipGraphDestroy"); return g
def graph_exec():
    g = graph(); n = out("hipGraphNode_t *")
    hip_ok(lib.hipGraphAddEmptyNode(n, g, NULL, 0), "hipGraphAddEmptyNode")
    x = out("hipGraphExec_t *"); hip_ok(lib.hipGraphInstantiate(x, g, NULL, NULL, 0), "instantiate")
    return x[0]
def dead_graph_exec():
    x = graph_exec(); hip_ok(lib.hipGraphExecDestroy(x), "hipGraphExecDestroy"); return x
def module():
    data = keep(open(os.environ["CRASHFIND_VADD"], "rb").read())
    p = out("hipModule_t *"); hip_ok(lib.hipModuleLoadData(p, data), "hipModuleLoadData"); return p[0]
def dead_module():
    m = module(); hip_ok(lib.hipModuleUnload(m), "hipModuleUnload"); return m
def function(m=None):
    m = module() if m is None else m
    f = out("hipFunction_t *"); hip_ok(lib.hipModuleGetFunction(f, m, b"vadd"), "hipModuleGetFunction")
    return f[0]
def dead_function():
    m = module(); f = function(m); hip_ok(lib.hipModuleUnload(m), "hipModuleUnload"); return f
def forged(ctype):
    return ffi.cast(ctype, FORGED)
def extra_for(nbytes, buf=None):
    buf = keep(ffi.new("char[]", max(nbytes, 1))) if buf is None else buf
    size = keep(ffi.new("size_t *", nbytes))
    return keep(ffi.new("void *[5]", [lib.HIP_LAUNCH_PARAM_BUFFER_POINTER, buf,
                                      lib.HIP_LAUNCH_PARAM_BUFFER_SIZE, size, lib.HIP_LAUNCH_PARAM_END]))
def vadd_args(a, b, c, n):
    buf = keep(ffi.new("char[]", 28))
    for i, p in enumerate((a, b, c)):
        ffi.cast("void **", buf)[i] = p
    ffi.cast("int *", buf + 24)[0] = n
    return extra_for(28, buf)
@ffi.callback("void(void *)")
def host_fn(user):
    pass
@ffi.callback("void(hipStream_t, hipError_t, void *)")
def stream_cb(s, st, user):
    pass

# ---- HSA ----
def hsa_ok(st, what):
    if st:
        raise RuntimeError(f"setup: {what} returned {st:#x}")
def agents(kind=None):
    found = []
    @ffi.callback("hsa_status_t(hsa_agent_t, void *)")
    def cb(a, data):
        t = ffi.new("hsa_device_type_t *")
        lib.hsa_agent_get_info(a, lib.HSA_AGENT_INFO_DEVICE, t)
        if kind is None or t[0] == kind:
            found.append(agent_h(a.handle))
        return 0
    hsa_ok(lib.hsa_iterate_agents(cb, NULL), "hsa_iterate_agents")
    return found
def gpu():
    return agents(lib.HSA_DEVICE_TYPE_GPU)[0]
def cpu():
    return agents(lib.HSA_DEVICE_TYPE_CPU)[0]
def pools(agent):
    found = []
    @ffi.callback("hsa_status_t(hsa_amd_memory_pool_t, void *)")
    def cb(p, data):
        found.append(pool_h(p.handle))
        return 0
    hsa_ok(lib.hsa_amd_agent_iterate_memory_pools(agent, cb, NULL), "iterate pools")
    return found
def pool():
    return pools(gpu())[0]
def hsa_alloc(n=4096):
    p = out("void **"); hsa_ok(lib.hsa_amd_memory_pool_allocate(pool(), n, 0, p), "pool_allocate")
    return p[0]
def dead_hsa_alloc():
    p = hsa_alloc(); hsa_ok(lib.hsa_amd_memory_pool_free(p), "pool_free"); return p
def signal(v=1):
    s = out("hsa_signal_t *"); hsa_ok(lib.hsa_signal_create(v, 0, NULL, s), "hsa_signal_create"); return s[0]
def dead_signal():
    s = signal(); hsa_ok(lib.hsa_signal_destroy(s), "hsa_signal_destroy"); return s
def sig(handle):
    return ffi.new("hsa_signal_t *", {"handle": handle})[0]
def agent_h(handle):
    return ffi.new("hsa_agent_t *", {"handle": handle})[0]
def pool_h(handle):
    return ffi.new("hsa_amd_memory_pool_t *", {"handle": handle})[0]
def region_h(handle):
    return ffi.new("hsa_region_t *", {"handle": handle})[0]
def exe_h(handle):
    return ffi.new("hsa_executable_t *", {"handle": handle})[0]
def reader_h(handle):
    return ffi.new("hsa_code_object_reader_t *", {"handle": handle})[0]
def queue():
    q = out("hsa_queue_t **")
    hsa_ok(lib.hsa_queue_create(gpu(), 64, lib.HSA_QUEUE_TYPE_MULTI, NULL, NULL, 2**32 - 1,
                                2**32 - 1, q), "hsa_queue_create")
    return q[0]
def dead_queue():
    q = queue(); hsa_ok(lib.hsa_queue_destroy(q), "hsa_queue_destroy"); return q
def executable():
    e = out("hsa_executable_t *")
    hsa_ok(lib.hsa_executable_create_alt(lib.HSA_PROFILE_FULL,
           lib.HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, e), "hsa_executable_create_alt")
    return e[0]
def dead_executable():
    e = executable(); hsa_ok(lib.hsa_executable_destroy(e), "hsa_executable_destroy"); return e
def reader():
    data = keep(open(os.environ["CRASHFIND_VADD_ELF"], "rb").read())
    r = out("hsa_code_object_reader_t *")
    hsa_ok(lib.hsa_code_object_reader_create_from_memory(data, len(data), r), "reader")
    return r[0]
def dead_reader():
    r = reader(); hsa_ok(lib.hsa_code_object_reader_destroy(r), "reader_destroy"); return r
@ffi.callback("hsa_status_t(hsa_agent_t, void *)")
def agent_cb(a, d):
    return 0
@ffi.callback("bool(hsa_signal_value_t, void *)")
def signal_handler(v, d):
    return False

def status_name(api, st):
    if api == "hip":
        return ffi.string(ffi.cast("hipError_t", st))
    return ffi.string(ffi.cast("hsa_status_t", st))

%s

def run(cases):
    for index, api, setup, code in cases:
        sys.stderr.write(f"\n@@case {index}\n"); sys.stderr.flush()
        print(f"start {index}", flush=True)
        ns = dict(globals())
        inited = False
        try:
            if api == "hsa":
                hsa_ok(lib.hsa_init(), "hsa_init")
                inited = True
            if setup:
                exec(setup, ns)
            if api == "py":     # the public layer: what it returned, or what it raised
                try:
                    value = eval(code, ns)
                except Exception as exc:
                    mro = ",".join(c.__name__ for c in type(exc).__mro__)
                    print("done " + json.dumps([index, 1, f"{mro}|{exc}"]), flush=True)
                else:
                    print("done " + json.dumps([index, 0, str(value)]), flush=True)
                continue
            value = eval(code, ns)
            st = value[0] if isinstance(value, tuple) else value
            if isinstance(st, bool):
                st = int(st)
            name = status_name(api, st) if isinstance(st, int) else repr(st)
            print("done " + json.dumps([index, st if isinstance(st, int) else None, name]), flush=True)
        except BaseException as exc:
            print("done " + json.dumps([index, None, f"python: {type(exc).__name__}: {exc}"]),
                  flush=True)
        finally:
            if inited:
                lib.hsa_shut_down()

run(json.load(open(sys.argv[1])))
''' % (FORGED, PY_PRELUDE)


# ---- the corpus ---------------------------------------------------------------------

def _hip_cases() -> list[Case]:
    cases: list[Case] = []

    def add(name: str, code: str, expect: object = "error", setup: str = "") -> None:
        cases.append(Case(f"hip:{name}", "hip", code, expect, setup))

    # every handle kind x NULL / forged / dangling, through every call taking it
    handle_kinds = {
        "stream": ("NULL", "forged('hipStream_t')", "dead_stream()"),
        "event": ("NULL", "forged('hipEvent_t')", "dead_event()"),
        "module": ("NULL", "forged('hipModule_t')", "dead_module()"),
        "function": ("NULL", "forged('hipFunction_t')", "dead_function()"),
        "graph": ("NULL", "forged('hipGraph_t')", "dead_graph()"),
        "exec": ("NULL", "forged('hipGraphExec_t')", "dead_graph_exec()"),
        "dptr": ("NULL", "forged('void *')", "dead_dmalloc()"),
    }
    calls = {
        "stream": [
            "lib.hipStreamSynchronize({h})", "lib.hipStreamQuery({h})",
            "lib.hipStreamDestroy({h})", "lib.hipStreamWaitEvent({h}, event(), 0)",
            "lib.hipStreamGetPriority({h}, out('int *'))",
            "lib.hipStreamGetFlags({h}, out('unsigned int *'))",
            "lib.hipEventRecord(event(), {h})",
            "lib.hipMemcpyAsync(dmalloc(), dmalloc(), 64, lib.hipMemcpyDeviceToDevice, {h})",
            "lib.hipMemsetAsync(dmalloc(), 0, 64, {h})",
            "lib.hipLaunchHostFunc({h}, host_fn, NULL)",
            "lib.hipStreamAddCallback({h}, stream_cb, NULL, 0)",
            "lib.hipStreamBeginCapture({h}, lib.hipStreamCaptureModeGlobal)",
            "lib.hipStreamEndCapture({h}, out('hipGraph_t *'))",
            "lib.hipStreamIsCapturing({h}, out('hipStreamCaptureStatus *'))",
            "lib.hipMallocAsync(out('void **'), 64, {h})",
            "lib.hipFreeAsync(dmalloc(), {h})",
            "lib.hipModuleLaunchKernel(function(), 1, 1, 1, 1, 1, 1, 0, {h}, NULL, "
            "vadd_args(dmalloc(), dmalloc(), dmalloc(), 1))",
            "lib.hipGraphLaunch(graph_exec(), {h})",
        ],
        "event": [
            "lib.hipEventSynchronize({h})", "lib.hipEventQuery({h})", "lib.hipEventDestroy({h})",
            "lib.hipEventRecord({h}, NULL)", "lib.hipEventRecord({h}, stream())",
            "lib.hipEventElapsedTime(out('float *'), {h}, event())",
            "lib.hipEventElapsedTime(out('float *'), event(), {h})",
            "lib.hipStreamWaitEvent(stream(), {h}, 0)", "lib.hipStreamWaitEvent(NULL, {h}, 0)",
        ],
        "module": [
            "lib.hipModuleUnload({h})", "lib.hipModuleGetFunction(out('hipFunction_t *'), {h}, b'vadd')",
            "lib.hipModuleGetGlobal(out('hipDeviceptr_t *'), out('size_t *'), {h}, b'x')",
        ],
        "function": [
            "lib.hipModuleLaunchKernel({h}, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, "
            "vadd_args(dmalloc(), dmalloc(), dmalloc(), 1))",
            "lib.hipFuncGetAttribute(out('int *'), lib.HIP_FUNC_ATTRIBUTE_NUM_REGS, {h})",
            "lib.hipFuncGetAttributes(out('hipFuncAttributes *'), ffi.cast('void *', {h}))",
        ],
        "graph": [
            "lib.hipGraphDestroy({h})", "lib.hipGraphAddEmptyNode(out('hipGraphNode_t *'), {h}, NULL, 0)",
            "lib.hipGraphInstantiate(out('hipGraphExec_t *'), {h}, NULL, NULL, 0)",
            "lib.hipGraphGetNodes({h}, NULL, out('size_t *'))",
            "lib.hipGraphGetRootNodes({h}, NULL, out('size_t *'))",
        ],
        "exec": ["lib.hipGraphExecDestroy({h})", "lib.hipGraphLaunch({h}, NULL)",
                 "lib.hipGraphLaunch({h}, stream())"],
        "dptr": [
            "lib.hipFree({h})", "lib.hipHostFree({h})", "lib.hipMemset({h}, 0, 64)",
            "lib.hipMemsetAsync({h}, 0, 64, NULL)",
            "lib.hipMemsetD32(ffi.cast('hipDeviceptr_t', {h}), 0, 16)",
            "lib.hipMemcpy({h}, {h}, 64, lib.hipMemcpyDeviceToDevice)",
            "lib.hipPointerGetAttributes(out('hipPointerAttribute_t *'), {h})",
            "lib.hipMemGetAddressRange(out('hipDeviceptr_t *'), out('size_t *'), ffi.cast('hipDeviceptr_t', {h}))",
            "lib.hipFreeAsync({h}, NULL)", "lib.hipHostUnregister({h})",
            "lib.hipHostGetDevicePointer(out('void **'), {h}, 0)",
            "lib.hipModuleLaunchKernel(function(), 1, 1, 1, 64, 1, 1, 0, NULL, NULL, "
            "vadd_args({h}, dmalloc(), dmalloc(), 64)) or lib.hipDeviceSynchronize()",
            "lib.hipModuleLaunchKernel(function(), 1, 1, 1, 64, 1, 1, 0, NULL, NULL, "
            "vadd_args(dmalloc(), dmalloc(), {h}, 64)) or lib.hipDeviceSynchronize()",
        ],
    }
    # NULL is legal where it means the null stream; success is fine there
    null_ok = {"stream"}
    for kind, variants in handle_kinds.items():
        for variant, expr in zip(("null", "forged", "dangling"), variants):
            for template in calls[kind]:
                call = template.format(h=expr)
                fn = re.match(r"lib\.(\w+)", template).group(1)
                expect: object = "error"
                if variant == "null" and kind in null_ok:
                    expect = "any"
                if variant == "null" and kind == "dptr" and fn in ("hipFree", "hipHostFree"):
                    expect = ("hipSuccess",)   # freeing NULL does nothing
                if kind == "dptr" and "vadd_args" in template:
                    expect = "abort"           # a kernel touching unmapped memory: GPU fault
                cases.append(Case(f"hip:{fn}:{kind}:{variant}:{len(cases)}", "hip", call, expect))

    # output pointers NULL
    for call in ("lib.hipStreamCreate(NULL)", "lib.hipEventCreate(NULL)", "lib.hipMalloc(NULL, 64)",
                 "lib.hipHostMalloc(NULL, 64, 0)", "lib.hipMallocManaged(NULL, 64, 1)",
                 "lib.hipGetDeviceCount(NULL)", "lib.hipGetDevice(NULL)",
                 "lib.hipGetDeviceProperties(NULL, 0)", "lib.hipDeviceGetAttribute(NULL, 0, 0)",
                 "lib.hipEventElapsedTime(NULL, event(), event())",
                 "lib.hipModuleLoadData(NULL, NULL)", "lib.hipModuleLoadData(out('hipModule_t *'), NULL)",
                 "lib.hipModuleGetFunction(NULL, module(), b'vadd')",
                 "lib.hipModuleGetFunction(out('hipFunction_t *'), module(), NULL)",
                 "lib.hipGraphCreate(NULL, 0)", "lib.hipStreamGetPriority(stream(), NULL)",
                 "lib.hipMemGetInfo(NULL, NULL)", "lib.hipDeviceGetName(NULL, 64, 0)",
                 "lib.hipPointerGetAttributes(NULL, dmalloc())",
                 "lib.hipMallocAsync(NULL, 64, NULL)", "lib.hipStreamEndCapture(stream(), NULL)",
                 "lib.hipDeviceGetPCIBusId(NULL, 64, 0)",
                 "lib.hipLaunchHostFunc(stream(), ffi.NULL, NULL)"):
        add(f"null-arg:{call[4:]}", call)
    # device ordinals
    for dev in ("-1", "1 << 30", "2**31 - 1"):
        for call in ("lib.hipSetDevice({d})", "lib.hipGetDeviceProperties(out('hipDeviceProp_t *'), {d})",
                     "lib.hipDeviceGetAttribute(out('int *'), lib.hipDeviceAttributeMaxThreadsPerBlock, {d})",
                     "lib.hipDeviceCanAccessPeer(out('int *'), 0, {d})",
                     "lib.hipDeviceEnablePeerAccess({d}, 0)", "lib.hipDeviceGetName(out('char[64]'), 64, {d})",
                     "lib.hipDeviceTotalMem(out('size_t *'), {d})"):
            add(f"device:{dev}:{call.split('(')[0][4:]}", call.format(d=dev))
    add("attribute:bogus", "lib.hipDeviceGetAttribute(out('int *'), 1 << 30, 0)")
    # sizes: zero and huge
    huge = ("2**63", "2**64 - 1", "2**48")
    for n in huge:
        add(f"size:hipMalloc:{n}", f"lib.hipMalloc(out('void **'), {n})")
        add(f"size:hipHostMalloc:{n}", f"lib.hipHostMalloc(out('void **'), {n}, 0)")
        add(f"size:hipMallocManaged:{n}", f"lib.hipMallocManaged(out('void **'), {n}, 1)")
        add(f"size:hipMallocAsync:{n}", f"lib.hipMallocAsync(out('void **'), {n}, NULL)")
        add(f"size:hipMemcpy:{n}", f"lib.hipMemcpy(dmalloc(), dmalloc(), {n}, lib.hipMemcpyDeviceToDevice)")
        add(f"size:hipMemcpyDefault:{n}", f"lib.hipMemcpy(dmalloc(), dmalloc(), {n}, lib.hipMemcpyDefault)")
        add(f"size:hipMemcpyAsync:{n}",
            f"lib.hipMemcpyAsync(dmalloc(), hmalloc(), {n}, lib.hipMemcpyHostToDevice, stream())")
        add(f"size:hipMemset:{n}", f"lib.hipMemset(dmalloc(), 0, {n})")
        add(f"size:hipMemsetD32:{n}",
            f"lib.hipMemsetD32(ffi.cast('hipDeviceptr_t', dmalloc()), 0, ({n}) // 4)")
        add(f"size:hipMemsetAsync:{n}", f"lib.hipMemsetAsync(dmalloc(), 0, {n}, stream())")
        add(f"size:hipHostRegister:{n}", f"lib.hipHostRegister(hmalloc(), {n}, 0)")
        add(f"size:hipModuleLoadData-short:{n}", "lib.hipModuleLoadData(out('hipModule_t *'), b'\\x7fELF')")
    for call in ("lib.hipMalloc(out('void **'), 0)", "lib.hipHostMalloc(out('void **'), 0, 0)",
                 "lib.hipMemcpy(dmalloc(), dmalloc(), 0, lib.hipMemcpyDefault)",
                 "lib.hipMemset(dmalloc(), 0, 0)", "lib.hipMallocAsync(out('void **'), 0, NULL)"):
        add(f"zero:{call.split('(')[0][4:]}", call, "any")
    add("zero:hipMallocManaged", "lib.hipMallocManaged(out('void **'), 0, 1)")
    add("one-past:hipMemcpy", "lib.hipMemcpy(dmalloc(64), dmalloc(32), 64, lib.hipMemcpyDeviceToDevice)")
    add("interior-free", "lib.hipFree(ffi.cast('char *', dmalloc()) + 8)")
    add("double-free", "lib.hipFree(dead_dmalloc())")
    add("host-free-of-device", "lib.hipHostFree(dmalloc())", "any")
    add("memcpy-unknown-both-d2d", "lib.hipMemcpy(forged('void *'), forged('void *'), 64, "
                                   "lib.hipMemcpyDeviceToDevice)")
    add("free-of-host", "lib.hipFree(hmalloc())", "any")
    add("garbage-module", "lib.hipModuleLoadData(out('hipModule_t *'), b'\\0' * 4096)")
    add("garbage-elf", "lib.hipModuleLoadData(out('hipModule_t *'), b'\\x7fELF' + b'\\xff' * 4092)")
    add("garbage-bundle", "lib.hipModuleLoadData(out('hipModule_t *'), "
                          "b'__CLANG_OFFLOAD_BUNDLE__' + b'\\xff' * 4072)")
    # launch configurations
    for grid, block in (("0, 1, 1", "1, 1, 1"), ("1, 1, 1", "0, 1, 1"), ("1, 1, 1", "1025, 1, 1"),
                        ("2**32 - 1, 1, 1", "1024, 1, 1"),
                        ("1, 1, 1", "32, 32, 2")):
        add(f"launch:{grid}:{block}", f"lib.hipModuleLaunchKernel(function(), {grid}, {block}, 0, NULL, "
                                      "NULL, vadd_args(NULL, NULL, NULL, 0))")
    add("launch:lds", "lib.hipModuleLaunchKernel(function(), 1, 1, 1, 1, 1, 1, 2**31, NULL, NULL, "
                      "vadd_args(NULL, NULL, NULL, 0))")
    add("launch:huge-grid", "lib.hipModuleLaunchKernel(function(), 2**32 - 1, 2**32 - 1, 2**32 - 1, "
                            "1, 1, 1, 0, NULL, NULL, vadd_args(NULL, NULL, NULL, 0))", "any")
    add("launch:no-args", "lib.hipModuleLaunchKernel(function(), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL)")
    add("launch:short-extra", "lib.hipModuleLaunchKernel(function(), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, "
                              "extra_for(4))")
    add("launch:bad-extra", "lib.hipModuleLaunchKernel(function(), 1, 1, 1, 1, 1, 1, 0, NULL, NULL, "
                            "keep(ffi.new('void *[5]')))")
    add("launch:params-and-extra", "lib.hipModuleLaunchKernel(function(), 1, 1, 1, 1, 1, 1, 0, NULL, "
                                   "keep(ffi.new('void *[4]')), vadd_args(NULL, NULL, NULL, 0))")
    add("event:elapsed-unrecorded", "lib.hipEventElapsedTime(out('float *'), event(), event())")
    add("event:elapsed-notiming", "lib.hipEventElapsedTime(out('float *'), event(2), event(2))")
    add("capture:end-not-capturing", "lib.hipStreamEndCapture(stream(), out('hipGraph_t *'))")
    add("capture:bad-mode", "lib.hipStreamBeginCapture(stream(), 99)")
    add("capture:null-stream", "lib.hipStreamBeginCapture(NULL, lib.hipStreamCaptureModeGlobal)")
    add("stream:bad-flags", "lib.hipStreamCreateWithFlags(out('hipStream_t *'), 0xff)", "any")
    add("stream:cu-mask-zero", "lib.hipExtStreamCreateWithCUMask(out('hipStream_t *'), 0, NULL)")
    add("event:bad-flags", "lib.hipEventCreateWithFlags(out('hipEvent_t *'), 0xffff)")
    add("ctx:pop-empty", "lib.hipCtxPopCurrent(out('hipCtx_t *'))", "any")
    add("ctx:destroy-forged", "lib.hipCtxDestroy(forged('hipCtx_t'))", "any")
    add("ctx:set-forged", "lib.hipCtxSetCurrent(forged('hipCtx_t'))")
    add("ipc:bad-flags", "lib.hipHostRegister(hmalloc(), 64, 0xff)")
    return cases


def _hsa_cases() -> list[Case]:
    cases: list[Case] = []

    def add(name: str, code: str, expect: object = "error", setup: str = "") -> None:
        cases.append(Case(f"hsa:{name}", "hsa", code, expect, setup))

    # signals: value operations on a bad handle abort in ROCr, and in the stub
    bad_signals = {"zero": "sig(0)", "forged": f"sig({FORGED})", "dangling": "dead_signal()"}
    value_ops = ("lib.hsa_signal_load_relaxed({s})", "lib.hsa_signal_store_screlease({s}, 1)",
                 "lib.hsa_signal_add_scacq_screl({s}, 1)", "lib.hsa_signal_exchange_scacq_screl({s}, 1)",
                 "lib.hsa_signal_cas_scacq_screl({s}, 0, 1)",
                 "lib.hsa_signal_wait_scacquire({s}, lib.HSA_SIGNAL_CONDITION_EQ, 0, 1000, "
                 "lib.HSA_WAIT_STATE_BLOCKED)")
    status_ops = ("lib.hsa_signal_destroy({s})",
                  "lib.hsa_amd_signal_async_handler({s}, lib.HSA_SIGNAL_CONDITION_EQ, 0, "
                  "signal_handler, NULL)",
                  "lib.hsa_amd_profiling_get_dispatch_time(gpu(), {s}, "
                  "out('hsa_amd_profiling_dispatch_time_t *'))",
                  "lib.hsa_amd_memory_async_copy(hsa_alloc(), gpu(), hsa_alloc(), gpu(), 64, 0, NULL, {s})",
                  "lib.hsa_signal_group_create(1, keep(ffi.new('hsa_signal_t[1]', [{s}])), 0, NULL, "
                  "out('hsa_signal_group_t *'))")
    for variant, expr in bad_signals.items():
        for op in value_ops:
            fn = op.split("(")[0][4:]
            add(f"{fn}:{variant}", op.format(s=expr), "abort")
        for op in status_ops:
            fn = op.split("(")[0][4:]
            expect: object = "error"
            if variant == "zero" and "async_copy" in op:
                expect = "error"
            add(f"{fn}:{variant}", op.format(s=expr), expect)
    add("wait_any:dangling",
        "lib.hsa_amd_signal_wait_any(1, keep(ffi.new('hsa_signal_t[1]', [dead_signal()])), "
        "keep(ffi.new('hsa_signal_condition_t[1]', [0])), keep(ffi.new('hsa_signal_value_t[1]', [0])), "
        "1000, lib.HSA_WAIT_STATE_BLOCKED, NULL)", "any")
    add("wait_any:zero-count", "lib.hsa_amd_signal_wait_any(0, NULL, NULL, NULL, 1000, "
                               "lib.HSA_WAIT_STATE_BLOCKED, NULL)", "any")

    # agents, pools, regions, executables, readers: forged and zero handles
    for variant, value in (("zero", "0"), ("forged", str(FORGED))):
        add(f"agent_get_info:{variant}",
            f"lib.hsa_agent_get_info(agent_h({value}), lib.HSA_AGENT_INFO_NAME, out('char[64]'))")
        add(f"queue_create:{variant}",
            f"lib.hsa_queue_create(agent_h({value}), 64, 0, NULL, NULL, 0, 0, out('hsa_queue_t **'))")
        add(f"agent_iterate_regions:{variant}",
            f"lib.hsa_agent_iterate_regions(agent_h({value}), ffi.NULL, NULL)")
        add(f"iterate_pools:{variant}",
            f"lib.hsa_amd_agent_iterate_memory_pools(agent_h({value}), ffi.NULL, NULL)")
        add(f"pool_allocate:{variant}",
            f"lib.hsa_amd_memory_pool_allocate(pool_h({value}), 64, 0, out('void **'))")
        add(f"pool_get_info:{variant}",
            f"lib.hsa_amd_memory_pool_get_info(pool_h({value}), 0, out('uint32_t *'))")
        add(f"region_get_info:{variant}",
            f"lib.hsa_region_get_info(region_h({value}), 0, out('uint32_t *'))")
        add(f"memory_allocate:{variant}", f"lib.hsa_memory_allocate(region_h({value}), 64, out('void **'))")
        add(f"executable_destroy:{variant}", f"lib.hsa_executable_destroy(exe_h({value}))")
        add(f"executable_freeze:{variant}", f"lib.hsa_executable_freeze(exe_h({value}), NULL)")
        add(f"executable_symbol:{variant}",
            f"lib.hsa_executable_get_symbol_by_name(exe_h({value}), b'vadd.kd', "
            "keep(ffi.new('hsa_agent_t *', gpu())), out('hsa_executable_symbol_t *'))")
        add(f"executable_load:{variant}",
            f"lib.hsa_executable_load_agent_code_object(exe_h({value}), gpu(), reader(), NULL, NULL)")
        add(f"executable_load_reader:{variant}",
            f"lib.hsa_executable_load_agent_code_object(executable(), gpu(), reader_h({value}), NULL, NULL)")
        add(f"reader_destroy:{variant}", f"lib.hsa_code_object_reader_destroy(reader_h({value}))")
        add(f"agents_allow_access:{variant}",
            f"lib.hsa_amd_agents_allow_access(1, keep(ffi.new('hsa_agent_t[1]', [agent_h({value})])), "
            "NULL, hsa_alloc())")
        add(f"pool_can_migrate:{variant}",
            f"lib.hsa_amd_agent_memory_pool_get_info(agent_h({value}), pool(), 0, out('uint32_t *'))")
        add(f"async_copy_agent:{variant}",
            f"lib.hsa_amd_memory_async_copy(hsa_alloc(), agent_h({value}), hsa_alloc(), gpu(), 64, 0, "
            "NULL, signal())")
    for variant, expr in (("dangling", "dead_executable()"),):
        add(f"executable_destroy:{variant}", f"lib.hsa_executable_destroy({expr})")
        add(f"executable_freeze:{variant}", f"lib.hsa_executable_freeze({expr}, NULL)")
    add("reader_destroy:dangling", "lib.hsa_code_object_reader_destroy(dead_reader())")
    add("executable_load:dangling-reader",
        "lib.hsa_executable_load_agent_code_object(executable(), gpu(), dead_reader(), NULL, NULL)")

    # queues: NULL everywhere, dangling where the runtime looks the queue up
    for call in ("lib.hsa_queue_destroy({q})", "lib.hsa_queue_inactivate({q})",
                 "lib.hsa_amd_profiling_set_profiler_enabled({q}, 1)",
                 "lib.hsa_amd_queue_cu_set_mask({q}, 1, keep(ffi.new('uint32_t[1]', [1])))",
                 "lib.hsa_amd_queue_set_priority({q}, 0)"):
        fn = call.split("(")[0][4:]
        add(f"{fn}:null", call.format(q="NULL"))
        add(f"{fn}:dangling", call.format(q="dead_queue()"))
        add(f"{fn}:forged", call.format(q="forged('hsa_queue_t *')"))
    for call in ("lib.hsa_queue_load_read_index_scacquire(NULL)",
                 "lib.hsa_queue_load_write_index_relaxed(NULL)",
                 "lib.hsa_queue_store_write_index_relaxed(NULL, 1)",
                 "lib.hsa_queue_add_write_index_relaxed(NULL, 1)",
                 "lib.hsa_queue_cas_write_index_relaxed(NULL, 0, 1)"):
        add(f"{call.split('(')[0][4:]}:null", call, "abort")

    # pointers
    for variant, expr in (("null", "NULL"), ("forged", "forged('void *')"), ("dangling", "dead_hsa_alloc()")):
        add(f"pool_free:{variant}", f"lib.hsa_amd_memory_pool_free({expr})",
            ("HSA_STATUS_SUCCESS",) if variant == "null" else "error")
        add(f"memory_free:{variant}", f"lib.hsa_memory_free({expr})",
            ("HSA_STATUS_SUCCESS",) if variant == "null" else "error")
        add(f"allow_access:{variant}",
            f"lib.hsa_amd_agents_allow_access(1, keep(ffi.new('hsa_agent_t[1]', [gpu()])), NULL, {expr})")
        add(f"pointer_info:{variant}",
            f"lib.hsa_amd_pointer_info({expr}, keep(ffi.new('hsa_amd_pointer_info_t *', {{'size': "
            "ffi.sizeof('hsa_amd_pointer_info_t')})), NULL, NULL, NULL)", "any")
        add(f"memory_unlock:{variant}", f"lib.hsa_amd_memory_unlock({expr})", "any")
        add(f"memory_fill:{variant}", f"lib.hsa_amd_memory_fill({expr}, 0, 16)")
        # a dangling address may be handed out again by the next allocation: any status then
        add(f"async_copy_dst:{variant}",
            f"lib.hsa_amd_memory_async_copy({expr}, gpu(), hsa_alloc(), gpu(), 64, 0, NULL, signal())",
            "any" if variant == "dangling" else "error")
        add(f"async_copy_src:{variant}",
            f"lib.hsa_amd_memory_async_copy(hsa_alloc(), gpu(), {expr}, gpu(), 64, 0, NULL, signal())",
            "any" if variant == "dangling" else "error")
        add(f"memory_copy_null_dst:{variant}" if variant == "null" else f"memory_register:{variant}",
            f"lib.hsa_memory_copy({expr}, hsa_alloc(), 64)" if variant == "null"
            else f"lib.hsa_memory_deregister({expr}, 64)", "any")
    add("memory_copy:null-src", "lib.hsa_memory_copy(hsa_alloc(), NULL, 64)")
    add("memory_lock:null", "lib.hsa_amd_memory_lock(NULL, 64, NULL, 0, out('void **'))")
    add("memory_lock:zero", "lib.hsa_amd_memory_lock(hsa_alloc(), 0, NULL, 0, out('void **'))")
    add("memory_lock:null-out", "lib.hsa_amd_memory_lock(keep(ffi.new('char[64]')), 64, NULL, 0, NULL)")
    # sizes
    for n in ("0", "2**63", "2**64 - 1", "2**48"):
        add(f"pool_allocate:{n}", f"lib.hsa_amd_memory_pool_allocate(pool(), {n}, 0, out('void **'))")
        add(f"queue_create:size-{n}",
            f"lib.hsa_queue_create(gpu(), ({n}) & 0xffffffff, 0, NULL, NULL, 0, 0, out('hsa_queue_t **'))")
        add(f"async_copy:{n}",
            f"lib.hsa_amd_memory_async_copy(hsa_alloc(), gpu(), hsa_alloc(), gpu(), {n}, 0, NULL, signal())",
            "any" if n == "0" else "error")
        add(f"memory_fill:{n}", f"lib.hsa_amd_memory_fill(hsa_alloc(), 0, ({n}) // 4)",
            "any" if n == "0" else "error")
        add(f"memory_copy:{n}", f"lib.hsa_memory_copy(hsa_alloc(), hsa_alloc(), {n})",
            "any" if n == "0" else "error")
    for size in ("3", "2**31", "1"):
        add(f"queue_create:size-{size}",
            f"lib.hsa_queue_create(gpu(), {size}, 0, NULL, NULL, 0, 0, out('hsa_queue_t **'))")
    add("queue_create:cpu-agent", "lib.hsa_queue_create(cpu(), 64, 0, NULL, NULL, 0, 0, out('hsa_queue_t **'))")
    add("queue_create:bad-type", "lib.hsa_queue_create(gpu(), 64, 99, NULL, NULL, 0, 0, out('hsa_queue_t **'))")
    add("queue_create:null-out", "lib.hsa_queue_create(gpu(), 64, 0, NULL, NULL, 0, 0, NULL)")
    add("signal_create:null-out", "lib.hsa_signal_create(1, 0, NULL, NULL)")
    add("signal_create:consumers-null", "lib.hsa_signal_create(1, 2, NULL, out('hsa_signal_t *'))")
    add("reader:garbage", "lib.hsa_code_object_reader_create_from_memory(b'\\0' * 256, 256, "
                          "out('hsa_code_object_reader_t *'))", "any")
    add("executable_load:garbage",
        "lib.hsa_executable_load_agent_code_object(executable(), gpu(), "
        "(lambda r: (lib.hsa_code_object_reader_create_from_memory(keep(b'\\0' * 256), 256, r), r[0])[1])"
        "(out('hsa_code_object_reader_t *')), NULL, NULL)")
    add("reader:elf-garbage", "lib.hsa_code_object_reader_create_from_memory(b'\\x7fELF' + b'\\xff' * 252, "
                              "256, out('hsa_code_object_reader_t *'))", "any")
    add("reader:zero-size", "lib.hsa_code_object_reader_create_from_memory(b'x', 0, "
                            "out('hsa_code_object_reader_t *'))")
    add("reader:null", "lib.hsa_code_object_reader_create_from_memory(NULL, 64, "
                       "out('hsa_code_object_reader_t *'))")
    add("iterate_agents:null-callback", "lib.hsa_iterate_agents(ffi.NULL, NULL)")
    add("agent_get_info:bad-attribute", "lib.hsa_agent_get_info(gpu(), 0x7fffffff, out('uint64_t *'))")
    add("system_get_info:bad-attribute", "lib.hsa_system_get_info(0x7fffffff, out('uint64_t *'))")
    add("system_get_info:null", "lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_TIMESTAMP, NULL)")
    add("status_string:bogus", "lib.hsa_status_string(0x7fffffff, out('const char **'))")
    add("shut_down:extra", "lib.hsa_shut_down() or lib.hsa_shut_down()",
        ("HSA_STATUS_ERROR_NOT_INITIALIZED",))

    # not initialized: the runtime refuses every call
    for call in ("lib.hsa_iterate_agents(agent_cb, NULL)", "lib.hsa_signal_create(1, 0, NULL, out('hsa_signal_t *'))",
                 "lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_TIMESTAMP, out('uint64_t *'))",
                 "lib.hsa_shut_down()", "lib.hsa_signal_destroy(sig(1))",
                 "lib.hsa_queue_destroy(forged('hsa_queue_t *'))",
                 "lib.hsa_amd_memory_pool_free(forged('void *'))",
                 "lib.hsa_executable_destroy(exe_h(1))"):
        cases.append(Case(f"hsa:not-initialized:{call.split('(')[0][4:]}", "hsa-raw", call,
                          ("HSA_STATUS_ERROR_NOT_INITIALIZED",)))
    return cases


def corpus() -> list[Case]:
    """Every case: the raw HIP calls, the raw HSA calls, then the public layer's
    (`crashfind_public`: numpy integers, out-of-range values, object dtypes, SIGINT)."""
    return _hip_cases() + _hsa_cases() + public_cases(Case)


# ---- running -----------------------------------------------------------------------------

def _matches(expect: object, status: int | None, name: str) -> bool:
    if status is None:
        return False
    if expect == "any":
        return True
    if expect == "error":
        return status != 0
    if expect == "abort":
        return False
    return name in expect  # type: ignore[operator]


def _env(kernels: dict[str, str], preload: str | None, pythonpath: str) -> dict[str, str]:
    env = dict(os.environ)
    env["ROCPY_BACKEND"] = "stub"
    env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    env["CRASHFIND_VADD"] = kernels["bundle"]
    env["CRASHFIND_VADD_ELF"] = kernels["elf"]
    env["PYTHONFAULTHANDLER"] = ""
    env.pop("PYTHONFAULTHANDLER")
    if preload:
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0:" + env.get("ASAN_OPTIONS", "")
        env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=0:" + env.get("UBSAN_OPTIONS", "")
    return env


_SANITIZER = re.compile(r"ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer")


def _classify_death(case: Case, rc: int, stderr: str) -> Result:
    clear = any(line.startswith("rocpy stub:") for line in stderr.splitlines())
    if _SANITIZER.search(stderr):
        return Result(case.name, "crash", "sanitizer report", expect=case.expect, stderr=stderr)
    if rc == -signal.SIGABRT and clear:
        line = next(line for line in stderr.splitlines() if line.startswith("rocpy stub:"))
        return Result(case.name, "abort", line, expect=case.expect, stderr=stderr)
    what = f"signal {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
    return Result(case.name, "crash", what, expect=case.expect, stderr=stderr)


def _split_stderr(text: str) -> dict[int, str]:
    parts: dict[int, str] = {}
    current = None
    for line in text.splitlines(keepends=True):
        m = re.match(r"@@case (\d+)$", line.strip())
        if m:
            current = int(m.group(1))
            parts[current] = ""
        elif current is not None:
            parts[current] += line
    return parts


def run(cases: list[Case], kernels: dict[str, str], *, python: str = sys.executable,
        preload: str | None = None, pythonpath: str = REPO, verbose: bool = False
        ) -> list[Result]:
    """Run `cases` in worker processes; one `Result` per case, in order."""
    env = _env(kernels, preload, pythonpath)
    results: dict[int, Result] = {}
    with tempfile.TemporaryDirectory(prefix="crashfind-") as tmp:
        worker = os.path.join(tmp, "worker.py")
        with open(worker, "w") as f:
            f.write(PRELUDE)
        todo = list(range(len(cases)))
        while todo:
            batch = todo[:BATCH]
            spec = os.path.join(tmp, "batch.json")
            with open(spec, "w") as f:
                json.dump([[i, cases[i].api.replace("hsa-raw", "raw"), cases[i].setup, cases[i].code]
                           for i in batch], f)
            try:
                proc = subprocess.run([python, worker, spec], capture_output=True, text=True, env=env,
                                      cwd=pythonpath, timeout=CASE_TIMEOUT + 1.0 * len(batch))
                rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
            except subprocess.TimeoutExpired as exc:
                rc = None
                stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
                stderr = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
            errs = _split_stderr(stderr)
            started = None
            for line in stdout.splitlines():
                if line.startswith("start "):
                    started = int(line.split()[1])
                elif line.startswith("done "):
                    index, status, name = json.loads(line[5:])
                    case = cases[index]
                    if case.api == "py":
                        ok = py_matches(case.expect, status, name)
                        results[index] = Result(case.name, "status" if ok else "unexpected", name,
                                                None, case.expect, errs.get(index, ""))
                    elif status is None and name.startswith("python:"):
                        results[index] = Result(case.name, "crash", name, expect=case.expect,
                                                stderr=errs.get(index, ""))
                    elif _matches(case.expect, status, name):
                        results[index] = Result(case.name, "status", name, name, case.expect)
                    else:
                        results[index] = Result(case.name, "unexpected", name, name, case.expect,
                                                errs.get(index, ""))
                    started = None
            if started is not None:
                case = cases[started]
                if rc is None:
                    results[started] = Result(case.name, "crash", "hang (killed after a timeout)",
                                              expect=case.expect, stderr=errs.get(started, ""))
                else:
                    results[started] = _classify_death(case, rc, errs.get(started, ""))
            elif rc not in (0, None) and not any(i in results for i in batch):
                raise RuntimeError(f"the worker failed before its first case (exit {rc}):\n{stderr}")
            todo = [i for i in todo if i not in results]
            if verbose:
                for i in batch:
                    if i in results:
                        r = results[i]
                        print(f"  {r.outcome:10s} {r.name}: {r.detail}", file=sys.stderr)
    return [results[i] for i in range(len(cases))]


def summary(results: list[Result]) -> dict[str, int]:
    counts = collections.Counter(r.outcome for r in results)
    return {o: counts.get(o, 0) for o in OUTCOMES}


# ---- kernels and the sanitized build -----------------------------------------------------

def build_kernels(out_dir: str) -> dict[str, str]:
    """The vadd test kernel as an offload bundle and as its bare ELF (hipcc)."""
    sys.path.insert(0, os.path.join(REPO, "tests"))
    from kernels.compile import compile_hip
    bundle = compile_hip("vadd", out_dir, ("gfx90a",))
    elf = os.path.join(out_dir, "vadd-gfx90a.elf")
    if not os.path.exists(elf):
        env = dict(os.environ, ROCPY_BACKEND="stub", PYTHONPATH=REPO)
        code = ("import sys; from rocpy import codeobject; "
                "f = codeobject.load(open(sys.argv[1], 'rb').read()); "
                "open(sys.argv[2], 'wb').write(f.select('gfx90a').data)")
        subprocess.run([sys.executable, "-c", code, bundle, elf], check=True, env=env)
    return {"bundle": bundle, "elf": elf}


def build_asan(work: str) -> tuple[str, str]:
    """Copy the tree and build the stub with ASan+UBSan there; (tree, libasan path)."""
    src = os.path.join(work, "src")
    subprocess.run(["rm", "-rf", src], check=True)
    os.makedirs(src)
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           check=True, capture_output=True).stdout
    tar = subprocess.Popen(["tar", "--null", "-T", "-", "-cf", "-"], cwd=REPO, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE)
    untar = subprocess.Popen(["tar", "-xf", "-", "-C", src], stdin=tar.stdout)
    tar.stdin.write(files)
    tar.stdin.close()
    tar.stdout.close()
    if untar.wait() or tar.wait():
        raise RuntimeError("copying the tree failed")
    env = dict(os.environ, ROCPY_BUILD_AMD="0", ROCPY_STUB_SANITIZE="address,undefined")
    log = os.path.join(work, "build.log")
    with open(log, "w") as f:
        if subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=src, env=env,
                          stdout=f, stderr=subprocess.STDOUT).returncode:
            raise RuntimeError(f"the sanitized build failed; see {log}")
    runtime = subprocess.run(["gcc", "-print-file-name=libasan.so"], check=True, capture_output=True,
                             text=True).stdout.strip()
    return src, runtime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--asan", action="store_true", help="run against the stub built with ASan+UBSan")
    ap.add_argument("-k", dest="pattern", help="only cases whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every case's outcome")
    ap.add_argument("--json", help="write every result here")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "rocpy-crashfind"),
                    help="scratch directory (kernels, the sanitized tree)")
    args = ap.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    cases = [c for c in corpus() if not args.pattern or args.pattern in c.name]
    kernels = build_kernels(args.work)
    preload, path = None, REPO
    if args.asan:
        print("== building the stub with ASan+UBSan (a copy of the tree)", file=sys.stderr)
        path, preload = build_asan(os.path.join(args.work, "asan"))
    start = time.monotonic()
    results = run(cases, kernels, preload=preload, pythonpath=path, verbose=args.verbose)
    took = time.monotonic() - start
    counts = summary(results)
    print(f"{len(results)} cases in {took:.1f} s ({'ASan+UBSan' if args.asan else 'normal'} build): "
          + ", ".join(f"{k} {v}" for k, v in counts.items()))
    for r in results:
        if r.outcome in ("crash", "unexpected"):
            print(f"  {r.outcome}: {r.name}: {r.detail} (expected {r.expect})")
            if r.outcome == "crash" and r.stderr:
                print("    " + "\n    ".join(r.stderr.strip().splitlines()[-12:]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([asdict(r) for r in results], f, indent=1)
    return 1 if counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
