/* tensor_multi's fold order with no GPU (docs/TENSOR.md "Many tensors"): a model of how a chunk's
 * elements reach the threads (16-byte vectors, the scalar tail, element-wise for other tensors)
 * reads every element exactly once over random lengths, alignments and element sizes; a float
 * prod folds a thread's loads into one accumulator (the kernel's IR as built); and why: products
 * of f16 factors near 1 in f32, 8 factors an accumulator, end 0.4 % high over 4 Mi elements (a
 * bias, one sign), while one accumulator a thread stays within the reference's tolerance. */
#include "rjtest.h"

#include <math.h>
#include <stdint.h>

#define T 256       /* threads a CTA */
#define CHUNK 16384 /* elements a chunk, at least */
#define PARTS_ALIGN (256 * 1024)

/* a tensor's chunk length: max(16384, ceil(len / 256) rounded up to 1024) */
static int64_t chunk_len(int64_t len) {
  int64_t c = (len + PARTS_ALIGN - 1) / PARTS_ALIGN * 1024;
  return c < CHUNK ? CHUNK : c;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return rng;
}

/* thread t's reads of chunk [s, end) by the vector path (vec elements a vector, U in flight) */
static void reads_vec(uint8_t *hits, int64_t s, int64_t end, int vec, int U, int t) {
  int64_t vs = s / vec, ve = end / vec;
  for (int64_t i0 = vs + t; i0 < ve; i0 += (int64_t)T * U)
    for (int u = 0; u < U; u++) {
      int64_t i = i0 + (int64_t)u * T;
      if (i < ve)
        for (int v = 0; v < vec; v++)
          hits[i * vec + v]++;
    }
  int64_t ti = ve * vec + t;
  if (ti < end) hits[ti]++;
}

/* thread t's reads of chunk [s, end) element by element (U in flight) */
static void reads_scalar(uint8_t *hits, int64_t s, int64_t end, int U, int t) {
  for (int64_t i0 = s + t; i0 < end; i0 += (int64_t)T * U)
    for (int u = 0; u < U; u++)
      if (i0 + (int64_t)u * T < end) hits[i0 + (int64_t)u * T]++;
}

/* every element of a tensor of len elements of `bytes` each, element 0 at byte address addr */
static void cover(uint8_t *hits, int64_t len, int bytes, uint64_t addr) {
  int64_t cl = chunk_len(len), nch = len ? (len + cl - 1) / cl : 1;
  int vec = 16 / bytes, fast = addr % 16 == 0;
  ck_assert_int_le(nch, 256);
  for (int64_t j = 0; j < nch; j++) {
    int64_t s = j * cl, end = s + cl < len ? s + cl : len;
    ck_assert_msg(!fast || (s * bytes) % 16 == 0, "chunk %lld starts unaligned", (long long)j);
    for (int t = 0; t < T; t++)
      if (fast)
        reads_vec(hits, s, end, vec, vec == 2 || vec == 16 ? 2 : 4, t);
      else
        reads_scalar(hits, s, end, bytes >= 8 ? 2 : 8, t);
  }
}

START_TEST(coverage_model) {
  static const int64_t fixed[] = {0,     1,     7,     8,       9,       1023,    1024,   16383,
                                  16384, 16385, 32767, 4194303, 4194304, 4194305, 5000001};
  uint8_t *hits = malloc(6000000 + 64);
  for (int c = 0; c < 120; c++) {
    int64_t len = c < 15 ? fixed[c] : (int64_t)(next() % (c % 10 == 0 ? 6000000 : 70000));
    int bytes = 1 << (next() % 4);
    uint64_t addr = 0x10000 + (next() % 16) / (uint64_t)bytes * (uint64_t)bytes;
    memset(hits, 0, (size_t)len + 64);
    cover(hits, len, bytes, addr);
    int64_t bad = -1; /* the first element not read exactly once (ck_assert: once a case) */
    for (int64_t i = 0; i < len + 64 && bad < 0; i++)
      if (hits[i] != (i < len)) bad = i;
    ck_assert_msg(bad < 0, "len %lld, %d-byte elements at %#llx: element %lld read %d times",
                  (long long)len, bytes, (unsigned long long)addr, (long long)bad,
                  bad < 0 ? 0 : hits[bad]);
  }
  free(hits);
}
END_TEST

/* as-built IR of a list request: its accumulators, "%acc<n> = alloca" (both fold paths) */
static int accs(rj_ctx *ctx, const char *op, const char *dt) {
  rj_request r;
  rjt_parse(ctx,
            rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"list\":{\"count\":150,"
                    "\"total\":true}}",
                    op, dt),
            &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  ck_assert_msg(rj_compile(ctx, &r, &o, &k) == RJ_OK, "%s", rj_errmsg(ctx));
  const char *ir = rj_kernel_text(k, RJ_EMIT_LLVM);
  int n = 0;
  for (const char *p = ir; (p = strstr(p, "%acc")); p += 4) {
    const char *q = p + 4;
    while (*q >= '0' && *q <= '9')
      q++;
    n += strncmp(q, " = alloca", 9) == 0;
  }
  return n;
}

START_TEST(prod_one_accumulator) {
  rj_ctx *ctx = rj_ctx_new();
  static const char *const fl[] = {"f16", "bf16", "f32", "f64"};
  for (int d = 0; d < 4; d++) /* the vector path's and the scalar path's: one each */
    ck_assert_msg(accs(ctx, "prod", fl[d]) == 2, "prod %s: %d accumulators", fl[d],
                  accs(ctx, "prod", fl[d]));
  ck_assert_int_eq(accs(ctx, "sum", "f16"), 4 + 8); /* others: U each */
  ck_assert_int_eq(accs(ctx, "max", "f32"), 4 + 8);
  ck_assert_int_eq(accs(ctx, "prod", "i32"), 4 + 8); /* exact in any order */
  rj_ctx_free(ctx);
}
END_TEST

/* the f32 product of v[0 .. n) (n a power of 2) by pairs at distance n/2, n/4, ... (the
 * butterflies' lane 0) */
static float tree(float *v, int n) {
  for (int w = n / 2; w >= 1; w /= 2)
    for (int t = 0; t < w; t++)
      v[t] *= v[t + w];
  return v[0];
}

/* the f32 product of n f16 factors exp(U(-2^-8, 2^-8)) (the reference's draw for long products)
 * in the kernel's order: chunks of 16384, T threads, thread t's elements t, t + T, ... into na of
 * U = 8 accumulators round robin, the accumulators' and threads' trees; relative to the exact */
static double order_error(const _Float16 *x, int64_t n, int na) {
  double exact = 1;
  for (int64_t i = 0; i < n; i++)
    exact *= (double)x[i];
  float chunk[256] = {0}, part[T];
  int nch = 0;
  for (int64_t s = 0; s < n; s += CHUNK, nch++) {
    for (int t = 0; t < T; t++) {
      float acc[8] = {1, 1, 1, 1, 1, 1, 1, 1};
      for (int64_t i = s + t, r = 0; i < s + CHUNK && i < n; i += T, r++)
        acc[r % na] *= (float)x[i];
      part[t] = ((acc[0] * acc[1]) * (acc[2] * acc[3])) * ((acc[4] * acc[5]) * (acc[6] * acc[7]));
    }
    chunk[nch] = tree(part, T);
  }
  for (int c = nch; c < 256; c++)
    chunk[c] = 1;
  return (double)tree(chunk, 256) / exact - 1;
}

START_TEST(order_model) {
  int64_t n = 4000000;
  _Float16 *x = malloc((size_t)n * sizeof *x);
  for (int64_t i = 0; i < n; i++)
    x[i] = (_Float16)(float)exp(0x1p-8 * ((double)(next() >> 11) * 0x1p-53 * 2.0 - 1.0));
  double tol = 16.0 * sqrt((double)n) * 0x1p-24; /* the reference's, less the output's rounding */
  double eight = order_error(x, n, 8), one = order_error(x, n, 1);
  ck_assert_msg(eight > 2 * tol, "8 accumulators: %g (tolerance %g)", eight, tol);
  ck_assert_msg(fabs(one) < tol / 4, "one accumulator: %g (tolerance %g)", one, tol);
  free(x);
}
END_TEST

int main(void) {
  Suite *s = suite_create("multi_order");
  TCase *tc = tcase_create("cpu");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, coverage_model);
  tcase_add_test(tc, prod_one_accumulator);
  tcase_add_test(tc, order_model);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
