/* The kernel around a tile primitive, so that a tile request is one runnable module:
 *   shared: global src/dst -> shared copies, barrier, the primitive (only the active instance),
 *           barrier, shared dst -> global dst.  Params (src, dst).
 *   local:  each thread loads its register slots from global through a placement table, the
 *           primitive runs, every thread dumps its dst slots to out[tid * nslots + slot].
 *           Params (src, dst_init, out).
 * dst (and out) hold the op's result dtype (argmax / argmin: i64 indices).
 * The host side (jit/check.c) recomputes the same placements to check the dump. */
#include "passes.h"

#include <stdlib.h>

static LLVMValueRef active_cond(pass_emit *e, const rj_tile *t, LLVMValueRef tid, int T) {
  if (t->active == RJ_ACTIVE_ALL) return NULL;
  LLVMValueRef inst = LLVMBuildUDiv(e->B, tid, pass_i32(e, T), "");
  return LLVMBuildICmp(e->B, LLVMIntEQ, inst, pass_i32(e, t->active_index), "active");
}

static void copy(pass_emit *e, LLVMTypeRef ty, LLVMValueRef to, LLVMValueRef from, int64_t n,
                 LLVMValueRef tid, int threads) {
  pass_loop l;
  pass_loop_begin(e, &l, tid, pass_i32(e, n), pass_i32(e, threads));
  LLVMValueRef v = LLVMBuildLoad2(e->B, ty, pass_gep(e, ty, from, l.i), "");
  LLVMBuildStore(e->B, v, pass_gep(e, ty, to, l.i));
  pass_loop_end(e, &l);
}

/* slot[j] = g[max(table[row + j], 0)]; table NULL: the identity table, g[row + j] */
static void load_slot(pass_emit *e, LLVMTypeRef ty, LLVMValueRef table, LLVMValueRef row,
                      LLVMValueRef g, LLVMValueRef slots, LLVMValueRef j) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C);
  LLVMValueRef ix = LLVMBuildAdd(e->B, row, j, "");
  if (table) {
    ix = LLVMBuildLoad2(e->B, i32, pass_gep(e, i32, table, ix), "");
    LLVMValueRef neg = LLVMBuildICmp(e->B, LLVMIntSLT, ix, pass_i32(e, 0), "");
    ix = LLVMBuildSelect(e->B, neg, pass_i32(e, 0), ix, "");
  }
  LLVMValueRef v = LLVMBuildLoad2(e->B, ty, pass_gep(e, ty, g, ix), "");
  LLVMBuildStore(e->B, v, pass_gep(e, ty, slots, j));
}

/* slot[j] = g[table[t * n + j]] for every slot: unrolled (constant j: the slots stay in
 * registers), or one loop when the tile is looped (ir_local_unrolled).  An identity table (as in
 * thread scope without a layout) is left out: its entry is its index, so slot[j] = g[t * n + j] --
 * the same value without the table's load, clamp and address arithmetic, and a small module for O3
 * (alias queries between the table's loads and g's were most of GVN's time here). */
static LLVMValueRef load_slots(pass_emit *e, LLVMTypeRef ty, const ir_placement *pl, LLVMValueRef g,
                               LLVMValueRef t, bool looped, const char *name) {
  int64_t n = (int64_t)pl->nthreads * pl->nslots;
  bool identity = true;
  for (int64_t i = 0; i < n && identity; i++)
    identity = pl->elem[i] == i;
  LLVMValueRef table = NULL;
  if (!identity) {
    int32_t *tab = malloc(sizeof(int32_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
      tab[i] = (int32_t)pl->elem[i];
    table = pass_const_table_i32(e, tab, n, name);
    free(tab);
  }
  LLVMValueRef slots = pass_entry_alloca(e, LLVMArrayType2(ty, (uint64_t)pl->nslots), name);
  /* t < pl->nthreads at the plan's launch: one thread's identity row is row 0 */
  LLVMValueRef row = identity && pl->nthreads == 1
                         ? pass_i32(e, 0)
                         : LLVMBuildMul(e->B, t, pass_i32(e, pl->nslots), "");
  if (looped) {
    pass_loop l;
    pass_loop_begin(e, &l, pass_i32(e, 0), pass_i32(e, pl->nslots), pass_i32(e, 1));
    load_slot(e, ty, table, row, g, slots, l.i);
    pass_loop_end(e, &l);
  }
  for (int64_t j = 0; !looped && j < pl->nslots; j++)
    load_slot(e, ty, table, row, g, slots, pass_i32(e, j));
  return slots;
}

/* out[tid * nslots + j] = dst slot j, for every slot (unrolled, or one loop) */
static void dump_slots(pass_emit *e, LLVMTypeRef ty, int nslots, LLVMValueRef dst, LLVMValueRef out,
                       LLVMValueRef tid, bool looped) {
  LLVMValueRef row = LLVMBuildMul(e->B, tid, pass_i32(e, nslots), "");
  pass_loop l;
  if (looped) pass_loop_begin(e, &l, pass_i32(e, 0), pass_i32(e, nslots), pass_i32(e, 1));
  for (int64_t j = 0; j < (looped ? 1 : nslots); j++) {
    LLVMValueRef jv = looped ? l.i : pass_i32(e, j);
    LLVMValueRef x = LLVMBuildLoad2(e->B, ty, pass_gep(e, ty, dst, jv), "");
    LLVMBuildStore(e->B, x, pass_gep(e, ty, out, LLVMBuildAdd(e->B, row, jv, "")));
  }
  if (looped) pass_loop_end(e, &l);
}

rj_status pass_tile_plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  (void)env;
  ir_tile_shape f;
  ir_tile_facts(&r->u.tile, &f);
  for (int i = 0; i < 3; i++)
    out->grid[i] = out->block[i] = 1;
  out->block[0] = (unsigned)f.threads;
  out->shared_bytes = 0; /* static shared memory: nothing to ask for at launch */
  return RJ_OK;
}

rj_status pass_tile_kernel(pass_emit *e, const rj_request *r, const pass_variant *v) {
  const rj_tile *t = &r->u.tile;
  ir_tile_shape f;
  ir_tile_facts(t, &f);
  bool local = t->src.mem == RJ_MEM_LOCAL;
  LLVMTypeRef ty = pass_type(e, t->dtype), dty = pass_type(e, ir_tile_result(t));
  LLVMTypeRef gptr = LLVMPointerTypeInContext(e->C, AS_GLOBAL);
  LLVMTypeRef params[3] = {gptr, gptr, gptr};
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(e->C), params, local ? 3 : 2, 0);
  e->entry = "redjit_tile";
  e->fn = LLVMAddFunction(e->M, e->entry, fty);
  LLVMSetFunctionCallConv(e->fn, LLVMPTXKernelCallConv);
  LLVMPositionBuilderAtEnd(e->B, LLVMAppendBasicBlockInContext(e->C, e->fn, "entry"));
  int threads = f.threads, T = t->scope == RJ_SCOPE_CTA ? threads : ir_scope_threads(t->scope);
  LLVMValueRef tid = pass_tid_x(e);
  LLVMValueRef tin = T == threads ? tid : LLVMBuildURem(e->B, tid, pass_i32(e, T), "tid_in_scope");
  LLVMValueRef gsrc = LLVMGetParam(e->fn, 0), gdst = LLVMGetParam(e->fn, 1);
  rj_status s = RJ_OK;
  if (!local) {
    int64_t ns = ir_numel(&t->src), nd = ir_numel(&t->dst);
    LLVMValueRef ssrc = pass_global_array(e, ty, ns, AS_SHARED, "rj_src");
    LLVMValueRef sdst = pass_global_array(e, dty, nd, AS_SHARED, "rj_dst");
    copy(e, ty, ssrc, gsrc, ns, tid, threads);
    copy(e, dty, sdst, gdst, nd, tid, threads);
    pass_barrier_cta(e);
    LLVMValueRef on = active_cond(e, t, tid, T);
    pass_if act;
    if (on) pass_if_begin(e, &act, on);
    pass_tile_args a = {ssrc, sdst, tin};
    s = v->tile(e, t, &a);
    if (on) pass_if_end(e, &act);
    pass_barrier_cta(e);
    copy(e, dty, gdst, sdst, nd, tid, threads);
  } else {
    int Ts = t->scope == RJ_SCOPE_THREAD ? 1 : T;
    ir_placement ps = {0}, pd = {0};
    if ((s = ir_place(&t->src, Ts, "src", &ps, e->err)) ||
        (s = ir_place(&t->dst, Ts, "dst", &pd, e->err))) {
      ir_placement_free(&ps);
      return s;
    }
    LLVMValueRef on = active_cond(e, t, tid, T);
    pass_if act;
    if (on) pass_if_begin(e, &act, on);
    bool looped = !ir_local_unrolled((int64_t)ps.nslots + pd.nslots);
    LLVMValueRef src = load_slots(e, ty, &ps, gsrc, tin, looped, "rj_src_slots");
    LLVMValueRef dst = load_slots(e, dty, &pd, gdst, tin, looped, "rj_dst_slots");
    pass_tile_args a = {src, dst, tin};
    s = v->tile(e, t, &a);
    dump_slots(e, dty, pd.nslots, dst, LLVMGetParam(e->fn, 2), tid, looped);
    if (on) pass_if_end(e, &act);
    ir_placement_free(&ps);
    ir_placement_free(&pd);
  }
  LLVMBuildRetVoid(e->B);
  return s;
}
