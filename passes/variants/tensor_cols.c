/* tensor_cols: reductions over a middle or leading dim with a kept innermost dim — column
 * reductions (R x K, reduce R) and (O x R x K, reduce R) patterns.
 *
 * A CTA of BX x BY threads (256) owns BX column vectors (vec consecutive columns each, 16-byte
 * loads, 8-byte for 1-byte dtypes (tns_vec_rc), when the inner stride is 1 and the row strides
 * keep vectors aligned, else one column each) of one outer index; its BY thread rows stride down
 * the reduced dim, U = 4 rows in flight per thread, so a warp reads 32 / BX rows of BX * 16 (8)
 * contiguous bytes per load.  The BY partials
 * fold in shared memory in a fixed order.  When the column tiles cannot fill the chip the reduced
 * dim is split over S CTAs; their partials go to a module workspace laid out [S][O*K] and the last
 * CTA of a tile folds them in split order. */
#include "../tensor.h"

#include <stdio.h>
#include <string.h>

#define TNS_DYN_U 4 /* loads per round of two loops of runtime-size kernels (see their call) */

typedef struct cols_plan {
  int64_t O, R, K, OS, RS, KS;
  int vec, BX, BY, T, S;
  int U;        /* loads in flight per thread (<= TNS_U); also the last CTA's partials per thread */
  int64_t CB;   /* column tiles per outer index */
  int64_t rows; /* reduced rows per split */
  unsigned grid;
} cols_plan;

/* T = 256 threads (64 registers: 4 CTAs per SM), U = 4 rows in flight per thread (measured
 * against 8 on the H100: bf16 1024 x 32768 columns 11 % faster, f32 4096^2 2 %, 65536 x 128 the
 * same; docs/PERFORMANCE.md, "Fourth pass").  The grid is one resident wave: S splits of the
 * reduced dim per tile, S = floor(wave / tiles).  The tile width BX (column vectors; a warp row
 * reads BX * 16 contiguous bytes) is the widest of 32, 16, 8 whose last-CTA fold leaves each
 * thread at most U partials (S * BX <= U * T): narrow tiles mean more tiles, fewer
 * splits, and a smaller fold (65536 x 128 f32: 4 tiles of 32 columns x 132 splits, not 1 x 528). */
static void make_plan(int sms, const rj_tensor *t, const ir_tview *v, cols_plan *p) {
  int n = v->n;
  p->K = v->size[n - 1];
  p->KS = v->stride[n - 1];
  p->R = v->size[n - 2];
  p->RS = v->stride[n - 2];
  p->O = n == 3 ? v->size[0] : 1;
  p->OS = n == 3 ? v->stride[0] : 0;
  int vec = tns_vec_rc(t->dtype);
  bool vok = p->KS == 1 && p->RS % vec == 0 && p->OS % vec == 0 && p->K >= vec;
  st_req sr = st_of_tensor(t);
  /* rj_cols: <= 32 KiB shared, judged on the 16-byte vector (a state op of a 1-byte dtype whose
   * 16-byte vector would not fit keeps scalar columns: argmax / var of float8 and i8 .. bool) */
  if (st_on(&sr) && 256 * tns_vec(t->dtype) * st_bytes(&sr) > 32768) vok = false;
  p->vec = vok ? vec : 1;
  int64_t ncv = (p->K + p->vec - 1) / p->vec;
  int64_t bxmax = tns_pow2(ncv);
  if (bxmax > 32) bxmax = 32;
  int64_t bxmin = p->vec > 1 && bxmax > 8 ? 8 : bxmax; /* scalar columns: 32 per warp row */
  p->T = 256;
  p->U = 4;
  int64_t wave = (int64_t)sms * (65536 / TNS_REGS / p->T);
  int64_t most_parts = st_on(&sr) ? ((int64_t)8 << 24) / st_bytes(&sr) : (int64_t)1 << 24;
  for (int64_t bx = bxmax;; bx /= 2) {
    p->BX = (int)bx;
    p->BY = p->T / p->BX;
    p->CB = (ncv + p->BX - 1) / p->BX;
    int64_t tiles = p->O * p->CB;
    int64_t S = tiles >= wave ? 1 : wave / tiles;
    int64_t most = (p->R + (int64_t)p->BY * p->U - 1) / ((int64_t)p->BY * p->U);
    if (S > most) S = most;
    if (S > 1024) S = 1024;
    while (S > 1 && S * p->O * p->K > most_parts)
      S /= 2; /* workspace <= 16M partials (states: <= 128 MiB) */
    if (S < 1) S = 1;
    p->rows = (p->R + S - 1) / S;
    p->S = (int)((p->R + p->rows - 1) / p->rows);
    p->grid = (unsigned)(tiles * p->S);
    if ((int64_t)p->S * p->BX <= (int64_t)p->U * p->T || bx <= bxmin) break;
  }
}

/* The sizes the emitter reads: constants of the plan (constant kernels) or kernel parameters
 * (runtime-size kernels; S is the constant 1 outside the split bucket).  OK = O * K. */
typedef struct cols_sizes {
  LLVMValueRef O, R, K, OS, RS, KS, CB, rows, S, OK;
} cols_sizes;

/* The workspace bound of a split runtime-size kernel: split plans keep tiles * S <= one wave, and
 * O * K <= tiles * BX * vec, so S * O * K <= wave * BX * vec partials and O * CB <= wave
 * counters. */
static int64_t cols_ws_bound(int sms, const cols_plan *p) {
  return tns_wave(sms, p->T) * p->BX * p->vec;
}

/* What the emitter reads: the plan, whether the kernel takes its sizes as parameters, and the SM
 * count a runtime-size kernel's workspace is sized for. */
typedef struct cols_priv {
  cols_plan p;
  bool runtime;
  int sms;
} cols_priv;
_Static_assert(sizeof(cols_priv) <= PASS_PLAN_PRIV, "cols_priv fits the plan");

/* Runtime-size kernels: the bucket is vector or scalar columns, BX and split or not; O, R, K, OS,
 * RS, KS, CB, rows (per split) and S are parameters.  NULL, or why not. */
static const char *runtime_sizes(const rj_request *r, int sms, const cols_plan *p, pass_plan *out) {
  if (p->S > 1 &&
      (p->S * p->O * p->K > cols_ws_bound(sms, p) || p->O * p->CB > tns_wave(sms, p->T)))
    return "the split plan exceeds the workspace bound (one wave of tiles)";
  char bucket[64];
  snprintf(bucket, sizeof bucket, "cols %s BX=%d %s", p->vec > 1 ? "vector" : "scalar", p->BX,
           p->S > 1 ? "split" : "single");
  int64_t prm[9] = {p->O, p->R, p->K, p->OS, p->RS, p->KS, p->CB, p->rows, p->S};
  out->np = 9;
  memcpy(out->p, prm, sizeof prm);
  tns_plan_runtime(out, r, "tensor_cols", bucket, "O R K OS RS KS CB rows S");
  return NULL;
}

/* needs a request this variant accepts */
static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  const rj_tensor *t = &r->u.tensor;
  ir_tview v;
  ir_tensor_view(t, &v);
  cols_priv cp = {0};
  out->sms = env->sms(env);
  cp.sms = tns_sms(out->sms);
  make_plan(cp.sms, t, &v, &cp.p);
  tns_plan_geometry(out, cp.p.grid, (unsigned)cp.p.T);
  if (t->dynamic) {
    const char *no = runtime_sizes(r, cp.sms, &cp.p, out);
    if (no) tns_plan_constant(out, no);
    cp.runtime = !no;
  }
  memcpy(out->priv.bytes, &cp, sizeof cp);
  return RJ_OK;
}

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  (void)tg;
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  if (tns_classify(&v) != TNS_COLS) {
    snprintf(buf, n, "the canonical view is not (reduce, kept) or (kept, reduce, kept)");
    return buf;
  }
  if (v.outputs > ((int64_t)1 << 31)) return "more than 2^31 outputs";
  return NULL;
}

/* Loads row r (i64, in range) of this thread's column vector into x[vec] (acc type).  Fast: one
 * 16-byte vector.  Otherwise scalars, each column clamped to K - 1 (a valid address) and the
 * identity folded for columns past K. */
static void load_row(pass_emit *e, const rj_tensor *t, const cols_plan *p, const cols_sizes *z,
                     LLVMValueRef rowbase, LLVMValueRef k0, bool fast, LLVMValueRef r,
                     LLVMValueRef *x) {
  LLVMTypeRef ty = pass_type(e, t->dtype);
  st_req sr = st_of_tensor(t);
  LLVMValueRef ptr = pass_gep(e, ty, rowbase, LLVMBuildMul(e->B, r, z->RS, ""));
  if (fast) {
    tns_load_vec(e, t, pass_gep(e, ty, ptr, k0), p->vec, x);
    return;
  }
  for (int k = 0; k < p->vec; k++) {
    LLVMValueRef col = LLVMBuildAdd(e->B, k0, tns_i64(e, k), "");
    LLVMValueRef in = LLVMBuildICmp(e->B, LLVMIntSLT, col, z->K, "");
    LLVMValueRef cc =
        LLVMBuildSelect(e->B, in, col, LLVMBuildSub(e->B, z->K, tns_i64(e, 1), ""), "");
    LLVMValueRef v = tns_load(e, t, pass_gep(e, ty, ptr, LLVMBuildMul(e->B, cc, z->KS, "")));
    x[k] = st_on(&sr) ? v : tns_or_identity(e, t, in, v); /* (states: never stored) */
  }
}

/* Rows first, first + BY, ... < rend into acc[vec]: rounds of U (<= TNS_U) rows, every load of a
 * round issued before its folds; slots past rend re-read row rend - 1 and fold the identity.  The
 * fold order (per thread, rows in order) does not depend on U. */
static void row_loops(pass_emit *e, const rj_tensor *t, const cols_plan *p, const cols_sizes *z,
                      LLVMValueRef rowbase, LLVMValueRef k0, bool fast, LLVMValueRef first,
                      LLVMValueRef rend, int U, LLVMValueRef *acc) {
  LLVMValueRef lastr = LLVMBuildSub(e->B, rend, tns_i64(e, 1), "");
  st_req sr = st_of_tensor(t);
  pass_loop l1;
  pass_loop_begin(e, &l1, first, rend, tns_i64(e, (int64_t)U * p->BY));
  LLVMValueRef x[TNS_U][16], ok[TNS_U];
  for (int u = 0; u < U; u++) {
    LLVMValueRef r = LLVMBuildAdd(e->B, l1.i, tns_i64(e, (int64_t)u * p->BY), "");
    ok[u] = LLVMBuildICmp(e->B, LLVMIntSLT, r, rend, "");
    load_row(e, t, p, z, rowbase, k0, fast, LLVMBuildSelect(e->B, ok[u], r, lastr, ""), x[u]);
  }
  if (t->op == RJ_OP_LOGSUMEXP) { /* column by column, a round at once */
    LLVMValueRef oks[TNS_U], xs[TNS_U];
    for (int k = 0; k < p->vec; k++) {
      for (int u = 0; u < U; u++)
        xs[u] = x[u][k], oks[u] = u ? ok[u] : NULL;
      tns_fold_round(e, t, acc[k], xs, NULL, oks, U);
    }
  } else {
    for (int u = 0; u < U; u++) {
      LLVMValueRef ix = NULL; /* the row: the element's index (indexed ops only) */
      if (st_wants_index(&sr))
        ix = tns_elem_idx(e, t, NULL, LLVMBuildAdd(e->B, l1.i, tns_i64(e, (int64_t)u * p->BY), ""));
      for (int k = 0; k < p->vec; k++)
        tns_fold_elem(e, t, acc[k], x[u][k], ix, u ? ok[u] : NULL);
    }
  }
  pass_loop_end(e, &l1);
}

/* Where the BY x BX x vec values of the shared fold live.  A scalar value: one array, element
 * (y, x, k) at y * W + x * vec + k (W = BX * vec).  A state (a struct: argmax's value and index,
 * Welford's count, mean and M2, a caller's fields): one array per field, element (y, x, k) at
 * k * T + y * BX + x, so that a warp's 32 threads touch 32 consecutive fields (thread-major
 * structs of 8 to 32 bytes put a warp's accesses on 2 to 4 banks: a 16-way conflict). */
typedef struct cols_smem {
  LLVMTypeRef ty;                              /* the value's type (acc) */
  unsigned nf;                                 /* 0: a scalar; else the struct's fields */
  LLVMValueRef arr[RJ_COMBINE_FIELDS_MAX + 1]; /* the array, or one per field */
} cols_smem;

static void smem_make(pass_emit *e, const cols_plan *p, LLVMTypeRef ty, cols_smem *m) {
  int64_t n = (int64_t)p->T * p->vec;
  m->ty = ty;
  m->nf = LLVMGetTypeKind(ty) == LLVMStructTypeKind ? LLVMCountStructElementTypes(ty) : 0;
  if (m->nf == 0 || m->nf > RJ_COMBINE_FIELDS_MAX + 1) {
    m->nf = 0;
    m->arr[0] = pass_global_array(e, ty, n, AS_SHARED, "rj_cols");
    return;
  }
  for (unsigned f = 0; f < m->nf; f++)
    m->arr[f] = pass_global_array(e, LLVMStructGetTypeAtIndex(ty, f), n, AS_SHARED, "rj_cols");
}

/* The element of column k of thread (y + dy, x) (y NULL: row 0) in the per-field arrays. */
static LLVMValueRef smem_index(pass_emit *e, const cols_plan *p, LLVMValueRef y, int dy,
                               LLVMValueRef x, int k) {
  LLVMValueRef at = x;
  if (y) at = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, y, pass_i32(e, p->BX), ""), x, "");
  return LLVMBuildAdd(e->B, at, pass_i32(e, k * p->T + dy * p->BX), "");
}

static void smem_store(pass_emit *e, const cols_smem *m, LLVMValueRef i, LLVMValueRef v) {
  for (unsigned f = 0; f < m->nf; f++) {
    LLVMTypeRef fty = LLVMStructGetTypeAtIndex(m->ty, f);
    LLVMBuildStore(e->B, LLVMBuildExtractValue(e->B, v, f, ""), pass_gep(e, fty, m->arr[f], i));
  }
}

static LLVMValueRef smem_load(pass_emit *e, const cols_smem *m, LLVMValueRef i) {
  LLVMValueRef v = LLVMGetUndef(m->ty);
  for (unsigned f = 0; f < m->nf; f++) {
    LLVMTypeRef fty = LLVMStructGetTypeAtIndex(m->ty, f);
    LLVMValueRef x = LLVMBuildLoad2(e->B, fty, pass_gep(e, fty, m->arr[f], i), "");
    v = LLVMBuildInsertValue(e->B, v, x, f, "");
  }
  return v;
}

/* fold_rows over a state's per-field arrays. */
static void fold_rows_fields(pass_emit *e, const rj_tensor *t, const cols_plan *p,
                             const cols_smem *m, LLVMValueRef tx, LLVMValueRef ty_, LLVMValueRef *c,
                             LLVMValueRef *out) {
  for (int k = 0; k < p->vec; k++)
    smem_store(e, m, smem_index(e, p, ty_, 0, tx, k), c[k]);
  pass_barrier_cta(e);
  for (int h = p->BY / 2; h >= 1; h /= 2) {
    pass_if f;
    pass_if_begin(e, &f, LLVMBuildICmp(e->B, LLVMIntULT, ty_, pass_i32(e, h), ""));
    for (int k = 0; k < p->vec; k++) {
      LLVMValueRef ia = smem_index(e, p, ty_, 0, tx, k), ib = smem_index(e, p, ty_, h, tx, k);
      LLVMValueRef a = smem_load(e, m, ia), b = smem_load(e, m, ib);
      smem_store(e, m, ia, tns_combine(e, t, a, b));
    }
    pass_if_end(e, &f);
    pass_barrier_cta(e);
  }
  for (int k = 0; k < p->vec; k++)
    out[k] = smem_load(e, m, smem_index(e, p, NULL, 0, tx, k));
}

/* The BY thread rows' values c[vec] fold in shared memory: a fixed tree of log2(BY) halving
 * steps (row y takes row y + h, h = BY/2 .. 1), a barrier after each; every thread then reads
 * the column totals of its tx into out[vec].  Ends after those reads (no trailing barrier). */
static void fold_rows(pass_emit *e, const rj_tensor *t, const cols_plan *p, const cols_smem *m,
                      LLVMValueRef tx, LLVMValueRef ty_, LLVMValueRef *c, LLVMValueRef *out) {
  if (m->nf) {
    fold_rows_fields(e, t, p, m, tx, ty_, c, out);
    return;
  }
  LLVMTypeRef acc_ty = m->ty;
  LLVMValueRef sm = m->arr[0];
  int W = p->BX * p->vec;
  LLVMValueRef col = LLVMBuildMul(e->B, tx, pass_i32(e, p->vec), "");
  LLVMValueRef mine = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, ty_, pass_i32(e, W), ""), col, "");
  for (int k = 0; k < p->vec; k++)
    LLVMBuildStore(e->B, c[k],
                   pass_gep(e, acc_ty, sm, LLVMBuildAdd(e->B, mine, pass_i32(e, k), "")));
  pass_barrier_cta(e);
  for (int h = p->BY / 2; h >= 1; h /= 2) {
    pass_if f;
    pass_if_begin(e, &f, LLVMBuildICmp(e->B, LLVMIntULT, ty_, pass_i32(e, h), ""));
    for (int k = 0; k < p->vec; k++) {
      LLVMValueRef pa = pass_gep(e, acc_ty, sm, LLVMBuildAdd(e->B, mine, pass_i32(e, k), ""));
      LLVMValueRef pb =
          pass_gep(e, acc_ty, sm, LLVMBuildAdd(e->B, mine, pass_i32(e, h * W + k), ""));
      LLVMValueRef a = LLVMBuildLoad2(e->B, acc_ty, pa, ""),
                   b = LLVMBuildLoad2(e->B, acc_ty, pb, "");
      LLVMBuildStore(e->B, tns_combine(e, t, a, b), pa);
    }
    pass_if_end(e, &f);
    pass_barrier_cta(e);
  }
  for (int k = 0; k < p->vec; k++)
    out[k] = LLVMBuildLoad2(
        e->B, acc_ty, pass_gep(e, acc_ty, sm, LLVMBuildAdd(e->B, col, pass_i32(e, k), "")), "");
}

/* One thread's emitting state: the plan, the sizes, and where the thread works. */
typedef struct cols_emit {
  pass_emit *e;
  const rj_tensor *t;
  cols_plan p;
  bool runtime; /* sizes are kernel parameters */
  int sms;      /* the SM count a runtime-size kernel's workspace is sized for */
  cols_sizes z;
  LLVMValueRef src, dst;
  LLVMValueRef tid, tx, ty, ty64; /* the thread; its column vector and thread row in the tile */
  LLVMValueRef tile, split, o; /* this CTA's column tile, split of the reduced dim, outer index */
  LLVMValueRef k0;             /* the first column of this thread's vector */
  LLVMValueRef outbase;        /* o * K + k0: its first output */
  LLVMValueRef acc[16];        /* its accumulators, one per column of the vector */
  cols_smem sm;                /* the CTA's shared fold area (sm.ty NULL until made) */
} cols_emit;

/* 1. The kernel's signature and sizes: constants of the plan, or the parameters of a
 * runtime-size kernel (vector buckets have unit column stride; single buckets one split). */
static void begin(cols_emit *c) {
  pass_emit *e = c->e;
  const cols_plan *p = &c->p;
  LLVMValueRef prm[TNS_NP];
  tns_begin(e, &c->src, &c->dst, e->plan->np, prm);
  c->z = (cols_sizes){tns_i64(e, p->O),  tns_i64(e, p->R),
                      tns_i64(e, p->K),  tns_i64(e, p->OS),
                      tns_i64(e, p->RS), tns_i64(e, p->KS),
                      tns_i64(e, p->CB), tns_i64(e, p->rows),
                      tns_i64(e, p->S),  NULL};
  if (c->runtime)
    c->z = (cols_sizes){prm[0], prm[1], prm[2],
                        prm[3], prm[4], p->vec > 1 ? tns_i64(e, 1) : prm[5],
                        prm[6], prm[7], p->S > 1 ? prm[8] : tns_i64(e, 1),
                        NULL};
  tns_launch_bounds(e, p->T, 65536 / (TNS_REGS * p->T));
}

/* 2. Where this thread works: its CTA's tile and split, its column vector and thread row. */
static void place(cols_emit *c) {
  pass_emit *e = c->e;
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C);
  c->tid = pass_tid_x(e);
  LLVMValueRef bid64 = LLVMBuildZExt(e->B, tns_ctaid(e), i64, "");
  c->z.OK = LLVMBuildMul(e->B, c->z.O, c->z.K, "OK");
  c->tile = LLVMBuildUDiv(e->B, bid64, c->z.S, "tile");
  c->split = LLVMBuildURem(e->B, bid64, c->z.S, "split");
  c->o = LLVMBuildUDiv(e->B, c->tile, c->z.CB, "o");
  LLVMValueRef cb = LLVMBuildURem(e->B, c->tile, c->z.CB, "cb");
  c->tx = LLVMBuildURem(e->B, c->tid, pass_i32(e, c->p.BX), "tx");
  c->ty = LLVMBuildUDiv(e->B, c->tid, pass_i32(e, c->p.BX), "ty");
  LLVMValueRef tx64 = LLVMBuildZExt(e->B, c->tx, i64, "");
  c->ty64 = LLVMBuildZExt(e->B, c->ty, i64, "");
  c->k0 = LLVMBuildMul(
      e->B, LLVMBuildAdd(e->B, LLVMBuildMul(e->B, cb, tns_i64(e, c->p.BX), ""), tx64, ""),
      tns_i64(e, c->p.vec), "k0");
}

/* 3. This thread's rows of its split into c->acc.  Vector plans have two versions of the loop:
 * 16-byte vectors when the source is aligned and the vector whole (the whole grid agrees on the
 * alignment; only the last vector is partial), else guarded scalars.  Runtime-size kernels keep
 * fewer loads per round in the scalar version, where runtime strides would otherwise hold a
 * loop-invariant 64-bit offset per slot in registers (spills at 64 registers).  Same order. */
static void fold_split(cols_emit *c) {
  pass_emit *e = c->e;
  const cols_plan *p = &c->p;
  const cols_sizes *z = &c->z;
  LLVMTypeRef ty = pass_type(e, c->t->dtype), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef colbase = pass_gep(e, ty, c->src, LLVMBuildMul(e->B, c->o, z->OS, ""));
  LLVMValueRef fast = NULL;
  if (p->vec > 1) {
    LLVMValueRef addr = LLVMBuildPtrToInt(e->B, c->src, i64, "");
    LLVMValueRef al = LLVMBuildICmp(
        e->B, LLVMIntEQ,
        LLVMBuildAnd(e->B, addr, tns_i64(e, p->vec * ir_dtype(c->t->dtype)->bytes - 1), ""),
        tns_i64(e, 0), "");
    LLVMValueRef full = LLVMBuildICmp(e->B, LLVMIntSLE,
                                      LLVMBuildAdd(e->B, c->k0, tns_i64(e, p->vec), ""), z->K, "");
    fast = LLVMBuildAnd(e->B, al, full, "fast");
  }
  tns_acc_init(e, c->t, c->acc, p->vec);
  LLVMValueRef r0 = LLVMBuildMul(e->B, c->split, z->rows, "");
  LLVMValueRef rend = LLVMBuildAdd(e->B, r0, z->rows, "");
  LLVMValueRef over = LLVMBuildICmp(e->B, LLVMIntSGT, rend, z->R, "");
  rend = LLVMBuildSelect(e->B, over, z->R, rend, "rend");
  LLVMValueRef first = LLVMBuildAdd(e->B, r0, c->ty64, "");
  int Us = c->runtime && p->vec > 1 ? TNS_DYN_U : p->U;
  if (p->vec == 1) {
    row_loops(e, c->t, p, z, colbase, c->k0, false, first, rend, p->U, c->acc);
    return;
  }
  LLVMBasicBlockRef vb = LLVMAppendBasicBlockInContext(e->C, e->fn, "vec");
  LLVMBasicBlockRef sb = LLVMAppendBasicBlockInContext(e->C, e->fn, "scalar");
  LLVMBasicBlockRef jb = LLVMAppendBasicBlockInContext(e->C, e->fn, "joined");
  LLVMBuildCondBr(e->B, fast, vb, sb);
  LLVMPositionBuilderAtEnd(e->B, vb);
  row_loops(e, c->t, p, z, colbase, c->k0, true, first, rend, p->U, c->acc);
  LLVMBuildBr(e->B, jb);
  LLVMPositionBuilderAtEnd(e->B, sb);
  row_loops(e, c->t, p, z, colbase, c->k0, false, first, rend, Us, c->acc);
  LLVMBuildBr(e->B, jb);
  LLVMPositionBuilderAtEnd(e->B, jb);
}

/* 4. The CTA's BY thread rows of c->acc (slots of tns_acc_init, or with `states`, allocas of the
 * acc type) folded into the column totals tot[vec]. */
static void fold_cta(cols_emit *c, bool states, LLVMValueRef *tot) {
  pass_emit *e = c->e;
  LLVMTypeRef acc_ty = tns_acc_type(e, c->t);
  LLVMValueRef v[16];
  for (int k = 0; k < c->p.vec; k++)
    v[k] = states ? LLVMBuildLoad2(e->B, acc_ty, c->acc[k], "") : tns_acc_value(e, c->t, c->acc[k]);
  if (!c->sm.ty) smem_make(e, &c->p, acc_ty, &c->sm);
  fold_rows(e, c->t, &c->p, &c->sm, c->tx, c->ty, v, tot);
}

/* tot[k] of each column k0 + k < K: into the output at outbase + k (tns_store), or, with ws,
 * raw into the workspace at base + k. */
static void store_columns(cols_emit *c, LLVMValueRef ws, LLVMValueRef base, LLVMValueRef *tot) {
  pass_emit *e = c->e;
  LLVMTypeRef acc_ty = tns_acc_type(e, c->t);
  for (int k = 0; k < c->p.vec; k++) {
    LLVMValueRef col = LLVMBuildAdd(e->B, c->k0, tns_i64(e, k), "");
    pass_if in;
    pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntSLT, col, c->z.K, ""));
    if (ws)
      LLVMBuildStore(e->B, tot[k],
                     pass_gep(e, acc_ty, ws, LLVMBuildAdd(e->B, base, tns_i64(e, k), "")));
    else
      tns_store(e, c->t, c->dst, LLVMBuildAdd(e->B, base, tns_i64(e, k), ""),
                tns_result(e, c->t, tot[k], c->z.R));
    pass_if_end(e, &in);
  }
}

/* 6b. The last CTA of a tile folds the S partials of its columns into c->acc (from here allocas
 * of the acc type: tns_acc_as_state): thread row ty folds splits ty, ty + BY, ... in order, U
 * partials per round loaded before any fold (the plan keeps S <= U * BY: one round); absent slots
 * load ws[0] and fold the identity.  Volatile loads: other CTAs wrote them in this launch (L2,
 * never a stale L1). */
static void fold_partials(cols_emit *c, LLVMValueRef ws) {
  pass_emit *e = c->e;
  const rj_tensor *t = c->t;
  const cols_plan *p = &c->p;
  LLVMTypeRef acc_ty = tns_acc_type(e, t);
  int Uf = c->runtime ? TNS_DYN_U : p->U;
  for (int k = 0; k < p->vec; k++) {
    c->acc[k] = tns_acc_as_state(e, t, c->acc[k]);
    LLVMBuildStore(e->B, tns_identity(e, t), c->acc[k]);
  }
  pass_loop fl;
  pass_loop_begin(e, &fl, c->ty64, c->z.S, tns_i64(e, (int64_t)Uf * p->BY));
  LLVMValueRef x[TNS_U][16], okk[TNS_U][16];
  for (int u = 0; u < Uf; u++) {
    LLVMValueRef sp = LLVMBuildAdd(e->B, fl.i, tns_i64(e, (int64_t)u * p->BY), "");
    LLVMValueRef oks = LLVMBuildICmp(e->B, LLVMIntSLT, sp, c->z.S, "");
    LLVMValueRef base = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, sp, c->z.OK, ""), c->outbase, "");
    for (int k = 0; k < p->vec; k++) {
      LLVMValueRef col = LLVMBuildAdd(e->B, c->k0, tns_i64(e, k), "");
      okk[u][k] = LLVMBuildAnd(e->B, oks, LLVMBuildICmp(e->B, LLVMIntSLT, col, c->z.K, ""), "");
      LLVMValueRef ix = LLVMBuildSelect(
          e->B, okk[u][k], LLVMBuildAdd(e->B, base, tns_i64(e, k), ""), tns_i64(e, 0), "");
      x[u][k] = tns_load_volatile(e, acc_ty, pass_gep(e, acc_ty, ws, ix));
    }
  }
  for (int u = 0; u < Uf; u++)
    for (int k = 0; k < p->vec; k++) {
      LLVMValueRef cur = LLVMBuildLoad2(e->B, acc_ty, c->acc[k], "");
      LLVMValueRef xv = tns_or_identity(e, t, okk[u][k], x[u][k]);
      LLVMBuildStore(e->B, tns_combine(e, t, cur, xv), c->acc[k]);
    }
  pass_loop_end(e, &fl);
}

/* 6. Split plans: each CTA's totals into the workspace [S][O*K] (O * CB counters; a
 * runtime-size kernel's sized by the one-wave bound), then the last CTA of the tile folds the
 * partials, stores the outputs and resets the tile's counter. */
static void finish_split(cols_emit *c, LLVMValueRef row0, LLVMValueRef *tot) {
  pass_emit *e = c->e;
  const cols_plan *p = &c->p;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), acc_ty = tns_acc_type(e, c->t);
  LLVMValueRef ws =
      pass_global_array(e, acc_ty, c->runtime ? cols_ws_bound(c->sms, p) : p->S * p->O * p->K,
                        AS_GLOBAL, "rj_ws_part");
  LLVMValueRef cnt = pass_global_array(e, i32, c->runtime ? tns_wave(c->sms, p->T) : p->O * p->CB,
                                       AS_GLOBAL, "rj_ws_count");
  LLVMValueRef cntp = pass_gep(e, i32, cnt, c->tile);
  LLVMValueRef wsrow =
      LLVMBuildAdd(e->B, LLVMBuildMul(e->B, c->split, c->z.OK, ""), c->outbase, "");
  pass_if w, l, w2, t0;
  pass_if_begin(e, &w, row0);
  store_columns(c, ws, wsrow, tot);
  pass_if_end(e, &w);
  pass_if_begin(e, &l, tns_last_cta(e, cntp, c->tid, c->z.S));
  fold_partials(c, ws);
  fold_cta(c, true, tot);
  pass_if_begin(e, &w2, row0);
  store_columns(c, NULL, c->outbase, tot);
  pass_if_end(e, &w2);
  pass_if_begin(e, &t0, LLVMBuildICmp(e->B, LLVMIntEQ, c->tid, pass_i32(e, 0), ""));
  LLVMBuildStore(e->B, pass_i32(e, 0), cntp);
  pass_if_end(e, &t0);
  pass_if_end(e, &l);
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  cols_priv cp;
  memcpy(&cp, e->plan->priv.bytes, sizeof cp);
  cols_emit c = {.e = e, .t = &r->u.tensor, .p = cp.p, .runtime = cp.runtime, .sms = cp.sms};
  LLVMValueRef tot[16];
  begin(&c);
  place(&c);
  fold_split(&c);
  fold_cta(&c, false, tot);
  LLVMValueRef row0 = LLVMBuildICmp(e->B, LLVMIntEQ, c.ty, pass_i32(e, 0), "");
  c.outbase = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, c.o, c.z.K, ""), c.k0, "");
  if (c.p.S == 1) { /* 5. one split: the totals are the outputs */
    pass_if w;
    pass_if_begin(e, &w, row0);
    store_columns(&c, NULL, c.outbase, tot);
    pass_if_end(e, &w);
  } else {
    finish_split(&c, row0, tot);
  }
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_tensor_cols = {
    .name = "tensor_cols",
    .prio = 30,
    .kind = RJ_KIND_TENSOR,
    .summary = "column / middle-axis reductions: coalesced 16-byte column vectors (8 for 1-byte "
               "dtypes), rows split over CTAs, last CTA folds in a fixed order",
    .ops = PASS_OPS_SCALAR | ST_OPS | PASS_OP(RJ_OP_CUSTOM),
    .invariant_why =
        "the number of outer indices and columns and the SM count (the tile width and the splits of the reduced dim)",
    .accepts = accepts,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
