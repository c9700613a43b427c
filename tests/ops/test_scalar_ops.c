/* The scalar ops prod, and, or, xor and mean without a GPU: the instructions each op x kind
 * emits (against the same request's sum, so that index math does not count), which variants
 * serve them and why the others decline, and the requests refused, naming the field.  Their
 * results on the GPU: test_gpu_scalar_ops.c. */
#include "rjtest.h"

#define TENSOR "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s}"
#define ROWS "\"shape\":[64,1000],\"axes\":[1]"
#define COLS "\"shape\":[1000,64],\"axes\":[0]"
#define GENERIC "\"shape\":[5,7,11],\"axes\":[0,2]"
#define WARP_ALL                                                                                    \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\","                           \
  "\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}}," \
  "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}%s}"
#define SHARED                                                                                     \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"cta\",\"threads\":64,"            \
  "\"src\":{\"mem\":\"shared\",\"shape\":[16,40]},\"dst\":{\"mem\":\"shared\",\"shape\":[16]}%s}"
#define TREDUCE                                                                                    \
  "{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":4,\"shape\":[512,33]%s}"

static rj_ctx *ctx;
static void setup(void) {
  ctx = rj_ctx_new();
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

/* PTX of a request built from fmt (op, dtype, rest), copied (rjt_fmt's buffer is reused) */
static char *ptx(const char *fmt, const char *op, const char *dt, const char *rest) {
  return strdup(rjt_ptx(ctx, rjt_fmt(fmt, op, dt, rest), "sm_90"));
}

/* needle occurs more often in op's PTX than in sum's (or max's, for the bitwise ops' dtypes) */
static void more(const char *fmt, const char *op, const char *dt, const char *rest,
                 const char *needle) {
  char *a = ptx(fmt, op, dt, rest), *b = ptx(fmt, "sum", dt, rest);
  ck_assert_msg(rjt_count(a, needle) > rjt_count(b, needle), "%s %s %s: %d \"%s\" (sum: %d)", op,
                dt, rest, rjt_count(a, needle), needle, rjt_count(b, needle));
  free(a);
  free(b);
}

START_TEST(prod_instructions) {
  static const char *const views[] = {ROWS, COLS, GENERIC, "\"shape\":[200000]"};
  for (int v = 0; v < 4; v++) {
    more(TENSOR, "prod", "f32", views[v], "mul.rn.f32");
    more(TENSOR, "prod", "f16", views[v], "mul.rn.f32"); /* f16 accumulates in f32 */
    more(TENSOR, "prod", "f64", views[v], "mul.rn.f64");
    more(TENSOR, "prod", "i32", views[v], "mul.lo.s32");
    more(TENSOR, "prod", "u64", views[v], "mul.lo.s64");
    char *p = ptx(TENSOR, "prod", "f32", views[v]);
    ck_assert_int_eq(rjt_count(p, "add.rn.f32"), 0); /* no sum's fold left */
    ck_assert_int_eq(rjt_count(p, "add.f32"), 0);
    free(p);
  }
  more(WARP_ALL, "prod", "f32", "", "mul.rn.f32");
  more(SHARED, "prod", "bf16", "", "mul.rn.f32");
  more(TREDUCE, "prod", "f32", "", "mul.rn.f32");
  more(TREDUCE, "prod", "i64", "", "mul.lo.s64");
  /* nan ignore: NaN inputs are replaced by 1 before the multiply (a select per input) */
  char *a = ptx(TENSOR, "prod", "f32", ROWS ",\"nan\":\"ignore\"");
  char *b = ptx(TENSOR, "prod", "f32", ROWS);
  ck_assert_int_gt(rjt_count(a, "selp.f32"), rjt_count(b, "selp.f32"));
  ck_assert_int_gt(rjt_count(a, "setp.nan.f32"), rjt_count(b, "setp.nan.f32"));
  free(a);
  free(b);
}
END_TEST

START_TEST(bitwise_instructions) {
  static const char *const ops[] = {"and", "or", "xor"};
  static const char *const views[] = {ROWS, COLS, GENERIC, "\"shape\":[200000]"};
  for (int o = 0; o < 3; o++) {
    char n32[16], n64[16];
    snprintf(n32, sizeof n32, "%s.b32", ops[o]);
    snprintf(n64, sizeof n64, "%s.b64", ops[o]);
    for (int v = 0; v < 4; v++) {
      more(TENSOR, ops[o], "i32", views[v], n32);
      more(TENSOR, ops[o], "u64", views[v], n64);
    }
    more(SHARED, ops[o], "u32", "", n32);
    more(TREDUCE, ops[o], "i32", "", n32);
    /* warp scope, whole warp, 32-bit: one redux.sync; 64-bit: the shuffle tree */
    char *p = ptx(WARP_ALL, ops[o], "u32", "");
    ck_assert_msg(rjt_count(p, rjt_fmt("redux.sync.%s.b32", ops[o])) == 1, "%s", p);
    ck_assert_int_eq(rjt_count(p, "shfl.sync"), 0);
    free(p);
    p = ptx(WARP_ALL, ops[o], "i64", "");
    ck_assert_int_eq(rjt_count(p, "redux.sync"), 0);
    ck_assert_int_eq(rjt_count(p, "shfl.sync.bfly.b32"), 10);
    ck_assert_int_ge(rjt_count(p, n64), 5);
    free(p);
  }
}
END_TEST

/* mean: the sum, then one correctly rounded division by the reduced length at the store: a
 * constant in constant kernels (1000 = 0f447A0000), the size parameter converted in runtime-size
 * ones; f16 divides in f32 and rounds once. */
START_TEST(mean_instructions) {
  char *p = ptx(TENSOR, "mean", "f32", ROWS);
  ck_assert_int_ge(rjt_count(p, "div.rn.f32"), 1);
  ck_assert_int_ge(rjt_count(p, "0f447A0000"), 1);
  ck_assert_int_ge(rjt_count(p, "add.rn.f32") + rjt_count(p, "add.f32"), 1);
  free(p);
  p = ptx(TENSOR, "mean", "f16", COLS);
  ck_assert_int_ge(rjt_count(p, "div.rn.f32"), 1);
  ck_assert_int_ge(rjt_count(p, "cvt.rn.f16.f32"), 1);
  free(p);
  p = ptx(TENSOR, "mean", "f64", GENERIC);
  ck_assert_int_ge(rjt_count(p, "div.rn.f64"), 1);
  ck_assert_int_ge(rjt_count(p, "0d404B800000000000"), 1); /* 5 * 11 = 55 */
  free(p);
  p = ptx(TENSOR, "mean", "f32", ROWS ",\"dynamic\":true");
  ck_assert_int_ge(rjt_count(p, "div.rn.f32"), 1);
  ck_assert_int_ge(rjt_count(p, "cvt.rn.f32.u64"), 1);
  free(p);
  p = ptx(TENSOR, "mean", "bf16", COLS ",\"dynamic\":true");
  ck_assert_int_ge(rjt_count(p, "div.rn.f32"), 1);
  ck_assert_int_ge(rjt_count(p, "cvt.rn.f32.u64"), 1);
  free(p);
  p = ptx(TENSOR, "mean", "f32", "\"shape\":[200000]"); /* tensor_cluster */
  ck_assert_int_ge(rjt_count(p, "div.rn.f32"), 1);
  free(p);
  p = ptx(SHARED, "mean", "f32", ""); /* rows of 40 */
  ck_assert_int_ge(rjt_count(p, "div.rn.f32"), 1);
  ck_assert_int_ge(rjt_count(p, "0f42200000"), 1);
  free(p);
  p = ptx(WARP_ALL, "mean", "f64", ""); /* 32 lanes: a power of two, LLVM multiplies by 1/32 */
  ck_assert_int_eq(rjt_count(p, "div.rn.f64"), 0);
  ck_assert_int_eq(rjt_count(p, ", 0d3FA0000000000000;"), 1);
  ck_assert_int_ge(rjt_count(p, "mul.rn.f64"), 1);
  free(p);
  /* sum's kernels keep no division */
  p = ptx(TENSOR, "sum", "f32", ROWS);
  ck_assert_int_eq(rjt_count(p, "div.rn"), 0);
  free(p);
}
END_TEST

static const char *explain(const char *json, const char *target, rj_status want) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = target;
  const char *text = NULL;
  rj_status s = rj_explain(ctx, &r, &o, &text);
  ck_assert_msg(s == want, "explain: %s (%s)\n  %s", rj_status_name(s), rj_errmsg(ctx), json);
  ck_assert_ptr_nonnull(text);
  return text;
}

#define HAS(text, needle) ck_assert_msg(strstr(text, needle), "no \"%s\" in:\n%s", needle, text)

/* who serves what: explain names the variants that decline an op and why */
START_TEST(dispatch) {
  const char *t = explain(rjt_fmt(TENSOR, "prod", "f32", ROWS), "sm_90", RJ_OK);
  HAS(t, "tensor_rows prio=30 chosen");
  t = explain(rjt_fmt(TENSOR, "mean", "f32", COLS), "sm_90", RJ_OK);
  HAS(t, "tensor_cols prio=30 chosen");
  t = explain(rjt_fmt(TENSOR, "xor", "i64", GENERIC), "sm_90", RJ_OK);
  HAS(t, "tensor_generic prio=5 chosen");
  t = explain(rjt_fmt(TENSOR, "and", "u32", "\"shape\":[200000]"), "sm_90", RJ_OK);
  HAS(t, "tensor_cluster prio=35 chosen");
  /* redux: and / or / xor of i32 / u32 over the whole warp; prod and 64-bit go to local */
  t = explain(rjt_fmt(WARP_ALL, "or", "i32", ""), "sm_90", RJ_OK);
  HAS(t, "redux prio=15 chosen");
  t = explain(rjt_fmt(WARP_ALL, "or", "u64", ""), "sm_90", RJ_OK);
  HAS(t, "redux prio=15 rejected: u64 or: redux.sync does and, or, xor of i32/u32 only");
  HAS(t, "local prio=10 chosen");
  t = explain(rjt_fmt(WARP_ALL, "prod", "i32", ""), "sm_90", RJ_OK);
  HAS(t, "redux prio=15 rejected: does not serve op \"prod\"");
  HAS(t, "local prio=10 chosen");
  /* sm100_packed: packed adds and 3-input max / min are sum / max / min only */
  static const char *const ops[] = {"prod", "mean"};
  for (int o = 0; o < 2; o++) {
    t = explain(rjt_fmt("{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"f32\",\"scope\":\"thread\","
                        "\"src\":{\"mem\":\"local\",\"shape\":[64]},\"dst\":{\"mem\":\"local\","
                        "\"shape\":[1]}}",
                        ops[o]),
                "sm_100a", RJ_OK);
    HAS(t, rjt_fmt("sm100_packed prio=20 rejected: does not serve op \"%s\"", ops[o]));
    HAS(t, "local prio=10 chosen");
  }
  /* treduce: prod / and / or / xor / mean on the peer kernel and the ring (forced only) */
  t = explain(rjt_fmt(TREDUCE, "xor", "u32", ""), "sm_90", RJ_OK);
  HAS(t, "treduce prio=10 chosen");
  t = explain(rjt_fmt(TREDUCE, "prod", "f32", ",\"variant\":\"treduce_ring\",\"tile\":[1,4]"),
              "sm_90", RJ_OK);
  HAS(t, "treduce_ring prio=5 chosen");
  t = explain(rjt_fmt(TREDUCE, "mean", "f32", ""), "sm_90", RJ_OK);
  HAS(t, "treduce prio=10 chosen");
  t = explain(rjt_fmt(TREDUCE, "mean", "f32", ",\"variant\":\"treduce_ring\",\"tile\":[1,4]"),
              "sm_90", RJ_OK);
  HAS(t, "treduce_ring prio=5 chosen");
}
END_TEST

/* acc_dtype "f64": sum, prod and mean of f16 / bf16 / f32 fold in f64 on every tensor variant
 * (rows, cols, generic, cluster, runtime-size, accum, nan ignore) and round once at the store
 * (f32: cvt.rn.f32.f64; f16 / bf16: rounded to odd in f32 first); refused elsewhere, naming
 * acc_dtype; f64 inputs and "f32" of a narrower input are the defaults (same canonical text). */
START_TEST(acc_f64) {
  static const char *const views[] = {ROWS,
                                      COLS,
                                      GENERIC,
                                      "\"shape\":[200000]",
                                      ROWS ",\"dynamic\":true",
                                      COLS ",\"accum\":true",
                                      ROWS ",\"nan\":\"ignore\""};
  static const char *const ops[] = {"sum", "prod", "mean"};
  static const char *const fold[] = {"add.rn.f64", "mul.rn.f64", "add.rn.f64"};
  for (int v = 0; v < 7; v++)
    for (int o = 0; o < 3; o++) {
      if (o == 2 && v >= 5) continue; /* mean: no accum, no nan ignore */
      char rest[160];
      snprintf(rest, sizeof rest, "%s,\"acc_dtype\":\"f64\"", views[v]);
      char *w = ptx(TENSOR, ops[o], "f32", rest), *n = ptx(TENSOR, ops[o], "f32", views[v]);
      ck_assert_msg(rjt_count(w, fold[o]) >= 1 && rjt_count(n, fold[o]) == 0, "%s %s", ops[o],
                    rest);
      ck_assert_msg(rjt_count(w, "cvt.rn.f32.f64") >= 1, "%s %s: one rounding", ops[o], rest);
      free(w);
      free(n);
      w = ptx(TENSOR, ops[o], v % 2 ? "bf16" : "f16", rest);
      ck_assert_msg(rjt_count(w, fold[o]) >= 1 && rjt_count(w, "cvt.rz.f32.f64") >= 1, "%s %s",
                    ops[o], rest);
      free(w);
    }
  /* the default spelled out, and f64's own accumulator, are the requests without the field */
  static const char *const dts[] = {"f32", "bf16", "f64"};
  for (int i = 0; i < 3; i++) {
    rj_request r;
    const char *c;
    rjt_parse(ctx, rjt_fmt(TENSOR, "sum", dts[i], ROWS), &r);
    ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
    char *plain = strdup(c);
    rjt_parse(ctx,
              rjt_fmt(TENSOR, "sum", dts[i],
                      i < 2 ? ROWS ",\"acc_dtype\":\"f32\"" : ROWS ",\"acc_dtype\":\"f64\""),
              &r);
    ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
    ck_assert_str_eq(plain, c);
    free(plain);
  }
  rj_request r;
  const char *text;
  rjt_parse(ctx, rjt_fmt(TENSOR, "mean", "f16", ROWS ",\"acc_dtype\":\"f64\""), &r);
  ck_assert_int_eq(r.u.tensor.acc_f64, 1);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &text), RJ_OK);
  HAS(text, "\"acc_dtype\":\"f64\"");
}
END_TEST

/* refused, naming the field */
static void refused(const char *json, const char *msg) {
  rjt_refused(ctx, json, msg);
}

START_TEST(refusals) {
  refused(rjt_fmt(TENSOR, "mean", "f32", ROWS ",\"accum\":true"),
          "accum: op \"mean\" does not accumulate into the destination");
  refused(rjt_fmt(SHARED, "mean", "f16", ",\"accum\":true"), "accum: op \"mean\"");
  refused(rjt_fmt(TREDUCE, "mean", "f64", ",\"accum\":true"), "accum: op \"mean\"");
  refused(rjt_fmt(TENSOR, "mean", "f32", ROWS ",\"nan\":\"ignore\""),
          "nan: \"ignore\" with op \"mean\" is not served");
  refused(rjt_fmt(WARP_ALL, "mean", "bf16", ",\"nan\":\"ignore\""), "nan: \"ignore\"");
  refused(rjt_fmt(TENSOR, "and", "f32", ROWS), "op: \"and\" takes integer");
  refused(rjt_fmt(TENSOR, "mean", "i32", ROWS), "op: \"mean\" takes float");
  refused(rjt_fmt(TENSOR, "max", "f32", ROWS ",\"acc_dtype\":\"f64\""),
          "acc_dtype: \"f64\" applies to ops sum, prod and mean, not \"max\"");
  refused(rjt_fmt(TENSOR, "var", "f16", ROWS ",\"acc_dtype\":\"f64\""), "acc_dtype:");
  refused(rjt_fmt(TENSOR, "sum", "i32", ROWS ",\"acc_dtype\":\"f64\""),
          "acc_dtype: \"f64\" applies to float dtypes, not i32");
  refused(rjt_fmt(TENSOR, "sum", "f64", ROWS ",\"acc_dtype\":\"f32\""),
          "acc_dtype: \"f32\" is the accumulator of f16, bf16 and f32 inputs only");
  refused(rjt_fmt(TENSOR, "sum", "i32", ROWS ",\"acc_dtype\":\"f32\""), "acc_dtype: \"f32\"");
  refused(rjt_fmt(TENSOR, "sum", "f32", ROWS ",\"acc_dtype\":\"i64\""),
          "acc_dtype: unknown value \"i64\" (one of: f32 f64)");
  refused(rjt_fmt(TENSOR, "sum", "f32", ROWS ",\"acc_dtype\":\"f128\""),
          "acc_dtype: unknown value");
  refused(rjt_fmt(SHARED, "sum", "f32", ",\"acc_dtype\":\"f64\""), "acc_dtype");
  /* the C API's request, not only JSON */
  rj_request r;
  rj_request_init(&r, RJ_KIND_TENSOR);
  r.u.tensor.op = RJ_OP_MEAN;
  r.u.tensor.dtype = RJ_F32;
  r.u.tensor.ndim = 1;
  r.u.tensor.shape[0] = 8;
  r.u.tensor.naxes = 1;
  r.u.tensor.accum = 1;
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "accum: op \"mean\"");
  r.u.tensor.accum = 0;
  r.u.tensor.acc_f64 = 2;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "acc_dtype: acc_f64 2, expected 0 or 1");
  /* accepted: prod / and / or / xor with accum and prod with nan ignore */
  rjt_parse(ctx, rjt_fmt(TENSOR, "prod", "f32", ROWS ",\"accum\":true,\"nan\":\"ignore\""), &r);
  rjt_parse(ctx, rjt_fmt(TREDUCE, "xor", "u64", ",\"accum\":true"), &r);
}
END_TEST

int main(void) {
  Suite *s = suite_create("scalar_ops");
  TCase *tc = tcase_create("scalar_ops");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, prod_instructions);
  tcase_add_test(tc, bitwise_instructions);
  tcase_add_test(tc, mean_instructions);
  tcase_add_test(tc, dispatch);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, acc_f64);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
