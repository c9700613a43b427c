#!/usr/bin/env python3
"""A fresh process launching a reduction whose kernel an earlier process compiled: redjit's disk
cache next to CuPy's RawModule cache and Triton's cache, measured in the same run.

Each system runs in RUNS + 1 fresh Python processes sharing one cache directory (the first fills
it and is not counted).  A process first imports torch and creates its CUDA context (the setting
of a runtime that embeds redjit), then times, with time.perf_counter:
  import  importing the system's module (redjit: loading libredjit.so);
  first   the first reduction: for redjit `redjit.reduce(x, out=y)` (context, disk hit, module
          load, launch); for CuPy `RawModule(code=...)`, `get_function`, the launch; for Triton
          the first call of a @triton.jit sum kernel; each followed by a device synchronisation.
Printed: the median over the counted runs, in ms, as a markdown table; twice: with the driver's
own JIT cache as configured, and with CUDA_CACHE_DISABLE=1 (every PTX load pays the driver's JIT,
so a system that loads a cubin stands apart).

    REDJIT_LIBRARY=carry/libredjit.so.0.2 PYTHONPATH=tools/python python3 bench/fresh_process.py
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

RUNS = int(os.environ.get("RUNS", "5"))
SYSTEMS = os.environ.get("SYSTEMS", "redjit,cupy RawModule,triton").split(",")
N = 1 << 20

PRELUDE = f"""
import time, json, torch
torch.cuda.init()
x = torch.rand({N}, device="cuda")
y = torch.empty(1, device="cuda")
torch.cuda.synchronize()
"""

CHILD = {
    "redjit": """
t0 = time.perf_counter()
import redjit
t1 = time.perf_counter()
redjit.reduce(x, out=y)
torch.cuda.synchronize()
t2 = time.perf_counter()
ok = abs(y.item() - x.sum().item()) <= 1e-3 * abs(x.sum().item())
""",
    "cupy RawModule": """
t0 = time.perf_counter()
import cupy
t1 = time.perf_counter()
SRC = r'''
extern "C" __global__ void sum(const float *x, float *y, long long n) {
  __shared__ float s[256];
  float a = 0.f;
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) a += x[i];
  s[threadIdx.x] = a;
  __syncthreads();
  for (int w = 128; w > 0; w >>= 1) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(y, s[0]);
}'''
f = cupy.RawModule(code=SRC).get_function("sum")
cx = cupy.asarray(x)
cy = cupy.zeros(1, dtype=cupy.float32)
f((264,), (256,), (cx, cy, cupy.int64(x.numel())))
cupy.cuda.runtime.deviceSynchronize()
t2 = time.perf_counter()
ok = abs(float(cy[0]) - x.sum().item()) <= 1e-3 * abs(x.sum().item())
""",
    "triton": """
t0 = time.perf_counter()
import triton, triton.language as tl
t1 = time.perf_counter()
@triton.jit
def ksum(x, y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(y, tl.sum(tl.load(x + i, mask=i < n, other=0.0), axis=0))
y.zero_()
ksum[(triton.cdiv(x.numel(), 4096),)](x, y, x.numel(), BLOCK=4096)
torch.cuda.synchronize()
t2 = time.perf_counter()
ok = abs(y.item() - x.sum().item()) <= 1e-3 * abs(x.sum().item())
""",
}

EPILOGUE = """
print("RESULT " + json.dumps({"import": (t1 - t0) * 1e3, "first": (t2 - t1) * 1e3, "ok": ok}))
"""


def one(system, env):
    # a file, not `python -c`: triton.jit reads its function's source with inspect
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(PRELUDE + CHILD[system] + EPILOGUE)
    try:
        r = subprocess.run([sys.executable, f.name], env=env, capture_output=True, text=True,
                           timeout=600)
    finally:
        os.unlink(f.name)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{system}: exit {r.returncode}\n{r.stderr[-2000:]}")


def measure(system, extra_env):
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, REDJIT_CACHE_DIR=f"{cache}/redjit", CUPY_CACHE_DIR=f"{cache}/cupy",
                   TRITON_CACHE_DIR=f"{cache}/triton", **extra_env)
        one(system, env)  # fills the caches
        runs = [one(system, env) for _ in range(RUNS)]
    if not all(r["ok"] for r in runs):
        raise RuntimeError(f"{system}: wrong result")
    return (statistics.median(r["import"] for r in runs),
            statistics.median(r["first"] for r in runs))


def main():
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    print(f"GPU: {gpu}; {RUNS} fresh processes per system, medians; caches warm\n")
    for label, extra in (("driver JIT cache as configured", {}),
                         ("CUDA_CACHE_DISABLE=1", {"CUDA_CACHE_DISABLE": "1"})):
        print(f"### {label}\n\n| system | import ms | first reduction ms |\n|---|---|---|")
        for system in SYSTEMS:
            try:
                imp, first = measure(system, extra)
                print(f"| {system} | {imp:.2f} | {first:.2f} |")
            except Exception as e:  # a peer missing on this machine: say so, go on
                print(f"| {system} | — | failed: {str(e).splitlines()[0][:80]} |")
        print()


if __name__ == "__main__":
    main()
