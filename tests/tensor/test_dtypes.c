/* The tensor-only dtypes i8 u8 i16 u16 bool e4m3 e5m2 with no GPU: which ops take them, the
 * other kinds' refusals naming dtype, the canonical round trip, the result dtypes (NumPy's),
 * every tensor variant's PTX for each (constant and runtime-size kernels, sm_80 and sm_90) with
 * 16-byte loads where the variant vectorises, zero-size dims and axes [] (nothing reduced). */
#include "rjtest.h"

#include <stdbool.h>

static const char *const dts[] = {"i8", "u8", "i16", "u16", "bool", "e4m3", "e5m2"};
#define NDT 7
static const char *const ops[] = {"sum",    "max",    "min",  "prod", "and", "or",       "xor",
                                  "argmax", "argmin", "mean", "var",  "std", "logsumexp"};
#define NOP 13

/* Whether op o takes dtype d (docs/TENSOR.md "Dtypes"). */
static bool takes(int o, int d) {
  bool fp8 = d >= 5;
  const char *op = ops[o];
  if (!strcmp(op, "prod") || !strcmp(op, "and") || !strcmp(op, "or") || !strcmp(op, "xor"))
    return !fp8;
  if (!strcmp(op, "logsumexp")) return fp8;
  return true;
}

static rj_status parse(rj_ctx *ctx, const char *json) {
  rj_request r;
  return rj_request_parse(ctx, json, &r);
}

START_TEST(ops_take) {
  rj_ctx *ctx = rj_ctx_new();
  for (int o = 0; o < NOP; o++)
    for (int d = 0; d < NDT; d++) {
      const char *j = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[4,5],"
                              "\"axes\":[1]}",
                              ops[o], dts[d]);
      rj_status s = parse(ctx, j);
      ck_assert_msg((s == RJ_OK) == takes(o, d), "%s: %s (%s)", j, rj_status_name(s),
                    rj_errmsg(ctx));
      if (s) ck_assert_msg(strstr(rj_errmsg(ctx), "op: \""), "%s: %s", j, rj_errmsg(ctx));
    }
  rj_ctx_free(ctx);
}
END_TEST

typedef struct bad_case {
  const char *json, *msg;
} bad_case;
static const bad_case bad[] = {
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"i8\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\","
     "\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},\"dst\":{\"mem\":\"local\","
     "\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}}",
     "dtype: i8 applies to kind tensor only, not kind tile"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"e4m3\",\"log2_size\":5,"
     "\"threads\":32,\"blocks\":1}",
     "dtype: e4m3 applies to kind tensor only, not kind subgroup"},
    {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"u8\",\"shape\":[4],\"acc_dtype\":\"f64\"}",
     "acc_dtype: \"f64\" applies to float dtypes, not u8"},
    {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"e5m2\",\"shape\":[4],\"acc_dtype\":\"f64\"}",
     "acc_dtype: \"f64\" applies to float dtypes, not e5m2"},
    {"{\"kind\":\"tensor\",\"op\":\"prod\",\"dtype\":\"e4m3\",\"shape\":[4]}",
     "op: \"prod\" takes f16 bf16 f32 f64 i32 u32 i64 u64 dtypes, not e4m3 (kind tensor also: i8 "
     "u8 i16 u16 bool)"},
    {"{\"kind\":\"tensor\",\"op\":\"logsumexp\",\"dtype\":\"bool\",\"shape\":[4]}",
     "not bool (kind tensor also: e4m3 e5m2)"},
    {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"i4\",\"shape\":[4]}", "dtype: unknown value"},
};

START_TEST(refused) {
  rj_ctx *ctx = rj_ctx_new();
  rj_status s = parse(ctx, bad[_i].json);
  ck_assert_msg(s == RJ_EINVAL, "%s: %s", bad[_i].json, rj_status_name(s));
  ck_assert_msg(strstr(rj_errmsg(ctx), bad[_i].msg), "%s: \"%s\" lacks \"%s\"", bad[_i].json,
                rj_errmsg(ctx), bad[_i].msg);
  rj_ctx_free(ctx);
}
END_TEST

/* The C side of the treduce refusal: a group is not needed to validate the request. */
START_TEST(treduce_refused) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_request_init(&r, RJ_KIND_TREDUCE);
  r.u.treduce.op = RJ_OP_SUM;
  r.u.treduce.dtype = RJ_BOOL;
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "dtype: bool applies to kind tensor only, not kind treduce"),
                "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

/* The canonical JSON names the dtype, and parses back to the same canonical text. */
START_TEST(canonical) {
  rj_ctx *ctx = rj_ctx_new();
  for (int d = 0; d < NDT; d++) {
    rj_request r, r2;
    rjt_parse(ctx,
              rjt_fmt("{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"%s\",\"shape\":[3,9],"
                      "\"axes\":[0]}",
                      dts[d]),
              &r);
    ck_assert_int_eq((int)r.u.tensor.dtype, RJ_I8 + d);
    const char *c = NULL;
    ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
    char first[4096];
    snprintf(first, sizeof first, "%s", c);
    ck_assert_msg(strstr(first, rjt_fmt("\"dtype\":\"%s\"", dts[d])), "%s", first);
    rjt_parse(ctx, first, &r2);
    ck_assert_int_eq(rj_request_canonical(ctx, &r2, &c), RJ_OK);
    ck_assert_str_eq(first, c);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* The result dtype each (op, dtype) stores, seen in the PTX's stores: 1, 2, 4 or 8 bytes (an
 * 8-byte integer is stored as two 4-byte halves, the second at +4). */
typedef struct res_case {
  const char *op, *dt, *store;
} res_case;
static const res_case res[] = {
    {"sum", "i8", "+4]"},
    {"sum", "bool", "+4]"},
    {"prod", "u16", "+4]"},
    {"max", "i8", "st.global.b8"},
    {"min", "u16", "st.global.b16"},
    {"xor", "u8", "st.global.b8"},
    {"argmax", "i16", "st.global.b64"},
    {"mean", "u8", "st.global.b64"},
    {"var", "i16", "st.global.b64"},
    {"sum", "e4m3", "st.global.b32"},
    {"mean", "e5m2", "st.global.b32"},
    {"max", "e4m3", "st.global.b8"},
    {"logsumexp", "e5m2", "st.global.b32"},
};

START_TEST(result_dtypes) {
  rj_ctx *ctx = rj_ctx_new();
  const res_case *c = &res[_i];
  const char *j = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[5,7,9],"
                          "\"axes\":[0,2]}",
                          c->op, c->dt);
  char json[512];
  snprintf(json, sizeof json, "%s", j);
  const char *ptx = rjt_ptx(ctx, json, "sm_90");
  ck_assert_msg(strstr(ptx, c->store), "%s: no %s", json, c->store);
  rj_ctx_free(ctx);
}
END_TEST

/* views and the variant each is forced onto */
static const char *const views[][2] = {
    {"\"shape\":[4099,1000],\"axes\":[1]", "tensor_rows"},
    {"\"shape\":[3,1000003],\"axes\":[1]", "tensor_rows"},
    {"\"shape\":[1000,4096],\"axes\":[0]", "tensor_cols"},
    {"\"shape\":[5,7,11],\"axes\":[0,2]", "tensor_generic"},
    {NULL, "tensor_cluster"}, /* 1-D of 40000 16-byte vectors and 3: the dtype's */
};

/* every dtype x op x variant compiles on sm_80 and sm_90, constant and runtime-size */
START_TEST(ptx_every_variant) {
  rj_ctx *ctx = rj_ctx_new();
  for (int d = 0; d < NDT; d++)
    for (int o = 0; o < NOP; o++) {
      if (!takes(o, d)) continue;
      for (int dyn = 0; dyn < 2; dyn++) {
        if (dyn && !views[_i][0]) continue;
        char view[64], json[512];
        int vec = d == 2 || d == 3 ? 8 : 16;
        snprintf(view, sizeof view, "\"shape\":[%d]", 40000 * vec + 3);
        snprintf(json, sizeof json,
                 "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"variant\":\"%s\","
                 "\"dynamic\":%s}",
                 ops[o], dts[d], views[_i][0] ? views[_i][0] : view, views[_i][1],
                 dyn ? "true" : "false");
        const char *t =
            strcmp(views[_i][1], "tensor_cluster") ? (o % 2 ? "sm_80" : "sm_90") : "sm_90";
        const char *ptx = rjt_ptx(ctx, json, t);
        ck_assert_msg(strstr(ptx, ".entry redjit_tensor"), "%s", json);
        /* (tensor_cols: a state of 1- or 2-byte elements is 8 or 16 columns of 16- or 24-byte
         * states per thread, past its 32 KiB of shared memory: scalar columns) */
        bool state = o >= 7 && o <= 12 && o != 9;
        bool cols1 = !strcmp(views[_i][1], "tensor_cols") && state;
        /* (tensor_rows and tensor_cols read 1-byte dtypes in 8-byte vectors: 8 slots a thread) */
        bool narrow = vec == 16 && (!strcmp(views[_i][1], "tensor_rows") ||
                                    !strcmp(views[_i][1], "tensor_cols"));
        if (strcmp(views[_i][1], "tensor_generic") && !cols1 && narrow)
          ck_assert_msg(strstr(ptx, "ld.global.nc.v2.b32") && !strstr(ptx, "ld.global.nc.v4.b32"),
                        "%s: no 8-byte load, or a 16-byte one", json);
        else if (strcmp(views[_i][1], "tensor_generic") && !cols1)
          ck_assert_msg(strstr(ptx, "ld.global.nc.v4.b32") || strstr(ptx, "ld.global.nc.v2.b64") ||
                            strstr(ptx, "ld.global.nc.v4.u32"),
                        "%s: no 16-byte load", json);
      }
    }
  rj_ctx_free(ctx);
}
END_TEST

/* zero-size dims and axes []: valid, canonical round trip, a kernel that reads nothing (the
 * generic one: the identity into each output); max / min / argmax / argmin of an empty reduction
 * with outputs refused naming shape (NumPy raises); of no outputs accepted */
START_TEST(empty_and_no_axes) {
  rj_ctx *ctx = rj_ctx_new();
  static const char *const ok[] = {
      "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,0],\"axes\":[1]",
      "\"op\":\"mean\",\"dtype\":\"i8\",\"shape\":[0],\"dynamic\":true",
      "\"op\":\"var\",\"dtype\":\"e4m3\",\"shape\":[3,0,5],\"axes\":[0,1]",
      "\"op\":\"max\",\"dtype\":\"f32\",\"shape\":[0,4],\"axes\":[1]",
      "\"op\":\"argmax\",\"dtype\":\"u8\",\"shape\":[0,0],\"axes\":[0]",
      "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[7,0],\"axes\":[]",
  };
  for (int i = 0; i < 6; i++) {
    char json[256];
    snprintf(json, sizeof json, "{\"kind\":\"tensor\",%s}", ok[i]);
    rj_request r, r2;
    rjt_parse(ctx, json, &r);
    const char *c = NULL;
    ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
    char first[4096];
    snprintf(first, sizeof first, "%s", c);
    rjt_parse(ctx, first, &r2);
    ck_assert_int_eq(rj_request_canonical(ctx, &r2, &c), RJ_OK);
    ck_assert_str_eq(first, c);
    const char *ptx = rjt_ptx(ctx, json, "sm_90");
    ck_assert_msg(strstr(ptx, "tensor_generic") && !strstr(ptx, "ld.global"), "%s", json);
  }
  static const char *const no[][2] = {
      {"\"op\":\"max\",\"dtype\":\"f32\",\"shape\":[4,0],\"axes\":[1]",
       "shape[1]: 0 along a reduced"},
      {"\"op\":\"argmin\",\"dtype\":\"i16\",\"shape\":[0]", "op \"argmin\" of an empty reduction"},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,-1]",
       "shape[1]: every dim must be at least 0"},
  };
  for (int i = 0; i < 3; i++) {
    rj_request r;
    ck_assert_int_eq(rj_request_parse(ctx, rjt_fmt("{\"kind\":\"tensor\",%s}", no[i][0]), &r),
                     RJ_EINVAL);
    ck_assert_msg(strstr(rj_errmsg(ctx), no[i][1]), "%s", rj_errmsg(ctx));
  }
  /* axes []: a reduction of one element per output (the rows kernel of rows of 1) */
  const char *ptx = rjt_ptx(ctx,
                            "{\"kind\":\"tensor\",\"op\":\"var\",\"dtype\":\"i8\",\"shape\":[37,"
                            "41],\"axes\":[]}",
                            "sm_90");
  ck_assert_msg(strstr(ptx, "tensor_rows"), "axes []: not the rows kernel");
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("dtypes");
  TCase *tc = tcase_create("cpu");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, ops_take);
  tcase_add_loop_test(tc, refused, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, treduce_refused);
  tcase_add_test(tc, canonical);
  tcase_add_loop_test(tc, result_dtypes, 0, (int)(sizeof res / sizeof res[0]));
  tcase_add_test(tc, empty_and_no_axes);
  tcase_add_loop_test(tc, ptx_every_variant, 0, (int)(sizeof views / sizeof views[0]));
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
