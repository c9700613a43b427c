/* The target model (docs/TARGETS.md): every target x PTX version x variant either compiles or is
 * refused with RJ_ETARGET / RJ_ENOVARIANT and a message -- never an exit (Check runs each test in a
 * forked child, so an LLVM exit() shows as a failure here, not a crash of the runner); unknown
 * targets; the sm100_packed dispatch and its PTX; redux.sync dispatch; ptxas on sm_100a. */
#include "rjtest.h"

#include <stddef.h>
#include <unistd.h>

#define PACKED                                                                                           \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"f32\",\"scope\":\"thread\",\"accum\":%s,\"nan\":\"%s\"," \
  "\"src\":{\"mem\":\"local\",\"shape\":[%d]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}"
#define SEED002                                                                                    \
  "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"thread\","                      \
  "\"src\":{\"mem\":\"local\",\"shape\":[32]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}"
#define WARP_ALL                                                                                      \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\",\"nan\":\"%s\",\"accum\":%s," \
  "\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},"   \
  "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}}"
#define MMA                                                                                                                            \
  "{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"i32\",\"scope\":\"warp\","                                                            \
  "\"src\":{\"mem\":\"local\",\"shape\":[16,16],\"layout\":{\"shape\":[[2,8],[2,4,2]],\"stride\":[[2,\"4@lane\"],[4,\"1@lane\",1]]}}," \
  "\"dst\":{\"mem\":\"local\",\"shape\":[16],\"layout\":{\"shape\":[[2,8]],\"stride\":[[1,\"4@lane\"]],\"replicate\":[[4,\"1@lane\"]]}}}"

/* ------------------------------------------------------------ helpers */

static rj_status compile(rj_ctx *ctx, const char *json, const char *target, int ptx, int emulate,
                         rj_kernel **k) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = target;
  o.ptx_version = ptx;
  o.emulate_packed = emulate;
  return rj_compile(ctx, &r, &o, k);
}

static const char *ptx_of(rj_ctx *ctx, const char *json, const char *target, int emulate) {
  rj_kernel *k = NULL;
  rj_status s = compile(ctx, json, target, 0, emulate, &k);
  ck_assert_msg(s == RJ_OK, "compile for %s failed (%s): %s\n  %s", target, rj_status_name(s),
                rj_errmsg(ctx), json);
  return rj_kernel_text(k, RJ_EMIT_PTX);
}

static const char *explain(rj_ctx *ctx, const char *json, const char *target, int emulate) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = target;
  o.emulate_packed = emulate;
  const char *text = NULL;
  rj_status s = rj_explain(ctx, &r, &o, &text);
  ck_assert_msg(s == RJ_OK, "explain: %s (%s)", rj_status_name(s), rj_errmsg(ctx));
  return text;
}

/* The table's targets, read off the message for an unknown target ("... (known: sm_80 ...)"),
 * so that the test enumerates exactly what the library knows. */
static int known_targets(rj_ctx *ctx, char names[][16], int max) {
  rj_request r;
  rjt_parse(ctx, SEED002, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_nope";
  rj_kernel *k;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ETARGET);
  const char *p = strstr(rj_errmsg(ctx), "(known:");
  ck_assert_ptr_nonnull(p);
  int n = 0;
  for (p += 7; *p && *p != ')' && n < max;) {
    while (*p == ' ')
      p++;
    int len = 0;
    while (p[len] && p[len] != ' ' && p[len] != ')')
      len++;
    if (len > 0 && len < 16) {
      memcpy(names[n], p, (size_t)len);
      names[n++][len] = 0;
    }
    p += len;
  }
  return n;
}

/* Every PTX ISA version LLVM 22 knows (jit/compile.c pick_ptx), 0 (auto), and some it does not. */
static const int ptx_versions[] = {0,  32, 40, 41, 42, 43, 50, 60, 61, 62, 63, 64,  65,
                                   70, 71, 72, 73, 74, 75, 76, 77, 78, 80, 81, 82,  83,
                                   84, 85, 86, 87, 88, 90, 1,  69, 89, 91, 92, 100, -3};

/* Requests touching every variant and every versioned instruction; emulate: also with
 * rj_options.emulate_packed. */
static const struct {
  const char *json;
  int emulate;
} corpus[] = {
    {SEED002, 1},
    {"{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"f32\",\"scope\":\"thread\",\"accum\":true,"
     "\"src\":{\"mem\":\"local\",\"shape\":[17]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
     1},
    {"{\"kind\":\"tile\",\"op\":\"min\",\"dtype\":\"f32\",\"scope\":\"thread\",\"nan\":\"ignore\","
     "\"src\":{\"mem\":\"local\",\"shape\":[9]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
     1},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"i32\",\"scope\":\"warp\","
     "\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},"
     "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}}",
     0},
    {"{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"f32\",\"scope\":\"warp\","
     "\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},"
     "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}}",
     0},
    {"{\"kind\":\"tile\",\"op\":\"min\",\"dtype\":\"f32\",\"scope\":\"warp\",\"nan\":\"ignore\","
     "\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}},"
     "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}}",
     0},
    {"{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"bf16\",\"scope\":\"cta\",\"threads\":64,"
     "\"src\":{\"mem\":\"shared\",\"shape\":[4,40]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
     0},
    {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f64\",\"scope\":\"thread\","
     "\"src\":{\"mem\":\"local\",\"shape\":[5]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
     0},
};
#define NCORPUS ((int)(sizeof corpus / sizeof corpus[0]))

/* ------------------------------------------------------------ tests */

/* Target _i of the table x every PTX version x the corpus (x emulation): compiles, or
 * RJ_ETARGET / RJ_ENOVARIANT with a message.  An LLVM exit() would kill this forked child. */
START_TEST(no_combination_exits) {
  rj_ctx *ctx = rj_ctx_new();
  char names[64][16];
  int n = known_targets(ctx, names, 64);
  ck_assert_int_ge(n, 20);
  if (_i >= n) {
    rj_ctx_free(ctx);
    return;
  }
  const char *tg = names[_i];
  int ok = 0, refused = 0;
  for (size_t p = 0; p < sizeof ptx_versions / sizeof ptx_versions[0]; p++)
    for (int c = 0; c < NCORPUS; c++)
      for (int emu = 0; emu <= corpus[c].emulate; emu++) {
        rj_kernel *k = NULL;
        rj_status s = compile(ctx, corpus[c].json, tg, ptx_versions[p], emu, &k);
        if (s == RJ_OK) {
          ck_assert_ptr_nonnull(k);
          ck_assert_ptr_nonnull(strstr(rj_kernel_text(k, RJ_EMIT_PTX), tg));
          ok++;
          continue;
        }
        ck_assert_msg(s == RJ_ETARGET || s == RJ_ENOVARIANT, "%s ptx %d case %d emu %d: %s: %s", tg,
                      ptx_versions[p], c, emu, rj_status_name(s), rj_errmsg(ctx));
        ck_assert_msg(strlen(rj_errmsg(ctx)) > 10, "%s ptx %d case %d: empty message", tg,
                      ptx_versions[p], c);
        refused++;
      }
  ck_assert_int_gt(ok, 0);
  ck_assert_int_gt(refused, 0);
  rj_ctx_free(ctx);
}
END_TEST

/* The specific combinations LLVM 22 exits on (docs/TARGETS.md), each refused with a message. */
START_TEST(llvm_exit_combos_refused) {
  rj_ctx *ctx = rj_ctx_new();
  rj_kernel *k;
  /* "PTX version 8.5 does not support target 'sm_100a'" */
  ck_assert_int_eq(compile(ctx, SEED002, "sm_100a", 85, 0, &k), RJ_ETARGET);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "does not support target sm_100a"));
  ck_assert_int_eq(compile(ctx, SEED002, "sm_90a", 78, 0, &k), RJ_ETARGET);
  ck_assert_int_eq(compile(ctx, SEED002, "sm_120", 86, 0, &k), RJ_ETARGET);
  ck_assert_int_eq(compile(ctx, SEED002, "sm_110", 88, 0, &k), RJ_ETARGET);
  ck_assert_int_eq(compile(ctx, SEED002, "sm_88", 88, 0, &k), RJ_ETARGET);
  /* versions LLVM has no feature for */
  ck_assert_int_eq(compile(ctx, SEED002, "sm_90", 89, 0, &k), RJ_ETARGET);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "ptx_version"));
  /* 3-input max needs PTX 8.8 (ptxas), f32x2 8.6 */
  const char *mx = rjt_fmt(PACKED, "max", "false", "propagate", 16);
  char max16[1024];
  snprintf(max16, sizeof max16, "%s", mx);
  ck_assert_int_eq(compile(ctx, max16, "sm_100a", 86, 0, &k), RJ_ETARGET);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "too old for the instructions"));
  ck_assert_int_eq(compile(ctx, max16, "sm_100a", 87, 0, &k), RJ_ETARGET);
  ck_assert_int_eq(compile(ctx, max16, "sm_100a", 88, 0, &k), RJ_OK);
  ck_assert_int_eq(compile(ctx, SEED002, "sm_100a", 86, 0, &k), RJ_OK);
  /* "Cannot select: intrinsic %llvm.nvvm.redux.sync.fmax" on sm_90, sm_100, sm_103, sm_110a,
   * sm_120a: redux declines there (local runs), and forcing it is refused */
  static const char *const no_rf32[] = {"sm_80",   "sm_90",   "sm_90a",  "sm_100", "sm_103",
                                        "sm_110a", "sm_110f", "sm_120a", "sm_121f"};
  char fmax[1024];
  snprintf(fmax, sizeof fmax, "%s", rjt_fmt(WARP_ALL, "max", "f32", "propagate", "false"));
  for (size_t i = 0; i < sizeof no_rf32 / sizeof no_rf32[0]; i++) {
    const char *text = explain(ctx, fmax, no_rf32[i], 0);
    ck_assert_msg(strstr(text, "redux prio=15 rejected: target") &&
                      strstr(text, "lacks redux.sync.f32"),
                  "%s: %s", no_rf32[i], text);
    ck_assert_msg(strstr(text, "local prio=10 chosen"), "%s", text);
    const char *ptx = ptx_of(ctx, fmax, no_rf32[i], 0);
    ck_assert_ptr_null(strstr(ptx, "redux"));
    char forced[1100];
    snprintf(forced, sizeof forced, "{\"variant\":\"redux\",%s", fmax + 1);
    ck_assert_int_eq(compile(ctx, forced, no_rf32[i], 0, 0, &k), RJ_ENOVARIANT);
    ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "lacks redux.sync.f32"));
  }
  static const char *const rf32[] = {"sm_100a", "sm_100f", "sm_103a", "sm_103f"};
  for (size_t i = 0; i < sizeof rf32 / sizeof rf32[0]; i++) {
    const char *ptx = ptx_of(ctx, fmax, rf32[i], 0);
    ck_assert_msg(strstr(ptx, "redux.sync.max.NaN.f32"), "%s", rf32[i]);
  }
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(unknown_targets) {
  rj_ctx *ctx = rj_ctx_new();
  static const char *const bad[] = {
      "sm_75",
      "sm_101",
      "sm_9",
      "",
      "SM_90",
      "sm_90b",
      "sm_100x",
      "compute_90",
      "sm_",
      "gfx90a",
      "sm_90aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    rj_kernel *k;
    ck_assert_int_eq(compile(ctx, SEED002, bad[i], 0, 0, &k), RJ_ETARGET);
    ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "target: unknown target"));
    rj_request r;
    rjt_parse(ctx, SEED002, &r);
    rj_options o;
    rj_options_init(&o);
    o.target = bad[i];
    const char *text;
    ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_ETARGET);
  }
  /* auto: the device, else sm_90 */
  rj_options o;
  rj_options_init(&o);
  char buf[16];
  ck_assert_int_eq(rj_target_resolve(ctx, &o, buf, sizeof buf), RJ_OK);
  int n = 0;
  if (rj_device_count(ctx, &n) != RJ_OK || n == 0) ck_assert_str_eq(buf, "sm_90");
  rj_ctx_free(ctx);
}
END_TEST

/* Seed 002: chosen for sm_100a, declined with the reason for sm_90, chosen there when emulated. */
START_TEST(explain_seed002) {
  rj_ctx *ctx = rj_ctx_new();
  const char *text = explain(ctx, SEED002, "sm_100a", 0);
  ck_assert_msg(strstr(text, "sm100_packed prio=20 chosen\n"), "%s", text);
  ck_assert_msg(strstr(text, "local prio=10 not tried"), "%s", text);
  text = explain(ctx, SEED002, "sm_90", 0);
  ck_assert_msg(strstr(text, "sm100_packed prio=20 rejected: target sm_90 lacks add.f32x2"), "%s",
                text);
  ck_assert_msg(strstr(text, "local prio=10 chosen"), "%s", text);
  text = explain(ctx, SEED002, "sm_90", 1);
  ck_assert_msg(strstr(text, "sm100_packed prio=20 chosen"), "%s", text);
  /* max on sm_90: the 3-input instruction is the missing one */
  text = explain(ctx, rjt_fmt(PACKED, "max", "false", "propagate", 32), "sm_90", 0);
  ck_assert_msg(strstr(text, "lacks 3-input max/min.f32"), "%s", text);
  /* each seed predicate declines with its reason */
  static const struct {
    const char *json, *why;
  } no[] = {
      {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[7]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
       "src length is 7"},
      {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f16\",\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[32]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
       "dtype is f16"},
      {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[4,8]},\"dst\":{\"mem\":\"local\",\"shape\":[4]}}",
       "dst length is 4"},
      {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"thread\",\"axes\":[0,1],\"src\":{\"mem\":\"local\",\"shape\":[4,8]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}",
       "src region is 2-D"},
      {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,\"src\":{\"mem\":\"shared\",\"shape\":[32]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}}",
       "scope is cta"},
      {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"thread\",\"threads\":4,\"active\":{\"thread\":1},\"src\":{\"mem\":\"shared\",\"shape\":[32]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}}",
       "must both be local"},
  };
  for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
    text = explain(ctx, no[i].json, "sm_100a", 0);
    ck_assert_msg(strstr(text, "sm100_packed prio=20 rejected: ") && strstr(text, no[i].why),
                  "want \"%s\":\n%s", no[i].why, text);
  }
  /* a caller compiled before emulate_packed existed: the field is not read */
  rj_request r;
  rjt_parse(ctx, SEED002, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  o.emulate_packed = 1;
  o.struct_size = (uint32_t)offsetof(rj_options, emulate_packed);
  ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_OK);
  ck_assert_msg(strstr(text, "local prio=10 chosen"), "%s", text);
  rj_ctx_free(ctx);
}
END_TEST

/* The seed's 32-element sum: (32/8 - 1) * 4 + 3 = 15 packed adds, one scalar add (the final
 * one), nothing else; and the counts the algorithm implies for other lengths and ops. */
START_TEST(packed_instruction_counts) {
  rj_ctx *ctx = rj_ctx_new();
  const char *ptx = ptx_of(ctx, SEED002, "sm_100a", 0);
  ck_assert_int_eq(rjt_count(ptx, "add.rn.ftz.f32x2"), 15);
  ck_assert_int_eq(rjt_count(ptx, "add.rn.f32"), 1);
  ck_assert_int_eq(rjt_count(ptx, "add.f32"), 0);
  ck_assert_int_eq(rjt_count(ptx, "add.rn.ftz.f32 "), 0);
  ck_assert_ptr_nonnull(strstr(ptx, ".version 8.6"));
  static const int lens[] = {8, 9, 10, 15, 16, 17, 63, 64, 65, 100, 128, 256};
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
    for (int acc = 0; acc < 2; acc++) {
      int L = lens[i], nfull = L / 8, rem = L % 8;
      char json[1024];
      snprintf(json, sizeof json, "%s",
               rjt_fmt(PACKED, "sum", acc ? "true" : "false", "propagate", L));
      ptx = ptx_of(ctx, json, "sm_100a", 0);
      ck_assert_int_eq(rjt_count(ptx, "add.rn.ftz.f32x2"), 4 * (nfull - 1) + 3);
      ck_assert_int_eq(rjt_count(ptx, "add.rn.f32"), rem + acc + 1);
      /* emulated on sm_90: two add.rn.ftz.f32 per packed add, the same scalar adds */
      ptx = ptx_of(ctx, json, "sm_90", 1);
      ck_assert_int_eq(rjt_count(ptx, "f32x2"), 0);
      ck_assert_int_eq(rjt_count(ptx, "add.rn.ftz.f32 "), 2 * (4 * (nfull - 1) + 3));
      ck_assert_int_eq(rjt_count(ptx, "add.rn.f32"), rem + acc + 1);
      for (int o = 0; o < 2; o++)
        for (int nan = 0; nan < 2; nan++) {
          const char *op = o ? "min" : "max";
          snprintf(json, sizeof json, "%s",
                   rjt_fmt(PACKED, op, acc ? "true" : "false", nan ? "ignore" : "propagate", L));
          ptx = ptx_of(ctx, json, "sm_100a", 0);
          ck_assert_ptr_nonnull(strstr(ptx, ".version 8.8"));
          char three[32];
          snprintf(three, sizeof three, "%s%s.f32 ", op, nan ? "" : ".NaN");
          /* 3-input: (nfull - 1) * 4 chunk folds + the final one + accum */
          int n3 = 4 * (nfull - 1) + 1 + acc, n2 = 4 - acc + rem + 1;
          int got3 = 0, got2 = 0;
          for (const char *p = ptx; (p = strstr(p, three)); p += strlen(three)) {
            const char *end = strchr(p, ';');
            int commas = 0;
            for (const char *q = p; q < end; q++)
              commas += *q == ',';
            if (commas == 3) got3++;
            if (commas == 2) got2++;
          }
          ck_assert_msg(got3 == n3 && got2 == n2,
                        "%s L=%d acc=%d: %d 3-input (want %d), %d 2-input (want %d)", op, L, acc,
                        got3, n3, got2, n2);
          ptx = ptx_of(ctx, json, "sm_90", 1);
          ck_assert_int_eq(rjt_count(ptx, three), 2 * n3 + n2);
        }
    }
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(redux_dispatch) {
  rj_ctx *ctx = rj_ctx_new();
  static const char *const dts[] = {"i32", "u32"};
  static const char *const ops[] = {"sum", "max", "min"};
  for (int d = 0; d < 2; d++)
    for (int o = 0; o < 3; o++) {
      char json[1024];
      snprintf(json, sizeof json, "%s", rjt_fmt(WARP_ALL, ops[o], dts[d], "propagate", "true"));
      const char *text = explain(ctx, json, "sm_80", 0);
      ck_assert_msg(strstr(text, "redux prio=15 chosen"), "%s", text);
      const char *ptx = ptx_of(ctx, json, "sm_90", 0);
      ck_assert_int_eq(rjt_count(ptx, "redux.sync."), 1);
      ck_assert_int_eq(rjt_count(ptx, "shfl"), 0);
    }
  /* f32 sum and 64-bit: no redux form */
  const char *text =
      explain(ctx, rjt_fmt(WARP_ALL, "sum", "f32", "propagate", "false"), "sm_100a", 0);
  ck_assert_msg(strstr(text, "redux prio=15 rejected: f32 sum"), "%s", text);
  text = explain(ctx, rjt_fmt(WARP_ALL, "max", "i64", "propagate", "false"), "sm_100a", 0);
  ck_assert_msg(strstr(text, "redux prio=15 rejected: i64 max"), "%s", text);
  /* f32 max / min: the .NaN form for propagate, the plain one for ignore */
  ck_assert_ptr_nonnull(
      strstr(ptx_of(ctx, rjt_fmt(WARP_ALL, "min", "f32", "propagate", "false"), "sm_100a", 0),
             "redux.sync.min.NaN.f32"));
  const char *ptx = ptx_of(ctx, rjt_fmt(WARP_ALL, "max", "f32", "ignore", "false"), "sm_100a", 0);
  ck_assert_ptr_nonnull(strstr(ptx, "redux.sync.max.f32"));
  ck_assert_ptr_null(strstr(ptx, "NaN"));
  /* a reduction over lane bits 1 and 2 only (mma rows): the shuffle tree */
  text = explain(ctx, MMA, "sm_90", 0);
  ck_assert_msg(strstr(text, "redux prio=15 rejected: the reduction spans lane bits {1,2}"), "%s",
                text);
  ck_assert_msg(strstr(text, "local prio=10 chosen"), "%s", text);
  /* thread scope */
  text = explain(ctx, SEED002, "sm_90", 0);
  ck_assert_msg(strstr(text, "redux prio=15 rejected: scope is thread"), "%s", text);
  rj_ctx_free(ctx);
}
END_TEST

/* ptxas assembles every packed and redux kernel for sm_100a (and the emulated forms for sm_90). */
static const char *find_ptxas(void) {
  static const char *const where[] = {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"};
  for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
    if (access(where[i], X_OK) == 0) return where[i];
  return NULL;
}

static void assemble(const char *ptxas, const char *ptx, const char *arch, const char *what) {
  char path[] = "/tmp/rjtgtXXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, ptx, strlen(ptx)), (ssize_t)strlen(ptx));
  close(fd);
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s -arch=%s %s -o /dev/null 2>&1", ptxas, arch, path);
  int rc = system(cmd);
  unlink(path);
  ck_assert_msg(rc == 0, "ptxas -arch=%s rejected %s", arch, what);
}

START_TEST(ptxas_packed_and_redux) {
  const char *ptxas = find_ptxas();
  if (!ptxas) {
    fprintf(stderr, "SKIP: ptxas not found: packed / redux PTX not assembled\n");
    return;
  }
  rj_ctx *ctx = rj_ctx_new();
  static const char *const ops[] = {"sum", "max", "min"};
  static const int lens[] = {8, 9, 17, 64, 100};
  for (int o = 0; o < 3; o++)
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
      for (int acc = 0; acc < 2; acc++)
        for (int nan = 0; nan < 2; nan++) {
          char json[1024];
          snprintf(json, sizeof json, "%s",
                   rjt_fmt(PACKED, ops[o], acc ? "true" : "false", nan ? "ignore" : "propagate",
                           lens[l]));
          assemble(ptxas, ptx_of(ctx, json, "sm_100a", 0), "sm_100a", json);
          if (l == 0 && nan == 0) {
            assemble(ptxas, ptx_of(ctx, json, "sm_100", 0), "sm_100", json);
            assemble(ptxas, ptx_of(ctx, json, "sm_120", 0), "sm_120", json);
            assemble(ptxas, ptx_of(ctx, json, "sm_90", 1), "sm_90", json);
            assemble(ptxas, ptx_of(ctx, json, "sm_80", 1), "sm_80", json);
          }
        }
  static const char *const dts[] = {"i32", "u32", "f32"};
  static const char *const archs[] = {"sm_100a", "sm_100f", "sm_103a", "sm_80", "sm_90"};
  for (int d = 0; d < 3; d++)
    for (int o = 0; o < 3; o++)
      for (int nan = 0; nan < 2; nan++)
        for (size_t a = 0; a < sizeof archs / sizeof archs[0]; a++) {
          char json[1024];
          snprintf(json, sizeof json, "%s",
                   rjt_fmt(WARP_ALL, ops[o], dts[d], nan ? "ignore" : "propagate", "true"));
          const char *ptx = ptx_of(ctx, json, archs[a], 0);
          assemble(ptxas, ptx, archs[a], json);
        }
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("targets");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, no_combination_exits, 0, 32); /* >= the table's size; extra ones return */
  tcase_add_test(tc, llvm_exit_combos_refused);
  tcase_add_test(tc, unknown_targets);
  tcase_add_test(tc, explain_seed002);
  tcase_add_test(tc, packed_instruction_counts);
  tcase_add_test(tc, redux_dispatch);
  tcase_add_test(tc, ptxas_packed_and_redux);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
