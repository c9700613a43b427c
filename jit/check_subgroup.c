/* `run` and `bench` for subgroup requests (passes/subgroup.c).  in: random (CONTRACT.md), with
 * NaNs if asked; out: poisoned, with poisoned guards on both sides.  Every lane of every group
 * is checked against a per-element oracle: exact bits for shuffles, broadcasts and the lane id;
 * reduce_* on lane 0 of each 2^k group, reduce_all_* on every lane, with ir_compare (exact for
 * integers and min / max, CONTRACT tolerances for float sums). */
#include "jit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD JIT_GUARD

/* The lane whose input lane `lane` receives (shuffles), or -1 when not a data move. */
static int source_lane(const rj_subgroup *g, int lane) {
  switch (g->primitive) {
  case RJ_PRIM_SHUFFLE:
    return g->index_is_list ? g->index[lane] : g->arg;
  case RJ_PRIM_BROADCAST:
    return g->arg;
  case RJ_PRIM_SHUFFLE_DOWN:
    return lane + g->arg <= 31 ? lane + g->arg : lane;
  case RJ_PRIM_SHUFFLE_UP:
    return lane - g->arg >= 0 ? lane - g->arg : lane;
  case RJ_PRIM_SHUFFLE_XOR:
    return lane ^ g->arg; /* arg is 0..31: always in the warp */
  default:
    return -1;
  }
}

static rj_op reduce_op(rj_primitive p) {
  if (p == RJ_PRIM_REDUCE_MIN || p == RJ_PRIM_REDUCE_ALL_MIN) return RJ_OP_MIN;
  if (p == RJ_PRIM_REDUCE_MAX || p == RJ_PRIM_REDUCE_ALL_MAX) return RJ_OP_MAX;
  return RJ_OP_SUM;
}

/* Compares out (n elements, no guards) with the oracle computed from in. */
static void compare(const rj_subgroup *g, const void *in, const void *out, int64_t n,
                    rj_check_result *res) {
  rj_dtype t = g->dtype;
  int G = 1 << g->log2_size;
  bool all = g->primitive >= RJ_PRIM_REDUCE_ALL_ADD && g->primitive <= RJ_PRIM_REDUCE_ALL_MAX;
  bool red = g->primitive >= RJ_PRIM_REDUCE_ADD && g->primitive <= RJ_PRIM_REDUCE_ALL_MAX;
  rj_op op = reduce_op(g->primitive);
  for (int64_t i = 0; i < n; i++) {
    int lane = (int)(i % 32);
    int64_t warp = i - lane;
    if (red) {
      if (!all && lane % G) continue; /* reduce_*: only lane 0 of each group is defined */
      int64_t first = i - lane % G;
      ir_value ref;
      ir_oracle_init(op, t, &ref);
      for (int64_t j = first; j < first + G; j++)
        ir_oracle_add(op, t, RJ_NAN_PROPAGATE, &ref, in, j);
      double ae, re;
      bool ok = ir_compare(op, t, &ref, out, i, &ae, &re);
      res->checked++;
      if (!isinf(ae) && ae > res->max_abs_err) res->max_abs_err = ae;
      if (!isinf(re) && re > res->max_rel_err) res->max_rel_err = re;
      if (!ok) {
        res->wrong++;
        if (isinf(ae)) res->max_abs_err = res->max_rel_err = INFINITY;
        jit_note(res,
                 "out[%lld] (block lane %d, group of %d from %lld): got %.17g (bits 0x%llx), "
                 "expected %.17g",
                 (long long)i, lane, G, (long long)first, ir_load_f64(t, out, i),
                 (unsigned long long)ir_load_bits(t, out, i),
                 ir_dtype(t)->is_float ? ref.f : (double)(int64_t)ref.u);
      }
      continue;
    }
    uint64_t want;
    if (g->primitive == RJ_PRIM_INVOCATION_ID)
      want = (uint64_t)lane;
    else
      want = ir_load_bits(t, in, warp + source_lane(g, lane));
    uint64_t got = ir_load_bits(t, out, i);
    res->checked++;
    if (got != want) {
      res->wrong++;
      double d = fabs(ir_load_f64(t, out, i) - ir_load_f64(t, &want, 0));
      /* (want holds the element's bits at its low end: little-endian, so readable as one) */
      if (isnan(d) || isinf(d))
        res->max_abs_err = res->max_rel_err = INFINITY;
      else if (d > res->max_abs_err)
        res->max_abs_err = d;
      jit_note(res, "out[%lld] (lane %d): got bits 0x%llx, expected 0x%llx (%s)", (long long)i,
               lane, (unsigned long long)got, (unsigned long long)want,
               g->primitive == RJ_PRIM_INVOCATION_ID ? "the lane id" : "the source lane's input");
    }
  }
}

static rj_status check(rj_ctx *ctx, rt_cuda *rt, rj_kernel *k, const rj_check_opts *o,
                       rj_check_result *res) {
  const rj_subgroup *g = &k->req.u.subgroup;
  ir_err *e = &ctx->err;
  rj_dtype t = g->dtype;
  int64_t n = (int64_t)g->threads * g->blocks, tot = n + 2 * GUARD;
  size_t bytes = (size_t)ir_dtype(t)->bytes, all = (size_t)tot * bytes;
  char *in = malloc(all), *out = malloc(all), *back = malloc(all);
  uint64_t din = 0, dout = 0;
  rj_status s = RJ_OK;
  if (!in || !out || !back) {
    s = ir_fail(e, RJ_ENOMEM, "out of memory");
    goto done;
  }
  ir_rng rng;
  ir_rng_seed(&rng, o->seed);
  ir_fill_poison(t, in, tot);
  ir_fill_poison(t, out, tot);
  char *pin = in + GUARD * bytes;
  ir_fill_random(&rng, t, pin, n);
  if (ir_dtype(t)->is_float)
    for (int i = 0; i < o->nan_count; i++)
      ir_store_f64(t, pin, (int64_t)(ir_rng_next(&rng) % (uint64_t)n), NAN);
  if ((s = rt_alloc(rt, all, &din, e)) || (s = rt_alloc(rt, all, &dout, e))) goto done;
  if ((s = rt_htod(rt, din, in, all, e)) || (s = rt_htod(rt, dout, out, all, e))) goto done;
  uint64_t pi = din + GUARD * bytes, po = dout + GUARD * bytes;
  void *args[2] = {&pi, &po};
  if ((s = rt_launch(rt, k->function, k->grid, k->block, 0, args, &res->kernel_ms, e))) goto done;
  /* the input must be untouched, the guards of both still poisoned */
  if ((s = rt_dtoh(rt, back, din, all, e))) goto done;
  if (memcmp(back, in, all)) {
    res->outside_written++;
    jit_note(res, "the input buffer (or its guards) changed");
  }
  if ((s = rt_dtoh(rt, back, dout, all, e))) goto done;
  int64_t hits = 0;
  for (int64_t i = 0; i < GUARD; i++) {
    hits += !ir_is_poison(t, back, i);
    hits += !ir_is_poison(t, back, GUARD + n + i);
  }
  if (hits) {
    res->outside_written += hits;
    jit_note(res, "%lld elements around the output buffer were written", (long long)hits);
  }
  compare(g, pin, back + GUARD * bytes, n, res);
  res->ok = res->wrong == 0 && res->outside_written == 0;
done:
  if (din) rt_free(rt, din);
  if (dout) rt_free(rt, dout);
  free(in);
  free(out);
  free(back);
  return s;
}

rj_status jit_check_subgroup(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                             rj_check_result *res) {
  return jit_checked(ctx, req, o, res, check);
}

rj_status jit_bench_subgroup(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                             rj_bench_result *res) {
  rj_kernel *k;
  rt_cuda *rt = NULL;
  rj_status s = jit_prepare_bench(ctx, req, o, &k, &rt, res);
  if (s) return s;
  const rj_subgroup *g = &req->u.subgroup;
  int64_t n = (int64_t)g->threads * g->blocks;
  size_t bytes = (size_t)n * (size_t)ir_dtype(g->dtype)->bytes;
  uint64_t din = 0, dout = 0;
  void *host = malloc(bytes);
  if (!host) s = ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (!s) s = rt_alloc(rt, bytes, &din, &ctx->err);
  if (!s) s = rt_alloc(rt, bytes, &dout, &ctx->err);
  ir_rng rng;
  ir_rng_seed(&rng, o->seed);
  enum { WARM = 3, RUNS = 25 };
  double ms[RUNS];
  void *args[2] = {&din, &dout};
  for (int i = 0; !s && i < WARM + RUNS; i++) {
    ir_fill_random(&rng, g->dtype, host, n); /* fresh data every run */
    s = rt_htod(rt, din, host, bytes, &ctx->err);
    double m = 0;
    if (!s) s = rt_launch(rt, k->function, k->grid, k->block, 0, args, &m, &ctx->err);
    if (i >= WARM) ms[i - WARM] = m;
  }
  if (!s) jit_bench_done(ms, RUNS, 2.0 * (double)bytes, res);
  free(host);
  if (din) rt_free(rt, din);
  if (dout) rt_free(rt, dout);
  rt_leave(rt);
  return s;
}
