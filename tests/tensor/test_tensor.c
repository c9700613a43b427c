/* Tensor requests with no GPU: validation errors (status 2 in the CLI's terms:
 * RJ_EINVAL with the field named), dispatch by pattern, PTX properties (16-byte vector loads,
 * no float atomics), ptxas-clean kernels, and rj_reduce's argument checks. */
#include "rjtest.h"

#include <stdbool.h>

typedef struct bad_case {
  const char *json;
  const char *msg;
} bad_case;

#define T0 "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\","
#define D0 "{\"kind\":\"tensor\",\"dynamic\":true,"
static const bad_case bad[] = {
    {T0 "\"shape\":[4,-1],\"axes\":[1]}", "shape[1]"},
    {T0 "\"shape\":[]}", "shape: expected 1 to 8 dims"},
    {T0 "\"shape\":[4,8],\"axes\":[1,1]}", "axis 1 is repeated"},
    {T0 "\"shape\":[4,8],\"axes\":[1,-1]}", "axis 1 is repeated"},
    {T0 "\"shape\":[4,8],\"axes\":[2]}", "axes[0]: 2 is out of range"},
    {T0 "\"shape\":[4,8],\"axes\":[-3]}", "axes[0]: -3 is out of range"},
    {T0 "\"shape\":[4,8],\"strides\":[1],\"axes\":[1]}", "strides"},
    {T0 "\"shape\":[4,8],\"strides\":[0,1],\"axes\":[1]}", "strides[0]"},
    {T0 "\"shape\":[4,8,3],\"strides\":[2,1,1],\"axes\":[1]}", "makes outputs overlap"},
    {T0 "\"shape\":[4,4],\"strides\":[2,1],\"axes\":[]}", "makes outputs overlap"},
    {T0 "\"shape\":[4,8],\"axes\":[1],\"colour\":1}", "colour: unknown field"},
    {T0 "\"shape\":[4,8],\"deterministic\":2}", "deterministic"},
    {T0 "\"shape\":[4,8],\"dynamic\":1}", "dynamic: expected true or false"},
    {T0 "\"shape\":[4,-1],\"axes\":[1],\"dynamic\":true}", "shape[1]"},
    {T0 "\"shape\":[4,8,3],\"strides\":[2,1,1],\"axes\":[1],\"dynamic\":true}",
     "makes outputs overlap"},
};

START_TEST(invalid) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_status s = rj_request_parse(ctx, bad[_i].json, &r);
  ck_assert_msg(s == RJ_EINVAL, "%s: got %s (%s)", bad[_i].json, rj_status_name(s), rj_errmsg(ctx));
  ck_assert_msg(strstr(rj_errmsg(ctx), bad[_i].msg), "%s: message \"%s\" lacks \"%s\"",
                bad[_i].json, rj_errmsg(ctx), bad[_i].msg);
  rj_ctx_free(ctx);
}
END_TEST

static const char *variant_of(rj_ctx *ctx, const char *json) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  rj_status s = rj_compile(ctx, &r, &o, &k);
  ck_assert_msg(s == RJ_OK, "%s: %s", json, rj_errmsg(ctx));
  return rj_kernel_variant(k);
}

START_TEST(dispatch) {
  rj_ctx *ctx = rj_ctx_new();
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[1048576]}"), "tensor_rows");
  /* 1-D between one CTA's reach and the whole chip's: one cluster (sm_90) */
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[65536]}"), "tensor_rows");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[65540]}"), "tensor_cluster");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[262144]}"), "tensor_cluster");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[262148]}"), "tensor_rows");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[4096,4096],\"axes\":[1]}"), "tensor_rows");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[65536,128],\"axes\":[-1]}"), "tensor_rows");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[4096,4096],\"axes\":[0]}"), "tensor_cols");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[8,300,17],\"axes\":[1]}"), "tensor_cols");
  /* merged dims: rows of a 3-D array, all dims, and size-1 dims */
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[8,16,32],\"axes\":[1,2]}"), "tensor_rows");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[8,1,32],\"axes\":[0,1]}"), "tensor_cols");
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[4,5,6],\"axes\":[0,2]}"), "tensor_generic");
  /* a transposed view reduced along its unit-stride dim is a row reduction */
  ck_assert_str_eq(variant_of(ctx, T0 "\"shape\":[64,32],\"strides\":[1,64],\"axes\":[0]}"),
                   "tensor_rows");
  rj_ctx_free(ctx);
}
END_TEST

/* Default column requests that tensor_inv_cols serves faster than tensor_cols (its accepts:
 * plain constant-size var / std over 1024 rows or more into 64 outputs or more; f16 / bf16 sums
 * and means over 64 rows or more into 1024 outputs or more; under 32 MiB with segments, up to
 * 64 / 128 MiB with lanes), and their neighbours, which stay with tensor_cols; an order-free
 * invariant request goes to tensor_cols, and to tensor_inv_cols when forced */
START_TEST(dispatch_cols_routing) {
  rj_ctx *ctx = rj_ctx_new();
  static const struct {
    const char *fields, *variant;
  } cases[] = {
      {"\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[4096,4096]", "tensor_inv_cols"},
      {"\"op\":\"std\",\"dtype\":\"bf16\",\"shape\":[1024,64]", "tensor_inv_cols"},
      {"\"op\":\"var\",\"dtype\":\"f16\",\"shape\":[30011,64]", "tensor_inv_cols"},
      {"\"op\":\"var\",\"dtype\":\"f16\",\"shape\":[30011,63]", "tensor_cols"},
      {"\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[4096,64],\"nan\":\"ignore\",\"correction\":0",
       "tensor_inv_cols"},
      {"\"op\":\"var\",\"dtype\":\"bf16\",\"shape\":[65536,128]", "tensor_inv_cols"},
      {"\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[1023,4096]", "tensor_cols"},
      {"\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[4096,4097]", "tensor_cols"},
      {"\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[8192,1023]", "tensor_inv_cols"},
      {"\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[8192,1024]", "tensor_cols"},
      {"\"op\":\"var\",\"dtype\":\"f64\",\"shape\":[4096,64]", "tensor_cols"},
      {"\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[4096,64],\"dynamic\":true", "tensor_cols"},
      {"\"op\":\"logsumexp\",\"dtype\":\"f32\",\"shape\":[4096,64]", "tensor_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[1024,32768]", "tensor_inv_cols"},
      {"\"op\":\"mean\",\"dtype\":\"f16\",\"shape\":[64,1024]", "tensor_inv_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[63,4096]", "tensor_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[4096,1023]", "tensor_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[4096,16384]", "tensor_inv_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[4096,16385]", "tensor_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[8192,2047]", "tensor_inv_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[8192,2048]", "tensor_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[16384,4096]", "tensor_cols"},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096]", "tensor_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[4096,4096],\"acc_dtype\":\"f64\"",
       "tensor_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[4096,4096],\"map\":\"square\"", "tensor_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[4096,4096],\"accum\":true", "tensor_cols"},
      {"\"op\":\"sum\",\"dtype\":\"bf16\",\"shape\":[4096,4096],\"deterministic\":false",
       "tensor_cols"},
      {"\"op\":\"max\",\"dtype\":\"bf16\",\"shape\":[4096,4096]", "tensor_cols"},
      {"\"op\":\"argmax\",\"dtype\":\"f32\",\"shape\":[4096,64],\"invariant\":true", "tensor_cols"},
      {"\"op\":\"argmax\",\"dtype\":\"f32\",\"shape\":[4096,64],\"invariant\":true,"
       "\"variant\":\"tensor_inv_cols\"",
       "tensor_inv_cols"},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,64],\"invariant\":true",
       "tensor_inv_cols"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *json = rjt_fmt("{\"kind\":\"tensor\",%s,\"axes\":[0]}", cases[i].fields);
    char req[512];
    snprintf(req, sizeof req, "%s", json);
    const char *got = variant_of(ctx, req);
    ck_assert_msg(strcmp(got, cases[i].variant) == 0, "%s: %s, not %s", req, got, cases[i].variant);
  }
  /* a middle axis too; and a routed request forced to tensor_cols is still served there */
  ck_assert_str_eq(
      variant_of(ctx, "{\"kind\":\"tensor\",\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[4,4096,"
                      "1024],\"axes\":[1]}"),
      "tensor_inv_cols");
  ck_assert_str_eq(variant_of(ctx,
                              "{\"kind\":\"tensor\",\"op\":\"var\",\"dtype\":\"f32\",\"shape\":["
                              "4096,4096],\"axes\":[0],\"variant\":\"tensor_cols\"}"),
                   "tensor_cols");
  rj_ctx_free(ctx);
}
END_TEST

static const char *const dtypes[] = {"f16", "bf16", "f32", "f64", "i32", "u32", "i64", "u64"};

START_TEST(ptx_properties) {
  rj_ctx *ctx = rj_ctx_new();
  const char *shapes[] = {"\"shape\":[16777216]", "\"shape\":[4096,4096],\"axes\":[1]",
                          "\"shape\":[4096,4096],\"axes\":[0],\"variant\":\"tensor_cols\"",
                          "\"shape\":[65536,128],\"axes\":[1]",
                          "\"shape\":[32,4194304],\"axes\":[1]"};
  for (int d = 0; d < 8; d++)
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
      const char *json = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",%s}",
                                 d % 2 ? "max" : "sum", dtypes[d], shapes[i]);
      char req[512];
      snprintf(req, sizeof req, "%s", json);
      const char *ptx = rjt_ptx(ctx, req, "sm_90");
      ck_assert_msg(strstr(ptx, "ld.global.nc.v4") || strstr(ptx, "ld.global.v4") ||
                        strstr(ptx, "ld.global.nc.v2.b64") || strstr(ptx, "ld.global.nc.v2.f64") ||
                        strstr(ptx, "ld.global.nc.v2.u64") || strstr(ptx, "ld.global.v2"),
                    "no 16-byte vector load in %s", req);
      ck_assert_msg(!strstr(ptx, "atom.global.add.f") && !strstr(ptx, "red.global.add.f"),
                    "float atomics in %s", req);
    }
  rj_ctx_free(ctx);
}
END_TEST

/* Which kernels' loads skip L1: the first input's vector loads (not a second input's or a mask's:
 * those are scalar or word loads, never hinted), of a runtime size or a constant size under
 * 512 MiB, not of a list or segments, on targets whose PTX has the hint (ISA 7.4: not sm_80's
 * 7.0); an invariant tensor_generic kernel's element loads too.  An invariant kernel on sm_80
 * loads through the same inline PTX without the hint. */
START_TEST(loads_skip_l1) {
  rj_ctx *ctx = rj_ctx_new();
  const char *v4 = "ld.global.nc.L1::no_allocate.v4.b32",
             *v2 = "ld.global.nc.L1::no_allocate.v2.b32", *b32 = "ld.global.nc.L1::no_allocate.b32";
  const struct {
    const char *json, *target, *hint; /* hint: the hinted load expected, or NULL: none at all */
    bool vectors_only;                /* no hinted scalar load (the other inputs' stay plain) */
  } c[] = {
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1]", "sm_90", v4, true},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[0]", "sm_100a", v4, true},
      {"\"op\":\"sumsq\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1]", "sm_90", v4, true},
      {"\"op\":\"max\",\"dtype\":\"bf16\",\"shape\":[65536,128],\"axes\":[1]", "sm_89", v4, true},
      {"\"op\":\"max\",\"dtype\":\"u8\",\"shape\":[1000,4096],\"axes\":[1]", "sm_90", v2, true},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[134217724]", "sm_90", v4,
       true}, /* 512 MiB - 16 */
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[134217728]", "sm_90", NULL, true}, /* 512 MiB */
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1]", "sm_80", NULL, true},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1]", "sm_86", NULL, true},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1],\"invariant\":true",
       "sm_90", v4, false},
      {"\"op\":\"max\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1],\"invariant\":true",
       "sm_90", v4, true},
      {"\"op\":\"var\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1],\"invariant\":true",
       "sm_90", b32, false},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1],\"invariant\":true",
       "sm_80", NULL, true},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1],\"dynamic\":true",
       "sm_90", v4, true},
      {"\"op\":\"dot\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1],"
       "\"others\":[{\"dtype\":\"f32\"}]",
       "sm_90", v4, true},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[16777216],\"map\":\"where\","
       "\"others\":[{\"dtype\":\"u8\"}]",
       "sm_90", v4, true},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[1048576],\"segments\":{\"count\":1000,"
       "\"dtype\":\"i32\"}",
       "sm_90", NULL, true},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    char req[512];
    snprintf(req, sizeof req, "{\"kind\":\"tensor\",%s}", c[i].json);
    const char *ptx = rjt_ptx_raw(ctx, req, c[i].target);
    if (c[i].hint)
      ck_assert_msg(strstr(ptx, c[i].hint), "%s on %s: no %s", req, c[i].target, c[i].hint);
    else
      ck_assert_msg(!strstr(ptx, "L1::no_allocate"), "%s on %s: a load skips L1", req, c[i].target);
    if (c[i].vectors_only)
      ck_assert_msg(!strstr(ptx, "L1::no_allocate.b"), "%s on %s: a hinted scalar load", req,
                    c[i].target);
  }
  /* an invariant kernel's IR on sm_80: the inline load without the hint */
  const char *ir = rjt_text(ctx,
                            "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":"
                            "[4096,4096],\"axes\":[1],\"invariant\":true}",
                            "sm_80", RJ_EMIT_LLVM);
  ck_assert_msg(strstr(ir, "asm \"ld.global.nc.v4.b32"),
                "no inline ld.global.nc.v4.b32 in the sm_80 IR");
  rj_ctx_free(ctx);
}
END_TEST

/* tensor_cluster: the cluster attributes and instructions are in the PTX, no workspace or
 * atomics; targets without clusters and views it does not serve are refused with the reason. */
START_TEST(cluster) {
  rj_ctx *ctx = rj_ctx_new();
  static const int vec[8] = {8, 8, 4, 2, 4, 4, 2, 2};
  for (int d = 0; d < 8; d++) {
    const char *json = rjt_fmt("{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\","
                               "\"shape\":[%d],\"variant\":\"tensor_cluster\"}",
                               d % 2 ? "min" : "sum", dtypes[d], 20001 * vec[d] + 3);
    char req[256];
    snprintf(req, sizeof req, "%s", json);
    const char *ptx = rjt_ptx(ctx, req, "sm_90");
    const char *need[] = {".reqnctapercluster 8, 1, 1", "%cluster_ctarank",
                          "mapa.shared::cluster",       "st.shared::cluster",
                          "barrier.cluster.arrive",     "barrier.cluster.wait"};
    for (int i = 0; i < 6; i++)
      ck_assert_msg(strstr(ptx, need[i]), "%s: no \"%s\" in the PTX", req, need[i]);
    ck_assert_msg(!strstr(ptx, "atom.") && !strstr(ptx, "rj_ws"), "%s: atomics or a workspace",
                  req);
  }
  rj_request r;
  rj_options o;
  rj_options_init(&o);
  rj_kernel *k = NULL;
  rjt_parse(ctx, T0 "\"shape\":[100003],\"variant\":\"tensor_cluster\"}", &r);
  o.target = "sm_80";
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), "lacks thread-block clusters"), "%s", rj_errmsg(ctx));
  o.target = "sm_90";
  rjt_parse(ctx, T0 "\"shape\":[1000],\"variant\":\"tensor_cluster\"}", &r);
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), "one cluster serves"), "%s", rj_errmsg(ctx));
  rjt_parse(ctx, T0 "\"shape\":[400,1000],\"axes\":[1],\"variant\":\"tensor_cluster\"}", &r);
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_ENOVARIANT);
  ck_assert_msg(strstr(rj_errmsg(ctx), "not a 1-D reduction"), "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

/* tensor_cluster: every CTA of the cluster is known to be running before a thread touches
 * another CTA's shared memory (CUDA's rule for distributed shared memory; compute-sanitizer
 * racecheck reported the store as a write into "a block that might not have entered yet").
 * In the PTX: a cluster arrive, then a cluster wait, before the first mapa / st.shared::cluster;
 * then the arrive / wait pair that publishes the partials.  The early arrive is .relaxed where
 * the target's least PTX has it (8.0), and the PTX version does not rise on sm_90. */
START_TEST(cluster_started_before_remote_store) {
  rj_ctx *ctx = rj_ctx_new();
  static const char *const targets[] = {"sm_90", "sm_90a", "sm_100a", "sm_120a"};
  static const int vec[8] = {8, 8, 4, 2, 4, 4, 2, 2}; /* elements a 16-byte vector */
  for (int g = 0; g < 4; g++)
    for (int d = 0; d < 8; d++) {
      char req[256];
      snprintf(req, sizeof req,
               "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[%d],"
               "\"variant\":\"tensor_cluster\"}",
               d % 2 ? "max" : "sum", dtypes[d], 25000 * vec[d]);
      const char *ptx = rjt_ptx(ctx, req, targets[g]);
      const char *arrive = strstr(ptx, "barrier.cluster.arrive");
      const char *wait = strstr(ptx, "barrier.cluster.wait");
      const char *mapa = strstr(ptx, "mapa.shared::cluster");
      const char *store = strstr(ptx, "st.shared::cluster");
      ck_assert_msg(arrive && wait && mapa && store, "%s %s: a cluster instruction is missing",
                    targets[g], req);
      ck_assert_msg(arrive < wait && wait < mapa && wait < store,
                    "%s %s: the first cluster wait does not precede the first remote store",
                    targets[g], req);
      ck_assert_int_eq(rjt_count(ptx, "barrier.cluster.arrive"), 2);
      ck_assert_int_eq(rjt_count(ptx, "barrier.cluster.wait"), 2);
      ck_assert_int_eq(rjt_count(ptx, "barrier.cluster.arrive.relaxed"), g > 0);
      if (g == 0) ck_assert_ptr_nonnull(strstr(ptx, ".version 7.8"));
    }
  rj_ctx_free(ctx);
}
END_TEST

/* The PTX assembles with ptxas (when present) without spills. */
START_TEST(ptxas_clean) {
  const char *ptxas = "/usr/local/cuda/bin/ptxas";
  FILE *f = fopen(ptxas, "r");
  if (!f) return;
  fclose(f);
  rj_ctx *ctx = rj_ctx_new();
  const char *reqs[] = {
      T0 "\"shape\":[268435456]}",
      "{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"bf16\",\"shape\":[1024,32768],\"axes\":[0]}",
      "{\"kind\":\"tensor\",\"op\":\"min\",\"dtype\":\"f64\",\"shape\":[65536,128],\"axes\":[1],\"accum\":true}",
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f16\",\"shape\":[7,9,11],\"axes\":[0,2],\"nan\":\"ignore\"}",
      "{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"bf16\",\"shape\":[400003],\"accum\":true,\"nan\":\"ignore\"}",
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"u64\",\"shape\":[100003]}",
      "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[32,4194304],\"axes\":[1]}",
      /* runtime-size kernels: rows buckets (no spills), column buckets (they assemble; the vector
       * ones spill a few bytes at 64 registers, docs/TENSOR.md) */
      D0 "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[268435456]}",
      D0 "\"op\":\"max\",\"dtype\":\"bf16\",\"shape\":[4096,4096],\"axes\":[1],\"nan\":\"ignore\"}",
      D0 "\"op\":\"min\",\"dtype\":\"f64\",\"shape\":[65536,128],\"axes\":[1],\"accum\":true}",
      D0 "\"op\":\"sum\",\"dtype\":\"i64\",\"shape\":[128,65536],\"axes\":[1]}",
      D0 "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[1,65536]}",
      D0 "\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[0]}",
      D0 "\"op\":\"max\",\"dtype\":\"bf16\",\"shape\":[1024,32768],\"axes\":[0]}",
      D0 "\"op\":\"sum\",\"dtype\":\"u64\",\"shape\":[30011,77],\"axes\":[0]}"};
  for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
    const char *ptx = rjt_ptx_raw(ctx, reqs[i], "sm_90");
    char path[] = "/tmp/rjt_tensor_XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    FILE *o = fdopen(fd, "w");
    fputs(ptx, o);
    fclose(o);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s -arch=sm_90 -v %s -o /dev/null 2>&1", ptxas, path);
    FILE *p = popen(cmd, "r");
    char out[4096] = "";
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int rc = pclose(p);
    remove(path);
    ck_assert_msg(rc == 0, "ptxas failed on %s:\n%s", reqs[i], out);
    if (!(strstr(reqs[i], "\"dynamic\":true") && strstr(reqs[i], "\"axes\":[0]}")))
      ck_assert_msg(strstr(out, "0 bytes spill stores"), "spills in %s:\n%s", reqs[i], out);
  }
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(reduce_args) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rjt_parse(ctx, T0 "\"shape\":[1024]}", &r);
  rj_devptr x = 256; /* any aligned non-zero address: every call fails before using it */
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, 0, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "src: NULL"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, x, 0, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "dst: NULL"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_reduce(ctx, NULL, NULL, x, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "request: NULL"), "%s", rj_errmsg(ctx));
  rj_request tile;
  rj_request_init(&tile, RJ_KIND_TILE);
  ck_assert_int_eq(rj_reduce(ctx, &tile, NULL, x, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "kind"), "%s", rj_errmsg(ctx));
  r.u.tensor.shape[0] = -1; /* built in C: validated the same way */
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, x, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "shape[0]"), "%s", rj_errmsg(ctx));
  r.u.tensor.dynamic = 1; /* dynamic requests are validated on every call too */
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, x, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "shape[0]"), "%s", rj_errmsg(ctx));
  r.u.tensor.shape[0] = 1024;
  r.u.tensor.dynamic = 2;
  ck_assert_int_eq(rj_reduce(ctx, &r, NULL, x, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "dynamic"), "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

/* rj_tensor_launch's refusals (every one before the driver), and the driver's absence. */
START_TEST(tensor_launch_args) {
  rj_ctx *ctx = rj_ctx_new();
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_request r, tile, dyn;
  rjt_parse(ctx, T0 "\"shape\":[64,32],\"axes\":[1]}", &r);
  rjt_parse(ctx, T0 "\"shape\":[64,32],\"axes\":[1],\"dynamic\":true}", &dyn);
  rjt_parse(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"i32\",\"scope\":\"warp\",\"src\":{"
      "\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],\"stride\":[\"1@lane\",1]}},"
      "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],"
      "\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0,1]}",
      &tile);
  rj_kernel *k = NULL, *kt = NULL, *kd = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_OK);
  ck_assert_int_eq(rj_compile(ctx, &tile, &o, &kt), RJ_OK);
  ck_assert_int_eq(rj_compile(ctx, &dyn, &o, &kd), RJ_OK);
  rj_devptr x = 256; /* any aligned non-zero address: every call below fails before using it */
  ck_assert_int_eq(rj_tensor_launch(NULL, k, 0, x, x, NULL), RJ_EINVAL);
  ck_assert_int_eq(rj_tensor_launch(ctx, NULL, 0, x, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "kernel: NULL"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_tensor_launch(ctx, kt, 0, x, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "not compiled from a tensor request"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_tensor_launch(ctx, kd, 0, x, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "runtime-size"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_tensor_launch(ctx, k, 0, 0, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "src: NULL"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_tensor_launch(ctx, k, 0, x, 0, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "dst: NULL"), "%s", rj_errmsg(ctx));
  rj_ctx *other = rj_ctx_new(); /* a kernel of one context is not launched through another */
  ck_assert_int_eq(rj_tensor_launch(other, k, 0, x, x, NULL), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(other), "another context"), "%s", rj_errmsg(other));
  rj_ctx_free(other);
  int n = 0;
  if (rj_device_count(ctx, &n) != RJ_OK) { /* no driver: the launch says so */
    ck_assert_int_eq(rj_tensor_launch(ctx, k, 0, x, x, NULL), RJ_ENODEV);
    ck_assert_msg(rj_errmsg(ctx)[0], "no message");
  } else { /* a GPU: an ordinal it lacks is refused before any launch */
    ck_assert_int_eq(rj_tensor_launch(ctx, k, n, x, x, NULL), RJ_ENODEV);
    ck_assert_msg(strstr(rj_errmsg(ctx), "no GPU"), "%s", rj_errmsg(ctx));
  }
  rj_ctx_free(ctx);
}
END_TEST

/* The CLI: an invalid tensor request is exit status 2 with a JSON error line. */
START_TEST(cli_status) {
  const char *cli = getenv("REDJIT_CLI") ? getenv("REDJIT_CLI") : REDJIT_CLI_BUILT;
  char cmd[1024];
  snprintf(
      cmd, sizeof cmd,
      "%s run '{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,8],\"axes\":[1,1]}' "
      ">/dev/null 2>&1",
      cli);
  int rc = system(cmd);
  ck_assert_int_eq(WEXITSTATUS(rc), 2);
}
END_TEST

/* Negative axes are counted from the end in the canonical text, so axis -1 and axis ndim - 1 are
 * one request and one kernel. */
START_TEST(negative_axes_canonical) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request neg, pos;
  rjt_parse(ctx, T0 "\"shape\":[4,6,8],\"axes\":[-3,-1]}", &neg);
  rjt_parse(ctx, T0 "\"shape\":[4,6,8],\"axes\":[0,2]}", &pos);
  const char *c = NULL;
  ck_assert_int_eq(rj_request_canonical(ctx, &neg, &c), RJ_OK);
  ck_assert_msg(strstr(c, "\"axes\":[0,2]"), "%s", c);
  rj_kernel *a = NULL, *b = NULL;
  ck_assert_int_eq(rj_compile(ctx, &neg, NULL, &a), RJ_OK);
  ck_assert_int_eq(rj_compile(ctx, &pos, NULL, &b), RJ_OK);
  ck_assert_ptr_eq(a, b);
  ck_assert_int_eq(rjt_made(ctx), 1);
  rj_ctx_free(ctx);
}
END_TEST

/* ---- runtime-size kernels ("dynamic": true) */

START_TEST(dynamic_field) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rjt_parse(ctx, T0 "\"shape\":[4,8],\"axes\":[1]}", &r);
  ck_assert_int_eq(r.u.tensor.dynamic, 0); /* default, and absent from the canonical text */
  const char *c = NULL;
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
  ck_assert_msg(!strstr(c, "dynamic"), "%s", c);
  rjt_parse(ctx, T0 "\"shape\":[4,8],\"axes\":[1],\"dynamic\":true}", &r);
  ck_assert_int_eq(r.u.tensor.dynamic, 1);
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &c), RJ_OK);
  ck_assert_msg(strstr(c, "\"dynamic\":true"), "%s", c);
  rj_request again; /* the canonical text parses back to the same request */
  char copy[2048];
  snprintf(copy, sizeof copy, "%s", c);
  rjt_parse(ctx, copy, &again);
  ck_assert_int_eq(again.u.tensor.dynamic, 1);
  rj_request_init(&r, RJ_KIND_TENSOR); /* built in C */
  ck_assert_int_eq(r.u.tensor.dynamic, 0);
  r.u.tensor.op = RJ_OP_SUM;
  r.u.tensor.dtype = RJ_F32;
  r.u.tensor.ndim = 1;
  r.u.tensor.shape[0] = 10;
  r.u.tensor.naxes = 1;
  r.u.tensor.dynamic = 3;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "dynamic"), "%s", rj_errmsg(ctx));
  r.u.tensor.dynamic = 1;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_OK);
  rj_ctx_free(ctx);
}
END_TEST

/* n occurs in text as a number of its own (not inside a longer number or a register name) */
/* Whether n appears as a number in the PTX's code: the header comment lines ("// redjit: ...",
 * which name the request and its sizes) are not code. */
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

/* The PTX of a dynamic kernel has its sizes as parameters, not as constants: the numbers of the
 * shape (and their byte sizes) do not occur in it, while the constant kernel of the same request
 * has them. */
START_TEST(dynamic_ptx_has_no_sizes) {
  rj_ctx *ctx = rj_ctx_new();
  static const struct {
    const char *frag;
    long long nums[4];
    int params;
  } c[] = {
      {"\"shape\":[77773,131],\"axes\":[1]", {77773, 131, 524}, 7},           /* rows lanes */
      {"\"shape\":[37,300007],\"axes\":[1]", {37, 300007, 1200028}, 7},       /* rows split */
      {"\"shape\":[3000017]", {3000017, 12000068}, 7},                        /* 1-D split */
      {"\"shape\":[4093,4100],\"axes\":[0]", {4093, 4100, 16400}, 11},        /* cols vector */
      {"\"shape\":[30011,77],\"axes\":[0]", {30011, 77, 308}, 11},            /* cols scalar */
      {"\"shape\":[5,1003,700],\"axes\":[1]", {1003, 700, 2800, 702100}, 11}, /* middle */
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    char dyn[256], cst[256];
    snprintf(dyn, sizeof dyn, D0 "\"op\":\"sum\",\"dtype\":\"f32\",%s}", c[i].frag);
    snprintf(cst, sizeof cst, T0 "%s}", c[i].frag);
    const char *ptx = rjt_ptx(ctx, dyn, "sm_90");
    char last[64], over[64];
    snprintf(last, sizeof last, "redjit_tensor_param_%d", c[i].params - 1);
    snprintf(over, sizeof over, "redjit_tensor_param_%d", c[i].params);
    ck_assert_msg(strstr(ptx, last) && !strstr(ptx, over), "%s: expected %d params", dyn,
                  c[i].params);
    for (int k = 0; k < 4 && c[i].nums[k]; k++)
      ck_assert_msg(!has_number(ptx, c[i].nums[k]), "%s: %lld is baked into the PTX", dyn,
                    c[i].nums[k]);
    const char *cp = rjt_ptx(ctx, cst, "sm_90");
    bool any = false;
    for (int k = 0; k < 4 && c[i].nums[k]; k++)
      any |= has_number(cp, c[i].nums[k]);
    ck_assert_msg(any, "%s: the constant kernel shows none of the sizes (test is blind)", cst);
    ck_assert_msg(!strstr(cp, "redjit_tensor_param_2"), "%s: constant kernel with params", cst);
  }
  rj_ctx_free(ctx);
}
END_TEST

static rj_kernel *compile_k(rj_ctx *ctx, const char *json) {
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

/* Two shapes of one bucket share one compiled kernel; another bucket, dtype, op or flag is a new
 * one; constant requests compile per shape. */
START_TEST(dynamic_shares_kernels) {
  rj_ctx *ctx = rj_ctx_new();
  long long n0 = rjt_made(ctx);
#define F32S D0 "\"op\":\"sum\",\"dtype\":\"f32\","
  rj_kernel *a = compile_k(ctx, F32S "\"shape\":[4099,33],\"axes\":[1]}");
  ck_assert_int_eq(rjt_made(ctx), n0 + 1);
  rj_kernel *b = compile_k(ctx, F32S "\"shape\":[5003,35],\"axes\":[1]}"); /* lanes G = 4 */
  ck_assert_ptr_eq(a, b);
  ck_assert_int_eq(rjt_made(ctx), n0 + 1);
  /* a transposed view reduced along its unit-stride dim: rows, same bucket */
  rj_kernel *b2 = compile_k(ctx, F32S "\"shape\":[33,4099],\"strides\":[1,40],\"axes\":[0]}");
  ck_assert_ptr_eq(a, b2);
  rj_kernel *c = compile_k(ctx, F32S "\"shape\":[1000003]}"); /* rows split T = 512 */
  rj_kernel *d = compile_k(ctx, F32S "\"shape\":[3,2000003],\"axes\":[1]}");
  ck_assert_ptr_ne(a, c);
  ck_assert_ptr_eq(c, d);
  rj_kernel *e = compile_k(ctx, F32S "\"shape\":[4096,4096],\"axes\":[0]}"); /* cols vector */
  rj_kernel *f = compile_k(ctx, F32S "\"shape\":[4000,4100],\"axes\":[0]}");
  rj_kernel *g = compile_k(ctx, F32S "\"shape\":[2,3000,2052],\"axes\":[1]}");
  ck_assert_ptr_eq(e, f);
  ck_assert_ptr_eq(e, g);
  ck_assert_int_eq(rjt_made(ctx), n0 + 3);
  compile_k(ctx, D0 "\"op\":\"max\",\"dtype\":\"f32\",\"shape\":[5003,35],\"axes\":[1]}");
  compile_k(ctx, D0 "\"op\":\"sum\",\"dtype\":\"f64\",\"shape\":[5003,35],\"axes\":[1]}");
  compile_k(ctx, F32S "\"accum\":true,\"shape\":[5003,35],\"axes\":[1]}");
  ck_assert_int_eq(rjt_made(ctx), n0 + 6);
  compile_k(ctx, T0 "\"shape\":[4099,33],\"axes\":[1]}");
  compile_k(ctx, T0 "\"shape\":[5003,35],\"axes\":[1]}");
  ck_assert_int_eq(rjt_made(ctx), n0 + 8);
  /* generic views keep constant kernels, one per shape */
  rj_kernel *g1 = compile_k(ctx, F32S "\"shape\":[4,5,6],\"axes\":[0,2]}");
  rj_kernel *g2 = compile_k(ctx, F32S "\"shape\":[4,5,7],\"axes\":[0,2]}");
  ck_assert_ptr_ne(g1, g2);
  ck_assert_str_eq(rj_kernel_variant(g1), "tensor_generic");
  ck_assert_msg(!strstr(rj_kernel_text(g1, RJ_EMIT_PTX), "redjit_tensor_param_2"), "params");
  ck_assert_int_eq(rjt_made(ctx), n0 + 10);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(dynamic_explain) {
  rj_ctx *ctx = rj_ctx_new();
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_request r;
  const char *text = NULL;
  rjt_parse(ctx, F32S "\"shape\":[4099,33],\"axes\":[1]}", &r);
  ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_OK);
  ck_assert_msg(
      strstr(text, "tensor_rows prio=30 chosen (dynamic: bucket \"rows lanes T=256 G=4 U=8 r=64\""),
      "%s", text);
  ck_assert_msg(strstr(text, "M N RS S chunk are kernel parameters"), "%s", text);
  /* one line per variant, then the invariance line */
  ck_assert_int_eq(rjt_count(text, "\n"), rj_variant_count(ctx) + 1);
  ck_assert_msg(strstr(text, "\ninvariant: no (tensor_rows"), "%s", text);
  rjt_parse(ctx, F32S "\"shape\":[4096,4096],\"axes\":[0]}", &r);
  ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_OK);
  ck_assert_msg(strstr(text, "bucket \"cols vector BX=32 split\""), "%s", text);
  /* the plans' register and lane choices (docs/TENSOR.md, tensor_rows): many rows of 4096 f32
   * take a CTA each, an argmax a warp; an f32 norm streams at 64 registers, a fused input from
   * 2^26 elements too, below it at 32 */
  static const char *const plans[][2] = {
      {"\"op\":\"sum\",\"shape\":[4096,4096],\"axes\":[1]", "\"rows cta T=128 G=128 U=8 r=64\""},
      {"\"op\":\"argmax\",\"shape\":[4096,4096],\"axes\":[1]", "\"rows lanes T=256 G=32"},
      {"\"op\":\"norm\",\"shape\":[268435456]", "U=4 r=64\""},
      {"\"op\":\"sum\",\"shape\":[268435456]", "U=4 r=32\""},
      {"\"op\":\"sum\",\"map\":\"where\",\"others\":[{\"dtype\":\"u8\"}],\"shape\":[67108864]",
       "U=4 r=64\""},
      {"\"op\":\"sum\",\"map\":\"where\",\"others\":[{\"dtype\":\"u8\"}],\"shape\":[67108863]",
       "U=4 r=32\""}};
  for (int i = 0; i < 6; i++) {
    char json[256];
    snprintf(json, sizeof json, "{\"kind\":\"tensor\",\"dtype\":\"f32\",\"dynamic\":true,%s}",
             plans[i][0]);
    rjt_parse(ctx, json, &r);
    ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_OK);
    ck_assert_msg(strstr(text, plans[i][1]), "%s: %s", json, text);
  }
  rjt_parse(ctx, F32S "\"shape\":[4,5,6],\"axes\":[0,2]}", &r);
  ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_OK);
  ck_assert_msg(strstr(text, "tensor_generic prio=5 chosen (dynamic: constant kernel"), "%s", text);
  rjt_parse(ctx, T0 "\"shape\":[4099,33],\"axes\":[1]}", &r); /* not dynamic: unchanged */
  ck_assert_int_eq(rj_explain(ctx, &r, &o, &text), RJ_OK);
  ck_assert_msg(strstr(text, "tensor_rows prio=30 chosen\n"), "%s", text);
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("tensor");
  TCase *tc = tcase_create("tensor");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, invalid, 0, (int)(sizeof bad / sizeof bad[0]));
  tcase_add_test(tc, dispatch);
  tcase_add_test(tc, dispatch_cols_routing);
  tcase_add_test(tc, ptx_properties);
  tcase_add_test(tc, loads_skip_l1);
  tcase_add_test(tc, cluster);
  tcase_add_test(tc, cluster_started_before_remote_store);
  tcase_add_test(tc, ptxas_clean);
  tcase_add_test(tc, reduce_args);
  tcase_add_test(tc, tensor_launch_args);
  tcase_add_test(tc, cli_status);
  tcase_add_test(tc, dynamic_field);
  tcase_add_test(tc, dynamic_ptx_has_no_sizes);
  tcase_add_test(tc, dynamic_shares_kernels);
  tcase_add_test(tc, dynamic_explain);
  tcase_add_test(tc, negative_axes_canonical);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
