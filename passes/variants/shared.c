/* reduction -> shared (seed 000): src and dst in shared memory.
 *
 * cta / warpgroup / warp: threads form groups of group_size = min(next_pow2(len), 32, threads)
 * lanes, one output per group and step; each lane folds a strided chunk of the reduced axis, then
 * a shfl.sync.bfly tree of width group_size folds the group; lane 0 writes; the scope's barrier
 * closes the op.  Unlike the reference, a thread count that is not a multiple of the group is
 * rejected, and when the reduction is longer than 32 and there are more warps than outputs,
 * W warps cooperate on one output through warp partials in shared scratch (a second level).
 * thread: the sequential loop.
 * The state ops (argmax argmin var std logsumexp; passes/state.h) fold a state where the others
 * fold a scalar: each field shuffled in the tree, the warp partials a state each; dst holds the
 * result (argmax / argmin: the i64 index in the reduction, row-major over the reduced dims).
 * Op custom calls the caller's combine where the others fold (f16 / bf16: a state of one field;
 * a struct state: each element lifted with its index in the reduction, dst in field result's
 * dtype).
 * With a non-commutative combine each lane folds a contiguous chunk of the reduced axis instead
 * of a strided one, and the trees keep lane order (st_tile_tree), so the result is fn over the
 * elements in index order: fn(lower, higher) at every step. */
#include "../state.h"

#include <stdio.h>

typedef struct plan {
  ir_tile_shape f;
  int T;   /* threads of the scope instance */
  int G;   /* lanes per group (single level) */
  int W;   /* warps per output (two levels), 0 when single level */
  int par; /* outputs in flight per step */
} plan;

static int64_t next_pow2(int64_t x) {
  int64_t p = 1;
  while (p < x)
    p <<= 1;
  return p;
}

static void make_plan(const rj_tile *t, plan *p) {
  ir_tile_facts(t, &p->f);
  p->T = p->f.scope_threads;
  int64_t g = next_pow2(p->f.reduce_len);
  if (g > 32) g = 32;
  if (g > p->T) g = p->T;
  p->G = (int)(g < 1 ? 1 : g);
  p->W = 0;
  p->par = p->T / p->G;
  if (t->scope != RJ_SCOPE_CTA && t->scope != RJ_SCOPE_WARPGROUP) return;
  if (p->f.reduce_len <= 32 || p->T % 32) return;
  int nwarps = p->T / 32;
  if (p->f.spatial_len >= nwarps) return;
  int64_t w = 1;
  while (w * 2 * p->f.spatial_len <= nwarps && w * 2 <= next_pow2((p->f.reduce_len + 31) / 32))
    w *= 2;
  if (w < 2) return;
  p->W = (int)w;
  p->par = nwarps / p->W;
}

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  (void)tg;
  const rj_tile *t = &r->u.tile;
  if (pass_need_mem(t, RJ_MEM_SHARED, buf, n)) return buf;
  plan p;
  make_plan(t, &p);
  if (t->scope != RJ_SCOPE_THREAD && p.T % p.G) {
    snprintf(buf, n, "threads: %d is not a multiple of the group size %d", p.T, p.G);
    return buf;
  }
  /* the harness's two arrays and, with two levels, the warp partials share 48 KiB */
  int64_t b = ir_dtype(t->dtype)->bytes, acc = pass_acc_bytes(t->dtype);
  int64_t bd = ir_dtype(ir_tile_result(t))->bytes;
  if (st_tile_on(t)) {
    st_req st = st_of_tile(t);
    acc = st_bytes(&st);
  }
  int64_t bytes = IR_ALIGN16(ir_numel(&t->src) * b) + IR_ALIGN16(ir_numel(&t->dst) * bd) +
                  (p.W ? IR_ALIGN16(p.T / 32 * acc) : 0);
  if (bytes > IR_STATIC_SHARED) {
    snprintf(buf, n,
             "src.shape: src, dst and the %d warps' partials take %lld bytes of shared memory; "
             "a CTA's static shared memory is 48 KiB",
             p.T / 32, (long long)bytes);
    return buf;
  }
  return NULL;
}

/* Lanes of this thread's warp that exist: all 32 unless the scope ends inside the warp. */
static LLVMValueRef member_mask(pass_emit *e, int T, LLVMValueRef tid) {
  if (T % 32 == 0) return pass_i32(e, -1);
  LLVMValueRef base = LLVMBuildAnd(e->B, tid, pass_i32(e, ~31), "");
  LLVMValueRef left = LLVMBuildSub(e->B, pass_i32(e, T), base, "");
  LLVMValueRef full = LLVMBuildICmp(e->B, LLVMIntSGE, left, pass_i32(e, 32), "");
  LLVMValueRef part = LLVMBuildSub(
      e->B, LLVMBuildShl(e->B, pass_i32(e, 1), LLVMBuildAnd(e->B, left, pass_i32(e, 31), ""), ""),
      pass_i32(e, 1), "");
  return LLVMBuildSelect(e->B, full, pass_i32(e, -1), part, "");
}

/* Op custom with a non-commutative combine: lanes fold contiguous chunks, trees keep order. */
static bool in_order(const rj_tile *t) {
  return t->op == RJ_OP_CUSTOM && !t->combine.commutative;
}

/* acc over the reduced elements red = k*stride + lane (k = 0, 1, ...) of output spa; in_order:
 * over the contiguous chunk [lane * c, lane * c + c) instead, c = ceil(len / stride). */
static LLVMValueRef gather(pass_emit *e, const rj_tile *t, const plan *p, const pass_tile_args *a,
                           LLVMValueRef valid, LLVMValueRef spa_off, LLVMValueRef lane,
                           int stride) {
  LLVMTypeRef ty = pass_type(e, t->dtype), acc_ty = st_tile_acc_type(e, t);
  LLVMValueRef acc = pass_entry_alloca(e, acc_ty, "acc");
  LLVMBuildStore(e->B, st_tile_identity(e, t), acc);
  bool red[RJ_MAX_DIMS];
  for (int d = 0; d < RJ_MAX_DIMS; d++)
    red[d] = p->f.reduced[d];
  pass_loop l;
  LLVMValueRef len = pass_i32(e, p->f.reduce_len);
  if (in_order(t)) {
    int64_t c = (p->f.reduce_len + stride - 1) / stride;
    LLVMValueRef from = LLVMBuildMul(e->B, lane, pass_i32(e, c), "");
    LLVMValueRef to = LLVMBuildAdd(e->B, from, pass_i32(e, c), "");
    to = LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, to, len, ""), to, len, "");
    pass_loop_begin(e, &l, from, to, pass_i32(e, 1));
  } else {
    pass_loop_begin(e, &l, lane, len, pass_i32(e, stride));
  }
  pass_if in;
  pass_if_begin(e, &in, valid);
  LLVMValueRef off =
      LLVMBuildAdd(e->B, spa_off, pass_region_offset(e, &t->src, red, l.i, false), "");
  LLVMValueRef x =
      pass_to_acc(e, LLVMBuildLoad2(e->B, ty, pass_gep(e, ty, a->src, off), ""), t->dtype);
  x = pass_map_one(e, t->fused.map, x); /* the fused map (none: x) */
  LLVMValueRef cur = LLVMBuildLoad2(e->B, acc_ty, acc, "");
  LLVMBuildStore(e->B, st_tile_fold(e, t, cur, x, l.i), acc);
  pass_if_end(e, &in);
  pass_loop_end(e, &l);
  return LLVMBuildLoad2(e->B, acc_ty, acc, "");
}

static LLVMValueRef spatial_offset(pass_emit *e, const rj_tile *t, const plan *p,
                                   LLVMValueRef spa) {
  bool keep[RJ_MAX_DIMS];
  for (int d = 0; d < RJ_MAX_DIMS; d++)
    keep[d] = !p->f.reduced[d];
  return pass_region_offset(e, &t->src, keep, spa, true);
}

/* dst[spa] = result (combined with the old value under accum; mean: divided by the reduced
 * length) */
static void store(pass_emit *e, const rj_tile *t, const pass_tile_args *a, LLVMValueRef spa,
                  LLVMValueRef v) {
  ir_tile_shape f;
  ir_tile_facts(t, &f);
  bool all[RJ_MAX_DIMS];
  for (int d = 0; d < RJ_MAX_DIMS; d++)
    all[d] = true;
  if (st_tile_on(t)) { /* no accum (validated) */
    st_req s = st_of_tile(t);
    LLVMTypeRef rty = pass_type(e, ir_tile_result(t));
    LLVMValueRef ptr = pass_gep(e, rty, a->dst, pass_region_offset(e, &t->dst, all, spa, true));
    LLVMBuildStore(e->B, st_finish(e, &s, v), ptr);
    return;
  }
  v = pass_mean(e, t->op, t->dtype, v, pass_i32(e, f.reduce_len));
  v = pass_epilogue(e, t->fused.epilogue, t->fused.scale,
                    v); /* none: v; not with accum (validated) */
  LLVMTypeRef ty = pass_type(e, t->dtype);
  LLVMValueRef ptr = pass_gep(e, ty, a->dst, pass_region_offset(e, &t->dst, all, spa, true));
  if (t->accum) {
    LLVMValueRef old = pass_to_acc(e, LLVMBuildLoad2(e->B, ty, ptr, ""), t->dtype);
    v = pass_fold(e, t->op, t->dtype, t->nan, v, old);
  }
  LLVMBuildStore(e->B, pass_from_acc(e, v, t->dtype), ptr);
}

static void emit_thread(pass_emit *e, const rj_tile *t, const plan *p, const pass_tile_args *a) {
  pass_loop l;
  pass_loop_begin(e, &l, pass_i32(e, 0), pass_i32(e, p->f.spatial_len), pass_i32(e, 1));
  LLVMValueRef v = gather(e, t, p, a, LLVMConstInt(LLVMInt1TypeInContext(e->C), 1, 0),
                          spatial_offset(e, t, p, l.i), pass_i32(e, 0), 1);
  store(e, t, a, l.i, v);
  pass_loop_end(e, &l);
}

/* Lane 0 of each group stores the group's result v, where spatial position spa is valid. */
static void store_lane0(pass_emit *e, const rj_tile *t, const pass_tile_args *a, LLVMValueRef valid,
                        LLVMValueRef lane, LLVMValueRef spa, LLVMValueRef v) {
  pass_if w;
  pass_if_begin(
      e, &w,
      LLVMBuildAnd(e->B, valid, LLVMBuildICmp(e->B, LLVMIntEQ, lane, pass_i32(e, 0), ""), ""));
  store(e, t, a, spa, v);
  pass_if_end(e, &w);
}

static void emit_single(pass_emit *e, const rj_tile *t, const plan *p, const pass_tile_args *a) {
  LLVMValueRef tid = a->tid;
  LLVMValueRef group = LLVMBuildUDiv(e->B, tid, pass_i32(e, p->G), "group");
  LLVMValueRef lane = LLVMBuildURem(e->B, tid, pass_i32(e, p->G), "lane");
  LLVMValueRef mm = member_mask(e, p->T, tid);
  int masks[5], n = 0;
  for (int m = 1; m < p->G; m <<= 1)
    masks[n++] = m;
  int64_t steps = (p->f.spatial_len + p->par - 1) / p->par;
  pass_loop l; /* a uniform trip count: every lane reaches every shuffle */
  pass_loop_begin(e, &l, pass_i32(e, 0), pass_i32(e, steps), pass_i32(e, 1));
  LLVMValueRef spa =
      LLVMBuildAdd(e->B, LLVMBuildMul(e->B, l.i, pass_i32(e, p->par), ""), group, "spa");
  LLVMValueRef valid = LLVMBuildICmp(e->B, LLVMIntULT, spa, pass_i32(e, p->f.spatial_len), "");
  LLVMValueRef v = gather(e, t, p, a, valid, spatial_offset(e, t, p, spa), lane, p->G);
  v = st_tile_tree(e, t, v, mm, masks, n, p->G);
  store_lane0(e, t, a, valid, lane, spa, v);
  pass_loop_end(e, &l);
}

static rj_status emit_two_level(pass_emit *e, const rj_tile *t, const plan *p,
                                const pass_tile_args *a) {
  int nwarps = p->T / 32, W = p->W;
  LLVMTypeRef acc_ty = st_tile_acc_type(e, t);
  LLVMValueRef scratch = pass_global_array(e, acc_ty, nwarps, AS_SHARED, "rj_partials");
  LLVMValueRef tid = a->tid;
  LLVMValueRef warp = LLVMBuildUDiv(e->B, tid, pass_i32(e, 32), "warp");
  LLVMValueRef lane = LLVMBuildURem(e->B, tid, pass_i32(e, 32), "lane");
  LLVMValueRef group = LLVMBuildUDiv(e->B, warp, pass_i32(e, W), "group");
  LLVMValueRef wi = LLVMBuildURem(e->B, warp, pass_i32(e, W), "");
  LLVMValueRef glane = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, wi, pass_i32(e, 32), ""), lane, "");
  LLVMValueRef full = pass_i32(e, -1);
  int masks[5] = {1, 2, 4, 8, 16}, n2 = 0;
  for (int m = 1; m < W; m <<= 1)
    n2++;
  int id = 0;
  if (t->scope == RJ_SCOPE_WARPGROUP && (id = pass_barrier_alloc(e)) < 0)
    return ir_fail(e->err, RJ_EUNSUPPORTED, "scope: all 15 named barriers are taken");
  int64_t steps = (p->f.spatial_len + p->par - 1) / p->par;
  pass_loop l;
  pass_loop_begin(e, &l, pass_i32(e, 0), pass_i32(e, steps), pass_i32(e, 1));
  LLVMValueRef spa =
      LLVMBuildAdd(e->B, LLVMBuildMul(e->B, l.i, pass_i32(e, p->par), ""), group, "spa");
  /* warps past par * W (when W does not divide the warp count) form no group: they only meet
   * the barriers */
  LLVMValueRef live = LLVMBuildICmp(e->B, LLVMIntULT, warp, pass_i32(e, p->par * W), "live");
  LLVMValueRef valid = LLVMBuildAnd(
      e->B, live, LLVMBuildICmp(e->B, LLVMIntULT, spa, pass_i32(e, p->f.spatial_len), ""), "");
  /* 1. each warp folds its share and leaves a partial */
  LLVMValueRef v = gather(e, t, p, a, valid, spatial_offset(e, t, p, spa), glane, 32 * W);
  v = st_tile_tree(e, t, v, full, masks, 5, 32);
  pass_if w0;
  pass_if_begin(e, &w0, LLVMBuildICmp(e->B, LLVMIntEQ, lane, pass_i32(e, 0), ""));
  LLVMBuildStore(e->B, v, pass_gep(e, acc_ty, scratch, warp));
  pass_if_end(e, &w0);
  if (t->scope == RJ_SCOPE_CTA)
    pass_barrier_cta(e);
  else
    pass_barrier_named(e, id, 128);
  /* 2. the group's first warp folds the W partials */
  pass_if first;
  pass_if_begin(e, &first, LLVMBuildICmp(e->B, LLVMIntEQ, wi, pass_i32(e, 0), ""));
  LLVMValueRef have =
      LLVMBuildAnd(e->B, live, LLVMBuildICmp(e->B, LLVMIntULT, lane, pass_i32(e, W), ""), "");
  LLVMValueRef idx = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, group, pass_i32(e, W), ""),
                                  LLVMBuildSelect(e->B, have, lane, pass_i32(e, 0), ""), "");
  LLVMValueRef part = LLVMBuildLoad2(e->B, acc_ty, pass_gep(e, acc_ty, scratch, idx), "");
  part = LLVMBuildSelect(e->B, have, part, st_tile_identity(e, t), "");
  part = st_tile_tree(e, t, part, full, masks, n2, W);
  store_lane0(e, t, a, valid, lane, spa, part);
  pass_if_end(e, &first);
  /* 3. the scratch is free again before the next step */
  if (t->scope == RJ_SCOPE_CTA)
    pass_barrier_cta(e);
  else
    pass_barrier_named(e, id, 128);
  pass_loop_end(e, &l);
  return RJ_OK;
}

static rj_status tile(pass_emit *e, const rj_tile *t, const pass_tile_args *a) {
  plan p;
  make_plan(t, &p);
  if (t->scope == RJ_SCOPE_THREAD) {
    emit_thread(e, t, &p, a);
    return RJ_OK;
  }
  if (p.W) return emit_two_level(e, t, &p, a); /* its last barrier closes the op */
  emit_single(e, t, &p, a);
  return pass_scope_barrier(e, t->scope);
}

const pass_variant pass_variant_shared = {
    .name = "shared",
    .prio = 10,
    .kind = RJ_KIND_TILE,
    .summary =
        "shared-memory tile: groups of lanes, shfl.sync.bfly tree, warps cooperate on long rows",
    .ops = PASS_OPS_SCALAR | ST_OPS | PASS_OP(RJ_OP_CUSTOM),
    .keeps_order = true, /* op custom, non-commutative: contiguous chunks, ordered trees */
    .accepts = accepts,
    .plan = pass_tile_plan,
    .kernel = PASS_EMIT(pass_tile_kernel),
    .tile = PASS_EMIT(tile),
};
