/* op custom, the compiler library's side: the caller's combine parsed, screened and linked into
 * redjit's kernel (link_combine says what is checked), then the same O3 and NVPTX codegen.
 * Lowering leaves an op custom kernel as bitcode (jit_llvm_codegen_request); the combine stage
 * (jit/custom.c) hands it to jit_llvm_combine in redjit-irc (rj_irc_compile_combine), or in the
 * caller's process under rj_options.ir_in_process / REDJIT_IR_IN_PROCESS=1. */
#include "llvm.h"

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
static rj_status screen(rj_ctx *ctx, LLVMModuleRef M, const char *field) {
  bool map = strcmp(field, "combine.ir") != 0; /* a map's or an epilogue's module */
  size_t an = 0;
  if (LLVMGetModuleInlineAsm(M, &an) && an)
    return ir_fail(&ctx->err, RJ_EINVAL, "%s: module-level inline assembly is refused", field);
  for (LLVMValueRef g = LLVMGetFirstGlobal(M); g; g = LLVMGetNextGlobal(g))
    if (!LLVMIsGlobalConstant(g)) {
      size_t n = 0;
      const char *name = LLVMGetValueName2(g, &n);
      return ir_fail(&ctx->err, RJ_EINVAL, "%s: global @%.*s is not constant (a %s keeps no state)",
                     field, (int)(n > 100 ? 100 : n), name, map ? "map" : "combine");
    }
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
        const char *why = impure(M, i);
        size_t n = 0;
        const char *name = LLVMGetValueName2(f, &n);
        if (why)
          return ir_fail(&ctx->err, RJ_EINVAL, "%s: function %.*s has %s; a %s", field,
                         (int)(n > 100 ? 100 : n), name, why,
                         map ? "map is a pure function of its inputs"
                             : "combine is a pure function of its two operands");
      }
  return RJ_OK;
}

/* The caller's function role (its request field) has the type of redjit's declaration decl:
 * T (T, T) for the combine, S (S, S), S lift(T, i64) and R finish(S) for a struct state S.  A
 * struct field of another type is named (combine.state[i]). */
static rj_status check_signature(rj_ctx *ctx, LLVMValueRef fn, LLVMValueRef decl, const char *role,
                                 const char *name) {
  LLVMTypeRef ft = LLVMGlobalGetValueType(fn), want = LLVMGlobalGetValueType(decl);
  if (ft == want) return RJ_OK;
  LLVMTypeRef st = LLVMGetReturnType(want); /* the state: finish's parameter, else the return */
  if (strcmp(role, "combine.finish") == 0) LLVMGetParamTypes(want, &st);
  LLVMTypeRef ps[2] = {0}, have[3] = {LLVMGetReturnType(ft)};
  unsigned np = LLVMCountParamTypes(ft);
  if (np <= 2) LLVMGetParamTypes(ft, ps);
  have[1] = ps[0], have[2] = ps[1];
  for (int h = 0; h < 3 && LLVMGetTypeKind(st) == LLVMStructTypeKind; h++) {
    LLVMTypeRef x = have[h];
    if (!x || LLVMGetTypeKind(x) != LLVMStructTypeKind || x == st) continue;
    unsigned n = LLVMCountStructElementTypes(st), m = LLVMCountStructElementTypes(x);
    if (LLVMGetStructName(x) && LLVMGetStructName(x)[0])
      return ir_fail(&ctx->err, RJ_EINVAL,
                     "combine.state: %s \"%s\" uses the named struct %%%.100s; write the state "
                     "as a literal struct { ... } of the request's fields",
                     role, name, LLVMGetStructName(x));
    if (n != m)
      return ir_fail(&ctx->err, RJ_EINVAL,
                     "combine.state: %s \"%s\" has a state of %u fields, the request declares %u",
                     role, name, m, n);
    for (unsigned i = 0; i < n; i++)
      if (LLVMStructGetTypeAtIndex(x, i) != LLVMStructGetTypeAtIndex(st, i)) {
        char *a = LLVMPrintTypeToString(LLVMStructGetTypeAtIndex(x, i)),
             *b = LLVMPrintTypeToString(LLVMStructGetTypeAtIndex(st, i));
        rj_status s = ir_fail(&ctx->err, RJ_EINVAL,
                              "combine.state[%u]: field %u of %s \"%s\"'s state is %.60s, the "
                              "request declares %.60s",
                              i, i, role, name, a, b);
        LLVMDisposeMessage(a);
        LLVMDisposeMessage(b);
        return s;
      }
  }
  char *h = LLVMPrintTypeToString(ft), *w = LLVMPrintTypeToString(want);
  rj_status s =
      ir_fail(&ctx->err, RJ_EINVAL, "%s: \"%s\" has type %.200s; %s %.200s", role, name, h,
              strcmp(role, "map.function") == 0
                  ? "the map of these inputs is (the accumulator's type of the storage types)"
              : strcmp(role, "epilogue.function") == 0
                  ? "the epilogue is (the accumulator's type, in and out)"
              : LLVMGetTypeKind(st) == LLVMStructTypeKind ? "the state's function is"
                                                          : "the dtype's combine is",
              w);
  LLVMDisposeMessage(h);
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

/* The roles of the caller's functions: redjit's declaration, the request field naming it (a
 * tensor's caller map: the fourth). */
#define NROLES 5
static const char *const decls[NROLES] = {PASS_CUSTOM_COMBINE, PASS_CUSTOM_LIFT, PASS_CUSTOM_FINISH,
                                          PASS_CUSTOM_MAP, PASS_CUSTOM_EPILOGUE};
static const char *const roles[NROLES] = {"combine.function", "combine.lift", "combine.finish",
                                          "map.function", "epilogue.function"};

/* names "fn[ lift[ finish[ map[ epilogue]]]]" (ir_combine_names; jit/custom.c adds the rest):
 * name[NROLES] ("" where absent) */
static void split_names(const char *names, char name[NROLES][RJ_COMBINE_FN_MAX]) {
  for (int r = 0; r < NROLES; r++) {
    size_t n = strcspn(names, " ");
    snprintf(name[r], RJ_COMBINE_FN_MAX, "%.*s", (int)(n < RJ_COMBINE_FN_MAX ? n : 0), names);
    names += n;
    if (*names == ' ') names++;
  }
}

/* The caller's function of each role whose declaration M has (f[r]; NULL where M has none),
 * defined in C with the declaration's type; no other function of C takes a name of redjit's. */
static rj_status find_roles(rj_ctx *ctx, LLVMModuleRef M, LLVMModuleRef C, const char *names,
                            LLVMValueRef f[NROLES]) {
  char name[NROLES][RJ_COMBINE_FN_MAX];
  split_names(names, name);
  for (int r = 0; r < NROLES; r++) {
    LLVMValueRef decl = LLVMGetNamedFunction(M, decls[r]);
    f[r] = NULL;
    if (!decl) continue;
    if (!name[r][0])
      return ir_fail(&ctx->err, RJ_EINVAL, "%s: required by this kernel's state", roles[r]);
    f[r] = LLVMGetNamedFunction(C, name[r]);
    if (!f[r] || LLVMCountBasicBlocks(f[r]) == 0)
      return ir_fail(&ctx->err, RJ_EINVAL, "%s: the module defines no function \"%s\"", roles[r],
                     name[r]);
    rj_status s = check_signature(ctx, f[r], decl, roles[r], name[r]);
    if (s) return s;
  }
  for (int r = 0; r < NROLES; r++) {
    LLVMValueRef other = LLVMGetNamedFunction(C, decls[r]);
    if (other && other != f[0] && other != f[1] && other != f[2] && other != f[3] && other != f[4])
      return ir_fail(&ctx->err, RJ_EINVAL, "combine.ir: defines %s, a name redjit keeps for itself",
                     decls[r]);
  }
  return RJ_OK;
}

/* The caller's combine ir[0 .. n) with functions `names` (ir_combine_names: the combine, and a
 * struct state's lift and finish), parsed into M's context, screened and linked into M (redjit's
 * kernel, which declares PASS_CUSTOM_COMBINE, and PASS_CUSTOM_LIFT / _FINISH for a struct
 * state): each becomes its declaration's function, internal and alwaysinline.  Checked: the text
 * parses as LLVM 22 IR; each function is defined with its declaration's type; no function of the
 * module stores other than to its locals (allocas), uses atomics, fences or exception handling,
 * loads other than from its locals or constant globals, calls inline assembly, an NVVM
 * intrinsic, a pointer or an undefined function; no mutable globals or module inline assembly;
 * then rj_compile_ir's intrinsic and type screens (what LLVM's backend would exit on). */
static rj_status link_combine(rj_ctx *ctx, LLVMModuleRef M, const char *ir, size_t n,
                              const char *names, const ir_target *tg) {
  ir_err *e = &ctx->err;
  const char *field = LLVMGetNamedFunction(M, PASS_CUSTOM_MAP)        ? "map.ir"
                      : LLVMGetNamedFunction(M, PASS_CUSTOM_EPILOGUE) ? "epilogue.ir"
                                                                      : "combine.ir";
  if (!LLVMGetNamedFunction(M, PASS_CUSTOM_COMBINE) && !LLVMGetNamedFunction(M, PASS_CUSTOM_LIFT) &&
      !LLVMGetNamedFunction(M, PASS_CUSTOM_FINISH) && !LLVMGetNamedFunction(M, PASS_CUSTOM_MAP) &&
      !LLVMGetNamedFunction(M, PASS_CUSTOM_EPILOGUE))
    return RJ_OK; /* nothing calls them (a group of one lane lifts and finishes, combines none) */
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(ir, n, "combine");
  LLVMModuleRef C = NULL;
  char *msg = NULL;
  if (!buf) return ir_fail(e, RJ_ENOMEM, "out of memory");
  if (LLVMParseIRInContext(LLVMGetModuleContext(M), buf, &C, &msg)) {
    rj_status s = ir_fail(e, RJ_EINVAL, "%s: not LLVM 22 IR text: %.700s", field, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    return s;
  }
  LLVMValueRef f[NROLES];
  rj_status s = find_roles(ctx, M, C, names, f);
  if (!s) s = screen(ctx, C, field);
  if (!s) s = jit_ir_check_intrinsics(ctx, C, tg);
  if (!s) s = jit_ir_check_types(ctx, C);
  if (!s) s = jit_ir_screen(ctx, C, tg, field, JIT_SCREEN_COMBINE);
  if (s) {
    LLVMDisposeModule(C);
    return s;
  }
  prepare(C);
  for (int r = 0; r < NROLES; r++)
    if (f[r]) {
      LLVMSetValueName2(f[r], decls[r], strlen(decls[r]));
      LLVMSetLinkage(f[r], LLVMExternalLinkage);
    }
  ctx->llvm->diag[0] = 0;
  if (LLVMLinkModules2(M, C)) /* C is destroyed either way */
    return ir_fail(e, RJ_EINVAL, "%s: does not link with redjit's kernel: %s", field,
                   ctx->llvm->diag[0] ? ctx->llvm->diag : "?");
  unsigned ai = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
  for (int r = 0; r < NROLES; r++) {
    LLVMValueRef g = LLVMGetNamedFunction(M, decls[r]);
    if (!g) continue;
    if (LLVMCountBasicBlocks(g) == 0) /* a kernel whose PTX would not load: never handed out */
      return ir_fail(e, RJ_ELLVM, "%s: declared by the kernel, not linked", decls[r]);
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMAddAttributeAtIndex(g, LLVMAttributeFunctionIndex,
                            LLVMCreateEnumAttribute(LLVMGetModuleContext(M), ai, 0));
  }
  return jit_ir_screen(ctx, M, tg, field, JIT_SCREEN_LINKED); /* inlined everywhere */
}

/* ---------------------------------------------------------------- the entries */

rj_status jit_llvm_codegen_request(rj_ctx *ctx, LLVMModuleRef M, const rj_request *req,
                                   const ir_target *tg, rj_kernel *k) {
  if (!ir_request_combine(req)) return jit_codegen(ctx, M, tg, k, k->text_now ? JIT_CG_TEXT : 0);
  LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(M); /* for the combine stage */
  size_t n = bc ? LLVMGetBufferSize(bc) : 0;
  if (bc && (k->custom_bc = malloc(n))) memcpy(k->custom_bc, LLVMGetBufferStart(bc), n);
  k->custom_bcn = k->custom_bc ? n : 0;
  if (bc) LLVMDisposeMemoryBuffer(bc);
  return k->custom_bc ? RJ_OK : ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
}

rj_status jit_llvm_combine(rj_ctx *ctx, const char *mod, size_t n, const char *ir, size_t irn,
                           const char *names, const ir_target *tg, rj_kernel *k) {
  LLVMModuleRef M = NULL;
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(mod, n, "redjit");
  rj_status s = RJ_OK;
  if (!buf || LLVMParseBitcodeInContext2(ctx->llvm->C, buf, &M))
    s = ir_fail(&ctx->err, RJ_ELLVM, "internal: redjit's kernel module does not read back");
  if (buf) LLVMDisposeMemoryBuffer(buf);
  if (!s) s = link_combine(ctx, M, ir, irn, names, tg);
  if (!s) s = jit_codegen(ctx, M, tg, k, JIT_CG_THEIRS | JIT_CG_TEXT);
  if (M) LLVMDisposeModule(M);
  return s;
}
