/* Local (register) buffers: where each element lives.  A layout is enumerated into a table
 * (thread, slot) -> element, so that variants can prove what their shuffles combine instead of
 * pattern-matching layouts. */
#include "ir.h"

#include <stdint.h>
#include <stdlib.h>

#define MAX_SLOTS IR_MAX_LOCAL_SLOTS

/* acc += c * step; false when that overflows an int64_t (a huge stride) */
static bool add_scaled(int64_t *acc, int64_t c, int64_t step) {
  int64_t v;
  return !__builtin_mul_overflow(c, step, &v) && !__builtin_add_overflow(*acc, v, acc);
}

/* Element x's register slot, lane and thread (thread offset + lane) under b's layout (x in
 * row-major order); false when one of them overflows. */
static bool elem_position(const rj_buffer *b, int64_t x, int64_t *slot, int64_t *lane,
                          int64_t *thread) {
  const rj_layout *L = &b->layout;
  int64_t s = 0, ln = 0, t = 0, rest = x;
  bool ok = true;
  if (!L->present) s = x;
  for (int d = b->ndim - 1; L->present && d >= 0; d--) {
    int64_t c = rest % b->shape[d];
    rest /= b->shape[d];
    for (int k = L->nsub[d] - 1; k >= 0; k--) {
      int64_t sc = c % L->shape[d][k];
      c /= L->shape[d][k];
      rj_stride st = L->stride[d][k];
      ok &= add_scaled(st.unit == RJ_UNIT_SLOT   ? &s
                       : st.unit == RJ_UNIT_LANE ? &ln
                                                 : &t,
                       sc, st.step);
    }
  }
  *slot = s;
  *lane = ln;
  *thread = t;
  return ok && add_scaled(thread, ln, 1);
}

/* Step 1 of ir_place: each element's slot and thread (slot[x], thr[x]) and the span of slots,
 * checked against the register file and the warp. */
static rj_status position_all(const rj_buffer *b, int64_t n, const char *f, int64_t *slot,
                              int64_t *thr, int64_t *nslots, ir_err *e) {
  *nslots = 0;
  for (int64_t x = 0; x < n; x++) {
    int64_t s, lane, th;
    if (!elem_position(b, x, &s, &lane, &th))
      return ir_fail(e, RJ_EINVAL,
                     "%s.layout: element %lld's slot, lane or thread overflows 64 bits (a stride "
                     "is too large)",
                     f, (long long)x);
    if (s < 0 || s >= MAX_SLOTS)
      return ir_fail(e, RJ_EINVAL,
                     "%s.layout: element %lld lands in register slot %lld (slots are 0..%d)", f,
                     (long long)x, (long long)s, MAX_SLOTS - 1);
    if (lane < 0 || lane > 31)
      return ir_fail(e, RJ_EINVAL, "%s.layout: element %lld lands on lane %lld (lanes are 0..31)",
                     f, (long long)x, (long long)lane);
    slot[x] = s;
    thr[x] = th;
    if (s + 1 > *nslots) *nslots = s + 1;
  }
  return RJ_OK;
}

/* Step 2 of ir_place: fills out->elem (all -1) with every element and its replicas, every
 * combination of the replicate entries; two elements in one cell are an error. */
static rj_status place_replicas(const rj_buffer *b, int T, const char *f, const int64_t *slot,
                                const int64_t *thr, int64_t n, ir_placement *out, ir_err *e) {
  const rj_layout *L = &b->layout;
  int64_t nslots = out->nslots;
  int64_t nrep = 1;
  for (int i = 0; L->present && i < L->nreplicate; i++)
    nrep *= L->rep_extent[i];
  rj_status st = RJ_OK;
  for (int64_t x = 0; x < n && !st; x++) {
    for (int64_t r = 0; r < nrep && !st; r++) {
      int64_t t = thr[x], rr = r;
      if (!L->present && T > 1) {
        /* no layout at a wider scope: every thread holds the whole buffer */
        for (int64_t u = 0; u < T; u++) {
          int64_t *cell = &out->elem[u * nslots + slot[x]];
          *cell = x;
        }
        continue;
      }
      bool ok = true;
      for (int i = L->nreplicate - 1; L->present && i >= 0; i--) {
        int64_t k = rr % L->rep_extent[i];
        rr /= L->rep_extent[i];
        ok &= add_scaled(&t, k, L->rep_stride[i].step);
      }
      if (!ok) {
        st = ir_fail(e, RJ_EINVAL,
                     "%s.layout: a copy of element %lld lands on a thread past 64 bits (a "
                     "replicate stride is too large)",
                     f, (long long)x);
        break;
      }
      if (t < 0 || t >= T) {
        st = ir_fail(e, RJ_EINVAL,
                     "%s.layout: element %lld lands on thread %lld, outside the scope's %d threads",
                     f, (long long)x, (long long)t, T);
        break;
      }
      int64_t *cell = &out->elem[t * nslots + slot[x]];
      if (*cell >= 0)
        st = ir_fail(e, RJ_EINVAL,
                     "%s.layout: elements %lld and %lld both land in thread %lld slot %lld", f,
                     (long long)*cell, (long long)x, (long long)t, (long long)slot[x]);
      *cell = x;
    }
  }
  return st;
}

rj_status ir_place(const rj_buffer *b, int T, const char *f, ir_placement *out, ir_err *e) {
  const rj_layout *L = &b->layout;
  int64_t n = ir_numel(b);
  out->elem = NULL;
  out->nthreads = T;
  /* distinct elements need distinct (thread, slot) cells; without a layout at a wider scope
   * every thread holds them all */
  int64_t cells = (int64_t)(L->present ? T : 1) * MAX_SLOTS;
  if (n > cells)
    return ir_fail(e, RJ_EINVAL,
                   "%s.shape: %lld elements do not fit in %d thread%s x %d register slots", f,
                   (long long)n, L->present ? T : 1, L->present && T > 1 ? "s" : "", MAX_SLOTS);
  int64_t *slot = malloc(sizeof(int64_t) * (size_t)n), *thr = malloc(sizeof(int64_t) * (size_t)n);
  int64_t nslots = 0;
  rj_status st = !slot || !thr ? ir_fail(e, RJ_ENOMEM, "out of memory placing %s", f)
                               : position_all(b, n, f, slot, thr, &nslots, e);
  if (!st) {
    out->nslots = (int)nslots;
    out->elem = malloc(sizeof(int64_t) * (size_t)T * (size_t)nslots);
    if (!out->elem) st = ir_fail(e, RJ_ENOMEM, "out of memory placing %s", f);
  }
  if (!st) {
    for (int64_t i = 0; i < (int64_t)T * nslots; i++)
      out->elem[i] = -1;
    st = place_replicas(b, T, f, slot, thr, n, out, e);
  }
  free(slot);
  free(thr);
  if (st) {
    free(out->elem);
    out->elem = NULL;
  }
  return st;
}

int64_t ir_slot_span(const rj_buffer *b) {
  const rj_layout *L = &b->layout;
  if (!L->present) return ir_numel(b);
  /* a slot is a sum of independent terms c * step, c in [0, extent): its largest value is the
   * sum of each term's largest (negative steps are refused by ir_place) */
  int64_t top = 0;
  for (int d = 0; d < b->ndim; d++)
    for (int k = 0; k < L->nsub[d]; k++) {
      rj_stride st = L->stride[d][k];
      if (st.unit != RJ_UNIT_SLOT || st.step <= 0) continue;
      if (!add_scaled(&top, L->shape[d][k] - 1, st.step)) return INT64_MAX;
    }
  return top < INT64_MAX ? top + 1 : top;
}

void ir_placement_free(ir_placement *p) {
  free(p->elem);
  p->elem = NULL;
}
