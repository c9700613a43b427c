#!/usr/bin/env python3
"""The cost of "invariant": true (docs/INVARIANCE.md): each case of cases.txt (and the state ops
on a few of them) reduced by redjit's default kernel and by the invariant one, timed both ways
in one process:
  rotated  `redjit bench` (rj_bench: CUDA events, data rotated through >= 256 MiB, median),
  flushed  triton.testing.do_bench of rj_reduce through ctypes on a torch tensor (L2 flushed
           before every run, median);
with torch under torch.use_deterministic_algorithms(True) beside them (flushed).  Prints a
Markdown table, then the geo-means of invariant / default per method and the worst case (the
goal: <= 5 % geo-mean, <= 10 % on any case).  Also checks that the invariant result of every case
is within the float64 reference's tolerance and that a second launch gives the same bits.
With --against VARIANT the second kernel is the default request forced to that variant instead
of the invariant one (e.g. --against tensor_cols: where dispatch routes default column requests
to tensor_inv_cols, the routed kernel against the one it replaced), and with --first invariant
the first kernel is the invariant one ("ok" then checks the first).
Usage: invariant.py LIBREDJIT REDJIT_CLI [cases.txt] [--against VARIANT [--first invariant]]"""
import ctypes, datetime, functools, json, math, subprocess, sys
import torch, triton

DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64,
      "i32": torch.int32}
STATE_CASES = ["1d-2^24", "rows-4096x4096", "cols-4096x4096", "rows-32x2^22"]
STATE_OPS = ["argmax", "var", "logsumexp"]


class Redjit:
    def __init__(self, path):
        L = self.lib = ctypes.CDLL(path)
        L.rj_ctx_new.restype = ctypes.c_void_p
        L.rj_errmsg.restype = ctypes.c_char_p
        L.rj_errmsg.argtypes = [ctypes.c_void_p]
        L.rj_request_parse.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        L.rj_request_size.restype = ctypes.c_size_t
        L.rj_reduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64,
                                ctypes.c_uint64, ctypes.c_void_p]
        self.ctx = L.rj_ctx_new()

    def request(self, text):
        buf = ctypes.create_string_buffer(self.lib.rj_request_size())
        if self.lib.rj_request_parse(self.ctx, text.encode(), buf):
            raise RuntimeError(self.lib.rj_errmsg(self.ctx).decode())
        return buf

    def reduce(self, req, x, y):
        if self.lib.rj_reduce(self.ctx, req, None, x.data_ptr(), y.data_ptr(),
                              torch.cuda.current_stream().cuda_stream):
            raise RuntimeError(self.lib.rj_errmsg(self.ctx).decode())


def flushed(fn):
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def rotated(cli, text):
    out = subprocess.run([cli, "bench", text], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["kernel_ms"]


def torch_fn(op, x, dim):
    if op == "sum":
        return lambda: torch.sum(x, dim=dim)
    if op in ("max", "min"):
        return lambda: (torch.amax if op == "max" else torch.amin)(x, dim=dim)
    if op == "argmax":
        return lambda: torch.argmax(x.reshape(-1) if len(dim) == x.dim() else x, dim=None
                                    if len(dim) == x.dim() else dim[0])
    if op in ("var", "std"):
        return lambda: (torch.var if op == "var" else torch.std)(x, dim=dim)
    if op == "mean":
        return lambda: torch.mean(x, dim=dim)
    if op == "prod":  # torch.prod takes one dim: the last ones first
        return lambda: functools.reduce(lambda v, d: torch.prod(v, dim=d),
                                        sorted(dim, reverse=True), x)
    return lambda: torch.logsumexp(x.float(), dim=dim)


def one(rj, cli, name, dt, op, shape, ax, against=None, first_inv=False):
    t = DT[dt]
    if t.is_floating_point:
        x = torch.rand(shape, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(t)
    else:
        x = torch.randint(-100, 101, shape, device="cuda", dtype=t)
    kept = [s for i, s in enumerate(shape) if i not in ax] or [1]
    odt = torch.int64 if op == "argmax" else t
    y, yi = (torch.empty(kept, device="cuda", dtype=odt) for _ in range(2))
    base = '{"kind":"tensor","op":"%s","dtype":"%s","shape":%s,"axes":%s' % (op, dt, shape, ax)
    second = ',"variant":"%s"}' % against if against else ',"invariant":true}'
    texts = [base + (',"invariant":true}' if first_inv else "}"), base + second]
    reqs = [rj.request(s) for s in texts]
    dim = tuple(ax)
    ref = torch_fn(op, x.double() if t.is_floating_point and op != "argmax" else x, dim)()
    checked = reqs[0] if against else reqs[1]
    rj.reduce(checked, x, yi)
    torch.cuda.synchronize()
    first = yi.clone()
    rj.reduce(checked, x, yi)
    torch.cuda.synchronize()
    ok = torch.equal(first, yi)
    if op == "argmax" or not t.is_floating_point:
        ok = ok and torch.equal(yi.reshape(ref.shape).to(torch.int64), ref.to(torch.int64))
    else:
        n = x.numel() / max(1, yi.numel())
        ok = ok and torch.allclose(yi.reshape(ref.shape).double(), ref.double(),
                                   rtol=2e-2 if dt == "bf16" else 1e-3, atol=1e-2 * math.sqrt(n))
    fl = [flushed(lambda r=r, o=o: rj.reduce(r, x, o)) for r, o in ((reqs[0], y), (reqs[1], yi))]
    ro = [rotated(cli, s) for s in texts]
    torch.use_deterministic_algorithms(True)
    try:
        det = flushed(torch_fn(op, x, dim))
    except RuntimeError:  # torch refuses a deterministic version
        det = float("nan")
    finally:
        torch.use_deterministic_algorithms(False)
    del x, y, yi
    torch.cuda.empty_cache()
    return fl, ro, det, ok


def main():
    args, opt = sys.argv[1:], {}
    for flag in ("--against", "--first"):
        if flag in args:
            i = args.index(flag)
            if i + 1 >= len(args):
                sys.exit(f"{flag} needs a value")
            opt[flag] = args[i + 1]
            del args[i:i + 2]
    if opt.get("--first", "invariant") != "invariant" or ("--first" in opt) > ("--against" in opt):
        sys.exit("--first takes only 'invariant', and only with --against")
    against, first_inv = opt.get("--against"), "--first" in opt
    rj, cli = Redjit(args[0]), args[1]
    path = args[2] if len(args) > 2 else "bench/cases.txt"
    second, first = against or "invariant", "invariant" if first_inv else "default"
    cases = [l.split() for l in open(path) if l.strip() and not l.startswith("#")]
    extra = [(f"{op}-{c[0]}", c[1], op, c[3], c[4]) for op in STATE_OPS for c in cases
             if c[0] in STATE_CASES]
    torch.manual_seed(0)
    print(f"GPU: {torch.cuda.get_device_name()}  date: {datetime.date.today()}  "
          f"torch {torch.__version__}  triton {triton.__version__}\n")
    print(f"| case | {first} µs flushed | {second} µs flushed | {second} / {first} flushed | "
          f"{first} µs rotated | {second} µs rotated | {second} / {first} rotated | "
          "torch deterministic µs | ok |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst, ratios = {"flushed": [], "rotated": []}, {"flushed": [], "rotated": []}
    for i, (name, dt, op, axes, shape) in enumerate(cases + extra):
        shape = [int(s) for s in shape.split(",")]
        ax = [int(a) for a in axes.split(",")]
        fl, ro, det, ok = one(rj, cli, name, dt, op, shape, ax, against, first_inv)
        rf, rr = fl[1] / fl[0], ro[1] / ro[0]
        if i < len(cases):  # the 22 tensor cases: the goal's geo-mean
            ratios["flushed"].append(rf)
            ratios["rotated"].append(rr)
        worst["flushed"].append((rf, name))
        worst["rotated"].append((rr, name))
        print(f"| {name} | {fl[0] * 1e3:.1f} | {fl[1] * 1e3:.1f} | {rf:.2f} | {ro[0] * 1e3:.1f} | "
              f"{ro[1] * 1e3:.1f} | {rr:.2f} | {det * 1e3:.1f} | {'yes' if ok else 'NO'} |",
              flush=True)
    for m in ("flushed", "rotated"):
        g = math.exp(sum(math.log(r) for r in ratios[m]) / len(ratios[m]))
        w = max(worst[m])
        print(f"\n{m}: geo-mean {second} / {first} over {len(ratios[m])} cases {g:.3f}; "
              f"worst {w[0]:.2f} ({w[1]})")


if __name__ == "__main__":
    main()
