/* tensor_segmented: requests with "segments" (docs/TENSOR.md "Segmented reductions").  S segments
 * of axis 0 given by offsets in device memory (S + 1 entries, read by the kernel: no host
 * synchronisation, no hint).  Each segment's fold is chosen on the device by its length alone:
 *   - 1-D src (or [N, 1]): CTA b takes batches b, b + grid, ... of B = min(32, ceil(S / grid))
 *     consecutive segments (cta_seq), in two phases:
 *     warp phase: warp w takes its CTA's batches w, w + 8, ... (lane l: segment w0 + l, w0 = the
 *       batch's first; the offsets load coalesced, one batch ahead).  A segment of
 *       at most SEG_LANE elements is folded by its lane in index order; one of at most gmax
 *       elements by a group of 8 lanes (group g: segments w0 + 8g .. w0 + 8g + 7), one of at
 *       most wmax by the whole warp
 *       (tns_row_segment: 16-byte vectors, then a butterfly), each group one after another over
 *       its set ballot bits; longer ones (at most SEG_CH) go to the CTA's list in shared memory;
 *     CTA phase: the CTA folds each listed segment with all its threads (tns_row_segment over 256
 *       lanes, tns_cta_reduce); when its warps found more than SEG_LIST, it scans its batches
 *       again, 256 segments at a time.  A CTA with none listed (the short segments) has no work.
 *       (Long segments in a run of consecutive ones fall to few CTAs: B of them to a CTA.)
 *     chunk phase (N > SEG_CH): longer segments in chunks of SEG_CH, a CTA each (below); each
 *       warp of a CTA searches one of its windows, so up to 8 windows cost one search's latency.
 *   - 2-D [N, C] (C > 1): a thread per (segment, column), rows in order into 4 slots.
 * Every fold order depends only on the segment's length (and, for the vector loads, its start
 * address modulo 16 bytes), never on the other segments: results are deterministic.  Under
 * "invariant": true (an op whose result depends on the order of its combines) every load is of
 * one element, lane l of a fold taking the segment's elements l, l + G, ... in index order, and
 * the 2-D CTA fold is not used: each segment's tree then depends on its length and the dtype
 * alone (docs/INVARIANCE.md), not on where it starts, on C or on the other segments.  Offsets are
 * clamped before any read (a = clamp(off[s], 0, N), b = clamp(off[s + 1], a, N)); the warp phase
 * ORs RJ_SEG_* bits into the status word (when not NULL) for a segment whose offsets were out of
 * order or range. */
#include "../tensor.h"

#include <stdio.h>
#include <string.h>

#define SEG_T 256    /* threads per CTA */
#define SEG_LANE 8   /* segments of at most this many elements: one lane, in index order */
#define SEG_ROUNDS 4 /* a warp takes segments of up to this many rounds of its loads */
#define SEG_U2 4     /* 2-D: slots per thread (row r into slot (r - a) mod 4) */
/* longer segments: chunks of this many elements, a CTA each (a power of 2) */
#define SEG_CH 65536
/* 2-D with at most SEG_C2 columns: segments of more than SEG_ROWS rows are folded by a CTA, T / C
 * rows at once (else a thread per column) */
#define SEG_C2 128
#define SEG_ROWS 256
#define SEG_LIST 256 /* CTA-phase segments a CTA lists (more: it scans its batches again) */
#define SEG_BATCH 32 /* 1-D: segments in a batch at most, a lane each of the warp that takes it */

typedef struct seg_plan {
  int T, vec, U; /* U: vectors in flight per lane (4 for states and 1-byte dtypes: registers) */
  bool inv;      /* invariant: one-element loads (vec 1), no 2-D CTA fold */
  int64_t gmax, wmax, N, C, S; /* a group of 8 lanes up to gmax elements, a warp up to wmax */
  int64_t clo, chi;            /* the CTA phase takes segments of clo < len <= chi */
  int64_t B;                   /* a CTA's batches: B consecutive segments (cta_seq) */
} seg_plan;
_Static_assert(sizeof(seg_plan) <= PASS_PLAN_PRIV, "seg_plan fits the plan");
_Static_assert(SEG_LIST >= SEG_T / 32 * SEG_BATCH,
               "the CTA-phase segments of one batch per warp fit the list");

/* 1-D: the segments of its batches a CTA's warps found longer than wmax (at most chi), for its
 * CTA phase: count (shared i32) and the first SEG_LIST of them (shared i32s, in no particular
 * order: each is folded alone). */
typedef struct seg_list {
  LLVMValueRef count, list;
} seg_list;

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  (void)tg;
  (void)buf;
  (void)n;
  return r->u.tensor.segments ? NULL : "takes requests with \"segments\" only";
}

static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  const rj_tensor *t = &r->u.tensor;
  seg_plan p = {.T = SEG_T, .vec = tns_vec(t->dtype), .N = t->shape[0], .S = t->segments};
  p.inv = pass_fixed_tree(r);
  if (p.inv) p.vec = 1;
  p.C = t->ndim == 2 ? t->shape[1] : 1;
  p.U = st_is(t->op) || ir_dtype(t->dtype)->bytes == 1 ? 4 : TNS_U;
  p.gmax = (int64_t)8 * p.vec * p.U;
  p.wmax = (int64_t)32 * p.vec * p.U * SEG_ROUNDS;
  p.clo = p.C > 1 ? SEG_ROWS : p.wmax;
  bool cta2 = p.C > 1 && p.C <= SEG_C2 && !p.inv; /* 2-D: long segments to the CTA phase */
  p.chi = p.C > 1 ? INT64_MAX : SEG_CH;
  out->sms = env->sms(env);
  int64_t wave = tns_wave(tns_sms(out->sms), SEG_T);
  int64_t nw = (p.N + SEG_CH - 1) / SEG_CH;        /* the chunk phase's windows */
  int64_t pairs = (p.S * p.C + SEG_T - 1) / SEG_T; /* 2-D: threads per (segment, column) */
  int64_t want = p.C > 1 ? (cta2 && p.S > pairs ? p.S : pairs) : p.S > nw ? p.S : nw;
  int64_t grid = p.C == 0 ? 0 : want < 1 ? 1 : want > wave ? wave : want; /* 0: no outputs */
  tns_plan_geometry(out, (unsigned)grid, SEG_T);
  int64_t per_cta = grid ? (p.S + grid - 1) / grid : 1; /* 1-D: batches of B <= SEG_BATCH */
  p.B = p.C > 1 ? 1 : per_cta < SEG_BATCH ? per_cta : SEG_BATCH;
  if (p.C > 1)
    snprintf(out->note, sizeof out->note,
             " (segments: %lld of [N, %lld] rows; a thread per segment and column%s; grid %lld x "
             "%d)",
             (long long)p.S, (long long)p.C,
             cta2 ? ", a CTA for segments of more than 256 rows" : "", (long long)grid, SEG_T);
  else
    snprintf(out->note, sizeof out->note,
             " (segments: %lld over %lld elements; a lane up to %d elements, 8 lanes up to %lld, "
             "a warp up to %lld, "
             "a CTA up to %d, longer ones in chunks of %d, a CTA each%s; grid %lld x %d)",
             (long long)p.S, (long long)p.N, SEG_LANE, (long long)p.gmax, (long long)p.wmax, SEG_CH,
             SEG_CH, p.inv ? "; invariant: element loads in index order" : "", (long long)grid,
             SEG_T);
  memcpy(out->priv.bytes, &p, sizeof p);
  return RJ_OK;
}

/* offsets[i], in the offsets' dtype */
static LLVMValueRef offset_raw(pass_emit *e, const rj_tensor *t, LLVMValueRef i) {
  LLVMTypeRef ot = pass_type(e, t->segments_dtype);
  return LLVMBuildLoad2(e->B, ot, pass_gep(e, ot, e->seg_offsets, i), "");
}

/* An offset x of the offsets' dtype as i64 */
static LLVMValueRef offset_i64(pass_emit *e, const rj_tensor *t, LLVMValueRef x) {
  return t->segments_dtype == RJ_I64 ? x : LLVMBuildSExt(e->B, x, LLVMInt64TypeInContext(e->C), "");
}

/* offsets[i] as i64 */
static LLVMValueRef offset_at(pass_emit *e, const rj_tensor *t, LLVMValueRef i) {
  return offset_i64(e, t, offset_raw(e, t, i));
}

/* The CTA's segments, batch after batch: CTA b takes batches b, b + grid, ... of B consecutive
 * segments (its warp phase and its CTA phase alike); its i-th segment, i: i64. */
static LLVMValueRef cta_seq(pass_emit *e, const seg_plan *p, LLVMValueRef i) {
  LLVMValueRef bid = LLVMBuildZExt(e->B, tns_ctaid(e), LLVMInt64TypeInContext(e->C), "");
  LLVMValueRef B = tns_i64(e, p->B), q = LLVMBuildUDiv(e->B, i, B, "");
  q = LLVMBuildAdd(e->B, bid, LLVMBuildMul(e->B, q, tns_i64(e, e->plan->grid[0]), ""), "");
  return LLVMBuildAdd(e->B, LLVMBuildMul(e->B, q, B, ""), LLVMBuildURem(e->B, i, B, ""), "");
}

/* The positions i each CTA takes (ceil(batches / grid) * B; segments cta_seq(i) at or past S are
 * skipped). */
static int64_t cta_seq_len(const pass_emit *e, const seg_plan *p) {
  int64_t batches = (p->S + p->B - 1) / p->B, G = e->plan->grid[0];
  return (batches + G - 1) / G * p->B;
}

/* Is a segment of len elements (i64) one the CTA phase folds: longer than clo, at most chi? */
static LLVMValueRef cta_sized(pass_emit *e, const seg_plan *p, LLVMValueRef len) {
  return LLVMBuildAnd(e->B, LLVMBuildICmp(e->B, LLVMIntSGT, len, tns_i64(e, p->clo), ""),
                      LLVMBuildICmp(e->B, LLVMIntSLE, len, tns_i64(e, p->chi), ""), "");
}

static LLVMValueRef bit_if(pass_emit *e, LLVMValueRef c, unsigned bit) {
  return LLVMBuildSelect(e->B, c, pass_i32(e, bit), pass_i32(e, 0), "");
}

/* A segment's offsets as read, *a0 = offsets[s], *b0 = offsets[s + 1] */
static void seg_offsets(pass_emit *e, const rj_tensor *t, LLVMValueRef s, LLVMValueRef *a0,
                        LLVMValueRef *b0) {
  *a0 = offset_at(e, t, s);
  *b0 = offset_at(e, t, LLVMBuildAdd(e->B, s, tns_i64(e, 1), ""));
}

/* The clamped start *a and length *len of the segment whose offsets read a0, b0 (seg_offsets);
 * with report (i1; NULL: none), the RJ_SEG_* bits of those offsets ORed into the status word when
 * it is not NULL. */
static void seg_clamp(pass_emit *e, int64_t N, LLVMValueRef a0, LLVMValueRef b0,
                      LLVMValueRef report, LLVMValueRef *a, LLVMValueRef *len) {
  LLVMValueRef zero = tns_i64(e, 0), n = tns_i64(e, N);
  LLVMValueRef lo =
      LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, a0, zero, ""), zero, a0, "");
  lo = tns_min64(e, lo, n);
  LLVMValueRef hi = LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, b0, lo, ""), lo, b0, "");
  hi = tns_min64(e, hi, n);
  *a = lo;
  *len = LLVMBuildSub(e->B, hi, lo, "len");
  if (!report) return;
  LLVMValueRef neg = LLVMBuildOr(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, a0, zero, ""),
                                 LLVMBuildICmp(e->B, LLVMIntSLT, b0, zero, ""), "");
  LLVMValueRef past = LLVMBuildOr(e->B, LLVMBuildICmp(e->B, LLVMIntSGT, a0, n, ""),
                                  LLVMBuildICmp(e->B, LLVMIntSGT, b0, n, ""), "");
  LLVMValueRef bits =
      LLVMBuildOr(e->B, bit_if(e, neg, RJ_SEG_NEGATIVE), bit_if(e, past, RJ_SEG_PAST_END), "");
  bits = LLVMBuildOr(e->B, bits,
                     bit_if(e, LLVMBuildICmp(e->B, LLVMIntSLT, b0, a0, ""), RJ_SEG_DECREASING), "");
  LLVMValueRef bad = LLVMBuildICmp(e->B, LLVMIntNE, bits, pass_i32(e, 0), "");
  LLVMValueRef has = LLVMBuildIsNotNull(e->B, e->seg_status, "");
  pass_if f;
  pass_if_begin(e, &f, LLVMBuildAnd(e->B, LLVMBuildAnd(e->B, report, bad, ""), has, ""));
  unsigned gpu = LLVMGetSyncScopeID(e->C, "device", 6);
  LLVMBuildAtomicRMWSyncScope(e->B, LLVMAtomicRMWBinOpOr, e->seg_status, bits,
                              LLVMAtomicOrderingMonotonic, gpu);
  pass_if_end(e, &f);
}

/* Segment s's clamped start and length (seg_offsets, then seg_clamp). */
static void seg_range(pass_emit *e, const rj_tensor *t, int64_t N, LLVMValueRef s,
                      LLVMValueRef report, LLVMValueRef *a, LLVMValueRef *len) {
  LLVMValueRef a0, b0;
  seg_offsets(e, t, s, &a0, &b0);
  seg_clamp(e, N, a0, b0, report, a, len);
}

/* The stored value of a segment of len elements folded into v: tns_result's, and for an empty
 * segment's max / min of a dtype narrower than its 64-bit accumulator (i8 .. u16, bool) the
 * dtype's own least / greatest value (the accumulator's identity would not survive the store's
 * truncation). */
static LLVMValueRef seg_result(pass_emit *e, const rj_tensor *t, LLVMValueRef v, LLVMValueRef len) {
  v = tns_result(e, t, v, len);
  const ir_dtype_info *d = ir_dtype(t->dtype);
  if ((t->op != RJ_OP_MAX && t->op != RJ_OP_MIN) || d->is_float || d->bytes >= 4) return v;
  bool mx = t->op == RJ_OP_MAX;
  int bits = d->bytes * 8;
  int64_t x = t->dtype == RJ_BOOL ? (mx ? 0 : 1)
              : d->is_signed ? (mx ? -((int64_t)1 << (bits - 1)) : ((int64_t)1 << (bits - 1)) - 1)
                             : (mx ? 0 : ((int64_t)1 << bits) - 1);
  LLVMValueRef none = LLVMBuildICmp(e->B, LLVMIntEQ, len, tns_i64(e, 0), "");
  return LLVMBuildSelect(e->B, none, LLVMConstInt(LLVMTypeOf(v), (unsigned long long)x, 1), v, "");
}

/* A segment of at most SEG_LANE elements folded by one thread in index order (loads first, then
 * the folds); stored at dst[s] where `mine`. */
static void lane_fold(pass_emit *e, const rj_tensor *t, LLVMValueRef src, LLVMValueRef dst,
                      LLVMValueRef s, LLVMValueRef a, LLVMValueRef len, LLVMValueRef mine) {
  LLVMTypeRef ty = pass_type(e, t->dtype);
  LLVMValueRef acc;
  tns_acc_init(e, t, &acc, 1);
  pass_if any;
  pass_if_begin(
      e, &any,
      LLVMBuildAnd(e->B, mine, LLVMBuildICmp(e->B, LLVMIntSGT, len, tns_i64(e, 0), ""), ""));
  LLVMValueRef base = pass_gep(e, ty, src, a), last = LLVMBuildSub(e->B, len, tns_i64(e, 1), "");
  LLVMValueRef x[SEG_LANE], ok[SEG_LANE];
  for (int i = 0; i < SEG_LANE; i++) {
    ok[i] = LLVMBuildICmp(e->B, LLVMIntSLT, tns_i64(e, i), len, "");
    x[i] = tns_load(e, t, pass_gep(e, ty, base, tns_min64(e, tns_i64(e, i), last)));
  }
  for (int i = 0; i < SEG_LANE; i++)
    tns_fold_elem(e, t, acc, x[i], tns_elem_idx(e, t, NULL, tns_i64(e, i)), i ? ok[i] : NULL);
  pass_if_end(e, &any);
  pass_if st;
  pass_if_begin(e, &st, mine);
  tns_store(e, t, dst, s, seg_result(e, t, tns_acc_total(e, t, &acc, 1), len));
  pass_if_end(e, &st);
}

/* Elements a .. a + len - 1 folded by G lanes (lane: i64) into one value, in lane 0; idx0: the
 * index of element a in its segment (NULL: 0), for argmax / argmin. */
static LLVMValueRef group_fold(pass_emit *e, const rj_tensor *t, const seg_plan *p,
                               LLVMValueRef src, LLVMValueRef a, LLVMValueRef len, int G,
                               LLVMValueRef lane, LLVMValueRef idx0) {
  LLVMValueRef acc[16];
  tns_acc_init(e, t, acc, p->vec);
  tns_row_segment(e, t, p->vec, G, p->U, pass_gep(e, pass_type(e, t->dtype), src, a), len, lane,
                  idx0, acc);
  return tns_acc_total(e, t, acc, p->vec);
}

/* The warp phase's segments of one batch folded by groups of G lanes (G = 8: four groups, group g
 * taking segments b0 + 8g .. b0 + 8g + 7; G = 32: the warp): mask, a ballot, has bit l for
 * segment b0 + l; each group folds its segments in turn (its own shuffles: member mask its
 * lanes). */
static void group_batch(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef src,
                        LLVMValueRef dst, LLVMValueRef b0, LLVMValueRef mask, LLVMValueRef lane,
                        int G) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef g = LLVMBuildTrunc(e->B, LLVMBuildUDiv(e->B, lane, tns_i64(e, G), ""), i32, "");
  LLVMValueRef sh = LLVMBuildMul(e->B, g, pass_i32(e, G), "");
  LLVMValueRef ones = pass_i32(e, G == 32 ? -1 : (1 << G) - 1);
  LLVMValueRef mm = LLVMBuildShl(e->B, ones, sh, "");
  LLVMValueRef mine = LLVMBuildAnd(e->B, LLVMBuildLShr(e->B, mask, sh, ""), ones, "");
  LLVMValueRef gl = LLVMBuildURem(e->B, lane, tns_i64(e, G), "");
  LLVMValueRef m = pass_entry_alloca(e, i32, "mask");
  LLVMBuildStore(e->B, mine, m);
  LLVMValueRef cnt = pass_call(e, "llvm.ctpop", &i32, 1, &mine, 1);
  pass_loop k;
  pass_loop_begin(e, &k, pass_i32(e, 0), cnt, pass_i32(e, 1));
  LLVMValueRef cur = LLVMBuildLoad2(e->B, i32, m, "");
  LLVMValueRef zu[2] = {cur, LLVMConstInt(LLVMInt1TypeInContext(e->C), 1, 0)};
  LLVMValueRef j = LLVMBuildAdd(e->B, pass_call(e, "llvm.cttz", &i32, 1, zu, 2), sh, "");
  LLVMBuildStore(e->B, LLVMBuildAnd(e->B, cur, LLVMBuildSub(e->B, cur, pass_i32(e, 1), ""), ""), m);
  LLVMValueRef s = LLVMBuildAdd(e->B, b0, LLVMBuildZExt(e->B, j, i64, ""), "");
  LLVMValueRef a, len;
  seg_range(e, t, p->N, s, NULL, &a, &len);
  LLVMValueRef v = group_fold(e, t, p, src, a, len, G, gl, NULL);
  int masks[5], nm = 0;
  for (int x = G / 2; x >= 1; x /= 2)
    masks[nm++] = x;
  v = tns_bfly_tree(e, t, v, mm, masks, nm, G);
  tns_store_lane0(e, t, dst, s, seg_result(e, t, v, len),
                  LLVMConstInt(LLVMInt1TypeInContext(e->C), 1, 0), gl);
  pass_loop_end(e, &k);
}

/* The offsets of the warp phase's segment s (segment 0's where not in) read into next[0 .. 1]
 * (allocas of the offsets' dtype): the loop reads a batch's offsets one batch ahead, so a warp's
 * loads of a batch's elements and of the next batch's offsets are in flight together. */
static void prefetch_offsets(pass_emit *e, const rj_tensor *t, LLVMValueRef s, LLVMValueRef in,
                             LLVMValueRef *next) {
  s = LLVMBuildSelect(e->B, in, s, tns_i64(e, 0), "");
  LLVMBuildStore(e->B, offset_raw(e, t, s), next[0]);
  LLVMBuildStore(e->B, offset_raw(e, t, LLVMBuildAdd(e->B, s, tns_i64(e, 1), "")), next[1]);
}

/* The offset prefetch_offsets stored at `at` (next[0] or next[1]) as i64 */
static LLVMValueRef prefetched(pass_emit *e, const rj_tensor *t, LLVMValueRef at) {
  return offset_i64(e, t, LLVMBuildLoad2(e->B, pass_type(e, t->segments_dtype), at, ""));
}

/* Segment s added to the CTA's list when cond; past SEG_LIST entries only counted. */
static void list_add(pass_emit *e, const seg_list *li, LLVMValueRef s, LLVMValueRef cond) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C);
  pass_if f;
  pass_if_begin(e, &f, cond);
  unsigned cta = LLVMGetSyncScopeID(e->C, "block", 5);
  LLVMValueRef k = LLVMBuildAtomicRMWSyncScope(e->B, LLVMAtomicRMWBinOpAdd, li->count,
                                               pass_i32(e, 1), LLVMAtomicOrderingMonotonic, cta);
  pass_if in;
  pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntULT, k, pass_i32(e, SEG_LIST), ""));
  LLVMBuildStore(e->B, LLVMBuildTrunc(e->B, s, i32, ""), pass_gep(e, i32, li->list, k));
  pass_if_end(e, &in);
  pass_if_end(e, &f);
}

/* Is s, at position pos of its batch, one of the request's segments (i1)? */
static LLVMValueRef in_batch(pass_emit *e, const seg_plan *p, LLVMValueRef pos, LLVMValueRef s) {
  return LLVMBuildAnd(e->B, LLVMBuildICmp(e->B, LLVMIntULT, pos, tns_i64(e, p->B), ""),
                      LLVMBuildICmp(e->B, LLVMIntSLT, s, tns_i64(e, p->S), ""), "");
}

/* The warp phase over the CTA's batches (cta_seq, B <= 32 segments each): warp w takes batches w,
 * w + 8, ... of them; segments the CTA phase folds (cta_sized) go to the CTA's list. */
static void warp_phase(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef src,
                       LLVMValueRef dst, const seg_list *li) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef tid = LLVMBuildZExt(e->B, pass_tid_x(e), i64, ""), B = tns_i64(e, p->B);
  LLVMValueRef lane = LLVMBuildAnd(e->B, tid, tns_i64(e, 31), ""),
               w = LLVMBuildLShr(e->B, tid, tns_i64(e, 5), "");
  LLVMTypeRef ot = pass_type(e, t->segments_dtype);
  int64_t G = e->plan->grid[0], step = G * (p->T / 32); /* batches */
  LLVMValueRef next[2] = {pass_entry_alloca(e, ot, "seg_a0"), pass_entry_alloca(e, ot, "seg_b0")};
  LLVMValueRef q0 = LLVMBuildAdd(e->B, LLVMBuildZExt(e->B, tns_ctaid(e), i64, ""),
                                 LLVMBuildMul(e->B, w, tns_i64(e, G), ""), "");
  LLVMValueRef s0 = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, q0, B, ""), lane, "");
  prefetch_offsets(e, t, s0, in_batch(e, p, lane, s0), next);
  pass_loop l;
  pass_loop_begin(e, &l, q0, tns_i64(e, (p->S + p->B - 1) / p->B), tns_i64(e, step));
  LLVMValueRef b0 = LLVMBuildMul(e->B, l.i, B, ""); /* the batch's first segment: lane 0's */
  LLVMValueRef s = LLVMBuildAdd(e->B, b0, lane, "s"), ok = in_batch(e, p, lane, s);
  LLVMValueRef a, len, a0 = prefetched(e, t, next[0]), z0 = prefetched(e, t, next[1]);
  LLVMValueRef sn = LLVMBuildAdd(e->B, s, tns_i64(e, step * p->B), "");
  prefetch_offsets(e, t, sn, in_batch(e, p, lane, sn), next);
  seg_clamp(e, p->N, a0, z0, ok, &a, &len);
  list_add(e, li, s, LLVMBuildAnd(e->B, ok, cta_sized(e, p, len), ""));
  LLVMValueRef small = LLVMBuildICmp(e->B, LLVMIntSLE, len, tns_i64(e, SEG_LANE), "");
  lane_fold(e, t, src, dst, s, a, len, LLVMBuildAnd(e->B, ok, small, ""));
  LLVMValueRef mid = LLVMBuildAnd(e->B, ok, LLVMBuildNot(e->B, small, ""), "");
  LLVMValueRef eight = LLVMBuildICmp(e->B, LLVMIntSLE, len, tns_i64(e, p->gmax), "");
  LLVMValueRef bv[2] = {pass_i32(e, -1), LLVMBuildAnd(e->B, mid, eight, "")};
  group_batch(e, t, p, src, dst, b0, pass_call(e, "llvm.nvvm.vote.ballot.sync", NULL, 0, bv, 2),
              lane, 8);
  LLVMValueRef wide = LLVMBuildICmp(e->B, LLVMIntSGT, len, tns_i64(e, p->wmax), "");
  bv[1] = LLVMBuildAnd(
      e->B, mid,
      LLVMBuildAnd(e->B, LLVMBuildNot(e->B, eight, ""), LLVMBuildNot(e->B, wide, ""), ""), "");
  group_batch(e, t, p, src, dst, b0, pass_call(e, "llvm.nvvm.vote.ballot.sync", NULL, 0, bv, 2),
              lane, 32);
  pass_loop_end(e, &l);
}

/* 2-D, C <= SEG_C2: segment s (rows a .. a + len - 1) by the CTA, R = T / C rows at once (thread
 * r * C + c: column c, rows r, r + R, ... into SEG_U2 slots in turn, coalesced over the flat
 * rows), then per column the R partials in order from shared memory; dst[s * C + c]. */
static void rows_fold(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef src,
                      LLVMValueRef dst, LLVMValueRef s, LLVMValueRef a, LLVMValueRef len) {
  LLVMTypeRef ty = pass_type(e, t->dtype), i64 = LLVMInt64TypeInContext(e->C);
  LLVMTypeRef acc_ty = tns_acc_type(e, t);
  int64_t C = p->C, R = p->T / C;
  LLVMValueRef tid = pass_tid_x(e), tid64 = LLVMBuildZExt(e->B, tid, i64, "");
  LLVMValueRef col = LLVMBuildURem(e->B, tid64, tns_i64(e, C), "");
  LLVMValueRef r0 = LLVMBuildUDiv(e->B, tid64, tns_i64(e, C), "");
  r0 = LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, r0, tns_i64(e, R), ""), r0, len, "");
  LLVMValueRef base =
      pass_gep(e, ty, src, LLVMBuildAdd(e->B, LLVMBuildMul(e->B, a, tns_i64(e, C), ""), col, ""));
  LLVMValueRef acc[SEG_U2], last = LLVMBuildSub(e->B, len, tns_i64(e, 1), "");
  tns_acc_init(e, t, acc, SEG_U2);
  pass_loop l;
  pass_loop_begin(e, &l, r0, len, tns_i64(e, R * SEG_U2));
  LLVMValueRef x[SEG_U2], ok[SEG_U2], ri[SEG_U2];
  for (int u = 0; u < SEG_U2; u++) {
    ri[u] = LLVMBuildAdd(e->B, l.i, tns_i64(e, R * u), "");
    ok[u] = LLVMBuildICmp(e->B, LLVMIntSLT, ri[u], len, "");
    LLVMValueRef row = tns_min64(e, ri[u], last);
    x[u] = tns_load(e, t, pass_gep(e, ty, base, LLVMBuildMul(e->B, row, tns_i64(e, C), "")));
  }
  for (int u = 0; u < SEG_U2; u++)
    tns_fold_elem(e, t, acc[u], x[u], tns_elem_idx(e, t, NULL, ri[u]), u ? ok[u] : NULL);
  pass_loop_end(e, &l);
  LLVMValueRef scr = pass_global_array(e, acc_ty, p->T, AS_SHARED, "seg_rows");
  LLVMBuildStore(e->B, tns_acc_total(e, t, acc, SEG_U2), pass_gep(e, acc_ty, scr, tid));
  pass_barrier_cta(e);
  pass_if w;
  pass_if_begin(e, &w, LLVMBuildICmp(e->B, LLVMIntSLT, tid64, tns_i64(e, C), ""));
  LLVMValueRef v = pass_entry_alloca(e, acc_ty, "seg_col");
  LLVMBuildStore(e->B, LLVMBuildLoad2(e->B, acc_ty, pass_gep(e, acc_ty, scr, tid), ""), v);
  pass_loop r;
  pass_loop_begin(e, &r, tns_i64(e, 1), tns_i64(e, R), tns_i64(e, 1));
  LLVMValueRef at = LLVMBuildAdd(e->B, tid64, LLVMBuildMul(e->B, r.i, tns_i64(e, C), ""), "");
  LLVMValueRef part = LLVMBuildLoad2(e->B, acc_ty, pass_gep(e, acc_ty, scr, at), "");
  LLVMBuildStore(e->B, tns_combine(e, t, LLVMBuildLoad2(e->B, acc_ty, v, ""), part), v);
  pass_loop_end(e, &r);
  LLVMValueRef o = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, s, tns_i64(e, C), ""), tid64, "");
  tns_store(e, t, dst, o, seg_result(e, t, LLVMBuildLoad2(e->B, acc_ty, v, ""), len));
  pass_if_end(e, &w);
}

/* Segment s (clamped start a, length len) folded by the whole CTA, stored; then a barrier (the
 * shared scratch, before the next segment). */
static void cta_fold(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef src,
                     LLVMValueRef dst, LLVMValueRef s, LLVMValueRef a, LLVMValueRef len) {
  LLVMValueRef tid = pass_tid_x(e);
  LLVMValueRef tid64 = LLVMBuildZExt(e->B, tid, LLVMInt64TypeInContext(e->C), "");
  if (p->C > 1) {
    rows_fold(e, t, p, src, dst, s, a, len);
  } else {
    LLVMValueRef v =
        tns_cta_reduce(e, t, group_fold(e, t, p, src, a, len, p->T, tid64, NULL), tid, p->T);
    tns_store_lane0(e, t, dst, s, seg_result(e, t, v, len),
                    LLVMConstInt(LLVMInt1TypeInContext(e->C), 1, 0), tid64);
  }
  pass_barrier_cta(e);
}

/* The CTA's segments cta_seq(k0 + i), i < T, of the CTA phase: those longer than clo (and at most
 * chi), each folded by the whole CTA in turn (flags: one i32 per thread, any[2]: a flag per batch
 * parity, shared). */
static void cta_batch(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef src,
                      LLVMValueRef dst, LLVMValueRef k0, LLVMValueRef flags, LLVMValueRef any) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef tid = pass_tid_x(e), tid64 = LLVMBuildZExt(e->B, tid, i64, "");
  LLVMValueRef par = LLVMBuildTrunc(
      e->B, LLVMBuildAnd(e->B, LLVMBuildUDiv(e->B, k0, tns_i64(e, p->T), ""), tns_i64(e, 1), ""),
      i32, "");
  LLVMValueRef s = cta_seq(e, p, LLVMBuildAdd(e->B, k0, tid64, ""));
  LLVMValueRef ok = LLVMBuildICmp(e->B, LLVMIntSLT, s, tns_i64(e, p->S), "");
  LLVMValueRef a, len;
  seg_range(e, t, p->N, LLVMBuildSelect(e->B, ok, s, tns_i64(e, 0), ""), NULL, &a, &len);
  LLVMValueRef big = LLVMBuildAnd(e->B, ok, cta_sized(e, p, len), "");
  LLVMBuildStore(e->B, LLVMBuildZExt(e->B, big, i32, ""), pass_gep(e, i32, flags, tid));
  pass_if z;
  pass_if_begin(e, &z, LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), ""));
  LLVMBuildStore(e->B, pass_i32(e, 0),
                 pass_gep(e, i32, any, LLVMBuildXor(e->B, par, pass_i32(e, 1), "")));
  pass_if_end(e, &z);
  pass_if b;
  pass_if_begin(e, &b, big);
  LLVMBuildStore(e->B, pass_i32(e, 1), pass_gep(e, i32, any, par));
  pass_if_end(e, &b);
  pass_barrier_cta(e);
  pass_if some;
  LLVMValueRef anyv = LLVMBuildLoad2(e->B, i32, pass_gep(e, i32, any, par), "");
  pass_if_begin(e, &some, LLVMBuildICmp(e->B, LLVMIntNE, anyv, pass_i32(e, 0), ""));
  LLVMValueRef kmax = tns_i64(e, cta_seq_len(e, p));
  LLVMValueRef nb = tns_min64(e, tns_i64(e, p->T), LLVMBuildSub(e->B, kmax, k0, "")); /* in batch */
  pass_loop l;
  pass_loop_begin(e, &l, pass_i32(e, 0), LLVMBuildTrunc(e->B, nb, i32, ""), pass_i32(e, 1));
  LLVMValueRef f = LLVMBuildLoad2(e->B, i32, pass_gep(e, i32, flags, l.i), "");
  pass_if one;
  pass_if_begin(e, &one, LLVMBuildICmp(e->B, LLVMIntNE, f, pass_i32(e, 0), ""));
  LLVMValueRef sj = cta_seq(e, p, LLVMBuildAdd(e->B, k0, LLVMBuildZExt(e->B, l.i, i64, ""), ""));
  LLVMValueRef aj, lenj;
  seg_range(e, t, p->N, sj, NULL, &aj, &lenj);
  cta_fold(e, t, p, src, dst, sj, aj, lenj);
  pass_if_end(e, &one);
  pass_loop_end(e, &l);
  pass_if_end(e, &some);
  pass_barrier_cta(e); /* flags, before the next batch */
}

/* ---- the chunk phase: segments longer than SEG_CH, in chunks of SEG_CH elements from the
 * segment's start, one CTA each; window w (elements w * SEG_CH .. (w + 1) * SEG_CH - 1) holds at
 * most two chunk starts of such segments: one of the segment covering its first element, one of
 * a segment starting inside it (it covers the window's last element).  The partial of the chunk
 * starting in window w goes to slot 2w (the segment started at or before the window) or 2w + 1;
 * the last CTA of a segment (counter at its first chunk's slot) folds its partials in chunk
 * order, thread t taking chunks t, t + T, ..., then the CTA tree: an order fixed by the length. */

/* For each of q[0 .. 2): the largest s in [0, S) with offsets[s] <= q (0 when none), by a 32-ary
 * search of the calling warp (all 32 lanes; a fixed number of rounds for S); each round loads
 * both queries' offsets before either's ballot, so their loads are in flight together. */
static void seg_search(pass_emit *e, const rj_tensor *t, int64_t S, const LLVMValueRef *q,
                       LLVMValueRef lane, LLVMValueRef *out) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef lo[2] = {tns_i64(e, 0), tns_i64(e, 0)}, n[2] = {tns_i64(e, S), tns_i64(e, S)};
  for (int64_t m = S; m > 1; m = (m + 31) / 32) {
    LLVMValueRef stride[2], ok[2];
    for (int k = 0; k < 2; k++) {
      stride[k] =
          LLVMBuildUDiv(e->B, LLVMBuildAdd(e->B, n[k], tns_i64(e, 31), ""), tns_i64(e, 32), "");
      LLVMValueRef off = LLVMBuildMul(e->B, lane, stride[k], "");
      LLVMValueRef in = LLVMBuildICmp(e->B, LLVMIntSLT, off, n[k], "");
      LLVMValueRef idx =
          LLVMBuildAdd(e->B, lo[k], LLVMBuildSelect(e->B, in, off, tns_i64(e, 0), ""), "");
      ok[k] = LLVMBuildAnd(e->B, in,
                           LLVMBuildICmp(e->B, LLVMIntSLE, offset_at(e, t, idx), q[k], ""), "");
    }
    for (int k = 0; k < 2; k++) {
      LLVMValueRef bv[2] = {pass_i32(e, -1), ok[k]};
      LLVMValueRef bal = pass_call(e, "llvm.nvvm.vote.ballot.sync", NULL, 0, bv, 2);
      LLVMValueRef c = LLVMBuildZExt(e->B, pass_call(e, "llvm.ctpop", &i32, 1, &bal, 1), i64, "");
      LLVMValueRef some = LLVMBuildICmp(e->B, LLVMIntSGT, c, tns_i64(e, 0), "");
      LLVMValueRef step =
          LLVMBuildMul(e->B, LLVMBuildSub(e->B, c, tns_i64(e, 1), ""), stride[k], "");
      LLVMValueRef nlo =
          LLVMBuildAdd(e->B, lo[k], LLVMBuildSelect(e->B, some, step, tns_i64(e, 0), ""), "");
      n[k] =
          tns_min64(e, stride[k], LLVMBuildSub(e->B, LLVMBuildAdd(e->B, lo[k], n[k], ""), nlo, ""));
      lo[k] = nlo;
    }
  }
  out[0] = lo[0];
  out[1] = lo[1];
}

/* The slot of the chunk of a segment starting at a whose first element is c (i64s). */
static LLVMValueRef chunk_slot(pass_emit *e, const seg_plan *p, LLVMValueRef a, LLVMValueRef c) {
  LLVMValueRef w = LLVMBuildUDiv(e->B, c, tns_i64(e, SEG_CH), "");
  LLVMValueRef after =
      LLVMBuildICmp(e->B, LLVMIntSGT, a, LLVMBuildMul(e->B, w, tns_i64(e, SEG_CH), ""), "");
  LLVMValueRef slot =
      LLVMBuildAdd(e->B, LLVMBuildMul(e->B, w, tns_i64(e, 2), ""),
                   LLVMBuildZExt(e->B, after, LLVMInt64TypeInContext(e->C), ""), "");
  return tns_min64(e, slot, tns_i64(e, 2 * ((p->N + SEG_CH - 1) / SEG_CH) - 1));
}

/* The last CTA of segment s (start a, length len, nch chunks): its partials in chunk order,
 * folded and stored; its counter reset. */
static void chunk_finish(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef dst,
                         LLVMValueRef ws, LLVMValueRef s, LLVMValueRef a, LLVMValueRef len,
                         LLVMValueRef nch, LLVMValueRef cntp) {
  LLVMTypeRef acc_ty = tns_acc_type(e, t);
  LLVMValueRef tid = pass_tid_x(e),
               tid64 = LLVMBuildZExt(e->B, tid, LLVMInt64TypeInContext(e->C), "");
  LLVMValueRef acc = pass_entry_alloca(e, acc_ty, "seg_fold");
  LLVMBuildStore(e->B, tns_identity(e, t), acc);
  pass_loop fl;
  pass_loop_begin(e, &fl, tid64, nch, tns_i64(e, p->T));
  LLVMValueRef c = LLVMBuildAdd(e->B, a, LLVMBuildMul(e->B, fl.i, tns_i64(e, SEG_CH), ""), "");
  LLVMValueRef part = tns_load_volatile(e, acc_ty, pass_gep(e, acc_ty, ws, chunk_slot(e, p, a, c)));
  LLVMBuildStore(e->B, tns_combine(e, t, LLVMBuildLoad2(e->B, acc_ty, acc, ""), part), acc);
  pass_loop_end(e, &fl);
  LLVMValueRef v = tns_cta_reduce(e, t, LLVMBuildLoad2(e->B, acc_ty, acc, ""), tid, p->T);
  pass_if w;
  pass_if_begin(e, &w, LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), ""));
  tns_store(e, t, dst, s, seg_result(e, t, v, len));
  LLVMBuildStore(e->B, pass_i32(e, 0), cntp);
  pass_if_end(e, &w);
}

/* A window's candidate: segment s (clamped start a, length len), which must cover element q of
 * the window (and with `inside` start after its first element). */
typedef struct seg_cand {
  LLVMValueRef s, a, len, q;
  bool inside;
} seg_cand;

/* Candidate k's chunk starting in window [q0, q1], if any (uniform over the CTA), folded into its
 * slot; the segment's last CTA finishes. */
static void chunk_one(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef src,
                      LLVMValueRef dst, LLVMValueRef ws, LLVMValueRef cnt, const seg_cand *k,
                      LLVMValueRef q0, LLVMValueRef q1) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef s = k->s, a = k->a, len = k->len, q = k->q, tid = pass_tid_x(e);
  bool inside = k->inside;
  LLVMValueRef end = LLVMBuildAdd(e->B, a, len, "");
  LLVMValueRef ch = tns_i64(e, SEG_CH);
  LLVMValueRef before = LLVMBuildSub(e->B, q0, a, "");
  LLVMValueRef j = LLVMBuildSelect(
      e->B, LLVMBuildICmp(e->B, LLVMIntSGT, before, tns_i64(e, 0), ""),
      LLVMBuildUDiv(e->B, LLVMBuildAdd(e->B, before, tns_i64(e, SEG_CH - 1), ""), ch, ""),
      tns_i64(e, 0), "j");
  LLVMValueRef c = LLVMBuildAdd(e->B, a, LLVMBuildMul(e->B, j, ch, ""), "");
  LLVMValueRef go = LLVMBuildICmp(e->B, LLVMIntSGT, len, ch, "");
  go = LLVMBuildAnd(e->B, go, LLVMBuildICmp(e->B, LLVMIntSLE, a, q, ""), "");
  go = LLVMBuildAnd(e->B, go, LLVMBuildICmp(e->B, LLVMIntSGT, end, q, ""), "");
  go = LLVMBuildAnd(e->B, go, LLVMBuildICmp(e->B, LLVMIntSLE, c, q1, ""), "");
  go = LLVMBuildAnd(e->B, go, LLVMBuildICmp(e->B, LLVMIntSLT, c, end, ""), "");
  if (inside) /* the segment starts inside the window (else it was the first candidate) */
    go = LLVMBuildAnd(e->B, go, LLVMBuildICmp(e->B, LLVMIntSGT, a, q0, ""), "");
  pass_if g;
  pass_if_begin(e, &g, go);
  LLVMValueRef clen = tns_min64(e, ch, LLVMBuildSub(e->B, end, c, ""));
  LLVMValueRef tid64 = LLVMBuildZExt(e->B, tid, i64, "");
  LLVMValueRef v = tns_cta_reduce(
      e, t, group_fold(e, t, p, src, c, clen, p->T, tid64, LLVMBuildSub(e->B, c, a, "")), tid,
      p->T);
  pass_if w;
  pass_if_begin(e, &w, LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), ""));
  LLVMTypeRef acc_ty = tns_acc_type(e, t);
  LLVMBuildStore(e->B, v, pass_gep(e, acc_ty, ws, chunk_slot(e, p, a, c)));
  pass_if_end(e, &w);
  LLVMValueRef nch =
      LLVMBuildUDiv(e->B, LLVMBuildAdd(e->B, len, tns_i64(e, SEG_CH - 1), ""), ch, "");
  LLVMValueRef cntp = pass_gep(e, i32, cnt, chunk_slot(e, p, a, a));
  pass_if l;
  pass_if_begin(e, &l, tns_last_cta(e, cntp, tid, nch));
  chunk_finish(e, t, p, dst, ws, s, a, len, nch, cntp);
  pass_if_end(e, &l);
  pass_barrier_cta(e); /* shared scratch, before the next chunk */
  pass_if_end(e, &g);
}

/* Window w's first and last elements */
static void window_ends(pass_emit *e, const seg_plan *p, LLVMValueRef w, LLVMValueRef *q) {
  q[0] = LLVMBuildMul(e->B, w, tns_i64(e, SEG_CH), "");
  q[1] = LLVMBuildSub(
      e->B, tns_min64(e, LLVMBuildAdd(e->B, q[0], tns_i64(e, SEG_CH), ""), tns_i64(e, p->N)),
      tns_i64(e, 1), "");
}

/* Field i of window k's candidates in the shared cands: (s, a, len) of the segment covering the
 * window's first element, then of the one covering its last. */
static LLVMValueRef cand_slot(pass_emit *e, LLVMValueRef cands, LLVMValueRef k, int i) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  return pass_gep(e, i64, cands,
                  LLVMBuildAdd(e->B, LLVMBuildMul(e->B, k, tns_i64(e, 6), ""), tns_i64(e, i), ""));
}

/* Warp k of the CTA: window w's two candidates (the segments covering its first and last
 * elements: both searches' and offsets' loads in flight together), as (s, a, len) x 2 into
 * cands[6k ..]. */
static void window_search(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef w,
                          LLVMValueRef k, LLVMValueRef cands) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef lane =
      LLVMBuildZExt(e->B, LLVMBuildAnd(e->B, pass_tid_x(e), pass_i32(e, 31), ""), i64, "");
  LLVMValueRef q[2], sq[2], v[6];
  window_ends(e, p, w, q);
  seg_search(e, t, p->S, q, lane, sq);
  for (int i = 0; i < 2; i++) {
    v[3 * i] = sq[i];
    seg_range(e, t, p->N, sq[i], NULL, &v[3 * i + 1], &v[3 * i + 2]);
  }
  pass_if l0;
  pass_if_begin(e, &l0, LLVMBuildICmp(e->B, LLVMIntEQ, lane, tns_i64(e, 0), ""));
  for (int i = 0; i < 6; i++)
    LLVMBuildStore(e->B, v[i], cand_slot(e, cands, k, i));
  pass_if_end(e, &l0);
}

/* Windows b, b + grid, ..., W = T / 32 at a time: warp k searches window b + k * grid (every
 * warp at once), then the CTA takes each window's candidates in window order. */
static void chunk_phase(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef src,
                        LLVMValueRef dst, LLVMValueRef ws, LLVMValueRef cnt) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  int64_t nw = (p->N + SEG_CH - 1) / SEG_CH, W = p->T / 32, G = e->plan->grid[0];
  LLVMValueRef cands = pass_global_array(e, i64, 6 * W, AS_SHARED, "seg_cands");
  LLVMValueRef warp =
      LLVMBuildZExt(e->B, LLVMBuildLShr(e->B, pass_tid_x(e), pass_i32(e, 5), ""), i64, "");
  pass_loop l;
  pass_loop_begin(e, &l, LLVMBuildZExt(e->B, tns_ctaid(e), i64, ""), tns_i64(e, nw),
                  tns_i64(e, G * W));
  LLVMValueRef mine = LLVMBuildAdd(e->B, l.i, LLVMBuildMul(e->B, warp, tns_i64(e, G), ""), "");
  pass_if has;
  pass_if_begin(e, &has, LLVMBuildICmp(e->B, LLVMIntSLT, mine, tns_i64(e, nw), ""));
  window_search(e, t, p, mine, warp, cands);
  pass_if_end(e, &has);
  pass_barrier_cta(e);
  LLVMValueRef left = LLVMBuildUDiv(
      e->B, LLVMBuildAdd(e->B, LLVMBuildSub(e->B, tns_i64(e, nw), l.i, ""), tns_i64(e, G - 1), ""),
      tns_i64(e, G), "");
  pass_loop k;
  pass_loop_begin(e, &k, tns_i64(e, 0), tns_min64(e, left, tns_i64(e, W)), tns_i64(e, 1));
  LLVMValueRef q[2], c[6];
  window_ends(e, p, LLVMBuildAdd(e->B, l.i, LLVMBuildMul(e->B, k.i, tns_i64(e, G), ""), ""), q);
  for (int i = 0; i < 6; i++)
    c[i] = LLVMBuildLoad2(e->B, i64, cand_slot(e, cands, k.i, i), "");
  seg_cand cand[2] = {{c[0], c[1], c[2], q[0], false}, {c[3], c[4], c[5], q[1], true}};
  for (int i = 0; i < 2; i++)
    chunk_one(e, t, p, src, dst, ws, cnt, &cand[i], q[0], q[1]);
  pass_loop_end(e, &k);
  pass_barrier_cta(e); /* cands, before the next windows */
  pass_loop_end(e, &l);
}

/* The grid's last CTA zeroes every segment counter (n of them): a launch over invalid offsets
 * leaves none behind for the next. */
static void grid_reset(pass_emit *e, LLVMValueRef cnt, int64_t n) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef done = pass_global_array(e, i32, 1, AS_GLOBAL, "seg_done");
  LLVMValueRef donep = pass_gep(e, i32, done, pass_i32(e, 0));
  LLVMValueRef tid = pass_tid_x(e);
  pass_if l;
  pass_if_begin(e, &l, tns_last_cta(e, donep, tid, tns_i64(e, e->plan->grid[0])));
  pass_loop z;
  pass_loop_begin(e, &z, LLVMBuildZExt(e->B, tid, i64, ""), tns_i64(e, n), tns_i64(e, SEG_T));
  LLVMBuildStore(e->B, pass_i32(e, 0), pass_gep(e, i32, cnt, z.i));
  pass_loop_end(e, &z);
  pass_if t0;
  pass_if_begin(e, &t0, LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), ""));
  LLVMBuildStore(e->B, pass_i32(e, 0), donep);
  pass_if_end(e, &t0);
  pass_if_end(e, &l);
}

/* The CTA phase over the CTA's segments (cta_seq): 2-D (li NULL), every one scanned T at a time;
 * 1-D, those its warps listed, or, when they found more than SEG_LIST, every one scanned. */
static void cta_phase(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef src,
                      LLVMValueRef dst, const seg_list *li) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef flags = pass_global_array(e, i32, p->T, AS_SHARED, "seg_long");
  LLVMValueRef any = pass_global_array(e, i32, 2, AS_SHARED, "seg_any");
  LLVMValueRef tid = pass_tid_x(e);
  pass_if z;
  pass_if_begin(e, &z, LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), ""));
  LLVMBuildStore(e->B, pass_i32(e, 0), pass_gep(e, i32, any, pass_i32(e, 0)));
  pass_if_end(e, &z);
  pass_barrier_cta(e); /* and the warp phase's list */
  LLVMValueRef n = li ? LLVMBuildLoad2(e->B, i32, li->count, "") : NULL;
  pass_if scan, listed;
  pass_loop l;
  if (li) {
    pass_if_begin(e, &listed, LLVMBuildICmp(e->B, LLVMIntULE, n, pass_i32(e, SEG_LIST), ""));
    pass_loop_begin(e, &l, pass_i32(e, 0), n, pass_i32(e, 1));
    LLVMValueRef sj = LLVMBuildZExt(
        e->B, LLVMBuildLoad2(e->B, i32, pass_gep(e, i32, li->list, l.i), ""), i64, "");
    LLVMValueRef aj, lenj;
    seg_range(e, t, p->N, sj, NULL, &aj, &lenj);
    cta_fold(e, t, p, src, dst, sj, aj, lenj);
    pass_loop_end(e, &l);
    pass_if_end(e, &listed);
    pass_if_begin(e, &scan, LLVMBuildICmp(e->B, LLVMIntUGT, n, pass_i32(e, SEG_LIST), ""));
  }
  pass_loop_begin(e, &l, tns_i64(e, 0), tns_i64(e, cta_seq_len(e, p)), tns_i64(e, p->T));
  cta_batch(e, t, p, src, dst, l.i, flags, any);
  pass_loop_end(e, &l);
  if (li) pass_if_end(e, &scan);
}

/* [N, C], C > 1: a thread per (segment, column), grid-stride; rows a .. b into SEG_U2 slots in
 * turn (row r into slot (r - a) mod SEG_U2), then the slots' fixed tree. */
static void cols_kernel(pass_emit *e, const rj_tensor *t, const seg_plan *p, LLVMValueRef src,
                        LLVMValueRef dst) {
  LLVMTypeRef ty = pass_type(e, t->dtype), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef tid = LLVMBuildZExt(e->B, pass_tid_x(e), i64, "");
  LLVMValueRef bid = LLVMBuildZExt(e->B, tns_ctaid(e), i64, "");
  LLVMValueRef o0 = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, bid, tns_i64(e, p->T), ""), tid, "");
  pass_loop l;
  pass_loop_begin(e, &l, o0, tns_i64(e, p->S * p->C), tns_i64(e, (int64_t)e->plan->grid[0] * p->T));
  LLVMValueRef s = LLVMBuildUDiv(e->B, l.i, tns_i64(e, p->C), "");
  LLVMValueRef c = LLVMBuildURem(e->B, l.i, tns_i64(e, p->C), "");
  LLVMValueRef a, len;
  seg_range(e, t, p->N, s, LLVMBuildICmp(e->B, LLVMIntEQ, c, tns_i64(e, 0), ""), &a, &len);
  LLVMValueRef mine = LLVMConstInt(LLVMInt1TypeInContext(e->C), 1, 0);
  if (p->C <= SEG_C2 && !p->inv) /* longer ones: the CTA phase's */
    mine = LLVMBuildICmp(e->B, LLVMIntSLE, len, tns_i64(e, SEG_ROWS), "");
  len = LLVMBuildSelect(e->B, mine, len, tns_i64(e, 0), "");
  LLVMValueRef acc[SEG_U2];
  tns_acc_init(e, t, acc, SEG_U2);
  LLVMValueRef base =
      pass_gep(e, ty, src, LLVMBuildAdd(e->B, LLVMBuildMul(e->B, a, tns_i64(e, p->C), ""), c, ""));
  LLVMValueRef last = LLVMBuildSub(e->B, len, tns_i64(e, 1), "");
  pass_loop r;
  pass_loop_begin(e, &r, tns_i64(e, 0), len, tns_i64(e, SEG_U2));
  LLVMValueRef x[SEG_U2], ok[SEG_U2], ri[SEG_U2];
  for (int u = 0; u < SEG_U2; u++) {
    ri[u] = LLVMBuildAdd(e->B, r.i, tns_i64(e, u), "");
    ok[u] = LLVMBuildICmp(e->B, LLVMIntSLT, ri[u], len, "");
    LLVMValueRef row = tns_min64(e, ri[u], last);
    x[u] = tns_load(e, t, pass_gep(e, ty, base, LLVMBuildMul(e->B, row, tns_i64(e, p->C), "")));
  }
  for (int u = 0; u < SEG_U2; u++)
    tns_fold_elem(e, t, acc[u], x[u], tns_elem_idx(e, t, NULL, ri[u]), u ? ok[u] : NULL);
  pass_loop_end(e, &r);
  pass_if st;
  pass_if_begin(e, &st, mine);
  tns_store(e, t, dst, l.i, seg_result(e, t, tns_acc_total(e, t, acc, SEG_U2), len));
  pass_if_end(e, &st);
  pass_loop_end(e, &l);
}

/* An empty list of the warp phase (its count zeroed, before a barrier). */
static void list_init(pass_emit *e, seg_list *li) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C);
  li->count = pass_global_array(e, i32, 1, AS_SHARED, "seg_nlist");
  li->list = pass_global_array(e, i32, SEG_LIST, AS_SHARED, "seg_list");
  pass_if z;
  pass_if_begin(e, &z, LLVMBuildICmp(e->B, LLVMIntEQ, pass_tid_x(e), pass_i32(e, 0), ""));
  LLVMBuildStore(e->B, pass_i32(e, 0), li->count);
  pass_if_end(e, &z);
  pass_barrier_cta(e);
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  const rj_tensor *t = &r->u.tensor;
  seg_plan p;
  memcpy(&p, e->plan->priv.bytes, sizeof p);
  LLVMValueRef src, dst;
  tns_begin(e, &src, &dst, 0, NULL);
  tns_launch_bounds(e, p.T, 65536 / (TNS_REGS * p.T));
  if (p.C == 0) { /* no outputs: never launched */
  } else if (p.C > 1) {
    cols_kernel(e, t, &p, src, dst);
    if (p.C <= SEG_C2 && !p.inv) cta_phase(e, t, &p, src, dst, NULL);
  } else {
    seg_list li;
    list_init(e, &li);
    warp_phase(e, t, &p, src, dst, &li);
    cta_phase(e, t, &p, src, dst, &li);
    if (p.N > SEG_CH) { /* segments longer than a chunk can exist */
      int64_t slots = 2 * ((p.N + SEG_CH - 1) / SEG_CH);
      LLVMValueRef ws = pass_global_array(e, tns_acc_type(e, t), slots, AS_GLOBAL, "seg_ws");
      LLVMValueRef cnt =
          pass_global_array(e, LLVMInt32TypeInContext(e->C), slots, AS_GLOBAL, "seg_count");
      chunk_phase(e, t, &p, src, dst, ws, cnt);
      grid_reset(e, cnt, slots);
    }
  }
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_tensor_segmented = {
    .name = "tensor_segmented",
    .prio = 40,
    .kind = RJ_KIND_TENSOR,
    .summary = "segments by device offsets: a lane, a warp, a CTA or chunks over CTAs per segment, "
               "chosen on the device by its length",
    .ops = PASS_OPS_SCALAR | ST_OPS,
    .segmented = true,
    .invariant = true, /* under "invariant": true; else its tree depends on invariant_why */
    .invariant_why = "a segment's start address mod 16 bytes (vector or scalar loads) and, for "
                     "[N, C], on C (a CTA folds long segments when C <= 128)",
    .accepts = accepts,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
