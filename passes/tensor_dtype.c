/* Element conversions of the tensor kernels, keyed by dtype: a stored element into the dtype a
 * reduction computes in (ir_acc_dtype, or f64 under acc_dtype "f64"), and an accumulator back
 * into the stored result dtype (ir_op_result).  The small integers and bool widen to 64 bits
 * (sign- or zero-extended; bool zero-extended) or convert to f64 (mean var std); float8 decodes
 * to f32 in integer arithmetic (every target), and max / min re-encode their (exact) result. */
#include "tensor.h"

#include <stdbool.h>

static LLVMTypeRef i32_of(pass_emit *e) {
  return LLVMInt32TypeInContext(e->C);
}

/* e4m3fn (1 sign, 4 exponent bits of bias 7, 3 mantissa bits; no infinity; S.1111.111 NaN) to
 * f32: the exponent and mantissa bits moved to the top of an f32's (<< 20), the sign to bit 31,
 * read as an f32 of the value times 2^-120 (exactly: e4m3's subnormals land on f32 subnormals,
 * which fmul keeps without ftz) and scaled back by one exact multiply; the NaN (read as +-480)
 * chosen apart.  Bit for bit the fields' decode (normals exponent + 120, subnormals m * 2^-9),
 * with no integer-to-float conversion and 10 instructions an element instead of 16. */
static LLVMValueRef e4m3_to_f32(pass_emit *e, LLVMValueRef b) {
  LLVMTypeRef i32 = i32_of(e), f32 = LLVMFloatTypeInContext(e->C);
  LLVMValueRef u = LLVMBuildZExt(e->B, b, i32, "");
  LLVMValueRef sign =
      LLVMBuildShl(e->B, LLVMBuildAnd(e->B, u, pass_i32(e, 0x80), ""), pass_i32(e, 24), "");
  LLVMValueRef em = LLVMBuildAnd(e->B, u, pass_i32(e, 0x7f), "");
  LLVMValueRef bits = LLVMBuildOr(e->B, LLVMBuildShl(e->B, em, pass_i32(e, 20), ""), sign, "");
  LLVMValueRef v =
      LLVMBuildFMul(e->B, LLVMBuildBitCast(e->B, bits, f32, ""), LLVMConstReal(f32, 0x1p120), "");
  LLVMValueRef nan =
      LLVMBuildBitCast(e->B, LLVMBuildOr(e->B, sign, pass_i32(e, 0x7fc00000), ""), f32, "");
  LLVMValueRef is_nan = LLVMBuildICmp(e->B, LLVMIntEQ, em, pass_i32(e, 0x7f), "");
  return LLVMBuildSelect(e->B, is_nan, nan, v, "");
}

/* e5m2 is the upper byte of an f16: exact, infinities and NaNs included. */
static LLVMValueRef e5m2_to_f32(pass_emit *e, LLVMValueRef b) {
  LLVMTypeRef i16 = LLVMInt16TypeInContext(e->C);
  LLVMValueRef h = LLVMBuildShl(e->B, LLVMBuildZExt(e->B, b, i16, ""), LLVMConstInt(i16, 8, 0), "");
  h = LLVMBuildBitCast(e->B, h, LLVMHalfTypeInContext(e->C), "");
  return LLVMBuildFPExt(e->B, h, LLVMFloatTypeInContext(e->C), "");
}

/* An f32 that is an e4m3 value (max / min of e4m3 elements) back to its byte; NaN (and the
 * infinities an all-NaN-ignored max leaves) to the NaN 0x7f. */
static LLVMValueRef f32_to_e4m3(pass_emit *e, LLVMValueRef v) {
  LLVMTypeRef i32 = i32_of(e), f32 = LLVMFloatTypeInContext(e->C);
  LLVMValueRef bits = LLVMBuildBitCast(e->B, v, i32, "");
  LLVMValueRef sign =
      LLVMBuildAnd(e->B, LLVMBuildLShr(e->B, bits, pass_i32(e, 24), ""), pass_i32(e, 0x80), "");
  LLVMValueRef a = LLVMBuildAnd(e->B, bits, pass_i32(e, 0x7fffffff), "");
  LLVMValueRef norm =
      LLVMBuildSub(e->B, LLVMBuildLShr(e->B, a, pass_i32(e, 20), ""), pass_i32(e, 960), "");
  LLVMValueRef af = LLVMBuildBitCast(e->B, a, f32, "");
  LLVMValueRef sub =
      LLVMBuildFPToUI(e->B, LLVMBuildFMul(e->B, af, LLVMConstReal(f32, 0x1p9), ""), i32, "");
  LLVMValueRef is_sub = LLVMBuildICmp(e->B, LLVMIntULT, a, pass_i32(e, 0x3c800000), "");
  LLVMValueRef is_nan = LLVMBuildICmp(e->B, LLVMIntUGE, a, pass_i32(e, 0x7f800000), "");
  LLVMValueRef em = LLVMBuildSelect(e->B, is_sub, sub, norm, "");
  em = LLVMBuildSelect(e->B, is_nan, pass_i32(e, 0x7f), em, "");
  sign = LLVMBuildSelect(e->B, is_nan, pass_i32(e, 0), sign, ""); /* NaN, and +-inf: 0x7f */
  return LLVMBuildTrunc(e->B, LLVMBuildOr(e->B, em, sign, ""), LLVMInt8TypeInContext(e->C), "");
}

static LLVMValueRef f32_to_e5m2(pass_emit *e, LLVMValueRef v) {
  LLVMTypeRef i16 = LLVMInt16TypeInContext(e->C);
  LLVMValueRef h = LLVMBuildFPTrunc(e->B, v, LLVMHalfTypeInContext(e->C), "");
  h = LLVMBuildLShr(e->B, LLVMBuildBitCast(e->B, h, i16, ""), LLVMConstInt(i16, 8, 0), "");
  return LLVMBuildTrunc(e->B, h, LLVMInt8TypeInContext(e->C), "");
}

LLVMValueRef tns_widen(pass_emit *e, LLVMValueRef x, rj_dtype from, rj_dtype to) {
  const ir_dtype_info *f = ir_dtype(from), *t = ir_dtype(to);
  if (f->fp8) {
    x = from == RJ_E4M3 ? e4m3_to_f32(e, x) : e5m2_to_f32(e, x);
    from = RJ_F32;
  } else {
    x = pass_to_acc(e, x, from); /* f16 / bf16: f32 */
  }
  if (from == to) return x;
  if (f->is_float) /* f16 bf16 f32 (and float8's f32) in f64 */
    return to == RJ_F32 ? x : LLVMBuildFPExt(e->B, x, LLVMDoubleTypeInContext(e->C), "");
  bool sgn = f->is_signed; /* bool: zero-extended */
  if (t->is_float)
    return sgn ? LLVMBuildSIToFP(e->B, x, pass_type(e, to), "")
               : LLVMBuildUIToFP(e->B, x, pass_type(e, to), "");
  if (t->bytes == f->bytes) return x;
  return sgn ? LLVMBuildSExt(e->B, x, pass_type(e, to), "")
             : LLVMBuildZExt(e->B, x, pass_type(e, to), "");
}

/* v (a 64-bit accumulator) clamped to the range of the narrower integer dtype `to`: the results
 * of max / min / and / or / xor are in it already; the identities of max / min (INT64_MIN ...)
 * become to's own (-128 for i8), as a max over no selected element gives */
static LLVMValueRef clamp_int(pass_emit *e, LLVMValueRef v, rj_dtype to) {
  LLVMTypeRef ty = LLVMTypeOf(v);
  int bits = 8 * ir_dtype(to)->bytes;
  bool sgn = ir_dtype(to)->is_signed;
  LLVMValueRef hi = LLVMConstInt(ty, sgn ? (1ull << (bits - 1)) - 1 : (1ull << bits) - 1, 0);
  LLVMValueRef big = LLVMBuildICmp(e->B, sgn ? LLVMIntSGT : LLVMIntUGT, v, hi, "");
  v = LLVMBuildSelect(e->B, big, hi, v, "");
  if (!sgn) return v;
  LLVMValueRef lo = LLVMConstInt(ty, (unsigned long long)-(1ll << (bits - 1)), 1);
  return LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, v, lo, ""), lo, v, "");
}

LLVMValueRef tns_narrow_exact(pass_emit *e, LLVMValueRef v, rj_dtype from, rj_dtype to) {
  if (from == to) return pass_from_acc(e, v, to);
  if (to == RJ_E4M3) return f32_to_e4m3(e, v);
  if (to == RJ_E5M2) return f32_to_e5m2(e, v);
  if (to == RJ_BOOL && !ir_dtype(from)->is_float) /* 0 or 1: and's identity (all ones) is true */
    return LLVMBuildZExt(e->B, LLVMBuildICmp(e->B, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), ""),
                         pass_type(e, to), "");
  if (!ir_dtype(to)->is_float && !ir_dtype(from)->is_float &&
      ir_dtype(to)->bytes < ir_dtype(from)->bytes) /* saturated: max / min's identities */
    return LLVMBuildTrunc(e->B, clamp_int(e, v, to), pass_type(e, to), "");
  return pass_from_acc(e, v, to);
}
