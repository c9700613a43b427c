/* Fused maps and epilogues of the tensor variants (docs/TENSOR.md "Fused maps").  Every variant
 * loads through tns_load / tns_load_vec at a pointer into src; the map finds the other inputs'
 * elements at the same index: src's element offset (the pointer's distance from src), which is
 * the other input's offset when it keeps src's layout, or, with strides of its own, that offset
 * split into the logical index (src's nested layout, largest stride first) and placed again. */
#include "tensor.h"

#include <math.h>

static LLVMValueRef i64c(pass_emit *e, int64_t v) {
  return LLVMConstInt(LLVMInt64TypeInContext(e->C), (unsigned long long)v, 1);
}

int tns_map_inputs(const pass_emit *e) {
  return e->nothers;
}

/* other input k's element offset of src's element offset o (i64) */
static LLVMValueRef other_offset(pass_emit *e, const rj_tensor *t, int k, LLVMValueRef o) {
  if (!t->other_has_strides[k]) return o;
  int64_t st[RJ_MAX_DIMS];
  int ord[RJ_MAX_DIMS];
  int n = ir_tensor_stride_order(t, st, ord);
  LLVMValueRef off = i64c(e, 0);
  for (int i = 0; i < n; i++) {
    int d = ord[i];
    LLVMValueRef c = LLVMBuildUDiv(e->B, o, i64c(e, st[d]), "");
    o = LLVMBuildURem(e->B, o, i64c(e, st[d]), "");
    off = LLVMBuildAdd(e->B, off, LLVMBuildMul(e->B, c, i64c(e, t->other_strides[k][d]), ""), "");
  }
  return off;
}

/* word j + q of the 2m words w, for q in [0, m) (a uniform value: selects, no branch) */
static LLVMValueRef word_at(pass_emit *e, LLVMValueRef *w, int m, int j, LLVMValueRef q) {
  LLVMValueRef x = w[j];
  for (int d = 1; d < m; d++)
    x = LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntEQ, q, pass_i32(e, d), ""), w[j + d], x,
                        "");
  return x;
}

/* The W bytes (W = 4 or 8) at p, whatever p's alignment, as m = W / 4 words: the aligned
 * W-byte block holding p and, when p is not W-aligned, the next one, funnel-shifted by p's
 * offset.  Reads only within the W-aligned blocks that hold the W bytes (never another page);
 * p's offset is the same for every vector of a launch (src's vectors are 16-byte aligned), so
 * the loads are coalesced and, when the bases agree, the second one re-reads the first. */
static LLVMValueRef load_window(pass_emit *e, LLVMValueRef p, int W) {
  LLVMTypeRef i8 = LLVMInt8TypeInContext(e->C), i32 = LLVMInt32TypeInContext(e->C);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  int m = W / 4;
  LLVMTypeRef vt = LLVMVectorType(i32, (unsigned)m);
  LLVMValueRef r = LLVMBuildAnd(e->B, LLVMBuildPtrToInt(e->B, p, i64, ""), i64c(e, W - 1), "");
  LLVMValueRef a = pass_gep(e, i8, p, LLVMBuildNeg(e->B, r, ""));
  LLVMValueRef next = LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntNE, r, i64c(e, 0), ""),
                                      i64c(e, W), i64c(e, 0), "");
  LLVMValueRef at[2] = {a, pass_gep(e, i8, a, next)}, w[8];
  for (int h = 0; h < 2; h++) {
    LLVMValueRef v = LLVMBuildLoad2(e->B, vt, at[h], "");
    LLVMSetAlignment(v, (unsigned)W);
    for (int j = 0; j < m; j++)
      w[h * m + j] = LLVMBuildExtractElement(e->B, v, pass_i32(e, j), "");
  }
  LLVMValueRef r32 = LLVMBuildTrunc(e->B, r, i32, "");
  LLVMValueRef q = LLVMBuildLShr(e->B, r32, pass_i32(e, 2), "");
  LLVMValueRef s =
      LLVMBuildShl(e->B, LLVMBuildAnd(e->B, r32, pass_i32(e, 3), ""), pass_i32(e, 3), "");
  LLVMValueRef out = LLVMGetUndef(vt), x = word_at(e, w, m, 0, q);
  for (int j = 0; j < m; j++) {
    LLVMValueRef x1 = word_at(e, w, m, j + 1, q), a3[3] = {x1, x, s};
    out = LLVMBuildInsertElement(e->B, out, pass_call(e, "llvm.fshr", &i32, 1, a3, 3),
                                 pass_i32(e, j), "");
    x = x1;
  }
  return out;
}

/* input k's n elements from src's element offset o, raw (their own dtype) */
static void load_other(pass_emit *e, const rj_tensor *t, int k, LLVMValueRef o, int n,
                       LLVMValueRef *y) {
  rj_dtype dt = t->other_dtype[k];
  LLVMTypeRef ty = pass_type(e, dt);
  int ob = ir_dtype(dt)->bytes, W = n * ob;
  if (n > 1 && !t->other_has_strides[k]) { /* vectors; src's alignment is not its */
    /* 1-byte elements (masks) in word windows; wider ones as a vector of scalars (windows cost
     * registers: measured on the H100 / H200, f32 rows with a u8 mask 2 to 3 % faster, but
     * an f32 dot 4 to 7 % and a 1-D bf16 dot 3 % slower) */
    bool win = ob == 1 && W >= 4;
    int per = win && W > 8 ? 8 : n;
    for (int c = 0; c < n; c += per) {
      LLVMValueRef p = pass_gep(e, ty, e->others[k], LLVMBuildAdd(e->B, o, i64c(e, c), ""));
      LLVMValueRef v;
      if (win) {
        v = LLVMBuildBitCast(e->B, load_window(e, p, per * ob), LLVMVectorType(ty, (unsigned)per),
                             "");
      } else {
        v = LLVMBuildLoad2(e->B, LLVMVectorType(ty, (unsigned)per), p, "");
        LLVMSetAlignment(v, (unsigned)ob);
      }
      for (int i = 0; i < per; i++)
        y[c + i] = LLVMBuildExtractElement(e->B, v, pass_i32(e, i), "");
    }
    return;
  }
  for (int i = 0; i < n; i++) {
    LLVMValueRef oi = LLVMBuildAdd(e->B, o, i64c(e, i), "");
    LLVMValueRef v =
        LLVMBuildLoad2(e->B, ty, pass_gep(e, ty, e->others[k], other_offset(e, t, k, oi)), "");
    LLVMSetAlignment(v, (unsigned)ob);
    y[i] = v;
  }
}

/* a raw element of dtype dt is non-zero (floats: NaN is) */
static LLVMValueRef nonzero(pass_emit *e, rj_dtype dt, LLVMValueRef m) {
  if (ir_dtype(dt)->is_float)
    return LLVMBuildFCmp(e->B, LLVMRealUNE, m, LLVMConstNull(LLVMTypeOf(m)), "");
  return LLVMBuildICmp(e->B, LLVMIntNE, m, LLVMConstNull(LLVMTypeOf(m)), "");
}

/* the map of one element x (acc type) with input 1's raw element y (NULL without); id: the op's
 * identity (map where) */
static LLVMValueRef map1(pass_emit *e, const rj_tensor *t, LLVMValueRef x, LLVMValueRef y,
                         LLVMValueRef id) {
  LLVMTypeRef w = LLVMTypeOf(x);
  if (y && t->fused.map != RJ_MAP_WHERE) { /* x's dtype: its acc type, widened as x was */
    y = pass_to_acc(e, y, t->other_dtype[0]);
    if (LLVMTypeOf(y) != w) y = LLVMBuildFPExt(e->B, y, w, "");
  }
  switch (t->fused.map) {
  case RJ_MAP_MUL:
    return LLVMBuildFMul(e->B, x, y, "");
  case RJ_MAP_SUB_SQUARE: {
    LLVMValueRef d = LLVMBuildFSub(e->B, x, y, "");
    return LLVMBuildFMul(e->B, d, d, "");
  }
  case RJ_MAP_ABS_SUB: {
    LLVMValueRef d = LLVMBuildFSub(e->B, x, y, "");
    return pass_call(e, "llvm.fabs", &w, 1, &d, 1);
  }
  case RJ_MAP_WHERE:
    return LLVMBuildSelect(e->B, nonzero(e, t->other_dtype[0], y), x, id, "");
  default: /* the one-input maps: fused.c's */
    return pass_map_one(e, t->fused.map, x);
  }
}

/* The masked mean's element state {x or 0, 1 or 0} (passes/state.h) of x with mask element m. */
static LLVMValueRef masked_elem(pass_emit *e, const rj_tensor *t, LLVMValueRef x, LLVMValueRef m) {
  LLVMValueRef on = nonzero(e, t->other_dtype[0], m);
  st_req sr = st_of_tensor(t);
  LLVMTypeRef st = st_type(e, &sr), f[2] = {LLVMTypeOf(x), LLVMStructGetTypeAtIndex(st, 1)};
  LLVMValueRef s = LLVMGetUndef(st);
  s = LLVMBuildInsertValue(e->B, s, LLVMBuildSelect(e->B, on, x, LLVMConstNull(f[0]), ""), 0, "");
  return LLVMBuildInsertValue(e->B, s, LLVMBuildZExt(e->B, on, f[1], ""), 1, "");
}

/* The caller's map (RJ_MAP_IR) of x (acc type) and the other inputs' raw elements ys: a call of
 * PASS_CUSTOM_MAP, A (T, O1 ...), linked to the caller's function in the compiler
 * (jit/llvm/combine.c) and inlined; x passes in its storage type T (exact: widened from it). */
static LLVMValueRef map_ir(pass_emit *e, const rj_tensor *t, LLVMValueRef x, LLVMValueRef *ys) {
  LLVMTypeRef ps[1 + RJ_TENSOR_OTHERS_MAX];
  LLVMValueRef args[1 + RJ_TENSOR_OTHERS_MAX];
  args[0] = pass_from_acc(e, x, t->dtype);
  if (LLVMTypeOf(args[0]) != pass_type(e, t->dtype)) /* an f64 accumulator of f32 */
    args[0] = LLVMBuildFPTrunc(e->B, args[0], pass_type(e, t->dtype), "");
  ps[0] = pass_type(e, t->dtype);
  for (int k = 0; k < t->nothers; k++)
    args[k + 1] = ys[k], ps[k + 1] = pass_type(e, t->other_dtype[k]);
  LLVMTypeRef fty = LLVMFunctionType(LLVMTypeOf(x), ps, (unsigned)(1 + t->nothers), 0);
  LLVMValueRef fn = LLVMGetNamedFunction(e->M, PASS_CUSTOM_MAP);
  if (!fn) fn = LLVMAddFunction(e->M, PASS_CUSTOM_MAP, fty);
  return LLVMBuildCall2(e->B, fty, fn, args, (unsigned)(1 + t->nothers), "");
}

LLVMValueRef tns_map(pass_emit *e, const rj_tensor *t, LLVMValueRef p, int n, LLVMValueRef *x,
                     LLVMValueRef id, LLVMValueRef *out) {
  LLVMValueRef y[16] = {0};
  if (t->fused.map == RJ_MAP_IR) {
    LLVMValueRef ys[RJ_TENSOR_OTHERS_MAX][16], o = NULL;
    if (t->nothers) {
      LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
      LLVMValueRef d = LLVMBuildSub(e->B, LLVMBuildPtrToInt(e->B, p, i64, ""),
                                    LLVMBuildPtrToInt(e->B, e->src, i64, ""), "");
      o = LLVMBuildExactSDiv(e->B, d, i64c(e, ir_dtype(t->dtype)->bytes), "");
    }
    for (int k = 0; k < t->nothers; k++)
      load_other(e, t, k, o, n, ys[k]);
    for (int i = 0; i < n; i++) {
      LLVMValueRef yi[RJ_TENSOR_OTHERS_MAX];
      for (int k = 0; k < t->nothers; k++)
        yi[k] = ys[k][i];
      out[i] = map_ir(e, t, x[i], yi);
    }
    return out[0];
  }
  if (t->nothers) {
    LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
    LLVMValueRef d = LLVMBuildSub(e->B, LLVMBuildPtrToInt(e->B, p, i64, ""),
                                  LLVMBuildPtrToInt(e->B, e->src, i64, ""), "");
    LLVMValueRef o = LLVMBuildExactSDiv(e->B, d, i64c(e, ir_dtype(t->dtype)->bytes), "");
    load_other(e, t, 0, o, n, y);
  }
  bool masked = t->fused.map == RJ_MAP_WHERE && t->op == RJ_OP_MEAN;
  for (int i = 0; i < n; i++)
    out[i] =
        masked ? masked_elem(e, t, x[i], y[i]) : map1(e, t, x[i], t->nothers ? y[i] : NULL, id);
  return out[0];
}

LLVMValueRef tns_epilogue(pass_emit *e, const rj_tensor *t, LLVMValueRef v) {
  if (t->fused.epilogue != RJ_EPI_IR) return pass_epilogue(e, t->fused.epilogue, t->fused.scale, v);
  /* the caller's, linked in the compiler (jit/llvm/combine.c) */
  LLVMTypeRef w = LLVMTypeOf(v), fty = LLVMFunctionType(w, &w, 1, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(e->M, PASS_CUSTOM_EPILOGUE);
  if (!fn) fn = LLVMAddFunction(e->M, PASS_CUSTOM_EPILOGUE, fty);
  return LLVMBuildCall2(e->B, fty, fn, &v, 1, "");
}
