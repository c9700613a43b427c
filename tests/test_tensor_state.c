/* The state ops (argmax argmin var std logsumexp) in tensor requests, with no GPU: which variants
 * serve them (tensor_cluster declines, saying so), the refusals naming the field (accum,
 * correction, dtype), the PTX of their combines (the select on the index, var's division,
 * logsumexp's exp without a library call), 8-byte index stores, no float atomics, and that the
 * correction is part of a kernel's identity. */
#include "rjtest.h"

#include <stdbool.h>

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
  /* a 1-D size tensor_cluster takes for sum: declined for the state ops, by name */
  for (int o = 0; o < NSOPS; o++) {
    char req[256];
    snprintf(req, sizeof req,
             "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"f32\",\"shape\":[65540]}", sops[o]);
    const char *text = explain(ctx, req);
    char want[128];
    snprintf(want, sizeof want, "tensor_cluster prio=35 rejected: does not serve op \"%s\"",
             sops[o]);
    ck_assert_msg(strstr(text, want), "%s", text);
    ck_assert_msg(strstr(text, "tensor_rows prio=30 chosen"), "%s", text);
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
        const char *ptx = rjt_ptx(ctx, req, "sm_90");
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

int main(void) {
  Suite *s = suite_create("tensor_state");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, dispatch_each_op);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, ptx_shape);
  tcase_add_test(tc, split_paths);
  tcase_add_test(tc, correction_in_key);
  tcase_add_test(tc, ptxas_clean);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
