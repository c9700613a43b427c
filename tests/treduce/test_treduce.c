/* treduce without a GPU: invalid groups and requests (status and the field named), the request a
 * group compiles as, the NCCL backend's refusals, and PTX properties of the treduce kernel.  The
 * split and ring plans (rj_treduce_plan_make, `redjit plan`) are
 * tests/treduce/test_treduce_plan.c. */
#include "redjit_check.h"
#include "redjit_treduce.h"
#include "rjtest.h"

#include <stdbool.h>

static rj_ctx *ctx;
static void setup(void) {
  ctx = rj_ctx_new();
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

/* A valid 4-rank group of 64x32 f32 (fake pointers: validation needs no GPU). */
static rj_treduce_buf bufs[4];
static void group(rj_treduce_group *g) {
  rjt_treduce_group(g, bufs, 4, 1, 64, 32, 1, RJ_OP_SUM, RJ_F32);
  rjt_fake_pointers(g, bufs);
  g->tile[0] = 16;
}

static void bad_group(const rj_treduce_group *g, const char *field) {
  rj_request r;
  rj_status s = rj_treduce_request(ctx, g, &r);
  ck_assert_msg(s == RJ_EINVAL, "expected RJ_EINVAL, got %s (%s)", rj_status_name(s),
                rj_errmsg(ctx));
  ck_assert_msg(strstr(rj_errmsg(ctx), field), "message \"%s\" does not name %s", rj_errmsg(ctx),
                field);
  rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
  s = rj_treduce_run(ctx, g, NULL, &res); /* the same refusal, before any device work */
  ck_assert_msg(s == RJ_EINVAL, "rj_treduce_run: expected RJ_EINVAL, got %s (%s)",
                rj_status_name(s), rj_errmsg(ctx));
  ck_assert_msg(strstr(rj_errmsg(ctx), field), "run message \"%s\" does not name %s",
                rj_errmsg(ctx), field);
}

START_TEST(valid_group) {
  rj_treduce_group g;
  group(&g);
  rj_request r;
  ck_assert_int_eq(rj_treduce_request(ctx, &g, &r), RJ_OK);
  const char *json = NULL;
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &json), RJ_OK);
  ck_assert_msg(strstr(json, "\"kind\":\"treduce\"") && strstr(json, "\"ranks\":4") &&
                    strstr(json, "\"root\":1") && strstr(json, "\"shape\":[64,32]") &&
                    strstr(json, "\"tile\":[16,32]") && strstr(json, "\"pingpong\":true"),
                "canonical: %s", json);
}
END_TEST

START_TEST(invalid_groups) {
  rj_treduce_group g;
  bad_group(NULL, "group");
  group(&g);
  g.ranks = 0;
  bad_group(&g, "ranks");
  group(&g);
  g.root = 4;
  bad_group(&g, "root");
  group(&g);
  g.root = -1;
  bad_group(&g, "root");
  group(&g);
  g.src = NULL;
  bad_group(&g, "src");
  group(&g);
  bufs[2].ptr = 0;
  bad_group(&g, "src[2].ptr");
  group(&g);
  g.dst.ptr = 0;
  bad_group(&g, "dst.ptr");
  group(&g);
  bufs[3].shape[1] = 31;
  bad_group(&g, "src[3].shape[1]");
  group(&g);
  bufs[0].ndim = 3;
  bufs[0].shape[2] = 1;
  bad_group(&g, "src[0].shape");
  group(&g);
  g.dst.shape[0] = 63;
  bad_group(&g, "dst.shape[0]");
  group(&g);
  g.tile[0] = 0;
  bad_group(&g, "tile[0]");
  group(&g);
  g.tile[1] = -3;
  bad_group(&g, "tile[1]");
  group(&g);
  bufs[2].ptr += 2;
  bad_group(&g, "src[2].ptr");
  group(&g);
  g.dst.device = 1;
  bad_group(&g, "dst.device");
  group(&g);
  bufs[2].has_strides = 1;
  bufs[2].strides[0] = 64;
  bufs[2].strides[1] = 1;
  bad_group(&g, "src[2].strides[0]");
  group(&g);
  g.struct_size = 8;
  bad_group(&g, "struct_size");
  group(&g);
  g.struct_size = (uint32_t)sizeof g + 4;
  bad_group(&g, "struct_size");
  group(&g);
  g.async = 2;
  bad_group(&g, "async");
  group(&g);
  g.async = -1;
  bad_group(&g, "async");
  group(&g);
  g.ring_timeout_ms = -1;
  bad_group(&g, "ring_timeout_ms");
  group(&g);
  g.ring_timeout_ms = 3600001;
  bad_group(&g, "ring_timeout_ms");
  group(&g);
  g.struct_size = (uint32_t)sizeof g - 8;
  bad_group(&g, "struct_size");
  group(&g);
  g.dtype = (rj_dtype)42;
  bad_group(&g, "dtype");
  group(&g);
  g.path = (rj_treduce_path)7;
  bad_group(&g, "path");
  group(&g);
  g.path = (rj_treduce_path)(RJ_TREDUCE_RING + 1);
  bad_group(&g, "path");
  group(&g);
  g.path = (rj_treduce_path)-1;
  bad_group(&g, "path");
  group(&g);
  bufs[1].ndim = 6;
  bad_group(&g, "src[1].ndim");
}
END_TEST

/* One size per struct from 0.2: a group of a 0.1 header's size (the first of them ended at
 * `path`, the last at the combine's `commutative`) is refused, naming struct_size, and so is any
 * size but this library's; the exported rj_treduce_group_init and this header's macro both fill
 * the whole group. */
START_TEST(one_group_size) {
  rj_treduce_group g;
  rj_request r;
  size_t older[] = {offsetof(rj_treduce_group, stream), offsetof(rj_treduce_group, dynamic),
                    offsetof(rj_treduce_group, combine), sizeof g - 8, sizeof g + 8};
  for (size_t i = 0; i < sizeof older / sizeof older[0]; i++) {
    group(&g);
    g.struct_size = (uint32_t)older[i];
    ck_assert_int_eq(rj_treduce_request(ctx, &g, &r), RJ_EINVAL);
    ck_assert_msg(strstr(rj_errmsg(ctx), "group.struct_size") &&
                      strstr(rj_errmsg(ctx), "rj_treduce_group_init"),
                  "%s", rj_errmsg(ctx));
  }
  group(&g);
  ck_assert_msg(rj_treduce_request(ctx, &g, &r) == RJ_OK, "%s", rj_errmsg(ctx));
  rj_treduce_group padded;
  memset(&padded, 0xEE, sizeof padded);
  (rj_treduce_group_init)(&padded); /* the exported function, for bindings */
  ck_assert_uint_eq(padded.struct_size, sizeof padded);
  for (size_t i = sizeof padded.struct_size; i < sizeof padded; i++)
    ck_assert_uint_eq(((unsigned char *)&padded)[i], 0);
  memset(&padded, 0xEE, sizeof padded);
  rj_treduce_group_init(&padded);
  ck_assert_uint_eq(padded.struct_size, sizeof padded);
  ck_assert_ptr_null(padded.stream);
  ck_assert_int_eq(padded.async, 0);
  ck_assert_int_eq(padded.ring_timeout_ms, 0);
  ck_assert_ptr_null(padded.combine.ir);
}
END_TEST

/* rj_treduce_sync: a NULL context is RJ_EINVAL; a context with nothing in flight (here: no call
 * ever ran, with or without a GPU) is RJ_OK with no message. */
START_TEST(sync_without_work) {
  ck_assert_int_eq(rj_treduce_sync(NULL), RJ_EINVAL);
  rj_ctx *c = rj_ctx_new();
  ck_assert_int_eq(rj_treduce_sync(c), RJ_OK);
  ck_assert_str_eq(rj_errmsg(c), "");
  rj_treduce_group g;
  group(&g);
  g.ranks = 0;
  ck_assert_int_eq(rj_treduce_run(c, &g, NULL, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_treduce_sync(c), RJ_OK); /* and clears the last call's message */
  ck_assert_str_eq(rj_errmsg(c), "");
  rj_ctx_free(c);
}
END_TEST

static void bad_json(const char *json, const char *field) {
  rj_request r;
  rj_status s = rj_request_parse(ctx, json, &r);
  ck_assert_msg(s == RJ_EINVAL, "expected RJ_EINVAL for %s, got %s", json, rj_status_name(s));
  ck_assert_msg(strstr(rj_errmsg(ctx), field), "message \"%s\" does not name %s (request %s)",
                rj_errmsg(ctx), field, json);
}

START_TEST(invalid_requests) {
  bad_json("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":0,\"shape\":[4]}",
           "ranks");
  bad_json(
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"root\":2,\"shape\":[4]}",
      "root");
  bad_json(
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4],\"tile\":[0,4]}",
      "tile[0]");
  bad_json(
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4,4],\"tile\":[4,0]}",
      "tile[1]");
  bad_json(
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[1,2,3,4,5,6]}",
      "shape");
  bad_json("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4,-1]}",
           "shape[1]");
  bad_json(
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4,4],\"strides\":[1]}",
      "strides");
  bad_json(
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4,4],\"dst_strides\":[1,1]}",
      "dst_strides");
  bad_json("{\"kind\":\"treduce\",\"op\":\"median\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4]}",
           "op");
  bad_json(
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4],\"nan\":\"x\"}",
      "nan");
  /* valid: empty rows, strides, accum, nan */
  rj_request r;
  rjt_parse(
      ctx,
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[1,1,1,0,256]}",
      &r);
  rjt_parse(ctx,
            "{\"kind\":\"treduce\",\"op\":\"max\",\"dtype\":\"f32\",\"ranks\":3,\"shape\":[4,5],"
            "\"strides\":[8,1],\"dst_strides\":[1,4],\"accum\":true,\"nan\":\"ignore\"}",
            &r);
  ck_assert_int_eq(r.u.treduce.has_strides, 1);
  ck_assert_int_eq(r.u.treduce.dst_strides[0], 1);
  ck_assert_int_eq(r.u.treduce.accum, 1);
}
END_TEST

/* The split path: a valid group value (the same request), and out-of-range paths refused by
 * rj_treduce_check / rj_treduce_bench before any device work. */
START_TEST(split_path_values) {
  rj_treduce_group g;
  group(&g);
  g.path = RJ_TREDUCE_SPLIT;
  rj_request r, r2;
  ck_assert_int_eq(rj_treduce_request(ctx, &g, &r), RJ_OK);
  g.path = RJ_TREDUCE_PEER;
  ck_assert_int_eq(rj_treduce_request(ctx, &g, &r2), RJ_OK);
  ck_assert_int_eq(memcmp(&r, &r2, sizeof r), 0);
  rjt_parse(
      ctx, "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4]}", &r);
  rj_check_result cr = {.struct_size = sizeof(rj_check_result)};
  rj_bench_result br = {.struct_size = sizeof(rj_bench_result)};
  rj_treduce_result tr = {.struct_size = sizeof(rj_treduce_result)};
  static const int bad[] = {RJ_TREDUCE_RING + 1, 99, -1};
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(rj_treduce_check(ctx, &r, NULL, (rj_treduce_path)bad[i], &cr, &tr), RJ_EINVAL);
    ck_assert_msg(strstr(rj_errmsg(ctx), "path"), "message: %s", rj_errmsg(ctx));
    ck_assert_int_eq(rj_treduce_bench(ctx, &r, NULL, (rj_treduce_path)bad[i], &br, &tr), RJ_EINVAL);
    ck_assert_msg(strstr(rj_errmsg(ctx), "path"), "message: %s", rj_errmsg(ctx));
  }
  /* a tile request is not a treduce request, whatever the path */
  rjt_parse(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\","
      "\"src\":{\"mem\":\"shared\",\"shape\":[32]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}}",
      &r);
  ck_assert_int_eq(rj_treduce_check(ctx, &r, NULL, RJ_TREDUCE_SPLIT, &cr, &tr), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "kind"), "message: %s", rj_errmsg(ctx));
}
END_TEST

/* --path: a bad value, a path for a kind without one, and for a command without one are status 2
 * (run / bench answer in JSON naming --path); split on a treduce request runs (0) or, with no GPU,
 * is status 3. */
START_TEST(cli_path) {
  const char *tr =
      "'{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4,33]}'";
  char out[1024];
  int rc = rjt_cli(rjt_fmt("run %s --path sideways", tr), out, sizeof out);
  ck_assert_msg(rc == 2 && strstr(out, "\"ok\": false") && strstr(out, "--path"), "%d: %s", rc,
                out);
  rc = rjt_cli(rjt_fmt("bench %s --path", tr), out, sizeof out);
  ck_assert_msg(rc == 2 && strstr(out, "--path"), "%d: %s", rc, out);
  rc = rjt_cli(
      "run '{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":"
      "\"shared\",\"shape\":[32]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}}' --path split",
      out, sizeof out);
  ck_assert_msg(rc == 2 && strstr(out, "--path") && strstr(out, "treduce"), "%d: %s", rc, out);
  rc = rjt_cli(rjt_fmt("ptx %s --path peer", tr), out, sizeof out);
  ck_assert_msg(rc == 2 && strstr(out, "--path"), "%d: %s", rc, out);
  rc = rjt_cli(rjt_fmt("run %s --path split", tr), out, sizeof out);
  ck_assert_msg((rc == 0 && strstr(out, "\"path\": \"split\"") && strstr(out, "\"slices\": ")) ||
                    (rc == 3 && strstr(out, "\"ok\": false")),
                "%d: %s", rc, out);
}
END_TEST

START_TEST(cli_status_2) {
  const char *cli = getenv("REDJIT_CLI") ? getenv("REDJIT_CLI") : REDJIT_CLI_BUILT;
  char cmd[1024];
  FILE *f = fopen("treduce_bad.json", "w");
  ck_assert_ptr_nonnull(f);
  fputs(
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"root\":5,\"shape\":[4]}",
      f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s run treduce_bad.json >/dev/null 2>&1", cli);
  int rc = system(cmd);
  ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 2, "exit %d", WEXITSTATUS(rc));
  remove("treduce_bad.json");
}
END_TEST

START_TEST(nccl_refusals) {
  rj_request r;
  rj_nccl_args a;
  rj_nccl_args_init(&a);
  a.comm = (void *)0x1;
  a.src = 0x1000;
  a.dst = 0x2000;
  rjt_parse(
      ctx,
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4,4],\"strides\":[8,1]}",
      &r);
  ck_assert_int_eq(rj_treduce_nccl(ctx, &r, &a), RJ_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "strides"));
  rjt_parse(
      ctx,
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4],\"accum\":true}",
      &r);
  ck_assert_int_eq(rj_treduce_nccl(ctx, &r, &a), RJ_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "accum"));
  rjt_parse(
      ctx,
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[4],\"nan\":\"ignore\"}",
      &r);
  ck_assert_int_eq(rj_treduce_nccl(ctx, &r, &a), RJ_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "nan"));
  rjt_parse(
      ctx, "{\"kind\":\"treduce\",\"op\":\"max\",\"dtype\":\"f16\",\"ranks\":2,\"shape\":[4]}", &r);
  ck_assert_int_eq(rj_treduce_nccl(ctx, &r, &a), RJ_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "nan"));
  /* row-major strides given explicitly are fine: the next refusal is about the comm / NCCL */
  rjt_parse(
      ctx,
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"i32\",\"ranks\":2,\"shape\":[4,4],\"strides\":[4,1]}",
      &r);
  a.comm = NULL;
  ck_assert_int_eq(rj_treduce_nccl(ctx, &r, &a), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "args.comm"));
  a.comm = (void *)0x1;
  a.src = 0;
  ck_assert_int_eq(rj_treduce_nccl(ctx, &r, &a), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "args.src"));
  ck_assert_int_eq(rj_treduce_nccl(ctx, &r, NULL), RJ_EINVAL);
  int v = 0;
  rj_status s = rj_nccl_version(ctx, &v);
  ck_assert_msg(s == RJ_OK || s == RJ_ENODEV, "rj_nccl_version: %s", rj_status_name(s));
  if (s)
    fprintf(stderr, "treduce: NCCL not found (%s)\n", rj_errmsg(ctx));
  else
    fprintf(stderr, "treduce: NCCL %d found\n", v);
}
END_TEST

/* PTX: one entry with ranks + 1 pointer params; N loads per slot; partial chunks computed at run
 * time (min); f16 accumulates in f32; ping-pong and not both compile; >128 ranks is declined. */
START_TEST(ptx_properties) {
  const char *base =
      "{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":%d,"
      "\"shape\":%s,\"tile\":%s,\"pingpong\":%s}";
  static const char *const tg[] = {"sm_80", "sm_90", "sm_90a", "sm_100a"};
  for (int i = 0; i < 4; i++) {
    const char *ptx =
        rjt_ptx(ctx, rjt_fmt(base, "sum", "f32", 4, 1, "[512,32]", "[64,32]", "true"), tg[i]);
    ck_assert_int_eq(rjt_count(ptx, ".entry redjit_treduce"), 1);
    ck_assert_int_eq(rjt_count(ptx, "redjit_treduce_param_"), 10); /* 5 declared, 5 loaded */
    ck_assert_int_eq(rjt_count(ptx, "ld.global.f32") + rjt_count(ptx, "ld.global.b32"),
                     16); /* 4 ranks x 4 slots */
    ck_assert_int_eq(rjt_count(ptx, "st.global.f32") + rjt_count(ptx, "st.global.b32"), 4);
  }
  const char *ptx =
      rjt_ptx(ctx, rjt_fmt(base, "max", "f16", 8, 3, "[3,100,37]", "[16,32]", "false"), "sm_90");
  ck_assert_msg(rjt_count(ptx, "min.u64") + rjt_count(ptx, "min.s64") >= 1,
                "no run-time chunk bound:\n%s", ptx);
  ck_assert_msg(rjt_count(ptx, "max.NaN.") >= 8, "no NaN-propagating max:\n%s", ptx);
  ptx = rjt_ptx(ctx, rjt_fmt(base, "sum", "f16", 8, 3, "[3,100,37]", "[16,32]", "true"), "sm_90");
  ck_assert_msg(rjt_count(ptx, "cvt.f32.f16") >= 8, "f16 sum not accumulated in f32");
  /* empty rows: a kernel with no memory access */
  ptx =
      rjt_ptx(ctx, rjt_fmt(base, "sum", "f32", 2, 0, "[1,1,1,0,256]", "[1,256]", "false"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "ld.global"), 0);
  /* 5-D, integers, root != 0 */
  rjt_ptx(ctx, rjt_fmt(base, "min", "i64", 3, 2, "[2,3,4,5,6]", "[4,4]", "true"), "sm_90");
  rjt_ptx(ctx, rjt_fmt(base, "sum", "bf16", 2, 1, "[7,9]", "[2,4]", "true"), "sm_80");
  /* more than 128 ranks: declined with the reason */
  rj_request r;
  rjt_parse(ctx, rjt_fmt(base, "sum", "f32", 200, 0, "[8]", "[1,8]", "false"), &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ENOVARIANT);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "128"));
}
END_TEST

/* ---- runtime-size kernels ("dynamic": true) */

#define DYN "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"dynamic\":true,"

/* n occurs in text outside the "// redjit:" header, as a whole number. */
static bool has_number(const char *text, long long n) {
  while (strncmp(text, "// redjit:", 10) == 0 && strchr(text, '\n'))
    text = strchr(text, '\n') + 1;
  char pat[32];
  int len = snprintf(pat, sizeof pat, "%lld", n);
  for (const char *p = text; (p = strstr(p, pat)); p++) {
    char b = p > text ? p[-1] : ' ', a = p[len];
    bool word = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
                b == '%' || b == '_' || b == '$' || b == '.';
    if (!word && !(a >= '0' && a <= '9')) return true;
  }
  return false;
}

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

static const char *explain(const char *json) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  const char *text = NULL;
  ck_assert_msg(rj_explain(ctx, &r, &o, &text) == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
  return text;
}

/* The field: default false and absent from the canonical text; true round-trips; a non-boolean
 * and a C value other than 0 / 1 are refused naming it; a group passes it on. */
START_TEST(dynamic_field) {
  rj_request r;
  const char *c = NULL;
  rjt_parse(
      ctx, "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[9]}", &r);
  ck_assert_int_eq(r.u.treduce.dynamic, 0);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
  ck_assert_msg(!strstr(c, "dynamic"), "%s", c);
  rjt_parse(ctx, DYN "\"ranks\":2,\"shape\":[9]}", &r);
  ck_assert_int_eq(r.u.treduce.dynamic, 1);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
  ck_assert_msg(strstr(c, "\"dynamic\":true"), "%s", c);
  rj_request again;
  rjt_parse(ctx, c, &again);
  ck_assert_int_eq(again.u.treduce.dynamic, 1);
  bad_json("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[9],"
           "\"dynamic\":1}",
           "dynamic");
  r.u.treduce.dynamic = 2;
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "dynamic"), "%s", rj_errmsg(ctx));
  rj_treduce_group g;
  group(&g);
  g.dynamic = 1;
  ck_assert_int_eq(rj_treduce_request(ctx, &g, &r), RJ_OK);
  ck_assert_int_eq(r.u.treduce.dynamic, 1);
  g.dynamic = 2;
  bad_group(&g, "dynamic");
  g.dynamic = -1;
  bad_group(&g, "dynamic");
}
END_TEST

/* Two element counts (and a 2-D dense shape) of one bucket are one compile (or disk-cache read:
 * rjt_made) and one kernel, whose
 * PTX takes n as its last parameter and holds none of the counts; constant requests compile per
 * count and take no n. */
START_TEST(dynamic_one_compile) {
  long long n0 = rjt_made(ctx);
  rj_kernel *a = compile_k(DYN "\"ranks\":3,\"root\":1,\"shape\":[1000003]}");
  ck_assert_int_eq(rjt_made(ctx), n0 + 1);
  rj_kernel *b = compile_k(DYN "\"ranks\":3,\"root\":1,\"shape\":[77777]}");
  rj_kernel *c = compile_k(DYN "\"ranks\":3,\"root\":1,\"shape\":[37,129]}");
  rj_kernel *d = compile_k(DYN "\"ranks\":3,\"root\":1,\"shape\":[2,0,5]}"); /* empty */
  ck_assert_ptr_eq(a, b);
  ck_assert_ptr_eq(a, c);
  ck_assert_ptr_eq(a, d);
  ck_assert_int_eq(rjt_made(ctx), n0 + 1);
  /* forced "treduce", explicit dense strides: the same kernel */
  rj_kernel *e = compile_k(DYN "\"ranks\":3,\"root\":1,\"shape\":[5,7],\"strides\":[7,1],"
                               "\"dst_strides\":[7,1],\"variant\":\"treduce\"}");
  ck_assert_ptr_eq(a, e);
  ck_assert_int_eq(rjt_made(ctx), n0 + 1);
  const char *ptx = rj_kernel_text(a, RJ_EMIT_PTX);
  ck_assert_msg(strstr(ptx, ".param .u64 redjit_treduce_param_4") &&
                    !strstr(ptx, "redjit_treduce_param_5"),
                "expected (dst, src x3, n):\n%s", ptx);
  ck_assert_msg(strstr(ptx, "// redjit: params dst src_0..src_2 i64=1000003"), "%s", ptx);
  static const long long nums[] = {1000003, 4000012, 77777, 311108, 129, 37};
  for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
    ck_assert_msg(!has_number(ptx, nums[i]), "%lld is baked into the PTX", nums[i]);
  /* another ranks, root, op, dtype, flag or tile bound is another kernel */
  compile_k(DYN "\"ranks\":4,\"root\":1,\"shape\":[1000003]}");
  compile_k(DYN "\"ranks\":3,\"root\":0,\"shape\":[1000003]}");
  compile_k(DYN "\"ranks\":3,\"root\":1,\"shape\":[1000003],\"accum\":true}");
  compile_k(DYN "\"ranks\":3,\"root\":1,\"shape\":[1000003],\"pingpong\":true}");
  compile_k(DYN "\"ranks\":3,\"root\":1,\"shape\":[1000003],\"tile\":[4,8]}");
  rj_kernel *t2 = compile_k(DYN "\"ranks\":3,\"root\":1,\"shape\":[99],\"tile\":[8,4]}");
  ck_assert_int_eq(rjt_made(ctx), n0 + 6);
  unsigned grid[3], block[3], shared = 0;
  rj_kernel_dims(t2, grid, block, &shared);
  ck_assert_uint_eq(block[0], 32); /* tile [8, 4]: 32 elements, T = 32 */
  /* constant: one compile per count, no n, and the count in the PTX */
  const char *cst = "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":3,"
                    "\"root\":1,\"shape\":[%lld]}";
  rj_kernel *k1 = compile_k(rjt_fmt(cst, 1000003LL));
  rj_kernel *k2 = compile_k(rjt_fmt(cst, 77777LL));
  ck_assert_ptr_ne(k1, k2);
  ck_assert_int_eq(rjt_made(ctx), n0 + 8);
  ptx = rj_kernel_text(k1, RJ_EMIT_PTX);
  ck_assert_msg(!strstr(ptx, "redjit_treduce_param_4"), "constant kernel with n:\n%s", ptx);
  ck_assert_msg(has_number(ptx, 1000003), "the constant kernel lacks its count (blind test)");
}
END_TEST

/* Many ranks (the shared-memory table), f16 accumulate and integer ops build as runtime-size
 * kernels on every target the constant kernel builds for. */
START_TEST(dynamic_ptx_variety) {
  static const char *const tg[] = {"sm_80", "sm_90", "sm_90a", "sm_100a"};
  for (int i = 0; i < 4; i++) {
    const char *ptx = rjt_ptx(ctx, DYN "\"ranks\":40,\"root\":7,\"shape\":[1001]}", tg[i]);
    ck_assert_msg(strstr(ptx, "redjit_treduce_param_41") && strstr(ptx, ".shared"), "%s", tg[i]);
  }
  const char *ptx = rjt_ptx(ctx,
                            "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f16\",\"ranks\":4,"
                            "\"shape\":[33],\"dynamic\":true,\"pingpong\":true}",
                            "sm_90");
  ck_assert_msg(rjt_count(ptx, "cvt.f32.f16") >= 4, "f16 sum not accumulated in f32");
  rjt_ptx(ctx,
          "{\"kind\":\"treduce\",\"op\":\"xor\",\"dtype\":\"u64\",\"ranks\":2,\"shape\":[3,4],"
          "\"dynamic\":true,\"accum\":true}",
          "sm_80");
}
END_TEST

/* explain names the bucket and the parameter; a strided view says it keeps a constant kernel; a
 * request that is not dynamic has no note. */
START_TEST(dynamic_explain) {
  const char *text = explain(DYN "\"ranks\":3,\"shape\":[1000003]}");
  ck_assert_msg(strstr(text, "treduce prio=10 chosen (dynamic: bucket \"flat T=256\" compiled in; "
                             "n (elements) is a kernel parameter; grid 977 x 256)"),
                "%s", text);
  text = explain(DYN "\"ranks\":3,\"shape\":[100],\"tile\":[2,8]}");
  ck_assert_msg(strstr(text, "bucket \"flat T=32\""), "%s", text);
  text = explain(DYN "\"ranks\":3,\"shape\":[4,5],\"strides\":[8,1],\"dst_strides\":[5,1]}");
  ck_assert_msg(strstr(text, "treduce prio=10 chosen (dynamic: constant kernel, sizes are JIT "
                             "constants: the sources are strided views"),
                "%s", text);
  text = explain(DYN "\"ranks\":3,\"shape\":[4,5],\"strides\":[5,1],\"dst_strides\":[1,4]}");
  ck_assert_msg(strstr(text, "the destination is a strided view"), "%s", text);
  text = explain("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":3,"
                 "\"shape\":[1000003]}");
  ck_assert_msg(strstr(text, "treduce prio=10 chosen\n"), "%s", text);
  /* the strided one keeps a constant kernel: one per shape */
  long long n0 = rjt_made(ctx);
  rj_kernel *a =
      compile_k(DYN "\"ranks\":2,\"shape\":[4,5],\"strides\":[8,1],\"dst_strides\":[5,1]}");
  rj_kernel *b =
      compile_k(DYN "\"ranks\":2,\"shape\":[3,5],\"strides\":[8,1],\"dst_strides\":[5,1]}");
  ck_assert_ptr_ne(a, b);
  ck_assert_int_eq(rjt_made(ctx), n0 + 2);
  ck_assert_msg(!strstr(rj_kernel_text(a, RJ_EMIT_PTX), "redjit_treduce_param_3"), "n param");
}
END_TEST

int main(void) {
  Suite *s = suite_create("treduce");
  TCase *tc = tcase_create("treduce");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, valid_group);
  tcase_add_test(tc, invalid_groups);
  tcase_add_test(tc, one_group_size);
  tcase_add_test(tc, sync_without_work);
  tcase_add_test(tc, invalid_requests);
  tcase_add_test(tc, cli_status_2);
  tcase_add_test(tc, split_path_values);
  tcase_add_test(tc, cli_path);
  tcase_add_test(tc, nccl_refusals);
  tcase_add_test(tc, ptx_properties);
  tcase_add_test(tc, dynamic_field);
  tcase_add_test(tc, dynamic_one_compile);
  tcase_add_test(tc, dynamic_ptx_variety);
  tcase_add_test(tc, dynamic_explain);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
