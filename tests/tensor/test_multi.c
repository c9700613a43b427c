/* List requests ("list": many 1-D tensors in one launch, rj_reduce_multi) with no GPU: the
 * refusals naming their field, the canonical round trip, dispatch (tensor_multi alone takes
 * lists, and declines every other request), one kernel per count class whatever the count, the
 * PTX of every op and dtype on sm_80, sm_90a and sm_100a (no float atomics, the table's loads),
 * ptxas when installed, explain, and rj_reduce_multi's argument errors. */
#include "rjtest.h"

#define LIST(op, dt, rest) "{\"kind\":\"tensor\",\"op\":\"" op "\",\"dtype\":\"" dt "\"" rest "}"

typedef struct bad_case {
  const char *json, *msg;
} bad_case;
static const bad_case bad[] = {
    {LIST("sum", "f32", ",\"list\":{\"count\":0}"), "list.count: 0 is out of range"},
    {LIST("sum", "f32", ",\"list\":{\"count\":10241}"), "list.count: 10241 is outside 1..10240"},
    {LIST("sum", "f32", ",\"list\":{}"), "list.count: required field is missing"},
    {LIST("sum", "f32", ",\"list\":{\"count\":3,\"rows\":2}"), "list.rows: unknown field"},
    {LIST("sum", "f32", ",\"list\":{\"count\":3,\"total\":1}"),
     "list.total: expected true or false"},
    {LIST("sum", "f32", ",\"list\":[3]"), "list: expected an object"},
    {LIST("sum", "f32", ",\"list\":{\"count\":3},\"shape\":[4]"), "shape: not with \"list\""},
    {LIST("sum", "f32", ",\"list\":{\"count\":3},\"axes\":[0]"), "axes: not with \"list\""},
    {LIST("argmax", "f32", ",\"list\":{\"count\":3}"), "op: \"argmax\" is not served over a list"},
    {LIST("var", "f32", ",\"list\":{\"count\":3}"), "op: \"var\" is not served over a list"},
    {LIST("mean", "f32", ",\"list\":{\"count\":3,\"total\":true}"), "list.total: not with op mean"},
    {LIST("sum", "f32", ",\"list\":{\"count\":3},\"accum\":true"), "accum: not with \"list\""},
    {LIST("sum", "f32", ",\"list\":{\"count\":3},\"dynamic\":true"), "dynamic: not with \"list\""},
    {LIST("dot", "f32", ",\"list\":{\"count\":3},\"others\":[{\"dtype\":\"f32\"}]"),
     "others: a list takes one input per tensor"},
    {LIST("sumsq", "i32", ",\"list\":{\"count\":3}"), "map: \"square\" applies to float dtypes"},
};

START_TEST(refused) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_status s = rj_request_parse(ctx, bad[_i].json, &r);
  ck_assert_msg(s == RJ_EINVAL, "%s: %s", bad[_i].json, rj_status_name(s));
  ck_assert_msg(strstr(rj_errmsg(ctx), bad[_i].msg), "%s: \"%s\" lacks \"%s\"", bad[_i].json,
                rj_errmsg(ctx), bad[_i].msg);
  rj_ctx_free(ctx);
}
END_TEST

/* C-built requests: validation names the field as parsing does */
START_TEST(refused_in_c) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rjt_parse(ctx, LIST("sum", "f32", ",\"list\":{\"count\":3}"), &r);
  r.u.tensor.list_count = 20000;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "list.count: 20000 is outside"));
  r.u.tensor.list_count = 3;
  r.u.tensor.list_total = 2;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "list.total: 2"));
  r.u.tensor.list_total = 1;
  r.u.tensor.ndim = 1;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "shape: not with \"list\""));
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(canonical) {
  static const char *const in[] = {
      LIST("sum", "f32", ",\"list\":{\"count\":150}"),
      LIST("norm", "bf16", ",\"list\":{\"count\":2000,\"total\":true}"),
      LIST("amax", "f16", ",\"list\":{\"count\":1,\"total\":true},\"nan\":\"ignore\""),
      LIST("mean", "f64", ",\"list\":{\"count\":10000}"),
  };
  static const char *const want[] = {
      "\"list\":{\"count\":150,\"total\":false}",
      "\"list\":{\"count\":2000,\"total\":true}",
      "\"map\":\"abs\"",
      "\"list\":{\"count\":10000,\"total\":false}",
  };
  rj_ctx *ctx = rj_ctx_new();
  for (int i = 0; i < 4; i++) {
    rj_request r, r2;
    rjt_parse(ctx, in[i], &r);
    const char *c1 = NULL, *c2 = NULL;
    ck_assert_int_eq(rj_request_canonical(ctx, &r, &c1), RJ_OK);
    char first[1024];
    snprintf(first, sizeof first, "%s", c1);
    ck_assert_msg(strstr(first, want[i]), "%s lacks %s", first, want[i]);
    ck_assert_msg(!strstr(first, "\"shape\"") && !strstr(first, "\"axes\""), "%s", first);
    rjt_parse(ctx, first, &r2);
    ck_assert_int_eq(rj_request_canonical(ctx, &r2, &c2), RJ_OK);
    ck_assert_str_eq(first, c2);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* tensor_multi takes lists and nothing else; the others decline lists */
START_TEST(dispatch) {
  rj_ctx *ctx = rj_ctx_new();
  rj_options opt;
  rj_options_init(&opt);
  opt.target = "sm_90a";
  rj_request r;
  const char *text = NULL;
  rjt_parse(ctx, LIST("norm", "f32", ",\"list\":{\"count\":150,\"total\":true}"), &r);
  ck_assert_int_eq(rj_explain(ctx, &r, &opt, &text), RJ_OK);
  ck_assert_msg(strstr(text, "tensor_multi prio=25 chosen (list: count class 256"), "%s", text);
  ck_assert_msg(strstr(text, "tensor_rows prio=30 rejected: a list request"), "%s", text);
  ck_assert_msg(strstr(text, "fused: map square of src (f32); sum; epilogue sqrt"), "%s", text);
  rjt_parse(
      ctx,
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,6,8],\"axes\":[0,2]}",
      &r); /* a generic view: every tensor variant is asked */
  ck_assert_int_eq(rj_explain(ctx, &r, &opt, &text), RJ_OK);
  ck_assert_msg(strstr(text, "tensor_multi prio=25 rejected: serves list requests only"), "%s",
                text);
  rjt_parse(ctx,
            "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096],"
            "\"variant\":\"tensor_multi\"}",
            &r);
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &opt, &k), RJ_ENOVARIANT);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "serves list requests only"));
  rj_ctx_free(ctx);
}
END_TEST

/* one kernel per count class (256, 2048, 10240), not per count */
START_TEST(count_classes) {
  rj_ctx *ctx = rj_ctx_new();
  rj_options opt;
  rj_options_init(&opt);
  opt.target = "sm_90a";
  static const int counts[] = {1, 150, 256, 257, 2000, 2048, 2049, 10000, 10240};
  for (int i = 0; i < 9; i++) {
    rj_request r;
    rjt_parse(ctx,
              rjt_fmt(LIST("sumsq", "f32", ",\"list\":{\"count\":%d,\"total\":true}"), counts[i]),
              &r);
    rj_kernel *k = NULL;
    ck_assert_int_eq(rj_compile(ctx, &r, &opt, &k), RJ_OK);
    rj_kernel_release(ctx, k);
  }
  ck_assert_int_eq(rjt_made(ctx), 3);
  rj_ctx_free(ctx);
}
END_TEST

static const char *const dts[] = {"f32", "f16", "bf16", "f64"};
static const char *const ops[] = {"sum", "max", "min", "sumsq", "norm", "amax", "mean", "prod"};
static const char *const targets[] = {"sm_80", "sm_90a", "sm_100a"};

/* every op and dtype on three targets: the kernel's shape in its PTX */
START_TEST(ptx_every_op) {
  rj_ctx *ctx = rj_ctx_new();
  for (int d = 0; d < 4; d++)
    for (int o = 0; o < 8; o++) {
      int total = strcmp(ops[o], "mean") != 0;
      const char *j = rjt_fmt(LIST("%s", "%s", ",\"list\":{\"count\":%d,\"total\":%s}"), ops[o],
                              dts[d], 100 + 1000 * o, total ? "true" : "false");
      const char *ptx = rjt_ptx(ctx, j, targets[_i]);
      ck_assert_msg(strstr(ptx, ".entry redjit_tensor"), "%s", j);
      ck_assert_msg(!strstr(ptx, "atom.global.add.f"), "float atomics: %s", j);
      ck_assert_msg(strstr(ptx, "atom.global.add.u32") || strstr(ptx, "atom.global.add.s32"),
                    "no ticket counter: %s", j);
      ck_assert_msg(strstr(ptx, "shfl.sync.up.b32"), "no prefix scan: %s", j);
      ck_assert_msg(strstr(ptx, "bar.sync"), "%s", j);
    }
  rj_ctx_free(ctx);
}
END_TEST

/* ptxas accepts them without spills (when the CUDA toolkit is installed) */
START_TEST(ptxas_clean) {
  const char *ptxas = "/usr/local/cuda/bin/ptxas";
  FILE *f = fopen(ptxas, "r");
  if (!f) return;
  fclose(f);
  rj_ctx *ctx = rj_ctx_new();
  for (int d = 0; d < 4; d++) {
    const char *j =
        rjt_fmt(LIST("norm", "%s", ",\"list\":{\"count\":10000,\"total\":true}"), dts[d]);
    const char *ptx = rjt_ptx_raw(ctx, j, targets[_i]);
    char path[] = "/tmp/rj_multi_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *w = fdopen(fd, "w");
    fputs(ptx, w);
    fclose(w);
    char cmd[512], out[4096] = {0};
    snprintf(cmd, sizeof cmd, "%s -arch=%s -v %s -o /dev/null 2>&1", ptxas, targets[_i], path);
    FILE *p = popen(cmd, "r");
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int rc = pclose(p);
    unlink(path);
    ck_assert_msg(rc == 0, "%s: %s", j, out);
    ck_assert_msg(strstr(out, " 0 bytes spill stores"), "%s spills: %s", j, out);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* rj_reduce_multi's argument errors name the argument (no GPU needed: checked first) */
START_TEST(call_errors) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rjt_parse(ctx, LIST("sum", "f32", ",\"list\":{\"count\":3}"), &r);
  ck_assert_int_eq(rj_reduce_multi(ctx, &r, NULL, 0, 3, 64, 0, NULL), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "table: NULL"));
  ck_assert_int_eq(rj_reduce_multi(ctx, &r, NULL, 68, 3, 64, 0, NULL), RJ_EINVAL);
  ck_assert_ptr_nonnull(
      strstr(rj_errmsg(ctx), "table: 0x44 is not aligned to its 8-byte fields (int64)"));
  ck_assert_int_eq(rj_reduce_multi(ctx, &r, NULL, 64, 4, 64, 0, NULL), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "n: 4 tensors, the request's list.count is 3"));
  ck_assert_int_eq(rj_reduce_multi(ctx, &r, NULL, 64, 3, 64, 128, NULL), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "total: the request has no total"));
  ck_assert_int_eq(rj_reduce_multi(ctx, &r, NULL, 64, 3, 0, 0, NULL), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "dst: NULL"));
  rjt_parse(ctx, "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4]}", &r);
  ck_assert_int_eq(rj_reduce_multi(ctx, &r, NULL, 64, 3, 64, 0, NULL), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "list: rj_reduce_multi takes"));
  rjt_parse(ctx, LIST("sum", "f32", ",\"list\":{\"count\":3}"), &r);
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, 64, 64, NULL), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "list: a list request launches through"));
  /* dst and total aligned to the result's dtype (checked after the compile, before the GPU) */
  rjt_parse(ctx, LIST("sum", "f32", ",\"list\":{\"count\":3,\"total\":true}"), &r);
  ck_assert_int_eq(rj_reduce_multi(ctx, &r, NULL, 64, 3, 66, 0, NULL), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "dst: 0x42 is not aligned to its 4-byte dtype f32"));
  ck_assert_int_eq(rj_reduce_multi(ctx, &r, NULL, 64, 3, 0, 129, NULL), RJ_EINVAL);
  ck_assert_ptr_nonnull(
      strstr(rj_errmsg(ctx), "total: 0x81 is not aligned to its 4-byte dtype f32"));
  rj_ctx_free(ctx);
}
END_TEST

/* the CLI: ptx and explain with no GPU */
START_TEST(cli) {
  char out[1024];
  const char *req = "'{\"kind\":\"tensor\",\"op\":\"norm\",\"dtype\":\"bf16\","
                    "\"list\":{\"count\":2000,\"total\":true}}'";
  ck_assert_int_eq(rjt_cli(rjt_fmt("ptx --target sm_90a %s", req), out, sizeof out), 0);
  ck_assert_int_eq(rjt_cli(rjt_fmt("explain --target sm_100a %s", req), out, sizeof out), 0);
  const char *badreq = "'{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"list\":{}}'";
  ck_assert_int_ne(rjt_cli(rjt_fmt("ptx %s", badreq), out, sizeof out), 0);
  ck_assert_msg(strstr(out, "list.count"), "%s", out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("multi");
  TCase *tc = tcase_create("cpu");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, refused, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, refused_in_c);
  tcase_add_test(tc, canonical);
  tcase_add_test(tc, dispatch);
  tcase_add_test(tc, count_classes);
  tcase_add_loop_test(tc, ptx_every_op, 0, 3);
  tcase_add_loop_test(tc, ptxas_clean, 0, 3);
  tcase_add_test(tc, call_errors);
  tcase_add_test(tc, cli);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
