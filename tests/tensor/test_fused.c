/* Fused maps without a GPU (docs/TENSOR.md "Fused maps"): every new field validated, refusals
 * naming it; the canonical text round-trips and spells the named ops out; the PTX of every map
 * and epilogue on every tensor variant compiles and holds the map's instructions and the other
 * inputs' parameters; explain shows the map and the epilogue; the C API's launch checks.  Their
 * results on the GPU: test_gpu_fused.c. */
#include "rjtest.h"

#include <stdbool.h>

#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "\"%s\" not in \"%s\"", (sub), (s))

#define T "{\"kind\":\"tensor\",\"dtype\":\"%s\",%s}"
#define ROWS "\"shape\":[64,1000],\"axes\":[1]"
#define COLS "\"shape\":[1000,64],\"axes\":[0]"
#define GENERIC "\"shape\":[5,7,11],\"axes\":[0,2]"
#define CLUSTER "\"shape\":[160003],\"variant\":\"tensor_cluster\""
#define FORCED "\"shape\":[64,1000],\"axes\":[1],\"variant\":\"tensor_generic\""
#define DYN ROWS ",\"dynamic\":true"
#define DYNC COLS ",\"dynamic\":true"

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

static const char *const maps[] = {"abs",     "square", "mul",    "sub_square",
                                   "abs_sub", "where",  "nonzero"};
static const char *const views[] = {ROWS, COLS, GENERIC, CLUSTER, FORCED, DYN, DYNC};

/* the fields of a request with map m (i: others needed) */
static const char *fields(int m, const char *view, const char *more) {
  bool two = m >= 2 && m <= 5;
  return rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",%s,\"map\":\"%s\"%s%s}",
                 view, maps[m], two ? ",\"others\":[{\"dtype\":\"f32\"}]" : "", more);
}

/* every map x variant compiles; two-input maps take a fourth pointer parameter after dst */
/* a runtime-size kernel compiles its epilogue's scale and every input's dtype in: requests that
 * differ in them get kernels of their own (the plan key holds them) */
START_TEST(dynamic_key) {
  const char *j[] = {
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[64,1000],\"axes\":[1],"
      "\"dynamic\":true,\"epilogue\":\"scale\",\"scale\":3}",
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[64,1000],\"axes\":[1],"
      "\"dynamic\":true,\"epilogue\":\"scale\",\"scale\":5}",
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[64,1000],\"axes\":[1],"
      "\"dynamic\":true,\"map\":\"where\",\"others\":[{\"dtype\":\"f32\"}]}",
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[64,1000],\"axes\":[1],"
      "\"dynamic\":true,\"map\":\"where\",\"others\":[{\"dtype\":\"u8\"}]}"};
  rj_kernel *k[4];
  for (int i = 0; i < 4; i++) {
    rj_request r;
    rjt_parse(ctx, j[i], &r);
    ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k[i]), RJ_OK);
  }
  ck_assert_ptr_ne(k[0], k[1]);
  ck_assert_ptr_ne(k[2], k[3]);
  ck_assert(strstr(rj_kernel_text(k[0], RJ_EMIT_PTX), "0f40400000"));
  ck_assert(strstr(rj_kernel_text(k[1], RJ_EMIT_PTX), "0f40A00000"));
  for (int i = 0; i < 4; i++)
    rj_kernel_release(ctx, k[i]);
}
END_TEST

START_TEST(ptx_every_map) {
  for (int v = 0; v < 7; v++)
    for (int m = 0; m < 7; m++) {
      char *p = strdup(rjt_ptx(ctx, fields(m, views[v], ""), "sm_90"));
      bool two = m >= 2 && m <= 5;
      ck_assert_msg(rjt_count(p, "others[0]") == (two ? 1 : 0), "%s %s", maps[m], views[v]);
      if (m == 0 || m == 4) ck_assert_msg(rjt_count(p, "abs.f32") >= 1, "%s", views[v]);
      if (m == 1 || m == 2 || m == 3) ck_assert_msg(rjt_count(p, "mul") >= 1, "%s", views[v]);
      free(p);
    }
  /* the epilogues: sqrt, a scale, log's polynomial; f16 data with an f32 mask */
  for (int v = 0; v < 7; v++) {
    char *p = strdup(rjt_ptx(ctx, rjt_fmt(T, "f32", "\"op\":\"norm\"," ROWS), "sm_90"));
    ck_assert(rjt_count(p, "sqrt.rn.f64") >= 1 && rjt_count(p, "mul.rn.f64") >= 1);
    free(p);
    p = strdup(rjt_ptx(ctx, fields(1, views[v], ",\"epilogue\":\"log\""), "sm_90"));
    ck_assert_msg(rjt_count(p, "div.rn.f32") >= 1, "log %s", views[v]);
    free(p);
    p = strdup(rjt_ptx(ctx,
                       rjt_fmt(T, "f16",
                               "\"op\":\"max\",\"map\":\"where\",\"others\":[{\"dtype\":\"f32\"}],"
                               "\"epilogue\":\"scale\",\"scale\":0.5," ROWS),
                       "sm_90"));
    ck_assert(rjt_count(p, "0f3F000000") >= 1);
    free(p);
  }
}
END_TEST

/* the named ops are their base op, map and epilogue spelled out; canonical text round-trips */
START_TEST(named_ops) {
  static const struct {
    const char *op, *canon;
  } named[] = {
      {"\"op\":\"dot\",\"others\":[{\"dtype\":\"f32\"}]", "\"op\":\"sum\""},
      {"\"op\":\"sumsq\"", "\"map\":\"square\""},
      {"\"op\":\"norm\"", "\"epilogue\":\"sqrt\""},
      {"\"op\":\"norm\",\"p\":1", "\"map\":\"abs\""},
      {"\"op\":\"norm\",\"p\":\"inf\"", "\"op\":\"max\""},
      {"\"op\":\"amax\"", "\"op\":\"max\""},
      {"\"op\":\"mse\",\"others\":[{\"dtype\":\"f32\"}]", "\"op\":\"mean\""},
      {"\"op\":\"l1\",\"others\":[{\"dtype\":\"f32\"}]", "\"map\":\"abs_sub\""},
      {"\"op\":\"count_nonzero\"", "\"map\":\"nonzero\""},
      {"\"op\":\"masked_sum\",\"others\":[{\"dtype\":\"u8\"}]", "\"map\":\"where\""},
      {"\"op\":\"masked_mean\",\"others\":[{\"dtype\":\"i8\"}]", "\"op\":\"mean\""},
  };
  for (int i = 0; i < 11; i++) {
    rj_request r, r2;
    const char *c;
    char rest[160];
    snprintf(rest, sizeof rest, "%s,%s", named[i].op, ROWS);
    rjt_parse(ctx, rjt_fmt(T, "f32", rest), &r);
    ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
    ck_assert_msg(strstr(c, named[i].canon), "%s: %s", named[i].op, c);
    char *cc = strdup(c);
    rjt_parse(ctx, cc, &r2);
    ck_assert_int_eq(rj_request_canonical(ctx, &r2, &c), RJ_OK);
    ck_assert_str_eq(cc, c);
    free(cc);
  }
  /* norm p 2 accumulates f16 / bf16 / f32 in f64 (no overflow), f64 in f64 */
  rj_request r;
  rjt_parse(ctx, rjt_fmt(T, "bf16", "\"op\":\"norm\"," ROWS), &r);
  ck_assert_int_eq(r.u.tensor.acc_f64, 1);
  rjt_parse(ctx, rjt_fmt(T, "f64", "\"op\":\"norm\"," ROWS), &r);
  ck_assert_int_eq(r.u.tensor.acc_f64, 0);
  /* others with strides, scale */
  const char *c;
  rjt_parse(ctx,
            rjt_fmt(T, "f16",
                    "\"op\":\"sum\",\"shape\":[4,5],\"axes\":[1],\"map\":\"where\",\"others\":[{"
                    "\"dtype\":\"u32\",\"strides\":[0,1]}],\"epilogue\":\"scale\",\"scale\":0.125"),
            &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
  HAS(c, "\"others\":[{\"dtype\":\"u32\",\"strides\":[0,1]}],\"map\":\"where\","
         "\"epilogue\":\"scale\",\"scale\":0.125");
  /* a request without the fields keeps its canonical text */
  rjt_parse(ctx, rjt_fmt(T, "f32", "\"op\":\"sum\"," ROWS), &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
  ck_assert(!strstr(c, "map") && !strstr(c, "others") && !strstr(c, "epilogue"));
}
END_TEST

START_TEST(refusals) {
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\",\"map\":\"cube\"," ROWS), "map: unknown value");
  /* "p" only with norm; "scale" required with epilogue scale, and within the accumulator */
  refused(rjt_fmt(T, "f32", "\"op\":\"count_nonzero\",\"p\":\"inf\"," ROWS),
          "p: applies only to op \"norm\"");
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\",\"epilogue\":\"scale\"," ROWS),
          "scale: required with epilogue \"scale\"");
  refused(rjt_fmt(T, "f16", "\"op\":\"sum\",\"epilogue\":\"scale\",\"scale\":1e300," ROWS),
          "scale: 1e+300 does not fit the f32 accumulator of f16");
  rj_request r;
  rjt_parse(ctx, rjt_fmt(T, "f64", "\"op\":\"sum\",\"epilogue\":\"scale\",\"scale\":1e300," ROWS),
            &r);
  rjt_parse(
      ctx,
      rjt_fmt(T, "f32",
              "\"op\":\"sum\",\"acc_dtype\":\"f64\",\"epilogue\":\"scale\",\"scale\":-1e300," ROWS),
      &r);
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\",\"map\":\"mul\"," ROWS),
          "others: 0 inputs, map \"mul\" takes 1 besides src");
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\",\"others\":[{\"dtype\":\"f32\"}]," ROWS),
          "others: 1 inputs, map \"none\" takes 0");
  refused(rjt_fmt(T, "f32", "\"op\":\"dot\",\"others\":[{\"dtype\":\"f16\"}]," ROWS),
          "others[0].dtype: f16, map \"mul\" takes src's dtype f32");
  refused(rjt_fmt(T, "f32", "\"op\":\"dot\",\"others\":[{\"dtype\":\"f99\"}]," ROWS),
          "others[0].dtype: unknown value");
  refused(rjt_fmt(T, "f32", "\"op\":\"dot\",\"others\":[{\"dtype\":\"f32\",\"x\":1}]," ROWS),
          "others[0].x: unknown field");
  refused(
      rjt_fmt(T, "f32", "\"op\":\"dot\",\"others\":[{\"dtype\":\"f32\",\"strides\":[1]}]," ROWS),
      "others[0].strides: must have one entry per dim");
  refused(
      rjt_fmt(T, "f32", "\"op\":\"dot\",\"others\":[{\"dtype\":\"f32\",\"strides\":[-1,1]}]," ROWS),
      "others[0].strides[0]: -1");
  refused(rjt_fmt(T, "f32",
                  "\"op\":\"dot\",\"others\":[{\"dtype\":\"f32\",\"strides\":[1000,1]}]," DYN),
          "others[0].strides: not with \"dynamic\"");
  refused(rjt_fmt(T, "f32",
                  "\"op\":\"dot\",\"others\":[{\"dtype\":\"f32\",\"strides\":[1000,1]}],"
                  "\"shape\":[64,1000],\"strides\":[0,1],\"axes\":[0]"),
          "others[0].strides: need src's layout nested");
  refused(rjt_fmt(T, "f32", "\"op\":\"dot\",\"others\":{}," ROWS), "others: expected a list");
  refused(rjt_fmt(T, "f32",
                  "\"op\":\"dot\",\"others\":[{\"dtype\":\"f32\"},{\"dtype\":\"f32\"},{\"dtype\":"
                  "\"f32\"},{\"dtype\":\"f32\"}]," ROWS),
          "others: at most 3");
  refused(rjt_fmt(T, "i32", "\"op\":\"sum\",\"map\":\"abs\"," ROWS),
          "map: \"abs\" applies to float dtypes, not i32 (integers take \"where\" and "
          "\"nonzero\")");
  refused(rjt_fmt(T, "i64", "\"op\":\"sum\",\"epilogue\":\"sqrt\"," ROWS),
          "epilogue: applies to float dtypes, not i64");
  refused(rjt_fmt(T, "f32", "\"op\":\"argmax\",\"map\":\"abs\"," ROWS),
          "map: applies to ops sum, mean, max, min and prod, not \"argmax\"");
  refused(rjt_fmt(T, "f32", "\"op\":\"var\",\"epilogue\":\"sqrt\"," ROWS), "epilogue: applies to");
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\",\"epilogue\":\"sqrt\",\"accum\":true," ROWS),
          "epilogue: not with accum");
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\",\"epilogue\":\"exp\"," ROWS),
          "epilogue: unknown value");
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\",\"scale\":2," ROWS), "scale: applies only to");
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\",\"epilogue\":\"scale\",\"scale\":\"x\"," ROWS),
          "scale: expected a number");
  refused(rjt_fmt(T, "f32", "\"op\":\"norm\",\"p\":3," ROWS), "p: expected 1, 2 or \"inf\"");
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\",\"p\":2," ROWS), "p: applies only to op \"norm\"");
  refused(rjt_fmt(T, "f32", "\"op\":\"sumsq\",\"map\":\"abs\"," ROWS),
          "map: not with a named fused op");
  /* a tile request takes the one-input built-ins only (tests/tile/test_tile_fused.c) */
  refused(
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":64,"
      "\"src\":{\"mem\":\"shared\",\"shape\":[16,40]},\"dst\":{\"mem\":\"shared\",\"shape\":[16]},"
      "\"map\":\"mul\"}",
      "map: \"mul\" takes a second input; kind \"tile\" reduces one");
  /* the C API's request, not only JSON */
  rj_kernel *k = NULL;
  rjt_parse(ctx, rjt_fmt(T, "f32", "\"op\":\"sum\"," ROWS), &r);
  r.u.tensor.fused.map = (rj_map)9;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "map: 9, not a map");
  r.u.tensor.fused.map = RJ_MAP_NONE;
  r.u.tensor.fused.epilogue = RJ_EPI_SCALE;
  r.u.tensor.fused.scale = 1.0 / 0.0;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "scale: inf, expected a finite number");
  r.u.tensor.fused.epilogue = RJ_EPI_NONE;
  r.u.tensor.fused.scale = 0;
  r.u.tensor.nothers = 5;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "others: 5 inputs, expected 0 .. 3");
}
END_TEST

/* integers take where (a mask of any dtype) and nonzero (count_nonzero), in integer arithmetic */
START_TEST(integer_maps) {
  static const char *const dts[] = {"i32", "u32", "i64", "u64"};
  for (int d = 0; d < 4; d++)
    for (int v = 0; v < 7; v++) {
      if (v == 3 && d >= 2) continue; /* the cluster's length is f32's: too long for 8 bytes */
      char rest[256];
      snprintf(rest, sizeof rest,
               "\"op\":\"max\",\"map\":\"where\",\"others\":[{\"dtype\":\"f16\"}],%s", views[v]);
      char *p = strdup(rjt_ptx(ctx, rjt_fmt(T, dts[d], rest), "sm_90"));
      ck_assert_msg(rjt_count(p, ".f32") == 0 || rjt_count(p, "setp.ne") >= 1, "%s %s", dts[d],
                    views[v]);
      free(p);
      snprintf(rest, sizeof rest, "\"op\":\"count_nonzero\",%s", views[v]);
      p = strdup(rjt_ptx(ctx, rjt_fmt(T, dts[d], rest), "sm_90"));
      ck_assert_msg(rjt_count(p, "add.f") == 0 && rjt_count(p, "setp.ne") >= 1, "%s %s", dts[d],
                    views[v]);
      free(p);
    }
}
END_TEST

/* the masked mean (op mean of map where) on every view: a state {sum, count} whose sum is
 * divided by the count once per output (div.rn, as plain mean's), the count an i32 in constant
 * kernels (reduced lengths < 2^31) and an i64 in runtime-size ones, an epilogue after it, f64
 * under acc_dtype; what mean refuses it refuses too */
START_TEST(masked_mean) {
  static const char *const masks[] = {"f32", "i8", "bool", "f16"};
  for (int v = 0; v < 7; v++)
    for (int m = 0; m < 4; m++) {
      char rest[300];
      snprintf(rest, sizeof rest, "\"op\":\"masked_mean\",\"others\":[{\"dtype\":\"%s\"}],%s",
               masks[m], views[v]);
      char *p = strdup(rjt_ptx(ctx, rjt_fmt(T, m % 2 ? "f16" : "f32", rest), "sm_90"));
      ck_assert_msg(rjt_count(p, "others[0]") == 1, "%s %s", masks[m], views[v]);
      ck_assert_msg(rjt_count(p, "div.rn.f32") >= 1, "%s %s", masks[m], views[v]);
      const char *count = strstr(views[v], "dynamic") ? "cvt.rn.f32.s64" : "cvt.rn.f32.s32";
      ck_assert_msg(rjt_count(p, count) >= 1, "%s %s: %s", masks[m], views[v], count);
      free(p);
    }
  char *p = strdup(rjt_ptx(ctx,
                           rjt_fmt(T, "f32",
                                   "\"op\":\"masked_mean\",\"others\":[{\"dtype\":\"u8\"}],"
                                   "\"dynamic\":true," ROWS),
                           "sm_90"));
  ck_assert(rjt_count(p, "cvt.rn.f32.s64") >= 1); /* a runtime length: the i64 count */
  free(p);
  p = strdup(rjt_ptx(ctx,
                     rjt_fmt(T, "bf16",
                             "\"op\":\"mean\",\"map\":\"where\",\"others\":[{\"dtype\":"
                             "\"u8\"}],\"epilogue\":\"sqrt\",\"acc_dtype\":\"f64\"," ROWS),
                     "sm_90"));
  ck_assert(rjt_count(p, "div.rn.f64") >= 1 && rjt_count(p, "sqrt.rn.f64") >= 1);
  free(p);
  refused(rjt_fmt(T, "i16", "\"op\":\"masked_mean\",\"others\":[{\"dtype\":\"u8\"}]," ROWS),
          "map: op mean of an integer dtype (i16) takes no map");
  refused(rjt_fmt(T, "f32",
                  "\"op\":\"masked_mean\",\"others\":[{\"dtype\":\"u8\"}],\"accum\":true," ROWS),
          "accum:");
  refused(
      rjt_fmt(T, "f32",
              "\"op\":\"masked_mean\",\"others\":[{\"dtype\":\"u8\"}],\"nan\":\"ignore\"," ROWS),
      "nan:");
  refused(rjt_fmt(T, "f32", "\"op\":\"masked_mean\"," ROWS), "others: 0 inputs");
  rj_request r;
  const char *text;
  rjt_parse(ctx, rjt_fmt(T, "f16", "\"op\":\"masked_mean\",\"others\":[{\"dtype\":\"i8\"}]," ROWS),
            &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  HAS(text, "fused: map where of src (f16), others[0] (i8, src's layout); mean of the selected "
            "elements (divided by their count); epilogue none\n");
}
END_TEST

/* a caller's map (LLVM IR, JSON-escaped): Huber's loss of x - y (delta 1), f32 */
#define HUBER_IR                                                                                   \
  "define float @huber(float %x, float %y) {\\n  %d = fsub float %x, %y\\n"                        \
  "  %a = call float @llvm.fabs.f32(float %d)\\n  %s = fcmp olt float %a, 1.0\\n"                  \
  "  %q = fmul float %d, %d\\n  %h = fmul float %q, 0.5\\n  %l = fsub float %a, 0.5\\n"            \
  "  %r = select i1 %s, float %h, float %l\\n  ret float %r\\n}\\n"                                \
  "declare float @llvm.fabs.f32(float)\\n"
#define HUBER                                                                                      \
  ",\"others\":[{\"dtype\":\"f32\"}],\"map\":{\"ir\":\"" HUBER_IR "\",\"function\":\"huber\"}"

/* the caller's map on every view: linked and inlined (no call left), its compare in the PTX;
 * explain and canonical text; a runtime-size kernel keyed on the IR text; refusals naming
 * map.function / map.ir / map */
START_TEST(map_ir) {
  for (int v = 0; v < 7; v++) {
    char rest[1200];
    snprintf(rest, sizeof rest, "\"op\":\"mean\",%s%s", views[v], HUBER);
    char *p = strdup(rjt_ptx(ctx, rjt_fmt(T, "f32", rest), "sm_90"));
    ck_assert_msg(rjt_count(p, "setp.lt.f32") >= 1 && rjt_count(p, "\tcall") == 0, "%s", views[v]);
    free(p);
  }
  rj_request r;
  const char *text;
  rjt_parse(ctx, rjt_fmt(T, "f32", "\"op\":\"sum\"," ROWS HUBER), &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  HAS(text, "fused: map ir huber of src (f32), others[0] (f32, src's layout); sum; epilogue none");
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &text), RJ_OK);
  HAS(text, "\"map\":{\"ir\":\"define float @huber");
  HAS(text, "\"function\":\"huber\"}");
  /* two texts behind one runtime-size plan: two kernels */
  rj_kernel *k[2];
  for (int i = 0; i < 2; i++) {
    rjt_parse(ctx,
              rjt_fmt(T, "f32",
                      i ? "\"op\":\"sum\",\"dynamic\":true," ROWS HUBER
                        : "\"op\":\"sum\",\"dynamic\":true," ROWS
                          ",\"others\":[{\"dtype\":\"f32\"}],\"map\":{\"ir\":\"define float "
                          "@m(float %x, float %y) {\\n  %r = fmul float %x, %y\\n  ret float "
                          "%r\\n}\\n\",\"function\":\"m\"}"),
              &r);
    ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k[i]), RJ_OK);
  }
  ck_assert_ptr_ne(k[0], k[1]);
  ck_assert(strstr(rj_kernel_text(k[1], RJ_EMIT_PTX), "setp.lt.f32"));
  ck_assert(!strstr(rj_kernel_text(k[0], RJ_EMIT_PTX), "setp.lt.f32"));
  rj_kernel_release(ctx, k[0]);
  rj_kernel_release(ctx, k[1]);
  /* refusals */
  refused(rjt_fmt(T, "f32", "\"op\":\"custom\"," ROWS HUBER), "map: a caller's map is not with op");
  refused(rjt_fmt(T, "i32", "\"op\":\"sum\"," ROWS HUBER), "map: a caller's map applies to");
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\"," ROWS ",\"map\":{\"function\":\"f\"}"),
          "map.ir: required field is missing");
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\"," ROWS ",\"map\":{\"ir\":\"x\",\"fn\":\"f\"}"),
          "map.fn: unknown field");
  static const struct {
    const char *tail, *msg;
  } bad[] = {
      {",\"others\":[{\"dtype\":\"f16\"}],\"map\":{\"ir\":\"" HUBER_IR "\",\"function\":\"huber\"}",
       "map.function: \"huber\" has type float (float, float); the map of these inputs is"},
      {",\"others\":[{\"dtype\":\"f32\"}],\"map\":{\"ir\":\"" HUBER_IR "\",\"function\":\"nope\"}",
       "map.function: the module defines no function \"nope\""},
      {",\"map\":{\"ir\":\"define float @f(float %x) {\\n  store float %x, ptr null\\n  ret "
       "float %x\\n}\\n\",\"function\":\"f\"}",
       "map.ir: function f has a store to memory other than its own locals; a map is a pure "
       "function of its inputs"},
      {",\"map\":{\"ir\":\"bogus\",\"function\":\"f\"}", "map.ir: not LLVM 22 IR text"},
  };
  for (int i = 0; i < 4; i++) {
    rjt_parse(
        ctx,
        rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\"," ROWS "%s}", bad[i].tail),
        &r);
    rj_kernel *kk = NULL;
    ck_assert_int_eq(rj_compile(ctx, &r, NULL, &kk), RJ_EINVAL);
    HAS(rj_errmsg(ctx), bad[i].msg);
  }
}
END_TEST

/* a caller's epilogue (LLVM IR): in the map's module, or its own; every view; refusals */
#define SQRT_IR                                                                                    \
  "define float @rt(float %v) {\\n  %r = call float @llvm.sqrt.f32(float %v)\\n  ret float "       \
  "%r\\n}\\ndeclare float @llvm.sqrt.f32(float)\\n"
START_TEST(epilogue_ir) {
  for (int v = 0; v < 7; v++) {
    char rest[1200];
    snprintf(rest, sizeof rest, "\"op\":\"sum\",\"map\":\"square\",%s,%s", views[v],
             "\"epilogue\":{\"ir\":\"" SQRT_IR "\",\"function\":\"rt\"}");
    char *p = strdup(rjt_ptx(ctx, rjt_fmt(T, "bf16", rest), "sm_90"));
    ck_assert_msg(rjt_count(p, "sqrt.rn.f32") >= 1 && rjt_count(p, "\tcall") == 0, "%s", views[v]);
    free(p);
  }
  rj_request r;
  const char *text;
  rjt_parse(ctx,
            rjt_fmt(T, "f32",
                    "\"op\":\"mean\"," ROWS ",\"others\":[{\"dtype\":\"f32\"}],\"map\":{\"ir\":"
                    "\"" HUBER_IR SQRT_IR "\",\"function\":\"huber\"},\"epilogue\":{\"function\":"
                    "\"rt\"}"),
            &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  HAS(text, "; mean; epilogue ir rt\n");
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &text), RJ_OK);
  HAS(text, "\"epilogue\":{\"function\":\"rt\"}");
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
  ck_assert(strstr(rj_kernel_text(k, RJ_EMIT_PTX), "sqrt.rn.f32"));
  rj_kernel_release(ctx, k);
  refused(rjt_fmt(T, "f32", "\"op\":\"sum\"," ROWS ",\"epilogue\":{\"function\":\"rt\"}"),
          "epilogue.ir: required field is missing");
  refused(rjt_fmt(T, "f32",
                  "\"op\":\"sum\"," ROWS ",\"epilogue\":{\"ir\":\"" SQRT_IR
                  "\",\"function\":\"rt\"},\"accum\":true"),
          "epilogue: not with accum");
  rjt_parse(ctx,
            rjt_fmt(T, "f64",
                    "\"op\":\"sum\"," ROWS ",\"epilogue\":{\"ir\":\"" SQRT_IR
                    "\",\"function\":\"rt\"}"),
            &r);
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "epilogue.function: \"rt\" has type float (float); the epilogue is");
}
END_TEST

/* a tile request's two-input maps, a subgroup request's every map: refused naming the field */
START_TEST(other_kinds) {
  refused("{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"map\":"
          "\"where\",\"src\":{\"mem\":\"shared\",\"shape\":[32]},\"dst\":{\"mem\":\"shared\","
          "\"shape\":[1]},\"axes\":[0]}",
          "map: \"where\" takes a second input; kind \"tile\" reduces one (abs, square, nonzero; "
          "kind tensor takes others)");
  refused("{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"others\":[]}",
          "others: kind \"tile\" reduces one input (kind tensor takes others)");
  refused("{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"f32\",\"others\":"
          "[{\"dtype\":\"f32\"}]}",
          "others: kind \"subgroup\" takes no fused map: a lane's value is the caller's own "
          "register, so map it before the call (kinds tile and tensor take maps)");
  refused("{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"f32\",\"map\":"
          "\"abs\"}",
          "map: kind \"subgroup\" takes no fused map");
}
END_TEST

/* explain names the map, the inputs and the epilogue */
START_TEST(explain) {
  rj_request r;
  const char *text;
  rjt_parse(ctx,
            rjt_fmt(T, "f16",
                    "\"op\":\"sum\",\"map\":\"where\",\"others\":[{\"dtype\":\"f32\",\"strides\":["
                    "0,1]}],\"epilogue\":\"scale\",\"scale\":0.5," ROWS),
            &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  HAS(text, "fused: map where of src (f16), others[0] (f32, its own strides); sum; epilogue "
            "scale by 0.5\n");
  rjt_parse(ctx, rjt_fmt(T, "f32", "\"op\":\"norm\"," ROWS), &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  HAS(text, "fused: map square of src (f32); sum; epilogue sqrt; accumulated in f64\n");
  rjt_parse(ctx, rjt_fmt(T, "f32", "\"op\":\"sum\"," ROWS), &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  ck_assert(!strstr(text, "fused:"));
}
END_TEST

/* the launch calls check the other inputs before any GPU work */
START_TEST(launch_checks) {
  rj_request r;
  rjt_parse(ctx, rjt_fmt(T, "f32", "\"op\":\"dot\",\"others\":[{\"dtype\":\"f32\"}]," ROWS), &r);
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, 256, 512, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "others: the request takes 1 inputs besides src, the call gives 0 (use "
                      "rj_reduce_n)");
  rj_devptr o[1] = {0};
  ck_assert_int_eq(rj_reduce_n(ctx, &r, NULL, 256, o, 1, 512, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "others[0]: NULL device pointer");
  ck_assert_int_eq(rj_reduce_n(ctx, &r, NULL, 256, NULL, 1, 512, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "others[0]: NULL device pointer");
  ck_assert_int_eq(rj_tensor_launch_n(ctx, NULL, 0, 256, o, 1, 512, 0, NULL), RJ_EINVAL);
  /* every pointer aligned to its dtype (a misaligned load would fault the CUDA context) */
  o[0] = 0x202;
  ck_assert_int_eq(rj_reduce_n(ctx, &r, NULL, 256, o, 1, 512, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "others[0]: 0x202 is not aligned to its 4-byte dtype f32");
  o[0] = 0x200;
  ck_assert_int_eq(rj_reduce_n(ctx, &r, NULL, 0x101, o, 1, 512, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "src: 0x101 is not aligned to its 4-byte dtype f32");
  ck_assert_int_eq(rj_reduce_n(ctx, &r, NULL, 256, o, 1, 0x206, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "dst: 0x206 is not aligned to its 4-byte dtype f32");
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
  ck_assert_int_eq(rj_tensor_launch_n(ctx, k, 0, 256, o, 1, 0x203, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "dst: 0x203 is not aligned to its 4-byte dtype f32");
  ck_assert_int_eq(rj_kernel_release(ctx, k), RJ_OK);
  /* each pointer against its own dtype: a u8 sum's dst is u64, a u8 mask any byte, argmax's
   * values x's dtype (past the checks, a call without a GPU ends in RJ_ENODEV) */
  rjt_parse(ctx,
            rjt_fmt(T, "u8",
                    "\"op\":\"sum\",\"map\":\"where\",\"others\":[{\"dtype\":"
                    "\"u8\"}]," ROWS),
            &r);
  o[0] = 0x203;
  ck_assert_int_eq(rj_reduce_n(ctx, &r, NULL, 0x101, o, 1, 0x204, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "dst: 0x204 is not aligned to its 8-byte dtype u64");
  int ngpu = 0;
  if (rj_device_count(ctx, &ngpu) != RJ_OK) /* (with a GPU it would launch on these addresses) */
    ck_assert_int_eq(rj_reduce_n(ctx, &r, NULL, 0x101, o, 1, 0x208, 0, NULL), RJ_ENODEV);
  rjt_parse(ctx, rjt_fmt(T, "f16", "\"op\":\"argmax\",\"values\":true," ROWS), &r);
  ck_assert_int_eq(rj_reduce_values(ctx, &r, NULL, 0x100, 0x200, 0x301, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "values: 0x301 is not aligned to its 2-byte dtype f16");
}
END_TEST

int main(void) {
  Suite *s = suite_create("fused");
  TCase *tc = tcase_create("fused");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, ptx_every_map);
  tcase_add_test(tc, dynamic_key);
  tcase_add_test(tc, named_ops);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, integer_maps);
  tcase_add_test(tc, explain);
  tcase_add_test(tc, masked_mean);
  tcase_add_test(tc, other_kinds);
  tcase_add_test(tc, map_ir);
  tcase_add_test(tc, epilogue_ir);
  tcase_add_test(tc, launch_checks);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
