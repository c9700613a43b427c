/* Register tiles: up to IR_LOCAL_UNROLL_SLOTS (288) register slots per thread the slots are
 * unrolled and stay in registers; past it the tile loops over its slots (in local memory), up to
 * IR_MAX_LOCAL_SLOTS (4096) slots per thread and 262144 in a scope instance; every larger one is
 * refused naming the field and the limit.  Every accepted size around the bounds compiles within
 * a bound (tests/dispatch/test_compile_bounds.c measures each in a process of its own).  Not run
 * under valgrind (the bound is time). */
#include "rjtest.h"

#include <sys/resource.h>

/* measured at most 0.9 s of CPU on a loaded 2-core machine (docs/RELIABILITY.md); 3 s here */
#define LOCAL_COMPILE_BOUND_S 3.0

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* Parses json; when valid, compiles it for sm_90 (no disk cache) and returns the CPU seconds
 * taken (the PTX's use of local memory in *local), else (refused, or no variant) -1 with the
 * message in msg. */
static double local_compile(const char *json, char *msg, size_t n, int *local) {
  rj_ctx *ctx = rj_ctx_new();
  ck_assert_int_eq(rj_ctx_set_disk_cache(ctx, NULL), RJ_OK);
  rj_request r;
  double took = -1;
  if (rj_request_parse(ctx, json, &r) == RJ_OK) {
    rj_options o;
    rj_options_init(&o);
    o.target = "sm_90";
    rj_kernel *k = NULL;
    double t0 = cpu_seconds();
    rj_status s = rj_compile(ctx, &r, &o, &k);
    took = cpu_seconds() - t0;
    if (s == RJ_ENOVARIANT) { /* declined by the variants: the message, as for a refusal */
      snprintf(msg, n, "%s", rj_errmsg(ctx));
      rj_ctx_free(ctx);
      return -1;
    }
    ck_assert_msg(s == RJ_OK, "compile failed (%s): %s\n  %s", rj_status_name(s), rj_errmsg(ctx),
                  json);
    if (local) *local = strstr(rj_kernel_text(k, RJ_EMIT_PTX), "__local_depot") != NULL;
  } else {
    snprintf(msg, n, "%s", rj_errmsg(ctx));
  }
  rj_ctx_free(ctx);
  return took;
}

/* refusal NULL: compiles within the bound, its slots in registers (looped 0) or in local memory
 * (looped 1); else refused with a message holding refusal and naming the limit. */
static void expect_local(const char *json, int looped, const char *refusal) {
  char msg[512] = "";
  int local = -1;
  double took = local_compile(json, msg, sizeof msg, &local);
  if (!refusal) {
    ck_assert_msg(took >= 0, "refused: %s\n  %s", msg, json);
    ck_assert_msg(took <= LOCAL_COMPILE_BOUND_S, "%.2f s to compile %s", took, json);
    ck_assert_msg(local == looped, "local memory %d, expected %d: %s", local, looped, json);
  } else {
    ck_assert_msg(took < 0, "accepted: %s", json);
    ck_assert_msg(strstr(msg, refusal), "\"%s\" lacks \"%s\"", msg, refusal);
    ck_assert_msg(strstr(msg, "hold at most"), "%s", msg);
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

#define WARPGROUP(E)                                                                               \
  rjt_fmt(                                                                                         \
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warpgroup\",\"src\":"       \
      "{\"mem\":\"local\",\"shape\":[128,%d,2],\"layout\":{\"shape\":[128,%d,2],\"stride\":"       \
      "[\"1@thread\",2,1]}},\"dst\":{\"mem\":\"local\",\"shape\":[128,%d],\"layout\":{\"shape\":"  \
      "[128,%d],\"stride\":[\"1@thread\",1]}},\"axes\":[2]}",                                      \
      E, E, E, E)

/* Outputs (a, b, c) of 2 x 2 x C, each folding 2 slots: the src slots go c-major, the dst slots
 * b-major, so that looping leaves C loop nests (one per c) */
#define IRREGULAR(C)                                                                               \
  rjt_fmt("{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"i64\",\"scope\":\"thread\",\"src\":"      \
          "{\"mem\":\"local\",\"shape\":[2,2,%d,2],\"layout\":{\"shape\":[2,2,%d,2],\"stride\":"   \
          "[1,%d,4,2]}},\"dst\":{\"mem\":\"local\",\"shape\":[2,2,%d],\"layout\":{\"shape\":"      \
          "[2,2,%d],\"stride\":[1,2,4]}},\"axes\":[3],\"accum\":true}",                            \
          C, C, 4 * (C), C, C)

START_TEST(local_slot_limit) {
  static const char *const dt[] = {"i64", "f32", "f16"};
  for (int i = 0; i < 3; i++) {
    expect_local(THREAD_1D(dt[i], 287, 1), 0, NULL); /* 288: unrolled */
    expect_local(THREAD_1D(dt[i], 288, 1), 1, NULL); /* 289: looped */
    expect_local(THREAD_1D(dt[i], 4095, 1), 1, NULL);
    expect_local(THREAD_1D(dt[i], 4096, 1), -1,
                 "dst.shape: 1 register slot per thread, and src has 4096");
    expect_local(THREAD_1D(dt[i], 4097, 1), -1, "src.shape: 4097 register slots per thread");
    expect_local(WARP_SPARSE(dt[i], 56), 0, NULL);  /* 6 + 281 */
    expect_local(WARP_SPARSE(dt[i], 57), 1, NULL);  /* 6 + 286 */
    expect_local(WARP_SPARSE(dt[i], 817), 1, NULL); /* 6 + 4086 */
    expect_local(WARP_SPARSE(dt[i], 818), -1,
                 "dst.layout: 4091 register slots per thread (the range its slot strides span), "
                 "and src has 6");
  }
  expect_local(THREAD_2D(71), 0, NULL);   /* 284 + 4 */
  expect_local(THREAD_2D(72), 1, NULL);   /* 288 + 4 */
  expect_local(THREAD_2D(1023), 1, NULL); /* 4092 + 4 */
  expect_local(THREAD_2D(1024), -1, "dst.shape: 4 register slots per thread, and src has 4096");
  expect_local(THREAD_1D("f32", 1 << 20, 1), -1, "src.shape: 1048576 register slots per thread");
  expect_local(IRREGULAR(64), 1, NULL); /* 64 loop nests */
  char msg[512] = "";
  ck_assert(local_compile(IRREGULAR(65), msg, sizeof msg, NULL) < 0);
  ck_assert_msg(strstr(msg, "local: src.layout: 780 register slots per thread are too many to "
                            "unroll, and looping over them leaves more than 64 runs of slots"),
                "%s", msg);
  expect_local(WARPGROUP(682), 1, NULL); /* 2046 slots a thread, 261888 in the warpgroup */
  expect_local(WARPGROUP(683), -1,
               "src.layout: src and dst span 2049 register slots per thread, "
               "262272 over the 128 threads of the warpgroup; a warpgroup's local "
               "buffers hold at most 262144 (2048 slots per thread)");
}
END_TEST

/* The compile-time reproducers in tests/repro/: each compiles within the bound, or is refused
 * naming the field. */
START_TEST(repro_local_hangs) {
  static const struct {
    const char *file, *field;
  } cases[] = {
      {"json_hang_local_1024x4.json", "dst.shape: 4 register slots per thread, and src has 4096"},
      {"json_hang_warp_sparse_dst819.json", "dst.layout: 4096 register slots"},
      {"json_hang_warp_sparse_dst.json", NULL},
      {"json_hang_libfuzzer_local2155.json", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *text = rjt_repro_text(cases[i].file);
    char msg[512] = "";
    double took = local_compile(text, msg, sizeof msg, NULL);
    if (!cases[i].field)
      ck_assert_msg(took >= 0 && took <= LOCAL_COMPILE_BOUND_S, "%s: %.2f s (%s)", cases[i].file,
                    took, msg);
    else
      ck_assert_msg(took < 0 && strstr(msg, cases[i].field), "%s: \"%s\" lacks \"%s\"",
                    cases[i].file, msg, cases[i].field);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("local_limit");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300); /* some 30 tiles compiled, on a possibly loaded machine */
  tcase_add_test(tc, local_slot_limit);
  tcase_add_test(tc, repro_local_hangs);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
