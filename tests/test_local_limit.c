/* Compile-time bounds of register tiles: the local buffers' register slots per thread are
 * limited (IR_MAX_LOCAL_SLOTS), every accepted size compiles within a bound, every larger one is
 * refused naming the field.  Not run under valgrind (the bound is wall-clock time). */
#include "rjtest.h"

#include <time.h>

/* Local buffers span at most IR_MAX_LOCAL_SLOTS (288) register slots per thread, src and dst
 * together: every size the validator accepts around the limit compiles within a bound (measured
 * at most 0.7 s; 5 s here, for a loaded machine), and every larger one is refused naming the
 * field and the limit.  A sparse dst stride counts the whole slot range it spans. */
#define LOCAL_COMPILE_BOUND_S 5.0

static double seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Parses json; when valid, compiles it for sm_90 (no disk cache) and returns the seconds taken,
 * else -1 with the message in msg. */
static double local_compile(const char *json, char *msg, size_t n) {
  rj_ctx *ctx = rj_ctx_new();
  ck_assert_int_eq(rj_ctx_set_disk_cache(ctx, NULL), RJ_OK);
  rj_request r;
  double took = -1;
  if (rj_request_parse(ctx, json, &r) == RJ_OK) {
    rj_options o;
    rj_options_init(&o);
    o.target = "sm_90";
    rj_kernel *k = NULL;
    double t0 = seconds();
    rj_status s = rj_compile(ctx, &r, &o, &k);
    took = seconds() - t0;
    ck_assert_msg(s == RJ_OK, "compile failed (%s): %s\n  %s", rj_status_name(s), rj_errmsg(ctx),
                  json);
  } else {
    snprintf(msg, n, "%s", rj_errmsg(ctx));
  }
  rj_ctx_free(ctx);
  return took;
}

static void expect_local(const char *json, const char *refusal) {
  char msg[512] = "";
  double took = local_compile(json, msg, sizeof msg);
  if (!refusal) {
    ck_assert_msg(took >= 0, "refused: %s\n  %s", msg, json);
    ck_assert_msg(took <= LOCAL_COMPILE_BOUND_S, "%.2f s to compile %s", took, json);
  } else {
    ck_assert_msg(took < 0, "accepted: %s", json);
    ck_assert_msg(strstr(msg, refusal), "\"%s\" lacks \"%s\"", msg, refusal);
    ck_assert_msg(strstr(msg, "local buffers hold at most 288"), "%s", msg);
  }
}

#define THREAD_1D(D, N, DST)                                                                       \
  rjt_fmt("{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"%s\",\"scope\":\"thread\",\"src\":"       \
          "{\"mem\":\"local\",\"shape\":[%d]},\"dst\":{\"mem\":\"local\",\"shape\":[%d]},"         \
          "\"axes\":[0],\"accum\":true}",                                                          \
          D, N, DST)
#define THREAD_2D(N)                                                                               \
  rjt_fmt("{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"f16\",\"scope\":\"thread\",\"src\":"      \
          "{\"mem\":\"local\",\"shape\":[%d,4]},\"dst\":{\"mem\":\"local\",\"shape\":[4]},"        \
          "\"axes\":[0]}",                                                                         \
          N)
/* 6 elements a lane; dst slots 0, S, .., 5 S: a span of 5 S + 1 */
#define WARP_SPARSE(D, S)                                                                          \
  rjt_fmt("{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"%s\",\"scope\":\"warp\",\"src\":"         \
          "{\"mem\":\"local\",\"shape\":[32,6],\"layout\":{\"shape\":[32,6],\"stride\":"           \
          "[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[6],\"layout\":{\"shape\":[6],"   \
          "\"stride\":[%d],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0],\"accum\":true}",        \
          D, S)

START_TEST(local_slot_limit) {
  static const char *const dt[] = {"i64", "f32", "f16"};
  for (int i = 0; i < 3; i++) {
    expect_local(THREAD_1D(dt[i], 256, 1), NULL);
    expect_local(THREAD_1D(dt[i], 287, 1), NULL); /* 288 */
    expect_local(THREAD_1D(dt[i], 288, 1),
                 "dst.shape: 1 register slot per thread, and src has 288");
    expect_local(THREAD_1D(dt[i], 289, 1), "src.shape: 289 register slots per thread");
    expect_local(WARP_SPARSE(dt[i], 56), NULL); /* 6 + 281 */
    expect_local(WARP_SPARSE(dt[i], 57),
                 "dst.layout: 286 register slots per thread (the range its slot strides span), "
                 "and src has 6");
  }
  expect_local(THREAD_2D(71), NULL); /* 284 + 4 */
  expect_local(THREAD_2D(72), "dst.shape: 4 register slots per thread, and src has 288");
  expect_local(THREAD_2D(1024), "src.shape: 4096 register slots per thread");
  expect_local(THREAD_1D("f32", 2048, 1), "src.shape: 2048 register slots per thread");
}
END_TEST

/* The compile-time reproducers in tests/repro/: each is refused naming the field (or, were the
 * limit raised, compiles within the bound). */
START_TEST(repro_local_hangs) {
  static const struct {
    const char *file, *field;
  } cases[] = {
      {"json_hang_local_1024x4.json", "src.shape: 4096 register slots"},
      {"json_hang_warp_sparse_dst819.json", "dst.layout: 4096 register slots"},
      {"json_hang_warp_sparse_dst.json", "dst.layout: 1401 register slots"},
      {"json_hang_libfuzzer_local2155.json", "src.shape: 2155 register slots"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *text = rjt_repro_text(cases[i].file);
    char msg[512] = "";
    double took = local_compile(text, msg, sizeof msg);
    if (took >= 0)
      ck_assert_msg(took <= LOCAL_COMPILE_BOUND_S, "%s: %.2f s", cases[i].file, took);
    else
      ck_assert_msg(strstr(msg, cases[i].field), "%s: \"%s\" lacks \"%s\"", cases[i].file, msg,
                    cases[i].field);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("local_limit");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300); /* a dozen large tiles compiled, on a possibly loaded machine */
  tcase_add_test(tc, local_slot_limit);
  tcase_add_test(tc, repro_local_hangs);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
