/* `run` and `bench` for subgroup requests (passes/subgroup.c).  in: random (docs/CLI.md), with
 * NaNs if asked; out: poisoned, with poisoned guards on both sides.  Every lane of every group
 * is checked against a per-element oracle: exact bits for shuffles, broadcasts and the lane id;
 * reduce_* on lane 0 of each 2^k group, reduce_all_* on every lane, with hr_compare (exact for
 * integers and min / max, the tolerances of docs/CLI.md for float sums and products).  The inputs
 * of mul / and / or / xor are drawn for the op (hr_fill_op: products near 1, sparse bits). */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A reduction's element i: lane 0 of each 2^k group (reduce_*) or every lane (reduce_all_*)
 * against the fold of its group's inputs. */
static void compare_reduce(const rj_subgroup *g, const void *in, const void *out, int64_t i,
                           rj_check_result *res) {
  int G = 1 << g->log2_size, lane = (int)(i % 32);
  int64_t first = i - lane % G;
  rj_op op = (rj_op)ir_primitive_op(g->primitive, NULL);
  hr_value ref;
  if (hr_state_op(op)) {
    hr_state_ref_run(op, g->dtype, g->correction, in, first, G, &ref);
  } else {
    hr_oracle_init(op, g->dtype, &ref);
    for (int64_t j = first; j < first + G; j++)
      hr_oracle_add(op, g->dtype, RJ_NAN_PROPAGATE, &ref, in, j);
  }
  hr_check_elem(res, op, ir_op_result(op, g->dtype), &ref, out, i,
                "out[%lld] (block lane %d, group of %d from %lld)", (long long)i, lane, G,
                (long long)first);
}

/* A data move's (or the lane id's) element i: exact bits. */
static void compare_move(const rj_subgroup *g, const void *in, const void *out, int64_t i,
                         rj_check_result *res) {
  rj_dtype t = g->dtype;
  int lane = (int)(i % 32);
  uint64_t want = g->primitive == RJ_PRIM_INVOCATION_ID
                      ? (uint64_t)lane
                      : hr_load_bits(t, in, i - lane + source_lane(g, lane));
  uint64_t got = hr_load_bits(t, out, i);
  res->checked++;
  if (got == want) return;
  res->wrong++;
  double d = fabs(hr_load_f64(t, out, i) - hr_load_f64(t, &want, 0));
  /* (want holds the element's bits at its low end: little-endian, so readable as one) */
  if (isnan(d) || isinf(d))
    res->max_abs_err = res->max_rel_err = INFINITY;
  else if (d > res->max_abs_err)
    res->max_abs_err = d;
  hr_note(res, "out[%lld] (lane %d): got bits 0x%llx, expected 0x%llx (%s)", (long long)i, lane,
          (unsigned long long)got, (unsigned long long)want,
          g->primitive == RJ_PRIM_INVOCATION_ID ? "the lane id" : "the source lane's input");
}

/* Compares out (n elements, no guards) with the oracle computed from in. */
static void compare(const rj_subgroup *g, const void *in, const void *out, int64_t n,
                    rj_check_result *res) {
  int G = 1 << g->log2_size;
  bool all = false;
  bool red = ir_primitive_op(g->primitive, &all) >= 0;
  for (int64_t i = 0; i < n; i++) {
    if (!red)
      compare_move(g, in, out, i, res);
    else if (all || (i % 32) % G == 0) /* reduce_*: only lane 0 of each group is defined */
      compare_reduce(g, in, out, i, res);
  }
}

/* The input and its guards unchanged, the output's guards still poison, every lane compared. */
static rj_status verify(rj_ctx *ctx, const rj_subgroup *g, hr_buf *in, hr_buf *out,
                        rj_check_result *res) {
  size_t all = hr_buf_bytes(in);
  char *back = malloc(all > hr_buf_bytes(out) ? all : hr_buf_bytes(out));
  if (!back) return hr_nomem(ctx);
  int64_t in_hits = 0, hits = 0;
  rj_status s = hr_buf_down(ctx, in, back, &in_hits);
  if (!s && memcmp(back, in->host, all)) {
    hr_outside(res, 1, "the input buffer (or its guards) changed");
  }
  if (!s) s = hr_buf_down(ctx, out, back, &hits);
  if (!s)
    hr_outside(res, hits, "%lld elements around the output buffer were written", (long long)hits);
  if (!s) {
    compare(g, hr_payload(in), back + HR_GUARD * (size_t)ir_dtype(out->t)->bytes, in->n, res);
    res->ok = res->wrong == 0 && res->outside_written == 0;
  }
  free(back);
  return s;
}

rj_status hr_check_subgroup(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                            rj_kernel *k, rj_check_result *res) {
  const rj_subgroup *g = &req->u.subgroup;
  int dev = o->compile.device;
  int64_t n = (int64_t)g->threads * g->blocks;
  hr_buf in = {0}, out = {0};
  hr_rng rng;
  hr_rng_seed(&rng, o->seed);
  int op = ir_primitive_op(g->primitive, NULL); /* prod / and / or / xor: drawn for the op */
  rj_status s = hr_buf_make(ctx, &in, dev, g->dtype, n);
  if (!s) s = hr_buf_make(ctx, &out, dev, ir_subgroup_result(g), n);
  if (!s) {
    int64_t G = (int64_t)1 << g->log2_size;
    hr_fill_op(&rng, op >= 0 ? (rj_op)op : RJ_OP_SUM, g->dtype, hr_payload(&in), n, G);
    if (op >= 0 && hr_state_op((rj_op)op)) /* the state ops: redrawn by style (seed bits 3-4) */
      hr_state_fill_runs((rj_op)op, g->dtype, hr_payload(&in), n / G, G, (int)(o->seed >> 3) & 3);
    hr_fill_nans(&rng, g->dtype, hr_payload(&in), n, o->nan_count);
    if (!(s = hr_buf_up(ctx, &in))) s = hr_buf_up(ctx, &out);
  }
  rj_devptr ptr[2] = {hr_payload_dev(&in), hr_payload_dev(&out)};
  void *args[2] = {&ptr[0], &ptr[1]};
  unsigned grid[3], block[3], shared;
  rj_kernel_dims(k, grid, block, &shared);
  if (!s) s = rj_kernel_launch(ctx, k, dev, grid, block, shared, args, &res->kernel_ms);
  if (!s) s = verify(ctx, g, &in, &out, res);
  hr_buf_free(ctx, &in, s);
  hr_buf_free(ctx, &out, s);
  return s;
}

/* bench: in refilled with fresh data before every run. */
rj_status hr_bench_subgroup(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                            rj_kernel *k, rj_bench_result *res) {
  const rj_subgroup *g = &req->u.subgroup;
  int64_t b = ir_dtype(g->dtype)->bytes, rb = ir_dtype(ir_subgroup_result(g))->bytes;
  int64_t n[2] = {(int64_t)g->threads * g->blocks,
                  ((int64_t)g->threads * g->blocks * rb + b - 1) / b};
  double bytes = (double)n[0] * (double)(b + rb); /* out: argmax's i64 in src-dtype elements */
  return hr_bench_kernel(ctx, o, k, g->dtype, 2, n, 1, bytes, res);
}
