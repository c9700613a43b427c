/* op custom, the compiler library's side: the caller's combine parsed, screened and linked into
 * redjit's kernel (link_combine says what is checked), then the same O3 and NVPTX codegen.  It
 * runs in redjit-irc (rj_irc_compile_combine: jit/custom.c), or in the caller's process under
 * rj_options.ir_in_process / REDJIT_IR_IN_PROCESS=1; for redjit-irc, lowering leaves the kernel
 * as bitcode (jit_llvm_codegen_request). */
#include "compiler.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Linker.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the screen */

/* A pointer's base through GEPs (instructions or constant expressions). */
static LLVMValueRef base_of(LLVMValueRef p) {
  while (p && (LLVMIsAGetElementPtrInst(p) ||
               (LLVMIsAConstantExpr(p) && LLVMGetConstOpcode(p) == LLVMGetElementPtr)))
    p = LLVMGetOperand(p, 0);
  return p;
}

/* Why instruction i cannot run in a combine (NULL: it can).  M: the caller's module. */
static const char *impure(LLVMModuleRef M, LLVMValueRef i) {
  switch (LLVMGetInstructionOpcode(i)) {
  case LLVMStore: {
    LLVMValueRef b = base_of(LLVMGetOperand(i, 1));
    return b && LLVMIsAAllocaInst(b) ? NULL : "a store to memory other than its own locals";
  }
  case LLVMAtomicRMW:
  case LLVMAtomicCmpXchg:
    return "an atomic";
  case LLVMFence:
    return "a fence";
  case LLVMLoad: {
    LLVMValueRef b = base_of(LLVMGetOperand(i, 0));
    if (b && (LLVMIsAAllocaInst(b) || (LLVMIsAGlobalVariable(b) && LLVMIsGlobalConstant(b))))
      return NULL;
    return "a load from memory other than its own locals or constant globals";
  }
  case LLVMInvoke:
  case LLVMCallBr:
  case LLVMLandingPad:
  case LLVMResume:
    return "exception handling or callbr";
  case LLVMCall: {
    LLVMValueRef callee = LLVMGetCalledValue(i);
    if (LLVMIsAInlineAsm(callee)) return "inline assembly";
    if (!LLVMIsAFunction(callee)) return "an indirect call";
    size_t n = 0;
    const char *name = LLVMGetValueName2(callee, &n);
    if (strncmp(name, "llvm.nvvm.", 10) == 0)
      return "an NVVM intrinsic (barriers, shuffles, votes and special registers are redjit's)";
    if (strncmp(name, "llvm.", 5) == 0) return NULL; /* jit_ir_check_intrinsics decides */
    if (LLVMGetNamedFunction(M, name) && LLVMCountBasicBlocks(callee) > 0) return NULL;
    return "a call of a function the module does not define";
  }
  default:
    return NULL;
  }
}

/* Every function the module defines: pure (impure() above), no mutable globals, no module
 * inline assembly. */
static rj_status screen(rj_ctx *ctx, LLVMModuleRef M) {
  size_t an = 0;
  if (LLVMGetModuleInlineAsm(M, &an) && an)
    return ir_fail(&ctx->err, RJ_EINVAL, "combine.ir: module-level inline assembly is refused");
  for (LLVMValueRef g = LLVMGetFirstGlobal(M); g; g = LLVMGetNextGlobal(g))
    if (!LLVMIsGlobalConstant(g)) {
      size_t n = 0;
      const char *name = LLVMGetValueName2(g, &n);
      return ir_fail(&ctx->err, RJ_EINVAL,
                     "combine.ir: global @%.*s is not constant (a combine keeps no state)",
                     (int)(n > 100 ? 100 : n), name);
    }
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
        const char *why = impure(M, i);
        size_t n = 0;
        const char *name = LLVMGetValueName2(f, &n);
        if (why)
          return ir_fail(&ctx->err, RJ_EINVAL,
                         "combine.ir: function %.*s has %s; a combine is a pure function of its "
                         "two operands",
                         (int)(n > 100 ? 100 : n), name, why);
      }
  return RJ_OK;
}

/* fn's type is T (T, T), T the declaration's. */
static rj_status check_signature(rj_ctx *ctx, LLVMValueRef fn, LLVMTypeRef decl, const char *name) {
  LLVMTypeRef ft = LLVMGlobalGetValueType(fn), want = LLVMGetReturnType(decl), ps[2] = {0};
  bool ok =
      LLVMGetReturnType(ft) == want && LLVMCountParamTypes(ft) == 2 && !LLVMIsFunctionVarArg(ft);
  if (ok) LLVMGetParamTypes(ft, ps), ok = ps[0] == want && ps[1] == want;
  if (ok) return RJ_OK;
  char *have = LLVMPrintTypeToString(ft), *w = LLVMPrintTypeToString(want);
  rj_status s = ir_fail(&ctx->err, RJ_EINVAL,
                        "combine.function: \"%s\" has type %.200s; the dtype's combine is "
                        "%s (%s, %s)",
                        name, have, w, w, w);
  LLVMDisposeMessage(have);
  LLVMDisposeMessage(w);
  return s;
}

static void drop_attr(LLVMValueRef f, const char *name) {
  unsigned k = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMRemoveEnumAttributeAtIndex(f, LLVMAttributeFunctionIndex, k);
}

/* The caller's functions made fit to inline into an NVPTX kernel: internal, no host target
 * attributes (the inliner refuses callees whose target features differ), no noinline / optnone. */
static void prepare(LLVMModuleRef C) {
  LLVMStripModuleDebugInfo(C);
  LLVMSetTarget(C, "");
  LLVMSetDataLayout(C, "");
  for (LLVMValueRef f = LLVMGetFirstFunction(C); f; f = LLVMGetNextFunction(f)) {
    if (LLVMCountBasicBlocks(f) == 0) continue;
    LLVMSetLinkage(f, LLVMInternalLinkage);
    LLVMRemoveStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, "target-cpu", 10);
    LLVMRemoveStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, "target-features", 15);
    drop_attr(f, "noinline");
    drop_attr(f, "optnone");
  }
  for (LLVMValueRef g = LLVMGetFirstGlobal(C); g; g = LLVMGetNextGlobal(g))
    LLVMSetLinkage(g, LLVMInternalLinkage);
}

/* The caller's combine ir[0 .. n) function fn, parsed into M's context, screened and linked into
 * M (redjit's kernel, which declares PASS_CUSTOM_COMBINE): fn becomes that function, internal
 * and alwaysinline.  Checked: the text parses as LLVM 22 IR; fn is defined with type T (T, T);
 * no function of the module stores other than to its locals (allocas), uses atomics, fences or
 * exception handling, loads other than from its locals or constant globals, calls inline
 * assembly, an NVVM intrinsic, a pointer or an undefined function; no mutable globals or module
 * inline assembly; then rj_compile_ir's intrinsic and type screens (what LLVM's backend would exit
 * on). */
static rj_status link_combine(rj_ctx *ctx, LLVMModuleRef M, const char *ir, size_t n,
                              const char *fn, const ir_target *tg) {
  ir_err *e = &ctx->err;
  LLVMValueRef decl = LLVMGetNamedFunction(M, PASS_CUSTOM_COMBINE);
  if (!decl) return RJ_OK; /* nothing calls it (cannot happen for a kernel that reduces) */
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, n, "combine");
  LLVMModuleRef C = NULL;
  char *msg = NULL;
  if (!buf) return ir_fail(e, RJ_ENOMEM, "out of memory");
  if (LLVMParseIRInContext(LLVMGetModuleContext(M), buf, &C, &msg)) {
    rj_status s = ir_fail(e, RJ_EINVAL, "combine.ir: not LLVM 22 IR text: %.700s", msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return s;
  }
  LLVMValueRef f = LLVMGetNamedFunction(C, fn),
               other = LLVMGetNamedFunction(C, PASS_CUSTOM_COMBINE);
  rj_status s = RJ_OK;
  if (!f || LLVMCountBasicBlocks(f) == 0)
    s = ir_fail(e, RJ_EINVAL, "combine.function: the module defines no function \"%s\"", fn);
  else if (other && other != f)
    s = ir_fail(e, RJ_EINVAL, "combine.ir: defines %s, a name redjit keeps for itself",
                PASS_CUSTOM_COMBINE);
  if (!s) s = check_signature(ctx, f, LLVMGlobalGetValueType(decl), fn);
  if (!s) s = screen(ctx, C);
  if (!s) s = jit_ir_check_intrinsics(ctx, C, tg);
  if (!s) s = jit_ir_check_types(ctx, C);
  if (s) {
    LLVMDisposeModule(C);
    return s;
  }
  prepare(C);
  LLVMSetValueName2(f, PASS_CUSTOM_COMBINE, strlen(PASS_CUSTOM_COMBINE));
  LLVMSetLinkage(f, LLVMExternalLinkage);
  ctx->llvm_diag[0] = 0;
  if (LLVMLinkModules2(M, C)) /* C is destroyed either way */
    return ir_fail(e, RJ_EINVAL, "combine.ir: does not link with redjit's kernel: %s",
                   ctx->llvm_diag[0] ? ctx->llvm_diag : "?");
  f = LLVMGetNamedFunction(M, PASS_CUSTOM_COMBINE);
  LLVMSetLinkage(f, LLVMInternalLinkage);
  unsigned ai = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
  LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                          LLVMCreateEnumAttribute(LLVMGetModuleContext(M), ai, 0));
  return RJ_OK;
}

/* ---------------------------------------------------------------- the entries */

rj_status jit_llvm_codegen_request(rj_ctx *ctx, LLVMModuleRef M, const rj_request *req,
                                   const ir_target *tg, rj_kernel *k) {
  ir_combine t;
  if (!ir_request_combine(req, &t))
    return jit_codegen(ctx, M, tg, k, k->text_now ? JIT_CG_TEXT : 0);
  if (k->custom_here) { /* the IR text made now: it has the caller's combine in it */
    rj_status s = link_combine(ctx, M, *t.ir, strlen(*t.ir), t.fn, tg);
    return s ? s : jit_codegen(ctx, M, tg, k, JIT_CG_THEIRS | JIT_CG_TEXT);
  }
  LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(M); /* for redjit-irc */
  size_t n = bc ? LLVMGetBufferSize(bc) : 0;
  if (bc && (k->custom_bc = malloc(n))) memcpy(k->custom_bc, LLVMGetBufferStart(bc), n);
  k->custom_bcn = k->custom_bc ? n : 0;
  if (bc) LLVMDisposeMemoryBuffer(bc);
  return k->custom_bc ? RJ_OK : ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
}

rj_status jit_llvm_combine(rj_ctx *ctx, const char *mod, size_t n, const char *ir, size_t irn,
                           const char *fn, const ir_target *tg, rj_kernel *k) {
  LLVMModuleRef M = NULL;
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(mod, n, "redjit");
  rj_status s = RJ_OK;
  if (!buf || LLVMParseBitcodeInContext2(ctx->llvm, buf, &M))
    s = ir_fail(&ctx->err, RJ_ELLVM, "internal: redjit's kernel module does not read back");
  if (buf) LLVMDisposeMemoryBuffer(buf);
  if (!s) s = link_combine(ctx, M, ir, irn, fn, tg);
  if (!s) s = jit_codegen(ctx, M, tg, k, JIT_CG_THEIRS | JIT_CG_TEXT);
  if (M) LLVMDisposeModule(M);
  return s;
}
