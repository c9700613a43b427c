"""redjit's NumPy / array-API reductions, typed errors, options, __version__ and python -m redjit,
without a GPU: dtype names and result dtypes, the all / any states compiled for every dtype, and
(with a torch stand-in, tests/python/_fake_torch.py, launches replaced) the axis forms, keepdims
shapes, out, initial, zero-size and 0-d results, refusals and streams.
Run: pytest tests/python/test_array_api.py, or python3 tests/python/test_array_api.py [NAME...]."""
import os
import pickle
import subprocess
import sys
import tempfile

import _runner
from _runner import REPO, raises

_runner.setup_path()
import redjit  # noqa: E402
from redjit import _array_api, _errors, _lib  # noqa: E402

try:
    import pytest
    skip = pytest.skip
except ImportError:
    skip = _runner.skip


def _numpy_dtype(name):
    """numpy.dtype(name) as redjit sees it (module numpy, .name), without NumPy."""
    cls = type("dtype", (), {"__module__": "numpy", "name": name})
    return cls()


def test_dtype_names():
    f32 = type("float32", (), {"__module__": "numpy"})  # numpy.float32, a type
    torch_f16 = type("dtype", (), {"__module__": "torch", "__repr__": lambda s: "torch.float16",
                                   "__str__": lambda s: "torch.float16"})()
    for spelled, want in (("f32", "f32"), ("float32", "f32"), ("torch.float32", "f32"),
                          (f32, "f32"), (_numpy_dtype("float64"), "f64"), (float, "f64"),
                          (int, "i64"), (bool, "bool"), ("bfloat16", "bf16"), ("half", "f16"),
                          (torch_f16, "f16"), ("<f4", "f32"), ("uint32", "u32"), ("int64", "i64"),
                          ("double", "f64"), ("bool", "bool"), ("u64", "u64"), ("int8", "i8"),
                          ("uint8", "u8"), ("torch.int16", "i16"), ("uint16", "u16"),
                          ("float8_e4m3fn", "e4m3"), ("torch.float8_e5m2", "e5m2")):
        assert redjit.dtype_name(spelled) == want, (spelled, want)
    assert redjit.dtype_name(None) is None
    for bad in ("float8", "complex64", 3, "int4"):
        e = raises(redjit.InvalidRequest, redjit.dtype_name, bad)
        assert e.message.startswith("dtype: ") and isinstance(e, ValueError), e.message


def test_result_dtypes():
    rd = redjit.result_dtype
    # NumPy's: sums of 32-bit integers and bools in 64 bits, means of integers in float64
    assert [rd("sum", d) for d in ("i32", "u32", "bool", "i64", "f16", "bf16")] == \
        ["i64", "u64", "i64", "i64", "f16", "bf16"]
    assert [rd("prod", d) for d in ("i32", "u32")] == ["i64", "u64"]
    assert [rd("mean", d) for d in ("i32", "u64", "f32", "bf16")] == ["f64", "f64", "f32", "bf16"]
    assert [rd(op, "i32") for op in ("var", "std", "logsumexp", "max", "min")] == \
        ["f64", "f64", "f64", "i32", "i32"]
    assert rd("argmax", "f16") == "i64" and rd("all", "f32") == rd("any", "i64") == "bool"
    assert rd("sum", "f16", "f32") == "f32"  # dtype= wins
    # the small integers, bool and float8, as the library's rj_result_dtype gives them
    assert [rd("sum", d) for d in ("i8", "u8", "i16", "u16", "e4m3")] == \
        ["i64", "u64", "i64", "u64", "f32"]
    assert [rd(op, "e5m2") for op in ("max", "mean", "var", "logsumexp")] == \
        ["e5m2", "f32", "f32", "f32"]
    assert [rd(op, "u8") for op in ("max", "mean", "var")] == ["u8", "f64", "f64"]
    L, D, O = _lib.lib(), _lib.DTYPE, _lib.OP
    for op in ("sum", "prod", "max", "min", "mean", "var", "std", "argmax"):
        for d in ("i8", "u8", "i16", "u16", "bool", "e4m3", "e5m2"):
            if op == "prod" and d in ("e4m3", "e5m2"):
                continue
            want = rd(op, d)
            assert L.rj_result_dtype(O[op], D[d]) == D[want], (op, d, want)


def test_typed_errors():
    L = _lib.lib()
    names = [L.rj_status_name(i).decode() for i in range(1, 12)]
    classes = [redjit.InvalidRequest, redjit.NoVariant, redjit.TargetError, redjit.LLVMError,
               redjit.NoDevice, redjit.CudaError, redjit.OutOfMemory, redjit.Unsupported,
               redjit.Timeout, redjit.CompilerCrash, redjit.Busy]
    for name, cls in zip(names, classes):  # the C API's status names, one class each
        assert cls.status_name == name, (cls, name)
        e = redjit.RedjitError(name, "field: why")
        assert type(e) is cls and isinstance(e, redjit.RedjitError) and isinstance(e, RuntimeError)
        assert (e.status, e.message, str(e)) == (name, "field: why", f"{name}: field: why")
        e2 = pickle.loads(pickle.dumps(e))
        assert type(e2) is cls and (e2.status, e2.message) == (name, "field: why")
        assert _errors.error_class(name) is cls
    assert isinstance(redjit.InvalidRequest("RJ_EINVAL", "x"), ValueError)
    assert isinstance(redjit.Unsupported("RJ_EUNSUPPORTED", "x"), NotImplementedError)
    assert isinstance(redjit.OutOfMemory("RJ_ENOMEM", "x"), MemoryError)
    assert type(redjit.RedjitError("RJ_SOMETHING_NEW", "x")) is redjit.RedjitError
    # raised by the library, typed
    e = raises(redjit.InvalidRequest, redjit.compile, {"kind": "tensor", "op": "avg"})
    assert e.status == "RJ_EINVAL" and "op" in e.message
    req = {"kind": "tensor", "op": "sum", "dtype": "f32", "shape": [64]}
    e = raises(redjit.TargetError, redjit.compile, req, target="sm_13")
    assert "sm_13" in e.message
    # an import without the library: LibraryNotFound (an ImportError too) on first use
    env = dict(os.environ, REDJIT_LIBRARY="/nonexistent/libredjit.so.0.2",
               PYTHONPATH=os.path.join(REPO, "tools", "python"))
    code = ("import redjit\ntry:\n    redjit.version()\nexcept redjit.LibraryNotFound as e:\n"
            "    print(type(e).__name__, e.status, isinstance(e, ImportError))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["LibraryNotFound", "library", "True"], out.stdout + out.stderr


def test_truth_states_compile():
    """all / any: a state of one i32 (x != 0, folded by and / or) for every input dtype."""
    for d in ("f16", "bf16", "f32", "f64", "i32", "u32", "i64", "u64"):
        for which in ("all", "any"):
            c = _array_api._truth_op(which, d)
            assert c.out_dtype(d) == "i32"
            req = redjit.tensor_request((64, 48), None, (1,), d, c)
            k = redjit.compile(req, target="sm_90")
            assert k.variant.startswith("tensor_") and ".entry" in k.ptx, (d, which, k.variant)
            assert ("and.b32" if which == "all" else "or.b32") in k.ptx, (d, which)


def test_options():
    k = redjit.compile({"kind": "tensor", "op": "sum", "dtype": "f32", "shape": [1024]},
                       target="sm_90", ptx_version=87)
    assert ".version 8.7" in k.ptx
    req = open(os.path.join(REPO, "examples", "tile_packed_sm100a.json")).read()
    plain = redjit.explain(req, "sm_90")
    emul = redjit.explain(req, "sm_90", emulate_packed=True)
    assert "sm100_packed prio=" in emul and "sm100_packed" not in [
        ln.split()[0] for ln in plain.splitlines() if "chosen" in ln], (plain, emul)
    assert [ln.split()[0] for ln in emul.splitlines() if "chosen" in ln] == ["sm100_packed"], emul
    before = redjit.get_options()
    try:
        redjit.set_options(emulate_packed=True, ptx_version=88)
        assert redjit.get_options()["emulate_packed"] is True
        k = redjit.compile(req, target="sm_90")
        assert k.variant == "sm100_packed" and ".version 8.8" in k.ptx, k.variant
        k = redjit.compile(req, target="sm_90", emulate_packed=False)  # the call's own wins
        assert k.variant != "sm100_packed"
        with tempfile.TemporaryDirectory() as d:
            redjit.set_options(disk_cache=d, memory_cache=7)
            st = redjit.cache_stats()
            assert st["disk_dir"] == d and st["max_kernels"] == 7, st
            redjit.compile({"kind": "tensor", "op": "max", "dtype": "f64", "shape": [333]},
                           target="sm_90")
            assert any(f.endswith(".rjk") for f in os.listdir(d)), os.listdir(d)
            redjit.set_options(disk_cache="")
            assert redjit.cache_stats()["disk_dir"] is None
        for bad in (dict(ptx_version=-1), dict(emulate_packed=1), dict(ir_memory_mb=-2),
                    dict(memory_cache=-1), dict(ir_timeout_ms="5")):
            e = raises(redjit.InvalidRequest, redjit.set_options, **bad)
            assert e.message.startswith(next(iter(bad)) + ":"), e.message
    finally:
        redjit.set_options(emulate_packed=before["emulate_packed"],
                           ptx_version=before["ptx_version"], memory_cache=4096,
                           disk_cache=before["disk_cache"])
    # compile_ir in this process and in redjit-irc give the same PTX
    ir = open(os.path.join(os.path.dirname(__file__), "test_cpu.py")).read()
    ir = ir.split('IR = """', 1)[1].split('"""', 1)[0]
    a = redjit.compile_ir(ir, "scale", target="sm_90", ir_in_process=True)
    b = redjit.compile_ir(ir, "scale", target="sm_90", ir_in_process=False, ir_timeout_ms=30000)
    assert a.ptx == b.ptx


def test_version_and_main():
    assert redjit.__version__ == redjit.version()
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tools", "python"))
    if not os.path.exists(os.path.join(REPO, "build", "redjit")):
        skip("no build/redjit (the CLI) in this source tree")
    out = subprocess.run([sys.executable, "-m", "redjit", "--version"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"redjit {redjit.version()}", out
    out = subprocess.run([sys.executable, "-m", "redjit", "explain", "--target", "sm_90",
                          os.path.join(REPO, "examples", "tensor_rows.json")], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0 and "tensor_rows prio=30 chosen" in out.stdout, out
    assert os.path.exists(os.path.join(os.path.dirname(redjit.__file__), "py.typed"))


def test_masked_mean_compiles():
    """mean(where=): op masked_mean, f16 data with an int8 mask, divided by the selected count."""
    req = {"kind": "tensor", "op": "masked_mean", "dtype": "f16", "shape": [64, 1000],
           "axes": [1], "others": [{"dtype": "i8"}]}
    k = redjit.compile(req, target="sm_90")
    assert k.variant == "tensor_rows" and "div.rn.f32" in k.ptx and "cvt.rn.f32.s32" in k.ptx


def test_map_ir_compiles():
    """A caller's map as LLVM IR through redjit.compile: linked and inlined (no call left)."""
    ir = ("define float @sq(float %x) {\n  %r = fmul float %x, %x\n  ret float %r\n}\n")
    req = {"kind": "tensor", "op": "sum", "dtype": "f32", "shape": [64, 1000], "axes": [1],
           "map": {"ir": ir, "function": "sq"}}
    k = redjit.compile(req, target="sm_90")
    assert "mul.f32" in k.ptx or "mul.rn.f32" in k.ptx or "fma" in k.ptx
    assert "\tcall" not in k.ptx


def test_not_an_array():
    for fn in (redjit.sum, redjit.max, redjit.argmax, redjit.all):
        e = raises(redjit.InvalidRequest, fn, [1.0, 2.0])
        assert e.message.startswith("x: list is not a GPU array"), e.message
    for fn in (redjit.sum, redjit.mean):  # where=: the masked ops, x described first
        e = raises(redjit.InvalidRequest, fn, [1.0, 2.0], where=[1, 0])
        assert e.message.startswith("x: list is not a GPU array"), e.message
    e = raises(TypeError, redjit.sum, object(), 0)  # keyword-only options
    assert "positional" in str(e)


def test_conventions_with_torch_stand_in():
    """Everything that needs an array, with _fake_torch (in a process of its own)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tools", "python"),
               REDJIT_CACHE_DISABLE="1")
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__),
                                                     "_array_api_stand_in.py")],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "array api ok" in r.stdout, r.stdout + r.stderr


if __name__ == "__main__":
    _runner.main(globals())
