/* Packed and 3-input PTX instructions through LLVM inline asm, each with its scalar emulation.
 * Whether an instruction is real or emulated is the target table's answer (ir/target.c):
 * real when t->features has it (raising e->ptx_needed to the PTX version it needs), emulated
 * when t->emulated has it (rj_options.emulate_packed), in which case each packed instruction
 * becomes its scalar equivalents in the same order, ftz kept. */
#include "passes.h"

#include <stdio.h>
#include <string.h>

static LLVMValueRef inline_asm(pass_emit *e, LLVMTypeRef ret, const char *text,
                               const char *constraints, LLVMValueRef *args, int n, int effects) {
  LLVMTypeRef at[8];
  for (int i = 0; i < n && i < 8; i++)
    at[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef fty = LLVMFunctionType(ret, at, (unsigned)n, 0);
  LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), constraints, strlen(constraints),
                                     effects, 0, LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(e->B, fty, fn, args, (unsigned)n, "");
}

LLVMValueRef pass_asm(pass_emit *e, LLVMTypeRef ret, const char *text, const char *constraints,
                      LLVMValueRef *args, int n) {
  return inline_asm(e, ret, text, constraints, args, n, 0);
}

LLVMValueRef pass_asm_volatile(pass_emit *e, LLVMTypeRef ret, const char *text,
                               const char *constraints, LLVMValueRef *args, int n) {
  return inline_asm(e, ret, text, constraints, args, n, 1);
}

/* Two f32 as one b64 (make_float2), element 0 in the low half, and back. */
static LLVMValueRef pack(pass_emit *e, LLVMValueRef lo, LLVMValueRef hi) {
  LLVMTypeRef v2 = LLVMVectorType(LLVMFloatTypeInContext(e->C), 2);
  LLVMValueRef v = LLVMBuildInsertElement(e->B, LLVMGetUndef(v2), lo, pass_i32(e, 0), "");
  v = LLVMBuildInsertElement(e->B, v, hi, pass_i32(e, 1), "");
  return LLVMBuildBitCast(e->B, v, LLVMInt64TypeInContext(e->C), "");
}

static void unpack(pass_emit *e, LLVMValueRef b64, LLVMValueRef out[2]) {
  LLVMTypeRef v2 = LLVMVectorType(LLVMFloatTypeInContext(e->C), 2);
  LLVMValueRef v = LLVMBuildBitCast(e->B, b64, v2, "");
  out[0] = LLVMBuildExtractElement(e->B, v, pass_i32(e, 0), "");
  out[1] = LLVMBuildExtractElement(e->B, v, pass_i32(e, 1), "");
}

void pass_add_f32x2(pass_emit *e, LLVMValueRef a[2], LLVMValueRef b0, LLVMValueRef b1) {
  LLVMTypeRef f32 = LLVMFloatTypeInContext(e->C);
  if (e->target->features & IR_F_ADD_F32X2) {
    pass_need_feature(e, IR_F_ADD_F32X2);
    LLVMValueRef args[2] = {pack(e, a[0], a[1]), pack(e, b0, b1)};
    unpack(e,
           pass_asm(e, LLVMInt64TypeInContext(e->C), "add.rn.ftz.f32x2 $0, $1, $2;", "=l,l,l", args,
                    2),
           a);
    return;
  }
  LLVMValueRef lo[2] = {a[0], b0}, hi[2] = {a[1], b1};
  a[0] = pass_asm(e, f32, "add.rn.ftz.f32 $0, $1, $2;", "=f,f,f", lo, 2);
  a[1] = pass_asm(e, f32, "add.rn.ftz.f32 $0, $1, $2;", "=f,f,f", hi, 2);
}

static const char *minmax_name(rj_op op, rj_nan nan) {
  if (op == RJ_OP_MAX) return nan == RJ_NAN_PROPAGATE ? "max.NaN.f32" : "max.f32";
  return nan == RJ_NAN_PROPAGATE ? "min.NaN.f32" : "min.f32";
}

LLVMValueRef pass_minmax2_f32(pass_emit *e, rj_op op, rj_nan nan, LLVMValueRef a, LLVMValueRef b) {
  char text[64];
  snprintf(text, sizeof text, "%s $0, $1, $2;", minmax_name(op, nan));
  if (nan == RJ_NAN_PROPAGATE) pass_need_feature(e, IR_F_MAX_NAN);
  LLVMValueRef args[2] = {a, b};
  return pass_asm(e, LLVMFloatTypeInContext(e->C), text, "=f,f,f", args, 2);
}

LLVMValueRef pass_minmax3_f32(pass_emit *e, rj_op op, rj_nan nan, LLVMValueRef a, LLVMValueRef b,
                              LLVMValueRef c) {
  if (!(e->target->features & IR_F_MAX3_F32))
    return pass_minmax2_f32(e, op, nan, pass_minmax2_f32(e, op, nan, a, b), c);
  char text[64];
  snprintf(text, sizeof text, "%s $0, $1, $2, $3;", minmax_name(op, nan));
  pass_need_feature(e, IR_F_MAX3_F32);
  if (nan == RJ_NAN_PROPAGATE) pass_need_feature(e, IR_F_MAX_NAN);
  LLVMValueRef args[3] = {a, b, c};
  return pass_asm(e, LLVMFloatTypeInContext(e->C), text, "=f,f,f,f", args, 3);
}
