/* GPU suite for list requests (rj_reduce_multi, docs/TENSOR.md "Many tensors"): lists of 1, 150,
 * 2000 and 10000 tensors of mixed lengths (empty, 1, 31, 33, up to 4 Mi; strides 1 to 3) x ops x
 * f16 / bf16 / f32 / f64 (f16 sumsq aside: its sums pass f16's range), per-tensor outputs and the
 * total against `run`'s float64 reference (which also launches twice and compares the bits);
 * integers, bool and float8 (150 tensors); NaNs both ways; and bitwise independence: each
 * tensor's output equals the same tensor reduced alone (a list of one) and in a list of the
 * tensors reversed, and the total is the same launch after launch.  Skips without a GPU. */
#include "rjtest.h"

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
  suite_add_tcase(s, tc);
  int failed = rjt_run_in_process(s);
  printf("%d list request cases run\n", cases_run);
  return failed ? 1 : 0;
}
