"""The Python package's own per-call cost of a repeated redjit.reduce, with no GPU: the C entry
points that would launch (rj_reduce, rj_tensor_launch) are replaced by no-op C functions of the
same signature (built here with cc), so what is timed is the package's work plus the ctypes call.
The arrays are stand-ins exposing __cuda_array_interface__ (a property building a new dict per
access, as CuPy's and Numba's do), and, when torch is importable, CPU tensors cannot be used (the
torch lane needs CUDA tensors): bench/python_host_cost.py measures that on a GPU.

Method: each case is called once (compiling its kernel: rj_compile needs no GPU), then timed as
the best of REPEATS runs of N calls (time.perf_counter around the loop, nothing else inside).

Run (from the repository root, after a build):
  REDJIT_LIBRARY=build/libredjit.so.0 PYTHONPATH=tools/python python3 bench/python_call_overhead.py
"""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import time

import redjit
from redjit import _lib

N = int(os.environ.get("N", "20000"))
REPEATS = int(os.environ.get("REPEATS", "15"))

STUB = r"""
#include <stdint.h>
int rj_stub6(void *ctx, void *k, int dev, uint64_t src, uint64_t dst, void *stream) {
  (void)ctx; (void)k; (void)dev; (void)src; (void)dst; (void)stream;
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


def main():
    L = _lib.lib()
    with tempfile.TemporaryDirectory() as d:
        S = stub_library(d)
        for name in ("rj_reduce", "rj_tensor_launch"):
            real = getattr(L, name, None)
            if real is not None:  # a new function object with the real entry's argtypes
                f = ctypes.CDLL(S._name).rj_stub6
                f.restype, f.argtypes = real.restype, real.argtypes
                setattr(L, name, f)
        bare = S.rj_stub6
        bare.restype = ctypes.c_int
        bare.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64,
                         ctypes.c_uint64, ctypes.c_void_p]
        cases = [
            ("1 Ki f32, full", FakeArray((1024,), 0x7f0000100000), FakeArray((), 0x7f0000200000),
             None),
            ("1 Mi f32, full", FakeArray((1 << 20,), 0x7f0000100000),
             FakeArray((), 0x7f0000200000), None),
            ("1024 x 1024 f32, rows", FakeArray((1024, 1024), 0x7f0000100000),
             FakeArray((1024,), 0x7f0000200000), 1),
        ]
        a = (ctypes.c_void_p(1), ctypes.c_void_p(2), 0, 0x7f0000100000, 0x7f0000200000, 0)
        rows = [("the no-op C function alone (6 arguments through ctypes)",
                 best_ns(lambda: bare(*a)))]
        for name, x, y, axis in cases:
            redjit.reduce(x, "sum", axis, out=y)
            rows.append((f"redjit.reduce(x, out=y): {name}",
                         best_ns(lambda: redjit.reduce(x, "sum", axis, out=y))))
    print(f"python {sys.version.split()[0]}, best of {REPEATS} x {N} calls, launch stubbed\n")
    print("| call | ns per call |\n| --- | --- |")
    for name, ns in rows:
        print(f"| {name} | {ns:.0f} |")


if __name__ == "__main__":
    main()
