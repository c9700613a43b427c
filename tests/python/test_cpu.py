"""redjit's Python package without a GPU: the library search, inspection, compiles of every
example, errors, compile_ir, the request that reduce builds, and per-thread contexts.
Run: pytest tests/python/test_cpu.py, or python3 tests/python/test_cpu.py."""
import ctypes
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import _runner
from _runner import REPO, raises

_runner.setup_path()
import redjit  # noqa: E402
from redjit import _arrays, _lib  # noqa: E402

try:
    import pytest
    skip = pytest.skip
except ImportError:
    skip = _runner.skip

EXAMPLES = os.path.join(REPO, "examples")

IR = """
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define void @scale(ptr addrspace(1) %x, float %a, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %bid, %bdim
  %i = add i32 %base, %tid
  %in = icmp slt i32 %i, %n
  br i1 %in, label %body, label %done
body:
  %i64 = sext i32 %i to i64
  %p = getelementptr inbounds float, ptr addrspace(1) %x, i64 %i64
  %v = load float, ptr addrspace(1) %p
  %w = fmul float %v, %a
  store float %w, ptr addrspace(1) %p
  br label %done
done:
  ret void
}
"""


def _example_table():
    """(file, target, variant) rows of tests/cli/examples.sh's table (the one examples/README.md
    promises)."""
    text = open(os.path.join(REPO, "tests", "cli", "examples.sh")).read()
    block = re.search(r'table="\n(.*?)"', text, re.S).group(1)
    return [tuple(line.split()) for line in block.splitlines()
            if line.strip() and not line.startswith("#")]


def test_version():
    v = redjit.version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", v), v
    assert os.path.exists(redjit.library_path())


def test_variants():
    vs = redjit.variants()
    names = [v.name for v in vs]
    for n in ("tensor_rows", "tensor_cols", "tensor_generic", "shared", "treduce"):
        assert n in names
    assert [v.priority for v in vs] == sorted((v.priority for v in vs), reverse=True)
    for v in vs:
        assert v.kinds and v.summary and isinstance(v.priority, int)


def test_compile_examples():
    rows = _example_table()
    files = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".json"))
    assert sorted(r[0] for r in rows) == files, "tests/cli/examples.sh's table and examples/ differ"
    for f, target, variant in rows:
        text = open(os.path.join(EXAMPLES, f)).read()
        k = redjit.compile(text, target=target)
        assert ".entry" in k.ptx, f
        assert k.variant == variant, (f, k.variant, variant)
        assert k.target == target
        assert k.entry and k.entry in k.ptx
        assert "define" in k.llvm_ir and "define" in k.llvm_ir_optimized
        assert k.compile_ms >= 0
        chosen = [l.split()[0] for l in k.explain().splitlines() if " chosen" in l]
        assert chosen == [variant], (f, k.explain())
        # a dict works as well as JSON text, and hits the context's kernel cache
        n = redjit.compile_count()
        k2 = redjit.compile(json.loads(text), target=target)
        assert k2.ptx == k.ptx and redjit.compile_count() == n


def test_kernel_dims():
    k = redjit.compile(os.path.join(EXAMPLES, "seed000_shared.json") and
                       open(os.path.join(EXAMPLES, "seed000_shared.json")).read(), target="sm_90")
    assert len(k.grid) == 3 and len(k.block) == 3
    assert k.block[0] >= 32 and k.grid[0] >= 1
    assert "redjit.Kernel" in repr(k)


def test_explain_and_canonical():
    req = {"kind": "tensor", "op": "min", "dtype": "i32", "shape": [64, 32, 48], "axes": [0, 2]}
    text = redjit.explain(req, target="sm_90")
    assert "tensor_generic prio=5 chosen" in text, text
    c = redjit.canonical(req)
    assert c["kind"] == "tensor" and c["axes"] == [0, 2] and c["nan"] == "propagate"
    assert redjit.canonical(json.dumps(c)) == c
    assert redjit.canonical({**req, "axes": [-3, -1]})["kind"] == "tensor"
    # no variant takes it: the text still comes back, every line a rejection
    bad = {"kind": "tile", "op": "sum", "dtype": "f32", "scope": "cta", "threads": 128,
           "variant": "redux", "src": {"mem": "shared", "shape": [8, 64]},
           "dst": {"mem": "shared", "shape": [8]}}
    text = redjit.explain(bad, target="sm_90")
    assert "chosen" not in text and "redux" in text


def test_errors():
    e = raises(redjit.RedjitError, redjit.compile,
               {"kind": "tensor", "op": "max", "dtype": "f32", "shape": [4, 0]})
    assert e.status == "RJ_EINVAL" and "shape[1]" in e.message, e.message
    assert isinstance(e, RuntimeError) and str(e).startswith("RJ_EINVAL: ")
    e = raises(redjit.RedjitError, redjit.compile, {"kind": "tensor", "op": "avg"})
    assert e.status == "RJ_EINVAL" and "op" in e.message
    e = raises(redjit.RedjitError, redjit.compile, '{"kind": "tensor", "colour": 1}')
    assert e.status == "RJ_EINVAL" and "colour" in e.message
    e = raises(redjit.RedjitError, redjit.compile, "{not json")
    assert e.status == "RJ_EINVAL" and "malformed JSON" in e.message
    req = open(os.path.join(EXAMPLES, "tensor_rows.json")).read()
    e = raises(redjit.RedjitError, redjit.compile, req, target="sm_13")
    assert e.status == "RJ_ETARGET" and "sm_13" in e.message
    e = raises(redjit.RedjitError, redjit.explain, req, target="sm_13")
    assert e.status == "RJ_ETARGET"
    e = raises(redjit.RedjitError, redjit.canonical, {"kind": "tensor"})
    assert e.status == "RJ_EINVAL" and "required" in e.message
    # pickles with its fields (multiprocessing)
    import pickle
    e2 = pickle.loads(pickle.dumps(e))
    assert (e2.status, e2.message) == (e.status, e.message)


def test_arguments_refused():
    """Every argument the C library reads as an int or a C string is checked whole: no value cut
    to 32 bits, no text cut at a NUL, no value coerced; each error names the argument."""
    req = open(os.path.join(EXAMPLES, "tensor_rows.json")).read()
    for name in ("ptx_version", "device"):
        e = raises(redjit.RedjitError, redjit.compile, req, target="sm_90", **{name: 2**32 + 80})
        assert e.status == "RJ_EINVAL" and e.message.startswith(name + ": "), e.message
        e = raises(redjit.RedjitError, redjit.compile_ir, IR, "scale", **{name: -1})
        assert e.message.startswith(name + ": "), e.message
        e = raises(redjit.RedjitError, redjit.compile, req, **{name: "80"})
        assert isinstance(e, ValueError) and e.message.startswith(name + ": "), e
    e = raises(redjit.RedjitError, redjit.compile, req, target=90)
    assert e.message.startswith("target: expected a str"), e
    e = raises(redjit.RedjitError, redjit.compile, req, target="sm_90\0junk")
    assert e.message.startswith("target: holds a NUL"), e.message
    e = raises(redjit.RedjitError, redjit.compile_ir, IR, None, target="sm_90")
    assert e.message.startswith("entry: expected a str"), e
    e = raises(redjit.RedjitError, redjit.compile_ir, IR, "scale\0x", target="sm_90")
    assert e.message.startswith("entry: holds a NUL"), e.message
    for ir in (IR + "\0garbage", (IR + "\0garbage").encode()):
        e = raises(redjit.RedjitError, redjit.compile_ir, ir, "scale", target="sm_90")
        assert e.message.startswith("ir: the text holds a NUL character"), e.message
    add = "define float @add(float %a, float %b) {\n %c = fadd float %a, %b\n ret float %c\n}\n"
    e = raises(redjit.RedjitError, redjit.Custom, add, "add", 0, commutative="yes")
    assert e.message.startswith("combine.commutative: expected True or False"), e.message
    e = raises(redjit.RedjitError, redjit.Custom, add + "\0junk", "add", 0)
    assert e.message.startswith("combine.ir: holds a NUL"), e.message
    # a request's strings holding a NUL: the library refuses them, naming the field
    e = raises(redjit.RedjitError, redjit.compile, dict(json.loads(req), kind="tensor\0junk"))
    assert e.message.startswith("kind: a string holding a NUL"), e.message


def test_compile_ir():
    k = redjit.compile_ir(IR, "scale", target="sm_90")
    assert k.variant == "ir" and k.entry == "scale"
    assert ".entry scale" in k.ptx and "mul.rn.f32" in k.ptx
    assert k.grid == (0, 0, 0) and k.block == (0, 0, 0)
    assert "define" in k.llvm_ir_optimized
    # bytes of text, and an object whose str() is the module (llvmlite's ir.Module)
    class Module:
        def __str__(self):
            return IR
    assert redjit.compile_ir(IR.encode(), "scale", target="sm_90").ptx == k.ptx
    assert redjit.compile_ir(Module(), "scale", target="sm_90").ptx == k.ptx
    assert redjit.compile_ir(IR, "scale", target="sm_80", ptx_version=80).target == "sm_80"
    e = raises(redjit.RedjitError, redjit.compile_ir, IR, "nosuch", target="sm_90")
    assert "nosuch" in e.message, e.message
    e = raises(redjit.RedjitError, redjit.compile_ir, "define void @k( {", "k", target="sm_90")
    assert e.status.startswith("RJ_E")
    e = raises(redjit.RedjitError, k.explain)
    assert e.status == "RJ_EINVAL"
    # no GPU needed up to the launch: it reaches the driver (or runs, on a GPU machine)
    e = raises(redjit.RedjitError, k.launch, [0x1000, ctypes.c_float(2.0), ctypes.c_int32(4)])
    assert "grid" in e.message


def test_docs_example_ir():
    """docs/PYTHON.md's worked compile_ir example compiles (and is this file's IR)."""
    doc = open(os.path.join(REPO, "docs", "PYTHON.md")).read()
    ir = re.search(r'IR = """\n(.*?)"""', doc, re.S).group(1)
    assert ir.strip() == IR.strip()
    assert ".entry scale" in redjit.compile_ir(ir, "scale", target="sm_90").ptx


def test_tensor_request():
    A = _arrays
    ax = A.normalize_axes(None, 2)
    assert ax == (0, 1)
    assert A.tensor_request((4, 8), None, ax, "f32") == {
        "kind": "tensor", "op": "sum", "dtype": "f32", "shape": [4, 8], "axes": [0, 1]}
    assert A.normalize_axes(-1, 3) == (2,) and A.normalize_axes((2, -3), 3) == (0, 2)
    assert A.normalize_axes([1], 2) == (1,)
    e = raises(redjit.RedjitError, A.normalize_axes, 3, 3)
    assert e.status == "RJ_EINVAL" and "axes[0]" in e.message
    e = raises(redjit.RedjitError, A.normalize_axes, (0, -2), 2)
    assert "twice" in e.message
    # a transposed 8 x 4 view of a 4 x 8 array: strides in elements
    r = A.tensor_request((8, 4), (1, 8), (1,), "bf16", "max", nan="ignore", accum=True,
                         deterministic=False, dynamic=True)
    assert r == {"kind": "tensor", "op": "max", "dtype": "bf16", "shape": [8, 4],
                 "strides": [1, 8], "axes": [1], "nan": "ignore", "accum": True,
                 "deterministic": False, "dynamic": True}
    # row-major strides (size-1 dims' strides ignored) are left out
    assert "strides" not in A.tensor_request((4, 1, 8), (8, 99, 1), (0,), "f32")
    # a 0-d array is one element
    assert A.tensor_request((), None, (), "f64")["shape"] == [1]
    assert A.kept_shape((4, 5, 6), (1,)) == (4, 6) and A.kept_shape((4, 5), (0, 1)) == ()
    assert A.element_strides((32, 4), 4) == (8, 1)
    e = raises(redjit.RedjitError, A.element_strides, (32, 6), 4)
    assert e.status == "RJ_EINVAL" and "strides[1]" in e.message
    assert A.dtype_of_typestr("<f4") == "f32" and A.dtype_of_typestr("<u8") == "u64"
    assert A.dtype_of_typestr("<f2") == "f16" and A.dtype_of_typestr("<i4") == "i32"
    e = raises(redjit.RedjitError, A.dtype_of_typestr, "<c8")
    assert "typestr" in e.message
    # the requests reduce builds are valid and dispatch as expected
    t = redjit.explain(A.tensor_request((8, 4), (1, 8), (0,), "f32"), target="sm_90")
    assert "tensor_rows prio=30 chosen" in t, t  # reduced along its unit-stride dim
    t = redjit.explain(A.tensor_request((8, 4), (1, 8), (1,), "f32"), target="sm_90")
    assert "tensor_generic prio=5 chosen" in t, t
    t = redjit.explain(A.tensor_request((64, 512), None, (0,), "f32"), target="sm_90")
    assert "tensor_cols prio=30 chosen" in t, t
    t = redjit.explain(A.tensor_request((64, 512), None, (1,), "f32"), target="sm_90")
    assert "tensor_rows prio=30 chosen" in t, t
    # invariant: the field, the one variant whose tree is fixed by the reduced length
    r = A.tensor_request((64, 512), None, (1,), "f32", invariant=True)
    assert r["invariant"] is True and "invariant" not in A.tensor_request((4,), None, (0,), "f32")
    t = redjit.explain(r, target="sm_90")
    assert "tensor_generic prio=5 chosen" in t and "invariant: yes" in t, t


class FakeCAI:
    """A __cuda_array_interface__ array that is no array: reduce reaches the driver with it."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7f0000000000):
        self.__cuda_array_interface__ = {"version": 3, "shape": shape, "typestr": typestr,
                                         "strides": strides, "data": (ptr, False)}


def _has_gpu():
    try:
        c = redjit._ctx()
        n = ctypes.c_int()
        return c.L.rj_device_count(c.ptr, ctypes.byref(n)) == 0 and n.value > 0
    except redjit.RedjitError:
        return False


def test_reduce_without_gpu():
    if _has_gpu():
        skip("a GPU is present: FakeCAI's pointers would reach it (test_gpu.py covers reduce)")
    c = redjit._ctx()
    x, y = FakeCAI((64, 32)), FakeCAI((64,))
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 1, out=y)
    assert e.status == "RJ_ENODEV", e
    n, made = len(c.memo), redjit.compile_count()
    raises(redjit.RedjitError, redjit.reduce, x, "sum", 1, out=y)
    assert len(c.memo) == n and redjit.compile_count() == made  # the layout was found
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 0, out=y)
    assert e.status == "RJ_EINVAL" and "out: shape" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 1, out=FakeCAI((64,), "<f8"))
    assert "out: dtype" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 1, out=FakeCAI((64,), strides=(8,)))
    assert "contiguous" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 1)
    assert "give out" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, FakeCAI((64, 32), strides=(130, 4)), "sum", 1,
               out=y)
    assert e.status == "RJ_EINVAL" and "strides[0]" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x, "avg", 1, out=y)
    assert e.status == "RJ_EINVAL" and "op" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 2, out=y)
    assert "axes[0]" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, [1, 2, 3])
    assert "not a GPU array" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", None, out=FakeCAI((1,)))
    assert e.status == "RJ_ENODEV"  # a full reduction into a 1-element out is accepted
    e = raises(redjit.RedjitError, redjit.treduce, [x, FakeCAI((64, 32))], FakeCAI((64, 32)))
    assert e.status == "RJ_ENODEV", e
    e = raises(redjit.RedjitError, redjit.treduce, [x], FakeCAI((64, 32), "<f8"))
    assert "dtype" in e.message
    e = raises(redjit.RedjitError, redjit.treduce, [x], x, path="sideways")
    assert "path" in e.message


def test_fused_without_gpu():
    """Fused maps: the request built (others broadcast by stride 0, named ops), the arguments
    checked before any launch, then the driver reached (RJ_ENODEV)."""
    if _has_gpu():
        skip("a GPU is present: FakeCAI's pointers would reach it (test_gpu_fused.py covers it)")
    x, y = FakeCAI((64, 32)), FakeCAI((64,))
    for call in (lambda: redjit.dot(x, FakeCAI((64, 32), ptr=0x7f0000100000), 1, out=y),
                 lambda: redjit.dot(x, FakeCAI((32,), ptr=0x7f0000100000), 1, out=y),
                 lambda: redjit.norm(x, 2, 1, out=y),
                 lambda: redjit.norm(x, float("inf"), 1, out=y),
                 lambda: redjit.reduce(x, "sum", 1, others=(FakeCAI((64, 1), "<u4"),),
                                       map="where", out=y),
                 lambda: redjit.reduce(x, "sum", 1, epilogue="scale", scale=0.5, out=y)):
        e = raises(redjit.RedjitError, call)
        assert e.status == "RJ_ENODEV", e
    c = redjit._ctx()
    keys = [json.loads(k) for k in c.requests if '"others"' in k or '"map"' in k]
    row = [k for k in keys if k.get("others") == [{"dtype": "f32", "strides": [0, 1]}]]
    assert row and row[0]["op"] == "dot", keys
    col = [k for k in keys if k.get("others") == [{"dtype": "u32", "strides": [1, 0]}]]
    assert col and col[0]["map"] == "where", keys
    e = raises(redjit.RedjitError, redjit.dot, x, FakeCAI((3,)), 1, out=y)
    assert e.status == "RJ_EINVAL" and "others[0]: shape" in e.message
    e = raises(redjit.RedjitError, redjit.norm, x, 3, 1, out=y)
    assert e.status == "RJ_EINVAL" and "p: expected 1, 2" in e.message
    e = raises(redjit.RedjitError, redjit.dot, x, FakeCAI((64, 32), "<f8"), 1, out=y)
    assert "others[0].dtype" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 1, map="cube", out=y)
    assert "map: unknown value" in e.message
    e = raises(redjit.RedjitError, redjit.reduce, x, "dot", 1, others=(x,), accum=True, out=y)
    assert "not accum" in e.message


def _add_ir(tag):
    """An f32 add combine whose text differs by tag (another combine text, one kernel each)."""
    return (f"; {tag}\ndefine float @add(float %a, float %b) {{\n  %s = fadd float %a, %b\n"
            "  ret float %s\n}\n")


def test_kept_custom_requests():
    """A dynamic Custom layout's parsed request (kept by reduce's memo) reads its own combine text
    on every call, however many other combine texts the context parses meanwhile (the library
    keeps the 32 most recent): rj_reduce is replaced by a reader of the request it is given."""
    c = redjit._ctx()
    seen = []

    def reader(ctx, req, opts, src, dst, stream):
        text = ctypes.c_char_p()
        s = c.L.rj_request_canonical(c.ptr, req, ctypes.byref(text))
        seen.append(json.loads(text.value.decode())["combine"]["ir"] if s == 0 else None)
        return 0

    real, c.L.rj_reduce = c.L.rj_reduce, reader
    try:
        x, y = FakeCAI((64, 32)), FakeCAI((64,))
        kept = _add_ir("kept " + "k" * 200)
        for round in range(3):
            redjit.reduce(x, redjit.Custom(kept, "add", 0.0, True), 1, out=y, dynamic=True)
            assert seen[-1] == kept, (round, seen[-1][:40] if seen[-1] else seen[-1])
            for i in range(24):  # 72 other texts in all: the first two rounds' texts are gone
                other = redjit.Custom(_add_ir(f"other {round} {i} " + "o" * 200), "add", 0.0, True)
                redjit.canonical(redjit.tensor_request((8,), None, (0,), "f32", other))
        assert len(seen) == 3
    finally:
        c.L.rj_reduce = real
        c.drop_memo()  # its entries launch through reader


# ------------------------------------------------------------------ pins (rj_kernel_release)
def _pinned():
    return redjit.cache_stats()["kernels_pinned"]


def _req(n):
    return {"kind": "tensor", "op": "sum", "dtype": "f32", "shape": [4, n], "axes": [1]}


def test_borrowed_kernel_keeps_the_owners_pin():
    """A Kernel built with _owns_pin=False over another holder's kernel releases nothing when
    closed or dropped: the owner's pin (rj_kernel_release's count) stays until the owner goes."""
    gc.collect()  # other tests' Kernels in cycles: released now, not in the middle of this
    base = _pinned()
    owner = redjit.compile(_req(1007), target="sm_90")
    assert _pinned() == base + 1
    c = redjit._ctx()
    view = redjit.Kernel(c, owner._ptr, _owns_pin=False)
    assert view.variant == owner.variant and view.ptx == owner.ptx
    view.close()
    del view
    redjit.Kernel(c, owner._ptr, _owns_pin=False)  # dropped at once
    assert _pinned() == base + 1  # still the owner's one pin
    ptx = owner.ptx
    del owner  # its release is the last: one pin was taken, one released
    assert _pinned() == base and ptx
    # the default (a pin taken over) does release on drop: the test above can fail
    k = redjit.compile(_req(1007), target="sm_90")
    assert _pinned() == base + 1
    redjit.Kernel(c, k._ptr)  # takes over k's pin, and drops it at once
    assert _pinned() == base
    k._ptr = None  # its pin is gone: nothing more to release


def test_kernel_pins():
    """Each Kernel holds its own pin: two Kernels of one request share one kernel, pinned until
    both are gone; close() and a `with` block release at once; a closed Kernel says so."""
    base = _pinned()
    k1 = redjit.compile(_req(1001), target="sm_90")
    k2 = redjit.compile(_req(1001), target="sm_90")
    assert k1._ptr == k2._ptr and _pinned() == base + 1
    del k1
    assert _pinned() == base + 1  # k2's pin
    ptx = k2.ptx
    del k2
    assert _pinned() == base
    made = redjit.compile_count()
    k = redjit.compile(_req(1001), target="sm_90")  # unpinned but cached: found, pinned again
    assert redjit.compile_count() == made and k.ptx == ptx and _pinned() == base + 1
    k.close()
    k.close()  # a second close does nothing
    assert _pinned() == base
    for f in (lambda: k.ptx, lambda: k.load(), lambda: k.launch([0])):
        e = raises(redjit.RedjitError, f)
        assert e.status == "RJ_EINVAL" and "closed" in e.message, e
    with redjit.compile(_req(1002), target="sm_90") as k3:
        assert ".entry" in k3.ptx and _pinned() == base + 1
    assert _pinned() == base
    ir = IR.replace("@scale", "@scale_pins")  # a module no other test compiled
    k4 = redjit.compile_ir(ir, "scale_pins", target="sm_90")
    k5 = redjit.compile_ir(ir, "scale_pins", target="sm_90")
    assert k4._ptr == k5._ptr and _pinned() == base + 1
    del k4, k5
    assert _pinned() == base


def _in_thread(fn):
    """fn() in a new thread (a context of its own); its result, or its exception raised here."""
    out = {}

    def run():
        try:
            out["r"] = fn()
        except BaseException as e:  # noqa
            out["e"] = e

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if "e" in out:
        raise out["e"]
    return out["r"]


def test_released_kernels_evicted():
    """Under a bound of 2 kernels, five Kernels stay while held (pinned: not counted); dropped,
    the cache keeps two of them and evicts the others."""
    def work():
        c = redjit._ctx()
        f = c.L.rj_ctx_set_memory_cache
        f.argtypes, f.restype = [ctypes.c_void_p, ctypes.c_longlong], ctypes.c_int
        assert f(c.ptr, 2) == 0
        ks = [redjit.compile(_req(1100 + i), target="sm_90") for i in range(5)]
        held = redjit.cache_stats()
        ks.clear()
        return held, redjit.cache_stats()

    held, dropped = _in_thread(work)
    assert (held["kernels"], held["kernels_pinned"], held["memory_evictions"]) == (5, 5, 0), held
    assert (dropped["kernels"], dropped["kernels_pinned"], dropped["memory_evictions"]) == \
        (2, 0, 3), dropped


def test_kernel_dropped_in_another_thread():
    """A Kernel dropped in another thread does not call into this thread's context from there:
    its pin waits, and this thread releases it at its next call."""
    base = _pinned()
    box = [redjit.compile(_req(1003), target="sm_90")]
    assert _pinned() == base + 1
    t = threading.Thread(target=box.clear)
    t.start()
    t.join()
    c = redjit._ctx()
    assert len(c.deferred) == 1
    assert _pinned() == base  # cache_stats released it first
    assert not c.deferred


def test_memo_pins():
    """reduce's memo holds one pin per kernel it launches (a Kernel of the same request its own),
    released when the memo is dropped."""
    if _has_gpu():
        skip("a GPU is present: FakeCAI's pointers would reach it (test_gpu.py covers it)")
    c = redjit._ctx()
    c.drop_memo()
    base = _pinned()
    x, y = FakeCAI((64, 48)), FakeCAI((64,))
    e = raises(redjit.RedjitError, redjit.reduce, x, "sum", 1, out=y)
    assert e.status == "RJ_ENODEV", e
    assert _pinned() == base + 1 and len(c.pins) == 1
    raises(redjit.RedjitError, redjit.reduce, x, "sum", 1, out=y)  # found: no second pin
    assert len(c.pins) == 1
    k = redjit.compile(redjit.tensor_request((64, 48), None, (1,), "f32"))
    assert k._ptr == c.pins[0] and _pinned() == base + 1
    c.drop_memo()
    assert _pinned() == base + 1 and not c.pins  # k's pin
    del k
    assert _pinned() == base


_SHUTDOWN = r"""
import sys, threading
sys.path.insert(0, sys.argv[1])
import redjit
R = {"kind": "tensor", "op": "sum", "dtype": "f32", "shape": [4, 70], "axes": [1]}
keep = [redjit.compile(R, target="sm_90") for _ in range(3)]  # module globals at exit


class Cycle:
    pass


c = Cycle()
c.me, c.k = c, redjit.compile(R, target="sm_90")  # a cycle: collected late, or never
del c


def other():
    global theirs
    theirs = redjit.compile(dict(R, shape=[4, 77]), target="sm_90")  # another thread's context


t = threading.Thread(target=other)
t.start()
t.join()
print("done")
"""


def test_kernels_at_shutdown():
    """Kernels alive at interpreter exit (globals, a reference cycle, another thread's) call
    nothing in a freed context: the process exits cleanly."""
    r = subprocess.run([sys.executable, "-c", _SHUTDOWN, os.path.join(REPO, "tools", "python")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "done", (r.returncode, r.stdout, r.stderr)
    assert "Exception ignored" not in r.stderr and "Error" not in r.stderr, r.stderr


_IMPORT_ONLY = r"""
import sys
sys.path.insert(0, sys.argv[1])
before = set(sys.modules)
import redjit
print(" ".join(sorted(set(sys.modules) - before)))
"""


def test_import_loads_only_what_a_call_needs():
    """import redjit imports ctypes and its own modules: no json, typing, numbers, threading or
    collections (a call of plain requests needs none), no torch / CuPy / Numba / NumPy (detected
    on first sight)."""
    r = subprocess.run([sys.executable, "-S", "-c", _IMPORT_ONLY,  # -S: site loads nothing first
                        os.path.join(REPO, "tools", "python")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    added = set(r.stdout.split())
    assert "redjit._lib" in added, added
    for m in ("json", "typing", "numbers", "threading", "collections", "functools", "torch", "cupy",
              "numba", "numpy", "tempfile", "re"):
        assert m not in added, (m, sorted(added))


def test_request_text_is_json_dumps():
    """The request text built without json is json.dumps's, byte for byte, and what it cannot
    spell goes to json itself."""
    cases = [_arrays.tensor_request([4099, 1000], None, [1], "f32"),
             _arrays.tensor_request([7, 3, 5], [15, 1, 3], [0, 2], "bf16", "var", "omit", True,
                                    False, True, 0, "f64"),
             {"kind": "tensor", "x": [1.5, -0.0, 1e300, 2**70, None, True, False, (1, 2)]},
             {"s": 'a "quoted" \\ name\n', "u": "\u00e9", "f": float("nan")}, {1: 2, 3: []}, {}]
    for c in cases:
        for sort_keys in (False, True):
            assert _lib.dumps(c, sort_keys) == json.dumps(c, sort_keys=sort_keys), c
    raises(TypeError, _lib.dumps, {"x": object()})


_TORCH_LANE = r"""
import sys
sys.path.insert(0, sys.argv[1])
import _fake_torch
torch = _fake_torch.install(stream=0x5000)
import redjit
c = redjit._ctx()
calls = []
c.launch = lambda *a: calls.append(("launch",) + a) or 0  # before the first reduce: kept in entries
c.L.rj_reduce = lambda *a: calls.append(("reduce",) + a) or 0
f32 = torch.float32


def last():
    return calls[-1]


x, y = torch.Tensor((64, 32), f32), torch.Tensor((64,), f32)
for i in range(3):  # the first call prepares, the second stores the torch key, the third uses it
    assert redjit.reduce(x, "sum", 1, out=y) is y
assert redjit.compile_count() == 1 and len(calls) == 3, (redjit.compile_count(), calls)
k = calls[0][2]
for cl in calls:
    assert cl[0] == "launch" and cl[1] is c.vptr and cl[2] is k and cl[3] == 0, cl
    assert cl[4] == x.data_ptr() and cl[5] == y.data_ptr() and cl[6] == 0x5000, cl
kern = redjit.Kernel(c, k.value, _owns_pin=False)  # the memo's pin: not this view's to release
assert kern.variant == "tensor_rows", kern
n = len(c.memo)
assert n == 2, c.memo.keys()
# the same layout at other addresses, an axis as a list, a stream: no new compile
x2, y2 = torch.Tensor((64, 32), f32), torch.Tensor((64,), f32)
redjit.reduce(x2, "sum", [1], out=y2, stream=0x77)
assert last()[2].value == k.value and last()[4:] == (x2.data_ptr(), y2.data_ptr(), 0x77), last()
assert redjit.compile_count() == 1
# another layout (strided: the transposed view) is a new kernel, with its strides in the request
xt = torch.Tensor((32, 64), f32, strides=(1, 32))
yt = torch.Tensor((32,), f32)
for i in range(3):
    redjit.reduce(xt, "max", 1, out=yt)
assert redjit.compile_count() == 2 and last()[2] is not k and last()[2].value != k.value
want = redjit.compile(redjit.tensor_request((32, 64), (1, 32), (1,), "f32", "max"))
assert redjit.Kernel(c, last()[2].value, _owns_pin=False).ptx == want.ptx
# refusals are made every time (nothing invalid is remembered)
for i in range(3):
    for bad, what in ((torch.Tensor((32,), f32), "out: shape"),
                      (torch.Tensor((64,), torch.float64), "out: dtype"),
                      (torch.Tensor((64,), f32, strides=(2,)), "contiguous"),
                      (torch.Tensor((64,), f32, dev=1), "out: on device")):
        try:
            redjit.reduce(x, "sum", 1, out=bad)
            raise SystemExit(f"no error for {what}")
        except redjit.RedjitError as e:
            assert what in e.message, (what, e.message)
    try:
        redjit.reduce(torch.Tensor((64, 32), f32, cuda=False), "sum", 1, out=y)
        raise SystemExit("a CPU tensor was reduced")
    except redjit.RedjitError as e:
        assert "not on a CUDA device" in e.message, e.message
    try:
        redjit.reduce(x, "sum", 1, accum=True)
        raise SystemExit("accum without out")
    except redjit.RedjitError as e:
        assert "give out" in e.message, e.message
# out allocated (torch.empty over the kept dims, x's dtype and device) on every call
outs = [redjit.reduce(x, "sum", None) for i in range(3)]
assert all(o.shape == () and o.dtype is f32 for o in outs) and len({id(o) for o in outs}) == 3
assert last()[5] == outs[-1].data_ptr() and redjit.compile_count() == 3
# another device: its own kernel lookup (compiled for device 1's target) and device 1's launch
x1, y1 = torch.Tensor((64, 32), f32, dev=1), torch.Tensor((64,), f32, dev=1)
for i in range(3):
    redjit.reduce(x1, "sum", 1, out=y1)
assert last()[3] == 1 and last()[4] == x1.data_ptr()
# dynamic: rj_reduce with the parsed request and device 0's options
for i in range(3):
    redjit.reduce(x, "sum", 1, out=y, dynamic=True)
assert last()[0] == "reduce" and last()[3] is c.opts[0] and len(c.requests) == 1, last()
# a full memo is dropped as a whole (requests freed with it) and filled again
redjit._MEMO_MAX = len(c.memo)
redjit.reduce(x, "min", 1, out=y)
assert len(c.memo) == 2 and not c.requests  # its layout, by the described and the torch keys
redjit.reduce(x, "sum", 1, out=y, dynamic=True)
assert last()[0] == "reduce" and len(c.requests) == 1
# a dynamic layout whose second key fills the memo: the drop comes first, its request stays
redjit._MEMO_MAX = len(c.memo) + 1
redjit.reduce(x, "max", 1, out=y, dynamic=True)
assert len(c.memo) == 2 and len(c.requests) == 1, (c.memo.keys(), c.requests)
assert last()[2] is list(c.requests.values())[0], last()
print("torch lane ok")
"""


def test_torch_lane():
    """reduce's torch lane with a stand-in torch (tests/python/_fake_torch.py) and the launch
    replaced: what reaches the C call, what is compiled once, what is refused every time."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tools", "python"),
               REDJIT_CACHE_DISABLE="1")  # every new kernel counted as compiled
    r = subprocess.run([sys.executable, "-c", _TORCH_LANE, os.path.dirname(__file__)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0 and "torch lane ok" in r.stdout, r.stdout + r.stderr


_FUSED_LANE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import _fake_torch
torch = _fake_torch.install(stream=0x5000)
import redjit
c = redjit._ctx()
calls = []  # (vptr, kernel, device, x, [others' pointers], nothers, out, values, stream)
c.launch_n = lambda *a: calls.append(a[:4] + (list(a[4][:a[5]]) if a[5] else None,) + a[5:]) or 0
f32, f16, u8 = torch.float32, torch.float16, torch.uint8
T = torch.Tensor
x, y, m, o = T((64, 32), f32), T((64, 32), f32), T((64, 32), u8), T((64,), f32)
OPS = (("dot", (y,), {}), ("sumsq", (), {}), ("masked_sum", (m,), {}),
       ("masked_mean", (m,), {}), ("norm", (), {"p": 2}), ("mean", (), {"map": "square"}))
for j, (op, oth, kw) in enumerate(OPS):
    for i in range(3):  # the first call prepares (and keeps both keys), the others launch
        assert redjit.reduce(x, op, 1, others=oth, out=o, **kw) is o
    assert redjit.compile_count() == j + 1 and len(calls) == 3 * (j + 1), (op, calls)
    k = calls[-1][1]
    for cl in calls[-3:]:
        assert cl[0] is c.vptr and cl[1] is k and cl[2] == 0 and cl[3] == x.data_ptr(), cl
        assert cl[4] == ([t.data_ptr() for t in oth] or None) and cl[5] == len(oth), cl
        assert cl[6] == o.data_ptr() and cl[7] == 0 and cl[8] == 0x5000, cl
    rq = {"kind": "tensor", "op": op, "dtype": "f32", "shape": [64, 32], "axes": [1]}
    if oth:
        rq["others"] = [{"dtype": "f32" if oth[0] is y else "u8"}]
    rq.update(kw)
    want = redjit.compile(rq)
    assert redjit.Kernel(c, k.value, _owns_pin=False).ptx == want.ptx, op
    want.close()
assert len(c.memo) == 2 * len(OPS) and len(c.pins) == len(OPS), (c.memo.keys(), c.pins)
n = redjit.compile_count()
# sum of map where is masked_sum's request: a memo entry of its own, the same kernel
redjit.reduce(x, "sum", 1, others=(m,), map="where", out=o)
assert redjit.compile_count() == n and calls[-1][1].value == calls[8][1].value
# the same layouts at other addresses, an axis as a list, a stream: no new compile
x2, y2, o2 = T((64, 32), f32), T((64, 32), f32), T((64,), f32)
assert redjit.dot(x2, y2, [1], out=o2, stream=0x77) is o2
assert calls[-1][3:] == (x2.data_ptr(), [y2.data_ptr()], 1, o2.data_ptr(), 0, 0x77), calls[-1]
assert redjit.compile_count() == n
# what decides the request is in the key: each of these is a kernel of its own
yb = T((32,), f32)  # broadcast along the rows: stride 0
for i in range(2):
    redjit.dot(x, yb, 1, out=o)
    assert calls[-1][4] == [yb.data_ptr()]
assert any(json.loads(k).get("others") == [{"dtype": "f32", "strides": [0, 1]}]
           for k in c.requests), list(c.requests)
for kw in ({"p": 1}, {"p": "inf"}, {"nan": "ignore"}, {"acc_dtype": "f64"}):
    for i in range(2):
        redjit.reduce(x, "norm" if "p" in kw else "sumsq", 1, out=o, **kw)
assert redjit.compile_count() == n + 5, redjit.compile_count()
for sc in (0.5, 0.25, 0.25):
    redjit.reduce(x, "sum", 1, epilogue="scale", scale=sc, out=o)
assert redjit.compile_count() == n + 7
for sc in (0.0, -0.0, -0.0):  # equal floats, other requests: -0.0 * s is not 0.0 * s
    redjit.reduce(x, "sum", 1, epilogue="scale", scale=sc, out=o)
assert redjit.compile_count() == n + 9
n += 2
xt = T((64, 32), f32, strides=(1, 64))  # x transposed in memory: its strides in the request
for i in range(2):
    redjit.dot(xt, y, 1, out=o)
assert redjit.compile_count() == n + 8 and calls[-1][3] == xt.data_ptr()
# out allocated (x's dtype, the kept dims) on every call, by torch.empty
outs = [redjit.dot(x, y, 0) for i in range(3)]
assert all(t.shape == (32,) and t.dtype is f32 for t in outs) and len({id(t) for t in outs}) == 3
assert calls[-1][6] == outs[-1].data_ptr()
# refusals are made every time (nothing invalid is remembered)
x16 = T((64, 32), f16)
for i in range(3):
    for args, kw, what in (((x16, "dot"), {"others": (T((64, 32), f16),), "out": o}, "out: dtype"),
                           ((x, "dot"), {"others": (y,), "out": T((32,), f32)}, "out: shape"),
                           ((x, "dot"), {"others": (T((64, 32), f32, dev=1),), "out": o},
                            "others[0]: on device"),
                           ((x, "dot"), {"others": (T((3,), f32),), "out": o}, "others[0]: shape"),
                           ((x, "dot"), {"others": (y,), "out": T((64,), f32, strides=(2,))},
                            "contiguous")):
        try:
            redjit.reduce(*args, 1, **kw)
            raise SystemExit(f"no error for {what}")
        except redjit.RedjitError as e:
            assert what in e.message, (what, e.message)
# a full memo is dropped as a whole (pins released, requests freed) and filled again
redjit._MEMO_MAX = len(c.memo)
redjit.dot(x, y, 0, out=T((32,), f32))
assert len(c.memo) == 2 and len(c.pins) == 1 and len(c.requests) == 1, (c.memo, c.requests)
redjit.dot(x, y, 0, out=T((32,), f32))
assert len(c.memo) == 2 and len(c.pins) == 1
# a map or epilogue as LLVM IR is kept by its text: one compile, then launches of that kernel
redjit._MEMO_MAX = 4096  # as shipped again: no drop of a full memo below
c.L.rj_reduce_n = lambda *a: calls.append(("reduce_n",) + a) or 0
sq = "define float @sq(float %x) {\n  %r = fmul float %x, %x\n  ret float %r\n}\n"
n = redjit.compile_count()
for i in range(3):  # a new dict of the same text each time
    assert redjit.reduce(x, "sum", 1, map={"ir": sq, "function": "sq"}, out=o) is o
assert redjit.compile_count() == n + 1 and calls[-1][1] is calls[-3][1], calls[-3:]
assert calls[-1][3] == x.data_ptr() and calls[-1][6] == o.data_ptr(), calls[-1]
cube = sq.replace("%r = fmul float %x, %x", "%q = fmul float %x, %x\n  %r = fmul float %q, %x")
redjit.reduce(x, "sum", 1, map={"ir": cube, "function": "sq"}, out=o)  # another text
assert redjit.compile_count() == n + 2 and calls[-1][1] is not calls[-2][1]
ep = {"ir": "define float @h(float %x) {\n  %r = fmul float %x, 0.5\n  ret float %r\n}\n",
      "function": "h"}
for i in range(2):
    redjit.reduce(x, "sum", 1, epilogue=ep, out=o)
assert redjit.compile_count() == n + 3 and calls[-1][1] is calls[-2][1]
assert not any(cl[0] == "reduce_n" for cl in calls)
# the same text under another function name is another request
sq2 = sq.replace("@sq", "@sq2")
redjit.reduce(x, "sum", 1, map={"ir": sq2, "function": "sq2"}, out=o)
assert redjit.compile_count() == n + 4
# more than the 32 IR texts a context keeps: a layout first seen after them (out allocated, a
# new key) still compiles: the requests that pointed at dropped texts went with the memo
for i in range(34):
    t = sq.replace("%r = fmul float %x, %x", f"%q = fmul float %x, {i}.0\n  %r = fmul float %q, %x")
    redjit.reduce(x, "sum", 1, map={"ir": t, "function": "sq"}, out=o)
assert redjit.reduce(x, "sum", 1, map={"ir": sq, "function": "sq"}).shape == (64,)
# a bad IR map is refused on every call (nothing invalid is remembered)
for i in range(2):
    try:
        redjit.reduce(x, "sum", 1, map={"ir": "define float @f(", "function": "f"}, out=o)
        raise SystemExit("no error for a bad IR map")
    except redjit.RedjitError as e:
        assert "map" in e.message or "ir" in e.message, e.message
print("fused lane ok")
"""


def test_fused_torch_lane():
    """reduce's fused calls with a stand-in torch (tests/python/_fake_torch.py) and the launch
    replaced: a layout is prepared once and launched from the memo after, with every argument
    that decides the request in its key; refusals are made every time."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tools", "python"),
               REDJIT_CACHE_DISABLE="1")  # every new kernel counted as compiled
    r = subprocess.run([sys.executable, "-c", _FUSED_LANE, os.path.dirname(__file__)], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0 and "fused lane ok" in r.stdout, r.stdout + r.stderr


def test_library_search():
    env = dict(os.environ, REDJIT_LIBRARY="/nonexistent/libredjit.so.0.2",
               PYTHONPATH=os.path.join(REPO, "tools", "python"))
    code = ("import redjit\n"  # the import itself does not need the library
            "try:\n    redjit.version()\nexcept redjit.RedjitError as e:\n"
            "    print(e.status); print(e.message)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("library\n") and "/nonexistent/libredjit.so.0.2" in out, out
    assert "REDJIT_LIBRARY" in out
    # without REDJIT_LIBRARY, the package's folder, <prefix>/lib and the source tree's build/
    old = os.environ.pop("REDJIT_LIBRARY", None)
    try:
        paths = _lib.search_paths()
    finally:
        if old is not None:
            os.environ["REDJIT_LIBRARY"] = old
    pkg = os.path.dirname(redjit.__file__)
    assert paths[0] == os.path.join(pkg, "libredjit.so.0.2")
    assert os.path.join(REPO, "build", "libredjit.so.0.2") in paths
    # an installed layout: <prefix>/lib/python3/dist-packages/redjit next to <prefix>/lib
    with tempfile.TemporaryDirectory() as d:
        site = os.path.join(d, "lib", "python3", "dist-packages")
        shutil.copytree(pkg, os.path.join(site, "redjit"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        real = os.path.realpath(redjit.library_path())
        os.symlink(real, os.path.join(d, "lib", "libredjit.so.0.2"))
        # $ORIGIN is the link's folder: a libcjson that lies beside the library (a carried or
        # pip-installed copy) is linked too, as an install puts it where the system finds it
        cjson = os.path.join(os.path.dirname(real), "libcjson.so.1")
        if os.path.exists(cjson):
            os.symlink(cjson, os.path.join(d, "lib", "libcjson.so.1"))
        env = {k: v for k, v in os.environ.items() if k != "REDJIT_LIBRARY"}
        env["PYTHONPATH"] = site
        out = subprocess.run([sys.executable, "-c", "import redjit; print(redjit.library_path())"],
                             env=env, capture_output=True, text=True, check=True).stdout
        assert out.strip() == os.path.join(d, "lib", "libredjit.so.0.2"), out


def test_struct_layouts():
    """The ctypes structs match include/redjit.h and redjit_treduce.h (sizes and offsets, by a C compiler)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        skip("no C compiler")
    structs = {"rj_options": _lib.Options, "rj_variant_info": _lib.VariantInfo,
               "rj_cache_stats": _lib.CacheStats, "rj_combine": _lib.Combine,
               "rj_treduce_buf": _lib.TreduceBuf, "rj_treduce_group": _lib.TreduceGroup,
               "rj_treduce_result": _lib.TreduceResult}
    lines = []
    for cname, cls in structs.items():
        lines.append(f'printf("{cname} %zu\\n", sizeof({cname}));')
        for f, _ in cls._fields_:
            cf = "async" if f == "async_" else f
            lines.append(f'printf("{cname}.{f} %zu\\n", offsetof({cname}, {cf}));')
    src = ("#include <stdio.h>\n#include <stddef.h>\n#include \"redjit_treduce.h\"\nint main(void){"
           + "\n".join(lines) + "return 0;}\n")
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "l.c"), "w").write(src)
        subprocess.run([cc, "-I", os.path.join(REPO, "include"), "-o", os.path.join(d, "l"),
                        os.path.join(d, "l.c")], check=True)
        out = subprocess.run([os.path.join(d, "l")], capture_output=True, text=True,
                             check=True).stdout
    want = dict(l.split() for l in out.splitlines())
    for cname, cls in structs.items():
        assert int(want[cname]) == ctypes.sizeof(cls), cname
        for f, _ in cls._fields_:
            assert int(want[f"{cname}.{f}"]) == getattr(cls, f).offset, (cname, f)


def test_threads():
    """Two threads compile at once, each in its own context; a kernel stays with its thread."""
    results, errors = {}, []
    req = json.loads(open(os.path.join(EXAMPLES, "tensor_cols.json")).read())

    def work(i):
        try:
            ks = []
            for j in range(3):
                r = dict(req, shape=[64 + i, 128 * (j + 1)])
                ks.append(redjit.compile(r, target="sm_90"))
            results[i] = (redjit._ctx(), ks)
        except Exception as e:  # noqa
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    (c0, k0), (c1, k1) = results[0], results[1]
    assert c0 is not c1 and c0.ptr != c1.ptr and c0 is not redjit._ctx()
    assert all(".entry" in k.ptx for k in k0 + k1)  # texts outlive their threads
    e = raises(redjit.RedjitError, k0[0].launch, [0, 0])
    assert "another thread" in e.message


def test_scalar_ops():
    """prod / and / or / xor / mean: the names parse to the C enum's values (canonical text round
    trips), dispatch serves them, mean refuses accum and nan "ignore" naming the field."""
    from redjit._lib import OP
    for name in ("prod", "and", "or", "xor", "mean"):
        dt = "f32" if name in ("prod", "mean") else "i32"
        req = {"kind": "tensor", "op": name, "dtype": dt, "shape": [64, 1000], "axes": [1]}
        assert redjit.canonical(req)["op"] == name
        assert "tensor_rows prio=30 chosen" in redjit.explain(req, target="sm_90")
    assert (OP["prod"], OP["and"], OP["or"], OP["xor"], OP["mean"]) == (3, 4, 5, 6, 9)
    mean = {"kind": "tensor", "op": "mean", "dtype": "f16", "shape": [7, 8], "axes": [0]}
    assert "div.rn.f32" in redjit.compile(mean, target="sm_90").ptx
    e = raises(redjit.RedjitError, redjit.compile, {**mean, "accum": True})
    assert e.status == "RJ_EINVAL" and e.message.startswith("accum: "), e.message
    e = raises(redjit.RedjitError, redjit.compile, {**mean, "nan": "ignore"})
    assert e.status == "RJ_EINVAL" and e.message.startswith("nan: "), e.message
    e = raises(redjit.RedjitError, redjit.compile, {**mean, "op": "xor"})
    assert "takes integer" in e.message


def test_acc_dtype_requests():
    A = _arrays
    r = A.tensor_request((4, 8), None, (1,), "bf16", "mean", acc_dtype="f64")
    assert r["acc_dtype"] == "f64"
    assert "acc_dtype" not in A.tensor_request((4, 8), None, (1,), "bf16", "mean")
    assert redjit.canonical(r)["acc_dtype"] == "f64"
    assert "add.rn.f64" in redjit.compile(r, target="sm_90").ptx
    e = raises(redjit.RedjitError, redjit.compile,
               A.tensor_request((4, 8), None, (1,), "f32", "max", acc_dtype="f64"), target="sm_90")
    assert e.status == "RJ_EINVAL" and e.message.startswith("acc_dtype: "), e.message


def test_state_ops_requests():
    A = _arrays
    r = A.tensor_request((4, 8), None, (1,), "f32", "var", correction=0)
    assert r["op"] == "var" and r["correction"] == 0
    assert "correction" not in A.tensor_request((4, 8), None, (1,), "f32", "std")
    for op, cls in (("argmax", "tensor_rows"), ("argmin", "tensor_rows"), ("var", "tensor_rows"),
                    ("std", "tensor_rows"), ("logsumexp", "tensor_rows")):
        t = redjit.explain(A.tensor_request((64, 512), None, (1,), "f32", op), target="sm_90")
        assert f"{cls} prio=30 chosen" in t, t
        t = redjit.explain(A.tensor_request((65540,), None, (0,), "f32", op), target="sm_90")
        assert "tensor_cluster prio=35 chosen" in t, t  # the 1-D sizes of one cluster
    e = raises(redjit.RedjitError, redjit.compile,
               A.tensor_request((4, 8), None, (1,), "f32", "argmax", accum=True), target="sm_90")
    assert e.status == "RJ_EINVAL" and "accum" in e.message
    e = raises(redjit.RedjitError, redjit.compile,
               A.tensor_request((4, 8), None, (1,), "i32", "logsumexp"), target="sm_90")
    assert "op" in e.message and "float" in e.message
    if not _has_gpu():  # out's dtype: int64 for an index
        x = FakeCAI((64, 32))
        e = raises(redjit.RedjitError, redjit.reduce, x, "argmax", 1, out=FakeCAI((64,)))
        assert "out: dtype" in e.message and "int64" in e.message, e.message
        e = raises(redjit.RedjitError, redjit.reduce, x, "argmax", 1, out=FakeCAI((64,), "<i8"))
        assert e.status == "RJ_ENODEV", e
        e = raises(redjit.RedjitError, redjit.reduce, x, "var", 1, out=FakeCAI((64,)),
                   correction=0)
        assert e.status == "RJ_ENODEV", e


if __name__ == "__main__":
    _runner.main(globals())


if __name__ == "__main__":
    _runner.main(globals())
