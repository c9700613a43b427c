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
 * (read once more under accum), each at its own dtype's size (argmax / argmin write i64). */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One rj_reduce call, as rj_stream_time's enqueue. */
typedef struct reduce_call {
  const rj_request *req;
  const rj_options *opt;
  rj_devptr src, dst; /* device addresses of the view's element 0 and of dst */
} reduce_call;

static rj_status enqueue(rj_ctx *ctx, void *ud) {
  const reduce_call *c = ud;
  return rj_reduce(ctx, c->req, c->opt, c->src, c->dst, NULL);
}

static rj_status timed_reduce(rj_ctx *ctx, const reduce_call *c, double *ms) {
  return rj_stream_time(ctx, c->opt->device, NULL, enqueue, (void *)c, ms);
}

/* Inputs: src's payload (off + the view's extent) random, NaNs at random elements of the view;
 * dst poison, random under accum; the reference; src uploaded. */
static rj_status inputs(rj_ctx *ctx, const rj_check_opts *o, const rj_tensor *t, const ir_tview *v,
                        hr_buf *src, hr_buf *dst, hr_value *ref) {
  int64_t off = (int64_t)(o->seed % 8);
  int dev = o->compile.device;
  rj_status s;
  if ((s = hr_buf_make(ctx, src, dev, t->dtype, off + v->extent))) return s;
  if ((s = hr_buf_make(ctx, dst, dev, ir_tensor_result(t), v->outputs))) return s;
  hr_rng g;
  hr_rng_seed(&g, o->seed);
  hr_fill_op(&g, t->op, t->dtype, hr_payload(src), off + v->extent, v->reduce_len);
  void *view = (char *)hr_payload(src) + (size_t)off * (size_t)ir_dtype(t->dtype)->bytes;
  if (ir_dtype(t->dtype)->is_float)
    for (int i = 0; i < o->nan_count; i++) {
      int64_t p = (int64_t)(hr_rng_next(&g) % (uint64_t)v->outputs);
      int64_t r = (int64_t)(hr_rng_next(&g) % (uint64_t)v->reduce_len);
      hr_store_f64(t->dtype, view, ir_tview_offset(v, p, r), NAN);
    }
  if (t->accum) hr_fill_op(&g, t->op, t->dtype, hr_payload(dst), v->outputs, v->reduce_len);
  if (hr_state_op(t->op)) {
    hr_state_fill(&g, t, v, view, (int)(o->seed >> 3) & 3);
    if (ir_dtype(t->dtype)->is_float)
      for (int i = 0; i < o->nan_count; i++) { /* again: the redraw kept no NaN */
        int64_t p = (int64_t)(hr_rng_next(&g) % (uint64_t)v->outputs);
        int64_t r = (int64_t)(hr_rng_next(&g) % (uint64_t)v->reduce_len);
        hr_store_f64(t->dtype, view, ir_tview_offset(v, p, r), NAN);
      }
    hr_state_ref(t, v, view, ref);
  } else {
    hr_oracle_tensor(t, v, view, t->accum ? hr_payload(dst) : NULL, ref);
  }
  return hr_buf_up(ctx, src);
}

/* One launch, or two from the same inputs under `deterministic` (bit-identical results);
 * *first: the first launch's dst, guards included. */
static rj_status launches(rj_ctx *ctx, const rj_check_opts *o, const rj_request *req, hr_buf *src,
                          hr_buf *dst, void *first, void *got, rj_check_result *res) {
  int64_t off = (int64_t)(o->seed % 8);
  size_t all = hr_buf_bytes(dst);
  reduce_call c = {.req = req, .opt = &o->compile, .dst = hr_payload_dev(dst)};
  c.src = hr_payload_dev(src) + (uint64_t)off * (size_t)ir_dtype(src->t)->bytes; /* the view's */
  int n = req->u.tensor.deterministic ? 2 : 1;
  for (int run = 0; run < n; run++) {
    double ms = 0;
    rj_status s;
    if ((s = hr_buf_up(ctx, dst)) || (s = timed_reduce(ctx, &c, &ms)) ||
        (s = rj_memcpy_dtoh(ctx, dst->device, got, dst->dev, all)))
      return s;
    if (run == 0) {
      res->kernel_ms = ms;
      memcpy(first, got, all);
    } else if (memcmp(first, got, all)) {
      res->wrong++;
      hr_note(res, "deterministic: two launches on the same input gave different bits");
    }
  }
  return RJ_OK;
}

/* Every output against the reference, the source (guards included) unchanged, dst's guards. */
static rj_status verify(rj_ctx *ctx, const rj_tensor *t, const hr_buf *src, const hr_buf *dst,
                        const void *first, void *got, const hr_value *ref, rj_check_result *res) {
  const void *d = (const char *)first + (size_t)HR_GUARD * (size_t)ir_dtype(dst->t)->bytes;
  for (int64_t y = 0; y < dst->n; y++)
    hr_check_elem(res, t->op, dst->t, &ref[y], d, y, "dst element %lld", (long long)y);
  int64_t hits = hr_guard_hits(dst->t, first, dst->n);
  rj_status s = rj_memcpy_dtoh(ctx, src->device, got, src->dev, hr_buf_bytes(src));
  if (s) return s;
  if (memcmp(got, src->host, hr_buf_bytes(src))) {
    hr_outside(res, 1, "the source buffer (or its guards) changed");
  }
  hr_outside(res, hits, "%lld guard elements around dst were written", (long long)hits);
  res->ok = res->wrong == 0 && res->outside_written == 0;
  return RJ_OK;
}

rj_status hr_check_tensor(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, rj_kernel *k,
                          rj_check_result *res) {
  (void)k; /* rj_reduce finds it in the cache */
  const rj_tensor *t = &req->u.tensor;
  if (t->op == RJ_OP_CUSTOM) /* before any launch: rj_check's own statement of what it can check */
    return rj_error_set(ctx, RJ_EUNSUPPORTED,
                        "op: \"custom\" has no CPU oracle (the caller's IR does not run on the "
                        "CPU); check it with rj_reduce against your own reference");
  ir_tview v;
  ir_tensor_view(t, &v);
  size_t bytes = 8; /* the widest: an i64 index's destination included */
  int64_t most =
      (int64_t)(o->seed % 8) + v.extent > v.outputs ? (int64_t)(o->seed % 8) + v.extent : v.outputs;
  hr_buf src = {0}, dst = {0};
  void *got = malloc((size_t)(most + 2 * HR_GUARD) * bytes);
  void *first = malloc((size_t)(v.outputs + 2 * HR_GUARD) * bytes);
  hr_value *ref = malloc(sizeof(hr_value) * (size_t)v.outputs);
  rj_status s = !got || !first || !ref ? hr_nomem(ctx) : RJ_OK;
  if (!s) s = inputs(ctx, o, t, &v, &src, &dst, ref);
  if (!s) s = launches(ctx, o, req, &src, &dst, first, got, res);
  if (!s) s = verify(ctx, t, &src, &dst, first, got, ref, res);
  hr_buf_free(ctx, &src, s);
  hr_buf_free(ctx, &dst, s);
  free(got);
  free(first);
  free(ref);
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
  rj_devptr ddst = 0;
  if (!s) s = rj_device_alloc(ctx, dev, dbytes, &ddst);
  b->c.dst = ddst;
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

rj_status hr_bench_tensor(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, rj_kernel *k,
                          rj_bench_result *res) {
  (void)k; /* rj_reduce finds it in the cache */
  tbench b = {.c = {.req = req, .opt = &o->compile}};
  const rj_tensor *t = &req->u.tensor;
  ir_tview v;
  ir_tensor_view(t, &v);
  size_t bytes = (size_t)ir_dtype(t->dtype)->bytes, least = (size_t)256 << 20;
  b.slice = ((size_t)v.extent * bytes + 255) / 256 * 256;
  b.nslice = b.slice >= least ? 2 : (least + b.slice - 1) / b.slice;
  enum { WARM = 5, RUNS = 30 };
  double ms[RUNS];
  size_t dbytes = (size_t)ir_dtype(ir_tensor_result(t))->bytes; /* argmax: i64 */
  double moved = (double)(v.outputs * v.reduce_len) * (double)bytes +
                 (double)(v.outputs * (t->accum ? 2 : 1)) * (double)dbytes;
  rj_status s = bench_fill(ctx, o, t, v.outputs, &b);
  if (!s) s = hr_bench_loop(ctx, WARM, RUNS, bench_run, &b, ms, moved, res);
  hr_free(ctx, o->compile.device, b.big, s);
  hr_free(ctx, o->compile.device, b.c.dst, s);
  return s;
}
