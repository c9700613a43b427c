#!/usr/bin/env python3
"""Tensor benchmark: redjit's rj_reduce against torch, cupy (CUB), a Triton kernel and a
device-to-device copy, all timed the same way in one process: triton.testing.do_bench, median,
L2 flushed before every run.  GB/s count the input read once and the output written once (copy:
2x its bytes).  ours-dyn: the same request with "dynamic": true (runtime-size kernel; one kernel per
plan bucket); dyn/ours = ours-dyn GB/s over ours.  Usage: peers.py LIBREDJIT cases.txt > table.md"""
import ctypes, sys, math, datetime
import torch, triton, triton.language as tl

try:
    import cupy
except Exception:  # noqa
    cupy = None

DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "i32": torch.int32}


@triton.jit
def _rows(X, Y, N, stride, BLOCK: tl.constexpr, OP: tl.constexpr):
    row = tl.program_id(0)
    if OP == 0:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
    elif OP == 1:
        acc = tl.full([BLOCK], float("-inf"), tl.float32)
    else:
        acc = tl.full([BLOCK], float("inf"), tl.float32)
    for s in range(0, N, BLOCK):
        o = s + tl.arange(0, BLOCK)
        m = o < N
        if OP == 0:
            x = tl.load(X + row * stride + o, mask=m, other=0.0).to(tl.float32)
            acc += x
        elif OP == 1:
            x = tl.load(X + row * stride + o, mask=m, other=float("-inf")).to(tl.float32)
            acc = tl.maximum(acc, x)
        else:
            x = tl.load(X + row * stride + o, mask=m, other=float("inf")).to(tl.float32)
            acc = tl.minimum(acc, x)
    if OP == 0:
        r = tl.sum(acc, 0)
    elif OP == 1:
        r = tl.max(acc, 0)
    else:
        r = tl.min(acc, 0)
    tl.store(Y + row, r.to(Y.dtype.element_ty))


def triton_rows(x2, y, op):
    M, N = x2.shape
    BLOCK = min(4096, triton.next_power_of_2(N))
    _rows[(M,)](x2, y, N, x2.stride(0), BLOCK=BLOCK, OP=op)


class Redjit:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        L = self.lib
        L.rj_ctx_new.restype = ctypes.c_void_p
        L.rj_errmsg.restype = ctypes.c_char_p
        L.rj_errmsg.argtypes = [ctypes.c_void_p]
        L.rj_request_parse.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        L.rj_request_size.restype = ctypes.c_size_t
        L.rj_reduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                ctypes.c_uint64, ctypes.c_void_p]  # src, dst: rj_devptr
        self.ctx = L.rj_ctx_new()

    def request(self, json):
        buf = ctypes.create_string_buffer(self.lib.rj_request_size())
        s = self.lib.rj_request_parse(self.ctx, json.encode(), buf)
        if s:
            raise RuntimeError(self.lib.rj_errmsg(self.ctx).decode())
        return buf

    def reduce(self, req, x, y):
        s = self.lib.rj_reduce(self.ctx, req, None, x.data_ptr(), y.data_ptr(),
                               torch.cuda.current_stream().cuda_stream)
        if s:
            raise RuntimeError(self.lib.rj_errmsg(self.ctx).decode())


def bench(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def main():
    rj = Redjit(sys.argv[1])
    cases = [l.split() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
    torch.manual_seed(0)
    print(f"GPU: {torch.cuda.get_device_name()}  date: {datetime.date.today()}  torch {torch.__version__}"
          f"  triton {triton.__version__}  cupy {cupy.__version__ if cupy else '-'}\n")
    print("| case | copy | torch | cupy | triton | ours | ours-dyn | dyn / ours | ours / best peer "
          "| ours vs copy | ok |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    ratios, dratios = [], []
    for name, dt, op, axes, shape in cases:
        shape = [int(s) for s in shape.split(",")]
        ax = [int(a) for a in axes.split(",")]
        t = DT[dt]
        if t.is_floating_point:
            x = torch.rand(shape, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(t)
        else:
            x = torch.randint(-100, 101, shape, device="cuda", dtype=t)
        kept = [s for i, s in enumerate(shape) if i not in ax] or [1]
        y = torch.empty(kept, device="cuda", dtype=t)
        nbytes = x.numel() * x.element_size() + y.numel() * y.element_size()
        gb = lambda ms, b=nbytes: b / (ms * 1e6)
        xc = torch.empty_like(x)
        copy = gb(bench(lambda: xc.copy_(x)), 2 * x.numel() * x.element_size())
        dim = tuple(ax)
        tfn = {"sum": lambda: torch.sum(x, dim=dim), "max": lambda: torch.amax(x, dim=dim),
               "min": lambda: torch.amin(x, dim=dim)}[op]
        res = {"torch": gb(bench(tfn))}
        if cupy is not None and dt != "bf16":
            cx = cupy.asarray(x)
            cfn = {"sum": cupy.sum, "max": cupy.max, "min": cupy.min}[op]
            res["cupy"] = gb(bench(lambda: cfn(cx, axis=tuple(ax))))
        if t.is_floating_point and (ax == [len(shape) - 1]):
            x2 = x.reshape(-1, shape[-1])
            y2 = torch.empty(x2.shape[0], device="cuda", dtype=t)
            opi = ["sum", "max", "min"].index(op)
            if len(shape) == 1:  # 1-D: 1024 rows of partials, then torch folds them
                x2 = x.reshape(1024, -1) if x.numel() % 1024 == 0 and x.numel() >= 1024 * 16 else x2
                y2 = torch.empty(x2.shape[0], device="cuda", dtype=torch.float32 if dt == "f32" else t)
                fn = lambda: (triton_rows(x2, y2, opi), y2.sum())
            else:
                fn = lambda: triton_rows(x2, y2, opi)
            res["triton"] = gb(bench(fn))
        req = rj.request('{"kind":"tensor","op":"%s","dtype":"%s","shape":%s,"axes":%s}'
                         % (op, dt, shape, ax))
        dreq = rj.request('{"kind":"tensor","op":"%s","dtype":"%s","shape":%s,"axes":%s,"dynamic":true}'
                          % (op, dt, shape, ax))
        ref = tfn()

        def same(y):
            if t.is_floating_point:
                return torch.allclose(y.reshape(ref.shape).float(), ref.float(),
                                      rtol=2e-2 if dt == "bf16" else 1e-3,
                                      atol=1e-2 * math.sqrt(x.numel() / y.numel()))
            return torch.equal(y.reshape(ref.shape).to(torch.int64), ref.to(torch.int64))

        rj.reduce(req, x, y)
        torch.cuda.synchronize()
        ok = same(y)
        y.fill_(0)
        rj.reduce(dreq, x, y)
        torch.cuda.synchronize()
        ok = ok and same(y)
        ours = gb(bench(lambda: rj.reduce(req, x, y)))
        dyn = gb(bench(lambda: rj.reduce(dreq, x, y)))
        dratios.append(dyn / ours)
        best = max(res.values())
        ratios.append(ours / best)
        cell = lambda k: f"{res[k]:.0f}" if k in res else "—"
        print(f"| {name} | {copy:.0f} | {cell('torch')} | {cell('cupy')} | {cell('triton')} | "
              f"{ours:.0f} | {dyn:.0f} | {dyn / ours:.2f} | {ours / best:.2f} | {ours / copy:.2f} | "
              f"{'yes' if ok else 'NO'} |", flush=True)
        del x, y, xc
        torch.cuda.empty_cache()
    g = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"\ngeo-mean ours / best peer over {len(ratios)} cases: {g:.2f}")
    gd = math.exp(sum(math.log(r) for r in dratios) / len(dratios))
    print(f"geo-mean ours-dyn / ours (runtime-size vs constant kernels) over {len(dratios)} cases: {gd:.2f}")


if __name__ == "__main__":
    main()
