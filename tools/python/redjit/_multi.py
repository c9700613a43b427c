"""Many tensors reduced in one launch (docs/TENSOR.md "Many tensors"): a list request over a
device table of (pointer, length, stride) records, rj_reduce_multi.

MultiList(tensors) builds the table once, on the tensors' device, by their framework (torch or
CuPy); each call then is one launch and no allocation but the outputs (none with out= /
total_out=), so a loop over the same parameter list, or a CUDA graph capturing it, pays nothing
per tensor.  multi_reduce(tensors, ...) keeps the last few tables by the tensors' pointers,
lengths and strides, so calling it on the same list again reuses them."""

import _thread

from ._arrays import describe
from ._errors import RedjitError

_TABLES_KEPT = 8
_cache_lock = _thread.allocate_lock()  # multi_reduce's tables, shared by the threads


def _einval(msg):
    return RedjitError("RJ_EINVAL", msg)


def _flat(a, i):
    """(length, element stride) of array a as one 1-D run, or an error naming tensors[i]."""
    n = 1
    for s in a.shape:
        n *= s
    if a.strides is None or n <= 1:
        return n, 1
    dims = [(s, st) for s, st in zip(a.shape, a.strides) if s != 1]
    step = dims[-1][1] if dims else 1
    want = step
    for s, st in reversed(dims):
        if st != want:
            raise _einval(f"tensors[{i}]: strides {a.strides} are not one run of a single "
                          "stride (make it contiguous)")
        want *= s
    return n, step


def _table_array(a, flat):
    """The table (4 int64 per tensor) as an array of a's framework on a's device."""
    if a.framework == "torch":
        import torch
        return torch.tensor(flat, dtype=torch.int64, device=a.obj.device)
    if a.framework == "cupy":
        import cupy
        with cupy.cuda.Device(a.device):
            t = cupy.asarray(flat, dtype=cupy.int64)
            cupy.cuda.get_current_stream().synchronize()  # landed before a launch on any stream
            return t
    raise _einval(f"tensors: {a.framework} arrays: give torch tensors or CuPy arrays (redjit "
                  "builds the table with their framework)")


class MultiList:
    """A list of GPU arrays (one dtype, one device), its table built once on the device.  Keep
    the arrays alive as long as the MultiList is used: the table holds their pointers."""

    def __init__(self, tensors):
        infos = [describe(x, f"tensors[{i}]") for i, x in enumerate(tensors)]
        if not infos:
            raise _einval("tensors: an empty list (give at least one array)")
        if len(infos) > 10240:
            raise _einval(f"tensors: {len(infos)} arrays, at most 10240 in one list")
        a = infos[0]
        flat, self.lengths = [], []
        for i, b in enumerate(infos):
            if b.dtype != a.dtype:
                raise _einval(f"tensors[{i}]: dtype {b.dtype}, tensors[0] is {a.dtype}")
            if b.device != a.device:
                raise _einval(f"tensors[{i}]: on device {b.device}, tensors[0] on {a.device}")
            n, st = _flat(b, i)
            flat += [b.ptr, n, st, 0]
            self.lengths.append(n)
        self.first, self.dtype, self.device, self.count = a, a.dtype, a.device, len(infos)
        self.table = _table_array(a, flat)
        self._keys = {}
        self.table_ptr = describe(self.table, "table").ptr

    def reduce(self, op="sum", *, total=False, per_tensor=True, out=None, total_out=None,
               nan="propagate", stream=None, invariant=False):
        from . import _ctx, _empty, _stream_of
        if not per_tensor and not total:
            raise _einval("per_tensor: False with total False asks for nothing")
        c = _ctx()
        key = (op, bool(total), nan, bool(invariant))
        rkey, rdt = self._keys.get(key) or self._key(key)
        req = c.requests.get(rkey)
        if req is None:
            req = c.requests[rkey] = c.parse(rkey)
        outs = self._out(out, (self.count,), rdt, "out", _empty) if per_tensor else None
        tot = self._out(total_out, (), rdt, "total_out", _empty) if total else None
        s = c.L.rj_reduce_multi(c.ptr, req, c.options(self.device), self.table_ptr, self.count,
                                _ptr(outs, "out") if per_tensor else 0,
                                _ptr(tot, "total_out") if total else 0,
                                _stream_of(stream, self.first))
        if s:
            raise c.fail(s)
        if per_tensor and total:
            return outs, tot
        return outs if per_tensor else tot

    def _key(self, key):
        """The request's JSON text and result dtype of (op, total, nan, invariant), kept per
        list."""
        from . import _out_dtype
        op, total, nan, invariant = key
        rq = {"kind": "tensor", "op": op, "dtype": self.dtype, "nan": nan,
              "list": {"count": self.count, "total": total}}
        if invariant:
            rq["invariant"] = True
        named = op in ("sumsq", "norm", "amax", "count_nonzero")
        import json  # on first use: `import redjit` loads no json
        e = self._keys[key] = (json.dumps(rq, sort_keys=True),
                               _out_dtype("sum" if named else op, self.dtype))
        return e

    def _out(self, given, shape, dtype, what, empty):
        if given is None:
            return empty(self.first, shape, dtype)
        o = describe(given, what)
        n = 1
        for s in o.shape:
            n *= s
        if n != max(1, len(shape) and shape[0]) or o.dtype != dtype or o.device != self.device:
            raise _einval(f"{what}: {o.shape} {o.dtype} on device {o.device}, expected "
                          f"{shape} {dtype} on device {self.device}")
        if o.strides is not None and n > 1 and o.strides[-1] != 1:
            raise _einval(f"{what}: must be contiguous")
        return given


def _ptr(x, what):
    dp = getattr(x, "data_ptr", None)  # torch: the tensor's own attribute, no interface built
    return dp() if dp is not None else describe(x, what).ptr


def multi_reduce(tensors, op="sum", *, total=False, per_tensor=True, out=None, total_out=None,
                 nan="propagate", stream=None, invariant=False, _cache={}):
    """op over each array of `tensors` (whole), and with total=True over all of them, in one
    launch: returns the per-tensor results (a 1-D array of len(tensors)), the total (a 0-d
    array), or (results, total) when both are asked.  op: "sum", "max", "min", "prod", "mean"
    (not with total), and the fused "sumsq", "norm" (L2: the total is sqrt of every square),
    "amax".  invariant=True: each result depends only on its tensor's length and values (not
    its stride or address), the total on the tensors' values and their positions in the list
    (docs/INVARIANCE.md).
    The table is kept for the same list (pointers, lengths, strides)."""
    if not isinstance(tensors, (list, tuple)):
        raise _einval("tensors: expected a list or tuple of GPU arrays")
    key = []
    for x in tensors:
        dp = getattr(x, "data_ptr", None)
        if dp is None:
            key = None
            break
        key.append((dp(), tuple(x.shape), tuple(x.stride()), str(x.dtype)))
    key = None if key is None else tuple(key)
    m = _cache.get(key) if key is not None else None
    if m is None:
        m = MultiList(tensors)
        if key is not None:
            with _cache_lock:
                if len(_cache) >= _TABLES_KEPT:
                    _cache.pop(next(iter(_cache)))
                _cache[key] = m
    return m.reduce(op, total=total, per_tensor=per_tensor, out=out, total_out=total_out,
                    nan=nan, stream=stream, invariant=invariant)

