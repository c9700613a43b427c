/* rj_compile_ir refuses, with a status, the caller IR that would make LLVM's NVPTX backend exit
 * the process (unselectable intrinsics, fp128 arithmetic), and compiles what it can select.  A
 * kernel's IR text, made when first asked, is the module its compile made. */
#include "rjtest.h"

static const char *module(const char *decl, const char *body) {
  return rjt_fmt("target triple = \"nvptx64-nvidia-cuda\"\n%s\n"
                 "define void @k(ptr addrspace(1) %%p, float %%a, i32 %%b) {\n%s\n  ret void\n}\n",
                 decl, body);
}

static rj_status compile(rj_ctx *ctx, const char *target, const char *ir, rj_kernel **k) {
  rj_options o;
  rj_options_init(&o);
  o.target = target;
  return rj_compile_ir(ctx, ir, 0, "k", &o, k);
}

START_TEST(refuses_what_would_exit) {
  rj_ctx *ctx = rj_ctx_new();
  rj_kernel *k;
  static const char *const intrinsics[][2] = {
      {"declare float @llvm.sin.f32(float)", "%r = call float @llvm.sin.f32(float %a)"},
      {"declare float @llvm.pow.f32(float, float)",
       "%r = call float @llvm.pow.f32(float %a, float %a)"},
      {"declare float @llvm.log2.f32(float)", "%r = call float @llvm.log2.f32(float %a)"},
      {"declare float @llvm.nvvm.redux.sync.fmax(float, i32)",
       "%r = call float @llvm.nvvm.redux.sync.fmax(float %a, i32 -1)"},
  };
  for (size_t i = 0; i < sizeof intrinsics / sizeof intrinsics[0]; i++) {
    char body[256];
    snprintf(body, sizeof body, "  %s\n  store float %%r, ptr addrspace(1) %%p", intrinsics[i][1]);
    ck_assert_int_eq(compile(ctx, "sm_90", module(intrinsics[i][0], body), &k), RJ_EUNSUPPORTED);
    ck_assert_msg(strstr(rj_errmsg(ctx), "ir: intrinsic llvm."), "%s", rj_errmsg(ctx));
  }
  ck_assert_int_eq(compile(ctx, "sm_90",
                           module("", "  %x = fpext float %a to fp128\n  %y = fadd fp128 %x, %x\n"
                                      "  %r = fptrunc fp128 %y to float\n"
                                      "  store float %r, ptr addrspace(1) %p"),
                           &k),
                   RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(rj_errmsg(ctx), "fp128"), "%s", rj_errmsg(ctx));
  static const char *const wide[] = {
      "  %z = fptoui float %a to i128\n  store i128 %z, ptr addrspace(1) %p",
      "  %w = sext i32 %b to i128\n  %z = sitofp i128 %w to float\n  store float %z, ptr addrspace(1) %p",
      "  %w = zext i32 %b to i128\n  %z = uitofp i128 %w to half\n  store half %z, ptr addrspace(1) %p",
      "  %z = fptosi float %a to i256\n  store i256 %z, ptr addrspace(1) %p",
  };
  for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++) {
    ck_assert_int_eq(compile(ctx, "sm_90", module("", wide[i]), &k), RJ_EUNSUPPORTED);
    ck_assert_msg(strstr(rj_errmsg(ctx), "wider than 64 bits"), "%s", rj_errmsg(ctx));
  }
  /* wide integer arithmetic itself compiles */
  ck_assert_int_eq(compile(ctx, "sm_90",
                           module("", "  %w = sext i32 %b to i128\n  %q = sdiv i128 %w, 7\n"
                                      "  store i128 %q, ptr addrspace(1) %p"),
                           &k),
                   RJ_OK);
  ck_assert_int_eq(compile(ctx, "sm_90", "this is not IR", &k), RJ_EINVAL);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(compiles_what_it_can) {
  rj_ctx *ctx = rj_ctx_new();
  rj_kernel *k;
  const char *redux = module("declare float @llvm.nvvm.redux.sync.fmax(float, i32)",
                             "  %r = call float @llvm.nvvm.redux.sync.fmax(float %a, i32 -1)\n"
                             "  store float %r, ptr addrspace(1) %p");
  ck_assert_int_eq(compile(ctx, "sm_100a", redux, &k), RJ_OK); /* the target has it */
  ck_assert_ptr_nonnull(strstr(rj_kernel_text(k, RJ_EMIT_PTX), "redux.sync.max.f32"));
  const char *math = module("declare float @llvm.sqrt.f32(float)\n"
                            "declare float @llvm.fma.f32(float, float, float)",
                            "  %s = call float @llvm.sqrt.f32(float %a)\n"
                            "  %r = call float @llvm.fma.f32(float %s, float %a, float %a)\n"
                            "  store float %r, ptr addrspace(1) %p");
  ck_assert_int_eq(compile(ctx, "sm_90", math, &k), RJ_OK);
  ck_assert_ptr_nonnull(strstr(rj_kernel_text(k, RJ_EMIT_PTX), "sqrt.rn.f32"));
  rj_ctx_free(ctx);
}
END_TEST

/* s past its "// redjit:" header lines (the header names the variant: "ir" for caller IR). */
static const char *body(const char *s) {
  while (strncmp(s, "// redjit:", 10) == 0 && strchr(s, '\n'))
    s = strchr(s, '\n') + 1;
  return s;
}

/* A compile makes the PTX alone; the IR text is made when first asked, by lowering the kernel
 * again.  It is the module the compile made: compiled as caller IR it gives the same PTX (a
 * kernel that dispatch chose only because packed instructions are emulated included, and a
 * tensor kernel with size parameters).  Asking leaves the context's last message alone. */
START_TEST(kernel_text_is_the_compiled_module) {
  static const struct {
    const char *target;
    int emulate;
    const char *json;
  } cases[] = {
      {"sm_90", 1,
       "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"thread\","
       "\"src\":{\"mem\":\"local\",\"shape\":[100]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}"},
      {"sm_80", 0,
       "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f16\",\"scope\":\"cta\",\"threads\":32,"
       "\"src\":{\"mem\":\"shared\",\"shape\":[32,32]},\"dst\":{\"mem\":\"shared\",\"shape\":[32]},"
       "\"axes\":[-1]}"},
      {"sm_90a", 0,
       "{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\",\"dtype\":\"f16\",\"threads\":128,"
       "\"blocks\":3,\"log2_size\":5}"},
      {"sm_90", 0,
       "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[64,4096],"
       "\"axes\":[1]}"},
      {"sm_100a", 0,
       "{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"f16\",\"shape\":[7,300,5],"
       "\"axes\":[1]}"},
  };
  rj_ctx *ctx = rj_ctx_new();
  rj_ctx_set_disk_cache(ctx, NULL);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rj_options o;
    rj_options_init(&o);
    o.target = cases[i].target;
    o.emulate_packed = cases[i].emulate;
    rj_request r;
    rjt_parse(ctx, cases[i].json, &r);
    rj_kernel *k = NULL, *again = NULL;
    ck_assert_int_eq(rj_compile(ctx, &r, &o, &k), RJ_OK);
    ck_assert_int_ne(rj_request_parse(ctx, "{\"kind\":7}", &r), RJ_OK); /* a message to keep */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", rj_errmsg(ctx));
    const char *ll = rj_kernel_text(k, RJ_EMIT_LLVM), *opt = rj_kernel_text(k, RJ_EMIT_LLVM_OPT);
    ck_assert_ptr_nonnull(ll);
    ck_assert_ptr_nonnull(opt);
    ck_assert_str_eq(rj_errmsg(ctx), msg);
    ck_assert_ptr_eq(rj_kernel_text(k, RJ_EMIT_LLVM), ll); /* made once */
    ck_assert_msg(strstr(ll, rjt_fmt("@%s(", rj_kernel_entry(k))), "%s", ll);
    ck_assert_msg(strcmp(ll, opt) != 0, "O3 changed nothing in case %zu", i);
    o.ir_in_process = 1;
    ck_assert_int_eq(rj_compile_ir(ctx, ll, 0, rj_kernel_entry(k), &o, &again), RJ_OK);
    ck_assert_str_eq(body(rj_kernel_text(again, RJ_EMIT_PTX)),
                     body(rj_kernel_text(k, RJ_EMIT_PTX)));
  }
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("compile_ir");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, refuses_what_would_exit);
  tcase_add_test(tc, compiles_what_it_can);
  tcase_add_test(tc, kernel_text_is_the_compiled_module);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
