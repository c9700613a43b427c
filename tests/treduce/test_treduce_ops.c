/* treduce's ops mean and custom without a GPU: the division at the store (once, by the ranks or
 * mean_count), the custom combine's PTX (a commutative fadd against op sum; a non-commutative one
 * in rank order whatever the root), the refusals naming their field (requests, groups, the NCCL
 * backend, the ring's plan, rj_treduce_check), and what `explain` says.  The GPU cases are in
 * tests/treduce/test_gpu_treduce.c (CK_RUN_CASE=treduce_ops); f16 / bf16 and struct states:
 * tests/treduce/test_treduce_custom.c. */
#include "redjit_check.h"
#include "redjit_treduce.h"
#include "rjtest.h"

static rj_ctx *ctx;
static void setup(void) {
  ctx = rj_ctx_new();
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

#define ADD_F32                                                                                    \
  "define float @add(float %a, float %b) {\\n  %c = fadd float %a, %b\\n  ret float %c\\n}\\n"
/* A non-commutative combine: the affine map x -> a*x + b mod 2^32 (the 2x2 matrix [[a, b],
 * [0, 1]]) packed into an i64 as (a low, b high), composed as (a1, b1) then (a2, b2) =
 * (a1*a2, b1*a2 + b2).  Its identity is (1, 0), the i64 1. */
#define AFFINE_I64                                                                                 \
  "define i64 @aff(i64 %p, i64 %q) {\\n"                                                           \
  "  %pa = trunc i64 %p to i32\\n  %ph = lshr i64 %p, 32\\n  %pb = trunc i64 %ph to i32\\n"        \
  "  %qa = trunc i64 %q to i32\\n  %qh = lshr i64 %q, 32\\n  %qb = trunc i64 %qh to i32\\n"        \
  "  %a = mul i32 %pa, %qa\\n  %t = mul i32 %pb, %qa\\n  %b = add i32 %t, %qb\\n"                  \
  "  %az = zext i32 %a to i64\\n  %bz = zext i32 %b to i64\\n  %bs = shl i64 %bz, 32\\n"           \
  "  %r = or i64 %az, %bs\\n  ret i64 %r\\n}\\n"

static const char *mean_req(const char *dtype, int ranks, int root, const char *extra) {
  return rjt_fmt("{\"kind\":\"treduce\",\"op\":\"mean\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":%d,"
                 "\"shape\":[37,70],\"tile\":[16,64],\"pingpong\":true%s}",
                 dtype, ranks, root, extra);
}

static const char *custom_req(const char *dtype, const char *ir, const char *fn, const char *id,
                              int comm, int ranks, int root) {
  return rjt_fmt("{\"kind\":\"treduce\",\"op\":\"custom\",\"dtype\":\"%s\",\"ranks\":%d,"
                 "\"root\":%d,\"shape\":[37,70],\"tile\":[16,64],\"pingpong\":true,"
                 "\"combine\":{\"ir\":\"%s\",\"function\":\"%s\",\"identity\":%s,"
                 "\"commutative\":%s}}",
                 dtype, ranks, root, ir, fn, id, comm ? "true" : "false");
}

/* The PTX after its "// redjit: request" header (which quotes the request). */
static char *body(const char *ptx) {
  const char *p = strstr(ptx, "\n//\n");
  p = p ? p : ptx;
  const char *req = strstr(ptx, "// redjit: request");
  if (req) p = strchr(req, '\n');
  char *out = strdup(p ? p : ptx);
  ck_assert_ptr_nonnull(out);
  return out;
}

/* mean: the sum's fold (f32 for f16 / bf16), then one correctly rounded division per stored
 * element by the ranks (a power of two: an exact multiply), or by mean_count. */
START_TEST(mean_ptx) {
  const char *ptx = rjt_ptx(ctx, mean_req("f32", 3, 1, ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "div.rn.f32"), 4); /* one per slot, at the store */
  ck_assert_int_ge(rjt_count(ptx, "0f40400000"), 1); /* 3.0 */
  ck_assert_int_ge(rjt_count(ptx, "add.rn.f32") + rjt_count(ptx, "add.f32"), 8);
  ptx = rjt_ptx(ctx, mean_req("f32", 4, 0, ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "div.rn.f32"), 0);
  ck_assert_int_ge(rjt_count(ptx, "0f3E800000"), 1); /* x * 0.25 */
  ptx = rjt_ptx(ctx, mean_req("f16", 5, 2, ""), "sm_90");
  ck_assert_int_ge(rjt_count(ptx, "cvt.f32.f16"), 20); /* accumulated in f32 */
  ck_assert_int_eq(rjt_count(ptx, "div.rn.f32"), 4);
  ck_assert_int_eq(rjt_count(ptx, "cvt.rn.f16.f32"), 4); /* rounded once */
  ptx = rjt_ptx(ctx, mean_req("bf16", 3, 0, ""), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "div.rn.f32"), 4);
  ptx = rjt_ptx(ctx, mean_req("f64", 7, 6, ""), "sm_80");
  ck_assert_int_eq(rjt_count(ptx, "div.rn.f64"), 4);
  /* mean_count (rj_treduce_run's last launch of several): the old value is the partial sum */
  ptx = rjt_ptx(ctx, mean_req("f32", 3, 0, ",\"mean_count\":5,\"accum\":true"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "div.rn.f32"), 4);
  ck_assert_int_ge(rjt_count(ptx, "0f40A00000"), 1);             /* 5.0 */
  ck_assert_int_eq(rjt_count(ptx, "redjit_treduce_param_0"), 2); /* dst: loaded (old) and stored */
  /* the canonical text names mean_count only when it is set (older keys unchanged) */
  rj_request r;
  const char *json = NULL;
  rjt_parse(ctx, mean_req("f32", 3, 0, ""), &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &json), RJ_OK);
  ck_assert_ptr_null(strstr(json, "mean_count"));
  rjt_parse(ctx, mean_req("f32", 3, 0, ",\"mean_count\":9,\"accum\":true"), &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &json), RJ_OK);
  ck_assert_ptr_nonnull(strstr(json, "\"mean_count\":9"));
}
END_TEST

/* The ring's hop kernel serves mean: the last hop (no next inbox) divides, the others store the
 * partial sum (a select on has_next). */
START_TEST(mean_ring_ptx) {
  const char *ptx = rjt_ptx(ctx,
                            "{\"kind\":\"treduce\",\"variant\":\"treduce_ring\",\"op\":\"mean\","
                            "\"dtype\":\"f32\",\"ranks\":2,\"shape\":[1],\"tile\":[1,4],"
                            "\"mean_count\":6}",
                            "sm_90");
  ck_assert_int_ge(rjt_count(ptx, "div.rn.f32"), 1);
  ck_assert_int_ge(rjt_count(ptx, "0f40C00000"), 1); /* 6.0: every rank of the group */
  ck_assert_int_ge(rjt_count(ptx, "selp.f32") + rjt_count(ptx, "selp.b32"), 1);
}
END_TEST

/* custom: a commutative fadd folds as op sum does (the same adds, in the same order); a
 * non-commutative combine folds in rank order whatever the root (its kernel for root 2 is its
 * kernel for root 0), where a commutative one takes the root first. */
START_TEST(custom_ptx) {
  const char *sum = rjt_ptx(ctx,
                            "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":5,"
                            "\"root\":2,\"shape\":[37,70],\"tile\":[16,64],\"pingpong\":true}",
                            "sm_90");
  int adds = rjt_count(sum, "add.rn.f32") + rjt_count(sum, "add.f32");
  const char *c = rjt_ptx(ctx, custom_req("f32", ADD_F32, "add", "-0.0", 1, 5, 2), "sm_90");
  ck_assert_int_eq(rjt_count(c, "add.rn.f32") + rjt_count(c, "add.f32"), adds);
  ck_assert_int_eq(rjt_count(c, "call"), 0); /* inlined */
  char *nc0 = body(rjt_ptx(ctx, custom_req("i64", AFFINE_I64, "aff", "1", 0, 5, 0), "sm_90"));
  char *nc2 = body(rjt_ptx(ctx, custom_req("i64", AFFINE_I64, "aff", "1", 0, 5, 2), "sm_90"));
  char *cm2 = body(rjt_ptx(ctx, custom_req("i64", AFFINE_I64, "aff", "1", 1, 5, 2), "sm_90"));
  ck_assert_msg(strcmp(nc0, nc2) == 0, "a non-commutative combine's order depends on the root");
  ck_assert_msg(strcmp(nc2, cm2) != 0, "a commutative combine should take the root first");
  ck_assert_int_ge(rjt_count(nc2, "mul.lo.s32"), 4); /* the combine, inlined */
  ck_assert_int_eq(rjt_count(nc2, "call"), 0);
  free(nc0);
  free(nc2);
  free(cm2);
}
END_TEST

static void refused(const char *json, rj_status want, const char *field) {
  rj_request r;
  rj_status s = rj_request_parse(ctx, json, &r);
  ck_assert_msg(s == want, "expected %s, got %s (%s)\n  %s", rj_status_name(want),
                rj_status_name(s), rj_errmsg(ctx), json);
  ck_assert_msg(strstr(rj_errmsg(ctx), field), "\"%s\" does not name %s", rj_errmsg(ctx), field);
}

START_TEST(request_refusals) {
  refused(mean_req("f32", 3, 0, ",\"accum\":true"), RJ_EINVAL, "accum: op \"mean\"");
  refused(mean_req("f32", 3, 0, ",\"nan\":\"ignore\""), RJ_EINVAL, "nan: \"ignore\"");
  refused(mean_req("i32", 3, 0, ""), RJ_EINVAL, "op: \"mean\" takes float");
  refused(mean_req("f32", 3, 0, ",\"mean_count\":2"), RJ_EINVAL, "mean_count: 2 is outside");
  refused(mean_req("f32", 3, 0, ",\"mean_count\":3,\"accum\":true"), RJ_EINVAL, "accum");
  refused(mean_req("f32", 3, 0, ",\"mean_count\":-1"), RJ_EINVAL, "mean_count");
  refused("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4],"
          "\"mean_count\":4}",
          RJ_EINVAL, "mean_count: applies only to op \"mean\"");
  refused("{\"kind\":\"treduce\",\"op\":\"custom\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4]}",
          RJ_EINVAL, "combine: required with op \"custom\"");
  refused("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4],"
          "\"combine\":{\"ir\":\"x\",\"function\":\"f\",\"identity\":0}}",
          RJ_EINVAL, "combine: applies only to op \"custom\"");
  refused(custom_req("i32", ADD_F32, "add", "\"0x100000000\"", 1, 2, 0), RJ_EINVAL,
          "combine.identity");
  refused(custom_req("f32", ADD_F32, "add bad", "0", 1, 2, 0), RJ_EINVAL, "combine.function");
  refused(rjt_fmt("{\"kind\":\"treduce\",\"op\":\"custom\",\"dtype\":\"f32\",\"ranks\":2,"
                  "\"shape\":[4],\"nan\":\"ignore\",\"combine\":{\"ir\":\"%s\",\"function\":"
                  "\"add\",\"identity\":0,\"commutative\":true}}",
                  ADD_F32),
          RJ_EINVAL, "nan: \"ignore\" applies to the built-in ops");
  /* accum with a non-commutative combine is served by treduce: the old value comes first */
  rj_request r;
  rjt_parse(ctx,
            rjt_fmt("{\"kind\":\"treduce\",\"op\":\"custom\",\"dtype\":\"i64\",\"ranks\":2,"
                    "\"shape\":[4],\"accum\":true,\"combine\":{\"ir\":\"%s\",\"function\":"
                    "\"aff\",\"identity\":1}}",
                    AFFINE_I64),
            &r);
  /* the caller's IR is screened (in redjit-irc) as for kind tensor */
  rjt_parse(ctx,
            custom_req("f32",
                       "define float @f(float %a, float %b) {\\n  store float %a, ptr null\\n  "
                       "ret float %b\\n}\\n",
                       "f", "0", 1, 2, 0),
            &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "combine.ir"), "%s", rj_errmsg(ctx));
  rjt_parse(ctx, custom_req("f32", ADD_F32, "nosuch", "0", 1, 2, 0), &r);
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "combine.function"), "%s", rj_errmsg(ctx));
}
END_TEST

static rj_kernel *compile_k(const char *json) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  rj_status s = rj_compile(ctx, &r, &o, &k);
  ck_assert_msg(s == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
  return k;
}

/* Runtime-size kernels ("dynamic": true) serve mean (the count is a parameter, the division by
 * the ranks or mean_count a constant) and custom (a non-commutative combine too): one kernel for
 * every element count, taking n last. */
START_TEST(dynamic_mean_custom) {
  const char *mean = "{\"kind\":\"treduce\",\"op\":\"mean\",\"dtype\":\"f32\",\"ranks\":3,"
                     "\"root\":1,\"dynamic\":true,\"shape\":%s%s}";
  const char *aff = "{\"kind\":\"treduce\",\"op\":\"custom\",\"dtype\":\"i64\",\"ranks\":3,"
                    "\"root\":2,\"dynamic\":true,\"shape\":%s,\"combine\":{\"ir\":\"%s\","
                    "\"function\":\"aff\",\"identity\":1}}";
  for (int w = 0; w < 3; w++) { /* mean, mean with mean_count (a later launch), custom */
    const char *extra = w == 1 ? ",\"mean_count\":6,\"accum\":true" : "";
    long long n0 = rjt_made(ctx);
    rj_kernel *a = compile_k(w < 2 ? rjt_fmt(mean, "[1000003]", extra)
                                   : rjt_fmt(aff, "[1000003]", AFFINE_I64));
    long long n1 = rjt_made(ctx);
    ck_assert_int_le(n1, n0 + 1);
    rj_kernel *b =
        compile_k(w < 2 ? rjt_fmt(mean, "[77,129]", extra) : rjt_fmt(aff, "[77,129]", AFFINE_I64));
    ck_assert_ptr_eq(a, b);
    ck_assert_int_eq(rjt_made(ctx), n1);
    const char *ptx = rj_kernel_text(a, RJ_EMIT_PTX);
    ck_assert_msg(strstr(ptx, "redjit_treduce_param_4") && !strstr(ptx, "redjit_treduce_param_5"),
                  "expected (dst, src x3, n):\n%s", ptx);
    if (w == 2) {
      ck_assert_int_ge(rjt_count(ptx, "mul.lo.") + rjt_count(ptx, "mad.lo."), 4); /* inlined */
      ck_assert_int_eq(rjt_count(ptx, "call"), 0);
    } else {
      ck_assert_int_ge(rjt_count(ptx, "div.rn.f32"), 1);
      ck_assert_int_ge(rjt_count(ptx, w == 1 ? "0f40C00000" : "0f40400000"), 1); /* 6, or 3 */
    }
  }
}
END_TEST

/* A 3-rank f32 group of fake pointers (validation needs no GPU). */
static rj_treduce_buf gbufs[3];
static void group(rj_treduce_group *g, rj_op op) {
  rjt_fake_group(g, gbufs, 3, 100, op);
}

static void bad_group(const rj_treduce_group *g, const char *field) {
  rj_request r;
  rj_status s = rj_treduce_request(ctx, g, &r);
  ck_assert_msg(s == RJ_EINVAL, "got %s (%s)", rj_status_name(s), rj_errmsg(ctx));
  ck_assert_msg(strstr(rj_errmsg(ctx), field), "\"%s\" does not name %s", rj_errmsg(ctx), field);
  rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
  ck_assert_int_eq(rj_treduce_run(ctx, g, NULL, &res), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), field), "run: \"%s\" does not name %s", rj_errmsg(ctx),
                field);
}

START_TEST(group_fields) {
  rj_treduce_group g;
  rj_request r;
  group(&g, RJ_OP_MEAN);
  ck_assert_int_eq(rj_treduce_request(ctx, &g, &r), RJ_OK);
  ck_assert_int_eq(r.u.treduce.op, RJ_OP_MEAN);
  ck_assert_int_eq(r.u.treduce.mean_count, 0);
  g.accum = 1;
  bad_group(&g, "accum: op \"mean\"");
  group(&g, RJ_OP_CUSTOM);
  bad_group(&g, "combine.ir: required");
  g.combine.ir = ADD_F32;
  bad_group(&g, "combine.function: required");
  memset(g.combine.fn, 'x', sizeof g.combine.fn); /* no NUL */
  bad_group(&g, "combine.function: longer than");
  snprintf(g.combine.fn, sizeof g.combine.fn, "add");
  g.combine.commutative = 2;
  bad_group(&g, "combine.commutative");
  g.combine.commutative = 1;
  ck_assert_msg(rj_treduce_request(ctx, &g, &r) == RJ_OK, "%s", rj_errmsg(ctx));
  ck_assert_str_eq(r.u.treduce.combine.fn, "add");
  ck_assert_ptr_eq(r.u.treduce.combine.ir, g.combine.ir);
  group(&g, RJ_OP_SUM);
  g.combine.identity = 1;
  bad_group(&g, "combine: applies only to op \"custom\"");
  /* a group of a 0.1 header that ended before the combine (at `dynamic`) is refused */
  group(&g, RJ_OP_SUM);
  g.struct_size = (uint32_t)offsetof(rj_treduce_group, combine);
  bad_group(&g, "group.struct_size");
}
END_TEST

START_TEST(nccl_refusals) {
  rj_request r;
  rj_nccl_args a;
  rj_nccl_args_init(&a);
  a.comm = (void *)0x1;
  a.src = 0x1000;
  a.dst = 0x2000;
  rjt_parse(ctx, custom_req("f32", ADD_F32, "add", "0", 1, 2, 0), &r);
  ck_assert_int_eq(rj_treduce_nccl(ctx, &r, &a), RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(rj_errmsg(ctx), "op: \"custom\"; NCCL has no user-defined"), "%s",
                rj_errmsg(ctx));
  rjt_parse(ctx, mean_req("f32", 3, 0, ",\"mean_count\":5,\"accum\":true"), &r);
  ck_assert_int_eq(rj_treduce_nccl(ctx, &r, &a), RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(rj_errmsg(ctx), "accum"), "%s", rj_errmsg(ctx));
}
END_TEST

/* The ring: a mean of f16 / bf16 is refused as their sums are; a non-commutative combine runs
 * only where rank 0 is on the root's GPU (its chain starts at rank 0). */
START_TEST(ring_plan) {
  rj_request r;
  int dev[4] = {0, 1, 0, 1};
  rj_treduce_plan p;
  rjt_parse(ctx, mean_req("f16", 4, 0, ""), &r);
  rj_treduce_plan_init(&p);
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_RING, &p), RJ_OK);
  ck_assert_msg(p.ring_load < 0 && strstr(p.ring_why, "a mean of f16"), "%s", p.ring_why);
  rjt_parse(ctx, mean_req("f32", 4, 1, ""), &r);
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_RING, &p), RJ_OK);
  ck_assert_msg(p.ring_load > 0 && p.ring_why[0] == 0, "%s", p.ring_why);
  rjt_parse(ctx, custom_req("i64", AFFINE_I64, "aff", "1", 0, 4, 1), &r);
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_RING, &p), RJ_OK);
  ck_assert_msg(p.ring_load < 0 && strstr(p.ring_why, "non-commutative"), "%s", p.ring_why);
  rjt_parse(ctx, custom_req("i64", AFFINE_I64, "aff", "1", 0, 4, 2), &r); /* rank 0's GPU */
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_RING, &p), RJ_OK);
  ck_assert_msg(p.ring_load > 0, "%s", p.ring_why);
  rjt_parse(ctx, custom_req("i64", AFFINE_I64, "aff", "1", 1, 4, 1), &r); /* commutative */
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_RING, &p), RJ_OK);
  ck_assert_msg(p.ring_load > 0, "%s", p.ring_why);
}
END_TEST

/* rj_treduce_check has no oracle for custom (before any GPU work), nor for a request's own
 * mean_count. */
START_TEST(check_refusals) {
  rj_request r;
  rj_check_opts o;
  rj_check_opts_init(&o);
  rj_check_result res = {.struct_size = sizeof res};
  rjt_parse(ctx, custom_req("f32", ADD_F32, "add", "0", 1, 2, 0), &r);
  rj_status s = rj_treduce_check(ctx, &r, &o, RJ_TREDUCE_AUTO, &res, NULL);
  ck_assert_msg(s == RJ_EUNSUPPORTED && strstr(rj_errmsg(ctx), "no CPU oracle"), "%s: %s",
                rj_status_name(s), rj_errmsg(ctx));
  rjt_parse(ctx, mean_req("f32", 3, 0, ",\"mean_count\":5,\"accum\":true"), &r);
  s = rj_treduce_check(ctx, &r, &o, RJ_TREDUCE_AUTO, &res, NULL);
  ck_assert_msg(s == RJ_EUNSUPPORTED && strstr(rj_errmsg(ctx), "mean_count"), "%s: %s",
                rj_status_name(s), rj_errmsg(ctx));
}
END_TEST

/* explain: treduce is chosen for mean and for either combine; the ring's hop kernel is forced
 * only. */
START_TEST(explain) {
  const char *reqs[] = {mean_req("f16", 3, 1, ""),
                        custom_req("i64", AFFINE_I64, "aff", "1", 0, 4, 1)};
  for (int i = 0; i < 2; i++) {
    rj_request r;
    rjt_parse(ctx, reqs[i], &r);
    rj_options o;
    rj_options_init(&o);
    o.target = "sm_90";
    const char *text = NULL;
    ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_OK);
    ck_assert_msg(strstr(text, "treduce prio=10 chosen"), "%s", text);
    ck_assert_msg(strstr(text, "treduce_ring prio=5 not tried"), "%s", text);
  }
  rj_request r;
  rjt_parse(ctx,
            rjt_fmt("{\"kind\":\"treduce\",\"variant\":\"treduce_ring\",\"op\":\"custom\","
                    "\"dtype\":\"i64\",\"ranks\":3,\"shape\":[1],\"tile\":[1,1],"
                    "\"combine\":{\"ir\":\"%s\",\"function\":\"aff\",\"identity\":1}}",
                    AFFINE_I64),
            &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  const char *text = NULL;
  ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_OK);
  ck_assert_msg(strstr(text, "treduce_ring prio=5 chosen"), "%s", text);
}
END_TEST

int main(void) {
  Suite *s = suite_create("treduce_ops");
  TCase *tc = tcase_create("treduce_ops");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, mean_ptx);
  tcase_add_test(tc, mean_ring_ptx);
  tcase_add_test(tc, custom_ptx);
  tcase_add_test(tc, request_refusals);
  tcase_add_test(tc, group_fields);
  tcase_add_test(tc, nccl_refusals);
  tcase_add_test(tc, ring_plan);
  tcase_add_test(tc, check_refusals);
  tcase_add_test(tc, explain);
  tcase_add_test(tc, dynamic_mean_custom);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
