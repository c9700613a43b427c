/* Dispatch: priority order, explain lines, forced variants, and the error that lists every
 * variant's reason when none accepts. */
#include "redjit_treduce.h"
#include "rjtest.h"

#define SEED000                                                                                    \
  "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,"          \
  "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]},\"axes\":[-1]}"

static const char *explain(rj_ctx *ctx, const char *json, rj_status want) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  const char *text = NULL;
  rj_status s = rj_explain(ctx, &r, NULL, &text);
  ck_assert_msg(s == want, "explain: %s (%s)", rj_status_name(s), rj_errmsg(ctx));
  ck_assert_ptr_nonnull(text);
  return text;
}

START_TEST(order_and_lines) {
  rj_ctx *ctx = rj_ctx_new();
  int n = rj_variant_count(ctx);
  ck_assert_int_ge(n, 2);
  int last = 1 << 30;
  const char *prev = "";
  for (int i = 0; i < n; i++) {
    rj_variant_info v = {.struct_size = sizeof(rj_variant_info)};
    ck_assert_int_eq(rj_variant_get(ctx, i, &v), RJ_OK);
    ck_assert_int_le(v.priority, last);
    if (v.priority == last) ck_assert_int_lt(strcmp(prev, v.name), 0);
    last = v.priority;
    prev = v.name;
  }
  rj_variant_info v = {.struct_size = sizeof(rj_variant_info)};
  ck_assert_int_eq(rj_variant_get(ctx, n, &v), RJ_EINVAL);
  const char *text = explain(ctx, SEED000, RJ_OK);
  ck_assert_msg(strstr(text, "shared prio=10 chosen\n"), "%s", text);
  ck_assert_msg(strstr(text, "local prio=10 rejected: src and dst must both be local"), "%s", text);
  /* one line per variant */
  ck_assert_int_eq(rjt_count(text, "\n"), n);
  rj_ctx_free(ctx);
}
END_TEST

/* Result structs carry struct_size: one below the first version is refused (naming it), one
 * from a newer header gets its unknown tail zeroed, and nothing is written past it. */
START_TEST(result_struct_size) {
  rj_ctx *ctx = rj_ctx_new();
  rj_variant_info v;
  memset(&v, 0xAB, sizeof v);
  v.struct_size = 0;
  ck_assert_int_eq(rj_variant_get(ctx, 0, &v), RJ_EINVAL);
  ck_assert_int_eq(((unsigned char *)&v)[sizeof v - 1], 0xAB); /* untouched */
  struct {
    rj_variant_info info;
    unsigned char newer[16]; /* fields a newer header would add */
    unsigned char past[16];  /* beyond the caller's struct_size: never written */
  } big;
  memset(&big, 0xAB, sizeof big);
  big.info.struct_size = (uint32_t)offsetof(__typeof__(big), past);
  ck_assert_int_eq(rj_variant_get(ctx, 0, &big.info), RJ_OK);
  ck_assert_ptr_nonnull(big.info.name);
  for (size_t i = 0; i < sizeof big.newer; i++) {
    ck_assert_int_eq(big.newer[i], 0);
    ck_assert_int_eq(big.past[i], 0xAB);
  }
  /* the run / bench / treduce results: refused before anything runs (no GPU needed) */
  rj_request r;
  rjt_parse(ctx, SEED000, &r);
  rj_check_result cres = {.struct_size = 8};
  ck_assert_int_eq(rj_check(ctx, &r, NULL, &cres), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "res.struct_size: 8 is below"), "%s", rj_errmsg(ctx));
  rj_bench_result bres = {0};
  ck_assert_int_eq(rj_bench(ctx, &r, NULL, &bres), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "res.struct_size: 0 is below"), "%s", rj_errmsg(ctx));
  rj_treduce_group g;
  rj_treduce_group_init(&g);
  rj_treduce_result tres = {.struct_size = sizeof tres - 1};
  ck_assert_int_eq(rj_treduce_run(ctx, &g, NULL, &tres), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "res.struct_size"), "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(nothing_accepts) {
  rj_ctx *ctx = rj_ctx_new();
  const char *mixed =
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\","
      "\"src\":{\"mem\":\"shared\",\"shape\":[32]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}";
  const char *text = explain(ctx, mixed, RJ_ENOVARIANT);
  ck_assert_msg(strstr(text, "shared prio=10 rejected"), "%s", text);
  ck_assert_msg(strstr(text, "local prio=10 rejected"), "%s", text);
  rj_request r;
  rjt_parse(ctx, mixed, &r);
  rj_kernel *k;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), "shared: src and dst must both be shared"), "%s",
                rj_errmsg(ctx));
  ck_assert_msg(strstr(rj_errmsg(ctx), "local: src and dst must both be local"), "%s",
                rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(group_divisibility) {
  /* 48 threads, rows of 32: groups of 32 lanes would overlap (the reference's unguarded case) */
  rj_ctx *ctx = rj_ctx_new();
  const char *j =
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":48,"
      "\"src\":{\"mem\":\"shared\",\"shape\":[4,32]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}";
  const char *text = explain(ctx, j, RJ_ENOVARIANT);
  ck_assert_msg(strstr(text, "threads: 48 is not a multiple of the group size 32"), "%s", text);
  /* the two-level plan's warp partials count against the 48 KiB too */
  text = explain(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f64\",\"scope\":\"cta\",\"threads\":1024,"
      "\"src\":{\"mem\":\"shared\",\"shape\":[1,6142]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}}",
      RJ_ENOVARIANT);
  ck_assert_msg(strstr(text, "the 32 warps' partials take 49408 bytes"), "%s", text);
  /* rows of 16 fit 48 threads in 3 groups */
  explain(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":48,"
      "\"src\":{\"mem\":\"shared\",\"shape\":[4,16]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
      RJ_OK);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(forced_variant) {
  rj_ctx *ctx = rj_ctx_new();
  char j[1024];
  snprintf(j, sizeof j, "%.*s,\"variant\":\"local\"}", (int)strlen(SEED000) - 1, SEED000);
  const char *text = explain(ctx, j, RJ_ENOVARIANT);
  ck_assert_msg(strstr(text, "shared prio=10 rejected: not the forced variant \"local\""), "%s",
                text);
  snprintf(j, sizeof j, "%.*s,\"variant\":\"shared\"}", (int)strlen(SEED000) - 1, SEED000);
  text = explain(ctx, j, RJ_OK);
  ck_assert_msg(strstr(text, "shared prio=10 chosen"), "%s", text);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(layout_declines) {
  rj_ctx *ctx = rj_ctx_new();
  /* a warpgroup register reduction across warps needs shared memory: declined with the reason */
  const char *j =
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warpgroup\","
      "\"src\":{\"mem\":\"local\",\"shape\":[128],\"layout\":{\"shape\":[128],\"stride\":[\"1@thread\"]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[128,\"1@thread\"]]}}}";
  const char *text = explain(ctx, j, RJ_ENOVARIANT);
  ck_assert_msg(strstr(text, "crosses warps"), "%s", text);
  /* two elements in one register */
  j = "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\","
      "\"src\":{\"mem\":\"local\",\"shape\":[32,2],\"layout\":{\"shape\":[32,2],\"stride\":[\"1@lane\",0]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}}}";
  text = explain(ctx, j, RJ_ENOVARIANT);
  ck_assert_msg(strstr(text, "both land in thread"), "%s", text);
  /* a destination no thread holds */
  j = "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\","
      "\"src\":{\"mem\":\"local\",\"shape\":[32,2],\"layout\":{\"shape\":[32,2],\"stride\":[\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[2],\"layout\":{\"shape\":[2],\"stride\":[\"64@lane\"]}},\"axes\":[0]}";
  text = explain(ctx, j, RJ_ENOVARIANT);
  ck_assert_msg(strstr(text, "lands on lane 64"), "%s", text);
  /* a huge buffer is refused before anything is enumerated */
  j = "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\","
      "\"src\":{\"mem\":\"local\",\"shape\":[268435456],\"layout\":{\"shape\":[268435456],\"stride\":[\"1@thread\"]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[1]}}";
  text = explain(ctx, j, RJ_ENOVARIANT);
  ck_assert_msg(strstr(text, "268435456 elements do not fit in 32 threads x 4096 register slots"),
                "%s", text);
  rj_ctx_free(ctx);
}
END_TEST

/* The ring path's hop kernel: never chosen by dispatch (it is rj_treduce's, forced by name), its
 * predicates naming the cause; forced, its PTX polls with ld.acquire.sys, publishes with
 * fence.sc.sys + st.release.sys, bounds its waits by %globaltimer (and the call's status word),
 * and moves 16 bytes per access
 * when tile[1] asks (one element otherwise). */
START_TEST(ring_hop_variant) {
  rj_ctx *ctx = rj_ctx_new();
  const char *f = "{\"kind\":\"treduce\",%s\"op\":\"sum\",\"dtype\":\"%s\",\"ranks\":%d,"
                  "\"shape\":[1],\"tile\":[1,%d]}";
  const char *text = explain(ctx, rjt_fmt(f, "", "f32", 2, 1), RJ_OK);
  ck_assert_msg(strstr(text, "treduce prio=10 chosen\n") &&
                    strstr(text, "treduce_ring prio=5 not tried"),
                "%s", text);
  const char *forced = "\"variant\":\"treduce_ring\",";
  text = explain(ctx, rjt_fmt(f, forced, "f32", 2, 1), RJ_OK);
  ck_assert_msg(strstr(text, "treduce_ring prio=5 chosen\n"), "%s", text);
  text = explain(ctx, rjt_fmt(f, forced, "f32", 2, 3), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), "tile[1]: 3; the hop kernel takes it as elements per "
                                       "access: 1, or 4"),
                "%s", rj_errmsg(ctx));
  text = explain(ctx, rjt_fmt(f, forced, "f64", 129, 1), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), "ranks: 129; a hop kernel reads at most 128"), "%s",
                rj_errmsg(ctx));
  for (int v = 0; v < 2; v++) {
    rj_request r;
    rjt_parse(ctx, rjt_fmt(f, forced, v ? "f16" : "f32", 3, v ? 8 : 1), &r);
    rj_kernel *k = NULL;
    ck_assert_msg(rj_compile(ctx, &r, NULL, &k) == RJ_OK, "%s", rj_errmsg(ctx));
    const char *ptx = rj_kernel_text(k, RJ_EMIT_PTX);
    ck_assert_str_eq(rj_kernel_entry(k), "redjit_treduce_ring");
    /* two waits (LLVM may peel a poll's first round: at least two loads), each also reading
     * the status word once it has lasted 1 ms; a block that gives up exchanges it and (the
     * call's first) counts the call with release */
    ck_assert_msg(rjt_count(ptx, "ld.acquire.sys.global.u64") >= 2 &&
                      rjt_count(ptx, "ld.relaxed.sys.global.u64") >= 2 &&
                      rjt_count(ptx, "atom.sys.global.exch.b64") == 1 &&
                      rjt_count(ptx, "red.release.sys.global.add.u64") == 1 &&
                      rjt_count(ptx, "st.release.sys.global.u64") == 2 &&
                      strstr(ptx, "fence.sc.sys") && strstr(ptx, "%globaltimer"),
                  "%s", ptx);
    /* 16-byte accesses when asked (f16: 8 per access), else none */
    ck_assert_msg(v ? strstr(ptx, ".v4.b32") != NULL : strstr(ptx, ".v4.") == NULL, "%s", ptx);
    unsigned block[3];
    rj_kernel_dims(k, NULL, block, NULL);
    ck_assert_int_eq(block[0], 512);
  }
  ck_assert_str_eq(rj_status_name(RJ_ETIMEOUT), "RJ_ETIMEOUT");
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(targets) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rjt_parse(ctx, SEED000, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_99";
  rj_kernel *k;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ETARGET);
  ck_assert_msg(strstr(rj_errmsg(ctx), "target: unknown target \"sm_99\""), "%s", rj_errmsg(ctx));
  o.target = "sm_90";
  o.ptx_version = 77;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ETARGET);
  ck_assert_msg(strstr(rj_errmsg(ctx), "PTX 7.7 does not support target sm_90"), "%s",
                rj_errmsg(ctx));
  o.ptx_version = 79;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ETARGET);
  o.ptx_version = 88;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_OK);
  ck_assert_ptr_nonnull(strstr(rj_kernel_text(k, RJ_EMIT_PTX), ".version 8.8"));
  /* the cache hands back the same kernel for the same request and target */
  rj_kernel *k2;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k2), RJ_OK);
  ck_assert_ptr_eq(k, k2);
  o.ptx_version = 0;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k2), RJ_OK);
  ck_assert_ptr_ne(k, k2);
  ck_assert_ptr_nonnull(strstr(rj_kernel_text(k2, RJ_EMIT_PTX), ".version 7.8"));
  char buf[16];
  o.target = NULL; /* auto: without a GPU it is sm_90 */
  ck_assert_int_eq(rj_target_resolve(ctx, &o, buf, sizeof buf), RJ_OK);
  ck_assert_int_eq(strncmp(buf, "sm_", 3), 0);
  rj_ctx_free(ctx);
}
END_TEST

/* The plan owns the launch geometry: each kind's plan sets it (tile: one CTA of its threads;
 * subgroup: its blocks and threads; treduce: its split, one warp when there is nothing to do),
 * rj_kernel_dims reads it, and the PTX header's launch line says the same.  grid 0: any (a
 * tensor plan's grid follows the device's SM count). */
START_TEST(plans_own_geometry) {
  static const struct {
    const char *json;
    unsigned grid, block;
  } cases[] = {
      {SEED000, 1, 32},
      {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":256,"
       "\"src\":{\"mem\":\"shared\",\"shape\":[2,4096]},\"dst\":{\"mem\":\"shared\",\"shape\":[2]}}",
       1, 256},
      {"{\"kind\":\"subgroup\",\"primitive\":\"reduce_all_add\",\"dtype\":\"i64\",\"log2_size\":5,"
       "\"threads\":64,\"blocks\":2}",
       2, 64},
      {"{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":1,"
       "\"shape\":[512,32],\"tile\":[64,32],\"pingpong\":true}",
       16, 256},
      {"{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"root\":0,"
       "\"shape\":[0,32]}",
       1, 32},
      {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[64,4096],\"axes\":[1]}", 0,
       0},
  };
  rj_ctx *ctx = rj_ctx_new();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rj_request r;
    rjt_parse(ctx, cases[i].json, &r);
    rj_kernel *k = NULL;
    ck_assert_msg(rj_compile(ctx, &r, NULL, &k) == RJ_OK, "%s", rj_errmsg(ctx));
    unsigned g[3], b[3], sh = 99, hg[3], hb[3], hsh;
    rj_kernel_dims(k, g, b, &sh);
    const char *line = strstr(rj_kernel_text(k, RJ_EMIT_PTX), "// redjit: launch grid ");
    ck_assert_ptr_nonnull(line);
    ck_assert_int_eq(sscanf(line, "// redjit: launch grid %u %u %u, block %u %u %u, shared %u",
                            &hg[0], &hg[1], &hg[2], &hb[0], &hb[1], &hb[2], &hsh),
                     7);
    ck_assert_msg(!memcmp(g, hg, sizeof g) && !memcmp(b, hb, sizeof b) && sh == hsh,
                  "case %zu: rj_kernel_dims differs from the PTX header", i);
    ck_assert_msg(b[0] > 0 && g[0] > 0 && sh == 0, "case %zu: no geometry", i);
    if (cases[i].grid)
      ck_assert_msg(g[0] == cases[i].grid && b[0] == cases[i].block && g[1] == 1 && b[1] == 1,
                    "case %zu: grid %u block %u", i, g[0], b[0]);
    ck_assert_int_eq(rj_kernel_release(ctx, k), RJ_OK);
  }
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("dispatch");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, order_and_lines);
  tcase_add_test(tc, nothing_accepts);
  tcase_add_test(tc, result_struct_size);
  tcase_add_test(tc, group_divisibility);
  tcase_add_test(tc, forced_variant);
  tcase_add_test(tc, layout_declines);
  tcase_add_test(tc, targets);
  tcase_add_test(tc, ring_hop_variant);
  tcase_add_test(tc, plans_own_geometry);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
