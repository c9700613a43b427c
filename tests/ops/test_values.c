/* argmax / argmin with "values": the extreme value beside its index, into a second destination
 * (no GPU needed: the request's field and its refusals, the kernel's third pointer and stores in
 * every variant that serves argmax, tensor_cluster included, PTX unchanged without it, and the
 * launch calls' checks; the GPU results are tests/tensor/test_gpu_tensor.c's "values" case and,
 * through rj_check, tests/ops/test_gpu_tensor_state.c's). */
#include "rjtest.h"

#include <stdint.h>

static const char *req_json(const char *op, const char *dtype, const char *shape_axes, int values) {
  return rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s%s}", op, dtype, shape_axes,
                 values ? ",\"values\":true" : "");
}

START_TEST(field_and_refusals) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rjt_parse(ctx, req_json("argmin", "f16", "\"shape\":[4,8],\"axes\":[1]", 1), &r);
  ck_assert_int_eq(r.u.tensor.values, 1);
  const char *canon = NULL;
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &canon), RJ_OK);
  ck_assert_msg(strstr(canon, "\"values\":true"), "%s", canon);
  rjt_parse(ctx, req_json("argmin", "f16", "\"shape\":[4,8],\"axes\":[1]", 0), &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &canon), RJ_OK);
  ck_assert_msg(!strstr(canon, "values"), "absent when false (keys unchanged): %s", canon);
  static const struct {
    const char *json, *want;
  } bad[] = {
      {"{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"f32\",\"shape\":[4],\"values\":true}",
       "values: applies only to op \"argmax\" or \"argmin\""},
      {"{\"kind\":\"tensor\",\"op\":\"argmax\",\"dtype\":\"f32\",\"shape\":[4],\"values\":1}",
       "values: expected true or false"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(rj_request_parse(ctx, bad[i].json, &r), RJ_EINVAL);
    ck_assert_msg(strstr(rj_errmsg(ctx), bad[i].want), "%s", rj_errmsg(ctx));
  }
  rjt_parse(ctx, req_json("argmax", "i32", "\"shape\":[4,8],\"axes\":[1]", 1), &r);
  r.u.tensor.values = 2;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "values: 2, expected 0 or 1"), "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

static int entry_params(const char *ptx) {
  const char *e = strstr(ptx, ".entry redjit_tensor(");
  ck_assert_ptr_nonnull(e);
  const char *end = strchr(e, ')');
  int n = 0;
  for (const char *p = strstr(e, ".param"); p && p < end; p = strstr(p + 1, ".param"))
    n++;
  return n;
}

/* One view and dtype: a third pointer and a store of the value's width (st) in the kernel of
 * variant, which without "values" is the plain argmax's, byte for byte. */
static void third_pointer(rj_ctx *ctx, const char *shape, const char *variant, const char *dt,
                          const char *st) {
  char *plain = strdup(rjt_ptx(ctx, req_json("argmax", dt, shape, 0), "sm_90"));
  const char *with = rjt_ptx(ctx, req_json("argmax", dt, shape, 1), "sm_90");
  int np = entry_params(plain);
  ck_assert_int_eq(entry_params(with), np + 1);
  ck_assert_msg(rjt_count(with, "st.global") > rjt_count(plain, "st.global"),
                "%s %s: no store of the values", shape, dt);
  ck_assert_msg(strstr(with, st), "%s %s: %s", shape, dt, st);
  rj_request r;
  rjt_parse(ctx, req_json("argmax", dt, shape, 1), &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_OK);
  ck_assert_msg(strcmp(rj_kernel_variant(k), variant) == 0, "%s %s: %s, expected %s", shape, dt,
                rj_kernel_variant(k), variant);
  free(plain);
}

/* Every variant that serves argmax (rows, cols, generic, cluster; constant and runtime-size
 * kernels): a third pointer and a store of the value's width; without "values" the kernel is the
 * plain argmax's, byte for byte. */
START_TEST(kernel_has_a_third_pointer) {
  rj_ctx *ctx = rj_ctx_new();
  static const struct {
    const char *shape, *variant;
  } views[] = {
      {"\"shape\":[64,1000],\"axes\":[1]", "tensor_rows"},
      {"\"shape\":[1000,64],\"axes\":[0]", "tensor_cols"},
      {"\"shape\":[12,34,56],\"axes\":[0,2]", "tensor_generic"},
      {"\"shape\":[1,1000003],\"axes\":[1]", "tensor_rows"},
      {"\"shape\":[100003,3],\"axes\":[0]", "tensor_cols"},
      {"\"shape\":[65536,128],\"axes\":[1],\"dynamic\":true", "tensor_rows"},
  };
  static const char *const dts[] = {"f32", "f16", "f64", "i64"};
  static const char *const st[] = {"st.global.b32", "st.global.b16", "st.global.b64",
                                   "st.global.b64"};
  /* tensor_cluster serves 16385 .. 65536 16-byte vectors: a 1-D size inside that range for each
   * element width (with a tail past the last full vector), forced so that a decline fails */
  static const char *const cluster[] = {
      "\"shape\":[262141],\"variant\":\"tensor_cluster\"",
      "\"shape\":[524283],\"variant\":\"tensor_cluster\"",
      "\"shape\":[131071],\"variant\":\"tensor_cluster\"",
      "\"shape\":[131071],\"variant\":\"tensor_cluster\"",
  };
  for (int d = 0; d < 4; d++) {
    for (size_t v = 0; v < sizeof views / sizeof views[0]; v++)
      third_pointer(ctx, views[v].shape, views[v].variant, dts[d], st[d]);
    third_pointer(ctx, cluster[d], "tensor_cluster", dts[d], st[d]);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* The launch calls check the flag against the call before touching a GPU. */
START_TEST(launch_calls_match_the_flag) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rjt_parse(ctx, req_json("argmax", "f32", "\"shape\":[64,1000],\"axes\":[1]", 1), &r);
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, 0x1000, 0x2000, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "values: the request writes the extreme values too"), "%s",
                rj_errmsg(ctx));
  ck_assert_int_eq(rj_reduce_values(ctx, &r, NULL, 0x1000, 0x2000, 0, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "values: NULL device pointer"), "%s", rj_errmsg(ctx));
  rjt_parse(ctx, req_json("argmax", "f32", "\"shape\":[64,1000],\"axes\":[1]", 0), &r);
  ck_assert_int_eq(rj_reduce_values(ctx, &r, NULL, 0x1000, 0x2000, 0x3000, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "values: the request does not ask for them"), "%s",
                rj_errmsg(ctx));
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_OK);
  ck_assert_int_eq(rj_tensor_launch_values(ctx, k, 0, 0x1000, 0x2000, 0x3000, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "values: the request does not ask for them"), "%s",
                rj_errmsg(ctx));
  rjt_parse(ctx, req_json("argmax", "f32", "\"shape\":[64,1000],\"axes\":[1]", 1), &r);
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_OK);
  ck_assert_int_eq(rj_tensor_launch(ctx, k, 0, 0x1000, 0x2000, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "values: the request writes the extreme values too"), "%s",
                rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("values");
  TCase *tc = tcase_create("values");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, field_and_refusals);
  tcase_add_test(tc, kernel_has_a_third_pointer);
  tcase_add_test(tc, launch_calls_match_the_flag);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
