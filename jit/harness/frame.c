/* What every kind's run shares: device buffers between poisoned guards, mirrored on the host; the
 * first failure's note; one element's check against the oracle; argmax / argmin's values. */
#include "harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rj_status hr_nomem(rj_ctx *ctx) {
  return rj_error_set(ctx, RJ_ENOMEM, "out of memory");
}

void hr_free(rj_ctx *ctx, int device, rj_devptr ptr, rj_status s) {
  if (!ptr) return;
  if (!s) {
    rj_device_free(ctx, device, ptr);
    return;
  }
  char kept[1024];
  snprintf(kept, sizeof kept, "%s", rj_errmsg(ctx));
  rj_device_free(ctx, device, ptr);
  rj_error_set(ctx, s, "%s", kept);
}

size_t hr_buf_bytes(const hr_buf *b) {
  return (size_t)(b->n + 2 * HR_GUARD) * (size_t)ir_dtype(b->t)->bytes;
}

void *hr_payload(const hr_buf *b) {
  return (char *)b->host + (size_t)HR_GUARD * (size_t)ir_dtype(b->t)->bytes;
}

rj_devptr hr_payload_dev(const hr_buf *b) {
  return b->dev + (uint64_t)HR_GUARD * (uint64_t)ir_dtype(b->t)->bytes;
}

rj_status hr_buf_make(rj_ctx *ctx, hr_buf *b, int device, rj_dtype t, int64_t n) {
  b->t = t;
  b->device = device;
  b->n = n;
  b->dev = 0;
  b->host = malloc(hr_buf_bytes(b));
  if (!b->host) return hr_nomem(ctx);
  hr_fill_poison(t, b->host, n + 2 * HR_GUARD);
  return rj_device_alloc(ctx, device, hr_buf_bytes(b), &b->dev);
}

rj_status hr_buf_up(rj_ctx *ctx, const hr_buf *b) {
  return rj_memcpy_htod(ctx, b->device, b->dev, b->host, hr_buf_bytes(b));
}

int64_t hr_guard_hits(rj_dtype t, const void *p, int64_t n) {
  int64_t hits = 0;
  for (int64_t i = 0; i < HR_GUARD; i++) {
    hits += !hr_is_poison(t, p, i);
    hits += !hr_is_poison(t, p, HR_GUARD + n + i);
  }
  return hits;
}

rj_status hr_buf_down(rj_ctx *ctx, const hr_buf *b, void *out, int64_t *guard_hits) {
  rj_status s = rj_memcpy_dtoh(ctx, b->device, out, b->dev, hr_buf_bytes(b));
  if (!s) *guard_hits += hr_guard_hits(b->t, out, b->n);
  return s;
}

void hr_buf_free(rj_ctx *ctx, hr_buf *b, rj_status s) {
  hr_free(ctx, b->device, b->dev, s);
  free(b->host);
  b->host = NULL;
  b->dev = 0;
}

void hr_note(rj_check_result *res, const char *fmt, ...) {
  if (res->first_error[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->first_error, sizeof res->first_error, fmt, ap);
  va_end(ap);
}

void hr_outside(rj_check_result *res, int64_t n, const char *fmt, ...) {
  if (!n) return;
  res->outside_written += n;
  if (res->first_error[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(res->first_error, sizeof res->first_error, fmt, ap);
  va_end(ap);
}

void hr_check_elem(rj_check_result *res, rj_op op, rj_dtype t, const hr_value *ref, const void *got,
                   int64_t i, const char *fmt, ...) {
  double ae, re;
  bool ok = hr_state_op(op) ? hr_state_compare(op, t, ref, got, i, &ae, &re)
                            : hr_compare(op, t, ref, got, i, &ae, &re);
  res->checked++;
  if (!isinf(ae) && ae > res->max_abs_err) res->max_abs_err = ae;
  if (!isinf(re) && re > res->max_rel_err) res->max_rel_err = re;
  if (ok) return;
  res->wrong++;
  if (isinf(ae)) res->max_abs_err = res->max_rel_err = INFINITY;
  if (res->first_error[0]) return;
  char where[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(where, sizeof where, fmt, ap);
  va_end(ap);
  hr_note(res, "%s: got %.17g (bits 0x%llx), expected %.17g", where, hr_load_f64(t, got, i),
          (unsigned long long)hr_load_bits(t, got, i),
          ir_dtype(t)->is_float ? ref->f : (double)(int64_t)ref->u);
}

/* The bits the values destination must hold for output p: the source element at the reference's
 * index, or (index -1: every element an ignored NaN) the op's identity, -inf for argmax and +inf
 * for argmin, in the input dtype. */
static uint64_t value_due(const rj_tensor *t, const ir_tview *v, const void *view, int64_t p,
                          int64_t idx) {
  if (idx >= 0)
    return hr_load_bits(t->dtype, view, ir_tview_offset(v, p, 0) + ir_tview_offset(v, 0, idx));
  uint64_t inf = 0; /* wide enough for any dtype */
  hr_store_f64(t->dtype, &inf, 0, t->op == RJ_OP_ARGMAX ? -INFINITY : INFINITY);
  return hr_load_bits(t->dtype, &inf, 0);
}

/* f16 / bf16 values pass through f32 in the kernel, and the GPU's conversion back writes a NaN
 * as its canonical NaN (0x7fff): a NaN element's value is then any NaN (docs/REQUESTS.md). */
static bool nan16_alike(rj_dtype d, uint64_t got, uint64_t want) {
  if (ir_dtype(d)->fp8) /* float8 too, through f32 */
    return isnan(hr_load_f64(d, &got, 0)) && isnan(hr_load_f64(d, &want, 0));
  if (d != RJ_F16 && d != RJ_BF16) return false;
  unsigned exp = d == RJ_F16 ? 0x7c00u : 0x7f80u, man = d == RJ_F16 ? 0x03ffu : 0x007fu;
  bool gn = (got & exp) == exp && (got & man), wn = (want & exp) == exp && (want & man);
  return gn && wn;
}

void hr_check_values(rj_check_result *res, const rj_tensor *t, const ir_tview *v, const void *view,
                     const hr_value *ref, const void *got) {
  for (int64_t p = 0; p < v->outputs; p++) {
    int64_t idx = (int64_t)ref[p].u;
    uint64_t want = value_due(t, v, view, p, idx), bits = hr_load_bits(t->dtype, got, p);
    res->checked++;
    if (bits == want || nan16_alike(t->dtype, bits, want)) continue;
    res->wrong++;
    res->max_abs_err = res->max_rel_err = INFINITY;
    hr_note(res,
            "values element %lld: got %.17g (bits 0x%llx), expected the element at index %lld: "
            "%.17g (bits 0x%llx)%s",
            (long long)p, hr_load_f64(t->dtype, got, p), (unsigned long long)bits, (long long)idx,
            hr_load_f64(t->dtype, &want, 0), (unsigned long long)want,
            hr_is_poison(t->dtype, got, p) ? " (not written: poison)" : "");
  }
}
