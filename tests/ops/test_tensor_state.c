/* The state ops (argmax argmin var std logsumexp) in tensor and tile requests, with no GPU: which
 * variants serve them (and why the others decline), the refusals naming the field (accum,
 * correction, dtype), the PTX of their combines (the select on the index, Welford's division,
 * logsumexp's exp without a library call), the shuffles of a state (one per 32-bit field part),
 * 8-byte index stores, no float atomics, and that the correction is part of a kernel's
 * identity. */
#include "rjtest.h"

#include <stdbool.h>
#include <stdlib.h>

static const char *const sops[] = {"argmax", "argmin", "var", "std", "logsumexp"};
static const char *const fdt[] = {"f16", "bf16", "f32", "f64"};
#define NSOPS 5

/* rows, cols, generic */
static const char *const shapes[3] = {"\"shape\":[300,1000],\"axes\":[1]",
                                      "\"shape\":[1000,300],\"axes\":[0]",
                                      "\"shape\":[4,5,6],\"axes\":[0,2]"};
static const char *const classes[3] = {"tensor_rows", "tensor_cols", "tensor_generic"};

static rj_status compile(rj_ctx *ctx, const char *json, rj_kernel **k) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  return rj_compile(ctx, &r, &o, k);
}

static const char *explain(rj_ctx *ctx, const char *json) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  const char *text = NULL;
  ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_OK);
  return text;
}

START_TEST(dispatch_each_op) {
  rj_ctx *ctx = rj_ctx_new();
  for (int o = 0; o < NSOPS; o++)
    for (int c = 0; c < 3; c++) {
      const char *json =
          rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",%s}", sops[o], shapes[c]);
      char req[256];
      snprintf(req, sizeof req, "%s", json);
      rj_kernel *k = NULL;
      ck_assert_msg(compile(ctx, req, &k) == RJ_OK, "%s: %s", req, rj_errmsg(ctx));
      ck_assert_str_eq(rj_kernel_variant(k), classes[c]);
    }
  /* a 1-D size tensor_cluster takes for sum: the state ops too, their slots stored field by
   * field through mapa (an i64 index / count is one 8-byte store) */
  for (int o = 0; o < NSOPS; o++) {
    char req[256];
    snprintf(req, sizeof req,
             "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",\"shape\":[65540]}", sops[o]);
    const char *text = explain(ctx, req);
    ck_assert_msg(strstr(text, "tensor_cluster prio=35 chosen"), "%s", text);
    const char *ptx = rjt_ptx(ctx, req, "sm_90");
    int fields = o < 2 ? 2 : o < 4 ? 3 : 2;
    ck_assert_msg(rjt_count(ptx, "st.shared::cluster") >= fields, "%s: %d remote stores", req,
                  rjt_count(ptx, "st.shared::cluster"));
    ck_assert_msg(!strstr(ptx, "atom"), "an atomic in %s", req);
  }
  rj_ctx_free(ctx);
}
END_TEST

static void refused(rj_ctx *ctx, const char *json, const char *msg) {
  rj_request r;
  rj_status s = rj_request_parse(ctx, json, &r);
  ck_assert_msg(s == RJ_EINVAL, "%s: got %s", json, rj_status_name(s));
  ck_assert_msg(strstr(rj_errmsg(ctx), msg), "%s: \"%s\" lacks \"%s\"", json, rj_errmsg(ctx), msg);
}

START_TEST(refusals) {
  rj_ctx *ctx = rj_ctx_new();
  for (int o = 0; o < NSOPS; o++) {
    char json[256], msg[128];
    snprintf(json, sizeof json,
             "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",\"shape\":[8,8],\"axes\":[1],"
             "\"accum\":true}",
             sops[o]);
    snprintf(msg, sizeof msg, "accum: op \"%s\" cannot accumulate", sops[o]);
    refused(ctx, json, msg);
  }
  refused(
      ctx,
      "{\"kind\":\"tensor\",\"op\":\"argmax\",\"dtype\":\"f32\",\"shape\":[8],\"correction\":0}",
      "correction: applies only to op \"var\" or \"std\"");
  refused(ctx, "{\"kind\":\"tensor\",\"op\":\"var\",\"dtype\":\"u64\",\"shape\":[8]}",
          "op: \"var\" takes float");
  /* the C API path: rj_compile validates too */
  rj_request r;
  rj_request_init(&r, RJ_KIND_TENSOR);
  r.u.tensor.op = RJ_OP_ARGMIN;
  r.u.tensor.dtype = RJ_F32;
  r.u.tensor.ndim = 1;
  r.u.tensor.shape[0] = 8;
  r.u.tensor.accum = 1;
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "accum"), "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

/* every op x float dtype x class (and integer argmax / argmin), constant and runtime-size
 * kernels: PTX with the op's marks, no float atomics, no calls */
START_TEST(ptx_shape) {
  rj_ctx *ctx = rj_ctx_new();
  static const char *const idt[] = {"i32", "u32", "i64", "u64"};
  for (int o = 0; o < NSOPS; o++)
    for (int d = 0; d < 8; d++)
      for (int c = 0; c < 3; c++)
        for (int dyn = 0; dyn < 2; dyn++) {
          if (d >= 4 && o >= 2) continue; /* var std logsumexp: floats only */
          char req[256];
          snprintf(req, sizeof req, "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s%s}",
                   sops[o], d < 4 ? fdt[d] : idt[d - 4], shapes[c], dyn ? ",\"dynamic\":true" : "");
          const char *ptx = rjt_ptx(ctx, req, "sm_90");
          ck_assert_msg(!strstr(ptx, "atom.global.add.f") && !strstr(ptx, "red.global.add.f"),
                        "float atomics in %s", req);
          ck_assert_msg(!strstr(ptx, "call"), "a call in %s", req);
          bool wide = d == 3;
          if (o < 2) { /* the index: selected with its value, stored as 8 bytes */
            ck_assert_msg(strstr(ptx, "selp.b64"), "no index select in %s", req);
            ck_assert_msg(strstr(ptx, "st.global.b64") || strstr(ptx, "st.global.u64"),
                          "no 8-byte index store in %s", req);
          } else if (o < 4) { /* Welford: the division by the count */
            ck_assert_msg(strstr(ptx, wide ? "div.rn.f64" : "div.rn.f32"), "no division in %s",
                          req);
            if (o == 3) ck_assert_msg(strstr(ptx, "sqrt.rn"), "no sqrt in %s", req);
          } else { /* logsumexp: f32 ex2.approx; f64 exp's rounding to an integer power of two */
            ck_assert_msg(strstr(ptx, wide ? "cvt.rni.f64.f64" : "ex2.approx.ftz.f32"),
                          "no exp in %s", req);
          }
        }
  rj_ctx_free(ctx);
}
END_TEST

/* the split paths: a long row (rows split over CTAs, last CTA folds) and tall columns (cols
 * split); both keep their workspaces of states and never use float atomics */
START_TEST(split_paths) {
  rj_ctx *ctx = rj_ctx_new();
  const char *sh[] = {"\"shape\":[2,3000000],\"axes\":[1]", "\"shape\":[100000,64],\"axes\":[0]"};
  for (int o = 0; o < NSOPS; o++)
    for (int i = 0; i < 2; i++) {
      char req[256];
      snprintf(req, sizeof req, "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"bf16\",%s}",
               sops[o], sh[i]);
      const char *ptx = rjt_ptx(ctx, req, "sm_90");
      ck_assert_msg(strstr(ptx, "rj_ws_part"), "no workspace in %s", req);
      ck_assert_msg(strstr(ptx, "atom.global.add.u32") || strstr(ptx, "atom.add.u32") ||
                        strstr(ptx, "atom.global.acq_rel") || strstr(ptx, "atom"),
                    "no counter in %s", req);
    }
  rj_ctx_free(ctx);
}
END_TEST

/* Column kernels fold a state's thread rows in shared memory one array per field (a warp's
 * accesses on consecutive banks; sum keeps its one array), and long 1-D inputs of a state op
 * stream 4 vectors a round over several waves where 2^24 keeps 8 in flight over one. */
static int count(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

START_TEST(fold_layouts) {
  rj_ctx *ctx = rj_ctx_new();
  const int fields[NSOPS] = {2, 2, 3, 3, 2}; /* value + index; count, mean, M2; max + sum */
  for (int o = -1; o < NSOPS; o++) {
    char req[256];
    snprintf(req, sizeof req,
             "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",\"shape\":[4096,4096],"
             "\"axes\":[0],\"variant\":\"tensor_cols\"}",
             o < 0 ? "sum" : sops[o]);
    const char *ptx = rjt_ptx(ctx, req, "sm_90");
    ck_assert_msg(count(ptx, ".b8 rj_cols") == (o < 0 ? 1 : fields[o]), "shared arrays of %s", req);
  }
  for (int o = 0; o < NSOPS; o++)
    for (int lg = 24; lg <= 28; lg += 4) {
      char req[256];
      snprintf(req, sizeof req,
               "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",\"shape\":[%lld]}", sops[o],
               1LL << lg);
      const char *ptx = rjt_ptx(ctx, req, "sm_90");
      ck_assert_msg(count(ptx, "ld.global.nc.v4") == (lg == 24 ? 8 : 4), "loads of %s", req);
    }
  rj_ctx_free(ctx);
}
END_TEST

/* One runtime-size kernel serves every long 1-D state op of its bucket, so its workspace holds
 * the partials of the most CTAs any size of the bucket launches (2^26 and 2^28 share it). */
static long long ws_bytes(const char *ptx) {
  const char *w = strstr(ptx, "rj_ws_part1[");
  return w ? atoll(w + strlen("rj_ws_part1[")) : -1;
}

START_TEST(dynamic_workspace) {
  rj_ctx *ctx = rj_ctx_new();
  for (int o = 0; o < NSOPS; o++) {
    long long ws[2];
    for (int i = 0; i < 2; i++) {
      char req[256];
      snprintf(req, sizeof req,
               "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",\"shape\":[%lld],"
               "\"dynamic\":true}",
               sops[o], 1LL << (i ? 28 : 26));
      ws[i] = ws_bytes(rjt_ptx(ctx, req, "sm_90"));
      const char *text = explain(ctx, req);
      const char *g = strstr(text, "grid ");
      ck_assert_msg(g, "no grid in %s", text);
      long long grid = atoll(g + 5), state = o < 4 ? 16 : 8; /* (f32, i64) (i64, f32, f32) */
      ck_assert_msg(ws[i] >= grid * state, "%s: workspace %lld bytes for %lld CTAs", req, ws[i],
                    grid);
    }
    ck_assert_int_eq(ws[0], ws[1]); /* one kernel */
  }
  rj_ctx_free(ctx);
}
END_TEST

/* the correction is compiled in: two corrections, two kernels (runtime-size ones included) */
START_TEST(correction_in_key) {
  rj_ctx *ctx = rj_ctx_new();
  for (int dyn = 0; dyn < 2; dyn++) {
    rj_kernel *k[3] = {0};
    for (int i = 0; i < 3; i++) {
      char req[256];
      snprintf(req, sizeof req,
               "{\"kind\":\"tensor\",\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[64,%d],"
               "\"axes\":[1],\"correction\":%d%s}",
               1000 + i / 2, i == 1 ? 0 : 1, dyn ? ",\"dynamic\":true" : "");
      ck_assert_msg(compile(ctx, req, &k[i]) == RJ_OK, "%s: %s", req, rj_errmsg(ctx));
    }
    ck_assert_ptr_ne(k[0], k[1]);
    if (dyn) ck_assert_ptr_eq(k[0], k[2]); /* same bucket, same correction: one kernel */
  }
  rj_ctx_free(ctx);
}
END_TEST

/* every request ptxas accepts (when the CUDA toolkit is installed) */
START_TEST(ptxas_clean) {
  const char *ptxas = "/usr/local/cuda/bin/ptxas";
  FILE *f = fopen(ptxas, "r");
  if (!f) return;
  fclose(f);
  rj_ctx *ctx = rj_ctx_new();
  for (int o = 0; o < NSOPS; o++)
    for (int d = 0; d < 4; d++)
      for (int c = 0; c < 3; c++) {
        char req[256];
        snprintf(req, sizeof req, "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s}",
                 sops[o], fdt[d], shapes[c]);
        const char *ptx = rjt_ptx_raw(ctx, req, "sm_90");
        char path[] = "/tmp/rjt_state_XXXXXX";
        int fd = mkstemp(path);
        ck_assert(fd >= 0);
        FILE *out = fdopen(fd, "w");
        fputs(ptx, out);
        fclose(out);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "%s -arch=sm_90 %s -o /dev/null 2>&1", ptxas, path);
        int rc = system(cmd);
        remove(path);
        ck_assert_msg(rc == 0, "ptxas failed on %s", req);
      }
  rj_ctx_free(ctx);
}
END_TEST

/* ---------------------------------------------------------------- tile kinds (shared, local) */
#define TILE "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",%s}"
/* a whole warp's 32 lanes to one replicated output: a 5-step butterfly */
#define T_WARP                                                                                     \
  "\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],"       \
  "\"stride\":[\"1@lane\"]}},\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],"  \
  "\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}"
#define T_SHARED                                                                                   \
  "\"scope\":\"cta\",\"threads\":64,\"src\":{\"mem\":\"shared\",\"shape\":[16,40]},\"dst\":"       \
  "{\"mem\":\"shared\",\"shape\":[16]}"
/* long rows: warps cooperate through shared partials (two levels) */
#define T_LONG                                                                                     \
  "\"scope\":\"cta\",\"threads\":256,\"src\":{\"mem\":\"shared\",\"shape\":[2,3000]},\"dst\":"     \
  "{\"mem\":\"shared\",\"shape\":[2]}"
#define T_THREAD                                                                                   \
  "\"scope\":\"thread\",\"src\":{\"mem\":\"local\",\"shape\":[64]},\"dst\":{\"mem\":\"local\","    \
  "\"shape\":[1]}"

static const char *tile_explain(rj_ctx *ctx, const char *json, const char *target) {
  char req[1024];
  snprintf(req, sizeof req, "%s", json);
  rj_request r;
  rjt_parse(ctx, req, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = target;
  const char *text = NULL;
  ck_assert_msg(rj_explain(ctx, &r, &o, &text) == RJ_OK, "%s: %s", req, rj_errmsg(ctx));
  return text;
}

#define HAS(text, needle) ck_assert_msg(strstr(text, needle), "no \"%s\" in:\n%s", needle, text)

/* shared serves the shared tiles, local the register ones; redux and sm100_packed decline with
 * their reason */
START_TEST(tile_dispatch) {
  rj_ctx *ctx = rj_ctx_new();
  char want[256];
  for (int o = 0; o < NSOPS; o++) {
    const char *t = tile_explain(ctx, rjt_fmt(TILE, sops[o], "f32", T_SHARED), "sm_90");
    HAS(t, "shared prio=10 chosen");
    t = tile_explain(ctx, rjt_fmt(TILE, sops[o], "f32", T_LONG), "sm_90");
    HAS(t, "shared prio=10 chosen");
    t = tile_explain(ctx, rjt_fmt(TILE, sops[o], o < 2 ? "i32" : "f32", T_WARP), "sm_90");
    snprintf(want, sizeof want,
             "redux prio=15 rejected: does not serve op \"%s\": redux.sync folds one 32-bit value "
             "per lane",
             sops[o]);
    HAS(t, want);
    HAS(t, "local prio=10 chosen");
    t = tile_explain(ctx, rjt_fmt(TILE, sops[o], "f32", T_THREAD), "sm_100a");
    snprintf(want, sizeof want,
             "sm100_packed prio=20 rejected: does not serve op \"%s\": its packed instructions",
             sops[o]);
    HAS(t, want);
    HAS(t, "local prio=10 chosen");
  }
  rj_ctx_free(ctx);
}
END_TEST

/* the butterfly of a state: each 32-bit part of each field shuffled once per step (5 steps);
 * argmax's index from the slot table, stored as 8 bytes; var's division, lse's exp (f32:
 * ex2.approx) */
START_TEST(tile_ptx) {
  rj_ctx *ctx = rj_ctx_new();
  /* parts per step (f32, f64): argmax {value, i64}; var {i64, W, W}; logsumexp {W, W} */
  static const int parts[NSOPS][2] = {{3, 4}, {3, 4}, {4, 6}, {4, 6}, {2, 4}};
  for (int o = 0; o < NSOPS; o++)
    for (int w = 0; w < 2; w++) {
      char req[1024];
      snprintf(req, sizeof req, "%s", rjt_fmt(TILE, sops[o], w ? "f64" : "f32", T_WARP));
      const char *ptx = rjt_ptx(ctx, req, "sm_90");
      ck_assert_msg(rjt_count(ptx, "shfl.sync.bfly.b32") == 5 * parts[o][w], "%s: %d shuffles", req,
                    rjt_count(ptx, "shfl.sync.bfly.b32"));
      ck_assert_msg(!strstr(ptx, "call"), "a call in %s", req);
      if (o < 2) {
        HAS(ptx, "rj_red_index"); /* the slot -> index table */
        HAS(ptx, "selp.b64");
        /* the dump of the i64 dst slot: one 8-byte store, or its two halves */
        ck_assert_msg(strstr(ptx, "st.global.b64") || strstr(ptx, "+4], %rd"),
                      "no 8-byte index store in %s", req);
      } else if (o < 4) {
        HAS(ptx, w ? "div.rn.f64" : "div.rn.f32");
      } else {
        HAS(ptx, w ? "cvt.rni.f64.f64" : "ex2.approx.ftz.f32");
      }
    }
  /* shared: the index in shared memory as 8 bytes; two levels: the partials are states */
  for (int o = 0; o < NSOPS; o++)
    for (int b = 0; b < 2; b++) {
      char req[1024];
      snprintf(req, sizeof req, "%s", rjt_fmt(TILE, sops[o], "bf16", b ? T_LONG : T_SHARED));
      const char *ptx = rjt_ptx(ctx, req, "sm_90");
      if (o < 2)
        ck_assert_msg(strstr(ptx, "st.shared.b64") || strstr(ptx, "st.shared.u64"),
                      "no 8-byte index in shared memory: %s", req);
      else
        HAS(ptx, "st.global.b16"); /* bf16 results */
      if (b) HAS(ptx, "rj_partials");
    }
  rj_ctx_free(ctx);
}
END_TEST

static void tile_refused(rj_ctx *ctx, const char *json, const char *msg) {
  char req[1024], m[256];
  snprintf(req, sizeof req, "%s", json);
  snprintf(m, sizeof m, "%s", msg);
  refused(ctx, req, m);
}

START_TEST(tile_refusals) {
  rj_ctx *ctx = rj_ctx_new();
  char msg[128];
  for (int o = 0; o < NSOPS; o++) {
    snprintf(msg, sizeof msg, "accum: op \"%s\" cannot accumulate", sops[o]);
    tile_refused(ctx, rjt_fmt(TILE, sops[o], "f32", T_SHARED ",\"accum\":true"), msg);
  }
  tile_refused(ctx, rjt_fmt(TILE, "argmin", "f32", T_SHARED ",\"correction\":0"),
               "correction: applies only to op \"var\" or \"std\"");
  tile_refused(ctx, rjt_fmt(TILE, "var", "f32", T_SHARED ",\"correction\":-1"), "correction");
  tile_refused(ctx, rjt_fmt(TILE, "std", "i32", T_SHARED), "op: \"std\" takes float");
  tile_refused(ctx, rjt_fmt(TILE, "logsumexp", "u64", T_WARP), "op: \"logsumexp\" takes float");
  /* shared memory counts dst in the result's dtype: 5000 f16 sums fit, 5000 i64 indices not */
  const char *big = "\"scope\":\"warp\",\"src\":{\"mem\":\"shared\",\"shape\":[5000,2]},\"dst\":"
                    "{\"mem\":\"shared\",\"shape\":[5000]}";
  rj_request r;
  rjt_parse(ctx, rjt_fmt(TILE, "sum", "f16", big), &r);
  tile_refused(ctx, rjt_fmt(TILE, "argmax", "f16", big), "src.shape: src and dst take 60000 bytes");
  /* the C API's request: correction 1 by default; accum refused by rj_compile */
  rj_request_init(&r, RJ_KIND_TILE);
  ck_assert_int_eq(r.u.tile.correction, 1);
  char req[1024];
  snprintf(req, sizeof req, "%s", rjt_fmt(TILE, "var", "f32", T_SHARED));
  rjt_parse(ctx, req, &r);
  r.u.tile.accum = 1;
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_EINVAL);
  HAS(rj_errmsg(ctx), "accum: op \"var\"");
  rj_ctx_free(ctx);
}
END_TEST

/* a tile's correction is part of its kernel (canonical text and cache key) */
START_TEST(tile_correction_in_key) {
  rj_ctx *ctx = rj_ctx_new();
  rj_kernel *k[2] = {0};
  for (int i = 0; i < 2; i++) {
    char req[1024];
    snprintf(req, sizeof req, "%s",
             rjt_fmt(TILE, "std", "f32", i ? T_SHARED ",\"correction\":0" : T_SHARED));
    ck_assert_msg(compile(ctx, req, &k[i]) == RJ_OK, "%s: %s", req, rj_errmsg(ctx));
  }
  ck_assert_ptr_ne(k[0], k[1]);
  char req[1024];
  rj_request r;
  snprintf(req, sizeof req, "%s", rjt_fmt(TILE, "var", "f64", T_SHARED ",\"correction\":0"));
  rjt_parse(ctx, req, &r);
  const char *canon = NULL;
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &canon), RJ_OK);
  HAS(canon, "\"correction\":0");
  snprintf(req, sizeof req, "%s", rjt_fmt(TILE, "sum", "f64", T_SHARED));
  rjt_parse(ctx, req, &r);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &canon), RJ_OK);
  ck_assert_msg(!strstr(canon, "correction"), "%s", canon); /* other ops: as before */
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tensor_state");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, dispatch_each_op);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, ptx_shape);
  tcase_add_test(tc, fold_layouts);
  tcase_add_test(tc, dynamic_workspace);
  tcase_add_test(tc, split_paths);
  tcase_add_test(tc, correction_in_key);
  tcase_add_test(tc, ptxas_clean);
  suite_add_tcase(s, tc);
  TCase *tt = tcase_create("tile");
  tcase_set_timeout(tt, 300);
  tcase_add_test(tt, tile_dispatch);
  tcase_add_test(tt, tile_ptx);
  tcase_add_test(tt, tile_refusals);
  tcase_add_test(tt, tile_correction_in_key);
  suite_add_tcase(s, tt);
  return rjt_main(s);
}
