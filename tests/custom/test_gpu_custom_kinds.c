/* GPU suite for op custom in kinds tile and subgroup.  rj_check has no CPU oracle for the caller's
 * IR (it says so before any launch: no_oracle), so each case launches the kernels itself
 * (rj_compile, rj_kernel_launch) and compares with what must hold:
 *   sum_is_sum   a custom f32 / f64 sum (and an f32 max) with commutative true gives op sum's
 * (max's) very bits on the same variant: shared (warp, groups of 8 lanes, a two-level cta, a
 * warpgroup, a thread), local, and the subgroup trees; integers     a wrapping i32 sum and a u64
 * xor exactly equal the test's own CPU fold (shared, subgroup) and op sum's / xor's output (local);
 *   accum        the wrapping sum folded into the old destination (shared: the CPU; local: op
 *                sum's accum);
 *   ordered      a non-commutative combine (2x2 matrices of u16, packed in a u64) equals the CPU
 *                fold in index order (the data make every other order differ): shared on every
 *                scope, contiguous and strided (axes [0]) reductions, subgroup reduce_custom
 *                (lane 0 of each group) and reduce_all_custom (every lane);
 *   halves       f16 / bf16 custom sums (the combine on halves) of small integers, exact, equal op
 *                sum's bits and the CPU sum (shared, local, subgroup);
 *   struct       struct states (combine.state), the destination in field result's dtype:
 *                Welford (f64 variances vs a float64 two-pass variance), an argmax {f32, i64}
 *                (the first index of the largest, exact: ties everywhere) and the
 *                non-commutative 2x2 matrix product over u32 lifted with the index (exact, in
 *                index order) -- shared on every shape, local (the commutative ones), subgroup
 *                reduce_custom and reduce_all_custom (the lift's index: the lane in its group).
 * Skips, saying so, with no GPU.  One case alone: CK_RUN_CASE=sum_is_sum (integers, accum,
 * ordered, halves, no_oracle, struct). */
#include "custom_ir.h"
#include "rjtest.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static rj_ctx *ctx;
static int gpu;
static int cases_run;

static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  uint64_t x = rng_state;
  x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return rng_state = x;
}

/* "combine":{...} (custom_ir.h's custom_combine_json) */
static const char *combine(const char *ir, const char *fn, const char *identity, int commutative) {
  return custom_combine_json(ir, fn, identity, commutative);
}

static rj_kernel *compile(const char *json, const char *variant) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  if (variant) snprintf(r.variant, sizeof r.variant, "%s", variant);
  rj_kernel *k = NULL;
  rj_status s = rj_compile(ctx, &r, NULL, &k);
  ck_assert_msg(s == RJ_OK, "%s: %s\n  %.2000s", rj_status_name(s), rj_errmsg(ctx), json);
  return k;
}

/* Launches k once with n buffers: each uploaded from host[i] (bytes[i]) and read back into it. */
static void launch(rj_kernel *k, int n, void **host, const size_t *bytes) {
  rj_devptr p[3] = {0};
  void *args[3];
  for (int i = 0; i < n; i++) {
    ck_assert_int_eq(rj_device_alloc(ctx, 0, bytes[i], &p[i]), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, p[i], host[i], bytes[i]), RJ_OK);
    args[i] = &p[i];
  }
  unsigned grid[3], block[3], shared;
  rj_kernel_dims(k, grid, block, &shared);
  rj_status s = rj_kernel_launch(ctx, k, 0, grid, block, shared, args, NULL);
  ck_assert_msg(s == RJ_OK, "launch: %s", rj_errmsg(ctx));
  for (int i = 0; i < n; i++) {
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, host[i], p[i], bytes[i]), RJ_OK);
    rj_device_free(ctx, 0, p[i]);
  }
  rj_kernel_release(ctx, k);
}

/* ---- shapes: a shared tile src [rows, len] reducing axis 1 (or, axes0, [len, rows] axis 0) */
typedef struct shape {
  const char *scope;
  int threads, rows, len, axes0;
} shape;
static const shape shapes[] = {
    {"warp", 32, 4, 64, 0},  /* groups of 32 lanes, two elements each */
    {"warp", 32, 8, 7, 0},   /* groups of 8 lanes (7 elements: one lane empty) */
    {"cta", 256, 2, 300, 0}, /* two levels: 4 warps per output, warp partials */
    {"cta", 128, 16, 40, 0}, /* single level over 4 warps */
    {"warpgroup", 128, 1, 1000, 0}, {"thread", 1, 3, 10, 0}, /* the sequential loop */
    {"warp", 32, 3, 40, 1},                                  /* axes [0]: strided elements */
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

static const char *shared_json_acc(const shape *s, const char *op, const char *dtype,
                                   const char *comb, int accum) {
  static char buf[10000];
  int a = s->axes0 ? s->len : s->rows, b = s->axes0 ? s->rows : s->len;
  snprintf(buf, sizeof buf,
           "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"%s\",\"threads\":%d,"
           "\"src\":{\"mem\":\"shared\",\"shape\":[%d,%d]},\"dst\":{\"mem\":\"shared\","
           "\"shape\":[%d]},\"axes\":[%d],\"accum\":%s%s}",
           op, dtype, s->scope, s->threads, a, b, s->rows, s->axes0 ? 0 : 1,
           accum ? "true" : "false", comb ? comb : "");
  return buf;
}
static const char *shared_json(const shape *s, const char *op, const char *dtype,
                               const char *comb) {
  return shared_json_acc(s, op, dtype, comb, 0);
}

/* element r of output o in src (elements) */
static int64_t at(const shape *s, int o, int r) {
  return s->axes0 ? (int64_t)r * s->rows + o : (int64_t)o * s->len + r;
}

/* dst of a shared tile kernel over src (elem-byte elements): dst poisoned first, or (accum) as
 * the caller filled it */
static void run_shared_acc(const char *json, const char *variant, const void *src, size_t elem,
                           const shape *s, void *dst, int accum) {
  size_t nb[2] = {(size_t)s->rows * s->len * elem, (size_t)s->rows * elem};
  void *src_copy = malloc(nb[0]);
  memcpy(src_copy, src, nb[0]);
  if (!accum) memset(dst, 0xa5, nb[1]);
  void *host[2] = {src_copy, dst};
  launch(compile(json, variant), 2, host, nb);
  free(src_copy);
}
static void run_shared(const char *json, const char *variant, const void *src, size_t elem,
                       const shape *s, void *dst) {
  run_shared_acc(json, variant, src, elem, s, dst, 0);
}

/* A local warp tile: [32, 4] with a row per lane, reducing the lanes (dst replicated), and [32,
 * 64] reducing each lane's row; the kernel dumps each thread's dst slots (out). */
static const char *const local_where[] = {
    "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],"
    "\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4],"
    "\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0]",
    "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,64],\"layout\":{\"shape\":[32,64],"
    "\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[32,1],\"layout\":{\"shape\":"
    "[32,1],\"stride\":[\"1@lane\",1]}},\"axes\":[-1]",
};
static const int local_src_n[] = {128, 2048};
#define LOCAL_OUT 4096 /* elements of the dump buffer, at least 32 threads x their dst slots */

/* init: the destination's old values (LOCAL_OUT elements; NULL: zeros) */
static void run_local_acc(const char *json, const void *src, size_t elem, int w, void *out,
                          const void *old) {
  size_t nb[3] = {(size_t)local_src_n[w] * elem, LOCAL_OUT * elem, LOCAL_OUT * elem};
  void *src_copy = malloc(nb[0]), *init = calloc(1, nb[1]);
  memcpy(src_copy, src, nb[0]);
  if (old) memcpy(init, old, nb[1]);
  memset(out, 0xa5, nb[2]);
  void *host[3] = {src_copy, init, out};
  launch(compile(json, "local"), 3, host, nb);
  free(src_copy);
  free(init);
}
static void run_local(const char *json, const void *src, size_t elem, int w, void *out) {
  run_local_acc(json, src, elem, w, out, NULL);
}

static const char *local_json_acc(int w, const char *op, const char *dtype, const char *comb,
                                  int accum) {
  static char buf[10000];
  snprintf(buf, sizeof buf, "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"accum\":%s%s}",
           op, dtype, local_where[w], accum ? "true" : "false", comb ? comb : "");
  return buf;
}
static const char *local_json(int w, const char *op, const char *dtype, const char *comb) {
  return local_json_acc(w, op, dtype, comb, 0);
}

/* subgroup: threads 64, blocks 2 (128 lanes) */
#define SG_N 128
static const char *sub_json(const char *prim, const char *dtype, int k, const char *comb) {
  static char buf[10000];
  snprintf(buf, sizeof buf,
           "{\"kind\":\"subgroup\",\"primitive\":\"%s\",\"dtype\":\"%s\",\"log2_size\":%d,"
           "\"threads\":64,\"blocks\":2%s}",
           prim, dtype, k, comb ? comb : "");
  return buf;
}

static void run_sub(const char *json, const void *in, size_t elem, void *out) {
  size_t nb[2] = {SG_N * elem, SG_N * elem};
  void *in_copy = malloc(nb[0]);
  memcpy(in_copy, in, nb[0]);
  memset(out, 0xa5, nb[1]);
  void *host[2] = {in_copy, out};
  launch(compile(json, NULL), 2, host, nb);
  free(in_copy);
}

static void fill_f32(float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    x[i] = (float)((double)(int64_t)(rnd() >> 11) * 0x1p-50 - 4.0); /* [-4, 4), 2^-50 steps */
}
static void fill_f64(double *x, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    x[i] = (double)(int64_t)(rnd() >> 11) * 0x1p-50 - 4.0;
}

/* ---------------------------------------------------------------- sum_is_sum */
START_TEST(sum_is_sum) {
  if (!gpu) return;
  static const char *const dts[3] = {"f32", "f64", "f32"}; /* the third: max */
  for (int d = 0; d < 3; d++) {
    size_t el = d == 1 ? 8 : 4;
    const char *comb = d == 0   ? combine(FSUM_IR, "fsum", "-0.0", 1)
                       : d == 1 ? combine(DSUM_IR, "dsum", "-0.0", 1)
                                : combine(FMAX_IR, "fmax", "\"0xff800000\"", 1);
    char *cb = strdup(comb);
    const char *op = d == 2 ? "max" : "sum";
    for (int i = 0; i < NSHAPES; i++) {
      const shape *s = &shapes[i];
      int64_t n = (int64_t)s->rows * s->len;
      void *src = malloc((size_t)n * el), *a = malloc((size_t)s->rows * el),
           *b = malloc((size_t)s->rows * el);
      d == 1 ? fill_f64(src, n) : fill_f32(src, n);
      run_shared(shared_json(s, "custom", dts[d], cb), "shared", src, el, s, a);
      run_shared(shared_json(s, op, dts[d], NULL), "shared", src, el, s, b);
      ck_assert_msg(memcmp(a, b, (size_t)s->rows * el) == 0, "%s shape %d: custom differs from %s",
                    dts[d], i, op);
      free(src), free(a), free(b);
      cases_run++;
    }
    for (int w = 0; w < 2; w++) {
      void *src = malloc((size_t)local_src_n[w] * el), *a = malloc(LOCAL_OUT * el),
           *b = malloc(LOCAL_OUT * el);
      d == 1 ? fill_f64(src, local_src_n[w]) : fill_f32(src, local_src_n[w]);
      run_local(local_json(w, "custom", dts[d], cb), src, el, w, a);
      run_local(local_json(w, op, dts[d], NULL), src, el, w, b);
      ck_assert_msg(memcmp(a, b, LOCAL_OUT * el) == 0, "%s local %d: custom differs from %s",
                    dts[d], w, op);
      free(src), free(a), free(b);
      cases_run++;
    }
    for (int all = 0; all < 2 && d < 2; all++)
      for (int k = 0; k <= 5; k++) {
        void *in = malloc(SG_N * el), *a = malloc(SG_N * el), *b = malloc(SG_N * el);
        d == 1 ? fill_f64(in, SG_N) : fill_f32(in, SG_N);
        run_sub(sub_json(all ? "reduce_all_custom" : "reduce_custom", dts[d], k, cb), in, el, a);
        run_sub(sub_json(all ? "reduce_all_add" : "reduce_add", dts[d], k, NULL), in, el, b);
        ck_assert_msg(memcmp(a, b, SG_N * el) == 0, "%s subgroup all=%d k=%d differs", dts[d], all,
                      k);
        free(in), free(a), free(b);
        cases_run++;
      }
    free(cb);
  }
}
END_TEST

/* ---------------------------------------------------------------- integers */
START_TEST(integers) {
  if (!gpu) return;
  for (int x = 0; x < 2; x++) { /* wadd over i32, xor64 over u64 */
    size_t el = x ? 8 : 4;
    char *cb = strdup(x ? combine(XOR64_IR, "xor64", "0", 1) : combine(WADD_IR, "wadd", "0", 1));
    const char *dt = x ? "u64" : "i32";
    for (int i = 0; i < NSHAPES; i++) {
      const shape *s = &shapes[i];
      int64_t n = (int64_t)s->rows * s->len;
      void *src = malloc((size_t)n * el), *a = malloc((size_t)s->rows * el);
      for (int64_t j = 0; j < n; j++)
        x ? (void)(((uint64_t *)src)[j] = rnd()) : (void)(((uint32_t *)src)[j] = (uint32_t)rnd());
      run_shared(shared_json(s, "custom", dt, cb), NULL, src, el, s, a);
      for (int o = 0; o < s->rows; o++) {
        uint64_t want = 0;
        uint32_t w32 = 0;
        for (int r = 0; r < s->len; r++)
          x ? (void)(want ^= ((uint64_t *)src)[at(s, o, r)])
            : (void)(w32 += ((uint32_t *)src)[at(s, o, r)]); /* wraps */
        if (x)
          ck_assert_msg(((uint64_t *)a)[o] == want, "xor shape %d output %d", i, o);
        else
          ck_assert_msg(((uint32_t *)a)[o] == w32, "wadd shape %d output %d: %u, want %u", i, o,
                        ((uint32_t *)a)[o], w32);
      }
      free(src), free(a);
      cases_run++;
    }
    for (int w = 0; w < 2; w++) {
      void *src = malloc((size_t)local_src_n[w] * el), *a = malloc(LOCAL_OUT * el),
           *b = malloc(LOCAL_OUT * el);
      for (int j = 0; j < local_src_n[w]; j++)
        x ? (void)(((uint64_t *)src)[j] = rnd()) : (void)(((uint32_t *)src)[j] = (uint32_t)rnd());
      run_local(local_json(w, "custom", dt, cb), src, el, w, a);
      run_local(local_json(w, x ? "xor" : "sum", dt, NULL), src, el, w, b);
      ck_assert_msg(memcmp(a, b, LOCAL_OUT * el) == 0, "%s local %d differs", dt, w);
      free(src), free(a), free(b);
      cases_run++;
    }
    for (int all = 0; all < 2; all++)
      for (int k = 0; k <= 5; k++) {
        uint64_t in[SG_N], out[SG_N];
        for (int j = 0; j < SG_N; j++)
          x ? (void)(in[j] = rnd()) : (void)(((uint32_t *)in)[j] = (uint32_t)rnd());
        run_sub(sub_json(all ? "reduce_all_custom" : "reduce_custom", dt, k, cb), in, el, out);
        int G = 1 << k;
        for (int l = 0; l < SG_N; l += all ? 1 : G) {
          uint64_t want = 0;
          uint32_t w32 = 0;
          for (int j = l / G * G; j < l / G * G + G; j++)
            x ? (void)(want ^= in[j]) : (void)(w32 += ((uint32_t *)in)[j]);
          if (x)
            ck_assert_msg(out[l] == want, "xor subgroup all=%d k=%d lane %d", all, k, l);
          else
            ck_assert_msg(((uint32_t *)out)[l] == w32, "wadd subgroup all=%d k=%d lane %d", all, k,
                          l);
        }
        cases_run++;
      }
    free(cb);
  }
}
END_TEST

/* accum with a commutative combine: dst = fn(result, old) -- the wrapping sum plus the old value
 * (shared, against the CPU), and op sum's accum bit for bit (local) */
START_TEST(accum) {
  if (!gpu) return;
  char *cb = strdup(combine(WADD_IR, "wadd", "0", 1));
  for (int i = 0; i < NSHAPES; i++) {
    const shape *s = &shapes[i];
    int64_t n = (int64_t)s->rows * s->len;
    uint32_t *src = malloc((size_t)n * 4), *a = malloc((size_t)s->rows * 4),
             *old = malloc((size_t)s->rows * 4);
    for (int64_t j = 0; j < n; j++)
      src[j] = (uint32_t)rnd();
    for (int o = 0; o < s->rows; o++)
      a[o] = old[o] = (uint32_t)rnd();
    run_shared_acc(shared_json_acc(s, "custom", "i32", cb, 1), NULL, src, 4, s, a, 1);
    for (int o = 0; o < s->rows; o++) {
      uint32_t want = old[o];
      for (int r = 0; r < s->len; r++)
        want += src[at(s, o, r)];
      ck_assert_msg(a[o] == want, "accum shape %d output %d: %u, want %u", i, o, a[o], want);
    }
    free(src), free(a), free(old);
    cases_run++;
  }
  for (int w = 0; w < 2; w++) {
    uint32_t *src = malloc((size_t)local_src_n[w] * 4), *old = malloc(LOCAL_OUT * 4),
             *a = malloc(LOCAL_OUT * 4), *b = malloc(LOCAL_OUT * 4);
    for (int j = 0; j < local_src_n[w]; j++)
      src[j] = (uint32_t)rnd();
    for (int j = 0; j < LOCAL_OUT; j++)
      old[j] = (uint32_t)rnd();
    run_local_acc(local_json_acc(w, "custom", "i32", cb, 1), src, 4, w, a, old);
    run_local_acc(local_json_acc(w, "sum", "i32", NULL, 1), src, 4, w, b, old);
    ck_assert_msg(memcmp(a, b, LOCAL_OUT * 4) == 0, "accum local %d differs from op sum's", w);
    free(src), free(old), free(a), free(b);
    cases_run++;
  }
  free(cb);
}
END_TEST

/* ---------------------------------------------------------------- ordered */
/* in-order fold of src[at(s, o, r)], r ascending; and the same in reverse (differs: order shows) */
static uint64_t mat_fold(const uint64_t *x, int64_t from, int64_t n, int64_t step, bool rev) {
  uint64_t m = MAT16_IDENTITY;
  for (int64_t r = 0; r < n; r++)
    m = mat16(m, x[from + (rev ? n - 1 - r : r) * step]);
  return m;
}

/* a random matrix of odd determinant (m0, m3 odd, m1 even): products of any length stay
 * invertible mod 2^16, so they do not collapse to 0 (random ones do: factors of 2 pile up) and
 * the two orders keep telling apart */
static uint64_t rnd_mat(void) {
  return (rnd() | 1 | 1ull << 48) & ~(1ull << 16);
}

START_TEST(ordered) {
  if (!gpu) return;
  char *cb = strdup(combine(MAT16_IR, "mat16", "\"0x1000000000001\"", 0));
  for (int i = 0; i < NSHAPES; i++) {
    const shape *s = &shapes[i];
    int64_t n = (int64_t)s->rows * s->len;
    uint64_t *src = malloc((size_t)n * 8), *a = malloc((size_t)s->rows * 8);
    for (int64_t j = 0; j < n; j++)
      src[j] = rnd_mat();
    run_shared(shared_json(s, "custom", "u64", cb), NULL, src, 8, s, a);
    for (int o = 0; o < s->rows; o++) {
      int64_t from = at(s, o, 0), step = at(s, o, 1) - from;
      uint64_t want = mat_fold(src, from, s->len, step, false);
      ck_assert_msg(want != mat_fold(src, from, s->len, step, true), "the data show no order");
      ck_assert_msg(a[o] == want, "shape %d output %d: 0x%016llx, want 0x%016llx (in order)", i, o,
                    (unsigned long long)a[o], (unsigned long long)want);
    }
    free(src), free(a);
    cases_run++;
  }
  for (int all = 0; all < 2; all++)
    for (int k = 1; k <= 5; k++) {
      uint64_t in[SG_N], out[SG_N];
      for (int j = 0; j < SG_N; j++)
        in[j] = rnd_mat();
      run_sub(sub_json(all ? "reduce_all_custom" : "reduce_custom", "u64", k, cb), in, 8, out);
      int G = 1 << k;
      for (int l = 0; l < SG_N; l += all ? 1 : G) {
        uint64_t want = mat_fold(in, l / G * G, G, 1, false);
        ck_assert_msg(want != mat_fold(in, l / G * G, G, 1, true), "the data show no order");
        ck_assert_msg(out[l] == want, "subgroup all=%d k=%d lane %d: not the in-order product", all,
                      k, l);
      }
      cases_run++;
    }
  free(cb);
}
END_TEST

/* ---------------------------------------------------------------- halves */
/* small integers as f16 (bf = 0) or bf16 bits, and back */
static uint16_t half_of(int v, int bf) {
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  int a = v < 0 ? -v : v, e = 0;
  while ((a >> (e + 1)) > 0)
    e++;
  int mb = bf ? 7 : 10, bias = bf ? 127 : 15;
  uint16_t m = (uint16_t)((a << (mb - e)) & ((1 << mb) - 1));
  return (uint16_t)(sign | (uint16_t)((e + bias) << mb) | m);
}
static double half_val(uint16_t h, int bf) {
  int mb = bf ? 7 : 10, bias = bf ? 127 : 15, eb = bf ? 8 : 5;
  int e = (h >> mb) & ((1 << eb) - 1), m = h & ((1 << mb) - 1);
  double v = e ? ldexp(1.0 + m / (double)(1 << mb), e - bias) : ldexp(m, 1 - bias - mb);
  return h & 0x8000 ? -v : v;
}

START_TEST(halves) {
  if (!gpu) return;
  for (int bf = 0; bf < 2; bf++) {
    const char *dt = bf ? "bf16" : "f16";
    char *cb =
        strdup(bf ? combine(BSUM_IR, "bsum", "-0.0", 1) : combine(HSUM_IR, "hsum", "-0.0", 1));
    int span = bf ? 1 : 2; /* every partial sum an integer the type holds (bf16: |s| <= 256) */
    for (int i = 0; i < NSHAPES; i++) {
      const shape *s = &shapes[i];
      if (bf && s->len > 256) continue;
      int64_t n = (int64_t)s->rows * s->len;
      uint16_t *src = malloc((size_t)n * 2), *a = malloc((size_t)s->rows * 2),
               *b = malloc((size_t)s->rows * 2);
      int *v = malloc(sizeof(int) * (size_t)n);
      for (int64_t j = 0; j < n; j++)
        v[j] = (int)(rnd() % (2 * span + 1)) - span, src[j] = half_of(v[j], bf);
      run_shared(shared_json(s, "custom", dt, cb), "shared", src, 2, s, a);
      run_shared(shared_json(s, "sum", dt, NULL), "shared", src, 2, s, b);
      for (int o = 0; o < s->rows; o++) {
        int want = 0;
        for (int r = 0; r < s->len; r++)
          want += v[at(s, o, r)];
        ck_assert_msg(half_val(a[o], bf) == want, "%s shape %d output %d: %g, want %d", dt, i, o,
                      half_val(a[o], bf), want);
        ck_assert_msg(a[o] == b[o] || want == 0, "%s shape %d output %d: op sum's bits differ", dt,
                      i, o); /* 0: -0.0 (the identity) or +0.0, each exact */
      }
      free(src), free(a), free(b), free(v);
      cases_run++;
    }
    for (int w = 0; w < 2; w++) {
      uint16_t *src = malloc((size_t)local_src_n[w] * 2), *a = malloc(LOCAL_OUT * 2),
               *b = malloc(LOCAL_OUT * 2);
      for (int j = 0; j < local_src_n[w]; j++)
        src[j] = half_of((int)(rnd() % (2 * span + 1)) - span, bf);
      run_local(local_json(w, "custom", dt, cb), src, 2, w, a);
      run_local(local_json(w, "sum", dt, NULL), src, 2, w, b);
      for (int j = 0; j < LOCAL_OUT; j++)
        ck_assert_msg(half_val(a[j], bf) == half_val(b[j], bf) || a[j] == b[j],
                      "%s local %d slot %d differs", dt, w, j);
      free(src), free(a), free(b);
      cases_run++;
    }
    for (int all = 0; all < 2; all++)
      for (int k = 0; k <= 5; k++) {
        uint16_t in[SG_N], a[SG_N], b[SG_N];
        for (int j = 0; j < SG_N; j++)
          in[j] = half_of((int)(rnd() % 5) - 2, bf);
        run_sub(sub_json(all ? "reduce_all_custom" : "reduce_custom", dt, k, cb), in, 2, a);
        run_sub(sub_json(all ? "reduce_all_add" : "reduce_add", dt, k, NULL), in, 2, b);
        int G = 1 << k;
        for (int l = 0; l < SG_N; l += all ? 1 : G)
          ck_assert_msg(half_val(a[l], bf) == half_val(b[l], bf), "%s subgroup all=%d k=%d lane %d",
                        dt, all, k, l);
        cases_run++;
      }
    free(cb);
  }
}
END_TEST

/* ---------------------------------------------------------------- struct */
/* Struct states (combine.state): the destination has field result's dtype (dst_el bytes). */
static const char *struct_combine(int which) {
  return custom_struct_combine(which);
}

/* one kernel launch: in (n_in elements of in_el bytes), out (n_out of out_el, poisoned first);
 * local tiles take an init dst buffer of out's size too */
static void run_struct(const char *json, const char *variant, const void *in, int64_t n_in,
                       size_t in_el, void *out, int64_t n_out, size_t out_el, bool local) {
  size_t nb[3] = {(size_t)n_in * in_el, (size_t)n_out * out_el, (size_t)n_out * out_el};
  void *in_copy = malloc(nb[0]), *init = calloc(1, nb[1]);
  memcpy(in_copy, in, nb[0]);
  memset(out, 0xa5, nb[1]);
  void *host[3] = {in_copy, local ? init : out, out};
  launch(compile(json, variant), local ? 3 : 2, host, nb);
  free(in_copy);
  free(init);
}

/* what output o's fold over elements x[idx[0 .. n)] (in index order) must give */
typedef struct want {
  double var;   /* Welford: the float64 two-pass sample variance */
  int64_t arg;  /* argmax: the first index of the largest */
  uint32_t mat; /* matrix: matrix_finish of the in-order product */
} want;

static want cpu_fold(int which, const void *x, const int64_t *idx, int64_t n) {
  want w = {0};
  if (which == WELFORD) {
    double mean = 0, q = 0;
    for (int64_t r = 0; r < n; r++)
      mean += ((const float *)x)[idx[r]];
    mean /= (double)n;
    for (int64_t r = 0; r < n; r++) {
      double d = ((const float *)x)[idx[r]] - mean;
      q += d * d;
    }
    w.var = q / (double)(n - 1);
  } else if (which == ARGMAX) {
    float best = -INFINITY;
    w.arg = INT64_MAX;
    for (int64_t r = 0; r < n; r++)
      if (((const float *)x)[idx[r]] > best) best = ((const float *)x)[idx[r]], w.arg = r;
  } else {
    uint32_t m[4] = {1, 0, 0, 1};
    for (int64_t r = 0; r < n; r++)
      matrix_fold(m, ((const uint32_t *)x)[idx[r]], r);
    w.mat = matrix_finish(m);
  }
  return w;
}

static void check_one(int which, const want *w, const void *out, int64_t i, const char *what) {
  if (which == WELFORD) {
    double got = ((const double *)out)[i];
    ck_assert_msg(fabs(got - w->var) <= 1e-9 * (1 + fabs(w->var)), "%s: %.17g, want %.17g", what,
                  got, w->var);
  } else if (which == ARGMAX) {
    ck_assert_msg(((const int64_t *)out)[i] == w->arg, "%s: index %lld, want %lld", what,
                  (long long)((const int64_t *)out)[i], (long long)w->arg);
  } else {
    ck_assert_msg(((const uint32_t *)out)[i] == w->mat, "%s: 0x%08x, want 0x%08x", what,
                  ((const uint32_t *)out)[i], w->mat);
  }
}

/* inputs: Welford f32 in [-4, 4); argmax f32 of 8 values (ties everywhere); matrix random u32 */
static void *struct_input(int which, int64_t n) {
  void *x = malloc((size_t)n * 4);
  for (int64_t j = 0; j < n; j++)
    if (which == WELFORD)
      fill_f32((float *)x + j, 1);
    else if (which == ARGMAX)
      ((float *)x)[j] = (float)(int)(rnd() % 8) - 3.5f;
    else
      ((uint32_t *)x)[j] = (uint32_t)rnd();
  return x;
}

static const char *const struct_dt[3] = {"f32", "f32", "u32"};
static const size_t struct_out_el[3] = {8, 8, 4};

static void struct_shared(int which) {
  const char *cb = struct_combine(which);
  char *c = strdup(cb);
  for (int i = 0; i < NSHAPES; i++) {
    const shape *s = &shapes[i];
    int64_t n = (int64_t)s->rows * s->len, idx[1000];
    void *src = struct_input(which, n), *dst = malloc((size_t)s->rows * 8);
    run_struct(shared_json(s, "custom", struct_dt[which], c), "shared", src, n, 4, dst, s->rows,
               struct_out_el[which], false);
    for (int o = 0; o < s->rows; o++) {
      for (int r = 0; r < s->len; r++)
        idx[r] = at(s, o, r);
      want w = cpu_fold(which, src, idx, s->len);
      check_one(which, &w, dst, o, rjt_fmt("struct %d shared shape %d output %d", which, i, o));
    }
    free(src), free(dst);
    cases_run++;
  }
  free(c);
}

/* local (commutative states only): w 0 reduces the 32 lanes of [32, 4] (each thread's 4 dst
 * slots: the 4 outputs), w 1 each lane's row of [32, 64] (its one slot) */
static void struct_local(int which) {
  char *c = strdup(struct_combine(which));
  for (int w = 0; w < 2; w++) {
    void *src = struct_input(which, local_src_n[w]), *out = malloc(LOCAL_OUT * 8);
    run_struct(local_json(w, "custom", struct_dt[which], c), "local", src, local_src_n[w], 4, out,
               32 * (w ? 1 : 4), struct_out_el[which], true);
    int64_t idx[64];
    for (int t = 0; t < 32; t++)
      for (int j = 0; j < (w ? 1 : 4); j++) {
        int len = w ? 64 : 32;
        for (int r = 0; r < len; r++)
          idx[r] = w ? (int64_t)t * 64 + r : (int64_t)r * 4 + j;
        want wt = cpu_fold(which, src, idx, len);
        check_one(which, &wt, out, (int64_t)t * (w ? 1 : 4) + j,
                  rjt_fmt("struct %d local %d thread %d slot %d", which, w, t, j));
      }
    free(src), free(out);
    cases_run++;
  }
  free(c);
}

/* subgroup: lane l of a group of 2^k (reduce_custom: its lane 0; reduce_all_custom: every lane) */
static void struct_sub(int which) {
  char *c = strdup(struct_combine(which));
  for (int all = 0; all < 2; all++)
    for (int k = which == WELFORD ? 1 : 0; k <= 5; k++) {
      void *in = struct_input(which, SG_N), *out = malloc(SG_N * 8);
      run_struct(sub_json(all ? "reduce_all_custom" : "reduce_custom", struct_dt[which], k, c),
                 NULL, in, SG_N, 4, out, SG_N, struct_out_el[which], false);
      int G = 1 << k;
      int64_t idx[32];
      for (int l = 0; l < SG_N; l += all ? 1 : G) {
        for (int j = 0; j < G; j++)
          idx[j] = l / G * G + j;
        want w = cpu_fold(which, in, idx, G);
        check_one(which, &w, out, l,
                  rjt_fmt("struct %d subgroup all=%d k=%d lane %d", which, all, k, l));
      }
      free(in), free(out);
      cases_run++;
    }
  free(c);
}

START_TEST(struct_states) {
  if (!gpu) return;
  for (int which = WELFORD; which <= MATRIX; which++) {
    struct_shared(which);
    if (which != MATRIX) struct_local(which); /* not commutative: local declines it */
    struct_sub(which);
  }
}
END_TEST

/* ---------------------------------------------------------------- no_oracle */
START_TEST(no_oracle) {
  if (!gpu) return;
  rj_check_opts o;
  rj_check_opts_init(&o);
  rj_request r;
  rjt_parse(ctx, shared_json(&shapes[0], "custom", "f32", combine(FSUM_IR, "fsum", "0", 1)), &r);
  rj_check_result res = {.struct_size = sizeof res};
  rj_status s = rj_check(ctx, &r, &o, &res);
  ck_assert_msg(s == RJ_EUNSUPPORTED && strstr(rj_errmsg(ctx), "op: \"custom\" has no CPU oracle"),
                "%s: %s", rj_status_name(s), rj_errmsg(ctx));
  rjt_parse(ctx, sub_json("reduce_all_custom", "f32", 5, combine(FSUM_IR, "fsum", "0", 1)), &r);
  s = rj_check(ctx, &r, &o, &res);
  ck_assert_msg(s == RJ_EUNSUPPORTED &&
                    strstr(rj_errmsg(ctx), "primitive: reduce_all_custom (op \"custom\") has no "
                                           "CPU oracle"),
                "%s: %s", rj_status_name(s), rj_errmsg(ctx));
  cases_run++;
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_custom_kinds");
  static const char *const names[] = {"sum_is_sum", "integers",  "accum", "ordered",
                                      "halves",     "no_oracle", "struct"};
  const TTest *tests[] = {sum_is_sum, integers, accum, ordered, halves, no_oracle, struct_states};
  for (int i = 0; i < 7; i++) {
    TCase *t = tcase_create(names[i]);
    tcase_set_timeout(t, 600);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, tests[i]);
    suite_add_tcase(s, t);
  }
  int failed = rjt_run_in_process(s);
  fprintf(stderr, "gpu_custom_kinds: %d cases run on the GPU\n", cases_run);
  return failed ? 1 : 0;
}
