"""redjit.segment_reduce without a GPU: its argument checks, each naming the argument, before any
GPU work; the request it builds (explain chooses tensor_segmented).  On a GPU:
test_gpu_segment.py.  Run: pytest tests/python/test_segment_cpu.py, or python3
tests/python/test_segment_cpu.py."""
import ctypes

import _runner
from _runner import raises

_runner.setup_path()
import redjit  # noqa: E402

try:
    import pytest
    skip = pytest.skip
except ImportError:
    skip = _runner.skip


class FakeCAI:
    """A __cuda_array_interface__ array that is no array."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7f0000000000):
        self.__cuda_array_interface__ = {"version": 3, "shape": shape, "typestr": typestr,
                                         "strides": strides, "data": (ptr, False)}


def _has_gpu():
    try:
        c = redjit._ctx()
        n = ctypes.c_int()
        return c.L.rj_device_count(c.ptr, ctypes.byref(n)) == 0 and n.value > 0
    except redjit.RedjitError:
        return False


def test_arguments():
    x, off, out = FakeCAI((1000,)), FakeCAI((11,), "<i8"), FakeCAI((10,))
    cases = [
        ((FakeCAI((4, 5, 6)), off), {}, "x: 3 dims"),
        ((FakeCAI((100, 5), strides=(40, 4)), off), {}, "x: must be contiguous"),
        ((x, FakeCAI((11,), "<f4")), {}, "offsets: dtype f32, expected int32 or int64"),
        ((x, FakeCAI((1,), "<i8")), {}, "offsets: shape (1,)"),
        ((x, FakeCAI((11, 2), "<i8")), {}, "offsets: shape (11, 2)"),
        ((x, FakeCAI((11,), "<i8", strides=(16,))), {}, "offsets: must be contiguous"),
        ((x, off), {"out": FakeCAI((11,))}, "out: shape (11,), expected (10,)"),
        ((x, off), {"out": FakeCAI((10,), "<f8")}, "out: dtype f64, expected f32"),
        ((x, off, "argmax"), {"out": out}, "out: dtype f32, expected i64"),
        ((x, off, "avg"), {"out": out}, "op"),
        ((x, off), {"out": out, "nan": "drop"}, "nan"),
    ]
    for a, kw, msg in cases:
        e = raises(redjit.RedjitError, redjit.segment_reduce, *a, **kw)
        assert e.status == "RJ_EINVAL" and msg in e.message, (msg, e.status, e.message)
    e = raises(redjit.RedjitError, redjit.segment_reduce, FakeCAI((100, 5)), off,
               out=FakeCAI((10,)))
    assert "out: shape (10,), expected (10, 5)" in e.message, e.message
    e = raises(redjit.RedjitError, redjit.segment_reduce, x, off, "sum",
               out=FakeCAI((10,)), correction=1)
    assert e.status == "RJ_EINVAL" and "correction" in e.message, e.message


def test_without_gpu():
    if _has_gpu():
        skip("a GPU is present: FakeCAI's pointers would reach it (test_gpu_segment.py)")
    e = raises(redjit.RedjitError, redjit.segment_reduce, FakeCAI((1000,)), FakeCAI((11,), "<i4"),
               out=FakeCAI((10,)))
    assert e.status == "RJ_ENODEV", e


def test_explain():
    t = redjit.explain({"kind": "tensor", "op": "max", "dtype": "bf16", "shape": [4096, 8],
                        "axes": [0], "segments": {"count": 100, "dtype": "i32"}},
                       target="sm_90")
    assert "tensor_segmented prio=40 chosen (segments: 100 of [N, 8] rows" in t, t


def test_invariant():
    """invariant=True asks for "invariant": true: one-element loads, explain says why."""
    t = redjit.explain({"kind": "tensor", "op": "sum", "dtype": "f32", "shape": [100000],
                        "segments": {"count": 100, "dtype": "i32"}, "invariant": True},
                       target="sm_90")
    assert "element loads in index order" in t and "invariant: yes (tensor_segmented" in t, t
    if not _has_gpu():  # parsed, then refused for want of a GPU
        e = raises(redjit.RedjitError, redjit.segment_reduce, FakeCAI((1000,)),
                   FakeCAI((11,), "<i4"), out=FakeCAI((10,)), invariant=True)
        assert e.status == "RJ_ENODEV", e


if __name__ == "__main__":
    _runner.main(globals())
