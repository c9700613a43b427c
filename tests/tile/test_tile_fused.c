/* Fused maps of tile requests without a GPU (docs/TENSOR.md "Fused maps"): the one-input maps and
 * the built-in epilogues compile on variants shared and local at every scope, for f32, f16, bf16
 * and i32; the variants that fold registers as they are decline, saying why; every field kind
 * tensor takes and tile does not is refused naming it; the canonical text spells the named ops
 * out and round-trips; explain shows the map.  Their results on the GPU: test_gpu_tile.c's case
 * fused. */
#include "rjtest.h"

#include <stdbool.h>

#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "\"%s\" not in \"%s\"", (sub), (s))

#define TILE "{\"kind\":\"tile\",\"dtype\":\"%s\",%s,%s}"
#define CTA                                                                                        \
  "\"scope\":\"cta\",\"threads\":128,\"src\":{\"mem\":\"shared\",\"shape\":[2,1000]},\"dst\":{"    \
  "\"mem\":\"shared\",\"shape\":[2]}"
#define WARP_SH                                                                                    \
  "\"scope\":\"warp\",\"src\":{\"mem\":\"shared\",\"shape\":[8,40]},\"dst\":{\"mem\":\"shared\","  \
  "\"shape\":[8]}"
#define THREAD_SH                                                                                  \
  "\"scope\":\"thread\",\"src\":{\"mem\":\"shared\",\"shape\":[3,50]},\"dst\":{\"mem\":"           \
  "\"shared\",\"shape\":[3]}"
#define WARP_LOC                                                                                    \
  "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],"    \
  "\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1]," \
  "\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0,1]"
#define THREAD_LOC                                                                                 \
  "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[6,10]},\"dst\":{\"mem\":\"local\","  \
  "\"shape\":[6]}"
#define LOOPED                                                                                     \
  "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[300,4]},\"dst\":{\"mem\":\"local\"," \
  "\"shape\":[4]},\"axes\":[0]"

static rj_ctx *ctx;
static void setup(void) {
  ctx = rj_ctx_new();
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

static void refused(const char *json, const char *msg) {
  rjt_refused(ctx, json, msg);
}

static const char *const bodies[] = {CTA, WARP_SH, THREAD_SH, WARP_LOC, THREAD_LOC, LOOPED};
static const char *const variant[] = {"shared", "shared", "shared", "local", "local", "local"};

/* The PTX after its first line (the request, which names the map). */
static char *body_of(const char *json) {
  const char *p = rjt_ptx(ctx, json, "sm_90");
  const char *nl = strchr(p, '\n');
  return strdup(nl ? nl : p);
}

/* every scope and memory x f32 / f16 / bf16 / i32 compiles, and the map and epilogue are in it */
START_TEST(ptx_every_body) {
  for (int b = 0; b < 6; b++) {
    static const char *const fl[] = {"f32", "f16", "bf16"};
    for (int d = 0; d < 3; d++) {
      char *plain = body_of(rjt_fmt(TILE, fl[d], "\"op\":\"sum\"", bodies[b]));
      char *sq = body_of(rjt_fmt(TILE, fl[d], "\"op\":\"sumsq\"", bodies[b]));
      ck_assert_msg(rjt_count(sq, "mul.rn.f32") > rjt_count(plain, "mul.rn.f32"), "sumsq %s %s",
                    fl[d], bodies[b]);
      free(sq);
      free(plain);
      char *am = body_of(rjt_fmt(TILE, fl[d], "\"op\":\"amax\"", bodies[b]));
      ck_assert_msg(rjt_count(am, "abs.f") + rjt_count(am, "abs.bf") >= 1, "amax %s %s", fl[d],
                    bodies[b]);
      free(am);
      char *sc = body_of(rjt_fmt(TILE, fl[d],
                                 "\"op\":\"mean\",\"map\":\"abs\",\"epilogue\":\"scale\",\"scale\":"
                                 "0.5",
                                 bodies[b]));
      ck_assert_msg(rjt_count(sc, "0f3F000000") >= 1, "scale %s %s", fl[d], bodies[b]);
      free(sc);
    }
    char *n = body_of(rjt_fmt(TILE, "f16", "\"op\":\"norm\"", bodies[b]));
    ck_assert_msg(rjt_count(n, "sqrt.rn.f32") >= 1, "norm %s", bodies[b]);
    free(n);
    char *lg = body_of(
        rjt_fmt(TILE, "f32", "\"op\":\"sum\",\"map\":\"square\",\"epilogue\":\"log\"", bodies[b]));
    ck_assert_msg(rjt_count(lg, "div.rn.f32") >= 1, "log %s", bodies[b]);
    free(lg);
    char *plain = body_of(rjt_fmt(TILE, "i32", "\"op\":\"sum\"", bodies[b]));
    char *cnz = body_of(rjt_fmt(TILE, "i32", "\"op\":\"count_nonzero\"", bodies[b]));
    ck_assert_msg(strcmp(plain, cnz) != 0, "count_nonzero %s", bodies[b]);
    free(plain);
    free(cnz);
  }
}
END_TEST

/* shared and local take mapped requests; redux and sm100_packed decline them, saying why */
START_TEST(explain) {
  for (int b = 0; b < 6; b++) {
    rj_request r;
    const char *text;
    rjt_parse(ctx,
              rjt_fmt(TILE, "f32",
                      "\"op\":\"sum\",\"map\":\"abs\",\"epilogue\":\"scale\",\"scale\":0.5",
                      bodies[b]),
              &r);
    ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
    HAS(text, "fused: map abs of src (f32); sum; epilogue scale by 0.5\n");
    char chosen[64];
    snprintf(chosen, sizeof chosen, "%s prio=10 chosen", variant[b]);
    HAS(text, chosen);
  }
  rj_request r;
  const char *text;
  rjt_parse(ctx, rjt_fmt(TILE, "i32", "\"op\":\"count_nonzero\"", WARP_LOC), &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  HAS(text, "redux prio=15 rejected: map nonzero, epilogue none: redux.sync folds the registers "
            "as they are (variant local maps them)\n");
  HAS(text, "fused: map nonzero of src (i32); sum; epilogue none\n");
  rjt_parse(ctx, rjt_fmt(TILE, "f32", "\"op\":\"norm\",\"p\":\"inf\"", THREAD_LOC), &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  HAS(text, "sm100_packed prio=20 rejected: map abs, epilogue none: the packed fold takes the "
            "registers as they are (variant local maps them)\n");
  /* an unmapped request's explain has no fused line */
  rjt_parse(ctx, rjt_fmt(TILE, "f32", "\"op\":\"sum\"", CTA), &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  ck_assert(!strstr(text, "fused:"));
}
END_TEST

/* the named ops are their base op, map and epilogue spelled out; canonical text round-trips */
START_TEST(canonical) {
  static const struct {
    const char *op, *dtype, *canon;
  } named[] = {
      {"\"op\":\"sumsq\"", "bf16", "\"op\":\"sum\",\"dtype\":\"bf16\""},
      {"\"op\":\"sumsq\"", "f32", "\"nan\":\"propagate\",\"map\":\"square\"}"},
      {"\"op\":\"norm\"", "f16", "\"map\":\"square\",\"epilogue\":\"sqrt\"}"},
      {"\"op\":\"norm\",\"p\":2", "f64", "\"map\":\"square\",\"epilogue\":\"sqrt\"}"},
      {"\"op\":\"norm\",\"p\":1", "f32", "\"op\":\"sum\""},
      {"\"op\":\"norm\",\"p\":\"inf\"", "bf16", "\"op\":\"max\""},
      {"\"op\":\"amax\"", "f32", "\"map\":\"abs\"}"},
      {"\"op\":\"count_nonzero\"", "i32", "\"map\":\"nonzero\"}"},
      {"\"op\":\"sum\",\"map\":\"square\",\"epilogue\":\"scale\",\"scale\":0.125", "f32",
       "\"map\":\"square\",\"epilogue\":\"scale\",\"scale\":0.125}"},
  };
  for (int i = 0; i < 9; i++) {
    rj_request r, r2;
    const char *c;
    rjt_parse(ctx, rjt_fmt(TILE, named[i].dtype, named[i].op, CTA), &r);
    ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
    ck_assert_msg(strstr(c, named[i].canon), "%s: %s", named[i].op, c);
    char *cc = strdup(c);
    rjt_parse(ctx, cc, &r2);
    ck_assert_int_eq(rj_request_canonical(ctx, &r2, &c), RJ_OK);
    ck_assert_str_eq(cc, c);
    free(cc);
  }
  /* norm p 1 is a sum of |x|, no epilogue */
  rj_request r;
  rjt_parse(ctx, rjt_fmt(TILE, "f32", "\"op\":\"norm\",\"p\":1", CTA), &r);
  ck_assert_int_eq(r.u.tile.op, RJ_OP_SUM);
  ck_assert_int_eq(r.u.tile.fused.map, RJ_MAP_ABS);
  ck_assert_int_eq(r.u.tile.fused.epilogue, RJ_EPI_NONE);
  /* a request without the fields keeps its canonical text */
  const char *c;
  rjt_parse(ctx, rjt_fmt(TILE, "f32", "\"op\":\"sum\"", CTA), &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
  ck_assert(!strstr(c, "map") && !strstr(c, "epilogue") && !strstr(c, "scale"));
}
END_TEST

/* kind tensor's fields that a tile does not take, each refused naming it */
START_TEST(refusals) {
  refused(rjt_fmt(TILE, "f16", "\"op\":\"sumsq\",\"p\":1", CTA), "p: applies only to op \"norm\"");
  refused(rjt_fmt(TILE, "f32", "\"op\":\"sum\",\"epilogue\":\"scale\"", CTA),
          "scale: required with epilogue \"scale\"");
  refused(
      rjt_fmt(TILE, "f16", "\"op\":\"sum\",\"epilogue\":\"scale\",\"scale\":1e300", CTA),
      "scale: 1e+300 does not fit the f32 accumulator of f16 (at most 3.40282e+38 in magnitude)");
  refused(rjt_fmt(TILE, "f32", "\"op\":\"sum\",\"others\":[{\"dtype\":\"f32\"}]", CTA),
          "others: kind \"tile\" reduces one input (kind tensor takes others)");
  static const char *const two[] = {"mul", "sub_square", "abs_sub", "where"};
  for (int i = 0; i < 4; i++) {
    char fields[64], want[160];
    snprintf(fields, sizeof fields, "\"op\":\"sum\",\"map\":\"%s\"", two[i]);
    snprintf(want, sizeof want,
             "map: \"%s\" takes a second input; kind \"tile\" reduces one (abs, square, "
             "nonzero; kind tensor takes others)",
             two[i]);
    refused(rjt_fmt(TILE, "f32", fields, CTA), want);
  }
  static const char *const named2[] = {"dot", "mse", "l1", "masked_sum", "masked_mean"};
  for (int i = 0; i < 5; i++) {
    char want[160];
    snprintf(want, sizeof want,
             "op: \"%s\" takes a second input; kind \"tile\" reduces one (kind tensor takes "
             "others)",
             named2[i]);
    char fields[64];
    snprintf(fields, sizeof fields, "\"op\":\"%s\"", named2[i]);
    refused(rjt_fmt(TILE, "f32", fields, CTA), want);
  }
  refused(rjt_fmt(TILE, "f32", "\"op\":\"sum\",\"map\":{\"ir\":\"x\",\"function\":\"f\"}", CTA),
          "map: kind \"tile\" takes the built-in maps abs, square and nonzero (a caller's map as "
          "LLVM IR: kind tensor)");
  refused(
      rjt_fmt(TILE, "f32", "\"op\":\"sum\",\"epilogue\":{\"ir\":\"x\",\"function\":\"f\"}", CTA),
      "epilogue: kind \"tile\" takes the built-in epilogues sqrt, scale and log (a caller's "
      "epilogue as LLVM IR: kind tensor)");
  refused(rjt_fmt(TILE, "bf16", "\"op\":\"norm\"", CTA),
          "op: \"norm\" (p 2) of bf16: kind \"tile\" accumulates in f32, where the squares of "
          "large bf16 values overflow (kind tensor accumulates in f64); f16 and f64 tiles take it");
  refused(rjt_fmt(TILE, "f32", "\"op\":\"norm\",\"p\":2", CTA),
          "op: \"norm\" (p 2) of f32: kind \"tile\" accumulates in f32, where the squares of "
          "large f32 values overflow (kind tensor accumulates in f64); f16 and f64 tiles take it");
  refused(rjt_fmt(TILE, "f32", "\"op\":\"norm\",\"p\":3", CTA),
          "p: expected 1, 2 or \"inf\" (op norm)");
  refused(rjt_fmt(TILE, "f32", "\"op\":\"sum\",\"p\":2", CTA), "p: applies only to op \"norm\"");
  refused(rjt_fmt(TILE, "f32", "\"op\":\"sumsq\",\"map\":\"abs\"", CTA),
          "map: not with a named fused op (it sets its own)");
  refused(rjt_fmt(TILE, "i32", "\"op\":\"sum\",\"map\":\"abs\"", CTA),
          "map: \"abs\" applies to float dtypes, not i32 (integers take \"nonzero\")");
  refused(rjt_fmt(TILE, "i32", "\"op\":\"sum\",\"epilogue\":\"sqrt\"", CTA),
          "epilogue: applies to float dtypes, not i32");
  refused(rjt_fmt(TILE, "f32", "\"op\":\"argmax\",\"map\":\"abs\"", CTA),
          "map: applies to ops sum, mean, max, min and prod, not \"argmax\"");
  refused(rjt_fmt(TILE, "f32", "\"op\":\"sum\",\"epilogue\":\"sqrt\",\"accum\":true", CTA),
          "epilogue: not with accum (the old value has had its epilogue)");
  refused(rjt_fmt(TILE, "f32", "\"op\":\"sum\",\"scale\":2", CTA),
          "scale: applies only to epilogue \"scale\"");
  refused(rjt_fmt(TILE, "f32", "\"op\":\"sum\",\"map\":\"cube\"", CTA),
          "map: unknown value \"cube\" (one of: none abs square mul sub_square abs_sub where "
          "nonzero)");
  /* the C API's request, not only JSON */
  rj_request r;
  rj_kernel *k = NULL;
  rjt_parse(ctx, rjt_fmt(TILE, "f32", "\"op\":\"sum\"", CTA), &r);
  r.u.tile.fused.map = RJ_MAP_MUL;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "map: \"mul\" takes a second input; kind \"tile\" reduces one");
  r.u.tile.fused.map = RJ_MAP_IR;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "map: kind \"tile\" takes the built-in maps");
  r.u.tile.fused.map = (rj_map)9;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "map: 9, not a map");
  r.u.tile.fused.map = RJ_MAP_NONE;
  r.u.tile.fused.epilogue = RJ_EPI_IR;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "epilogue: kind \"tile\" takes the built-in epilogues");
  r.u.tile.fused.epilogue = RJ_EPI_SCALE;
  r.u.tile.fused.scale = 1.0 / 0.0;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "scale: inf, expected a finite number");
  r.u.tile.fused.scale = 2; /* the record's function names go only with their IR (tensor's) */
  snprintf(r.u.tile.fused.map_fn, sizeof r.u.tile.fused.map_fn, "f");
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "map.function: applies only to a caller's map (RJ_MAP_IR)");
  /* subgroup requests: none, saying why */
  refused("{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"f32\",\"epilogue\":"
          "\"sqrt\"}",
          "epilogue: kind \"subgroup\" takes no fused map: a lane's value is the caller's own "
          "register, so map it before the call (kinds tile and tensor take maps)");
}
END_TEST

int main(void) {
  Suite *s = suite_create("tile_fused");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, ptx_every_body);
  tcase_add_test(tc, explain);
  tcase_add_test(tc, canonical);
  tcase_add_test(tc, refusals);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
