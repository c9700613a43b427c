/* The inputs and the reference of the state ops (argmax argmin var std logsumexp; passes/state.h):
 * inputs drawn to be hard for them (ties, large offsets, huge and tiny magnitudes, -inf rows),
 * the reference in long double (two passes: the mean, or the max, first), and the comparison:
 * argmax / argmin exact (the i64 index), var / std / logsumexp within a tolerance of the working
 * precision (docs/CLI.md, "redjit run"). */
#include "harness.h"

#include <math.h>

bool hr_state_op(rj_op op) {
  return op == RJ_OP_ARGMAX || op == RJ_OP_ARGMIN || op == RJ_OP_VAR || op == RJ_OP_STD ||
         op == RJ_OP_LOGSUMEXP;
}

/* the scale of style 1 and 2 inputs (var: an offset; logsumexp: a factor), by dtype */
static double big(rj_dtype t, rj_op op, int style) {
  static const double var_off[4] = {100, 10, 1e4, 1e8}; /* f16 bf16 f32 f64 */
  static const double var_big[4] = {100, 1e15, 1e15, 1e100};
  static const double lse_big[4] = {6e4, 1e30, 1e30, 1e300};
  if (ir_dtype(t)->fp8) /* within e4m3's 448 */
    return op == RJ_OP_LOGSUMEXP ? (style == 1 ? 80 : 400) : style == 1 ? 8 : 100;
  if (ir_dtype_tensor_only(t)) return style == 1 ? 20 : 1; /* i8 .. bool: their draws */
  int i = t <= RJ_F64 ? (int)t : 2;
  if (op == RJ_OP_LOGSUMEXP) return style == 1 ? 80 : style == 2 ? 1e4 : lse_big[i];
  return style == 1 ? var_off[i] : var_big[i];
}

/* One input x in [-1, 1) (integers: their draw) redrawn for op by style (seed bits 3-4). */
static double shape_value(rj_op op, rj_dtype t, int style, double x) {
  bool fl = ir_dtype(t)->is_float;
  if (op == RJ_OP_ARGMAX || op == RJ_OP_ARGMIN) {
    if (style == 3) return fl ? 0.5 : 7; /* every element ties */
    if (style == 1) return x;
    return fl ? nearbyint(x * 4) / 4 : fmod(x, 5); /* few values: many ties */
  }
  if (style == 0) return x;
  if (op == RJ_OP_LOGSUMEXP) return x * big(t, op, style);
  if (style == 3) return 0.5; /* constant rows: the variance is exactly 0 */
  return style == 1 ? big(t, op, 1) + x : x * big(t, op, 2);
}

/* Where element r of output p lies (elements of the buffer). */
typedef int64_t offset_fn(const void *cx, int64_t p, int64_t r);

static void fill(const rj_tensor *t, int64_t outputs, int64_t len, offset_fn *off, const void *cx,
                 void *view, int style) {
  for (int64_t p = 0; p < outputs; p++) {
    bool ninf_row = t->op == RJ_OP_LOGSUMEXP && style == 2 && p % 5 == 1;
    for (int64_t r = 0; r < len; r++) {
      int64_t i = off(cx, p, r);
      double x = ninf_row ? -INFINITY
                          : shape_value(t->op, t->dtype, style, hr_load_f64(t->dtype, view, i));
      if (t->op == RJ_OP_LOGSUMEXP && style == 2 && p % 7 == 3 && r == len / 2) x = INFINITY;
      hr_store_f64(t->dtype, view, i, x);
    }
  }
}

static int64_t tview_off(const void *cx, int64_t p, int64_t r) {
  const ir_tview *v = cx;
  return ir_tview_offset(v, p, 0) + ir_tview_offset(v, 0, r);
}

static int64_t tile_off(const void *cx, int64_t p, int64_t r) {
  return ir_src_offset(cx, p, r);
}

static int64_t run_off(const void *cx, int64_t p, int64_t r) {
  return *(const int64_t *)cx * p + r;
}

/* The fields the reference reads (op dtype nan correction) of a tile request. */
static rj_tensor of_tile(const rj_tile *t) {
  rj_tensor v = {.op = t->op, .dtype = t->dtype, .nan = t->nan, .correction = t->correction};
  return v;
}

void hr_state_fill(hr_rng *g, const rj_tensor *t, const ir_tview *v, void *view, int style) {
  (void)g;
  fill(t, v->outputs, v->reduce_len, tview_off, v, view, style);
}

void hr_state_fill_tile(const rj_tile *t, void *src, int style) {
  ir_tile_shape f;
  ir_tile_facts(t, &f);
  rj_tensor v = of_tile(t);
  fill(&v, f.spatial_len, f.reduce_len, tile_off, t, src, style);
}

/* argmax / argmin: the first index of the extreme (the first NaN under propagate; -1 when every
 * element is an ignored NaN) */
static void ref_arg(const rj_tensor *t, int64_t len, offset_fn *off, const void *cx,
                    const void *src, int64_t p, hr_value *a) {
  int64_t best = -1;
  double bv = 0;
  for (int64_t r = 0; r < len; r++) {
    double x = hr_load_f64(t->dtype, src, off(cx, p, r));
    if (isnan(x)) {
      if (t->nan == RJ_NAN_IGNORE) continue;
      best = r;
      break;
    }
    if (best < 0 || (t->op == RJ_OP_ARGMAX ? x > bv : x < bv)) best = r, bv = x;
  }
  a->u = (uint64_t)best;
}

/* var / std: two passes in long double; mag: the scale of the working precision's error */
static void ref_var(const rj_tensor *t, int64_t len, offset_fn *off, const void *cx,
                    const void *src, int64_t p, hr_value *a) {
  long double sum = 0, m2 = 0;
  int64_t n = 0;
  bool nan = false;
  for (int64_t r = 0; r < len; r++) {
    double x = hr_load_f64(t->dtype, src, off(cx, p, r));
    if (isnan(x)) {
      nan |= t->nan == RJ_NAN_PROPAGATE;
      continue;
    }
    sum += x, n++;
  }
  long double mean = n ? sum / n : 0;
  for (int64_t r = 0; r < len; r++) {
    double x = hr_load_f64(t->dtype, src, off(cx, p, r));
    if (!isnan(x)) m2 += (x - mean) * (x - mean);
  }
  double d = n - t->correction > 0 ? (double)(n - t->correction) : 0.0;
  double var = (double)m2 / d; /* as torch: inf or nan when n <= correction */
  double pop = n ? (double)(m2 / n) : 0;
  a->f = nan ? NAN : t->op == RJ_OP_STD ? sqrt(var) : var;
  a->mag = (pop + fabs((double)mean) * sqrt(pop)) * (double)n / (d > 1 ? d : 1);
  a->u = (uint64_t)n;
}

/* logsumexp: the max, then the sum of exp(x - max) */
static void ref_lse(const rj_tensor *t, int64_t len, offset_fn *off, const void *cx,
                    const void *src, int64_t p, hr_value *a) {
  double m = -INFINITY;
  bool nan = false;
  int64_t n = 0;
  for (int64_t r = 0; r < len; r++) {
    double x = hr_load_f64(t->dtype, src, off(cx, p, r));
    if (isnan(x)) {
      nan |= t->nan == RJ_NAN_PROPAGATE;
      continue;
    }
    m = x > m ? x : m, n++;
  }
  long double s = 0;
  for (int64_t r = 0; r < len && isfinite(m); r++) {
    double x = hr_load_f64(t->dtype, src, off(cx, p, r));
    if (!isnan(x)) s += expl((long double)x - m);
  }
  a->f = nan ? NAN : isfinite(m) ? m + (double)logl(s) : m;
  a->mag = fabs(m) + 1;
  a->u = (uint64_t)n;
}

static void ref_rows(const rj_tensor *t, int64_t outputs, int64_t len, offset_fn *off,
                     const void *cx, const void *src, hr_value *ref) {
  for (int64_t p = 0; p < outputs; p++) {
    hr_value *a = &ref[p];
    *a = (hr_value){0};
    if (t->op == RJ_OP_ARGMAX || t->op == RJ_OP_ARGMIN)
      ref_arg(t, len, off, cx, src, p, a);
    else if (t->op == RJ_OP_LOGSUMEXP)
      ref_lse(t, len, off, cx, src, p, a);
    else
      ref_var(t, len, off, cx, src, p, a);
  }
}

void hr_state_ref(const rj_tensor *t, const ir_tview *v, const void *src, hr_value *ref) {
  ref_rows(t, v->outputs, v->reduce_len, tview_off, v, src, ref);
}

void hr_state_fill_runs(rj_op op, rj_dtype t, void *src, int64_t runs, int64_t len, int style) {
  rj_tensor v = {.op = op, .dtype = t};
  fill(&v, runs, len, run_off, &len, src, style);
}

void hr_state_ref_run(rj_op op, rj_dtype t, int correction, const void *src, int64_t first,
                      int64_t len, hr_value *ref) {
  rj_tensor v = {.op = op, .dtype = t, .nan = RJ_NAN_PROPAGATE, .correction = correction};
  ref_rows(&v, 1, len, run_off, &len, (const char *)src + first * ir_dtype(t)->bytes, ref);
}

void hr_state_ref_tile(const rj_tile *t, const void *src, hr_value *ref) {
  ir_tile_shape f;
  ir_tile_facts(t, &f);
  rj_tensor v = of_tile(t);
  ref_rows(&v, f.spatial_len, f.reduce_len, tile_off, t, src, ref);
}

/* var / std / logsumexp (finite values; NaN and inf were compared exactly): the working float's
 * epsilon (f32 for f16 / bf16 / f32) times (16 + 2 sqrt(n)) times the scale, plus two roundings
 * of the result to its dtype.  std: the variance's bound through the square root. */
static bool close_to(rj_op op, rj_dtype t, const hr_value *ref, double g, double *abs_err,
                     double *rel_err) {
  double eps = t == RJ_F64 ? 0x1p-52 : 0x1p-23;
  double out = t == RJ_F16 ? 0x1p-11 : t == RJ_BF16 ? 0x1p-8 : t == RJ_F32 ? 0x1p-24 : 0x1p-53;
  double r = ref->f, k = eps * (16 + 2 * sqrt((double)ref->u));
  double allowed = k * ref->mag;
  if (op == RJ_OP_STD) allowed = r > 0 ? allowed / (2 * r) : sqrt(allowed);
  allowed += 2 * out * fabs(r);
  *abs_err = fabs(g - r);
  *rel_err = r != 0 ? *abs_err / fabs(r) : (*abs_err ? INFINITY : 0);
  return *abs_err <= allowed;
}

bool hr_state_compare(rj_op op, rj_dtype t, const hr_value *ref, const void *got, int64_t i,
                      double *abs_err, double *rel_err) {
  if (op == RJ_OP_ARGMAX || op == RJ_OP_ARGMIN) /* the index: exact */
    return hr_compare(op, t, ref, got, i, abs_err, rel_err);
  *abs_err = *rel_err = INFINITY;
  if (hr_is_poison(t, got, i)) return false;
  double g = hr_load_f64(t, got, i), r = ref->f;
  if (isnan(r) || isnan(g) || isinf(r) || isinf(g)) {
    bool same = (isnan(r) && isnan(g)) || g == r;
    if (same) *abs_err = *rel_err = 0;
    return same;
  }
  return close_to(op, t, ref, g, abs_err, rel_err);
}
