/* rj_check's comparison of argmax / argmin "values" on the host (no GPU: the harness's oracle and
 * hr_check_values compiled into this program, the kernel's output written by hand): the index is
 * the float64 oracle's (first of ties, first NaN under propagate, -1 for an all-NaN row under
 * ignore), and each value must be the source element at that index bit for bit (NaN payloads and
 * the sign of zero included), the op's identity under -1, and never the poison. */
#include "../../../jit/harness/harness.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rj_ctx *ctx;

/* A tensor request (values set) and its view. */
static void request(const char *json, rj_request *r, ir_tview *v) {
  rj_status s = rj_request_parse(ctx, json, r);
  ck_assert_msg(s == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
  ck_assert_int_eq(r->u.tensor.values, 1);
  ir_tensor_view(&r->u.tensor, v);
}

/* What a correct kernel writes: the element at each reference index (the identity under -1). */
static void correct(const rj_tensor *t, const ir_tview *v, const void *view, const hr_value *ref,
                    void *got) {
  for (int64_t p = 0; p < v->outputs; p++) {
    int64_t idx = (int64_t)ref[p].u;
    if (idx < 0) {
      hr_store_f64(t->dtype, got, p, t->op == RJ_OP_ARGMAX ? -INFINITY : INFINITY);
      continue;
    }
    int64_t at = ir_tview_offset(v, p, 0) + ir_tview_offset(v, 0, idx);
    memcpy((char *)got + p * ir_dtype(t->dtype)->bytes,
           (const char *)view + at * ir_dtype(t->dtype)->bytes, (size_t)ir_dtype(t->dtype)->bytes);
  }
}

static rj_check_result check(const rj_tensor *t, const ir_tview *v, const void *view,
                             const hr_value *ref, const void *got) {
  rj_check_result res = {.struct_size = sizeof res};
  hr_check_values(&res, t, v, view, ref, got);
  ck_assert_int_eq(res.checked, v->outputs);
  return res;
}

/* Random inputs of every style and dtype, views with gaps and several reduced dims: a correct
 * output passes; one poisoned value, one value taken from another index of a different bit
 * pattern, one flipped bit each fail, naming the element. */
START_TEST(random_views) {
  static const char *const views[] = {
      "\"shape\":[7,33],\"axes\":[1]",
      "\"shape\":[40,5],\"axes\":[0]",
      "\"shape\":[3,4,5],\"axes\":[0,2]",
      "\"shape\":[6,9],\"strides\":[12,1],\"axes\":[1]",
  };
  static const char *const dts[] = {"f32", "f16", "bf16", "f64", "i32", "u64"};
  for (int vi = 0; vi < 4; vi++)
    for (int d = 0; d < 6; d++)
      for (int op = 0; op < 2; op++)
        for (int style = 0; style < 4; style++) {
          char json[256];
          snprintf(json, sizeof json,
                   "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"values\":true}",
                   op ? "argmin" : "argmax", dts[d], views[vi]);
          rj_request r;
          ir_tview v;
          request(json, &r, &v);
          const rj_tensor *t = &r.u.tensor;
          size_t eb = (size_t)ir_dtype(t->dtype)->bytes;
          void *view = calloc((size_t)v.extent, eb), *got = calloc((size_t)v.outputs, eb);
          hr_value *ref = calloc((size_t)v.outputs, sizeof *ref);
          hr_rng g;
          hr_rng_seed(&g, 1000u * (unsigned)vi + 10u * (unsigned)d + (unsigned)style);
          hr_fill_random(&g, t->dtype, view, v.extent);
          hr_state_fill(&g, t, &v, view, style);
          if (ir_dtype(t->dtype)->is_float && style == 1) /* a NaN in output 0 */
            hr_store_f64(t->dtype, view, ir_tview_offset(&v, 0, v.reduce_len / 2), NAN);
          hr_state_ref(t, &v, view, ref);
          correct(t, &v, view, ref, got);
          rj_check_result res = check(t, &v, view, ref, got);
          ck_assert_msg(res.wrong == 0, "%s: %s", json, res.first_error);
          int64_t y = v.outputs - 1;
          hr_fill_poison(t->dtype, (char *)got + (size_t)y * eb, 1);
          res = check(t, &v, view, ref, got);
          ck_assert_int_eq(res.wrong, 1);
          ck_assert_msg(strstr(res.first_error, "not written: poison"), "%s", res.first_error);
          correct(t, &v, view, ref, got);
          int64_t base = ir_tview_offset(&v, y, 0), due = (int64_t)ref[y].u;
          for (int64_t k = 0; k < v.reduce_len; k++) { /* the first other, different element */
            int64_t at = base + ir_tview_offset(&v, 0, k);
            if (k == due || isnan(hr_load_f64(t->dtype, view, at)) ||
                hr_load_bits(t->dtype, view, at) == hr_load_bits(t->dtype, got, y))
              continue;
            memcpy((char *)got + (size_t)y * eb, (char *)view + (size_t)at * eb, eb);
            ck_assert_int_eq(check(t, &v, view, ref, got).wrong, 1);
            break;
          }
          correct(t, &v, view, ref, got);
          ((unsigned char *)got)[(size_t)y * eb] ^= 1; /* one bit of the last value */
          res = check(t, &v, view, ref, got);
          ck_assert_int_eq(res.wrong, 1);
          char where[64];
          snprintf(where, sizeof where, "values element %lld:", (long long)y);
          ck_assert_msg(strstr(res.first_error, where), "%s", res.first_error);
          free(view);
          free(got);
          free(ref);
        }
}
END_TEST

static float f32_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Hand-made rows of f32: ties (3 and 3; +0 and -0: the first index, its own sign), NaNs of two
 * payloads (propagate: the first NaN's index and its payload), and an all-NaN row (ignore: -1 and
 * -inf).  Only the exact bits pass: the other zero, the other NaN, the canonical NaN fail. */
START_TEST(ties_zeros_and_nans) {
  const uint32_t nan_a = 0x7fc00123, nan_b = 0x7fc00456, canon = 0x7fffffff;
  for (int ignore = 0; ignore < 2; ignore++) {
    char json[200];
    snprintf(json, sizeof json,
             "{\"kind\":\"tensor\",\"op\":\"argmax\",\"dtype\":\"f32\",\"shape\":[4,4],"
             "\"axes\":[1],\"nan\":\"%s\",\"values\":true}",
             ignore ? "ignore" : "propagate");
    rj_request r;
    ir_tview v;
    request(json, &r, &v);
    const rj_tensor *t = &r.u.tensor;
    float view[16] = {1, 3, 3, 2, 0.0f, -0.0f, -1, -2, 1, f32_bits(nan_a), f32_bits(nan_b), 5};
    for (int i = 12; i < 16; i++)
      view[i] = f32_bits(nan_b);
    hr_value ref[4];
    hr_state_ref(t, &v, view, ref);
    static const int64_t want[2][4] = {{1, 0, 1, 0}, {1, 0, 3, -1}};
    for (int p = 0; p < 4; p++)
      ck_assert_int_eq((int64_t)ref[p].u, want[ignore][p]);
    float got[4];
    correct(t, &v, view, ref, got);
    ck_assert_int_eq(check(t, &v, view, ref, got).wrong, 0);
    if (ignore) ck_assert(isinf(got[3]) && got[3] < 0);
    /* row 1: the other zero; row 2: the other NaN (ignore: a NaN for 5); row 3: the canonical
     * NaN for nan_b (ignore: for -inf) */
    float bad[4] = {0, -0.0f, f32_bits(ignore ? nan_a : nan_b), f32_bits(canon)};
    for (int p = 1; p < 4; p++) {
      float g[4];
      memcpy(g, got, sizeof g);
      g[p] = bad[p];
      rj_check_result res = check(t, &v, view, ref, g);
      ck_assert_msg(res.wrong == 1, "row %d ignore %d: %lld wrong", p, ignore,
                    (long long)res.wrong);
    }
  }
}
END_TEST

/* f16 / bf16: the kernel's values pass through f32, so a NaN element's value may come back as
 * the canonical NaN 0x7fff: any NaN passes there, an infinity or a number does not. */
START_TEST(half_nans) {
  for (int bf = 0; bf < 2; bf++) {
    char json[200];
    snprintf(json, sizeof json,
             "{\"kind\":\"tensor\",\"op\":\"argmax\",\"dtype\":\"%s\",\"shape\":[1,4],"
             "\"axes\":[1],\"values\":true}",
             bf ? "bf16" : "f16");
    rj_request r;
    ir_tview v;
    request(json, &r, &v);
    const rj_tensor *t = &r.u.tensor;
    uint16_t one = bf ? 0x3f80 : 0x3c00, nan = bf ? 0x7fc1 : 0x7e00, inf = bf ? 0x7f80 : 0x7c00;
    uint16_t view[4] = {one, nan, one, one};
    hr_value ref[1];
    hr_state_ref(t, &v, view, ref);
    ck_assert_int_eq((int64_t)ref[0].u, 1);
    const uint16_t got[4] = {nan, 0x7fff, inf, one}, wrong[4] = {0, 0, 1, 1};
    for (int k = 0; k < 4; k++)
      ck_assert_int_eq(check(t, &v, view, ref, &got[k]).wrong, wrong[k]);
  }
}
END_TEST

/* The tensor-only dtypes in the harness: float8 decodes and re-encodes each of its 256 bytes (NaN
 * to a NaN; e4m3fn's definition: (1 + m/8) 2^(e-7), m/8 2^-6), rounds to nearest even and
 * saturates at 448; the small integers load sign- or zero-extended and clamp on store; the oracle
 * sums i8 in i64 and u8's and in the u8 domain; a one- or two-byte integer result equal to its
 * poison passes only when it is the reference. */
START_TEST(small_dtypes) {
  for (int b = 0; b < 256; b++) {
    uint8_t x = (uint8_t)b, y[1] = {0};
    int e = (b >> 3) & 15, m = b & 7;
    double want = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    double got = hr_load_f64(RJ_E4M3, &x, 0);
    if ((b & 0x7f) == 0x7f) {
      ck_assert(isnan(got));
    } else {
      ck_assert_msg(got == (b & 0x80 ? -want : want), "e4m3 0x%02x: %g", b, got);
      hr_store_f64(RJ_E4M3, y, 0, got);
      ck_assert_int_eq(y[0], b);
    }
    double g5 = hr_load_f64(RJ_E5M2, &x, 0);
    if (!isnan(g5)) {
      hr_store_f64(RJ_E5M2, y, 0, g5);
      ck_assert_int_eq(y[0], b);
    }
  }
  uint8_t y[1];
  hr_store_f64(RJ_E4M3, y, 0, 1000.0); /* saturates */
  ck_assert_int_eq(y[0], 0x7e);
  hr_store_f64(RJ_E4M3, y, 0, 1.0625); /* halfway between 1 and 1.125: to even (1) */
  ck_assert_int_eq(y[0], 0x38);
  hr_store_f64(RJ_E5M2, y, 0, 1.125); /* halfway between 1 and 1.25: to even (1) */
  ck_assert_int_eq(y[0], 0x3c);
  int8_t i8[3] = {-100, 100, -1};
  ck_assert(hr_load_f64(RJ_I8, i8, 2) == -1 && hr_load_f64(RJ_U8, i8, 2) == 255);
  hr_store_f64(RJ_I8, i8, 0, -300);
  hr_store_f64(RJ_U16, i8, 0, 1e9);
  ck_assert_int_eq(i8[0], -1);
  ck_assert_int_eq(i8[1], -1); /* u16 65535 over the first two bytes */
  int8_t v[3] = {-100, 100, -128};
  hr_value a;
  hr_oracle_init(RJ_OP_SUM, ir_acc_dtype(RJ_OP_SUM, RJ_I8), &a);
  for (int i = 0; i < 3; i++)
    hr_oracle_add(RJ_OP_SUM, RJ_I8, RJ_NAN_PROPAGATE, &a, v, i);
  ck_assert_int_eq((int64_t)a.u, -128);
  hr_oracle_init(RJ_OP_AND, ir_acc_dtype(RJ_OP_AND, RJ_U8), &a);
  uint8_t u[2] = {0xF3, 0x3E};
  for (int i = 0; i < 2; i++)
    hr_oracle_add(RJ_OP_AND, RJ_U8, RJ_NAN_PROPAGATE, &a, u, i);
  ck_assert_int_eq(a.u, 0x32);
  double ae, re;
  uint8_t poison[1];
  hr_fill_poison(RJ_U8, poison, 1);
  hr_value ref = {.u = poison[0]};
  ck_assert(hr_compare(RJ_OP_AND, RJ_U8, &ref, poison, 0, &ae, &re));
  ref.u = 1;
  ck_assert(!hr_compare(RJ_OP_AND, RJ_U8, &ref, poison, 0, &ae, &re));
  int16_t p16[1]; /* a wrapping i16 sum whose result is the poison's bits: due, so it passes */
  hr_fill_poison(RJ_I16, p16, 1);
  ref.u = (uint64_t)(int64_t)p16[0];
  ck_assert(hr_compare(RJ_OP_SUM, RJ_I16, &ref, p16, 0, &ae, &re));
  int32_t p32[1]; /* 4 bytes: the poison is taken as not written even where it is the reference */
  hr_fill_poison(RJ_I32, p32, 1);
  ref.u = (uint64_t)(int64_t)p32[0];
  ck_assert(!hr_compare(RJ_OP_SUM, RJ_I32, &ref, p32, 0, &ae, &re));
  int64_t sum = 7; /* an i64 result: poison never passes */
  hr_fill_poison(RJ_I64, &sum, 1);
  ref.u = (uint64_t)sum;
  ck_assert(!hr_compare(RJ_OP_SUM, RJ_I64, &ref, &sum, 0, &ae, &re));
}
END_TEST

/* bool's max / min fold in i64 (the kernel's accumulator): the oracle compares signed there; and
 * an empty reduction (a reduced dim of size 0) has outputs whose reference is the identity, with
 * no element offset divided by a zero size. */
START_TEST(bool_and_empty) {
  uint8_t b[4] = {0, 1, 1, 0};
  hr_value a;
  hr_oracle_init(RJ_OP_MAX, ir_acc_dtype(RJ_OP_MAX, RJ_BOOL), &a);
  for (int i = 0; i < 4; i++)
    hr_oracle_add(RJ_OP_MAX, RJ_BOOL, RJ_NAN_PROPAGATE, &a, b, i);
  ck_assert_int_eq((int64_t)a.u, 1);
  hr_oracle_init(RJ_OP_MIN, ir_acc_dtype(RJ_OP_MIN, RJ_BOOL), &a);
  for (int i = 0; i < 4; i++)
    hr_oracle_add(RJ_OP_MIN, RJ_BOOL, RJ_NAN_PROPAGATE, &a, b, i);
  ck_assert_int_eq((int64_t)a.u, 0);
  rj_request r;
  ck_assert_int_eq(rj_request_parse(ctx,
                                    "{\"kind\":\"tensor\",\"op\":\"mean\",\"dtype\":\"f32\","
                                    "\"shape\":[64,0],\"axes\":[1]}",
                                    &r),
                   RJ_OK);
  ir_tview v;
  ir_tensor_view(&r.u.tensor, &v);
  ck_assert_int_eq(v.outputs, 64);
  ck_assert_int_eq(v.reduce_len, 0);
  ck_assert_int_eq(ir_tview_offset(&v, 63, 0), 0);
  hr_value ref[64];
  float src[1] = {0};
  hr_oracle_tensor(&r.u.tensor, &v, src, NULL, ref);
  ck_assert(isnan(ref[0].f) && isnan(ref[63].f)); /* mean of nothing: NaN */
  /* bool's and of nothing (all ones in its i64 accumulator) is true; e4m3 writes -inf as NaN */
  hr_oracle_init(RJ_OP_AND, ir_acc_dtype(RJ_OP_AND, RJ_BOOL), &a);
  uint8_t t1[1] = {1}, t0[1] = {0xff}, nan8[1] = {0x7f};
  double ae, re;
  ck_assert(hr_compare(RJ_OP_AND, RJ_BOOL, &a, t1, 0, &ae, &re));
  ck_assert(!hr_compare(RJ_OP_AND, RJ_BOOL, &a, t0, 0, &ae, &re));
  hr_value inf = {.f = -INFINITY};
  ck_assert(hr_compare(RJ_OP_MAX, RJ_E4M3, &inf, nan8, 0, &ae, &re));
  ck_assert(!hr_compare(RJ_OP_MAX, RJ_E4M3, &inf, t0, 0, &ae, &re)); /* 0xff: the poison */
  ck_assert(!hr_compare(RJ_OP_MAX, RJ_E5M2, &inf, nan8, 0, &ae, &re));
}
END_TEST

/* An empty reduction's reference in the result dtype, as the kernels store it (saturating from
 * the 64-bit accumulator): `and` is all ones of the dtype (u8 255, u16 65535, i8 -1, bool 1, not
 * the u64 accumulator's all ones), `or` / `xor` 0; the same reference serves an empty segment. */
START_TEST(empty_bitwise_small) {
  static const char *const dt[] = {"u8", "u16", "i8", "i16", "bool", "u32", "i32", "u64", "i64"};
  static const char *const op[] = {"and", "or", "xor"};
  for (int d = 0; d < 9; d++)
    for (int o = 0; o < 3; o++) {
      char json[160];
      snprintf(json, sizeof json,
               "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[0],"
               "\"axes\":[0]}",
               op[o], dt[d]);
      rj_request r;
      ck_assert_msg(rj_request_parse(ctx, json, &r) == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
      ir_tview v;
      ir_tensor_view(&r.u.tensor, &v);
      ck_assert_int_eq(v.outputs, 1);
      hr_value ref[1];
      uint8_t src[8] = {0}, ones[8], zero[8] = {0};
      memset(ones, 0xff, sizeof ones);
      if (r.u.tensor.dtype == RJ_BOOL) ones[0] = 1;
      hr_oracle_tensor(&r.u.tensor, &v, src, NULL, ref);
      rj_dtype res = ir_tensor_result(&r.u.tensor);
      double ae, re;
      ck_assert_msg(hr_compare(r.u.tensor.op, res, ref, o == 0 ? ones : zero, 0, &ae, &re),
                    "%s: the identity", json);
      ck_assert_msg(!hr_compare(r.u.tensor.op, res, ref, o == 0 ? zero : ones, 0, &ae, &re),
                    "%s: not the identity", json);
    }
  hr_value a = {.u = (uint64_t)INT64_MIN}; /* i8 max over nothing selected: -128 */
  hr_oracle_narrow(RJ_I8, &a);
  ck_assert_int_eq((int64_t)a.u, -128);
  a.u = UINT64_MAX;
  hr_oracle_narrow(RJ_U16, &a);
  ck_assert_int_eq(a.u, 65535);
  a.u = (uint64_t)-5;
  hr_oracle_narrow(RJ_I16, &a);
  ck_assert_int_eq((int64_t)a.u, -5);
  a.u = 0xf3;
  hr_oracle_narrow(RJ_U8, &a);
  ck_assert_int_eq(a.u, 0xf3);
  a.u = UINT64_MAX; /* 4 and 8 bytes, bool: as they were */
  hr_oracle_narrow(RJ_U32, &a);
  hr_oracle_narrow(RJ_BOOL, &a);
  ck_assert(a.u == UINT64_MAX);
}
END_TEST

int main(void) {
  ctx = rj_ctx_new();
  Suite *s = suite_create("harness_values");
  TCase *tc = tcase_create("values");
  tcase_add_test(tc, random_views);
  tcase_add_test(tc, ties_zeros_and_nans);
  tcase_add_test(tc, half_nans);
  tcase_add_test(tc, small_dtypes);
  tcase_add_test(tc, bool_and_empty);
  tcase_add_test(tc, empty_bitwise_small);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  rj_ctx_free(ctx);
  return failed ? 1 : 0;
}
