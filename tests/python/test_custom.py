"""redjit.Custom (op custom: a combine given as LLVM IR text) from Python: the requests it builds,
its refusals, compiles and explain without a GPU; on a GPU (skipped without torch or a GPU) a
Welford state against torch's float64 variance, an argmax state, a non-commutative matrix state
in index order and an f16 max; redjit.treduce with a Custom (a Welford state, an f16 add).
Run: pytest tests/python/test_custom.py, or python3 tests/python/test_custom.py [NAME...]."""
import ctypes

import _runner
from _runner import raises

_runner.setup_path()
import redjit  # noqa: E402
from redjit import _arrays  # noqa: E402

try:
    import pytest
    skip = pytest.skip
except ImportError:
    skip = _runner.skip

WF = "{ i64, double, double }"
WELFORD = f"""
define {WF} @wlift(float %x, i64 %i) {{
  %d = fpext float %x to double
  %a = insertvalue {WF} {{ i64 1, double 0.0, double 0.0 }}, double %d, 1
  ret {WF} %a
}}
define {WF} @wcomb({WF} %a, {WF} %b) {{
  %na = extractvalue {WF} %a, 0
  %nb = extractvalue {WF} %b, 0
  %ma = extractvalue {WF} %a, 1
  %mb = extractvalue {WF} %b, 1
  %qa = extractvalue {WF} %a, 2
  %qb = extractvalue {WF} %b, 2
  %n = add i64 %na, %nb
  %fa = sitofp i64 %na to double
  %fb = sitofp i64 %nb to double
  %fn = sitofp i64 %n to double
  %d = fsub double %mb, %ma
  %r = fdiv double %fb, %fn
  %dr = fmul double %d, %r
  %m = fadd double %ma, %dr
  %dd = fmul double %d, %dr
  %c = fmul double %dd, %fa
  %q0 = fadd double %qa, %qb
  %q = fadd double %q0, %c
  %s0 = insertvalue {WF} undef, i64 %n, 0
  %s1 = insertvalue {WF} %s0, double %m, 1
  %s2 = insertvalue {WF} %s1, double %q, 2
  %ea = icmp eq i64 %na, 0
  %t = select i1 %ea, {WF} %b, {WF} %s2
  %eb = icmp eq i64 %nb, 0
  %u = select i1 %eb, {WF} %a, {WF} %t
  ret {WF} %u
}}
define double @wfin({WF} %s) {{
  %n = extractvalue {WF} %s, 0
  %q = extractvalue {WF} %s, 2
  %n1 = sub i64 %n, 1
  %f = sitofp i64 %n1 to double
  %v = fdiv double %q, %f
  ret double %v
}}
"""

AF = "{ float, i64 }"
ARGMAX = f"""
define {AF} @alift(float %x, i64 %i) {{
  %a = insertvalue {AF} undef, float %x, 0
  %b = insertvalue {AF} %a, i64 %i, 1
  ret {AF} %b
}}
define {AF} @acomb({AF} %a, {AF} %b) {{
  %va = extractvalue {AF} %a, 0
  %vb = extractvalue {AF} %b, 0
  %ia = extractvalue {AF} %a, 1
  %ib = extractvalue {AF} %b, 1
  %gt = fcmp ogt float %va, %vb
  %eq = fcmp oeq float %va, %vb
  %lt = icmp slt i64 %ia, %ib
  %tie = and i1 %eq, %lt
  %ta = or i1 %gt, %tie
  %r = select i1 %ta, {AF} %a, {AF} %b
  ret {AF} %r
}}
"""

# 2x2 matrices mod 2^32, lift(x, i) = [[x, i], [1, 0]]: associative, not commutative
MF = "{ i32, i32, i32, i32 }"
MATRIX = f"""
define {MF} @mlift(i32 %x, i64 %i) {{
  %t = trunc i64 %i to i32
  %a = insertvalue {MF} {{ i32 0, i32 0, i32 1, i32 0 }}, i32 %x, 0
  %b = insertvalue {MF} %a, i32 %t, 1
  ret {MF} %b
}}
define {MF} @mmul({MF} %a, {MF} %b) {{
""" + "".join(f"  %a{k} = extractvalue {MF} %a, {k}\n  %b{k} = extractvalue {MF} %b, {k}\n"
              for k in range(4)) + f"""
  %p0 = mul i32 %a0, %b0
  %q0 = mul i32 %a1, %b2
  %c0 = add i32 %p0, %q0
  %p1 = mul i32 %a0, %b1
  %q1 = mul i32 %a1, %b3
  %c1 = add i32 %p1, %q1
  %p2 = mul i32 %a2, %b0
  %q2 = mul i32 %a3, %b2
  %c2 = add i32 %p2, %q2
  %p3 = mul i32 %a2, %b1
  %q3 = mul i32 %a3, %b3
  %c3 = add i32 %p3, %q3
  %s0 = insertvalue {MF} undef, i32 %c0, 0
  %s1 = insertvalue {MF} %s0, i32 %c1, 1
  %s2 = insertvalue {MF} %s1, i32 %c2, 2
  %s3 = insertvalue {MF} %s2, i32 %c3, 3
  ret {MF} %s3
}}
"""

HMAX = """
define half @hmax(half %a, half %b) {
  %g = fcmp ogt half %a, %b
  %c = select i1 %g, half %a, half %b
  ret half %c
}
"""


def welford():
    return redjit.Custom(WELFORD, "wcomb", identity=[0, 0.0, 0.0], commutative=True,
                         state=["i64", "f64", "f64"], lift="wlift", finish="wfin", result=2)


def argmax(commutative=True):
    return redjit.Custom(ARGMAX, "acomb", identity=["0xff800000", "0x7fffffffffffffff"],
                         commutative=commutative, state=["f32", "i64"], lift="alift", result=1)


def matrix():
    return redjit.Custom(MATRIX, "mmul", identity=[1, 0, 0, 1], state=["i32"] * 4,
                         lift="mlift", result=1)


# ------------------------------------------------------------------ no GPU needed
def test_request_building():
    w = welford()
    req = _arrays.tensor_request([64, 1000], None, (1,), "f32", w)
    assert req["op"] == "custom" and req["dtype"] == "f32"
    c = req["combine"]
    assert c["function"] == "wcomb" and c["lift"] == "wlift" and c["finish"] == "wfin"
    assert c["result"] == 2 and c["commutative"] is True and "identity" not in c
    assert [f["dtype"] for f in c["state"]] == ["i64", "f64", "f64"]
    canon = redjit.canonical(req)
    assert canon["combine"]["state"][1] == {"dtype": "f64", "identity": "0x0"}, canon
    assert w == welford() and hash(w) == hash(welford()) and w != argmax() and w != "custom"
    assert w.out_dtype("f32") == "f64" and argmax().out_dtype("f32") == "i64"
    s = redjit.Custom(HMAX, "hmax", identity="0xfc00", commutative=True)
    req = _arrays.tensor_request([8, 8], None, (0,), "f16", s)
    assert req["combine"] == {"ir": HMAX, "function": "hmax", "identity": "0xfc00",
                              "commutative": True}
    assert s.out_dtype("f16") == "f16"
    assert "state=['i64', 'f64', 'f64']" in repr(w)


def test_python_refusals():
    cases = [
        (lambda: redjit.Custom("", "f", identity=0), "combine.ir"),
        (lambda: redjit.Custom(HMAX, "hmax"), "combine.identity: required"),
        (lambda: redjit.Custom(HMAX, "hmax", identity=0, lift="l"), "combine.lift: applies"),
        (lambda: redjit.Custom(HMAX, "hmax", identity=0, result=1), "combine.result: applies"),
        (lambda: redjit.Custom(HMAX, "hmax", identity=float("nan")), "NaN"),
        (lambda: redjit.Custom(ARGMAX, "acomb", identity=[0] * 5, state=["f32"] * 5, lift="a"),
         "combine.state: 5 fields"),
        (lambda: redjit.Custom(ARGMAX, "acomb", identity=[0, 0], state=["f32", "f8"], lift="a"),
         "combine.state[1].dtype: unknown value 'f8'"),
        (lambda: redjit.Custom(ARGMAX, "acomb", identity=[0], state=["f32", "i64"], lift="a"),
         "identity must be a list of 2"),
        (lambda: redjit.Custom(ARGMAX, "acomb", identity=[0, 0], state=["f32", "i64"]),
         "combine.lift: required"),
        (lambda: redjit.Custom(ARGMAX, "acomb", identity=[0, 0], state=["f32", "i64"], lift="a",
                               result=2), "combine.result: 2"),
    ]
    for fn, want in cases:
        e = raises(redjit.RedjitError, fn)
        assert e.status == "RJ_EINVAL" and want in e.message, (want, e.message)


def test_library_refusals_name_fields():
    # the library's checks: a field's identity, the IR's types against the declared state
    bad = redjit.Custom(ARGMAX, "acomb", identity=[0.1, 0], state=["f32", "i64"], lift="alift")
    e = raises(redjit.RedjitError, redjit.canonical,
               _arrays.tensor_request([4, 100], None, (1,), "f32", bad))
    assert "combine.state[0].identity: not exactly representable as f32" in e.message, e.message
    wrong = redjit.Custom(ARGMAX, "acomb", identity=[0, 0], state=["f32", "i32"], lift="alift",
                          commutative=True)
    e = raises(redjit.RedjitError, redjit.compile,
               _arrays.tensor_request([4, 100], None, (1,), "f32", wrong), target="sm_90")
    assert "combine.state[1]: field 1 of combine.function \"acomb\"'s state is i64, the " \
        "request declares i32" in e.message, e.message


def test_compile_and_explain():
    for op, shape, axis, dt, variant in (
            (welford(), [64, 1000], 1, "f32", "tensor_rows"),
            (argmax(), [1000, 64], 0, "f32", "tensor_cols"),
            (argmax(False), [64, 1000], 1, "f32", "tensor_ordered"),
            (matrix(), [5, 333], 1, "i32", "tensor_ordered")):
        req = _arrays.tensor_request(shape, None, (axis,), dt, op)
        text = redjit.explain(req, target="sm_90")
        assert f"{variant} prio=" in text and "chosen" in text, text
        k = redjit.compile(req, target="sm_90")
        assert k.variant == variant, (k.variant, variant)
        body = k.ptx[k.ptx.find("// Generated by LLVM"):]
        assert "call" not in body
        n = body.count("shfl.sync.bfly.b32")
        fields = len(op.combine()["state"])
        per = {"wcomb": 6, "acomb": 3, "mmul": 4}[op.combine()["function"]]
        assert variant == "tensor_cols" or (n > 0 and n % per == 0), (variant, n, fields)


def test_values_without_gpu():
    e = raises(redjit.RedjitError, redjit.reduce_values, None, "max")
    assert e.status == "RJ_EINVAL" and "op: reduce_values takes" in e.message
    req = _arrays.tensor_request([64, 1000], None, (1,), "f32", "argmax")
    req["values"] = True
    k = redjit.compile(req, target="sm_90")
    assert k.ptx.count(".param .u64") == 3  # src, dst, values
    req["op"] = "max"
    e = raises(redjit.RedjitError, redjit.compile, req, target="sm_90")
    assert "values: applies only to op" in e.message


class _CAI:
    """A __cuda_array_interface__ array that is no array (checks before any GPU work)."""

    def __init__(self, shape, typestr="<f4", ptr=0x7f0000000000):
        self.__cuda_array_interface__ = {"version": 3, "shape": shape, "typestr": typestr,
                                         "strides": None, "data": (ptr, False)}


def test_treduce_custom_without_gpu():
    # a Custom's combine into rj_treduce_group: the library's bits for every identity
    from redjit import _custom, _lib
    g = _lib.TreduceGroup()
    keep = _custom.fill_group(g, welford(), "f32", redjit.canonical)
    assert g.combine.ir == keep and g.combine.fn == b"wcomb" and g.combine.commutative == 1
    assert g.combine.nfields == 3 and list(g.combine.fields)[:3] == [6, 3, 3]  # i64 f64 f64
    assert list(g.combine.field_identity)[:3] == [0, 0, 0]
    assert g.combine.lift == b"wlift" and g.combine.finish == b"wfin" and g.combine.result == 2
    g = _lib.TreduceGroup()
    _custom.fill_group(g, redjit.Custom(HMAX, "hmax", identity=-65504, commutative=True), "f16",
                       redjit.canonical)
    assert g.combine.nfields == 0 and g.combine.identity == 0xfbff and g.combine.fn == b"hmax"
    # the library's refusals reach the caller, naming the field
    bad = redjit.Custom(HMAX, "hmax", identity=0.1, commutative=True)
    e = raises(redjit.RedjitError, _custom.fill_group, _lib.TreduceGroup(), bad, "f16",
               redjit.canonical)
    assert "combine.identity" in e.message, e.message
    # the destination's dtype: a struct state's field result's
    x = _CAI((64, 32))
    e = raises(redjit.RedjitError, redjit.treduce, [x, x], _CAI((64, 32)), op=welford())
    assert e.status == "RJ_EINVAL" and "dst: dtype f32, expected f64" in e.message, e.message
    e = raises(redjit.RedjitError, redjit.treduce, [x, x], _CAI((64, 32), "<f8"), op="sum")
    assert "dst: dtype f64, expected f32" in e.message, e.message
    if _has_gpu():
        return  # the fake pointers would reach the GPU
    e = raises(redjit.RedjitError, redjit.treduce, [x, x], _CAI((64, 32), "<f8"), op=welford())
    assert e.status == "RJ_ENODEV", e  # validated, then no GPU


def _has_gpu():
    try:
        c = redjit._ctx()
        n = ctypes.c_int()
        return c.L.rj_device_count(c.ptr, ctypes.byref(n)) == 0 and n.value > 0
    except redjit.RedjitError:
        return False


# ------------------------------------------------------------------ on a GPU (torch)
def _torch():
    try:
        import torch
    except ImportError as e:
        skip(f"torch is not importable ({e})")
    if not torch.cuda.is_available() or not _has_gpu():
        skip("no CUDA GPU")
    return torch


def test_gpu_welford():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(1)
    for shape, axis in (((64, 1000), 1), ((1000, 64), 0), ((7, 100003), 1), ((100003,), 0)):
        x = torch.randn(shape, device="cuda", generator=g, dtype=torch.float32)
        y = redjit.reduce(x, welford(), axis)
        assert y.dtype == torch.float64
        want = x.double().var(dim=axis)
        assert torch.allclose(y, want, rtol=1e-10, atol=0), (shape, (y - want).abs().max())
        y2 = redjit.reduce(x, welford(), axis)  # the memo's launch
        assert torch.equal(y, y2)


def test_gpu_argmax_state():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(2)
    for comm in (True, False):
        for shape, axis in (((64, 1000), 1), ((1000, 64), 0), ((5, 33), 1)):
            x = torch.randint(0, 16, shape, device="cuda", generator=g).float()  # many ties
            y = redjit.reduce(x, argmax(comm), axis)
            assert y.dtype == torch.int64
            xc = x.cpu()
            m = xc.max(dim=axis, keepdim=True).values
            idx = torch.arange(shape[axis]).reshape([-1 if d == axis else 1
                                                     for d in range(len(shape))])
            first = torch.where(xc == m, idx, shape[axis]).min(dim=axis).values
            assert torch.equal(y.cpu(), first), (comm, shape, axis)


def test_gpu_matrix_order():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(3)
    x = torch.randint(-2**31, 2**31 - 1, (6, 777), device="cuda", generator=g, dtype=torch.int32)
    y = redjit.reduce(x, matrix(), 1)  # field 1 of the product (i32 bits)
    xs = x.cpu().tolist()
    for o, row in enumerate(xs):
        m = [1, 0, 0, 1]
        for i, v in enumerate(row):
            b = [v & 0xffffffff, i & 0xffffffff, 1, 0]
            m = [(m[0] * b[0] + m[1] * b[2]) & 0xffffffff, (m[0] * b[1] + m[1] * b[3]) & 0xffffffff,
                 (m[2] * b[0] + m[3] * b[2]) & 0xffffffff, (m[2] * b[1] + m[3] * b[3]) & 0xffffffff]
        got = int(y[o].item()) & 0xffffffff
        assert got == m[1], (o, got, m[1])


def test_gpu_half_max():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(4)
    x = torch.randn((64, 1000), device="cuda", generator=g).half()
    op = redjit.Custom(HMAX, "hmax", identity="0xfc00", commutative=True)
    for axis in (0, 1):
        y = redjit.reduce(x, op, axis)
        assert y.dtype == torch.float16 and torch.equal(y, x.max(dim=axis).values)


def test_gpu_reduce_values():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(5)
    x = torch.randint(0, 8, (64, 1000), device="cuda", generator=g).float()
    for op in ("argmax", "argmin"):
        for axis in (0, 1):
            i, v = redjit.reduce_values(x, op, axis)
            assert i.dtype == torch.int64 and v.dtype == torch.float32
            assert torch.equal(i, redjit.reduce(x, op, axis))
            assert torch.equal(v, x.max(dim=axis).values if op == "argmax"
                               else x.min(dim=axis).values)


def test_gpu_treduce_custom():
    torch = _torch()
    n = torch.cuda.device_count()
    devs = [i % n for i in range(5)]
    g = torch.Generator(device="cpu").manual_seed(6)
    host = [torch.randn(97, 33, generator=g) for _ in devs]
    srcs = [h.to(f"cuda:{d}") for h, d in zip(host, devs)]
    for d in range(n):
        torch.cuda.synchronize(d)
    dst = torch.empty(97, 33, device=f"cuda:{devs[2]}", dtype=torch.float64)
    for path in ("auto", "peer", "split"):
        info = redjit.treduce(srcs, dst, root=2, op=welford(), path=path)
        want = torch.stack([h.double() for h in host]).var(0)
        assert torch.allclose(dst.cpu(), want, rtol=1e-10, atol=0), (path, info)
    e = raises(redjit.RedjitError, redjit.treduce, srcs, dst, root=2, op=welford(), path="ring")
    assert e.status == "RJ_EUNSUPPORTED" and "struct state" in e.message, e.message
    # f16: a custom add keeps the state in f16; small multiples of 1/4 keep every sum exact
    halves = [(torch.randint(-8, 9, (64, 40), generator=g).float() / 4).half() for _ in devs]
    hs = [h.to(f"cuda:{d}") for h, d in zip(halves, devs)]
    hdst = torch.empty(64, 40, device=f"cuda:{devs[2]}", dtype=torch.float16)
    hadd = redjit.Custom("define half @hadd(half %a, half %b) {\n  %c = fadd half %a, %b\n"
                         "  ret half %c\n}\n", "hadd", identity="0x8000", commutative=True)
    for d in range(n):
        torch.cuda.synchronize(d)
    for path in ("auto", "peer", "staged", "ring"):
        redjit.treduce(hs, hdst, root=2, op=hadd, path=path)
        assert torch.equal(hdst.cpu(), sum(h.float() for h in halves).half()), path


if __name__ == "__main__":
    _runner.main(globals())
