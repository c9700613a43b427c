/* The host check of passes/state.c (tests/ops/state_host/run.sh): the functions state_gen built,
 * compiled for x86, fold random inputs along random binary trees (either operand first), as the
 * GPU's lanes, warps and CTAs may: argmax / argmin must give the reference's index exactly in
 * every order (ties -> the first index; NaN under both policies; -0.0; -inf; all-NaN rows -> -1),
 * var / std / logsumexp must be within the bound `redjit run` uses (docs/CLI.md) of a long-double
 * two-pass reference (offsets, huge magnitudes, -inf rows, +inf and NaN elements), and var's
 * n <= correction must give inf or NaN as torch.  Prints the worst error / bound per op. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef struct {
  _Alignas(16) unsigned char b[32];
} S;
typedef void (*combf)(S *, S *, S *);
typedef void (*elemf)(double, int64_t, S *);
typedef void (*idf)(S *);
typedef double (*finf)(S *);
typedef void (*tfoldf)(const double *, const char *, int64_t, int64_t, S *);
#define DECL(o, d, n)                                                                              \
  void comb_##o##_##d##_##n(S *, S *, S *);                                                        \
  void elem_##o##_##d##_##n(double, int64_t, S *);                                                 \
  void id_##o##_##d##_##n(S *);                                                                    \
  double fin_##o##_##d##_##n(S *);                                                                 \
  void tfold_##o##_##d##_##n(const double *, const char *, int64_t, int64_t, S *);                 \
  void rfold_##o##_##d##_##n(const double *, const char *, int64_t, int64_t, S *);
#define DT(o, n) DECL(o, f16, n) DECL(o, f32, n) DECL(o, f64, n)
// clang-format off
DT(argmax, 0) DT(argmax, 1) DT(argmin, 0) DT(argmin, 1) DT(var, 0) DT(var, 1) DT(std, 0)
DT(std, 1) DT(lse, 0) DT(lse, 1)
DECL(argmax, i32, 0) DECL(argmax, i32, 1) DECL(argmin, i32, 0) DECL(argmin, i32, 1)
DECL(var_c3, f32, 0)
    // clang-format on

    typedef struct {
  combf c;
  elemf e;
  idf i;
  finf f;
  tfoldf t, r;
} F;
#define MK(o, d, n)                                                                                \
  (F) {                                                                                            \
    comb_##o##_##d##_##n, elem_##o##_##d##_##n, id_##o##_##d##_##n, fin_##o##_##d##_##n,           \
        tfold_##o##_##d##_##n, rfold_##o##_##d##_##n                                               \
  }
static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return rs;
}
static double urand(void) {
  return (double)(rnd() >> 11) * 0x1p-53;
}
/* reduce states [lo, hi) by a random tree */
static void tree(F f, S *st, int lo, int hi, S *out) {
  if (hi - lo == 0) {
    f.i(out);
    return;
  }
  if (hi - lo == 1) {
    *out = st[lo];
    return;
  }
  int mid = lo + 1 + (int)(rnd() % (uint64_t)(hi - lo - 1));
  S a, b;
  tree(f, st, lo, mid, &a);
  tree(f, st, mid, hi, &b);
  if (rnd() & 1)
    f.c(&a, &b, out);
  else
    f.c(&b, &a, out);
}
/* The GPU's approximate instructions, with their documented error in the worse direction:
 * ex2.approx.ftz.f32 about 2 ulp, rcp.approx.ftz.f32 1 ulp (results below 2^-126 flush to 0). */
float host_ex2_approx_ftz_f32(float x) {
  float r = exp2f(x) * (1 + (rnd() & 1 ? 0x1p-22f : -0x1p-22f));
  return fabsf(r) < 0x1p-126f ? 0.0f : r;
}
float host_rcp_approx_ftz_f(float x) {
  return (1.0f / x) * (1 + (rnd() & 1 ? 0x1p-23f : -0x1p-23f));
}
/* the GPU kernels' way: x[0 .. n) cut into runs of consecutive indices (a thread's slots), each
 * folded in order (tfold: two interleaved slots, or rfold: rounds of 4; skip[i]: an element the
 * slot does not take), then their states by a random tree; or, with runs == 0, every element's
 * state by a random tree */
static void fold(F f, const double *x, const char *skip, int n, int runs, S *out) {
  static S st[4096];
  if (!runs) {
    for (int i = 0; i < n; i++) {
      f.e(x[i], i, &st[i]);
      if (skip[i]) f.i(&st[i]);
    }
    tree(f, st, 0, n, out);
    return;
  }
  int k = 0;
  for (int a = 0; a < n; k++) {
    int len = 1 + (int)(rnd() % (uint64_t)(2 * n / runs + 1));
    if (len > n - a) len = n - a;
    (rnd() & 1 ? f.t : f.r)(x + a, skip + a, len, a, &st[k]); /* interleaved slots, or rounds */
    a += len;
  }
  tree(f, st, 0, k, out);
}
static float r16(double x) { /* round to f16 precision roughly: use float then keep 11 bits */
  if (isnan(x) || isinf(x)) return (float)x;
  int e;
  double m = frexp(x, &e);
  m = nearbyint(m * 2048) / 2048;
  return (float)ldexp(m, e);
}
static int fails;
static void arg_test(F f, int isint, int f16, int nanign, int mx) {
  for (int trial = 0; trial < 2000; trial++) {
    int n = 1 + (int)(rnd() % 70);
    double x[80];
    int nnan = rnd() % 4 == 0 ? 1 + (int)(rnd() % 3) : 0;
    for (int i = 0; i < n; i++)
      x[i] = isint ? (double)((int)(rnd() % 5) - 2) : floor(urand() * 5) / 4 - 0.5;
    if (!isint) {
      for (int k = 0; k < nnan; k++)
        x[rnd() % n] = NAN;
      if (rnd() % 10 == 0) x[rnd() % n] = -INFINITY;
      if (rnd() % 10 == 0) x[rnd() % n] = -0.0;
    }
    if (!isint && rnd() % 20 == 0)
      for (int i = 0; i < n; i++)
        x[i] = NAN;
    if (f16)
      for (int i = 0; i < n; i++)
        x[i] = r16(x[i]);
    char skip[80];
    int runs = trial % 3 ? 1 + (int)(rnd() % 8) : 0;
    for (int i = 0; i < n; i++)
      skip[i] = runs && rnd() % 8 == 0;
    int64_t best = -1;
    double bv = 0;
    for (int i = 0; i < n; i++) {
      if (skip[i]) continue;
      if (isnan(x[i])) {
        if (nanign) continue;
        best = i;
        break;
      }
      if (best < 0 || (mx ? x[i] > bv : x[i] < bv)) best = i, bv = x[i];
    }
    S out;
    fold(f, x, skip, n, runs, &out);
    double got = f.f(&out);
    if (got != (double)best) {
      if (fails++ < 10)
        printf("arg mx=%d int=%d ign=%d n=%d: got %g want %lld\n", mx, isint, nanign, n, got,
               (long long)best);
    }
  }
}
static void var_test(F f, int wide, int isstd, int nanign, const char *name) {
  double worst = 0, worst_off[2] = {0, 0};
  for (int trial = 0; trial < 3000; trial++) {
    int n = 1 + (int)(rnd() % 2000);
    static double x[4000];
    /* styles: offsets 1e4 (f64 1e8), 0, 1; 1e6 (f64 1e12) with a spread of 1e-2, and that with
     * an outlier first (a slot's shift far from its mean) */
    int style = trial % 5;
    double off = style == 0   ? (wide ? 1e8 : 1e4)
                 : style == 1 ? 0
                 : style == 2 ? 1
                 : wide       ? 1e12
                              : 1e6;
    double sc = style >= 3 ? 1e-2 : trial % 7 == 0 ? 1e10 : 1;
    for (int i = 0; i < n; i++) {
      x[i] = off + (urand() * 2 - 1) * sc;
      if (style == 4 && i % 64 == 0) x[i] = off + 50 * sc;
      if (!wide) x[i] = (float)x[i];
    }
    int runs = trial % 2 ? 1 + (int)(rnd() % 64) : 0;
    static char skip[4000];
    for (int i = 0; i < n; i++)
      skip[i] = runs && rnd() % 16 == 0;
    if (rnd() % 8 == 0) x[rnd() % n] = NAN;
    int hasnan = 0;
    long double s = 0;
    int64_t c = 0;
    for (int i = 0; i < n; i++)
      if (!skip[i]) hasnan |= isnan(x[i]);
    for (int i = 0; i < n; i++)
      if (!isnan(x[i]) && !skip[i]) s += x[i], c++;
    long double mean = c ? s / c : 0, m2 = 0;
    for (int i = 0; i < n; i++)
      if (!isnan(x[i]) && !skip[i]) m2 += (x[i] - mean) * (x[i] - mean);
    double d = c - 1 > 0 ? (double)(c - 1) : 0.0;
    double ref = (double)m2 / d;
    if (isstd) ref = sqrt(ref);
    if (hasnan && !nanign) ref = NAN;
    S out;
    fold(f, x, skip, n, runs, &out);
    double got = f.f(&out);
    if (isnan(ref) || isinf(ref)) {
      if (!(isnan(ref) && isnan(got)) && got != ref) {
        if (fails++ < 10) printf("%s ign=%d n=%d got %g want %g\n", name, nanign, n, got, ref);
      }
      continue;
    }
    double rel = fabs(got - ref) / (fabs(ref) + 1e-300);
    double pop = (double)(m2 / c);
    double scale = (pop + fabs((double)mean) * sqrt(pop)) /
                   (isstd ? 2 * ref * ref : pop); /* relative allowance factor */
    double eps = wide ? 0x1p-52 : 0x1p-23;
    double allowed = eps * (16 + 2 * sqrt((double)c)) * scale + (wide ? 0 : 2 * 0x1p-24);
    if (rel / allowed > worst) worst = rel / allowed;
    if (rel > allowed) {
      if (fails++ < 10)
        printf("%s n=%d off=%g got %.17g want %.17g rel %g allowed %g\n", name, n, off, got, ref,
               rel, allowed);
    }
    if (style >= 3 && rel > worst_off[runs > 0]) worst_off[runs > 0] = rel;
  }
  printf(
      "%s ign=%d worst err/allowed %.3g; offset %g, spread 1e-2: relative error %.3g (elements), "
      "%.3g (slots)\n",
      name, nanign, worst, wide ? 1e12 : 1e6, worst_off[0], worst_off[1]);
}
static void lse_test(F f, int wide, int nanign, const char *name) {
  double worst = 0;
  for (int trial = 0; trial < 3000; trial++) {
    int n = 1 + (int)(rnd() % 1000);
    static double x[2000];
    double sc = trial % 4 == 0   ? 1
                : trial % 4 == 1 ? 80
                : trial % 4 == 2 ? 1e4
                                 : (wide ? 1e300 : 1e30);
    for (int i = 0; i < n; i++) {
      x[i] = (urand() * 2 - 1) * sc;
      if (!wide) x[i] = (float)x[i];
    }
    int kind = (int)(rnd() % 10);
    if (kind == 0)
      for (int i = 0; i < n; i++)
        x[i] = -INFINITY;
    if (kind == 1) x[rnd() % n] = INFINITY;
    if (kind == 2) x[rnd() % n] = NAN;
    if (kind == 3) x[rnd() % n] = -INFINITY;
    int runs = trial % 2 ? 1 + (int)(rnd() % 64) : 0;
    static char skip[2000];
    for (int i = 0; i < n; i++)
      skip[i] = runs && rnd() % 16 == 0;
    double m = -INFINITY;
    int nan = 0;
    int c = 0;
    for (int i = 0; i < n; i++) {
      if (skip[i]) continue;
      if (isnan(x[i])) {
        nan = 1;
        continue;
      }
      if (x[i] > m) m = x[i];
      c++;
    }
    long double s = 0;
    if (isfinite(m))
      for (int i = 0; i < n; i++)
        if (!isnan(x[i]) && !skip[i]) s += expl((long double)x[i] - m);
    double ref = (nan && !nanign) ? NAN : isfinite(m) ? m + (double)logl(s) : m;
    S out;
    fold(f, x, skip, n, runs, &out);
    double got = f.f(&out);
    if (!isfinite(ref) || !isfinite(got)) {
      if (!(isnan(ref) && isnan(got)) && got != ref) {
        if (fails++ < 10) printf("%s kind=%d n=%d got %g want %g\n", name, kind, n, got, ref);
      }
      continue;
    }
    double eps = wide ? 0x1p-52 : 0x1p-23;
    double allowed = eps * (16 + 2 * sqrt((double)c)) * (fabs(m) + 1);
    double err = fabs(got - ref);
    if (err / allowed > worst) worst = err / allowed;
    if (err > allowed) {
      if (fails++ < 10) printf("%s sc=%g n=%d got %.17g want %.17g\n", name, sc, n, got, ref);
    }
  }
  printf("%s ign=%d worst err/allowed %.3g\n", name, nanign, worst);
}
/* var f32 of off + u, u uniform in [-1, 1) rounded to f32 (a variance near 1/3), n elements:
 * the worst relative error over trials, folded as a GPU's threads (runs of about 32 elements,
 * shifted sums about each run's first element, then Chan's combine of f32 means), or element by
 * element.  The threads' means are f32: at an offset of 1e6 each is off by up to 2^-5, so the
 * cross terms of the combine carry that error. */
static double offset_error(F f, double off, int n, int by_runs) {
  static double x[4096];
  static char skip[4096];
  double worst = 0;
  for (int trial = 0; trial < 200; trial++) {
    long double s = 0, m2 = 0;
    for (int i = 0; i < n; i++) {
      x[i] = (float)(off + (urand() * 2 - 1));
      skip[i] = 0;
      s += x[i];
    }
    long double mean = s / n;
    for (int i = 0; i < n; i++)
      m2 += (x[i] - mean) * (x[i] - mean);
    double ref = (double)(m2 / (n - 1));
    S out;
    fold(f, x, skip, n, by_runs ? n / 32 : 0, &out);
    double rel = fabs(f.f(&out) - ref) / ref;
    if (!(rel <= worst)) worst = rel; /* NaN: worst */
  }
  return worst;
}
static void offset_report(void) {
  static const double offs[3] = {1e4, 1e5, 1e6};
  for (int o = 0; o < 3; o++)
    for (int n = 1024; n <= 4096; n *= 4) {
      double r = offset_error(MK(var, f32, 0), offs[o], n, 1);
      double e = offset_error(MK(var, f32, 0), offs[o], n, 0);
      printf("var f32 of %g + U[-1,1), n %d: worst relative error %.3g (runs of ~32), %.3g "
             "(elements)\n",
             offs[o], n, r, e);
      /* docs/TENSOR.md: 1e4 + noise keeps about 3 digits */
      if (o == 0 && !(r <= 1e-3 && e <= 1e-3)) fails++, printf("  more than 1e-3 at 1e4\n");
    }
}
int main(void) {
  offset_report();
  for (int ign = 0; ign < 2; ign++) {
    F a[2][4] = {{ign ? MK(argmax, f32, 1) : MK(argmax, f32, 0),
                  ign ? MK(argmax, f16, 1) : MK(argmax, f16, 0),
                  ign ? MK(argmax, f64, 1) : MK(argmax, f64, 0),
                  ign ? MK(argmax, i32, 1) : MK(argmax, i32, 0)},
                 {ign ? MK(argmin, f32, 1) : MK(argmin, f32, 0),
                  ign ? MK(argmin, f16, 1) : MK(argmin, f16, 0),
                  ign ? MK(argmin, f64, 1) : MK(argmin, f64, 0),
                  ign ? MK(argmin, i32, 1) : MK(argmin, i32, 0)}};
    for (int mx = 0; mx < 2; mx++)
      for (int d = 0; d < 4; d++)
        arg_test(a[1 - mx][d], d == 3, d == 1, ign, mx);
    var_test(ign ? MK(var, f32, 1) : MK(var, f32, 0), 0, 0, ign, "var f32");
    var_test(ign ? MK(var, f64, 1) : MK(var, f64, 0), 1, 0, ign, "var f64");
    var_test(ign ? MK(std, f32, 1) : MK(std, f32, 0), 0, 1, ign, "std f32");
    var_test(ign ? MK(std, f64, 1) : MK(std, f64, 0), 1, 1, ign, "std f64");
    lse_test(ign ? MK(lse, f32, 1) : MK(lse, f32, 0), 0, ign, "lse f32");
    lse_test(ign ? MK(lse, f64, 1) : MK(lse, f64, 0), 1, ign, "lse f64");
  }
  /* n <= correction: M2 / 0 */
  F c1 = MK(var, f32, 0), c3 = MK(var_c3, f32, 0);
  S st[3], out;
  c1.e(2.0, 0, &st[0]);
  if (!isnan(c1.f(&st[0]))) fails++, printf("var of one element (correction 1): not NaN\n");
  c3.e(1.0, 0, &st[0]), c3.e(2.0, 0, &st[1]), c3.c(&st[0], &st[1], &out);
  if (!isinf(c3.f(&out))) fails++, printf("var of two elements (correction 3): not inf\n");
  c3.e(1.0, 0, &st[0]), c3.e(1.0, 0, &st[1]), c3.c(&st[0], &st[1], &out);
  if (!isnan(c3.f(&out))) fails++, printf("var of equal elements (correction 3): not NaN\n");
  c1.i(&st[2]);
  if (!isnan(c1.f(&st[2]))) fails++, printf("var of no element: not NaN\n");
  printf("fails %d\n", fails);
  return fails != 0;
}
