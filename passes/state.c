/* State ops (see state.h): their types, identities, element states, combines, shuffles and
 * results, and the exp / log they need, built from plain arithmetic (NVPTX has no libm). */
#include "state.h"

#include <math.h>

bool st_is(rj_op op) {
  return (unsigned)op < 32 && (ST_OPS & PASS_OP(op));
}

st_req st_of_tensor(const rj_tensor *t) { /* i8 .. bool, float8: in the dtype they reduce in */
  if (t->op == RJ_OP_MEAN &&
      t->fused.map == RJ_MAP_WHERE) { /* W: the accumulator, f64 under acc_f64 */
    ir_tview v;
    ir_tensor_view(t, &v);
    bool count32 = !t->dynamic && !t->segments && !t->list_count && v.reduce_len <= INT32_MAX;
    return (st_req){t->op,       t->acc_f64 ? RJ_F64 : ir_acc_dtype(t->op, t->dtype),
                    t->nan,      0,
                    &t->combine, t->invariant,
                    true,        count32};
  }
  return (st_req){
      t->op, ir_acc_dtype(t->op, t->dtype), t->nan, t->correction, &t->combine, t->invariant, false,
      false};
}

st_req st_of_tile(const rj_tile *t) {
  return (st_req){t->op, t->dtype, t->nan, t->correction, &t->combine, 0, false, false};
}

st_req st_of_subgroup(const rj_subgroup *g) {
  int op = ir_primitive_op(g->primitive, NULL);
  return (st_req){op >= 0 ? (rj_op)op : RJ_OP_SUM,
                  g->dtype,
                  RJ_NAN_PROPAGATE,
                  g->correction,
                  &g->combine,
                  0,
                  false,
                  false};
}

st_req st_of_treduce(const rj_treduce *t) {
  return (st_req){t->op, t->dtype, t->nan, 0, &t->combine, 0, false, false};
}

bool st_indexed(rj_op op) {
  return op == RJ_OP_ARGMAX || op == RJ_OP_ARGMIN;
}

bool st_on(const st_req *t) {
  return st_is(t->op) || t->masked ||
         (t->op == RJ_OP_CUSTOM &&
          (t->combine->nfields > 0 || t->dtype == RJ_F16 || t->dtype == RJ_BF16));
}

bool st_wants_index(const st_req *t) {
  return st_indexed(t->op) || (t->op == RJ_OP_CUSTOM && t->combine->nfields > 0);
}

/* ---- op custom's states: a struct of the request's fields (combine.nfields > 0), or an f16 /
 * bf16 scalar state held as a struct of one field (the built-in ops' accumulator of those dtypes
 * is f32, the caller's combine takes T itself).  Calls of the caller's functions are calls of
 * declarations (PASS_CUSTOM_*) linked to them in the compiler (jit/llvm/combine.c). */
static int cst_n(const st_req *t) {
  return t->combine->nfields > 0 ? t->combine->nfields : 1;
}

static rj_dtype cst_field(const st_req *t, int i) {
  return t->combine->nfields > 0 ? t->combine->fields[i] : t->dtype;
}

static LLVMTypeRef cst_type(pass_emit *e, const st_req *t) {
  LLVMTypeRef f[RJ_COMBINE_FIELDS_MAX];
  for (int i = 0; i < cst_n(t); i++)
    f[i] = pass_type(e, cst_field(t, i));
  return LLVMStructTypeInContext(e->C, f, (unsigned)cst_n(t), 0);
}

/* bits as a constant of dtype d (its storage type) */
static LLVMValueRef cst_const(pass_emit *e, rj_dtype d, uint64_t bits) {
  int w = 8 * ir_dtype(d)->bytes;
  LLVMValueRef c = LLVMConstInt(LLVMIntTypeInContext(e->C, (unsigned)w), bits, 0);
  if (!ir_dtype(d)->is_float) return c;
  /* a float constant from its bits: a bitcast of an integer constant folds in the builder */
  return LLVMBuildBitCast(e->B, c, pass_type(e, d), "");
}

static LLVMValueRef cst_identity(pass_emit *e, const st_req *t) {
  LLVMValueRef s = LLVMGetUndef(cst_type(e, t));
  for (int i = 0; i < cst_n(t); i++) {
    uint64_t b = t->combine->nfields > 0 ? t->combine->field_identity[i] : t->combine->identity;
    s = LLVMBuildInsertValue(e->B, s, cst_const(e, cst_field(t, i), b), (unsigned)i, "");
  }
  return s;
}

/* a call of declaration name (created on first use) of type ret (args) */
static LLVMValueRef cst_call(pass_emit *e, const char *name, LLVMTypeRef ret, LLVMValueRef *args,
                             int n) {
  LLVMTypeRef ps[2];
  for (int i = 0; i < n; i++)
    ps[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef fty = LLVMFunctionType(ret, ps, (unsigned)n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(e->M, name);
  if (!fn) fn = LLVMAddFunction(e->M, name, fty);
  return LLVMBuildCall2(e->B, fty, fn, args, (unsigned)n, "");
}

/* x: the element in the acc type (f16 / bf16: f32, converted back exactly) */
static LLVMValueRef cst_elem(pass_emit *e, const st_req *t, LLVMValueRef x, LLVMValueRef idx) {
  x = pass_from_acc(e, x, t->dtype);
  if (t->combine->nfields == 0)
    return LLVMBuildInsertValue(e->B, LLVMGetUndef(cst_type(e, t)), x, 0, "");
  LLVMValueRef args[2] = {x, idx ? idx : pass_i64(e, 0)};
  return cst_call(e, PASS_CUSTOM_LIFT, cst_type(e, t), args, 2);
}

static LLVMValueRef cst_combine(pass_emit *e, const st_req *t, LLVMValueRef a, LLVMValueRef b) {
  if (t->combine->nfields > 0) {
    LLVMValueRef args[2] = {a, b};
    return cst_call(e, PASS_CUSTOM_COMBINE, cst_type(e, t), args, 2);
  }
  LLVMValueRef args[2] = {LLVMBuildExtractValue(e->B, a, 0, ""),
                          LLVMBuildExtractValue(e->B, b, 0, "")};
  LLVMValueRef v = cst_call(e, PASS_CUSTOM_COMBINE, pass_type(e, t->dtype), args, 2);
  return LLVMBuildInsertValue(e->B, LLVMGetUndef(cst_type(e, t)), v, 0, "");
}

static LLVMValueRef cst_finish(pass_emit *e, const st_req *t, LLVMValueRef s) {
  if (t->combine->nfields == 0 || !t->combine->finish[0])
    return LLVMBuildExtractValue(e->B, s, t->combine->nfields ? (unsigned)t->combine->result : 0,
                                 "");
  return cst_call(e, PASS_CUSTOM_FINISH, pass_type(e, cst_field(t, t->combine->result)), &s, 1);
}

/* the working float of var / std / logsumexp */
static bool wide(rj_dtype t) {
  return t == RJ_F64;
}

int st_bytes(const st_req *tn) {
  rj_op op = tn->op;
  rj_dtype t = tn->dtype;
  int w = wide(t) ? 8 : 4;
  if (op == RJ_OP_CUSTOM) return 8 * cst_n(tn); /* at most: every field padded to 8 bytes */
  if (tn->masked) return 16;
  if (st_indexed(op)) return 16;
  if (op == RJ_OP_LOGSUMEXP) return 2 * w;
  return 8 + 2 * w;
}

static LLVMTypeRef wtype(pass_emit *e, rj_dtype t) {
  return wide(t) ? LLVMDoubleTypeInContext(e->C) : LLVMFloatTypeInContext(e->C);
}

LLVMTypeRef st_type(pass_emit *e, const st_req *t) {
  if (t->op == RJ_OP_CUSTOM) return cst_type(e, t);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C), w = wtype(e, t->dtype);
  LLVMTypeRef f[3] = {pass_acc_type(e, t->dtype), i64};
  int n = 2;
  if (t->masked)
    f[0] = w, f[1] = t->count32 ? LLVMInt32TypeInContext(e->C) : i64;
  else if (t->op == RJ_OP_VAR || t->op == RJ_OP_STD)
    f[0] = i64, f[1] = w, f[2] = w, n = 3;
  else if (t->op == RJ_OP_LOGSUMEXP)
    f[0] = w, f[1] = w;
  return LLVMStructTypeInContext(e->C, f, (unsigned)n, 0);
}

static LLVMValueRef real(pass_emit *e, rj_dtype t, double v) {
  return LLVMConstReal(wtype(e, t), v);
}

LLVMValueRef st_identity(pass_emit *e, const st_req *t) {
  if (t->op == RJ_OP_CUSTOM) return cst_identity(e, t);
  LLVMValueRef f[3];
  int n = 2;
  if (t->masked) {
    f[0] = real(e, t->dtype, 0);
    f[1] = t->count32 ? pass_i32(e, 0) : pass_i64(e, 0);
  } else if (st_indexed(t->op)) {
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

static LLVMValueRef make(pass_emit *e, const st_req *t, LLVMValueRef *f, int n) {
  LLVMValueRef s = LLVMGetUndef(st_type(e, t));
  for (int i = 0; i < n; i++)
    s = LLVMBuildInsertValue(e->B, s, f[i], (unsigned)i, "");
  return s;
}

static LLVMValueRef isnan_(pass_emit *e, LLVMValueRef x) {
  return LLVMBuildFCmp(e->B, LLVMRealUNO, x, x, "");
}

LLVMValueRef st_elem(pass_emit *e, const st_req *t, LLVMValueRef x, LLVMValueRef idx) {
  if (t->op == RJ_OP_CUSTOM) return cst_elem(e, t, x, idx);
  LLVMValueRef f[3];
  int n = 2;
  if (st_indexed(t->op)) {
    f[0] = x, f[1] = idx;
  } else {
    if (t->op == RJ_OP_LOGSUMEXP)
      f[0] = x, f[1] = real(e, t->dtype, 1);
    else
      /* M2 = x - x: 0, but NaN for an infinite x, whose variance (inf - inf) is NaN */
      f[0] = pass_i64(e, 1), f[1] = x, f[2] = LLVMBuildFSub(e->B, x, x, ""), n = 3;
  }
  LLVMValueRef s = make(e, t, f, n);
  if (ir_dtype(t->dtype)->is_float && t->nan == RJ_NAN_IGNORE)
    s = LLVMBuildSelect(e->B, isnan_(e, x), st_identity(e, t), s, "");
  return s;
}

/* ---- argmax / argmin */
static LLVMValueRef combine_arg(pass_emit *e, const st_req *t, LLVMValueRef a, LLVMValueRef b) {
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

/* 1 / n for a count n >= 1: f32 rcp.approx.ftz (one MUFU.RCP, within 1 ulp: the ratios of
 * counts in Chan's combine need no more), f64 or an exact request (invariant: the hardware's
 * approximation is not promised alike on every GPU model) a correctly rounded division */
static LLVMValueRef recip(pass_emit *e, const st_req *r, LLVMValueRef n) {
  rj_dtype t = r->dtype;
  if (wide(t) || r->exact) return LLVMBuildFDiv(e->B, real(e, t, 1), n, "");
  return pass_call(e, "llvm.nvvm.rcp.approx.ftz.f", NULL, 0, &n, 1);
}

/* ---- var / std: Chan et al.'s parallel combine; an empty side gives the other exactly */
static LLVMValueRef combine_welford(pass_emit *e, const st_req *t, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef w = wtype(e, t->dtype);
  LLVMValueRef na = field(e, a, 0), nb = field(e, b, 0);
  LLVMValueRef ma = field(e, a, 1), mb = field(e, b, 1);
  LLVMValueRef n = LLVMBuildAdd(e->B, na, nb, "");
  LLVMValueRef fa = LLVMBuildSIToFP(e->B, na, w, ""), fb = LLVMBuildSIToFP(e->B, nb, w, "");
  LLVMValueRef fn = LLVMBuildSIToFP(e->B, n, w, "");
  LLVMValueRef delta = LLVMBuildFSub(e->B, mb, ma, "");
  LLVMValueRef r = LLVMBuildFMul(e->B, fb, recip(e, t, fn), ""); /* nb / n */
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

static LLVMValueRef fma3(pass_emit *e, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c) {
  LLVMTypeRef w = LLVMTypeOf(a);
  LLVMValueRef args[3] = {a, b, c};
  return pass_call(e, "llvm.fma", &w, 1, args, 3);
}

/* 2^k for an i32 k in [-126, 127], as an f32 */
static LLVMValueRef pow2f(pass_emit *e, LLVMValueRef k) {
  LLVMValueRef b =
      LLVMBuildShl(e->B, LLVMBuildAdd(e->B, k, pass_i32(e, 127), ""), pass_i32(e, 23), "");
  return LLVMBuildBitCast(e->B, b, LLVMFloatTypeInContext(e->C), "");
}

/* exp(d) of an f32 from IEEE operations only (fma.rn, add / mul .rn, min / max, integer bit
 * operations: no approximation, no ftz, no conversion instruction), the same on every target:
 * within 0.94 ulp of exp over the whole f32 range (checked on every 97th f32 against the double
 * exp), subnormal results rounded once, 0 below 2^-150, inf above FLT_MAX, NaN kept.  k =
 * round(d log2 e) by the 1.5 * 2^23 shifter (k in j's low bits), r = d - k ln 2 in two fma
 * steps (Cody and Waite), exp(r) by the degree-7 Taylor polynomial in fma Horner steps, and
 * the scale 2^k as 2^(k >> 1) 2^(k - (k >> 1)), two normal factors (the first product exact). */
static LLVMValueRef exp_f32_exact(pass_emit *e, LLVMValueRef d) {
  LLVMTypeRef w = LLVMFloatTypeInContext(e->C), i32 = LLVMInt32TypeInContext(e->C);
  LLVMValueRef a[2] = {d, LLVMConstReal(w, -104.0)};
  LLVMValueRef dc = pass_call(e, "llvm.maxnum", &w, 1, a, 2); /* NaN -> -104: exp 0 */
  a[0] = dc, a[1] = LLVMConstReal(w, 89.0);
  dc = pass_call(e, "llvm.minnum", &w, 1, a, 2); /* exp(89) is inf already */
  LLVMValueRef shifter = LLVMConstReal(w, 12582912.0);
  LLVMValueRef j = fma3(e, dc, LLVMConstReal(w, 1.4426950408889634), shifter);
  LLVMValueRef nk = LLVMBuildFSub(e->B, shifter, j, ""); /* -k, exact */
  LLVMValueRef r = fma3(e, nk, LLVMConstReal(w, 0.693145751953125), dc);
  r = fma3(e, nk, LLVMConstReal(w, 1.428606765330187e-06), r);
  double c = 1.0 / 5040; /* 1 / 7! */
  LLVMValueRef p = LLVMConstReal(w, c);
  for (int i = 6; i >= 0; i--) {
    c *= i + 1;
    p = fma3(e, p, r, LLVMConstReal(w, c));
  }
  LLVMValueRef k =
      LLVMBuildSub(e->B, LLVMBuildBitCast(e->B, j, i32, ""), pass_i32(e, 0x4B400000), "");
  LLVMValueRef k1 = LLVMBuildAShr(e->B, k, pass_i32(e, 1), "");
  LLVMValueRef v = LLVMBuildFMul(e->B, LLVMBuildFMul(e->B, p, pow2f(e, k1), ""),
                                 pow2f(e, LLVMBuildSub(e->B, k, k1, "")), "");
  return LLVMBuildSelect(e->B, isnan_(e, d), d, v, "");
}

/* exp(d) for d <= 0, -inf or NaN (NaN stays NaN).  f32: ex2.approx.ftz of d * log2(e) (one
 * MUFU.EX2; relative error about 2^-22, far inside the tolerance of a logsumexp), or exact
 * (invariant requests) exp_f32_exact; f64: the polynomial below (results below the smallest
 * normal are 0). */
static LLVMValueRef exp_nonpos(pass_emit *e, const st_req *q, LLVMValueRef d) {
  rj_dtype t = q->dtype;
  bool wd = wide(t);
  if (!wd && !q->exact) {
    LLVMTypeRef w = wtype(e, t);
    LLVMValueRef y = LLVMBuildFMul(e->B, d, real(e, t, 1.4426950408889634), "");
    return pass_call(e, "llvm.nvvm.ex2.approx.ftz", &w, 1, &y, 1);
  }
  if (!wd) return exp_f32_exact(e, d);
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

LLVMValueRef st_log(pass_emit *e, rj_dtype t, LLVMValueRef x) {
  bool wd = wide(t);
  double tiny = wd ? 0x1p-1022 : 0x1p-126, up = wd ? 0x1p54 : 0x1p24;
  LLVMValueRef sub = LLVMBuildFCmp(e->B, LLVMRealOLT, x, real(e, t, tiny), "");
  LLVMValueRef xs =
      LLVMBuildFMul(e->B, x, LLVMBuildSelect(e->B, sub, real(e, t, up), real(e, t, 1), ""), "");
  LLVMValueRef v = log_ge1(e, t, xs);
  double k = (wd ? 54 : 24) * 0.6931471805599453;
  v = LLVMBuildFSub(e->B, v, LLVMBuildSelect(e->B, sub, real(e, t, k), real(e, t, 0), ""), "");
  v = LLVMBuildSelect(e->B, LLVMBuildFCmp(e->B, LLVMRealOEQ, x, real(e, t, INFINITY), ""), x, v,
                      "");
  v = LLVMBuildSelect(e->B, LLVMBuildFCmp(e->B, LLVMRealOEQ, x, real(e, t, 0), ""),
                      real(e, t, -INFINITY), v, "");
  return LLVMBuildSelect(e->B, LLVMBuildFCmp(e->B, LLVMRealOLT, x, real(e, t, 0), ""),
                         real(e, t, NAN), v, "");
}

/* ---- logsumexp: the larger max keeps its sum, the other's is scaled by exp(its max - the max) */
static LLVMValueRef combine_lse(pass_emit *e, const st_req *t, LLVMValueRef a, LLVMValueRef b) {
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
  LLVMValueRef sc = LLVMBuildSelect(e->B, same, real(e, t->dtype, 1), exp_nonpos(e, t, d), "");
  LLVMValueRef f[2] = {m, LLVMBuildFAdd(e->B, sbig, LLVMBuildFMul(e->B, ssmall, sc, ""), "")};
  return make(e, t, f, 2);
}

/* ---- the masked mean: sums of the selected elements and of their count */
static LLVMValueRef combine_masked(pass_emit *e, const st_req *t, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef f[2] = {LLVMBuildFAdd(e->B, field(e, a, 0), field(e, b, 0), ""),
                       LLVMBuildAdd(e->B, field(e, a, 1), field(e, b, 1), "")};
  return make(e, t, f, 2);
}

LLVMValueRef st_combine(pass_emit *e, const st_req *t, LLVMValueRef a, LLVMValueRef b) {
  if (t->op == RJ_OP_CUSTOM) return cst_combine(e, t, a, b);
  if (t->masked) return combine_masked(e, t, a, b);
  if (st_indexed(t->op)) return combine_arg(e, t, a, b);
  if (t->op == RJ_OP_LOGSUMEXP) return combine_lse(e, t, a, b);
  return combine_welford(e, t, a, b);
}

/* a 16-bit field (f16 / bf16) shuffled as the low half of 32 bits */
static LLVMValueRef shfl16(pass_emit *e, LLVMValueRef x, LLVMValueRef mm, int lanemask, int width) {
  LLVMTypeRef ty = LLVMTypeOf(x), i16 = LLVMInt16TypeInContext(e->C);
  LLVMValueRef w =
      LLVMBuildZExt(e->B, LLVMBuildBitCast(e->B, x, i16, ""), LLVMInt32TypeInContext(e->C), "");
  w = pass_shfl_bfly(e, w, mm, lanemask, width);
  return LLVMBuildBitCast(e->B, LLVMBuildTrunc(e->B, w, i16, ""), ty, "");
}

/* ---- slots (state.h) */
static bool welford(rj_op op) {
  return op == RJ_OP_VAR || op == RJ_OP_STD;
}

LLVMTypeRef st_slot_type(pass_emit *e, const st_req *t) {
  if (!welford(t->op)) return st_type(e, t);
  LLVMTypeRef w = wtype(e, t->dtype);
  LLVMTypeRef f[4] = {LLVMInt64TypeInContext(e->C), w, w, w};
  return LLVMStructTypeInContext(e->C, f, 4, 0);
}

LLVMValueRef st_slot_identity(pass_emit *e, const st_req *t) {
  if (!welford(t->op)) return st_identity(e, t);
  LLVMValueRef z = real(e, t->dtype, 0);
  LLVMValueRef f[4] = {pass_i64(e, 0), z, z, z};
  return LLVMConstStructInContext(e->C, f, 4, 0);
}

/* the element counts: whether x is folded at all (NULL: always) */
static LLVMValueRef slot_valid(pass_emit *e, const st_req *t, LLVMValueRef x, LLVMValueRef ok) {
  if (!ir_dtype(t->dtype)->is_float || t->nan != RJ_NAN_IGNORE) return ok;
  LLVMValueRef num = LLVMBuildFCmp(e->B, LLVMRealORD, x, x, "");
  return ok ? LLVMBuildAnd(e->B, ok, num, "") : num;
}

/* argmax / argmin: the slot's elements come in increasing index order, so an equal value keeps
 * the slot's earlier index; only the empty slot (index -1) takes an element that is not better */
static LLVMValueRef slot_arg(pass_emit *e, const st_req *t, LLVMValueRef s, LLVMValueRef x,
                             LLVMValueRef idx, LLVMValueRef ok) {
  LLVMValueRef v = field(e, s, 0), i = field(e, s, 1);
  bool mx = t->op == RJ_OP_ARGMAX;
  LLVMValueRef better;
  if (ir_dtype(t->dtype)->is_float) {
    if (t->nan == RJ_NAN_PROPAGATE) /* a NaN x beats a number; a NaN v is never beaten */
      better = LLVMBuildAnd(e->B, LLVMBuildFCmp(e->B, mx ? LLVMRealUGT : LLVMRealULT, x, v, ""),
                            LLVMBuildFCmp(e->B, LLVMRealORD, v, v, ""), "");
    else
      better = LLVMBuildFCmp(e->B, mx ? LLVMRealOGT : LLVMRealOLT, x, v, "");
  } else {
    bool sg = ir_dtype(t->dtype)->is_signed;
    better = LLVMBuildICmp(
        e->B, mx ? (sg ? LLVMIntSGT : LLVMIntUGT) : (sg ? LLVMIntSLT : LLVMIntULT), x, v, "");
  }
  LLVMValueRef empty = LLVMBuildICmp(e->B, LLVMIntEQ, i, pass_i64(e, -1), "");
  LLVMValueRef take = LLVMBuildOr(e->B, better, empty, "");
  LLVMValueRef valid = slot_valid(e, t, x, ok);
  if (valid) take = LLVMBuildAnd(e->B, take, valid, "");
  LLVMValueRef f[2] = {LLVMBuildSelect(e->B, take, x, v, ""),
                       LLVMBuildSelect(e->B, take, idx, i, "")};
  return make(e, t, f, 2);
}

/* var / std: shifted sums about the slot's first element k */
static LLVMValueRef slot_welford(pass_emit *e, const st_req *t, LLVMValueRef s, LLVMValueRef x,
                                 LLVMValueRef ok) {
  LLVMValueRef n = field(e, s, 0), k = field(e, s, 1);
  LLVMValueRef valid = slot_valid(e, t, x, ok);
  LLVMValueRef first = LLVMBuildICmp(e->B, LLVMIntEQ, n, pass_i64(e, 0), "");
  if (valid) first = LLVMBuildAnd(e->B, first, valid, "");
  k = LLVMBuildSelect(e->B, first, x, k, "");
  LLVMValueRef d = LLVMBuildFSub(e->B, x, k, "");
  if (valid) d = LLVMBuildSelect(e->B, valid, d, real(e, t->dtype, 0), "");
  LLVMValueRef fa[3] = {d, d, field(e, s, 3)};
  LLVMTypeRef w = wtype(e, t->dtype);
  LLVMValueRef f[4] = {
      valid ? LLVMBuildNUWAdd(e->B, n, LLVMBuildZExt(e->B, valid, LLVMInt64TypeInContext(e->C), ""),
                              "")
            : LLVMBuildNUWAdd(e->B, n, pass_i64(e, 1), ""),
      k, LLVMBuildFAdd(e->B, field(e, s, 2), d, ""), pass_call(e, "llvm.fma", &w, 1, fa, 3)};
  LLVMValueRef r = LLVMGetUndef(st_slot_type(e, t));
  for (unsigned i = 0; i < 4; i++)
    r = LLVMBuildInsertValue(e->B, r, f[i], i, "");
  return r;
}

/* logsumexp: m' = max(m, x), s' = s * exp(m - m') + exp(x - m'), one of which is exp(0) = 1:
 * one exp of -|x - m| (0 when x and m are the same infinity) and selects */
static LLVMValueRef slot_lse(pass_emit *e, const st_req *t, LLVMValueRef s, LLVMValueRef x,
                             LLVMValueRef ok) {
  LLVMTypeRef w = wtype(e, t->dtype);
  LLVMValueRef m = field(e, s, 0), sum = field(e, s, 1);
  LLVMValueRef args[2] = {m, x};
  LLVMValueRef mx = pass_call(e, "llvm.maximum", &w, 1, args, 2); /* NaN: NaN */
  LLVMValueRef same = LLVMBuildFCmp(e->B, LLVMRealOEQ, x, m, "");
  LLVMValueRef d =
      LLVMBuildSelect(e->B, same, real(e, t->dtype, 0), LLVMBuildFSub(e->B, x, m, ""), "");
  LLVMValueRef up = LLVMBuildFCmp(e->B, LLVMRealOGT, d, real(e, t->dtype, 0), "");
  LLVMValueRef ad = pass_call(e, "llvm.fabs", &w, 1, &d, 1);
  LLVMValueRef ex = exp_nonpos(e, t, LLVMBuildFNeg(e->B, ad, ""));
  LLVMValueRef fa[3] = {sum, ex, real(e, t->dtype, 1)};
  LLVMValueRef ns = LLVMBuildSelect(e->B, up, pass_call(e, "llvm.fma", &w, 1, fa, 3),
                                    LLVMBuildFAdd(e->B, sum, ex, ""), "");
  LLVMValueRef f[2] = {mx, ns};
  LLVMValueRef r = make(e, t, f, 2);
  LLVMValueRef valid = slot_valid(e, t, x, ok);
  return valid ? LLVMBuildSelect(e->B, valid, r, s, "") : r;
}

/* logsumexp, a round of n elements: M = max(m, x...), s' = s exp(m - M) + sum exp(x - M), one exp
 * per element and none of the per-element selects; an infinite M is handled apart (-inf: the
 * shift 0 keeps every exp 0; +inf: s' = 1, the result being +inf) */
static LLVMValueRef round_lse(pass_emit *e, const st_req *t, LLVMValueRef s, LLVMValueRef *x,
                              LLVMValueRef *ok, int n) {
  LLVMTypeRef w = wtype(e, t->dtype);
  LLVMValueRef m = field(e, s, 0), ninf = real(e, t->dtype, -__builtin_inf());
  LLVMValueRef xv[64], mx = m;
  for (int i = 0; i < n; i++) {
    LLVMValueRef valid = slot_valid(e, t, x[i], ok[i]);
    xv[i] = valid ? LLVMBuildSelect(e->B, valid, x[i], ninf, "") : x[i];
    LLVMValueRef args[2] = {mx, xv[i]};
    mx = pass_call(e, "llvm.maximum", &w, 1, args, 2); /* NaN: NaN */
  }
  LLVMValueRef amx = pass_call(e, "llvm.fabs", &w, 1, &mx, 1);
  LLVMValueRef inf = LLVMBuildFCmp(e->B, LLVMRealOEQ, amx, real(e, t->dtype, __builtin_inf()), "");
  LLVMValueRef sh = LLVMBuildSelect(e->B, inf, real(e, t->dtype, 0), mx, "");
  LLVMValueRef sum = NULL;
  for (int i = 0; i < n; i++) {
    LLVMValueRef ex = exp_nonpos(e, t, LLVMBuildFSub(e->B, xv[i], sh, ""));
    sum = sum ? LLVMBuildFAdd(e->B, sum, ex, "") : ex;
  }
  LLVMValueRef fa[3] = {field(e, s, 1), exp_nonpos(e, t, LLVMBuildFSub(e->B, m, sh, "")), sum};
  LLVMValueRef ns = pass_call(e, "llvm.fma", &w, 1, fa, 3);
  LLVMValueRef pinf = LLVMBuildFCmp(e->B, LLVMRealOEQ, mx, real(e, t->dtype, __builtin_inf()), "");
  ns = LLVMBuildSelect(e->B, pinf, real(e, t->dtype, 1), ns, "");
  LLVMValueRef f[2] = {mx, ns};
  return make(e, t, f, 2);
}

LLVMValueRef st_slot_fold_round(pass_emit *e, const st_req *t, LLVMValueRef s, LLVMValueRef *x,
                                LLVMValueRef *idx, LLVMValueRef *ok, int n) {
  if (t->op == RJ_OP_LOGSUMEXP && n > 1 && n <= 64) return round_lse(e, t, s, x, ok, n);
  for (int i = 0; i < n; i++)
    s = st_slot_fold(e, t, s, x[i], idx ? idx[i] : NULL, ok[i]);
  return s;
}

LLVMValueRef st_slot_fold(pass_emit *e, const st_req *t, LLVMValueRef s, LLVMValueRef x,
                          LLVMValueRef idx, LLVMValueRef ok) {
  if (t->masked) /* x: the element's state, from the map (tns_map) */
    return combine_masked(e, t, s, ok ? LLVMBuildSelect(e->B, ok, x, st_identity(e, t), "") : x);
  if (!st_is(t->op)) { /* op custom: the element's state combined in, index order kept */
    LLVMValueRef xs = st_elem(e, t, x, idx);
    if (ok) xs = LLVMBuildSelect(e->B, ok, xs, st_identity(e, t), "");
    return st_combine(e, t, s, xs);
  }
  if (st_indexed(t->op)) return slot_arg(e, t, s, x, idx, ok);
  if (t->op == RJ_OP_LOGSUMEXP) return slot_lse(e, t, s, x, ok);
  return slot_welford(e, t, s, x, ok);
}

/* var / std: b's sums moved to a's shift, d = kb - ka: s1 + nb d, s2 + d (2 s1b + nb d); no
 * division (k's are elements of one output: d is small beside them) */
LLVMValueRef st_slot_combine(pass_emit *e, const st_req *t, LLVMValueRef a, LLVMValueRef b) {
  if (!welford(t->op)) return st_combine(e, t, a, b);
  LLVMTypeRef w = wtype(e, t->dtype);
  LLVMValueRef na = field(e, a, 0), nb = field(e, b, 0);
  LLVMValueRef fb = LLVMBuildSIToFP(e->B, nb, w, "");
  LLVMValueRef d = LLVMBuildFSub(e->B, field(e, b, 1), field(e, a, 1), "");
  LLVMValueRef s1b = field(e, b, 2);
  LLVMValueRef f1[3] = {fb, d, s1b};
  LLVMValueRef s1 = LLVMBuildFAdd(e->B, field(e, a, 2), pass_call(e, "llvm.fma", &w, 1, f1, 3), "");
  LLVMValueRef f2[3] = {fb, d, LLVMBuildFAdd(e->B, s1b, s1b, "")};
  LLVMValueRef f3[3] = {d, pass_call(e, "llvm.fma", &w, 1, f2, 3), field(e, b, 3)};
  LLVMValueRef s2 = LLVMBuildFAdd(e->B, field(e, a, 3), pass_call(e, "llvm.fma", &w, 1, f3, 3), "");
  LLVMValueRef r = LLVMGetUndef(st_slot_type(e, t));
  LLVMValueRef f[4] = {LLVMBuildAdd(e->B, na, nb, ""), field(e, a, 1), s1, s2};
  for (unsigned i = 0; i < 4; i++)
    r = LLVMBuildInsertValue(e->B, r, f[i], i, "");
  LLVMValueRef zero = pass_i64(e, 0);
  r = LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntEQ, na, zero, ""), b, r, "");
  return LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntEQ, nb, zero, ""), a, r, "");
}

/* var / std: (n, k + s1 / n, max(0, s2 - s1 * s1 / n)); an empty slot is the identity */
LLVMValueRef st_slot_state(pass_emit *e, const st_req *t, LLVMValueRef s) {
  if (!welford(t->op)) return s;
  LLVMTypeRef w = wtype(e, t->dtype);
  LLVMValueRef n = field(e, s, 0), s1 = field(e, s, 2);
  LLVMValueRef dm = LLVMBuildFMul(e->B, s1, recip(e, t, LLVMBuildSIToFP(e->B, n, w, "")), "");
  LLVMValueRef fa[3] = {LLVMBuildFNeg(e->B, s1, ""), dm, field(e, s, 3)};
  LLVMValueRef m2 = pass_call(e, "llvm.fma", &w, 1, fa, 3);
  LLVMValueRef neg = LLVMBuildFCmp(e->B, LLVMRealOLT, m2, real(e, t->dtype, 0), ""); /* NaN kept */
  m2 = LLVMBuildSelect(e->B, neg, real(e, t->dtype, 0), m2, "");
  LLVMValueRef f[3] = {n, LLVMBuildFAdd(e->B, field(e, s, 1), dm, ""), m2};
  LLVMValueRef r = make(e, t, f, 3);
  LLVMValueRef empty = LLVMBuildICmp(e->B, LLVMIntEQ, n, pass_i64(e, 0), "");
  return LLVMBuildSelect(e->B, empty, st_identity(e, t), r, "");
}

LLVMValueRef st_shfl_bfly(pass_emit *e, LLVMValueRef v, LLVMValueRef mm, int lanemask, int width) {
  LLVMTypeRef ty = LLVMTypeOf(v);
  unsigned n = LLVMCountStructElementTypes(ty);
  for (unsigned i = 0; i < n; i++) {
    LLVMTypeKind k = LLVMGetTypeKind(LLVMStructGetTypeAtIndex(ty, i));
    LLVMValueRef x = field(e, v, i);
    x = k == LLVMHalfTypeKind || k == LLVMBFloatTypeKind
            ? shfl16(e, x, mm, lanemask, width)
            : pass_shfl_bfly(e, x, mm, lanemask, width);
    v = LLVMBuildInsertValue(e->B, v, x, i, "");
  }
  return v;
}

LLVMValueRef st_bfly_tree(pass_emit *e, const st_req *t, LLVMValueRef v, LLVMValueRef mm,
                          const int *masks, int n, int width) {
  for (int i = 0; i < n; i++)
    v = st_combine(e, t, v, st_shfl_bfly(e, v, mm, masks[i], width));
  return v;
}

LLVMValueRef st_finish(pass_emit *e, const st_req *t, LLVMValueRef s) {
  if (t->op == RJ_OP_CUSTOM) return cst_finish(e, t, s);
  if (st_indexed(t->op)) return field(e, s, 1);
  LLVMTypeRef w = wtype(e, t->dtype);
  if (t->masked) /* a correctly rounded division, as pass_mean's; no element: 0 / 0, NaN */
    return LLVMBuildFDiv(e->B, field(e, s, 0), LLVMBuildSIToFP(e->B, field(e, s, 1), w, ""), "");
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

bool st_tile_on(const rj_tile *t) {
  st_req s = st_of_tile(t);
  return st_on(&s);
}

LLVMTypeRef st_tile_acc_type(pass_emit *e, const rj_tile *t) {
  st_req s = st_of_tile(t);
  return st_on(&s) ? st_type(e, &s) : pass_acc_type(e, t->dtype);
}

LLVMValueRef st_tile_identity(pass_emit *e, const rj_tile *t) {
  st_req s = st_of_tile(t);
  return st_on(&s) ? st_identity(e, &s) : pass_identity(e, t->op, t->dtype);
}

LLVMValueRef st_tile_fold(pass_emit *e, const rj_tile *t, LLVMValueRef acc, LLVMValueRef x,
                          LLVMValueRef idx) {
  st_req s = st_of_tile(t);
  if (!st_on(&s)) return pass_fold(e, t->op, t->dtype, t->nan, acc, x);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  bool want = st_wants_index(&s);
  if (want && LLVMTypeOf(idx) != i64) idx = LLVMBuildZExt(e->B, idx, i64, "");
  return st_combine(e, &s, acc, st_elem(e, &s, x, want ? idx : NULL));
}

/* The ordered butterfly: at mask m, the lane whose bit m is clear combines (its value, the
 * partner's), the other (the partner's, its value), so every lane's result is fn over its
 * coset's lanes in lane order (a non-commutative combine reduced in index order). */
static LLVMValueRef ordered_tree(pass_emit *e, const rj_tile *t, LLVMValueRef v, LLVMValueRef mm,
                                 const int *masks, int n, int width) {
  st_req s = st_of_tile(t);
  bool state = st_on(&s);
  LLVMValueRef lane = LLVMBuildAnd(e->B, pass_tid_x(e), pass_i32(e, 31), "");
  for (int i = 0; i < n; i++) {
    LLVMValueRef o =
        state ? st_shfl_bfly(e, v, mm, masks[i], width) : pass_shfl_bfly(e, v, mm, masks[i], width);
    LLVMValueRef hi = LLVMBuildICmp(
        e->B, LLVMIntNE, LLVMBuildAnd(e->B, lane, pass_i32(e, masks[i]), ""), pass_i32(e, 0), "");
    LLVMValueRef a = LLVMBuildSelect(e->B, hi, o, v, ""), b = LLVMBuildSelect(e->B, hi, v, o, "");
    v = state ? st_combine(e, &s, a, b) : pass_combine(e, t->op, t->dtype, t->nan, a, b);
  }
  return v;
}

LLVMValueRef st_tile_tree(pass_emit *e, const rj_tile *t, LLVMValueRef v, LLVMValueRef mm,
                          const int *masks, int n, int width) {
  st_req s = st_of_tile(t);
  if (t->op == RJ_OP_CUSTOM && !t->combine.commutative)
    return ordered_tree(e, t, v, mm, masks, n, width);
  if (!st_on(&s)) return pass_bfly_tree(e, t->op, t->dtype, t->nan, v, mm, masks, n, width);
  return st_bfly_tree(e, &s, v, mm, masks, n, width);
}
