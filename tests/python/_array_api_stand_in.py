"""The array-API functions with a torch stand-in (_fake_torch) and the launch replaced: run by
test_array_api.py in a process of its own.  Prints "array api ok"."""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _fake_torch  # noqa: E402

torch = _fake_torch.install(stream=0x5000)
import redjit  # noqa: E402

c = redjit._ctx()
calls, reqs = [], []
c.launch = lambda *a: calls.append(a) or 0
_parse = c.parse
c.parse = lambda r: (reqs.append(json.loads(r) if isinstance(r, (str, bytes)) else r),
                     _parse(r))[1]
T, f16, f32, f64 = torch.Tensor, torch.float16, torch.float32, torch.float64
i32, i64, u32, u64, bf16, tbool = (torch.int32, torch.int64, torch.uint32, torch.uint64,
                                   torch.bfloat16, torch.bool)


def expect(exc, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except exc as e:
        return e
    raise SystemExit(f"{fn.__name__}{a}{kw} did not raise {exc.__name__}")


x = T((4, 6, 8), f32)
# ---------------------------------------------------------------- axis forms and keepdims shapes
SHAPES = [(None, (), (1, 1, 1)), (0, (6, 8), (1, 6, 8)), (1, (4, 8), (4, 1, 8)),
          (-1, (4, 6), (4, 6, 1)), ((0, 2), (6,), (1, 6, 1)), ((2, 0), (6,), (1, 6, 1)),
          ((-1, -3), (6,), (1, 6, 1)), ([1, 2], (4,), (4, 1, 1)), ((0, 1, 2), (), (1, 1, 1))]
FUNCS = ("sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "logsumexp",
         "all", "any")
for name in FUNCS:
    fn = getattr(redjit, name)
    for axis, plain, kept in SHAPES:
        for keepdims, want in ((False, plain), (True, kept)):
            n = len(calls)
            r = fn(x, axis=axis, keepdims=keepdims)
            assert tuple(r.shape) == want, (name, axis, keepdims, r.shape, want)
            assert len(calls) == n + 1, (name, axis)  # one kernel launch, on torch's stream
            assert calls[-1][3] == x.data_ptr() and calls[-1][5] == 0x5000, calls[-1]
            rdt = {"argmax": i64, "argmin": i64, "all": tbool, "any": tbool}.get(name, f32)
            assert r.dtype is rdt, (name, r.dtype)
# the requests (of a new layout: a layout seen before is not parsed again): axes normalised,
# the op, var / std's correction 0 (NumPy's ddof default)
x9 = T((4, 6, 9), f32)
redjit.var(x9, axis=(2, 0))
assert reqs[-1]["axes"] == [0, 2] and reqs[-1]["op"] == "var" and reqs[-1]["correction"] == 0
redjit.std(x9, axis=1, ddof=1)
assert reqs[-1]["correction"] == 1 and reqs[-1]["op"] == "std"
redjit.var(x9, axis=1, correction=2)
assert reqs[-1]["correction"] == 2
expect(ValueError, redjit.var, x9, axis=1, correction=1, ddof=1)
expect(ValueError, redjit.var, x9, axis=1, correction=-1)
redjit.all(x9, axis=0)
assert reqs[-1]["op"] == "custom", reqs[-1]
assert reqs[-1]["combine"]["state"] == [{"dtype": "i32", "identity": 1}], reqs[-1]
assert "fcmp une float" in reqs[-1]["combine"]["ir"]
# ---------------------------------------------------------------- result dtypes, dtype=
for xd, name, want in ((i32, "sum", i64), (u32, "sum", u64), (i32, "prod", i64),
                       (i32, "mean", f64), (u64, "var", f64), (i64, "logsumexp", f64),
                       (f16, "sum", f16), (bf16, "mean", bf16), (i32, "max", i32),
                       (u32, "argmin", i64), (i64, "any", tbool)):
    xi = T((5, 7), xd)
    r = getattr(redjit, name)(xi, axis=1)
    assert r.dtype is want and tuple(r.shape) == (5,), (xd, name, r.dtype)
    if want not in (xd, i64, tbool) or (name in ("sum", "prod") and want is not xd):
        assert reqs[-1]["dtype"] == {i64: "i64", u64: "u64", f64: "f64"}[want], reqs[-1]
xh = T((5, 7), f16)
for spelled in ("float32", f32, "f32", "<f4"):  # f32 sums of f16, as NumPy's dtype=
    r = redjit.sum(xh, axis=1, dtype=spelled)
    assert r.dtype is f32 and reqs[-1]["dtype"] == "f32", (spelled, reqs[-1])
r = redjit.sum(xh, axis=1, acc_dtype="f64")  # redjit's: f64 accumulation, f16 kept
assert r.dtype is f16 and reqs[-1]["acc_dtype"] == "f64" and reqs[-1]["dtype"] == "f16"
r = redjit.sum(T((5, 7), i32), axis=1, dtype="int32")  # a 32-bit sum: no conversion
assert r.dtype is i32 and reqs[-1]["dtype"] == "i32"
expect(ValueError, redjit.mean, T((5, 7), f32), axis=1, dtype="int32")
expect(ValueError, redjit.sum, x, axis=1, dtype="float8")
# ---------------------------------------------------------------- out=
o = torch.empty((4, 1, 8), f32)
n = len(calls)
assert redjit.sum(x, axis=1, keepdims=True, out=o) is o
assert calls[-1][4] == o.data_ptr() and len(calls) == n + 1  # written in place
o = torch.empty((4, 8), f32)
assert redjit.max(x, axis=1, out=o) is o and calls[-1][4] == o.data_ptr()
e = expect(ValueError, redjit.sum, x, axis=1, out=torch.empty((4, 1, 8), f32))
assert "out: shape (4, 1, 8), expected (4, 8)" in e.message, e.message
e = expect(ValueError, redjit.max, x, axis=1, out=torch.empty((4, 8), f64))
assert "out: dtype f64, expected f32" in e.message, e.message
e = expect(ValueError, redjit.sum, x, axis=1, out=T((4, 8), f32, strides=(1, 4)))
assert "out: must be contiguous" in e.message, e.message
o = torch.empty((4, 8), f64)  # sum's out sets the dtype (NumPy: dtype=None takes out's)
assert redjit.sum(x, axis=1, out=o) is o and reqs[-1]["dtype"] == "f64"
ob = torch.empty((4, 8), tbool)
assert redjit.any(x, axis=1, out=ob) is ob and ob.op == "copy" and ob.value.op == "ne 0"
# ---------------------------------------------------------------- initial=
o = torch.empty((4, 8), f32)
n = len(calls)
redjit.sum(x, axis=1, initial=2.5, out=o)
assert o.op == "fill" and o.value == 2.5 and len(calls) == n + 1 and reqs[-1]["accum"] is True
r = redjit.max(x, axis=1, initial=-1.0)
assert r.op == "fill" and r.value == -1.0 and reqs[-1]["op"] == "max" and reqs[-1]["accum"]
# ---------------------------------------------------------------- zero-size and 0-d
n = len(calls)
for name, value in (("sum", 0), ("prod", 1), ("mean", math.nan), ("var", math.nan),
                    ("std", math.nan), ("logsumexp", -math.inf), ("all", True),
                    ("any", False)):
    for shape, axis, want in (((0,), None, ()), ((4, 0), 1, (4,)), ((4, 0), None, ()),
                              ((0, 3), 0, (3,))):
        r = getattr(redjit, name)(T(shape, f32), axis=axis)
        assert tuple(r.shape) == want and r.op == "full", (name, shape, axis, r.shape)
        assert r.value == value or (value != value and r.value != r.value), (name, r.value)
    r = getattr(redjit, name)(T((4, 0), f32), axis=1, keepdims=True)
    assert tuple(r.shape) == (4, 1), (name, r.shape)
r = redjit.sum(T((4, 0), i32), axis=1)
assert r.dtype is i64 and r.value == 0
r = redjit.reduce(T((4, 0), tbool), "sum", 1)  # the library's result dtype: bool sums in i64
assert r.dtype is i64 and r.value == 0, (r.dtype, r.value)
r = redjit.max(T((0, 3), f32), axis=1)  # an empty result: no reduction, no error
assert tuple(r.shape) == (0,)
r = redjit.max(T((4, 0), f32), axis=1, initial=7)
assert r.value == 7 and tuple(r.shape) == (4,)
r = redjit.sum(T((4, 0), f32), axis=1, initial=3)
assert r.value == 3
for fn in (redjit.max, redjit.min):
    e = expect(ValueError, fn, T((4, 0), f32), axis=1)
    assert "zero-size array to reduction operation" in e.message, e.message
    expect(ValueError, fn, T((0,), f32))
for fn in (redjit.argmax, redjit.argmin):
    e = expect(ValueError, fn, T((4, 0), f32), axis=1)
    assert "of an empty sequence" in e.message, e.message
    expect(ValueError, fn, T((0, 0), f32), axis=1)
    r = fn(T((0, 3), f32), axis=1)  # no reduced dim is empty: an empty result
    assert tuple(r.shape) == (0,) and r.dtype is i64
assert len(calls) == n  # none of these launched a kernel
# redjit.reduce of zero-size arrays: the same results, no kernel
for op, value in (("sum", 0), ("prod", 1), ("mean", math.nan), ("logsumexp", -math.inf),
                  ("and", -1), ("or", 0)):
    xe = T((4, 0), i64 if op in ("and", "or") else f32)
    r = redjit.reduce(xe, op, 1)
    assert tuple(r.shape) == (4,) and r.op == "full", (op, r.shape)
    assert r.value == value or (value != value and r.value != r.value), (op, r.value)
assert redjit.reduce(T((4, 0), u32), "and", 1).value == 2**32 - 1
assert tuple(redjit.reduce(T((0, 4), f32), "max", 1).shape) == (0,)
e = expect(ValueError, redjit.reduce, T((4, 0), f32), "max", 1)
assert "zero-size array to reduction operation maximum" in e.message, e.message
e = expect(ValueError, redjit.reduce, T((4, 0), f32), "argmin", 1)
assert "of an empty sequence" in e.message, e.message
o = torch.empty((4,), f32)
assert redjit.reduce(T((4, 0), f32), "sum", 1, out=o) is o and o.op == "copy" and o.value.value == 0
o = torch.empty((4,), f32)
assert redjit.reduce(T((4, 0), f32), "sum", 1, out=o, accum=True) is o and o.op is None
assert len(calls) == n
# 0-d: its one element, as axis=(): each element its own reduction (no kernel)
x0 = T((), f32)
for name in FUNCS:
    r = getattr(redjit, name)(x0)
    assert tuple(r.shape) == (), (name, r.shape)
    r = getattr(redjit, name)(x0, keepdims=True)
    assert tuple(r.shape) == (), (name, r.shape)
assert len(calls) == n
expect(ValueError, redjit.sum, x0, axis=0)  # a 0-d array has no axis 0
n = len(calls)
r = redjit.sum(x, axis=())
assert tuple(r.shape) == (4, 6, 8) and r.op == "to float32" and len(calls) == n
r = redjit.mean(T((3,), i32), axis=())
assert r.dtype is f64 and r.op == "to float64"
r = redjit.sum(x, axis=(), keepdims=True, initial=1)
assert tuple(r.shape) == (4, 6, 8) and r.op == "add"
r = redjit.any(x, axis=())
assert r.dtype is tbool and r.op == "ne 0"
r = redjit.var(x, axis=())
assert r.op == "full" and r.value == 0.0
r = redjit.var(x, axis=(), ddof=1)
assert r.value != r.value
r = redjit.argmax(x, axis=())
assert r.dtype is i64 and r.value == 0 and tuple(r.shape) == (4, 6, 8)
assert len(calls) == n
# ---------------------------------------------------------------- bool masks
m = T((6, 5), tbool)
n = len(calls)  # masks go to the kernels as they are: no conversion, no framework step
r = redjit.all(m, axis=0)
assert r.dtype is tbool and reqs[-1]["dtype"] == "bool" and reqs[-1]["op"] == "and"
r = redjit.any(m, axis=0)
assert r.dtype is tbool and reqs[-1]["dtype"] == "bool" and reqs[-1]["op"] == "or"
r = redjit.sum(m)
assert r.dtype is i64 and reqs[-1]["dtype"] == "bool" and reqs[-1]["op"] == "sum"
r = redjit.max(m, axis=1)
assert r.dtype is tbool and reqs[-1]["op"] == "max" and reqs[-1]["dtype"] == "bool"
assert len(calls) == n + 4 and r.op is None
# ---------------------------------------------------------------- small integers
i8, u16, i16 = torch.int8, torch.uint16, torch.int16
r = redjit.sum(T((6, 5), i8), axis=1)
assert r.dtype is i64 and reqs[-1]["dtype"] == "i8"  # NumPy's int64 sum, no conversion
r = redjit.mean(T((6, 5), u16), axis=0)
assert r.dtype is f64 and reqs[-1]["dtype"] == "u16"
r = redjit.any(T((6, 5), u16), axis=0)
assert r.dtype is tbool and reqs[-1]["op"] == "or" and r.op == "ne 0"
r = redjit.all(T((6, 5), i16), axis=0)  # signed: converted, then the 0 / 1 fold
assert r.dtype is tbool and reqs[-1]["dtype"] == "i32" and "icmp ne i32" in \
    reqs[-1]["combine"]["ir"]
r = redjit.logsumexp(T((6, 5), i8), axis=0)
assert r.dtype is f64 and reqs[-1]["dtype"] == "f64"
# ---------------------------------------------------------------- repeated calls (the fast path)
from redjit import _array_api  # noqa: E402
xr = T((8, 16), f32)
for i in range(3):
    n = len(calls)
    r = redjit.sum(xr, axis=1, keepdims=True)
    assert tuple(r.shape) == (8, 1) and r.dtype is f32 and len(calls) == n + 1
    o = torch.empty((8, 1), f32)
    assert redjit.sum(xr, axis=1, keepdims=True, out=o) is o and calls[-1][4] == o.data_ptr()
    r = redjit.any(xr, axis=0)
    assert r.dtype is tbool and tuple(r.shape) == (16,) and r.op == "ne 0"
    r = redjit.all(xr, axis=0, keepdims=True)
    assert r.dtype is tbool and tuple(r.shape) == (1, 16) and r.op == "ne 0"
    r = redjit.argmax(xr, axis=(0, 1), stream=0x55)
    assert r.dtype is i64 and r.shape == () and calls[-1][5] == 0x55
    e = expect(ValueError, redjit.sum, xr, axis=1, out=torch.empty((9,), f32))
    assert "out: shape (9,), expected (8,)" in e.message  # refused every time
    r = redjit.sum(T((8, 16), i32), axis=1)  # a conversion: never the fast path
    assert r.dtype is i64
fast = [k for k in _array_api._FAST if k[1] == (8, 16)]
assert len(fast) == 5 and all(k[3] is f32 for k in fast), fast
# ---------------------------------------------------------------- where=: the masked ops
ncalls = []
c.launch_n = lambda *a: ncalls.append(a) or 0
xm, mm = T((8, 16), f32), T((8, 16), torch.uint8)
described = []
_describe = _array_api.describe
_array_api.describe = lambda *a: described.append(a) or _describe(*a)
for _ in range(2):  # the second call takes the kept plan: x is not described again
    r = redjit.mean(xm, axis=1, where=mm, keepdims=True)
    assert tuple(r.shape) == (8, 1) and reqs[-1]["op"] == "masked_mean", (r.shape, reqs[-1])
    assert ncalls[-1][3] == xm.data_ptr() and ncalls[-1][5] == 1  # x, one other input
_array_api.describe = _describe
assert len(ncalls) == 2 and len(described) == 1, (len(ncalls), described)
plans = [k for k in _array_api._MASKED if k[1] == (8, 16)]
assert plans == [("mean", (8, 16), f32, 1, True, None)], plans
r = redjit.sum(xm, axis=0, where=mm)
assert tuple(r.shape) == (16,) and reqs[-1]["op"] == "masked_sum" and len(ncalls) == 3
for _ in range(2):  # a refusal is never kept
    e = expect(ValueError, redjit.mean, xm, axis=1, where=mm, dtype=f64)
    assert "dtype: " in e.message and "keep x's dtype f32" in e.message, e.message
    e = expect(ValueError, redjit.sum, xm, axis=1, where=mm, initial=1.0)
    assert e.message.startswith("initial: "), e.message
assert len([k for k in _array_api._MASKED if k[1] == (8, 16)]) == 2
# an axis equal to a kept one but not an int (1.0 == 1) is refused, before a call and after;
# in a tuple too; an integer of another type is an int
class Index:  # NumPy's integers have __index__
    def __index__(self):
        return 1


for fn, kw in ((redjit.mean, {"where": mm}), (redjit.sum, {})):
    fn(xm, axis=1, **kw)
    e = expect(ValueError, fn, xm, axis=1.0, **kw)
    assert e.message.startswith("axis: None, an int or a tuple of ints, not float"), e.message
    for bad in ((1.5,), (0, 1.0), [1.0]):
        e = expect(ValueError, fn, xm, axis=bad, **kw)
        assert e.message.startswith("axis[") and "an int, not float" in e.message, e.message
    r = fn(xm, axis=Index(), **kw)
    assert tuple(r.shape) == (8,), r.shape
    r = fn(xm, axis=(Index(),), **kw)
    assert tuple(r.shape) == (8,), r.shape
# ---------------------------------------------------------------- refusals, axes, streams
for bad, what in ((3, "axes[0]: 3 is outside -3..2"), ((0, 0), "given twice"),
                  ((-4,), "axes[0]: -4")):
    e = expect(ValueError, redjit.sum, x, axis=bad)
    assert what in e.message, (bad, e.message)
e = expect(ValueError, redjit.sum, x, axis=1.5)
assert e.message.startswith("axis: "), e.message
expect(TypeError, redjit.sum, x, 1)  # keyword-only
redjit.sum(x, axis=1, stream=0x77)
assert calls[-1][5] == 0x77
r = redjit.sum(x, axis=1, dtype="float64", stream=0x66)  # the conversion on that stream too
assert calls[-1][5] == 0x66
# NumPy's dtype objects and torch's spellings of the same dtype: one kernel
before = redjit.compile_count()
for d in ("float64", f64, "f64", float, "double"):
    redjit.sum(x, axis=2, dtype=d)
assert redjit.compile_count() - before <= 1
# ---------------------------------------------------------------- plain __cuda_array_interface__
class Cai:
    _next = 0x6f0000000000

    def __init__(self, shape, typestr="<f4"):
        Cai._next += 1 << 24
        self.shape = shape
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "strides": None,
                                         "data": (Cai._next, False), "version": 3}


xc = Cai((16, 32))
oc = Cai((16,))
assert redjit.sum(xc, axis=1, out=oc) is oc
assert calls[-1][4] == oc.__cuda_array_interface__["data"][0]
ok = Cai((16, 1))
assert redjit.max(xc, axis=1, keepdims=True, out=ok) is ok
assert calls[-1][4] == ok.__cuda_array_interface__["data"][0]  # written in place, seen as (16,)
e = expect(ValueError, redjit.sum, xc, axis=1)  # no framework to allocate out
assert "out: give out for a cai array" in e.message, e.message
e = expect(NotImplementedError, redjit.sum, Cai((16, 32), "<i4"), axis=1, out=Cai((16,), "<i8"))
assert e.status == "RJ_EUNSUPPORTED" and "sum with dtype i64 of a cai array" in e.message, e.message
e = expect(NotImplementedError, redjit.sum, Cai((16, 0)), axis=1, out=Cai((16,)))
assert "a zero-size reduction of a cai array" in e.message, e.message
# ---------------------------------------------------------------- a CuPy stand-in
import types  # noqa: E402

cp = types.ModuleType("cupy")
_TS = {"float16": "<f2", "float32": "<f4", "float64": "<f8", "int32": "<i4", "int64": "<i8",
       "uint32": "<u4", "uint64": "<u8", "bool": "|b1"}


class ndarray:
    __module__ = "cupy"
    _next = 0x5f0000000000

    def __init__(self, shape, dtype="float32", ptr=None):
        if ptr is None:
            ndarray._next += 1 << 24
            ptr = ndarray._next
        self.shape, self.dtype, self.ptr = tuple(shape), dtype, ptr
        self.device = types.SimpleNamespace(id=0)
        self.value = self.op = None
        self.__cuda_array_interface__ = {"shape": self.shape, "typestr": _TS[dtype],
                                         "strides": None, "data": (ptr, False), "version": 3}

    def astype(self, d, copy=True):
        r = ndarray(self.shape, d)
        r.value, r.op = self, f"astype {d}"
        return r

    def reshape(self, shape):
        r = ndarray(shape, self.dtype, self.ptr)
        r.value, r.op = self.value, self.op
        return r

    def fill(self, v):
        self.value, self.op = v, "fill"

    def __ne__(self, o):
        r = ndarray(self.shape, "bool")
        r.value, r.op = self, f"ne {o}"
        return r

    def __setitem__(self, k, v):
        self.value, self.op = v, "set"

    __hash__ = object.__hash__


def _full(shape, v, dtype=None):
    r = ndarray(shape, dtype)
    r.value, r.op = v, "full"
    return r


class _Dev:
    def __init__(self, i):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *e):
        pass


cp.ndarray, cp.int32, cp.int64, cp.uint32, cp.uint64 = ndarray, "int32", "int64", "uint32", "uint64"
cp.empty = lambda shape, dtype=None: ndarray(shape, dtype)
cp.full = _full
cp.cuda = types.SimpleNamespace(Device=_Dev, get_current_stream=lambda: types.SimpleNamespace(
    ptr=0x4000), ExternalStream=lambda p: _Dev(p))
sys.modules["cupy"] = cp
xg = ndarray((12, 40))
n = len(calls)
r = redjit.sum(xg, axis=1)
assert isinstance(r, ndarray) and r.shape == (12,) and r.dtype == "float32"
assert calls[-1][5] == 0x4000  # CuPy's current stream
r = redjit.mean(xg, axis=(0, 1), keepdims=True)
assert r.shape == (1, 1)
r = redjit.any(xg, axis=0)
assert r.dtype == "bool" and r.shape == (40,) and r.op == "ne 0" and r.value.dtype == "int32"
r = redjit.sum(ndarray((12, 40), "int32"), axis=1)  # NumPy's int64, by astype
assert r.dtype == "int64" and reqs[-1]["dtype"] == "i64"
r = redjit.var(ndarray((12, 0)), axis=1)
assert r.op == "full" and r.value != r.value and r.shape == (12,)
r = redjit.all(ndarray((12, 40), "bool"), axis=1, stream=0x42)
assert r.dtype == "bool" and calls[-1][5] == 0x42
r = redjit.sum(xg, axis=())
assert r.op == "astype float32" and r.shape == (12, 40)
o = ndarray((12, 1))
assert redjit.max(xg, axis=1, keepdims=True, out=o, initial=0.5) is o  # o's view filled
assert calls[-1][4] == o.ptr and reqs[-1]["accum"] is True
assert len(calls) == n + 6, len(calls) - n
print("array api ok")
