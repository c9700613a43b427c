/* GPU suite for the tile variants: the whole TVM test_reduction.py matrix for shared and local
 * (../shared/reference/tvm-tirx-reduction.md section 3), plus bf16, f64 and the integer dtypes,
 * NaN both ways, and the cases the reference gets wrong (accum on the shuffle path, thread
 * counts that are not a multiple of the group, long rows on a whole CTA).  Each case runs with
 * several seeds against the float64 oracle, outputs poisoned.  Skips, saying so, with no GPU. */
#include "rjtest.h"

#include <stdbool.h>

static rj_ctx *ctx;
static int gpu;
static int cases_run;

static const char *const ops[] = {"sum", "max", "min"};
static const char *const all_dtypes[] = {"f16", "bf16", "f32", "f64", "i32", "u32", "i64", "u64"};

static void run(const char *json, int seeds) {
  for (int s = 0; s < seeds; s++)
    rjt_run_ok(ctx, json, (uint64_t)(s * 7919 + 1), 0);
  cases_run++;
}

static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

/* 1. test_reduction_shared: 6 shapes x ops x {f32, f16} x accum, then every other dtype */
typedef struct shape_case {
  const char *src, *dst, *axes;
  int big;
} shape_case;
static const shape_case shared_shapes[] = {
    {"\"shape\":[32,32]", "\"shape\":[32]", "[-1]", 0},
    {"\"shape\":[32,32]", "\"shape\":[32]", "[0]", 0},
    {"\"shape\":[8,16,2,22]", "\"shape\":[8,16]", "[-2,-1]", 1},
    {"\"shape\":[4,8,6]", "\"shape\":[4,6]", "[1]", 0},
    {"\"shape\":[32,7]", "\"shape\":[32]", "[-1]", 0},
    {"\"shape\":[32,32],\"start\":[1,1],\"extent\":[5,8]",
     "\"shape\":[32],\"start\":[2],\"extent\":[5]", "[-1]", 0},
};

START_TEST(shared_matrix) {
  if (!gpu) return;
  const shape_case *c = &shared_shapes[_i];
  for (int d = 0; d < 8; d++)
    for (int o = 0; o < 3; o++)
      for (int acc = 0; acc < 2; acc++) {
        bool main_dtypes = d == 0 || d == 2; /* f16, f32: the reference's matrix, more seeds */
        run(rjt_fmt(
                "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"cta\",\"threads\":%d,"
                "\"src\":{\"mem\":\"shared\",%s},\"dst\":{\"mem\":\"shared\",%s},\"axes\":%s,\"accum\":%s}",
                ops[o], all_dtypes[d], c->big ? 128 : 32, c->src, c->dst, c->axes,
                acc ? "true" : "false"),
            main_dtypes ? 3 : 2);
      }
}
END_TEST

/* 2. test_reduction_shared_subscope: warp 5 / warpgroup 0 / thread 65 of 256 */
START_TEST(shared_subscope) {
  if (!gpu) return;
  static const char *const scopes[] = {"\"scope\":\"warp\",\"active\":{\"warp\":5}",
                                       "\"scope\":\"warpgroup\",\"active\":{\"warpgroup\":0}",
                                       "\"scope\":\"warpgroup\",\"active\":{\"warpgroup\":1}",
                                       "\"scope\":\"thread\",\"active\":{\"thread\":65}"};
  for (int sc = 0; sc < 4; sc++)
    for (int o = 0; o < 3; o++)
      for (int acc = 0; acc < 2; acc++)
        run(rjt_fmt(
                "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"f32\",%s,\"threads\":256,"
                "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]},"
                "\"accum\":%s}",
                ops[o], scopes[sc], acc ? "true" : "false"),
            3);
}
END_TEST

/* Beyond the reference: long rows with warps cooperating (two levels), groups that do not
 * fill a warp, partial warps, and odd lengths. */
START_TEST(shared_long_rows) {
  if (!gpu) return;
  static const char *const cases[] = {
      "\"scope\":\"cta\",\"threads\":256,\"src\":{\"mem\":\"shared\",\"shape\":[1,4096]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}",
      "\"scope\":\"cta\",\"threads\":1024,\"src\":{\"mem\":\"shared\",\"shape\":[3,1000]},\"dst\":{\"mem\":\"shared\",\"shape\":[3]}",
      "\"scope\":\"cta\",\"threads\":512,\"src\":{\"mem\":\"shared\",\"shape\":[5,777]},\"dst\":{\"mem\":\"shared\",\"shape\":[5,1]}",
      "\"scope\":\"cta\",\"threads\":96,\"src\":{\"mem\":\"shared\",\"shape\":[2,2000]},\"dst\":{\"mem\":\"shared\",\"shape\":[2]}",
      /* warp counts that W does not divide: the spare warps only meet the barriers */
      "\"scope\":\"cta\",\"threads\":96,\"src\":{\"mem\":\"shared\",\"shape\":[1,2000]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}",
      "\"scope\":\"cta\",\"threads\":320,\"src\":{\"mem\":\"shared\",\"shape\":[1,3000]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}",
      "\"scope\":\"warpgroup\",\"threads\":256,\"active\":{\"warpgroup\":1},\"src\":{\"mem\":\"shared\",\"shape\":[2,1024]},\"dst\":{\"mem\":\"shared\",\"shape\":[2]}",
      "\"scope\":\"cta\",\"threads\":48,\"src\":{\"mem\":\"shared\",\"shape\":[7,16]},\"dst\":{\"mem\":\"shared\",\"shape\":[7]}",
      "\"scope\":\"cta\",\"threads\":8,\"src\":{\"mem\":\"shared\",\"shape\":[3,100]},\"dst\":{\"mem\":\"shared\",\"shape\":[3]}",
      "\"scope\":\"cta\",\"threads\":1,\"src\":{\"mem\":\"shared\",\"shape\":[3,5]},\"dst\":{\"mem\":\"shared\",\"shape\":[3]}",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"shared\",\"shape\":[100,3]},\"dst\":{\"mem\":\"shared\",\"shape\":[100]}",
      "\"scope\":\"cta\",\"threads\":64,\"src\":{\"mem\":\"shared\",\"shape\":[6,5,4,3]},\"dst\":{\"mem\":\"shared\",\"shape\":[5,3]},\"axes\":[0,2]",
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int o = 0; o < 3; o++)
      for (int d = 0; d < 8; d += 1 + (c % 2)) /* every dtype on half the cases */
        run(rjt_fmt("{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"accum\":%s}", ops[o],
                    all_dtypes[d], cases[c], (c + o) % 2 ? "true" : "false"),
            2);
}
END_TEST

/* 3. test_reduction_local_thread_wise: 10 shapes x ops x accum, 1 thread */
static const char *const thread_shapes[][3] = {
    {"[1]", "[1]", "[0]"},       {"[4]", "[1]", "[0]"},       {"[7]", "[1]", "[0]"},
    {"[16]", "[1]", "[0]"},      {"[32]", "[1]", "[0]"},      {"[4,8]", "[8]", "[0]"},
    {"[4,8]", "[4]", "[1]"},     {"[3,4,5]", "[4]", "[0,2]"}, {"[2,3,4]", "[2,3]", "[-1]"},
    {"[2,3,4]", "[3,4]", "[0]"},
};

START_TEST(local_thread_wise) {
  if (!gpu) return;
  for (int d = 0; d < 8; d++)
    for (int o = 0; o < 3; o++)
      for (int acc = 0; acc < 2; acc++)
        run(rjt_fmt(
                "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"thread\","
                "\"src\":{\"mem\":\"local\",\"shape\":%s},\"dst\":{\"mem\":\"local\",\"shape\":%s},"
                "\"axes\":%s,\"accum\":%s}",
                ops[o], all_dtypes[d], thread_shapes[_i][0], thread_shapes[_i][1],
                thread_shapes[_i][2], acc ? "true" : "false"),
            d == 2 ? 3 : 1);
}
END_TEST

/* 4. test_reduction_local_view_basic: one row of registers per lane */
START_TEST(local_view_basic) {
  if (!gpu) return;
  static const char *const cases[] = {
      /* (64,) -> (1,), then sliced [:, 16:32] */
      "\"src\":{\"mem\":\"local\",\"shape\":[32,64],\"layout\":{\"shape\":[32,64],\"stride\":[\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[32,1],\"layout\":{\"shape\":[32,1],\"stride\":[\"1@lane\",1]}},\"axes\":[-1]",
      "\"src\":{\"mem\":\"local\",\"shape\":[32,64],\"start\":[0,16],\"extent\":[32,16],\"layout\":{\"shape\":[32,64],\"stride\":[\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[32,1],\"layout\":{\"shape\":[32,1],\"stride\":[\"1@lane\",1]}},\"axes\":[-1]",
      /* (4,8) -> (1,1) over axes (1,2); -> (4,1) over -1; -> (1,8) over 1 */
      "\"src\":{\"mem\":\"local\",\"shape\":[32,4,8],\"layout\":{\"shape\":[32,4,8],\"stride\":[\"1@lane\",8,1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[32,1,1],\"layout\":{\"shape\":[32,1,1],\"stride\":[\"1@lane\",1,1]}},\"axes\":[1,2]",
      "\"src\":{\"mem\":\"local\",\"shape\":[32,4,8],\"layout\":{\"shape\":[32,4,8],\"stride\":[\"1@lane\",8,1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[32,4,1],\"layout\":{\"shape\":[32,4,1],\"stride\":[\"1@lane\",1,1]}},\"axes\":[-1]",
      "\"src\":{\"mem\":\"local\",\"shape\":[32,4,8],\"layout\":{\"shape\":[32,4,8],\"stride\":[\"1@lane\",8,1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[32,1,8],\"layout\":{\"shape\":[32,1,8],\"stride\":[\"1@lane\",8,1]}},\"axes\":[1]",
      /* dst region: only lanes 4..11 write */
      "\"src\":{\"mem\":\"local\",\"shape\":[32,8],\"start\":[4,0],\"extent\":[8,8],\"layout\":{\"shape\":[32,8],\"stride\":[\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[32],\"start\":[4],\"extent\":[8],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},\"axes\":[-1]",
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int o = 0; o < 3; o++)
      for (int d = 0; d < 8; d++)
        for (int acc = 0; acc < 2; acc++)
          run(rjt_fmt(
                  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\",%s,\"accum\":%s}",
                  ops[o], all_dtypes[d], cases[c], acc ? "true" : "false"),
              1);
}
END_TEST

/* 5. test_reduction_local_view_complex: the wgmma/mma accumulator fragment's row reduction, on
 * 1, 4 and 8 warps, f32 / f16 (and the rest), accum on and off (the reference skips accum without
 * shuffle; here both are one path). */
START_TEST(local_mma_fragment) {
  if (!gpu) return;
  static const int Js[] = {1, 2, 4, 16};
  static const int warps[] = {1, 4, 8};
  for (int w = 0; w < 3; w++)
    for (int j = 0; j < 4; j++)
      for (int o = 0; o < 3; o++)
        for (int d = 0; d < 8; d++)
          for (int acc = 0; acc < 2; acc++) {
            if (d != 0 && d != 2 && (j != 1 || w != 1)) continue; /* other dtypes: one shape */
            int J = Js[j];
            run(rjt_fmt(
                    "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\",\"threads\":%d,"
                    "\"accum\":%s,"
                    "\"src\":{\"mem\":\"local\",\"shape\":[16,%d],\"layout\":{\"shape\":[[2,8],[%d,4,2]],"
                    "\"stride\":[[2,\"4@lane\"],[4,\"1@lane\",1]]}},"
                    "\"dst\":{\"mem\":\"local\",\"shape\":[16],\"layout\":{\"shape\":[[2,8]],"
                    "\"stride\":[[1,\"4@lane\"]],\"replicate\":[[4,\"1@lane\"]]}}}",
                    ops[o], all_dtypes[d], 32 * warps[w], acc ? "true" : "false", 8 * J, J),
                2);
          }
}
END_TEST

/* 8-12. warp shuffles: every lane holds the result; multi-element; gapped storage; warpgroup */
START_TEST(local_warp_shuffle) {
  if (!gpu) return;
  static const char *const cases[] = {
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],\"stride\":[\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0]",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,2,2],\"layout\":{\"shape\":[32,2,2],\"stride\":[\"1@lane\",2,4]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[2,2],\"layout\":{\"shape\":[2,2],\"stride\":[2,4],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0]",
      "\"scope\":\"warpgroup\",\"src\":{\"mem\":\"local\",\"shape\":[128,16],\"layout\":{\"shape\":[128,16],\"stride\":[\"1@thread\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[128,1],\"layout\":{\"shape\":[128,1],\"stride\":[\"1@thread\",1]}}",
      /* reduced to lane 0 only (no replica) */
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1]}}",
      /* groups of 8 lanes: 4 outputs, each on its 8 lanes */
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[4,8,3],\"layout\":{\"shape\":[4,8,3],\"stride\":[\"8@lane\",\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4],\"stride\":[\"8@lane\"],\"replicate\":[[8,\"1@lane\"]]}},\"axes\":[1,2]",
      /* a warpgroup where each warp reduces across its lanes */
      "\"scope\":\"warpgroup\",\"threads\":256,\"active\":{\"warpgroup\":1},\"src\":{\"mem\":\"local\",\"shape\":[4,32],\"layout\":{\"shape\":[4,32],\"stride\":[\"32@thread\",\"1@lane\"]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4],\"stride\":[\"32@thread\"],\"replicate\":[[32,\"1@lane\"]]}}",
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int o = 0; o < 3; o++)
      for (int d = 0; d < 8; d++)
        for (int acc = 0; acc < 2; acc++)
          run(rjt_fmt("{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"accum\":%s}", ops[o],
                      all_dtypes[d], cases[c], acc ? "true" : "false"),
              2);
}
END_TEST

/* NaN: propagate makes max/min/sum NaN; ignore skips NaN inputs. */
/* Tiles past the unrolled bound (288 register slots per thread): the looped emission (slots in
 * local memory), each compared with the oracle like the unrolled ones; thread, warp with a sparse
 * dst, many outputs, the mma fragment's row and column reductions, a warpgroup near its limit. */
START_TEST(local_looped) {
  if (!gpu) return;
  static const char *const cases[] = {
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[289]},\"dst\":{\"mem\":\"local\","
      "\"shape\":[1]}",
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[4095]},\"dst\":{\"mem\":\"local\","
      "\"shape\":[1]}",
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[300,4]},\"dst\":{\"mem\":\"local\","
      "\"shape\":[4]},\"axes\":[0]",
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[4,500]},\"dst\":{\"mem\":\"local\","
      "\"shape\":[500]},\"axes\":[0]",
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[12,30,7],\"start\":[1,2,0],"
      "\"extent\":[10,25,7]},\"dst\":{\"mem\":\"local\",\"shape\":[10,7]},\"axes\":[1]",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,6],\"layout\":{\"shape\":[32,6],"
      "\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[6],\"layout\":{\"shape\":[6],"
      "\"stride\":[280],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0]",
      "\"scope\":\"warp\",\"threads\":128,\"src\":{\"mem\":\"local\",\"shape\":[32,300],\"layout\":"
      "{\"shape\":[32,300],\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[300],"
      "\"layout\":{\"shape\":[300],\"stride\":[1]}},\"axes\":[0]",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[16,1024],\"layout\":{\"shape\":"
      "[[2,8],[128,4,2]],\"stride\":[[2,\"4@lane\"],[4,\"1@lane\",1]]}},\"dst\":{\"mem\":\"local\","
      "\"shape\":[16],\"layout\":{\"shape\":[[2,8]],\"stride\":[[1,\"4@lane\"]],\"replicate\":"
      "[[4,\"1@lane\"]]}},\"axes\":[1]",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[16,1024],\"layout\":{\"shape\":"
      "[[2,8],[128,4,2]],\"stride\":[[2,\"4@lane\"],[4,\"1@lane\",1]]}},\"dst\":{\"mem\":\"local\","
      "\"shape\":[1024],\"layout\":{\"shape\":[[128,4,2]],\"stride\":[[2,\"1@lane\",1]],"
      "\"replicate\":[[8,\"4@lane\"]]}},\"axes\":[0]",
      "\"scope\":\"warpgroup\",\"src\":{\"mem\":\"local\",\"shape\":[128,300,2],\"layout\":"
      "{\"shape\":[128,300,2],\"stride\":[\"1@thread\",2,1]}},\"dst\":{\"mem\":\"local\","
      "\"shape\":[128,300],\"layout\":{\"shape\":[128,300],\"stride\":[\"1@thread\",1]}},"
      "\"axes\":[2]",
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int o = 0; o < 3; o++)
      for (int d = 0; d < 8; d++)
        for (int acc = 0; acc < 2; acc++) {
          if (c > 0 && d != 0 && d != 2 && d != 6) continue; /* f16, f32, i64 past the first */
          run(rjt_fmt("{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"accum\":%s}", ops[o],
                      all_dtypes[d], cases[c], acc ? "true" : "false"),
              2);
        }
}
END_TEST

START_TEST(nan_policies) {
  if (!gpu) return;
  static const char *const bodies[] = {
      "\"scope\":\"cta\",\"threads\":64,\"src\":{\"mem\":\"shared\",\"shape\":[16,40]},\"dst\":{\"mem\":\"shared\",\"shape\":[16]}",
      "\"scope\":\"cta\",\"threads\":256,\"src\":{\"mem\":\"shared\",\"shape\":[2,3000]},\"dst\":{\"mem\":\"shared\",\"shape\":[2]}",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],\"stride\":[\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0]",
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[6,10]},\"dst\":{\"mem\":\"local\",\"shape\":[6]}",
  };
  static const char *const fl[] = {"f16", "bf16", "f32", "f64"};
  for (int b = 0; b < 4; b++)
    for (int o = 0; o < 3; o++)
      for (int d = 0; d < 4; d++)
        for (int nan = 0; nan < 2; nan++) {
          const char *j =
              rjt_fmt("{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",%s,\"nan\":\"%s\"}",
                      ops[o], fl[d], bodies[b], nan ? "ignore" : "propagate");
          for (int s = 0; s < 3; s++)
            rjt_run_ok(ctx, j, 100 + (uint64_t)s, 1 + s * 3);
          cases_run++;
        }
}
END_TEST

/* The state ops (argmax argmin var std logsumexp) in the tile kinds: shared (one level, two
 * levels, a warpgroup's named barrier, partial warps, several reduced dims) and local (whole warp,
 * lane groups, thread-wise, looped slots), every op x dtype (argmax / argmin: integers too), the
 * four input styles (seeds 1 9 17 25: ties, offsets and magnitudes, -inf rows, constant rows),
 * NaNs propagated and ignored. */
static const char *const state_ops[] = {"argmax", "argmin", "var", "std", "logsumexp"};

static void state_matrix(const char *const *bodies, int nb) {
  static const char *const dts[] = {"f32", "f16", "bf16", "f64", "i32", "u64"};
  static const uint64_t seeds[] = {1, 9, 17, 25};
  for (int b = 0; b < nb; b++)
    for (int o = 0; o < 5; o++)
      for (int d = 0; d < (o < 2 ? 6 : 4); d++) {
        if (b % 2 && d != 0 && d != 2 && d != 4) continue; /* f32 bf16 i32 on half the bodies */
        for (int nan = 0; nan < (d < 4 ? 2 : 1); nan++) {
          const char *j = rjt_fmt("{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",%s,"
                                  "\"nan\":\"%s\"%s}",
                                  state_ops[o], dts[d], bodies[b], nan ? "ignore" : "propagate",
                                  o == 2 && b % 3 == 1 ? ",\"correction\":0" : "");
          for (int s = 0; s < 4; s++)
            rjt_run_ok(ctx, j, seeds[s], d < 4 ? (s + nan) % 3 * 2 : 0);
          cases_run++;
        }
      }
}

START_TEST(state_shared) {
  if (!gpu) return;
  static const char *const bodies[] = {
      "\"scope\":\"cta\",\"threads\":64,\"src\":{\"mem\":\"shared\",\"shape\":[16,40]},\"dst\":{\"mem\":\"shared\",\"shape\":[16]}",
      "\"scope\":\"cta\",\"threads\":256,\"src\":{\"mem\":\"shared\",\"shape\":[2,3000]},\"dst\":{\"mem\":\"shared\",\"shape\":[2]}",
      "\"scope\":\"warpgroup\",\"threads\":256,\"active\":{\"warpgroup\":1},\"src\":{\"mem\":\"shared\",\"shape\":[2,1024]},\"dst\":{\"mem\":\"shared\",\"shape\":[2]}",
      "\"scope\":\"cta\",\"threads\":96,\"src\":{\"mem\":\"shared\",\"shape\":[1,2000]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"shared\",\"shape\":[100,3]},\"dst\":{\"mem\":\"shared\",\"shape\":[100]}",
      "\"scope\":\"cta\",\"threads\":48,\"src\":{\"mem\":\"shared\",\"shape\":[7,16]},\"dst\":{\"mem\":\"shared\",\"shape\":[7]}",
      "\"scope\":\"cta\",\"threads\":64,\"src\":{\"mem\":\"shared\",\"shape\":[6,5,4,3]},\"dst\":{\"mem\":\"shared\",\"shape\":[5,3]},\"axes\":[0,2]",
      "\"scope\":\"cta\",\"threads\":1,\"src\":{\"mem\":\"shared\",\"shape\":[3,5]},\"dst\":{\"mem\":\"shared\",\"shape\":[3]}",
  };
  state_matrix(bodies, (int)(sizeof bodies / sizeof bodies[0]));
}
END_TEST

START_TEST(state_local) {
  if (!gpu) return;
  static const char *const bodies[] = {
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],\"stride\":[\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0]",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[4,8,3],\"layout\":{\"shape\":[4,8,3],\"stride\":[\"8@lane\",\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4],\"stride\":[\"8@lane\"],\"replicate\":[[8,\"1@lane\"]]}},\"axes\":[1,2]",
      "\"scope\":\"warpgroup\",\"src\":{\"mem\":\"local\",\"shape\":[128,16],\"layout\":{\"shape\":[128,16],\"stride\":[\"1@thread\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[128,1],\"layout\":{\"shape\":[128,1],\"stride\":[\"1@thread\",1]}}",
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[6,10]},\"dst\":{\"mem\":\"local\",\"shape\":[6]}",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,2,2],\"layout\":{\"shape\":[32,2,2],\"stride\":[\"1@lane\",2,4]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[2,2],\"layout\":{\"shape\":[2,2],\"stride\":[2,4],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0]",
      /* looped slots (past the unrolled bound) */
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[300,4]},\"dst\":{\"mem\":\"local\",\"shape\":[4]},\"axes\":[0]",
      "\"scope\":\"warp\",\"threads\":128,\"src\":{\"mem\":\"local\",\"shape\":[32,300],\"layout\":"
      "{\"shape\":[32,300],\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[300],"
      "\"layout\":{\"shape\":[300],\"stride\":[1]}},\"axes\":[0]",
  };
  state_matrix(bodies, (int)(sizeof bodies / sizeof bodies[0]));
}
END_TEST

/* Fused maps and epilogues (docs/TENSOR.md "Fused maps"): the named one-input ops and explicit
 * map / epilogue pairs over shared tiles (one level, two levels, a warp, one thread) and local
 * tiles (a whole warp, lane groups, a warpgroup, thread-wise, looped slots), each dtype that
 * takes them, NaNs propagated and ignored, against the float64 oracle's map and epilogue. */
START_TEST(fused) {
  if (!gpu) return;
  static const char *const bodies[] = {
      "\"scope\":\"cta\",\"threads\":64,\"src\":{\"mem\":\"shared\",\"shape\":[16,40]},\"dst\":{\"mem\":\"shared\",\"shape\":[16]}",
      "\"scope\":\"cta\",\"threads\":256,\"src\":{\"mem\":\"shared\",\"shape\":[1,4096]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}",
      "\"scope\":\"warp\",\"threads\":128,\"active\":{\"warp\":2},\"src\":{\"mem\":\"shared\",\"shape\":[100,3]},\"dst\":{\"mem\":\"shared\",\"shape\":[100]}",
      "\"scope\":\"thread\",\"threads\":64,\"active\":{\"thread\":33},\"src\":{\"mem\":\"shared\",\"shape\":[3,50]},\"dst\":{\"mem\":\"shared\",\"shape\":[3]}",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],\"stride\":[\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0,1]",
      "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[4,8,3],\"layout\":{\"shape\":[4,8,3],\"stride\":[\"8@lane\",\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4],\"stride\":[\"8@lane\"],\"replicate\":[[8,\"1@lane\"]]}},\"axes\":[1,2]",
      "\"scope\":\"warpgroup\",\"src\":{\"mem\":\"local\",\"shape\":[128,16],\"layout\":{\"shape\":[128,16],\"stride\":[\"1@thread\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[128,1],\"layout\":{\"shape\":[128,1],\"stride\":[\"1@thread\",1]}}",
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[6,10]},\"dst\":{\"mem\":\"local\",\"shape\":[6]}",
      "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[300,4]},\"dst\":{\"mem\":\"local\",\"shape\":[4]},\"axes\":[0]",
  };
  static const struct {
    const char *op, *dtypes[4];
  } maps[] = {
      {"\"op\":\"sumsq\"", {"f32", "bf16", "f16", "f64"}},
      {"\"op\":\"norm\"", {"f16", "f64"}},
      {"\"op\":\"norm\",\"p\":1", {"f32", "bf16"}},
      {"\"op\":\"norm\",\"p\":\"inf\"", {"f16"}},
      {"\"op\":\"amax\"", {"f32", "bf16", "f64"}},
      {"\"op\":\"count_nonzero\"", {"i32", "f32", "u64"}},
      {"\"op\":\"sum\",\"map\":\"square\",\"epilogue\":\"sqrt\"", {"f32", "bf16"}},
      {"\"op\":\"mean\",\"map\":\"abs\",\"epilogue\":\"scale\",\"scale\":0.25", {"f32", "f16"}},
      {"\"op\":\"sum\",\"map\":\"square\",\"epilogue\":\"log\"", {"f32"}},
      {"\"op\":\"min\",\"map\":\"abs\"", {"f32"}},
      {"\"op\":\"max\",\"map\":\"nonzero\"", {"i32"}},
      {"\"op\":\"amax\",\"accum\":true", {"f32", "bf16"}}, /* max(old dst, max |x|) */
      {"\"op\":\"sumsq\",\"accum\":true", {"f32"}},
  };
  for (int b = 0; b < (int)(sizeof bodies / sizeof bodies[0]); b++)
    for (int m = 0; m < (int)(sizeof maps / sizeof maps[0]); m++)
      for (int d = 0; d < 4 && maps[m].dtypes[d]; d++) {
        bool fl = maps[m].dtypes[d][0] == 'f' || maps[m].dtypes[d][0] == 'b';
        bool ign = fl && !strstr(maps[m].op, "mean"); /* mean: NaNs propagate only */
        for (int nan = 0; nan < (ign ? 2 : 1); nan++) {
          const char *j =
              rjt_fmt("{\"kind\":\"tile\",%s,\"dtype\":\"%s\",%s,\"nan\":\"%s\"}", maps[m].op,
                      maps[m].dtypes[d], bodies[b], nan ? "ignore" : "propagate");
          for (int s = 0; s < 2; s++)
            rjt_run_ok(ctx, j, 31 + (uint64_t)s, fl ? s * 2 : 0);
          cases_run++;
        }
      }
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_tile");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 1200);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, shared_matrix, 0, 6);
  tcase_add_test(tc, shared_subscope);
  tcase_add_test(tc, shared_long_rows);
  tcase_add_loop_test(tc, local_thread_wise, 0, 10);
  tcase_add_test(tc, local_view_basic);
  tcase_add_test(tc, local_mma_fragment);
  tcase_add_test(tc, local_warp_shuffle);
  tcase_add_test(tc, local_looped);
  tcase_add_test(tc, nan_policies);
  suite_add_tcase(s, tc);
  /* CK_RUN_CASE=state_shared, state_local or fused: one alone */
  static const char *const state_cases[] = {"state_shared", "state_local", "fused"};
  const TTest *state_tests[] = {state_shared, state_local, fused};
  for (int i = 0; i < 3; i++) {
    TCase *t = tcase_create(state_cases[i]);
    tcase_set_timeout(t, 600);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, state_tests[i]);
    suite_add_tcase(s, t);
  }
  int failed = rjt_run_in_process(s);
  fprintf(stderr,
          gpu ? "gpu_tile: %d request cases run on the GPU\n"
              : "gpu_tile: SKIPPED (no GPU): %d cases\n",
          cases_run);
  return failed ? 1 : 0;
}
