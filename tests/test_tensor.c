/* Tensor requests (issue 6) with no GPU: validation errors (status 2 in the CLI's terms:
 * RJ_EINVAL with the field named), dispatch by pattern, PTX properties (16-byte vector loads,
 * no float atomics), ptxas-clean kernels, and rj_reduce's argument checks. */
#include "rjtest.h"

typedef struct bad_case {
  const char *json;
  const char *msg;
} bad_case;

#define T0 "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\","
static const bad_case bad[] = {
    {T0 "\"shape\":[4,0],\"axes\":[1]}", "shape[1]: every dim must be at least 1"},
    {T0 "\"shape\":[]}", "shape: expected 1 to 8 dims"},
    {T0 "\"shape\":[4,8],\"axes\":[1,1]}", "axis 1 is repeated"},
    {T0 "\"shape\":[4,8],\"axes\":[1,-1]}", "axis 1 is repeated"},
    {T0 "\"shape\":[4,8],\"axes\":[2]}", "axes[0]: 2 is out of range"},
    {T0 "\"shape\":[4,8],\"axes\":[-3]}", "axes[0]: -3 is out of range"},
    {T0 "\"shape\":[4,8],\"strides\":[1],\"axes\":[1]}", "strides"},
    {T0 "\"shape\":[4,8],\"strides\":[0,1],\"axes\":[1]}", "strides[0]"},
    {T0 "\"shape\":[4,8,3],\"strides\":[2,1,1],\"axes\":[1]}", "makes outputs overlap"},
    {T0 "\"shape\":[4,4],\"strides\":[2,1],\"axes\":[]}", "axes"},
    {T0 "\"shape\":[4,8],\"axes\":[1],\"colour\":1}", "colour: unknown field"},
    {T0 "\"shape\":[4,8],\"deterministic\":2}", "deterministic"},
};

START_TEST(invalid) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_status s = rj_request_parse(ctx, bad[_i].json, &r);
  ck_assert_msg(s == RJ_EINVAL, "%s: got %s (%s)", bad[_i].json, rj_status_name(s), rj_errmsg(ctx));
  ck_assert_msg(strstr(rj_errmsg(ctx), bad[_i].msg), "%s: message \"%s\" lacks \"%s\"",
                bad[_i].json, rj_errmsg(ctx), bad[_i].msg);
  rj_ctx_free(ctx);
}
END_TEST

static const char *variant_of(rj_ctx *ctx, const char *json) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  rj_status s = rj_compile(ctx, &r, &o, &k);
  ck_assert_msg(s == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
  return rj_kernel_variant(k);
}

START_TEST(dispatch) {
  rj_ctx *ctx = rj_ctx_new();
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[1048576]}"), "tensor_rows");
  /* 1-D between one CTA's reach and the whole chip's: one cluster (sm_90) */
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[65536]}"), "tensor_rows");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[65540]}"), "tensor_cluster");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[262144]}"), "tensor_cluster");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[262148]}"), "tensor_rows");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[4096,4096],\"axes\":[1]}"), "tensor_rows");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[65536,128],\"axes\":[-1]}"), "tensor_rows");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[4096,4096],\"axes\":[0]}"), "tensor_cols");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[8,300,17],\"axes\":[1]}"), "tensor_cols");
  /* merged dims: rows of a 3-D array, all dims, and size-1 dims */
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[8,16,32],\"axes\":[1,2]}"), "tensor_rows");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[8,1,32],\"axes\":[0,1]}"), "tensor_cols");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[4,5,6],\"axes\":[0,2]}"), "tensor_generic");
  /* a transposed view reduced along its unit-stride dim is a row reduction */
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[64,32],\"strides\":[1,64],\"axes\":[0]}"),
                   "tensor_rows");
  rj_ctx_free(ctx);
}
END_TEST

static const char *const dtypes[] = {"f16", "bf16", "f32", "f64", "i32", "u32", "i64", "u64"};

START_TEST(ptx_properties) {
  rj_ctx *ctx = rj_ctx_new();
  const char *shapes[] = {"\"shape\":[16777216]", "\"shape\":[4096,4096],\"axes\":[1]",
                          "\"shape\":[4096,4096],\"axes\":[0]",
                          "\"shape\":[65536,128],\"axes\":[1]",
                          "\"shape\":[32,4194304],\"axes\":[1]"};
  for (int d = 0; d < 8; d++)
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
      const char *json = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s}",
                                 d % 2 ? "max" : "sum", dtypes[d], shapes[i]);
      char req[512];
      snprintf(req, sizeof req, "%s", json);
      const char *ptx = rjt_ptx(ctx, req, "sm_90");
      ck_assert_msg(strstr(ptx, "ld.global.nc.v4") || strstr(ptx, "ld.global.v4") ||
                        strstr(ptx, "ld.global.nc.v2.b64") || strstr(ptx, "ld.global.nc.v2.f64") ||
                        strstr(ptx, "ld.global.nc.v2.u64") || strstr(ptx, "ld.global.v2"),
                    "no 16-byte vector load in %s", req);
      ck_assert_msg(!strstr(ptx, "atom.global.add.f") && !strstr(ptx, "red.global.add.f"),
                    "float atomics in %s", req);
    }
  rj_ctx_free(ctx);
}
END_TEST

/* tensor_cluster: the cluster attributes and instructions are in the PTX, no workspace or
 * atomics; targets without clusters and views it does not serve are refused with the reason. */
START_TEST(cluster) {
  rj_ctx *ctx = rj_ctx_new();
  static const int vec[8] = {8, 8, 4, 2, 4, 4, 2, 2};
  for (int d = 0; d < 8; d++) {
    const char *json = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\","
                               "\"shape\":[%d],\"variant\":\"tensor_cluster\"}",
                               d % 2 ? "min" : "sum", dtypes[d], 20001 * vec[d] + 3);
    char req[256];
    snprintf(req, sizeof req, "%s", json);
    const char *ptx = rjt_ptx(ctx, req, "sm_90");
    const char *need[] = {".reqnctapercluster 8, 1, 1", "%cluster_ctarank",
                          "mapa.shared::cluster",       "st.shared::cluster",
                          "barrier.cluster.arrive",     "barrier.cluster.wait"};
    for (int i = 0; i < 6; i++)
      ck_assert_msg(strstr(ptx, need[i]), "%s: no \"%s\" in the PTX", req, need[i]);
    ck_assert_msg(!strstr(ptx, "atom.") && !strstr(ptx, "rj_ws"), "%s: atomics or a workspace",
                  req);
  }
  rj_request r;
  rj_options o;
  rj_options_init(&o);
  rj_kernel *k = NULL;
  rjt_parse(ctx, T0 "\"shape\":[100003],\"variant\":\"tensor_cluster\"}", &r);
  o.target = "sm_80";
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), "lacks thread-block clusters"), "%s", rj_errmsg(ctx));
  o.target = "sm_90";
  rjt_parse(ctx, T0 "\"shape\":[1000],\"variant\":\"tensor_cluster\"}", &r);
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), "one cluster serves"), "%s", rj_errmsg(ctx));
  rjt_parse(ctx, T0 "\"shape\":[400,1000],\"axes\":[1],\"variant\":\"tensor_cluster\"}", &r);
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), "not a 1-D reduction"), "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

/* The PTX assembles with ptxas (when present) without spills. */
START_TEST(ptxas_clean) {
  const char *ptxas = "/usr/local/cuda/bin/ptxas";
  FILE *f = fopen(ptxas, "r");
  if (!f) return;
  fclose(f);
  rj_ctx *ctx = rj_ctx_new();
  const char *reqs[] = {
      T0 "\"shape\":[268435456]}",
      "{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"bf16\",\"shape\":[1024,32768],\"axes\":[0]}",
      "{\"kind\":\"tensor\",\"op\":\"min\",\"dtype\":\"f64\",\"shape\":[65536,128],\"axes\":[1],\"accum\":true}",
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f16\",\"shape\":[7,9,11],\"axes\":[0,2],\"nan\":\"ignore\"}",
      "{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"bf16\",\"shape\":[400003],\"accum\":true,\"nan\":\"ignore\"}",
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"u64\",\"shape\":[100003]}",
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[32,4194304],\"axes\":[1]}"};
  for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
    const char *ptx = rjt_ptx(ctx, reqs[i], "sm_90");
    char path[] = "/tmp/rjt_tensor_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    FILE *o = fdopen(fd, "w");
    fputs(ptx, o);
    fclose(o);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s -arch=sm_90 -v %s -o /dev/null 2>&1", ptxas, path);
    FILE *p = popen(cmd, "r");
    char out[4096] = "";
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int rc = pclose(p);
    remove(path);
    ck_assert_msg(rc == 0, "ptxas failed on %s:\n%s", reqs[i], out);
    ck_assert_msg(strstr(out, "0 bytes spill stores"), "spills in %s:\n%s", reqs[i], out);
  }
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(reduce_args) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rjt_parse(ctx, T0 "\"shape\":[1024]}", &r);
  int x = 0;
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, NULL, &x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "src: NULL"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, &x, NULL, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "dst: NULL"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_reduce(ctx, NULL, NULL, &x, &x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "request: NULL"), "%s", rj_errmsg(ctx));
  rj_request tile;
  rj_request_init(&tile, RJ_KIND_TILE);
  ck_assert_int_eq(rj_reduce(ctx, &tile, NULL, &x, &x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "kind"), "%s", rj_errmsg(ctx));
  r.u.tensor.shape[0] = 0; /* built in C: validated the same way */
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, &x, &x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "shape[0]"), "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

/* The CLI: an invalid tensor request is exit status 2 with a JSON error line. */
START_TEST(cli_status) {
  const char *cli = getenv("REDJIT_CLI") ? getenv("REDJIT_CLI") : REDJIT_CLI_BUILT;
  char cmd[1024];
  snprintf(
      cmd, sizeof cmd,
      "%s run '{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,8],\"axes\":[1,1]}' "
      ">/dev/null 2>&1",
      cli);
  int rc = system(cmd);
  ck_assert_int_eq(WEXITSTATUS(rc), 2);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tensor");
  TCase *tc = tcase_create("tensor");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, invalid, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, dispatch);
  tcase_add_test(tc, ptx_properties);
  tcase_add_test(tc, cluster);
  tcase_add_test(tc, ptxas_clean);
  tcase_add_test(tc, reduce_args);
  tcase_add_test(tc, cli_status);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
