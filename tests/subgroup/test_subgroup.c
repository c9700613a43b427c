/* The subgroup variant without a GPU: PTX counts, convergence after O3, invalid requests, and
 * ptxas assembling every primitive (when ptxas exists). */
#include "rjtest.h"

#include <stdbool.h>
#include <unistd.h>

#define SG                                                                                         \
  "{\"kind\":\"subgroup\",\"primitive\":\"%s\",\"dtype\":\"%s\",\"log2_size\":%d,\"threads\":64,\"blocks\":2%s}"

static const char *const prims[] = {
    "shuffle",          "broadcast",           "shuffle_down",      "shuffle_up",
    "shuffle_xor",      "reduce_add",          "reduce_min",        "reduce_max",
    "reduce_all_add",   "reduce_all_min",      "reduce_all_max",    "invocation_id",
    "reduce_mul",       "reduce_and",          "reduce_or",         "reduce_xor",
    "reduce_all_mul",   "reduce_all_and",      "reduce_all_or",     "reduce_all_xor",
    "reduce_argmax",    "reduce_argmin",       "reduce_var",        "reduce_std",
    "reduce_logsumexp", "reduce_all_argmax",   "reduce_all_argmin", "reduce_all_var",
    "reduce_all_std",   "reduce_all_logsumexp"};
#define NPRIMS 30

/* whether primitive p takes dtype d (dtypes[] order: four floats, then four integers) */
static bool takes(int p, int d) {
  bool ints = p == 11 || (p >= 13 && p <= 15) || (p >= 17 && p <= 19);
  bool floats = (p >= 22 && p <= 24) || p >= 27;
  return ints ? d >= 4 : floats ? d < 4 : true;
}
static const char *const dtypes[] = {"f16", "bf16", "f32", "f64", "i32", "u32", "i64", "u64"};

/* occurrences of needle after the first occurrence of from */
static int count_after(const char *text, const char *from, const char *needle) {
  const char *p = strstr(text, from);
  return p ? rjt_count(p, needle) : 0;
}

START_TEST(reduce_all_add_counts) {
  rj_ctx *ctx = rj_ctx_new();
  const char *ptx = rjt_ptx(ctx, rjt_fmt(SG, "reduce_all_add", "i32", 5, ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync"), 5);
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 5);
  for (int m = 1; m <= 16; m <<= 1)
    ck_assert_int_eq(rjt_count(ptx, rjt_fmt(", %d, 31, -1;", m)), 1);
  /* the 5 adds of the tree: every add.s32 after the first shuffle */
  ck_assert_int_eq(count_after(ptx, "shfl.sync", "add.s32"), 5);
  ptx = rjt_ptx(ctx, rjt_fmt(SG, "reduce_all_add", "i64", 5, ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 10);
  ck_assert_int_eq(rjt_count(ptx, "add.s64"), 5 + 2); /* the tree + the two addresses */
  /* reduce_add: a shuffle-down tree 16, 8, 4, 2, 1 */
  ptx = rjt_ptx(ctx, rjt_fmt(SG, "reduce_add", "f32", 5, ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.down.b32"), 5);
  ck_assert_int_eq(count_after(ptx, "shfl.sync", "add.rn.f32"), 5);
  const char *p16 = strstr(ptx, ", 16, 31, -1;"), *p1 = strstr(ptx, ", 1, 31, -1;");
  ck_assert(p16 && p1 && p16 < p1);
  /* k: exactly k shuffles; k = 0 none */
  for (int k = 0; k <= 5; k++) {
    ptx = rjt_ptx(ctx, rjt_fmt(SG, "reduce_max", "u32", k, ""), "sm_90");
    ck_assert_int_eq(rjt_count(ptx, "shfl.sync.down.b32"), k);
    ck_assert_int_eq(rjt_count(ptx, "max.u32"), k);
    ptx = rjt_ptx(ctx, rjt_fmt(SG, "reduce_all_min", "f64", k, ""), "sm_90");
    ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 2 * k);
  }
  /* f16 accumulates in f32: one conversion in, one out, f32 shuffles */
  ptx = rjt_ptx(ctx, rjt_fmt(SG, "reduce_all_add", "f16", 3, ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 3);
  ck_assert_int_eq(rjt_count(ptx, "cvt.f32.f16"), 1);
  ck_assert_int_eq(rjt_count(ptx, "cvt.rn.f16.f32"), 1);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(shuffle_forms) {
  rj_ctx *ctx = rj_ctx_new();
  const char *ptx = rjt_ptx(ctx, rjt_fmt(SG, "shuffle_up", "f32", 0, ",\"arg\":3"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.up.b32"), 1);
  ck_assert_int_eq(rjt_count(ptx, ", 3, 0, -1;"), 1); /* up clamps at lane 0: own value below */
  ptx = rjt_ptx(ctx, rjt_fmt(SG, "shuffle_down", "u64", 0, ",\"arg\":31"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.down.b32"), 2);
  ck_assert_int_eq(rjt_count(ptx, ", 31, 31, -1;"), 2);
  ptx = rjt_ptx(ctx, rjt_fmt(SG, "shuffle_xor", "i32", 0, ",\"arg\":17"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 1);
  ptx = rjt_ptx(ctx, rjt_fmt(SG, "broadcast", "bf16", 0, ",\"arg\":7"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.idx.b32"), 1);
  ptx = rjt_ptx(ctx, rjt_fmt(SG, "shuffle", "f64", 0, ",\"index\":9"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.idx.b32"), 2);
  char list[256] = ",\"index\":[";
  for (int l = 0; l < 32; l++)
    strcat(list, rjt_fmt("%d%s", 31 - l, l < 31 ? "," : "]"));
  ptx = rjt_ptx(ctx, rjt_fmt(SG, "shuffle", "i32", 0, list), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.idx.b32"), 1);
  ck_assert_ptr_nonnull(strstr(ptx, "%laneid"));
  ptx = rjt_ptx(ctx, rjt_fmt(SG, "invocation_id", "i64", 0, ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl"), 0);
  ck_assert_ptr_nonnull(strstr(ptx, "%laneid"));
  rj_ctx_free(ctx);
}
END_TEST

/* After O3 every primitive is straight-line: no branch (so no shuffle in a divergent branch), no
 * call, no shared memory, no barrier, every shfl.sync unpredicated with the full mask. */
START_TEST(convergent_straight_line) {
  rj_ctx *ctx = rj_ctx_new();
  for (int p = 0; p < NPRIMS; p++)
    for (int d = 0; d < 8; d++) {
      if (!takes(p, d)) continue;
      const char *extra = p == 0 ? ",\"index\":5" : p >= 1 && p <= 4 ? ",\"arg\":3" : "";
      const char *ptx = rjt_ptx(ctx, rjt_fmt(SG, prims[p], dtypes[d], 4, extra), "sm_90");
      ck_assert_msg(!strstr(ptx, "bra"), "%s %s: a branch\n%s", prims[p], dtypes[d], ptx);
      ck_assert_msg(!strstr(ptx, "call"), "%s %s: a call", prims[p], dtypes[d]);
      ck_assert_msg(!strstr(ptx, ".shared"), "%s %s: shared memory", prims[p], dtypes[d]);
      ck_assert_msg(!strstr(ptx, "bar."), "%s %s: a barrier", prims[p], dtypes[d]);
      for (const char *s = ptx; (s = strstr(s, "shfl.sync")); s++) {
        const char *line = s;
        while (line > ptx && line[-1] != '\n')
          line--;
        ck_assert_msg(!strchr(rjt_fmt("%.*s", (int)(s - line), line), '@'),
                      "%s %s: a predicated shuffle", prims[p], dtypes[d]);
        const char *eol = strchr(s, '\n');
        ck_assert_msg(eol && eol[-1] == ';' && strncmp(eol - 5, ", -1;", 5) == 0,
                      "%s %s: shuffle without the full mask", prims[p], dtypes[d]);
      }
    }
  rj_ctx_free(ctx);
}
END_TEST

typedef struct bad_case {
  const char *json, *msg;
} bad_case;

static const bad_case bad[] = {
    {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"f32\",\"log2_size\":6}",
     "log2_size"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_all_max\",\"dtype\":\"i32\",\"log2_size\":-1}",
     "log2_size"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"invocation_id\",\"dtype\":\"f32\"}", "dtype"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"invocation_id\",\"dtype\":\"bf16\"}", "dtype"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"shuffle\",\"dtype\":\"f32\",\"index\":[0,1,2]}",
     "index"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"shuffle\",\"dtype\":\"f32\",\"index\":[]}", "index"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"shuffle\",\"dtype\":\"f32\",\"index\":32}", "index"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"broadcast\",\"dtype\":\"f32\",\"arg\":40}", "arg"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"shuffle_up\",\"dtype\":\"f32\",\"arg\":-1}", "arg"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"shuffle_xor\",\"dtype\":\"u8\",\"arg\":1}", "dtype"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"shuffle_sideways\",\"dtype\":\"f32\"}", "primitive"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"broadcast\",\"dtype\":\"f32\",\"threads\":48}",
     "threads"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"broadcast\",\"dtype\":\"f32\",\"blocks\":0}",
     "blocks"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"broadcast\",\"dtype\":\"f32\",\"index\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31]}",
     "index"},
};

START_TEST(invalid_requests) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_status s = rj_request_parse(ctx, bad[_i].json, &r);
  ck_assert_msg(s == RJ_EINVAL, "%s: status %s, not RJ_EINVAL", bad[_i].json, rj_status_name(s));
  ck_assert_msg(strncmp(rj_errmsg(ctx), bad[_i].msg, strlen(bad[_i].msg)) == 0,
                "%s: message \"%s\" does not start with the field \"%s\"", bad[_i].json,
                rj_errmsg(ctx), bad[_i].msg);
  rj_ctx_free(ctx);
}
END_TEST

/* The CLI exits 2 for an invalid subgroup request, and explain names the variant. */
START_TEST(cli_status) {
  const char *cli = getenv("REDJIT_CLI") ? getenv("REDJIT_CLI") : REDJIT_CLI_BUILT;
  int rc = system(rjt_fmt(
      "%s ptx '{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"f32\",\"log2_size\":6}' >/dev/null 2>&1",
      cli));
  ck_assert_int_eq(WEXITSTATUS(rc), 2);
  rc = system(rjt_fmt(
      "%s explain '{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"f32\"}' | grep -q '^subgroup prio=10 chosen$'",
      cli));
  ck_assert_int_eq(WEXITSTATUS(rc), 0);
}
END_TEST

/* ---------------------------------------------------------------- mul, and, or, xor */
/* reduce_mul / _and / _or / _xor and their reduce_all_*: exactly k steps of the same trees as
 * reduce_add, with the op's instruction; and / or / xor of i32 / u32 over the whole warp is one
 * redux.sync (no shuffle); 64-bit values two shuffles a step */
START_TEST(bitwise_and_mul_counts) {
  rj_ctx *ctx = rj_ctx_new();
  static const char *const ops[] = {"and", "or", "xor"};
  for (int o = 0; o < 3; o++)
    for (int all = 0; all < 2; all++) {
      char prim[32];
      snprintf(prim, sizeof prim, "reduce_%s%s", all ? "all_" : "", ops[o]);
      const char *mode = all ? "shfl.sync.bfly.b32" : "shfl.sync.down.b32";
      for (int k = 0; k <= 5; k++) {
        const char *ptx = rjt_ptx(ctx, rjt_fmt(SG, prim, "u32", k, ""), "sm_90");
        if (k == 5) { /* the whole warp: redux.sync */
          ck_assert_int_eq(rjt_count(ptx, "shfl.sync"), 0);
          ck_assert_int_eq(rjt_count(ptx, rjt_fmt("redux.sync.%s.b32", ops[o])), 1);
        } else {
          ck_assert_msg(rjt_count(ptx, mode) == k, "%s k=%d: %d %s", prim, k, rjt_count(ptx, mode),
                        mode);
          ck_assert_int_eq(rjt_count(ptx, "redux"), 0);
          ck_assert_int_eq(count_after(ptx, "shfl.sync", rjt_fmt("%s.b32", ops[o])), k);
        }
        ptx = rjt_ptx(ctx, rjt_fmt(SG, prim, "i64", k, ""), "sm_90");
        ck_assert_int_eq(rjt_count(ptx, mode), 2 * k);
        ck_assert_int_eq(rjt_count(ptx, "redux"), 0);
      }
    }
  for (int all = 0; all < 2; all++) {
    const char *prim = all ? "reduce_all_mul" : "reduce_mul";
    const char *mode = all ? "shfl.sync.bfly.b32" : "shfl.sync.down.b32";
    const char *ptx = rjt_ptx(ctx, rjt_fmt(SG, prim, "f32", 5, ""), "sm_90");
    ck_assert_int_eq(rjt_count(ptx, mode), 5);
    ck_assert_int_eq(count_after(ptx, "shfl.sync", "mul.rn.f32"), 5);
    ptx = rjt_ptx(ctx, rjt_fmt(SG, prim, "i32", 4, ""), "sm_90");
    ck_assert_int_eq(rjt_count(ptx, mode), 4);
    ck_assert_int_eq(count_after(ptx, "shfl.sync", "mul.lo.s32"), 4);
    ck_assert_int_eq(rjt_count(ptx, "redux"), 0);                  /* no redux.sync product */
    ptx = rjt_ptx(ctx, rjt_fmt(SG, prim, "bf16", 3, ""), "sm_90"); /* accumulates in f32 */
    ck_assert_int_eq(rjt_count(ptx, mode), 3);
    ck_assert_int_eq(count_after(ptx, "shfl.sync", "mul.rn.f32"), 3);
    ptx = rjt_ptx(ctx, rjt_fmt(SG, prim, "u64", 5, ""), "sm_90");
    ck_assert_int_eq(rjt_count(ptx, mode), 10);
    ck_assert_int_eq(count_after(ptx, "shfl.sync", "mul.lo.s64"), 5);
  }
  /* explain and the run's check name the new primitives; the bitwise ones refuse floats */
  rj_request r;
  static const char *const fl[] = {"f16", "bf16", "f32", "f64"};
  for (int o = 0; o < 3; o++)
    for (int d = 0; d < 4; d++) {
      ck_assert_int_eq(rj_request_parse(ctx,
                                        rjt_fmt("{\"kind\":\"subgroup\",\"primitive\":\"reduce_all_"
                                                "%s\",\"dtype\":\"%s\"}",
                                                ops[o], fl[d]),
                                        &r),
                       RJ_EINVAL);
      ck_assert_msg(strstr(rj_errmsg(ctx), "dtype: the bitwise reductions"), "%s", rj_errmsg(ctx));
    }
  ck_assert_int_eq(
      rj_request_parse(ctx, "{\"kind\":\"subgroup\",\"primitive\":\"reduce_prod\"}", &r),
      RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "primitive: unknown value \"reduce_prod\"") &&
                    strstr(rj_errmsg(ctx), "reduce_all_logsumexp reduce_custom reduce_all_custom)"),
                "%s", rj_errmsg(ctx));
  /* the C API's request with a float and reduce_xor: rj_compile validates too */
  rj_request_init(&r, RJ_KIND_SUBGROUP);
  r.u.subgroup.primitive = RJ_PRIM_REDUCE_XOR;
  r.u.subgroup.dtype = RJ_F32;
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "dtype:"), "%s", rj_errmsg(ctx));
  r.u.subgroup.primitive = (rj_primitive)32; /* past reduce_all_custom */
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "primitive: unknown value"), "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

/* ---------------------------------------------------------------- the state ops */
/* reduce_argmax ... reduce_all_logsumexp: the trees of the other reductions, each step shuffling
 * every 32-bit part of the state (argmax f32: value + i64 index = 3; var f32: i64 n + mean + M2 =
 * 4; logsumexp f32: max + sum = 2; f64 fields two parts each); argmax's i64 index stored as 8
 * bytes; refusals and the correction in the kernel's key */
START_TEST(state_counts) {
  rj_ctx *ctx = rj_ctx_new();
  static const char *const sop[] = {"argmax", "argmin", "var", "std", "logsumexp"};
  static const int parts[5][2] = {{3, 4}, {3, 4}, {4, 6}, {4, 6}, {2, 4}}; /* f32, f64 */
  for (int o = 0; o < 5; o++)
    for (int all = 0; all < 2; all++)
      for (int w = 0; w < 2; w++)
        for (int k = 0; k <= 5; k += 2) {
          char prim[32], req[256];
          snprintf(prim, sizeof prim, "reduce_%s%s", all ? "all_" : "", sop[o]);
          snprintf(req, sizeof req, "%s", rjt_fmt(SG, prim, w ? "f64" : "f32", k, ""));
          const char *ptx = rjt_ptx(ctx, req, "sm_90");
          const char *mode = all ? "shfl.sync.bfly.b32" : "shfl.sync.down.b32";
          ck_assert_msg(rjt_count(ptx, "shfl.sync") == k * parts[o][w] &&
                            rjt_count(ptx, mode) == k * parts[o][w],
                        "%s: %d shuffles, expected %d %s", req, rjt_count(ptx, "shfl.sync"),
                        k * parts[o][w], mode);
          ck_assert_msg(!strstr(ptx, "call") && !strstr(ptx, "bra"), "%s", req);
          if (o < 2)
            ck_assert_msg(strstr(ptx, "st.global.b64") || strstr(ptx, "+4], "),
                          "no 8-byte index store: %s", req);
        }
  static const bad_case refusals[] = {
      {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_var\",\"dtype\":\"i32\"}",
       "dtype: reduce_var / _std / _logsumexp"},
      {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_all_logsumexp\",\"dtype\":\"u64\"}",
       "dtype: reduce_var / _std / _logsumexp"},
      {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"f32\",\"correction\":0}",
       "correction: applies only to the primitives reduce_var"},
      {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_all_argmax\",\"dtype\":\"f32\","
       "\"correction\":0}",
       "correction: applies only"},
      {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_std\",\"dtype\":\"f32\",\"correction\":-1}",
       "correction"},
  };
  rj_request r;
  for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
    ck_assert_int_eq(rj_request_parse(ctx, refusals[i].json, &r), RJ_EINVAL);
    ck_assert_msg(strstr(rj_errmsg(ctx), refusals[i].msg), "%s: %s", refusals[i].json,
                  rj_errmsg(ctx));
  }
  /* the C API: correction 1 by default, checked by rj_compile; part of the kernel */
  rj_request_init(&r, RJ_KIND_SUBGROUP);
  ck_assert_int_eq(r.u.subgroup.correction, 1);
  r.u.subgroup.primitive = RJ_PRIM_REDUCE_ALL_VAR;
  r.u.subgroup.dtype = RJ_F32;
  r.u.subgroup.log2_size = 5;
  r.u.subgroup.correction = -2;
  rj_kernel *k[2] = {0};
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k[0]), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "correction: -2"), "%s", rj_errmsg(ctx));
  for (int c = 0; c < 2; c++) {
    r.u.subgroup.correction = c;
    ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k[c]), RJ_OK);
  }
  ck_assert_ptr_ne(k[0], k[1]);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(ptxas_assembles) {
  static const char *const where[] = {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"};
  const char *ptxas = NULL;
  for (int i = 0; i < 2; i++)
    if (access(where[i], X_OK) == 0) ptxas = where[i];
  if (!ptxas) {
    fprintf(stderr, "SKIP: ptxas not found: PTX not assembled\n");
    return;
  }
  rj_ctx *ctx = rj_ctx_new();
  for (int d = 0; d < 8; d++) {
    if (!takes(_i, d)) continue;
    const char *extra = _i == 0 ? ",\"index\":5" : _i >= 1 && _i <= 4 ? ",\"arg\":3" : "";
    const char *ptx = rjt_ptx(ctx, rjt_fmt(SG, prims[_i], dtypes[d], 5, extra), "sm_80");
    char path[] = "/tmp/rjsgXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, ptx, strlen(ptx)), (ssize_t)strlen(ptx));
    close(fd);
    int rc = system(rjt_fmt("%s -arch=sm_80 %s -o /dev/null", ptxas, path));
    unlink(path);
    ck_assert_msg(rc == 0, "ptxas rejected %s %s", prims[_i], dtypes[d]);
  }
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("subgroup");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, reduce_all_add_counts);
  tcase_add_test(tc, shuffle_forms);
  tcase_add_test(tc, convergent_straight_line);
  tcase_add_loop_test(tc, invalid_requests, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, cli_status);
  tcase_add_loop_test(tc, ptxas_assembles, 0, NPRIMS);
  suite_add_tcase(s, tc);
  TCase *tb = tcase_create("new_reductions"); /* mul, and, or, xor; the state ops */
  tcase_set_timeout(tb, 300);
  tcase_add_test(tb, bitwise_and_mul_counts);
  tcase_add_test(tb, state_counts);
  suite_add_tcase(s, tb);
  return rjt_main(s);
}
