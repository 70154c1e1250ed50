"""hsa.Queue's scheduling controls and packets beyond kernel dispatch: CU masks,
priorities, the scratch size asked, agent-dispatch packets, chained barriers."""
from __future__ import annotations

import threading

import pytest

from rocpy import hsa
from rocpy.errors import ClosedError, HsaError, HsaOutOfMemoryError


# ---- CU masks ---------------------------------------------------------------------------

def test_cu_mask_defaults_to_every_cu_and_reads_back(gpu):
    n = gpu.compute_units
    with gpu.create_queue() as q:
        assert q.cu_mask == frozenset(range(n))
        q.cu_mask = range(0, 8)
        assert q.cu_mask == frozenset(range(8))
        q.cu_mask = {n - 1, 3}
        assert q.cu_mask == {3, n - 1}
        q.cu_mask = None                          # every CU again (count 0 in ROCr)
        assert q.cu_mask == frozenset(range(n))


def test_cu_mask_as_creation_option(gpu):
    with gpu.create_queue(cu_mask=[0, 1, 2, 3]) as q:
        assert q.cu_mask == {0, 1, 2, 3}


def test_cu_mask_refuses_what_rocr_would_silently_change(gpu):
    n = gpu.compute_units
    with gpu.create_queue() as q:
        with pytest.raises(ValueError, match=f"cu_mask names CU {n}; the agent has {n} CUs"):
            q.cu_mask = [0, n]
        with pytest.raises(ValueError, match="cu_mask enables no CU"):
            q.cu_mask = []
        with pytest.raises(ValueError, match="names CU -1"):
            q.cu_mask = [-1]
        with pytest.raises(TypeError, match="cu_mask must be an iterable"):
            q.cu_mask = 0xFF
        with pytest.raises(TypeError):
            q.cu_mask = ["0"]
        assert q.cu_mask == frozenset(range(n))   # nothing was applied
    with pytest.raises(ValueError, match="cu_mask enables no CU"):
        gpu.create_queue(cu_mask=())


def test_cu_mask_of_a_closed_queue(gpu):
    q = gpu.create_queue()
    q.close()
    with pytest.raises(ClosedError):
        q.cu_mask = [0]
    with pytest.raises(ClosedError):
        q.cu_mask  # noqa: B018


def test_cu_mask_wgp_pairs_on_gfx10(run_python, stub_only):
    """ROCr 5.3+ on gfx10+: a mask enabling one CU of a WGP pair is refused."""
    code = """
        from rocpy import hsa
        from rocpy.errors import HsaInvalidValueError
        with hsa.Runtime() as rt:
            gpu = rt.gpu_agents[0]
            with gpu.create_queue() as q:
                q.cu_mask = [0, 1, 6, 7]
                print("PAIRS", sorted(q.cu_mask))
                try:
                    q.cu_mask = [0, 1, 2]
                except HsaInvalidValueError as e:
                    print("REFUSED", e.name, e.call)
                print("KEPT", sorted(q.cu_mask))
    """
    proc = run_python(code, env={"ROCPY_STUB_ARCH": "gfx1030", "ROCPY_STUB_ROCM": "6.2"})
    assert proc.returncode == 0, proc.stderr
    assert "PAIRS [0, 1, 6, 7]" in proc.stdout
    assert "REFUSED HSA_STATUS_ERROR_INVALID_ARGUMENT hsa_amd_queue_cu_set_mask" in proc.stdout
    assert "KEPT [0, 1, 6, 7]" in proc.stdout
    # ROCm 5.2 had no pair rule; gfx9 never pairs
    for env in ({"ROCPY_STUB_ARCH": "gfx1030", "ROCPY_STUB_ROCM": "5.2"},
                {"ROCPY_STUB_ARCH": "gfx90a", "ROCPY_STUB_ROCM": "6.2"}):
        proc = run_python(code, env=env)
        assert proc.returncode == 0, proc.stderr
        assert "KEPT [0, 1, 2]" in proc.stdout, env


# ---- priority -----------------------------------------------------------------------------

def test_priority_property_and_option(gpu):
    with gpu.create_queue() as q:
        assert q.priority == "normal"
        q.priority = "high"
        assert q.priority == "high"
        q.priority = "low"
        assert q.priority == "low"
        with pytest.raises(ValueError, match="priority must be one of"):
            q.priority = "urgent"
        assert q.priority == "low"
    with gpu.create_queue(priority="high") as q:
        assert q.priority == "high"
    with pytest.raises(ValueError, match="priority must be one of"):
        gpu.create_queue(priority=2)
    q = gpu.create_queue()
    q.close()
    with pytest.raises(ClosedError):
        q.priority = "high"


def test_priority_of_a_failed_queue_is_refused(gpu, empty, stub_only):
    """ROCr AqlQueue::SetPriority: a queue an error suspended is HSA_STATUS_ERROR_INVALID_QUEUE."""
    from rocpy.hsa import lib
    got = threading.Event()
    with gpu.create_queue(on_error=lambda exc: got.set()) as q:
        q.agent_dispatch(1)
        assert got.wait(30)
        with pytest.raises(HsaError) as e:
            q.priority = "high"                  # the queue's own error first
        assert e.value.name == "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT"
        st = lib.hsa_amd_queue_set_priority(q._h, lib.HSA_AMD_QUEUE_PRIORITY_HIGH)
        assert st == lib.HSA_STATUS_ERROR_INVALID_QUEUE


# ---- scratch ------------------------------------------------------------------------------

def test_private_segment_size(gpu):
    with gpu.create_queue() as q:
        assert q.private_segment_size is None
    with gpu.create_queue(private_segment_size=4096) as q:
        assert q.private_segment_size == 4096
    with gpu.create_queue(private_segment_size=262128) as q:   # ROCr's limit
        assert q.private_segment_size == 262128
    with pytest.raises(HsaOutOfMemoryError) as e:
        gpu.create_queue(private_segment_size=262129)
    assert e.value.name == "HSA_STATUS_ERROR_OUT_OF_RESOURCES" and e.value.call == "hsa_queue_create"
    with pytest.raises(ValueError, match="private_segment_size"):
        gpu.create_queue(private_segment_size=-1)


# ---- agent dispatch ------------------------------------------------------------------------

def test_agent_dispatch_on_a_gpu_queue_fails_the_queue(gpu, stub_only, wait_for):
    """The command processor serves no agent dispatch: INVALID_PACKET_FORMAT, the queue stops."""
    seen = []
    got = threading.Event()
    done = hsa.Signal(1)
    with gpu.create_queue(on_error=lambda exc: (seen.append(exc), got.set())) as q:
        q.agent_dispatch(0x8000, (1, 2, 3, 4), return_address=0x1000, completion_signal=done)
        assert got.wait(30)
        assert seen[0].name == "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT"
        wait_for(lambda: q.error is not None)
        with pytest.raises(HsaError) as e:
            q.barrier_and([])
        assert e.value.name == "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT"
    assert done.load() == 1                        # never completed
    done.close()


def test_agent_dispatch_packet_layout(gpu):
    """The packet as hsa_agent_dispatch_packet_t lays it out, read back from the ring."""
    from rocpy.hsa import ffi
    gate = hsa.Signal(1)
    with gpu.create_queue() as q:
        q.barrier_and([gate])                      # holds the next packet in the ring
        index = q.write_index
        q.agent_dispatch(7, (11, 22), return_address=0xABC0, barrier=False, fences="none")
        ring = ffi.cast("hsa_agent_dispatch_packet_t *", q.base_address)
        p = ring[index % q.size]
        assert p.type == 7 and p.arg[0] == 11 and p.arg[1] == 22 and p.arg[2] == 0
        assert int(ffi.cast("uintptr_t", p.return_address)) == 0xABC0
        assert p.header & 0xFF == hsa.lib.HSA_PACKET_TYPE_AGENT_DISPATCH
        assert not (p.header >> hsa.lib.HSA_PACKET_HEADER_BARRIER) & 1
        q.close()                                  # the packet never runs
    gate.close()


def test_agent_dispatch_arguments(gpu):
    with gpu.create_queue() as q:
        with pytest.raises(ValueError, match="at most 4 arguments"):
            q.agent_dispatch(1, (1, 2, 3, 4, 5))
        with pytest.raises(ValueError, match="type"):
            q.agent_dispatch(1 << 16)
        with pytest.raises(TypeError, match=r"args\[1\]"):
            q.agent_dispatch(1, (1, "x"))
        with pytest.raises(ValueError, match="return_address"):
            q.agent_dispatch(1, return_address=-1)
        with pytest.raises(TypeError, match="completion_signal must be an hsa.Signal"):
            q.agent_dispatch(1, completion_signal=3)
        assert q.write_index == 0                  # nothing was submitted
    q.close()
    with pytest.raises(ClosedError):
        q.agent_dispatch(1)


# ---- chained barriers ---------------------------------------------------------------------

@pytest.mark.parametrize("count", [6, 10, 13])
def test_barrier_and_chains_more_than_five(q_factory, empty, count):
    q = q_factory()
    deps = [hsa.Signal(1) for _ in range(count)]
    done, after = hsa.Signal(1), hsa.Signal(1)
    start = q.write_index
    q.barrier_and(deps, completion_signal=done)
    assert q.write_index - start == (count + 4) // 5   # ROCclr: one packet per 5 signals
    q.dispatch(empty, 64, 64, completion_signal=after)
    for i, s in enumerate(deps):                   # any order; done only after the last
        assert done.wait("eq", 0, timeout=0.02) == 1, i
        s.store(0)
    assert done.wait("eq", 0, timeout=30) == 0
    assert after.wait("eq", 0, timeout=30) == 0
    for s in (*deps, done, after):
        s.close()


def test_barrier_chain_in_reverse_order(q_factory):
    """The last dependency first: the chain's first packets still hold the completion back."""
    q = q_factory()
    deps = [hsa.Signal(1) for _ in range(7)]
    done = hsa.Signal(1)
    q.barrier_and([None, *deps], completion_signal=done)
    for s in reversed(deps[1:]):
        s.store(0)
    assert done.wait("eq", 0, timeout=0.05) == 1
    deps[0].store(0)
    assert done.wait("eq", 0, timeout=30) == 0
    for s in (*deps, done):
        s.close()


def test_barrier_chain_refuses_a_closed_signal_before_submitting(q_factory):
    q = q_factory()
    deps = [hsa.Signal(0) for _ in range(8)]
    deps[6].close()
    with pytest.raises(ClosedError):
        q.barrier_and(deps)
    assert q.write_index == 0
    for s in deps:
        s.close()


def test_cu_mask_past_256_cus(run_python, stub_only):
    """MI300X has 304 CUs: the mask has 10 dwords (the stub kept 8 before)."""
    code = """
        from rocpy import hsa
        with hsa.Runtime() as rt:
            gpu = rt.gpu_agents[0]
            with gpu.create_queue() as q:
                print("ALL", gpu.compute_units, q.cu_mask == frozenset(range(gpu.compute_units)))
                q.cu_mask = [300, 303]
                print("HIGH", sorted(q.cu_mask))
    """
    proc = run_python(code, env={"ROCPY_STUB_ARCH": "gfx942"})
    assert proc.returncode == 0, proc.stderr
    assert "ALL 304 True" in proc.stdout and "HIGH [300, 303]" in proc.stdout


def test_hsa_cu_mask_reduces_and_warns(run_python, stub_only):
    """ROCr's HSA_CU_MASK (Flag::parse_masks): every queue of GPU 0 starts with those CUs;
    asking for others gives CU_MASK_REDUCED, a CUMaskReducedWarning, the mask as applied."""
    code = """
        import warnings
        from rocpy import hsa
        with hsa.Runtime() as rt:
            gpu = rt.gpu_agents[0]
            with gpu.create_queue() as q:
                print("START", sorted(q.cu_mask))
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    q.cu_mask = range(0, 32)
                    q.cu_mask = [2, 3]                  # inside the global mask: no warning
                    q.cu_mask = None                    # every CU: reduced again
                print("WARNED", [type(x.message).__name__ for x in w])
                print("NOW", sorted(q.cu_mask))
    """
    proc = run_python(code, env={"HSA_CU_MASK": "0:0-7, 16-19 ; 1:0x3", "ROCPY_STUB_ARCH": "gfx90a"})
    assert proc.returncode == 0, proc.stderr
    want = list(range(8)) + [16, 17, 18, 19]
    assert f"START {want}" in proc.stdout
    assert "WARNED ['CUMaskReducedWarning', 'CUMaskReducedWarning']" in proc.stdout
    assert f"NOW {want}" in proc.stdout
    # a malformed setting is ignored, as ROCr does
    proc = run_python(code, env={"HSA_CU_MASK": "0:7-3", "ROCPY_STUB_ARCH": "gfx90a"})
    assert proc.returncode == 0, proc.stderr
    assert f"START {list(range(104))}" in proc.stdout and "WARNED []" in proc.stdout
