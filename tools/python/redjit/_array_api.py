"""NumPy / array-API reductions over redjit.reduce: sum prod max min mean var std argmax argmin
logsumexp all any (docs/PYTHON.md, "Array-API reductions").

Each takes x, then keyword-only axis (None | int | tuple), keepdims, and where NumPy has them
dtype, out, initial, correction / ddof; results have NumPy's dtypes (sums of 32-bit integers
and bools in 64 bits, means of integers in float64, argmax in int64, all / any bool).  What the
kernels cannot express is done on the Python side by the array's framework (torch, CuPy, Numba),
never by a kernel the C side refuses: a zero-size reduction gives the identity (NaN for a mean,
an error for max / argmax of an empty axis), axis=() reduces nothing, a dtype= other than x's
converts x first (one copy).  Small integers, bool and float8 go to the kernels as they are
(sums of them in 64 bits, as NumPy's); only what no kernel takes is converted first (one copy):
logsumexp of integers, prod of float8, all of signed small integers and of float8."""
from __future__ import annotations

import contextlib
import math
import operator
import sys
import threading
from typing import Any, Optional, Sequence, Union

from . import _arrays
from ._arrays import describe, kept_shape, normalize_axes
from ._custom import Custom
from ._errors import InvalidRequest, Unsupported
from . import reduce as _reduce  # the package is whole: this module is imported by its calls

__all__ = ["dtype_name", "result_dtype", "sum", "prod", "max", "min", "mean", "var", "std",
           "argmax", "argmin", "logsumexp", "all", "any"]

# ------------------------------------------------------------------ dtype names
_NAMES = {"f16": "f16", "float16": "f16", "half": "f16", "e": "f16",
          "bf16": "bf16", "bfloat16": "bf16",
          "f32": "f32", "float32": "f32", "single": "f32", "f": "f32",
          "f64": "f64", "float64": "f64", "double": "f64", "float": "f64", "d": "f64",
          "i32": "i32", "int32": "i32", "intc": "i32", "i": "i32",
          "u32": "u32", "uint32": "u32", "uintc": "u32", "I": "u32",
          "i64": "i64", "int64": "i64", "int": "i64", "long": "i64", "l": "i64", "q": "i64",
          "u64": "u64", "uint64": "u64", "L": "u64", "Q": "u64", "uint": "u64",
          "bool": "bool", "bool_": "bool", "b1": "bool", "?": "bool",
          "i8": "i8", "int8": "i8", "b": "i8", "u8": "u8", "uint8": "u8", "B": "u8",
          "i16": "i16", "int16": "i16", "h": "i16", "u16": "u16", "uint16": "u16", "H": "u16",
          "e4m3": "e4m3", "float8_e4m3fn": "e4m3", "e5m2": "e5m2", "float8_e5m2": "e5m2"}
_FLOATS = ("f16", "bf16", "f32", "f64")
Axis = Union[None, int, Sequence[int]]
DType = Any  # "f32", "float32", torch.float32, numpy.float32, numpy.dtype, float, int, bool


def dtype_name(d: DType, what: str = "dtype") -> Optional[str]:
    """redjit's name ("f32", ..., "bool") of a dtype spelled as redjit, NumPy or torch spell it:
    "f32", "float32", torch.float32, numpy.float32, numpy.dtype("float32"), "<f4", float, int,
    bool.  InvalidRequest naming `what` for anything else."""
    if d is None:
        return None
    if d is float:
        return "f64"
    if d is int:
        return "i64"
    if d is bool:
        return "bool"
    name = d if isinstance(d, str) else None
    if name is None:
        n = getattr(d, "name", None)  # numpy / cupy dtype
        if isinstance(n, str) and type(d).__module__.split(".")[0] in ("numpy", "cupy"):
            name = n
        elif type(d).__module__.split(".")[0] == "torch" or str(d).startswith("torch."):
            name = str(d)
        else:
            name = getattr(d, "__name__", None) or str(d)  # numpy.float32, a type
    key = name[6:] if name.startswith("torch.") else name
    r = _NAMES.get(key) or _NAMES.get(key.lower())
    if r is None and len(key) == 3 and key[0] in "<=|":
        try:
            r = _arrays.dtype_of_typestr(key)
        except Exception:
            r = None
    if r is None:
        raise InvalidRequest("RJ_EINVAL", f"{what}: {d!r} is not a dtype redjit knows (f16 bf16 "
                             "f32 f64 i32 u32 i64 u64 i8 u8 i16 u16 bool e4m3 e5m2, as redjit, NumPy or torch "
                             "name them)")
    return r


def result_dtype(op: str, d: str, dtype: Optional[str] = None) -> str:
    """The result's dtype of op on input dtype d, as NumPy gives it (dtype: the caller's dtype=,
    a redjit name)."""
    if op in ("all", "any"):
        return "bool"
    if op in ("argmax", "argmin"):
        return "i64"
    if dtype is not None:
        return dtype
    if d in ("e4m3", "e5m2"):  # float8: f32 (no NumPy rule; torch keeps fp8 for max / min)
        return d if op in ("max", "min") else "f32"
    if op in ("sum", "prod"):
        return {"i32": "i64", "u32": "u64", "bool": "i64", "i8": "i64", "i16": "i64",
                "u8": "u64", "u16": "u64"}.get(d, d)
    if op in ("mean", "var", "std", "logsumexp"):
        return d if d in _FLOATS else "f64"
    return d  # max, min


# ------------------------------------------------------------------ frameworks
class _Torch:
    name = "torch"

    def __init__(self):
        self.t = sys.modules["torch"]
        _arrays._torch_mod()  # its dtype table

    def dtype(self, d):
        if d == "bool":
            return self.t.bool
        for k, v in _arrays._TORCH_DTYPES.items():
            if v == d:
                return k
        raise Unsupported("RJ_EUNSUPPORTED", f"dtype: torch has no {d}")

    def full(self, like, shape, value, d):
        return self.t.full(tuple(shape), value, dtype=self.dtype(d), device=like.device)

    def empty(self, like, shape, d):
        return self.t.empty(tuple(shape), dtype=self.dtype(d), device=like.device)

    def cast(self, x, d):
        return x.to(self.dtype(d))

    def copy_as(self, x, d):  # a new array, even of x's own dtype
        return x.to(self.dtype(d), copy=True)

    def fill(self, a, value):
        a.fill_(value)

    def reshape(self, a, shape):
        return a.reshape(tuple(shape))

    def copy_into(self, out, r):
        out.copy_(r.reshape(out.shape))

    def nonzero(self, x):
        signed = {getattr(self.t, "uint" + b, None): getattr(self.t, "int" + b, None)
                  for b in ("16", "32", "64")}.get(x.dtype)
        if signed is not None:  # torch compares few unsigned dtypes: the same bits, signed
            x = x.view(signed)
        return x != 0

    def combine(self, op, x, v):
        if op == "sum":
            return x + v
        if op == "prod":
            return x * v
        vt = self.t.full_like(x, v)
        return self.t.maximum(x, vt) if op == "max" else self.t.minimum(x, vt)

    def stream(self, x, stream):
        if stream is None:
            return contextlib.nullcontext()
        from . import _stream_of
        s = self.t.cuda.ExternalStream(_stream_of(stream, None), device=x.device)
        return self.t.cuda.stream(s)


class _Cupy(_Torch):
    name = "cupy"

    def __init__(self):
        import cupy
        self.t = cupy

    def dtype(self, d):
        if d == "bf16":
            raise Unsupported("RJ_EUNSUPPORTED", "dtype: CuPy has no bfloat16")
        return "bool" if d == "bool" else {"f16": "float16", "f32": "float32", "f64": "float64",
                                           "i32": "int32", "u32": "uint32", "i64": "int64",
                                           "u64": "uint64"}[d]

    def full(self, like, shape, value, d):
        with self.t.cuda.Device(like.device.id):
            return self.t.full(tuple(shape), value, dtype=self.dtype(d))

    def empty(self, like, shape, d):
        with self.t.cuda.Device(like.device.id):
            return self.t.empty(tuple(shape), dtype=self.dtype(d))

    def cast(self, x, d):
        return x.astype(self.dtype(d))

    def copy_as(self, x, d):
        return x.astype(self.dtype(d), copy=True)

    def fill(self, a, value):
        a.fill(value)

    def copy_into(self, out, r):
        out[...] = r.reshape(out.shape)

    def stream(self, x, stream):
        if stream is None:
            return contextlib.nullcontext()
        from . import _stream_of
        return self.t.cuda.ExternalStream(_stream_of(stream, None))


class _Numba(_Cupy):
    """Numba device arrays have no device-side arithmetic: what the kernels do not compute goes
    through the host (NumPy), which only the Python-side paths (zero-size, axis=(), dtype=) use."""
    name = "numba"

    def __init__(self):
        import numpy
        from numba import cuda
        self.np, self.cuda = numpy, cuda

    def full(self, like, shape, value, d):
        return self.cuda.to_device(self.np.full(tuple(shape), value, dtype=self.dtype(d)))

    def empty(self, like, shape, d):
        return self.cuda.device_array(tuple(shape), dtype=self.dtype(d))

    def _host(self, x):
        return x.copy_to_host()

    def cast(self, x, d):
        return self.cuda.to_device(self._host(x).astype(self.dtype(d)))

    copy_as = cast

    def fill(self, a, value):
        a.copy_to_device(self.np.full(a.shape, value, dtype=a.dtype))

    def reshape(self, a, shape):
        return a.reshape(tuple(shape))

    def copy_into(self, out, r):
        out.copy_to_device(self._host(r).reshape(out.shape))

    def nonzero(self, x):
        return self.cuda.to_device(self._host(x) != 0)

    def combine(self, op, x, v):
        h, np = self._host(x), self.np
        f = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[op]
        return self.cuda.to_device(f(h, np.asarray(v, dtype=h.dtype)).astype(h.dtype))

    def stream(self, x, stream):
        return contextlib.nullcontext()


def _framework(a, why):
    """The framework adapter of an array described as `a`; Unsupported naming `why` for arrays
    redjit cannot allocate or convert (plain __cuda_array_interface__ / DLPack producers)."""
    if a.framework == "torch":
        return _Torch()
    if a.framework == "cupy":
        return _Cupy()
    if a.framework == "numba":
        return _Numba()
    raise Unsupported("RJ_EUNSUPPORTED", f"{why} of a {a.framework} array: redjit allocates, "
                      "fills and converts only torch, CuPy and Numba arrays (reduce it with "
                      "redjit.reduce and out=, or convert it first)")


def _is_bool(x):
    t = sys.modules.get("torch")
    if t is not None and isinstance(x, t.Tensor):
        return x.dtype == t.bool
    cai = getattr(x, "__cuda_array_interface__", None)
    return cai is not None and cai.get("typestr", "")[1:] == "b1"


# ------------------------------------------------------------------ all / any: a 0/1 state
_LLVM = {"f16": ("half", "0xH0000"), "bf16": ("bfloat", "0xR0000"), "f32": ("float", "0.0"),
         "f64": ("double", "0.0"), "i32": ("i32", "0"), "u32": ("i32", "0"),
         "i64": ("i64", "0"), "u64": ("i64", "0")}
_TRUTH = {}


def _truth_op(which, d):
    """A Custom reducing x of dtype d to an i32 0 / 1: all (every x != 0) or any (some x != 0);
    NaN is true, as bool(nan)."""
    key = (which, d)
    c = _TRUTH.get(key)
    if c is None:
        ty, zero = _LLVM[d]
        cmp = "fcmp une" if d in _FLOATS else "icmp ne"
        fold = "and" if which == "all" else "or"
        ir = (f"define {{ i32 }} @truth_lift({ty} %x, i64 %i) {{\n"
              f"  %c = {cmp} {ty} %x, {zero}\n  %v = zext i1 %c to i32\n"
              "  %s = insertvalue { i32 } poison, i32 %v, 0\n  ret { i32 } %s\n}\n"
              "define { i32 } @truth_fold({ i32 } %a, { i32 } %b) {\n"
              "  %x = extractvalue { i32 } %a, 0\n  %y = extractvalue { i32 } %b, 0\n"
              f"  %z = {fold} i32 %x, %y\n"
              "  %s = insertvalue { i32 } poison, i32 %z, 0\n  ret { i32 } %s\n}\n")
        c = _TRUTH[key] = Custom(ir, "truth_fold", identity=[1 if which == "all" else 0],
                                 commutative=True, state=["i32"], lift="truth_lift", result=0)
    return c


# ------------------------------------------------------------------ the common path
_EMPTY_VALUE = {"sum": 0, "prod": 1, "mean": math.nan, "var": math.nan, "std": math.nan,
                "logsumexp": -math.inf, "all": True, "any": False}
_NUMPY_NAME = {"max": "maximum", "min": "minimum"}


def _work_dtype(op, d, rd):
    """The dtype the kernel reads for op on input dtype d with result rd: d itself where the
    library takes it and writes rd from it, else rd (or i32 / f32 for all / any): a conversion."""
    from . import _out_dtype
    if op in ("all", "any"):
        if d in ("i8", "i16") and op == "all":
            return "i32"  # no kernel folds "every element non-zero" of these directly
        return "f32" if d in ("e4m3", "e5m2") else d
    if op in ("max", "min", "argmax", "argmin"):
        return d
    if op == "logsumexp" and d not in _FLOATS and d not in ("e4m3", "e5m2"):
        return rd
    if op == "prod" and d in ("e4m3", "e5m2"):
        return rd
    return d if _out_dtype(op, d) == rd else rd


def _axis_arg(axis):
    """axis as normalize_axes takes it: None, an int or a tuple of ints (a list as a tuple, an
    integer of another type, NumPy's, as an int); InvalidRequest for anything else (1.0, 1.5)"""
    if axis is None or axis.__class__ is int:
        return axis
    if axis.__class__ not in (list, tuple):
        try:
            return operator.index(axis)
        except TypeError:
            raise InvalidRequest("RJ_EINVAL", f"axis: None, an int or a tuple of ints, not "
                                 f"{type(axis).__name__}") from None
    out = []
    for i, a in enumerate(axis):
        try:
            out.append(operator.index(a))
        except TypeError:
            raise InvalidRequest("RJ_EINVAL", f"axis[{i}]: an int, not "
                                 f"{type(a).__name__}") from None
    return tuple(out)


def _plan(op, x, axis, keepdims, dtype):
    """(a, axes, kept, result shape, result dtype, work dtype, input was bool)."""
    a = describe(x)
    is_bool = a.dtype == "bool"
    axes = normalize_axes(_axis_arg(axis), len(a.shape))
    kept = kept_shape(a.shape, axes)
    res_shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape)) if keepdims else kept
    rd = result_dtype(op, a.dtype, dtype)
    if op in ("sum", "prod", "mean", "var", "std", "logsumexp"):
        if rd == "bool":
            raise InvalidRequest("RJ_EINVAL", f"dtype: {op} does not give bool")
        if op not in ("sum", "prod") and rd not in _FLOATS:
            raise InvalidRequest("RJ_EINVAL", f"dtype: {op} takes a floating dtype, not {rd}")
    return a, axes, kept, res_shape, rd, _work_dtype(op, a.dtype, rd), is_bool


class _Described:
    def __init__(self, framework):
        self.framework = framework


def _described_fw(x):
    t = sys.modules.get("torch")
    if t is not None and isinstance(x, t.Tensor):
        return _Described("torch")
    mod = type(x).__module__.split(".")[0]
    return _Described(mod if mod in ("cupy", "numba") else "cai")


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _finish(fw, r, res_shape, out):
    """r (the result, of the kept shape or res_shape) as the caller gets it."""
    if out is not None:
        if r is not out:
            fw.copy_into(out, r)
        return out
    return fw.reshape(r, res_shape) if tuple(r.shape) != tuple(res_shape) else r


def _check_out(out, res_shape, rd):
    o = describe(out, "out")
    if tuple(o.shape) != tuple(res_shape):
        raise InvalidRequest("RJ_EINVAL", f"out: shape {tuple(o.shape)}, expected "
                             f"{tuple(res_shape)}")
    od = o.dtype
    if not _arrays.is_row_major(o.shape, o.strides):  # the kernel writes it in place
        raise InvalidRequest("RJ_EINVAL", f"out: must be contiguous (row-major); strides "
                             f"{o.strides}")
    if od != rd:
        raise InvalidRequest("RJ_EINVAL", f"out: dtype {od}, expected {rd} (the result's)")


# torch tensors: a call like one seen before (the same shapes, strides, dtypes and arguments)
# whose plan needs no framework step goes straight to reduce (whose own memo then launches)
_FAST = {}
_FAST_MAX = 4096
_MASKED = {}  # _masked's plans of torch tensors' calls (sum / mean with where=), kept as _FAST


def _keyable_axis(axis):
    """axis in a form whose equal keys mean the same axes (1.0 == 1, True == 1: not keys)"""
    c = axis.__class__
    if c is not tuple:
        return axis is None or c is int
    for a in axis:  # (this module's all is NumPy's)
        if a.__class__ is not int:
            return False
    return True


def _remember(memo, key, value):
    """memo[key] = value; a full memo (_FAST_MAX) is emptied first"""
    if len(memo) >= _FAST_MAX:
        memo.clear()
    memo[key] = value


def _fast_key(op, x, axis, keepdims, dtype, out, initial, correction, acc_dtype):
    t = _arrays._torch
    if t is None or x.__class__ is not t.Tensor or initial is not None or \
            not _keyable_axis(axis):
        return None
    if out is None:
        o = None
    elif out.__class__ is t.Tensor:
        o = (out.shape, out.dtype, out.is_contiguous())
    else:
        return None
    return (op, x.shape, x.stride(), x.dtype, axis, keepdims, dtype, o, correction, acc_dtype)


def _reduction(op, x, axis, keepdims, dtype, out, initial, correction, stream, acc_dtype=None,
               nan="propagate"):
    try:
        key = _fast_key(op, x, axis, keepdims, dtype, out, initial, correction, acc_dtype)
        e = _FAST.get(key) if key is not None else None
    except TypeError:  # an unhashable argument
        key = e = None
    if e is not None:
        cop, axes, kept, reshape_to, to_bool = e
        if out is not None and reshape_to is not None:
            _reduce(x, cop, axes, out=out.view(kept), stream=stream, correction=correction,
                    acc_dtype=acc_dtype)
            return out
        r = _reduce(x, cop, axes, out=out, stream=stream, correction=correction,
                    acc_dtype=acc_dtype)
        if to_bool:
            r = r != 0
        return r if reshape_to is None else r.view(reshape_to)
    _plan_tls.entry = None
    r = _slow(op, x, axis, keepdims, dtype, out, initial, correction, stream, acc_dtype, nan)
    entry = _plan_tls.entry
    if key is not None and entry is not None:
        _remember(_FAST, key, entry)
    return r


_plan_tls = threading.local()  # .entry: what _kernel found for this call's fast path, or None


def _slow(op, x, axis, keepdims, dtype, out, initial, correction, stream, acc_dtype, nan):
    if dtype is None and out is not None and op in ("sum", "prod", "mean", "var", "std",
                                                    "logsumexp"):
        dtype = describe(out, "out").dtype  # NumPy: out's dtype
    dtype = dtype_name(dtype)
    a, axes, kept, res_shape, rd, wd, is_bool = _plan(op, x, axis, keepdims, dtype)
    if out is not None:
        _check_out(out, res_shape, rd)
    n = _size(a.shape[i] for i in axes)
    if n == 0 and op in ("argmax", "argmin"):
        raise InvalidRequest("RJ_EINVAL", f"axis: attempt to get {op} of an empty sequence "
                             f"(the reduced dims {axes} of shape {a.shape} hold no element)")
    if n == 0 and op in ("max", "min") and initial is None and _size(kept) > 0:
        raise InvalidRequest("RJ_EINVAL", f"axis: zero-size array to reduction operation "
                             f"{_NUMPY_NAME[op]} which has no identity (the reduced dims {axes} "
                             f"of shape {a.shape} hold no element; give initial=)")
    x_in = a.obj
    if n == 0 or _size(kept) == 0:  # the identity (or initial), no kernel
        fw = _framework(a, "a zero-size reduction")
        v = _EMPTY_VALUE.get(op, 0) if initial is None else initial
        with fw.stream(x_in, stream):
            return _finish(fw, fw.full(x_in, res_shape, v, rd), res_shape, out)
    if not axes:  # axis=(): reduces nothing
        return _elementwise(op, a, res_shape, rd, wd, out, initial, correction, stream)
    return _kernel(op, a, axes, kept, res_shape, rd, wd, out, initial, correction, stream,
                   acc_dtype, nan)


def _elementwise(op, a, res_shape, rd, wd, out, initial, correction, stream):
    """axis=(): each element its own reduction of one."""
    fw = _framework(a, "axis=()")
    x = a.obj
    with fw.stream(x, stream):
        if op in ("all", "any"):
            r = fw.nonzero(x)
        elif op in ("argmax", "argmin"):
            r = fw.full(x, res_shape, 0, "i64")
        elif op in ("var", "std"):
            c = 0 if correction is None else correction
            r = fw.full(x, res_shape, 0.0 if c < 1 else math.nan, rd)
        else:  # sum prod max min mean logsumexp: the element, in the result's dtype
            r = fw.copy_as(x, rd)
            if initial is not None:
                r = fw.combine(op, r, initial)
        return _finish(fw, r, res_shape, out)


def _kernel_op(op, wd):
    """(the op the kernel runs, the dtype it writes) for op on work dtype wd."""
    from . import _out_dtype
    if op in ("all", "any"):
        if wd == "bool":
            return ("and" if op == "all" else "or"), "bool"
        if wd in ("i8", "u8", "i16", "u16"):  # non-zero iff some / every element is
            return ("min" if op == "all" else "or"), wd
        return _truth_op(op, wd), "i32"
    return op, _out_dtype(op, wd)


def _kernel(op, a, axes, kept, res_shape, rd, wd, out, initial, correction, stream, acc_dtype,
            nan):
    x = a.obj
    cop, kd = _kernel_op(op, wd)  # kd: the dtype the kernel writes
    if a.framework == "torch" and wd == a.dtype and initial is None and \
            (kd == rd or (op in ("all", "any") and out is None)):
        _plan_tls.entry = (cop, axes, tuple(kept), None if tuple(res_shape) == tuple(kept)
                           else tuple(res_shape), kd != rd)
    if wd != a.dtype or kd != rd or initial is not None:
        fw = _framework(a, f"{op} with dtype {rd}" if wd != a.dtype or kd != rd else
                        f"{op} with initial=")
    else:
        fw = None
    ctx = fw.stream(x, stream) if fw is not None else contextlib.nullcontext()
    with ctx:
        if wd != a.dtype:
            x = fw.cast(x, wd)
        target = None  # what the kernel writes into, of the kept shape
        if out is not None and kd == rd:
            target = _as_kept(out, kept, a)
        elif fw is not None:
            target = fw.empty(x, kept, kd)
        if initial is not None:
            fw.fill(target, initial)
        r = _reduce(x, cop, axes, out=target, stream=stream, accum=initial is not None,
                    correction=correction, acc_dtype=acc_dtype, nan=nan)
        if kd != rd:  # all / any folded as integers: 0 / non-zero as bool
            r = fw.nonzero(r)
        if out is not None:
            if kd == rd:
                return out
            fw.copy_into(out, r)
            return out
        if fw is None:
            fw = _framework(a, "keepdims=True") if tuple(res_shape) != tuple(kept) else None
            if fw is None:
                return r
        return fw.reshape(r, res_shape)


def _as_kept(out, kept, a):
    """out (contiguous, of the result's shape) seen with the kept shape, for the kernel."""
    shape = tuple(describe(out, "out").shape)
    if shape == tuple(kept):
        return out
    reshape = getattr(out, "reshape", None)
    if reshape is not None and a.framework in ("torch", "cupy", "numba"):
        return reshape(tuple(kept))
    cai = getattr(out, "__cuda_array_interface__", None)
    if cai is None:
        raise Unsupported("RJ_EUNSUPPORTED", f"out: a {a.framework} array of shape "
                          f"{shape} seen as {tuple(kept)}: give out of the kept "
                          "shape (keepdims=False), or a __cuda_array_interface__ array")
    cai = dict(cai)
    cai["shape"], cai["strides"] = tuple(kept), None
    return _CaiView(cai, out)


class _CaiView:
    """An array's memory seen with another (contiguous) shape."""

    def __init__(self, cai, base):
        self.__cuda_array_interface__ = cai
        self.base = base


def reduce_empty(a, out, op, axis, accum, stream):
    """redjit.reduce of an array with a zero-size dim (the kernels take none): NumPy's results,
    written by x's framework.  A reduction over no element gives op's identity (NaN for mean /
    var / std, -inf for logsumexp; a scalar Custom's identity); max / min / argmax / argmin of an
    empty axis raise InvalidRequest; accum=True leaves out as it is (nothing to fold in)."""
    axes = normalize_axes(axis, len(a.shape))
    kept = kept_shape(a.shape, axes)
    n = _size(a.shape[i] for i in axes)
    name = op if isinstance(op, str) else "custom"
    if n == 0 and _size(kept) > 0:
        if name in ("max", "min"):
            raise InvalidRequest("RJ_EINVAL", f"axis: zero-size array to reduction operation "
                                 f"{_NUMPY_NAME[name]} which has no identity (the reduced dims "
                                 f"{axes} of shape {a.shape} hold no element)")
        if name in ("argmax", "argmin"):
            raise InvalidRequest("RJ_EINVAL", f"axis: attempt to get {name} of an empty "
                                 f"sequence (the reduced dims {axes} of shape {a.shape} hold "
                                 "no element)")
    from . import _out_dtype  # the library's result dtype (sum of i16: i64, as NumPy)
    rd = a.dtype if name == "custom" else _out_dtype(name, a.dtype)
    if name == "custom":
        if op.result_dtype is not None:
            raise Unsupported("RJ_EUNSUPPORTED", "op: a struct-state Custom over no element "
                              "(its identity is a state, not a result)")
        v = op.combine()["identity"]
    else:
        ones = {"i8": -1, "i16": -1, "i32": -1, "i64": -1, "u8": 2**8 - 1, "u16": 2**16 - 1,
                "u32": 2**32 - 1, "u64": 2**64 - 1, "bool": 1}.get(a.dtype, 0)
        v = {"sum": 0, "prod": 1, "and": ones, "or": 0, "xor": 0, "mean": math.nan,
             "var": math.nan, "std": math.nan, "logsumexp": -math.inf}.get(name, 0)
    if isinstance(v, str):  # "0x..." bits
        raise Unsupported("RJ_EUNSUPPORTED", "op: a Custom whose identity is given as bits, "
                          "over no element")
    if out is not None and (accum or _size(kept) == 0):
        return out  # nothing to fold in, or nothing to write
    if accum:
        raise InvalidRequest("RJ_EINVAL", "out: accum folds out's old values in: give out")
    fw = _framework(a, "a zero-size reduction")
    with fw.stream(a.obj, stream):
        r = fw.full(a.obj, kept, v, rd)
        return _finish(fw, r, kept, out)


# ------------------------------------------------------------------ the functions
def _corr(correction, ddof):
    if correction is not None and ddof is not None:
        raise InvalidRequest("RJ_EINVAL", "ddof: give correction= or ddof=, not both")
    c = ddof if correction is None else correction
    if c is None:
        return 0
    if int(c) != c or c < 0:
        raise InvalidRequest("RJ_EINVAL", f"correction: {c!r} is not an integer >= 0")
    return int(c)


def _masked(op, x, axis, keepdims, dtype, out, initial, where, stream, acc_dtype):
    """sum / mean of the elements where `where` is non-zero (NumPy's where=): one launch of the
    named op masked_sum / masked_mean, the mask read as it is (any dtype, broadcast to x's
    shape); a mean divides by the count of selected elements (NaN where none is).  The shapes a
    torch tensor's call needs are kept per (op, shape, dtype, axis, keepdims, dtype=), as
    _FAST keeps _reduction's: a repeated call describes nothing before reduce's own memo."""
    key = plan = None
    t = _arrays._torch
    if initial is None and t is not None and x.__class__ is t.Tensor and _keyable_axis(axis):
        try:
            key = (op, x.shape, x.dtype, axis, keepdims, dtype)
            plan = _MASKED.get(key)
        except TypeError:  # an unhashable argument
            key = None
    if plan is None:
        plan = _masked_plan(x, axis, keepdims, dtype, initial)
        if key is not None:
            _remember(_MASKED, key, plan)
    axes, kept, shape = plan
    dst = out.reshape(kept) if out is not None and keepdims else out
    r = _reduce(x, "masked_" + op, axes, others=(where,), out=dst, stream=stream,
                acc_dtype=acc_dtype)
    return out if out is not None else (r.reshape(shape) if keepdims else r)


def _masked_plan(x, axis, keepdims, dtype, initial):
    """_masked's checks of the arguments; (the reduced axes, the kept shape, the result's)"""
    a = describe(x)
    if dtype is not None and dtype_name(dtype) != a.dtype:
        raise InvalidRequest("RJ_EINVAL", f"dtype: {dtype!r} with where= (the masked reductions "
                             f"keep x's dtype {a.dtype}; convert x first)")
    if initial is not None:
        raise InvalidRequest("RJ_EINVAL", "initial: not with where= (add it to the result)")
    axes = normalize_axes(_axis_arg(axis), len(a.shape))
    kept = kept_shape(a.shape, axes)
    shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape)) if keepdims else kept
    return axes, kept, shape


def sum(x: Any, /, *, axis: Axis = None, dtype: DType = None, keepdims: bool = False,
        out: Any = None, initial: Any = None, where: Any = None, stream: Any = None,
        acc_dtype: Optional[str] = None) -> Any:
    """NumPy's sum: 32-bit integers and bools sum in 64 bits unless dtype= says otherwise;
    initial is added; acc_dtype="f64" accumulates floats in float64 with x's dtype kept;
    where= (a mask of any dtype, broadcast to x's shape) sums the selected elements in one
    pass, in x's dtype (op masked_sum)."""
    if where is not None:
        return _masked("sum", x, axis, keepdims, dtype, out, initial, where, stream, acc_dtype)
    return _reduction("sum", x, axis, keepdims, dtype, out, initial, None, stream, acc_dtype)


def prod(x: Any, /, *, axis: Axis = None, dtype: DType = None, keepdims: bool = False,
         out: Any = None, initial: Any = None, stream: Any = None,
         acc_dtype: Optional[str] = None) -> Any:
    """NumPy's prod (the dtypes as sum's)."""
    return _reduction("prod", x, axis, keepdims, dtype, out, initial, None, stream, acc_dtype)


def max(x: Any, /, *, axis: Axis = None, keepdims: bool = False, out: Any = None,
        initial: Any = None, stream: Any = None) -> Any:
    """NumPy's max (amax): NaN propagates; an empty axis is an error unless initial= is given."""
    return _reduction("max", x, axis, keepdims, None, out, initial, None, stream)


def min(x: Any, /, *, axis: Axis = None, keepdims: bool = False, out: Any = None,
        initial: Any = None, stream: Any = None) -> Any:
    """NumPy's min (amin)."""
    return _reduction("min", x, axis, keepdims, None, out, initial, None, stream)


def mean(x: Any, /, *, axis: Axis = None, dtype: DType = None, keepdims: bool = False,
         out: Any = None, where: Any = None, stream: Any = None,
         acc_dtype: Optional[str] = None) -> Any:
    """NumPy's mean: integers in float64; NaN for an empty reduction.  where= (a mask of any
    dtype, broadcast to x's shape; float x) divides the selected elements' sum by their count,
    NaN where the mask selects none, in one pass (op masked_mean)."""
    if where is not None:
        return _masked("mean", x, axis, keepdims, dtype, out, None, where, stream, acc_dtype)
    return _reduction("mean", x, axis, keepdims, dtype, out, None, None, stream, acc_dtype)


def var(x: Any, /, *, axis: Axis = None, dtype: DType = None, keepdims: bool = False,
        out: Any = None, correction: Optional[int] = None, ddof: Optional[int] = None,
        stream: Any = None) -> Any:
    """NumPy's var: divides by N - correction (ddof=, its NumPy name; default 0)."""
    return _reduction("var", x, axis, keepdims, dtype, out, None, _corr(correction, ddof), stream)


def std(x: Any, /, *, axis: Axis = None, dtype: DType = None, keepdims: bool = False,
        out: Any = None, correction: Optional[int] = None, ddof: Optional[int] = None,
        stream: Any = None) -> Any:
    """NumPy's std: the square root of var."""
    return _reduction("std", x, axis, keepdims, dtype, out, None, _corr(correction, ddof), stream)


def argmax(x: Any, /, *, axis: Axis = None, keepdims: bool = False, out: Any = None,
           stream: Any = None) -> Any:
    """NumPy's argmax: int64 indices (the first of ties, the first NaN's), row-major over the
    reduced dims (axis None: the flattened array); an empty axis is an error."""
    return _reduction("argmax", x, axis, keepdims, None, out, None, None, stream)


def argmin(x: Any, /, *, axis: Axis = None, keepdims: bool = False, out: Any = None,
           stream: Any = None) -> Any:
    """NumPy's argmin."""
    return _reduction("argmin", x, axis, keepdims, None, out, None, None, stream)


def logsumexp(x: Any, /, *, axis: Axis = None, dtype: DType = None, keepdims: bool = False,
              out: Any = None, stream: Any = None) -> Any:
    """log(sum(exp(x))) without overflow (scipy.special.logsumexp, torch.logsumexp); integers
    in float64; -inf for an empty reduction."""
    return _reduction("logsumexp", x, axis, keepdims, dtype, out, None, None, stream)


def all(x: Any, /, *, axis: Axis = None, keepdims: bool = False, out: Any = None,
        stream: Any = None) -> Any:
    """NumPy's all: bool, True where every element is non-zero (NaN counts as true)."""
    return _reduction("all", x, axis, keepdims, None, out, None, None, stream)


def any(x: Any, /, *, axis: Axis = None, keepdims: bool = False, out: Any = None,
        stream: Any = None) -> Any:
    """NumPy's any: bool, True where some element is non-zero."""
    return _reduction("any", x, axis, keepdims, None, out, None, None, stream)
