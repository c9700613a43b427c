"""Fused maps (docs/TENSOR.md "Fused maps"): reduce of a map of x and other arrays of the same
logical shape (broadcast as NumPy broadcasts: a size-1 or missing dim has stride 0), with an
epilogue; redjit.dot and redjit.norm on top.  One launch per call: a layout seen before (the
arrays' shapes, strides, dtypes and devices, and the arguments) goes from reduce's memo straight
to rj_tensor_launch_n of its pinned kernel, as a plain reduce does; every check is made when the
layout is first seen.  A map or epilogue as LLVM IR is kept by its text.  Calls the memo does not
keep (a Custom op) launch rj_reduce_n of their parsed request, kept per request text."""
import ctypes
import sys

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


_NOKEY = object()


def _code_part(v):
    """A map or epilogue as a key part: None, its name, or a caller's LLVM IR ({"ir": text,
    "function": name}: the sorted items, texts hashed once by Python); _NOKEY for anything else
    (refused by the checks of an unkept call)."""
    if v is None or v.__class__ is str:
        return v
    if v.__class__ is dict and all(k.__class__ is str and t.__class__ is str
                                   for k, t in v.items()):
        return ("ir",) + tuple(sorted(v.items()))
    return _NOKEY


def torch_key(x, others, out, axis, op, map, epilogue, scale, p, nan, acc_dtype, tensor):
    """The memo key of a fused call on torch CUDA tensors from their own attributes (x, every
    other array and out, if given, of class `tensor`), as reduce's torch lane makes it; None
    where the call is not kept (another framework among the arrays, a map that is neither a
    name nor IR)."""
    map, epilogue = _code_part(map), _code_part(epilogue)
    if map is _NOKEY or epilogue is _NOKEY:
        return None
    ys = []
    for y in others:
        if y.__class__ is not tensor or not y.is_cuda:
            return None
        ys.append((y.shape, y.stride(), y.dtype, y.get_device()))
    if out is None:
        o = None
    elif out.__class__ is tensor and out.is_cuda:
        o = (out.shape, out.is_contiguous(), out.dtype, out.get_device())
    else:
        return None
    return ("fused torch", x.shape, x.stride(), x.dtype, x.get_device(), axis, op, map, epilogue,
            scale.__class__, _exact(scale), p.__class__, _exact(p), nan, acc_dtype, tuple(ys), o)


def _exact(v):
    """v as a key part: a float by its text, so that -0.0 and 0.0 (equal floats) differ and a NaN
    equals itself"""
    return repr(v) if v.__class__ is float else v


def _key(a, bs, o, axis, op, map, epilogue, scale, p, nan, acc_dtype):
    """The memo key of a fused call from its described arrays; None where it is not kept."""
    map, epilogue = _code_part(map), _code_part(epilogue)
    if op.__class__ is not str or map is _NOKEY or epilogue is _NOKEY:
        return None
    return ("fused", a.shape, a.strides, a.dtype, a.device, axis, op, map, epilogue,
            scale.__class__, _exact(scale), p.__class__, _exact(p), nan, acc_dtype,
            tuple([(b.shape, b.strides, b.dtype, b.device) for b in bs]),
            None if o is None else (o.shape, o.strides, o.dtype, o.device))


def _request(c, a, bs, axis, op, map, epilogue, scale, p, nan, acc_dtype):
    """Every check of a fused call's arrays and arguments but out's, then its parsed request
    (kept in c.requests by its text) and kept shape."""
    axes = normalize_axes(axis, len(a.shape))
    kept = kept_shape(a.shape, axes)
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
        if len(c.requests) >= sys.modules[__package__]._MEMO_MAX:
            c.drop_memo()  # the memo's entries go with the requests they use
        req = c.requests[rkey] = c.parse(rq)
        c.custom_kept = (c.custom_kept or op.__class__ is not str or map.__class__ is dict or
                         epilogue.__class__ is dict)
    return req, kept


def _prepare(c, a, bs, o, axis, op, map, epilogue, scale, p, nan, acc_dtype, check_out):
    """A memo entry: (kernel, device, kept shape, the others' pointer array, their count).  The
    kernel is rj_compile's for the request, pinned by the memo (released when it is dropped)."""
    req, kept = _request(c, a, bs, axis, op, map, epilogue, scale, p, nan, acc_dtype)
    if o is not None:
        check_out(o, a, kept, a.dtype)
    k = ctypes.c_void_p()
    c.check(c.L.rj_compile(c.ptr, req, ctypes.byref(c.options(a.device)), ctypes.byref(k)))
    c.pins.append(k.value)
    n = len(bs)
    return k, a.device, kept, (ctypes.c_uint64 * n)() if n else None, n


def fused_reduce(c, x, op, axis, others, map, epilogue, scale, p, out, nan, stream, acc_dtype,
                 stream_of, empty, check_out, tkey=None):
    """reduce's fused calls but a torch layout's repeated ones (reduce's torch lane): the arrays
    described, their layout looked up in the memo (tkey: the torch key to store too) or
    prepared, one launch."""
    a = describe(x)
    if axis.__class__ is list:
        axis = tuple(axis)
    bs = [describe(y, f"others[{i}]") for i, y in enumerate(others)]
    o = None if out is None else describe(out, "out")
    key = _key(a, bs, o, axis, op, map, epilogue, scale, p, nan, acc_dtype)
    if key is None:
        return _unkept(c, a, bs, o, axis, op, map, epilogue, scale, p, out, nan, stream,
                       acc_dtype, stream_of, empty, check_out)
    pkg = sys.modules[__package__]  # the package (which imports this module)
    pkg._memo_room(c, 1 if tkey is None else 2)
    if c.deferred:
        c.release_deferred()
    try:
        e = c.memo.get(key)
    except TypeError:  # an argument that cannot be a key: refused by the checks, or kept out
        return _unkept(c, a, bs, o, axis, op, map, epilogue, scale, p, out, nan, stream,
                       acc_dtype, stream_of, empty, check_out)
    if e is None:
        e = c.memo[key] = _prepare(c, a, bs, o, axis, op, map, epilogue, scale, p, nan,
                                   acc_dtype, check_out)
    if tkey is not None:
        c.memo[tkey] = e
    elif a.framework == "torch":
        pkg._torch_seen()
    k, dev, kept, arr, n = e
    if out is None:
        out = empty(a, kept, a.dtype)
        o = describe(out, "out")
    for i in range(n):
        arr[i] = bs[i].ptr
    s = c.launch_n(c.vptr, k, dev, a.ptr, arr, n, o.ptr, 0, stream_of(stream, a))
    if s:
        raise c.fail(s)
    return out


def _unkept(c, a, bs, o, axis, op, map, epilogue, scale, p, out, nan, stream, acc_dtype,
            stream_of, empty, check_out):
    """A fused call the memo does not keep: rj_reduce_n of its parsed request (found by the
    library's own memo of requests)."""
    req, kept = _request(c, a, bs, axis, op, map, epilogue, scale, p, nan, acc_dtype)
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
