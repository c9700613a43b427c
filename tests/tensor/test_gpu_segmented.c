/* GPU suite for segmented reductions (docs/TENSOR.md "Segmented reductions").
 *   matrix:  every op x dtype the tensor kind takes, 1-D (and a 2-D [N, C] subset), through `run`
 *            (random ragged offsets with lengths 0, 1, 31, 33, up to 5000 and one large segment
 *            taking the rest; the float64 / exact oracle per segment; two launches bitwise
 *            equal; the status word 0), NaNs both ways for the floats;
 *   shapes:  S = 1 over 10^7 elements, S = 10^6, one huge segment among tiny ones, i32 offsets;
 *   alone:   each of a set of segments (lengths 0 .. 300000) reduced alone (S = 1, its two offsets
 *            over the same source) gives the bits it gets among the others;
 *   crowded: 8000 segments, half of them a CTA's, planned for the device and for 1 and 3 SMs
 *            (then more than a CTA lists: it scans its batches again): poisoned outputs, the
 *            same bits each time, each sum near float64's;
 *   invalid: decreasing, negative and past-the-end offsets: no fault, the RJ_SEG_* bits, and
 *            rj_segments_status's RJ_EINVAL naming segments; a valid launch after them is right;
 *   empty:   every segment empty: sum +0.0 (invariant too), max -inf, argmax -1, mean NaN; of
 *            the small dtypes, bit for bit, and all ones (u8 255, bool 1), max / min the
 *            dtype's least / greatest;
 *   invariant: "invariant": true, the same values placed 0 .. 7 elements further: the same bits
 *            at every placement and alone (invariant_placed below).
 * Skips, saying so, without a GPU.  CK_RUN_CASE=matrix / more / invariant run its parts. */
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

static const char *const ops[] = {"sum",    "max",    "min",  "prod", "and", "or",       "xor",
                                  "argmax", "argmin", "mean", "var",  "std", "logsumexp"};
#define NOP 13
static const char *const dts[] = {"f32", "f16", "bf16", "f64", "i32",  "u32",  "i64", "u64",
                                  "i8",  "u8",  "i16",  "u16", "bool", "e4m3", "e5m2"};
#define NDT 15

static bool valid(const char *json) {
  rj_request r;
  return rj_request_parse(ctx, json, &r) == RJ_OK;
}

/* op _i over every dtype: 1-D of 200003 elements in 2000 segments (NaNs under ignore and
 * propagate; ignore too for f32, bf16 and e4m3), and 2-D [20011, 5] in 300 for f32 and u8 */
START_TEST(matrix) {
  if (!gpu) return;
  for (int d = 0; d < NDT; d++)
    for (int two = 0; two < 2; two++) {
      if (two && d != 0 && d != 9) continue;
      for (int nan = 0; nan < 2; nan++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":%s,\"axes\":[0],"
                 "\"nan\":\"%s\",\"segments\":{\"count\":%d,\"dtype\":\"%s\"}}",
                 ops[_i], dts[d], two ? "[20011,5]" : "[200003]", nan ? "ignore" : "propagate",
                 two ? 300 : 2000, (d + nan) % 2 ? "i32" : "i64");
        if (!valid(json)) continue;
        bool fl = d < 4 || d >= 13;
        rjt_run_ok(ctx, json, (uint64_t)(d * 31 + nan * 7 + 3), fl ? 5 : 0);
        cases_run++;
        if (!fl || (d != 0 && d != 2 && d != 13)) break; /* ignore: f32, bf16, e4m3 */
      }
    }
}
END_TEST

/* S = 1 over 10^7; S = 10^6 over 3 * 10^6 (mostly tiny); 2^24 elements in 1000 segments (one of
 * about 15 M among the small); i32 offsets; 2-D of 3 columns (a CTA per long segment) and of 200
 * (a thread per column) */
START_TEST(shapes) {
  if (!gpu) return;
  static const char *const v[] = {
      "\"shape\":[10000000],\"segments\":{\"count\":1}",
      "\"shape\":[3000000],\"segments\":{\"count\":1000000}",
      "\"shape\":[16777216],\"segments\":{\"count\":1000,\"dtype\":\"i32\"}",
      "\"shape\":[300001,3],\"axes\":[0],\"segments\":{\"count\":7}",
      "\"shape\":[20000,200],\"axes\":[0],\"segments\":{\"count\":40}",
  };
  static const char *const o[] = {"sum", "max", "argmax", "var", "mean"};
  for (int i = 0; i < 5; i++)
    for (int k = 0; k < 5; k++) {
      const char *j = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s}", o[k],
                              k % 2 ? "bf16" : "f32", v[i]);
      char json[512];
      snprintf(json, sizeof json, "%s", j);
      rjt_run_ok(ctx, json, (uint64_t)(i * 5 + k + 11), 0);
      cases_run++;
    }
}
END_TEST

/* Device buffers of the alone / invalid / empty cases */
typedef struct dbufs {
  rj_devptr src, off, dst, status;
} dbufs;

static void dalloc(dbufs *b, size_t src, size_t off, size_t dst) {
  ck_assert_int_eq(rj_device_alloc(ctx, 0, src ? src : 16, &b->src), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, off, &b->off), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, dst, &b->dst), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 4, &b->status), RJ_OK);
  uint32_t z = 0;
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b->status, &z, 4), RJ_OK);
}

static void dfree(dbufs *b) {
  rj_device_free(ctx, 0, b->src);
  rj_device_free(ctx, 0, b->off);
  rj_device_free(ctx, 0, b->dst);
  rj_device_free(ctx, 0, b->status);
}

/* req over (src, off) into dst as if the GPU had sms SMs (0: its own); waits */
static void launch_sms(const char *json, const dbufs *b, rj_devptr off, int sms) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.sm_count = sms;
  rj_status s = rj_reduce_segments(ctx, &r, &o, b->src, off, b->dst, b->status, NULL);
  ck_assert_msg(s == RJ_OK, "%s (%d SMs): %s", json, sms, rj_errmsg(ctx));
  ck_assert_int_eq(rj_device_sync(ctx, 0), RJ_OK);
}

/* the same on the GPU's own SMs */
static void launch(const char *json, const dbufs *b, rj_devptr off) {
  launch_sms(json, b, off, 0);
}

static const int64_t alone_len[] = {0, 1, 31, 33, 7, 0, 4096, 4097, 5000, 70000, 300000, 0, 2, 9};
#define NALONE 14

/* every segment of alone_len reduced alone gives the bits it gets among the others */
START_TEST(alone) {
  if (!gpu) return;
  static const char *const o[] = {"sum", "argmax", "var", "logsumexp", "prod", "max"};
  int64_t off[NALONE + 1] = {3}, n = 3;
  for (int i = 0; i < NALONE; i++)
    off[i + 1] = (n += alone_len[i]);
  n += 5;
  float *h = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++)
    h[i] = (float)((i * 2654435761u) % 1000003) / 1000003.0f - 0.25f;
  dbufs b;
  dalloc(&b, (size_t)n * 4, sizeof off, 8 * NALONE);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.src, h, (size_t)n * 4), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.off, off, sizeof off), RJ_OK);
  for (int k = 0; k < 6; k++) {
    char all[256], one[256];
    snprintf(all, sizeof all,
             "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",\"shape\":[%lld],"
             "\"segments\":{\"count\":%d}}",
             o[k], (long long)n, NALONE);
    snprintf(one, sizeof one,
             "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",\"shape\":[%lld],"
             "\"segments\":{\"count\":1}}",
             o[k], (long long)n);
    uint64_t got[NALONE], single;
    launch(all, &b, b.off);
    size_t w = k == 1 ? 8 : 4;
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, got, b.dst, w * NALONE), RJ_OK);
    for (int i = 0; i < NALONE; i++) {
      single = 0;
      launch(one, &b, b.off + (rj_devptr)i * 8);
      ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, &single, b.dst, w), RJ_OK);
      ck_assert_msg(memcmp((char *)got + (size_t)i * w, &single, w) == 0,
                    "%s: segment %d (%lld elements) alone differs", o[k], i,
                    (long long)alone_len[i]);
      cases_run++;
    }
    ck_assert_int_eq(rj_segments_status(ctx, 0, b.status), RJ_OK);
  }
  dfree(&b);
  free(h);
}
END_TEST

/* Many segments a CTA folds (longer than a warp's 4096 f32 elements) among short ones, on the
 * device's SMs and as if it had 1 or 3: a CTA then takes 2 .. 8 batches of 256 segments, about
 * half of them a CTA's, more than it lists (SEG_LIST, 256) in every CTA on 1 SM and in some on 3,
 * so those scan their batches again.  Before each launch dst is poisoned (NaN); every launch
 * gives the bits of the device's plan, each sum within 1e-6 * sum |x| of the float64 one. */
START_TEST(crowded) {
  if (!gpu) return;
  static const int64_t lens[] = {4097, 5000, 0, 3, 9000, 4096, 40, 20000, 4100, 1};
  enum { S = 8000 };
  static int64_t off[S + 1];
  for (int i = 0; i < S; i++)
    off[i + 1] = off[i] + lens[(i * 7 + i / 10) % 10];
  int64_t n = off[S];
  float *h = malloc((size_t)n * 4);
  for (int64_t i = 0; i < n; i++)
    h[i] = (float)((i * 2654435761u) % 1000003) / 1000003.0f - 0.3f;
  static double ref[S], mag[S];
  for (int s = 0; s < S; s++)
    for (int64_t i = off[s]; i < off[s + 1]; i++) {
      ref[s] += h[i];
      mag[s] += fabs(h[i]);
    }
  dbufs b;
  dalloc(&b, (size_t)n * 4, sizeof off, 4 * S);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.src, h, (size_t)n * 4), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.off, off, sizeof off), RJ_OK);
  char json[160];
  snprintf(json, sizeof json,
           "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[%lld],"
           "\"segments\":{\"count\":%d}}",
           (long long)n, S);
  static float first[S], got[S], nan[S];
  memset(nan, 0xff, sizeof nan);
  static const int sms[] = {0, 1, 3};
  for (int k = 0; k < 3; k++) {
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.dst, nan, sizeof nan), RJ_OK);
    launch_sms(json, &b, b.off, sms[k]);
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, got, b.dst, sizeof got), RJ_OK);
    ck_assert_int_eq(rj_segments_status(ctx, 0, b.status), RJ_OK);
    for (int s = 0; s < S; s++)
      ck_assert_msg(fabs(got[s] - ref[s]) <= 1e-6 * mag[s] + 1e-30,
                    "%d SMs, segment %d: %.9g, expected %.9g", sms[k], s, (double)got[s], ref[s]);
    if (k)
      ck_assert_msg(memcmp(got, first, sizeof got) == 0, "%d SMs: other bits than the device's",
                    sms[k]);
    else
      memcpy(first, got, sizeof got);
    cases_run++;
  }
  dfree(&b);
  free(h);
}
END_TEST

/* bad offsets: no fault, the bits, the message; then a valid launch is right and the word 0 */
START_TEST(invalid) {
  if (!gpu) return;
  const char *json = "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[1000],"
                     "\"segments\":{\"count\":4}}";
  static const int64_t bad[3][5] = {
      {0, 500, 400, 900, 1000}, {-7, 10, 20, 30, 40}, {0, 10, 20, 30, 1 << 30}};
  static const uint32_t bits[3] = {RJ_SEG_DECREASING, RJ_SEG_NEGATIVE, RJ_SEG_PAST_END};
  float h[1000];
  for (int i = 0; i < 1000; i++)
    h[i] = 1.0f;
  dbufs b;
  dalloc(&b, sizeof h, 5 * 8, 4 * 4);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.src, h, sizeof h), RJ_OK);
  for (int k = 0; k < 3; k++) {
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.off, bad[k], sizeof bad[k]), RJ_OK);
    launch(json, &b, b.off);
    uint32_t w = 0;
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, &w, b.status, 4), RJ_OK);
    ck_assert_msg(w == bits[k], "offsets %d: status 0x%x, expected 0x%x", k, w, bits[k]);
    ck_assert_int_eq(rj_segments_status(ctx, 0, b.status), RJ_EINVAL);
    ck_assert_msg(strstr(rj_errmsg(ctx), "segments: invalid offsets"), "%s", rj_errmsg(ctx));
    ck_assert_int_eq(rj_segments_status(ctx, 0, b.status), RJ_OK); /* zeroed */
    float d[4];
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, d, b.dst, sizeof d), RJ_OK);
    for (int s = 0; s < 4; s++) { /* the clamped ranges, of ones */
      int64_t a = bad[k][s] < 0 ? 0 : bad[k][s] > 1000 ? 1000 : bad[k][s];
      int64_t e = bad[k][s + 1] < a ? a : bad[k][s + 1] > 1000 ? 1000 : bad[k][s + 1];
      ck_assert_msg(d[s] == (float)(e - a), "offsets %d segment %d: %g, expected %lld", k, s,
                    (double)d[s], (long long)(e - a));
    }
    cases_run++;
  }
  static const int64_t good[5] = {0, 1, 33, 33, 1000};
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.off, good, sizeof good), RJ_OK);
  launch(json, &b, b.off);
  float d[4];
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, d, b.dst, sizeof d), RJ_OK);
  ck_assert(d[0] == 1 && d[1] == 32 && d[2] == 0 && d[3] == 967);
  ck_assert_int_eq(rj_segments_status(ctx, 0, b.status), RJ_OK);
  dfree(&b);
}
END_TEST

/* every segment empty: the identities */
START_TEST(empty) {
  if (!gpu) return;
  int64_t off[6] = {0, 0, 0, 0, 0, 0};
  dbufs b;
  dalloc(&b, 16, sizeof off, 8 * 5);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.off, off, sizeof off), RJ_OK);
  /* a float sum of nothing is +0.0 (NumPy's), the default and the invariant kernel */
  static const char *const o[] = {"sum", "max", "argmax", "mean", "sum"};
  for (int k = 0; k < 5; k++) {
    char json[256];
    snprintf(json, sizeof json,
             "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",\"shape\":[0],"
             "\"segments\":{\"count\":5}%s}",
             o[k], k == 4 ? ",\"invariant\":true" : "");
    unsigned char poison[40];
    memset(poison, 0xff, sizeof poison);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.dst, poison, sizeof poison), RJ_OK);
    launch(json, &b, b.off);
    union {
      float f[5];
      int64_t i[5];
    } d;
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, &d, b.dst, k == 2 ? 40 : 20), RJ_OK);
    for (int s = 0; s < 5; s++)
      ck_assert_msg(k == 1   ? isinf(d.f[s]) && d.f[s] < 0
                    : k == 2 ? d.i[s] == -1
                    : k == 3 ? isnan(d.f[s])
                             : d.f[s] == 0 && !signbit(d.f[s]),
                    "%s of an empty segment: %g", o[k], (double)d.f[s]);
    cases_run++;
  }
  /* small dtypes, bit for bit: and all ones of the dtype (bool 1), max / min its least / greatest
   */
  static const struct {
    const char *op, *dt;
    uint8_t lo, hi; /* the element's bytes (little-endian) */
  } sm[] = {{"and", "u8", 0xff, 0},     {"and", "u16", 0xff, 0xff}, {"and", "i8", 0xff, 0},
            {"and", "i16", 0xff, 0xff}, {"and", "bool", 1, 0},      {"or", "u16", 0, 0},
            {"max", "i8", 0x80, 0},     {"min", "u16", 0xff, 0xff}, {"max", "i16", 0, 0x80}};
  for (int k = 0; k < 9; k++) {
    char json[256];
    snprintf(json, sizeof json,
             "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[0],"
             "\"segments\":{\"count\":5}}",
             sm[k].op, sm[k].dt);
    uint8_t d[10], w = sm[k].dt[1] == '1' ? 2 : 1; /* u16 / i16: 2 bytes */
    memset(d, 0x5a, sizeof d);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.dst, d, sizeof d), RJ_OK);
    launch(json, &b, b.off);
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, d, b.dst, sizeof d), RJ_OK);
    for (int s = 0; s < 5; s++)
      ck_assert_msg(d[s * w] == sm[k].lo && (w == 1 || d[s * w + 1] == sm[k].hi),
                    "%s of an empty %s segment: byte 0x%02x", sm[k].op, sm[k].dt, d[s * w]);
    cases_run++;
  }
  dfree(&b);
}
END_TEST

/* "invariant": true: the segments of alone_len, their values placed 0 .. 7 elements further into
 * the array each time, give the same bits at every placement and alone (S = 1), for the ops
 * whose result depends on the order of their combines, 1-D f32 / bf16 / f64 and [N, 3] f32; each
 * within a small relative error of the default kernel's (which the matrix holds to the float64
 * reference). */
static void placed_case(const char *op, const char *dt, rj_dtype d, int esz, int C) {
  int64_t off[NALONE + 1] = {0}, n = 0;
  for (int i = 0; i < NALONE; i++)
    off[i + 1] = (n += alone_len[i]);
  int64_t cap = (n + 8) * C;
  unsigned char *h = calloc((size_t)cap, (size_t)esz), *want = malloc((size_t)NALONE * C * 8);
  unsigned char *got = malloc((size_t)NALONE * C * 8);
  dbufs b;
  dalloc(&b, (size_t)cap * (size_t)esz, sizeof off, (size_t)NALONE * C * 8);
  char shape[64], inv[256], one[256], def[256];
  if (C > 1)
    snprintf(shape, sizeof shape, "[%lld,%d],\"axes\":[0]", (long long)(n + 8), C);
  else
    snprintf(shape, sizeof shape, "[%lld]", (long long)(n + 8));
  const char *head = "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":%s,";
  snprintf(inv, sizeof inv, "%s\"segments\":{\"count\":%d},\"invariant\":true}", head, NALONE);
  snprintf(one, sizeof one, "%s\"segments\":{\"count\":1},\"invariant\":true}", head);
  snprintf(def, sizeof def, "%s\"segments\":{\"count\":%d}}", head, NALONE);
  char invr[256], oner[256], defr[256];
  snprintf(invr, sizeof invr, inv, op, dt, shape);
  snprintf(oner, sizeof oner, one, op, dt, shape);
  snprintf(defr, sizeof defr, def, op, dt, shape);
  int w = esz;                  /* every op here stores the input's dtype */
  for (int k = 0; k < 8; k++) { /* the values start k rows further each time */
    memset(h, 0, (size_t)cap * (size_t)esz);
    for (int64_t i = 0; i < n * C; i++) {
      float u = (float)((i * 2654435761u) % 1000003) / 1000003.0f;
      rjt_put_float(d, op[0] == 'p' ? 1.0f + (u - 0.5f) * 1e-3f : u - 0.25f,
                    h + (size_t)(i + (int64_t)k * C) * (size_t)esz);
    }
    int64_t o2[NALONE + 1];
    for (int i = 0; i <= NALONE; i++)
      o2[i] = off[i] + k;
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.src, h, (size_t)cap * (size_t)esz), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b.off, o2, sizeof o2), RJ_OK);
    launch(invr, &b, b.off);
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, k ? got : want, b.dst, (size_t)NALONE * C * w), RJ_OK);
    if (k) {
      for (int i = 0; i < NALONE; i++)
        ck_assert_msg(!memcmp(got + (size_t)i * C * w, want + (size_t)i * C * w, (size_t)C * w),
                      "%s: segment %d (%lld rows) placed %d further: other bits", invr, i,
                      (long long)alone_len[i], k);
      continue;
    }
    for (int i = 0; i < NALONE; i++) { /* alone: S = 1 over the segment's two offsets */
      launch(oner, &b, b.off + (rj_devptr)i * 8);
      ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, got, b.dst, (size_t)C * w), RJ_OK);
      ck_assert_msg(!memcmp(got, want + (size_t)i * C * w, (size_t)C * w),
                    "%s: segment %d alone: other bits", invr, i);
    }
    /* near the default kernel's results */
    launch(defr, &b, b.off);
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, got, b.dst, (size_t)NALONE * C * w), RJ_OK);
    /* an f32 product of 300000 factors near 1 rounds with a bias of one sign: both kernels are
     * 4 - 5e-4 below the float64 product of this data, in different trees */
    double tol = d == RJ_BF16 ? 2e-2 : op[0] == 'p' ? 2e-3 : 1e-4;
    for (int64_t i = 0; i < (int64_t)NALONE * C; i++) {
      double x = rjt_get_float(d, want + i * w), y = rjt_get_float(d, got + i * w);
      ck_assert_msg(x == y || fabs(x - y) <= tol * fmax(1.0, fabs(y)) || (isnan(x) && isnan(y)),
                    "%s %s: output %lld invariant %.9g, default %.9g", op, dt, (long long)i, x, y);
    }
  }
  ck_assert_int_eq(rj_segments_status(ctx, 0, b.status), RJ_OK);
  cases_run++;
  dfree(&b);
  free(h);
  free(want);
  free(got);
}

START_TEST(invariant_placed) {
  if (!gpu) return;
  static const char *const o[] = {"sum", "mean", "prod", "var", "std", "logsumexp"};
  for (int k = 0; k < 6; k++) {
    placed_case(o[k], "f32", RJ_F32, 4, 1);
    placed_case(o[k], "bf16", RJ_BF16, 2, 1);
    placed_case(o[k], "f64", RJ_F64, 8, 1);
    placed_case(o[k], "f32", RJ_F32, 4, 3);
  }
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_segmented");
  TCase *tc = tcase_create("matrix");
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, matrix, 0, NOP);
  suite_add_tcase(s, tc);
  TCase *tm = tcase_create("more");
  tcase_set_timeout(tm, 600);
  tcase_add_checked_fixture(tm, setup, teardown);
  tcase_add_test(tm, shapes);
  tcase_add_test(tm, alone);
  tcase_add_test(tm, crowded);
  tcase_add_test(tm, invalid);
  tcase_add_test(tm, empty);
  suite_add_tcase(s, tm);
  TCase *ti = tcase_create("invariant"); /* CK_RUN_CASE=invariant */
  tcase_set_timeout(ti, 300);
  tcase_add_checked_fixture(ti, setup, teardown);
  tcase_add_test(ti, invariant_placed);
  suite_add_tcase(s, ti);
  int failed = rjt_run_in_process(s);
  printf("%d segmented cases run\n", cases_run);
  return failed ? 1 : 0;
}
