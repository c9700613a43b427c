/* `run` and `bench` for tensor requests (issue 6).
 *
 * run: the source view is placed `seed mod 8` elements past a 256-byte boundary (so seeds also
 * exercise misaligned starts), inside GUARD poisoned elements each side; gaps of strided views
 * hold random data too.  The destination is poisoned (random under accum) with guards.  The
 * float64 / exact reference comes from ir_oracle_tensor; with `deterministic` the kernel runs a
 * second time from the same inputs and both results must be bitwise equal.
 * bench: the source rotates over slices of a device buffer of at least 256 MiB (five times
 * H100's L2), so no run reads data another left in L2; CUDA events around each launch, warm-up,
 * the median of RUNS.  bytes = the view's elements read once + the destination written once
 * (read once more under accum). */
#include "jit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD JIT_GUARD

static int64_t guard_hits(rj_dtype t, const void *p, int64_t lo, int64_t n) {
  int64_t h = 0;
  for (int64_t i = 0; i < GUARD; i++) {
    h += !ir_is_poison(t, p, i);
    h += !ir_is_poison(t, p, lo + n + i);
  }
  return h;
}

static rj_status check(rj_ctx *ctx, rt_cuda *rt, rj_kernel *k, const rj_request *req,
                       const rj_check_opts *o, rj_check_result *res) {
  const rj_tensor *t =
      &req->u.tensor; /* (a runtime-size kernel may have been compiled for another shape) */
  ir_err *e = &ctx->err;
  ir_tview v;
  ir_tensor_view(t, &v);
  size_t bytes = (size_t)ir_dtype(t->dtype)->bytes;
  int64_t off = (int64_t)(o->seed % 8);
  int64_t nsrc = GUARD + off + v.extent + GUARD, ndst = GUARD + v.outputs + GUARD;
  void *hsrc = malloc((size_t)nsrc * bytes), *hdst = malloc((size_t)ndst * bytes);
  void *got = malloc((size_t)(nsrc > ndst ? nsrc : ndst) * bytes);
  void *first = malloc((size_t)ndst * bytes);
  ir_value *ref = malloc(sizeof(ir_value) * (size_t)v.outputs);
  uint64_t dsrc = 0, ddst = 0;
  rj_status s = RJ_OK;
  if (!hsrc || !hdst || !got || !first || !ref) {
    s = ir_fail(e, RJ_ENOMEM, "out of memory");
    goto out;
  }
  ir_rng g;
  ir_rng_seed(&g, o->seed);
  ir_fill_poison(t->dtype, hsrc, nsrc);
  ir_fill_random(&g, t->dtype, (char *)hsrc + (size_t)GUARD * bytes, off + v.extent);
  void *view = (char *)hsrc + (size_t)(GUARD + off) * bytes;
  if (ir_dtype(t->dtype)->is_float)
    for (int i = 0; i < o->nan_count; i++) {
      int64_t p = (int64_t)(ir_rng_next(&g) % (uint64_t)v.outputs);
      int64_t r = (int64_t)(ir_rng_next(&g) % (uint64_t)v.reduce_len);
      ir_store_f64(t->dtype, view, ir_tview_offset(&v, p, r), NAN);
    }
  ir_fill_poison(t->dtype, hdst, ndst);
  void *dview = (char *)hdst + (size_t)GUARD * bytes;
  if (t->accum) ir_fill_random(&g, t->dtype, dview, v.outputs);
  ir_oracle_tensor(t, &v, view, t->accum ? dview : NULL, ref);
  if ((s = rt_alloc(rt, (size_t)nsrc * bytes, &dsrc, e)) ||
      (s = rt_alloc(rt, (size_t)ndst * bytes, &ddst, e)) ||
      (s = rt_htod(rt, dsrc, hsrc, (size_t)nsrc * bytes, e)))
    goto out;
  jit_targs a;
  if ((s = jit_tensor_args(ctx, k, req, dsrc + (uint64_t)(GUARD + off) * bytes,
                           ddst + (uint64_t)GUARD * bytes, &a)))
    goto out;
  int launches = t->deterministic ? 2 : 1;
  for (int run = 0; run < launches; run++) {
    double ms = 0;
    if ((s = rt_htod(rt, ddst, hdst, (size_t)ndst * bytes, e)) ||
        (s = rt_launch(rt, k->function, a.grid, a.block, 0, a.args, &ms, e)) ||
        (s = rt_dtoh(rt, got, ddst, (size_t)ndst * bytes, e)))
      goto out;
    if (run == 0) {
      res->kernel_ms = ms;
      memcpy(first, got, (size_t)ndst * bytes);
    } else if (memcmp(first, got, (size_t)ndst * bytes)) {
      res->wrong++;
      jit_note(res, "deterministic: two launches on the same input gave different bits");
    }
  }
  char where[64];
  const void *d = (const char *)first + (size_t)GUARD * bytes;
  for (int64_t y = 0; y < v.outputs; y++) {
    double ae, re;
    bool ok = ir_compare(t->op, t->dtype, &ref[y], d, y, &ae, &re);
    res->checked++;
    if (!isinf(ae) && ae > res->max_abs_err) res->max_abs_err = ae;
    if (!isinf(re) && re > res->max_rel_err) res->max_rel_err = re;
    if (!ok) {
      res->wrong++;
      if (isinf(ae)) res->max_abs_err = res->max_rel_err = INFINITY;
      snprintf(where, sizeof where, "dst element %lld", (long long)y);
      jit_note(res, "%s: got %.17g (bits 0x%llx), expected %.17g", where,
               ir_load_f64(t->dtype, d, y), (unsigned long long)ir_load_bits(t->dtype, d, y),
               ir_dtype(t->dtype)->is_float ? ref[y].f : (double)(int64_t)ref[y].u);
    }
  }
  int64_t hits = guard_hits(t->dtype, first, GUARD, v.outputs);
  if ((s = rt_dtoh(rt, got, dsrc, (size_t)nsrc * bytes, e))) goto out;
  if (memcmp(got, hsrc, (size_t)nsrc * bytes)) {
    res->outside_written++;
    jit_note(res, "the source buffer (or its guards) changed");
  }
  if (hits) {
    res->outside_written += hits;
    jit_note(res, "%lld guard elements around dst were written", (long long)hits);
  }
  res->ok = res->wrong == 0 && res->outside_written == 0;
out:
  rt_free(rt, dsrc);
  rt_free(rt, ddst);
  free(hsrc);
  free(hdst);
  free(got);
  free(first);
  free(ref);
  return s;
}

rj_status jit_check_tensor(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                           rj_check_result *res) {
  rj_kernel *k;
  rt_cuda *rt = NULL;
  rj_status s = jit_prepare_check(ctx, req, o, &k, &rt, res);
  if (s) return s;
  s = check(ctx, rt, k, req, o, res);
  rt_leave(rt);
  return s;
}

rj_status jit_bench_tensor(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                           rj_bench_result *res) {
  rj_kernel *k;
  rt_cuda *rt = NULL;
  rj_status s = jit_prepare_bench(ctx, req, o, &k, &rt, res);
  if (s) return s;
  const rj_tensor *t = &req->u.tensor;
  ir_err *e = &ctx->err;
  ir_tview v;
  ir_tensor_view(t, &v);
  size_t bytes = (size_t)ir_dtype(t->dtype)->bytes;
  size_t slice = ((size_t)v.extent * bytes + 255) / 256 * 256;
  size_t nslice = slice >= ((size_t)256 << 20) ? 2 : (((size_t)256 << 20) + slice - 1) / slice;
  uint64_t big = 0, ddst = 0;
  void *host = malloc(slice > (size_t)v.outputs * bytes ? slice : (size_t)v.outputs * bytes);
  void *ev[2] = {NULL, NULL};
  enum { WARM = 5, RUNS = 30 };
  double ms[RUNS];
  if (!host) s = ir_fail(e, RJ_ENOMEM, "out of memory");
  if (!s) s = rt_alloc(rt, slice * nslice, &big, e);
  if (!s) s = rt_alloc(rt, (size_t)v.outputs * bytes, &ddst, e);
  ir_rng g;
  ir_rng_seed(&g, o->seed);
  if (!s) {
    ir_fill_random(&g, t->dtype, host, (int64_t)(slice / bytes));
    for (size_t i = 0; !s && i < nslice; i++)
      s = rt_htod(rt, big + i * slice, host, slice, e);
  }
  if (!s) {
    ir_fill_random(&g, t->dtype, host, v.outputs);
    s = rt_htod(rt, ddst, host, (size_t)v.outputs * bytes, e);
  }
  if (!s) s = rt_event_pair(rt, ev, e);
  for (int i = 0; !s && i < WARM + RUNS; i++) {
    jit_targs a;
    double m = 0;
    if (!(s = jit_tensor_args(ctx, k, req, big + (size_t)i % nslice * slice, ddst, &a)) &&
        !(s = rt_event_record(rt, ev[0], NULL, e)) &&
        !(s = rt_launch_async(rt, k->function, a.grid, a.block, 0, a.args, NULL, e)) &&
        !(s = rt_event_record(rt, ev[1], NULL, e)))
      s = rt_event_ms(rt, ev[0], ev[1], &m, e);
    if (i >= WARM) ms[i - WARM] = m;
  }
  if (!s)
    jit_bench_done(
        ms, RUNS,
        (double)(v.outputs * v.reduce_len + v.outputs * (t->accum ? 2 : 1)) * (double)bytes, res);
  rt_event_pair_free(rt, ev);
  rt_free(rt, big);
  rt_free(rt, ddst);
  free(host);
  rt_leave(rt);
  return s;
}
