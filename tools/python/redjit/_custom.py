"""op custom from Python: redjit.Custom, a caller's combine given as LLVM IR text (docs/PYTHON.md,
"Custom combines"; the request's fields: docs/REQUESTS.md, "Custom combine")."""

from ._lib import DTYPE, ITEMSIZE, RedjitError, dumps

_FIELDS_MAX = 4  # RJ_COMBINE_FIELDS_MAX


def _einval(msg):
    return RedjitError("RJ_EINVAL", msg)


def _identity(v, what):
    """A number, or "0x..." bits, as the request takes it (the library checks exactness)."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise _einval(f"{what}: expected a number or \"0x...\" (its bits), not {v!r}")
    if isinstance(v, float) and v != v:
        raise _einval(f"{what}: NaN is not a number JSON holds (give \"0x...\" bits)")
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        raise _einval(f"{what}: infinity is not a number JSON holds (give \"0x...\" bits)")
    return v


class Custom:
    """op custom: `redjit.reduce(x, op=redjit.Custom(...))`.

    ir: the text of an LLVM 22 module defining the functions named below.
    function: the combine's name: T fn(T, T) for the input dtype T (a scalar state), or
        S fn(S, S) for the literal struct S = { field types } of `state`.
    identity: the combine's identity: a number or "0x..." bits; with `state`, a list, one per
        field.
    commutative: True lets every variant serve it; False keeps index order (fn(lower, higher)).
    state: None (the state is one value of the input dtype), or a list of 1 to 4 field dtypes
        ("f16" "bf16" "f32" "f64" "i32" "u32" "i64" "u64").
    lift: with `state`, the name of S lift(T x, i64 index) (index: the element's position in its
        reduction, row-major over the reduced dims).
    finish: with `state`, optionally the name of R finish(S), R the dtype of field `result`.
    result: with `state`, the field whose dtype the output has (and which the output is, without
        `finish`).
    A Custom is immutable and hashable: equal arguments give equal objects (one kernel)."""

    __slots__ = ("_combine", "_key", "result_dtype")

    def __init__(self, ir, function="combine", identity=None, commutative=False, *, state=None,
                 lift=None, finish=None, result=0):
        if not isinstance(ir, str) or not ir:
            raise _einval("combine.ir: expected the LLVM IR text (a non-empty str)")
        if not isinstance(function, str) or not function:
            raise _einval("combine.function: expected the combine's name (a str)")
        if not isinstance(commutative, bool):
            raise _einval(f"combine.commutative: expected True or False, not {commutative!r}")
        for name, v in (("ir", ir), ("function", function), ("lift", lift), ("finish", finish)):
            if isinstance(v, str) and "\0" in v:  # C would read the text up to the NUL
                raise _einval(f"combine.{name}: holds a NUL character at {v.index(chr(0))}")
        c = {"ir": ir, "function": function, "commutative": commutative}
        if state is None:
            if identity is None:
                raise _einval("combine.identity: required (the combine's identity)")
            for name, v in (("lift", lift), ("finish", finish)):
                if v is not None:
                    raise _einval(f"combine.{name}: applies only with state=[...]")
            if result:
                raise _einval("combine.result: applies only with state=[...]")
            c["identity"] = _identity(identity, "combine.identity")
            self.result_dtype = None
        else:
            state = list(state)
            if not 1 <= len(state) <= _FIELDS_MAX:
                raise _einval(f"combine.state: {len(state)} fields, expected 1 to {_FIELDS_MAX}")
            for i, d in enumerate(state):
                if d not in ITEMSIZE:
                    raise _einval(f"combine.state[{i}].dtype: unknown value {d!r}")
            ids = list(identity) if isinstance(identity, (list, tuple)) else None
            if ids is None or len(ids) != len(state):
                raise _einval(f"combine.state: identity must be a list of {len(state)} values, "
                              "one per field")
            if not isinstance(lift, str) or not lift:
                raise _einval("combine.lift: required with state=[...] (S lift(T x, i64 index))")
            if not isinstance(result, int) or isinstance(result, bool) or \
                    not 0 <= result < len(state):
                raise _einval(f"combine.result: {result!r}, expected a field 0 .. {len(state) - 1}")
            c["state"] = [{"dtype": d, "identity": _identity(v, f"combine.state[{i}].identity")}
                          for i, (d, v) in enumerate(zip(state, ids))]
            c["lift"] = lift
            if finish is not None:
                if not isinstance(finish, str) or not finish:
                    raise _einval("combine.finish: expected a function name (a str)")
                c["finish"] = finish
            c["result"] = result
            self.result_dtype = state[result]
        self._combine = c
        self._key = dumps(c, sort_keys=True)

    def combine(self):
        """The request's "combine" object (a new dict)."""
        import json
        return json.loads(self._key)

    def out_dtype(self, dtype):
        """The output's dtype for input dtype `dtype`."""
        return self.result_dtype or dtype

    def __eq__(self, other):
        return other.__class__ is Custom and other._key == self._key

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        c = self._combine
        return (f"redjit.Custom(function={c['function']!r}, commutative={c['commutative']}"
                + (f", state={[f['dtype'] for f in c['state']]}" if "state" in c else "") + ")")


_GROUP_CACHE = {}  # (Custom, dtype) -> the canonical combine (the library's bits), at most 64


def fill_group(g, op, dtype, canonical):
    """op's combine into rj_treduce_group g for input dtype `dtype` (redjit.treduce).  The
    identities go through the library's canonical form (its checks, "0x..." bits), once per
    (op, dtype).  Returns the IR bytes g points at: keep them alive for the call."""
    key = (op._key, dtype)
    c = _GROUP_CACHE.get(key)
    if c is None:
        req = {"kind": "treduce", "op": "custom", "dtype": dtype, "ranks": 1, "shape": [1],
               "combine": op.combine()}
        c = canonical(req)["combine"]
        if len(_GROUP_CACHE) >= 64:
            _GROUP_CACHE.clear()
        _GROUP_CACHE[key] = c
    ir = c["ir"].encode()
    g.combine.ir = ir
    g.combine.fn = c["function"].encode()
    g.combine.commutative = int(bool(c["commutative"]))
    if "state" not in c:
        g.combine.identity = int(c["identity"], 16)
        return ir
    g.combine.nfields = len(c["state"])
    for i, f in enumerate(c["state"]):
        g.combine.fields[i] = DTYPE[f["dtype"]]
        g.combine.field_identity[i] = int(f["identity"], 16)
    g.combine.lift = c["lift"].encode()
    g.combine.finish = c.get("finish", "").encode()
    g.combine.result = int(c["result"])
    return ir
