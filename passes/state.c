/* State ops (see state.h): their types, identities, element states, combines, shuffles and
 * results, and the exp / log they need, built from plain arithmetic (NVPTX has no libm). */
#include "state.h"

bool st_is(rj_op op) {
  return (unsigned)op < 32 && (ST_OPS & PASS_OP(op));
}

rj_tensor st_of_tile(const rj_tile *t) {
  rj_tensor v = {.op = t->op, .dtype = t->dtype, .nan = t->nan, .correction = t->correction};
  return v;
}

bool st_indexed(rj_op op) {
  return op == RJ_OP_ARGMAX || op == RJ_OP_ARGMIN;
}

/* the working float of var / std / logsumexp */
static bool wide(rj_dtype t) {
  return t == RJ_F64;
}

int st_bytes(rj_op op, rj_dtype t) {
  int w = wide(t) ? 8 : 4;
  if (st_indexed(op)) return 16;
  if (op == RJ_OP_LOGSUMEXP) return 2 * w;
  return 8 + 2 * w;
}

static LLVMTypeRef wtype(pass_emit *e, rj_dtype t) {
  return wide(t) ? LLVMDoubleTypeInContext(e->C) : LLVMFloatTypeInContext(e->C);
}

LLVMTypeRef st_type(pass_emit *e, const rj_tensor *t) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C), w = wtype(e, t->dtype);
  LLVMTypeRef f[3] = {pass_acc_type(e, t->dtype), i64};
  int n = 2;
  if (t->op == RJ_OP_VAR || t->op == RJ_OP_STD)
    f[0] = i64, f[1] = w, f[2] = w, n = 3;
  else if (t->op == RJ_OP_LOGSUMEXP)
    f[0] = w, f[1] = w;
  return LLVMStructTypeInContext(e->C, f, (unsigned)n, 0);
}

static LLVMValueRef real(pass_emit *e, rj_dtype t, double v) {
  return LLVMConstReal(wtype(e, t), v);
}

LLVMValueRef st_identity(pass_emit *e, const rj_tensor *t) {
  LLVMValueRef f[3];
  int n = 2;
  if (st_indexed(t->op)) {
    f[0] = pass_identity(e, t->op == RJ_OP_ARGMAX ? RJ_OP_MAX : RJ_OP_MIN, t->dtype);
    f[1] = pass_i64(e, -1);
  } else if (t->op == RJ_OP_LOGSUMEXP) {
    f[0] = real(e, t->dtype, -__builtin_inf());
    f[1] = real(e, t->dtype, 0);
  } else {
    f[0] = pass_i64(e, 0), f[1] = real(e, t->dtype, 0), f[2] = real(e, t->dtype, 0), n = 3;
  }
  return LLVMConstStructInContext(e->C, f, (unsigned)n, 0);
}

static LLVMValueRef field(pass_emit *e, LLVMValueRef s, unsigned i) {
  return LLVMBuildExtractValue(e->B, s, i, "");
}

static LLVMValueRef make(pass_emit *e, const rj_tensor *t, LLVMValueRef *f, int n) {
  LLVMValueRef s = LLVMGetUndef(st_type(e, t));
  for (int i = 0; i < n; i++)
    s = LLVMBuildInsertValue(e->B, s, f[i], (unsigned)i, "");
  return s;
}

static LLVMValueRef isnan_(pass_emit *e, LLVMValueRef x) {
  return LLVMBuildFCmp(e->B, LLVMRealUNO, x, x, "");
}

LLVMValueRef st_elem(pass_emit *e, const rj_tensor *t, LLVMValueRef x, LLVMValueRef idx) {
  LLVMValueRef f[3];
  int n = 2;
  if (st_indexed(t->op)) {
    f[0] = x, f[1] = idx;
  } else {
    if (t->op == RJ_OP_LOGSUMEXP)
      f[0] = x, f[1] = real(e, t->dtype, 1);
    else
      f[0] = pass_i64(e, 1), f[1] = x, f[2] = real(e, t->dtype, 0), n = 3;
  }
  LLVMValueRef s = make(e, t, f, n);
  if (ir_dtype(t->dtype)->is_float && t->nan == RJ_NAN_IGNORE)
    s = LLVMBuildSelect(e->B, isnan_(e, x), st_identity(e, t), s, "");
  return s;
}

/* ---- argmax / argmin */
static LLVMValueRef combine_arg(pass_emit *e, const rj_tensor *t, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef va = field(e, a, 0), vb = field(e, b, 0), ia = field(e, a, 1), ib = field(e, b, 1);
  bool mx = t->op == RJ_OP_ARGMAX;
  LLVMValueRef better, eq;
  LLVMValueRef ilt = LLVMBuildICmp(e->B, LLVMIntULT, ia, ib, "");
  if (ir_dtype(t->dtype)->is_float) {
    better = LLVMBuildFCmp(e->B, mx ? LLVMRealOGT : LLVMRealOLT, va, vb, "");
    eq = LLVMBuildFCmp(e->B, LLVMRealOEQ, va, vb, "");
    if (t->nan == RJ_NAN_PROPAGATE) { /* NaN beats numbers; NaNs tie */
      LLVMValueRef an = isnan_(e, va), bn = isnan_(e, vb);
      better =
          LLVMBuildOr(e->B, better, LLVMBuildAnd(e->B, an, LLVMBuildNot(e->B, bn, ""), ""), "");
      eq = LLVMBuildOr(e->B, eq, LLVMBuildAnd(e->B, an, bn, ""), "");
    }
  } else {
    bool sg = ir_dtype(t->dtype)->is_signed;
    better = LLVMBuildICmp(
        e->B, mx ? (sg ? LLVMIntSGT : LLVMIntUGT) : (sg ? LLVMIntSLT : LLVMIntULT), va, vb, "");
    eq = LLVMBuildICmp(e->B, LLVMIntEQ, va, vb, "");
  }
  LLVMValueRef take_a = LLVMBuildOr(e->B, better, LLVMBuildAnd(e->B, eq, ilt, ""), "");
  return LLVMBuildSelect(e->B, take_a, a, b, "");
}

/* ---- var / std: Chan et al.'s parallel combine; an empty side gives the other exactly */
static LLVMValueRef combine_welford(pass_emit *e, const rj_tensor *t, LLVMValueRef a,
                                    LLVMValueRef b) {
  LLVMTypeRef w = wtype(e, t->dtype);
  LLVMValueRef na = field(e, a, 0), nb = field(e, b, 0);
  LLVMValueRef ma = field(e, a, 1), mb = field(e, b, 1);
  LLVMValueRef n = LLVMBuildAdd(e->B, na, nb, "");
  LLVMValueRef fa = LLVMBuildSIToFP(e->B, na, w, ""), fb = LLVMBuildSIToFP(e->B, nb, w, "");
  LLVMValueRef fn = LLVMBuildSIToFP(e->B, n, w, "");
  LLVMValueRef delta = LLVMBuildFSub(e->B, mb, ma, "");
  LLVMValueRef r = LLVMBuildFDiv(e->B, fb, fn, ""); /* nb / n */
  LLVMValueRef mean = LLVMBuildFAdd(e->B, ma, LLVMBuildFMul(e->B, delta, r, ""), "");
  LLVMValueRef cross = LLVMBuildFMul(
      e->B, LLVMBuildFMul(e->B, LLVMBuildFMul(e->B, delta, delta, ""), fa, ""), r, "");
  LLVMValueRef m2 =
      LLVMBuildFAdd(e->B, LLVMBuildFAdd(e->B, field(e, a, 2), field(e, b, 2), ""), cross, "");
  LLVMValueRef f[3] = {n, mean, m2};
  LLVMValueRef s = make(e, t, f, 3);
  LLVMValueRef zero = pass_i64(e, 0);
  s = LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntEQ, na, zero, ""), b, s, "");
  return LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntEQ, nb, zero, ""), a, s, "");
}

/* ---- exp and log in the working float (f32: 7th-degree, f64: 13th-degree polynomials) */
static LLVMValueRef horner(pass_emit *e, rj_dtype t, LLVMValueRef x, const double *c, int n) {
  LLVMValueRef p = real(e, t, c[n - 1]);
  for (int i = n - 2; i >= 0; i--)
    p = LLVMBuildFAdd(e->B, LLVMBuildFMul(e->B, p, x, ""), real(e, t, c[i]), "");
  return p;
}

/* exp(d) for d <= 0, -inf or NaN (NaN stays NaN; results below the smallest normal are 0) */
static LLVMValueRef exp_nonpos(pass_emit *e, rj_dtype t, LLVMValueRef d) {
  bool wd = wide(t);
  LLVMTypeRef w = wtype(e, t),
              it = wd ? LLVMInt64TypeInContext(e->C) : LLVMInt32TypeInContext(e->C);
  int mbits = wd ? 52 : 23, bias = wd ? 1023 : 127;
  LLVMValueRef args[2] = {d, real(e, t, wd ? -1000.0 : -150.0)};
  LLVMValueRef dc = pass_call(e, "llvm.maxnum", &w, 1, args, 2); /* NaN -> the clamp */
  LLVMValueRef k = LLVMBuildFMul(e->B, dc, real(e, t, 1.4426950408889634), "");
  k = pass_call(e, "llvm.rint", &w, 1, &k, 1);
  double hi = wd ? 6.93147180369123816490e-01 : 0.693145751953125;
  double lo = wd ? 1.90821492927058770002e-10 : 1.428606765330187e-06;
  LLVMValueRef r = LLVMBuildFSub(e->B, dc, LLVMBuildFMul(e->B, k, real(e, t, hi), ""), "");
  r = LLVMBuildFSub(e->B, r, LLVMBuildFMul(e->B, k, real(e, t, lo), ""), "");
  double c[14];
  c[0] = 1;
  for (int i = 1; i < 14; i++)
    c[i] = c[i - 1] / i;
  LLVMValueRef p = horner(e, t, r, c, wd ? 14 : 8);
  LLVMValueRef ki = LLVMBuildFPToSI(e->B, k, it, "");
  LLVMValueRef small =
      LLVMBuildICmp(e->B, LLVMIntSLT, ki, LLVMConstInt(it, (unsigned long long)(1 - bias), 1), "");
  LLVMValueRef bits =
      LLVMBuildShl(e->B, LLVMBuildAdd(e->B, ki, LLVMConstInt(it, (unsigned long long)bias, 1), ""),
                   LLVMConstInt(it, (unsigned long long)mbits, 0), "");
  LLVMValueRef scale = LLVMBuildBitCast(e->B, bits, w, "");
  LLVMValueRef v = LLVMBuildFMul(e->B, p, scale, "");
  v = LLVMBuildSelect(e->B, small, real(e, t, 0), v, "");
  return LLVMBuildSelect(e->B, isnan_(e, d), d, v, "");
}

/* log(s) for s >= 1 finite (a logsumexp sum), NaN kept */
static LLVMValueRef log_ge1(pass_emit *e, rj_dtype t, LLVMValueRef s) {
  bool wd = wide(t);
  LLVMTypeRef w = wtype(e, t),
              it = wd ? LLVMInt64TypeInContext(e->C) : LLVMInt32TypeInContext(e->C);
  int mbits = wd ? 52 : 23, bias = wd ? 1023 : 127;
  unsigned long long mmask = (1ull << mbits) - 1;
  LLVMValueRef bits = LLVMBuildBitCast(e->B, s, it, "");
  LLVMValueRef ex = LLVMBuildSub(
      e->B, LLVMBuildLShr(e->B, bits, LLVMConstInt(it, (unsigned long long)mbits, 0), ""),
      LLVMConstInt(it, (unsigned long long)bias, 0), "");
  LLVMValueRef fb = LLVMBuildOr(e->B, LLVMBuildAnd(e->B, bits, LLVMConstInt(it, mmask, 0), ""),
                                LLVMConstInt(it, (unsigned long long)bias << mbits, 0), "");
  LLVMValueRef f = LLVMBuildBitCast(e->B, fb, w, ""); /* [1, 2) */
  LLVMValueRef big = LLVMBuildFCmp(e->B, LLVMRealOGT, f, real(e, t, 1.4142135623730951), "");
  f = LLVMBuildSelect(e->B, big, LLVMBuildFMul(e->B, f, real(e, t, 0.5), ""), f, "");
  ex = LLVMBuildAdd(e->B, ex, LLVMBuildZExt(e->B, big, it, ""), "");
  LLVMValueRef z = LLVMBuildFDiv(e->B, LLVMBuildFSub(e->B, f, real(e, t, 1), ""),
                                 LLVMBuildFAdd(e->B, f, real(e, t, 1), ""), "");
  LLVMValueRef z2 = LLVMBuildFMul(e->B, z, z, "");
  double c[11];
  for (int i = 0; i < 11; i++)
    c[i] = 2.0 / (2 * i + 1);
  LLVMValueRef lf = LLVMBuildFMul(e->B, z, horner(e, t, z2, c, wd ? 11 : 6), "");
  LLVMValueRef fe = LLVMBuildSIToFP(e->B, ex, w, "");
  double hi = wd ? 6.93147180369123816490e-01 : 0.693145751953125;
  double lo = wd ? 1.90821492927058770002e-10 : 1.428606765330187e-06;
  LLVMValueRef v = LLVMBuildFAdd(e->B, LLVMBuildFMul(e->B, fe, real(e, t, lo), ""), lf, "");
  v = LLVMBuildFAdd(e->B, LLVMBuildFMul(e->B, fe, real(e, t, hi), ""), v, "");
  return LLVMBuildSelect(e->B, isnan_(e, s), s, v, "");
}

/* ---- logsumexp: the larger max keeps its sum, the other's is scaled by exp(its max - the max) */
static LLVMValueRef combine_lse(pass_emit *e, const rj_tensor *t, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef w = wtype(e, t->dtype);
  LLVMValueRef ma = field(e, a, 0), mb = field(e, b, 0), sa = field(e, a, 1), sb = field(e, b, 1);
  LLVMValueRef args[2] = {ma, mb};
  LLVMValueRef m =
      pass_call(e, t->nan == RJ_NAN_PROPAGATE ? "llvm.maximum" : "llvm.maxnum", &w, 1, args, 2);
  LLVMValueRef ge = LLVMBuildFCmp(e->B, LLVMRealOGE, ma, mb, "");
  LLVMValueRef sbig = LLVMBuildSelect(e->B, ge, sa, sb, "");
  LLVMValueRef ssmall = LLVMBuildSelect(e->B, ge, sb, sa, "");
  LLVMValueRef d = LLVMBuildSelect(e->B, ge, LLVMBuildFSub(e->B, mb, ma, ""),
                                   LLVMBuildFSub(e->B, ma, mb, ""), "");
  LLVMValueRef same = LLVMBuildFCmp(e->B, LLVMRealOEQ, ma, mb, ""); /* -inf, +inf: no exp */
  LLVMValueRef sc =
      LLVMBuildSelect(e->B, same, real(e, t->dtype, 1), exp_nonpos(e, t->dtype, d), "");
  LLVMValueRef f[2] = {m, LLVMBuildFAdd(e->B, sbig, LLVMBuildFMul(e->B, ssmall, sc, ""), "")};
  return make(e, t, f, 2);
}

LLVMValueRef st_combine(pass_emit *e, const rj_tensor *t, LLVMValueRef a, LLVMValueRef b) {
  if (st_indexed(t->op)) return combine_arg(e, t, a, b);
  if (t->op == RJ_OP_LOGSUMEXP) return combine_lse(e, t, a, b);
  return combine_welford(e, t, a, b);
}

LLVMValueRef st_shfl_bfly(pass_emit *e, LLVMValueRef v, LLVMValueRef mm, int lanemask, int width) {
  unsigned n = LLVMCountStructElementTypes(LLVMTypeOf(v));
  for (unsigned i = 0; i < n; i++)
    v = LLVMBuildInsertValue(e->B, v, pass_shfl_bfly(e, field(e, v, i), mm, lanemask, width), i,
                             "");
  return v;
}

LLVMValueRef st_bfly_tree(pass_emit *e, const rj_tensor *t, LLVMValueRef v, LLVMValueRef mm,
                          const int *masks, int n, int width) {
  for (int i = 0; i < n; i++)
    v = st_combine(e, t, v, st_shfl_bfly(e, v, mm, masks[i], width));
  return v;
}

LLVMValueRef st_finish(pass_emit *e, const rj_tensor *t, LLVMValueRef s) {
  if (st_indexed(t->op)) return field(e, s, 1);
  LLVMTypeRef w = wtype(e, t->dtype);
  LLVMValueRef v;
  if (t->op == RJ_OP_LOGSUMEXP) {
    LLVMValueRef m = field(e, s, 0);
    v = LLVMBuildFAdd(e->B, m, log_ge1(e, t->dtype, field(e, s, 1)), "");
    LLVMValueRef ninf =
        LLVMBuildFCmp(e->B, LLVMRealOEQ, m, real(e, t->dtype, -__builtin_inf()), "");
    v = LLVMBuildSelect(e->B, ninf, m, v, "");
  } else {
    LLVMValueRef dn = LLVMBuildSub(e->B, field(e, s, 0), pass_i64(e, t->correction), "");
    dn = LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, dn, pass_i64(e, 0), ""),
                         pass_i64(e, 0), dn, "");
    v = LLVMBuildFDiv(e->B, field(e, s, 2), LLVMBuildSIToFP(e->B, dn, w, ""), "");
    if (t->op == RJ_OP_STD) v = pass_call(e, "llvm.sqrt", &w, 1, &v, 1);
  }
  if (t->dtype != RJ_F64 && t->dtype != RJ_F32)
    v = LLVMBuildFPTrunc(e->B, v, pass_type(e, t->dtype), "");
  return v;
}

LLVMValueRef st_load_volatile(pass_emit *e, LLVMTypeRef ty, LLVMValueRef p) {
  LLVMValueRef s = LLVMGetUndef(ty);
  unsigned n = LLVMCountStructElementTypes(ty);
  for (unsigned i = 0; i < n; i++) {
    LLVMValueRef fp = LLVMBuildStructGEP2(e->B, ty, p, i, "");
    LLVMValueRef v = LLVMBuildLoad2(e->B, LLVMStructGetTypeAtIndex(ty, i), fp, "");
    LLVMSetVolatile(v, 1);
    s = LLVMBuildInsertValue(e->B, s, v, i, "");
  }
  return s;
}

LLVMTypeRef st_tile_acc_type(pass_emit *e, const rj_tile *t) {
  rj_tensor s = st_of_tile(t);
  return st_is(t->op) ? st_type(e, &s) : pass_acc_type(e, t->dtype);
}

LLVMValueRef st_tile_identity(pass_emit *e, const rj_tile *t) {
  rj_tensor s = st_of_tile(t);
  return st_is(t->op) ? st_identity(e, &s) : pass_identity(e, t->op, t->dtype);
}

LLVMValueRef st_tile_fold(pass_emit *e, const rj_tile *t, LLVMValueRef acc, LLVMValueRef x,
                          LLVMValueRef idx) {
  if (!st_is(t->op)) return pass_fold(e, t->op, t->dtype, t->nan, acc, x);
  rj_tensor s = st_of_tile(t);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  if (st_indexed(t->op) && LLVMTypeOf(idx) != i64) idx = LLVMBuildZExt(e->B, idx, i64, "");
  return st_combine(e, &s, acc, st_elem(e, &s, x, st_indexed(t->op) ? idx : NULL));
}

LLVMValueRef st_tile_tree(pass_emit *e, const rj_tile *t, LLVMValueRef v, LLVMValueRef mm,
                          const int *masks, int n, int width) {
  if (!st_is(t->op)) return pass_bfly_tree(e, t->op, t->dtype, t->nan, v, mm, masks, n, width);
  rj_tensor s = st_of_tile(t);
  return st_bfly_tree(e, &s, v, mm, masks, n, width);
}
