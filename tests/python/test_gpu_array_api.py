"""redjit's NumPy / array-API reductions on a GPU against torch (computed on the CPU in float64 /
int64) and NumPy where importable: every function x dtype x axis form x keepdims on a 3-D array
and a strided view, the result dtypes, dtype=, out=, initial=, empty and 0-d arrays, bool masks,
a side stream, and CuPy arrays.  Each test skips, with the reason, without torch / CuPy or a GPU.
Run: pytest tests/python/test_gpu_array_api.py, or python3 tests/python/test_gpu_array_api.py."""
import math
import zlib

import _runner
from _runner import raises

_runner.setup_path()
import redjit  # noqa: E402

try:
    import pytest
    skip = pytest.skip
except ImportError:
    skip = _runner.skip

FUNCS = ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "logsumexp",
         "all", "any")
AXES = (None, 0, -1, 1, (0, 2), (2, 0, 1), ())


_torch = _runner.cuda_torch  # torch with a GPU, or the test skipped


def _dtypes(torch):
    dts = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int32, torch.int64,
           torch.int8, torch.uint8, torch.int16, torch.bool]  # the last four: no conversion
    for name, signed in (("uint32", torch.int32), ("uint64", torch.int64), ("uint16", torch.int16)):
        dt = getattr(torch, name, None)  # torch >= 2.3: copies and views, little arithmetic
        if dt is None:
            continue
        try:  # what redjit's conversions and this test's references use
            a = torch.arange(4, dtype=torch.int64).to(dt)
            a.to(torch.float64), a.to(torch.int64)
            c = a.cuda()
            c.to(torch.uint64), c.to(torch.float64), c.to(torch.int64), (c.view(signed) != 0)
            c != 0
            torch.empty(2, dtype=dt, device="cuda").to(dt, copy=True)
            dts.append(dt)
        except Exception as e:  # noqa: not in this torch
            print(f"test_gpu_array_api: {name} left out: torch {torch.__version__}: {e}")
    return dts


def _data(torch, shape, dt, op):
    """Values for op: near 1 for prod (no overflow), small integers, a few zeros for all / any."""
    g = torch.Generator().manual_seed(zlib.crc32(f"{shape}{dt}{op}".encode()))
    if dt.is_floating_point:
        if op == "prod":
            x = 1 + (torch.rand(shape, generator=g, dtype=torch.float64) - 0.5) / 16
        else:
            x = torch.rand(shape, generator=g, dtype=torch.float64) * 4 - 2
            if op in ("all", "any"):
                x[torch.rand(shape, generator=g) < 0.02] = 0
    else:
        lo = 0 if dt in (torch.uint8, torch.bool, getattr(torch, "uint16", None),
                         getattr(torch, "uint32", None), getattr(torch, "uint64", None)) else -5
        x = torch.randint(lo, 6, shape, generator=g, dtype=torch.int64)
        if op == "prod":
            x = torch.where(torch.rand(shape, generator=g) < 0.9, 1, x.clamp(-2, 2))
            x = x.clamp(min=lo) if lo == 0 else x
            x[x == 0] = 1
    return x.to(dt).cuda()


def _ref(torch, op, x, axis, keepdims):
    """op on the CPU: float64 (int64 for integer sums, prods, max, min), NumPy's conventions."""
    xc = x.cpu()
    floating = x.dtype.is_floating_point
    xd = xc.to(torch.float64 if floating or op not in ("sum", "prod", "max", "min")
               else torch.int64)
    dims = tuple(range(x.dim())) if axis is None else (axis,) if isinstance(axis, int) else axis
    dims = tuple(d % x.dim() for d in dims) if x.dim() else ()
    if not dims:  # axis=() (or a 0-d array): each element its own reduction
        r = {"all": lambda: xd != 0, "any": lambda: xd != 0,
             "argmax": lambda: torch.zeros(xd.shape, dtype=torch.int64),
             "argmin": lambda: torch.zeros(xd.shape, dtype=torch.int64),
             "var": lambda: torch.zeros(xd.shape, dtype=torch.float64),
             "std": lambda: torch.zeros(xd.shape, dtype=torch.float64)}.get(op, lambda: xd)()
        return r
    if op in ("argmax", "argmin"):
        kept = [d for d in range(x.dim()) if d not in dims]
        p = xd.permute(*kept, *sorted(dims))
        flat = p.reshape(*[x.shape[d] for d in kept], -1)
        r = (flat.argmax if op == "argmax" else flat.argmin)(dim=-1)
        if keepdims:
            for d in sorted(dims):
                r = r.unsqueeze(d)
        return r
    fn = {"sum": lambda: xd.sum(dims, keepdim=keepdims),
          "prod": lambda: _prod(torch, xd, dims, keepdims),
          "max": lambda: xd.amax(dims, keepdim=keepdims),
          "min": lambda: xd.amin(dims, keepdim=keepdims),
          "mean": lambda: xd.mean(dims, keepdim=keepdims),
          "var": lambda: xd.var(dims, correction=0, keepdim=keepdims),
          "std": lambda: xd.std(dims, correction=0, keepdim=keepdims),
          "logsumexp": lambda: xd.logsumexp(dims, keepdim=keepdims),
          "all": lambda: (xd != 0).to(torch.int64).amin(dims, keepdim=keepdims) != 0,
          "any": lambda: (xd != 0).to(torch.int64).amax(dims, keepdim=keepdims) != 0}[op]
    return fn()


def _prod(torch, xd, dims, keepdims):
    for d in sorted(dims, reverse=True):
        xd = xd.prod(d, keepdim=keepdims)
    return xd


_TOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-13}


def _want_dtype(torch, op, dt):
    name = redjit.result_dtype(op, redjit.dtype_name(dt))
    return {"bool": torch.bool, "f64": torch.float64, "i64": torch.int64,
            "u64": getattr(torch, "uint64", None)}.get(name, dt)


def _compare(torch, op, x, axis, keepdims, y, bad, what):
    ref = _ref(torch, op, x, axis, keepdims)
    want = _want_dtype(torch, op, x.dtype)
    if tuple(y.shape) != tuple(ref.shape) or y.dtype != want:
        bad.append((what, "shape/dtype", tuple(y.shape), y.dtype, tuple(ref.shape), want))
        return
    yc = y.cpu()
    if y.dtype == torch.bool or op in ("argmax", "argmin", "max", "min") or \
            not y.dtype.is_floating_point:
        if not torch.equal(yc.to(torch.int64 if y.dtype != torch.bool else torch.bool),
                           ref.to(torch.int64 if y.dtype != torch.bool else torch.bool)) \
                and not (op in ("max", "min") and torch.equal(yc.double(), ref.double())):
            bad.append((what, "not exact"))
        return
    tol = _TOL[str(x.dtype).split(".")[1]] if x.dtype.is_floating_point else 1e-13
    n = max(1, x.numel() // max(1, ref.numel()))
    yd = yc.to(torch.float64)
    ok = torch.allclose(yd, ref, rtol=8 * tol, atol=8 * tol * math.sqrt(n), equal_nan=True)
    if not ok:
        bad.append((what, "error", float((yd - ref).abs().nan_to_num(0).max())))


def test_every_function_dtype_axis_keepdims():
    torch = _torch()
    bad = []
    for dt in _dtypes(torch):
        for op in FUNCS:
            axes = AXES  # argmax / argmin too: redjit's take tuples (row-major over the dims)
            base = _data(torch, (6, 35, 9), dt, op)
            for vname, x in (("contiguous", base), ("strided", base.transpose(0, 2)[:, ::2])):
                for axis in axes:
                    for keepdims in (False, True):
                        what = (str(dt), op, vname, axis, keepdims)
                        try:
                            y = getattr(redjit, op)(x, axis=axis, keepdims=keepdims)
                            torch.cuda.synchronize()
                        except Exception as e:  # noqa: recorded, the test fails below
                            bad.append((what, repr(e)[:300]))
                            continue
                        _compare(torch, op, x, axis, keepdims, y, bad, what)
    assert not bad, f"{len(bad)} failures: {bad[:12]}"


def test_empty_and_0d():
    torch = _torch()
    f32, bad = torch.float32, []
    for op in FUNCS:
        fn = getattr(redjit, op)
        x0 = torch.tensor(-1.5, device="cuda")
        y = fn(x0)
        torch.cuda.synchronize()
        _compare(torch, op, x0, None, False, y, bad, (op, "0-d"))
        for shape, axis in (((0,), None), ((4, 0), 1), ((4, 0), None), ((0, 3), 0), ((0, 3), 1),
                            ((2, 0, 3), (1, 2))):
            x = torch.empty(shape, device="cuda", dtype=f32)
            n = math.prod(shape[a] for a in ((axis,) if isinstance(axis, int) else
                                             range(len(shape)) if axis is None else axis))
            kept = tuple(s for i, s in enumerate(shape)
                         if not (axis is None or i == axis or
                                 (isinstance(axis, tuple) and i in axis)))
            if n == 0 and (op in ("argmax", "argmin") or
                           (op in ("max", "min") and math.prod(kept) > 0)):
                e = raises(ValueError, fn, x, axis=axis)
                assert isinstance(e, redjit.InvalidRequest), e
                continue
            for keepdims in (False, True):
                y = fn(x, axis=axis, keepdims=keepdims)
                torch.cuda.synchronize()
                ref = torch.full(kept, {"sum": 0, "prod": 1, "all": 1, "any": 0,
                                        "logsumexp": -math.inf}.get(op, math.nan),
                                 dtype=torch.float64)
                want_shape = tuple(1 if (axis is None or i == axis or
                                         (isinstance(axis, tuple) and i in axis)) else s
                                   for i, s in enumerate(shape)) if keepdims else kept
                if tuple(y.shape) != want_shape or y.dtype != _want_dtype(torch, op, f32):
                    bad.append((op, shape, axis, keepdims, tuple(y.shape), y.dtype))
                elif y.numel() and not torch.allclose(y.cpu().double().reshape(kept), ref,
                                                      equal_nan=True):
                    bad.append((op, shape, axis, keepdims, y.cpu()))
    # redjit.reduce of a zero-size array: the same results, no kernel
    e = torch.empty((4, 0), device="cuda")
    assert torch.equal(redjit.reduce(e, "sum", 1), torch.zeros(4, device="cuda"))
    assert torch.isnan(redjit.reduce(e, "mean", 1)).all()
    assert raises(ValueError, redjit.reduce, e, "max", 1)
    # NumPy gives the same (when importable)
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        x = torch.empty((4, 0), device="cuda")
        assert np.allclose(redjit.sum(x, axis=1).cpu().numpy(), np.sum(np.empty((4, 0)), axis=1))
        assert redjit.all(x, axis=1).cpu().numpy().tolist() == \
            np.all(np.empty((4, 0)), axis=1).tolist()
    assert not bad, bad[:10]


def test_dtype_out_initial_masks_stream():
    torch = _torch()
    x = _data(torch, (64, 1000), torch.float16, "sum")
    for d in ("float32", torch.float32, "f32"):
        y = redjit.sum(x, axis=1, dtype=d)  # f32 sums of f16, NumPy's dtype=
        torch.cuda.synchronize()
        assert y.dtype == torch.float32
        assert torch.allclose(y.double(), x.double().sum(1), rtol=1e-5, atol=1e-3)
    xi = _data(torch, (64, 1000), torch.int32, "sum") * 1_000_000  # past 2^31: int64 needed
    y = redjit.sum(xi, axis=1)
    torch.cuda.synchronize()
    assert y.dtype == torch.int64 and torch.equal(y, xi.to(torch.int64).sum(1))
    y = redjit.mean(xi, axis=0)
    torch.cuda.synchronize()
    assert y.dtype == torch.float64 and torch.allclose(y, xi.double().mean(0))
    xf = _data(torch, (64, 1000), torch.float32, "sum")
    out = torch.empty(64, 1, device="cuda")
    assert redjit.max(xf, axis=1, keepdims=True, out=out) is out
    s = redjit.sum(xf, axis=1, initial=10.0)
    m = redjit.max(xf, axis=1, initial=1.5)
    torch.cuda.synchronize()
    assert torch.equal(out[:, 0], xf.amax(1))
    assert torch.allclose(s, xf.sum(1) + 10, rtol=1e-5, atol=1e-3)
    assert torch.equal(m, xf.amax(1).clamp(min=1.5))
    mask = xf > 0.5
    a, o = redjit.all(mask, axis=1), redjit.any(mask, axis=0)
    c = redjit.sum(mask, axis=1)
    torch.cuda.synchronize()
    assert a.dtype == torch.bool and torch.equal(a, mask.all(1))
    assert torch.equal(o, mask.any(0)) and torch.equal(c, mask.sum(1))
    xn = xf.clone()
    xn[3, 5] = float("nan")
    assert redjit.all(xn, axis=1).all()  # NaN is true, as bool(nan)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        big = torch.randn(4096, 4096, device="cuda")
    side.synchronize()
    for fn in (redjit.sum, redjit.var, redjit.any):
        y = fn(big, axis=0, stream=side)
        side.synchronize()
        ref = {redjit.sum: lambda: big.sum(0), redjit.var: lambda: big.var(0, correction=0),
               redjit.any: lambda: big.ne(0).any(0)}[fn]()
        assert torch.allclose(y.double(), ref.double(), rtol=1e-4, atol=1e-3), fn


def test_cupy_arrays():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            skip("cupy sees no GPU")
    except ImportError as e:
        skip(f"cupy is not importable ({e})")
    x = cupy.random.standard_normal((33, 500, 7), dtype=cupy.float32)
    for op, ref in (("sum", cupy.sum), ("max", cupy.max), ("mean", cupy.mean),
                    ("var", cupy.var), ("all", cupy.all), ("any", cupy.any)):
        for axis in (None, 1, (0, 2)):  # axis=(): the torch test (CuPy's own varies)
            for keepdims in (False, True):
                y = getattr(redjit, op)(x, axis=axis, keepdims=keepdims)
                r = ref(x, axis=axis, keepdims=keepdims)
                assert y.shape == r.shape and y.dtype == r.dtype, (op, axis, y.shape, r.shape)
                same = cupy.array_equal(y, r) if r.dtype == cupy.bool_ else \
                    cupy.allclose(y, r, rtol=1e-4, atol=1e-3)
                assert same, (op, axis, keepdims)
    xi = cupy.arange(1000, dtype=cupy.int32).reshape(10, 100)
    assert redjit.sum(xi, axis=1).dtype == cupy.sum(xi, axis=1).dtype  # int64, NumPy's
    e = cupy.empty((5, 0), dtype=cupy.float32)
    assert cupy.isnan(redjit.mean(e, axis=1)).all() and (redjit.prod(e, axis=1) == 1).all()


if __name__ == "__main__":
    _runner.main(globals())
