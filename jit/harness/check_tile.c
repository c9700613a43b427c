/* `run` and `bench` for tile requests: the kernel is the tile harness around the primitive
 * (passes/harness.c), with src and dst in global memory, and for local tiles a third buffer that
 * receives every thread's register slots.  Inputs, poison and tolerances: docs/CLI.md ("redjit
 * run"). */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One run's state. */
typedef struct tilerun {
  const rj_tile *t;
  rj_dtype rt; /* dst's dtype: the op's result (argmax / argmin: i64) */
  rj_op cmp;   /* the op whose tolerance checks it: a mapped max / min's is sum's */
  ir_tile_shape f;
  int Ts; /* threads of one scope instance */
  bool local;
  ir_placement pd;      /* local: dst's placement on the threads of a scope instance */
  hr_buf src, dst, out; /* out: local only, every thread's dst slots */
  void *dst_init;       /* dst's payload as uploaded */
  hr_value *ref;        /* per fused spatial index */
  int64_t *dsp;         /* dst offset -> spatial index, or -1 outside the region */
  void *got;            /* a download, guards included */
} tilerun;

/* 1. inputs: random src (with NaNs if asked; the state ops' redrawn as for tensors, seed bits 3-4
 * the style), dst random under accum else poison; the reference; the dst offset -> spatial index
 * map. */
static rj_status inputs(rj_ctx *ctx, const rj_check_opts *o, tilerun *u) {
  const rj_tile *t = u->t;
  int dev = o->compile.device, bytes = ir_dtype(u->rt)->bytes;
  int64_t nsrc = ir_numel(&t->src), ndst = ir_numel(&t->dst);
  hr_rng g;
  hr_rng_seed(&g, o->seed);
  rj_status s;
  if ((s = hr_buf_make(ctx, &u->src, dev, t->dtype, nsrc))) return s;
  if ((s = hr_buf_make(ctx, &u->dst, dev, u->rt, ndst))) return s;
  hr_fill_op(&g, t->op, t->dtype, hr_payload(&u->src), nsrc, u->f.reduce_len);
  hr_fill_nans(&g, t->dtype, hr_payload(&u->src), nsrc, o->nan_count);
  if (hr_state_op(t->op)) { /* redrawn, then NaNs again (the redraw keeps only some) */
    hr_state_fill_tile(t, hr_payload(&u->src), (int)(o->seed >> 3) & 3);
    hr_fill_nans(&g, t->dtype, hr_payload(&u->src), nsrc, o->nan_count);
  }
  if (t->accum) hr_fill_op(&g, t->op, t->dtype, hr_payload(&u->dst), ndst, u->f.reduce_len);
  u->dst_init = malloc((size_t)ndst * (size_t)bytes);
  u->ref = malloc(sizeof(hr_value) * (size_t)u->f.spatial_len);
  u->dsp = malloc(sizeof(int64_t) * (size_t)ndst);
  if (!u->dst_init || !u->ref || !u->dsp) return hr_nomem(ctx);
  memcpy(u->dst_init, hr_payload(&u->dst), (size_t)ndst * (size_t)bytes);
  if ((s = hr_buf_up(ctx, &u->src)) || (s = hr_buf_up(ctx, &u->dst))) return s;
  if (hr_state_op(t->op))
    hr_state_ref_tile(t, hr_payload(&u->src), u->ref);
  else if (t->fused.map || t->fused.epilogue)
    hr_oracle_tile_fused(t, hr_payload(&u->src), t->accum ? u->dst_init : NULL, u->ref);
  else
    hr_oracle_tile(t, hr_payload(&u->src), t->accum ? u->dst_init : NULL, u->ref);
  for (int64_t y = 0; y < ndst; y++)
    u->dsp[y] = -1;
  for (int64_t sp = 0; sp < u->f.spatial_len; sp++)
    u->dsp[ir_dst_offset(t, sp)] = sp;
  return RJ_OK;
}

/* 2. the launch: (src, dst, out) at their payloads; local: out made first. */
static rj_status launch(rj_ctx *ctx, const rj_check_opts *o, rj_kernel *k, tilerun *u,
                        rj_check_result *res) {
  const rj_tile *t = u->t;
  int dev = o->compile.device;
  rj_devptr ptr[3] = {hr_payload_dev(&u->src), hr_payload_dev(&u->dst), 0};
  rj_status s;
  if (u->local) {
    ir_err e = {0};
    if (ir_place(&t->dst, u->Ts, "dst", &u->pd, &e))
      return rj_error_set(ctx, e.status, "%s", e.msg);
    int64_t nout = (int64_t)u->f.threads * u->pd.nslots;
    if ((s = hr_buf_make(ctx, &u->out, dev, u->rt, nout)) || (s = hr_buf_up(ctx, &u->out)))
      return s;
    ptr[2] = hr_payload_dev(&u->out);
  }
  void *args[3] = {&ptr[0], &ptr[1], &ptr[2]};
  unsigned grid[3], block[3], shared;
  rj_kernel_dims(k, grid, block, &shared);
  return rj_kernel_launch(ctx, k, dev, grid, block, shared, args, &res->kernel_ms);
}

/* 3a. shared dst: every element of the region checked, every other element unchanged. */
static void compare_dst(tilerun *u, const void *d, rj_check_result *res) {
  for (int64_t y = 0; y < u->dst.n; y++) {
    if (u->dsp[y] >= 0) {
      hr_check_elem(res, u->cmp, u->rt, &u->ref[u->dsp[y]], d, y, "dst element %lld", (long long)y);
    } else if (hr_load_bits(u->rt, d, y) != hr_load_bits(u->rt, u->dst_init, y)) {
      hr_outside(res, 1, "dst element %lld, outside the destination region, was written",
                 (long long)y);
    }
  }
}

/* 3b. local dst: every active thread's slots checked (slots outside the region unchanged),
 * inactive threads' slots still poison. */
static void compare_slots(tilerun *u, const void *d, rj_check_result *res) {
  const rj_tile *t = u->t;
  int n = u->pd.nslots;
  for (int tid = 0; tid < u->f.threads; tid++) {
    int inst = tid / u->Ts, lane = tid % u->Ts;
    bool on = t->active == RJ_ACTIVE_ALL || inst == t->active_index;
    for (int j = 0; j < n; j++) {
      int64_t i = (int64_t)tid * n + j, y = on ? u->pd.elem[(int64_t)lane * n + j] : -1;
      if (!on) {
        if (!hr_is_poison(u->rt, d, i)) {
          hr_outside(res, 1, "thread %d is not active but wrote its registers", tid);
        }
      } else if (y >= 0 && u->dsp[y] >= 0) {
        hr_check_elem(res, u->cmp, u->rt, &u->ref[u->dsp[y]], d, i,
                      "thread %d dst slot %d (element %lld)", tid, j, (long long)y);
      } else if (y >= 0 && hr_load_bits(u->rt, d, i) != hr_load_bits(u->rt, u->dst_init, y)) {
        hr_outside(res, 1,
                   "thread %d dst slot %d holds element %lld outside the region, and it changed",
                   tid, j, (long long)y);
      }
    }
  }
}

/* 3. downloads: the source unchanged, the destination (or the slots) checked, the guards. */
static rj_status compare(rj_ctx *ctx, tilerun *u, rj_check_result *res) {
  size_t bytes = (size_t)ir_dtype(u->t->dtype)->bytes, rbytes = (size_t)ir_dtype(u->rt)->bytes;
  size_t most = hr_buf_bytes(&u->src);
  if (hr_buf_bytes(&u->dst) > most) most = hr_buf_bytes(&u->dst);
  if (u->local && hr_buf_bytes(&u->out) > most) most = hr_buf_bytes(&u->out);
  if (!(u->got = malloc(most))) return hr_nomem(ctx);
  int64_t hits = 0;
  const void *d = (char *)u->got + HR_GUARD * rbytes; /* dst and out */
  rj_status s;
  if ((s = hr_buf_down(ctx, &u->src, u->got, &hits))) return s;
  if (memcmp((char *)u->got + HR_GUARD * bytes, hr_payload(&u->src), (size_t)u->src.n * bytes)) {
    hr_outside(res, 1, "the source buffer changed");
  }
  if ((s = hr_buf_down(ctx, &u->dst, u->got, &hits))) return s;
  if (!u->local) compare_dst(u, d, res);
  if (u->local && (s = hr_buf_down(ctx, &u->out, u->got, &hits))) return s;
  if (u->local) compare_slots(u, d, res);
  hr_outside(res, hits, "%lld elements around the device buffers were written", (long long)hits);
  res->ok = res->wrong == 0 && res->outside_written == 0;
  return RJ_OK;
}

rj_status hr_check_tile(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, rj_kernel *k,
                        rj_check_result *res) {
  tilerun u = {.t = &req->u.tile, .rt = ir_tile_result(&req->u.tile)};
  const rj_tile *t = u.t;
  ir_tile_facts(t, &u.f);
  u.local = t->src.mem == RJ_MEM_LOCAL;
  bool mapped_mm = t->fused.map && (t->op == RJ_OP_MAX || t->op == RJ_OP_MIN);
  u.cmp = mapped_mm && ir_dtype(t->dtype)->is_float ? RJ_OP_SUM : t->op;
  u.Ts = t->scope == RJ_SCOPE_THREAD ? 1
         : t->scope == RJ_SCOPE_CTA  ? u.f.threads
                                     : u.f.scope_threads;
  rj_status s = inputs(ctx, o, &u);
  if (!s) s = launch(ctx, o, k, &u, res);
  if (!s) s = compare(ctx, &u, res);
  ir_placement_free(&u.pd);
  hr_buf_free(ctx, &u.src, s);
  hr_buf_free(ctx, &u.dst, s);
  hr_buf_free(ctx, &u.out, s);
  free(u.ref);
  free(u.dsp);
  free(u.dst_init);
  free(u.got);
  return s;
}

/* bench: src and dst refilled with fresh data before every run; local tiles' slots buffer.  dst
 * and the slots hold the op's result dtype: their buffers are sized in src-dtype elements. */
rj_status hr_bench_tile(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, rj_kernel *k,
                        rj_bench_result *res) {
  const rj_tile *t = &req->u.tile;
  ir_placement pd = {0};
  ir_err e = {0};
  if (t->src.mem == RJ_MEM_LOCAL &&
      ir_place(&t->dst, t->scope == RJ_SCOPE_THREAD ? 1 : ir_scope_threads(t->scope), "dst", &pd,
               &e))
    return rj_error_set(ctx, e.status, "%s", e.msg);
  unsigned block[3];
  rj_kernel_dims(k, NULL, block, NULL);
  int64_t b = ir_dtype(t->dtype)->bytes, rb = ir_dtype(ir_tile_result(t))->bytes;
  int64_t n[3] = {ir_numel(&t->src), (ir_numel(&t->dst) * rb + b - 1) / b,
                  ((int64_t)block[0] * pd.nslots * rb + b - 1) / b};
  ir_placement_free(&pd);
  double bytes = (double)(n[0] * b + ir_numel(&t->dst) * rb);
  return hr_bench_kernel(ctx, o, k, t->dtype, 3, n, 2, bytes, res);
}
