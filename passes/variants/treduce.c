/* treduce (seed 004, PTO-ISA TREDUCE): a kernel on the root reads every rank's source directly and
 * reduces element-wise into the root's destination.
 *
 * Params: (dst, src_0, ..., src_{N-1}), global pointers; the root's GPU must be able to load
 * from every src (same GPU, peer access, or a staging buffer on the root: jit/treduce/peer.c).
 * Chunks slide over the last two dims by the tile bound (the reference's "2D sliding"): chunk
 * (outer, rc, cc) covers rows [rc*TR, +curRows) and cols [cc*TC, +curCols), with curRows / curCols
 * computed at run time, so the final chunks in either dim may be partial.  A chunk is cut into
 * pieces of T*E elements; work item w = (chunk, piece) goes to CTA w mod grid (grid-stride), and
 * thread tid holds E elements of its piece in registers (slot s: element piece*T*E + s*T + tid of
 * the chunk, row-major over curRows x curCols: coalesced).
 *
 * Rank order is the reference's: the root first, then GetRemoteRank(root, i) = i < root ? i : i+1.
 * Ping-pong is a register double buffer: the loads of rank r+1's E elements are issued before the
 * combine of rank r's (cur / nxt), so the fetch of the next rank overlaps the current reduction;
 * without it each rank is loaded, then folded.  Beyond TR_UNROLL ranks the same holds batch by
 * batch (pass_src_fold: with ping-pong a batch's loads are in flight while the previous batch
 * folds).  accum folds the destination's old value first.
 *
 * op mean folds as sum (f32 for f16 / bf16) and divides once per element at the store, by the
 * ranks or the request's mean_count (rj_treduce_run's last launch of several, whose old value is
 * the earlier launches' partial sum).  op custom folds with the caller's combine (a call of
 * PASS_CUSTOM_COMBINE, linked in redjit-irc), acc = fn(acc, next rank): a non-commutative one in
 * rank order, 0 .. N-1, whatever the root (ir_treduce_rank_at).  Its state is the dtype (f16 /
 * bf16 too: no f32 accumulator), or a struct state (passes/state.c): each element lifted,
 * lift(x, position in fold order), combined, and field combine.result or finish(S) stored into a
 * destination of that field's dtype. */
#include "../state.h"

#include <stdio.h>
#include <string.h>

#define TR_THREADS 256
#define TR_SLOTS 4
#define TR_MAX_RANKS 128 /* pointer params per kernel: 1 KiB of the 4 KiB param space */
#define TR_MAX_GRID 65536
/* Up to TR_UNROLL ranks are folded straight from the parameters, in one unrolled sequence; more
 * come from a table in shared memory, TR_BATCH at a time (passes/srcfold.c): with every rank's
 * pointer live at once the kernel took 221 registers at 32 ranks, 1488 bytes of stack at 127, and
 * read 1100-2000 GB/s on one H100 from 48 ranks (docs/PERFORMANCE.md).  The table's loads are
 * volatile: the grid-stride loop has no barrier, and LLVM would hoist all N pointers out of it.
 * -D can change both, for measurements only. */
#ifndef TR_UNROLL
#define TR_UNROLL 16
#endif
#ifndef TR_BATCH
#define TR_BATCH 8
#endif
_Static_assert(TR_BATCH <= TR_UNROLL && TR_BATCH <= PASS_SRC_MAXBATCH && TR_SLOTS <= PASS_SRC_MAXX,
               "treduce batch sizes");

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  (void)tg;
  const rj_treduce *t = &r->u.treduce;
  if (t->ranks > TR_MAX_RANKS) {
    snprintf(buf, n,
             "ranks: %d; one kernel reads at most %d ranks (rj_treduce splits larger groups into "
             "several launches)",
             t->ranks, TR_MAX_RANKS);
    return buf;
  }
  return NULL;
}

static LLVMValueRef sreg(pass_emit *e, const char *name) {
  return LLVMBuildZExt(e->B, pass_call(e, name, NULL, 0, NULL, 0), LLVMInt64TypeInContext(e->C),
                       "");
}

/* The constant kernel's thread count for a geometry (its plan's block). */
static int threads_for(const ir_treduce_geom *g) {
  int64_t tile = g->TR * g->TC;
  int64_t t = (tile + TR_SLOTS - 1) / TR_SLOTS;
  t = (t + 31) / 32 * 32;
  return (int)(t < 32 ? 32 : t > TR_THREADS ? TR_THREADS : t);
}

/* The work split of T threads over a geometry: pieces per chunk, work items. */
static void split(const ir_treduce_geom *g, int T, int64_t *pieces, int64_t *work) {
  int64_t tile = g->TR * g->TC;
  *pieces = (tile + (int64_t)T * TR_SLOTS - 1) / ((int64_t)T * TR_SLOTS);
  *work = g->nchunks * *pieces;
}

/* The constant kernel's launch: threads_for's T, one block per work item up to TR_MAX_GRID (a
 * warp and one block where there is nothing to read or write: never launched). */
static void constant_geometry(const ir_treduce_geom *g, pass_plan *out) {
  for (int i = 0; i < 3; i++)
    out->grid[i] = out->block[i] = 1;
  if (g->numel == 0) {
    out->block[0] = 32;
    return;
  }
  int T = threads_for(g);
  int64_t P, W;
  split(g, T, &P, &W);
  out->block[0] = (unsigned)T;
  out->grid[0] = (unsigned)(W < TR_MAX_GRID ? W : TR_MAX_GRID);
}

/* ---- runtime-size kernels (rj_treduce.dynamic; docs/TREDUCE.md "Runtime-size kernels")
 * Dense row-major sources and destination are one flat range of n elements, n the kernel's last
 * parameter: pieces of T*TR_SLOTS elements grid-stride, T from the tile bound alone (not the
 * shape), so every count of the same ranks, root, op, dtype, flags and tile bound shares one
 * kernel.  Strided views keep the constant kernel. */

/* A runtime-size kernel's threads: from the tile bound as the constant kernel's (256 when the
 * tile is unbounded, [0, 0]), never from the shape. */
static int dyn_threads(const rj_treduce *t) {
  if (!t->tile[0] || !t->tile[1]) return TR_THREADS;
  int64_t tile = t->tile[0] > TR_THREADS * TR_SLOTS || t->tile[1] > TR_THREADS * TR_SLOTS
                     ? TR_THREADS * TR_SLOTS
                     : t->tile[0] * t->tile[1];
  int64_t T = ((tile + TR_SLOTS - 1) / TR_SLOTS + 31) / 32 * 32;
  return (int)(T > TR_THREADS ? TR_THREADS : T);
}

static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  (void)env;
  const rj_treduce *t = &r->u.treduce;
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  if (!t->dynamic) /* the constant kernel: its key is the canonical request */
    return constant_geometry(&g, out), RJ_OK;
  if (g.numel && (!ir_treduce_dense(&g, g.src_st) || !ir_treduce_dense(&g, g.dst_st))) {
    constant_geometry(&g, out);
    snprintf(out->note, sizeof out->note,
             " (dynamic: constant kernel, sizes are JIT constants: %s; the runtime-size kernel "
             "reads dense row-major buffers)",
             ir_treduce_dense(&g, g.src_st) ? "the destination is a strided view"
                                            : "the sources are strided views");
    return RJ_OK;
  }
  int T = dyn_threads(t);
  int64_t W = (g.numel + (int64_t)T * TR_SLOTS - 1) / ((int64_t)T * TR_SLOTS);
  out->grid[0] = (unsigned)(W < 1 ? 1 : W < TR_MAX_GRID ? W : TR_MAX_GRID);
  out->block[0] = (unsigned)T;
  out->grid[1] = out->grid[2] = out->block[1] = out->block[2] = 1;
  out->np = 1;
  out->p[0] = g.numel;
  /* op mean: the divisor (mean_count) is a constant; op custom: jit_cache_key adds the canonical
   * text, its combine with it */
  char mean[32] = "";
  if (t->mean_count) snprintf(mean, sizeof mean, "|mean_count%lld", (long long)t->mean_count);
  snprintf(out->key, sizeof out->key,
           "{dynamic treduce|flat T=%d|ranks%d|root%d|op%d|dtype%d|nan%d|accum%d|pingpong%d%s}", T,
           t->ranks, t->root, t->op, t->dtype, t->nan, t->accum, t->pingpong != 0, mean);
  snprintf(out->note, sizeof out->note,
           " (dynamic: bucket \"flat T=%d\" compiled in; n (elements) is a kernel parameter; grid "
           "%u x %u)",
           T, out->grid[0], out->block[0]);
  return RJ_OK;
}

/* A rank's TR_SLOTS elements at soff[] (invalid slots read element 0), and their fold.  op
 * custom keeps the dtype (f16 / bf16 too: the combine takes T); a struct state (st) lifts each
 * element, lift(x, position), position the rank's place in fold order, counted in pos (an i64
 * alloca: the table's fold is a loop). */
typedef struct tr_slots {
  const rj_treduce *t;
  const LLVMValueRef *soff;
  const st_req *st; /* op custom with a struct state: its fields (NULL: a scalar fold) */
  LLVMValueRef pos;
} tr_slots;

static void load_slots(pass_emit *e, const void *cx, LLVMValueRef p, LLVMValueRef *x) {
  const tr_slots *a = cx;
  LLVMTypeRef ty = pass_type(e, a->t->dtype);
  for (int s = 0; s < TR_SLOTS; s++) {
    x[s] = LLVMBuildLoad2(e->B, ty, pass_gep(e, ty, p, a->soff[s]), "");
    if (a->t->op != RJ_OP_CUSTOM) x[s] = pass_to_acc(e, x[s], a->t->dtype);
  }
}

static void fold_slots(pass_emit *e, const void *cx, const LLVMValueRef *x, LLVMValueRef *acc) {
  const tr_slots *a = cx;
  const rj_treduce *t = a->t;
  if (a->st) {
    LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
    LLVMValueRef k = LLVMBuildLoad2(e->B, i64, a->pos, "pos");
    for (int s = 0; s < TR_SLOTS; s++)
      acc[s] = st_combine(e, a->st, acc[s], st_elem(e, a->st, pass_to_acc(e, x[s], t->dtype), k));
    LLVMBuildStore(e->B, LLVMBuildAdd(e->B, k, pass_i64(e, 1), ""), a->pos);
    return;
  }
  for (int s = 0; s < TR_SLOTS; s++)
    acc[s] = pass_fold(e, t->op, t->dtype, t->nan, acc[s], x[s]);
}

/* The result of slot acc: a struct state's field combine.result or finish(S), else the mean (the
 * other ops: acc); and that result as stored (the dtype; op custom: already it). */
static LLVMValueRef result_of(pass_emit *e, const rj_treduce *t, const st_req *st,
                              LLVMValueRef acc) {
  if (st) return st_finish(e, st, acc);
  return pass_mean(e, t->op, t->dtype, acc, pass_i64(e, ir_treduce_mean_count(t)));
}

static LLVMValueRef stored(pass_emit *e, const rj_treduce *t, LLVMValueRef v) {
  return t->op == RJ_OP_CUSTOM ? v : pass_from_acc(e, v, t->dtype);
}

/* The kernel's function, redjit_treduce(dst, src_0 .. src_{N-1}) and np i64 size parameters
 * after them (a runtime-size kernel: n), its entry block current. */
static void declare_kernel(pass_emit *e, int N, int np) {
  LLVMTypeRef gptr = LLVMPointerTypeInContext(e->C, AS_GLOBAL);
  LLVMTypeRef params[1 + TR_MAX_RANKS + 1];
  for (int i = 0; i <= N; i++)
    params[i] = gptr;
  for (int i = 0; i < np; i++)
    params[N + 1 + i] = LLVMInt64TypeInContext(e->C);
  e->nparams = np;
  LLVMTypeRef fty =
      LLVMFunctionType(LLVMVoidTypeInContext(e->C), params, (unsigned)(N + 1 + np), 0);
  e->entry = "redjit_treduce";
  e->fn = LLVMAddFunction(e->M, e->entry, fty);
  LLVMSetFunctionCallConv(e->fn, LLVMPTXKernelCallConv);
  LLVMPositionBuilderAtEnd(e->B, LLVMAppendBasicBlockInContext(e->C, e->fn, "entry"));
}

/* Where work item w's piece lies: its chunk's first row and col, and the chunk's element offsets
 * in the sources and the destination (outer dims included). */
typedef struct chunk_at {
  LLVMValueRef piece, r0, c0, sbase, dbase;
} chunk_at;

static void chunk_origin(pass_emit *e, const ir_treduce_geom *g, LLVMValueRef w, int64_t P,
                         chunk_at *ch) {
  LLVMValueRef chunk = P == 1 ? w : LLVMBuildUDiv(e->B, w, pass_i64(e, P), "chunk");
  ch->piece = P == 1 ? pass_i64(e, 0) : LLVMBuildURem(e->B, w, pass_i64(e, P), "piece");
  LLVMValueRef cc = LLVMBuildURem(e->B, chunk, pass_i64(e, g->ncc), "cc");
  LLVMValueRef rest = LLVMBuildUDiv(e->B, chunk, pass_i64(e, g->ncc), "");
  LLVMValueRef rc = LLVMBuildURem(e->B, rest, pass_i64(e, g->nrc), "rc");
  rest = LLVMBuildUDiv(e->B, rest, pass_i64(e, g->nrc), "outer");
  ch->r0 = LLVMBuildMul(e->B, rc, pass_i64(e, g->TR), "row0");
  ch->c0 = LLVMBuildMul(e->B, cc, pass_i64(e, g->TC), "col0");
  ch->sbase = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, ch->r0, pass_i64(e, g->src_st[3]), ""),
                           LLVMBuildMul(e->B, ch->c0, pass_i64(e, g->src_st[4]), ""), "");
  ch->dbase = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, ch->r0, pass_i64(e, g->dst_st[3]), ""),
                           LLVMBuildMul(e->B, ch->c0, pass_i64(e, g->dst_st[4]), ""), "");
  for (int d = 2; d >= 0; d--) { /* the outer dims */
    if (g->shape[d] == 1) continue;
    LLVMValueRef c = d == 0 ? rest : LLVMBuildURem(e->B, rest, pass_i64(e, g->shape[d]), "");
    if (d) rest = LLVMBuildUDiv(e->B, rest, pass_i64(e, g->shape[d]), "");
    ch->sbase =
        LLVMBuildAdd(e->B, ch->sbase, LLVMBuildMul(e->B, c, pass_i64(e, g->src_st[d]), ""), "");
    ch->dbase =
        LLVMBuildAdd(e->B, ch->dbase, LLVMBuildMul(e->B, c, pass_i64(e, g->dst_st[d]), ""), "");
  }
}

/* The smaller of an i64 and a constant. */
static LLVMValueRef min_i64(pass_emit *e, LLVMValueRef a, int64_t b) {
  return LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, a, pass_i64(e, b), ""), a,
                         pass_i64(e, b), "");
}

/* Each slot's validity and source / destination offsets (ity: the index type inside a chunk).
 * The chunk's valid rows and cols are computed at run time (partial at the ends); invalid slots
 * load element 0 (always there) and store nothing: no branches around loads. */
static void slot_offsets(pass_emit *e, const ir_treduce_geom *g, int T, LLVMTypeRef ity,
                         LLVMValueRef tid, const chunk_at *ch, LLVMValueRef *valid,
                         LLVMValueRef *soff, LLVMValueRef *doff) {
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
#define IC(v) LLVMConstInt(ity, (unsigned long long)(v), 1)
  LLVMValueRef left_r = LLVMBuildSub(e->B, pass_i64(e, g->R), ch->r0, "");
  LLVMValueRef left_c = LLVMBuildSub(e->B, pass_i64(e, g->C), ch->c0, "");
  LLVMValueRef cur_r = min_i64(e, left_r, g->TR);
  LLVMValueRef cur_c = min_i64(e, left_c, g->TC);
  cur_r = LLVMBuildTrunc(e->B, cur_r, ity, "rows");
  cur_c = LLVMBuildTrunc(e->B, cur_c, ity, "cols");
  LLVMValueRef nvalid = LLVMBuildMul(e->B, cur_r, cur_c, "");
  bool const_cols = g->C % g->TC == 0; /* every chunk is TC wide: divide by a constant */
  LLVMValueRef first = LLVMBuildAdd(
      e->B,
      LLVMBuildMul(e->B, LLVMBuildTrunc(e->B, ch->piece, ity, ""), IC((int64_t)T * TR_SLOTS), ""),
      LLVMBuildTrunc(e->B, tid, ity, ""), "");
  for (int s = 0; s < TR_SLOTS; s++) {
    LLVMValueRef j = LLVMBuildAdd(e->B, first, IC((int64_t)s * T), "");
    valid[s] = LLVMBuildICmp(e->B, LLVMIntULT, j, nvalid, "valid");
    LLVMValueRef row = LLVMBuildUDiv(e->B, j, const_cols ? IC(g->TC) : cur_c, "");
    LLVMValueRef col =
        LLVMBuildSub(e->B, j, LLVMBuildMul(e->B, row, const_cols ? IC(g->TC) : cur_c, ""), "");
    row = LLVMBuildZExt(e->B, row, i64, "");
    col = LLVMBuildZExt(e->B, col, i64, "");
    LLVMValueRef so =
        LLVMBuildAdd(e->B, ch->sbase,
                     LLVMBuildAdd(e->B, LLVMBuildMul(e->B, row, pass_i64(e, g->src_st[3]), ""),
                                  LLVMBuildMul(e->B, col, pass_i64(e, g->src_st[4]), ""), ""),
                     "");
    LLVMValueRef dof =
        LLVMBuildAdd(e->B, ch->dbase,
                     LLVMBuildAdd(e->B, LLVMBuildMul(e->B, row, pass_i64(e, g->dst_st[3]), ""),
                                  LLVMBuildMul(e->B, col, pass_i64(e, g->dst_st[4]), ""), ""),
                     "");
    soff[s] = LLVMBuildSelect(e->B, valid[s], so, pass_i64(e, 0), "soff");
    doff[s] = LLVMBuildSelect(e->B, valid[s], dof, pass_i64(e, 0), "doff");
  }
#undef IC
}

/* acc[] = the op's identity, folded with the destination's old values (accum), then with each
 * rank's slots in fold order: from the table tab (many ranks), or unrolled from src[]. */
static void fold_ranks(pass_emit *e, const rj_treduce *t, const st_req *st, LLVMValueRef dst,
                       const LLVMValueRef *src, LLVMValueRef tab, const LLVMValueRef *soff,
                       const LLVMValueRef *doff, LLVMValueRef *acc) {
  int N = t->ranks;
  rj_dtype dt = t->dtype;
  LLVMTypeRef ty = pass_type(e, dt);
  LLVMValueRef cur[TR_SLOTS], nxt[TR_SLOTS] = {0};
  for (int s = 0; s < TR_SLOTS; s++) {
    acc[s] = st ? st_identity(e, st) : pass_identity(e, t->op, dt);
    if (t->accum) { /* never with a struct state (ir/validate.c) */
      LLVMValueRef old = LLVMBuildLoad2(e->B, ty, pass_gep(e, ty, dst, doff[s]), "old");
      if (t->op != RJ_OP_CUSTOM) old = pass_to_acc(e, old, dt);
      acc[s] = pass_fold(e, t->op, dt, t->nan, acc[s], old);
    }
  }
  tr_slots a = {.t = t, .soff = soff, .st = st};
  if (st) {
    a.pos = pass_entry_alloca(e, LLVMInt64TypeInContext(e->C), "pos");
    LLVMBuildStore(e->B, pass_i64(e, 0), a.pos);
  }
  if (tab) {
    /* ping-pong: a batch's loads in flight while the previous batch folds; the table's loads
     * volatile, or LLVM would hoist all N pointers out of the grid-stride loop again */
    pass_srcfold sf = {.tab = tab,
                       .n = N,
                       .batch = TR_BATCH,
                       .nx = TR_SLOTS,
                       .nacc = TR_SLOTS,
                       .pipelined = t->pingpong,
                       .volatile_table = true,
                       .load = load_slots,
                       .fold = fold_slots,
                       .cx = &a};
    pass_src_fold(e, &sf, acc);
  } else if (t->pingpong) {
    load_slots(e, &a, src[0], cur);
    for (int k = 0; k < N; k++) {
      if (k + 1 < N) /* ping-pong: rank k+1's fetch is in flight while rank k is folded */
        load_slots(e, &a, src[k + 1], nxt);
      fold_slots(e, &a, cur, acc);
      memcpy(cur, nxt, sizeof cur);
    }
  } else {
    for (int k = 0; k < N; k++) { /* each rank loaded, then folded */
      load_slots(e, &a, src[k], cur);
      fold_slots(e, &a, cur, acc);
    }
  }
}

/* The source parameters in the reference's order (root, then the others: ir/), the thread's
 * tid, ctaid and nctaid, and for many ranks the table of their pointers (made before any loop:
 * every thread reaches its barrier); NULL when the ranks are unrolled. */
static LLVMValueRef rank_sources(pass_emit *e, const rj_treduce *t, LLVMValueRef *src,
                                 LLVMValueRef *tid, LLVMValueRef *bid, LLVMValueRef *gdim) {
  int N = t->ranks;
  for (int k = 0; k < N; k++)
    src[k] = LLVMGetParam(e->fn, (unsigned)ir_treduce_rank_at(t, k) + 1);
  *tid = sreg(e, "llvm.nvvm.read.ptx.sreg.tid.x");
  *bid = sreg(e, "llvm.nvvm.read.ptx.sreg.ctaid.x");
  *gdim = sreg(e, "llvm.nvvm.read.ptx.sreg.nctaid.x");
  if (N <= TR_UNROLL) return NULL;
  return pass_src_table(e, src, N, LLVMBuildICmp(e->B, LLVMIntEQ, *tid, pass_i64(e, 0), ""));
}

/* Each valid slot's result (a struct state's field result, or finish) into dst[off], of type ty. */
static void store_slots(pass_emit *e, const rj_treduce *t, const st_req *st, LLVMTypeRef ty,
                        LLVMValueRef dst, const LLVMValueRef *valid, const LLVMValueRef *off,
                        const LLVMValueRef *acc) {
  for (int s = 0; s < TR_SLOTS; s++) {
    pass_if w;
    pass_if_begin(e, &w, valid[s]);
    LLVMValueRef v = result_of(e, t, st, acc[s]);
    LLVMBuildStore(e->B, stored(e, t, v), pass_gep(e, ty, dst, off[s]));
    pass_if_end(e, &w);
  }
}

/* The runtime-size kernel: for (i0 = blockIdx.x * T*S; i0 < n; i0 += gridDim.x * T*S), slot s
 * of thread tid holds element i0 + s*T + tid (coalesced), the same offset in every source and the
 * destination (dense); slots past n load element 0 and store nothing.  The plan's geometry. */
static rj_status dyn_kernel(pass_emit *e, const rj_treduce *t) {
  int N = t->ranks, T = (int)e->plan->block[0];
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C), ty = pass_type(e, ir_treduce_result(t));
  st_req view = st_of_treduce(t);
  const st_req *st = t->op == RJ_OP_CUSTOM && t->combine.nfields ? &view : NULL;
  declare_kernel(e, N, 1);
  LLVMValueRef dst = LLVMGetParam(e->fn, 0), n = LLVMGetParam(e->fn, (unsigned)N + 1);
  LLVMSetValueName2(n, "n", 1);
  LLVMValueRef src[TR_MAX_RANKS], tid, bid, gdim;
  LLVMValueRef tab = rank_sources(e, t, src, &tid, &bid, &gdim);
  LLVMValueRef piece = pass_i64(e, (int64_t)T * TR_SLOTS);
  LLVMValueRef iv = pass_entry_alloca(e, i64, "i0");
  LLVMBuildStore(e->B, LLVMBuildMul(e->B, bid, piece, ""), iv);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(e->C, e->fn, "pieces");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(e->C, e->fn, "piece");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(e->C, e->fn, "done");
  LLVMBuildBr(e->B, head);
  LLVMPositionBuilderAtEnd(e->B, head);
  LLVMValueRef i0 = LLVMBuildLoad2(e->B, i64, iv, "");
  LLVMBuildCondBr(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, i0, n, ""), body, done);
  LLVMPositionBuilderAtEnd(e->B, body);
  i0 = LLVMBuildLoad2(e->B, i64, iv, "");
  LLVMValueRef valid[TR_SLOTS], off[TR_SLOTS], acc[TR_SLOTS];
  for (int s = 0; s < TR_SLOTS; s++) {
    LLVMValueRef j =
        LLVMBuildAdd(e->B, LLVMBuildAdd(e->B, i0, pass_i64(e, (int64_t)s * T), ""), tid, "j");
    valid[s] = LLVMBuildICmp(e->B, LLVMIntSLT, j, n, "valid");
    off[s] = LLVMBuildSelect(e->B, valid[s], j, pass_i64(e, 0), "off");
  }
  fold_ranks(e, t, st, dst, src, tab, off, off, acc);
  store_slots(e, t, st, ty, dst, valid, off, acc);
  LLVMBuildStore(e->B, LLVMBuildAdd(e->B, i0, LLVMBuildMul(e->B, gdim, piece, ""), ""), iv);
  LLVMBuildBr(e->B, head);
  LLVMPositionBuilderAtEnd(e->B, done);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  const rj_treduce *t = &r->u.treduce;
  if (e->plan && e->plan->np) return dyn_kernel(e, t);
  ir_treduce_geom g;
  ir_treduce_facts(t, &g);
  int N = t->ranks;
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C), i32 = LLVMInt32TypeInContext(e->C);
  /* 1. the function and the plan's geometry: T threads, P pieces per chunk, W work items */
  declare_kernel(e, N, 0);
  if (g.numel == 0) { /* nothing to read or write: never launched */
    LLVMBuildRetVoid(e->B);
    return RJ_OK;
  }
  int T = (int)e->plan->block[0];
  int64_t P, W;
  split(&g, T, &P, &W);
  LLVMTypeRef ty = pass_type(e, ir_treduce_result(t)); /* the destination's */
  st_req view = st_of_treduce(t);
  const st_req *st = t->op == RJ_OP_CUSTOM && t->combine.nfields ? &view : NULL;
  /* index type for positions inside a chunk */
  bool narrow = g.TR * g.TC + (int64_t)T * TR_SLOTS < ((int64_t)1 << 31);
  LLVMTypeRef ity = narrow ? i32 : i64;
  LLVMValueRef dst = LLVMGetParam(e->fn, 0);
  /* 2. the sources; many ranks: their pointers in a table */
  LLVMValueRef src[TR_MAX_RANKS], tid, bid, gdim;
  LLVMValueRef tab = rank_sources(e, t, src, &tid, &bid, &gdim);
  /* 3. for (w = blockIdx.x; w < W; w += gridDim.x): the chunk, the slots, the fold, the stores */
  LLVMValueRef wv = pass_entry_alloca(e, i64, "w");
  LLVMBuildStore(e->B, bid, wv);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(e->C, e->fn, "chunks");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(e->C, e->fn, "chunk");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(e->C, e->fn, "done");
  LLVMBuildBr(e->B, head);
  LLVMPositionBuilderAtEnd(e->B, head);
  LLVMValueRef w = LLVMBuildLoad2(e->B, i64, wv, "");
  LLVMBuildCondBr(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, w, pass_i64(e, W), ""), body, done);
  LLVMPositionBuilderAtEnd(e->B, body);
  w = LLVMBuildLoad2(e->B, i64, wv, "");
  chunk_at ch;
  chunk_origin(e, &g, w, P, &ch);
  LLVMValueRef valid[TR_SLOTS], soff[TR_SLOTS], doff[TR_SLOTS], acc[TR_SLOTS];
  slot_offsets(e, &g, T, ity, tid, &ch, valid, soff, doff);
  fold_ranks(e, t, st, dst, src, tab, soff, doff, acc);
  store_slots(e, t, st, ty, dst, valid, doff, acc);
  LLVMBuildStore(e->B, LLVMBuildAdd(e->B, LLVMBuildLoad2(e->B, i64, wv, ""), gdim, ""), wv);
  LLVMBuildBr(e->B, head);
  LLVMPositionBuilderAtEnd(e->B, done);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_treduce = {
    .name = "treduce",
    .prio = 10,
    .kind = RJ_KIND_TREDUCE,
    .summary =
        "root kernel reads every rank's chunk (2D sliding, partial chunks) and folds on chip; "
        "ping-pong = register double buffer",
    .ops = PASS_OPS_BASIC | PASS_OP(RJ_OP_PROD) | PASS_OP(RJ_OP_AND) | PASS_OP(RJ_OP_OR) |
           PASS_OP(RJ_OP_XOR) | PASS_OP(RJ_OP_MEAN) | PASS_OP(RJ_OP_CUSTOM),
    .keeps_order = true, /* acc = fn(acc, next rank's element), in fold order */
    .accepts = accepts,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
