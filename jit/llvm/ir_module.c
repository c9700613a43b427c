/* A caller's module compiled in this process (the compiler library's side of rj_compile_ir, which
 * jit/compile_ir.c calls, in the caller's process or in redjit-irc): parse, refuse what would make
 * LLVM's backend end the process, codegen. */
#include "llvm.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/IRReader.h>
#include <stdio.h>
#include <string.h>

/* Intrinsics NVPTX selects on every target in the table (checked with llc 22.1.8).  Anything
 * else is refused before codegen: some (llvm.sin, llvm.pow, redux.sync.f32 on sm_90 ...) make
 * LLVM's backend exit the process, which no status can report. */
static const char *const selectable[] = {
    "llvm.sqrt.",
    "llvm.fma.",
    "llvm.fmuladd.",
    "llvm.fabs.",
    "llvm.copysign.",
    "llvm.floor.",
    "llvm.ceil.",
    "llvm.trunc.",
    "llvm.rint.",
    "llvm.nearbyint.",
    "llvm.round.",
    "llvm.roundeven.",
    "llvm.minnum.",
    "llvm.maxnum.",
    "llvm.minimum.",
    "llvm.maximum.",
    "llvm.ctpop.",
    "llvm.ctlz.",
    "llvm.cttz.",
    "llvm.bswap.",
    "llvm.bitreverse.",
    "llvm.abs.",
    "llvm.smax.",
    "llvm.smin.",
    "llvm.umax.",
    "llvm.umin.",
    "llvm.fshl.",
    "llvm.fshr.",
    "llvm.memcpy.",
    "llvm.memset.",
    "llvm.memmove.",
    "llvm.lifetime.",
    "llvm.assume",
    "llvm.expect.",
    "llvm.dbg.",
    "llvm.nvvm.read.ptx.sreg.",
    "llvm.nvvm.shfl.sync.",
    "llvm.nvvm.barrier",
    "llvm.nvvm.bar.warp.sync",
    "llvm.nvvm.membar.",
    "llvm.nvvm.vote.",
};

rj_status jit_ir_check_intrinsics(rj_ctx *ctx, LLVMModuleRef M, const ir_target *tg) {
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f)) {
    size_t n = 0;
    const char *name = LLVMGetValueName2(f, &n);
    if (strncmp(name, "llvm.", 5) != 0) continue;
    bool ok = false;
    for (size_t i = 0; i < sizeof selectable / sizeof selectable[0] && !ok; i++)
      ok = strncmp(name, selectable[i], strlen(selectable[i])) == 0;
    if (!ok && strncmp(name, "llvm.nvvm.redux.sync.f", 22) == 0)
      ok = (tg->features & IR_F_REDUX_F32) != 0;
    else if (!ok && strncmp(name, "llvm.nvvm.redux.sync.", 21) == 0)
      ok = (tg->features & IR_F_REDUX_I32) != 0;
    if (!ok)
      return ir_fail(&ctx->err, RJ_EUNSUPPORTED,
                     "ir: intrinsic %.*s is not one redjit knows NVPTX can select for %s "
                     "(refused: LLVM's backend would exit the process on an unselectable one)",
                     (int)n, name, tg->name);
  }
  return RJ_OK;
}

/* Float types NVPTX has no instructions for: their arithmetic needs library calls the backend
 * lacks, and LLVM exits ("unsupported library call operation"). */
static bool foreign_float(LLVMTypeRef t) {
  LLVMTypeKind k = LLVMGetTypeKind(t);
  if (k == LLVMVectorTypeKind || k == LLVMArrayTypeKind)
    return foreign_float(LLVMGetElementType(t));
  return k == LLVMFP128TypeKind || k == LLVMX86_FP80TypeKind || k == LLVMPPC_FP128TypeKind;
}

/* Integers wider than 64 bits converted to or from a float: LLVM lowers them to library calls the
 * NVPTX backend lacks and exits ("unsupported library call operation"). */
static bool wide_int(LLVMTypeRef t) {
  LLVMTypeKind k = LLVMGetTypeKind(t);
  if (k == LLVMVectorTypeKind) return wide_int(LLVMGetElementType(t));
  return k == LLVMIntegerTypeKind && LLVMGetIntTypeWidth(t) > 64;
}

static bool wide_conversion(LLVMValueRef i) {
  switch (LLVMGetInstructionOpcode(i)) {
  case LLVMFPToSI:
  case LLVMFPToUI:
    return wide_int(LLVMTypeOf(i));
  case LLVMSIToFP:
  case LLVMUIToFP:
    return wide_int(LLVMTypeOf(LLVMGetOperand(i, 0)));
  default:
    return false;
  }
}

rj_status jit_ir_check_types(rj_ctx *ctx, LLVMModuleRef M) {
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
        bool bad = foreign_float(LLVMTypeOf(i));
        for (int o = 0; !bad && o < LLVMGetNumOperands(i); o++)
          bad = foreign_float(LLVMTypeOf(LLVMGetOperand(i, o)));
        size_t n = 0;
        const char *fn = LLVMGetValueName2(f, &n);
        if (bad)
          return ir_fail(&ctx->err, RJ_EUNSUPPORTED,
                         "ir: function %.*s uses fp128 / x86_fp80 / ppc_fp128, which NVPTX cannot "
                         "compile (refused: LLVM would exit the process)",
                         (int)n, fn);
        if (wide_conversion(i))
          return ir_fail(&ctx->err, RJ_EUNSUPPORTED,
                         "ir: function %.*s converts between a float and an integer wider than 64 "
                         "bits, which NVPTX cannot compile (refused: LLVM would exit the process)",
                         (int)n, fn);
      }
  return RJ_OK;
}

/* The caller's module compiled in this process into k (k->ptx_version set): parse into the
 * context's LLVM, check the entry, the intrinsics and the types, codegen. */
rj_status jit_llvm_module(rj_ctx *ctx, const char *ir, size_t n, const char *entry,
                          const ir_target *tg, rj_kernel *k) {
  ir_err *e = &ctx->err;
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, n, "rj_compile_ir");
  LLVMModuleRef M = NULL;
  char *msg = NULL;
  rj_status s = RJ_OK;
  if (!buf) return ir_fail(e, RJ_ENOMEM, "out of memory");
  if (LLVMParseIRInContext(ctx->llvm->C, buf, &M, &msg)) { /* the buffer is consumed */
    s = ir_fail(e, RJ_EINVAL, "ir: not LLVM 22 IR text or bitcode: %.700s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return s;
  }
  LLVMValueRef fn = LLVMGetNamedFunction(M, entry);
  if (!fn || LLVMCountBasicBlocks(fn) == 0)
    s = ir_fail(e, RJ_EINVAL, "entry: the module defines no function \"%s\"", entry);
  else if (LLVMGetTypeKind(LLVMGetReturnType(LLVMGlobalGetValueType(fn))) != LLVMVoidTypeKind)
    s = ir_fail(e, RJ_EINVAL, "entry: a kernel returns void; \"%s\" does not", entry);
  if (!s) {
    LLVMSetFunctionCallConv(fn, LLVMPTXKernelCallConv);
    LLVMSetLinkage(fn, LLVMExternalLinkage);
    s = jit_ir_check_intrinsics(ctx, M, tg);
  }
  if (!s) s = jit_ir_check_types(ctx, M);
  /* the same codegen as rj_compile: verify, keep the text, O3, keep it again, PTX */
  if (!s) s = jit_codegen(ctx, M, tg, k, JIT_CG_THEIRS | JIT_CG_TEXT);
  LLVMDisposeModule(M);
  return s;
}
