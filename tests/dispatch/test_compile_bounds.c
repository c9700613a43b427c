/* Bounded compile time and memory for every kind of request: requests at (or next to) the
 * largest values the validator accepts -- shared tiles filling the static shared memory at every
 * scope, many dims and reduced axes, regions; register tiles at the unrolled bound and at the
 * looped limits; every subgroup primitive at the largest grid; tensors of 2^40 elements, 8 dims,
 * strides, dynamic, cluster; treduce with 128 ranks, 5 dims, strides and tiny tiles -- each
 * compiled in a child process of its own (fresh context, no disk cache, sm_90), whose CPU time
 * and peak memory the parent reads from wait4 (RJT_BOUNDS_VERBOSE=1 prints them).  Measured at most
 * 0.9 s and 70 MB each (docs/RELIABILITY.md); asserted here: 3 s of CPU (a loaded 2-core machine)
 * and 256 MB. */
#include "rjtest.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define BOUND_CPU_S 3.0
#define BOUND_RSS_MB 256.0

/* The child: exit 0 when json compiles, 2 when it is refused, 3 when compiling fails. */
static int child(const char *json) {
  alarm(60); /* a runaway compile ends as a signal, which the parent reports */
  rj_ctx *ctx = rj_ctx_new();
  rj_ctx_set_disk_cache(ctx, NULL);
  rj_request r;
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  int rc = rj_request_parse(ctx, json, &r) ? 2 : rj_compile(ctx, &r, &o, &k) ? 3 : 0;
  if (rc) fprintf(stderr, "%s\n  %s\n", rj_errmsg(ctx), json);
  rj_ctx_free(ctx);
  return rc;
}

static void bounded(const char *json) {
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) _exit(child(json));
  int st = 0;
  struct rusage ru;
  ck_assert_int_eq(wait4(pid, &st, 0, &ru), pid);
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  double mb = (double)ru.ru_maxrss / 1024.0;
  if (getenv("RJT_BOUNDS_VERBOSE")) printf("%6.2f s %5.0f MB %.150s\n", cpu, mb, json);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "not compiled (status 0x%x): %s", st, json);
  ck_assert_msg(cpu <= BOUND_CPU_S, "%.2f s of CPU to compile %s", cpu, json);
  ck_assert_msg(mb <= BOUND_RSS_MB, "%.0f MB to compile %s", mb, json);
}

#define TILE "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"%s\",\"threads\":%d,"
#define SH(S) "{\"mem\":\"shared\",\"shape\":" S "}"

START_TEST(shared_tiles) {
  static const struct {
    const char *scope;
    int threads;
    const char *active;
  } sc[] = {{"cta", 1024, ""},
            {"cta", 32, ""},
            {"warp", 1024, ",\"active\":{\"warp\":31}"},
            {"warpgroup", 1024, ",\"active\":{\"warpgroup\":7}"},
            {"thread", 1024, ",\"active\":{\"thread\":1023}"}};
  for (int i = 0; i < 5; i++) { /* 48 KiB of f16: long rows, long columns */
    bounded(rjt_fmt(TILE "\"src\":" SH("[2,12200]") ",\"dst\":" SH("[2]") ",\"axes\":[1]%s}", "sum",
                    "f16", sc[i].scope, sc[i].threads, sc[i].active));
    bounded(rjt_fmt(TILE "\"src\":" SH("[760,8]") ",\"dst\":" SH("[8]") ",\"axes\":[0]%s}", "max",
                    "f64", sc[i].scope, sc[i].threads, sc[i].active));
  }
  bounded(rjt_fmt(
      TILE "\"src\":" SH("[2,2,2,2,2,2,2,95]") ",\"dst\":" SH("[1]") ",\"axes\":[0,1,2,3,4,5,6,7]}",
      "sum", "f32", "cta", 256));
  bounded(rjt_fmt(
      TILE "\"src\":" SH("[3,2,3,2,3,2,3,9]") ",\"dst\":" SH("[3,3,3,3]") ",\"axes\":[1,3,5,7]}",
      "min", "i64", "cta", 96));
  bounded(rjt_fmt(TILE "\"src\":{\"mem\":\"shared\",\"shape\":[3000,3],\"start\":[1,1],"
                       "\"extent\":[2998,2]},\"dst\":{\"mem\":\"shared\",\"shape\":[3000],"
                       "\"start\":[2],\"extent\":[2998]},\"axes\":[1]}",
                  "sum", "f32", "cta", 1024));
}
END_TEST

#define LOC(S) "{\"mem\":\"local\",\"shape\":" S "}"

START_TEST(local_tiles) {
  /* the unrolled bound (288 slots), for the slowest dtypes and ops */
  static const char *const dt[] = {"u32", "i64", "i32", "f64"};
  for (int i = 0; i < 4; i++)
    bounded(rjt_fmt(TILE "\"src\":" LOC("[287]") ",\"dst\":" LOC("[1]") ",\"accum\":true}",
                    i & 1 ? "sum" : "min", dt[i], "thread", 1));
  /* looped, at the limits: 4096 slots a thread, 262144 a warpgroup */
  bounded(
      rjt_fmt(TILE "\"src\":" LOC("[4095]") ",\"dst\":" LOC("[1]") "}", "sum", "i64", "thread", 1));
  bounded(rjt_fmt(TILE "\"src\":" LOC("[4,819]") ",\"dst\":" LOC("[819]") ",\"axes\":[0]}", "max",
                  "f16", "thread", 1));
  bounded(rjt_fmt(TILE "\"src\":{\"mem\":\"local\",\"shape\":[32,2048],\"layout\":{\"shape\":"
                       "[32,2048],\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\","
                       "\"shape\":[2048],\"layout\":{\"shape\":[2048],\"stride\":[1],\"replicate\":"
                       "[[32,\"1@lane\"]]}},\"axes\":[0],\"accum\":true}",
                  "sum", "f32", "warp", 1024));
  bounded(rjt_fmt(TILE "\"src\":{\"mem\":\"local\",\"shape\":[128,682,2],\"layout\":{\"shape\":"
                       "[128,682,2],\"stride\":[\"1@thread\",2,1]}},\"dst\":{\"mem\":\"local\","
                       "\"shape\":[128,682],\"layout\":{\"shape\":[128,682],\"stride\":"
                       "[\"1@thread\",1]}},\"axes\":[2]}",
                  "sum", "f32", "warpgroup", 128));
  bounded(rjt_fmt(TILE
                  "\"src\":{\"mem\":\"local\",\"shape\":[32,6],\"layout\":{\"shape\":[32,6],"
                  "\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[6],"
                  "\"layout\":{\"shape\":[6],\"stride\":[817],\"replicate\":[[32,\"1@lane\"]]}},"
                  "\"axes\":[0],\"accum\":true}",
                  "sum", "f16", "warp", 32));
  /* 64 loop nests (the most): outputs 2 x 2 x 64, src slots c-major, dst slots b-major */
  bounded(rjt_fmt(TILE "\"src\":{\"mem\":\"local\",\"shape\":[2,2,64,2],\"layout\":{\"shape\":"
                       "[2,2,64,2],\"stride\":[1,256,4,2]}},\"dst\":{\"mem\":\"local\",\"shape\":"
                       "[2,2,64],\"layout\":{\"shape\":[2,2,64],\"stride\":[1,2,4]}},\"axes\":[3]}",
                  "sum", "i64", "thread", 1));
  for (int ax = 0; ax < 2; ax++) /* the mma fragment, 1024 columns: row and column reductions */
    bounded(rjt_fmt(
        TILE "\"src\":{\"mem\":\"local\",\"shape\":[16,1024],\"layout\":{\"shape\":[[2,8],"
             "[128,4,2]],\"stride\":[[2,\"4@lane\"],[4,\"1@lane\",1]]}},\"dst\":%s,\"axes\":[%d]}",
        "max", "f32", "warp", 32,
        ax ? "{\"mem\":\"local\",\"shape\":[16],\"layout\":{\"shape\":[[2,8]],\"stride\":[[1,"
             "\"4@lane\"]],\"replicate\":[[4,\"1@lane\"]]}}"
           : "{\"mem\":\"local\",\"shape\":[1024],\"layout\":{\"shape\":[[128,4,2]],\"stride\":[[2,"
             "\"1@lane\",1]],\"replicate\":[[8,\"4@lane\"]]}}",
        ax));
}
END_TEST

START_TEST(subgroups) {
  static const char *const prims[] = {"shuffle",        "broadcast",      "shuffle_down",
                                      "shuffle_up",     "shuffle_xor",    "reduce_add",
                                      "reduce_min",     "reduce_max",     "reduce_all_add",
                                      "reduce_all_min", "reduce_all_max", "invocation_id"};
  for (int i = 0; i < 12; i++)
    bounded(rjt_fmt("{\"kind\":\"subgroup\",\"primitive\":\"%s\",\"dtype\":\"%s\",\"log2_size\":5,"
                    "\"threads\":1024,\"blocks\":65535,\"arg\":31}",
                    prims[i], i == 11 ? "u64" : "f64"));
  bounded("{\"kind\":\"subgroup\",\"primitive\":\"shuffle\",\"dtype\":\"bf16\",\"threads\":1024,"
          "\"index\":[3,10,17,24,31,6,13,20,27,2,9,16,23,30,5,12,19,26,1,8,15,22,29,4,11,18,25,0,"
          "7,14,21,28]}");
}
END_TEST

#define TENSOR "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":%s,\"axes\":%s%s}"

START_TEST(tensors) {
  static const char *const shapes[][2] = {
      {"[1099511627776]", "[0]"},
      {"[1048576,1048576]", "[1]"},
      {"[1048576,1048576]", "[0]"},
      {"[32,32,32,32,32,32,32,32]", "[1,3,5,7]"},
      {"[32,32,32,32,32,32,32,32]", "[0,1,2,3,4,5,6,7]"},
      {"[262144]", "[0]"}, /* tensor_cluster */
  };
  for (int i = 0; i < 6; i++)
    for (int d = 0; d < 2; d++)
      bounded(rjt_fmt(TENSOR, d ? "max" : "sum", d ? "f16" : "f64", shapes[i][0], shapes[i][1],
                      d ? ",\"dynamic\":true" : ""));
  bounded(rjt_fmt(TENSOR, "sum", "f32", "[5,5,5,5,5,5,5,5]", "[0,2,4,6]",
                  ",\"strides\":[234375,46875,9375,1875,375,75,15,3]"));
  bounded(rjt_fmt(TENSOR, "min", "i64", "[5,5,5,5,5,5,5,5]", "[0,1,2,3,4,5,6]",
                  ",\"strides\":[0,0,0,0,0,0,0,1],\"accum\":true,\"nan\":\"ignore\""));
}
END_TEST

START_TEST(treduces) {
  bounded("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":128,\"shape\":[4096,"
          "1024]}");
  bounded("{\"kind\":\"treduce\",\"op\":\"max\",\"dtype\":\"f16\",\"ranks\":128,\"root\":127,"
          "\"shape\":[3,5,7,9,11],\"strides\":[10000,1000,100,10,1],\"dst_strides\":[1,3,15,105,"
          "945],\"tile\":[1,1],\"pingpong\":true,\"accum\":true}");
  bounded("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f64\",\"ranks\":128,\"shape\":[1024,"
          "1024],\"tile\":[1048576,1048576],\"pingpong\":true}");
}
END_TEST

int main(void) {
  Suite *s = suite_create("compile_bounds");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600); /* some 60 compiles, on a possibly loaded machine */
  tcase_add_test(tc, shared_tiles);
  tcase_add_test(tc, local_tiles);
  tcase_add_test(tc, subgroups);
  tcase_add_test(tc, tensors);
  tcase_add_test(tc, treduces);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
