/* GPU suite for list requests (rj_reduce_multi, docs/TENSOR.md "Many tensors"): lists of 1, 150,
 * 2000 and 10000 tensors of mixed lengths (empty, 1, 31, 33, up to 4 Mi; strides 1 to 3) x ops x
 * f16 / bf16 / f32 / f64 (f16 sumsq aside: its sums pass f16's range), per-tensor outputs and the
 * total against `run`'s float64 reference (which also launches twice and compares the bits);
 * integers, bool and float8 (150 tensors); NaNs both ways; and bitwise independence: each
 * tensor's output equals the same tensor reduced alone (a list of one) and in a list of the
 * tensors reversed, and the total is the same launch after launch; exact coverage (i32 and u8
 * sums, f16 and f64 products of 1 with marks 2 and 0.5 around every multiple of 1024 and both
 * ends, lengths about the chunks' edges, 16-byte aligned and not: an element read twice or
 * missed changes an output); products of 4 Mi f16 factors near 1 within f16's rounding and
 * f32's random roundoff; "invariant": true (CK_RUN_CASE=invariant): the same values at 4 element
 * offsets and strides 1 and 2, in the list and alone, give the same bits, near the default
 * kernel's, and pass `run`'s reference.  Skips without a GPU. */
#include "rjtest.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static rj_ctx *ctx;
static int gpu, cases_run;

static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

static const char *const dtypes[] = {"f16", "bf16", "f32", "f64"};
static const char *const ops[] = {"sum", "max", "min", "sumsq", "norm", "amax", "mean", "prod"};
#define NOPS 8

static const char *list_req(const char *op, const char *dt, int count, const char *extra) {
  int total = strcmp(op, "mean") != 0;
  return rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"list\":{\"count\":%d,"
                 "\"total\":%s}%s}",
                 op, dt, count, total ? "true" : "false", extra);
}

/* every op x dtype at counts 1, 150 (two seeds) and 2000 (one) */
START_TEST(oracle) {
  if (!gpu) return;
  static const int counts[] = {1, 150, 2000};
  for (int d = 0; d < 4; d++)
    for (int o = 0; o < NOPS; o++) {
      if (d == 0 && !strcmp(ops[o], "sumsq")) continue; /* sums of squares past f16's range */
      char json[512];
      snprintf(json, sizeof json, "%s", list_req(ops[o], dtypes[d], counts[_i], ""));
      for (int s = 0; s < (_i == 2 ? 1 : 2); s++) /* 2000 tensors: one seed (time) */
        rjt_run_ok(ctx, json, (uint64_t)(s * 7919 + 5 + _i), 0);
      cases_run++;
    }
}
END_TEST

/* 10^4 tensors: one op per dtype */
START_TEST(ten_thousand) {
  if (!gpu) return;
  static const char *const op4[] = {"norm", "sum", "max", "amax"};
  for (int d = 0; d < 4; d++) {
    char json[512];
    snprintf(json, sizeof json, "%s", list_req(op4[d], dtypes[d], 10000, ""));
    rjt_run_ok(ctx, json, 17, 0);
    cases_run++;
  }
}
END_TEST

/* integers (exact), bool and float8 */
START_TEST(other_dtypes) {
  if (!gpu) return;
  static const char *const req[][2] = {
      {"sum", "i32"}, {"count_nonzero", "i32"}, {"xor", "u64"}, {"max", "bool"}, {"sum", "e4m3"},
      {"min", "i8"},  {"prod", "i64"},          {"sum", "u16"}};
  for (int i = 0; i < 8; i++) {
    char json[512];
    snprintf(json, sizeof json, "%s", list_req(req[i][0], req[i][1], 150, ""));
    rjt_run_ok(ctx, json, 29, 0);
    cases_run++;
  }
}
END_TEST

/* NaNs in the list, propagated and ignored */
START_TEST(nans) {
  if (!gpu) return;
  static const char *const op3[] = {"sum", "max", "amax", "norm"};
  for (int o = 0; o < 4; o++)
    for (int ig = 0; ig < 2; ig++) {
      char json[512];
      snprintf(json, sizeof json, "%s",
               list_req(op3[o], "f32", 150, ig ? ",\"nan\":\"ignore\"" : ""));
      rjt_run_ok(ctx, json, 23, 9);
      cases_run++;
    }
}
END_TEST

/* ---- independence: a tensor's bits alone, in a list, and in the list reversed */

typedef struct dlist {
  int n;
  rj_multi_entry *e;
  rj_devptr data, table, dst, total;
} dlist;

/* n f32 tensors of mixed lengths, random values, in one device buffer */
static void make_list(dlist *l, int n) {
  l->n = n;
  l->e = calloc((size_t)n, sizeof *l->e);
  int64_t at = 0, *len = calloc((size_t)n, sizeof(int64_t));
  uint64_t r = 12345;
  for (int i = 0; i < n; i++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    len[i] = i % 5 == 0 ? (int64_t)(r >> 40) % 1000000 : (int64_t)(r >> 40) % 20000;
    if (i % 11 == 3) len[i] = 0;
    at += len[i];
  }
  float *h = malloc((size_t)(at ? at : 1) * sizeof(float));
  for (int64_t k = 0; k < at; k++) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    h[k] = (float)((int64_t)(r >> 41) % 2000001 - 1000000) / 65536.0f;
  }
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)(at ? at : 1) * 4, &l->data), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, l->data, h, (size_t)at * 4), RJ_OK);
  for (int i = 0, off = 0; i < n; off += (int)len[i], i++)
    l->e[i] = (rj_multi_entry){l->data + (uint64_t)off * 4, len[i], 1, 0};
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)n * sizeof *l->e, &l->table), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)n * 8, &l->dst), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 8, &l->total), RJ_OK);
  free(h);
  free(len);
}

/* the list's entries (in `order`, or as made) reduced; the outputs into out[0 .. n), total */
static void reduce_list(dlist *l, const char *op, const int *order, int n, float *out,
                        float *total) {
  rj_multi_entry *e = calloc((size_t)n, sizeof *e);
  for (int i = 0; i < n; i++)
    e[i] = l->e[order ? order[i] : i];
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, l->table, e, (size_t)n * sizeof *e), RJ_OK);
  memset(out, 0xff, (size_t)n * 4); /* NaN poison: every output must be written */
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, l->dst, out, (size_t)n * 4), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, l->total, out, 4), RJ_OK);
  rj_request r;
  rjt_parse(ctx, list_req(op, "f32", n, ""), &r);
  rj_status s = rj_reduce_multi(ctx, &r, NULL, l->table, n, l->dst, l->total, NULL);
  ck_assert_msg(s == RJ_OK, "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_device_sync(ctx, 0), RJ_OK);
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, out, l->dst, (size_t)n * 4), RJ_OK);
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, total, l->total, 4), RJ_OK);
  free(e);
}

START_TEST(independent) {
  if (!gpu) return;
  static const char *const op3[] = {"norm", "sum", "max"};
  dlist l = {0};
  make_list(&l, 300);
  float *all = calloc(300, 4), *rev = calloc(300, 4), one, t0, t1, t2;
  int order[300];
  for (int i = 0; i < 300; i++)
    order[i] = 299 - i;
  for (int o = 0; o < 3; o++) {
    reduce_list(&l, op3[o], NULL, 300, all, &t0);
    reduce_list(&l, op3[o], NULL, 300, all, &t1);
    ck_assert_msg(memcmp(&t0, &t1, 4) == 0, "%s: total %a then %a", op3[o], t0, t1);
    reduce_list(&l, op3[o], order, 300, rev, &t2);
    for (int i = 0; i < 300; i++) {
      ck_assert_msg(memcmp(&all[i], &rev[299 - i], 4) == 0, "%s: tensor %d %a, reversed %a", op3[o],
                    i, all[i], rev[299 - i]);
      if (i % 7) continue;
      int idx[1] = {i};
      reduce_list(&l, op3[o], idx, 1, &one, &t2);
      ck_assert_msg(memcmp(&all[i], &one, 4) == 0, "%s: tensor %d (%lld elements) %a, alone %a",
                    op3[o], i, (long long)l.e[i].len, all[i], one);
      ck_assert_msg(memcmp(&one, &t2, 4) == 0, "%s: a list of one: total %a, output %a", op3[o], t2,
                    one);
    }
    int empties[3] = {3, 14, 25}; /* a float sum or norm of nothing is +0.0, as NumPy's */
    reduce_list(&l, op3[o], empties, 3, rev, &t2);
    for (int k = 0; k < 3 && o < 2; k++)
      ck_assert_msg(rev[k] == 0 && !signbit(rev[k]) && all[empties[k]] == rev[k] &&
                        !signbit(all[empties[k]]),
                    "%s of an empty tensor: %a (in the list %a)", op3[o], rev[k], all[empties[k]]);
    ck_assert_msg(o == 2 || (t2 == 0 && !signbit(t2)), "%s: the total of empty tensors: %a", op3[o],
                  t2);
    cases_run++;
  }
  rj_device_free(ctx, 0, l.data);
  rj_device_free(ctx, 0, l.table);
  rj_device_free(ctx, 0, l.dst);
  rj_device_free(ctx, 0, l.total);
  free(l.e);
  free(all);
  free(rev);
}
END_TEST

/* ---- exact coverage: every element 1 but marks 2 (sum) or 2 and 0.5 in turn (prod) within 3 of
 * every multiple of 1024 (the chunks' and the vector rounds' edges) and the first and last 20 */

typedef struct btype {
  const char *op, *dt;
  int bytes, rbytes; /* element, result */
} btype;

static const btype btypes[] = {
    {"sum", "i32", 4, 4}, {"sum", "u8", 1, 8}, {"prod", "f16", 2, 2}, {"prod", "f64", 8, 8}};
static const int64_t blens[] = {1,      7,       8,       9,       17,     1023,
                                1025,   16383,   16384,   16385,   32759,  49153,
                                100003, 1048581, 4194304, 4194305, 5000001};
#define NBLEN (int)(sizeof blens / sizeof blens[0])

/* element i of a tensor of len: 0 plain, 1 marked */
static int marked(int64_t i, int64_t len) {
  int64_t d = i % 1024;
  return i < 20 || len - i <= 20 || d <= 3 || d >= 1021;
}

/* element bits of b: plain 1, a mark 2 (sum), 2 or 0.5 (prod, `half`) */
static void put(const btype *b, char *h, int64_t at, int mark, int half) {
  static const uint16_t f16[3] = {0x3C00, 0x4000, 0x3800};
  const double f64[3] = {1.0, 2.0, 0.5};
  int k = mark ? 1 + half : 0;
  if (b->bytes == 4) ((int32_t *)h)[at] = 1 + mark;
  if (b->bytes == 1) ((uint8_t *)h)[at] = (uint8_t)(1 + mark);
  if (b->bytes == 2) ((uint16_t *)h)[at] = f16[k];
  if (b->bytes == 8) memcpy(h + at * 8, &f64[k], 8);
}

/* a tensor of len elements at h[at ..]: marks 2 and 0.5 in turn over the whole list (*marks so
 * far), so that every product is 0.5, 1 or 2; its expected output */
static double fill_tensor(const btype *b, char *h, int64_t at, int64_t len, int64_t *marks) {
  int64_t first = *marks;
  for (int64_t i = 0; i < len; i++) {
    int m = marked(i, len);
    put(b, h, at + i, m, (int)(*marks % 2));
    *marks += m;
  }
  int64_t k = *marks - first; /* 2s less 0.5s: 0, or +-1 when k is odd */
  if (strcmp(b->op, "sum") == 0) return (double)(len + k);
  return k % 2 == 0 ? 1.0 : first % 2 ? 0.5 : 2.0;
}

static double result_at(const btype *b, const char *r, int64_t i) {
  if (b->rbytes == 4) return ((const int32_t *)r)[i];
  if (b->rbytes == 2) { /* f16: 0.5, 1 or 2 */
    uint16_t u = ((const uint16_t *)r)[i];
    return u == 0x3800 ? 0.5 : u == 0x3C00 ? 1.0 : u == 0x4000 ? 2.0 : -1.0;
  }
  if (!strcmp(b->dt, "u8")) return (double)((const uint64_t *)r)[i];
  double v;
  memcpy(&v, r + i * 8, 8);
  return v;
}

/* the list on the device, its launch, and every output and the total against want */
static void run_boundaries(const btype *b, char *h, int64_t elems, const int64_t *off,
                           const double *want, int n, double total) {
  rj_devptr data, table, dst, tot;
  rj_multi_entry e[2 * NBLEN];
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)elems * (size_t)b->bytes, &data), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, data, h, (size_t)elems * (size_t)b->bytes), RJ_OK);
  for (int k = 0; k < n; k++)
    e[k] = (rj_multi_entry){data + (uint64_t)(off[k] * b->bytes), blens[k / 2], 1, 0};
  ck_assert_int_eq(rj_device_alloc(ctx, 0, sizeof e, &table), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, table, e, (size_t)n * sizeof e[0]), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)n * 8, &dst), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 8, &tot), RJ_OK);
  rj_request r;
  rjt_parse(ctx, list_req(b->op, b->dt, n, ""), &r);
  ck_assert_msg(rj_reduce_multi(ctx, &r, NULL, table, n, dst, tot, NULL) == RJ_OK, "%s",
                rj_errmsg(ctx));
  ck_assert_int_eq(rj_device_sync(ctx, 0), RJ_OK);
  char got[2 * NBLEN * 8], gt[8];
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, got, dst, (size_t)n * (size_t)b->rbytes), RJ_OK);
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, gt, tot, (size_t)b->rbytes), RJ_OK);
  for (int k = 0; k < n; k++)
    ck_assert_msg(result_at(b, got, k) == want[k],
                  "%s %s: tensor %d (%lld elements at offset %lld): %.17g, want %.17g", b->op,
                  b->dt, k, (long long)blens[k / 2], (long long)(off[k] % 16), result_at(b, got, k),
                  want[k]);
  ck_assert_msg(result_at(b, gt, 0) == total, "%s %s: total %.17g, want %.17g", b->op, b->dt,
                result_at(b, gt, 0), total);
  rj_device_free(ctx, 0, data);
  rj_device_free(ctx, 0, table);
  rj_device_free(ctx, 0, dst);
  rj_device_free(ctx, 0, tot);
}

START_TEST(boundaries) {
  if (!gpu) return;
  const btype *b = &btypes[_i];
  int n = 2 * NBLEN, sum = strcmp(b->op, "sum") == 0;
  int64_t off[2 * NBLEN], at = 0, marks = 0;
  /* even tensors 16-byte aligned, odd ones 1, 3, 5, 7 elements past */
  for (int k = 0; k < n; k++) {
    off[k] = (at + 15) / 16 * 16 + (k % 2 ? 1 + 2 * (k / 2 % 4) : 0);
    at = off[k] + blens[k / 2];
  }
  char *h = malloc((size_t)at * (size_t)b->bytes);
  double want[2 * NBLEN], total = sum ? 0 : 1;
  for (int k = 0; k < n; k++) {
    want[k] = fill_tensor(b, h, off[k], blens[k / 2], &marks);
    total = sum ? total + want[k] : total * want[k];
  }
  run_boundaries(b, h, at, off, want, n, total);
  free(h);
  cases_run++;
}
END_TEST

/* ---- products near 1: f16 factors exp(U(-2^-8, 2^-8)) (`run`'s draw for long products) */

static double f16_near_one(uint16_t b) { /* 0.5 .. 2 */
  return b >= 0x3C00 ? 1.0 + (b - 0x3C00) / 1024.0 : 1.0 - (0x3C00 - b) / 2048.0;
}

/* n such factors (their f16 bits) from the generator r; their exact product */
static double draw_near_one(uint16_t *h, int64_t n, uint64_t *r) {
  double p = 1;
  for (int64_t i = 0; i < n; i++) {
    *r = *r * 6364136223846793005ull + 1442695040888963407ull;
    double v = exp(0x1p-8 * ((double)(*r >> 11) * 0x1p-53 * 2.0 - 1.0));
    h[i] = (uint16_t)(v >= 1 ? 0x3C00 + lround((v - 1) * 1024) : 0x3C00 - lround((1 - v) * 2048));
    p *= f16_near_one(h[i]);
  }
  return p;
}

static double f16_value(uint16_t b) { /* a normal f16 */
  int e = (b >> 10) & 31;
  return (b & 0x8000 ? -1 : 1) * ldexp(1.0 + (b & 1023) / 1024.0, e - 15);
}

/* three tensors of 3.6 to 4 Mi factors, element-wise and in vectors: each output within f16's
 * rounding (2^-11) and 16 sqrt(n) f32 roundoff units of the exact product; U accumulators of 8
 * factors a thread ended 0.4 % high (a bias of one sign) */
START_TEST(prod_near_one) {
  if (!gpu) return;
  static const int64_t len[3] = {4194303, 3650422, 4000000}, off[3] = {3, 4194320, 7844757};
  int64_t elems = off[2] + len[2];
  uint16_t *h = calloc((size_t)elems, 2);
  uint64_t r = 2026;
  double want[4] = {0, 0, 0, 1};
  for (int k = 0; k < 3; k++) {
    want[k] = draw_near_one(h + off[k], len[k], &r);
    want[3] *= want[k];
  }
  dlist l = {.n = 3};
  rj_multi_entry e[3];
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)elems * 2, &l.data), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, l.data, h, (size_t)elems * 2), RJ_OK);
  for (int k = 0; k < 3; k++)
    e[k] = (rj_multi_entry){l.data + (uint64_t)off[k] * 2, len[k], 1, 0};
  ck_assert_int_eq(rj_device_alloc(ctx, 0, sizeof e, &l.table), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, l.table, e, sizeof e), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 8, &l.dst), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 8, &l.total), RJ_OK);
  rj_request q;
  rjt_parse(ctx, list_req("prod", "f16", 3, ""), &q);
  ck_assert_msg(rj_reduce_multi(ctx, &q, NULL, l.table, 3, l.dst, l.total, NULL) == RJ_OK, "%s",
                rj_errmsg(ctx));
  ck_assert_int_eq(rj_device_sync(ctx, 0), RJ_OK);
  uint16_t got[4];
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, got, l.dst, 6), RJ_OK);
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, got + 3, l.total, 2), RJ_OK);
  for (int k = 0; k < 4; k++) {
    int64_t n = k < 3 ? len[k] : len[0] + len[1] + len[2];
    double tol = 0x1p-11 + 16.0 * sqrt((double)n) * 0x1p-24, rel = f16_value(got[k]) / want[k] - 1;
    ck_assert_msg(fabs(rel) <= tol,
                  "%s %d (%lld factors): %.9g (bits %#x), exact %.17g: relative %.3g > %.3g",
                  k < 3 ? "tensor" : "total", k, (long long)n, f16_value(got[k]), got[k], want[k],
                  rel, tol);
  }
  rj_device_free(ctx, 0, l.data);
  rj_device_free(ctx, 0, l.table);
  rj_device_free(ctx, 0, l.dst);
  rj_device_free(ctx, 0, l.total);
  free(h);
  cases_run++;
}
END_TEST

/* ---- "invariant": true: the same values at 4 element offsets and strides 1 and 2 (so the default
 * kernel's vector and element loads both occur), in the list and alone: the same bits */

static const int64_t ilens[] = {0, 1, 7, 33, 1000, 4097, 16384, 16385, 70000, 300000, 2, 5000};
#define NIL 12

/* the list of ilens as op over dt (esz bytes; f32 or bf16), element j of tensor i at offset
 * off + j * st of its slot; outputs (esz each) and the total into out / total */
static void placed_list(const char *json, int esz, int off, int st, const int *pick, int n,
                        unsigned char *out, unsigned char *total) {
  int64_t slot = 2 * 300000 + 8, elems = slot * NIL;
  unsigned char *h = calloc((size_t)elems, (size_t)esz);
  rj_multi_entry e[NIL];
  rj_devptr data, table, dst, tot;
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)elems * esz, &data), RJ_OK);
  for (int k = 0; k < n; k++) {
    int i = pick ? pick[k] : k;
    for (int64_t j = 0; j < ilens[i]; j++) {
      uint64_t v = (uint64_t)(i * 1000003 + j) * 2654435761u % 1000003;
      /* prod: factors near 1, spread wider for bf16 (whose step near 1 is 2^-8: narrower ones
       * would round to two values and the long products fall to 0) */
      float spread = esz == 2 ? 3e-2f : 1e-3f;
      float f = strstr(json, "\"prod\"") ? 1.0f + ((float)v / 1000003.0f - 0.5f) * spread
                                         : (float)v / 1000003.0f - 0.25f;
      rjt_put_float(esz == 2 ? RJ_BF16 : RJ_F32, f, h + (size_t)(slot * i + off + j * st) * esz);
    }
    e[k] = (rj_multi_entry){data + (uint64_t)(slot * i + off) * esz, ilens[i], st, 0};
  }
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, data, h, (size_t)elems * esz), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, sizeof e, &table), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, NIL * 8, &dst), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 8, &tot), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, table, e, (size_t)n * sizeof e[0]), RJ_OK);
  rj_request r;
  rjt_parse(ctx, json, &r);
  bool has_total = r.u.tensor.list_total;
  rj_status s = rj_reduce_multi(ctx, &r, NULL, table, n, dst, has_total ? tot : 0, NULL);
  ck_assert_msg(s == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
  ck_assert_int_eq(rj_device_sync(ctx, 0), RJ_OK);
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, out, dst, (size_t)n * esz), RJ_OK);
  memset(total, 0, 8);
  if (has_total) ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, total, tot, (size_t)esz), RJ_OK);
  rj_device_free(ctx, 0, data);
  rj_device_free(ctx, 0, table);
  rj_device_free(ctx, 0, dst);
  rj_device_free(ctx, 0, tot);
  free(h);
}

START_TEST(invariant_placed) {
  if (!gpu) return;
  static const char *const iops[] = {"sum", "prod", "mean", "sumsq", "norm"};
  for (int d = 0; d < 2; d++)
    for (int o = 0; o < 5; o++) {
      const char *dt = d ? "bf16" : "f32";
      int esz = d ? 2 : 4;
      char inv[256], def[256];
      snprintf(inv, sizeof inv, "%s", list_req(iops[o], dt, NIL, ",\"invariant\":true"));
      snprintf(def, sizeof def, "%s", list_req(iops[o], dt, NIL, ""));
      unsigned char want[NIL * 8], wt[8], got[NIL * 8], gt[8];
      placed_list(inv, esz, 0, 1, NULL, NIL, want, wt);
      for (int off = 0; off < 4; off++)
        for (int st = 1; st <= 2; st++) {
          if (!off && st == 1) continue;
          placed_list(inv, esz, off, st, NULL, NIL, got, gt);
          ck_assert_msg(!memcmp(got, want, (size_t)NIL * esz) && !memcmp(gt, wt, 8),
                        "%s: other bits at offset %d, stride %d", inv, off, st);
        }
      for (int i = 0; i < NIL; i++) { /* alone, at an odd offset */
        char one[256];
        snprintf(one, sizeof one, "%s", list_req(iops[o], dt, 1, ",\"invariant\":true"));
        placed_list(one, esz, 3, 1, &i, 1, got, gt);
        ck_assert_msg(!memcmp(got, want + (size_t)i * esz, (size_t)esz),
                      "%s: tensor %d (%lld elements) alone: other bits", inv, i,
                      (long long)ilens[i]);
      }
      placed_list(def, esz, 0, 1, NULL, NIL, got, gt); /* near the default kernel's */
      double tol = d ? 2e-2 : !strcmp(iops[o], "prod") ? 2e-3 : 1e-4;
      for (int i = 0; i <= NIL; i++) {
        double x = rjt_get_float(d ? RJ_BF16 : RJ_F32, i < NIL ? want + (size_t)i * esz : wt);
        double y = rjt_get_float(d ? RJ_BF16 : RJ_F32, i < NIL ? got + (size_t)i * esz : gt);
        ck_assert_msg(x == y || fabs(x - y) <= tol * fmax(1.0, fabs(y)) || (isnan(x) && isnan(y)),
                      "%s: output %d invariant %.9g, default %.9g", inv, i, x, y);
      }
      rjt_run_ok(ctx, list_req(iops[o], dt, 150, ",\"invariant\":true"), 11, 0); /* the oracle */
      cases_run++;
    }
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_multi");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, oracle, 0, 3);
  tcase_add_test(tc, ten_thousand);
  tcase_add_test(tc, other_dtypes);
  tcase_add_test(tc, nans);
  tcase_add_test(tc, independent);
  tcase_add_loop_test(tc, boundaries, 0, 4);
  tcase_add_test(tc, prod_near_one);
  suite_add_tcase(s, tc);
  TCase *ti = tcase_create("invariant"); /* CK_RUN_CASE=invariant */
  tcase_set_timeout(ti, 300);
  tcase_add_checked_fixture(ti, setup, teardown);
  tcase_add_test(ti, invariant_placed);
  suite_add_tcase(s, ti);
  int failed = rjt_run_in_process(s);
  printf("%d list request cases run\n", cases_run);
  return failed ? 1 : 0;
}
