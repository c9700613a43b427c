"""Float64 references for the segmented and list requests that run.py emulates: the values the
harness writes (harness.c's element(), seed 7: ragged() passes it SRC_BYTES 0), the op of each
segment or tensor (and a list's total) in float64, and the check of a kernel's output bytes
against them.  Each output must be within its dtype's rounding plus 1e-6 of the scale of its
accumulation (for a sum, the sum of |x|: every element is at least 0.5 in magnitude, so one lost
or counted twice is seen); an output of no element must be the documented one, bit for bit where
it is a number (+0.0 for a sum or norm), and the variance of one element NaN."""
import math
import struct

M64 = (1 << 64) - 1
SEED = 7
# relative rounding of an output of each dtype (a unit in the last place)
ULP = {"f32": 2.0 ** -23, "bf16": 2.0 ** -7, "f16": 2.0 ** -10}
ESZ = {"f32": 4, "bf16": 2, "f16": 2}


def element(dt, i, j):
    """Element j of segment or tensor i as the harness writes it: f32 and bf16 with exponent 126
    or 127 (narrow 1), f16 likewise (narrow 2): a value in [0.5, 2) of either sign."""
    h = (SEED ^ ((i * 0x9e3779b97f4a7c15) & M64) ^ ((j * 0xc2b2ae3d27d4eb4f) & M64)) & M64
    o = bytearray(ESZ[dt])
    for b in range(len(o)):
        h = (h * 6364136223846793005 + 1442695040888963407) & M64
        o[b] = h >> 56
    top = o[-1] & 0xbf
    o[-1] = (top & 0x83) | 0x38 if dt == "f16" else (top & 0x80) | 0x3f
    return decode(dt, bytes(o), 0)


def decode(dt, b, k):
    """Output k of dtype dt in bytes b."""
    if dt == "f32":
        return struct.unpack_from("<f", b, 4 * k)[0]
    if dt == "f16":
        return struct.unpack_from("<e", b, 2 * k)[0]
    return struct.unpack("<f", b"\0\0" + b[2 * k:2 * k + 2])[0]


def reference(op, xs):
    """(float64 value, scale of its accumulation error) of op over xs; for no element the
    documented value and None."""
    n = len(xs)
    if op in ("sum", "norm"):
        if not n:
            return 0.0, None
        if op == "sum":
            return math.fsum(xs), math.fsum(abs(x) for x in xs)
        s = math.fsum(x * x for x in xs)
        return math.sqrt(s), math.sqrt(s)
    if op == "mean":
        return (math.fsum(xs) / n, math.fsum(abs(x) for x in xs) / n) if n else (math.nan, None)
    if op == "var":  # correction 1: one element gives 0 / 0
        if n < 2:
            return math.nan, None
        mu = math.fsum(xs) / n
        v = math.fsum((x - mu) ** 2 for x in xs) / (n - 1)
        return v, v
    if op == "logsumexp":
        if not n:
            return -math.inf, None
        m = max(xs)
        w = m + math.log(math.fsum(math.exp(x - m) for x in xs))
        return w, max(1.0, abs(w))
    raise ValueError(op)


def same_special(g, w):
    """An output of no element (or one that is NaN by definition) against its documented value:
    NaN, -inf, or +0.0 bit for bit."""
    if math.isnan(w):
        return math.isnan(g)
    return g == w and math.copysign(1, g) == math.copysign(1, w)


def errors(lens, op, dt, out, total, values):
    """Messages for the outputs in out (one per length, and with total the list's total in the
    second half of dst) that are not within tolerance of the float64 reference; values: the
    elements per segment or tensor (element() of each)."""
    items = [(i, xs) for i, xs in enumerate(values)]
    if total:
        items.append((len(values), [x for xs in values for x in xs]))
    errs = []
    for i, xs in items:
        g = decode(dt, out, i) if i < len(values) else decode(dt, out[len(out) // 2:], 0)
        w, scale = reference(op, xs)
        if scale is None:
            ok = same_special(g, w)
        else:  # the output's rounding, and f32's accumulation
            ok = abs(g - w) <= ULP[dt] * abs(w) + 1e-6 * scale
        if not ok:
            errs.append("%s %s %s %d (%d elements): %r, float64 %r" %
                        (op, dt, "total" if i == len(values) else "output", i, len(xs), g, w))
    return errs
