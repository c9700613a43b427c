/* Every validation error returns a status and a message naming the field; valid requests pass
 * and come back canonical. */
#include "redjit_check.h"
#include "redjit_treduce.h"
#include "rjtest.h"

typedef struct bad_case {
  const char *json;
  rj_status status;
  const char *msg; /* a substring the message must contain */
} bad_case;

#define TILE_HEAD                                                                                  \
  "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,"
#define SRC48 "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},"
#define DST4 "\"dst\":{\"mem\":\"shared\",\"shape\":[4]}"
/* a warp's 32 elements, one a lane (stride S), summed into one replicated element (stride R) */
#define WARP_SRC32(S)                                                                                  \
  "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\"," \
  "\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[" S "]}},"
#define DST_REP(R)                                                                                 \
  "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],"             \
  "\"replicate\":[[32," R "]]}}}"

static const bad_case bad[] = {
    /* malformed or truncated JSON, wrong top-level shapes */
    {"", RJ_EINVAL, "malformed JSON"},
    {"{", RJ_EINVAL, "malformed JSON"},
    {TILE_HEAD SRC48, RJ_EINVAL, "malformed JSON"},
    {"[1,2]", RJ_EINVAL, "expected a JSON object"},
    {"{} trailing", RJ_EINVAL, "malformed JSON"},
    {"{}", RJ_EINVAL, "kind: required"},
    {"{\"kind\":\"blob\"}", RJ_EINVAL, "kind: unknown value \"blob\""},
    {"{\"kind\":7}", RJ_EINVAL, "kind: expected a string"},
    /* unknown and repeated fields */
    {TILE_HEAD SRC48 DST4 ",\"colour\":1}", RJ_EINVAL, "colour: unknown field"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[4,8],\"pitch\":2}," DST4 "}", RJ_EINVAL,
     "src.pitch: unknown field"},
    {TILE_HEAD SRC48 DST4 ",\"op\":\"max\"}", RJ_EINVAL, "op: field given twice"},
    /* enums */
    {"{\"kind\":\"tile\",\"op\":\"median\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32," SRC48
         DST4 "}",
     RJ_EINVAL, "op: unknown value \"median\""},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f8\",\"scope\":\"cta\",\"threads\":32," SRC48
         DST4 "}",
     RJ_EINVAL, "dtype: unknown value \"f8\""},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"grid\",\"threads\":32," SRC48
         DST4 "}",
     RJ_EINVAL, "scope: unknown value"},
    {TILE_HEAD "\"src\":{\"mem\":\"global\",\"shape\":[4,8]}," DST4 "}", RJ_EINVAL,
     "src.mem: unknown value"},
    {TILE_HEAD SRC48 DST4 ",\"nan\":\"maybe\"}", RJ_EINVAL, "nan: unknown value"},
    {TILE_HEAD SRC48 DST4 ",\"accum\":1}", RJ_EINVAL, "accum: expected true or false"},
    /* required fields */
    {"{\"kind\":\"tile\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32," SRC48 DST4 "}",
     RJ_EINVAL, "op: required"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\"," SRC48 DST4 "}",
     RJ_EINVAL, "threads: required"},
    {TILE_HEAD SRC48 "\"x\":0}", RJ_EINVAL, "x: unknown field"},
    {TILE_HEAD SRC48 "\"accum\":false}", RJ_EINVAL, "dst: required"},
    /* numbers */
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[4,8.5]}," DST4 "}", RJ_EINVAL,
     "src.shape[1]: expected an integer"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[4,0]}," DST4 "}", RJ_EINVAL,
     "src.shape[1]: every dim must be at least 1"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[4,-8]}," DST4 "}", RJ_EINVAL,
     "src.shape[1]"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[]}," DST4 "}", RJ_EINVAL,
     "src.shape: expected 1 to 8 dims"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[1,1,1,1,1,1,1,1,1]}," DST4 "}", RJ_EINVAL,
     "src.shape: at most 8"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[1e300]}," DST4 "}", RJ_EINVAL,
     "src.shape[0]"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[1048576,1048576,1048576]}," DST4 "}",
     RJ_EINVAL, "src.shape: more than 2^40"},
    {TILE_HEAD
     "\"src\":{\"mem\":\"shared\",\"shape\":[4096,4096]},\"dst\":{\"mem\":\"shared\",\"shape\":[4096]}}",
     RJ_EINVAL, "48 KiB"},
    /* 16-byte alignment of each array counts: 8*6143 + 8 = 49152, padded to 49168 */
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f64\",\"scope\":\"cta\",\"threads\":32,\"src\":{\"mem\":\"shared\",\"shape\":[1,6143]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}}",
     RJ_EINVAL, "src and dst take 49168 bytes"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":2048," SRC48
         DST4 "}",
     RJ_EINVAL, "threads: 2048 is out of range"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"threads\":48," SRC48
         DST4 "}",
     RJ_EINVAL, "threads: 48 is not a multiple of the warp size 32"},
    /* axes */
    {TILE_HEAD SRC48 DST4 ",\"axes\":[2]}", RJ_EINVAL, "axes[0]: 2 is out of range"},
    {TILE_HEAD SRC48 DST4 ",\"axes\":[-3]}", RJ_EINVAL, "axes[0]: -3 is out of range"},
    {TILE_HEAD SRC48 DST4 ",\"axes\":[1,-1]}", RJ_EINVAL, "axes[1]: axis 1 is repeated"},
    {TILE_HEAD SRC48 DST4 ",\"axes\":[]}", RJ_EINVAL, "axes: expected 1 to 2 axes"},
    {TILE_HEAD SRC48 DST4 ",\"axes\":\"last\"}", RJ_EINVAL, "axes: expected a list"},
    /* shapes and regions */
    {TILE_HEAD SRC48 "\"dst\":{\"mem\":\"shared\",\"shape\":[5]}}", RJ_EINVAL,
     "dst.shape: the destination region has 5 elements, but the source region keeps 4"},
    {TILE_HEAD SRC48 DST4 ",\"axes\":[0]}", RJ_EINVAL, "keeps 8"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[4,8],\"start\":[0,9]}," DST4 "}", RJ_EINVAL,
     "src.start[1]: 9 is outside [0, 8)"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[4,8],\"start\":[0,4],\"extent\":[4,5]}," DST4
               "}",
     RJ_EINVAL, "src.extent[1]: region [4, 9) runs past"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[4,8],\"extent\":[4,-1]}," DST4 "}",
     RJ_EINVAL, "src.extent[1]: must be at least 1"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[4,8],\"start\":[0]}," DST4 "}", RJ_EINVAL,
     "src.start: must have one entry per dim"},
    {TILE_HEAD "\"src\":{\"mem\":\"shared\",\"shape\":[4,8],\"start\":[-1,0]}," DST4 "}", RJ_EINVAL,
     "src.start[0]: -1 is outside"},
    /* scope, memory and active */
    {TILE_HEAD
     "\"src\":{\"mem\":\"local\",\"shape\":[4,8]},\"dst\":{\"mem\":\"local\",\"shape\":[4]}}",
     RJ_EINVAL, "src.mem: local (register) buffers are per thread; scope cta needs shared"},
    {TILE_HEAD SRC48 DST4 ",\"active\":{\"warp\":0}}", RJ_EINVAL,
     "active.warp: scope cta selects its instance"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"threads\":64," SRC48
         DST4 ",\"active\":{\"warp\":2}}",
     RJ_EINVAL, "active.warp: 2 is outside 0..1"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"threads\":64," SRC48
         DST4 "}",
     RJ_EINVAL, "active: 2 warps of this CTA would each reduce the same shared buffers"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"threads\":64," SRC48
         DST4 ",\"active\":{\"lane\":2}}",
     RJ_EINVAL, "active.lane: unknown field"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"threads\":64," SRC48
         DST4 ",\"active\":{\"warpgroup\":0}}",
     RJ_EINVAL, "active.warpgroup: scope warp selects its instance with active.warp"},
    /* layouts */
    {TILE_HEAD SRC48
     "\"dst\":{\"mem\":\"shared\",\"shape\":[4],\"layout\":{\"shape\":[4],\"stride\":[1]}}}",
     RJ_EINVAL, "dst.layout: only local"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[16],\"stride\":[\"1@lane\"]}},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
     RJ_EINVAL, "src.layout.shape[0]: sub-dims multiply to 16, but the dim is 32"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@warp\"]}},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
     RJ_EINVAL, "src.layout.stride[0]: expected \"K@lane\" or \"K@thread\""},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32]}},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
     RJ_EINVAL, "src.layout.stride: required"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,2],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},\"dst\":{\"mem\":\"local\",\"shape\":[32]}}",
     RJ_EINVAL, "src.layout.shape: must have one entry per dim"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
     RJ_EINVAL, "at thread scope one thread holds the whole buffer"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,1]]}}}",
     RJ_EINVAL, "dst.layout.replicate[0]: copies are held by other lanes"},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[[4,8,2]],\"stride\":[[1]]}},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
     RJ_EINVAL, "src.layout.stride[0]: must be a list as long"},
    /* variant */
    {TILE_HEAD SRC48 DST4 ",\"variant\":\"nosuch\"}", RJ_EINVAL, "variant"},
    {TILE_HEAD SRC48 DST4 ",\"variant\":\"\"}", RJ_EINVAL, "variant: expected"},
    /* subgroup */
    {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"i32\",\"log2_size\":6}",
     RJ_EINVAL, "log2_size: 6 is outside 0..5"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"shuffle\",\"dtype\":\"i32\",\"index\":[1,2,3]}",
     RJ_EINVAL, "index: a list must have exactly 32"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"broadcast\",\"dtype\":\"i32\",\"arg\":40}", RJ_EINVAL,
     "arg: 40 is not a lane"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"i32\",\"threads\":48}",
     RJ_EINVAL, "threads: 48 must be a multiple of 32"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"twist\",\"dtype\":\"i32\"}", RJ_EINVAL,
     "primitive: unknown value"},
    /* numbers an int cannot hold are refused when read, never truncated */
    {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"i32\",\"log2_size\":4294967301}",
     RJ_EINVAL, "log2_size: 4294967301 is out of range (0..5)"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"i32\",\"threads\":4294967328}",
     RJ_EINVAL, "threads: 4294967328 is out of range"},
    {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"i32\",\"blocks\":-4294967295}",
     RJ_EINVAL, "blocks: -4294967295 is out of range (1..65535)"},
    {"{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4294967300,\"shape\":[4]}",
     RJ_EINVAL, "ranks: 4294967300 is out of range (1..1024)"},
    {"{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":4294967296,\"shape\":[4]}",
     RJ_EINVAL, "root: 4294967296 is out of range"},
    /* "K@lane" / "K@thread" strides: bounded as numeric ones, strictly parsed */
    {WARP_SRC32("\"9223372036854775807@thread\"") DST_REP("\"1@lane\""), RJ_EINVAL,
     "src.layout.stride[0]: \"9223372036854775807@thread\": the step is out of range"},
    {WARP_SRC32("\"99999999999999999999@lane\"") DST_REP("\"1@lane\""), RJ_EINVAL,
     "src.layout.stride[0]: \"99999999999999999999@lane\": the step is out of range"},
    {WARP_SRC32("\"4503599627370497@thread\"") DST_REP("\"1@lane\""), RJ_EINVAL,
     "the step is out of range [-4503599627370496, 4503599627370496]"},
    {WARP_SRC32("\"+1@lane\"") DST_REP("\"1@lane\""), RJ_EINVAL,
     "src.layout.stride[0]: expected \"K@lane\""},
    {WARP_SRC32("\" 1@lane\"") DST_REP("\"1@lane\""), RJ_EINVAL,
     "src.layout.stride[0]: expected \"K@lane\""},
    {WARP_SRC32("\"1@lane\"") DST_REP("\"-9223372036854775808@lane\""), RJ_EINVAL,
     "dst.layout.replicate[0]: \"-9223372036854775808@lane\": the step is out of range"},
    /* tensor */
    {"{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"f32\",\"shape\":[4,0]}", RJ_EINVAL,
     "shape[1]: 0 along a reduced axis (axes): op \"max\" of an empty reduction has no identity"},
    {"{\"kind\":\"tensor\",\"op\":\"argmin\",\"dtype\":\"i8\",\"shape\":[0,3],\"axes\":[0]}",
     RJ_EINVAL, "shape[0]: 0 along a reduced axis (axes)"},
    {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,4],\"axes\":[0,0]}",
     RJ_EINVAL, "axes[1]: axis 0 is repeated"},
    {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,4],\"axes\":[2]}",
     RJ_EINVAL, "axes[0]: 2 is out of range"},
    {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,4],\"strides\":[4]}",
     RJ_EINVAL, "strides: must have one entry per dim"},
    {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,4],\"axes\":[1],\"strides\":[0,1]}",
     RJ_EINVAL, "strides[0]"},
    {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[1048576,1048576],\"axes\":[1],\"strides\":[4503599627370496,1]}",
     RJ_EINVAL, "strides[0]: the view would span more than 2^46"},
    {"{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4503599627370496,4503599627370496,4,4,4],\"strides\":[1,1,1,1,1]}",
     RJ_EINVAL, "shape"},
    /* ops and the dtypes they take */
    {"{\"kind\":\"tensor\",\"op\":\"xor\",\"dtype\":\"f32\",\"shape\":[4]}", RJ_EINVAL,
     "op: \"xor\" takes integer (i32 u32 i64 u64) dtypes, not f32"},
    {"{\"kind\":\"tensor\",\"op\":\"logsumexp\",\"dtype\":\"i64\",\"shape\":[4]}", RJ_EINVAL,
     "op: \"logsumexp\" takes float (f16 bf16 f32 f64) dtypes, not i64"},
    {"{\"kind\":\"tile\",\"op\":\"mean\",\"dtype\":\"u32\",\"scope\":\"cta\",\"threads\":32," SRC48
         DST4 "}",
     RJ_EINVAL, "op: \"mean\" takes float"},
    {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4],\"correction\":0}",
     RJ_EINVAL, "correction: applies only to op \"var\" or \"std\""},
    {"{\"kind\":\"tensor\",\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[4],\"correction\":-1}",
     RJ_EINVAL, "correction: -1, expected 0 .. 2^30"},
    {"{\"kind\":\"tensor\",\"op\":\"std\",\"dtype\":\"f32\",\"shape\":[4],\"correction\":1e10}",
     RJ_EINVAL, "correction: 10000000000 is out of range (0 .. 2^30)"},
    /* treduce */
    {"{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":0,\"shape\":[4]}", RJ_EINVAL,
     "ranks: 0 is outside"},
    {"{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":4,\"shape\":[4]}",
     RJ_EINVAL, "root: 4 is outside 0..3"},
    {"{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"shape\":[4,4],\"tile\":[0,4]}",
     RJ_EINVAL, "tile[0]: must be at least 1"},
    {"{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"shape\":[1,1,1,1,1,1]}",
     RJ_EINVAL, "shape: at most 5"},
};

START_TEST(invalid_requests) {
  rj_ctx *ctx = rj_ctx_new();
  const bad_case *c = &bad[_i];
  rj_request r;
  rj_status s = rj_request_parse(ctx, c->json, &r);
  ck_assert_msg(s == c->status, "case %d: status %s, expected %s (%s)\n  %s", _i, rj_status_name(s),
                rj_status_name(c->status), rj_errmsg(ctx), c->json);
  ck_assert_msg(strstr(rj_errmsg(ctx), c->msg), "case %d: message \"%s\" lacks \"%s\"", _i,
                rj_errmsg(ctx), c->msg);
  rj_ctx_free(ctx);
}
END_TEST

static const char *const good[] = {
    TILE_HEAD SRC48 DST4 "}",
    TILE_HEAD SRC48
    "\"dst\":{\"mem\":\"shared\",\"shape\":[4,1]},\"axes\":[1],\"accum\":true,\"nan\":\"ignore\"}",
    "{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"bf16\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[16,16],\"layout\":{\"shape\":[[2,8],[2,4,2]],\"stride\":[[2,\"4@lane\"],[4,\"1@lane\",1]]}},\"dst\":{\"mem\":\"local\",\"shape\":[16],\"layout\":{\"shape\":[[2,8]],\"stride\":[[1,\"4@lane\"]],\"replicate\":[[4,\"1@lane\"]]}}}",
    "{\"kind\":\"subgroup\",\"primitive\":\"reduce_all_add\",\"dtype\":\"i64\",\"log2_size\":5,\"threads\":64,\"blocks\":1}",
    "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[268435456],\"axes\":[0]}",
    "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":1,\"shape\":[512,32],\"tile\":[64,32],\"pingpong\":true}",
};

START_TEST(valid_requests) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r, again;
  const char *canon;
  rjt_parse(ctx, good[_i], &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &canon), RJ_OK);
  char *copy = strdup(canon);
  rjt_parse(ctx, copy, &again); /* the canonical form parses back to the same request */
  ck_assert_int_eq(rj_request_canonical(ctx, &again, &canon), RJ_OK);
  ck_assert_str_eq(copy, canon);
  free(copy);
  rj_ctx_free(ctx);
}
END_TEST

/* Requests built in C go through the same checks. */
START_TEST(c_structs) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_request_init(&r, RJ_KIND_TILE);
  r.u.tile.op = RJ_OP_MAX;
  r.u.tile.dtype = RJ_I32;
  r.u.tile.scope = RJ_SCOPE_WARP;
  r.u.tile.src.ndim = 2;
  r.u.tile.src.shape[0] = 4;
  r.u.tile.src.shape[1] = 32;
  r.u.tile.dst.ndim = 1;
  r.u.tile.dst.shape[0] = 4;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_OK);
  rj_request bad = r;
  bad.struct_size = 12;
  ck_assert_int_eq(rj_request_validate(ctx, &bad), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "struct_size"));
  bad = r;
  bad.u.tile.dtype = (rj_dtype)99;
  ck_assert_int_eq(rj_request_validate(ctx, &bad), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "dtype"));
  bad = r;
  bad.kind = (rj_kind)42;
  ck_assert_int_eq(rj_request_validate(ctx, &bad), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "kind"));
  ck_assert_int_eq(rj_request_validate(ctx, NULL), RJ_EINVAL);
  /* a failed call leaves a message; a good one clears it */
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_OK);
  ck_assert_str_eq(rj_errmsg(ctx), "");
  rj_ctx_free(ctx);
}
END_TEST

/* The reproducers in tests/repro/ (found by fuzzing): each is refused naming the field.  The
 * stride one, unchecked, is signed overflow in ir_place (UBSan); the log2_size one, cut to 32
 * bits, reads as 5. */
/* The canonical text of a request of every kind parses back to a request whose canonical text is
 * the same (a treduce request's "no bound" tile was printed as [0, 0], which parsing refuses). */
START_TEST(canonical_round_trip) {
  static const char *const reqs[] = {
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":2,"
      "\"shape\":[5111]}",
      "{\"kind\":\"treduce\",\"op\":\"max\",\"dtype\":\"f16\",\"ranks\":2,\"shape\":[8,64],"
      "\"tile\":[4,32]}",
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,6,8],\"axes\":[-1]}",
      "{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"f32\",\"log2_size\":3}",
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,"
      "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
  };
  rj_ctx *ctx = rj_ctx_new();
  for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
    rj_request r, back;
    const char *c = NULL;
    ck_assert_int_eq(rj_request_parse(ctx, reqs[i], &r), RJ_OK);
    ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
    char first[2048];
    snprintf(first, sizeof first, "%s", c);
    ck_assert_msg(rj_request_parse(ctx, first, &back) == RJ_OK, "%s: %s", first, rj_errmsg(ctx));
    ck_assert_int_eq(rj_request_canonical(ctx, &back, &c), RJ_OK);
    ck_assert_str_eq(c, first);
  }
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(repro_files) {
  static const struct {
    const char *file, *msg;
  } cases[] = {
      {"json_ubsan_stride_overflow.json",
       "src.layout.stride[0]: \"9223372036854775807@thread\": the step is out of range"},
      {"json_log2size_truncated.json", "log2_size: 4294967301 is out of range (0..5)"},
  };
  rj_ctx *ctx = rj_ctx_new();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *text = rjt_repro_text(cases[i].file);
    rj_request r;
    ck_assert_int_eq(rj_request_parse(ctx, text, &r), RJ_EINVAL);
    ck_assert_msg(strstr(rj_errmsg(ctx), cases[i].msg), "%s: \"%s\" lacks \"%s\"", cases[i].file,
                  rj_errmsg(ctx), cases[i].msg);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* Layout strides built in C are bounded as JSON ones; a bounded thread stride whose multiples
 * overflow int64_t is refused with a message (unchecked, it is signed overflow in ir_place). */
START_TEST(layout_stride_overflow) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rjt_parse(ctx, WARP_SRC32("\"1@lane\"") DST_REP("\"1@lane\""), &r);
  rj_request bad = r;
  bad.u.tile.src.layout.stride[0][0] = (rj_stride){INT64_MAX, RJ_UNIT_THREAD};
  ck_assert_int_eq(rj_request_validate(ctx, &bad), RJ_EINVAL);
  ck_assert_msg(
      strstr(rj_errmsg(ctx), "src.layout.stride[0]: step 9223372036854775807 is out of range"),
      "%s", rj_errmsg(ctx));
  bad = r;
  bad.u.tile.dst.layout.rep_stride[0] = (rj_stride){INT64_MIN, RJ_UNIT_LANE};
  ck_assert_int_eq(rj_request_validate(ctx, &bad), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "dst.layout.replicate[0]: step"), "%s", rj_errmsg(ctx));
  bad = r;
  bad.u.tile.src.layout.stride[0][0].unit = (rj_unit)7;
  ck_assert_int_eq(rj_request_validate(ctx, &bad), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "src.layout.stride[0]: unknown unit 7"), "%s",
                rj_errmsg(ctx));
  /* 2^52 threads a step is in range, but element 2048 of 4096 sits past 2^63 */
  rjt_parse(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":"
      "\"local\",\"shape\":[4096],\"layout\":{\"shape\":[4096],\"stride\":["
      "\"4503599627370496@thread\"]}},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
      &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), "src.layout: element 2048's slot, lane or thread overflows"),
                "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

/* The header's version is the library's, and RJ_VERSION orders like the triple. */
START_TEST(version) {
  char v[32];
  snprintf(v, sizeof v, "%d.%d.%d", RJ_VERSION_MAJOR, RJ_VERSION_MINOR, RJ_VERSION_PATCH);
  ck_assert_str_eq(rj_version(), v);
  ck_assert_int_eq(RJ_VERSION,
                   RJ_VERSION_MAJOR * 10000 + RJ_VERSION_MINOR * 100 + RJ_VERSION_PATCH);
#if RJ_VERSION < 100
#error "RJ_VERSION is usable in #if"
#endif
}
END_TEST

/* The calls for bindings: the library's size, a request it allocates, and parsing into one. */
START_TEST(request_new) {
  ck_assert_uint_eq(rj_request_size(), sizeof(rj_request));
  rj_request *r = rj_request_new(RJ_KIND_TENSOR);
  ck_assert_ptr_nonnull(r);
  rj_request init;
  rj_request_init(&init, RJ_KIND_TENSOR);
  ck_assert_int_eq(memcmp(r, &init, sizeof init), 0);
  rj_ctx *ctx = rj_ctx_new();
  ck_assert_int_eq(rj_request_parse(ctx,
                                    "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\","
                                    "\"shape\":[4,256],\"axes\":[1]}",
                                    r),
                   RJ_OK);
  ck_assert_int_eq(r->kind, RJ_KIND_TENSOR);
  ck_assert_int_eq(r->u.tensor.shape[1], 256);
  ck_assert_int_eq(rj_request_validate(ctx, r), RJ_OK);
  rj_request_free(r);
  rj_request_free(NULL);
  rj_ctx_free(ctx);
}
END_TEST

/* Public entry points answer NULL pointers with RJ_EINVAL naming the argument, never a crash. */
START_TEST(null_arguments) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_kernel *k = NULL;
  const char *text = NULL;
  ck_assert_int_eq(rj_request_parse(NULL, "{}", &r), RJ_EINVAL);
  ck_assert_int_eq(rj_request_parse(ctx, "{}", NULL), RJ_EINVAL);
  ck_assert_str_eq(rj_errmsg(ctx), "out: NULL");
  ck_assert_int_eq(rj_request_parse(ctx, NULL, &r), RJ_EINVAL);
  rj_request_init(NULL, RJ_KIND_TILE);
  rj_request_init(&r, RJ_KIND_TILE);
  ck_assert_int_eq(rj_request_validate(ctx, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_compile(NULL, &r, NULL, &k), RJ_EINVAL);
  ck_assert_int_eq(rj_compile(ctx, NULL, NULL, &k), RJ_EINVAL);
  ck_assert_int_eq(rj_explain(ctx, &r, NULL, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_explain(ctx, NULL, NULL, &text), RJ_EINVAL);
  ck_assert_int_eq(rj_check(ctx, &r, NULL, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_bench(ctx, &r, NULL, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_target_resolve(ctx, NULL, NULL, 16), RJ_EINVAL);
  ck_assert_int_eq(rj_variant_get(ctx, 0, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_device_count(ctx, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_compile_ir(NULL, "x", 0, "k", NULL, &k), RJ_EINVAL);
  unsigned g[3] = {9, 9, 9}, b[3] = {9, 9, 9}, sh = 9;
  rj_kernel_dims(NULL, g, b, &sh);
  ck_assert_uint_eq(g[0] + b[0] + sh, 0);
  ck_assert_ptr_null(rj_kernel_text(NULL, RJ_EMIT_PTX));
  rj_options_init(NULL);
  rj_check_opts_init(NULL);
  rj_treduce_group_init(NULL);
  rj_nccl_args_init(NULL);
  rj_treduce_group grp;
  rj_treduce_group_init(&grp);
  ck_assert_int_eq(rj_treduce_request(ctx, &grp, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_treduce_request(NULL, &grp, &r), RJ_EINVAL);
  ck_assert_int_eq(rj_treduce_run(NULL, &grp, NULL, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_treduce_check(ctx, &r, NULL, RJ_TREDUCE_AUTO, NULL, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_treduce_bench(ctx, &r, NULL, RJ_TREDUCE_AUTO, NULL, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_treduce_nccl(NULL, &r, NULL), RJ_EINVAL);
  rj_ctx_free(NULL);
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("validate");
  TCase *tc = tcase_create("core");
  tcase_add_loop_test(tc, invalid_requests, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_loop_test(tc, valid_requests, 0, (int)(sizeof good / sizeof good[0]));
  tcase_add_test(tc, c_structs);
  tcase_add_test(tc, null_arguments);
  tcase_add_test(tc, repro_files);
  tcase_add_test(tc, canonical_round_trip);
  tcase_add_test(tc, layout_stride_overflow);
  tcase_add_test(tc, request_new);
  tcase_add_test(tc, version);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
