/* `run` and `bench` for tensor requests with "segments", through rj_reduce_segments.
 *
 * Offsets: random ragged lengths drawn from {0, 1, 31, 33, 0..7, 0..99, 0..4999} (empty segments
 * about one in four; the last range narrowed, to as little as 0..7, where S of them would use up
 * more than half of N), one segment (seed-chosen) taking what the others leave of N, so that a
 * large one sits among the small, and with S >= 8 four of (at most) 20000, 4000, 1000 and 400
 * elements an eighth of S apart from it (where the short lengths alone pass half of N, the later
 * segments are empty); off[0] is (seed mod 3) clamped to N, and odd seeds leave the
 * last (seed mod 5) elements unread.  The reference of segment s is the float64 / exact oracle
 * of the tensor request reduced over its rows alone (the empty ones: the op's identity, as the
 * oracle folds nothing).  The kernel runs twice (bits equal) and the status word must stay 0.
 * bench: the source rotates over slices of at least 256 MiB; bytes = src + offsets + dst. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* hr_seg_offsets' lengths: a menu, most of them small (the longest below `most`) */
static int64_t draw_len(hr_rng *g, int64_t most) {
  uint64_t r = hr_rng_next(g);
  switch (r % 8) {
  case 0:
  case 1:
    return 0;
  case 2:
    return 1;
  case 3:
    return 31;
  case 4:
    return 33;
  case 5:
    return (int64_t)(r >> 8) % 8;
  case 6:
    return (int64_t)(r >> 8) % 100;
  default:
    return (int64_t)(r >> 8) % most;
  }
}

/* draw_len's bound for S segments sharing `room` elements: 5000, or less where the menu's mean
 * (about 15 + most / 16) would pass three quarters of room / S (else the draws would use up N
 * early and every later segment be empty); at least 8. */
static int64_t menu_most(int64_t room, int64_t S) {
  int64_t per = S > 0 ? room / S : room;
  if (per >= 5240 / 12) return 5000; /* (and no overflow below) */
  int64_t most = 12 * per - 240;
  return most < 8 ? 8 : most;
}

/* With S >= 8, segments big + k S / 8 for k = 1 .. 4 have these lengths (at most the extent
 * shifted right by 2 + k): a CTA's, and warps' for every dtype. */
static const int64_t seg_mid_len[5] = {0, 20000, 4000, 1000, 400};

void hr_seg_offsets(uint64_t seed, int64_t N, int64_t S, int64_t *off) {
  hr_rng g;
  hr_rng_seed(&g, seed ^ 0x5e9e5e9eull);
  int64_t big = (int64_t)(hr_rng_next(&g) % (uint64_t)S);
  int64_t start = (int64_t)(seed % 3) < N ? (int64_t)(seed % 3) : N;
  int64_t end = N - ((seed & 1) ? (int64_t)(seed % 5) : 0);
  if (end < start) end = start;
  int64_t mid[5] = {0}, set = 0, e8 = S >= 8 ? S / 8 : 0; /* segments big + k e8, k = 1 .. 4 */
  for (int k = 1; k <= 4 && e8; k++) {
    mid[k] = seg_mid_len[k] < (end - start) >> (2 + k) ? seg_mid_len[k] : (end - start) >> (2 + k);
    set += mid[k];
  }
  int64_t used = 0; /* the lengths of the segments other than big: about half of the extent */
  int64_t most = menu_most((end - start) / 2 - set, S);
  for (int64_t s = 0; s < S; s++) {
    int64_t k = e8 ? (s - big + S) % S : 0, l = 0;
    if (e8 && k % e8 == 0 && k / e8 >= 1 && k / e8 <= 4 && mid[k / e8])
      l = mid[k / e8];
    else if (s != big)
      l = draw_len(&g, most);
    if (l > end - start - used) l = end - start - used;
    off[s + 1] = l;
    used += l;
  }
  off[big + 1] = end - start - used;
  off[0] = start;
  for (int64_t s = 0; s < S; s++)
    off[s + 1] += off[s];
}

/* Element i of an offsets buffer of dtype dt */
static void put_offset(rj_dtype dt, void *p, int64_t i, int64_t v) {
  if (dt == RJ_I32)
    ((int32_t *)p)[i] = (int32_t)v;
  else
    ((int64_t *)p)[i] = v;
}

/* An empty segment's max / min of an integer dtype: the dtype's least / greatest value (the
 * kernel's identity), wrapped as hr_value keeps integers (bool: 0 / 1). */
static void empty_extreme(const rj_tensor *t, hr_value *r) {
  const ir_dtype_info *d = ir_dtype(t->dtype);
  if (d->is_float || (t->op != RJ_OP_MAX && t->op != RJ_OP_MIN)) return;
  bool mx = t->op == RJ_OP_MAX;
  int bits = d->bytes * 8;
  if (t->dtype == RJ_BOOL)
    r->u = mx ? 0 : 1;
  else if (d->is_signed)
    r->u = mx ? ~(((uint64_t)1 << (bits - 1)) - 1) : ((uint64_t)1 << (bits - 1)) - 1;
  else
    r->u = mx ? 0 : bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
}

void hr_seg_ref(const rj_tensor *t, const void *src, const int64_t *off, hr_value *ref) {
  int64_t C = t->ndim == 2 ? t->shape[1] : 1;
  size_t row = (size_t)C * (size_t)ir_dtype(t->dtype)->bytes;
  for (int64_t s = 0; s < t->segments; s++) {
    rj_tensor one = *t;
    one.segments = 0;
    one.shape[0] = off[s + 1] - off[s];
    ir_tview v;
    ir_tensor_view(&one, &v);
    const void *at = (const char *)src + (size_t)off[s] * row;
    if (hr_state_op(t->op))
      hr_state_ref(&one, &v, at, ref + s * C);
    else
      hr_oracle_tensor(&one, &v, at, NULL, ref + s * C);
    for (int64_t c = 0; one.shape[0] == 0 && c < C; c++)
      empty_extreme(t, ref + s * C + c);
  }
}

/* A run's buffers and the reference */
typedef struct srun {
  hr_buf src, dst, off, status;
  int64_t *offs;
  void *got, *first;
  hr_value *ref;
} srun;

static rj_status seg_inputs(rj_ctx *ctx, const rj_check_opts *o, const rj_tensor *t, srun *b) {
  int64_t N = t->shape[0], C = t->ndim == 2 ? t->shape[1] : 1, S = t->segments;
  int dev = o->compile.device;
  rj_status s;
  if ((s = hr_buf_make(ctx, &b->src, dev, t->dtype, N * C)) ||
      (s = hr_buf_make(ctx, &b->dst, dev, ir_tensor_result(t), S * C)) ||
      (s = hr_buf_make(ctx, &b->off, dev, t->segments_dtype, S + 1)) ||
      (s = hr_buf_make(ctx, &b->status, dev, RJ_U32, 1)))
    return s;
  hr_rng g;
  hr_rng_seed(&g, o->seed);
  void *view = hr_payload(&b->src);
  ir_tview v;
  ir_tensor_view(t, &v);
  hr_fill_op(&g, t->op, t->dtype, view, N * C, N);
  if (hr_state_op(t->op)) hr_state_fill(&g, t, &v, view, (int)(o->seed >> 3) & 3);
  hr_fill_nans(&g, t->dtype, view, N * C, o->nan_count);
  hr_seg_offsets(o->seed, N, S, b->offs);
  for (int64_t i = 0; i <= S; i++)
    put_offset(t->segments_dtype, hr_payload(&b->off), i, b->offs[i]);
  memset(hr_payload(&b->status), 0, 4);
  if (!o->no_check) hr_seg_ref(t, view, b->offs, b->ref);
  if ((s = hr_buf_up(ctx, &b->src)) || (s = hr_buf_up(ctx, &b->off))) return s;
  return hr_buf_up(ctx, &b->status);
}

typedef struct seg_call {
  const rj_request *req;
  const rj_options *opt;
  rj_devptr src, off, dst, status;
} seg_call;

static rj_status seg_enqueue(rj_ctx *ctx, void *ud) {
  const seg_call *c = ud;
  return rj_reduce_segments(ctx, c->req, c->opt, c->src, c->off, c->dst, c->status, NULL);
}

/* Launch `run` (0 or 1) into the poisoned destination; the second compared bit for bit. */
static rj_status seg_launch(rj_ctx *ctx, const rj_check_opts *o, const rj_request *req, int run,
                            srun *b, rj_check_result *res) {
  seg_call c = {.req = req,
                .opt = &o->compile,
                .src = hr_payload_dev(&b->src),
                .off = hr_payload_dev(&b->off),
                .dst = hr_payload_dev(&b->dst),
                .status = hr_payload_dev(&b->status)};
  double ms = 0;
  rj_status s = hr_buf_up(ctx, &b->dst);
  if (!s) s = rj_stream_time(ctx, o->compile.device, NULL, seg_enqueue, &c, &ms);
  size_t all = hr_buf_bytes(&b->dst);
  if (!s) s = rj_memcpy_dtoh(ctx, b->dst.device, b->got, b->dst.dev, all);
  if (s) return s;
  if (run == 0) {
    memcpy(b->first, b->got, all);
    res->kernel_ms = ms;
  } else if (memcmp(b->first, b->got, all)) {
    res->wrong++;
    hr_note(res, "deterministic: two launches on the same input gave different dst bits");
  }
  if (rj_segments_status(ctx, o->compile.device, c.status) != RJ_OK) {
    res->wrong++;
    hr_note(res, "%s", rj_errmsg(ctx));
  }
  return RJ_OK;
}

static void seg_verify(const rj_check_opts *o, const rj_tensor *t, srun *b, rj_check_result *res) {
  const void *d = (const char *)b->first + (size_t)HR_GUARD * (size_t)ir_dtype(b->dst.t)->bytes;
  int64_t C = t->ndim == 2 ? t->shape[1] : 1;
  for (int64_t y = 0; y < b->dst.n; y++) {
    if (o->no_check) {
      if (hr_is_poison(b->dst.t, d, y))
        res->wrong++, hr_note(res, "dst %lld unwritten", (long long)y);
      continue;
    }
    int64_t s = y / C;
    hr_check_elem(res, t->op, b->dst.t, &b->ref[y], d, y,
                  "dst element %lld (segment %lld of %lld elements)", (long long)y, (long long)s,
                  (long long)(b->offs[s + 1] - b->offs[s]));
  }
  int64_t hits = hr_guard_hits(b->dst.t, b->first, b->dst.n);
  hr_outside(res, hits, "%lld guard elements around dst were written", (long long)hits);
  res->ok = res->wrong == 0 && res->outside_written == 0;
}

rj_status hr_check_segments(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                            rj_check_result *res) {
  const rj_tensor *t = &req->u.tensor;
  int64_t C = t->ndim == 2 ? t->shape[1] : 1, outs = t->segments * C;
  srun b = {0};
  b.offs = malloc(sizeof(int64_t) * (size_t)(t->segments + 1));
  b.got = malloc((size_t)(outs + 2 * HR_GUARD) * 8);
  b.first = malloc((size_t)(outs + 2 * HR_GUARD) * 8);
  b.ref = malloc(sizeof(hr_value) * (size_t)(outs ? outs : 1));
  rj_status s = !b.offs || !b.got || !b.first || !b.ref ? hr_nomem(ctx) : RJ_OK;
  if (!s) s = seg_inputs(ctx, o, t, &b);
  for (int run = 0; !s && outs && run < (t->deterministic ? 2 : 1); run++)
    s = seg_launch(ctx, o, req, run, &b, res);
  if (!s && outs) seg_verify(o, t, &b, res);
  if (!s && !outs) res->ok = 1;
  hr_buf_free(ctx, &b.src, s);
  hr_buf_free(ctx, &b.dst, s);
  hr_buf_free(ctx, &b.off, s);
  hr_buf_free(ctx, &b.status, s);
  free(b.offs);
  free(b.got);
  free(b.first);
  free(b.ref);
  return s;
}

/* bench's state: rotating source slices, the offsets and the destination */
typedef struct sbench {
  seg_call c;
  rj_devptr big;
  size_t slice, nslice;
} sbench;

static rj_status sbench_run(rj_ctx *ctx, void *ud, int i, double *ms) {
  sbench *b = ud;
  b->c.src = b->big + (size_t)i % b->nslice * b->slice;
  return rj_stream_time(ctx, b->c.opt->device, NULL, seg_enqueue, &b->c, ms);
}

static rj_status sbench_fill(rj_ctx *ctx, const rj_check_opts *o, const rj_tensor *t, sbench *b) {
  int64_t N = t->shape[0], C = t->ndim == 2 ? t->shape[1] : 1, S = t->segments;
  int dev = o->compile.device;
  size_t ob = (size_t)ir_dtype(t->segments_dtype)->bytes, ot = (size_t)(S + 1) * ob;
  size_t db = (size_t)(S * C) * (size_t)ir_dtype(ir_tensor_result(t))->bytes;
  int64_t *offs = malloc(sizeof(int64_t) * (size_t)(S + 1));
  void *host = malloc(b->slice > ot ? b->slice : ot);
  rj_status s = !offs || !host ? hr_nomem(ctx) : RJ_OK;
  if (!s) s = rj_device_alloc(ctx, dev, b->slice * b->nslice, &b->big);
  if (!s) s = rj_device_alloc(ctx, dev, ot, &b->c.off);
  if (!s) s = rj_device_alloc(ctx, dev, db ? db : 8, &b->c.dst);
  hr_rng g;
  hr_rng_seed(&g, o->seed);
  if (!s)
    hr_fill_random(&g, t->dtype, host, (int64_t)(b->slice / (size_t)ir_dtype(t->dtype)->bytes));
  for (size_t i = 0; !s && i < b->nslice; i++)
    s = rj_memcpy_htod(ctx, dev, b->big + i * b->slice, host, b->slice);
  if (!s) {
    hr_seg_offsets(o->seed, N, S, offs);
    for (int64_t i = 0; i <= S; i++)
      put_offset(t->segments_dtype, host, i, offs[i]);
    s = rj_memcpy_htod(ctx, dev, b->c.off, host, ot);
  }
  (void)C;
  free(offs);
  free(host);
  return s;
}

rj_status hr_bench_segments(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                            rj_bench_result *res) {
  const rj_tensor *t = &req->u.tensor;
  sbench b = {.c = {.req = req, .opt = &o->compile}};
  int64_t N = t->shape[0], C = t->ndim == 2 ? t->shape[1] : 1, S = t->segments;
  size_t eb = (size_t)ir_dtype(t->dtype)->bytes, least = (size_t)256 << 20;
  b.slice = ((size_t)(N * C) * eb + 255) / 256 * 256;
  if (b.slice == 0) b.slice = 256;
  b.nslice = b.slice >= least ? 2 : (least + b.slice - 1) / b.slice;
  enum { WARM = 5, RUNS = 30 };
  double ms[RUNS];
  double moved = (double)(N * C) * (double)eb +
                 (double)(S + 1) * (double)ir_dtype(t->segments_dtype)->bytes +
                 (double)(S * C) * (double)ir_dtype(ir_tensor_result(t))->bytes;
  rj_status s = sbench_fill(ctx, o, t, &b);
  if (!s) s = hr_bench_loop(ctx, WARM, RUNS, sbench_run, &b, ms, moved, res);
  hr_free(ctx, o->compile.device, b.big, s);
  hr_free(ctx, o->compile.device, b.c.off, s);
  hr_free(ctx, o->compile.device, b.c.dst, s);
  return s;
}
