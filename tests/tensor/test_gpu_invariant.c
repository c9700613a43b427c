/* "invariant": true on the GPU (docs/INVARIANCE.md): for random lengths, every op and dtype, the
 * bits of one row reduced in a batch of 1, 7 (at an odd element offset), 128 and 4096 rows are
 * identical, and so are those of one column among 1, 7, 128 and 4096 columns (of a 2-D array and
 * of a middle axis: tensor_inv_cols against tensor_generic's 1-D array); with the SM-count
 * knob at 1, 16, 78, 132, 148 and 1024 they are identical too.  rj_check holds invariant requests
 * to the float64 reference.  The bits go to a results file ($REDJIT_INVARIANT_OUT, else
 * $OUT/invariant_bits.txt when $OUT is set) so that two GPU models can be compared with diff.
 * max / min / argmax / argmin over signed zeros and NaNs: the same bits as a row, a column or a
 * 1-D array, and the host's answer (+0 above -0, a NaN when any, ties to the first index).
 * treduce: the same ranks on one GPU, on two and on four give the same bits on every path. */
#include "rjtest.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static rj_ctx *ctx;
static FILE *bits_out;
static int cases_run;
static rj_devptr dsrc, ddst;
static size_t src_cap = (size_t)1 << 28, dst_cap = (size_t)1 << 20; /* bytes */

static void setup(void) {
  ctx = rj_ctx_new();
  ck_assert_int_eq(rj_device_alloc(ctx, 0, src_cap, &dsrc), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, dst_cap, &ddst), RJ_OK);
}

static void teardown(void) {
  rj_device_free(ctx, 0, dsrc);
  rj_device_free(ctx, 0, ddst);
  rj_ctx_free(ctx);
}

static const char *const op_names[] = {"sum", "prod", "mean",   "max",    "min",
                                       "var", "std",  "argmax", "argmin", "logsumexp"};
static const rj_op op_ids[] = {RJ_OP_SUM, RJ_OP_PROD, RJ_OP_MEAN,   RJ_OP_MAX,    RJ_OP_MIN,
                               RJ_OP_VAR, RJ_OP_STD,  RJ_OP_ARGMAX, RJ_OP_ARGMIN, RJ_OP_LOGSUMEXP};
#define NOPS 10
static const char *const dt_names[] = {"f32", "f16", "bf16", "f64", "i32", "e4m3"};
static const rj_dtype dt_ids[] = {RJ_F32, RJ_F16, RJ_BF16, RJ_F64, RJ_I32, RJ_E4M3};
#define NDTS 6

static int dt_bytes(rj_dtype d) {
  static const int b[] = {2, 2, 4, 8, 4, 4, 8, 8, 1, 1, 2, 2, 1, 1, 1};
  return b[d];
}

static bool takes(int o, int d) {
  bool fl = dt_ids[d] != RJ_I32;
  rj_op op = op_ids[o];
  if (op == RJ_OP_MEAN || op == RJ_OP_VAR || op == RJ_OP_STD || op == RJ_OP_LOGSUMEXP) return fl;
  if (op == RJ_OP_PROD) return dt_ids[d] != RJ_E4M3;
  return true;
}

static uint64_t rng(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

/* one element of dtype d at p: uniform in [-1, 1) (prod: [0.9, 1.1), integers -1000 .. 1000) */
static void draw(uint64_t *s, rj_dtype d, bool prod, unsigned char *p) {
  double u = (double)(rng(s) >> 21) / (double)(1ULL << 32);
  double x = prod ? 0.9 + 0.2 * u : 2 * u - 1;
  float f = (float)x;
  uint32_t fb;
  memcpy(&fb, &f, 4);
  switch (d) {
  case RJ_F32:
    memcpy(p, &f, 4);
    break;
  case RJ_F64:
    memcpy(p, &x, 8);
    break;
  case RJ_BF16: {
    uint16_t h = (uint16_t)(fb >> 16);
    memcpy(p, &h, 2);
    break;
  }
  case RJ_F16: { /* |x| < 2: a normal half, or 0 below 2^-14 */
    int e = (int)((fb >> 23) & 0xff) - 127 + 15;
    uint16_t h = (uint16_t)((fb >> 16) & 0x8000);
    if (e > 0) h |= (uint16_t)(e << 10 | ((fb >> 13) & 0x3ff));
    memcpy(p, &h, 2);
    break;
  }
  case RJ_I32: {
    int32_t i = (int32_t)(rng(s) % 2001) - 1000;
    memcpy(p, &i, 4);
    break;
  }
  default: { /* e4m3: any byte but the NaNs */
    unsigned char b = (unsigned char)(rng(s) & 0xff);
    *p = (b & 0x7f) == 0x7f ? (unsigned char)(b & 0xfe) : b;
    break;
  }
  }
}

/* Reduces the host array h (the view the request describes) at element offset `shift` of the
 * device buffer (uploaded when sms is 0), planned for sms SMs (0: the device's); output `at`'s
 * bits into out. */
static void reduce_one(const char *json, const unsigned char *h, size_t bytes, int shift, int sms,
                       int64_t at, int rbytes, unsigned char *out, int esz) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  ck_assert_msg(bytes + (size_t)shift * (size_t)esz <= src_cap, "%s: too large", json);
  if (!sms) /* the knob's runs reduce what the device's run uploaded */
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dsrc + (rj_devptr)shift * (rj_devptr)esz, h, bytes),
                     RJ_OK);
  rj_options o;
  rj_options_init(&o);
  o.sm_count = sms;
  rj_status s = rj_reduce(ctx, &r, &o, dsrc + (rj_devptr)shift * (rj_devptr)esz, ddst, NULL);
  ck_assert_msg(s == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
  ck_assert_int_eq(rj_device_sync(ctx, 0), RJ_OK);
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, out, ddst + (rj_devptr)(at * rbytes), (size_t)rbytes),
                   RJ_OK);
}

static void hex(char *buf, const unsigned char *b, int n) {
  for (int i = n - 1; i >= 0; i--) /* little-endian: the value's bits, high first */
    buf += sprintf(buf, "%02x", b[i]);
}

static const int batches[] = {1, 7, 128, 4096};
static const int knob[] = {1, 16, 78, 132, 148, 1024};

/* The test line's layout: a row of [B, N], a column of [N, B] or of the middle axis of
 * [3, N, B] (outer index 2).  A batch of 1 is a 1-D array (tensor_generic); columns of B > 1 go
 * to tensor_inv_cols, which plays tensor_generic's tree. */
enum { ROWS, COLS, MID };
static const char *const layout_names[] = {"rows", "cols", "mid"};

/* One (op, dtype, length, layout): the output of the test line in every batch (and with knobs at
 * every SM count), bit for bit. */
static void one_case(int o, int d, int64_t N, int layout, bool knobs, uint64_t seed) {
  rj_dtype dt = dt_ids[d];
  int esz = dt_bytes(dt), rbytes = dt_bytes(rj_result_dtype(op_ids[o], dt));
  bool prod = op_ids[o] == RJ_OP_PROD;
  uint64_t s = seed;
  unsigned char *line = malloc((size_t)N * (size_t)esz);
  ck_assert_ptr_nonnull(line);
  for (int64_t i = 0; i < N; i++)
    draw(&s, dt, prod, line + i * esz);
  unsigned char first[8] = {0}, got[8];
  char text[32];
  for (int b = 0; b < 4; b++) {
    int64_t B = batches[b];
    int64_t outer = layout == MID ? 3 : 1;
    if (outer * B * N > (int64_t)1 << 25) continue; /* long lines: batches up to 2^25 elements */
    int64_t at = (B - 1) / 2;                       /* the test line in the middle of the batch */
    size_t bytes = (size_t)(outer * B * N) * (size_t)esz;
    unsigned char *h = malloc(bytes);
    ck_assert_ptr_nonnull(h);
    for (int64_t i = 0; i < outer * B * N; i++)
      draw(&s, dt, prod, h + i * esz);
    for (int64_t i = 0; i < N; i++) /* rows: [B, N]; columns: [N, B]; mid: [3, N, B] at 2 */
      memcpy(h + (layout == ROWS ? at * N + i : (outer - 1) * N * B + i * B + at) * esz,
             line + i * esz, (size_t)esz);
    const char *json =
        layout == ROWS
            ? rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[%lld,"
                      "%lld],\"axes\":[1],\"invariant\":true}",
                      op_names[o], dt_names[d], (long long)B, (long long)N)
            : rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[%s%lld,"
                      "%lld],\"axes\":[%d],\"invariant\":true}",
                      op_names[o], dt_names[d], layout == MID ? "3," : "", (long long)N,
                      (long long)B, layout == MID ? 1 : 0);
    char req[256];
    snprintf(req, sizeof req, "%s", json);
    int shift = b == 1 ? 1 : 0; /* the batch of 7 at an odd element offset */
    if (getenv("RJT_PROGRESS")) fprintf(stderr, "%s\n", req);
    int64_t out = (outer - 1) * B + at;
    reduce_one(req, h, bytes, shift, 0, out, rbytes, got, esz);
    if (b == 0) memcpy(first, got, (size_t)rbytes);
    hex(text, got, rbytes);
    ck_assert_msg(memcmp(first, got, (size_t)rbytes) == 0,
                  "%s: the line's bits %s in a batch of %lld differ from a batch of 1's", req, text,
                  (long long)B);
    if (b == 2 && knobs)
      for (int k = 0; k < 6; k++) {
        reduce_one(req, h, bytes, 0, knob[k], out, rbytes, got, esz);
        ck_assert_msg(memcmp(first, got, (size_t)rbytes) == 0,
                      "%s: %d SMs give other bits than the device's", req, knob[k]);
      }
    free(h);
  }
  hex(text, first, rbytes);
  if (bits_out)
    fprintf(bits_out, "%s %s %lld %s seed=%llu %s\n", op_names[o], dt_names[d], (long long)N,
            layout_names[layout], (unsigned long long)seed, text);
  cases_run++;
  free(line);
}

/* lengths: short (lanes), around the segment threshold, long (segments) */
static int64_t draw_len(uint64_t *s, int kind) {
  switch (kind) {
  case 0:
    return 1 + (int64_t)(rng(s) % 300);
  case 1:
    return 3000 + (int64_t)(rng(s) % 3000);
  default:
    return 20000 + (int64_t)(rng(s) % 200000);
  }
}

/* column lengths: short (most below 32, few powers of two), around 4096 (lanes, and one
 * segment past it), long (2 to 5 segments) */
static int64_t draw_col_len(uint64_t *s, int kind) {
  switch (kind) {
  case 0:
    return 2 + (int64_t)(rng(s) % 40);
  case 1:
    return 4000 + (int64_t)(rng(s) % 2000);
  default:
    return 16385 + (int64_t)(rng(s) % 60000);
  }
}

START_TEST(batches_and_sms) {
  int o = _i / NDTS, d = _i % NDTS;
  if (!takes(o, d)) return;
  uint64_t s = 1000 + (uint64_t)_i;
  for (int kind = 0; kind < 3; kind++) {
    int64_t N = draw_len(&s, kind);
    one_case(o, d, N, ROWS, true, s);
    /* columns: the SM-count knob at the short length (test_invariant: no plan reads the count) */
    one_case(o, d, draw_col_len(&s, kind), COLS, kind == 0, s + 7);
    bool mid_op = op_ids[o] == RJ_OP_SUM || op_ids[o] == RJ_OP_VAR || op_ids[o] == RJ_OP_ARGMAX ||
                  op_ids[o] == RJ_OP_LOGSUMEXP;
    if (kind == 1 || (kind == 2 && mid_op))
      one_case(o, d, draw_col_len(&s, kind), MID, false, s + 13);
  }
}
END_TEST

/* ---- max / min / argmax / argmin over signed zeros and NaNs (the fast variants serve them
 * invariant: their results do not depend on the order of the combines) */

/* element i of a line of dtype d (f32, bf16 or f64): a zero of either sign, or a number of the
 * sign that cannot beat a zero (below 0 for max / argmax, above for min / argmin) */
static double zn_value(uint64_t *s, bool lower) {
  uint64_t k = rng(s) % 3;
  if (k < 2) return k ? 0.0 : -0.0;
  double u = 0.25 + (double)(rng(s) % 1000) / 1000;
  return lower ? -u : u;
}

static void zn_store(rj_dtype d, double x, int nan_kind, unsigned char *p) {
  if (d == RJ_F64) {
    uint64_t b = nan_kind == 1 ? 0x7ff8000000000123ULL : 0xfff8000000000456ULL;
    if (nan_kind)
      memcpy(p, &b, 8);
    else
      memcpy(p, &x, 8);
    return;
  }
  float f = (float)x;
  uint32_t b;
  memcpy(&b, &f, 4);
  if (nan_kind) b = nan_kind == 1 ? 0x7fc00123u : 0xffc20456u;
  if (d == RJ_F32)
    memcpy(p, &b, 4);
  else {
    uint16_t h = (uint16_t)(b >> 16); /* truncated: the host reads back what is stored */
    memcpy(p, &h, 2);
  }
}

static double zn_load(rj_dtype d, const unsigned char *p) {
  if (d == RJ_F64) {
    double x;
    memcpy(&x, p, 8);
    return x;
  }
  uint32_t b = 0;
  if (d == RJ_F32)
    memcpy(&b, p, 4);
  else {
    uint16_t h;
    memcpy(&h, p, 2);
    b = (uint32_t)h << 16;
  }
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* x beats y for max (mx) or min: +0 above -0 */
static bool zn_beats(double x, double y, bool mx) {
  if (x == y) return x == 0 && (signbit(x) != signbit(y)) && (mx ? !signbit(x) : signbit(x));
  return mx ? x > y : x < y;
}

/* The expected result of op o (3 max, 4 min, 7 argmax, 8 argmin) over line: the value (max /
 * min) or the index */
static void zn_expect(int o, rj_dtype d, const unsigned char *line, int64_t N, bool ignore,
                      double *val, int64_t *idx) {
  bool mx = o == 3 || o == 7, arg = o >= 7;
  int esz = dt_bytes(d);
  *idx = -1;
  *val = mx ? -INFINITY : INFINITY;
  for (int64_t i = 0; i < N; i++) {
    double x = zn_load(d, line + i * esz);
    if (isnan(x)) {
      if (ignore) continue;
      if (!isnan(*val)) *val = x, *idx = i;
      continue;
    }
    if (isnan(*val)) continue;
    bool better = arg ? (mx ? x > *val : x < *val) : zn_beats(x, *val, mx);
    if (*idx < 0 || better) *val = x, *idx = i;
  }
}

START_TEST(zeros_and_nans) {
  static const int ops[] = {3, 4, 7, 8};
  static const rj_dtype dts[] = {RJ_F32, RJ_BF16, RJ_F64};
  static const char *const dtn[] = {"f32", "bf16", "f64"};
  static const int64_t lens[] = {5, 100003};
  int o = ops[_i / 3], d = _i % 3;
  rj_dtype dt = dts[d];
  int esz = dt_bytes(dt), rbytes = o >= 7 ? 8 : esz;
  uint64_t s = 4242 + (uint64_t)_i;
  for (int l = 0; l < 2; l++)
    for (int mode = 0; mode < 3; mode++) { /* propagate, propagate with NaNs, ignore with NaNs */
      int64_t N = lens[l];
      bool ignore = mode == 2, nans = mode > 0;
      unsigned char *line = malloc((size_t)N * (size_t)esz), first[8] = {0}, got[8];
      ck_assert_ptr_nonnull(line);
      for (int64_t i = 0; i < N; i++)
        zn_store(dt, zn_value(&s, o == 3 || o == 7), 0, line + i * esz);
      if (nans) /* two NaNs of other payloads and signs, the second at the end */
        zn_store(dt, 0, 1, line + (int64_t)(rng(&s) % (uint64_t)N) * esz),
            zn_store(dt, 0, 2, line + (N - 1) * esz);
      double want;
      int64_t widx;
      zn_expect(o, dt, line, N, ignore, &want, &widx);
      for (int lay = 0; lay < 7; lay++) { /* rows in 1, 7, 128; columns in 1, 7, 128; 1-D */
        int64_t B = lay == 6 ? 1 : batches[lay % 3], at = (B - 1) / 2;
        bool cols = lay >= 3 && lay < 6;
        size_t bytes = (size_t)(B * N) * (size_t)esz;
        unsigned char *h = malloc(bytes);
        ck_assert_ptr_nonnull(h);
        for (int64_t i = 0; i < B * N; i++)
          draw(&s, dt, false, h + i * esz);
        for (int64_t i = 0; i < N; i++)
          memcpy(h + (cols ? i * B + at : at * N + i) * esz, line + i * esz, (size_t)esz);
        char req[320];
        if (lay == 6)
          snprintf(req, sizeof req,
                   "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[%lld],"
                   "\"nan\":\"%s\",\"invariant\":true}",
                   op_names[o], dtn[d], (long long)N, ignore ? "ignore" : "propagate");
        else
          snprintf(req, sizeof req,
                   "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[%lld,%lld],"
                   "\"axes\":[%d],\"nan\":\"%s\",\"invariant\":true}",
                   op_names[o], dtn[d], (long long)(cols ? N : B), (long long)(cols ? B : N),
                   cols ? 0 : 1, ignore ? "ignore" : "propagate");
        if (getenv("RJT_PROGRESS")) fprintf(stderr, "%s\n", req);
        reduce_one(req, h, bytes, 0, 0, at, rbytes, got, esz);
        free(h);
        if (lay == 0) memcpy(first, got, (size_t)rbytes);
        ck_assert_msg(memcmp(first, got, (size_t)rbytes) == 0, "%s: other bits than the row alone",
                      req);
        if (o >= 7) {
          int64_t i;
          memcpy(&i, got, 8);
          ck_assert_msg(i == widx, "%s: index %lld, expected %lld", req, (long long)i,
                        (long long)widx);
        } else {
          double x = zn_load(dt, got);
          ck_assert_msg(isnan(want) ? isnan(x) : x == want && signbit(x) == signbit(want),
                        "%s: %g, expected %g", req, x, want);
        }
        cases_run++;
      }
      free(line);
    }
}
END_TEST

/* The invariant kernels are right: the float64 reference of rj_check, lanes and segments, rows
 * columns and a middle axis, constant and dynamic requests (which keep a constant kernel). */
START_TEST(against_reference) {
  static const char *const views[] = {
      "\"shape\":[37,1000],\"axes\":[1]",  "\"shape\":[3,300000],\"axes\":[1]",
      "\"shape\":[5000,9],\"axes\":[0]",   "\"shape\":[6,7000,5],\"axes\":[1]",
      "\"shape\":[2000003],\"axes\":[0]",  "\"shape\":[40,50,60],\"axes\":[0,2]",
      "\"shape\":[40000,33],\"axes\":[0]", "\"shape\":[2,21,100],\"axes\":[1]",
      "\"shape\":[5000003],\"axes\":[0]"}; /* 306 segments: a thread folds 2 partials */
  int o = _i / NDTS, d = _i % NDTS;
  if (!takes(o, d)) return;
  for (int v = 0; v < 9; v++)
    for (int dyn = 0; dyn < (v == 0 || v == 1 ? 2 : 1); dyn++) {
      const char *json =
          rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,"
                  "\"invariant\":true%s}",
                  op_names[o], dt_names[d], views[v], dyn ? ",\"dynamic\":true" : "");
      char req[256];
      snprintf(req, sizeof req, "%s", json);
      rjt_run_ok(ctx, req, 11 + (uint64_t)v, 0);
      cases_run++;
    }
}
END_TEST

/* treduce: 6 f32 ranks summed, root 2, every rank on GPU 0 (path peer) gives the reference bits;
 * forced split (3 slices on one GPU) and ring (3 hops) give them too, and so does every path with
 * rank r on GPU r mod 2 where there are 2 GPUs (refused without peer access: said and skipped).
 * "invariant" with path staged is refused, naming why. */
static char treduce_why[512]; /* the last run's message: the frees after it clear rj_errmsg */

static void treduce_run(rj_treduce_group *g, rj_treduce_buf *b, const float *const *host, int64_t n,
                        rj_treduce_path path, float *got, rj_status *st) {
  size_t bytes = (size_t)n * 4;
  for (int r = 0; r < g->ranks; r++) {
    ck_assert_int_eq(rj_device_alloc(ctx, b[r].device, bytes, &b[r].ptr), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, b[r].device, b[r].ptr, host[r], bytes), RJ_OK);
  }
  g->dst = b[g->root];
  ck_assert_int_eq(rj_device_alloc(ctx, g->dst.device, bytes, &g->dst.ptr), RJ_OK);
  g->path = path;
  rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
  *st = rj_treduce_run(ctx, g, NULL, &res);
  snprintf(treduce_why, sizeof treduce_why, "%s", *st ? rj_errmsg(ctx) : "");
  if (!*st) ck_assert_int_eq(rj_memcpy_dtoh(ctx, g->dst.device, got, g->dst.ptr, bytes), RJ_OK);
  for (int r = 0; r < g->ranks; r++)
    rj_device_free(ctx, b[r].device, b[r].ptr);
  rj_device_free(ctx, g->dst.device, g->dst.ptr);
}

START_TEST(treduce_gpus) {
  enum { RANKS = 6 };
  int64_t rows = 300, cols = 1000, n = rows * cols;
  float *host[RANKS], *want = malloc((size_t)n * 4), *got = malloc((size_t)n * 4);
  uint64_t s = 77;
  ck_assert(want && got);
  for (int r = 0; r < RANKS; r++) {
    host[r] = malloc((size_t)n * 4);
    ck_assert_ptr_nonnull(host[r]);
    for (int64_t i = 0; i < n; i++)
      draw(&s, RJ_F32, false, (unsigned char *)&host[r][i]);
  }
  int ndev = 0;
  ck_assert_int_eq(rj_device_count(ctx, &ndev), RJ_OK);
  rj_treduce_group g;
  rj_treduce_buf b[RANKS];
  rj_status st;
  rjt_treduce_group(&g, b, RANKS, 2, rows, cols, 1, RJ_OP_SUM, RJ_F32);
  g.invariant = 1;
  treduce_run(&g, b, (const float *const *)host, n, RJ_TREDUCE_PEER, want, &st);
  ck_assert_msg(st == RJ_OK, "peer on one GPU: %s", treduce_why);
  double err = 0; /* against the float64 sum */
  for (int64_t i = 0; i < n; i++) {
    double d = 0;
    for (int r = 0; r < RANKS; r++)
      d += host[r][i];
    err = fabs(d - want[i]) > err ? fabs(d - want[i]) : err;
  }
  ck_assert_msg(err < 1e-5, "treduce f32 sum of 6 ranks: error %g", err);
  static const rj_treduce_path one[] = {RJ_TREDUCE_SPLIT, RJ_TREDUCE_RING};
  for (int p = 0; p < 2; p++) {
    treduce_run(&g, b, (const float *const *)host, n, one[p], got, &st);
    if (st == RJ_EUNSUPPORTED) { /* said, not failed: the path's own suites cover it */
      fprintf(stderr, "treduce path %d on one GPU: %s\n", one[p], treduce_why);
      continue;
    }
    ck_assert_msg(st == RJ_OK, "path %d on one GPU: %s", one[p], treduce_why);
    ck_assert_msg(memcmp(got, want, (size_t)n * 4) == 0, "path %d on one GPU: other bits", one[p]);
  }
  treduce_run(&g, b, (const float *const *)host, n, RJ_TREDUCE_STAGED, got, &st);
  ck_assert_int_eq(st, RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(treduce_why, "invariant: staged ranks"), "%s", treduce_why);
  static const rj_treduce_path paths[] = {RJ_TREDUCE_AUTO, RJ_TREDUCE_PEER, RJ_TREDUCE_SPLIT,
                                          RJ_TREDUCE_SPLIT_EQUAL, RJ_TREDUCE_RING};
  for (int gpus = 2; gpus <= 4; gpus += 2) { /* rank r on GPU r mod gpus */
    if (ndev < gpus) {
      fprintf(stderr, "treduce_gpus: %d GPU(s): the %d-GPU comparison needs %d\n", ndev, gpus,
              gpus);
      continue;
    }
    rjt_treduce_group(&g, b, RANKS, 2, rows, cols, gpus, RJ_OP_SUM, RJ_F32);
    g.invariant = 1;
    for (int p = 0; p < 5; p++) {
      treduce_run(&g, b, (const float *const *)host, n, paths[p], got, &st);
      if (st == RJ_EUNSUPPORTED) {
        fprintf(stderr, "treduce path %d on %d GPUs: %s\n", paths[p], gpus, treduce_why);
        continue;
      }
      ck_assert_msg(st == RJ_OK, "path %d on %d GPUs: %s", paths[p], gpus, treduce_why);
      ck_assert_msg(memcmp(got, want, (size_t)n * 4) == 0,
                    "path %d on %d GPUs: other bits than on one GPU", paths[p], gpus);
      cases_run++;
    }
  }
  for (int r = 0; r < RANKS; r++)
    free(host[r]);
  free(want);
  free(got);
  cases_run++;
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  const char *path = getenv("REDJIT_INVARIANT_OUT");
  char buf[1024];
  if (!path && getenv("OUT")) {
    snprintf(buf, sizeof buf, "%s/invariant_bits.txt", getenv("OUT"));
    path = buf;
  }
  if (path && !(bits_out = fopen(path, "w"))) fprintf(stderr, "cannot write %s\n", path);
  if (bits_out) setvbuf(bits_out, NULL, _IOLBF, 0); /* a line per case, as it ends */
  Suite *s = suite_create("gpu_invariant");
  TCase *tc = tcase_create("bits"); /* CK_RUN_CASE=bits */
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, batches_and_sms, 0, NOPS * NDTS);
  suite_add_tcase(s, tc);
  TCase *zc = tcase_create("zeros"); /* CK_RUN_CASE=zeros */
  tcase_set_timeout(zc, 600);
  tcase_add_checked_fixture(zc, setup, teardown);
  tcase_add_loop_test(zc, zeros_and_nans, 0, 12);
  suite_add_tcase(s, zc);
  TCase *rc = tcase_create("reference"); /* CK_RUN_CASE=reference */
  tcase_set_timeout(rc, 600);
  tcase_add_checked_fixture(rc, setup, teardown);
  tcase_add_loop_test(rc, against_reference, 0, NOPS * NDTS);
  suite_add_tcase(s, rc);
  TCase *tr = tcase_create("treduce"); /* CK_RUN_CASE=treduce (2 GPUs: nvidia-h100-x2) */
  tcase_set_timeout(tr, 300);
  tcase_add_checked_fixture(tr, setup, teardown);
  tcase_add_test(tr, treduce_gpus);
  suite_add_tcase(s, tr);
  int failed = rjt_run_in_process(s);
  if (bits_out) fclose(bits_out);
  printf("%d invariant cases run%s%s\n", cases_run, path ? "; bits in " : "", path ? path : "");
  return failed ? 1 : 0;
}
