/* reduction -> local (seed 001): src and dst in registers.
 *
 * Each thread first folds its own register slots that belong to an output, then a
 * shfl.sync.bfly tree runs over exactly the lane bits being reduced.  Thread scope is the same
 * with no lane bits: a sequential fold.  The layouts are enumerated (ir_place): the lane bits are
 * read off the placement, and before emitting anything the plan is proved — for every thread
 * and every destination slot, the slots it folds across its butterfly coset are exactly the
 * source elements of that output, each once.  A layout the proof rejects is declined with the
 * reason.  accum is honoured on every path (the reference ignores it on the shuffle path).
 * The state ops (argmax argmin var std logsumexp; passes/state.h) fold a state per slot and shuffle
 * it field by field; argmax / argmin read each slot's index in the reduction from a constant table
 * (thread x slot: the index differs per thread), and dst slots hold the i64 index.
 * Op custom folds the caller's combine the same way (f16 / bf16: a state of one field; a struct
 * state lifts each slot with its index from the same table, dst in field result's dtype); the
 * layout decides which slots and lanes meet first, so a non-commutative combine is declined
 * (the shared variant keeps index order). */
#include "local.h"

#include "../state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef pass_local_plan plan;

void pass_local_plan_free(plan *p) {
  for (int g = 0; g < p->ngroups; g++)
    free(p->groups[g].pieces);
  free(p->groups);
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
 * none; scratch marks (mark[x] == stamp: seen in the current proof); per thread u, its src slots
 * grouped by output (bucket + u * ns), and for each of its dst slots jd the group of that slot's
 * output (from[u * nd + jd], len[u * nd + jd]); per coset representative, the output proved
 * (rep). */
typedef struct owners {
  ir_tile_shape f;
  int64_t ns, nd, nsrc, ndst, stamp;
  int64_t *sp, *dsp, *mark;
  int32_t *bucket;
  int64_t *from, *len, *rep;
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
  int64_t count = 0, stamp = ++((owners *)o)->stamp;
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
      if (o->mark[x] == stamp) {
        FAIL("src.layout: element %lld would be folded twice into output %lld (is it "
             "replicated across the reduced lanes?)",
             (long long)x, (long long)s);
        return false;
      }
      o->mark[x] = stamp;
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

/* 3a. per thread, its src slots grouped by output, in slot order (scratch: cnt, at, both
 * spatial_len long and all 0 / -1 on entry and exit) */
static void group_slots(const plan *p, owners *o, int64_t *cnt, int64_t *at) {
  int64_t ns = o->ns, nd = o->nd;
  for (int u = 0; u < p->T; u++) {
    const int64_t *row = p->ps.elem + (int64_t)u * ns;
    int64_t pos = 0;
    for (int64_t j = 0; j < ns; j++)
      if (row[j] >= 0 && o->sp[row[j]] >= 0) cnt[o->sp[row[j]]]++;
    for (int64_t j = 0; j < ns; j++) {
      int64_t s = row[j] >= 0 ? o->sp[row[j]] : -1;
      if (s >= 0 && at[s] < 0) at[s] = pos, pos += cnt[s];
    }
    for (int64_t jd = 0; jd < nd; jd++) {
      int64_t y = p->pd.elem[(int64_t)u * nd + jd], s = y >= 0 ? o->dsp[y] : -1;
      o->from[(int64_t)u * nd + jd] = s >= 0 && at[s] >= 0 ? at[s] : 0;
      o->len[(int64_t)u * nd + jd] = s >= 0 && at[s] >= 0 ? cnt[s] : 0;
    }
    for (int64_t j = 0; j < ns; j++) { /* fill, in slot order */
      int64_t s = row[j] >= 0 ? o->sp[row[j]] : -1;
      if (s >= 0) o->bucket[u * ns + at[s]++] = (int32_t)j;
    }
    for (int64_t j = 0; j < ns; j++)
      if (row[j] >= 0 && o->sp[row[j]] >= 0) cnt[o->sp[row[j]]] = 0, at[o->sp[row[j]]] = -1;
  }
}

/* 3. dst slot jd: the src slots to fold, the same for every thread, and who writes; a coset
 * whose representative was proved for the same output is not proved again */
static bool plan_slot(plan *p, owners *o, int64_t jd, char *why, size_t n) {
  int32_t *S = NULL;
  int64_t nS = 0, nd = o->nd;
  int reduced = 0;
  for (int i = 0; i < p->nmask; i++)
    reduced |= p->masks[i];
  for (int u = 0; u < p->T; u++)
    o->rep[u] = -1;
  for (int u = 0; u < p->T; u++) {
    int64_t y = p->pd.elem[u * nd + jd];
    if (y < 0 || o->dsp[y] < 0) continue;
    int64_t s = o->dsp[y], k = o->len[u * nd + jd];
    const int32_t *list = o->bucket + u * o->ns + o->from[u * nd + jd];
    if (!S) {
      if (!(S = malloc(sizeof(int32_t) * (size_t)(k + 1)))) return FAIL("out of memory"), false;
      memcpy(S, list, sizeof(int32_t) * (size_t)k);
      S[k] = -1;
      nS = k;
      p->fold[jd] = S;
    } else if (k != nS || memcmp(S, list, sizeof(int32_t) * (size_t)k) != 0) {
      FAIL("dst.layout: threads 0..%d would fold different register slots into dst slot %lld "
           "(thread %d differs); such layouts are not supported",
           p->T - 1, (long long)jd, u);
      return false;
    }
    p->write[jd][u / 32] |= 1u << (u % 32);
    if (o->rep[u & ~reduced] == s) continue;
    if (!prove_coset(p, o, u, S, nS, s, why, n)) return false;
    o->rep[u & ~reduced] = s;
  }
  return true;
}

/* 5. every output must be written by someone */
static bool all_written(const rj_tile *t, const plan *p, owners *o, char *why, size_t n) {
  int64_t stamp = ++o->stamp; /* mark is at least ndst long */
  for (int64_t i = 0; i < (int64_t)p->T * o->nd; i++)
    if (p->pd.elem[i] >= 0) o->mark[p->pd.elem[i]] = stamp;
  for (int64_t s = 0; s < o->f.spatial_len; s++) {
    int64_t y = ir_dst_offset(t, s);
    if (o->mark[y] != stamp) {
      FAIL("dst.layout: no thread holds destination element %lld", (long long)y);
      return false;
    }
  }
  return true;
}

/* ---------------------------------------------------------------- looped tiles */

/* The most pieces (loop nests) a looped tile emits, over all its groups: compile time grows
 * with them (measured 0.11 s of CPU for 32, 0.27 s for 64, 0.68 s for 128). */
#define MAX_PIECES 64

static int64_t fold_len(const int32_t *S) {
  int64_t k = 0;
  while (S[k] >= 0)
    k++;
  return k;
}

/* S[0 .. k) (ascending) as one nest; false when it is not one. */
static bool as_nest(const int32_t *S, int64_t k, pass_local_nest *out) {
  int64_t *cur = malloc(sizeof(int64_t) * (size_t)k);
  if (!cur) return false;
  for (int64_t i = 0; i < k; i++)
    cur[i] = S[i];
  int64_t n = k;
  out->nlev = 0;
  bool ok = true;
  while (ok && n > 1) {
    int64_t d = cur[1] - cur[0], R = 2;
    while (R < n && cur[R] - cur[R - 1] == d)
      R++;
    ok = n % R == 0 && out->nlev < 32;
    for (int64_t q = 0; ok && q < n / R; q++)
      for (int64_t i = 1; ok && i < R; i++)
        ok = cur[q * R + i] == cur[q * R] + i * d;
    if (!ok) break;
    out->count[out->nlev] = R;
    out->step[out->nlev++] = d;
    for (int64_t q = 0; q < n / R; q++)
      cur[q] = cur[q * R];
    n /= R;
  }
  out->base = cur[0];
  free(cur);
  return ok;
}

/* The maximal arithmetic run of S[0 .. k) that starts at i, as a nest; returns its end. */
static int64_t run_at(const int32_t *S, int64_t k, int64_t i, pass_local_nest *r) {
  int64_t d = i + 1 < k ? S[i + 1] - S[i] : 1, e = i + 1;
  while (e < k && S[e] - S[e - 1] == d)
    e++;
  if (r) {
    r->base = S[i];
    r->nlev = e - i > 1;
    r->count[0] = e - i;
    r->step[0] = d;
  }
  return e;
}

/* S as pieces: one nest, or else its maximal arithmetic runs (at most MAX_PIECES + 1 of them,
 * enough to refuse); false when out of memory. */
static bool pieces_of(const int32_t *S, pass_local_group *g) {
  int64_t k = fold_len(S), runs = 0;
  pass_local_nest one;
  bool nest = as_nest(S, k, &one);
  for (int64_t i = 0; !nest && i < k && runs <= MAX_PIECES; runs++)
    i = run_at(S, k, i, NULL);
  g->pieces = malloc(sizeof(pass_local_nest) * (size_t)(nest ? 1 : runs));
  if (!g->pieces) return false;
  if (nest) {
    g->pieces[0] = one;
    g->npieces = 1;
    return true;
  }
  for (int64_t i = 0; g->npieces < runs; g->npieces++)
    i = run_at(S, k, i, &g->pieces[g->npieces]);
  return true;
}

/* Whether dst slot b is dst slot a shifted: the same writers, src slots shifted by ds. */
static bool shifted(const plan *p, int64_t a, int64_t b, int64_t ds) {
  if (memcmp(p->write[a], p->write[b], sizeof p->write[a]) != 0) return false;
  const int32_t *A = p->fold[a], *B = p->fold[b];
  for (; *A >= 0 && *B >= 0; A++, B++)
    if (*B - *A != ds) return false;
  return *A < 0 && *B < 0;
}

/* Appends the slots of nest q, shifted by off, to out[*k ..) in emission order. */
static void expand_nest(const pass_local_nest *q, int lev, int64_t off, int64_t *out, int64_t *k,
                        int64_t cap) {
  if (lev < 0) {
    if (*k < cap) out[*k] = off;
    ++*k;
    return;
  }
  for (int64_t i = 0; i < q->count[lev]; i++)
    expand_nest(q, lev - 1, off + i * q->step[lev], out, k, cap);
}

/* The proof of the looped plan: expanding every group gives exactly the used dst slots, each
 * folding exactly its src slots in the unrolled order. */
static bool groups_proved(const plan *p, char *why, size_t n) {
  int64_t nd = p->pd.nslots, *got = malloc(sizeof(int64_t) * (size_t)(p->ps.nslots + 1));
  char *seen = calloc((size_t)nd, 1);
  bool ok = got && seen;
  for (int gi = 0; ok && gi < p->ngroups; gi++) {
    const pass_local_group *g = &p->groups[gi];
    for (int64_t rm = 0; ok && rm < g->reps * g->count; rm++) {
      int64_t r = rm / g->count, m = rm % g->count, k = 0;
      int64_t jd = g->jd + r * g->rjd + m * g->djd, shift = r * g->rsrc + m * g->dsrc;
      ok = jd >= 0 && jd < nd && p->fold[jd] && !seen[jd];
      for (int q = 0; ok && q < g->npieces; q++)
        expand_nest(&g->pieces[q], g->pieces[q].nlev - 1, g->pieces[q].base + shift, got, &k,
                    p->ps.nslots + 1);
      ok = ok && k == fold_len(p->fold[jd]);
      for (int64_t i = 0; ok && i < k; i++)
        ok = got[i] == p->fold[jd][i];
      ok = ok && memcmp(p->write[jd], p->write[g->jd], sizeof p->write[jd]) == 0;
      if (ok) seen[jd] = 1;
    }
  }
  for (int64_t jd = 0; ok && jd < nd; jd++)
    ok = !p->fold[jd] == !seen[jd];
  if (!ok) FAIL("internal: the looped plan does not reproduce the slot folds (a bug)");
  free(got);
  free(seen);
  return ok;
}

/* Whether group b is group a shifted by dj dst slots and ds src slots (with the same writers). */
static bool group_shifted(const plan *p, const pass_local_group *a, const pass_local_group *b,
                          int64_t dj, int64_t ds) {
  if (b->jd - a->jd != dj || b->count != a->count || b->djd != a->djd || b->dsrc != a->dsrc ||
      b->npieces != a->npieces ||
      memcmp(p->write[a->jd], p->write[b->jd], sizeof p->write[a->jd]) != 0)
    return false;
  for (int q = 0; q < a->npieces; q++) {
    const pass_local_nest *x = &a->pieces[q], *y = &b->pieces[q];
    if (y->base - x->base != ds || y->nlev != x->nlev) return false;
    for (int l = 0; l < x->nlev; l++)
      if (y->count[l] != x->count[l] || y->step[l] != x->step[l]) return false;
  }
  return true;
}

/* Folds runs of groups that repeat at a constant distance into one group with reps. */
static void merge_groups(plan *p) {
  int out = 0;
  for (int i = 0; i < p->ngroups;) {
    pass_local_group g = p->groups[i];
    g.reps = 1, g.rjd = 0, g.rsrc = 0;
    if (i + 1 < p->ngroups) {
      const pass_local_group *h = &p->groups[i + 1];
      g.rjd = h->jd - g.jd, g.rsrc = h->pieces[0].base - g.pieces[0].base;
      while (i + g.reps < p->ngroups &&
             group_shifted(p, &g, &p->groups[i + g.reps], g.reps * g.rjd, g.reps * g.rsrc))
        free(p->groups[i + g.reps++].pieces);
    }
    p->groups[out++] = g;
    i += (int)g.reps;
  }
  p->ngroups = out;
}

/* Groups the used dst slots for the looped emission; false with the reason in why. */
static bool plan_groups(plan *p, char *why, size_t n) {
  int64_t nd = p->pd.nslots, used = 0, pieces = 0;
  for (int64_t jd = 0; jd < nd; jd++)
    used += p->fold[jd] != NULL;
  p->groups = calloc((size_t)(used ? used : 1), sizeof *p->groups);
  if (!p->groups) return FAIL("out of memory"), false;
  for (int64_t jd = 0; jd < nd;) {
    if (!p->fold[jd]) {
      jd++;
      continue;
    }
    pass_local_group *g = &p->groups[p->ngroups++];
    g->jd = jd, g->djd = 1, g->count = 1, g->dsrc = 0;
    int64_t nx = jd + 1;
    while (nx < nd && !p->fold[nx])
      nx++;
    if (nx < nd) {
      g->djd = nx - jd, g->dsrc = p->fold[nx][0] - p->fold[jd][0];
      while (jd + g->count * g->djd < nd && p->fold[jd + g->count * g->djd] &&
             shifted(p, jd, jd + g->count * g->djd, g->count * g->dsrc)) {
        bool gap = true; /* the slots between two members are unused */
        for (int64_t x = jd + (g->count - 1) * g->djd + 1; x < jd + g->count * g->djd; x++)
          gap &= !p->fold[x];
        if (!gap) break;
        g->count++;
      }
    }
    if (!pieces_of(p->fold[jd], g)) return FAIL("out of memory"), false;
    jd += (g->count - 1) * g->djd + 1;
  }
  merge_groups(p);
  for (int gi = 0; gi < p->ngroups; gi++)
    pieces += p->groups[gi].npieces;
  if (pieces > MAX_PIECES) {
    FAIL("src.layout: %lld register slots per thread are too many to unroll, and looping over "
         "them leaves more than %d runs of slots that are not arithmetic progressions; a more "
         "regular layout, or fewer slots, is needed",
         (long long)p->ps.nslots + p->pd.nslots, MAX_PIECES);
    return false;
  }
  return groups_proved(p, why, n);
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
  int64_t nmark = o.nsrc > o.ndst ? o.nsrc : o.ndst, sl = o.f.spatial_len, cells = p->T * o.nd;
  nmark = nmark > sl ? nmark : sl;
  o.sp = malloc(sizeof(int64_t) * (size_t)o.nsrc);
  o.dsp = malloc(sizeof(int64_t) * (size_t)o.ndst);
  o.mark = calloc((size_t)nmark, sizeof(int64_t));
  o.bucket = malloc(sizeof(int32_t) * (size_t)(p->T * o.ns + 1));
  o.from = malloc(sizeof(int64_t) * (size_t)(cells + 1));
  o.len = malloc(sizeof(int64_t) * (size_t)(cells + 1));
  o.rep = malloc(sizeof(int64_t) * (size_t)p->T);
  int64_t *cnt = calloc((size_t)sl, sizeof(int64_t)), *at = malloc(sizeof(int64_t) * (size_t)sl);
  p->fold = calloc((size_t)o.nd, sizeof *p->fold);
  p->write = calloc((size_t)o.nd, sizeof *p->write);
  bool ok = o.sp && o.dsp && o.mark && o.bucket && o.from && o.len && o.rep && cnt && at &&
            p->fold && p->write;
  if (!ok) FAIL("out of memory");
  if (ok) {
    for (int64_t i = 0; i < sl; i++)
      at[i] = -1;
    find_owners(t, &o);
  }
  ok = ok && find_masks(p, &o, why, n);
  if (ok) group_slots(p, &o, cnt, at);
  for (int64_t jd = 0; ok && jd < o.nd; jd++)
    ok = plan_slot(p, &o, jd, why, n);
  ok = ok && all_written(t, p, &o, why, n);
  p->looped = !ir_local_unrolled((int64_t)p->ps.nslots + p->pd.nslots);
  ok = ok && (!p->looped || plan_groups(p, why, n));
  free(o.sp);
  free(o.dsp);
  free(o.mark);
  free(o.bucket);
  free(o.from);
  free(o.len);
  free(o.rep);
  free(cnt);
  free(at);
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

/* Cross-lane reduction of one dst slot's folded value, then (by its writers) accum and store. */
static void finish_slot(pass_emit *e, const rj_tile *t, const pass_tile_args *a, const plan *p,
                        pass_local_cross cross, LLVMValueRef acc, LLVMValueRef jd,
                        const uint32_t write[4]) {
  LLVMTypeRef ty = pass_type(e, t->dtype);
  ir_tile_shape f; /* mean: its reduced length */
  ir_tile_facts(t, &f);
  uint32_t all[4] = {0};
  for (int u = 0; u < p->T; u++)
    all[u / 32] |= 1u << (u % 32);
  if (cross)
    acc = cross(e, t, p, acc);
  else
    acc = st_tile_tree(e, t, acc, pass_i32(e, -1), p->masks, p->nmask, 32);
  bool state = st_tile_on(t);
  st_req st = st_of_tile(t);
  if (!state) acc = pass_mean(e, t->op, t->dtype, acc, pass_i32(e, f.reduce_len));
  if (!state)
    acc = pass_epilogue(e, t->fused.epilogue, t->fused.scale, acc); /* not with accum (validated) */
  if (state) ty = pass_type(e, ir_tile_result(t));
  LLVMValueRef dptr = pass_gep(e, ty, a->dst, jd);
  bool everyone = memcmp(write, all, sizeof all) == 0;
  pass_if w;
  if (!everyone) pass_if_begin(e, &w, thread_bit(e, write, p->T, a->tid));
  if (t->accum) /* not with a state op (validated) */
    acc = pass_fold(e, t->op, t->dtype, t->nan, acc,
                    pass_to_acc(e, LLVMBuildLoad2(e->B, ty, dptr, ""), t->dtype));
  LLVMBuildStore(e->B, state ? st_finish(e, &st, acc) : pass_from_acc(e, acc, t->dtype), dptr);
  if (!everyone) pass_if_end(e, &w);
}

/* The end of a looped tile's loop: kept a loop (LLVM would unroll short ones completely, and
 * many of them add up to the straight-line code that looping avoids). */
static void loop_end(pass_emit *e, pass_loop *l) {
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(e->B);
  pass_loop_end(e, l);
  pass_no_unroll(e, LLVMGetBasicBlockTerminator(latch));
}

/* argmax / argmin and op custom's lift: the index in its reduction of the element in each
 * thread's src slots (a constant table, thread-major; 0 for slots outside the region), and this
 * thread's row. */
typedef struct index_table {
  LLVMValueRef tab, row; /* NULL: the op reads no index */
} index_table;

static bool make_index_table(pass_emit *e, const rj_tile *t, const pass_tile_args *a, const plan *p,
                             index_table *ix) {
  ix->tab = ix->row = NULL;
  st_req st = st_of_tile(t);
  if (!st_wants_index(&st)) return true;
  ir_tile_shape f;
  ir_tile_facts(t, &f);
  int64_t nsrc = ir_numel(&t->src), ns = p->ps.nslots, cells = (int64_t)p->T * ns;
  int32_t *r_of = malloc(sizeof(int32_t) * (size_t)nsrc),
          *tab = malloc(sizeof(int32_t) * (size_t)(cells + 1));
  bool ok = r_of && tab;
  for (int64_t x = 0; ok && x < nsrc; x++)
    r_of[x] = 0;
  for (int64_t sp = 0; ok && sp < f.spatial_len; sp++)
    for (int64_t r = 0; r < f.reduce_len; r++)
      r_of[ir_src_offset(t, sp, r)] = (int32_t)r;
  for (int64_t i = 0; ok && i < cells; i++)
    tab[i] = p->ps.elem[i] >= 0 ? r_of[p->ps.elem[i]] : 0;
  if (ok) {
    ix->tab = pass_const_table_i32(e, tab, cells, "rj_red_index");
    ix->row = LLVMBuildMul(e->B, a->tid, pass_i32(e, (int32_t)ns), "");
  }
  free(r_of);
  free(tab);
  return ok;
}

/* The index of src slot j (i32) of this thread, or NULL when the op reads none. */
static LLVMValueRef slot_index(pass_emit *e, const index_table *ix, LLVMValueRef j) {
  if (!ix->tab) return NULL;
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C);
  return LLVMBuildLoad2(e->B, i32, pass_gep(e, i32, ix->tab, LLVMBuildAdd(e->B, ix->row, j, "")),
                        "");
}

/* A loaded src element x as the fold takes it: widened, then the fused map (none: x). */
static LLVMValueRef load_acc(pass_emit *e, const rj_tile *t, LLVMValueRef x) {
  return pass_map_one(e, t->fused.map, pass_to_acc(e, x, t->dtype));
}

/* acc (an alloca) folds the src slots off + nest, level lev down to 0, in ascending order */
static void fold_nest(pass_emit *e, const rj_tile *t, const pass_tile_args *a, LLVMValueRef acc,
                      const pass_local_nest *q, int lev, LLVMValueRef off, const index_table *ix) {
  LLVMTypeRef ty = pass_type(e, t->dtype), aty = LLVMGetAllocatedType(acc);
  if (lev < 0) {
    LLVMValueRef x = LLVMBuildLoad2(e->B, ty, pass_gep(e, ty, a->src, off), "");
    LLVMValueRef v = st_tile_fold(e, t, LLVMBuildLoad2(e->B, aty, acc, ""), load_acc(e, t, x),
                                  slot_index(e, ix, off));
    LLVMBuildStore(e->B, v, acc);
    return;
  }
  pass_loop l;
  pass_loop_begin(e, &l, pass_i32(e, 0), pass_i32(e, (int32_t)q->count[lev]), pass_i32(e, 1));
  LLVMValueRef at =
      LLVMBuildAdd(e->B, off, LLVMBuildMul(e->B, l.i, pass_i32(e, (int32_t)q->step[lev]), ""), "");
  fold_nest(e, t, a, acc, q, lev - 1, at, ix);
  loop_end(e, &l);
}

/* The looped form: per group, a loop over its dst slots, each folding its pieces in loops. */
static void emit_looped(pass_emit *e, const rj_tile *t, const pass_tile_args *a, const plan *p,
                        pass_local_cross cross, const index_table *ix) {
  LLVMValueRef id = st_tile_identity(e, t);
  LLVMValueRef acc = pass_entry_alloca(e, LLVMTypeOf(id), "rj_acc");
  for (int gi = 0; gi < p->ngroups; gi++) {
    const pass_local_group *g = &p->groups[gi];
    pass_loop r, m;
    pass_loop_begin(e, &r, pass_i32(e, 0), pass_i32(e, (int32_t)g->reps), pass_i32(e, 1));
    LLVMValueRef jd0 = LLVMBuildAdd(e->B, pass_i32(e, (int32_t)g->jd),
                                    LLVMBuildMul(e->B, r.i, pass_i32(e, (int32_t)g->rjd), ""), "");
    LLVMValueRef shift0 = LLVMBuildMul(e->B, r.i, pass_i32(e, (int32_t)g->rsrc), "");
    pass_loop_begin(e, &m, pass_i32(e, 0), pass_i32(e, (int32_t)g->count), pass_i32(e, 1));
    LLVMValueRef shift =
        LLVMBuildAdd(e->B, shift0, LLVMBuildMul(e->B, m.i, pass_i32(e, (int32_t)g->dsrc), ""), "");
    LLVMBuildStore(e->B, id, acc);
    for (int k = 0; k < g->npieces; k++) {
      const pass_local_nest *q = &g->pieces[k];
      LLVMValueRef off = LLVMBuildAdd(e->B, shift, pass_i32(e, (int32_t)q->base), "");
      fold_nest(e, t, a, acc, q, q->nlev - 1, off, ix);
    }
    LLVMValueRef jd =
        LLVMBuildAdd(e->B, jd0, LLVMBuildMul(e->B, m.i, pass_i32(e, (int32_t)g->djd), ""), "");
    finish_slot(e, t, a, p, cross, LLVMBuildLoad2(e->B, LLVMTypeOf(id), acc, ""), jd,
                p->write[g->jd]);
    loop_end(e, &m);
    loop_end(e, &r);
  }
}

rj_status pass_local_emit(pass_emit *e, const rj_tile *t, const pass_tile_args *a, const plan *p,
                          pass_local_cross cross) {
  index_table ix;
  if (!make_index_table(e, t, a, p, &ix))
    return ir_fail(e->err, RJ_ENOMEM, "local: out of memory (the index table)");
  if (p->looped) {
    emit_looped(e, t, a, p, cross, &ix);
    return RJ_OK;
  }
  LLVMTypeRef ty = pass_type(e, t->dtype);
  for (int64_t jd = 0; jd < p->pd.nslots; jd++) {
    if (!p->fold[jd]) continue;
    LLVMValueRef acc = st_tile_identity(e, t);
    for (const int32_t *j = p->fold[jd]; *j >= 0; j++) {
      LLVMValueRef x = LLVMBuildLoad2(e->B, ty, slot_ptr(e, ty, a->src, *j), "");
      acc = st_tile_fold(e, t, acc, load_acc(e, t, x), slot_index(e, &ix, pass_i32(e, *j)));
    }
    finish_slot(e, t, a, p, cross, acc, pass_i32(e, (int32_t)jd), p->write[jd]);
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
    .ops = PASS_OPS_SCALAR | ST_OPS | PASS_OP(RJ_OP_CUSTOM),
    .order_why = "its folds reorder operands (the layout places elements in slots and lanes; "
                 "slots fold first, then the butterfly over the lane bits)",
    .accepts = accepts,
    .plan = pass_tile_plan,
    .kernel = PASS_EMIT(pass_tile_kernel),
    .tile = PASS_EMIT(tile),
};
