/* Segmented reductions without a GPU (docs/TENSOR.md "Segmented reductions"): the "segments"
 * field validated, each refusal naming it; the canonical text round-trips; dispatch sends them to
 * tensor_segmented alone (explain's note), which every other variant declines; the PTX of every
 * op x dtype, 1-D and 2-D, for sm_80, sm_90a and sm_100a (the offsets and status pointers, the
 * status atomic, the ballot, 16-byte loads, no float atomics; the chunk phase past 65536
 * elements, the 2-D CTA path up to 128 columns); the launch calls' checks.  Their
 * results on the GPU: test_gpu_segmented.c. */
#include "rjtest.h"

#include <stdbool.h>

#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "\"%s\" not in \"%s\"", (sub), (s))

#define SEG1 "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[100000],%s}"
#define SEG2                                                                                       \
  "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[5000,7],\"axes\":[0],%s}"

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

static const char *seg(const char *op, const char *dt, const char *more) {
  return rjt_fmt(SEG1, op, dt, more);
}

START_TEST(refusals) {
  refused(seg("sum", "f32", "\"segments\":5"), "segments: expected an object");
  refused(seg("sum", "f32", "\"segments\":{}"), "segments.count: required field is missing");
  refused(seg("sum", "f32", "\"segments\":{\"count\":0}"), "segments.count: 0 is out of range");
  refused(seg("sum", "f32", "\"segments\":{\"count\":4294967296}"), "segments.count:");
  refused(seg("sum", "f32", "\"segments\":{\"count\":2147483648}"),
          "segments.count: 2147483648, expected 1 .. 2^31 - 1");
  refused(seg("sum", "f32", "\"segments\":{\"count\":4,\"dtype\":\"f32\"}"),
          "segments.dtype: f32, expected i32 or i64");
  refused(seg("sum", "f32", "\"segments\":{\"count\":4,\"x\":1}"), "segments.x: unknown field");
  refused("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,5,6],\"axes\":[0],"
          "\"segments\":{\"count\":2}}",
          "segments: need a 1-D src, or a 2-D [N, C] one, reduced over axis 0");
  refused("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,5],\"axes\":[1],"
          "\"segments\":{\"count\":2}}",
          "segments: need a 1-D src");
  refused(seg("sum", "f32", "\"strides\":[2],\"segments\":{\"count\":2}"),
          "segments: not with strides");
  refused(seg("sum", "f32", "\"map\":\"abs\",\"segments\":{\"count\":2}"),
          "segments: not with others, map or epilogue");
  refused(seg("sum", "f32", "\"accum\":true,\"segments\":{\"count\":2}"),
          "segments: not with accum");
  refused(seg("argmax", "f32", "\"values\":true,\"segments\":{\"count\":2}"),
          "segments: not with values");
  refused(seg("sum", "f32", "\"dynamic\":true,\"segments\":{\"count\":2}"),
          "segments: not with dynamic");
  refused("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[3000000000],"
          "\"segments\":{\"count\":2,\"dtype\":\"i32\"}}",
          "segments.dtype: i32 offsets cannot reach shape[0] = 3000000000");
  refused("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[10,4096],\"axes\":[0],"
          "\"segments\":{\"count\":1000000}}",
          "segments.count: 1000000 segments x 4096 columns exceed 2^31 outputs");
  /* the C struct: a negative count, an unset dtype */
  rj_request r;
  rjt_parse(ctx, seg("sum", "f32", "\"segments\":{\"count\":3}"), &r);
  r.u.tensor.segments = -1;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "segments.count: -1");
  r.u.tensor.segments = 3;
  r.u.tensor.segments_dtype = RJ_F16;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "segments.dtype: f16");
}
END_TEST

/* the canonical text names both fields; parsed again, it is the same text.  An empty reduced
 * extent is valid with max (empty segments take the identity). */
START_TEST(round_trip) {
  const char *in[] = {"{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"bf16\",\"shape\":[100000],"
                      "\"segments\":{\"count\":1000}}",
                      "{\"kind\":\"tensor\",\"op\":\"argmin\",\"dtype\":\"f16\",\"shape\":[5000,7],"
                      "\"axes\":[0],\"segments\":{\"count\":9,\"dtype\":\"i32\"}}",
                      "{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"f32\",\"shape\":[0],"
                      "\"segments\":{\"count\":5}}"};
  const char *want[] = {"\"segments\":{\"count\":1000,\"dtype\":\"i64\"}",
                        "\"segments\":{\"count\":9,\"dtype\":\"i32\"}",
                        "\"segments\":{\"count\":5,\"dtype\":\"i64\"}"};
  for (int i = 0; i < 3; i++) {
    rj_request r, r2;
    char a[2048];
    const char *js;
    rjt_parse(ctx, in[i], &r);
    ck_assert_int_eq(rj_request_canonical(ctx, &r, &js), RJ_OK);
    HAS(js, want[i]);
    snprintf(a, sizeof a, "%s", js);
    rjt_parse(ctx, a, &r2);
    ck_assert_int_eq(rj_request_canonical(ctx, &r2, &js), RJ_OK);
    ck_assert_str_eq(a, js);
  }
}
END_TEST

START_TEST(dispatch) {
  rj_request r;
  const char *text;
  rjt_parse(ctx, seg("sum", "f32", "\"segments\":{\"count\":1000}"), &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  HAS(text,
      "tensor_segmented prio=40 chosen (segments: 1000 over 100000 elements; a lane up to 8 "
      "elements, 8 lanes up to 256, a warp up to 4096, a CTA up to 65536, longer ones in chunks of 65536, a CTA each;");
  rjt_parse(ctx, rjt_fmt(SEG2, "sum", "f32", "\"segments\":{\"count\":10}"), &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  HAS(text, "chosen (segments: 10 of [N, 7] rows; a thread per segment and column, a CTA for "
            "segments of more than 256 rows;");
  rjt_parse(ctx, seg("sum", "f32", "\"segments\":{\"count\":3},\"variant\":\"tensor_rows\""), &r);
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_ENOVARIANT);
  HAS(rj_errmsg(ctx), "tensor_rows: takes no \"segments\" (tensor_segmented does)");
  rjt_parse(ctx, "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[1000]}", &r);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, &text), RJ_OK);
  HAS(text, "tensor_segmented prio=40 rejected: serves \"segments\" only");
  HAS(text, "tensor_rows prio=30 chosen");
}
END_TEST

static const char *const ops[] = {"sum", "max",    "min", "prod", "mean",     "and",
                                  "or",  "argmax", "var", "std",  "logsumexp"};
static const char *const dts[] = {"f32", "f16", "bf16", "f64", "i32",  "u32",  "i64", "u64",
                                  "i8",  "u8",  "i16",  "u16", "bool", "e4m3", "e5m2"};

/* the request of op o and dtype d is valid (ops x dtypes the tensor kind takes) */
static bool takes(const char *json) {
  rj_request r;
  return rj_request_parse(ctx, json, &r) == RJ_OK;
}

/* every op x dtype, 1-D and 2-D, three targets */
START_TEST(ptx_matrix) {
  static const char *const tg[] = {"sm_80", "sm_90a", "sm_100a"};
  int n = 0;
  for (size_t o = 0; o < sizeof ops / sizeof *ops; o++)
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
      for (int two = 0; two < 2; two++) {
        const char *j = rjt_fmt(two ? SEG2 : SEG1, ops[o], dts[d],
                                "\"segments\":{\"count\":77,\"dtype\":\"i32\"}");
        char json[512];
        snprintf(json, sizeof json, "%s", j);
        if (!takes(json)) continue;
        const char *p = rjt_ptx(ctx, json, tg[n++ % 3]);
        ck_assert_msg(strstr(p, "redjit_tensor_param_3") && !strstr(p, "redjit_tensor_param_4"),
                      "%s: (src, dst, offsets, status)", json);
        HAS(p, "atom.global.or.b32");
        ck_assert_msg(!strstr(p, "atom.global.add.f"), "%s: a float atomic", json);
        if (!two) HAS(p, "vote.sync.ballot.b32");
        if (!two) HAS(p, "ld.global.nc.v");
      }
  ck_assert_int_gt(n, 150);
}
END_TEST

/* the offsets' dtype reaches the loads: i32 offsets widened (cvt.s64.s32), i64 loaded whole */
START_TEST(ptx_offsets) {
  const char *p =
      rjt_ptx(ctx, seg("sum", "f32", "\"segments\":{\"count\":5,\"dtype\":\"i32\"}"), "sm_90a");
  ck_assert_msg(strstr(p, "cvt.s64.s32") || strstr(p, ".s32"), "i32 offsets widened");
  ck_assert_str_ne(p, rjt_ptx(ctx, seg("sum", "f32", "\"segments\":{\"count\":5}"), "sm_90a"));
}
END_TEST

/* the chunk phase (workspace, counters, the offsets' search) exists when a segment can be longer
 * than 65536 elements; the 2-D CTA path when there are at most 128 columns */
START_TEST(ptx_phases) {
  const char *p = rjt_ptx(ctx,
                          "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[65536],"
                          "\"segments\":{\"count\":5}}",
                          "sm_90a");
  ck_assert_msg(!strstr(p, "seg_ws") && !strstr(p, "seg_count"), "no chunk phase at 65536");
  p = rjt_ptx(ctx,
              "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[65537],"
              "\"segments\":{\"count\":5}}",
              "sm_90a");
  HAS(p, "seg_ws");
  HAS(p, "seg_count");
  HAS(p, "seg_done");
  p = rjt_ptx(ctx,
              "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[9000,128],"
              "\"axes\":[0],\"segments\":{\"count\":5}}",
              "sm_90a");
  HAS(p, "seg_rows");
  p = rjt_ptx(ctx,
              "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[9000,129],"
              "\"axes\":[0],\"segments\":{\"count\":5}}",
              "sm_90a");
  ck_assert_msg(!strstr(p, "seg_rows"), "a thread per column above 128 columns");
}
END_TEST

/* the launch calls check the pointers and the kind of call before any GPU work */
START_TEST(launch_checks) {
  rj_request r;
  rjt_parse(ctx, seg("sum", "f32", "\"segments\":{\"count\":5}"), &r);
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, 256, 512, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "segments: the request reduces segments: launch it with rj_reduce_segments");
  ck_assert_int_eq(rj_reduce_segments(ctx, &r, NULL, 256, 0, 512, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "segments: NULL offsets device pointer");
  ck_assert_int_eq(rj_reduce_segments(ctx, &r, NULL, 256, 772, 512, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "segments: offsets: 0x304 is not aligned to its 8-byte dtype i64");
  ck_assert_int_eq(rj_reduce_segments(ctx, &r, NULL, 256, 768, 512, 66, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "segments: status: 0x42 is not aligned to its 4-byte status word (u32)");
  ck_assert_int_eq(rj_reduce_segments(ctx, &r, NULL, 0, 768, 512, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "src: NULL device pointer");
  rjt_parse(ctx, "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[1000]}", &r);
  ck_assert_int_eq(rj_reduce_segments(ctx, &r, NULL, 256, 768, 512, 0, NULL), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "segments: the request has none");
  ck_assert_int_eq(rj_tensor_launch_segments(ctx, NULL, 0, 256, 768, 512, 0, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_segments_status(ctx, 0, 0), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "status: NULL device pointer");
  ck_assert_int_eq(rj_segments_status(NULL, 0, 64), RJ_EINVAL);
}
END_TEST

int main(void) {
  Suite *s = suite_create("segmented");
  TCase *tc = tcase_create("segmented");
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, round_trip);
  tcase_add_test(tc, dispatch);
  tcase_add_test(tc, ptx_matrix);
  tcase_add_test(tc, ptx_offsets);
  tcase_add_test(tc, ptx_phases);
  tcase_add_test(tc, launch_checks);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
