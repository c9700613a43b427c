/* tensor_multi: a list of N 1-D tensors (a list request, rj_reduce_multi) in one launch.
 *
 * The kernel is redjit_tensor(table, dst, total, i64 n): table holds n rj_multi_entry records
 * (ptr, len, stride, reserved) in device memory, so one kernel serves every list of its count
 * class, whatever the lengths.  Each tensor is cut into chunks by its own length alone (at least
 * MULTI_CHUNK elements, at most MULTI_PARTS chunks); a persistent grid of CTAs takes chunks in
 * order from a ticket counter.  Every CTA first builds the prefix of the chunk counts in shared
 * memory (so a chunk finds its tensor by a binary search).  A chunk's CTA folds its elements
 * (thread i: i, i + T, ... in U accumulators, then a fixed tree) into one partial; the CTA that
 * finishes a tensor's last chunk folds its partials in chunk order (a strided fold and the same
 * tree) and writes the tensor's output; the last CTA to leave folds the tensors' values in
 * tensor order into the total.  So every result depends only on its tensor's elements and length
 * (the total: on every tensor's value and N), never on the other tensors, the grid or timing.
 * Under "invariant": true (an op whose result depends on the order of its combines) every chunk
 * is folded by element loads (fold_chunk), whatever the tensor's stride and alignment: a
 * tensor's tree then depends on its length and the dtype alone (docs/INVARIANCE.md). */
#include "../tensor.h"

#include <stdio.h>
#include <string.h>

#define MULTI_T 256       /* threads per CTA */
#define MULTI_CTAS 3      /* CTAs per SM (85 registers a thread: the vector path without spills) */
#define MULTI_CHUNK 16384 /* elements per chunk, at least */
#define MULTI_PARTS 256   /* chunks per tensor, at most (a longer tensor gets longer chunks) */
#define MULTI_ALIGN 1024  /* chunk lengths are multiples of this */
#define MULTI_ENTRY 4     /* i64 fields per table entry (rj_multi_entry) */

typedef struct multi_plan {
  int C;   /* the count class: tensors at most (sizes the shared prefix and the workspace) */
  int U;   /* loads in flight per thread */
  int inv; /* invariant: element loads only (no 16-byte vectors where aligned) */
} multi_plan;
_Static_assert(sizeof(multi_plan) <= PASS_PLAN_PRIV, "multi_plan fits the plan");

static int count_class(int64_t n) {
  return n <= 256 ? 256 : n <= 2048 ? 2048 : IR_LIST_MAX;
}

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  (void)r, (void)tg, (void)buf, (void)n;
  return NULL; /* the registry gives it list requests only; validation checked their fields */
}

static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  const rj_tensor *t = &r->u.tensor;
  int bytes = ir_dtype(t->dtype)->bytes;
  multi_plan p = {.C = count_class(t->list_count), .U = bytes >= 8 ? 2 : 8};
  p.inv = pass_fixed_tree(r);
  int64_t grid = (int64_t)tns_sms(env->sms(env)) * MULTI_CTAS;
  tns_plan_geometry(out, (unsigned)grid, MULTI_T);
  snprintf(
      out->key, sizeof out->key,
      "tensor_multi C=%d U=%d op=%s dtype=%s nan=%d map=%d epi=%d scale=%.17g f64=%d total=%d%s",
      p.C, p.U, ir_op_name(t->op), ir_dtype(t->dtype)->name, t->nan, t->fused.map,
      t->fused.epilogue, t->fused.scale, t->acc_f64, t->list_total, p.inv ? " inv" : "");
  snprintf(out->note, sizeof out->note,
           " (list: count class %d, table and n are kernel parameters; chunks of >= %d "
           "elements, <= %d per tensor; grid %lld x %d; partials and counters in the module%s)",
           p.C, MULTI_CHUNK, MULTI_PARTS, (long long)grid, MULTI_T,
           p.inv ? "; invariant: element loads in index order" : "");
  memcpy(out->priv.bytes, &p, sizeof p);
  return RJ_OK;
}

#ifndef RJ_PLAN_ONLY
/* What the emitter's pieces share. */
typedef struct mk {
  pass_emit *e;
  const rj_tensor *t;
  multi_plan p;
  LLVMTypeRef i32, i64, acc;
  LLVMValueRef table, dst, total, n, n32, tid, tid64;
  LLVMValueRef pre;             /* shared i32 [C + 1]: chunk-count prefix */
  LLVMValueRef part, cnt, tval; /* global: partials, per-tensor counters, per-tensor values */
  LLVMValueRef ticket, done;    /* global i32 counters */
} mk;

static LLVMValueRef c32(mk *k, int64_t v) {
  return pass_i32(k->e, v);
}
static LLVMValueRef c64(mk *k, int64_t v) {
  return tns_i64(k->e, v);
}
static LLVMValueRef is_t0(mk *k) {
  return LLVMBuildICmp(k->e->B, LLVMIntEQ, k->tid, c32(k, 0), "");
}

static void begin(mk *k) {
  pass_emit *e = k->e;
  LLVMTypeRef gptr = LLVMPointerTypeInContext(e->C, AS_GLOBAL);
  LLVMTypeRef params[4] = {gptr, gptr, gptr, k->i64};
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(e->C), params, 4, 0);
  e->entry = "redjit_tensor";
  e->fn = LLVMAddFunction(e->M, e->entry, fty);
  LLVMSetFunctionCallConv(e->fn, LLVMPTXKernelCallConv);
  LLVMPositionBuilderAtEnd(e->B, LLVMAppendBasicBlockInContext(e->C, e->fn, "entry"));
  k->table = LLVMGetParam(e->fn, 0);
  k->dst = LLVMGetParam(e->fn, 1);
  k->total = LLVMGetParam(e->fn, 2);
  /* n taken in 0 .. C: a kernel launched by hand (rj_kernel_launch) with a larger n would index
   * the shared prefix and the workspace past their C tensors */
  LLVMValueRef n = LLVMGetParam(e->fn, 3);
  n = LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, n, c64(k, 0), ""), c64(k, 0), n, "");
  k->n = tns_min64(e, n, c64(k, k->p.C));
  k->n32 = LLVMBuildTrunc(e->B, k->n, k->i32, "n32");
  e->nparams = 0; /* n is no plan size parameter: rj_reduce_multi passes it */
  tns_launch_bounds(e, MULTI_T, MULTI_CTAS);
  k->tid = pass_tid_x(e);
  k->tid64 = LLVMBuildZExt(e->B, k->tid, k->i64, "");
  int64_t C = k->p.C;
  k->pre = pass_global_array(e, k->i32, C + 1, AS_SHARED, "rj_pre");
  k->part = pass_global_array(e, k->acc, C * MULTI_PARTS, AS_GLOBAL, "rj_ws_part");
  k->cnt = pass_global_array(e, k->i32, C, AS_GLOBAL, "rj_ws_count");
  k->tval = k->t->list_total ? pass_global_array(e, k->acc, C, AS_GLOBAL, "rj_ws_value") : NULL;
  k->ticket = pass_global_array(e, k->i32, 1, AS_GLOBAL, "rj_ws_ticket");
  k->done = pass_global_array(e, k->i32, 1, AS_GLOBAL, "rj_ws_done");
}

/* field f (0 ptr, 1 len, 2 stride) of table entry i (i64) */
static LLVMValueRef entry_field(mk *k, LLVMValueRef i, int f) {
  LLVMValueRef ix =
      LLVMBuildAdd(k->e->B, LLVMBuildMul(k->e->B, i, c64(k, MULTI_ENTRY), ""), c64(k, f), "");
  LLVMValueRef v = LLVMBuildLoad2(k->e->B, k->i64, pass_gep(k->e, k->i64, k->table, ix), "");
  LLVMSetAlignment(v, 8); /* rj_multi_entry's fields: one 8-byte load each */
  return v;
}

/* tensor i's length, taken in 0 .. 2^46 (a negative or huge length in the table reads no more
 * than that, and keeps every chunk index within the workspace) */
static LLVMValueRef entry_len(mk *k, LLVMValueRef i) {
  LLVMBuilderRef B = k->e->B;
  LLVMValueRef len = entry_field(k, i, 1);
  len = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, len, c64(k, 0), ""), c64(k, 0), len, "");
  return tns_min64(k->e, len, c64(k, IR_MAX_SPAN));
}

/* a tensor's chunk length: max(MULTI_CHUNK, ceil(len / MULTI_PARTS) rounded up to MULTI_ALIGN) */
static LLVMValueRef chunk_len(mk *k, LLVMValueRef len) {
  LLVMBuilderRef B = k->e->B;
  int64_t q = (int64_t)MULTI_PARTS * MULTI_ALIGN;
  LLVMValueRef c = LLVMBuildUDiv(B, LLVMBuildAdd(B, len, c64(k, q - 1), ""), c64(k, q), "");
  c = LLVMBuildMul(B, c, c64(k, MULTI_ALIGN), "");
  LLVMValueRef small = LLVMBuildICmp(B, LLVMIntSLT, c, c64(k, MULTI_CHUNK), "");
  return LLVMBuildSelect(B, small, c64(k, MULTI_CHUNK), c, "chunk");
}

/* chunks of a tensor: ceil(len / chunk), and 1 for an empty one (it writes the identity) */
static LLVMValueRef nchunks(mk *k, LLVMValueRef len) {
  LLVMBuilderRef B = k->e->B;
  LLVMValueRef cl = chunk_len(k, len);
  LLVMValueRef c =
      LLVMBuildUDiv(B, LLVMBuildAdd(B, len, LLVMBuildSub(B, cl, c64(k, 1), ""), ""), cl, "");
  LLVMValueRef zero = LLVMBuildICmp(B, LLVMIntEQ, c, c64(k, 0), "");
  return LLVMBuildSelect(B, zero, c64(k, 1), c, "nch");
}

static LLVMValueRef pre_at(mk *k, LLVMValueRef i32v) {
  return pass_gep(k->e, k->i32, k->pre, i32v);
}

/* pre[t + 1] = chunks of tensor t, pre[0] = 0 */
static void prefix_counts(mk *k) {
  pass_emit *e = k->e;
  pass_if z;
  pass_if_begin(e, &z, is_t0(k));
  LLVMBuildStore(e->B, c32(k, 0), pre_at(k, c32(k, 0)));
  pass_if_end(e, &z);
  pass_loop l;
  pass_loop_begin(e, &l, k->tid64, k->n, c64(k, MULTI_T));
  LLVMValueRef c = LLVMBuildTrunc(e->B, nchunks(k, entry_len(k, l.i)), k->i32, "");
  LLVMValueRef at = LLVMBuildTrunc(e->B, LLVMBuildAdd(e->B, l.i, c64(k, 1), ""), k->i32, "");
  LLVMBuildStore(e->B, c, pre_at(k, at));
  pass_loop_end(e, &l);
  pass_barrier_cta(e);
}

/* warp 0: sums[0 .. T) (i32, shared) replaced by their exclusive prefix */
static void scan_sums(mk *k, LLVMValueRef sums) {
  pass_emit *e = k->e;
  const int per = MULTI_T / 32;
  pass_if w;
  pass_if_begin(e, &w, LLVMBuildICmp(e->B, LLVMIntULT, k->tid, c32(k, 32), ""));
  LLVMValueRef base = LLVMBuildMul(e->B, k->tid, c32(k, per), "");
  LLVMValueRef v = c32(k, 0), x[MULTI_T / 32];
  for (int i = 0; i < per; i++) {
    x[i] = LLVMBuildLoad2(e->B, k->i32,
                          pass_gep(e, k->i32, sums, LLVMBuildAdd(e->B, base, c32(k, i), "")), "");
    v = LLVMBuildAdd(e->B, v, x[i], "");
  }
  LLVMValueRef incl = v;
  for (int d = 1; d < 32; d *= 2) {
    LLVMValueRef a[4] = {c32(k, -1), incl, c32(k, d), c32(k, 0)};
    LLVMValueRef up = pass_call(e, "llvm.nvvm.shfl.sync.up.i32", NULL, 0, a, 4);
    LLVMValueRef ok = LLVMBuildICmp(e->B, LLVMIntUGE, k->tid, c32(k, d), "");
    incl = LLVMBuildAdd(e->B, incl, LLVMBuildSelect(e->B, ok, up, c32(k, 0), ""), "");
  }
  LLVMValueRef run = LLVMBuildSub(e->B, incl, v, "");
  for (int i = 0; i < per; i++) {
    LLVMBuildStore(e->B, run, pass_gep(e, k->i32, sums, LLVMBuildAdd(e->B, base, c32(k, i), "")));
    run = LLVMBuildAdd(e->B, run, x[i], "");
  }
  pass_if_end(e, &w);
  pass_barrier_cta(e);
}

/* pre[1 .. n] becomes the inclusive prefix: thread i scans its block of q entries */
static void prefix_scan(mk *k) {
  pass_emit *e = k->e;
  const int q = (k->p.C + MULTI_T - 1) / MULTI_T;
  LLVMValueRef sums = pass_global_array(e, k->i32, MULTI_T, AS_SHARED, "rj_sums");
  LLVMValueRef lo = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, k->tid, c32(k, q), ""), c32(k, 1), "");
  LLVMValueRef hi = LLVMBuildAdd(e->B, lo, c32(k, q), "");
  LLVMValueRef end = LLVMBuildAdd(e->B, k->n32, c32(k, 1), "");
  hi = LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, hi, end, ""), hi, end, "");
  LLVMValueRef acc = pass_entry_alloca(e, k->i32, "run");
  LLVMBuildStore(e->B, c32(k, 0), acc);
  pass_loop l;
  pass_loop_begin(e, &l, lo, hi, c32(k, 1));
  LLVMValueRef x = LLVMBuildLoad2(e->B, k->i32, pre_at(k, l.i), "");
  LLVMBuildStore(e->B, LLVMBuildAdd(e->B, LLVMBuildLoad2(e->B, k->i32, acc, ""), x, ""), acc);
  pass_loop_end(e, &l);
  LLVMBuildStore(e->B, LLVMBuildLoad2(e->B, k->i32, acc, ""), pass_gep(e, k->i32, sums, k->tid));
  pass_barrier_cta(e);
  scan_sums(k, sums);
  LLVMBuildStore(e->B, LLVMBuildLoad2(e->B, k->i32, pass_gep(e, k->i32, sums, k->tid), ""), acc);
  pass_loop m;
  pass_loop_begin(e, &m, lo, hi, c32(k, 1));
  LLVMValueRef r = LLVMBuildAdd(e->B, LLVMBuildLoad2(e->B, k->i32, acc, ""),
                                LLVMBuildLoad2(e->B, k->i32, pre_at(k, m.i), ""), "");
  LLVMBuildStore(e->B, r, acc);
  LLVMBuildStore(e->B, r, pre_at(k, m.i));
  pass_loop_end(e, &m);
  pass_barrier_cta(e);
}

/* the tensor of chunk c: the largest t with pre[t] <= c (pre[n] > c) */
static LLVMValueRef find_tensor(mk *k, LLVMValueRef c) {
  pass_emit *e = k->e;
  LLVMValueRef lo = pass_entry_alloca(e, k->i32, "lo"), hi = pass_entry_alloca(e, k->i32, "hi");
  LLVMBuildStore(e->B, c32(k, 0), lo);
  LLVMBuildStore(e->B, k->n32, hi);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(e->C, e->fn, "bs.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(e->C, e->fn, "bs.body");
  LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(e->C, e->fn, "bs.out");
  LLVMBuildBr(e->B, head);
  LLVMPositionBuilderAtEnd(e->B, head);
  LLVMValueRef l = LLVMBuildLoad2(e->B, k->i32, lo, ""), h = LLVMBuildLoad2(e->B, k->i32, hi, "");
  LLVMValueRef more = LLVMBuildICmp(e->B, LLVMIntSGT, LLVMBuildSub(e->B, h, l, ""), c32(k, 1), "");
  LLVMBuildCondBr(e->B, more, body, out);
  LLVMPositionBuilderAtEnd(e->B, body);
  LLVMValueRef mid = LLVMBuildLShr(e->B, LLVMBuildAdd(e->B, l, h, ""), c32(k, 1), "");
  LLVMValueRef pm = LLVMBuildLoad2(e->B, k->i32, pre_at(k, mid), "");
  LLVMValueRef le = LLVMBuildICmp(e->B, LLVMIntSLE, pm, c, "");
  LLVMBuildStore(e->B, LLVMBuildSelect(e->B, le, mid, l, ""), lo);
  LLVMBuildStore(e->B, LLVMBuildSelect(e->B, le, h, mid, ""), hi);
  LLVMBuildBr(e->B, head);
  LLVMPositionBuilderAtEnd(e->B, out);
  return LLVMBuildLoad2(e->B, k->i32, lo, "t");
}

/* A float prod folds every load of a thread into one accumulator, in load order: U accumulators
 * would each take 8 to 16 factors of a chunk, and products of a few low-precision factors near 1
 * round with a bias (about 0.02 ulp a multiply, one sign): 4 Mi f16 factors drawn near 1 ended
 * 0.4 % high, ten times f32's random roundoff.  One accumulator takes a chunk's 64 factors a
 * thread: f16's bias falls below its random roundoff, bf16's (0.17 % over 4 Mi factors) below
 * half a bf16 ulp.  Every other op keeps U independent accumulators. */
static int fold_accs(const rj_tensor *t, int U) {
  return t->op == RJ_OP_PROD && ir_dtype(tns_acc_dtype(t))->is_float ? 1 : U;
}

/* thread's fold of elements [s, end) of the tensor at ptr (stride st): i = s + tid + T * r */
static LLVMValueRef fold_chunk(mk *k, LLVMValueRef ptr, LLVMValueRef st, LLVMValueRef s,
                               LLVMValueRef end) {
  pass_emit *e = k->e;
  const rj_tensor *t = k->t;
  int U = k->p.U, na = fold_accs(t, U);
  LLVMValueRef acc[16];
  tns_acc_init(e, t, acc, na);
  LLVMTypeRef ty = pass_type(e, t->dtype);
  LLVMValueRef base = LLVMBuildIntToPtr(e->B, ptr, LLVMPointerTypeInContext(e->C, AS_GLOBAL), "");
  pass_loop l;
  pass_loop_begin(e, &l, LLVMBuildAdd(e->B, s, k->tid64, ""), end, c64(k, (int64_t)MULTI_T * U));
  LLVMValueRef x[16], ok[16];
  for (int u = 0; u < U; u++) { /* every load of the round before any fold */
    LLVMValueRef i = LLVMBuildAdd(e->B, l.i, c64(k, (int64_t)u * MULTI_T), "");
    ok[u] = LLVMBuildICmp(e->B, LLVMIntSLT, i, end, "");
    i = LLVMBuildSelect(e->B, ok[u], i, s, "");
    x[u] = tns_load(e, t, pass_gep(e, ty, base, LLVMBuildMul(e->B, i, st, "")));
  }
  for (int u = 0; u < U; u++)
    tns_fold_elem(e, t, acc[u % na], x[u], NULL, ok[u]);
  pass_loop_end(e, &l);
  return tns_acc_total(e, t, acc, na);
}

/* fold_chunk for a unit-stride tensor whose element 0 is 16-byte aligned (so is every chunk's,
 * a multiple of MULTI_ALIGN elements in): U 16-byte vectors in flight per thread, vector i of
 * the chunk to thread i mod T, each vector's elements into one accumulator in order (a float
 * prod: all into one, fold_accs); the < vec elements after the last whole vector one a thread,
 * into accumulator 0. */
static LLVMValueRef fold_chunk_vec(mk *k, LLVMValueRef ptr, LLVMValueRef s, LLVMValueRef end) {
  pass_emit *e = k->e;
  const rj_tensor *t = k->t;
  const int vec = tns_vec(t->dtype), U = vec == 2 || vec == 16 ? 2 : 4; /* registers: f64, i8 */
  const int na = fold_accs(t, U);
  LLVMValueRef acc[4], x[4][16];
  tns_acc_init(e, t, acc, na);
  LLVMTypeRef ty = pass_type(e, t->dtype);
  LLVMValueRef base = LLVMBuildIntToPtr(e->B, ptr, LLVMPointerTypeInContext(e->C, AS_GLOBAL), "");
  LLVMValueRef vs = LLVMBuildUDiv(e->B, s, c64(k, vec), "");
  LLVMValueRef ve = LLVMBuildUDiv(e->B, end, c64(k, vec), "");
  pass_loop l;
  pass_loop_begin(e, &l, LLVMBuildAdd(e->B, vs, k->tid64, ""), ve, c64(k, (int64_t)MULTI_T * U));
  LLVMValueRef ok[4];
  for (int u = 0; u < U; u++) { /* every load of the round before any fold */
    LLVMValueRef i = LLVMBuildAdd(e->B, l.i, c64(k, (int64_t)u * MULTI_T), "");
    ok[u] = LLVMBuildICmp(e->B, LLVMIntSLT, i, ve, "");
    i = LLVMBuildMul(e->B, LLVMBuildSelect(e->B, ok[u], i, vs, ""), c64(k, vec), "");
    tns_load_vec(e, t, pass_gep(e, ty, base, i), vec, x[u]);
  }
  for (int u = 0; u < U; u++)
    for (int v = 0; v < vec; v++)
      tns_fold_elem(e, t, acc[u % na], x[u][v], NULL, ok[u]);
  pass_loop_end(e, &l);
  LLVMValueRef ti = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, ve, c64(k, vec), ""), k->tid64, "");
  pass_if tail;
  pass_if_begin(e, &tail, LLVMBuildICmp(e->B, LLVMIntSLT, ti, end, ""));
  tns_fold_elem(e, t, acc[0], tns_load(e, t, pass_gep(e, ty, base, ti)), NULL, NULL);
  pass_if_end(e, &tail);
  return tns_acc_total(e, t, acc, na);
}

/* the thread's fold of chunk [s, end): vectors where the tensor allows, else scalars (invariant:
 * scalars always) */
static LLVMValueRef fold_any(mk *k, LLVMValueRef ptr, LLVMValueRef st, LLVMValueRef s,
                             LLVMValueRef end) {
  pass_emit *e = k->e;
  if (k->p.inv) return fold_chunk(k, ptr, st, s, end);
  LLVMValueRef res = pass_entry_alloca(e, k->acc, "chunk_val");
  LLVMValueRef al = LLVMBuildAnd(e->B, ptr, c64(k, 15), "");
  LLVMValueRef fast = LLVMBuildAnd(e->B, LLVMBuildICmp(e->B, LLVMIntEQ, st, c64(k, 1), ""),
                                   LLVMBuildICmp(e->B, LLVMIntEQ, al, c64(k, 0), ""), "fast");
  pass_if f, g;
  pass_if_begin(e, &f, fast);
  LLVMBuildStore(e->B, fold_chunk_vec(k, ptr, s, end), res);
  pass_if_end(e, &f);
  pass_if_begin(e, &g, LLVMBuildNot(e->B, fast, ""));
  LLVMBuildStore(e->B, fold_chunk(k, ptr, st, s, end), res);
  pass_if_end(e, &g);
  return LLVMBuildLoad2(e->B, k->acc, res, "");
}

/* thread 0: tensor ti's value v (acc type) of len elements into dst and the values' table (as
 * stored: an empty tensor's float sum +0.0, so an all-empty list's total is +0.0; the total of
 * op mean is refused) */
static void finish_tensor(mk *k, LLVMValueRef ti, LLVMValueRef v, LLVMValueRef len) {
  pass_emit *e = k->e;
  LLVMValueRef t64 = LLVMBuildZExt(e->B, ti, k->i64, "");
  pass_if t0, d;
  pass_if_begin(e, &t0, is_t0(k));
  LLVMValueRef i64p = LLVMBuildPtrToInt(e->B, k->dst, k->i64, "");
  LLVMValueRef r = tns_result(e, k->t, v, len);
  pass_if_begin(e, &d, LLVMBuildICmp(e->B, LLVMIntNE, i64p, c64(k, 0), ""));
  tns_store(e, k->t, k->dst, t64, r);
  pass_if_end(e, &d);
  if (k->tval) LLVMBuildStore(e->B, r, pass_gep(e, k->acc, k->tval, t64));
  pass_if_end(e, &t0);
}

/* the CTA's fold of n values at vals[first ..] (global, acc type): strided, then the tree */
static LLVMValueRef fold_values(mk *k, LLVMValueRef vals, LLVMValueRef first, LLVMValueRef n) {
  pass_emit *e = k->e;
  LLVMValueRef a = pass_entry_alloca(e, k->acc, "fold");
  LLVMBuildStore(e->B, tns_identity(e, k->t), a);
  pass_loop l;
  pass_loop_begin(e, &l, k->tid64, n, c64(k, MULTI_T));
  LLVMValueRef ix = LLVMBuildAdd(e->B, first, l.i, "");
  LLVMValueRef x = tns_load_volatile(e, k->acc, pass_gep(e, k->acc, vals, ix));
  LLVMValueRef cur = LLVMBuildLoad2(e->B, k->acc, a, "");
  LLVMBuildStore(e->B, tns_combine(e, k->t, cur, x), a);
  pass_loop_end(e, &l);
  return tns_cta_reduce(e, k->t, LLVMBuildLoad2(e->B, k->acc, a, ""), k->tid, MULTI_T);
}

/* chunk j of tensor ti: its partial, and the tensor's output by whichever CTA ends it */
static void do_chunk(mk *k, LLVMValueRef ti, LLVMValueRef j) {
  pass_emit *e = k->e;
  LLVMValueRef t64 = LLVMBuildZExt(e->B, ti, k->i64, "");
  LLVMValueRef len = entry_len(k, t64), st = entry_field(k, t64, 2);
  LLVMValueRef cl = chunk_len(k, len);
  LLVMValueRef s = LLVMBuildMul(e->B, LLVMBuildZExt(e->B, j, k->i64, ""), cl, "");
  LLVMValueRef end = tns_min64(e, len, LLVMBuildAdd(e->B, s, cl, ""));
  LLVMValueRef v = fold_any(k, entry_field(k, t64, 0), st, s, end);
  v = tns_cta_reduce(e, k->t, v, k->tid, MULTI_T);
  LLVMValueRef p0 = LLVMBuildLoad2(e->B, k->i32, pre_at(k, ti), "");
  LLVMValueRef p1 =
      LLVMBuildLoad2(e->B, k->i32, pre_at(k, LLVMBuildAdd(e->B, ti, c32(k, 1), "")), "");
  LLVMValueRef nch = LLVMBuildZExt(e->B, LLVMBuildSub(e->B, p1, p0, ""), k->i64, "nch");
  pass_if one, many, last;
  pass_if_begin(e, &one, LLVMBuildICmp(e->B, LLVMIntEQ, nch, c64(k, 1), ""));
  finish_tensor(k, ti, v, len);
  pass_if_end(e, &one);
  pass_if_begin(e, &many, LLVMBuildICmp(e->B, LLVMIntUGT, nch, c64(k, 1), ""));
  LLVMValueRef slot = LLVMBuildZExt(e->B, LLVMBuildAdd(e->B, p0, j, ""), k->i64, "");
  pass_if t0;
  pass_if_begin(e, &t0, is_t0(k));
  LLVMBuildStore(e->B, v, pass_gep(e, k->acc, k->part, slot));
  pass_if_end(e, &t0);
  LLVMValueRef cntp = pass_gep(e, k->i32, k->cnt, t64);
  pass_if_begin(e, &last, tns_last_cta(e, cntp, k->tid, nch));
  LLVMValueRef all = fold_values(k, k->part, LLVMBuildZExt(e->B, p0, k->i64, ""), nch);
  finish_tensor(k, ti, all, len);
  pass_if r;
  pass_if_begin(e, &r, is_t0(k));
  LLVMBuildStore(e->B, c32(k, 0), cntp);
  pass_if_end(e, &r);
  pass_if_end(e, &last);
  pass_if_end(e, &many);
}

/* thread 0: the next ticket into *mine (its wait lands where it is read: the next round) */
static void take_ticket(mk *k, LLVMValueRef mine) {
  pass_emit *e = k->e;
  pass_if t0;
  pass_if_begin(e, &t0, is_t0(k));
  unsigned gpu = LLVMGetSyncScopeID(e->C, "device", 6);
  LLVMValueRef c = LLVMBuildAtomicRMWSyncScope(e->B, LLVMAtomicRMWBinOpAdd,
                                               pass_gep(e, k->i32, k->ticket, c32(k, 0)), c32(k, 1),
                                               LLVMAtomicOrderingMonotonic, gpu);
  LLVMBuildStore(e->B, c, mine);
  pass_if_end(e, &t0);
}

/* the chunk loop: a ticket's chunk, its tensor found, folded; the next ticket is taken as a
 * chunk starts, so its round trip overlaps the chunk's loads; until the tickets run out */
static void chunk_loop(mk *k) {
  pass_emit *e = k->e;
  LLVMValueRef slot = pass_global_array(e, k->i32, 1, AS_SHARED, "rj_ticket");
  LLVMValueRef sp = pass_gep(e, k->i32, slot, c32(k, 0));
  LLVMValueRef mine = pass_entry_alloca(e, k->i32, "mine");
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(e->C, e->fn, "chunk.head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(e->C, e->fn, "chunk.body");
  LLVMBasicBlockRef out = LLVMAppendBasicBlockInContext(e->C, e->fn, "chunk.out");
  take_ticket(k, mine);
  LLVMBuildBr(e->B, head);
  LLVMPositionBuilderAtEnd(e->B, head);
  pass_if t0;
  pass_if_begin(e, &t0, is_t0(k));
  LLVMBuildStore(e->B, LLVMBuildLoad2(e->B, k->i32, mine, ""), sp);
  pass_if_end(e, &t0);
  pass_barrier_cta(e);
  LLVMValueRef c = LLVMBuildLoad2(e->B, k->i32, sp, "c");
  LLVMValueRef all = LLVMBuildLoad2(e->B, k->i32, pre_at(k, k->n32), "");
  LLVMBuildCondBr(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, c, all, ""), body, out);
  LLVMPositionBuilderAtEnd(e->B, body);
  take_ticket(k, mine);
  LLVMValueRef ti = find_tensor(k, c);
  do_chunk(k, ti, LLVMBuildSub(e->B, c, LLVMBuildLoad2(e->B, k->i32, pre_at(k, ti), ""), "j"));
  pass_barrier_cta(e); /* every thread has read the ticket's slot */
  LLVMBuildBr(e->B, head);
  LLVMPositionBuilderAtEnd(e->B, out);
}

/* the last CTA to leave: resets the counters, folds the total */
static void finish_launch(mk *k) {
  pass_emit *e = k->e;
  LLVMValueRef grid = pass_call(e, "llvm.nvvm.read.ptx.sreg.nctaid.x", NULL, 0, NULL, 0);
  LLVMValueRef donep = pass_gep(e, k->i32, k->done, c32(k, 0));
  pass_if last, t0;
  pass_if_begin(e, &last, tns_last_cta(e, donep, k->tid, LLVMBuildZExt(e->B, grid, k->i64, "")));
  LLVMValueRef v = k->tval ? fold_values(k, k->tval, c64(k, 0), k->n) : NULL;
  pass_if_begin(e, &t0, is_t0(k));
  LLVMBuildStore(e->B, c32(k, 0), donep);
  LLVMBuildStore(e->B, c32(k, 0), pass_gep(e, k->i32, k->ticket, c32(k, 0)));
  if (v) {
    pass_if w;
    LLVMValueRef tp = LLVMBuildPtrToInt(e->B, k->total, k->i64, "");
    pass_if_begin(e, &w, LLVMBuildICmp(e->B, LLVMIntNE, tp, c64(k, 0), ""));
    tns_store(e, k->t, k->total, c64(k, 0), v);
    pass_if_end(e, &w);
  }
  pass_if_end(e, &t0);
  pass_if_end(e, &last);
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  mk k = {.e = e, .t = &r->u.tensor};
  memcpy(&k.p, e->plan->priv.bytes, sizeof k.p);
  k.i32 = LLVMInt32TypeInContext(e->C);
  k.i64 = LLVMInt64TypeInContext(e->C);
  k.acc = tns_acc_type(e, k.t);
  begin(&k);
  prefix_counts(&k);
  prefix_scan(&k);
  chunk_loop(&k);
  finish_launch(&k);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}
#endif

const pass_variant pass_variant_tensor_multi = {
    .name = "tensor_multi",
    .prio = 25,
    .kind = RJ_KIND_TENSOR,
    .summary = "a list of 1-D tensors in one launch: chunks from a ticket, per-tensor and total "
               "folds in a fixed order by whichever CTA ends them",
    .ops = PASS_OPS_SCALAR,
    .lists = true,
    .invariant = true, /* under "invariant": true; else its tree depends on invariant_why */
    .invariant_why = "each tensor's stride and the 16-byte alignment of its first element (vector "
                     "or scalar loads)",
    .accepts = accepts,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
