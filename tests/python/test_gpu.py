"""redjit's Python package on a GPU, against torch's and CuPy's own reductions: every dtype and
op, contiguous and strided views, axes, out given and allocated, streams, CUDA graph capture,
Numba arrays, treduce, and llvmlite / numba in the same process.  Each test skips, with the
reason, without its framework or a GPU.
Run: pytest tests/python/test_gpu.py, or (no pytest) python3 tests/python/test_gpu.py [NAME...]."""
import json
import math
import os
import subprocess
import sys
import time

import _runner
from _runner import REPO, raises

_runner.setup_path()
import redjit  # noqa: E402

try:
    import pytest
    skip = pytest.skip
except ImportError:
    skip = _runner.skip


_torch = _runner.cuda_torch  # torch with a GPU, or the test skipped


def _cupy():
    try:
        import cupy
    except ImportError as e:
        skip(f"cupy is not importable ({e})")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            skip("cupy sees no GPU")
    except cupy.cuda.runtime.CUDARuntimeError as e:
        skip(f"cupy sees no GPU ({e})")
    return cupy


def _views(torch, x):
    """(name, view) pairs: contiguous, transposed, sliced, a permuted 3-D view."""
    yield "contiguous", x
    yield "transposed", x.t()
    yield "sliced", x[1:, ::2]
    yield "permuted3d", x[:, : (x.shape[1] // 6) * 6].reshape(x.shape[0], -1, 6).permute(2, 0, 1)


_AXES = [None, 0, 1, -1, (0, 1)]


def _torch_ref(torch, x, op, axis):
    dim = tuple(range(x.dim())) if axis is None else axis
    xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    if op == "sum":
        r = torch.sum(xf, dim=dim)
    elif op == "max":
        r = torch.amax(xf, dim=dim)
    else:
        r = torch.amin(xf, dim=dim)
    return r


def _close(torch, y, ref, dtype, n):
    if dtype.is_floating_point:
        tol = {torch.float16: 1e-2, torch.bfloat16: 2e-2, torch.float32: 1e-5,
               torch.float64: 1e-12}[dtype]
        return torch.allclose(y.double(), ref.double(), rtol=tol, atol=tol * math.sqrt(n))
    return torch.equal(y.to(torch.int64), ref.to(torch.int64))


def test_torch_dtypes_ops_views_axes():
    torch = _torch()
    torch.manual_seed(0)
    dts = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32,
           torch.int64]
    bad = []
    for dt in dts:
        base = (torch.rand(37, 300, device="cuda") * 2 - 1).to(dt) if dt.is_floating_point \
            else torch.randint(-100, 101, (37, 300), device="cuda", dtype=dt)
        for vname, x in _views(torch, base):
            for op in ("sum", "max", "min"):
                for axis in _AXES + ([(0, 2), 1] if x.dim() == 3 else []):
                    if isinstance(axis, tuple) and max(axis) >= x.dim():
                        continue
                    y = redjit.reduce(x, op, axis)
                    torch.cuda.synchronize()
                    ref = _torch_ref(torch, x, op, axis)
                    n = x.numel() // max(1, ref.numel())
                    if y.shape != ref.shape or y.dtype != x.dtype:
                        bad.append((dt, vname, op, axis, "shape/dtype", y.shape, y.dtype))
                    elif op == "sum" and not _close(torch, y, ref, dt, n):
                        bad.append((dt, vname, op, axis, (y.double() - ref.double()).abs().max()))
                    elif op != "sum" and not torch.equal(y, ref.to(dt)):
                        bad.append((dt, vname, op, axis, "max/min not exact"))
    assert not bad, bad[:10]


def test_torch_invariant():
    """invariant=True: a row's bits alone, in batches of 7 and 300 rows and as a column of the
    transposed batch (tensor_inv_cols) are the same, close to torch's float64 sum."""
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(5)
    for n in (1000, 70001):
        x = torch.rand(300, n, device="cuda", generator=g, dtype=torch.float32) - 0.5
        full = redjit.reduce(x, "sum", 1, invariant=True)
        seven = redjit.reduce(x[290:297].clone(), "sum", 1, invariant=True)
        one = redjit.reduce(x[293:294].clone(), "sum", 1, invariant=True)
        assert torch.equal(full[290:297], seven) and torch.equal(full[293:294], one)
        cols = redjit.reduce(x.t().contiguous(), "sum", 0, invariant=True)
        assert torch.equal(cols, full)
        ref = x.double().sum(1)
        assert torch.allclose(full.double(), ref, rtol=1e-4, atol=1e-3 * math.sqrt(n))


def test_torch_out_accum_nan():
    torch = _torch()
    x = torch.randn(256, 1000, device="cuda")
    out = torch.empty(256, device="cuda")
    assert redjit.reduce(x, "sum", 1, out=out) is out
    torch.cuda.synchronize()
    assert torch.allclose(out, x.sum(1), rtol=1e-5, atol=1e-4)
    out2 = out.clone()
    redjit.reduce(x, "sum", 1, out=out2, accum=True)
    torch.cuda.synchronize()
    assert torch.allclose(out2, 2 * x.sum(1), rtol=1e-5, atol=1e-3)
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 0, out=out)
    assert "out: shape" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 1,
               out=torch.empty(256, device="cuda", dtype=torch.float64))
    assert "out: dtype" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 1,
               out=torch.empty(512, device="cuda")[::2])
    assert "contiguous" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x.cpu(), "sum", 1)
    assert "not on a CUDA device" in e.message
    s = redjit.reduce(x)  # a full reduction: shape ()
    torch.cuda.synchronize()
    assert s.shape == () and torch.allclose(s, x.sum(), rtol=1e-4, atol=1e-2)
    xn = x.clone()
    xn[3, 7] = float("nan")
    m = redjit.reduce(xn, "max", 1, nan="ignore")
    p = redjit.reduce(xn, "max", 1)
    torch.cuda.synchronize()
    assert torch.equal(m, torch.nan_to_num(xn, nan=-math.inf).amax(1))
    assert torch.isnan(p[3]) and not torch.isnan(p[:3]).any()
    d = redjit.reduce(x, "sum", 1, dynamic=True)
    n0 = redjit.compile_count()
    d2 = redjit.reduce(torch.randn(300, 1000, device="cuda"), "sum", 1, dynamic=True)
    torch.cuda.synchronize()
    assert torch.allclose(d, x.sum(1), rtol=1e-5, atol=1e-4) and d2.shape == (300,)
    assert redjit.compile_count() - n0 <= 1
    z = redjit.reduce(torch.tensor(3.5, device="cuda"))  # 0-d
    torch.cuda.synchronize()
    assert float(z) == 3.5


def test_torch_repeated_layouts():
    """Layouts seen before go straight to their launch: new data at new addresses, every view,
    out given and allocated, each call against torch, with no compile after the first call."""
    torch = _torch()
    torch.manual_seed(1)
    base = torch.randn(64, 300, device="cuda")
    for vname, v in _views(torch, base):
        for op, axis in (("sum", None), ("max", 0), ("sum", -1)):
            redjit.reduce(v, op, axis)  # compiles (a no-op when an earlier test did)
            n0 = redjit.compile_count()
            for i in range(4):
                x = dict(_views(torch, torch.randn_like(base)))[vname]  # new data, new address
                ref = _torch_ref(torch, x, op, axis)
                out = torch.empty(ref.shape, device="cuda")
                got = redjit.reduce(x, op, axis, out=out) if i % 2 else redjit.reduce(x, op, axis)
                torch.cuda.synchronize()
                assert got.shape == ref.shape, (vname, op, axis, got.shape)
                assert torch.allclose(got, ref, rtol=1e-5, atol=1e-3), (vname, op, axis, i)
            assert redjit.compile_count() == n0, (vname, op, axis)


def test_torch_streams():
    torch = _torch()
    x = torch.randn(4096, 4096, device="cuda")
    ref = x.sum(0)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # the current stream: s
        y = redjit.reduce(x, "sum", 0)
    s.synchronize()
    assert torch.allclose(y, ref, rtol=1e-4, atol=1e-3)
    y2 = torch.empty_like(y)
    redjit.reduce(x, "sum", 0, out=y2, stream=s)  # a torch.cuda.Stream
    redjit.reduce(x, "sum", 0, out=y2, stream=s.cuda_stream, accum=True)  # an int handle
    s.synchronize()
    assert torch.allclose(y2, 2 * ref, rtol=1e-4, atol=1e-3)


def test_torch_cuda_graph():
    torch = _torch()
    x = torch.randn(1024, 512, device="cuda")
    y = torch.empty(1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up: compile and load before capture
        for _ in range(3):  # the calls captured below find their layouts remembered
            redjit.reduce(x, "sum", 1, out=y)
            redjit.reduce(x, "max", 0)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        redjit.reduce(x, "sum", 1, out=y)
        m = redjit.reduce(x, "max", 0)  # out allocated inside capture (the graph's pool)
    x.copy_(torch.randn(1024, 512, device="cuda"))
    g.replay()
    torch.cuda.synchronize()
    assert torch.allclose(y, x.sum(1), rtol=1e-5, atol=1e-4)
    assert torch.equal(m, x.amax(0))


def test_cupy_dtypes_ops():
    cupy = _cupy()
    rng = cupy.random.default_rng(0)
    bad = []
    for dt in ("float16", "float32", "float64", "int32", "int64", "uint32", "uint64"):
        if dt.startswith("float"):
            base = (rng.random((33, 260), dtype=cupy.float32 if dt == "float16" else dt)
                    * 2 - 1).astype(dt)
        else:
            base = rng.integers(0, 100, (33, 260)).astype(dt)
        for vname, x in (("contiguous", base), ("transposed", base.T), ("sliced", base[2:, ::3])):
            for op in ("sum", "max", "min"):
                for axis in (None, 0, 1, (0, 1)):
                    y = redjit.reduce(x, op, axis)
                    cupy.cuda.get_current_stream().synchronize()
                    xx = x.astype(cupy.float32) if dt == "float16" else x
                    ref = getattr(cupy, op)(xx, axis=axis)
                    if y.shape != ref.shape or y.dtype != x.dtype:
                        bad.append((dt, vname, op, axis, y.shape, y.dtype))
                    elif op == "sum" and dt.startswith("float"):
                        tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}[dt]
                        if not cupy.allclose(y.astype("float64"), ref.astype("float64"),
                                             rtol=tol, atol=tol * math.sqrt(x.size)):
                            bad.append((dt, vname, op, axis))
                    elif not bool((y == ref.astype(dt)).all()):
                        bad.append((dt, vname, op, axis, "not exact"))
    assert not bad, bad[:10]
    x = cupy.arange(1000, dtype=cupy.float32).reshape(10, 100)
    with cupy.cuda.Stream() as s:  # CuPy's current stream
        y = redjit.reduce(x, "sum", 1)
        s.synchronize()
    assert bool(cupy.allclose(y, x.sum(1)))


def test_numba_array():
    try:
        from numba import cuda
    except ImportError as e:
        skip(f"numba is not importable ({e})")
    if not cuda.is_available():
        skip("numba sees no GPU")
    import numpy as np
    h = np.arange(64 * 50, dtype=np.float32).reshape(64, 50)
    d = cuda.to_device(h)
    y = redjit.reduce(d, "max", 0)
    cuda.synchronize()
    assert np.array_equal(y.copy_to_host(), h.max(0))


def test_compile_ir_launch():
    torch = _torch()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from test_cpu import IR
    import ctypes
    k = redjit.compile_ir(IR, "scale")
    x = torch.arange(1000, device="cuda", dtype=torch.float32)
    torch.cuda.synchronize()
    ms = k.launch([x.data_ptr(), ctypes.c_float(2.0), ctypes.c_int32(1000)], grid=4, block=256)
    assert ms >= 0
    assert torch.equal(x, 2 * torch.arange(1000, device="cuda", dtype=torch.float32))


def test_treduce():
    torch = _torch()
    n = torch.cuda.device_count()
    devs = [i % n for i in range(4)]
    srcs = [torch.randn(256, 64, device=f"cuda:{d}") for d in devs]
    dst = torch.empty(256, 64, device=f"cuda:{devs[1]}")
    for d in range(n):
        torch.cuda.synchronize(d)
    info = redjit.treduce(srcs, dst, root=1)
    ref = sum(s.to(dst.device) for s in srcs)
    assert torch.allclose(dst, ref, rtol=1e-5, atol=1e-5), info
    assert info["path"] in ("peer", "staged", "split", "ring")
    m = redjit.treduce(srcs, dst, root=1, op="max", path="staged")
    assert m["path"] == "staged"
    assert torch.equal(dst, torch.stack([s.to(dst.device) for s in srcs]).amax(0))
    # runtime-size kernels: odd counts, and the second count compiles nothing
    for rows in (255, 1001):
        srcs = [torch.randn(rows, 7, device=f"cuda:{d}") for d in devs]
        dst = torch.empty(rows, 7, device=f"cuda:{devs[1]}")
        for d in range(n):
            torch.cuda.synchronize(d)
        before = redjit.compile_count()
        info = redjit.treduce(srcs, dst, root=1, path="peer", dynamic=True)
        ref = sum(s.to(dst.device) for s in srcs)
        assert torch.allclose(dst, ref, rtol=1e-5, atol=1e-5), info
        if rows == 1001:
            assert redjit.compile_count() == before, info


def test_host_cost():
    """Per-call host cost of a repeated redjit.reduce (printed; bench/python_host_cost.py is the
    fuller table, docs/PYTHON.md)."""
    torch = _torch()
    x = torch.randn(1024, device="cuda")
    y, y2 = torch.empty((), device="cuda"), torch.empty((), device="cuda")
    redjit.reduce(x, out=y)
    torch.cuda.synchronize()
    for label, fn in (("reduce(x, out=y)", lambda: redjit.reduce(x, out=y)),
                      ("reduce(x)", lambda: redjit.reduce(x)),
                      ("torch.sum(x, 0, out=y)", lambda: torch.sum(x, 0, out=y2)),
                      ("torch.sum(x)", lambda: torch.sum(x))):
        best = math.inf
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(2000):
                fn()
            best = min(best, (time.perf_counter() - t) / 2000)
            torch.cuda.synchronize()
        print(f"host cost {label}: {best * 1e6:.1f} us/call")


_LLVMLITE_KERNEL = """
import llvmlite.ir as ir
m = ir.Module(name="k")
m.triple = "nvptx64-nvidia-cuda"
f32 = ir.FloatType()
try:
    p = ir.PointerType(addrspace=1)          # opaque pointers (llvmlite >= 0.44)
except TypeError:
    p = ir.PointerType(f32, addrspace=1)
fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [p]), name="k")
b = ir.IRBuilder(fn.append_basic_block("entry"))
tid = b.call(ir.Function(m, ir.FunctionType(ir.IntType(32), []),
                         name="llvm.nvvm.read.ptx.sreg.tid.x"), [])
q = b.gep(fn.args[0], [tid], source_etype=f32) if hasattr(p, "is_opaque") and p.is_opaque \\
    else b.gep(fn.args[0], [tid])
b.store(ir.Constant(f32, 1.0), q)
b.ret_void()
IR_TEXT = str(m)
"""


def test_llvmlite_numba_same_process():
    """llvmlite and numba (each with its own LLVM) and redjit in one process, in both orders."""
    have = []
    for mod in ("llvmlite", "numba"):
        r = subprocess.run([sys.executable, "-c", f"import {mod}"], capture_output=True)
        if r.returncode == 0:
            have.append(mod)
    if not have:
        skip("neither llvmlite nor numba is importable")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tools", "python") + os.pathsep +
               os.environ.get("PYTHONPATH", ""))
    req = json.dumps(json.load(open(os.path.join(REPO, "examples", "tensor_rows.json"))))
    for mod in have:
        use = ("import llvmlite.binding as llb\nllb.initialize_all_targets() if hasattr(llb, "
               "'initialize_all_targets') else None\n" if mod == "llvmlite" else
               "from numba import cuda, njit\nnjit(lambda a: a + 1)(1)\n")
        check = ("k = redjit.compile(%r, target='sm_90')\nassert '.entry' in k.ptx\n" % req +
                 (_LLVMLITE_KERNEL + "assert '.entry k' in redjit.compile_ir(IR_TEXT, 'k', "
                  "target='sm_90').ptx\n" if "llvmlite" in have else ""))
        for first_redjit in (True, False):
            code = ("import redjit\nredjit.version()\n" + use if first_redjit
                    else use + "import redjit\n") + check + "print('ok')\n"
            r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True)
            assert r.returncode == 0 and r.stdout.strip().endswith("ok"), \
                (mod, first_redjit, r.stdout[-2000:], r.stderr[-3000:])


def test_torch_scalar_ops():
    """prod / and / or / xor / mean against torch (prod: inputs near 1; integer prod compared
    wrapped, as torch's int64 prod of odd values; bitwise ops of int32 / int64)."""
    torch = _torch()
    torch.manual_seed(1)
    bad = []
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        base = (torch.rand(37, 300, device="cuda", dtype=torch.float64) * 0.1 + 0.95).to(dt)
        for vname, x in _views(torch, base):
            for axis in (None, 0, 1, -1):
                xf = x.double()
                dim = tuple(range(x.dim())) if axis is None else axis
                y = redjit.reduce(x, "mean", axis)
                ref = torch.mean(xf, dim=dim)
                tol = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 1e-5}.get(
                    dt, 1e-12)
                if y.dtype != dt or not torch.allclose(y.double(), ref, rtol=tol, atol=0):
                    bad.append((dt, vname, "mean", axis))
                if axis is not None:  # prod over one dim: products stay within about 0.95^300
                    y = redjit.reduce(x, "prod", axis)
                    ref = torch.prod(xf, dim=axis)
                    tol = {torch.float16: 1e-2, torch.bfloat16: 3e-2}.get(dt, 1e-4)
                    if not torch.allclose(y.double(), ref, rtol=tol, atol=0):
                        bad.append((dt, vname, "prod", axis))
    for dt in (torch.int32, torch.int64):
        base = torch.randint(-2**20, 2**20, (37, 300), device="cuda", dtype=dt)
        for vname, x in _views(torch, base):
            for axis in (None, 0, 1):
                xl = x.to(torch.int64)
                dims = range(x.dim()) if axis is None else [axis]
                for op, f in (("and", torch.bitwise_and), ("or", torch.bitwise_or),
                              ("xor", torch.bitwise_xor)):
                    ref = xl
                    for d in sorted(dims, reverse=True):
                        parts = ref.unbind(d)
                        acc = parts[0]
                        for p in parts[1:]:
                            acc = f(acc, p)
                        ref = acc
                    y = redjit.reduce(x, op, axis)
                    if not torch.equal(y.to(torch.int64), ref.to(dt).to(torch.int64)):
                        bad.append((dt, vname, op, axis))
                odd = x | 1
                y = redjit.reduce(odd, "prod", axis)
                ref = torch.prod(odd.to(torch.int64), dim=axis) if axis is not None else \
                    torch.prod(odd.to(torch.int64))
                if not torch.equal(y.to(torch.int64), ref.to(dt).to(torch.int64)):
                    bad.append((dt, vname, "prod", axis))
    torch.cuda.synchronize()
    assert not bad, bad[:10]


def test_torch_acc_f64():
    """acc_dtype="f64": sum / mean of f16, bf16, f32 accumulated in f64 and rounded once,
    against torch's f64 reduction rounded to the dtype (within an ulp of it: the two f64 sums may
    differ in their last bits); a cancellation that an f32 accumulator loses comes out exact."""
    torch = _torch()
    torch.manual_seed(2)
    bad = []
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        eps = torch.finfo(dt).eps
        # in [1/8, 3/8): a full sum of 111000 stays finite in f16
        base = ((torch.rand(37, 3000, device="cuda", dtype=torch.float64) + 0.5) / 4).to(dt)
        for vname, x in _views(torch, base):
            for axis in (None, 0, 1):
                dim = tuple(range(x.dim())) if axis is None else axis
                for op, f in (("sum", torch.sum), ("mean", torch.mean)):
                    y = redjit.reduce(x, op, axis, acc_dtype="f64")
                    ref = f(x.double(), dim=dim)
                    if y.dtype != dt or not torch.allclose(y.double(), ref, rtol=eps, atol=0):
                        err = ((y.double() - ref).abs() / ref.abs()).max().item()
                        bad.append((dt, vname, op, axis, err))
    x = torch.ones(4099, device="cuda", dtype=torch.float32)
    x[0], x[-1] = 2.0**25, -(2.0**25)
    y = redjit.reduce(x, "sum", acc_dtype="f64")
    assert y.item() == 4097.0, y.item()
    assert redjit.reduce(x.view(1, -1), "sum", 1, acc_dtype="f64", dynamic=True).item() == 4097.0
    # one rounding: 1 + 2^-11 + 2^-24 is 1 + 2^-10 in f16 (through f32 to nearest it would tie to 1)
    h = torch.tensor([1.0, 2.0**-11, 2.0**-24], device="cuda", dtype=torch.float16)
    assert redjit.reduce(h, "sum", acc_dtype="f64").item() == 1.0 + 2.0**-10
    torch.cuda.synchronize()
    assert not bad, bad[:10]


def test_torch_state_ops():
    """argmax / argmin (exact, ties), var / std (corrections, offset data), logsumexp (large and
    -inf rows) against torch, on contiguous, transposed and sliced views."""
    torch = _torch()
    torch.manual_seed(1)
    bad = []
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        ties = ((torch.rand(37, 300, device="cuda") * 8).floor() / 4).to(dt)
        noisy = (1e2 if dt == torch.float16 else 1e4) + torch.rand(37, 300, device="cuda",
                                                                      dtype=torch.float64)
        big = (torch.rand(37, 300, device="cuda", dtype=torch.float64) * 2 - 1) * 80
        big[3] = -math.inf
        for vname, x in _views(torch, ties):
            for axis in (0, 1, -1):
                if axis >= x.dim():
                    continue
                for op, f in (("argmax", torch.argmax), ("argmin", torch.argmin)):
                    y = redjit.reduce(x, op, axis)
                    torch.cuda.synchronize()
                    if y.dtype != torch.int64 or not torch.equal(y, f(x, dim=axis)):
                        bad.append((dt, vname, op, axis))
        for name, src in (("noisy", noisy.to(dt)), ("big", big.to(dt))):
            for vname, x in _views(torch, src):
                for axis in (0, 1):
                    xf = x.double()
                    for op, corr in (("var", 1), ("var", 0), ("std", 1), ("logsumexp", None)):
                        if name == "big" and op != "logsumexp":
                            continue
                        y = redjit.reduce(x, op, axis, correction=corr)
                        torch.cuda.synchronize()
                        if op == "logsumexp":
                            ref = torch.logsumexp(xf, dim=axis)
                        else:
                            ref = getattr(torch, op)(xf, dim=axis, correction=corr)
                        tol = {torch.float16: 2e-3, torch.bfloat16: 1e-2, torch.float32: 1e-4,
                               torch.float64: 1e-10}[dt]
                        if name == "noisy" and dt in (torch.float16, torch.float32):
                            tol *= 100  # offset data: the working float's epsilon x the offset
                        ok = torch.allclose(y.double(), ref, rtol=tol, atol=tol, equal_nan=True)
                        if y.dtype != dt or not ok:
                            bad.append((dt, name, vname, op, corr, axis,
                                        (y.double() - ref).abs().max().item()))
    assert not bad, bad[:10]


def test_torch_memo_pins():
    """reduce's memo pins the kernels it launches and drops the pins with the memo; in a context
    of its own under a bound of 2 kernels, with the memo dropped every 8 layouts, released
    kernels are evicted (their modules unloaded in batches) while launches are queued, and every
    result is right."""
    import ctypes
    import threading
    torch = _torch()
    c = redjit._ctx()
    c.drop_memo()
    base = redjit.cache_stats()["kernels_pinned"]
    x = torch.randn(64, 333, device="cuda")
    redjit.reduce(x, "sum", 1)
    assert redjit.cache_stats()["kernels_pinned"] == base + 1 and len(c.pins) == 1
    c.drop_memo()
    assert redjit.cache_stats()["kernels_pinned"] == base and not c.pins
    out = {}

    def work():
        try:
            t = redjit._ctx()
            f = t.L.rj_ctx_set_memory_cache
            f.argtypes, f.restype = [ctypes.c_void_p, ctypes.c_longlong], ctypes.c_int
            assert f(t.ptr, 2) == 0
            xs = [torch.randn(64, 100 + 7 * i, device="cuda") for i in range(48)]
            ys = []
            for i, xi in enumerate(xs):
                if i % 8 == 0:
                    t.drop_memo()
                ys.append(redjit.reduce(xi, "sum", 1))
            torch.cuda.synchronize()
            out["ok"] = all(torch.allclose(y, xi.sum(1), rtol=1e-5, atol=1e-3)
                            for xi, y in zip(xs, ys))
            out["st"], out["pins"] = redjit.cache_stats(), len(set(t.pins))
        except BaseException as e:  # noqa
            out["e"] = e

    th = threading.Thread(target=work)
    th.start()
    th.join()
    if "e" in out:
        raise out["e"]
    st = out["st"]
    assert out["ok"]
    assert st["kernels_pinned"] == out["pins"] > 0, (st, out["pins"])  # the last 8 layouts
    assert st["kernels"] - st["kernels_pinned"] == 2, st  # the cache's own: at its bound
    assert st["memory_evictions"] == st["compiles"] - st["kernels"] > 0, st


def test_torch_small_dtypes():
    """int8 uint8 int16 (uint16) bool and float8 through redjit.reduce (the library's kernels on
    the array as it is: no cast) against torch: sum / prod in int64 (exact), max / min / argmax /
    argmin in the input's dtype (exact), and / or / xor (keep the dtype), mean / var of integers
    in float64; float8 sums and means in float32 against torch's float64 of the same values, and
    the array-API functions on the same inputs; empty axes and axis=() too."""
    torch = _torch()
    torch.manual_seed(1)
    ints = [torch.int8, torch.uint8, torch.int16, torch.bool] + \
        [getattr(torch, n) for n in ("uint16",) if hasattr(torch, n)]
    fp8 = [getattr(torch, n) for n in ("float8_e4m3fn", "float8_e5m2") if hasattr(torch, n)]
    bad = []
    for dt in ints + fp8:
        if dt == torch.bool:
            base = torch.rand(37, 301, device="cuda") < 0.5
        elif dt in fp8:
            base = (torch.rand(37, 301, device="cuda") * 4 - 2).to(dt)
        else:
            lo = 0 if dt in (torch.uint8,) or "uint" in str(dt) else -100
            base = torch.randint(lo, 101, (37, 301), device="cuda", dtype=torch.int32).to(dt)
        wide = base.double() if dt in fp8 else base.long()
        for x, w, vname in ((base, wide, "c"), (base[:, 1::3], wide[:, 1::3], "s"),
                            (base.t(), wide.t(), "t")):
            for axis in (1, 0, None):
                ops = ["sum", "max", "min", "argmax", "argmin", "mean"]
                if dt not in fp8:
                    ops += ["prod", "and", "or", "xor", "var"]
                for op in ops:
                    try:
                        y = redjit.reduce(x, op, axis)
                    except Exception as e:
                        bad.append((dt, vname, op, axis, repr(e)))
                        continue
                    torch.cuda.synchronize()
                    ax = axis if axis is not None else tuple(range(x.dim()))
                    if op in ("sum", "prod", "mean", "var"):
                        if op == "prod":
                            ref = w.prod(dim=ax) if isinstance(ax, int) else w.flatten().prod()
                        else:
                            f = {"sum": torch.sum, "mean": torch.mean, "var": torch.var}[op]
                            ref = f(w.double() if op != "sum" else w, dim=ax)
                        if dt in fp8 or op in ("mean", "var"):  # f32 roundoff of sum |x|
                            mag = float(w.double().abs().sum()) + 1
                            ok = float((y.double() - ref.double()).abs().max()) <= 1e-5 * mag
                        else:
                            ok = torch.equal(y.long() if y.dtype != torch.int64 else y,
                                             ref.long())
                    elif op in ("max", "min"):
                        ref = (torch.amax if op == "max" else torch.amin)(w, dim=ax)
                        ok = y.dtype == x.dtype and torch.equal(
                            y.double() if dt in fp8 else y.long(), ref)
                    elif op in ("argmax", "argmin"):
                        ww = w if axis is not None else w.flatten()
                        ref = (torch.argmax if op == "argmax" else torch.argmin)(
                            ww, dim=axis if axis is not None else 0)
                        ok = y.dtype == torch.int64 and torch.equal(y, ref)
                    else:
                        f = {"and": torch.bitwise_and, "or": torch.bitwise_or,
                             "xor": torch.bitwise_xor}[op]
                        v = w.movedim(axis, -1) if axis is not None else w.flatten()
                        ref = v[..., 0]  # in int64: sign- / zero-extended as the kernel's
                        for i in range(1, v.shape[-1]):
                            ref = f(ref, v[..., i])
                        ok = y.dtype == x.dtype and torch.equal(y.long(), ref)
                    if not ok:
                        bad.append((dt, vname, op, axis))
    # the array-API functions and NumPy's result dtypes; axis=() and empty arrays
    x = torch.randint(-100, 101, (33, 17), device="cuda", dtype=torch.int8)
    s = redjit.sum(x, axis=1)
    if s.dtype != torch.int64 or not torch.equal(s, x.long().sum(1)):
        bad.append(("array-api sum int8",))
    if not torch.equal(redjit.max(x, axis=0), x.amax(0)):
        bad.append(("array-api max int8",))
    if not torch.equal(redjit.sum(x, axis=()), x.long()):
        bad.append(("array-api sum axis=()",))
    e = torch.zeros((4, 0), device="cuda", dtype=torch.int16)
    y = redjit.reduce(e, "sum", 1)
    torch.cuda.synchronize()
    if y.dtype != torch.int64 or not torch.equal(y, torch.zeros(4, dtype=torch.int64,
                                                                  device="cuda")):
        bad.append(("empty sum", y))
    assert not bad, bad[:10]


if __name__ == "__main__":
    _runner.main(globals())
