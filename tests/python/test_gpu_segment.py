"""redjit.segment_reduce on a GPU, judged by torch: every float dtype, sum / max / min / prod /
mean / argmax / argmin / var / std / logsumexp over ragged segments (lengths 0, 1, 31, 33, up to
70000) of 1-D and 2-D arrays with int32 and int64 offsets, each segment against torch's reduction
of that slice in float64 (empty segments: the documented identities); torch.segment_reduce for
sum / max / mean where torch has it; check=True raising on invalid offsets; invariant=True against
torch and bitwise the same wherever a segment starts.  Each test skips, with
the reason, without torch or a GPU.  Run: pytest tests/python/test_gpu_segment.py, or python3
tests/python/test_gpu_segment.py [NAME...]."""
import math

import _runner

_runner.setup_path()
import redjit  # noqa: E402

try:
    import pytest
    skip = pytest.skip
except ImportError:
    skip = _runner.skip


_torch = _runner.cuda_torch  # torch with a GPU, or the test skipped


_TOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-5, "float64": 1e-12}
_LENS = [0, 1, 31, 33, 0, 7, 4096, 4097, 0, 70000, 2, 5000, 1, 0, 300]


def _offsets(torch, dt):
    off = [0]
    for n in _LENS:
        off.append(off[-1] + n)
    return torch.tensor(off, dtype=dt, device="cuda"), off


def _want(torch, op, seg):
    """op of one segment (float64), torch's; None for an empty one (the identity is checked)."""
    if seg.shape[0] == 0:
        return None
    d = seg.double()
    if op in ("argmax", "argmin"):
        return getattr(torch, op)(d, 0)
    if op in ("var", "std"):
        return getattr(torch, op)(d, 0) if seg.shape[0] > 1 else None
    if op in ("max", "min"):
        return getattr(torch, "amax" if op == "max" else "amin")(d, 0)
    return getattr(torch, op)(d, 0)


def _empty_ok(torch, op, got):
    g = got.double()
    if op in ("sum",):  # +0.0, as NumPy's empty sum
        return bool((g == 0).all()) and not bool(torch.signbit(g).any())
    if op == "prod":
        return bool((g == 1).all())
    if op in ("argmax", "argmin"):
        return bool((got == -1).all())
    if op in ("mean", "var", "std"):
        return bool(torch.isnan(g).all())
    if op in ("max", "logsumexp"):
        return bool((g == -math.inf).all())
    if op == "min":
        return bool((g == math.inf).all())
    return True


def _check(torch, x, op, got, off):
    tol = _TOL[str(x.dtype).split(".")[1]]
    for s in range(len(off) - 1):
        seg = x[off[s]:off[s + 1]]
        w = _want(torch, op, seg)
        if w is None:
            if seg.shape[0] == 0:
                assert _empty_ok(torch, op, got[s]), (op, s, got[s])
            continue
        if op in ("argmax", "argmin"):
            assert torch.equal(got[s].cpu(), w.cpu()), (op, s, got[s], w)
            continue
        scale = max(1.0, float(w.abs().max())) if op not in ("prod",) else 1.0
        n = seg.shape[0]
        err = float((got[s].double() - w).abs().max())
        assert err <= tol * scale * 8 * max(1.0, math.sqrt(n)) + 1e-30, (op, s, n, err, got[s], w)


def test_ops_dtypes():
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(7)
    for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        for odt in (torch.int32, torch.int64):
            offs, off = _offsets(torch, odt)
            for cols in (None, 3):
                shape = (off[-1],) if cols is None else (off[-1], cols)
                x = (torch.rand(shape, device="cuda", generator=g) - 0.25).to(dt)
                for op in ("sum", "max", "min", "mean", "argmax", "argmin", "var", "std",
                           "logsumexp"):
                    got = redjit.segment_reduce(x, offs, op, check=True)
                    torch.cuda.synchronize()
                    _check(torch, x, op, got, off)
                y = (1 + (x.double() - 0.25) / 64).to(dt)  # products near 1
                _check(torch, y, "prod", redjit.segment_reduce(y, offs, "prod"), off)


def test_against_torch_segment_reduce():
    torch = _torch()
    if not hasattr(torch, "segment_reduce"):
        skip("torch.segment_reduce is missing")
    offs, off = _offsets(torch, torch.int64)
    x = torch.rand(off[-1], device="cuda", dtype=torch.float32)
    lengths = torch.tensor(_LENS, device="cuda")
    for op in ("sum", "mean", "max"):
        want = torch.segment_reduce(x.double(), op, lengths=lengths, unsafe=True)
        got = redjit.segment_reduce(x, offs, op).double()
        keep = lengths > 0
        assert torch.allclose(got[keep], want[keep], rtol=1e-5, atol=1e-4), op


def test_deterministic_and_alone():
    torch = _torch()
    offs, off = _offsets(torch, torch.int64)
    x = torch.randn(off[-1], device="cuda", dtype=torch.float32)
    a = redjit.segment_reduce(x, offs, "sum")
    b = redjit.segment_reduce(x, offs, "sum")
    assert torch.equal(a, b)
    for s in range(len(off) - 1):
        one = redjit.segment_reduce(x, offs[s:s + 2].clone(), "sum")
        assert torch.equal(one[0], a[s]), s


def test_check_raises():
    torch = _torch()
    x = torch.ones(100, device="cuda")
    bad = torch.tensor([0, 50, 40, 100], device="cuda")
    e = _runner.raises(redjit.RedjitError, redjit.segment_reduce, x, bad, "sum", check=True)
    assert e.status == "RJ_EINVAL" and "segments" in e.message, e
    got = redjit.segment_reduce(x, torch.tensor([0, 50, 60, 100], device="cuda"), check=True)
    assert got.tolist() == [50.0, 10.0, 40.0]


def test_invariant():
    """invariant=True: right against torch, and each segment's bits the same wherever it starts
    (shifted by one element of a 1-D array or one row of an [N, 3] one: another address mod 16)
    and whatever its neighbours."""
    torch = _torch()
    g = torch.Generator(device="cuda").manual_seed(11)
    offs, off = _offsets(torch, torch.int64)
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        for cols in (None, 3):
            shape = (off[-1] + 1,) if cols is None else (off[-1] + 1, cols)
            base = (torch.rand(shape, device="cuda", generator=g) - 0.25).to(dt)
            x = base[:-1]
            for op in ("sum", "mean", "var", "logsumexp"):
                got = redjit.segment_reduce(x, offs, op, invariant=True)
                torch.cuda.synchronize()
                _check(torch, x, op, got, off)
                moved = torch.cat([base[-1:], x])  # every segment one element later
                shifted = redjit.segment_reduce(moved, offs + 1, op, invariant=True)
                ref = redjit.segment_reduce(moved[1:], offs, op, invariant=True)
                assert _same_bits(torch, shifted, got), (dt, cols, op)
                assert _same_bits(torch, ref, got), (dt, cols, op)
                for s in (2, 7, 9, 11):
                    one = redjit.segment_reduce(x[off[s]:off[s + 1]].clone(),
                                                torch.tensor([0, off[s + 1] - off[s]],
                                                             device="cuda"), op, invariant=True)
                    assert _same_bits(torch, one[0], got[s]), (dt, cols, op, s, one, got[s])


def _same_bits(torch, a, b):
    return torch.equal(a.reshape(-1).view(torch.int8), b.reshape(-1).view(torch.int8))


if __name__ == "__main__":
    _runner.main(globals())
