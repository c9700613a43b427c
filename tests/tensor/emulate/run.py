#!/usr/bin/env python3
"""tensor_inv_cols against tensor_generic on the CPU, bit for bit (docs/INVARIANCE.md, "Tests");
tensor_generic's vector loads (rows and 1-D) against its element loads of the same values; an
invariant segmented request's segments and an invariant list's tensors placed at other offsets
(and list strides) against themselves; and their values (every phase of tensor_segmented: a
lane, 8 lanes, a warp, a CTA, chunks over CTAs; a list's total) against float64 references of
the same inputs (ragged_ref.py): f32 sums of the invariant and default kernels, the invariant
logsumexp, var, mean and norm, an empty segment or tensor's documented value in a poisoned
output (+0.0 for a sum or norm); and the default segmented kernel's CTA phase where a CTA has
more long segments than it lists, and over [N, 3] rows (CROWDED: every output written, sums
against float64); the default requests dispatch gives tensor_inv_cols against its invariant
kernel (ROUTED).

Both variants' kernels of an invariant column request (forced with "variant") are compiled to
LLVM IR by libredjit, retargeted to the host (nvvm intrinsics -> harness.c's emu_* functions,
address spaces dropped), built by LLVM 22's llc and run CTA by CTA with a thread per GPU thread
(harness.c); their outputs are compared byte for byte.  IEEE operations round the same on the
host, so equal trees give equal bits and another tree (checked: a request that is not invariant)
other bits.  Rows and 1-D arrays: the contiguous request (vector loads) against the same values
as a view of stride 2 and at an address one element off the vector alignment (element loads).
Exit 0: all equal; 1: a difference; 77: no llc or C compiler.

    run.py SRC_DIR BUILD_DIR LLVM_BINDIR [--full] [--dtypes=bf16,f16]
    run.py --retarget LLC IR_IN SO_OUT          (harness.c calls this)
"""
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import ragged_ref

ESZ = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "u8": 1, "e4m3": 1}
OPS = ["sum", "prod", "mean", "max", "min", "var", "std", "argmax", "argmin", "logsumexp"]
# (shape, axes): below 32, not a power of two, a partial tile of 128 columns, 4096, one segment
# past it, 2 and 5 segments, middle axes short and long
SHAPES = [("[2,3]", "[0]"), ("[7,33]", "[0]"), ("[31,40]", "[0]"), ("[33,8]", "[0]"),
          ("[100,520]", "[0]"),
          ("[4096,9]", "[0]"), ("[4097,9]", "[0]"), ("[16385,3]", "[0]"), ("[5,300,40]", "[1]"),
          ("[2,20000,9]", "[1]"), ("[70000,3]", "[0]")]
QUICK = [("sum", "f32", ("[31,40]", "[0]")), ("sum", "bf16", ("[16385,3]", "[0]")),
         ("var", "f32", ("[2,20000,9]", "[1]")), ("argmax", "f16", ("[4097,9]", "[0]")),
         ("logsumexp", "f32", ("[5,300,40]", "[1]")), ("mean", "f64", ("[7,33]", "[0]")),
         ("prod", "f32", ("[33,8]", "[0]")), ("min", "e4m3", ("[70000,3]", "[0]")),
         ("sum", "bf16", ("[31,40]", "[0]")), ("mean", "f16", ("[5,300,40]", "[1]")),
         ("sum", "bf16", ("[100,520]", "[0]")), ("sum", "f32", ("[70000,3]", "[0]")),
         ("mean", "f32", ("[2,20000,9]", "[1]"))]

# masked (a u8 mask, map "where"): short columns, 2 and 5 segments, a partial tile, a middle axis
MASKED = [("mean", "bf16", ("[16385,3]", "[0]")), ("mean", "f32", ("[4097,9]", "[0]")),
          ("mean", "bf16", ("[100,520]", "[0]")), ("sum", "f32", ("[5,300,40]", "[1]")),
          ("mean", "f32", ("[70000,3]", "[0]"))]

# rows and 1-D (shape, axes, the stride-2 view's strides): 32 lanes of whole and partial blocks,
# short rows (several per lane group, rows past the end), a row shorter than a block, 2 and 5
# segments (120 CTAs, one per SM: the deeper trips), a 1-D array of 64 segments
ROWS = [("[64,4096]", "[1]", "[8192,2]"), ("[1000,128]", "[1]", "[256,2]"),
        ("[37,132]", "[1]", "[264,2]"), ("[75,20]", "[1]", "[40,2]"),
        ("[60,20000]", "[1]", "[40000,2]"), ("[70000]", "[0]", "[2]"),
        ("[1048576]", "[0]", "[2]")]
ROW_OPS = ["sum", "mean", "prod", "max", "min"]
QUICK_ROWS = [("sum", "bf16", ROWS[0]), ("sum", "bf16", ROWS[1]), ("mean", "f16", ROWS[2]),
              ("sum", "f32", ROWS[3]), ("sum", "bf16", ROWS[4]), ("sum", "f32", ROWS[5]),
              ("sum", "f32", ROWS[6])]

INTRINSICS = {
    "llvm.nvvm.read.ptx.sreg.tid.x": "emu_tid",
    "llvm.nvvm.read.ptx.sreg.ctaid.x": "emu_ctaid",
    "llvm.nvvm.read.ptx.sreg.nctaid.x": "emu_nctaid",
    "llvm.nvvm.barrier.cta.sync.aligned.all": "emu_barrier",
    "llvm.nvvm.bar.warp.sync": "emu_warpsync",
    "llvm.nvvm.shfl.sync.bfly.i32": "emu_shfl_bfly",
    "llvm.nvvm.shfl.sync.bfly.f32": "emu_shfl_bfly_f",
    "llvm.nvvm.shfl.sync.up.i32": "emu_shfl_up",
    "llvm.nvvm.vote.ballot.sync": "emu_ballot",
    "llvm.nvvm.d2f.rz": "emu_d2f_rz",
    "llvm.nvvm.rcp.approx.ftz.f": "emu_rcp_approx",
}


def retarget(llc, src, so):
    text = open(src).read()
    text = re.sub(r"^target datalayout = .*$", "", text, flags=re.M)
    text = re.sub(r"^target triple = .*$", 'target triple = "x86_64-pc-linux-gnu"', text,
                  flags=re.M)
    text = text.replace("ptx_kernel ", "").replace('syncscope("device") ', "")
    text = re.sub(r" addrspace\(\d\)", "", text)
    for name, emu in INTRINSICS.items():
        text = text.replace("@" + name + "(", "@" + emu + "(")
    text = re.sub(r"^(@rj_\w+ = internal global .*) undef", r"\1 zeroinitializer", text, flags=re.M)
    # f32 -> bf16: harness.c's emu_f2bf (the host's C library may lack __truncsfbf2)
    text = re.sub(r"^(\s*)%([\w.]+) = fptrunc float (\S+) to bfloat$",
                  r"\1%bits.\2 = call i16 @emu_f2bf(float \3)\n\1%\2 = bitcast i16 %bits.\2 to bfloat",
                  text, flags=re.M)
    # a load as inline PTX (tns_load_vec, tns_load; with the L1 hint or without): the same bits by
    # a plain load
    text = re.sub(r'^(\s*)%([\w.]+) = call (\{ i32(?:, i32)* \}|i16|i32|i64) asm "ld\.global\.nc\.'
                  r'[^"]*", "[^"]*"\(i64 (%[\w.]+)\)$',
                  r"\1%p.\2 = inttoptr i64 \4 to ptr\n\1%\2 = load \3, ptr %p.\2, align 1", text,
                  flags=re.M)
    text += "\ndeclare i16 @emu_f2bf(float)\n"
    left = sorted(set(re.findall(r"@llvm\.nvvm\.[\w.]+|asm \"[^\"]*\"", text)))
    if left:
        sys.exit("unhandled intrinsics: " + " ".join(left))
    open(src + ".host.ll", "w").write(text)
    subprocess.run([llc, "-O1", "-relocation-model=pic", "-filetype=obj", src + ".host.ll", "-o",
                    src + ".o"], check=True)
    subprocess.run(["cc", "-shared", "-o", so, src + ".o", "-lm"], check=True)


def one(tmp, harness, retarget_cmd, op, dt, shape, axes, variant, inv=True, strides=None,
        spread=1, offset=0, narrow=0, masked=False):
    n = 1
    for d in shape.strip("[]").split(","):
        n *= int(d)
    json = ('{"kind":"tensor","op":"%s","dtype":"%s","shape":%s,"axes":%s%s%s%s,"variant":"%s"}' %
            (op, dt, shape, axes, ',"strides":%s' % strides if strides else "",
             ',"invariant":true' if inv else "",
             ',"map":"where","others":[{"dtype":"u8"}]' if masked else "", variant))
    work = os.path.join(tmp, variant)
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "dst")
    p = subprocess.run([harness, json, str(n * ESZ[dt]), "7", str(ESZ[dt]), out, work,
                        retarget_cmd, str(spread), str(offset), str(narrow)], capture_output=True,
                       text=True, env=dict(os.environ, EMU_MASK="1" if masked else ""))
    if p.returncode:
        sys.exit("%s: exit %d\n%s" % (json, p.returncode, p.stderr))
    return open(out, "rb").read()


# segmented and list requests: lengths through every phase of tensor_segmented (a lane, 8 lanes, a
# warp, a CTA, chunks of 65536) and tensor_multi (one chunk, several), placed (element offset,
# list stride) so that the default kernels' vector heads and alignment tests differ
SEG_LENS = "0,1,5,9,33,200,1000,1025,4100,70000,3"
LIST_LENS = "0,1,7,33,1000,16384,16385,40000,5"
SEG_CASES = [("sum", "f32"), ("logsumexp", "f32"), ("var", "bf16"), ("mean", "f16")]
LIST_CASES = [("sum", "f32", True), ("norm", "bf16", True), ("prod", "f32", False),
              ("mean", "f16", False)]
PLACES = [(0, 1), (1, 1), (3, 2)]  # (element offset, list stride)


def ragged(tmp, harness, rcmd, mode, op, dt, inv, off, stride, total=False, lens=None, cols=1):
    """The output bytes of a segmented (mode "seg") or list ("list") request placed at off (lens:
    the harness's EMU_LENS, by default SEG_LENS or LIST_LENS; cols > 1: segments of rows of an
    [N, cols] array)."""
    lens = lens or (SEG_LENS if mode == "seg" else LIST_LENS)
    n = sum(int(x.split("*")[1]) if "*" in x else 1 for x in lens.split(","))
    if mode == "seg":
        N = sum(int(x.split("*")[0]) * (int(x.split("*")[1]) if "*" in x else 1)
                for x in lens.split(",")) + off + 8
        shape = "[%d]" % N if cols == 1 else '[%d,%d],"axes":[0]' % (N, cols)
        json = ('{"kind":"tensor","op":"%s","dtype":"%s","shape":%s,"segments":{"count":%d}%s}'
                % (op, dt, shape, n, ',"invariant":true' if inv else ""))
    else:
        json = ('{"kind":"tensor","op":"%s","dtype":"%s","list":{"count":%d,"total":%s}%s}'
                % (op, dt, n, "true" if total else "false", ',"invariant":true' if inv else ""))
    work = os.path.join(tmp, mode)
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "dst")
    env = dict(os.environ, EMU_MODE=mode, EMU_LENS=lens, EMU_OFF=str(off),
               EMU_STRIDE=str(stride), EMU_COLS=str(cols), REDJIT_SM_COUNT="1")
    narrow = {"f32": 1, "bf16": 1, "f16": 2}.get(dt, 0)
    p = subprocess.run([harness, json, "0", "7", str(ESZ[dt]), out, work, rcmd, "1", "0",
                        str(narrow)], capture_output=True, text=True, env=env)
    if p.returncode:
        sys.exit("%s: exit %d\n%s" % (json, p.returncode, p.stderr))
    return open(out, "rb").read()


_VALUES = {}


def value_errors(mode, op, dt, outs, total):
    """ragged_ref.errors of each output file in outs (prod: not checked, its float64 product of
    thousands of factors in [0.5, 2) is out of f32's range)."""
    if op == "prod":
        return []
    lens = [int(x) for x in (SEG_LENS if mode == "seg" else LIST_LENS).split(",")]
    if (mode, dt) not in _VALUES:
        _VALUES[mode, dt] = [[ragged_ref.element(dt, i, j) for j in range(n)]
                             for i, n in enumerate(lens)]
    return [m for x in outs for m in ragged_ref.errors(lens, op, dt, x, total,
                                                          _VALUES[mode, dt])]


# The default kernels' CTA phase (f32 sums, planned for one SM: REDJIT_SM_COUNT=1, 4 CTAs):
#   1-D, more segments of a CTA's length (4 Ki .. 64 Ki elements) than a CTA lists (256): CTA 0
#     takes batches 0 and 4 of 256 segments (264 such segments) and folds them by scanning its
#     batches; CTAs 1 .. 3 fold the 256 their warps listed;
#   [N, 3], segments of more than 256 rows, a CTA's each, 1100 of them: several rounds a CTA.
# Checked: every output written, and the outputs of a few segments of each CTA against float64.
CROWDED = [  # (EMU_LENS, lengths, columns, segments checked)
    ("4100*1030,3,9", [4100] * 1030 + [3, 9], 1,
     list(range(0, 12)) + list(range(250, 262)) + list(range(1024, 1032))),
    ("300*1100,2,700", [300] * 1100 + [2, 700], 3,
     list(range(0, 6)) + list(range(275, 281)) + list(range(1096, 1102))),
]


def crowded_case(tmp, harness, rcmd):
    """The number of CROWDED requests whose outputs are wrong."""
    bad = 0
    for emu, lens, cols, check in CROWDED:
        out = ragged(tmp, harness, rcmd, "seg", "sum", "f32", False, 0, 1, lens=emu, cols=cols)
        errs = ["output %d not written" % k for k in range(len(lens) * cols)
                if math.isnan(ragged_ref.decode("f32", out, k))]
        unwritten = len(errs)
        for i in check:
            for c in range(cols):
                xs = [ragged_ref.element("f32", i, j * cols + c) for j in range(lens[i])]
                w, scale = ragged_ref.reference("sum", xs)
                g = ragged_ref.decode("f32", out, i * cols + c)
                if abs(g - w) > ragged_ref.ULP["f32"] * abs(w) + 1e-6 * scale:
                    errs.append("segment %d column %d: %r, float64 %r" % (i, c, g, w))
        for m in errs[:5]:
            print("WRONG crowded", m)
        print("%s: crowded segments of %d column(s) (%d checked against float64; %d of %d outputs "
              "not written)" % ("wrong" if errs else "right", cols, len(check), unwritten,
                                len(lens) * cols), flush=True)
        bad += bool(errs)
    return bad


def ragged_cases(tmp, harness, rcmd):
    """(cases, different): each invariant request gives the same bytes at every placement; the
    default kernels, at least once, other bytes (so the check can fail); the invariant outputs
    (and the default kernel's f32 sums) within roundoff of float64 (ragged_ref), an empty
    segment or tensor the documented value (+0.0 for a sum or norm)."""
    ran = bad = 0
    for mode, cases in (("seg", [(o, d, False) for o, d in SEG_CASES]), ("list", LIST_CASES)):
        seen_default_differ = False
        for op, dt, total in cases:
            outs = [ragged(tmp, harness, rcmd, mode, op, dt, True, o, st, total)
                    for o, st in PLACES]
            same = all(x == outs[0] for x in outs)
            ran += 1
            bad += not same
            print("%s %s %s %s at element offsets and strides %s: %s" %
                  ("same" if same else "DIFFERENT", mode, op, dt, PLACES, outs[0][:8].hex()),
                  flush=True)
            checked = outs  # against float64: the invariant kernel, and the default's f32 sums
            if (op in ("sum", "norm") and not seen_default_differ) or (op, dt) == ("sum", "f32"):
                d = [ragged(tmp, harness, rcmd, mode, op, dt, False, o, st, total)
                     for o, st in PLACES]
                seen_default_differ = seen_default_differ or any(x != d[0] for x in d)
                checked = outs + d if (op, dt) == ("sum", "f32") else outs
            errs = value_errors(mode, op, dt, checked, total)
            for m in errs[:5]:
                print("WRONG", m)
            bad += bool(errs)
            if op != "prod":
                print("%s against float64 (%d outputs)" % ("wrong" if errs else "right",
                                                           len(checked)), flush=True)
        if not seen_default_differ:
            print("DIFFERENT expected: the default %s kernel gave the same bytes at every "
                  "placement" % mode)
            bad += 1
    return ran, bad


def masked_cases(tmp, harness, rcmd, dts):
    """MASKED: a u8 mask as the other input (map "where"; the masked mean's state): the columns'
    bits as tensor_generic's, and not those of the same request without the mask"""
    ran = bad = 0
    for op, dt, (shape, axes) in MASKED:
        if dt not in dts:
            continue
        nw = {"f32": 1, "bf16": 1}.get(dt, 0)
        a = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_generic", narrow=nw, masked=True)
        b = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_inv_cols", narrow=nw,
                masked=True)
        c = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_inv_cols", narrow=nw)
        ran += 1
        same = a == b and a != c
        bad += not same
        print("%s masked %s %s %s axes %s: %s" % ("same" if same else "DIFFERENT", op, dt, shape,
                                                  axes, a[:8].hex()), flush=True)
    return ran, bad


# default requests that dispatch serves by tensor_inv_cols (passes/variants/tensor_inv_cols.c,
# default_faster_here): the sums and means of the lanes plan (one of 4 columns a thread) give the
# invariant kernel's bits; var / std differ only by Chan's combine's rcp.approx (within 1e-5)
ROUTED = [("sum", "bf16", "[100,1030]", "[0]"), ("mean", "f16", "[64,1024]", "[0]"),
          ("var", "f32", "[1500,64]", "[0]"), ("std", "f32", "[4100,64]", "[0]")]


def routed_cases(tmp, harness, rcmd, dts):
    """ROUTED: the default kernel against the invariant one of the same request"""
    ran = bad = 0
    for op, dt, shape, axes in ROUTED:
        if dt not in dts:
            continue
        nw = {"f32": 1, "bf16": 1, "f16": 2}[dt]
        a = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_inv_cols", inv=False, narrow=nw)
        b = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_inv_cols", narrow=nw)
        n = len(a) // ESZ[dt]
        if op in ("sum", "mean"):
            same = a == b
        else:
            x = [ragged_ref.decode(dt, a, k) for k in range(n)]
            y = [ragged_ref.decode(dt, b, k) for k in range(n)]
            same = all(abs(u - w) <= 1e-5 * abs(w) for u, w in zip(x, y))
        ran += 1
        bad += not same
        print("%s routed default %s %s %s axes %s: %s" % (
            "same" if same else "DIFFERENT", op, dt, shape, axes, a[:8].hex()), flush=True)
    return ran, bad


def main():
    if sys.argv[1:2] == ["--retarget"]:
        retarget(*sys.argv[2:5])
        return 0
    src, build, bindir = sys.argv[1:4]
    llc = os.path.join(bindir, "llc")
    if not os.access(llc, os.X_OK) or not shutil.which("cc"):
        print("invariant_emulate: no %s or no cc: skipped" % llc)
        return 77
    env_off = {"REDJIT_CACHE_DISABLE": "1"}
    os.environ.update(env_off)
    tmp = tempfile.mkdtemp(prefix="rj-emulate-")
    harness = os.path.join(tmp, "harness")
    subprocess.run(["cc", "-O1", "-o", harness, os.path.join(os.path.dirname(__file__), "harness.c"),
                    "-I", os.path.join(src, "include"), "-L", build, "-lredjit", "-lpthread",
                    "-ldl", "-lm", "-rdynamic", "-Wl,-rpath," + build], check=True)
    rcmd = "%s %s --retarget %s" % (sys.executable, os.path.abspath(__file__), llc)
    full = "--full" in sys.argv
    dts = [a[9:].split(",") for a in sys.argv if a.startswith("--dtypes=")]
    dts = dts[0] if dts else list(ESZ)
    cases = [(o, d, s) for o, d, s in itertools.product(OPS, dts, SHAPES)] if full else QUICK
    bad = ran = 0
    narrow = {"f32": 1, "bf16": 1, "f16": 2}  # values in [0.5, 2): every add rounds
    for op, dt, (shape, axes) in cases:
        nw = narrow.get(dt, 0)
        try:
            a = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_generic", narrow=nw)
        except SystemExit as e:
            if full and "takes" in str(e):  # an op the dtype does not take
                continue
            raise
        b = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_inv_cols", narrow=nw)
        # the same values one element off the vector alignment (tensor_inv_cols' element loads)
        c = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_inv_cols", offset=ESZ[dt],
                narrow=nw)
        ran += 1
        same = a == b == c
        bad += not same
        print("%s %s %s %s axes %s: %s" % ("same" if same else "DIFFERENT", op, dt, shape, axes,
                                           a[:8].hex()), flush=True)
    r, b = masked_cases(tmp, harness, rcmd, dts)
    ran, bad = ran + r, bad + b
    r, b = routed_cases(tmp, harness, rcmd, dts)
    ran, bad = ran + r, bad + b
    rows = ([(o, d, r) for o, d, r in itertools.product(ROW_OPS, dts, ROWS)] if full else
            [c for c in QUICK_ROWS if c[1] in dts])
    for op, dt, (shape, axes, strides) in rows:
        nw = narrow.get(dt, 0)
        try:
            a = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_generic", narrow=nw)
        except SystemExit as e:
            if full and "takes" in str(e):
                continue
            raise
        b = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_generic", strides=strides,
                spread=2, narrow=nw)
        c = one(tmp, harness, rcmd, op, dt, shape, axes, "tensor_generic", offset=ESZ[dt],
                narrow=nw)
        ran += 1
        same = a == b == c
        bad += not same
        print("%s %s %s %s axes %s (vector, stride 2, unaligned): %s" %
              ("same" if same else "DIFFERENT", op, dt, shape, axes, a[:8].hex()), flush=True)
    # the rows check sees another tree: tensor_rows's (not invariant)
    if "f32" in dts:
        c = one(tmp, harness, rcmd, "sum", "f32", "[64,4096]", "[1]", "tensor_rows", inv=False)
        d = one(tmp, harness, rcmd, "sum", "f32", "[64,4096]", "[1]", "tensor_generic")
        if c == d:
            print("DIFFERENT expected: tensor_rows against the invariant lanes gave the same bits")
            bad += 1
    # the check sees another tree: tensor_generic's plan of the request without "invariant"
    c = one(tmp, harness, rcmd, "sum", "f32", "[20000,5]", "[0]", "tensor_generic", inv=False)
    d = one(tmp, harness, rcmd, "sum", "f32", "[20000,5]", "[0]", "tensor_inv_cols")
    if c == d:
        print("DIFFERENT expected: 32 lanes against 2 segments gave the same bits")
        bad += 1
    r, b = ragged_cases(tmp, harness, rcmd)
    ran += r + len(CROWDED)
    bad += b + crowded_case(tmp, harness, rcmd)
    shutil.rmtree(tmp)
    print("%d cases, %d different" % (ran, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
