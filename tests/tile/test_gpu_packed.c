/* GPU suite for sm100_packed (docs/TARGETS.md): its emulated form (each packed instruction
 * replaced by its scalar equivalents in the same order) over the reference matrix on the GPU at
 * hand (../shared/reference/tvm-tirx-reduction.md section 3, cases 6 and 7: lengths 7..256, sum /
 * max / min, accum on and off), several seeds, against the float64 oracle; and the redux.sync
 * variant's integer forms (its f32 forms need sm_100a: test_targets.c assembles them with ptxas).
 * On a Blackwell GPU (auto target sm_100a) the same matrix runs the real packed instructions.
 * Skips, saying so, with no GPU. */
#include "redjit_check.h"
#include "rjtest.h"

static rj_ctx *ctx;
static int gpu;

static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

/* Runs json with emulate_packed, checks the result and, when want is not NULL, the variant. */
static void run(const char *json, uint64_t seed, int nans, int emulate, const char *want) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_check_opts o;
  rj_check_opts_init(&o);
  o.seed = seed;
  o.nan_count = nans;
  o.compile.emulate_packed = emulate;
  rj_check_result res = {.struct_size = sizeof(rj_check_result)};
  rj_status s = rj_check(ctx, &r, &o, &res);
  ck_assert_msg(s == RJ_OK, "run failed (%s): %s\n  request: %s", rj_status_name(s), rj_errmsg(ctx),
                json);
  ck_assert_msg(res.ok,
                "wrong result (variant %s, target %s, %lld wrong of %lld, %lld outside "
                "written): %s\n  seed %llu, nans %d, request: %s",
                res.variant, res.target, (long long)res.wrong, (long long)res.checked,
                (long long)res.outside_written, res.first_error, (unsigned long long)seed, nans,
                json);
  ck_assert_int_gt(res.checked, 0);
  if (want)
    ck_assert_msg(strcmp(res.variant, want) == 0, "ran variant %s, not %s: %s", res.variant, want,
                  json);
}

#define PACKED                                                                                           \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"f32\",\"scope\":\"thread\",\"accum\":%s,\"nan\":\"%s\"," \
  "\"src\":{\"mem\":\"local\",\"shape\":[%d]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}"

static const char *const ops[] = {"sum", "max", "min"};
static const int lens[] = {7, 8, 9, 10, 15, 16, 17, 63, 64, 65, 100, 128, 256};
#define NLENS ((int)(sizeof lens / sizeof lens[0]))

/* The reference matrix, emulated: length _i x op x accum, 4 seeds.  Length 7 is below the gate:
 * local runs it (sm100_packed declines). */
START_TEST(emulated_matrix) {
  if (!gpu) return;
  int L = lens[_i];
  for (int o = 0; o < 3; o++)
    for (int acc = 0; acc < 2; acc++) {
      char json[1024];
      snprintf(json, sizeof json, "%s",
               rjt_fmt(PACKED, ops[o], acc ? "true" : "false", "propagate", L));
      for (uint64_t seed = 0; seed < 4; seed++)
        run(json, seed * 7919 + 3, 0, 1, L >= 8 ? "sm100_packed" : "local");
    }
}
END_TEST

/* NaN both ways: propagate (max/min.NaN, NaN through the adds) and ignore (max/min skip NaN,
 * sums replace NaN inputs by -0.0 before the packed adds). */
START_TEST(emulated_nans) {
  if (!gpu) return;
  static const int nl[] = {8, 17, 64, 100};
  for (size_t l = 0; l < sizeof nl / sizeof nl[0]; l++)
    for (int o = 0; o < 3; o++)
      for (int nan = 0; nan < 2; nan++)
        for (int acc = 0; acc < 2; acc++) {
          char json[1024];
          snprintf(
              json, sizeof json, "%s",
              rjt_fmt(PACKED, ops[o], acc ? "true" : "false", nan ? "ignore" : "propagate", nl[l]));
          for (int k = 1; k <= 3; k += 2)
            for (uint64_t seed = 0; seed < 2; seed++)
              run(json, seed + 11, k, 1, "sm100_packed");
        }
}
END_TEST

/* Without emulation on a pre-Blackwell GPU the same requests go to local (and still pass). */
START_TEST(unemulated_falls_back) {
  if (!gpu) return;
  for (int o = 0; o < 3; o++)
    run(rjt_fmt(PACKED, ops[o], "true", "propagate", 32), 5, 0, 0, NULL);
}
END_TEST

/* redux.sync, integer forms: whole-warp reductions, one element per lane, several per lane
 * (folded first), a sub-warp of a larger CTA, accum on and off. */
#define WARP_ALL                                                                                    \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\",\"accum\":%s,"              \
  "\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}}," \
  "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}}"
#define WARP_4                                                                                            \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\",\"accum\":%s,\"axes\":[0],"       \
  "\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],\"stride\":[\"1@lane\",1]}}," \
  "\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}}"
#define WARP_ALL2                                                                                         \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\",\"accum\":%s,\"axes\":[0,1],"     \
  "\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],\"stride\":[\"1@lane\",1]}}," \
  "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}}"
#define WARP5                                                                                                                  \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\",\"threads\":256,\"active\":{\"warp\":5},\"accum\":%s," \
  "\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},"                            \
  "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}}"

START_TEST(redux_integer) {
  if (!gpu) return;
  static const char *const shapes[] = {WARP_ALL, WARP_4, WARP_ALL2, WARP5};
  static const char *const dts[] = {"i32", "u32"};
  for (size_t sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
    for (int d = 0; d < 2; d++)
      for (int o = 0; o < 3; o++)
        for (int acc = 0; acc < 2; acc++) {
          char json[1024];
          snprintf(json, sizeof json, shapes[sh], ops[o], dts[d], acc ? "true" : "false");
          for (uint64_t seed = 0; seed < 3; seed++)
            run(json, seed * 31 + 1, 0, 0, "redux");
        }
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_packed");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, emulated_matrix, 0, NLENS);
  tcase_add_test(tc, emulated_nans);
  tcase_add_test(tc, unemulated_falls_back);
  tcase_add_test(tc, redux_integer);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
