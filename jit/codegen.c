/* Codegen: from a lowered module to PTX.  Resolves the target and the PTX version, keeps the
 * target machines, verifies, prints the IR text, runs the optimisation pipeline and emits PTX. */
#include "jit.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRIPLE "nvptx64-nvidia-cuda"

/* ---------------------------------------------------------------- targets */

rj_status jit_target(rj_ctx *ctx, const rj_options *opt, const ir_target **out) {
  const char *name = opt && opt->target ? opt->target : "auto";
  char buf[16];
  if (strcmp(name, "auto") == 0) {
    name = "sm_90"; /* no GPU usable: the default */
    rt_cuda *rt = NULL;
    ir_err saved = ctx->err;
    int major = 0, minor = 0;
    if (jit_cuda(ctx, &rt) == RJ_OK &&
        rt_device_cc(rt, opt ? opt->device : 0, &major, &minor, &ctx->err) == RJ_OK) {
      snprintf(buf, sizeof buf, "sm_%d%da", major, minor);
      if (!ir_target_find(buf)) snprintf(buf, sizeof buf, "sm_%d%d", major, minor);
      name = buf;
    }
    ctx->err = saved;
    if (!ir_target_find(name))
      return ir_fail(&ctx->err, RJ_ETARGET,
                     "target: the GPU's compute capability (%s) is not in redjit's target table",
                     name);
  }
  *out = ir_target_find(name);
  if (*out && opt && opt->struct_size >= offsetof(rj_options, emulate_packed) + sizeof(int) &&
      opt->emulate_packed)
    *out = ir_target_emulating(*out);
  if (!*out) {
    char known[512];
    size_t k = 0;
    for (int i = 0; i < ir_target_count() && k < sizeof known - 16; i++)
      k += (size_t)snprintf(known + k, sizeof known - k, " %s", ir_target_at(i)->name);
    return ir_fail(&ctx->err, RJ_ETARGET, "target: unknown target \"%.32s\" (known:%s)", name,
                   known);
  }
  return RJ_OK;
}

RJ_API rj_status rj_target_resolve(rj_ctx *ctx, const rj_options *opt, char *buf, size_t len) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, buf && len, "buf");
  memset(&ctx->err, 0, sizeof ctx->err);
  const ir_target *t = NULL;
  rj_status s = jit_target(ctx, opt, &t);
  if (!s) snprintf(buf, len, "%s", t->name);
  return jit_done(ctx, s);
}

/* The PTX version: the caller's, or the least the target and the emitted code need.  Every
 * combination LLVM would abort on is refused here, before codegen. */
rj_status jit_pick_ptx(rj_ctx *ctx, const ir_target *t, const rj_options *opt, int needed,
                       int *ptx) {
  static const int known[] = {32, 40, 41, 42, 43, 50, 60, 61, 62, 63, 64, 65, 70, 71, 72, 73,
                              74, 75, 76, 77, 78, 80, 81, 82, 83, 84, 85, 86, 87, 88, 90};
  int want = opt ? opt->ptx_version : 0;
  int least = needed > t->min_ptx ? needed : t->min_ptx;
  if (!want) {
    *ptx = least;
    return RJ_OK;
  }
  bool ok = false;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    ok |= known[i] == want;
  if (!ok)
    return ir_fail(&ctx->err, RJ_ETARGET, "ptx_version: %d is not a PTX ISA version LLVM 22 emits",
                   want);
  if (want < t->min_ptx)
    return ir_fail(&ctx->err, RJ_ETARGET,
                   "ptx_version: PTX %d.%d does not support target %s (it needs PTX %d.%d)",
                   want / 10, want % 10, t->name, t->min_ptx / 10, t->min_ptx % 10);
  if (want < needed)
    return ir_fail(&ctx->err, RJ_ETARGET,
                   "ptx_version: PTX %d.%d is too old for the instructions this kernel uses "
                   "(they need PTX %d.%d)",
                   want / 10, want % 10, needed / 10, needed % 10);
  *ptx = want;
  return RJ_OK;
}

static rj_status target_machine(rj_ctx *ctx, const ir_target *t, int ptx,
                                LLVMTargetMachineRef *out) {
  for (int i = 0; i < ctx->ntms; i++)
    if (ctx->tms[i].ptx == ptx && strcmp(ctx->tms[i].target, t->name) == 0) {
      *out = ctx->tms[i].tm;
      return RJ_OK;
    }
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(TRIPLE, &target, &msg)) {
    rj_status s = ir_fail(&ctx->err, RJ_ELLVM, "LLVM: %s", msg ? msg : "no NVPTX target");
    LLVMDisposeMessage(msg);
    return s;
  }
  char features[16];
  snprintf(features, sizeof features, "+ptx%d", ptx);
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(target, TRIPLE, t->name, features, LLVMCodeGenLevelAggressive,
                              LLVMRelocDefault, LLVMCodeModelDefault);
  if (!tm)
    return ir_fail(&ctx->err, RJ_ELLVM, "LLVM: cannot create a target machine for %s", t->name);
  if (ctx->ntms == (int)(sizeof ctx->tms / sizeof ctx->tms[0])) { /* full: drop the oldest */
    LLVMDisposeTargetMachine(ctx->tms[0].tm);
    memmove(ctx->tms, ctx->tms + 1, sizeof ctx->tms[0] * (size_t)(ctx->ntms - 1));
    ctx->ntms--;
  }
  jit_tm *slot = &ctx->tms[ctx->ntms++];
  snprintf(slot->target, sizeof slot->target, "%s", t->name);
  slot->ptx = ptx;
  slot->tm = tm;
  *out = tm;
  return RJ_OK;
}

/* ---------------------------------------------------------------- stages */

static char *module_text(LLVMModuleRef M) {
  char *s = LLVMPrintModuleToString(M), *copy = strdup(s);
  LLVMDisposeMessage(s);
  return copy;
}

static rj_status verify(rj_ctx *ctx, LLVMModuleRef M, bool theirs) {
  char *msg = NULL;
  if (LLVMVerifyModule(M, LLVMReturnStatusAction, &msg)) {
    rj_status s =
        theirs ? ir_fail(&ctx->err, RJ_EINVAL, "ir: the module does not verify: %.700s", msg)
               : ir_fail(&ctx->err, RJ_ELLVM, "internal: LLVM IR does not verify: %.700s", msg);
    LLVMDisposeMessage(msg);
    return s;
  }
  LLVMDisposeMessage(msg);
  return RJ_OK;
}

static rj_status emit_ptx(rj_ctx *ctx, LLVMTargetMachineRef tm, LLVMModuleRef M, char **ptx) {
  char *msg = NULL;
  LLVMMemoryBufferRef buf = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, M, LLVMAssemblyFile, &msg, &buf)) {
    rj_status s = ir_fail(&ctx->err, RJ_ELLVM, "internal: NVPTX codegen failed: %s", msg);
    LLVMDisposeMessage(msg);
    return s;
  }
  size_t n = LLVMGetBufferSize(buf);
  *ptx = malloc(n + 1);
  if (*ptx) {
    memcpy(*ptx, LLVMGetBufferStart(buf), n);
    (*ptx)[n] = 0;
  }
  LLVMDisposeMemoryBuffer(buf);
  return *ptx ? RJ_OK : ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
}

/* The pipeline after lowering: LLVM's O3 through the new pass manager, with the target machine
 * so that NVPTX's own passes and cost model take part. */
static rj_status optimize(rj_ctx *ctx, LLVMModuleRef M, LLVMTargetMachineRef tm) {
  LLVMPassBuilderOptionsRef o = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(M, "default<O3>", tm, o);
  LLVMDisposePassBuilderOptions(o);
  if (err) {
    char *m = LLVMGetErrorMessage(err);
    ir_fail(&ctx->err, RJ_ELLVM, "internal: LLVM optimisation failed: %s", m);
    LLVMDisposeErrorMessage(m);
    return RJ_ELLVM;
  }
  return RJ_OK;
}

rj_status jit_codegen(rj_ctx *ctx, LLVMModuleRef M, const ir_target *tg, rj_kernel *k,
                      bool theirs) {
  LLVMTargetMachineRef tm = NULL;
  rj_status s = target_machine(ctx, tg, k->ptx_version, &tm);
  if (s) return s;
  LLVMSetTarget(M, TRIPLE);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(M, dl);
  LLVMDisposeTargetData(dl);
  if ((s = verify(ctx, M, theirs))) return s;
  if (!(k->ll = module_text(M))) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  ctx->llvm_diag[0] = 0;
  if ((s = optimize(ctx, M, tm))) return s;
  if (!(k->ll_opt = module_text(M))) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  s = emit_ptx(ctx, tm, M, &k->ptx);
  if (!s && ctx->llvm_diag[0]) /* an error LLVM diagnosed but carried on past */
    s = ir_fail(&ctx->err, theirs ? RJ_EUNSUPPORTED : RJ_ELLVM, "%sLLVM: %s",
                theirs ? "ir: " : "internal: ", ctx->llvm_diag);
  return s;
}
