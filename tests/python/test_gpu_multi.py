"""redjit.multi_reduce on a GPU, against torch: per-tensor sums / max / amax / L2 norms and the
total of a mixed list (empty and one-element tensors, a strided view, f16 / bf16 / f32 / f64),
torch.nn.utils.clip_grad_norm_'s total norm (torch._foreach_norm then vector_norm of the
stack), out= / total_out= reused, bitwise repeatability, a CUDA graph replay, and invariant=True
against torch with each tensor's bits independent of its address, stride and neighbours.  Each test
skips, with the reason, without torch or a GPU.
Run: pytest tests/python/test_gpu_multi.py, or python3 tests/python/test_gpu_multi.py [NAME...]."""
import _runner

_runner.setup_path()
import redjit  # noqa: E402


_torch = _runner.cuda_torch  # torch with a GPU, or the test skipped


_TOL = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-4, "float64": 1e-10}


def _list(torch, dt, n=40, seed=1):
    g = torch.Generator(device="cuda").manual_seed(seed)
    sizes = [0, 1, 31, 33, 1000, 70000, 300001] + [int(s) for s in
                                                    torch.randint(0, 20000, (n,), generator=g,
                                                                  device="cuda")]
    xs = [(torch.rand(s, device="cuda", generator=g) * 2 - 1).to(dt) for s in sizes]
    xs.append((torch.rand(64, 48, device="cuda", generator=g) * 2 - 1).to(dt)[:, 3])  # strided
    return xs


def _close(torch, got, want, dt):
    r = _TOL[str(dt).split(".")[1]]
    got, want = got.double(), want.double()
    fin = want[torch.isfinite(want)]
    scale = max(1.0, float(fin.abs().max())) if fin.numel() else 1.0
    assert torch.allclose(got, want, rtol=r, atol=r * scale), (got, want)


def test_ops_against_torch():
    torch = _torch()
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        xs = _list(torch, dt)
        d = [x.double() for x in xs]
        want = {"sum": [x.sum() for x in d], "sumsq": [(x * x).sum() for x in d],
                "norm": [torch.linalg.vector_norm(x) for x in d],
                "amax": [x.abs().max() if x.numel() else torch.tensor(-float("inf"),
                                                                      device="cuda")
                         for x in d]}
        for op, w in want.items():
            if op == "sumsq" and dt == torch.float16:
                continue
            each, total = redjit.multi_reduce(xs, op, total=True)
            assert each.shape == (len(xs),) and each.dtype == dt
            _close(torch, each, torch.stack(w), dt)
            allx = torch.cat([x.reshape(-1) for x in d])
            wt = {"sum": allx.sum(), "sumsq": (allx * allx).sum(),
                  "norm": torch.linalg.vector_norm(allx), "amax": allx.abs().max()}[op]
            _close(torch, total.reshape(1), wt.reshape(1), dt)


def test_clip_grad_norm_total():
    """The total L2 norm as clip_grad_norm_ computes it (foreach), and out= reused."""
    torch = _torch()
    xs = _list(torch, torch.float32, n=150, seed=2)
    want = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(xs, 2.0)), 2.0)
    tot = torch.empty((), device="cuda")
    got = redjit.multi_reduce(xs, "norm", total=True, per_tensor=False, total_out=tot)
    assert got is tot
    _close(torch, tot.reshape(1), want.reshape(1), torch.float32)
    first = tot.clone()
    for _ in range(3):  # bitwise the same, launch after launch
        redjit.multi_reduce(xs, "norm", total=True, per_tensor=False, total_out=tot)
        assert torch.equal(tot, first)


def test_alone_equals_in_list():
    """A tensor's result does not depend on the other tensors."""
    torch = _torch()
    xs = _list(torch, torch.bfloat16, seed=3)
    each = redjit.multi_reduce(xs, "norm")
    for i in (0, 5, 6, len(xs) - 1):
        one = redjit.multi_reduce([xs[i]], "norm")
        assert torch.equal(one[0], each[i]), (i, one, each[i])


def test_graph_capture():
    torch = _torch()
    xs = _list(torch, torch.float32, seed=4)
    m = redjit.MultiList(xs)
    tot = torch.empty((), device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        m.reduce("norm", total=True, per_tensor=False, total_out=tot)  # compile and load first
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        m.reduce("norm", total=True, per_tensor=False, total_out=tot)
    for x in xs:
        x.mul_(2)
    g.replay()
    torch.cuda.synchronize()
    want = torch.linalg.vector_norm(torch.cat([x.double().reshape(-1) for x in xs]))
    _close(torch, tot.reshape(1), want.reshape(1), torch.float32)


def test_invariant():
    """invariant=True: right against torch; a tensor's bits the same alone, in the list, moved by
    one element (another address mod 16) and as a strided view; the total the same for copies."""
    torch = _torch()
    for dt in (torch.float32, torch.bfloat16):
        xs = _list(torch, dt, seed=5)
        d = [x.double() for x in xs]
        for op, w in (("sum", [x.sum() for x in d]),
                      ("norm", [torch.linalg.vector_norm(x) for x in d])):
            each, total = redjit.multi_reduce(xs, op, total=True, invariant=True)
            _close(torch, each, torch.stack(w), dt)
            allx = torch.cat([x.reshape(-1) for x in d])
            wt = allx.sum() if op == "sum" else torch.linalg.vector_norm(allx)
            _close(torch, total.reshape(1), wt.reshape(1), dt)
            moved = []
            for x in xs:
                buf = torch.empty(x.numel() + 1, device="cuda", dtype=dt)
                buf[1:].copy_(x.reshape(-1))
                moved.append(buf[1:])
            each2, total2 = redjit.multi_reduce(moved, op, total=True, invariant=True)
            assert _same_bits(torch, each2, each), (dt, op)
            assert _same_bits(torch, total2, total), (dt, op)
            for i in (2, 5, 6, len(xs) - 1):
                one = redjit.multi_reduce([xs[i]], op, invariant=True)
                assert _same_bits(torch, one[0], each[i]), (dt, op, i)
                wide = torch.empty(xs[i].numel(), 3, device="cuda", dtype=dt)
                wide[:, 1].copy_(xs[i].reshape(-1))
                one = redjit.multi_reduce([wide[:, 1]], op, invariant=True)
                assert _same_bits(torch, one[0], each[i]), (dt, op, i, "strided")


def _same_bits(torch, a, b):
    return torch.equal(a.reshape(-1).view(torch.int8), b.reshape(-1).view(torch.int8))


if __name__ == "__main__":
    _runner.main(globals())
