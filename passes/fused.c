/* The built-in maps of one value and the built-in epilogues (docs/TENSOR.md "Fused maps"): the
 * one place both kinds that take them build them, tensor (passes/tensor_map.c) and tile
 * (variants shared and local). */
#include "state.h"

#include <stdio.h>

LLVMValueRef pass_map_one(pass_emit *e, rj_map m, LLVMValueRef x) {
  LLVMTypeRef w = LLVMTypeOf(x);
  switch (m) {
  case RJ_MAP_ABS:
    return pass_call(e, "llvm.fabs", &w, 1, &x, 1);
  case RJ_MAP_SQUARE:
    return LLVMBuildFMul(e->B, x, x, "");
  case RJ_MAP_NONZERO: /* floats: NaN is non-zero */
    if (LLVMGetTypeKind(w) == LLVMIntegerTypeKind)
      return LLVMBuildZExt(e->B, LLVMBuildICmp(e->B, LLVMIntNE, x, LLVMConstNull(w), ""), w, "");
    return LLVMBuildSelect(e->B, LLVMBuildFCmp(e->B, LLVMRealUNE, x, LLVMConstNull(w), ""),
                           LLVMConstReal(w, 1), LLVMConstReal(w, 0), "");
  default:
    return x;
  }
}

LLVMValueRef pass_epilogue(pass_emit *e, rj_epilogue ep, double scale, LLVMValueRef v) {
  LLVMTypeRef w = LLVMTypeOf(v);
  switch (ep) {
  case RJ_EPI_SQRT:
    return pass_call(e, "llvm.sqrt", &w, 1, &v, 1);
  case RJ_EPI_SCALE:
    return LLVMBuildFMul(e->B, v, LLVMConstReal(w, scale), "");
  case RJ_EPI_LOG:
    return st_log(e, LLVMGetTypeKind(w) == LLVMDoubleTypeKind ? RJ_F64 : RJ_F32, v);
  default:
    return v;
  }
}

const char *pass_fused_declined(const rj_fused *f, const char *as_is, char *buf, size_t n) {
  if (!f->map && !f->epilogue) return NULL;
  snprintf(buf, n, "map %s, epilogue %s: %s (variant local maps them)", ir_map_name(f->map),
           ir_epilogue_name(f->epilogue), as_is);
  return buf;
}
