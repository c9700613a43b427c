/* tensor_generic: any view the other tensor variants decline (several separated reduced dims,
 * non-unit innermost strides, broadcast dims).  G lanes per output (G = 1..32), each lane folds
 * reduced elements lane, lane + G, ... through constant-divisor index math, then a butterfly
 * tree of width G.  Correct for every valid view; not tuned.
 *
 * It is also the variant of "invariant": true (docs/INVARIANCE.md), every view: each element's
 * lane and accumulator follow from its index in the reduced extent, so the tree of an output
 * depends on its reduced length N alone.  N <= TNS_INV_LANES_MAX: the lanes above.  Longer: S =
 * tns_inv_segments(N) segments of chunk = ceil(N / S) elements (about 16384, rounded up to a
 * whole round; at most 4096 segments), a CTA of TNS_INV_T threads each, thread t folding the
 * segment's elements t, t + T, ... into GEN_U accumulators in turn, then tns_cta_reduce's fixed
 * tree; with S > 1 the last CTA of an output folds its S partials in segment order (thread t:
 * partials t, t + T, ...) and the same tree.  Float sums, means and products of unit-stride rows
 * load VEC_N elements at a time where src is aligned (vec_plan; thread p takes the VEC_N chains of
 * the block elements VEC_N p ..., then hands each lane its own through shared memory): the same
 * chains, folded in the same order. */
#include "../tensor.h"

#include <stdio.h>
#include <string.h>

#define GEN_U TNS_INV_U /* accumulators per lane (the invariant tree's; plain lanes too) */
#define GEN_R 8         /* invariant: rounds per trip of unguarded loads, at most */

#define INV_PARTS ((int64_t)1 << 22) /* outputs x segments: the workspace bound */
#define VEC_N TNS_INV_U /* elements per invariant vector load (a thread per lane, below) */

/* G lanes per output (the reduced length, rounded up to a power of two, at most 32), CTAs of T;
 * invariant segments: S > 0 segments of chunk elements per output, a CTA each.  Invariant vector
 * loads (vec_plan): V elements per load (0: none), R loads per trip, W outputs per lane group,
 * launch bounds of minctas CTAs per SM. */
typedef struct generic_plan {
  int G, T;
  int S;
  int64_t chunk;
  int V, R, W, minctas;
} generic_plan;
_Static_assert(sizeof(generic_plan) <= PASS_PLAN_PRIV, "generic_plan fits the plan");

/* Invariant vector loads (docs/INVARIANCE.md): a request of tns_vfoldable over one unit-stride
 * innermost reduced dim, every output's first element and the reduced length a multiple of VEC_N, G
 * = 32 lanes or segments.  R: loads in flight (32 registers of elements; 16 where one CTA per SM
 * runs, with 128 registers); W: the outputs of a lane group whose loads are all issued together
 * (short rows). */
static void vec_plan(const rj_tensor *t, const ir_tview *v, generic_plan *p) {
  int last = v->n - 1, nred = 0;
  for (int d = 0; d < v->n; d++)
    nred += v->red[d] != 0;
  if (!t->invariant || !tns_vfoldable(t) || nred != 1 || !v->red[last] || v->stride[last] != 1 ||
      v->reduce_len % VEC_N || (!p->S && p->G != 32))
    return;
  for (int d = 0; d < last; d++)
    if (v->stride[d] % VEC_N) return;
  int most = ir_dtype(t->dtype)->bytes == 2 ? 16 : 8;
  if (p->S && v->outputs * p->S <= TNS_DEFAULT_SMS) most = 16, p->minctas = 2;
  int64_t block = (int64_t)VEC_N * p->G;
  int64_t steps = p->S ? p->chunk / block : (v->reduce_len + block - 1) / block;
  p->V = VEC_N;
  if (!p->S && steps * 2 <= most) {
    p->R = (int)steps;
    p->W = most / (int)steps > 8 ? 8 : most / (int)steps;
  } else {
    p->R = steps < most ? (int)steps : most;
  }
}

/* needs a request this variant accepts */
static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  int64_t g = tns_pow2(v.reduce_len);
  generic_plan p = {.G = (int)(g > 32 ? 32 : g), .T = 256, .W = 1, .minctas = 4};
  if (r->u.tensor.invariant && v.reduce_len > TNS_INV_LANES_MAX) {
    p = (generic_plan){.G = TNS_INV_T, .T = TNS_INV_T, .W = 1, .minctas = 4};
    p.S = tns_inv_segments(v.reduce_len, &p.chunk);
  }
  vec_plan(&r->u.tensor, &v, &p);
  if (p.S) {
    tns_plan_geometry(out, (unsigned)(v.outputs * p.S), (unsigned)p.T);
  } else {
    int64_t per = (int64_t)(p.T / p.G) * p.W;
    tns_plan_geometry(out, (unsigned)((v.outputs + per - 1) / per), (unsigned)p.T);
  }
  char buf[256];
  if (r->u.tensor.dynamic)
    tns_plan_constant(out, r->u.tensor.invariant
                               ? "an invariant request's tree is fixed by its reduced length"
                               : tns_why_constant(r, env, buf, sizeof buf));
  size_t k = strlen(out->note);
  if (r->u.tensor.invariant && p.S)
    snprintf(out->note + k, sizeof out->note - k,
             " (invariant: %d segments of %lld elements per output, a CTA of %d threads each)", p.S,
             (long long)p.chunk, p.T);
  else if (r->u.tensor.invariant)
    snprintf(out->note + k, sizeof out->note - k, " (invariant: %d lanes per output)", p.G);
  k = strlen(out->note);
  if (p.V && p.W > 1)
    snprintf(
        out->note + k, sizeof out->note - k,
        " (%d-element vector loads where src is aligned: %d outputs per lane group, every load "
        "in flight)",
        p.V, p.W);
  else if (p.V)
    snprintf(out->note + k, sizeof out->note - k,
             " (%d-element vector loads where src is aligned, %d in flight)", p.V, p.R);
  memcpy(out->priv.bytes, &p, sizeof p);
  return RJ_OK;
}

/* The offset of reduced element ri (< the reduced length): one reduced dim needs no division. */
static LLVMValueRef red_offset(pass_emit *e, const ir_tview *v, LLVMValueRef ri) {
  int one = -1, n = 0;
  for (int d = 0; d < v->n; d++)
    if (v->red[d]) one = d, n++;
  if (n == 1) return LLVMBuildMul(e->B, ri, tns_i64(e, v->stride[one]), "");
  return tns_fused_offset(e, v, true, ri);
}

/* The n elements i, i + G, ... (all below the reduced length) folded into acc[k % GEN_U] in
 * turn, every load issued before the first fold. */
static void fold_trip(pass_emit *e, const rj_tensor *t, const ir_tview *v, LLVMValueRef src,
                      LLVMValueRef base, LLVMValueRef i, int G, int n, LLVMValueRef *acc) {
  LLVMTypeRef ty = pass_type(e, t->dtype);
  LLVMValueRef x[GEN_U * GEN_R], ri[GEN_U * GEN_R];
  for (int k = 0; k < n; k++) {
    ri[k] = LLVMBuildAdd(e->B, i, tns_i64(e, (int64_t)k * G), "");
    LLVMValueRef off = LLVMBuildAdd(e->B, base, red_offset(e, v, ri[k]), "");
    x[k] = tns_load_elem(e, t, pass_gep(e, ty, src, off));
  }
  for (int k = 0; k < n; k++)
    tns_fold_elem(e, t, acc[k % GEN_U], x[k], tns_elem_idx(e, t, NULL, ri[k]), NULL);
}

/* Rounds per trip: the whole rounds of a range of len elements over G lanes, at most what the
 * registers allow (64 a thread): 8 for a scalar 1- to 4-byte input over one reduced dim (offsets
 * by immediates), 1 for f64 states and a caller's combine, else 2. */
static int trip_rounds(const rj_tensor *t, const ir_tview *v, int64_t len, int G) {
  int nred = 0, most = 2;
  for (int d = 0; d < v->n; d++)
    nred += v->red[d] != 0;
  if (t->op == RJ_OP_CUSTOM || (st_is(t->op) && ir_dtype(tns_acc_dtype(t))->bytes > 4))
    most = 1;
  else if (!st_is(t->op) && !t->nothers && nred == 1 && ir_dtype(t->dtype)->bytes <= 4)
    most = GEN_R;
  int64_t whole = len / ((int64_t)G * GEN_U);
  return whole < 1 ? 1 : whole < most ? (int)whole : most;
}

/* Trips of n rounds from *at while they are whole (below hi), unguarded; *at: where they end. */
static void fold_trips(pass_emit *e, const rj_tensor *t, const ir_tview *v, LLVMValueRef src,
                       LLVMValueRef base, LLVMValueRef *at, LLVMValueRef hi, int G, int n,
                       LLVMValueRef *acc) {
  int64_t trip = (int64_t)G * GEN_U * n;
  pass_loop l;
  pass_loop_begin(e, &l, *at, LLVMBuildSub(e->B, hi, tns_i64(e, trip - G), ""), tns_i64(e, trip));
  fold_trip(e, t, v, src, base, l.i, G, GEN_U * n, acc);
  pass_loop_end(e, &l);
  *at = LLVMBuildLoad2(e->B, LLVMInt64TypeInContext(e->C), l.var, "");
}

/* Lane `lane` of G folds the reduced elements [lo, hi) it owns (lo + lane, + G, ...) of the
 * output at offset base into acc[GEN_U], in turn (invariant requests): element lo + lane + j G
 * into acc[j mod GEN_U].  len: the length of the range, about (hi - lo at most).  Trips of R
 * rounds while they are whole, then of one round, unguarded (every load of a trip in flight
 * before its folds), then rounds guarded element by element: the same folds in the same order
 * as rounds guarded throughout. */
static void fold_range(pass_emit *e, const rj_tensor *t, const ir_tview *v, LLVMValueRef src,
                       LLVMValueRef base, LLVMValueRef lo, LLVMValueRef hi, int64_t len,
                       LLVMValueRef lane, int G, LLVMValueRef *acc) {
  int R = trip_rounds(t, v, len, G);
  LLVMValueRef at = LLVMBuildAdd(e->B, lo, lane, "");
  fold_trips(e, t, v, src, base, &at, hi, G, R, acc);
  if (R > 1) fold_trips(e, t, v, src, base, &at, hi, G, 1, acc);
  pass_loop r;
  pass_loop_begin(e, &r, at, hi, tns_i64(e, (int64_t)G * GEN_U));
  for (int u = 0; u < GEN_U; u++) {
    LLVMValueRef ri = LLVMBuildAdd(e->B, r.i, tns_i64(e, (int64_t)u * G), "");
    pass_if in;
    pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntSLT, ri, hi, ""));
    LLVMValueRef off = LLVMBuildAdd(e->B, base, red_offset(e, v, ri), "");
    tns_fold_elem(e, t, acc[u], tns_load(e, t, pass_gep(e, pass_type(e, t->dtype), src, off)),
                  tns_elem_idx(e, t, NULL, ri), NULL);
    pass_if_end(e, &in);
  }
  pass_loop_end(e, &r);
}

/* ---- invariant vector loads (vec_plan).  A block of VEC_N G consecutive elements of a range is
 * one round of every accumulator of the G lanes: its element j is lane j mod G's element of
 * accumulator j / G.  Thread p of the group loads the block's vector j = VEC_N p .. VEC_N p +
 * VEC_N - 1 and folds its element i into its acc[i]: the chain of lane (VEC_N p + i) mod G,
 * accumulator VEC_N p / G, block after block in index order, as fold_range folds it in that lane.
 * vec_exchange then hands each lane its VEC_N chains (shared memory) for tns_acc_total. */

/* i1: src is aligned to a vector (the branch between the vector and the element loads) */
static LLVMValueRef vec_aligned(pass_emit *e, const rj_tensor *t, LLVMValueRef src) {
  LLVMValueRef a = LLVMBuildPtrToInt(e->B, src, LLVMInt64TypeInContext(e->C), "");
  int64_t mask = (int64_t)VEC_N * ir_dtype(t->dtype)->bytes - 1;
  return LLVMBuildICmp(e->B, LLVMIntEQ, LLVMBuildAnd(e->B, a, tns_i64(e, mask), ""), tns_i64(e, 0),
                       "aligned");
}

/* The thread's vectors at base + at, at + VEC_N G, ... below hi (a multiple of VEC_N, as at is)
 * into acc[VEC_N]: trips of R loads while whole, every load before its folds, then one by one. */
static void fold_vec(pass_emit *e, const rj_tensor *t, LLVMValueRef src, LLVMValueRef base,
                     LLVMValueRef at, LLVMValueRef hi, int G, int R, LLVMValueRef acc) {
  int64_t step = (int64_t)VEC_N * G;
  LLVMValueRef x[16];
  for (int n = R;; n = 1) {
    pass_loop l;
    pass_loop_begin(e, &l, at, LLVMBuildSub(e->B, hi, tns_i64(e, step * (n - 1)), ""),
                    tns_i64(e, step * n));
    for (int k = 0; k < n; k++)
      x[k] = tns_vload(
          e, t, VEC_N, src,
          LLVMBuildAdd(e->B, base, LLVMBuildAdd(e->B, l.i, tns_i64(e, step * k), ""), ""));
    for (int k = 0; k < n; k++)
      tns_vfold(e, t, x[k], acc);
    pass_loop_end(e, &l);
    at = LLVMBuildLoad2(e->B, LLVMInt64TypeInContext(e->C), l.var, "");
    if (n == 1) return;
  }
}

/* Lane p's value of a group of G lanes whose threads hold acc[VEC_N] (the chains above): each
 * thread stores its chains at xs[VEC_N p + i] (shared; chain of lane l, accumulator a at
 * xs[a G + l]), then lane p combines xs[p], xs[G + p], ... as tns_acc_total combines its
 * accumulators.  cta: the group is the CTA (barriers), else one warp. */
static LLVMValueRef vec_exchange(pass_emit *e, const rj_tensor *t, LLVMValueRef xs, LLVMValueRef p,
                                 int G, LLVMValueRef acc, bool cta) {
  LLVMTypeRef ty = tns_acc_type(e, t);
  LLVMValueRef p4 = LLVMBuildMul(e->B, p, pass_i32(e, VEC_N), "");
  LLVMValueRef cv = LLVMBuildLoad2(e->B, LLVMVectorType(ty, VEC_N), acc, "");
  for (int i = 0; i < VEC_N; i++)
    LLVMBuildStore(e->B, LLVMBuildExtractElement(e->B, cv, pass_i32(e, i), ""),
                   pass_gep(e, ty, xs, LLVMBuildAdd(e->B, p4, pass_i32(e, i), "")));
  cta ? pass_barrier_cta(e) : pass_warp_sync(e);
  LLVMValueRef c[VEC_N];
  for (int a = 0; a < VEC_N; a++) {
    c[a] = pass_entry_alloca(e, ty, "chain");
    LLVMValueRef at = LLVMBuildAdd(e->B, p, pass_i32(e, a * G), "");
    LLVMBuildStore(e->B, LLVMBuildLoad2(e->B, ty, pass_gep(e, ty, xs, at), ""), c[a]);
  }
  LLVMValueRef v = tns_acc_total(e, t, c, VEC_N);
  cta ? pass_barrier_cta(e) : pass_warp_sync(e); /* xs may be written again */
  return v;
}

/* A segment's thread value (before tns_cta_reduce) with vector loads where src is aligned, else
 * fold_range's into acc (the same bits). */
static LLVMValueRef seg_vec_value(pass_emit *e, const rj_tensor *t, const ir_tview *v,
                                  const generic_plan *p, LLVMValueRef src, LLVMValueRef base,
                                  LLVMValueRef lo, LLVMValueRef hi, LLVMValueRef tid,
                                  LLVMValueRef *acc) {
  LLVMTypeRef ty = tns_acc_type(e, t), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef res = pass_entry_alloca(e, ty, "thread_value");
  LLVMValueRef tid64 = LLVMBuildZExt(e->B, tid, i64, "");
  LLVMValueRef al = vec_aligned(e, t, src);
  pass_if w;
  pass_if_begin(e, &w, al);
  LLVMValueRef xs = pass_global_array(e, ty, (int64_t)VEC_N * p->T, AS_SHARED, "rj_chains");
  LLVMValueRef va = tns_vacc(e, t, VEC_N);
  LLVMValueRef at = LLVMBuildAdd(e->B, lo, LLVMBuildMul(e->B, tid64, tns_i64(e, VEC_N), ""), "");
  fold_vec(e, t, src, base, at, hi, p->T, p->R, va);
  LLVMBuildStore(e->B, vec_exchange(e, t, xs, tid, p->T, va, true), res);
  pass_if_end(e, &w);
  pass_if_begin(e, &w, LLVMBuildNot(e->B, al, ""));
  fold_range(e, t, v, src, base, lo, hi, p->chunk < v->reduce_len ? p->chunk : v->reduce_len, tid64,
             p->T, acc);
  LLVMBuildStore(e->B, tns_acc_total(e, t, acc, GEN_U), res);
  pass_if_end(e, &w);
  return LLVMBuildLoad2(e->B, ty, res, "");
}

/* Thread tid of the last CTA folds its output's partials tid, tid + T, ... (< S; the first at
 * ws[at]) into a, from the identity in that order: groups of them loaded before their combines
 * (volatile: other CTAs wrote them). */
static void fold_partials(pass_emit *e, const rj_tensor *t, LLVMValueRef at, LLVMValueRef ws,
                          const generic_plan *p, LLVMValueRef tid, LLVMValueRef a) {
  LLVMTypeRef acc_ty = tns_acc_type(e, t);
  int full = p->S / p->T, rest = p->S % p->T;
  int g = !st_is(t->op) && t->op != RJ_OP_CUSTOM && ir_dtype(tns_acc_dtype(t))->bytes <= 4 ? 16 : 4;
  LLVMValueRef cur = tns_identity(e, t), part[16];
  for (int j0 = 0; j0 < full; j0 += g) {
    int n = full - j0 < g ? full - j0 : g;
    for (int k = 0; k < n; k++)
      part[k] = tns_load_volatile(
          e, acc_ty,
          pass_gep(e, acc_ty, ws,
                   LLVMBuildAdd(e->B, at, tns_i64(e, (int64_t)(j0 + k) * p->T), "")));
    for (int k = 0; k < n; k++)
      cur = tns_combine(e, t, cur, part[k]);
  }
  LLVMBuildStore(e->B, cur, a);
  if (!rest) return;
  pass_if in;
  pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntULT, tid, pass_i32(e, rest), ""));
  LLVMValueRef last = tns_load_volatile(
      e, acc_ty,
      pass_gep(e, acc_ty, ws, LLVMBuildAdd(e->B, at, tns_i64(e, (int64_t)full * p->T), "")));
  LLVMBuildStore(e->B, tns_combine(e, t, LLVMBuildLoad2(e->B, acc_ty, a, ""), last), a);
  pass_if_end(e, &in);
}

/* Invariant segments: a CTA per (output, segment); the last CTA of an output folds its S
 * partials in segment order. */
static rj_status segments_kernel(pass_emit *e, const rj_tensor *t, const ir_tview *v,
                                 const generic_plan *p) {
  LLVMValueRef src, dst;
  tns_begin(e, &src, &dst, 0, NULL);
  tns_launch_bounds(e, p->T, p->minctas);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), i64 = LLVMInt64TypeInContext(e->C);
  LLVMTypeRef acc_ty = tns_acc_type(e, t);
  LLVMValueRef tid = pass_tid_x(e), bid = LLVMBuildZExt(e->B, tns_ctaid(e), i64, "");
  LLVMValueRef tid64 = LLVMBuildZExt(e->B, tid, i64, "");
  LLVMValueRef S = tns_i64(e, p->S), N = tns_i64(e, v->reduce_len);
  LLVMValueRef out = LLVMBuildUDiv(e->B, bid, S, "out");
  LLVMValueRef lo = LLVMBuildMul(e->B, LLVMBuildURem(e->B, bid, S, ""), tns_i64(e, p->chunk), "");
  LLVMValueRef hi = tns_min64(e, LLVMBuildAdd(e->B, lo, tns_i64(e, p->chunk), ""), N);
  LLVMValueRef base = tns_fused_offset(e, v, false, out);
  LLVMValueRef acc[GEN_U], val;
  tns_acc_init(e, t, acc, GEN_U);
  if (p->V) {
    val = seg_vec_value(e, t, v, p, src, base, lo, hi, tid, acc);
  } else {
    fold_range(e, t, v, src, base, lo, hi, p->chunk < v->reduce_len ? p->chunk : v->reduce_len,
               tid64, p->T, acc);
    val = tns_acc_total(e, t, acc, GEN_U);
  }
  val = tns_cta_reduce(e, t, val, tid, p->T);
  LLVMValueRef t0 = LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), "");
  pass_if w;
  if (p->S == 1) {
    pass_if_begin(e, &w, t0);
    tns_store(e, t, dst, out, tns_result(e, t, val, N));
    pass_if_end(e, &w);
    LLVMBuildRetVoid(e->B);
    return RJ_OK;
  }
  LLVMValueRef ws = pass_global_array(e, acc_ty, v->outputs * p->S, AS_GLOBAL, "rj_ws_part");
  LLVMValueRef cnt = pass_global_array(e, i32, v->outputs, AS_GLOBAL, "rj_ws_count");
  LLVMValueRef cntp = pass_gep(e, i32, cnt, out);
  pass_if_begin(e, &w, t0);
  LLVMBuildStore(e->B, val, pass_gep(e, acc_ty, ws, bid));
  pass_if_end(e, &w);
  pass_if l;
  pass_if_begin(e, &l, tns_last_cta(e, cntp, tid, S));
  LLVMValueRef a = tns_acc_as_state(e, t, acc[0]);
  fold_partials(e, t, LLVMBuildAdd(e->B, LLVMBuildMul(e->B, out, S, ""), tid64, ""), ws, p, tid, a);
  val = tns_cta_reduce(e, t, LLVMBuildLoad2(e->B, acc_ty, a, ""), tid, p->T);
  pass_if w2;
  pass_if_begin(e, &w2, t0);
  tns_store(e, t, dst, out, tns_result(e, t, val, N));
  LLVMBuildStore(e->B, pass_i32(e, 0), cntp);
  pass_if_end(e, &w2);
  pass_if_end(e, &l);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

/* W > 1 outputs of a lane group, R vectors each (their whole rows): every load issued, then the
 * folds (a vector past the row's end, only in the last block: not folded). */
static void fold_rows_vec(pass_emit *e, const rj_tensor *t, int64_t N, LLVMValueRef src,
                          const LLVMValueRef *base, LLVMValueRef at, int W, int G, int R,
                          LLVMValueRef *acc) {
  int64_t step = (int64_t)VEC_N * G;
  LLVMValueRef x[16], ok[16];
  for (int k = 0; k < W * R; k++) {
    int m = k % R;
    LLVMValueRef off = LLVMBuildAdd(e->B, at, tns_i64(e, step * m), "");
    ok[k] = NULL;
    if (step * (m + 1) > N) {
      ok[k] = LLVMBuildICmp(e->B, LLVMIntSLT, off, tns_i64(e, N), "");
      off = LLVMBuildSelect(e->B, ok[k], off, tns_i64(e, 0), "");
    }
    x[k] = tns_vload(e, t, VEC_N, src, LLVMBuildAdd(e->B, base[k / R], off, ""));
  }
  for (int k = 0; k < W * R; k++) {
    pass_if in;
    if (ok[k]) pass_if_begin(e, &in, ok[k]);
    tns_vfold(e, t, x[k], acc[k / R]);
    if (ok[k]) pass_if_end(e, &in);
  }
}

/* The butterfly of the G lanes' values, lane 0 storing the output (the plain lanes' end). */
static void lanes_out(pass_emit *e, const rj_tensor *t, const ir_tview *v, LLVMValueRef dst,
                      LLVMValueRef val, LLVMValueRef out, LLVMValueRef valid, LLVMValueRef lane,
                      int G) {
  int masks[5], nm = 0;
  for (int m = G / 2; m >= 1; m /= 2)
    masks[nm++] = m;
  val = tns_bfly_tree(e, t, val, pass_i32(e, -1), masks, nm, G);
  tns_store_lane0(e, t, dst, out, tns_result(e, t, val, tns_i64(e, v->reduce_len)), valid, lane);
}

/* Output r of the group's W: its index, whether it exists and its element 0's offset. */
static LLVMValueRef lanes_output(pass_emit *e, const ir_tview *v, LLVMValueRef grp, int W,
                                 LLVMValueRef r, LLVMValueRef *valid, LLVMValueRef *base) {
  LLVMValueRef out = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, grp, tns_i64(e, W), ""), r, "out");
  *valid = LLVMBuildICmp(e->B, LLVMIntULT, out, tns_i64(e, v->outputs), "");
  *base = tns_fused_offset(e, v, false, LLVMBuildSelect(e->B, *valid, out, tns_i64(e, 0), ""));
  return out;
}

/* Invariant lanes (G = 32) with vector loads where src is aligned: W outputs per lane group; else
 * each output as the plain invariant lanes fold it (the same bits). */
static rj_status lanes_vec_kernel(pass_emit *e, const rj_tensor *t, const ir_tview *v,
                                  const generic_plan *p) {
  int G = p->G, T = p->T, W = p->W;
  LLVMValueRef src, dst;
  tns_begin(e, &src, &dst, 0, NULL);
  tns_launch_bounds(e, T, p->minctas);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C), ty = tns_acc_type(e, t);
  LLVMValueRef tid = pass_tid_x(e), gi = LLVMBuildUDiv(e->B, tid, pass_i32(e, G), "");
  LLVMValueRef grp = LLVMBuildZExt(
      e->B, LLVMBuildAdd(e->B, LLVMBuildMul(e->B, tns_ctaid(e), pass_i32(e, T / G), ""), gi, ""),
      i64, "");
  LLVMValueRef lane32 = LLVMBuildURem(e->B, tid, pass_i32(e, G), "");
  LLVMValueRef lane = LLVMBuildZExt(e->B, lane32, i64, ""), N = tns_i64(e, v->reduce_len);
  LLVMValueRef out[8], valid[8], base[8], acc[8], sacc[GEN_U];
  for (int r = 0; r < W; r++)
    out[r] = lanes_output(e, v, grp, W, tns_i64(e, r), &valid[r], &base[r]);
  LLVMValueRef al = vec_aligned(e, t, src);
  pass_if w;
  pass_if_begin(e, &w, al);
  LLVMValueRef xs = pass_global_array(e, ty, (int64_t)VEC_N * T, AS_SHARED, "rj_chains");
  xs = pass_gep(e, ty, xs, LLVMBuildMul(e->B, gi, pass_i32(e, VEC_N * G), ""));
  LLVMValueRef at = LLVMBuildMul(e->B, lane, tns_i64(e, VEC_N), "");
  for (int r = 0; r < W; r++)
    acc[r] = tns_vacc(e, t, VEC_N);
  if (W == 1)
    fold_vec(e, t, src, base[0], at, LLVMBuildSelect(e->B, valid[0], N, tns_i64(e, 0), ""), G, p->R,
             acc[0]);
  else
    fold_rows_vec(e, t, v->reduce_len, src, base, at, W, G, p->R, acc);
  for (int r = 0; r < W; r++)
    lanes_out(e, t, v, dst, vec_exchange(e, t, xs, lane32, G, acc[r], false), out[r], valid[r],
              lane, G);
  pass_if_end(e, &w);
  pass_if_begin(e, &w, LLVMBuildNot(e->B, al, ""));
  pass_loop l;
  pass_loop_begin(e, &l, tns_i64(e, 0), tns_i64(e, W), tns_i64(e, 1));
  LLVMValueRef ok, b, o = lanes_output(e, v, grp, W, l.i, &ok, &b);
  tns_acc_init(e, t, sacc, GEN_U);
  fold_range(e, t, v, src, b, tns_i64(e, 0), LLVMBuildSelect(e->B, ok, N, tns_i64(e, 0), ""),
             v->reduce_len, lane, G, sacc);
  lanes_out(e, t, v, dst, tns_acc_total(e, t, sacc, GEN_U), o, ok, lane, G);
  pass_loop_end(e, &l);
  pass_if_end(e, &w);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

/* any view; invariant segments within the workspace bound */
static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  const char *no = tns_accepts_any_view(r, tg, buf, n);
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  if (no || !r->u.tensor.invariant || v.reduce_len <= TNS_INV_LANES_MAX) return no;
  int64_t chunk, S = tns_inv_segments(v.reduce_len, &chunk);
  if (v.outputs * S <= INV_PARTS) return NULL;
  snprintf(buf, n, "invariant: %lld outputs of %lld segments exceed %lld partials",
           (long long)v.outputs, (long long)S, (long long)INV_PARTS);
  return buf;
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  const rj_tensor *t = &r->u.tensor;
  ir_tview v;
  ir_tensor_view(t, &v);
  generic_plan p;
  memcpy(&p, e->plan->priv.bytes, sizeof p);
  if (p.S > 0) return segments_kernel(e, t, &v, &p);
  if (p.V) return lanes_vec_kernel(e, t, &v, &p);
  int G = p.G, T = p.T;
  LLVMValueRef src, dst;
  tns_begin(e, &src, &dst, 0, NULL);
  tns_launch_bounds(e, T, 4);
  LLVMTypeRef ty = pass_type(e, t->dtype), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef tid = pass_tid_x(e), bid = tns_ctaid(e);
  LLVMValueRef grp = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, bid, pass_i32(e, T / G), ""),
                                  LLVMBuildUDiv(e->B, tid, pass_i32(e, G), ""), "");
  LLVMValueRef out = LLVMBuildZExt(e->B, grp, i64, "out");
  LLVMValueRef lane = LLVMBuildZExt(e->B, LLVMBuildURem(e->B, tid, pass_i32(e, G), ""), i64, "");
  LLVMValueRef valid = LLVMBuildICmp(e->B, LLVMIntULT, out, tns_i64(e, v.outputs), "");
  LLVMValueRef base =
      tns_fused_offset(e, &v, false, LLVMBuildSelect(e->B, valid, out, tns_i64(e, 0), ""));
  LLVMValueRef acc[GEN_U];
  tns_acc_init(e, t, acc, GEN_U);
  pass_loop l;
  LLVMValueRef len = LLVMBuildSelect(e->B, valid, tns_i64(e, v.reduce_len), tns_i64(e, 0), "");
  if (t->invariant) /* the same tree, the offset without a division where it can */
    fold_range(e, t, &v, src, base, tns_i64(e, 0), len, v.reduce_len, lane, G, acc);
  else
    pass_loop_begin(e, &l, lane, len, tns_i64(e, (int64_t)G * GEN_U));
  for (int u = 0; !t->invariant && u < GEN_U; u++) {
    LLVMValueRef ri = LLVMBuildAdd(e->B, l.i, tns_i64(e, (int64_t)u * G), "");
    pass_if in;
    pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntSLT, ri, len, ""));
    LLVMValueRef off = LLVMBuildAdd(e->B, base, tns_fused_offset(e, &v, true, ri), "");
    tns_fold_elem(e, t, acc[u], tns_load(e, t, pass_gep(e, ty, src, off)),
                  tns_elem_idx(e, t, NULL, ri), NULL);
    pass_if_end(e, &in);
  }
  if (!t->invariant) pass_loop_end(e, &l);
  LLVMValueRef val = tns_acc_total(e, t, acc, GEN_U);
  int masks[5], nm = 0;
  for (int m = G / 2; m >= 1; m /= 2)
    masks[nm++] = m;
  val = tns_bfly_tree(e, t, val, pass_i32(e, -1), masks, nm, G);
  tns_store_lane0(e, t, dst, out, tns_result(e, t, val, tns_i64(e, v.reduce_len)), valid, lane);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_tensor_generic = {
    .name = "tensor_generic",
    .prio = 5,
    .kind = RJ_KIND_TENSOR,
    .summary = "any strided view: lanes per output, index math with constant divisors (untuned)",
    .ops = PASS_OPS_SCALAR | ST_OPS | PASS_OP(RJ_OP_CUSTOM),
    .invariant = true,
    .accepts = accepts,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
