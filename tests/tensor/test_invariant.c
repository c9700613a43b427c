/* "invariant": true with no GPU (docs/INVARIANCE.md): validation and the canonical text, dispatch
 * (only variants whose tree depends on the reduced length alone), explain's invariance line, the
 * SM-count knob (rj_options.sm_count, $REDJIT_SM_COUNT) changing the plans of other requests but
 * not of invariant ones, and the same floating-point operations on sm_80, sm_90a and sm_100a:
 * the optimised LLVM IR's FP instructions in the same order, and the PTX's FP instructions with
 * their rounding and ftz modifiers the same multiset, with no ftz and no approximation. */
#include "rjtest.h"

#include <stdbool.h>

#define TREQ "{\"kind\":\"tensor\","

static const char *req(const char *op, const char *dt, const char *shape, const char *axes,
                       bool inv) {
  static char buf[512];
  snprintf(buf, sizeof buf, TREQ "\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":%s,\"axes\":%s%s}", op,
           dt, shape, axes, inv ? ",\"invariant\":true" : "");
  return buf;
}

static const char *explain(rj_ctx *ctx, const char *json, const rj_options *o) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  const char *text = NULL;
  rj_status s = rj_explain(ctx, &r, o, &text);
  ck_assert_msg(s == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
  return text;
}

/* json compiles to no kernel (RJ_ENOVARIANT), the message saying why */
static void no_variant(rj_ctx *ctx, const char *json, const rj_options *o, const char *why) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, o, &k), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), why), "%s: %s", json, rj_errmsg(ctx));
}

START_TEST(validation) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  ck_assert_int_eq(rj_request_parse(ctx,
                                    TREQ "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[8],"
                                         "\"invariant\":1}",
                                    &r),
                   RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "invariant"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_request_parse(ctx,
                                    TREQ "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[8],"
                                         "\"invariant\":true,\"deterministic\":false}",
                                    &r),
                   RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "invariant: needs \"deterministic\""), "%s", rj_errmsg(ctx));
  rjt_parse(ctx, req("sum", "f32", "[8]", "[0]", false), &r);
  r.u.tensor.invariant = 2; /* C callers: 0 or 1 */
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_str_eq(rj_errmsg(ctx), "invariant: 2, expected 0 or 1");
  /* the canonical text: present when true, absent otherwise (older texts and keys unchanged) */
  const char *text = NULL;
  rjt_parse(ctx, req("sum", "f32", "[8]", "[0]", true), &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &text), RJ_OK);
  ck_assert_msg(strstr(text, "\"invariant\":true"), "%s", text);
  rjt_parse(ctx, req("sum", "f32", "[8]", "[0]", false), &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &text), RJ_OK);
  ck_assert_msg(!strstr(text, "invariant"), "%s", text);
  rj_ctx_free(ctx);
}
END_TEST

/* Every view class of a float sum goes to tensor_generic (columns with a unit-stride kept
 * innermost dim to tensor_inv_cols, tensor_ordered for a non-commutative custom); a forced rows,
 * cols or cluster variant is refused, naming what its tree depends on. */
START_TEST(dispatch) {
  rj_ctx *ctx = rj_ctx_new();
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90a";
  static const char *const views[][2] = {{"[100000]", "[0]"},     {"[64,1000]", "[1]"},
                                         {"[1000,64]", "[0]"},    {"[4,300,32]", "[1]"},
                                         {"[4,300,32]", "[0,2]"}, {"[65536]", "[0]"}};
  static const bool col[] = {false, false, true, true, false, false};
  for (int i = 0; i < 6; i++) {
    const char *t = explain(ctx, req("sum", "f32", views[i][0], views[i][1], true), &o);
    const char *name = col[i] ? "tensor_inv_cols" : "tensor_generic";
    ck_assert_msg(strstr(t, rjt_fmt("%s prio=%d chosen", name, col[i] ? 31 : 5)), "%s", t);
    ck_assert_msg(strstr(t, rjt_fmt("invariant: yes (%s", name)), "%s", t);
    t = explain(ctx, req("sum", "f32", views[i][0], views[i][1], false), &o);
    ck_assert_msg(strstr(t, "invariant: no ("), "%s", t);
  }
  const char *t = explain(ctx, req("sum", "f32", "[64,1000]", "[1]", false), &o);
  ck_assert_msg(strstr(t, "invariant: no (tensor_rows: its tree depends on the number of rows"),
                "%s", t);
  if (!rjt_have_gpu(ctx)) ck_assert_msg(strstr(t, "no SM count read: the default)"), "%s", t);
  static const char *const forced[] = {"tensor_rows", "tensor_cols", "tensor_cluster"};
  for (int i = 0; i < 3; i++)
    no_variant(ctx,
               rjt_fmt(TREQ "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[65536],\"invariant\":true,"
                            "\"variant\":\"%s\"}",
                       forced[i]),
               &o, "not invariant");
  /* dynamic: an invariant request keeps a constant kernel, and says so */
  t = explain(ctx,
              TREQ "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[64,1000],\"axes\":[1],"
                   "\"dynamic\":true,\"invariant\":true}",
              &o);
  ck_assert_msg(strstr(t, "tensor_generic prio=5 chosen (dynamic: constant kernel"), "%s", t);
  rj_ctx_free(ctx);
}
END_TEST

/* The tree part of the variant's note of an invariant request (from "(invariant: " to " per
 * output"), forcing the variant. */
static char *tree_note(rj_ctx *ctx, const char *shape, const char *axes, const char *variant) {
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90a";
  const char *t = explain(ctx,
                          rjt_fmt(TREQ "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":%s,\"axes\":%s,"
                                       "\"invariant\":true,\"variant\":\"%s\"}",
                                  shape, axes, variant),
                          &o);
  char name[64];
  snprintf(name, sizeof name, "%s prio", variant);
  const char *a = strstr(t, name);
  ck_assert_msg(a && strstr(a, " chosen (invariant: "), "%s", t);
  a = strstr(a, "(invariant: ");
  const char *b = strstr(a, " per output");
  ck_assert_msg(b, "%s", t);
  return strndup(a, (size_t)(b - a));
}

/* tensor_inv_cols's shared memory stays within the 48 KiB a kernel may declare: the slots of its
 * butterflies and the batch of the last CTA's warp butterflies, for the largest accumulators
 * (f64 states, the masked mean's state, f16 / bf16 accumulating in f32), long columns of every
 * width, on the oldest target */
START_TEST(inv_cols_shared) {
  rj_ctx *ctx = rj_ctx_new();
  static const char *const reqs[] = {
      TREQ "\"op\":\"mean\",\"dtype\":\"bf16\",\"shape\":[70000,128],\"axes\":[0],"
           "\"map\":\"where\",\"others\":[{\"dtype\":\"u8\"}],\"invariant\":true}",
      TREQ "\"op\":\"mean\",\"dtype\":\"bf16\",\"shape\":[70000,4096],\"axes\":[0],"
           "\"map\":\"where\",\"others\":[{\"dtype\":\"u8\"}],\"invariant\":true}",
      TREQ "\"op\":\"mean\",\"dtype\":\"f32\",\"acc_dtype\":\"f64\",\"shape\":[70000,4096],"
           "\"axes\":[0],\"map\":\"where\",\"others\":[{\"dtype\":\"u8\"}],\"invariant\":true}",
      TREQ "\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[70000,4096],\"axes\":[0],"
           "\"invariant\":true}",
      TREQ "\"op\":\"sum\",\"dtype\":\"f64\",\"shape\":[70000,4096],\"axes\":[0],"
           "\"invariant\":true}",
      TREQ "\"op\":\"var\",\"dtype\":\"f64\",\"shape\":[70000,4096],\"axes\":[0],"
           "\"invariant\":true}",
      TREQ "\"op\":\"var\",\"dtype\":\"f64\",\"shape\":[4096,4096],\"axes\":[0],"
           "\"invariant\":true}",
  };
  for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
    const char *ptx = rjt_ptx_raw(ctx, reqs[i], "sm_80");
    ck_assert_msg(ptx && strstr(ptx, "rj_lanes"), "%s", reqs[i]);
    long n = rjt_shared_bytes(ptx);
    ck_assert_msg(n > 0 && n <= 48 * 1024, "%ld bytes of .shared: %s", n, reqs[i]);
    const char *w = strstr(ptx, " rj_warps"); /* the warp batch: 16 KiB at most */
    w = w ? strchr(w, '[') : NULL;
    ck_assert_msg(!w || strtol(w + 1, NULL, 10) <= 16384, "rj_warps%.12s: %s", w, reqs[i]);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* The explain line of variant v, when v is the chosen one (else NULL). */
static const char *chosen_line(const char *text, const char *v) {
  const char *at = strstr(text, rjt_fmt("%s prio=", v));
  if (!at) return NULL;
  const char *end = strchr(at, '\n');
  const char *ch = strstr(at, " chosen");
  return ch && (!end || ch < end) ? at : NULL;
}

/* tensor_inv_cols plays tensor_generic's tree: the same lanes or segments for every length
 * (its kernel's bits against tensor_generic's: test_gpu_invariant); the views it declines go
 * to tensor_generic, and a forced tensor_inv_cols refuses what it does not serve. */
START_TEST(inv_cols_plans) {
  rj_ctx *ctx = rj_ctx_new();
  static const long long lens[] = {2,     3,       5,       31,       32,      33,    1000,
                                   4095,  4096,    4097,    16384,    16385,   20000, 65536,
                                   99999, 1 << 20, 5000001, 67108864, 70000000};
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
    int k = lens[i] > 1000000 ? 2 : 40; /* few columns for the long ones (the workspace) */
    char cols[64], mid[64], one[64];
    snprintf(cols, sizeof cols, "[%lld,%d]", lens[i], k);
    snprintf(mid, sizeof mid, "[3,%lld,%d]", lens[i], k);
    snprintf(one, sizeof one, "[%lld]", lens[i]);
    char *c = tree_note(ctx, cols, "[0]", "tensor_inv_cols");
    char *g = tree_note(ctx, cols, "[0]", "tensor_generic");
    ck_assert_msg(strcmp(c, g) == 0, "%lld: %s / %s", lens[i], c, g);
    free(c);
    free(g);
    c = tree_note(ctx, mid, "[1]", "tensor_inv_cols");
    g = tree_note(ctx, one, "[0]", "tensor_generic");
    ck_assert_msg(strcmp(c, g) == 0, "%lld: a middle axis %s / a 1-D array %s", lens[i], c, g);
    free(c);
    free(g);
  }
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90a";
  /* a strided kept innermost dim, and a workspace over 2^22 partials: tensor_generic */
  const char *t = explain(ctx,
                          TREQ "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[1000,64],"
                               "\"strides\":[128,2],\"axes\":[0],\"invariant\":true}",
                          &o);
  ck_assert_msg(strstr(t, "tensor_inv_cols prio=31 rejected: the kept innermost dim is not "
                          "unit-stride") &&
                    strstr(t, "tensor_generic prio=5 chosen"),
                "%s", t);
  t = explain(ctx, req("sum", "f32", "[200000,65536]", "[0]", true), &o);
  ck_assert_msg(strstr(t, "tensor_inv_cols prio=31 rejected: invariant: 65536 outputs x 13 "
                          "segments x 8 warps exceed 4194304 partials") &&
                    strstr(t, "tensor_generic prio=5 chosen"),
                "%s", t);
  /* not invariant: tensor_cols, and a forced tensor_inv_cols is refused */
  t = explain(ctx, req("sum", "f32", "[1000,64]", "[0]", false), &o);
  ck_assert_msg(strstr(t, "tensor_cols prio=30 chosen"), "%s", t);
  no_variant(ctx,
             TREQ "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[1000,64],\"axes\":[0],"
                  "\"variant\":\"tensor_inv_cols\"}",
             &o, "serves \"invariant\": true and, of default requests, only");
  /* tiles of 32 columns (a warp reads 128 bytes of a row), 16 of 8-byte elements, never past the
   * columns, narrower (down to 8) where the grid would have under 99 CTAs */
  static const struct {
    const char *op, *dt, *shape, *note;
  } widths[] = {
      {"sum", "f32", "[4096,4096]", "(invariant: 32 lanes per output; CTAs of 32 columns x 32 "},
      {"sum", "f64", "[4096,4096]", "(invariant: 32 lanes per output; CTAs of 16 columns x 32 "},
      {"var", "f64", "[4096,4096]", "(invariant: 32 lanes per output; CTAs of 16 columns x 32 "},
      {"var", "bf16", "[4096,4096]", "(invariant: 32 lanes per output; CTAs of 32 columns x 32 "},
      {"sum", "f32", "[4096,8]", "(invariant: 32 lanes per output; CTAs of 8 columns x 32 "},
      {"var", "f32", "[2048,2048]", "(invariant: 32 lanes per output; CTAs of 16 columns x 32 "},
      {"var", "f32", "[4096,512]", "(invariant: 32 lanes per output; CTAs of 8 columns x 32 "},
      {"sum", "f32", "[65536,32]", "played by CTAs of 8 columns x 32 lanes"},
      {"sum", "bf16", "[1024,32768]", "CTAs of 128 columns x 32 lanes; 4 columns a thread"},
      {"sum", "bf16", "[4096,4096]", "CTAs of 32 columns x 32 lanes; 4 columns a thread"},
      {"sum", "f32", "[100,5]", "(invariant: 32 lanes per output; CTAs of 8 columns x 32 "},
      {"sum", "f32", "[70000,128]", "played by CTAs of 32 columns x 32 lanes"},
      {"logsumexp", "f64", "[70000,128]", "played by CTAs of 16 columns x 32 lanes"},
  };
  for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
    t = explain(ctx, req(widths[i].op, widths[i].dt, widths[i].shape, "[0]", true), &o);
    const char *line = chosen_line(t, "tensor_inv_cols");
    ck_assert_msg(line && strstr(line, widths[i].note), "%s %s %s: %s", widths[i].op, widths[i].dt,
                  widths[i].shape, t);
  }
  /* dynamic: a constant kernel, saying why */
  t = explain(ctx,
              TREQ "\"op\":\"var\",\"dtype\":\"bf16\",\"shape\":[1000,64],\"axes\":[0],"
                   "\"dynamic\":true,\"invariant\":true}",
              &o);
  ck_assert_msg(strstr(t, "tensor_inv_cols prio=31 chosen (dynamic: constant kernel"), "%s", t);
  rj_ctx_free(ctx);
}
END_TEST

/* Ops whose result does not depend on the order of its combines (integer sum / prod, and / or /
 * xor, argmax / argmin, max / min): every variant serves them invariant, so they take the fast
 * variants, and explain says why; float sums, products, means and the state ops keep
 * tensor_generic's fixed tree, and a forced fast variant refuses them. */
START_TEST(order_free) {
  rj_ctx *ctx = rj_ctx_new();
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90a";
  static const char *const fast[][5] = {{"argmax", "f32", "[64,1000]", "[1]", "tensor_rows"},
                                        {"argmin", "bf16", "[1000,64]", "[0]", "tensor_cols"},
                                        {"max", "f32", "[100000]", "[0]", "tensor_cluster"},
                                        {"min", "f64", "[64,1000]", "[1]", "tensor_rows"},
                                        {"max", "e4m3", "[1000,64]", "[0]", "tensor_cols"},
                                        {"sum", "i32", "[64,1000]", "[1]", "tensor_rows"},
                                        {"sum", "u8", "[1000,64]", "[0]", "tensor_cols"},
                                        {"prod", "i64", "[64,1000]", "[1]", "tensor_rows"},
                                        {"xor", "u32", "[64,1000]", "[1]", "tensor_rows"},
                                        {"and", "i32", "[1000,64]", "[0]", "tensor_cols"},
                                        {"or", "u8", "[64,1000]", "[1]", "tensor_rows"}};
  for (size_t i = 0; i < sizeof fast / sizeof fast[0]; i++) {
    const char *json = req(fast[i][0], fast[i][1], fast[i][2], fast[i][3], true);
    const char *t = explain(ctx, json, &o);
    ck_assert_msg(chosen_line(t, fast[i][4]), "%s: not %s:\n%s", json, fast[i][4], t);
    ck_assert_msg(strstr(t, rjt_fmt("invariant: yes (%s: the result of %s does not depend on the "
                                    "order of its combines",
                                    fast[i][4], fast[i][0])),
                  "%s", t);
    rj_request r;
    rjt_parse(ctx, json, &r);
    snprintf(r.variant, sizeof r.variant, "%s", fast[i][4]); /* forced: served, not refused */
    rj_kernel *k = NULL;
    ck_assert_msg(rj_compile(ctx, &r, &o, &k) == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
  }
  static const char *const tree[][2] = {{"sum", "f32"}, {"prod", "f64"}, {"sum", "e4m3"},
                                        {"mean", "u8"}, {"var", "f16"},  {"logsumexp", "bf16"}};
  for (size_t i = 0; i < sizeof tree / sizeof tree[0]; i++) {
    const char *t = explain(ctx, req(tree[i][0], tree[i][1], "[64,1000]", "[1]", true), &o);
    ck_assert_msg(chosen_line(t, "tensor_generic"), "%s %s:\n%s", tree[i][0], tree[i][1], t);
    ck_assert_msg(strstr(t, "invariant: yes (tensor_generic: the tree of each output"), "%s", t);
  }
  /* a float count (sum of a map over f32) rounds: the fixed tree */
  const char *t = explain(ctx,
                          TREQ "\"op\":\"count_nonzero\",\"dtype\":\"f32\",\"shape\":[64,1000],"
                               "\"axes\":[1],\"invariant\":true}",
                          &o);
  ck_assert_msg(chosen_line(t, "tensor_generic"), "%s", t);
  /* an integer count: exact, fast */
  t = explain(ctx,
              TREQ "\"op\":\"count_nonzero\",\"dtype\":\"i32\",\"shape\":[64,1000],"
                   "\"axes\":[1],\"invariant\":true}",
              &o);
  ck_assert_msg(chosen_line(t, "tensor_rows"), "%s", t);
  /* list requests: max served by tensor_multi as it is */
  t = explain(ctx,
              TREQ "\"op\":\"max\",\"dtype\":\"f32\",\"list\":{\"count\":150},\"invariant\":true}",
              &o);
  ck_assert_msg(chosen_line(t, "tensor_multi"), "%s", t);
  ck_assert_msg(!strstr(t, "element loads in index order"), "%s", t);
  /* segmented requests: argmax served as it is, a float sum by element loads */
  t = explain(ctx,
              TREQ "\"op\":\"argmax\",\"dtype\":\"f16\",\"shape\":[65537],\"axes\":[0],"
                   "\"segments\":{\"count\":33,\"dtype\":\"i32\"},\"invariant\":true}",
              &o);
  ck_assert_msg(chosen_line(t, "tensor_segmented"), "%s", t);
  ck_assert_msg(!strstr(t, "element loads in index order"), "%s", t);
  rj_ctx_free(ctx);
}
END_TEST

/* The kernel of req planned for sms SMs: its PTX (a copy) and grid. */
static char *planned(rj_ctx *ctx, const char *json, int sms, unsigned grid[3]) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90a";
  o.sm_count = sms;
  rj_kernel *k = NULL;
  ck_assert_msg(rj_compile(ctx, &r, &o, &k) == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
  rj_kernel_dims(k, grid, NULL, NULL);
  return strdup(rj_kernel_text(k, RJ_EMIT_PTX));
}

static const int knob[] = {1, 16, 78, 132, 148, 1024};

START_TEST(sm_knob) {
  rj_ctx *ctx = rj_ctx_new();
  /* (shape, axes, dtype): a split, a column split, short rows, and the long rows that state ops
   * and 1- / 2-byte dtypes fold with lanes (bf16 [200,3000]) */
  static const char *const views[][3] = {{"[1048576]", "[0]", "f32"},
                                         {"[8,262144]", "[1]", "f32"},
                                         {"[16384,16]", "[0]", "f32"},
                                         {"[200,2000]", "[1]", "f32"},
                                         {"[200,3000]", "[1]", "bf16"}};
  for (int i = 0; i < 5; i++) {
    unsigned g0[3], g[3];
    /* another request: the plan follows the SM count (the grid of a split or lanes plan) */
    char *base = planned(ctx, req("sum", views[i][2], views[i][0], views[i][1], false), 1, g0);
    bool differs = false;
    for (int j = 1; j < 6; j++) {
      char *p = planned(ctx, req("sum", views[i][2], views[i][0], views[i][1], false), knob[j], g);
      differs |= g[0] != g0[0] || strcmp(p, base) != 0;
      free(p);
    }
    ck_assert_msg(differs, "%s: no SM count changed the plan", views[i][0]);
    free(base);
    /* an invariant request: the same kernel and grid for every SM count */
    base = planned(ctx, req("sum", views[i][2], views[i][0], views[i][1], true), knob[0], g0);
    for (int j = 1; j < 6; j++) {
      char *p = planned(ctx, req("sum", views[i][2], views[i][0], views[i][1], true), knob[j], g);
      ck_assert_msg(strcmp(p, base) == 0 && g[0] == g0[0], "%s: %d SMs changed the kernel",
                    views[i][0], knob[j]);
      free(p);
    }
    free(base);
  }
  rj_request r;
  rjt_parse(ctx, req("sum", "f32", "[64]", "[0]", false), &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90a";
  o.sm_count = -3;
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "sm_count: -3"), "%s", rj_errmsg(ctx));
  o.sm_count = 78;
  const char *t = explain(ctx, req("sum", "f32", "[64,1000]", "[1]", false), &o);
  ck_assert_msg(strstr(t, "planned for 78 SMs"), "%s", t);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(sm_knob_env) { /* Check forks each test: the variable stays in this one */
  rj_ctx *ctx = rj_ctx_new();
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90a";
  setenv("REDJIT_SM_COUNT", "16", 1);
  const char *t = explain(ctx, req("sum", "f32", "[64,1000]", "[1]", false), &o);
  ck_assert_msg(strstr(t, "planned for 16 SMs"), "%s", t);
  o.sm_count = 148; /* the option wins */
  t = explain(ctx, req("sum", "f32", "[64,1000]", "[1]", false), &o);
  ck_assert_msg(strstr(t, "planned for 148 SMs"), "%s", t);
  o.sm_count = 0;
  setenv("REDJIT_SM_COUNT", "12x", 1);
  rj_request r;
  rjt_parse(ctx, req("sum", "f32", "[64,1000]", "[1]", false), &r);
  ck_assert_int_eq(rj_explain(ctx, &r, &o, &t), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "REDJIT_SM_COUNT: \"12x\""), "%s", rj_errmsg(ctx));
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_EINVAL);
  unsetenv("REDJIT_SM_COUNT");
  rj_ctx_free(ctx);
}
END_TEST

/* ---- the same FP operations on every target */

/* An FP arithmetic opcode of one PTX line into op (normalised), or false.  Exact widenings
 * (f16 / bf16 -> f32 or f64, f32 -> f64) are dropped, and a mixed-precision add / sub / mul / fma
 * (sm_100a: add.rn.f32.bf16, an exact widening fused into the f32 operation, one rounding) is
 * written as the f32 operation it equals; so is a comparison of f16 / bf16 values (sm_90:
 * setp.eq.bf16), exact either way. */
static bool fp_op(const char *line, char *op, size_t n) {
  while (*line == ' ' || *line == '\t')
    line++;
  if (*line == '@') { /* a predicate */
    while (*line && *line != ' ' && *line != '\t')
      line++;
    while (*line == ' ' || *line == '\t')
      line++;
  }
  size_t k = strcspn(line, " \t;");
  if (k == 0 || k >= n) return false;
  memcpy(op, line, k);
  op[k] = 0;
  static const char *const heads[] = {"add.",  "sub.", "mul.",      "fma.",   "div.", "rcp.",
                                      "sqrt.", "max.", "min.",      "ex2.",   "lg2.", "neg.",
                                      "abs.",  "cvt.", "copysign.", "testp.", "setp."};
  bool head = false;
  for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
    head |= strncmp(op, heads[i], strlen(heads[i])) == 0;
  if (!head ||
      !(strstr(op, ".f16") || strstr(op, ".bf16") || strstr(op, ".f32") || strstr(op, ".f64")))
    return false;
  static const char *const exact[] = {"cvt.f32.f16", "cvt.f32.bf16", "cvt.f64.f32", "cvt.f64.f16",
                                      "cvt.f64.bf16"};
  for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
    if (!strcmp(op, exact[i])) return false;
  if (!strncmp(op, "setp.", 5)) { /* a comparison is exact: bf16 / f16 as the f32 it widens to */
    char *h = strstr(op, ".bf16");
    if (!h) h = strstr(op, ".f16");
    if (h && !h[h[1] == 'b' ? 5 : 4]) strcpy(h, ".f32");
  }
  char *mixed = strstr(op, ".f32.bf16");
  if (!mixed) mixed = strstr(op, ".f32.f16");
  if (mixed && strncmp(op, "cvt.", 4) != 0) mixed[4] = 0;
  return true;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The PTX's FP opcodes, sorted, in one string (a packed f32x2 op without ftz, which rounds each
 * half as the f32 op does, as two of them).  Not their order: the IR's FP sequence (checked
 * beside: optimised, or as emitted where SLP packed sm_100a's) fixes the order of every dependent
 * operation, while the backend's scheduler may move an independent one (sm_100a moves a
 * subtraction of var's Welford update across a block boundary), which rounds the same. */
static char *fp_blocks(const char *ptx) {
  size_t cap = strlen(ptx) + 16, used = 0;
  char *out = malloc(cap), *ops[4096];
  int nops = 0;
  char line[512], op[64];
  ck_assert_ptr_nonnull(out);
  out[0] = 0;
  for (const char *p = ptx; *p;) {
    size_t k = strcspn(p, "\n");
    snprintf(line, sizeof line, "%.*s", (int)(k < sizeof line - 1 ? k : sizeof line - 1), p);
    p += k + (p[k] == '\n');
    if (fp_op(line, op, sizeof op) && nops < 4095) {
      size_t l = strlen(op); /* a packed f32x2 op without ftz: the two f32 ops it equals */
      bool pair = l > 6 && !strcmp(op + l - 6, ".f32x2") && !strstr(op, ".ftz");
      if (pair) op[l - 2] = 0, ops[nops++] = strdup(op);
      ops[nops++] = strdup(op);
    }
    if (!*p) {
      qsort(ops, (size_t)nops, sizeof ops[0], cmp_str);
      for (int i = 0; i < nops; i++) {
        used += (size_t)snprintf(out + used, cap - used, "%s ", ops[i]);
        free(ops[i]);
      }
      used += (size_t)snprintf(out + used, cap - used, "|");
      nops = 0;
    }
  }
  return out;
}

/* The optimised IR's floating-point instructions in order, with their types (an instruction's
 * text from its opcode on, the operands' names cut), one per line.  The integer instructions
 * around them may be ordered differently for each target (its cost model); these may not. */
static char *ir_fp_sequence(const char *ir) {
  static const char *const heads[] = {"fadd ",
                                      "fsub ",
                                      "fmul ",
                                      "fdiv ",
                                      "frem ",
                                      "fneg ",
                                      "fcmp ",
                                      "fptrunc ",
                                      "fpext ",
                                      "sitofp ",
                                      "uitofp ",
                                      "fptosi ",
                                      "fptoui ",
                                      "call float @llvm.",
                                      "call double @llvm.",
                                      "call half @llvm.",
                                      "call bfloat @llvm."};
  size_t cap = strlen(ir) + 16, used = 0;
  char *out = malloc(cap);
  ck_assert_ptr_nonnull(out);
  out[0] = 0;
  for (const char *p = ir; *p;) {
    size_t k = strcspn(p, "\n");
    const char *eq = memchr(p, '=', k);
    for (size_t i = 0; eq && i < sizeof heads / sizeof heads[0]; i++) {
      const char *at = strstr(eq, heads[i]);
      if (!at || at >= p + k) continue;
      size_t len = strcspn(at, "%(\n"); /* the opcode, its flags and type */
      used += (size_t)snprintf(out + used, cap - used, "%.*s\n", (int)len, at);
      break;
    }
    p += k + (p[k] == '\n');
  }
  return out;
}

static char *ptx_for(rj_ctx *ctx, const char *json, const char *target, rj_emit what) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = target;
  rj_kernel *k = NULL;
  ck_assert_msg(rj_compile(ctx, &r, &o, &k) == RJ_OK, "%s on %s: %s", json, target, rj_errmsg(ctx));
  return strdup(rj_kernel_text(k, what));
}

static const char *const targets[] = {"sm_80", "sm_90a", "sm_100a"};

/* the FP instructions of json's IR at stage for target, in order */
static char *fp_sequence_of(rj_ctx *ctx, const char *json, const char *target, rj_emit stage) {
  char *text = ptx_for(ctx, json, target, stage);
  char *seq = ir_fp_sequence(text);
  free(text);
  return seq;
}

/* json's FP instructions on target in the same order as on sm_80 (ir0: sm_80's, optimised): in the
 * optimised IR, but as emitted where sm_100a's optimised IR has vector FP instructions (it has
 * packed f32 adds and multiplies, add.rn.f32x2: O3's SLP may pair independent f32 operations
 * there, each lane rounded as the scalar one) */
static void same_ir(rj_ctx *ctx, const char *json, const char *target, const char *ir0) {
  char *ir = fp_sequence_of(ctx, json, target, RJ_EMIT_LLVM_OPT), *ref = NULL;
  bool packed = !strcmp(target, "sm_100a") && strchr(ir, '<');
  if (packed) {
    free(ir);
    ir = fp_sequence_of(ctx, json, target, RJ_EMIT_LLVM);
    ref = fp_sequence_of(ctx, json, targets[0], RJ_EMIT_LLVM);
  }
  ck_assert_msg(strcmp(ir, ref ? ref : ir0) == 0,
                "%s: the FP instructions of the %s IR for %s:\n%s\n%s:\n%s", json,
                packed ? "emitted" : "optimised", target, ir, targets[0], ref ? ref : ir0);
  free(ir);
  free(ref);
}

/* json's kernels for the three targets: the same FP instructions in the same order in the IR
 * (same_ir), the same FP operations in the PTX (packed pairs counted as their two f32 ones), no
 * ftz and no approximation. */
static void same_fp_ops(rj_ctx *ctx, const char *json, bool fp) {
  char *ptx0 = ptx_for(ctx, json, targets[0], RJ_EMIT_PTX);
  char *ops0 = fp_blocks(ptx0);
  ck_assert_msg(!fp || strlen(ops0) > 8, "%s: no FP operations found: %s", json, ops0);
  char *ir0 = fp_sequence_of(ctx, json, targets[0], RJ_EMIT_LLVM_OPT);
  for (int t = 0; t < 3; t++) {
    char *ptx = ptx_for(ctx, json, targets[t], RJ_EMIT_PTX);
    ck_assert_msg(!strstr(ptx, ".ftz") && !strstr(ptx, ".approx"),
                  "%s on %s: ftz or an approximation", json, targets[t]);
    same_ir(ctx, json, targets[t], ir0);
    char *ops = fp_blocks(ptx);
    ck_assert_msg(strcmp(ops, ops0) == 0, "%s: FP operations on %s:\n%s\n%s:\n%s", json, targets[t],
                  ops, targets[0], ops0);
    free(ptx);
    free(ops);
  }
  free(ir0);
  free(ptx0);
  free(ops0);
}

/* inv (an invariant request of an order-dependent op) and plain (the same without "invariant"):
 * both served by variant, inv by element loads only (its tree: the length alone; explain's yes
 * and the plan note say so), plain with 16-byte vectors (vec: its load in the PTX) and explain's
 * no, naming what its tree depends on. */
static void element_loads(rj_ctx *ctx, const char *inv, const char *plain, const char *variant,
                          const char *yes, const char *no, const char *vec) {
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90a";
  const char *t = explain(ctx, inv, &o);
  ck_assert_msg(chosen_line(t, variant), "%s", t);
  ck_assert_msg(strstr(t, "invariant: element loads in index order") && strstr(t, yes), "%s", t);
  t = explain(ctx, plain, &o);
  ck_assert_msg(chosen_line(t, variant) && strstr(t, no), "%s", t);
  char *ptx = ptx_for(ctx, inv, "sm_90a", RJ_EMIT_PTX);
  ck_assert_msg(!strstr(ptx, "ld.global.v") && !strstr(ptx, "ld.global.nc.v"),
                "%s: vector loads in the invariant kernel", inv);
  free(ptx);
  ptx = ptx_for(ctx, plain, "sm_90a", RJ_EMIT_PTX);
  ck_assert_msg(strstr(ptx, vec), "%s: no vector loads in the default kernel", plain);
  free(ptx);
}

#define SEGREQ(op, dt, shape, axes, inv)                                                           \
  TREQ "\"op\":\"" op "\",\"dtype\":\"" dt "\",\"shape\":" shape ",\"axes\":" axes                 \
       ",\"segments\":{\"count\":33,\"dtype\":\"i32\"}" inv "}"
#define LISTREQ(op, dt, inv)                                                                       \
  TREQ "\"op\":\"" op "\",\"dtype\":\"" dt "\",\"list\":{\"count\":150,\"total\":true}" inv "}"

/* Segmented requests (a float sum; var of [N, C <= 128] served without the CTA fold of long
 * segments) and list requests of an order-dependent op under "invariant": true. */
START_TEST(segments_and_lists) {
  rj_ctx *ctx = rj_ctx_new();
  element_loads(ctx, SEGREQ("sum", "f16", "[200001]", "[0]", ",\"invariant\":true"),
                SEGREQ("sum", "f16", "[200001]", "[0]", ""), "tensor_segmented",
                "invariant: yes (tensor_segmented: the tree of each segment depends only on its "
                "length",
                "invariant: no (tensor_segmented: its tree depends on a segment's start",
                "ld.global.nc.v4");
  element_loads(ctx, LISTREQ("norm", "bf16", ",\"invariant\":true"), LISTREQ("norm", "bf16", ""),
                "tensor_multi",
                "invariant: yes (tensor_multi: the tree of each tensor depends only on its length",
                "invariant: no (tensor_multi: its tree depends on each tensor's stride",
                "ld.global.v4");
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90a";
  const char *t =
      explain(ctx, SEGREQ("var", "bf16", "[5000,64]", "[0]", ",\"invariant\":true"), &o);
  ck_assert_msg(chosen_line(t, "tensor_segmented") && !strstr(t, "a CTA for segments"), "%s", t);
  t = explain(ctx, SEGREQ("var", "bf16", "[5000,64]", "[0]", ""), &o);
  ck_assert_msg(strstr(t, "a CTA for segments of more than 256 rows"), "%s", t);
  rj_ctx_free(ctx);
}
END_TEST

static const char *const ops_all[] = {"sum", "prod", "mean",   "max",    "min",
                                      "var", "std",  "argmax", "argmin", "logsumexp"};
static const char *const dts_all[] = {"f32", "f16", "bf16", "f64", "i32", "u8", "e4m3"};

static bool takes(const char *op, const char *dt) {
  bool fl = dt[0] == 'f' || dt[0] == 'b' || dt[0] == 'e';
  if (!strcmp(op, "logsumexp")) return fl;
  if (!strcmp(op, "var") || !strcmp(op, "std") || !strcmp(op, "mean"))
    return fl || !strcmp(dt, "u8"); /* the small integers: f64 results */
  if (!strcmp(op, "prod")) return strcmp(dt, "e4m3") != 0;
  return true;
}

START_TEST(same_ops_every_target) {
  rj_ctx *ctx = rj_ctx_new();
  int d = _i;
  for (size_t o = 0; o < sizeof ops_all / sizeof ops_all[0]; o++) {
    if (!takes(ops_all[o], dts_all[d])) continue;
    bool fp = dts_all[d][0] != 'i' && dts_all[d][0] != 'u';
    same_fp_ops(ctx, req(ops_all[o], dts_all[d], "[64,1000]", "[1]", true), fp);
    same_fp_ops(ctx, req(ops_all[o], dts_all[d], "[1000,3,24]", "[1]", true), fp);
  }
  /* a 1-D reduction, a fused dot and f64 accumulation of a float */
  if (d == 0) {
    same_fp_ops(ctx, req("sum", "f32", "[1000003]", "[0]", true), true);
    same_fp_ops(ctx, req("logsumexp", "f32", "[1000003]", "[0]", true), true);
    same_fp_ops(ctx,
                TREQ "\"op\":\"dot\",\"dtype\":\"f32\",\"shape\":[64,1000],\"axes\":[1],"
                     "\"others\":[{\"dtype\":\"f32\"}],\"invariant\":true}",
                true);
    same_fp_ops(ctx,
                TREQ "\"op\":\"norm\",\"dtype\":\"bf16\",\"shape\":[64,1000],\"axes\":[1],"
                     "\"invariant\":true}",
                true);
  }
  /* lists (with a total), and segmented 1-D (every phase: lane, group, warp, CTA, chunks) and
   * [N, C] */
  static const char *const list_ops[] = {"sum", "prod", "sumsq", "norm"};
  for (size_t o = 0; o < sizeof list_ops / sizeof list_ops[0] && d < 4; o++)
    same_fp_ops(ctx, rjt_fmt(LISTREQ("%s", "%s", ",\"invariant\":true"), list_ops[o], dts_all[d]),
                true);
  for (size_t o = 0; o < sizeof ops_all / sizeof ops_all[0] && d < 4; o++) {
    if (!takes(ops_all[o], dts_all[d])) continue;
    same_fp_ops(ctx,
                rjt_fmt(SEGREQ("%s", "%s", "[200001]", "[0]", ",\"invariant\":true"), ops_all[o],
                        dts_all[d]),
                true);
    same_fp_ops(ctx,
                rjt_fmt(SEGREQ("%s", "%s", "[5000,64]", "[0]", ",\"invariant\":true"), ops_all[o],
                        dts_all[d]),
                true);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* The check itself sees what it rejects: a request that is not invariant uses the hardware's
 * approximations (f32 logsumexp), and two different ops give different operations. */
START_TEST(check_sees_differences) {
  rj_ctx *ctx = rj_ctx_new();
  char *p = ptx_for(ctx, req("logsumexp", "f32", "[64,1000]", "[1]", false), "sm_90a", RJ_EMIT_PTX);
  ck_assert_msg(strstr(p, "ex2.approx.ftz.f32"), "the default logsumexp uses ex2.approx");
  free(p);
  p = ptx_for(ctx, req("logsumexp", "f32", "[64,1000]", "[1]", true), "sm_90a", RJ_EMIT_PTX);
  ck_assert_msg(!strstr(p, "approx") && !strstr(p, "ftz"), "the invariant one does not");
  /* its exp: fma Horner steps, the scale by integer operations, no conversion instruction */
  ck_assert_msg(strstr(p, "fma.rn.f32") && !strstr(p, "cvt.rni") && !strstr(p, "cvt.rzi"),
                "the invariant exp");
  free(p);
  char *a = ptx_for(ctx, req("sum", "f32", "[64,1000]", "[1]", true), "sm_90a", RJ_EMIT_PTX);
  char *b = ptx_for(ctx, req("max", "f32", "[64,1000]", "[1]", true), "sm_90a", RJ_EMIT_PTX);
  char *oa = fp_blocks(a), *ob = fp_blocks(b);
  ck_assert_msg(strcmp(oa, ob) != 0, "sum and max: the same FP operations?");
  ck_assert_msg(strstr(oa, "add.rn.f32") && strstr(ob, "max."), "%s\n%s", oa, ob);
  free(a);
  free(b);
  free(oa);
  free(ob);
  /* the IR's sequences tell sum from prod */
  char *ia =
      fp_sequence_of(ctx, req("sum", "f32", "[64,1000]", "[1]", true), "sm_90a", RJ_EMIT_LLVM_OPT);
  char *ib =
      fp_sequence_of(ctx, req("prod", "f32", "[64,1000]", "[1]", true), "sm_90a", RJ_EMIT_LLVM_OPT);
  ck_assert_msg(strstr(ia, "fadd") && strstr(ib, "fmul") && strcmp(ia, ib) != 0, "%s\n%s", ia, ib);
  free(ia);
  free(ib);
  char op[64];
  ck_assert(fp_op("\t@%p3 add.rn.f32.bf16 %f1, %f2, %rs1;", op, sizeof op));
  ck_assert_str_eq(op, "add.rn.f32");
  ck_assert(!fp_op("\tcvt.f32.bf16 %f1, %rs1;", op, sizeof op));
  ck_assert(fp_op("\tcvt.rn.bf16.f32 %rs1, %f1;", op, sizeof op));
  ck_assert(fp_op("\t@!%p1 setp.eq.bf16 %p2, %rs1, %rs2;", op, sizeof op));
  ck_assert_str_eq(op, "setp.eq.f32");
  ck_assert(!fp_op("\tadd.s64 %rd1, %rd2, %rd3;", op, sizeof op));
  ck_assert(fp_op("\tadd.rn.ftz.f32x2 %rd1, %rd2, %rd3;", op, sizeof op));
  ck_assert_str_eq(op, "add.rn.ftz.f32x2");
  rj_ctx_free(ctx);
}
END_TEST

/* treduce: the field, its canonical text, and the NCCL backend's plain refusal */
START_TEST(treduce_field) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  const char *text = NULL;
  rjt_parse(ctx,
            "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,"
            "\"shape\":[1024],\"invariant\":true}",
            &r);
  ck_assert_int_eq(r.u.treduce.invariant, 1);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &text), RJ_OK);
  ck_assert_msg(strstr(text, "\"invariant\":true"), "%s", text);
  rj_nccl_args a;
  rj_nccl_args_init(&a);
  int fake = 0;
  a.comm = &fake; /* refused before NCCL is opened or the communicator used */
  a.src = 4096;
  ck_assert_int_eq(rj_treduce_nccl(ctx, &r, &a), RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(rj_errmsg(ctx), "invariant: ncclReduce is not invariant"), "%s",
                rj_errmsg(ctx));
  r.u.treduce.invariant = 3;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_str_eq(rj_errmsg(ctx), "invariant: 3, expected 0 or 1");
  r.u.treduce.invariant = 0;
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &text), RJ_OK);
  ck_assert_msg(!strstr(text, "invariant"), "%s", text);
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("invariant");
  TCase *tc = tcase_create("invariant");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, validation);
  tcase_add_test(tc, dispatch);
  tcase_add_test(tc, inv_cols_plans);
  tcase_add_test(tc, inv_cols_shared);
  tcase_add_test(tc, order_free);
  tcase_add_test(tc, segments_and_lists);
  tcase_add_test(tc, sm_knob);
  tcase_add_test(tc, sm_knob_env);
  tcase_add_test(tc, check_sees_differences);
  tcase_add_test(tc, treduce_field);
  tcase_add_loop_test(tc, same_ops_every_target, 0, (int)(sizeof dts_all / sizeof dts_all[0]));
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
