"""redjit's fused maps from Python on a GPU, against torch: dot ((x * y).sum(dim), torch.dot),
torch.linalg.vector_norm (p = 1, 2, inf; f16 / bf16 / f32 values whose squares overflow),
masked sums and means (a bool-like mask of another dtype, broadcast; NumPy's where=), mse / l1
against torch.nn.functional, an epilogue, and a caller's map as LLVM IR (Huber's loss against
F.huber_loss).  Each test skips, with the reason, without torch
or a GPU.
Run: pytest tests/python/test_gpu_fused.py, or python3 tests/python/test_gpu_fused.py [NAME...]."""
import _runner

_runner.setup_path()
import redjit  # noqa: E402


_torch = _runner.cuda_torch  # torch with a GPU, or the test skipped


_TOL = {"float16": (2e-3, 1e-2), "bfloat16": (1.6e-2, 5e-2), "float32": (1e-5, 1e-4),
        "float64": (1e-12, 1e-10)}


def _close(torch, got, want, x):
    r, a = _TOL[str(x.dtype).split(".")[1]]
    scale = max(1.0, float(want.abs().max().float()))
    assert torch.allclose(got.double(), want.double(), rtol=r * 4, atol=a * scale), (got, want)


def _dtypes(torch):
    return (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def test_dot():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(1)
    for dt in _dtypes(torch):
        x = torch.rand(257, 1031, device="cuda", generator=g).to(dt) - 0.5
        y = torch.rand(257, 1031, device="cuda", generator=g).to(dt) - 0.5
        for dim in (0, 1):
            _close(torch, redjit.dot(x, y, dim), (x.double() * y.double()).sum(dim), x)
        w = y[0]  # one weight row for every row: broadcast
        _close(torch, redjit.dot(x, w, 1), (x.double() * w.double()).sum(1), x)
        _close(torch, redjit.dot(x.t(), y.t(), 0), (x.double() * y.double()).sum(1), x)
        v, u = x.flatten(), y.flatten()
        _close(torch, redjit.dot(v, u), torch.dot(v.double(), u.double()), x)


def test_norm():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(2)
    for dt in _dtypes(torch):
        x = torch.randn(64, 513, device="cuda", generator=g).to(dt)  # f16: the 1-norm fits
        for p in (1, 2, float("inf")):
            for dim in (None, 0, 1):
                want = torch.linalg.vector_norm(x.double(), p, dim)
                _close(torch, redjit.norm(x, p, dim), want, x)
    # squares above the dtype's (and f32's) largest finite value
    for dt, v in ((torch.float16, 24576.0), (torch.bfloat16, 2.0 ** 120),
                  (torch.float32, 2.0 ** 120)):
        x = torch.full((4,), v, device="cuda", dtype=dt)
        got = redjit.norm(x)
        assert float(got) == 2 * v, (dt, got)


def test_masked_sum():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(3)
    for dt in _dtypes(torch):
        x = torch.rand(300, 1000, device="cuda", generator=g).to(dt)
        for mdt in (torch.float32, torch.int32, dt):
            m = (torch.rand(300, 1000, device="cuda", generator=g) > 0.5).to(mdt)
            want = (x.double() * (m != 0).double()).sum(1)
            _close(torch, redjit.reduce(x, "sum", 1, others=(m,), map="where"), want, x)
            z = torch.zeros_like(m)
            got = redjit.reduce(x, "sum", 1, others=(z,), map="where")
            assert bool((got == 0).all())
        col = (torch.rand(300, 1, device="cuda", generator=g) > 0.5).float()  # per row
        want = (x.double() * col.double()).sum(1)
        _close(torch, redjit.reduce(x, "sum", 1, others=(col,), map="where"), want, x)
        cnt = redjit.reduce((x > 0.5).to(dt), "count_nonzero", 1)
        _close(torch, cnt, torch.count_nonzero(x > 0.5, 1).double(), x)  # bf16: rounded


def test_losses_and_epilogue():
    torch = _torch()
    F = torch.nn.functional
    g = torch.Generator(device="cuda").manual_seed(4)
    for dt in _dtypes(torch):
        x = torch.randn(4096, device="cuda", generator=g).to(dt)
        y = torch.randn(4096, device="cuda", generator=g).to(dt)
        _close(torch, redjit.reduce(x, "mse", others=(y,)), F.mse_loss(x.double(), y.double()), x)
        _close(torch, redjit.reduce(x, "l1", others=(y,)), F.l1_loss(x.double(), y.double()), x)
        got = redjit.reduce(x, "sum", epilogue="scale", scale=1 / 4096)
        _close(torch, got, x.double().mean(), x)
        got = redjit.reduce(x, "mean", map="abs", epilogue="log")
        _close(torch, got, x.double().abs().mean().log(), x)


def test_masked_mean():
    """redjit.mean(x, axis=, where=) as numpy.mean(x, axis, where=): the selected elements' sum
    over their count, NaN where a row selects none; f16 data with f32, int8 and bool masks,
    broadcast masks, keepdims, and reduce(..., "mean", map="where")."""
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(5)
    for dt in _dtypes(torch):
        x = torch.randn(300, 1000, device="cuda", generator=g).to(dt)
        for mdt in (torch.float32, torch.int8, torch.bool):
            m = (torch.rand(300, 1000, device="cuda", generator=g) > 0.7).to(mdt)
            m[7] = 0  # a row selecting nothing: NaN
            sel = (m != 0).double()
            for dim in (0, 1):
                want = (x.double() * sel).sum(dim) / sel.sum(dim)
                got = redjit.mean(x, axis=dim, where=m)
                assert got.dtype == x.dtype and got.shape == want.shape
                nan = torch.isnan(want)
                assert bool((torch.isnan(got.double()) == nan).all()), (dt, mdt, dim)
                _close(torch, got.double()[~nan], want[~nan], x)
            got = redjit.reduce(x, "mean", 1, others=(m,), map="where")
            assert bool(torch.isnan(got[7].double()))
            s = redjit.sum(x, axis=1, where=m, keepdims=True)
            assert s.shape == (300, 1) and float(s[7, 0]) == 0.0
            _close(torch, s[:, 0], (x.double() * sel).sum(1), x)
        row = (torch.rand(1000, device="cuda", generator=g) > 0.5)  # one mask for every row
        want = (x.double() * row.double()).sum(1) / row.double().sum()
        _close(torch, redjit.mean(x, axis=1, where=row), want, x)
        v = x.flatten()
        mv = (torch.rand(v.numel(), device="cuda", generator=g) > 0.5).to(torch.int8)
        _close(torch, redjit.mean(v, where=mv), v.double()[mv != 0].mean(), x)
        assert bool(torch.isnan(redjit.mean(v, where=torch.zeros_like(mv)).double()))


def _fused_ref(torch, op, x, y, m, dim, p=None):
    """op of x (and y or the mask m) over dim in float64, as redjit's named fused ops define it"""
    x, y, sel = x.double(), y.double(), (m != 0).double()
    return {"dot": lambda: (x * y).sum(dim), "sumsq": lambda: (x * x).sum(dim),
            "norm": lambda: torch.linalg.vector_norm(x, p, dim),
            "amax": lambda: x.abs().amax(dim), "mse": lambda: ((x - y) ** 2).mean(dim),
            "l1": lambda: (x - y).abs().mean(dim),
            "count_nonzero": lambda: (x != 0).double().sum(dim),
            "masked_sum": lambda: (x * sel).sum(dim),
            "masked_mean": lambda: (x * sel).sum(dim) / sel.sum(dim)}[op]()


_FUSED_CALLS = (("dot", "y", None), ("sumsq", None, None), ("norm", None, 2), ("norm", None, 1),
                ("norm", None, "inf"), ("amax", None, None), ("mse", "y", None), ("l1", "y", None),
                ("count_nonzero", None, None), ("masked_sum", "m", None),
                ("masked_mean", "m", None))


def test_repeated_layouts():
    """Each named fused op called again and again as reduce's memo serves it: the same layout
    with new data (and new addresses), into a given out, then another layout of each kind
    (x transposed, the other input broadcast, another axis, another dtype): every result against
    torch's float64 one (a stale memo entry gives a wrong result or a wrong shape); a wrong out
    is refused on every call."""
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(7)
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        def data(shape):
            x = (torch.rand(shape, device="cuda", generator=g) - 0.4).to(dt)
            x = torch.where(x.float() > 0.3, torch.zeros_like(x), x)  # zeros for count_nonzero
            y = (torch.rand(shape, device="cuda", generator=g) - 0.5).to(dt)
            m = (torch.rand(shape, device="cuda", generator=g) > 0.5).to(torch.uint8)
            return x, y, m

        for op, other, p in _FUSED_CALLS:
            def check(x, y, m, dim, out=None, oth=None):
                o = (oth,) if oth is not None else (y,) if other == "y" else \
                    (m,) if other == "m" else ()
                got = redjit.reduce(x, op, dim, others=o, p=p, out=out)
                if out is not None:
                    assert got is out
                ref_y = oth if oth is not None and other == "y" else y
                ref_m = oth if oth is not None and other == "m" else m
                want = _fused_ref(torch, op, x, ref_y.expand_as(x), ref_m.expand_as(x), dim,
                                  float(p) if p == "inf" else p)
                assert got.shape == want.shape and got.dtype == x.dtype, (op, got.shape)
                _close(torch, got, want, x)

            for i in range(3):  # the first call prepares the layout, the others are memo hits
                x, y, m = data((96, 200))
                check(x, y, m, 1)
            out = torch.empty(96, device="cuda", dtype=dt)
            for i in range(2):
                x, y, m = data((96, 200))
                check(x, y, m, 1, out=out)
            for i in range(2):  # transposed in memory, then the other axis
                x, y, m = data((200, 96))
                check(x.t(), y.t(), m.t(), 1)
                check(x, y, m, 0)
            if other is not None:
                for i in range(2):  # one row of the other input for every row: broadcast
                    x, y, m = data((96, 200))
                    check(x, y, m, 1, oth=(y if other == "y" else m)[0])
            bad = torch.empty(96, device="cuda", dtype=torch.float64)
            for i in range(2):
                x, y, m = data((96, 200))
                o = (y,) if other == "y" else (m,) if other == "m" else ()
                try:
                    redjit.reduce(x, op, 1, others=o, p=p, out=bad)
                    raise AssertionError(f"{op}: an f64 out for {dt} was taken")
                except redjit.RedjitError as e:
                    assert "out: dtype" in e.message, e.message
    x = torch.randn(96, 200, device="cuda", generator=g)
    for i in range(3):  # NumPy's where= and redjit.dot / norm: the same memo
        m = (torch.rand(96, 200, device="cuda", generator=g) > 0.5)
        sel = m.double()
        _close(torch, redjit.sum(x, axis=1, where=m), (x.double() * sel).sum(1), x)
        _close(torch, redjit.mean(x, axis=1, where=m),
               (x.double() * sel).sum(1) / sel.sum(1), x)
        y = torch.randn(96, 200, device="cuda", generator=g)
        _close(torch, redjit.dot(x, y, 1), (x.double() * y.double()).sum(1), x)
        _close(torch, redjit.norm(y, 2, 1), torch.linalg.vector_norm(y.double(), 2, 1), x)


HUBER_IR = """define float @huber(float %x, float %y) {
  %d = fsub float %x, %y
  %a = call float @llvm.fabs.f32(float %d)
  %s = fcmp olt float %a, 1.0
  %q = fmul float %d, %d
  %h = fmul float %q, 0.5
  %l = fsub float %a, 0.5
  %r = select i1 %s, float %h, float %l
  ret float %r
}
declare float @llvm.fabs.f32(float)
"""


def test_map_ir_huber():
    """A caller's map as LLVM IR (Huber's loss, delta 1) against torch.nn.functional.huber_loss:
    the mean per row and per column, and the whole mean."""
    torch = _torch()
    F = torch.nn.functional
    g = torch.Generator(device="cuda").manual_seed(6)
    x = torch.randn(300, 1000, device="cuda", generator=g) * 2
    y = torch.randn(300, 1000, device="cuda", generator=g)
    m = {"ir": HUBER_IR, "function": "huber"}
    for dim in (0, 1):
        want = F.huber_loss(x.double(), y.double(), reduction="none").mean(dim)
        _close(torch, redjit.reduce(x, "mean", dim, others=(y,), map=m), want, x)
    want = F.huber_loss(x.double(), y.double())
    _close(torch, redjit.reduce(x, "mean", others=(y,), map=m), want, x)


if __name__ == "__main__":
    _runner.main(globals())
