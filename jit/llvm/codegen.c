/* Codegen: from a lowered module to PTX.  Keeps the target machines, verifies, runs the
 * optimisation pipeline and emits PTX; prints the IR text before and after optimisation where
 * asked (caller IR, op custom, REDJIT_DUMP_DIR, or a kernel's text asked for later) (the compiler
 * library; the target and the PTX version are resolved before, by jit/target.c and jit/ptx.c). */
#include "llvm.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRIPLE "nvptx64-nvidia-cuda"

/* ---------------------------------------------------------------- target machines */

static rj_status target_machine(rj_ctx *ctx, const ir_target *t, int ptx, jit_tm **out) {
  for (int i = 0; i < ctx->llvm->ntms; i++)
    if (ctx->llvm->tms[i].ptx == ptx && strcmp(ctx->llvm->tms[i].target, t->name) == 0) {
      *out = &ctx->llvm->tms[i];
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
  /* Codegen at the default level: NVPTX's Aggressive level differs in running GVN where Default
   * runs EarlyCSE (twice, in its IR passes), a third of codegen's time for the same code
   * (docs/PERFORMANCE.md, "Cache misses: where the time goes").  The IR pipeline stays O3. */
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(target, TRIPLE, t->name, features, LLVMCodeGenLevelDefault,
                              LLVMRelocDefault, LLVMCodeModelDefault);
  if (!tm)
    return ir_fail(&ctx->err, RJ_ELLVM, "LLVM: cannot create a target machine for %s", t->name);
  if (ctx->llvm->ntms ==
      (int)(sizeof ctx->llvm->tms / sizeof ctx->llvm->tms[0])) { /* full: drop the oldest */
    jit_tm_dispose(&ctx->llvm->tms[0]);
    memmove(ctx->llvm->tms, ctx->llvm->tms + 1,
            sizeof ctx->llvm->tms[0] * (size_t)(ctx->llvm->ntms - 1));
    ctx->llvm->ntms--;
  }
  jit_tm *slot = &ctx->llvm->tms[ctx->llvm->ntms++];
  snprintf(slot->target, sizeof slot->target, "%s", t->name);
  slot->ptx = ptx;
  slot->tm = tm;
  slot->emitter = NULL;
  slot->no_emitter = false;
  *out = slot;
  return RJ_OK;
}

void jit_tm_dispose(jit_tm *t) {
  jit_emitter_free(t->emitter); /* before the target machine its passes refer to */
  t->emitter = NULL;
  LLVMDisposeTargetMachine(t->tm);
}

/* ---------------------------------------------------------------- stages */

double jit_llvm_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

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

/* M's PTX through t's kept pipeline (made on first use), or through a fresh one where that cannot
 * take M (emitter.cpp says which) or could not be made. */
static rj_status emit_ptx(rj_ctx *ctx, jit_tm *t, LLVMModuleRef M, char **ptx) {
  if (!t->emitter && !t->no_emitter) t->no_emitter = !(t->emitter = jit_emitter_new(t->tm));
  int r = t->emitter ? jit_emitter_run(t->emitter, M, ptx) : 1;
  if (r < 0) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (r == 0) return RJ_OK;
  LLVMTargetMachineRef tm = t->tm;
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
                      unsigned how) {
  jit_tm *t = NULL;
  bool theirs = how & JIT_CG_THEIRS, text = how & JIT_CG_TEXT;
  rj_status s = target_machine(ctx, tg, k->ptx_version, &t);
  if (s) return s;
  LLVMTargetMachineRef tm = t->tm;
  LLVMSetTarget(M, TRIPLE);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(M, dl);
  LLVMDisposeTargetData(dl);
  double t0 = jit_llvm_now_ms();
  if ((s = verify(ctx, M, theirs))) return s;
  k->stage_ms[1] += jit_llvm_now_ms() - t0;
  if (text && !(k->ll = module_text(M))) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  ctx->llvm->diag[0] = 0;
  t0 = jit_llvm_now_ms();
  if ((s = optimize(ctx, M, tm))) return s;
  k->stage_ms[2] += jit_llvm_now_ms() - t0;
  if (text && !(k->ll_opt = module_text(M))) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (how & JIT_CG_NO_PTX) return RJ_OK;
  t0 = jit_llvm_now_ms();
  s = emit_ptx(ctx, t, M, &k->ptx);
  k->stage_ms[3] += jit_llvm_now_ms() - t0;
  if (ctx->llvm->diag[0] && t->emitter) { /* a kept pipeline is not reused after an error */
    jit_emitter_free(t->emitter);
    t->emitter = NULL;
  }
  if (!s && ctx->llvm->diag[0]) /* an error LLVM diagnosed but carried on past */
    s = ir_fail(&ctx->err, theirs ? RJ_EUNSUPPORTED : RJ_ELLVM, "%sLLVM: %s",
                theirs ? "ir: " : "internal: ", ctx->llvm->diag);
  return s;
}
