/* treduce's op custom beyond a scalar state of f32 f64 i32 u32 i64 u64, without a GPU: f16 / bf16
 * scalar states (the combine takes half / bfloat, the state stays in the dtype: no f32 in the
 * fold), struct states (combine.state, lift, finish, result: JSON, the canonical text, groups,
 * the kernel with the caller's functions inlined, the destination of field result's dtype), and
 * the refusals naming their field or cause (accum with a struct state, the ring path, a group's
 * destination aligned for the dtype but not for the output).  The GPU cases are in
 * tests/treduce/test_gpu_treduce.c (CK_RUN_CASE=treduce_custom). */
#include "custom_ir.h"
#include "redjit_treduce.h"
#include "rjtest.h"

#include <stdlib.h>

static rj_ctx *ctx;
static void setup(void) {
  ctx = rj_ctx_new();
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

#define HADD_IR "define half @hadd(half %a, half %b) {\n  %c = fadd half %a, %b\n  ret half %c\n}\n"
#define BADD_IR                                                                                    \
  "define bfloat @badd(bfloat %a, bfloat %b) {\n  %c = fadd bfloat %a, %b\n  ret bfloat %c\n}\n"
#define FADD_IR                                                                                    \
  "define float @add(float %a, float %b) {\n  %c = fadd float %a, %b\n  ret float %c\n}\n"

/* s as a JSON string's contents */
static char *escape(const char *s) {
  char *out = malloc(2 * strlen(s) + 1), *o = out;
  ck_assert_ptr_nonnull(out);
  for (; *s; s++) {
    if (*s == '\n')
      *o++ = '\\', *o++ = 'n';
    else if (*s == '"' || *s == '\\')
      *o++ = '\\', *o++ = *s;
    else
      *o++ = *s;
  }
  *o = 0;
  return out;
}

/* A scalar custom request: combine ir / fn / identity (JSON text), extra fields appended. */
static const char *scalar_req(const char *dtype, const char *ir, const char *fn, const char *id,
                              int comm, int ranks, int root, const char *extra) {
  char *e = escape(ir);
  const char *j = rjt_fmt("{\"kind\":\"treduce\",\"op\":\"custom\",\"dtype\":\"%s\",\"ranks\":%d,"
                          "\"root\":%d,\"shape\":[37,70],\"tile\":[16,64],\"pingpong\":true%s,"
                          "\"combine\":{\"ir\":\"%s\",\"function\":\"%s\",\"identity\":%s,"
                          "\"commutative\":%s}}",
                          dtype, ranks, root, extra, e, fn, id, comm ? "true" : "false");
  free(e);
  return j;
}

/* The Welford state {i64 n, f64 mean, f64 M2} of f32 elements, finish: the sample variance (f64);
 * combine_extra goes into "combine", extra into the request. */
static const char *welford_req(int ranks, int root, const char *extra, const char *combine_extra) {
  char *e = escape(WELFORD_IR);
  const char *j = rjt_fmt("{\"kind\":\"treduce\",\"op\":\"custom\",\"dtype\":\"f32\",\"ranks\":%d,"
                          "\"root\":%d,\"shape\":[37,70],\"tile\":[16,64],\"pingpong\":true%s,"
                          "\"combine\":{\"ir\":\"%s\",\"function\":\"wcomb\",\"lift\":\"wlift\","
                          "\"finish\":\"wfin\",\"result\":2,\"commutative\":true,\"state\":"
                          "[{\"dtype\":\"i64\",\"identity\":0},{\"dtype\":\"f64\",\"identity\":0},"
                          "{\"dtype\":\"f64\",\"identity\":0}]%s}}",
                          ranks, root, extra, e, combine_extra);
  free(e);
  return j;
}

/* The 2x2 matrix state of u32 elements (not commutative; lift takes the fold position). */
static const char *matrix_req(int ranks, int root) {
  char *e = escape(MATRIX_IR);
  const char *j =
      rjt_fmt("{\"kind\":\"treduce\",\"op\":\"custom\",\"dtype\":\"u32\",\"ranks\":%d,"
              "\"root\":%d,\"shape\":[37,70],\"tile\":[16,64],\"combine\":{\"ir\":\"%s\","
              "\"function\":\"mmul\",\"lift\":\"mlift\",\"finish\":\"mfin\",\"state\":"
              "[{\"dtype\":\"u32\",\"identity\":1},{\"dtype\":\"u32\",\"identity\":0},"
              "{\"dtype\":\"u32\",\"identity\":0},{\"dtype\":\"u32\",\"identity\":1}]}}",
              ranks, root, e);
  free(e);
  return j;
}

static void refused(const char *json, rj_status want, const char *field) {
  rj_request r;
  rj_status s = rj_request_parse(ctx, json, &r);
  ck_assert_msg(s == want, "expected %s, got %s (%s)\n  %s", rj_status_name(want),
                rj_status_name(s), rj_errmsg(ctx), json);
  ck_assert_msg(strstr(rj_errmsg(ctx), field), "\"%s\" does not name %s", rj_errmsg(ctx), field);
}

/* compile failure of a valid request, naming field */
static void compile_refused(const char *json, const char *field) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  rj_status s = rj_compile(ctx, &r, &o, &k);
  ck_assert_msg(s != RJ_OK && strstr(rj_errmsg(ctx), field), "%s: %s (want %s)", rj_status_name(s),
                rj_errmsg(ctx), field);
}

/* f16 / bf16: the caller's half / bfloat combine inlined, the state kept in the dtype (a custom
 * hadd is 16 half adds for 5 ranks x 4 slots, the identity -0.0's folded away, and no conversion
 * to f32 where op sum has 20); the table path (20 ranks), accum (the old value first, exact: the
 * state is the dtype), a runtime-size kernel and the ring's hop kernel too. */
START_TEST(half_states) {
  const char *ptx =
      rjt_ptx(ctx, scalar_req("f16", HADD_IR, "hadd", "\"0x8000\"", 1, 5, 2, ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "add.rn.f16") + rjt_count(ptx, "add.f16"), 16);
  ck_assert_int_eq(rjt_count(ptx, "cvt.f32.f16"), 0);
  ck_assert_int_eq(rjt_count(ptx, "call"), 0);
  const char *sum = rjt_ptx(ctx,
                            "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f16\",\"ranks\":5,"
                            "\"root\":2,\"shape\":[37,70],\"tile\":[16,64],\"pingpong\":true}",
                            "sm_90");
  ck_assert_int_eq(rjt_count(sum, "cvt.f32.f16"), 20);
  ptx = rjt_ptx(ctx, scalar_req("bf16", BADD_IR, "badd", "-0.0", 1, 5, 2, ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "call"), 0);
  ck_assert_int_ge(rjt_count(ptx, ".bf16"), 16);
  ptx = rjt_ptx(ctx, scalar_req("f16", HADD_IR, "hadd", "-0.0", 1, 20, 7, ""), "sm_90");
  ck_assert_int_ge(rjt_count(ptx, "add.rn.f16") + rjt_count(ptx, "add.f16"), 16);
  ck_assert_int_eq(rjt_count(ptx, "call"), 0);
  ptx = rjt_ptx(ctx, scalar_req("f16", HMAX_IR, "hmax", "\"0xfc00\"", 0, 3, 1, ",\"accum\":true"),
                "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "redjit_treduce_param_0"), 2); /* dst: loaded (old), stored */
  ck_assert_int_eq(rjt_count(ptx, "call"), 0);
  ptx = rjt_ptx(ctx, scalar_req("bf16", BADD_IR, "badd", "-0.0", 1, 3, 1, ",\"dynamic\":true"),
                "sm_90");
  ck_assert_msg(strstr(ptx, "redjit_treduce_param_4"), "expected (dst, src x3, n)");
  char *e = escape(HADD_IR);
  ptx = rjt_ptx(ctx,
                rjt_fmt("{\"kind\":\"treduce\",\"variant\":\"treduce_ring\",\"op\":\"custom\","
                        "\"dtype\":\"f16\",\"ranks\":3,\"shape\":[1],\"tile\":[1,8],\"combine\":"
                        "{\"ir\":\"%s\",\"function\":\"hadd\",\"identity\":-0.0,"
                        "\"commutative\":true}}",
                        e),
                "sm_90");
  free(e);
  ck_assert_int_eq(rjt_count(ptx, "call"), 0);
  ck_assert_int_eq(rjt_count(ptx, "cvt.f32.f16"), 0);
  /* a float combine for f16 is refused by the screen, naming the field and the type */
  compile_refused(scalar_req("f16", FADD_IR, "add", "0", 1, 2, 0, ""), "combine.function");
  compile_refused(scalar_req("f16", FADD_IR, "add", "0", 1, 2, 0, ""), "half");
}
END_TEST

/* A struct state's JSON into rj_treduce's fields; the canonical text names them and parses back
 * to the same request (its canonical text unchanged). */
START_TEST(struct_json) {
  rj_request r, back;
  rjt_parse(ctx, welford_req(4, 1, "", ""), &r);
  const rj_treduce *t = &r.u.treduce;
  ck_assert_int_eq(t->combine.nfields, 3);
  ck_assert_int_eq(t->combine.fields[0], RJ_I64);
  ck_assert_int_eq(t->combine.fields[2], RJ_F64);
  ck_assert_str_eq(t->combine.lift, "wlift");
  ck_assert_str_eq(t->combine.finish, "wfin");
  ck_assert_int_eq(t->combine.result, 2);
  const char *canon = NULL;
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &canon), RJ_OK);
  char *first = strdup(canon);
  ck_assert_ptr_nonnull(first);
  ck_assert_msg(strstr(first, "\"state\":[{\"dtype\":\"i64\",\"identity\":\"0x0\"}") &&
                    strstr(first, "\"lift\":\"wlift\"") && strstr(first, "\"finish\":\"wfin\"") &&
                    strstr(first, "\"result\":2") && !strstr(first, "\"identity\":\"0x0\",\"c"),
                "%s", first);
  rjt_parse(ctx, first, &back);
  ck_assert_int_eq(back.u.treduce.combine.nfields, 3);
  ck_assert_int_eq(
      memcmp(back.u.treduce.combine.fields, t->combine.fields, sizeof t->combine.fields), 0);
  ck_assert_str_eq(back.u.treduce.combine.finish, "wfin");
  ck_assert_int_eq(rj_request_canonical(ctx, &back, &canon), RJ_OK);
  ck_assert_str_eq(canon, first);
  free(first);
  /* a scalar state's canonical text has no state keys */
  rjt_parse(ctx, scalar_req("f16", HADD_IR, "hadd", "-0.0", 1, 2, 0, ""), &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &canon), RJ_OK);
  ck_assert_msg(!strstr(canon, "state") && !strstr(canon, "lift") &&
                    strstr(canon, "\"identity\":\"0x8000\""),
                "%s", canon);
}
END_TEST

/* The kernel of a struct state: lift, combine and finish inlined (no call), Welford's divisions
 * in f64, the f64 variances stored (the destination is field result's dtype); many ranks (the
 * table in shared memory: the fold position counted in the loop) and a runtime-size kernel too;
 * a non-commutative state folds in rank order whatever the root (its kernel for root 3 is the
 * one for root 0), where a commutative one takes the root first. */
START_TEST(struct_ptx) {
  const char *ptx = rjt_ptx(ctx, welford_req(5, 2, "", ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "call"), 0);
  /* unrolled, the counts are constants: finish's M2 / (5 - 1) is a multiply by 0.25 */
  ck_assert_int_ge(rjt_count(ptx, "0d3FD0000000000000"), 1);
  ck_assert_int_ge(rjt_count(ptx, "mul.rn.f64"), 4);
  ck_assert_int_eq(rjt_count(ptx, "st.global.f64") + rjt_count(ptx, "st.global.b64"), 4);
  ck_assert_int_ge(rjt_count(ptx, "ld.global.f32") + rjt_count(ptx, "ld.global.nc.f32") +
                       rjt_count(ptx, "ld.global.b32") + rjt_count(ptx, "ld.global.nc.b32"),
                   20);
  ptx = rjt_ptx(ctx, welford_req(40, 33, "", ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "call"), 0);
  ck_assert_int_ge(rjt_count(ptx, "div.rn.f64"), 1); /* the table's loop: counts at run time */
  ptx = rjt_ptx(ctx, welford_req(3, 0, ",\"dynamic\":true", ""), "sm_90");
  ck_assert_msg(strstr(ptx, "redjit_treduce_param_4"), "expected (dst, src x3, n)");
  const char *m0 = rjt_ptx(ctx, matrix_req(5, 0), "sm_90");
  ck_assert_int_eq(rjt_count(m0, "call"), 0);
  ck_assert_int_ge(rjt_count(m0, "mul.lo.s32") + rjt_count(m0, "mad.lo.s32"), 16);
  char *a = strdup(strstr(m0, ".entry")),
       *b = strdup(strstr(rjt_ptx(ctx, matrix_req(5, 3), "sm_90"), ".entry"));
  ck_assert_msg(a && b && strcmp(a, b) == 0, "a non-commutative state's order depends on the root");
  free(a);
  free(b);
  a = strdup(strstr(rjt_ptx(ctx, welford_req(5, 0, "", ""), "sm_90"), ".entry"));
  b = strdup(strstr(rjt_ptx(ctx, welford_req(5, 3, "", ""), "sm_90"), ".entry"));
  ck_assert_msg(a && b && strcmp(a, b) != 0, "a commutative state takes the root first");
  free(a);
  free(b);
  ptx = rjt_ptx(ctx, matrix_req(20, 19), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "call"), 0);
}
END_TEST

/* Every refusal names its field: accum with a struct state (the destination holds the output),
 * identity beside state, no lift, a result outside the fields, nan "ignore"; the screen's (lift
 * of another element type); the ring's hop kernel; rj_treduce_plan_make's ring. */
START_TEST(struct_refusals) {
  refused(welford_req(3, 0, ",\"accum\":true", ""), RJ_EINVAL,
          "accum: not with a struct state (the destination holds the output");
  refused(welford_req(3, 0, "", ",\"identity\":0"), RJ_EINVAL, "combine.identity: not with");
  char *e = escape(WELFORD_IR);
  refused(rjt_fmt("{\"kind\":\"treduce\",\"op\":\"custom\",\"dtype\":\"f32\",\"ranks\":2,"
                  "\"shape\":[4],\"combine\":{\"ir\":\"%s\",\"function\":\"wcomb\","
                  "\"state\":[{\"dtype\":\"i64\",\"identity\":0}]}}",
                  e),
          RJ_EINVAL, "combine.lift: required");
  free(e);
  refused(welford_req(3, 0, "", ",\"result\":3"), RJ_EINVAL, "combine.result");
  refused(welford_req(3, 0, ",\"nan\":\"ignore\"", ""), RJ_EINVAL, "nan: \"ignore\"");
  /* lift takes float, the request's dtype is f64 */
  char *w = strdup(welford_req(3, 0, "", ""));
  ck_assert_ptr_nonnull(w);
  memcpy(strstr(w, "\"f32\""), "\"f64\"", 5);
  compile_refused(w, "combine.lift");
  free(w);
  /* the ring's hop kernel hands on dtype values */
  rj_request r;
  rjt_parse(ctx, welford_req(3, 0, "", ""), &r);
  snprintf(r.variant, sizeof r.variant, "treduce_ring");
  r.u.treduce.tile[0] = 1;
  r.u.treduce.tile[1] = 1;
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  ck_assert_int_ne(rj_compile(ctx, &r, &o, &k), RJ_OK);
  ck_assert_msg(strstr(rj_errmsg(ctx), "combine.state: the hops hand on dtype values"), "%s",
                rj_errmsg(ctx));
  rjt_parse(ctx, welford_req(4, 0, "", ""), &r);
  int dev[4] = {0, 1, 0, 1};
  rj_treduce_plan p;
  rj_treduce_plan_init(&p);
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_RING, &p), RJ_OK);
  ck_assert_msg(p.ring_load < 0 && strstr(p.ring_why, "struct state"), "%s", p.ring_why);
  /* explain: the peer kernel serves it, the ring's only when forced (and then declines) */
  rjt_parse(ctx, welford_req(4, 0, "", ""), &r);
  const char *text = NULL;
  ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_OK);
  ck_assert_msg(strstr(text, "treduce prio=10 chosen"), "%s", text);
}
END_TEST

/* A group's struct state becomes the request's; the destination is checked against the output's
 * element size (f64 here, from f32 sources); a group of 0.1's size before the struct state is
 * refused, naming struct_size. */
START_TEST(struct_group) {
  static rj_treduce_buf bufs[3];
  rj_treduce_group g;
  rjt_fake_group(&g, bufs, 3, 100, RJ_OP_CUSTOM);
  g.combine.ir = WELFORD_IR;
  snprintf(g.combine.fn, sizeof g.combine.fn, "wcomb");
  snprintf(g.combine.lift, sizeof g.combine.lift, "wlift");
  snprintf(g.combine.finish, sizeof g.combine.finish, "wfin");
  g.combine.nfields = 3;
  g.combine.fields[0] = RJ_I64;
  g.combine.fields[1] = g.combine.fields[2] = RJ_F64;
  g.combine.result = 2;
  g.combine.commutative = 1;
  rj_request r;
  ck_assert_msg(rj_treduce_request(ctx, &g, &r) == RJ_OK, "%s", rj_errmsg(ctx));
  ck_assert_int_eq(r.u.treduce.combine.nfields, 3);
  ck_assert_int_eq(r.u.treduce.combine.fields[1], RJ_F64);
  ck_assert_str_eq(r.u.treduce.combine.lift, "wlift");
  ck_assert_str_eq(r.u.treduce.combine.finish, "wfin");
  ck_assert_int_eq(r.u.treduce.combine.result, 2);
  g.dst.ptr = 0x900004u; /* aligned for the f32 sources, not for the f64 output */
  ck_assert_int_eq(rj_treduce_request(ctx, &g, &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "dst.ptr: 0x900004 is not aligned to its 8-byte element"),
                "%s", rj_errmsg(ctx));
  g.dst.ptr = 0x900000u;
  g.accum = 1;
  ck_assert_int_eq(rj_treduce_request(ctx, &g, &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "accum: not with a struct state"), "%s", rj_errmsg(ctx));
  g.accum = 0;
  /* a group of the 0.1 header that ended before the struct state is refused, naming struct_size */
  g.struct_size = (uint32_t)(sizeof g - RJ_COMBINE_FIELDS_MAX * 8);
  ck_assert_int_eq(rj_treduce_request(ctx, &g, &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "group.struct_size"), "%s", rj_errmsg(ctx));
}
END_TEST

int main(void) {
  Suite *s = suite_create("treduce_custom");
  TCase *tc = tcase_create("treduce_custom");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, half_states);
  tcase_add_test(tc, struct_json);
  tcase_add_test(tc, struct_ptx);
  tcase_add_test(tc, struct_refusals);
  tcase_add_test(tc, struct_group);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
