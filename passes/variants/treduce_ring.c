/* treduce_ring: the ring path's hop kernel (jit/treduce/ring.c), one persistent launch per hop.
 *
 * The ring cuts the fold order into hops; every hop runs this kernel once for the whole
 * operation, B blocks of RING_THREADS.  Block b takes steps b, b + B, b + 2B, ... of
 * RING_STEP_BYTES of the element range.  For its i-th step it waits until the previous hop's
 * block b has stored that step's partial results into slot i % RING_NB of b's part of this
 * hop's inbox (thread 0 polls ready[b] in this GPU's memory with ld.acquire.sys), folds them with
 * each of its sources (the op's identity first, then the inbox, then the sources in order: the
 * peer kernel's order), and stores the result straight into the next hop's inbox over NVLink, or
 * into the destination when it is the last hop.  Then, after a barrier, thread 0 publishes the
 * slot (fence.sc.sys, st.release.sys of ready[b] on the next hop's GPU) and frees the slot it read
 * (st.release.sys of credit[b] on the previous hop's GPU).  Before refilling a slot of the next
 * hop, a block waits for that hop's credit.  No host call per step, no copy engine.
 *
 * Counters are 64-bit and only grow within a call: step i is published as base + i + 1, where
 * base (a parameter) rises with every call, so nothing is reset between calls.  A wait gives up
 * after timeout_ns (globaltimer): thread 0 stores base + 1 into status[0] (the call's first block
 * to do so also counts the call in status[1]) and the block returns, so
 * a hop whose neighbour never runs ends the call with an error instead of hanging it; a wait
 * that has lasted RING_LOOK_NS also gives up as soon as *status holds base + 1 (status is in
 * host memory the host reads without waiting, jit/treduce/ring.c).
 *
 * More than RING_UNROLL sources are read through a table in shared memory, RING_BATCH at a time
 * (passes/srcfold.c), so that a hop of many ranks keeps its registers.
 *
 * Params: (dst, in, next, flags, next_ready, prev_credit, status: global pointers; numel, base,
 * timeout_ns: i64; src_0 .. src_{n-1}: treduce_ring.h).  in == NULL: the first hop (no inbox); next
 * == NULL: the last hop (writes dst[0, numel)).  flags: this hop's ready[RING_MAXB] then
 * credit[RING_MAXB].  The request's ranks is the number of sources; its tile[1] the elements
 * per access: 1, or 16 bytes' worth (16-byte loads and stores: every pointer 16-byte aligned;
 * the last step's remainder element by element); its shape is not used. */
#include "../passes.h"
#include "treduce_ring.h"

#include <stdio.h>
#include <string.h>

#define RING_MAX_SRC 128
/* Up to RING_UNROLL sources are folded straight from the parameters; more come from a table in
 * shared memory, RING_BATCH loaded at once (a batch in flight while the last one folds).  -D can
 * change both, for measurements only (bench/many_sources.sh, docs/PERFORMANCE.md). */
#ifndef RING_UNROLL
#define RING_UNROLL 16
#endif
#ifndef RING_BATCH
#define RING_BATCH 8
#endif
_Static_assert(RING_BATCH <= RING_UNROLL && RING_UNROLL <= RING_MAX_SRC &&
                   RING_BATCH <= PASS_SRC_MAXBATCH,
               "ring batch sizes");
#define RING_ONLY "only for the ring path (forced as variant \"treduce_ring\" by rj_treduce)"

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  const rj_treduce *t = &r->u.treduce;
  if (strcmp(r->variant, "treduce_ring") != 0) return RING_ONLY;
  if (tg->sm < 70) {
    snprintf(buf, n, "target: sm_%d; the hop kernel's ld.acquire.sys / st.release.sys need sm_70",
             tg->sm);
    return buf;
  }
  int vec = 16 / ir_dtype(t->dtype)->bytes;
  if (t->tile[1] != 1 && t->tile[1] != vec) {
    snprintf(buf, n,
             "tile[1]: %lld; the hop kernel takes it as elements per access: 1, or %d "
             "(16 bytes, every pointer 16-byte aligned)",
             (long long)t->tile[1], vec);
    return buf;
  }
  if (t->op == RJ_OP_CUSTOM && t->combine.nfields) /* jit/treduce/ring.c refuses it first */
    return "combine.state: the hops hand on dtype values, not struct states";
  if (t->ranks > RING_MAX_SRC) {
    snprintf(buf, n, "ranks: %d; a hop kernel reads at most %d sources", t->ranks, RING_MAX_SRC);
    return buf;
  }
  return NULL;
}

static LLVMValueRef addr(pass_emit *e, LLVMValueRef p) {
  return LLVMBuildPtrToInt(e->B, p, LLVMInt64TypeInContext(e->C), "");
}

/* ld.<sem>.sys.global.u64 of *p (sem: "acquire" or "relaxed"). */
static LLVMValueRef load_sys(pass_emit *e, const char *sem, LLVMValueRef p) {
  char text[48];
  snprintf(text, sizeof text, "ld.%s.sys.global.u64 $0, [$1];", sem);
  LLVMValueRef a = addr(e, p);
  return pass_asm_volatile(e, LLVMInt64TypeInContext(e->C), text, "=l,l,~{memory}", &a, 1);
}

static LLVMValueRef globaltimer(pass_emit *e) {
  return pass_call(e, "llvm.nvvm.read.ptx.sreg.globaltimer", NULL, 0, NULL, 0);
}

/* Thread 0: polls *p (ld.acquire.sys) until it reaches target or timeout ns pass; stores whether
 * it gave up into the i1 alloca failed (only raising it).  After RING_LOOK_NS of waiting it
 * also reads status[0] each round and gives up at once when it holds `gave` (another block of the
 * call gave up: what this one waits for may never come), so a failed call ends about one
 * timeout after it starts, not one timeout per wave of blocks that get an SM. */
static void wait_for(pass_emit *e, LLVMValueRef p, LLVMValueRef target, LLVMValueRef timeout,
                     LLVMValueRef failed, LLVMValueRef status, LLVMValueRef given) {
  LLVMTypeRef i1 = LLVMInt1TypeInContext(e->C);
  LLVMValueRef t0 = globaltimer(e);
  LLVMBasicBlockRef poll = LLVMAppendBasicBlockInContext(e->C, e->fn, "poll");
  LLVMBasicBlockRef late = LLVMAppendBasicBlockInContext(e->C, e->fn, "late");
  LLVMBasicBlockRef look = LLVMAppendBasicBlockInContext(e->C, e->fn, "look");
  LLVMBasicBlockRef gave = LLVMAppendBasicBlockInContext(e->C, e->fn, "gaveup");
  LLVMBasicBlockRef ok = LLVMAppendBasicBlockInContext(e->C, e->fn, "arrived");
  LLVMBuildBr(e->B, poll);
  LLVMPositionBuilderAtEnd(e->B, poll);
  LLVMValueRef v = load_sys(e, "acquire", p);
  LLVMBuildCondBr(e->B, LLVMBuildICmp(e->B, LLVMIntUGE, v, target, ""), ok, late);
  LLVMPositionBuilderAtEnd(e->B, late);
  LLVMValueRef spent = LLVMBuildSub(e->B, globaltimer(e), t0, "");
  LLVMBasicBlockRef soon = LLVMAppendBasicBlockInContext(e->C, e->fn, "soon");
  LLVMBuildCondBr(e->B, LLVMBuildICmp(e->B, LLVMIntUGT, spent, timeout, ""), gave, soon);
  LLVMPositionBuilderAtEnd(e->B, soon);
  LLVMBuildCondBr(e->B, LLVMBuildICmp(e->B, LLVMIntUGT, spent, pass_i64(e, RING_LOOK_NS), ""), look,
                  poll);
  LLVMPositionBuilderAtEnd(e->B, look);
  LLVMValueRef sv = load_sys(e, "relaxed", status);
  LLVMBuildCondBr(e->B, LLVMBuildICmp(e->B, LLVMIntEQ, sv, given, ""), gave, poll);
  LLVMPositionBuilderAtEnd(e->B, gave);
  LLVMBuildStore(e->B, LLVMConstInt(i1, 1, 0), failed);
  LLVMBuildBr(e->B, ok);
  LLVMPositionBuilderAtEnd(e->B, ok);
}

static void store_release(pass_emit *e, LLVMValueRef p, LLVMValueRef v) {
  LLVMValueRef a[2] = {addr(e, p), v};
  pass_asm_volatile(e, LLVMVoidTypeInContext(e->C), "st.release.sys.global.u64 [$0], $1;",
                    "l,l,~{memory}", a, 2);
}

/* One access of a hop's fold: E accesses of V elements (V > 1: 16-byte vectors) at idx[] from
 * the step's start. */
typedef struct ring_acc {
  const rj_treduce *t;
  int V, E;
  LLVMValueRef start; /* the step's first element (i64): the table's pointers are bases */
  const LLVMValueRef *idx;
} ring_acc;

static LLVMTypeRef access_type(pass_emit *e, const ring_acc *a) {
  LLVMTypeRef ty = pass_type(e, a->t->dtype);
  return a->V > 1 ? LLVMVectorType(ty, (unsigned)a->V) : ty;
}

/* x[s] = source p's access s (p at the step's start when start is NULL) */
static void load_access(pass_emit *e, const void *cx, LLVMValueRef p, LLVMValueRef *x) {
  const ring_acc *a = cx;
  LLVMTypeRef aty = access_type(e, a);
  if (a->start) p = pass_gep(e, pass_type(e, a->t->dtype), p, a->start);
  for (int s = 0; s < a->E; s++) {
    x[s] = LLVMBuildLoad2(e->B, aty, pass_gep(e, aty, p, a->idx[s]), "");
    LLVMSetAlignment(x[s], (unsigned)(a->V * ir_dtype(a->t->dtype)->bytes));
  }
}

/* An element in the accumulator's type: op custom keeps the dtype (f16 / bf16 too: the combine
 * takes T, and the partial results are its states), the others pass_to_acc's. */
static LLVMValueRef to_acc(pass_emit *e, const rj_treduce *t, LLVMValueRef v) {
  return t->op == RJ_OP_CUSTOM ? v : pass_to_acc(e, v, t->dtype);
}

/* acc[s * V + q] folded with element q of x[s] */
static void fold_access_into(pass_emit *e, const void *cx, const LLVMValueRef *x,
                             LLVMValueRef *acc) {
  const ring_acc *a = cx;
  const rj_treduce *t = a->t;
  for (int s = 0; s < a->E; s++)
    for (int q = 0; q < a->V; q++) {
      LLVMValueRef v = a->V > 1 ? LLVMBuildExtractElement(e->B, x[s], pass_i32(e, q), "") : x[s];
      acc[s * a->V + q] = pass_fold(e, t->op, t->dtype, t->nan, acc[s * a->V + q], to_acc(e, t, v));
    }
}

/* E accesses of V elements each (V > 1: 16-byte vectors) at access indices idx[]: the op's
 * identity, folded with the inbox (when has_in), then with each of the N sources in order, stored
 * to outp where valid[] (op mean: the last hop, !has_next, divides the sum by the group's ranks,
 * the request's mean_count).  The sources: at[k], already at the step's start (N <= RING_UNROLL:
 * each source's loads, then its folds; LLVM and ptxas issue the loads early), or the table tab of
 * their bases (pass_src_fold: RING_BATCH at a time, pipelined).  Invalid accesses load index 0
 * (always there) and store nothing. */
static void fold_access(pass_emit *e, const rj_treduce *t, int V, int E, LLVMValueRef inp,
                        LLVMValueRef has_in, LLVMValueRef has_next, const LLVMValueRef *at,
                        LLVMValueRef tab, int N, LLVMValueRef start, LLVMValueRef outp,
                        const LLVMValueRef *idx, const LLVMValueRef *valid) {
  rj_dtype dt = t->dtype;
  ring_acc a = {.t = t, .V = V, .E = E, .idx = idx};
  LLVMTypeRef aty = access_type(e, &a);
  LLVMValueRef acc[RING_SLOTS * 16], x[RING_SLOTS];
  for (int i = 0; i < E * V; i++)
    acc[i] = pass_identity(e, t->op, dt);
  /* the inbox; the first hop has none (inp is then source 0, loaded and not folded) */
  load_access(e, &a, inp, x);
  for (int s = 0; s < E; s++)
    for (int q = 0; q < V; q++) {
      LLVMValueRef v = V > 1 ? LLVMBuildExtractElement(e->B, x[s], pass_i32(e, q), "") : x[s];
      LLVMValueRef f = pass_fold(e, t->op, dt, t->nan, acc[s * V + q], to_acc(e, t, v));
      acc[s * V + q] = LLVMBuildSelect(e->B, has_in, f, acc[s * V + q], "");
    }
  if (!tab) {
    for (int k = 0; k < N; k++) {
      load_access(e, &a, at[k], x);
      fold_access_into(e, &a, x, acc);
    }
  } else {
    a.start = start;
    pass_srcfold sf = {.tab = tab,
                       .n = N,
                       .batch = RING_BATCH,
                       .nx = E,
                       .nacc = E * V,
                       .pipelined = true,
                       .load = load_access,
                       .fold = fold_access_into,
                       .cx = &a};
    pass_src_fold(e, &sf, acc);
  }
  for (int s = 0; s < E; s++) {
    LLVMValueRef v = V > 1 ? LLVMGetUndef(aty) : NULL;
    for (int q = 0; q < V; q++) {
      LLVMValueRef a = acc[s * V + q];
      if (t->op == RJ_OP_MEAN)
        a = LLVMBuildSelect(e->B, has_next, a,
                            pass_mean(e, t->op, dt, a, pass_i64(e, ir_treduce_mean_count(t))), "");
      LLVMValueRef r = t->op == RJ_OP_CUSTOM ? a : pass_from_acc(e, a, dt);
      v = V > 1 ? LLVMBuildInsertElement(e->B, v, r, pass_i32(e, q), "") : r;
    }
    pass_if w;
    pass_if_begin(e, &w, valid[s]);
    LLVMSetAlignment(LLVMBuildStore(e->B, v, pass_gep(e, aty, outp, idx[s])),
                     (unsigned)(V * ir_dtype(dt)->bytes));
    pass_if_end(e, &w);
  }
}

/* The launch: RING_THREADS threads a block (at most 128 registers a thread, so that 512 fit on
 * an SM: many sources spill instead), RING_MAXB blocks at most (the host picks B, the same for
 * every hop: jit/treduce/ring.c launches the plan's block with its own grid). */
static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  (void)r, (void)env;
  for (int i = 0; i < 3; i++)
    out->grid[i] = out->block[i] = 1;
  out->grid[0] = RING_MAXB;
  out->block[0] = RING_THREADS;
  return RJ_OK;
}

/* The hop kernel's function, redjit_treduce_ring(RING_FIXED parameters, src_0 .. src_{N-1}), its
 * entry block current, and its parameters into P[]; at most RING_THREADS threads a block (the
 * plan's). */
static void declare_hop(pass_emit *e, int N, LLVMValueRef *P) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  LLVMTypeRef gptr = LLVMPointerTypeInContext(e->C, AS_GLOBAL);
  LLVMTypeRef params[RING_FIXED + RING_MAX_SRC];
  for (int i = 0; i < RING_FIXED + N; i++)
    params[i] = i >= RING_P_NUMEL && i < RING_FIXED ? i64 : gptr;
  LLVMTypeRef fty =
      LLVMFunctionType(LLVMVoidTypeInContext(e->C), params, (unsigned)(RING_FIXED + N), 0);
  e->entry = "redjit_treduce_ring";
  e->fn = LLVMAddFunction(e->M, e->entry, fty);
  LLVMSetFunctionCallConv(e->fn, LLVMPTXKernelCallConv);
  LLVMPositionBuilderAtEnd(e->B, LLVMAppendBasicBlockInContext(e->C, e->fn, "entry"));
  char nt[16];
  snprintf(nt, sizeof nt, "%d", RING_THREADS);
  LLVMAddTargetDependentFunctionAttr(e->fn, "nvvm.maxntid", nt);
  if (e->ptx_needed < 60) e->ptx_needed = 60; /* ld.acquire / st.release / fence.sc */
  for (int i = 0; i < RING_FIXED + N; i++)
    P[i] = LLVMGetParam(e->fn, (unsigned)i);
}

/* What every step of a block uses: the parameters, the block's counters, its flags in shared
 * memory, and the step in progress. */
typedef struct hop_vals {
  LLVMValueRef dst, in, next, next_ready, prev_credit, status, numel, base, timeout;
  LLVMValueRef given;             /* base + 1: what status[0] holds once a hop gave up */
  LLVMValueRef has_in, has_next;  /* not the first hop; not the last */
  LLVMValueRef tid, b, thread0;   /* the thread, the block (i64) */
  LLVMValueRef ready_b, credit_b; /* this block's counters in this hop's flags */
  LLVMValueRef stop;              /* shared i32: the block gave up */
  LLVMValueRef tab;               /* the sources' table in shared memory (many sources), or NULL */
  LLVMValueRef failed;            /* thread 0's i1 alloca: a wait gave up */
  LLVMValueRef i, slot, mine; /* the step: its count in the block, inbox slot, published value */
} hop_vals;

/* Step 1: thread 0 waits for the inbox slot's data and the next hop's free slot; a block whose
 * wait gave up records it in status and returns (after a barrier, every thread). */
static void wait_step(pass_emit *e, const hop_vals *v) {
  LLVMTypeRef i1 = LLVMInt1TypeInContext(e->C), i32 = LLVMInt32TypeInContext(e->C);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  pass_if w0;
  pass_if_begin(e, &w0, v->thread0);
  LLVMBuildStore(e->B, LLVMConstInt(i1, 0, 0), v->failed);
  pass_if wi;
  pass_if_begin(e, &wi, v->has_in);
  wait_for(e, v->ready_b, v->mine, v->timeout, v->failed, v->status, v->given);
  pass_if_end(e, &wi);
  /* (not after giving up on the inbox: that would wait a second timeout before reporting) */
  LLVMValueRef ok = LLVMBuildNot(e->B, LLVMBuildLoad2(e->B, i1, v->failed, ""), "");
  pass_if wc;
  pass_if_begin(e, &wc,
                LLVMBuildAnd(e->B, LLVMBuildAnd(e->B, v->has_next, ok, ""),
                             LLVMBuildICmp(e->B, LLVMIntUGE, v->i, pass_i64(e, RING_NB), ""), ""));
  wait_for(e, v->credit_b, LLVMBuildSub(e->B, v->mine, pass_i64(e, RING_NB), ""), v->timeout,
           v->failed, v->status, v->given);
  pass_if_end(e, &wc);
  LLVMValueRef f = LLVMBuildLoad2(e->B, i1, v->failed, "");
  LLVMBuildStore(e->B, LLVMBuildZExt(e->B, f, i32, ""), v->stop);
  pass_if gave;
  pass_if_begin(e, &gave, f);
  /* status[0] = base + 1; the block that changed it (the call's first to give up) then counts
   * the call in status[1], with release, so the host that sees the count sees status[0] */
  LLVMValueRef sa[2] = {addr(e, v->status), v->given};
  LLVMValueRef old = pass_asm_volatile(e, i64, "atom.sys.global.exch.b64 $0, [$1], $2;",
                                       "=l,l,l,~{memory}", sa, 2);
  pass_if first;
  pass_if_begin(e, &first, LLVMBuildICmp(e->B, LLVMIntNE, old, v->given, ""));
  LLVMValueRef ca = addr(e, pass_gep(e, i64, v->status, pass_i64(e, 1)));
  pass_asm_volatile(e, LLVMVoidTypeInContext(e->C), "red.release.sys.global.add.u64 [$0], 1;",
                    "l,~{memory}", &ca, 1);
  pass_if_end(e, &first);
  pass_if_end(e, &gave);
  pass_if_end(e, &w0);
  pass_barrier_cta(e);
  LLVMBasicBlockRef bye = LLVMAppendBasicBlockInContext(e->C, e->fn, "gave_up");
  LLVMBasicBlockRef go = LLVMAppendBasicBlockInContext(e->C, e->fn, "go");
  LLVMValueRef st = LLVMBuildLoad2(e->B, i32, v->stop, "");
  LLVMBuildCondBr(e->B, LLVMBuildICmp(e->B, LLVMIntNE, st, pass_i32(e, 0), ""), bye, go);
  LLVMPositionBuilderAtEnd(e->B, bye);
  LLVMBuildRetVoid(e->B);
  LLVMPositionBuilderAtEnd(e->B, go);
}

/* Step 2: step c's elements, E accesses of V per thread per round, coalesced: the identity
 * first, then the inbox, then the sources P[RING_FIXED ..] in fold order; then (V > 1) the last
 * < V elements of the last step one per thread. */
static void fold_step(pass_emit *e, const rj_treduce *t, const hop_vals *v, const LLVMValueRef *P,
                      LLVMValueRef c, int E, int V) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), i64 = LLVMInt64TypeInContext(e->C);
  LLVMTypeRef ty = pass_type(e, t->dtype);
  const int T = RING_THREADS, N = t->ranks;
  const int64_t step = RING_STEP_BYTES / ir_dtype(t->dtype)->bytes;
  LLVMValueRef start = LLVMBuildMul(e->B, c, pass_i64(e, step), "start");
  LLVMValueRef left = LLVMBuildSub(e->B, v->numel, start, "");
  LLVMValueRef len = LLVMBuildTrunc(
      e->B,
      LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, left, pass_i64(e, step), ""), left,
                      pass_i64(e, step), ""),
      i32, "len");
  LLVMValueRef soff = LLVMBuildMul(
      e->B, LLVMBuildAdd(e->B, LLVMBuildMul(e->B, v->b, pass_i64(e, RING_NB), ""), v->slot, ""),
      pass_i64(e, step), "slot_at");
  LLVMValueRef src[RING_MAX_SRC];
  for (int k = 0; k < (v->tab ? 1 : N); k++)
    src[k] = pass_gep(e, ty, P[RING_FIXED + k], start);
  /* the first hop has no inbox: its loads read src_0 (always there) and are not folded */
  LLVMValueRef inp = LLVMBuildSelect(e->B, v->has_in, pass_gep(e, ty, v->in, soff), src[0], "inp");
  LLVMValueRef outp = LLVMBuildSelect(e->B, v->has_next, pass_gep(e, ty, v->next, soff),
                                      pass_gep(e, ty, v->dst, start), "outp");
  LLVMValueRef nv = V == 1 ? len : LLVMBuildUDiv(e->B, len, pass_i32(e, V), "accesses");
  pass_loop els;
  pass_loop_begin(e, &els, v->tid, nv, pass_i32(e, (int64_t)T * E));
  LLVMValueRef valid[RING_SLOTS], idx[RING_SLOTS];
  for (int s = 0; s < E; s++) {
    LLVMValueRef j = LLVMBuildAdd(e->B, els.i, pass_i32(e, (int64_t)s * T), "");
    valid[s] = LLVMBuildICmp(e->B, LLVMIntSLT, j, nv, "valid");
    idx[s] = LLVMBuildZExt(e->B, LLVMBuildSelect(e->B, valid[s], j, pass_i32(e, 0), ""), i64, "");
  }
  fold_access(e, t, V, E, inp, v->has_in, v->has_next, src, v->tab, N, start, outp, idx, valid);
  pass_loop_end(e, &els);
  if (V > 1) {
    LLVMValueRef j = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, nv, pass_i32(e, V), ""), v->tid, "");
    LLVMValueRef tv = LLVMBuildICmp(e->B, LLVMIntSLT, j, len, "tail");
    pass_if tail;
    pass_if_begin(e, &tail, tv);
    LLVMValueRef ti = LLVMBuildZExt(e->B, j, i64, "");
    fold_access(e, t, 1, 1, inp, v->has_in, v->has_next, src, v->tab, N, start, outp, &ti, &tv);
    pass_if_end(e, &tail);
  }
}

/* Step 3: every thread's stores and loads are done: thread 0 publishes the slot to the next hop
 * and frees the one it read for the previous. */
static void publish_step(pass_emit *e, const hop_vals *v) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  pass_barrier_cta(e);
  pass_if p0;
  pass_if_begin(e, &p0, v->thread0);
  pass_if pn;
  pass_if_begin(e, &pn, v->has_next);
  pass_asm_volatile(e, LLVMVoidTypeInContext(e->C), "fence.sc.sys;", "~{memory}", NULL, 0);
  store_release(e, pass_gep(e, i64, v->next_ready, v->b), v->mine);
  pass_if_end(e, &pn);
  pass_if pc;
  pass_if_begin(e, &pc, v->has_in);
  store_release(e, pass_gep(e, i64, v->prev_credit, v->b), v->mine);
  pass_if_end(e, &pc);
  pass_if_end(e, &p0);
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  const rj_treduce *t = &r->u.treduce;
  int N = t->ranks;
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C), i32 = LLVMInt32TypeInContext(e->C);
  LLVMTypeRef i1 = LLVMInt1TypeInContext(e->C);
  LLVMValueRef P[RING_FIXED + RING_MAX_SRC];
  declare_hop(e, N, P);
  /* E accesses per thread per round; one when the sources are many (their loads in flight at once
   * would not fit in registers) */
  const int E = N <= 4 ? RING_SLOTS : 1;
  const int64_t step = RING_STEP_BYTES / ir_dtype(t->dtype)->bytes;
  const int V = (int)t->tile[1]; /* elements per access: 1, or 16 bytes' worth (accepts) */
  hop_vals v = {.dst = P[RING_P_DST],
                .in = P[RING_P_IN],
                .next = P[RING_P_NEXT],
                .next_ready = P[RING_P_NEXT_READY],
                .prev_credit = P[RING_P_PREV_CREDIT],
                .status = P[RING_P_STATUS],
                .numel = P[RING_P_NUMEL],
                .base = P[RING_P_BASE],
                .timeout = P[RING_P_TIMEOUT]};
  LLVMValueRef flags = P[RING_P_FLAGS];
  v.given = LLVMBuildAdd(e->B, v.base, pass_i64(e, 1), "given"); /* a hop gave up */
  LLVMValueRef null = LLVMConstNull(LLVMPointerTypeInContext(e->C, AS_GLOBAL));
  v.has_in = LLVMBuildICmp(e->B, LLVMIntNE, v.in, null, "has_in");
  v.has_next = LLVMBuildICmp(e->B, LLVMIntNE, v.next, null, "has_next");
  v.tid = pass_call(e, "llvm.nvvm.read.ptx.sreg.tid.x", NULL, 0, NULL, 0);
  v.b = LLVMBuildZExt(e->B, pass_call(e, "llvm.nvvm.read.ptx.sreg.ctaid.x", NULL, 0, NULL, 0), i64,
                      "b");
  LLVMValueRef B = LLVMBuildZExt(
      e->B, pass_call(e, "llvm.nvvm.read.ptx.sreg.nctaid.x", NULL, 0, NULL, 0), i64, "B");
  v.thread0 = LLVMBuildICmp(e->B, LLVMIntEQ, v.tid, pass_i32(e, 0), "thread0");
  LLVMValueRef nsteps = LLVMBuildUDiv(e->B, LLVMBuildAdd(e->B, v.numel, pass_i64(e, step - 1), ""),
                                      pass_i64(e, step), "nsteps");
  v.ready_b = pass_gep(e, i64, flags, v.b);
  v.credit_b = pass_gep(e, i64, flags, LLVMBuildAdd(e->B, v.b, pass_i64(e, RING_MAXB), ""));
  v.stop = pass_global_array(e, i32, 1, AS_SHARED, "ring_stop");
  /* many sources: thread 0 copies their parameters into a table in shared memory, once */
  v.tab = N > RING_UNROLL ? pass_src_table(e, P + RING_FIXED, N, v.thread0) : NULL;
  v.failed = pass_entry_alloca(e, i1, "failed");
  LLVMValueRef iv = pass_entry_alloca(e, i64, "i");
  LLVMBuildStore(e->B, pass_i64(e, 0), iv);
  pass_loop steps;
  pass_loop_begin(e, &steps, v.b, nsteps, B); /* c = b, b + B, ... */
  LLVMValueRef c = steps.i;
  v.i = LLVMBuildLoad2(e->B, i64, iv, "");
  v.slot = LLVMBuildAnd(e->B, v.i, pass_i64(e, RING_NB - 1), "slot");
  v.mine = LLVMBuildAdd(e->B, v.base, LLVMBuildAdd(e->B, v.i, pass_i64(e, 1), ""), "published");
  wait_step(e, &v);
  fold_step(e, t, &v, P, c, E, V);
  publish_step(e, &v);
  LLVMBuildStore(e->B, LLVMBuildAdd(e->B, v.i, pass_i64(e, 1), ""), iv);
  pass_loop_end(e, &steps);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_treduce_ring = {
    .name = "treduce_ring",
    .prio = 5,
    .kind = RJ_KIND_TREDUCE,
    .summary = "the ring path's hop kernel: persistent, waits on flags (ld.acquire.sys), folds its "
               "sources into the next hop's inbox over NVLink (st.release.sys); forced only",
    .ops = PASS_OPS_BASIC | PASS_OP(RJ_OP_PROD) | PASS_OP(RJ_OP_AND) | PASS_OP(RJ_OP_OR) |
           PASS_OP(RJ_OP_XOR) | PASS_OP(RJ_OP_MEAN) | PASS_OP(RJ_OP_CUSTOM),
    .keeps_order = true, /* the inbox (earlier ranks) first, then the hop's sources in order */
    .accepts = accepts,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
