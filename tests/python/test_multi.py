"""redjit.multi_reduce / redjit.MultiList without a GPU: the arguments refused before any launch,
each naming its field, and the list request that a call builds (its canonical form).
Run: pytest tests/python/test_multi.py, or python3 tests/python/test_multi.py."""
import _runner
from _runner import raises

_runner.setup_path()
import redjit  # noqa: E402


class FakeCAI:
    """A __cuda_array_interface__ array that is no array (its pointer is never read here)."""

    def __init__(self, shape, typestr="<f4", strides=None, ptr=0x7f0000000000):
        self.__cuda_array_interface__ = {"version": 3, "shape": shape, "typestr": typestr,
                                         "strides": strides, "data": (ptr, False)}


def _einval(call, *args, **kw):
    e = raises(redjit.RedjitError, call, *args, **kw)
    assert e.status == "RJ_EINVAL", e
    return e.message


def test_arguments_refused():
    a, b = FakeCAI((10,)), FakeCAI((3, 4), ptr=0x7f0000100000)
    assert "tensors: expected a list" in _einval(redjit.multi_reduce, a)
    assert "tensors: an empty list" in _einval(redjit.MultiList, [])
    assert "tensors[1]: dtype f64, tensors[0] is f32" in _einval(
        redjit.MultiList, [a, FakeCAI((5,), "<f8")])
    assert "tensors[1]: strides" in _einval(
        redjit.MultiList, [a, FakeCAI((3, 4), strides=(32, 4))])  # rows with a gap
    assert "give torch tensors or CuPy arrays" in _einval(redjit.MultiList, [a, b])
    e = _einval(redjit.MultiList, [a] * 10241)
    assert "at most 10240" in e


def test_strided_runs():
    """One run of one stride is a list entry: (length, stride)."""
    from redjit._multi import _flat
    from redjit._arrays import describe
    assert _flat(describe(FakeCAI((3, 4))), 0) == (12, 1)
    assert _flat(describe(FakeCAI((3, 4), strides=(32, 8))), 0) == (12, 2)
    assert _flat(describe(FakeCAI((5, 1), strides=(12, 4))), 0) == (5, 3)
    assert _flat(describe(FakeCAI((0, 4))), 0) == (0, 1)


def test_list_request():
    """The request a call parses: canonical, with the list's count and total."""
    c = redjit.canonical({"kind": "tensor", "op": "norm", "dtype": "bf16",
                          "list": {"count": 150, "total": True}})
    assert c["list"] == {"count": 150, "total": True} and "shape" not in c, c
    assert c["map"] == "square" and c["epilogue"] == "sqrt", c
    e = raises(redjit.RedjitError, redjit.canonical,
               {"kind": "tensor", "op": "mean", "dtype": "f32",
                "list": {"count": 3, "total": True}})
    assert "list.total" in e.message, e


def test_invariant_request():
    """MultiList.reduce(invariant=True) parses a list request with "invariant": true, kept apart
    from the default one."""
    import json
    from redjit._multi import MultiList
    m = object.__new__(MultiList)
    m.dtype, m.count, m._keys = "bf16", 150, {}
    inv, _ = m._key(("norm", True, "propagate", True))
    plain, _ = m._key(("norm", True, "propagate", False))
    assert json.loads(inv)["invariant"] is True and "invariant" not in json.loads(plain), inv
    c = redjit.canonical(json.loads(inv))
    assert c["invariant"] is True and c["list"] == {"count": 150, "total": True}, c
    t = redjit.explain(json.loads(inv), target="sm_90")
    assert "invariant: yes (tensor_multi: the tree of each tensor" in t, t


if __name__ == "__main__":
    _runner.main(globals())
