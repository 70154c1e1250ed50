"""The kernel corpus: each case compiles a source of kernels/ with rocpy.hip.Program,
launches it on any backend (the stub runs the CPU build, a GPU the real code), and
checks the result against numpy.  Shared by test_corpus.py, the benchmark
(benchmarks/cpukern_bench.py) and the H200 run (tests/cpukern/device_run.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "kernels")


def source(name: str) -> str:
    with open(os.path.join(KERNELS, name + ".hip")) as f:
        return f.read()


def find_nvcc() -> str | None:
    cuda = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc")
    return shutil.which("nvcc") or (cuda if os.path.exists(cuda) else None)


def compile_module(dev, name: str):
    """``(module, compiler)`` for kernels/<name>.hip: rocpy.hip.Program, or, on an nvidia
    backend without hipRTC, ``nvcc -cubin`` for the device and Module.load."""
    import rocpy
    from rocpy import hip
    prog = hip.Program(source(name), name=name + ".hip")
    try:
        return prog.compile(dev), prog.compiler
    except rocpy.NotSupportedError:
        if rocpy.backend().name != "nvidia" or find_nvcc() is None:
            raise
    major, minor = dev.compute_capability
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, name + ".cu"), os.path.join(tmp, name + ".cubin")
        with open(src, "w") as f:
            f.write(source(name))
        subprocess.run([find_nvcc(), "-cubin", f"-arch=sm_{major}{minor}", "-O2", "-x", "cu", src,
                        "-o", out], check=True, capture_output=True, text=True)
        return hip.Module.load(out, dev), "nvcc"


@dataclass
class Case:
    """``run(dev, module, scale)`` launches and returns (got, expected, work_items)."""
    name: str
    file: str
    run: Callable[[Any, Any, int], tuple[Any, Any, int]]
    rtol: float = 0.0
    atol: float = 0.0


def _dev(dev, a: np.ndarray):
    b = dev.context.alloc(max(a.nbytes, 1))
    b.copy_from(np.ascontiguousarray(a))
    return b


def _host(buf, like: np.ndarray) -> np.ndarray:
    out = np.empty_like(like)
    buf.copy_to(out)
    return out


def _close(*bufs) -> None:
    for b in bufs:
        b.close()


def _blocks(n: int, b: int) -> int:
    return (n + b - 1) // b


RNG = np.random.default_rng(26)


def vadd(dev, mod, scale):
    n = 1000003 * scale // 4 + 3
    a, b = RNG.random(n, np.float32), RNG.random(n, np.float32)
    da, db, dc = _dev(dev, a), _dev(dev, b), _dev(dev, np.zeros(n, np.float32))
    mod["vadd"].launch(_blocks(n, 256), 256, (da, db, dc, np.int32(n)))
    got = _host(dc, a)
    _close(da, db, dc)
    return got, a + b, n


def saxpy(dev, mod, scale):
    n = 300001 * scale
    x, y = RNG.random(n, np.float32), RNG.random(n, np.float32)
    dx, dy = _dev(dev, x), _dev(dev, y)
    mod["saxpy"].launch(64, 128, (np.float32(2.5), dx, dy, np.int32(n)))
    got = _host(dy, y)
    _close(dx, dy)
    return got, np.float32(2.5) * x + y, 64 * 128


def dscale(dev, mod, scale):
    n = 100000 * scale + 17
    x = RNG.random(n) * 10
    dx = _dev(dev, x)
    mod["dscale"].launch(_blocks(n, 256), 256, (dx, np.int8(ord("-")), np.float64(3.0), np.int64(n)))
    got = _host(dx, x)
    dx.close()
    return got, -3.0 * np.sqrt(x), n


def reduce_shared(dev, mod, scale):
    n = 256 * 1000 * scale + 100
    x = RNG.random(n, np.float32)
    blocks = _blocks(n, 256)
    dx, dp = _dev(dev, x), _dev(dev, np.zeros(blocks, np.float32))
    mod["reduce_shared"].launch(blocks, 256, (dx, dp, np.int32(n)))
    got = _host(dp, np.zeros(blocks, np.float32))
    _close(dx, dp)
    pad = np.zeros(blocks * 256, np.float64)
    pad[:n] = x
    return got, pad.reshape(blocks, 256).sum(axis=1), n


def reduce_dynamic(dev, mod, scale):
    n = 512 * 300 * scale + 5
    x = RNG.integers(-1000, 100000, n, dtype=np.int32)
    dx, dt = _dev(dev, x), _dev(dev, np.zeros(1, np.uint64))
    mod["reduce_dynamic"].launch(_blocks(n, 512), 512, (dx, dt, np.int32(n)), shared_mem=512 * 8)
    got = _host(dt, np.zeros(1, np.uint64))
    _close(dx, dt)
    return got, np.array([int(x.astype(np.int64).sum()) % (1 << 64)], np.uint64), n


def transpose(dev, mod, scale):
    h, w = 300 * scale, 200 * scale + 7
    a = RNG.random((h, w), np.float32)
    di, do = _dev(dev, a), _dev(dev, np.zeros((w, h), np.float32))
    mod["transpose"].launch((_blocks(w, 32), _blocks(h, 32)), (32, 8), (di, do, np.int32(w), np.int32(h)))
    got = _host(do, np.zeros((w, h), np.float32))
    _close(di, do)
    return got, a.T, _blocks(w, 32) * _blocks(h, 32) * 256


def histogram(dev, mod, scale):
    n = 1 << 20 if scale > 1 else 200003
    data = RNG.integers(0, 256, n, dtype=np.uint8)
    dd, db = _dev(dev, data), _dev(dev, np.zeros(256, np.uint32))
    mod["histogram"].launch(64, 256, (dd, db, np.int32(n)))
    got = _host(db, np.zeros(256, np.uint32))
    _close(dd, db)
    return got, np.bincount(data, minlength=256).astype(np.uint32), 64 * 256


def warp_reduce(dev, mod, scale):
    n = 256 * 500 * scale + 33
    x = RNG.integers(0, 8, n).astype(np.float32)        # exact in float32 whatever the order
    dx, do = _dev(dev, x), _dev(dev, np.zeros(1, np.float32))
    mod["warp_reduce"].launch(_blocks(n, 256), 256, (dx, do, np.int32(n)))
    got = _host(do, np.zeros(1, np.float32))
    _close(dx, do)
    return got, np.array([x.sum(dtype=np.float64)], np.float32), n


def scan(dev, mod, scale):
    n = 512 * 200 * scale + 77
    x = RNG.integers(-50, 50, n, dtype=np.int32)
    dx, do = _dev(dev, x), _dev(dev, np.zeros(n, np.int32))
    mod["scan"].launch(_blocks(n, 512), 512, (dx, do, np.int32(n)))
    got = _host(do, x)
    _close(dx, do)
    pad = np.zeros(_blocks(n, 512) * 512, np.int32)
    pad[:n] = x
    return got, np.cumsum(pad.reshape(-1, 512), axis=1).astype(np.int32).ravel()[:n], n


def stencil(dev, mod, scale):
    n = 128 * 2000 * scale + 11
    x = RNG.random(n, np.float32)
    dx, do = _dev(dev, x), _dev(dev, np.zeros(n, np.float32))
    mod["stencil"].launch(_blocks(n, 128), 128, (dx, do, np.int32(n)))
    got = _host(do, x)
    _close(dx, do)
    weights = np.array([1, 2, 3, 4, 3, 2, 1], np.float64)
    return got, np.convolve(x.astype(np.float64), weights, mode="same"), n


def matmul(dev, mod, scale):
    m, k, n = (1024, 1024, 1024) if scale > 1 else (100, 70, 90)
    a, b = RNG.random((m, k), np.float32), RNG.random((k, n), np.float32)
    da, db, dc = _dev(dev, a), _dev(dev, b), _dev(dev, np.zeros((m, n), np.float32))
    mod["matmul"].launch((_blocks(n, 16), _blocks(m, 16)), (16, 16),
                         (da, db, dc, np.int32(m), np.int32(n), np.int32(k)))
    got = _host(dc, np.zeros((m, n), np.float32))
    _close(da, db, dc)
    return got, a.astype(np.float64) @ b.astype(np.float64), _blocks(n, 16) * _blocks(m, 16) * 256


def templates(dev, mod, scale):
    n = 10000 * scale + 1
    x = (RNG.random(n, np.float32) * 4 - 2).astype(np.float32)
    xi = RNG.integers(-40, 40, n, dtype=np.int32)
    dx, dy, dxi, dyi = _dev(dev, x), _dev(dev, x), _dev(dev, xi), _dev(dev, xi)
    mod["poly_clamp"].launch(_blocks(n, 128), 128, (dx, dy, np.int32(n)))
    mod["square_clamp"].launch(_blocks(n, 128), 128, (dxi, dyi, np.int32(n)))
    got = np.concatenate([_host(dy, x).astype(np.float64), _host(dyi, xi).astype(np.float64)])
    _close(dx, dy, dxi, dyi)
    xf = x.astype(np.float64)
    poly = ((((4 * xf) + 3) * xf + 2) * xf + 1)
    want = np.concatenate([np.clip(poly, -10, 10), np.clip(xi.astype(np.int64) ** 2, 0, 1000)])
    return got, want, 2 * n


def atomics(dev, mod, scale):
    n = 20000 * scale + 3
    x = RNG.integers(-(1 << 20), 1 << 20, n, dtype=np.int32)
    i32 = np.array([0, 0, 1 << 30, -(1 << 30), -1, 0, 0, 0, 0], np.int32)
    bufs = [_dev(dev, x), _dev(dev, i32), _dev(dev, np.zeros(2, np.uint64)),
            _dev(dev, np.zeros(1, np.float32)), _dev(dev, np.zeros(1, np.float64))]
    mod["atomics"].launch(_blocks(n, 256), 256, (*bufs, np.int32(n)))
    r32 = _host(bufs[1], i32)
    r64 = _host(bufs[2], np.zeros(2, np.uint64))
    f32 = _host(bufs[3], np.zeros(1, np.float32))
    f64 = _host(bufs[4], np.zeros(1, np.float64))
    _close(*bufs)
    idx = np.arange(n)
    andv = np.bitwise_and.reduce(x | ~(np.int32(1) << (idx % 31)).astype(np.int32))
    want32 = np.array([x.sum(dtype=np.int64) & 0xffffffff, (-x.sum(dtype=np.int64)) & 0xffffffff,
                       x.min(), x.max(), andv, np.bitwise_or.reduce(x & 0xff),
                       np.bitwise_xor.reduce(x), 7, x.sum(dtype=np.int64) & 0xffffffff],
                      np.int64).astype(np.uint32).view(np.int32)
    got = np.concatenate([r32.astype(np.float64), r64.astype(np.float64), f32.astype(np.float64), f64])
    want = np.concatenate([want32.astype(np.float64),
                           [float(((x & 0xffff).astype(np.uint64) << np.uint64(20)).sum()),
                            float(x.astype(np.int64).astype(np.uint64).max()), 0.5 * n, x.astype(np.float64).sum() * 0.25]])
    return got, want, n


def ballot(dev, mod, scale):
    ws = dev.warp_size
    n = 256 * 40 * scale
    x = RNG.integers(0, 100, n, dtype=np.int32)
    x[: 2 * ws] = 1        # a warp all odd
    x[2 * ws: 3 * ws] = 2  # a warp all even
    warps = n // ws
    dx, dc, da = _dev(dev, x), _dev(dev, np.zeros(warps, np.int32)), _dev(dev, np.zeros(2 * warps, np.int32))
    mod["ballot"].launch(n // 256, 256, (dx, dc, da, np.int32(n)))
    cnt, aa = _host(dc, np.zeros(warps, np.int32)), _host(da, np.zeros(2 * warps, np.int32))
    _close(dx, dc, da)
    odd = (x & 1).reshape(warps, ws)
    want = np.concatenate([odd.sum(axis=1), np.stack([odd.any(axis=1), odd.all(axis=1)], 1).ravel()])
    return np.concatenate([cnt, aa]), want.astype(np.int32), n


def grid3d(dev, mod, scale):
    nx, ny, nz = 37, 19 * scale, 11
    do = _dev(dev, np.zeros(nx * ny * nz, np.uint32))
    mod["grid3d"].launch((_blocks(nx, 8), _blocks(ny, 4), _blocks(nz, 2)), (8, 4, 2),
                         (do, np.int32(nx), np.int32(ny), np.int32(nz)))
    got = _host(do, np.zeros(nx * ny * nz, np.uint32)).reshape(nz, ny, nx)
    do.close()
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    return got, (x + 1000 * y + 1000000 * z).astype(np.uint32), nx * ny * nz


def mathfn(dev, mod, scale):
    n = 50000 * scale
    x = (RNG.random(n, np.float32) * 5 + 0.01).astype(np.float32)
    dx, dy = _dev(dev, x), _dev(dev, x)
    mod["mathfn"].launch(_blocks(n, 256), 256, (dx, dy, np.int32(n)))
    got = _host(dy, x)
    _close(dx, dy)
    v = x.astype(np.float64)
    want = np.exp(-v) + np.sin(v) * np.cos(v) + np.sqrt(v) + np.maximum(v, 0.5) + np.log1p(v) \
        + 1 / np.sqrt(v + 1)
    return got, want, n


CASES = [
    Case("vadd", "vadd", vadd),
    Case("saxpy", "saxpy", saxpy, rtol=1e-6),
    Case("dscale", "dscale", dscale, rtol=1e-15),
    Case("reduce_shared", "reduce_shared", reduce_shared, rtol=1e-5),
    Case("reduce_dynamic", "reduce_dynamic", reduce_dynamic),
    Case("transpose", "transpose", transpose),
    Case("histogram", "histogram", histogram),
    Case("warp_reduce", "warp_reduce", warp_reduce),
    Case("scan", "scan", scan),
    Case("stencil", "stencil", stencil, rtol=1e-5, atol=1e-6),
    Case("matmul", "matmul", matmul, rtol=1e-4, atol=1e-3),
    Case("templates", "templates", templates, rtol=1e-6, atol=1e-6),
    Case("atomics", "atomics", atomics, rtol=1e-6),
    Case("ballot", "ballot", ballot),
    Case("grid3d", "grid3d", grid3d),
    Case("mathfn", "mathfn", mathfn, rtol=2e-6, atol=2e-6),
]


def check(case: Case, got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (case.name, got.shape, want.shape)
    if case.rtol or case.atol:
        np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol, err_msg=case.name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=case.name)
