/* tensor_inv_cols: "invariant": true for column views (outer, reduced, kept innermost unit-stride
 * dims: a reduction over axis 0 of [R, K], or over a middle axis).  The bits are tensor_generic's
 * invariant tree's for every output (docs/INVARIANCE.md), but the loads are coalesced: the
 * threads of a warp take consecutive columns, and each thread plays one lane of the fixed tree
 * for its column, so a warp reads one row's contiguous bytes where tensor_generic's lanes read one
 * element from each of 32 rows.
 *
 * A CTA is CW columns (threads tid mod CW) by up to 32 lanes (tid / CW).  The tree, as
 * tensor_generic builds it from the reduced length N alone:
 * - N <= IC_LANES_MAX: G = pow2(N) <= 32 lanes; lane l folds elements l, l + G, ... into IC_U
 *   accumulators in turn (tns_fold_elem), tns_acc_total, then tns_bfly_tree over G lanes, whose
 *   lane 0 ends with: for m = G/2 .. 1, value(l) = combine(value(l), value(l + m)) for l < m.
 *   Here: a CTA of G lanes per column, that butterfly through shared memory.
 * - Longer: S segments of chunk elements, each a CTA of IC_T threads (8 warps) folding elements
 *   t, t + IC_T, ... into IC_U accumulators; tns_cta_reduce: the 32-lane butterfly per warp, then
 *   warp 0's over the 8 warp values; with S > 1 the S partials folded from the identity in
 *   segment order by thread t (partials t, t + IC_T, ...) and the same CTA tree.  Here a CTA
 *   plays one warp of one segment (the grid: tiles x S x 8, enough CTAs for any column count);
 *   its warp value goes to the workspace, and the last CTA of a column tile plays the rest: each
 *   segment's tree over its 8 warp values (registers), then the 256 threads of the partials'
 *   fold, a virtual warp at a time, through the same shared-memory butterfly.
 * Short 2-byte float sums, means and products: IC_V adjacent columns a thread (one vector load a
 * row where src is aligned), each accumulator a vector over them.  The last CTA runs the 8 warps'
 * butterflies of the partials' fold together where shared memory holds them (batch_warps).
 * Every fold, combine and state is tensor_common.c's, so every op, dtype and NaN policy of
 * tensor_generic is served with its bits; the GPU suite compares them (test_gpu_invariant). */
#include "../tensor.h"

#include <stdio.h>
#include <string.h>

/* tensor_generic's invariant tree (passes/tensor.h: TNS_INV_*, tns_inv_segments) */
#define IC_U TNS_INV_U
#define IC_LANES_MAX TNS_INV_LANES_MAX
#define IC_T TNS_INV_T
#define IC_WARPS (IC_T / 32)
#define IC_PARTS ((int64_t)1 << 22) /* outputs x segments x warps: the workspace bound */
#define IC_R_MAX 32                 /* loads in flight per thread, at most (a multiple of IC_U) */
#define IC_V 4           /* columns per thread of the short 2-byte vector plan (8-byte loads) */
#define IC_ROW_BYTES 128 /* a warp's row of columns: one 128-byte line */
#define IC_MIN_CTAS (TNS_DEFAULT_SMS * 3 / 4) /* a grid of wide tiles keeps this many CTAs */
#define IC_SLOTS_MAX 32768                    /* shared bytes of the butterfly's slots, at most */
/* 32 columns x 32 lanes of the largest state (op custom's, 8 bytes a field: st_bytes) */
_Static_assert(32 * 32 * 8 * RJ_COMBINE_FIELDS_MAX <= IC_SLOTS_MAX, "the slots fit");

typedef struct inv_cols_plan {
  int64_t O, K, OS, N, RS; /* outer dims, columns, reduced length and stride (inner stride 1) */
  int64_t CB;              /* column tiles per outer index */
  int64_t chunk;           /* segment length (long) */
  int G;                   /* lanes per column (short: pow2(N) <= 32; long: a warp's 32) */
  int S;                   /* segments (0: short) */
  int CW;                  /* columns per CTA */
  int R;                   /* loads in flight per thread (a multiple of IC_U) */
  int V;                   /* columns per thread: 1, or IC_V (short, vector loads) */
} inv_cols_plan;
_Static_assert(sizeof(inv_cols_plan) <= PASS_PLAN_PRIV, "inv_cols_plan fits the plan");

/* The tree is the reduced length's; the tile width CW is free (the bits do not depend on it):
 * the widest of 32 columns, 16 of 8-byte elements (a warp reads a row of up to IC_ROW_BYTES
 * contiguous bytes), not past the columns, whose grid still has IC_MIN_CTAS CTAs; narrower
 * otherwise, down to 8 columns (16 of 1- and 2-byte elements), so that a small grid spreads over
 * the SMs.  On the H100 (docs/evidence/invariant-cols-width-h100.md; every shape there has 128
 * CTAs or more at the width taken) the f32 columns of 4096^2 took 1.27x the default kernel's time
 * (L2 flushed) in tiles of 8 columns, 1.21x of 16, 1.06x of 32; f64 columns of 65536 x 128
 * 1.28x / 1.12x / 1.17x. */
static unsigned grid_of(const inv_cols_plan *p) {
  return (unsigned)(p->O * p->CB * (p->S ? (int64_t)p->S * IC_WARPS : 1));
}

static void make_plan(const rj_tensor *t, const ir_tview *v, inv_cols_plan *p) {
  int n = v->n;
  memset(p, 0, sizeof *p);
  p->K = v->size[n - 1];
  p->N = v->size[n - 2];
  p->RS = v->stride[n - 2];
  p->O = n == 3 ? v->size[0] : 1;
  p->OS = n == 3 ? v->stride[0] : 0;
  int64_t g = tns_pow2(p->N);
  p->G = p->N <= IC_LANES_MAX ? (int)(g > 32 ? 32 : g) : 32;
  if (p->N > IC_LANES_MAX) p->S = tns_inv_segments(p->N, &p->chunk);
  /* loads in flight: 8 (states: registers); 32 of 1 and 2 bytes (but 2-byte prod's), and of 4
   * bytes in the lanes kernel (its segments kernel spills at 32); else 16 */
  st_req sr = st_of_tensor(t);
  bool small = ir_dtype(t->dtype)->bytes < 4 && t->op != RJ_OP_PROD;
  bool word = ir_dtype(t->dtype)->bytes == 4 && !p->S;
  p->R = st_on(&sr) ? 8 : small || word ? 32 : 16;
  int64_t cw = IC_ROW_BYTES / ir_dtype(t->dtype)->bytes;
  if (cw > 32) cw = 32;
  if (cw > tns_pow2(p->K)) cw = tns_pow2(p->K);
  int64_t cwmin = ir_dtype(t->dtype)->bytes <= 2 ? 16 : 8;
  p->V = 1;
  if (!p->S && p->G >= IC_V && tns_vfoldable(t) && !t->acc_f64 && ir_dtype(t->dtype)->bytes == 2 &&
      p->K % IC_V == 0 && p->RS % IC_V == 0 && p->OS % IC_V == 0) {
    /* IC_V adjacent columns per thread (one vector load each row), 32 column groups a CTA,
     * down to 8 (64 bytes of a row) for a small grid */
    p->V = IC_V, p->R = 16;
    cw = tns_pow2(p->K) > 32 * IC_V ? 32 * IC_V : tns_pow2(p->K);
    cwmin = 8 * IC_V;
  }
  for (;; cw /= 2) {
    p->CW = (int)cw;
    p->CB = (p->K + cw - 1) / cw;
    if (cw <= cwmin || grid_of(p) >= IC_MIN_CTAS) break;
  }
}

/* needs a request this variant accepts */
static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  (void)env;
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  inv_cols_plan p;
  make_plan(&r->u.tensor, &v, &p);
  tns_plan_geometry(out, grid_of(&p), (unsigned)(p.CW / p.V * p.G));
  if (r->u.tensor.dynamic)
    tns_plan_constant(out, "an invariant request's tree is fixed by its reduced length");
  size_t k = strlen(out->note);
  const char *tree = r->u.tensor.invariant ? "invariant" : "the invariant tree, not asked";
  if (p.S)
    snprintf(out->note + k, sizeof out->note - k,
             " (%s: %d segments of %lld elements per output, a CTA of %d threads each; "
             "played by CTAs of %d columns x 32 lanes, one warp of a segment each)",
             tree, p.S, (long long)p.chunk, IC_T, p.CW);
  else
    snprintf(out->note + k, sizeof out->note - k,
             " (%s: %d lanes per output; CTAs of %d columns x %d lanes%s)", tree, p.G, p.CW, p.G,
             p.V > 1 ? "; 4 columns a thread, vector loads where src is aligned" : "");
  memcpy(out->priv.bytes, &p, sizeof p);
  return RJ_OK;
}

#ifndef RJ_PLAN_ONLY
/* What the emitter's pieces share. */
typedef struct ick {
  pass_emit *e;
  const rj_tensor *t;
  inv_cols_plan p;
  LLVMTypeRef acc, i32, i64;
  LLVMValueRef src, dst, tid, col, lane; /* i32: the thread, its column in the tile, its lane */
  LLVMValueRef out, valid, base;         /* i64 output index, i1, i64 offset of its element 0 */
  LLVMValueRef slots;                    /* shared [32][CW] of the acc type: the butterfly */
} ick;

static LLVMValueRef c64(ick *k, int64_t v) {
  return tns_i64(k->e, v);
}

/* The thread's column of tile `tile` (i64): out, valid and base. */
static void place(ick *k, LLVMValueRef tile) {
  pass_emit *e = k->e;
  LLVMBuilderRef B = e->B;
  LLVMValueRef o = LLVMBuildUDiv(B, tile, c64(k, k->p.CB), "o");
  LLVMValueRef cb = LLVMBuildURem(B, tile, c64(k, k->p.CB), "");
  LLVMValueRef col = LLVMBuildZExt(B, k->col, k->i64, "");
  if (k->p.V > 1) col = LLVMBuildMul(B, col, c64(k, k->p.V), "");
  LLVMValueRef kk = LLVMBuildAdd(B, LLVMBuildMul(B, cb, c64(k, k->p.CW), ""), col, "k");
  k->valid = LLVMBuildICmp(B, LLVMIntULT, kk, c64(k, k->p.K), "valid");
  kk = LLVMBuildSelect(B, k->valid, kk, c64(k, 0), "");
  k->out = LLVMBuildAdd(B, LLVMBuildMul(B, o, c64(k, k->p.K), ""), kk, "out");
  k->base = LLVMBuildAdd(B, LLVMBuildMul(B, o, c64(k, k->p.OS), ""), kk, "base");
}

/* Whole trips of R elements from *start (below hi) unguarded, each trip's loads before its folds;
 * *start: where they end. */
static void fold_whole(ick *k, LLVMValueRef *start, LLVMValueRef hi, int64_t step,
                       LLVMValueRef *acc) {
  pass_emit *e = k->e;
  LLVMTypeRef ty = pass_type(e, k->t->dtype);
  int R = k->p.R;
  pass_loop l;
  pass_loop_begin(e, &l, *start, LLVMBuildSub(e->B, hi, c64(k, step * (R - 1)), ""),
                  c64(k, step * R));
  LLVMValueRef x[IC_R_MAX], ri[IC_R_MAX];
  for (int j = 0; j < R; j++) {
    ri[j] = LLVMBuildAdd(e->B, l.i, c64(k, step * j), "");
    LLVMValueRef off =
        LLVMBuildAdd(e->B, k->base, LLVMBuildMul(e->B, ri[j], c64(k, k->p.RS), ""), "");
    x[j] = tns_load(e, k->t, pass_gep(e, ty, k->src, off));
  }
  for (int j = 0; j < R; j++)
    tns_fold_elem(e, k->t, acc[j % IC_U], x[j], tns_elem_idx(e, k->t, NULL, ri[j]), NULL);
  pass_loop_end(e, &l);
  *start = LLVMBuildLoad2(e->B, k->i64, l.var, "");
}

/* The thread's elements start, start + step, ... below hi (i64 reduced indices) into acc[IC_U],
 * element r of the thread into acc[r mod IC_U], in index order: tensor_generic's fold_range.
 * R loads issued before their folds: whole trips unguarded, then the last one guarded. */
static void fold(ick *k, LLVMValueRef start, LLVMValueRef hi, int64_t step, LLVMValueRef *acc) {
  pass_emit *e = k->e;
  LLVMTypeRef ty = pass_type(e, k->t->dtype);
  pass_loop l;
  int R = k->p.R;
  fold_whole(k, &start, hi, step, acc);
  pass_loop_begin(e, &l, start, hi, c64(k, step * R));
  LLVMValueRef x[IC_R_MAX], ok[IC_R_MAX], ri[IC_R_MAX];
  for (int j = 0; j < R; j++) {
    ri[j] = LLVMBuildAdd(e->B, l.i, c64(k, step * j), "");
    ok[j] = LLVMBuildICmp(e->B, LLVMIntSLT, ri[j], hi, "");
    LLVMValueRef at = LLVMBuildSelect(e->B, ok[j], ri[j], l.i, "");
    LLVMValueRef off = LLVMBuildAdd(e->B, k->base, LLVMBuildMul(e->B, at, c64(k, k->p.RS), ""), "");
    x[j] = tns_load(e, k->t, pass_gep(e, ty, k->src, off));
  }
  for (int j = 0; j < R; j++) {
    pass_if in;
    if (j) pass_if_begin(e, &in, ok[j]);
    tns_fold_elem(e, k->t, acc[j % IC_U], x[j], tns_elem_idx(e, k->t, NULL, ri[j]), NULL);
    if (j) pass_if_end(e, &in);
  }
  pass_loop_end(e, &l);
}

static LLVMValueRef slot(ick *k, LLVMValueRef lane) {
  LLVMValueRef i =
      LLVMBuildAdd(k->e->B, LLVMBuildMul(k->e->B, lane, pass_i32(k->e, k->p.CW), ""), k->col, "");
  return pass_gep(k->e, k->acc, k->slots, i);
}

/* The butterfly of n lanes (tns_bfly_tree, masks n/2 .. 1) of each column, lane l of the
 * column holding v: lane 0's value, in lane 0 (the CTA's threads all call it). */
static LLVMValueRef butterfly(ick *k, LLVMValueRef v, int n) {
  pass_emit *e = k->e;
  pass_barrier_cta(e); /* the previous butterfly's readers are done */
  LLVMBuildStore(e->B, v, slot(k, k->lane));
  pass_barrier_cta(e);
  for (int m = n / 2; m >= 1; m /= 2) {
    pass_if w;
    pass_if_begin(e, &w, LLVMBuildICmp(e->B, LLVMIntULT, k->lane, pass_i32(e, m), ""));
    LLVMValueRef a = LLVMBuildLoad2(e->B, k->acc, slot(k, k->lane), "");
    LLVMValueRef hi = LLVMBuildAdd(e->B, k->lane, pass_i32(e, m), "");
    LLVMValueRef b = LLVMBuildLoad2(e->B, k->acc, slot(k, hi), "");
    LLVMBuildStore(e->B, tns_combine(e, k->t, a, b), slot(k, k->lane));
    pass_if_end(e, &w);
    pass_barrier_cta(e);
  }
  return LLVMBuildLoad2(e->B, k->acc, slot(k, pass_i32(e, 0)), "");
}

/* The same butterfly over n values in registers: v[0]'s end value. */
static LLVMValueRef reg_tree(ick *k, LLVMValueRef *v, int n) {
  for (int m = n / 2; m >= 1; m /= 2)
    for (int l = 0; l < m; l++)
      v[l] = tns_combine(k->e, k->t, v[l], v[l + m]);
  return v[0];
}

/* lane 0 of a valid column stores v (the output's value, before the mean) */
static void store_out(ick *k, LLVMValueRef v) {
  pass_emit *e = k->e;
  pass_if w;
  LLVMValueRef l0 = LLVMBuildICmp(e->B, LLVMIntEQ, k->lane, pass_i32(e, 0), "");
  pass_if_begin(e, &w, LLVMBuildAnd(e->B, l0, k->valid, ""));
  tns_store(e, k->t, k->dst, k->out, tns_result(e, k->t, v, c64(k, k->p.N)));
  pass_if_end(e, &w);
}

/* The thread's lane value of elements start, start + step, ... below hi: its fold, then
 * tns_acc_total (an invalid column's lanes fold nothing). */
static LLVMValueRef lane_value(ick *k, LLVMValueRef start, LLVMValueRef hi, int64_t step) {
  pass_emit *e = k->e;
  LLVMValueRef acc[IC_U];
  tns_acc_init(e, k->t, acc, IC_U);
  hi = LLVMBuildSelect(e->B, k->valid, hi, start, "");
  fold(k, start, hi, step, acc);
  return tns_acc_total(e, k->t, acc, IC_U);
}

/* short: a CTA per tile, G lanes per column */
static void lanes_kernel(ick *k) {
  pass_emit *e = k->e;
  place(k, LLVMBuildZExt(e->B, tns_ctaid(e), k->i64, ""));
  LLVMValueRef v = lane_value(k, LLVMBuildZExt(e->B, k->lane, k->i64, ""), c64(k, k->p.N), k->p.G);
  store_out(k, butterfly(k, v, k->p.G));
}

/* ---- short 2-byte columns, IC_V adjacent columns a thread (col: its column group): the same
 * lanes and accumulators per column, each accumulator a vector over the thread's columns
 * (tns_vacc: column c in element c), so one load of IC_V elements serves a row. */

/* The vector of IC_V columns at element off: one load where src is aligned (vec), else IC_V. */
static LLVMValueRef vcols(ick *k, LLVMValueRef off, bool vec) {
  pass_emit *e = k->e;
  if (vec) return tns_vload(e, k->t, IC_V, k->src, off);
  LLVMValueRef v = LLVMGetUndef(LLVMVectorType(k->acc, IC_V));
  LLVMTypeRef ty = pass_type(e, k->t->dtype);
  for (int c = 0; c < IC_V; c++) {
    LLVMValueRef p = pass_gep(e, ty, k->src, LLVMBuildAdd(e->B, off, c64(k, c), ""));
    v = LLVMBuildInsertElement(e->B, v, tns_load(e, k->t, p), pass_i32(e, c), "");
  }
  return v;
}

/* fold's rows for the thread's IC_V columns into acc[IC_U] (vectors) */
static void vfold(ick *k, LLVMValueRef start, LLVMValueRef hi, int64_t step, LLVMValueRef *acc,
                  bool vec) {
  pass_emit *e = k->e;
  pass_loop l;
  int R = k->p.R;
  pass_loop_begin(e, &l, start, hi, c64(k, step * R));
  LLVMValueRef x[IC_R_MAX], ok[IC_R_MAX];
  for (int j = 0; j < R; j++) {
    LLVMValueRef ri = LLVMBuildAdd(e->B, l.i, c64(k, step * j), "");
    ok[j] = LLVMBuildICmp(e->B, LLVMIntSLT, ri, hi, "");
    LLVMValueRef at = LLVMBuildSelect(e->B, ok[j], ri, l.i, "");
    x[j] =
        vcols(k, LLVMBuildAdd(e->B, k->base, LLVMBuildMul(e->B, at, c64(k, k->p.RS), ""), ""), vec);
  }
  for (int j = 0; j < R; j++) {
    pass_if in;
    if (j) pass_if_begin(e, &in, ok[j]);
    tns_vfold(e, k->t, x[j], acc[j % IC_U]);
    if (j) pass_if_end(e, &in);
  }
  pass_loop_end(e, &l);
}

/* pass_fold's combine of two column vectors (tns_vfoldable ops) */
static LLVMValueRef vcomb(ick *k, LLVMValueRef a, LLVMValueRef b) {
  return k->t->op == RJ_OP_PROD ? LLVMBuildFMul(k->e->B, a, b, "")
                                : LLVMBuildFAdd(k->e->B, a, b, "");
}

static LLVMValueRef vslot(ick *k, LLVMValueRef lane) {
  pass_emit *e = k->e;
  LLVMValueRef c = LLVMBuildMul(e->B, k->col, pass_i32(e, IC_V), "");
  LLVMValueRef i = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, lane, pass_i32(e, k->p.CW), ""), c, "");
  return pass_gep(e, k->acc, k->slots, i);
}

/* butterfly for the thread's IC_V columns at once; the values end in the slots of lane 0 */
static void vbutterfly(ick *k, LLVMValueRef v, int n) {
  pass_emit *e = k->e;
  LLVMTypeRef vt = LLVMTypeOf(v);
  LLVMBuildStore(e->B, v, vslot(k, k->lane));
  pass_barrier_cta(e);
  for (int m = n / 2; m >= 1; m /= 2) {
    pass_if w;
    pass_if_begin(e, &w, LLVMBuildICmp(e->B, LLVMIntULT, k->lane, pass_i32(e, m), ""));
    LLVMValueRef a = LLVMBuildLoad2(e->B, vt, vslot(k, k->lane), "");
    LLVMValueRef hi = LLVMBuildAdd(e->B, k->lane, pass_i32(e, m), "");
    LLVMValueRef b = LLVMBuildLoad2(e->B, vt, vslot(k, hi), "");
    LLVMBuildStore(e->B, vcomb(k, a, b), vslot(k, k->lane));
    pass_if_end(e, &w);
    pass_barrier_cta(e);
  }
}

/* short, IC_V columns a thread: the lanes' folds (vector loads where src is aligned), each
 * column's tns_acc_total and butterfly element-wise, lane c storing column c's output (G >= IC_V)
 */
static void lanes_vec_kernel(ick *k) {
  pass_emit *e = k->e;
  place(k, LLVMBuildZExt(e->B, tns_ctaid(e), k->i64, ""));
  LLVMValueRef acc[IC_U];
  for (int j = 0; j < IC_U; j++)
    acc[j] = tns_vacc(e, k->t, IC_V);
  LLVMValueRef start = LLVMBuildZExt(e->B, k->lane, k->i64, "");
  LLVMValueRef hi = LLVMBuildSelect(e->B, k->valid, c64(k, k->p.N), start, "");
  int64_t mask = (int64_t)IC_V * ir_dtype(k->t->dtype)->bytes - 1;
  LLVMValueRef al = LLVMBuildICmp(
      e->B, LLVMIntEQ,
      LLVMBuildAnd(e->B, LLVMBuildPtrToInt(e->B, k->src, k->i64, ""), c64(k, mask), ""), c64(k, 0),
      "aligned");
  pass_if w;
  pass_if_begin(e, &w, al);
  vfold(k, start, hi, k->p.G, acc, true);
  pass_if_end(e, &w);
  pass_if_begin(e, &w, LLVMBuildNot(e->B, al, ""));
  vfold(k, start, hi, k->p.G, acc, false);
  pass_if_end(e, &w);
  LLVMTypeRef vt = LLVMVectorType(k->acc, IC_V);
  LLVMValueRef a[IC_U];
  for (int j = 0; j < IC_U; j++)
    a[j] = LLVMBuildLoad2(e->B, vt, acc[j], "");
  vbutterfly(k, vcomb(k, vcomb(k, a[0], a[1]), vcomb(k, a[2], a[3])), k->p.G);
  /* lane c < IC_V stores column c: one scalar store a thread, the same on every target */
  LLVMValueRef lc = LLVMBuildICmp(e->B, LLVMIntULT, k->lane, pass_i32(e, IC_V), "");
  pass_if_begin(e, &w, LLVMBuildAnd(e->B, lc, k->valid, ""));
  LLVMValueRef c =
      LLVMBuildAdd(e->B, LLVMBuildMul(e->B, k->col, pass_i32(e, IC_V), ""), k->lane, "");
  LLVMValueRef x = LLVMBuildLoad2(e->B, k->acc, pass_gep(e, k->acc, k->slots, c), "");
  tns_store(e, k->t, k->dst,
            LLVMBuildAdd(e->B, k->out, LLVMBuildZExt(e->B, k->lane, k->i64, ""), ""),
            tns_result(e, k->t, x, c64(k, k->p.N)));
  pass_if_end(e, &w);
}

/* The workspace slot of (the thread's output, segment s, warp w): [outputs][S][IC_WARPS] */
static LLVMValueRef ws_at(ick *k, LLVMValueRef ws, LLVMValueRef s, LLVMValueRef w) {
  LLVMBuilderRef B = k->e->B;
  LLVMValueRef os = LLVMBuildAdd(B, LLVMBuildMul(B, k->out, c64(k, k->p.S), ""), s, "");
  return pass_gep(k->e, k->acc, ws,
                  LLVMBuildAdd(B, LLVMBuildMul(B, os, c64(k, IC_WARPS), ""), w, ""));
}

/* The last CTA of a tile, step 1: each segment's CTA tree over its 8 warp values (warp 0's
 * butterfly over the slots, tns_fold_slots), lanes taking segments lane, lane + 32, ...; its
 * value back into the segment's warp-0 slot, or the output when S is 1. */
static void segment_values(ick *k, LLVMValueRef ws) {
  pass_emit *e = k->e;
  pass_loop l;
  LLVMValueRef hi = LLVMBuildSelect(e->B, k->valid, c64(k, k->p.S), c64(k, 0), "");
  pass_loop_begin(e, &l, LLVMBuildZExt(e->B, k->lane, k->i64, ""), hi, c64(k, 32));
  LLVMValueRef v[IC_WARPS / 2]; /* the first step as the values come: fewer live registers */
  for (int w = 0; w < IC_WARPS / 2; w++)
    v[w] = tns_combine(e, k->t, tns_load_volatile(e, k->acc, ws_at(k, ws, l.i, c64(k, w))),
                       tns_load_volatile(e, k->acc, ws_at(k, ws, l.i, c64(k, w + IC_WARPS / 2))));
  LLVMValueRef r = reg_tree(k, v, IC_WARPS / 2);
  if (k->p.S == 1)
    tns_store(e, k->t, k->dst, k->out, tns_result(e, k->t, r, c64(k, k->p.N)));
  else
    LLVMBuildStore(e->B, r, ws_at(k, ws, l.i, c64(k, 0)));
  pass_loop_end(e, &l);
}

/* Warps whose butterflies run together in step 2: as many of the 8 as 16 KiB of shared memory
 * hold (plain accumulators: f16 / bf16 accumulate in f32); 1 for states (the masked mean's
 * included) and a caller's combine.  With the slots (IC_SLOTS_MAX) that stays under 48 KiB. */
static int batch_warps(const ick *k) {
  st_req sr = st_of_tensor(k->t);
  if (st_on(&sr) || k->t->op == RJ_OP_CUSTOM) return 1;
  int64_t one = (int64_t)32 * k->p.CW * pass_acc_bytes(tns_acc_dtype(k->t)), nb = IC_WARPS;
  while (nb > 1 && nb * one > 16384)
    nb /= 2;
  return (int)nb;
}

/* butterfly() of nb warps' values v[] at once (shared ms: [nb][32 lanes][CW]): each warp's
 * combines in butterfly's order, one barrier a step for all; lane 0's values back in v[] */
static void butterflies(ick *k, LLVMValueRef ms, LLVMValueRef *v, int nb) {
  pass_emit *e = k->e;
  LLVMValueRef at[IC_WARPS], up[IC_WARPS];
  pass_barrier_cta(e); /* the previous batch's readers are done */
  for (int j = 0; j < nb; j++) {
    LLVMValueRef row = LLVMBuildAdd(e->B, k->lane, pass_i32(e, j * 32), "");
    at[j] = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, row, pass_i32(e, k->p.CW), ""), k->col, "");
    LLVMBuildStore(e->B, v[j], pass_gep(e, k->acc, ms, at[j]));
  }
  pass_barrier_cta(e);
  for (int m = 16; m >= 1; m /= 2) {
    pass_if w;
    pass_if_begin(e, &w, LLVMBuildICmp(e->B, LLVMIntULT, k->lane, pass_i32(e, m), ""));
    for (int j = 0; j < nb; j++) {
      up[j] = LLVMBuildAdd(e->B, at[j], pass_i32(e, m * k->p.CW), "");
      LLVMValueRef a = LLVMBuildLoad2(e->B, k->acc, pass_gep(e, k->acc, ms, at[j]), "");
      LLVMValueRef b = LLVMBuildLoad2(e->B, k->acc, pass_gep(e, k->acc, ms, up[j]), "");
      LLVMBuildStore(e->B, tns_combine(e, k->t, a, b), pass_gep(e, k->acc, ms, at[j]));
    }
    pass_if_end(e, &w);
    pass_barrier_cta(e);
  }
  for (int j = 0; j < nb; j++) {
    LLVMValueRef l0 =
        LLVMBuildAdd(e->B, pass_i32(e, j * 32 * k->p.CW), k->col, ""); /* lane 0 of warp j */
    v[j] = LLVMBuildLoad2(e->B, k->acc, pass_gep(e, k->acc, ms, l0), "");
  }
}

/* Step 2 (S > 1): the partials' fold, thread t = 32 w + lane of the CTA folding partials t,
 * t + IC_T, ... from the identity, then the CTA tree: per warp the butterfly (batch_warps of
 * them together), then over the 8 warp values. */
static void partials_value(ick *k, LLVMValueRef ws) {
  pass_emit *e = k->e;
  pass_barrier_cta(e); /* step 1's segment values are written */
  LLVMValueRef wv[IC_WARPS];
  LLVMValueRef a = pass_entry_alloca(e, k->acc, "part");
  LLVMValueRef hi = LLVMBuildSelect(e->B, k->valid, c64(k, k->p.S), c64(k, 0), "");
  int nb = batch_warps(k);
  LLVMValueRef ms =
      nb > 1 ? pass_global_array(e, k->acc, (int64_t)nb * 32 * k->p.CW, AS_SHARED, "rj_warps")
             : NULL;
  for (int w0 = 0; w0 < IC_WARPS; w0 += nb) {
    for (int w = w0; w < w0 + nb; w++) {
      LLVMBuildStore(e->B, tns_identity(e, k->t), a);
      LLVMValueRef t0 =
          LLVMBuildAdd(e->B, LLVMBuildZExt(e->B, k->lane, k->i64, ""), c64(k, (int64_t)w * 32), "");
      pass_loop l;
      pass_loop_begin(e, &l, t0, hi, c64(k, IC_T));
      LLVMValueRef x = tns_load_volatile(e, k->acc, ws_at(k, ws, l.i, c64(k, 0)));
      LLVMBuildStore(e->B, tns_combine(e, k->t, LLVMBuildLoad2(e->B, k->acc, a, ""), x), a);
      pass_loop_end(e, &l);
      wv[w] = LLVMBuildLoad2(e->B, k->acc, a, "");
      if (nb == 1) wv[w] = butterfly(k, wv[w], 32);
    }
    if (nb > 1) butterflies(k, ms, wv + w0, nb);
    for (int w = w0; w < w0 + nb; w++)
      if (w >= IC_WARPS / 2) /* the first step of the tree over the warps, as they come */
        wv[w - IC_WARPS / 2] = tns_combine(e, k->t, wv[w - IC_WARPS / 2], wv[w]);
  }
  store_out(k, reg_tree(k, wv, IC_WARPS / 2));
}

/* long: a CTA per (tile, segment, warp); the tile's last CTA ends its outputs */
static void segments_kernel(ick *k) {
  pass_emit *e = k->e;
  LLVMBuilderRef B = e->B;
  LLVMValueRef bid = LLVMBuildZExt(B, tns_ctaid(e), k->i64, "");
  int64_t per = (int64_t)k->p.S * IC_WARPS;
  LLVMValueRef tile = LLVMBuildUDiv(B, bid, c64(k, per), "tile");
  LLVMValueRef sw = LLVMBuildURem(B, bid, c64(k, per), "");
  LLVMValueRef s = LLVMBuildUDiv(B, sw, c64(k, IC_WARPS), "seg");
  LLVMValueRef w = LLVMBuildURem(B, sw, c64(k, IC_WARPS), "warp");
  place(k, tile);
  LLVMValueRef lo = LLVMBuildMul(B, s, c64(k, k->p.chunk), "");
  LLVMValueRef hi = tns_min64(e, LLVMBuildAdd(B, lo, c64(k, k->p.chunk), ""), c64(k, k->p.N));
  LLVMValueRef t = LLVMBuildAdd(B, LLVMBuildMul(B, w, c64(k, 32), ""),
                                LLVMBuildZExt(B, k->lane, k->i64, ""), "");
  LLVMValueRef v = butterfly(k, lane_value(k, LLVMBuildAdd(B, lo, t, ""), hi, IC_T), 32);
  int64_t nparts = k->p.O * k->p.K * per;
  LLVMValueRef ws = pass_global_array(e, k->acc, nparts, AS_GLOBAL, "rj_ws_part");
  LLVMValueRef cnt = pass_global_array(e, k->i32, k->p.O * k->p.CB, AS_GLOBAL, "rj_ws_count");
  pass_if st;
  LLVMValueRef l0 = LLVMBuildICmp(B, LLVMIntEQ, k->lane, pass_i32(e, 0), "");
  pass_if_begin(e, &st, LLVMBuildAnd(B, l0, k->valid, ""));
  LLVMBuildStore(B, v, ws_at(k, ws, s, w));
  pass_if_end(e, &st);
  LLVMValueRef cntp = pass_gep(e, k->i32, cnt, tile);
  pass_if last;
  pass_if_begin(e, &last, tns_last_cta(e, cntp, k->tid, c64(k, per)));
  segment_values(k, ws);
  if (k->p.S > 1) partials_value(k, ws);
  pass_if z;
  pass_if_begin(e, &z, LLVMBuildICmp(B, LLVMIntEQ, k->tid, pass_i32(e, 0), ""));
  LLVMBuildStore(B, pass_i32(e, 0), cntp);
  pass_if_end(e, &z);
  pass_if_end(e, &last);
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  ick k = {.e = e, .t = &r->u.tensor};
  memcpy(&k.p, e->plan->priv.bytes, sizeof k.p);
  k.i32 = LLVMInt32TypeInContext(e->C);
  k.i64 = LLVMInt64TypeInContext(e->C);
  tns_begin(e, &k.src, &k.dst, 0, NULL);
  int T = k.p.CW / k.p.V * k.p.G;
  tns_launch_bounds(e, T, T >= 64 ? 1024 / T : 16);
  k.acc = tns_acc_type(e, k.t);
  k.tid = pass_tid_x(e);
  k.col = LLVMBuildURem(e->B, k.tid, pass_i32(e, k.p.CW / k.p.V), "col");
  k.lane = LLVMBuildUDiv(e->B, k.tid, pass_i32(e, k.p.CW / k.p.V), "lane");
  k.slots = pass_global_array(e, k.acc, (int64_t)k.p.CW * k.p.G, AS_SHARED, "rj_lanes");
  if (k.p.S)
    segments_kernel(&k);
  else if (k.p.V > 1)
    lanes_vec_kernel(&k);
  else
    lanes_kernel(&k);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}
#endif

/* Default requests (not invariant) that this kernel serves faster than tensor_cols, plain and of
 * a constant size: var / std of f32, f16 and bf16 over 1024 rows or more into 64 outputs or
 * more; sums and means of f16 and bf16 over 64 rows or more into 1024 outputs or more; under
 * 32 MiB where the tree takes segments (over 4096 rows), up to 64 MiB (var / std) or 128 MiB
 * (sums, means) where it takes lanes.  Measured on the H100, both kernels of 40 column requests
 * (docs/evidence/cols-routing-h100.md, tensor_cols' time over this kernel's, flushed / rotated):
 * f32 var of 4096 x 512 1.74 / 1.56, bf16 var of 65536 x 128 2.10 / 2.33, f16 / bf16 sums and
 * means 1.09 - 1.48 / 1.03 - 1.37; tensor_cols stays faster on short columns of many outputs
 * (var of 64 x 65536: 0.38 / 0.34), on large inputs of long columns (bf16 sum of 16384 x 4096:
 * 0.75 / 0.76, f32 var of 8192^2: 0.89 / 0.83), on f32 sums, logsumexp and bf16 sums of 512
 * columns; f32 var of 65536 x 128 (32 MiB, segments) is even (0.96 / 1.14). */
static const char *default_faster_here(const rj_tensor *t, const ir_tview *v) {
  const char *no = "serves \"invariant\": true and, of default requests, only plain var / std "
                   "of long columns and f16 / bf16 sums and means of many (tensor_cols serves the "
                   "rest)";
  const ir_dtype_info *d = ir_dtype(t->dtype);
  if (t->dynamic || !t->deterministic || t->accum || t->acc_f64 || t->nothers || t->fused.map ||
      t->fused.epilogue || !d->is_float || d->fp8 || d->bytes > 4)
    return no;
  double mib = (double)v->outputs * (double)v->reduce_len * d->bytes / (1 << 20);
  bool lanes = v->reduce_len <= IC_LANES_MAX;
  if (lanes ? mib > (t->op == RJ_OP_VAR || t->op == RJ_OP_STD ? 64 : 128) : mib >= 32) return no;
  if ((t->op == RJ_OP_VAR || t->op == RJ_OP_STD) && v->reduce_len >= 1024 && v->outputs >= 64)
    return NULL;
  if ((t->op == RJ_OP_SUM || t->op == RJ_OP_MEAN) && d->bytes == 2 && v->reduce_len >= 64 &&
      v->outputs >= 1024)
    return NULL;
  return no;
}

/* column views with a unit-stride kept innermost dim, within the workspace bound: invariant
 * requests (those of ops whose result does not depend on the order of the combines -- max,
 * argmax, integer sums, ... -- only when forced: tensor_cols serves them invariant, faster), and
 * the default ones default_faster_here names */
static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  const rj_tensor *t = &r->u.tensor;
  const char *no = tns_accepts_any_view(r, tg, buf, n);
  if (no) return no;
  ir_tview v;
  ir_tensor_view(t, &v);
  if (tns_classify(&v) != TNS_COLS) return "not a column view (a kept innermost dim)";
  if (v.stride[v.n - 1] != 1) return "the kept innermost dim is not unit-stride";
  if (!t->invariant) {
    if ((no = default_faster_here(t, &v))) return no;
  } else if (!pass_fixed_tree(r) && strcmp(r->variant, "tensor_inv_cols") != 0) {
    return "an invariant request of an op whose result does not depend on the order of the "
           "combines: tensor_cols serves it (forced here, this kernel does)";
  }
  if (v.reduce_len <= IC_LANES_MAX) return NULL;
  int64_t chunk, S = tns_inv_segments(v.reduce_len, &chunk);
  if (v.outputs * S * IC_WARPS <= IC_PARTS) return NULL;
  snprintf(buf, n, "invariant: %lld outputs x %lld segments x %d warps exceed %lld partials",
           (long long)v.outputs, (long long)S, IC_WARPS, (long long)IC_PARTS);
  return buf;
}

const pass_variant pass_variant_tensor_inv_cols = {
    .name = "tensor_inv_cols",
    .prio = 31, /* before tensor_cols: the default requests it serves faster */
    .kind = RJ_KIND_TENSOR,
    .summary = "invariant column reductions (and default var / std of long columns, f16 / bf16 "
               "sums and means of many): tensor_generic's tree per output, a warp reading a row of "
               "consecutive columns",
    .ops = PASS_OPS_SCALAR | ST_OPS | PASS_OP(RJ_OP_CUSTOM),
    .invariant = true,
    .accepts = accepts,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
