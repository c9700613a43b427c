"""Fused maps (docs/TENSOR.md "Fused maps"): reduce of a map of x and other arrays of the same
logical shape (broadcast as NumPy broadcasts: a size-1 or missing dim has stride 0), with an
epilogue; redjit.dot and redjit.norm on top.  One launch of rj_reduce_n; the parsed request is
kept per layout, the kernel found by rj_reduce's cache."""
import ctypes

from . import _arrays
from ._arrays import describe, kept_shape, normalize_axes, tensor_request
from ._errors import RedjitError
from ._lib import dumps

FUSED_OPS = ("dot", "sumsq", "norm", "amax", "mse", "l1", "count_nonzero", "masked_sum",
             "masked_mean")
MAPS = ("abs", "square", "mul", "sub_square", "abs_sub", "where", "nonzero")
EPILOGUES = ("sqrt", "scale", "log")


def _einval(msg):
    return RedjitError("RJ_EINVAL", msg)


def _row_major(shape):
    st, m = [], 1
    for n in reversed(shape):
        st.append(m)
        m *= n
    return tuple(reversed(st))


def _other_strides(a, b, i):
    """Other array b's element strides over x's (a's) shape, broadcasting; None where they
    equal x's (the request omits them)."""
    what = f"others[{i}]"
    if b.device != a.device:
        raise _einval(f"{what}: on device {b.device}, x on {a.device}")
    n, m = len(a.shape), len(b.shape)
    if m > n:
        raise _einval(f"{what}: {m} dims, x has {n}")
    bst = b.strides if b.strides is not None else _row_major(b.shape)
    out = []
    for d in range(n):
        k = d - (n - m)
        if k < 0 or (b.shape[k] == 1 and a.shape[d] != 1):
            out.append(0)
        elif b.shape[k] != a.shape[d]:
            raise _einval(f"{what}: shape {b.shape} does not broadcast to x's {a.shape}")
        else:
            out.append(int(bst[k]))
    ast = a.strides if a.strides is not None else _row_major(a.shape)
    same = all(s == t or a.shape[d] == 1 for d, (s, t) in enumerate(zip(out, ast)))
    return None if same else out


def fused_reduce(c, x, op, axis, others, map, epilogue, scale, p, out, nan, stream, acc_dtype,
                 stream_of, empty, check_out):
    a = describe(x)
    if axis.__class__ is list:
        axis = tuple(axis)
    axes = normalize_axes(axis, len(a.shape))
    kept = kept_shape(a.shape, axes)
    bs = [describe(y, f"others[{i}]") for i, y in enumerate(others)]
    rq = tensor_request(a.shape, a.strides, axes, a.dtype, op, nan, acc_dtype=acc_dtype)
    if bs:
        rq["others"] = []
        for i, b in enumerate(bs):
            o = {"dtype": b.dtype}
            st = _other_strides(a, b, i)
            if st is not None:
                o["strides"] = st
            rq["others"].append(o)
    for k, v in (("map", map), ("epilogue", epilogue), ("scale", scale), ("p", p)):
        if v is not None:
            rq[k] = v
    if len(a.shape) == 0:
        raise _einval("x: a 0-d array (give a 1-element array)")
    rkey = dumps(rq, sort_keys=True)
    req = c.requests.get(rkey)
    if req is None:
        req = c.requests[rkey] = c.parse(rq)
    if out is None:
        out = empty(a, kept, a.dtype)
    o = describe(out, "out")
    check_out(o, a, kept, a.dtype)
    ptrs = (ctypes.c_uint64 * max(1, len(bs)))(*[b.ptr for b in bs])
    s = c.L.rj_reduce_n(c.ptr, req, c.options(a.device), a.ptr, ptrs, len(bs), o.ptr, 0,
                        stream_of(stream, a))
    if s:
        raise c.fail(s)
    return out
