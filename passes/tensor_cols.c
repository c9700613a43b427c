/* tensor_cols: reductions over a middle or leading dim with a kept innermost dim — column
 * reductions (R x K, reduce R) and (O x R x K, reduce R) patterns.
 *
 * A CTA of BX x BY threads owns BX column vectors (vec consecutive columns each, 16-byte loads
 * when the inner stride is 1 and the row strides keep vectors aligned, else one column each) of
 * one outer index; its BY thread rows stride down the reduced dim, TNS_U rows in flight, so a
 * warp reads 512 contiguous bytes per row.  The BY partials fold in shared memory in a fixed
 * order.  When the column tiles cannot fill the chip the reduced dim is split over S CTAs; their
 * partials go to a module workspace laid out [S][O*K] and the last CTA of a tile folds them in
 * split order. */
#include "tensor.h"

#include <stdio.h>

typedef struct cols_plan {
  int64_t O, R, K, OS, RS, KS;
  int vec, BX, BY, T, S;
  int64_t CB;   /* column tiles per outer index */
  int64_t rows; /* reduced rows per split */
  unsigned grid;
} cols_plan;

static void make_plan(const pass_emit *e, const rj_tensor *t, const ir_tview *v, cols_plan *p) {
  int n = v->n;
  p->K = v->size[n - 1];
  p->KS = v->stride[n - 1];
  p->R = v->size[n - 2];
  p->RS = v->stride[n - 2];
  p->O = n == 3 ? v->size[0] : 1;
  p->OS = n == 3 ? v->stride[0] : 0;
  int vec = tns_vec(t->dtype);
  bool vok = p->KS == 1 && p->RS % vec == 0 && p->OS % vec == 0 && p->K >= vec;
  p->vec = vok ? vec : 1;
  int64_t ncv = (p->K + p->vec - 1) / p->vec;
  int64_t bx = tns_pow2(ncv);
  p->BX = (int)(bx > 32 ? 32 : bx);
  p->T = 512;
  p->BY = p->T / p->BX;
  p->CB = (ncv + p->BX - 1) / p->BX;
  int64_t tiles = p->O * p->CB;
  int sms = tns_sms(e);
  int64_t target = (int64_t)sms * (2048 / p->T) * 2;
  int64_t S = tiles >= target ? 1 : (target + tiles - 1) / tiles;
  int64_t most = (p->R + (int64_t)p->BY * TNS_U - 1) / ((int64_t)p->BY * TNS_U);
  if (S > most) S = most;
  if (S > 1024) S = 1024;
  while (S > 1 && S * p->O * p->K > ((int64_t)1 << 24)) S /= 2; /* workspace <= 16M partials */
  if (S < 1) S = 1;
  p->rows = (p->R + S - 1) / S;
  p->S = (int)((p->R + p->rows - 1) / p->rows);
  p->grid = (unsigned)(tiles * p->S);
}

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  (void)tg;
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  if (tns_classify(&v) != TNS_COLS) {
    snprintf(buf, n, "the canonical view is not (reduce, kept) or (kept, reduce, kept)");
    return buf;
  }
  if (v.outputs > ((int64_t)1 << 31)) return "more than 2^31 outputs";
  return NULL;
}

/* Folds row r (i64) of this thread's column vector into acc[u * vec ...]. */
static void load_row(pass_emit *e, const rj_tensor *t, const cols_plan *p, LLVMValueRef colbase,
                     LLVMValueRef k0, bool fast, LLVMValueRef r, LLVMValueRef *acc) {
  LLVMTypeRef ty = pass_type(e, t->dtype);
  LLVMValueRef ptr = pass_gep(e, ty, colbase, LLVMBuildMul(e->B, r, tns_i64(e, p->RS), ""));
  if (p->vec == 1) {
    pass_if in;
    pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntSLT, k0, tns_i64(e, p->K), ""));
    tns_acc_fold(e, t, acc[0], tns_load(e, t->dtype, ptr));
    pass_if_end(e, &in);
    return;
  }
  if (fast) {
    LLVMValueRef x[16];
    tns_load_vec(e, t->dtype, ptr, p->vec, x);
    for (int k = 0; k < p->vec; k++) tns_acc_fold(e, t, acc[k], x[k]);
    return;
  }
  for (int k = 0; k < p->vec; k++) {
    pass_if in;
    LLVMValueRef col = LLVMBuildAdd(e->B, k0, tns_i64(e, k), "");
    pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntSLT, col, tns_i64(e, p->K), ""));
    tns_acc_fold(e, t, acc[k], tns_load(e, t->dtype, pass_gep(e, ty, ptr, tns_i64(e, k))));
    pass_if_end(e, &in);
  }
}

/* Rows r0 + ty, r0 + ty + BY, ... < rend: TNS_U rows in flight, then the rest. */
static void row_loops(pass_emit *e, const rj_tensor *t, const cols_plan *p, LLVMValueRef colbase,
                      LLVMValueRef k0, bool fast, LLVMValueRef first, LLVMValueRef rend,
                      LLVMValueRef *acc) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  tns_loop l1;
  tns_loop_begin(e, &l1, first,
                 LLVMBuildSub(e->B, rend, tns_i64(e, (int64_t)(TNS_U - 1) * p->BY), ""),
                 tns_i64(e, (int64_t)TNS_U * p->BY));
  for (int u = 0; u < TNS_U; u++)
    load_row(e, t, p, colbase, k0, fast,
             LLVMBuildAdd(e->B, l1.i, tns_i64(e, (int64_t)u * p->BY), ""), acc + u * p->vec);
  tns_loop_end(e, &l1);
  tns_loop l2;
  tns_loop_begin(e, &l2, LLVMBuildLoad2(e->B, i64, l1.var, ""), rend, tns_i64(e, p->BY));
  load_row(e, t, p, colbase, k0, fast, l2.i, acc);
  tns_loop_end(e, &l2);
}

/* The BY thread rows' values c[vec] fold in shared memory (rows in order); thread row 0 gets the
 * column totals in out[vec].  Ends after the fold (no trailing barrier). */
static void fold_rows(pass_emit *e, const rj_tensor *t, const cols_plan *p, LLVMValueRef sm,
                      LLVMValueRef tx, LLVMValueRef ty_, LLVMValueRef *c, LLVMValueRef *out) {
  LLVMTypeRef acc_ty = pass_acc_type(e, t->dtype);
  int W = p->BX * p->vec;
  LLVMValueRef rowbase = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, ty_, pass_i32(e, W), ""),
                                      LLVMBuildMul(e->B, tx, pass_i32(e, p->vec), ""), "");
  for (int k = 0; k < p->vec; k++)
    LLVMBuildStore(e->B, c[k],
                   pass_gep(e, acc_ty, sm, LLVMBuildAdd(e->B, rowbase, pass_i32(e, k), "")));
  pass_barrier_cta(e);
  LLVMValueRef colbase = LLVMBuildMul(e->B, tx, pass_i32(e, p->vec), "");
  for (int k = 0; k < p->vec; k++) {
    LLVMValueRef v[1024];
    for (int y = 0; y < p->BY; y++)
      v[y] = LLVMBuildLoad2(e->B, acc_ty,
                            pass_gep(e, acc_ty, sm, LLVMBuildAdd(e->B, colbase, pass_i32(e, y * W + k), "")), "");
    for (int w = 1; w < p->BY; w *= 2)
      for (int i = 0; i + w < p->BY; i += 2 * w)
        v[i] = pass_combine(e, t->op, t->dtype, t->nan, v[i], v[i + w]);
    out[k] = v[0];
  }
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  const rj_tensor *t = &r->u.tensor;
  ir_tview v;
  ir_tensor_view(t, &v);
  cols_plan p;
  make_plan(e, t, &v, &p);
  LLVMValueRef src, dst;
  tns_begin(e, &src, &dst);
  e->grid[0] = p.grid;
  e->block[0] = (unsigned)p.T;
  tns_launch_bounds(e, p.T, p.vec >= 8 ? 1 : 2); /* 128 / 64 registers */
  LLVMTypeRef ty = pass_type(e, t->dtype), i64 = LLVMInt64TypeInContext(e->C);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), acc_ty = pass_acc_type(e, t->dtype);
  LLVMValueRef tid = pass_tid_x(e), bid = tns_ctaid(e);
  LLVMValueRef bid64 = LLVMBuildZExt(e->B, bid, i64, "");
  LLVMValueRef tile = LLVMBuildUDiv(e->B, bid64, tns_i64(e, p.S), "tile");
  LLVMValueRef split = LLVMBuildURem(e->B, bid64, tns_i64(e, p.S), "split");
  LLVMValueRef o = LLVMBuildUDiv(e->B, tile, tns_i64(e, p.CB), "o");
  LLVMValueRef cb = LLVMBuildURem(e->B, tile, tns_i64(e, p.CB), "cb");
  LLVMValueRef tx = LLVMBuildURem(e->B, tid, pass_i32(e, p.BX), "tx");
  LLVMValueRef ty_ = LLVMBuildUDiv(e->B, tid, pass_i32(e, p.BX), "ty");
  LLVMValueRef tx64 = LLVMBuildZExt(e->B, tx, i64, ""), ty64 = LLVMBuildZExt(e->B, ty_, i64, "");
  LLVMValueRef k0 = LLVMBuildMul(
      e->B, LLVMBuildAdd(e->B, LLVMBuildMul(e->B, cb, tns_i64(e, p.BX), ""), tx64, ""),
      tns_i64(e, p.vec), "k0");
  LLVMValueRef colbase = pass_gep(
      e, ty, src,
      LLVMBuildAdd(e->B, LLVMBuildMul(e->B, o, tns_i64(e, p.OS), ""),
                   LLVMBuildMul(e->B, k0, tns_i64(e, p.KS), ""), ""));
  LLVMValueRef fast = NULL;
  if (p.vec > 1) { /* the whole grid agrees on the alignment; only the last vector is partial */
    LLVMValueRef al = LLVMBuildICmp(
        e->B, LLVMIntEQ,
        LLVMBuildAnd(e->B, LLVMBuildPtrToInt(e->B, src, i64, ""), tns_i64(e, 15), ""),
        tns_i64(e, 0), "");
    LLVMValueRef full = LLVMBuildICmp(
        e->B, LLVMIntSLE, LLVMBuildAdd(e->B, k0, tns_i64(e, p.vec), ""), tns_i64(e, p.K), "");
    fast = LLVMBuildAnd(e->B, al, full, "fast");
  }
  LLVMValueRef acc[64];
  int nacc = TNS_U * p.vec;
  tns_acc_init(e, t, acc, nacc);
  LLVMValueRef r0 = LLVMBuildMul(e->B, split, tns_i64(e, p.rows), "");
  LLVMValueRef rend = LLVMBuildAdd(e->B, r0, tns_i64(e, p.rows), "");
  LLVMValueRef over = LLVMBuildICmp(e->B, LLVMIntSGT, rend, tns_i64(e, p.R), "");
  rend = LLVMBuildSelect(e->B, over, tns_i64(e, p.R), rend, "rend");
  LLVMValueRef first = LLVMBuildAdd(e->B, r0, ty64, "");
  if (p.vec == 1) {
    row_loops(e, t, &p, colbase, k0, false, first, rend, acc);
  } else { /* two versions of the loop: 16-byte vectors, or guarded scalars */
    LLVMBasicBlockRef vb = LLVMAppendBasicBlockInContext(e->C, e->fn, "vec");
    LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(e->C, e->fn, "scalar");
    LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(e->C, e->fn, "joined");
    LLVMBuildCondBr(e->B, fast, vb, sb);
    LLVMPositionBuilderAtEnd(e->B, vb);
    row_loops(e, t, &p, colbase, k0, true, first, rend, acc);
    LLVMBuildBr(e->B, jb);
    LLVMPositionBuilderAtEnd(e->B, sb);
    row_loops(e, t, &p, colbase, k0, false, first, rend, acc);
    LLVMBuildBr(e->B, jb);
    LLVMPositionBuilderAtEnd(e->B, jb);
  }
  LLVMValueRef c[16], tot[16];
  for (int k = 0; k < p.vec; k++) { /* fold the TNS_U copies of each column, in order */
    LLVMValueRef s[TNS_U];
    for (int u = 0; u < TNS_U; u++) s[u] = acc[u * p.vec + k];
    c[k] = tns_acc_total(e, t, s, TNS_U);
  }
  LLVMValueRef sm = pass_global_array(e, acc_ty, (int64_t)p.T * p.vec, AS_SHARED, "rj_cols");
  e->shared_bytes = 0; /* static shared memory */
  fold_rows(e, t, &p, sm, tx, ty_, c, tot);
  LLVMValueRef row0 = LLVMBuildICmp(e->B, LLVMIntEQ, ty_, pass_i32(e, 0), "");
  LLVMValueRef outbase = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, o, tns_i64(e, p.K), ""), k0, "");
  pass_if w;
  if (p.S == 1) {
    pass_if_begin(e, &w, row0);
    for (int k = 0; k < p.vec; k++) {
      LLVMValueRef col = LLVMBuildAdd(e->B, k0, tns_i64(e, k), "");
      pass_if in;
      pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntSLT, col, tns_i64(e, p.K), ""));
      tns_store(e, t, dst, LLVMBuildAdd(e->B, outbase, tns_i64(e, k), ""), tot[k]);
      pass_if_end(e, &in);
    }
    pass_if_end(e, &w);
    LLVMBuildRetVoid(e->B);
    return RJ_OK;
  }
  int64_t OK = p.O * p.K;
  LLVMValueRef ws = pass_global_array(e, acc_ty, p.S * OK, AS_GLOBAL, "rj_ws_part");
  LLVMValueRef cnt = pass_global_array(e, i32, p.O * p.CB, AS_GLOBAL, "rj_ws_count");
  LLVMValueRef cntp = pass_gep(e, i32, cnt, tile);
  LLVMValueRef wsrow = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, split, tns_i64(e, OK), ""), outbase, "");
  pass_if_begin(e, &w, row0);
  for (int k = 0; k < p.vec; k++) {
    LLVMValueRef col = LLVMBuildAdd(e->B, k0, tns_i64(e, k), "");
    pass_if in;
    pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntSLT, col, tns_i64(e, p.K), ""));
    LLVMBuildStore(e->B, tot[k], pass_gep(e, acc_ty, ws, LLVMBuildAdd(e->B, wsrow, tns_i64(e, k), "")));
    pass_if_end(e, &in);
  }
  pass_if_end(e, &w);
  LLVMValueRef last = tns_last_cta(e, cntp, tid, p.S);
  pass_if l;
  pass_if_begin(e, &l, last);
  for (int k = 0; k < nacc; k++) LLVMBuildStore(e->B, pass_identity(e, t->op, t->dtype), acc[k]);
  tns_loop fl; /* thread row ty folds splits ty, ty + BY, ... in order */
  tns_loop_begin(e, &fl, ty64, tns_i64(e, p.S), tns_i64(e, p.BY));
  LLVMValueRef base = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, fl.i, tns_i64(e, OK), ""), outbase, "");
  for (int k = 0; k < p.vec; k++) {
    LLVMValueRef col = LLVMBuildAdd(e->B, k0, tns_i64(e, k), "");
    pass_if in;
    pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntSLT, col, tns_i64(e, p.K), ""));
    LLVMValueRef x = tns_load_volatile(e, acc_ty, pass_gep(e, acc_ty, ws, LLVMBuildAdd(e->B, base, tns_i64(e, k), "")));
    LLVMValueRef cur = LLVMBuildLoad2(e->B, acc_ty, acc[k], "");
    LLVMBuildStore(e->B, pass_combine(e, t->op, t->dtype, t->nan, cur, x), acc[k]);
    pass_if_end(e, &in);
  }
  tns_loop_end(e, &fl);
  for (int k = 0; k < p.vec; k++) c[k] = LLVMBuildLoad2(e->B, acc_ty, acc[k], "");
  fold_rows(e, t, &p, sm, tx, ty_, c, tot);
  pass_if w2;
  pass_if_begin(e, &w2, row0);
  for (int k = 0; k < p.vec; k++) {
    LLVMValueRef col = LLVMBuildAdd(e->B, k0, tns_i64(e, k), "");
    pass_if in;
    pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntSLT, col, tns_i64(e, p.K), ""));
    tns_store(e, t, dst, LLVMBuildAdd(e->B, outbase, tns_i64(e, k), ""), tot[k]);
    pass_if_end(e, &in);
  }
  pass_if_end(e, &w2);
  pass_if t0;
  pass_if_begin(e, &t0, LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), ""));
  LLVMBuildStore(e->B, pass_i32(e, 0), cntp);
  pass_if_end(e, &t0);
  pass_if_end(e, &l);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_tensor_cols = {
    .name = "tensor_cols",
    .prio = 30,
    .kind = RJ_KIND_TENSOR,
    .summary = "column / middle-axis reductions: coalesced 16-byte column vectors, rows split over "
               "CTAs, last CTA folds in a fixed order",
    .accepts = accepts,
    .kernel = kernel,
};
