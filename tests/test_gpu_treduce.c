/* treduce on the GPU(s): rank r on GPU r mod the GPU count, so the whole suite runs on one GPU
 * (ranks sharing it).  Every case goes through rj_treduce_check (random sources, poisoned
 * destination and guards, the float64 oracle, sources checked unchanged) on the automatic path
 * and, for part of the matrix, the staged path (cuMemcpyPeerAsync / DtoD copies + accumulating
 * kernels).  Without a GPU it prints "SKIP: no GPU" and passes. */
#include "rjtest.h"

static rj_ctx *ctx;
static int gpu, cases_run;
static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

static void run_path(const char *json, rj_treduce_path path, uint64_t seed, int nans,
                     int expect_checked) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_check_opts o;
  rj_check_opts_init(&o);
  o.seed = seed;
  o.nan_count = nans;
  rj_check_result res;
  rj_treduce_result tr;
  rj_status s = rj_treduce_check(ctx, &r, &o, path, &res, &tr);
  ck_assert_msg(s == RJ_OK, "run failed (%s): %s\n  path %d, request: %s", rj_status_name(s),
                rj_errmsg(ctx), path, json);
  ck_assert_msg(res.ok,
                "wrong result (path %s, %lld wrong of %lld, %lld outside written): %s\n"
                "  seed %llu, request: %s",
                tr.path, (long long)res.wrong, (long long)res.checked,
                (long long)res.outside_written, res.first_error, (unsigned long long)seed, json);
  if (expect_checked >= 0)
    ck_assert_int_eq(res.checked, expect_checked);
  else
    ck_assert_int_gt(res.checked, 0);
  if (path == RJ_TREDUCE_STAGED && r.u.treduce.ranks > 1) {
    ck_assert_str_eq(tr.path, "staged");
    ck_assert_int_eq(tr.staged_ranks, r.u.treduce.ranks - 1);
  }
  if (path == RJ_TREDUCE_AUTO)
    ck_assert_int_eq(tr.staged_ranks + tr.direct_ranks, r.u.treduce.ranks);
  cases_run++;
}

static void run(const char *json, int staged_too) {
  run_path(json, RJ_TREDUCE_AUTO, 7, 0, -1);
  if (staged_too) run_path(json, RJ_TREDUCE_STAGED, 8, 0, -1);
}

/* The reference matrix: 2, 4, 8 ranks; root 0 and the last; f32 and i32; 1x256 .. 512x32 with
 * row tiles; ping-pong on and off. */
static const char *const shapes[][2] = {
    {"[1,256]", "[1,256]"},  {"[1,4096]", "[1,4096]"}, {"[128,32]", "[16,32]"},
    {"[256,64]", "[32,64]"}, {"[512,32]", "[64,32]"},
};

START_TEST(reference_matrix) {
  if (!gpu) return;
  static const int ranks[] = {2, 4, 8};
  static const char *const dts[] = {"f32", "i32"};
  for (int n = 0; n < 3; n++)
    for (int root = 0; root < 2; root++)
      for (int d = 0; d < 2; d++)
        for (int pp = 0; pp < 2; pp++) {
          int R = ranks[n];
          run(rjt_fmt(
                  "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":%d,"
                  "\"shape\":%s,\"tile\":%s,\"pingpong\":%s}",
                  dts[d], R, root ? R - 1 : 0, shapes[_i][0], shapes[_i][1], pp ? "true" : "false"),
              (n + root + pp) % 2);
        }
}
END_TEST

START_TEST(ops_and_roots) {
  if (!gpu) return;
  static const char *const ops[] = {"sum", "max", "min"};
  static const char *const dts[] = {"f32", "i32", "u32", "i64", "u64", "f64"};
  for (int o = 0; o < 3; o++)
    for (int d = 0; d < 6; d++)
      run(rjt_fmt("{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":4,\"root\":2,"
                  "\"shape\":[128,32],\"tile\":[16,32],\"pingpong\":%s}",
                  ops[o], dts[d], (o + d) % 2 ? "true" : "false"),
          d < 2);
}
END_TEST

/* Partial final chunks in rows, cols and both; f16 / bf16 / f64; 3- to 5-D; 1-D. */
START_TEST(partial_chunks_and_dims) {
  if (!gpu) return;
  static const char *const cases[][2] = {
      {"[100,32]", "[16,32]"},  {"[64,37]", "[64,16]"},    {"[100,37]", "[16,32]"},
      {"[7,5]", "[3,2]"},       {"[1000]", "[1,300]"},     {"[3,50,70]", "[16,32]"},
      {"[2,3,17,19]", "[4,8]"}, {"[2,2,3,9,33]", "[5,7]"}, {"[5,1,1]", "[1,1]"},
      {"[33,1025]", "[0,0]"},   {"[2000,3]", "[999,2]"},
  };
  static const char *const dts[] = {"f16", "bf16", "f32", "f64", "i32"};
  static const char *const ops[] = {"sum", "max", "min"};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int d = 0; d < 5; d++) {
      const char *tile = strcmp(cases[c][1], "[0,0]") ? rjt_fmt(",\"tile\":%s", cases[c][1]) : "";
      char t[64];
      snprintf(t, sizeof t, "%s", tile);
      run(rjt_fmt("{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":%d,"
                  "\"shape\":%s%s,\"pingpong\":%s}",
                  ops[(c + d) % 3], dts[d], 2 + (int)(c % 3) * 3, (int)(c % 2), cases[c][0], t,
                  (c + d) % 2 ? "true" : "false"),
          (c + d) % 3 == 0);
    }
}
END_TEST

/* Empty rows (the reference's EmptyRows case): nothing is read, the destination stays poisoned. */
START_TEST(empty_rows) {
  if (!gpu) return;
  for (int p = 0; p < 3; p++)
    run_path(
        "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[1,1,1,0,256],"
        "\"tile\":[1,256]}",
        (rj_treduce_path)(p == 1 ? RJ_TREDUCE_STAGED : RJ_TREDUCE_AUTO), 3, 0, 0);
  run_path(
      "{\"kind\":\"treduce\",\"op\":\"max\",\"dtype\":\"i32\",\"ranks\":4,\"root\":1,\"shape\":[4,0]}",
      RJ_TREDUCE_AUTO, 3, 0, 0);
}
END_TEST

/* One rank (a copy), strides (gapped sources, transposed destination), accum, NaN policies. */
START_TEST(extensions) {
  if (!gpu) return;
  run("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":1,\"shape\":[64,33],\"tile\":[8,8]}",
      0);
  run("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":3,\"root\":1,\"shape\":[20,30],"
      "\"strides\":[40,1],\"dst_strides\":[1,20],\"tile\":[8,16],\"pingpong\":true}",
      1);
  run("{\"kind\":\"treduce\",\"op\":\"max\",\"dtype\":\"i32\",\"ranks\":5,\"root\":4,\"shape\":[3,20,30],"
      "\"strides\":[1000,45,2],\"tile\":[7,9],\"accum\":true}",
      1);
  run("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"bf16\",\"ranks\":3,\"shape\":[40,50],\"accum\":true,"
      "\"tile\":[16,16],\"pingpong\":true}",
      1);
  static const char *const ops[] = {"sum", "max", "min"};
  for (int o = 0; o < 3; o++)
    for (int nan = 0; nan < 2; nan++)
      for (int s = 0; s < 2; s++)
        run_path(
            rjt_fmt("{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"f32\",\"ranks\":4,\"root\":1,"
                    "\"shape\":[64,64],\"tile\":[16,64],\"nan\":\"%s\",\"pingpong\":true}",
                    ops[o], nan ? "ignore" : "propagate"),
            s ? RJ_TREDUCE_STAGED : RJ_TREDUCE_AUTO, 50 + (uint64_t)s, 20, -1);
  /* many ranks: more than one kernel's 128 */
  run("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"i32\",\"ranks\":130,\"root\":129,\"shape\":[3,70],"
      "\"tile\":[2,64]}",
      0);
}
END_TEST

/* rj_check (what `redjit run` calls) on a treduce request. */
START_TEST(through_rj_check) {
  if (!gpu) return;
  rjt_run_ok(ctx,
             "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":1,"
             "\"shape\":[512,32],\"tile\":[64,32],\"pingpong\":true}",
             11, 0);
  cases_run++;
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_treduce");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, reference_matrix, 0, 5);
  tcase_add_test(tc, ops_and_roots);
  tcase_add_test(tc, partial_chunks_and_dims);
  tcase_add_test(tc, empty_rows);
  tcase_add_test(tc, extensions);
  tcase_add_test(tc, through_rj_check);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  fprintf(stderr,
          gpu ? "gpu_treduce: %d request cases run on the GPU\n"
              : "gpu_treduce: SKIPPED (no GPU): %d cases\n",
          cases_run);
  return failed ? 1 : 0;
}
