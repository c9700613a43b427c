/* The compiler library's entry (libredjit-llvm.so.VERSION exports rj_compiler_v1 alone): one-time
 * NVPTX registration, the context's LLVM (struct jit_llvm) made on its first compile, and the
 * table. */
#include "llvm.h"

#include <llvm-c/Target.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

static void llvm_init_once(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  jit_llvm_tune();
}

/* LLVMContext's default diagnostic handler exits the process on an error ("no libcall available
 * for ..."): this one records the first error for jit_codegen to report as a status instead. */
static void on_diagnostic(LLVMDiagnosticInfoRef info, void *opaque) {
  rj_ctx *ctx = opaque;
  if (LLVMGetDiagInfoSeverity(info) != LLVMDSError || ctx->llvm->diag[0]) return;
  char *text = LLVMGetDiagInfoDescription(info);
  snprintf(ctx->llvm->diag, sizeof ctx->llvm->diag, "%s", text ? text : "error");
  LLVMDisposeMessage(text);
}

/* The context's LLVM, made on its first compile. */
static rj_status begin(rj_ctx *ctx) {
  pthread_once(&llvm_once, llvm_init_once);
  if (ctx->llvm) return RJ_OK;
  struct jit_llvm *l = calloc(1, sizeof *l);
  if (!l || !(l->C = LLVMContextCreate()))
    return free(l), ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  ctx->llvm = l;
  LLVMContextSetDiagnosticHandler(l->C, on_diagnostic, ctx);
  return RJ_OK;
}

static rj_status lower(rj_ctx *ctx, const char *variant, const rj_request *req, const ir_target *tg,
                       const rj_options *opt, rj_kernel *k) {
  rj_status s = begin(ctx);
  return s ? s : jit_llvm_lower(ctx, variant, req, tg, opt, k);
}

static rj_status module(rj_ctx *ctx, const char *ir, size_t n, const char *entry,
                        const ir_target *tg, rj_kernel *k) {
  rj_status s = begin(ctx);
  return s ? s : jit_llvm_module(ctx, ir, n, entry, tg, k);
}

static rj_status combine(rj_ctx *ctx, const char *mod, size_t n, const char *ir, size_t irn,
                         const char *names, const ir_target *tg, rj_kernel *k) {
  rj_status s = begin(ctx);
  return s ? s : jit_llvm_combine(ctx, mod, n, ir, irn, names, tg, k);
}

static rj_status text(rj_ctx *ctx, const rj_kernel *k, const ir_target *tg, char **ll,
                      char **ll_opt) {
  rj_status s = begin(ctx);
  return s ? s : jit_llvm_text(ctx, k, tg, ll, ll_opt);
}

static void release(rj_ctx *ctx) {
  struct jit_llvm *l = ctx->llvm;
  if (!l) return;
  for (int i = 0; i < l->ntms; i++)
    jit_tm_dispose(&l->tms[i]);
  LLVMContextDispose(l->C);
  free(l);
  ctx->llvm = NULL;
}

__attribute__((visibility("default"))) const jit_compiler *rj_compiler_v1(void);
const jit_compiler *rj_compiler_v1(void) {
  static const jit_compiler table = {
      .abi = JIT_COMPILER_ABI,
      .major = RJ_VERSION_MAJOR,
      .minor = RJ_VERSION_MINOR,
      .patch = RJ_VERSION_PATCH,
      .ctx_size = sizeof(rj_ctx),
      .kernel_size = sizeof(rj_kernel),
      .request_size = sizeof(rj_request),
      .plan_size = sizeof(pass_plan),
      .target_size = sizeof(ir_target),
      .lower = lower,
      .module = module,
      .release = release,
      .combine = combine,
      .text = text,
  };
  return &table;
}
