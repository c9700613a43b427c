/* `run` and `bench` for tensor requests, through rj_reduce: exactly the user's path (it launches
 * on a stream without waiting; rj_stream_time times it by CUDA events).
 *
 * run: the source view is placed `seed mod 8` elements past a 256-byte boundary (so seeds also
 * exercise misaligned starts), inside HR_GUARD poisoned elements each side; gaps of strided views
 * hold random data too.  The destination is poisoned (random under accum) with guards.  The
 * float64 / exact reference comes from hr_oracle_tensor; with `deterministic` the kernel runs a
 * second time from the same inputs and both results must be bitwise equal.
 * bench: the source rotates over slices of a device buffer of at least 256 MiB (five times
 * H100's L2), so no run reads data another left in L2; CUDA events around each launch, warm-up,
 * the median of RUNS.  bytes = the view's elements read once + the destination written once
 * (read once more under accum), each at its own dtype's size (argmax / argmin write i64), + the
 * values written under "values".
 *
 * "values" (argmax / argmin): the launch is rj_reduce_values into a second, poisoned destination
 * with guards; each value must be the source element at the reference's index, bit for bit
 * (hr_check_values). */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One rj_reduce call (rj_reduce_values under "values"), as rj_stream_time's enqueue. */
typedef struct reduce_call {
  const rj_request *req;
  const rj_options *opt;
  rj_devptr src, dst;                     /* device addresses of the view's element 0 and of dst */
  rj_devptr values;                       /* "values": the extreme values' destination */
  rj_devptr others[RJ_TENSOR_OTHERS_MAX]; /* "others": their element 0 */
} reduce_call;

static rj_status enqueue(rj_ctx *ctx, void *ud) {
  const reduce_call *c = ud;
  int n = c->req->u.tensor.nothers;
  if (n) return rj_reduce_n(ctx, c->req, c->opt, c->src, c->others, n, c->dst, c->values, NULL);
  if (c->req->u.tensor.values)
    return rj_reduce_values(ctx, c->req, c->opt, c->src, c->dst, c->values, NULL);
  return rj_reduce(ctx, c->req, c->opt, c->src, c->dst, NULL);
}

static rj_status timed_reduce(rj_ctx *ctx, const reduce_call *c, double *ms) {
  return rj_stream_time(ctx, c->opt->device, NULL, enqueue, (void *)c, ms);
}

/* A run's buffers: the source, the destination, and under "values" the values' destination (its
 * n is 0 otherwise, nothing allocated); the downloads (guards included) of the first launch's dst
 * and values, scratch for the rest, and the reference. */
typedef struct trun {
  hr_buf src, dst, vals;
  hr_buf oth[RJ_TENSOR_OTHERS_MAX]; /* "others" (placed (seed / 8) mod 8 elements in) */
  void *got, *first, *vfirst;
  hr_value *ref;
} trun;

/* NaNs at nan_count random elements of the view */
static void put_nans(hr_rng *g, const rj_check_opts *o, const rj_tensor *t, const ir_tview *v,
                     void *view) {
  if (!ir_dtype(t->dtype)->is_float || v->outputs == 0 || v->reduce_len == 0) return;
  for (int i = 0; i < o->nan_count; i++) {
    int64_t p = (int64_t)(hr_rng_next(g) % (uint64_t)v->outputs);
    int64_t r = (int64_t)(hr_rng_next(g) % (uint64_t)v->reduce_len);
    hr_store_f64(t->dtype, view, ir_tview_offset(v, p, r), NAN);
  }
}

/* element i of a mask of dtype dt: z (0 or 1) */
static void set_mask(rj_dtype dt, void *p, int64_t i, uint64_t z) {
  size_t n = (size_t)ir_dtype(dt)->bytes;
  if (ir_dtype(dt)->is_float) {
    hr_store_f64(dt, p, i, (double)z);
    return;
  }
  unsigned char *q = (unsigned char *)p + (size_t)i * n; /* little-endian integers */
  memset(q, 0, n);
  q[0] = (unsigned char)z;
}

/* The other inputs: random (a mask of map "where": 0 / 1, all 0 when seed bits 6-7 are 0),
 * uploaded; views[k] their element 0 on the host. */
static rj_status other_inputs(rj_ctx *ctx, const rj_check_opts *o, const rj_tensor *t, hr_rng *g,
                              trun *b, const void **views) {
  int64_t off = (int64_t)((o->seed / 8) % 8);
  for (int k = 0; k < t->nothers; k++) {
    ir_tview ov;
    hr_other_view(t, k, &ov);
    rj_dtype dt = t->other_dtype[k];
    rj_status s = hr_buf_make(ctx, &b->oth[k], o->compile.device, dt, off + ov.extent);
    if (s) return s;
    void *p = hr_payload(&b->oth[k]);
    hr_fill_random(g, dt, p, off + ov.extent);
    if (t->fused.map == RJ_MAP_WHERE) {
      bool none = ((o->seed >> 6) & 3) == 0;
      for (int64_t i = 0; i < off + ov.extent; i++) {
        uint64_t z = none ? 0 : hr_rng_next(g) & 1;
        set_mask(dt, p, i, z);
      }
    }
    views[k] = (char *)p + (size_t)off * (size_t)ir_dtype(dt)->bytes;
    if ((s = hr_buf_up(ctx, &b->oth[k]))) return s;
  }
  return RJ_OK;
}

/* Inputs: src's payload (off + the view's extent) random, NaNs at random elements of the view;
 * dst (and values) poison, dst random under accum; the reference; src uploaded. */
static rj_status inputs(rj_ctx *ctx, const rj_check_opts *o, const rj_tensor *t, const ir_tview *v,
                        trun *b) {
  int64_t off = (int64_t)(o->seed % 8);
  int dev = o->compile.device;
  rj_status s;
  if ((s = hr_buf_make(ctx, &b->src, dev, t->dtype, off + v->extent))) return s;
  if ((s = hr_buf_make(ctx, &b->dst, dev, ir_tensor_result(t), v->outputs))) return s;
  if (t->values && (s = hr_buf_make(ctx, &b->vals, dev, t->dtype, v->outputs))) return s;
  hr_rng g;
  hr_rng_seed(&g, o->seed);
  hr_fill_op(&g, t->op, t->dtype, hr_payload(&b->src), off + v->extent, v->reduce_len);
  void *view = (char *)hr_payload(&b->src) + (size_t)off * (size_t)ir_dtype(t->dtype)->bytes;
  put_nans(&g, o, t, v, view);
  if (t->accum) /* the old outputs, of the result dtype (sum of i8: i64) */
    hr_fill_op(&g, t->op, ir_tensor_result(t), hr_payload(&b->dst), v->outputs, v->reduce_len);
  const void *oviews[RJ_TENSOR_OTHERS_MAX] = {0};
  if ((s = other_inputs(ctx, o, t, &g, b, oviews))) return s;
  if (o->no_check) { /* no reference */
  } else if (hr_fused(t)) {
    hr_oracle_fused(t, v, view, oviews, t->accum ? hr_payload(&b->dst) : NULL, o, b->ref);
  } else if (hr_state_op(t->op)) {
    hr_state_fill(&g, t, v, view, (int)(o->seed >> 3) & 3);
    put_nans(&g, o, t, v, view); /* again: the redraw kept no NaN */
    hr_state_ref(t, v, view, b->ref);
  } else {
    hr_oracle_tensor(t, v, view, t->accum ? hr_payload(&b->dst) : NULL, b->ref);
  }
  return hr_buf_up(ctx, &b->src);
}

/* Launch `run` (0 or 1): poisoned (or accum's) destinations up, the launch, both down; the first
 * launch's kept in first / vfirst, a second's compared bit for bit with them. */
static rj_status launch(rj_ctx *ctx, const rj_check_opts *o, const rj_request *req, int run,
                        trun *b, rj_check_result *res) {
  int64_t off = (int64_t)(o->seed % 8);
  bool vals = req->u.tensor.values;
  reduce_call c = {.req = req, .opt = &o->compile, .dst = hr_payload_dev(&b->dst)};
  c.src = hr_payload_dev(&b->src) + (uint64_t)off * (size_t)ir_dtype(b->src.t)->bytes;
  if (vals) c.values = hr_payload_dev(&b->vals);
  for (int k = 0; k < req->u.tensor.nothers; k++)
    c.others[k] = hr_payload_dev(&b->oth[k]) +
                  (uint64_t)((o->seed / 8) % 8) * (size_t)ir_dtype(b->oth[k].t)->bytes;
  double ms = 0;
  rj_status s;
  if ((s = hr_buf_up(ctx, &b->dst)) || (vals && (s = hr_buf_up(ctx, &b->vals))) ||
      (s = timed_reduce(ctx, &c, &ms)))
    return s;
  const hr_buf *buf[2] = {&b->dst, &b->vals};
  void *keep[2] = {b->first, b->vfirst};
  for (int i = 0; i < (vals ? 2 : 1); i++) {
    size_t all = hr_buf_bytes(buf[i]);
    if ((s = rj_memcpy_dtoh(ctx, buf[i]->device, b->got, buf[i]->dev, all))) return s;
    if (run == 0) {
      memcpy(keep[i], b->got, all);
    } else if (memcmp(keep[i], b->got, all)) {
      res->wrong++;
      hr_note(res, "deterministic: two launches on the same input gave different %s bits",
              i ? "values" : "dst");
    }
  }
  if (run == 0) res->kernel_ms = ms;
  return RJ_OK;
}

/* One launch, or two from the same inputs under `deterministic` (bit-identical results). */
static rj_status launches(rj_ctx *ctx, const rj_check_opts *o, const rj_request *req, trun *b,
                          rj_check_result *res) {
  int n = req->u.tensor.deterministic ? 2 : 1;
  rj_status s = RJ_OK;
  for (int run = 0; run < n && !s; run++)
    s = launch(ctx, o, req, run, b, res);
  return s;
}

/* no_check: the n elements at got (guards excluded) that still hold the poison, counted wrong */
static void unwritten(rj_check_result *res, rj_dtype t, const void *got, int64_t n,
                      const char *what) {
  for (int64_t y = 0; y < n; y++)
    if (hr_is_poison(t, got, y)) {
      res->wrong++;
      hr_note(res, "%s element %lld was never written (no_check: values not compared)", what,
              (long long)y);
    }
}

/* The outputs: against the reference (and under "values" every value against the source), or
 * under no_check only written (accum's destination: not even that). */
static void outputs(const rj_check_opts *o, const rj_tensor *t, const ir_tview *v, trun *b,
                    rj_check_result *res) {
  const hr_buf *dst = &b->dst;
  const void *d = (const char *)b->first + (size_t)HR_GUARD * (size_t)ir_dtype(dst->t)->bytes;
  size_t eb = (size_t)ir_dtype(t->dtype)->bytes;
  const void *vals = (const char *)b->vfirst + (size_t)HR_GUARD * eb;
  if (o->no_check) {
    if (!t->accum) unwritten(res, dst->t, d, dst->n, "dst");
    if (t->values) unwritten(res, t->dtype, vals, b->vals.n, "values");
    return;
  }
  rj_op op = hr_fused(t) && (t->op == RJ_OP_MAX || t->op == RJ_OP_MIN) ? RJ_OP_SUM : t->op;
  for (int64_t y = 0; y < dst->n; y++)
    hr_check_elem(res, op, dst->t, &b->ref[y], d, y, "dst element %lld", (long long)y);
  if (t->values) {
    const void *view = (const char *)hr_payload(&b->src) + (size_t)(o->seed % 8) * eb;
    hr_check_values(res, t, v, view, b->ref, vals);
  }
}

/* The outputs (above), the source (guards included) unchanged, the destinations' guards. */
static rj_status verify(rj_ctx *ctx, const rj_check_opts *o, const rj_tensor *t, const ir_tview *v,
                        trun *b, rj_check_result *res) {
  outputs(o, t, v, b, res);
  int64_t hits = hr_guard_hits(b->dst.t, b->first, b->dst.n);
  if (t->values) hits += hr_guard_hits(t->dtype, b->vfirst, b->vals.n);
  rj_status s = rj_memcpy_dtoh(ctx, b->src.device, b->got, b->src.dev, hr_buf_bytes(&b->src));
  if (s) return s;
  if (memcmp(b->got, b->src.host, hr_buf_bytes(&b->src))) {
    hr_outside(res, 1, "the source buffer (or its guards) changed");
  }
  hr_outside(res, hits, "%lld guard elements around dst%s were written", (long long)hits,
             t->values ? " and values" : "");
  res->ok = res->wrong == 0 && res->outside_written == 0;
  return RJ_OK;
}

rj_status hr_check_tensor(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, rj_kernel *k,
                          rj_check_result *res) {
  if (req->u.tensor.list_count) return hr_check_multi(ctx, req, o, k, res);
  (void)k; /* rj_reduce finds it in the cache */
  const rj_tensor *t = &req->u.tensor;
  if (t->segments) return hr_check_segments(ctx, req, o, res);
  /* op custom: entry.c refused it unless no_check */
  ir_tview v;
  ir_tensor_view(t, &v);
  size_t bytes = 8; /* the widest: an i64 index's destination included */
  int64_t most =
      (int64_t)(o->seed % 8) + v.extent > v.outputs ? (int64_t)(o->seed % 8) + v.extent : v.outputs;
  trun b = {0};
  b.got = malloc((size_t)(most + 2 * HR_GUARD) * bytes);
  b.first = malloc((size_t)(v.outputs + 2 * HR_GUARD) * bytes);
  b.vfirst = malloc((size_t)(v.outputs + 2 * HR_GUARD) * bytes);
  b.ref = malloc(sizeof(hr_value) * (size_t)v.outputs);
  rj_status s = !b.got || !b.first || !b.vfirst || !b.ref ? hr_nomem(ctx) : RJ_OK;
  if (!s) s = inputs(ctx, o, t, &v, &b);
  if (!s) s = launches(ctx, o, req, &b, res);
  if (!s) s = verify(ctx, o, t, &v, &b, res);
  hr_buf_free(ctx, &b.src, s);
  hr_buf_free(ctx, &b.dst, s);
  hr_buf_free(ctx, &b.vals, s);
  for (int k = 0; k < RJ_TENSOR_OTHERS_MAX; k++)
    hr_buf_free(ctx, &b.oth[k], s);
  free(b.got);
  free(b.first);
  free(b.vfirst);
  free(b.ref);
  return s;
}

/* bench's state: the rotating source slices and the destination. */
typedef struct tbench {
  reduce_call c;
  rj_devptr big; /* nslice slices of `slice` bytes */
  size_t slice, nslice;
} tbench;

static rj_status bench_run(rj_ctx *ctx, void *ud, int i, double *ms) {
  tbench *b = ud;
  b->c.src = b->big + (size_t)i % b->nslice * b->slice;
  return timed_reduce(ctx, &b->c, ms);
}

/* Random slices (one block, repeated) and a random destination. */
static rj_status bench_fill(rj_ctx *ctx, const rj_check_opts *o, const rj_tensor *t,
                            int64_t outputs, tbench *b) {
  size_t bytes = (size_t)ir_dtype(t->dtype)->bytes;
  size_t dbytes = (size_t)outputs * (size_t)ir_dtype(ir_tensor_result(t))->bytes;
  int dev = o->compile.device;
  void *host = malloc(b->slice > dbytes ? b->slice : dbytes);
  if (!host) return hr_nomem(ctx);
  rj_status s = rj_device_alloc(ctx, dev, b->slice * b->nslice, &b->big);
  rj_devptr ddst = 0, dval = 0;
  if (!s) s = rj_device_alloc(ctx, dev, dbytes, &ddst);
  b->c.dst = ddst;
  if (!s && t->values) s = rj_device_alloc(ctx, dev, (size_t)outputs * bytes, &dval);
  b->c.values = dval;
  hr_rng g;
  hr_rng_seed(&g, o->seed);
  if (!s) {
    hr_fill_random(&g, t->dtype, host, (int64_t)(b->slice / bytes));
    for (size_t i = 0; !s && i < b->nslice; i++)
      s = rj_memcpy_htod(ctx, dev, b->big + i * b->slice, host, b->slice);
  }
  if (!s) {
    hr_fill_random(&g, t->dtype, host, outputs);
    s = rj_memcpy_htod(ctx, dev, ddst, host, dbytes);
  }
  free(host);
  return s;
}

/* bench: other input k, random, on the device at *d */
static rj_status bench_other(rj_ctx *ctx, const rj_check_opts *o, const rj_tensor *t, int k,
                             rj_devptr *d) {
  ir_tview ov;
  hr_other_view(t, k, &ov);
  size_t bytes = (size_t)ov.extent * (size_t)ir_dtype(t->other_dtype[k])->bytes;
  void *host = malloc(bytes);
  if (!host) return hr_nomem(ctx);
  hr_rng g;
  hr_rng_seed(&g, o->seed + 1 + (uint64_t)k);
  hr_fill_random(&g, t->other_dtype[k], host, ov.extent);
  rj_status s = rj_device_alloc(ctx, o->compile.device, bytes, d);
  if (!s) s = rj_memcpy_htod(ctx, o->compile.device, *d, host, bytes);
  free(host);
  return s;
}

rj_status hr_bench_tensor(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, rj_kernel *k,
                          rj_bench_result *res) {
  if (req->u.tensor.list_count) return hr_bench_multi(ctx, req, o, k, res);
  (void)k; /* rj_reduce finds it in the cache */
  if (req->u.tensor.segments) return hr_bench_segments(ctx, req, o, res);
  tbench b = {.c = {.req = req, .opt = &o->compile}};
  const rj_tensor *t = &req->u.tensor;
  ir_tview v;
  ir_tensor_view(t, &v);
  size_t bytes = (size_t)ir_dtype(t->dtype)->bytes, least = (size_t)256 << 20;
  b.slice = ((size_t)v.extent * bytes + 255) / 256 * 256;
  if (b.slice == 0) b.slice = 256; /* an empty view (a dim of size 0) */
  b.nslice = b.slice >= least ? 2 : (least + b.slice - 1) / b.slice;
  enum { WARM = 5, RUNS = 30 };
  double ms[RUNS];
  size_t dbytes = (size_t)ir_dtype(ir_tensor_result(t))->bytes; /* argmax: i64 */
  double moved = (double)(v.outputs * v.reduce_len) * (double)bytes +
                 (double)(v.outputs * (t->accum ? 2 : 1)) * (double)dbytes +
                 (t->values ? (double)v.outputs * (double)bytes : 0); /* the values written */
  rj_status s = bench_fill(ctx, o, t, v.outputs, &b);
  for (int k = 0; k < t->nothers && !s; k++) { /* read once each, not rotated */
    moved += (double)(v.outputs * v.reduce_len) * (double)ir_dtype(t->other_dtype[k])->bytes;
    s = bench_other(ctx, o, t, k, &b.c.others[k]);
  }
  if (!s) s = hr_bench_loop(ctx, WARM, RUNS, bench_run, &b, ms, moved, res);
  hr_free(ctx, o->compile.device, b.big, s);
  hr_free(ctx, o->compile.device, b.c.dst, s);
  hr_free(ctx, o->compile.device, b.c.values, s);
  for (int k = 0; k < t->nothers; k++)
    hr_free(ctx, o->compile.device, b.c.others[k], s);
  return s;
}
