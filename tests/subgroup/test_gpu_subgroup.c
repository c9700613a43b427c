/* GPU suite for the subgroup variant: the reference's matrix (every primitive x dtype x k,
 * 64-thread blocks) and more (several blocks, wider blocks), every lane of every group checked
 * against the oracle (reduce_*: lane 0 of each group, where the result is defined), shuffle_up /
 * _down / _xor edge offsets, index lists, NaNs, several seeds.  Exits 77 ("SKIP: no GPU") with no
 * GPU. */
#include "rjtest.h"

static rj_ctx *ctx;
static int cases_run;

static const char *const dtypes[] = {"f16", "bf16", "f32", "f64", "i32", "u32", "i64", "u64"};
static const char *const reductions[] = {"reduce_add",     "reduce_min",     "reduce_max",
                                         "reduce_all_add", "reduce_all_min", "reduce_all_max"};
/* (threads, blocks): the reference's one 64-thread block, several blocks, a wide block */
static const int geometry[][2] = {{64, 1}, {64, 3}, {256, 2}, {32, 5}};

static void run(const char *json, int seeds, int nans) {
  for (int s = 0; s < seeds; s++)
    rjt_run_ok(ctx, json, (uint64_t)(s * 7919 + 11), nans);
  cases_run++;
}

static void setup(void) {
  ctx = rj_ctx_new();
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

/* reduce_* and reduce_all_* x every dtype x k = 0..5 x every geometry, 3 seeds */
START_TEST(reductions_matrix) {
  for (int d = 0; d < 8; d++)
    for (int k = 0; k <= 5; k++)
      for (size_t g = 0; g < sizeof geometry / sizeof geometry[0]; g++)
        run(rjt_fmt("{\"kind\":\"subgroup\",\"primitive\":\"%s\",\"dtype\":\"%s\",\"log2_size\":%d,"
                    "\"threads\":%d,\"blocks\":%d}",
                    reductions[_i], dtypes[d], k, geometry[g][0], geometry[g][1]),
            3, 0);
}
END_TEST

/* shuffles: every dtype, edge and middle arguments, k = 0 and 5 (shuffles ignore k) */
START_TEST(shuffles_matrix) {
  static const char *const prims[] = {"shuffle", "broadcast", "shuffle_down", "shuffle_up",
                                      "shuffle_xor"};
  static const int args[] = {0, 1, 2, 7, 15, 16, 17, 30, 31};
  const char *key = _i == 0 ? "index" : "arg";
  for (int d = 0; d < 8; d++)
    for (size_t a = 0; a < sizeof args / sizeof args[0]; a++)
      for (size_t g = 0; g < sizeof geometry / sizeof geometry[0]; g++)
        run(rjt_fmt("{\"kind\":\"subgroup\",\"primitive\":\"%s\",\"dtype\":\"%s\",\"log2_size\":%d,"
                    "\"%s\":%d,\"threads\":%d,\"blocks\":%d}",
                    prims[_i], dtypes[d], a % 2 ? 5 : 0, key, args[a], geometry[g][0],
                    geometry[g][1]),
            2, 0);
}
END_TEST

/* per-lane index lists: the reference's patterns (identity, reverse in 4s, xor 1, broadcast) and
 * a rotation and a full reversal */
START_TEST(index_lists) {
  int idx[6][32];
  for (int l = 0; l < 32; l++) {
    idx[0][l] = l;
    idx[1][l] = (l / 4) * 4 + 3 - l % 4;
    idx[2][l] = l ^ 1;
    idx[3][l] = 0;
    idx[4][l] = (l + 5) % 32;
    idx[5][l] = 31 - l;
  }
  for (int p = 0; p < 6; p++) {
    char list[200];
    size_t n = 0;
    for (int l = 0; l < 32; l++)
      n += (size_t)snprintf(list + n, sizeof list - n, "%d%s", idx[p][l], l < 31 ? "," : "");
    for (int d = 0; d < 8; d++)
      for (size_t g = 0; g < sizeof geometry / sizeof geometry[0]; g++)
        run(rjt_fmt(
                "{\"kind\":\"subgroup\",\"primitive\":\"shuffle\",\"dtype\":\"%s\",\"index\":[%s],"
                "\"threads\":%d,\"blocks\":%d}",
                dtypes[d], list, geometry[g][0], geometry[g][1]),
            2, 0);
  }
}
END_TEST

START_TEST(invocation_id) {
  for (int d = 4; d < 8; d++)
    for (size_t g = 0; g < sizeof geometry / sizeof geometry[0]; g++)
      run(rjt_fmt("{\"kind\":\"subgroup\",\"primitive\":\"invocation_id\",\"dtype\":\"%s\","
                  "\"threads\":%d,\"blocks\":%d}",
                  dtypes[d], geometry[g][0], geometry[g][1]),
          1, 0);
}
END_TEST

/* NaN inputs: sums and min / max propagate them to their group; shuffles move them bit-exact */
START_TEST(nans) {
  static const char *const prims[] = {"reduce_add", "reduce_all_max", "reduce_min", "shuffle_xor"};
  for (int p = 0; p < 4; p++)
    for (int d = 0; d < 4; d++)
      run(rjt_fmt("{\"kind\":\"subgroup\",\"primitive\":\"%s\",\"dtype\":\"%s\",\"log2_size\":3,"
                  "\"arg\":3,\"threads\":128,\"blocks\":2}",
                  prims[p], dtypes[d]),
          3, 5);
}
END_TEST

/* the widest launch: 1024 threads x 8 blocks */
START_TEST(big) {
  run("{\"kind\":\"subgroup\",\"primitive\":\"reduce_all_add\",\"dtype\":\"f64\",\"log2_size\":5,"
      "\"threads\":1024,\"blocks\":8}",
      2, 0);
  run("{\"kind\":\"subgroup\",\"primitive\":\"shuffle_down\",\"dtype\":\"u64\",\"arg\":9,"
      "\"threads\":1024,\"blocks\":8}",
      2, 0);
}
END_TEST

/* reduce_mul / _and / _or / _xor and their reduce_all_*: every dtype they take x k = 0..5 x two
 * geometries, 2 seeds (i32 / u32 at k = 5 and/or/xor: one redux.sync); float products with NaNs */
START_TEST(mul_bitwise) {
  static const char *const prims[] = {"reduce_mul",    "reduce_and",     "reduce_or",
                                      "reduce_xor",    "reduce_all_mul", "reduce_all_and",
                                      "reduce_all_or", "reduce_all_xor"};
  static const int geo[][2] = {{64, 1}, {32, 5}};
  for (int p = 0; p < 8; p++)
    for (int d = p % 4 ? 4 : 0; d < 8; d++) /* and / or / xor: integers */
      for (int k = 0; k <= 5; k++)
        for (int g = 0; g < 2; g++)
          run(rjt_fmt("{\"kind\":\"subgroup\",\"primitive\":\"%s\",\"dtype\":\"%s\","
                      "\"log2_size\":%d,\"threads\":%d,\"blocks\":%d}",
                      prims[p], dtypes[d], k, geo[g][0], geo[g][1]),
              2, 0);
  for (int p = 0; p < 8; p += 4)
    for (int d = 0; d < 4; d++)
      run(rjt_fmt("{\"kind\":\"subgroup\",\"primitive\":\"%s\",\"dtype\":\"%s\",\"log2_size\":3,"
                  "\"threads\":128,\"blocks\":2}",
                  prims[p], dtypes[d]),
          3, 5);
}
END_TEST

/* the state reductions (reduce_argmax ... reduce_all_logsumexp): every dtype they take x k = 0, 1,
 * 3, 5 x two geometries x the four input styles (seeds 1 9 17 25: ties or plain, offsets and
 * magnitudes, -inf groups and +inf elements, constant groups), then NaNs; var / std with
 * corrections 0 and 1 */
START_TEST(states) {
  static const char *const sop[] = {"argmax", "argmin", "var", "std", "logsumexp"};
  static const int geo[][2] = {{64, 1}, {32, 5}};
  static const int ks[] = {0, 1, 3, 5};
  for (int o = 0; o < 5; o++)
    for (int all = 0; all < 2; all++)
      for (int d = 0; d < (o < 2 ? 8 : 4); d++)
        for (int k = 0; k < 4; k++)
          for (int g = 0; g < 2; g++) {
            const char *j =
                rjt_fmt("{\"kind\":\"subgroup\",\"primitive\":\"reduce_%s%s\",\"dtype\":\"%s\","
                        "\"log2_size\":%d,\"threads\":%d,\"blocks\":%d%s}",
                        all ? "all_" : "", sop[o], dtypes[d], ks[k], geo[g][0], geo[g][1],
                        (o == 2 || o == 3) && g ? ",\"correction\":0" : "");
            for (int style = 0; style < 4; style++)
              rjt_run_ok(ctx, j, (uint64_t)(style * 8 + 1), 0);
            if (d < 4) rjt_run_ok(ctx, j, 3, 4);
            cases_run++;
          }
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_subgroup");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 1200);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, reductions_matrix, 0, 6);
  tcase_add_loop_test(tc, shuffles_matrix, 0, 5);
  tcase_add_test(tc, index_lists);
  tcase_add_test(tc, invocation_id);
  tcase_add_test(tc, nans);
  tcase_add_test(tc, big);
  suite_add_tcase(s, tc);
  /* CK_RUN_CASE=mul_bitwise or states: one alone */
  static const char *const names[] = {"mul_bitwise", "states"};
  const TTest *tests[] = {mul_bitwise, states};
  for (int i = 0; i < 2; i++) {
    TCase *t = tcase_create(names[i]);
    tcase_set_timeout(t, 600);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, tests[i]);
    suite_add_tcase(s, t);
  }
  int failed = rjt_run_in_process(s);
  fprintf(stderr, "gpu_subgroup: %d request cases run on the GPU\n", cases_run);
  return failed ? 1 : 0;
}
