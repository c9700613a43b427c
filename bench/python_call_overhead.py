"""The Python package's own per-call cost of a repeated redjit.reduce, with no GPU: the C entry
points that would launch (rj_reduce, rj_tensor_launch, and the fused calls' rj_reduce_n and
rj_tensor_launch_n) are replaced by no-op C functions of the
same signature (built here with cc), so what is timed is the package's work plus the ctypes call.
The arrays are stand-ins: objects exposing __cuda_array_interface__ (a property building a new
dict per access, as CuPy's and Numba's do), and "CUDA tensors" of tests/python/_fake_torch.py (a
pure-Python torch stand-in put in sys.modules["torch"]; real torch's attribute reads are C calls,
so its figures differ: bench/python_host_cost.py measures real torch on a GPU).

Method: each case is called 3 times (compiling its kernel: rj_compile needs no GPU), then timed
as the best of REPEATS runs of N calls (time.perf_counter around a loop of calls, nothing else
inside; the best run is the one least disturbed by other processes).

Run (from the repository root, after a build):
  REDJIT_LIBRARY=build/libredjit.so.0.2 PYTHONPATH=tools/python python3 bench/python_call_overhead.py
"""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "python"))
import _fake_torch  # noqa: E402

torch = _fake_torch.install()
import redjit  # noqa: E402
from redjit import _lib  # noqa: E402

N = int(os.environ.get("N", "2000"))
REPEATS = int(os.environ.get("REPEATS", "100"))

STUB = r"""
#include <stdint.h>
int rj_stub6(void *ctx, void *k, int dev, uint64_t src, uint64_t dst, void *stream) {
  (void)ctx; (void)k; (void)dev; (void)src; (void)dst; (void)stream;
  return 0;
}
int rj_stub9(void *ctx, void *k, void *opt_or_dev, uint64_t src, const uint64_t *others,
             int nothers, uint64_t dst, uint64_t values, void *stream) {
  (void)ctx; (void)k; (void)opt_or_dev; (void)src; (void)others; (void)nothers; (void)dst;
  (void)values; (void)stream;
  return 0;
}
"""


def stub_library(d):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        sys.exit("python_call_overhead: no C compiler (cc) to build the no-op stub")
    src, so = os.path.join(d, "stub.c"), os.path.join(d, "libstub.so")
    open(src, "w").write(STUB)
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", so, src], check=True)
    return ctypes.CDLL(so)


class FakeArray:
    """A __cuda_array_interface__ producer: the dict is built anew on every access."""

    def __init__(self, shape, ptr, typestr="<f4", strides=None):
        self.shape, self.ptr, self.typestr, self.strides = shape, ptr, typestr, strides

    @property
    def __cuda_array_interface__(self):
        return {"version": 3, "shape": self.shape, "typestr": self.typestr,
                "strides": self.strides, "data": (self.ptr, False), "stream": None}


def best_ns(fn):
    best = float("inf")
    for _ in range(REPEATS):
        t = time.perf_counter()
        for _ in range(N):
            fn()
        best = min(best, (time.perf_counter() - t) / N)
    return best * 1e9


def fused_rows():
    """Fused calls on 65536 x 128 f32 along rows: dot, sumsq, norm, the masked mean (a uint8
    mask; as reduce's op and as mean(where=)), CAI stand-ins and torch stand-ins (rj_reduce_n
    and rj_tensor_launch_n stubbed)."""
    f32, u8 = torch.float32, torch.uint8
    shape = (65536, 128)
    cai = (FakeArray(shape, 0x7f0000100000), FakeArray(shape, 0x7f0010100000),
           FakeArray(shape, 0x7f0020100000, "|u1"), FakeArray((65536,), 0x7f0030100000))
    tch = (torch.Tensor(shape, f32), torch.Tensor(shape, f32), torch.Tensor(shape, u8),
           torch.Tensor((65536,), f32))
    rows = []
    for kind, (x, y, m, o) in (("CAI", cai), ("torch stand-in", tch)):
        for label, fn in (("redjit.dot(x, y, 1, out=o)", lambda: redjit.dot(x, y, 1, out=o)),
                          ("redjit.reduce(x, \"sumsq\", 1, out=o)",
                           lambda: redjit.reduce(x, "sumsq", 1, out=o)),
                          ("redjit.norm(x, 2, 1, out=o)", lambda: redjit.norm(x, 2, 1, out=o)),
                          ("redjit.reduce(x, \"masked_mean\", 1, others=(m,), out=o)",
                           lambda: redjit.reduce(x, "masked_mean", 1, others=(m,), out=o)),
                          ("redjit.mean(x, axis=1, where=m, out=o)",
                           lambda: redjit.mean(x, axis=1, where=m, out=o))):
            for _ in range(3):
                fn()
            rows.append((f"{label}: {kind}, 65536 x 128 f32, rows", best_ns(fn)))
    return rows


def main():
    L = _lib.lib()
    with tempfile.TemporaryDirectory() as d:
        S = stub_library(d)
        for name in ("rj_reduce", "rj_tensor_launch", "rj_reduce_n", "rj_tensor_launch_n"):
            real = getattr(L, name, None)
            if real is not None:  # a new function object with the real entry's argtypes
                f = getattr(ctypes.CDLL(S._name), "rj_stub9" if name.endswith("_n") else
                            "rj_stub6")
                f.restype, f.argtypes = real.restype, real.argtypes
                setattr(L, name, f)
        bare = S.rj_stub6
        bare.restype = ctypes.c_int
        bare.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64,
                         ctypes.c_uint64, ctypes.c_void_p]
        f32 = torch.float32
        cases = [
            ("CAI, 1 Ki f32, full", FakeArray((1024,), 0x7f0000100000),
             FakeArray((), 0x7f0000200000), None),
            ("CAI, 1024 x 1024 f32, rows", FakeArray((1024, 1024), 0x7f0000100000),
             FakeArray((1024,), 0x7f0000200000), 1),
            ("torch stand-in, 1 Ki f32, full", torch.Tensor((1024,), f32),
             torch.Tensor((), f32), None),
            ("torch stand-in, 1 Mi f32, full", torch.Tensor((1 << 20,), f32),
             torch.Tensor((), f32), None),
            ("torch stand-in, 1024 x 1024 f32, rows", torch.Tensor((1024, 1024), f32),
             torch.Tensor((1024,), f32), 1),
        ]
        a = (ctypes.c_void_p(1), ctypes.c_void_p(2), 0, 0x7f0000100000, 0x7f0000200000, 0)
        rows = [("the no-op C function alone (6 arguments through ctypes)",
                 best_ns(lambda: bare(*a)))]
        for name, x, y, axis in cases:
            for _ in range(3):
                redjit.reduce(x, "sum", axis, out=y)
            rows.append((f"redjit.reduce(x, out=y): {name}",
                         best_ns(lambda: redjit.reduce(x, "sum", axis, out=y))))
        x, y = torch.Tensor((1024, 1024), f32), torch.Tensor((1024,), f32)
        for _ in range(3):
            redjit.sum(x, axis=1, out=y)
        rows.append(("redjit.sum(x, axis=1, out=y) (NumPy's signature): torch stand-in, "
                     "1024 x 1024 f32, rows", best_ns(lambda: redjit.sum(x, axis=1, out=y))))
        x = torch.Tensor((1024,), f32)
        for _ in range(3):
            redjit.reduce(x)
        rows.append(("redjit.reduce(x): torch stand-in, 1 Ki f32 (allocates out)",
                     best_ns(lambda: redjit.reduce(x))))
        rows += fused_rows()
    print(f"python {sys.version.split()[0]}, best of {REPEATS} x {N} calls, launch stubbed\n")
    print("| call | ns per call |\n| --- | --- |")
    for name, ns in rows:
        print(f"| {name} | {ns:.0f} |")


if __name__ == "__main__":
    main()
