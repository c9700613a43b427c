#!/usr/bin/env python3
"""Tensor tuning probe: one libredjit build's rj_reduce over the cases, do_bench (median, L2
flushed, as bench/peers.py) next to a D2D copy of the same bytes, and the result checked against
torch.  One process per build (each build is its own libredjit.so.0.2).  VARIANT=name forces a
variant.  Usage: tune_probe.py LABEL LIBREDJIT cases.txt"""
import os, sys, triton, torch
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from peers import Redjit, DT  # noqa: E402


def main():
    label, lib, cases = sys.argv[1], sys.argv[2], sys.argv[3]
    rj = Redjit(lib)
    for l in open(cases):
        if not l.strip() or l.startswith("#"):
            continue
        name, dt, op, axes, shape = l.split()
        shape = [int(s) for s in shape.split(",")]
        ax = [int(a) for a in axes.split(",")]
        t = DT[dt]
        x = torch.rand(shape, device="cuda").to(t) if t.is_floating_point else \
            torch.randint(-100, 101, shape, device="cuda", dtype=t)
        kept = [s for i, s in enumerate(shape) if i not in ax] or [1]
        y = torch.empty(kept, device="cuda", dtype=t)
        var = os.environ.get("VARIANT", "")
        req = rj.request('{"kind":"tensor","op":"%s","dtype":"%s","shape":%s,"axes":%s%s}'
                         % (op, dt, shape, ax, ',"variant":"%s"' % var if var else ""))
        try:
            rj.reduce(req, x, y)
        except RuntimeError as err:
            print(f"{label} {name} n/a ({err})", flush=True)
            continue
        ref = {"sum": lambda: x.double().sum(dim=ax), "max": lambda: x.amax(dim=ax).double(),
               "min": lambda: x.amin(dim=ax).double()}[op]().reshape(y.shape)
        ok = bool(torch.allclose(y.double(), ref, rtol=1e-4, atol=1e-3 * x.numel() ** 0.5))
        xc = torch.empty_like(x)
        nb = x.numel() * x.element_size()
        copy = triton.testing.do_bench(lambda: xc.copy_(x), warmup=25, rep=100, return_mode="median")
        ours = triton.testing.do_bench(lambda: rj.reduce(req, x, y), warmup=25, rep=100, return_mode="median")
        print(f"{label} {name} ours_us {ours * 1e3:.1f} ours_gbs {nb / ours / 1e6:.0f} "
              f"copy_gbs {2 * nb / copy / 1e6:.0f} ratio {(nb / ours) / (2 * nb / copy):.3f} "
              f"ok {ok}", flush=True)
        del x, y, xc
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
