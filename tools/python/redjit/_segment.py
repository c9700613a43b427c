"""Segmented reductions (docs/TENSOR.md "Segmented reductions"): redjit.segment_reduce reduces
ragged segments of axis 0 of a 1-D or 2-D array, cut by a device offsets array (int32 / int64,
S + 1 entries), in one launch of rj_reduce_segments; with check=True, rj_segments_status then
waits and raises on invalid offsets.  The parsed request is kept per layout, the kernel found
by rj_reduce's cache."""
import ctypes

from ._arrays import describe
from ._errors import RedjitError


def _einval(msg):
    return RedjitError("RJ_EINVAL", msg)


def _inputs(x, offsets):
    a = describe(x)
    o = describe(offsets, "offsets")
    if len(a.shape) not in (1, 2):
        raise _einval(f"x: {len(a.shape)} dims; segment_reduce takes a 1-D or a 2-D [N, C] array")
    if a.strides is not None:
        raise _einval(f"x: must be contiguous (row-major); strides {a.strides}")
    if len(o.shape) != 1 or o.shape[0] < 2:
        raise _einval(f"offsets: shape {o.shape}; expected S + 1 >= 2 entries (1-D)")
    if o.dtype not in ("i32", "i64"):
        raise _einval(f"offsets: dtype {o.dtype}, expected int32 or int64")
    if o.strides is not None:
        raise _einval(f"offsets: must be contiguous; strides {o.strides}")
    if o.device != a.device:
        raise _einval(f"offsets: on device {o.device}, x on {a.device}")
    return a, o


def _status(c, dev):
    """A zeroed device status word of c's for device dev, allocated once (freed with c)."""
    words = c.seg_status
    if dev not in words:
        p = ctypes.c_uint64()
        c.check(c.L.rj_device_alloc(c.ptr, dev, 4, ctypes.byref(p)))
        z = ctypes.c_uint32(0)
        c.check(c.L.rj_memcpy_htod(c.ptr, dev, p.value, ctypes.byref(z), 4))
        words[dev] = p.value
    return words[dev]


def segment_reduce(c, x, offsets, op, out, nan, correction, check, stream, stream_of, empty,
                   check_out, out_dtype, invariant=False):
    a, o = _inputs(x, offsets)
    S = o.shape[0] - 1
    rq = {"kind": "tensor", "op": op, "dtype": a.dtype, "shape": list(a.shape), "axes": [0],
          "nan": nan, "segments": {"count": S, "dtype": o.dtype}}
    if invariant:
        rq["invariant"] = True
    if correction is not None:
        rq["correction"] = correction
    import json  # on first use: `import redjit` loads no json
    rkey = json.dumps(rq, sort_keys=True)
    req = c.requests.get(rkey)
    if req is None:
        req = c.requests[rkey] = c.parse(rq)
    kept = (S,) + tuple(a.shape[1:])
    want = out_dtype(op, a.dtype)
    if out is None:
        out = empty(a, kept, want)
    d = describe(out, "out")
    check_out(d, a, kept, want)
    st = _status(c, a.device) if check else 0
    s = c.L.rj_reduce_segments(c.ptr, req, c.options(a.device), a.ptr, o.ptr, d.ptr, st,
                               stream_of(stream, a))
    if s:
        raise c.fail(s)
    if check:
        s = c.L.rj_segments_status(c.ptr, a.device, st)
        if s:
            raise c.fail(s)
    return out
