/* reduction -> local (seed 001): src and dst in registers.
 *
 * Each thread first folds its own register slots that belong to an output, then a
 * shfl.sync.bfly tree runs over exactly the lane bits being reduced.  Thread scope is the same
 * with no lane bits: a sequential fold.  The layouts are enumerated (ir_place): the lane bits are
 * read off the placement, and before emitting anything the plan is proved — for every thread
 * and every destination slot, the slots it folds across its butterfly coset are exactly the
 * source elements of that output, each once.  A layout the proof rejects is declined with the
 * reason.  accum is honoured on every path (the reference ignores it on the shuffle path). */
#include "local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef pass_local_plan plan;

void pass_local_plan_free(plan *p) {
  if (p->fold)
    for (int j = 0; j < p->pd.nslots; j++)
      free(p->fold[j]);
  free(p->fold);
  free(p->write);
  ir_placement_free(&p->ps);
  ir_placement_free(&p->pd);
}

#define FAIL(...) snprintf(why, n, __VA_ARGS__)

/* The analysis's tables: the output of every src element (sp) and dst element (dsp), -1 for
 * none; scratch marks; a slot list. */
typedef struct owners {
  ir_tile_shape f;
  int64_t ns, nd, nsrc, ndst;
  int64_t *sp, *dsp, *mark;
  int32_t *list;
} owners;

/* 1. the output each element belongs to */
static void find_owners(const rj_tile *t, owners *o) {
  for (int64_t x = 0; x < o->nsrc; x++)
    o->sp[x] = -1;
  for (int64_t y = 0; y < o->ndst; y++)
    o->dsp[y] = -1;
  for (int64_t s = 0; s < o->f.spatial_len; s++) {
    for (int64_t r = 0; r < o->f.reduce_len; r++)
      o->sp[ir_src_offset(t, s, r)] = s;
    o->dsp[ir_dst_offset(t, s)] = s;
  }
}

/* Whether thread bit b separates two elements of one output. */
static bool bit_reduced(const plan *p, const owners *o, int b) {
  int64_t ns = o->ns, *sp = o->sp, *mark = o->mark;
  bool reduced = false;
  for (int64_t s = 0; s < o->f.spatial_len; s++)
    mark[s] = -1;
  for (int u = 0; u < p->T && !reduced; u++) {
    if (u & b) continue;
    for (int64_t j = 0; j < ns; j++) {
      int64_t x = p->ps.elem[(u ^ b) * ns + j];
      if (x >= 0 && sp[x] >= 0) mark[sp[x]] = x;
    }
    for (int64_t j = 0; j < ns && !reduced; j++) {
      int64_t x = p->ps.elem[u * ns + j];
      if (x >= 0 && sp[x] >= 0 && mark[sp[x]] >= 0 && mark[sp[x]] != x) reduced = true;
    }
    for (int64_t j = 0; j < ns; j++) {
      int64_t x = p->ps.elem[(u ^ b) * ns + j];
      if (x >= 0 && sp[x] >= 0) mark[sp[x]] = -1;
    }
  }
  return reduced;
}

/* 2. the thread bits across which an output's elements are spread */
static bool find_masks(plan *p, const owners *o, char *why, size_t n) {
  for (int b = 1; b < p->T; b <<= 1) {
    if (!bit_reduced(p, o, b)) continue;
    if (b >= 32) {
      FAIL("src.layout: the reduction crosses warps (thread bit %d); a warpgroup's register "
           "reduction across warps needs shared memory (use the shared variant)",
           b);
      return false;
    }
    p->masks[p->nmask++] = b;
  }
  return true;
}

/* 4. the proof: the coset of thread u folds exactly output s's elements (its slots S[0 .. nS)),
 * each once */
static bool prove_coset(const plan *p, const owners *o, int u, const int32_t *S, int64_t nS,
                        int64_t s, char *why, size_t n) {
  for (int64_t x = 0; x < o->nsrc; x++)
    o->mark[x] = -1;
  int64_t count = 0;
  for (int c = 0; c < 1 << p->nmask; c++) {
    int v = u;
    for (int i = 0; i < p->nmask; i++)
      if (c & (1 << i)) v ^= p->masks[i];
    for (int64_t i = 0; i < nS; i++) {
      int64_t x = p->ps.elem[v * o->ns + S[i]];
      if (x < 0 || o->sp[x] != s) {
        FAIL("src.layout: thread %d slot %d does not hold an element of output %lld, yet "
             "the butterfly over lane bits would fold it",
             v, S[i], (long long)s);
        return false;
      }
      if (o->mark[x] >= 0) {
        FAIL("src.layout: element %lld would be folded twice into output %lld (is it "
             "replicated across the reduced lanes?)",
             (long long)x, (long long)s);
        return false;
      }
      o->mark[x] = 1;
      count++;
    }
  }
  if (count != o->f.reduce_len) {
    FAIL("src.layout: output %lld would fold %lld elements, not %lld", (long long)s,
         (long long)count, (long long)o->f.reduce_len);
    return false;
  }
  return true;
}

/* 3. dst slot jd: the src slots to fold, the same for every thread, and who writes */
static bool plan_slot(plan *p, const owners *o, int64_t jd, char *why, size_t n) {
  int32_t *S = NULL;
  int64_t nS = 0, ns = o->ns;
  for (int u = 0; u < p->T; u++) {
    int64_t y = p->pd.elem[u * o->nd + jd];
    if (y < 0 || o->dsp[y] < 0) continue;
    int64_t s = o->dsp[y], k = 0;
    for (int64_t j = 0; j < ns; j++) {
      int64_t x = p->ps.elem[u * ns + j];
      if (x >= 0 && o->sp[x] == s) o->list[k++] = (int32_t)j;
    }
    if (!S) {
      if (!(S = malloc(sizeof(int32_t) * (size_t)(k + 1)))) return FAIL("out of memory"), false;
      memcpy(S, o->list, sizeof(int32_t) * (size_t)k);
      S[k] = -1;
      nS = k;
      p->fold[jd] = S;
    } else if (k != nS || memcmp(S, o->list, sizeof(int32_t) * (size_t)k) != 0) {
      FAIL("dst.layout: threads 0..%d would fold different register slots into dst slot %lld "
           "(thread %d differs); such layouts are not supported",
           p->T - 1, (long long)jd, u);
      return false;
    }
    p->write[jd][u / 32] |= 1u << (u % 32);
    if (!prove_coset(p, o, u, S, nS, s, why, n)) return false;
  }
  return true;
}

/* 5. every output must be written by someone */
static bool all_written(const rj_tile *t, const plan *p, const owners *o, char *why, size_t n) {
  for (int64_t s = 0; s < o->f.spatial_len; s++) {
    bool held = false;
    int64_t y = ir_dst_offset(t, s);
    for (int64_t i = 0; i < (int64_t)p->T * o->nd && !held; i++)
      held = p->pd.elem[i] == y;
    if (!held) {
      FAIL("dst.layout: no thread holds destination element %lld", (long long)y);
      return false;
    }
  }
  return true;
}

/* Builds and proves the plan; false with the reason in why. */
bool pass_local_analyze(const rj_tile *t, plan *p, char *why, size_t n) {
  memset(p, 0, sizeof *p);
  owners o = {0};
  ir_tile_facts(t, &o.f);
  p->T = t->scope == RJ_SCOPE_THREAD ? 1 : o.f.scope_threads;
  ir_err e = {0};
  if (ir_place(&t->src, p->T, "src", &p->ps, &e) || ir_place(&t->dst, p->T, "dst", &p->pd, &e)) {
    FAIL("%s", e.msg);
    return false;
  }
  o.ns = p->ps.nslots, o.nd = p->pd.nslots, o.nsrc = ir_numel(&t->src);
  o.ndst = ir_numel(&t->dst);
  o.sp = malloc(sizeof(int64_t) * (size_t)o.nsrc);
  o.dsp = malloc(sizeof(int64_t) * (size_t)o.ndst);
  o.mark = malloc(sizeof(int64_t) * (size_t)(o.f.spatial_len > o.nsrc ? o.f.spatial_len : o.nsrc));
  o.list = malloc(sizeof(int32_t) * (size_t)(o.ns + 1));
  p->fold = calloc((size_t)o.nd, sizeof *p->fold);
  p->write = calloc((size_t)o.nd, sizeof *p->write);
  bool ok = o.sp && o.dsp && o.mark && o.list && p->fold && p->write;
  if (!ok) FAIL("out of memory");
  if (ok) find_owners(t, &o);
  ok = ok && find_masks(p, &o, why, n);
  for (int64_t jd = 0; ok && jd < o.nd; jd++)
    ok = plan_slot(p, &o, jd, why, n);
  ok = ok && all_written(t, p, &o, why, n);
  free(o.sp);
  free(o.dsp);
  free(o.mark);
  free(o.list);
  return ok;
}

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  (void)tg;
  const rj_tile *t = &r->u.tile;
  if (pass_need_mem(t, RJ_MEM_LOCAL, buf, n)) return buf;
  plan p;
  bool ok = pass_local_analyze(t, &p, buf, n);
  pass_local_plan_free(&p);
  return ok ? NULL : buf;
}

static LLVMValueRef slot_ptr(pass_emit *e, LLVMTypeRef ty, LLVMValueRef base, int64_t j) {
  return pass_gep(e, ty, base, pass_i32(e, j));
}

/* 1 when this thread's bit is set in the T-bit mask w */
static LLVMValueRef thread_bit(pass_emit *e, const uint32_t w[4], int T, LLVMValueRef tid) {
  LLVMValueRef word = pass_i32(e, (int32_t)w[0]);
  for (int k = 1; k < (T + 31) / 32; k++) {
    LLVMValueRef is = LLVMBuildICmp(e->B, LLVMIntEQ, LLVMBuildLShr(e->B, tid, pass_i32(e, 5), ""),
                                    pass_i32(e, k), "");
    word = LLVMBuildSelect(e->B, is, pass_i32(e, (int32_t)w[k]), word, "");
  }
  LLVMValueRef bit = LLVMBuildLShr(e->B, word, LLVMBuildAnd(e->B, tid, pass_i32(e, 31), ""), "");
  return LLVMBuildTrunc(e->B, bit, LLVMInt1TypeInContext(e->C), "");
}

rj_status pass_local_emit(pass_emit *e, const rj_tile *t, const pass_tile_args *a, const plan *p,
                          pass_local_cross cross) {
  LLVMTypeRef ty = pass_type(e, t->dtype);
  uint32_t all[4] = {0};
  for (int u = 0; u < p->T; u++)
    all[u / 32] |= 1u << (u % 32);
  for (int64_t jd = 0; jd < p->pd.nslots; jd++) {
    if (!p->fold[jd]) continue;
    LLVMValueRef acc = pass_identity(e, t->op, t->dtype);
    for (const int32_t *j = p->fold[jd]; *j >= 0; j++) {
      LLVMValueRef x = LLVMBuildLoad2(e->B, ty, slot_ptr(e, ty, a->src, *j), "");
      acc = pass_fold(e, t->op, t->dtype, t->nan, acc, pass_to_acc(e, x, t->dtype));
    }
    if (cross)
      acc = cross(e, t, p, acc);
    else
      acc =
          pass_bfly_tree(e, t->op, t->dtype, t->nan, acc, pass_i32(e, -1), p->masks, p->nmask, 32);
    LLVMValueRef dptr = slot_ptr(e, ty, a->dst, jd);
    bool everyone = memcmp(p->write[jd], all, sizeof all) == 0;
    pass_if w;
    if (!everyone) pass_if_begin(e, &w, thread_bit(e, p->write[jd], p->T, a->tid));
    if (t->accum)
      acc = pass_fold(e, t->op, t->dtype, t->nan, acc,
                      pass_to_acc(e, LLVMBuildLoad2(e->B, ty, dptr, ""), t->dtype));
    LLVMBuildStore(e->B, pass_from_acc(e, acc, t->dtype), dptr);
    if (!everyone) pass_if_end(e, &w);
  }
  return RJ_OK;
}

static rj_status tile(pass_emit *e, const rj_tile *t, const pass_tile_args *a) {
  plan p;
  char why[512];
  if (!pass_local_analyze(t, &p, why, sizeof why)) {
    pass_local_plan_free(&p);
    return ir_fail(e->err, RJ_ENOVARIANT, "local: %s", why);
  }
  rj_status s = pass_local_emit(e, t, a, &p, NULL);
  pass_local_plan_free(&p);
  return s;
}

const pass_variant pass_variant_local = {
    .name = "local",
    .prio = 10,
    .kind = RJ_KIND_TILE,
    .summary = "register tile: per-thread fold, then shfl.sync.bfly over the reduced lane bits",
    .accepts = accepts,
    .kernel = PASS_EMIT(pass_tile_kernel),
    .tile = PASS_EMIT(tile),
};
