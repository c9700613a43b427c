/* tensor_rows: reductions of one unit-stride dim — 1-D full reductions and row reductions of M
 * rows of N elements (row stride RS, any; a transposed view reduced along its unit-stride dim).
 *
 *   short rows (N <= 2048 and enough rows, or, for state ops and 1- / 2-byte dtypes, N <= 16384
 *     and rows enough to fill the chip): G lanes per row (G = 1..32, about TNS_U vectors per
 *     lane), a butterfly tree of width G;
 *   one small row (1-D up to 2^16 f32): one CTA of up to 1024 threads, no hand-off;
 *   long rows: a CTA per row segment; a row is split into S segments when there are too few rows
 *     to fill the chip, and the last CTA of a row folds its S partials in a fixed order.
 * Every segment is read with 16-byte vector loads (8-byte for 1-byte dtypes: tns_vec_rc), TNS_U
 * in flight per thread: a scalar head up to the first vector boundary (the row's alignment is
 * only known at run time: views and caller pointers), the aligned vector body, a scalar tail. */
#include "../tensor.h"

#include <stdio.h>
#include <string.h>

typedef struct rows_plan {
  int64_t M, N, RS;
  int T, G, S;   /* threads per CTA; lanes per row (G == T: CTA mode); segments per row */
  int64_t chunk; /* elements per segment (CTA mode) */
  int vec;
  int U;        /* vectors in flight per lane per round (<= TNS_U) */
  int regs;     /* registers per thread the launch bounds allow */
  int64_t wave; /* split plans: the most CTAs (M * S <= wave; sizes runtime-size workspaces) */
  unsigned grid;
} rows_plan;

/* Plans (U = TNS_U vectors in flight per lane, 64 registers: 1024 threads per SM):
 *   lanes: G = pow2(ceil(nv / 4)) <= 32 lanes per row, T = 256, when rows are short (N <= 2048 and
 * at least 2 rows per SM), or, for state ops and dtypes narrower than 4 bytes, up to 16384
 *     elements with enough rows to fill 3/4 of the chip's threads in one wave (4096 x 4096: a warp
 *     per row, 4 rounds of 8 loads, one wave).  The other ops take a CTA per row there (measured
 *     on the H100, f32 4096 x 4096 .. 16384: sum, max, dot, norm, masked sum / mean 1.5 to 3.6 %
 *     faster with L2 flushed; bf16 sum 2 % faster flushed but 3 % slower rotated);
 *   one CTA: a single row of at most 1024 * 2U vectors (1-D up to 2^16 f32): T up to 1024, no
 *     cross-CTA hand-off;
 *   CTA per segment: T = pow2(nv / U) in [64, 512]; S segments per row, S = floor(one resident
 *     wave / rows) so the grid never spills into a partial second wave, and at least one full
 *     round (T * U vectors) per CTA (state ops: two); rows of >= 2^21 elements stream instead with
 *     U = 4, 32 registers and S = floor(4 waves / rows); those of a state op keep 64 registers
 *     and take U = 4 and up to 8 waves when there are elements enough (state_waves). */
/* Long rows of a state op: waves of CTAs such that a thread still folds about 128 elements or
 * more into its slots before its tree (measured on the H100, f32 1-D argmax / var, one wave of 8
 * vectors in flight against W waves of 4: 2^24 one wave 0.99 of sum, four 0.92; 2^28 one wave
 * 0.92, four 0.96, six 0.97, eight 0.99; docs/PERFORMANCE.md "State ops"): 1 .. 8. */
#define STATE_WAVES_MAX 8
static int state_waves(int sms, int64_t threads_sm, int64_t elements) {
  int64_t w = elements / ((int64_t)sms * threads_sm * 128);
  return w < 1 ? 1 : w > STATE_WAVES_MAX ? STATE_WAVES_MAX : (int)w;
}

static void make_plan(int sms, const rj_tensor *t, const ir_tview *v, rows_plan *p) {
  int rd = v->red[0] ? 0 : 1; /* the reduced unit-stride dim (inner, or outer in a view) */
  if (v->n == 1) rd = 0;
  p->N = v->size[rd];
  p->M = v->n == 2 ? v->size[1 - rd] : 1;
  p->RS = v->n == 2 ? v->stride[1 - rd] : 0;
  p->vec = tns_vec_rc(t->dtype);
  int64_t nv = (p->N + p->vec - 1) / p->vec;
  /* lanes per row: enough for about 4 vectors each (short rows then spread over twice the
   * threads of an 8-deep plan: measured faster for 65536 x 128, docs/PERFORMANCE.md), at most 32 */
  int64_t g = tns_pow2((nv + 3) / 4);
  if (g > 32) g = 32;
  p->U = TNS_U;
  p->regs = TNS_REGS;
  int64_t threads_sm = 65536 / TNS_REGS;
  bool lanes_long = st_is(t->op) || ir_dtype(t->dtype)->bytes < 4; /* the comment above */
  if ((p->N <= 2048 && p->M >= 2 * sms) ||
      (p->N <= 16384 && lanes_long && p->M * g >= (int64_t)sms * threads_sm * 3 / 4)) {
    p->T = 256;
    p->G = (int)g;
    p->S = 1;
    p->chunk = p->N;
    p->grid = (unsigned)((p->M + p->T / p->G - 1) / (p->T / p->G));
    return;
  }
  if (p->M == 1 && nv <= 1024 * 2 * TNS_U) {
    int64_t T = tns_pow2((nv + TNS_U - 1) / TNS_U);
    p->T = (int)(T < 32 ? 32 : T > 1024 ? 1024 : T);
    p->G = p->T;
    p->S = 1;
    p->chunk = p->N;
    p->grid = 1;
    return;
  }
  /* streams (rows of >= 2^21 elements: 1-D >= 8 MiB f32, 32 x 2^22): 32 registers (2048 threads
   * per SM), 4 vectors in flight each, 4 waves of CTAs (measured on the H100: 1-D 2^28 f32 2851 ->
   * 2976 GB/s; 2^20 .. 2^24 the same within noise; docs/PERFORMANCE.md, "Fourth pass") */
  int waves = 1;
  /* (not the state ops: their slots and combines want 50 to 60 registers, and at 32 ptxas spills
   * and recomputes; with 64 they keep U = 8 and one wave, a thread folding many rounds per tree,
   * or U = 4 and more waves on long inputs: state_waves) */
  if (p->N >= ((int64_t)1 << 21) && !st_is(t->op)) {
    p->U = 4;
    p->regs = 32;
    threads_sm = 65536 / p->regs;
    waves = 4;
    /* The same grid at 64 registers, twice the waves, for f32 into an f64 accumulator (norm,
     * acc_dtype f64), which spills at 32, and for fused inputs on rows of 2^26 or more
     * (measured on the H100, 1-D 2^28 f32: norm 2860 -> 2970 GB/s, sum's rate; dot, mse, masked
     * sum / mean 1 to 1.5 % faster; at 2^24 dot and masked sum 1 % slower; u8 into u64, which
     * does not spill, 9 % slower) */
    if ((t->dtype == RJ_F32 && tns_acc_dtype(t) == RJ_F64) ||
        (t->nothers && p->N >= ((int64_t)1 << 26)))
      p->regs = TNS_REGS;
  } else if (p->N >= ((int64_t)1 << 21)) {
    waves = state_waves(sms, threads_sm, p->M * p->N);
    if (waves > 1) p->U = 4;
  }
  int64_t T = tns_pow2(nv / p->U);
  p->T = (int)(T < 64 ? 64 : T > 512 ? 512 : T);
  p->G = p->T;
  int64_t wave = (int64_t)sms * (threads_sm / p->T) * waves; /* CTAs in `waves` resident waves */
  /* the bound a runtime-size kernel's workspace is sized by: its bucket (T, G, U, registers)
   * serves every size, so a state op's U = 4 bucket takes the most waves state_waves gives */
  p->wave = st_is(t->op) && p->U == 4 ? (int64_t)sms * (threads_sm / p->T) * STATE_WAVES_MAX : wave;
  int64_t S = p->M >= wave ? 1 : wave / p->M;
  /* one round of the CTA; state ops two, so that a thread folds at least two rounds into its
   * slots before the shuffle tree, whose combines cost them far more than sum's adds */
  int64_t per = (int64_t)p->T * p->vec * p->U * (st_is(t->op) ? 2 : 1);
  int64_t most = (p->N + per - 1) / per;
  if (S > most) S = most;
  if (S < 1) S = 1;
  if (S > 4096) S = 4096;
  int64_t ch = (p->N + S - 1) / S;
  ch = (ch + p->vec - 1) / p->vec * p->vec;
  p->chunk = ch;
  p->S = (int)((p->N + ch - 1) / ch);
  p->grid = (unsigned)(p->M * p->S);
}

/* The sizes the emitter reads: constants of the plan (constant kernels) or kernel parameters
 * (runtime-size kernels; S is the constant 1 outside the split bucket). */
typedef struct rows_sizes {
  LLVMValueRef M, N, RS, S, chunk;
} rows_sizes;

/* What the emitter reads: the plan, and whether the kernel takes its sizes as parameters. */
typedef struct rows_priv {
  rows_plan p;
  bool runtime;
} rows_priv;
_Static_assert(sizeof(rows_priv) <= PASS_PLAN_PRIV, "rows_priv fits the plan");

/* Runtime-size kernels: the bucket is the plan's mode, T and G; M, N, RS, S and chunk are
 * parameters.  Split plans keep M * S <= one wave (S = floor(wave / M)), the bound the
 * workspace of a split kernel is sized by; checked here all the same.  NULL, or why not. */
static const char *runtime_sizes(const rj_request *r, const rows_plan *p, pass_plan *out) {
  if (p->S > 1 && p->M * p->S > p->wave)
    return "the split plan exceeds the workspace bound (its waves of partials)";
  char bucket[64];
  snprintf(bucket, sizeof bucket, "rows %s T=%d G=%d U=%d r=%d",
           p->G < p->T ? "lanes"
           : p->S > 1  ? "split"
                       : "cta",
           p->T, p->G, p->U, p->regs);
  int64_t prm[5] = {p->M, p->N, p->RS, p->S, p->chunk};
  out->np = 5;
  memcpy(out->p, prm, sizeof prm);
  tns_plan_runtime(out, r, "tensor_rows", bucket, "M N RS S chunk");
  return NULL;
}

/* needs a request this variant accepts */
static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  const rj_tensor *t = &r->u.tensor;
  ir_tview v;
  ir_tensor_view(t, &v);
  rows_priv rp = {0};
  out->sms = env->sms(env);
  make_plan(tns_sms(out->sms), t, &v, &rp.p);
  tns_plan_geometry(out, rp.p.grid, (unsigned)rp.p.T);
  if (t->dynamic) {
    const char *no = runtime_sizes(r, &rp.p, out);
    if (no) tns_plan_constant(out, no);
    rp.runtime = !no;
  }
  memcpy(out->priv.bytes, &rp, sizeof rp);
  return RJ_OK;
}

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  (void)tg;
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  if (tns_classify(&v) != TNS_ROWS) {
    snprintf(buf, n,
             "the innermost canonical dim is not a reduced unit-stride dim with at most "
             "one kept dim outside it");
    return buf;
  }
  if (v.outputs * 8 > (int64_t)1 << 31) return "more than 2^28 rows";
  return NULL;
}

static void segment(pass_emit *e, const rj_tensor *t, const rows_plan *p, LLVMValueRef base,
                    LLVMValueRef len, LLVMValueRef lane, LLVMValueRef idx0, LLVMValueRef *acc) {
  tns_row_segment(e, t, p->vec, p->G, p->U, base, len, lane, idx0, acc);
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  const rj_tensor *t = &r->u.tensor;
  rows_priv rp;
  memcpy(&rp, e->plan->priv.bytes, sizeof rp);
  rows_plan p = rp.p;
  bool dyn = rp.runtime;
  LLVMValueRef src, dst, prm[TNS_NP];
  tns_begin(e, &src, &dst, e->plan->np, prm);
  rows_sizes z = {tns_i64(e, p.M), tns_i64(e, p.N), tns_i64(e, p.RS), tns_i64(e, p.S),
                  tns_i64(e, p.chunk)};
  if (dyn) z = (rows_sizes){prm[0], prm[1], prm[2], p.S > 1 ? prm[3] : tns_i64(e, 1), prm[4]};
  tns_launch_bounds(e, p.T, 65536 / (p.regs * p.T));
  LLVMTypeRef ty = pass_type(e, t->dtype), i64 = LLVMInt64TypeInContext(e->C);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), acc_ty = tns_acc_type(e, t);
  LLVMValueRef tid = pass_tid_x(e), bid = tns_ctaid(e);
  LLVMValueRef acc[64];
  int nacc = p.vec;
  tns_acc_init(e, t, acc, nacc);
  if (p.G < p.T) { /* G lanes per row */
    LLVMValueRef gpc = pass_i32(e, p.T / p.G);
    LLVMValueRef grp = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, bid, gpc, ""),
                                    LLVMBuildUDiv(e->B, tid, pass_i32(e, p.G), ""), "");
    LLVMValueRef row = LLVMBuildZExt(e->B, grp, i64, "row");
    LLVMValueRef lane =
        LLVMBuildZExt(e->B, LLVMBuildURem(e->B, tid, pass_i32(e, p.G), ""), i64, "lane");
    LLVMValueRef valid = LLVMBuildICmp(e->B, LLVMIntULT, row, z.M, "");
    LLVMValueRef rowc = LLVMBuildSelect(e->B, valid, row, tns_i64(e, 0), "");
    LLVMValueRef base = pass_gep(e, ty, src, LLVMBuildMul(e->B, rowc, z.RS, ""));
    LLVMValueRef len = LLVMBuildSelect(e->B, valid, z.N, tns_i64(e, 0), "");
    segment(e, t, &p, base, len, lane, NULL, acc);
    LLVMValueRef val = tns_acc_total(e, t, acc, nacc);
    int masks[5], nm = 0;
    for (int m = p.G / 2; m >= 1; m /= 2)
      masks[nm++] = m;
    val = tns_bfly_tree(e, t, val, pass_i32(e, -1), masks, nm, p.G);
    tns_store_lane0(e, t, dst, row, tns_result(e, t, val, z.N), valid, lane);
    LLVMBuildRetVoid(e->B);
    return RJ_OK;
  }
  /* a CTA per segment */
  LLVMValueRef bid64 = LLVMBuildZExt(e->B, bid, i64, "");
  LLVMValueRef row = LLVMBuildUDiv(e->B, bid64, z.S, "row");
  LLVMValueRef seg = LLVMBuildURem(e->B, bid64, z.S, "seg");
  LLVMValueRef start = LLVMBuildMul(e->B, seg, z.chunk, "");
  LLVMValueRef left = LLVMBuildSub(e->B, z.N, start, "");
  LLVMValueRef big = LLVMBuildICmp(e->B, LLVMIntSGT, left, z.chunk, "");
  LLVMValueRef len = LLVMBuildSelect(e->B, big, z.chunk, left, "len");
  LLVMValueRef off = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, row, z.RS, ""), start, "");
  LLVMValueRef tid64 = LLVMBuildZExt(e->B, tid, i64, "");
  segment(e, t, &p, pass_gep(e, ty, src, off), len, tid64, start, acc);
  LLVMValueRef val = tns_cta_reduce(e, t, tns_acc_total(e, t, acc, nacc), tid, p.T);
  LLVMValueRef t0 = LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), "");
  pass_if w;
  if (p.S == 1) {
    pass_if_begin(e, &w, t0);
    tns_store(e, t, dst, row, tns_result(e, t, val, z.N));
    pass_if_end(e, &w);
    LLVMBuildRetVoid(e->B);
    return RJ_OK;
  }
  /* workspace: M * S partials, M counters; a runtime-size kernel's, by the plan's CTA bound */
  int64_t wave = p.wave;
  LLVMValueRef ws = pass_global_array(e, acc_ty, dyn ? wave : p.M * p.S, AS_GLOBAL, "rj_ws_part");
  LLVMValueRef cnt = pass_global_array(e, i32, dyn ? wave : p.M, AS_GLOBAL, "rj_ws_count");
  LLVMValueRef cntp = pass_gep(e, i32, cnt, row);
  pass_if_begin(e, &w, t0);
  LLVMBuildStore(e->B, val, pass_gep(e, acc_ty, ws, bid64));
  pass_if_end(e, &w);
  LLVMValueRef last = tns_last_cta(e, cntp, tid, z.S);
  pass_if l;
  pass_if_begin(e, &l, last);
  LLVMValueRef a = tns_acc_as_state(e, t, acc[0]);
  LLVMBuildStore(e->B, tns_identity(e, t), a);
  pass_loop fl;
  pass_loop_begin(e, &fl, tid64, z.S, tns_i64(e, p.T));
  LLVMValueRef ix = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, row, z.S, ""), fl.i, "");
  LLVMValueRef part = tns_load_volatile(e, acc_ty, pass_gep(e, acc_ty, ws, ix));
  LLVMValueRef cur = LLVMBuildLoad2(e->B, acc_ty, a, "");
  LLVMBuildStore(e->B, tns_combine(e, t, cur, part), a);
  pass_loop_end(e, &fl);
  val = tns_cta_reduce(e, t, LLVMBuildLoad2(e->B, acc_ty, a, ""), tid, p.T);
  pass_if w2;
  pass_if_begin(e, &w2, t0);
  tns_store(e, t, dst, row, tns_result(e, t, val, z.N));
  LLVMBuildStore(e->B, pass_i32(e, 0), cntp);
  pass_if_end(e, &w2);
  pass_if_end(e, &l);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_tensor_rows = {
    .name = "tensor_rows",
    .prio = 30,
    .kind = RJ_KIND_TENSOR,
    .summary = "1-D and row reductions: lanes or a CTA per row, 16-byte loads (8 for 1-byte "
               "dtypes), split rows finish in one launch (last CTA folds, fixed order)",
    .ops = PASS_OPS_SCALAR | ST_OPS | PASS_OP(RJ_OP_CUSTOM),
    .invariant_why =
        "the number of rows and the SM count (lanes per row, CTA or split mode, segments per row) and the row's address (its scalar head)",
    .accepts = accepts,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
