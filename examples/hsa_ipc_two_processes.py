"""GPU memory and a signal shared between two processes through the HSA runtime.

    python examples/hsa_ipc_two_processes.py

Runs on a real AMD GPU and on rocpy's stub runtime alike (``ROCPY_BACKEND=stub``).

The parent allocates device memory and an IPC signal, exports both
(hsa_amd_ipc_memory_create, hsa_amd_ipc_signal_create) and starts a child
with ``multiprocessing`` (spawn: a fresh interpreter, its own runtime).  The
child attaches both, reads the parent's data, writes its answer into the
same memory and signals back; the parent checks it.  Then the parent frees
its memory first: the child's mapping stays valid until it detaches, the
handle attaches while any process still has the memory, and is refused
once nobody has it (hsa_ext_amd.h's rule for hsa_amd_ipc_memory_create).
"""
from __future__ import annotations

import multiprocessing as mp
import sys

import numpy as np

from rocpy import HsaError, hsa

N = 1024            # uint32 words shared
READY, ANSWERED = 1, 2


def host_copy(dst, src, nbytes: int) -> None:
    """hsa.copy (hsa_memory_copy) with numpy arrays allowed at either end."""
    def end(x):
        return hsa.ffi.from_buffer(x) if isinstance(x, np.ndarray) else x
    hsa.copy(end(dst), end(src), nbytes)


def child(mem_handle: hsa.IpcHandle, sig_handle: hsa.IpcHandle, conn) -> None:
    with hsa.Runtime():
        with hsa.IpcMemory.attach(mem_handle) as mem, hsa.Signal.attach(sig_handle) as sig:
            sig.wait("eq", READY, timeout=60, raise_on_timeout=True)
            data = np.zeros(N, np.uint32)
            host_copy(data, mem, mem.size)
            ok = bool((data == np.arange(N, dtype=np.uint32)).all())
            host_copy(mem, data * 2 + 1, mem.size)           # the answer, in the parent's memory
            sig.store(ANSWERED)
            conn.send(("read", ok))
            # the parent frees its memory now; this mapping stays valid
            assert conn.recv() == "freed"
            host_copy(data, mem, mem.size)
            conn.send(("after free", bool((data == np.arange(N, dtype=np.uint32) * 2 + 1).all())))
            # the handle stays valid while any process still has the memory
            conn.send(("attach while held", attach_status(mem_handle)))
        # and is refused once nobody has it
        conn.send(("attach after the last detach", attach_status(mem_handle)))


def attach_status(handle: hsa.IpcHandle) -> str:
    try:
        hsa.IpcMemory.attach(handle).close()
        return "accepted"
    except HsaError as exc:
        return exc.name


def main() -> int:
    ctx = mp.get_context("spawn")
    with hsa.Runtime() as rt:
        gpu = rt.gpu_agents[0]
        pool = gpu.pools(segment="global", fine_grained=False)[0]
        buf = pool.allocate(N * 4)
        sig = hsa.Signal(0, ipc=True)
        host_copy(buf, np.arange(N, dtype=np.uint32), N * 4)
        mem_handle, sig_handle = hsa.ipc_export(buf), sig.ipc_handle()
        parent_end, child_end = ctx.Pipe()
        proc = ctx.Process(target=child, args=(mem_handle, sig_handle, child_end))
        proc.start()
        sig.store(READY)
        sig.wait("eq", ANSWERED, timeout=60, raise_on_timeout=True)
        answer = np.zeros(N, np.uint32)
        host_copy(answer, buf, N * 4)
        _, child_read = parent_end.recv()
        print(f"child read the parent's {N} words: {'ok' if child_read else 'WRONG'}")
        answered = bool((answer == np.arange(N, dtype=np.uint32) * 2 + 1).all())
        print(f"parent read the child's answer: {'ok' if answered else 'WRONG'}")
        buf.close()                 # the exporter frees first
        sig.close()
        parent_end.send("freed")
        _, kept = parent_end.recv()
        print(f"child's mapping after the parent freed: {'ok' if kept else 'WRONG'}")
        _, held = parent_end.recv()
        print(f"attach while the child holds it: {held}")
        _, refused = parent_end.recv()
        print(f"attach after the last detach: {refused}")
        proc.join(60)
        print(f"child exit code {proc.exitcode}")
        good = (child_read and answered and kept and held == "accepted"
                and refused == "HSA_STATUS_ERROR_INVALID_ARGUMENT" and proc.exitcode == 0)
    print("ipc between two processes:", "ok" if good else "FAILED")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
