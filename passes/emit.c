/* Emit helpers shared by the variants: types, identities, combines, shuffle trees, barriers,
 * structured control flow, index math. */
#include "passes.h"

#include <llvm-c/DebugInfo.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

LLVMTypeRef pass_type(pass_emit *e, rj_dtype t) {
  switch (t) {
  case RJ_F16:
    return LLVMHalfTypeInContext(e->C);
  case RJ_BF16:
    return LLVMBFloatTypeInContext(e->C);
  case RJ_F32:
    return LLVMFloatTypeInContext(e->C);
  case RJ_F64:
    return LLVMDoubleTypeInContext(e->C);
  case RJ_I32:
  case RJ_U32:
    return LLVMInt32TypeInContext(e->C);
  case RJ_I64:
  case RJ_U64:
    return LLVMInt64TypeInContext(e->C);
  case RJ_I8: /* kind tensor's storage types (tensor_common.c widens them) */
  case RJ_U8:
  case RJ_BOOL:
  case RJ_E4M3:
  case RJ_E5M2:
    return LLVMInt8TypeInContext(e->C);
  case RJ_I16:
  case RJ_U16:
    return LLVMInt16TypeInContext(e->C);
  }
  return NULL;
}

static bool acc_in_f32(rj_dtype t) { /* f16 / bf16 accumulate in f32 */
  return t == RJ_F16 || t == RJ_BF16;
}

LLVMTypeRef pass_acc_type(pass_emit *e, rj_dtype t) {
  return acc_in_f32(t) ? LLVMFloatTypeInContext(e->C) : pass_type(e, t);
}

int pass_acc_bytes(rj_dtype t) {
  return acc_in_f32(t) ? 4 : ir_dtype(t)->bytes;
}

LLVMValueRef pass_i32(pass_emit *e, int64_t v) {
  return LLVMConstInt(LLVMInt32TypeInContext(e->C), (unsigned long long)v, 1);
}

LLVMValueRef pass_i64(pass_emit *e, int64_t v) {
  return LLVMConstInt(LLVMInt64TypeInContext(e->C), (unsigned long long)v, 1);
}

/* Identities: -0.0 for float sums and means (x + -0.0 == x for every x, so LLVM folds it away),
 * +-inf for float max / min (not the finite extremes), the integer limits; 1 for prod, all ones
 * for and, 0 for or / xor. */
/* op custom: the request's identity bits as the state type (T itself; f16 / bf16: the half /
 * bfloat of those bits, for folds that keep T, as treduce's do) */
static LLVMValueRef custom_identity(pass_emit *e, rj_dtype t) {
  uint64_t b = e->custom ? *e->custom : 0;
  if (t == RJ_F16 || t == RJ_BF16)
    return LLVMConstBitCast(LLVMConstInt(LLVMInt16TypeInContext(e->C), b & 0xffff, 0),
                            pass_type(e, t));
  if (t == RJ_F64 || t == RJ_F32) {
    double d;
    float f;
    uint32_t u = (uint32_t)b;
    if (t == RJ_F32)
      memcpy(&f, &u, 4), d = f;
    else
      memcpy(&d, &b, 8);
    return LLVMConstReal(pass_type(e, t), d);
  }
  return LLVMConstInt(pass_type(e, t), b, 0);
}

/* op custom: a call of the combine's declaration */
static LLVMValueRef custom_combine(pass_emit *e, rj_dtype t, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef ty = pass_type(e, t), ps[2] = {ty, ty}, fty = LLVMFunctionType(ty, ps, 2, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(e->M, PASS_CUSTOM_COMBINE), args[2] = {a, b};
  if (!fn) fn = LLVMAddFunction(e->M, PASS_CUSTOM_COMBINE, fty);
  return LLVMBuildCall2(e->B, fty, fn, args, 2, "");
}

LLVMValueRef pass_identity(pass_emit *e, rj_op op, rj_dtype t) {
  if (op == RJ_OP_CUSTOM) return custom_identity(e, t);
  LLVMTypeRef ty = pass_acc_type(e, t);
  if (op == RJ_OP_MEAN) op = RJ_OP_SUM;
  if (op == RJ_OP_PROD)
    return ir_dtype(t)->is_float ? LLVMConstReal(ty, 1.0) : LLVMConstInt(ty, 1, 0);
  if (ir_dtype(t)->is_float) {
    double v = op == RJ_OP_SUM ? -0.0 : op == RJ_OP_MAX ? -__builtin_inf() : __builtin_inf();
    return LLVMConstReal(ty, v);
  }
  bool sgn = ir_dtype(t)->is_signed, wide = ir_dtype(t)->bytes == 8;
  unsigned long long v = 0;
  if (op == RJ_OP_MAX)
    v = sgn ? (wide ? 0x8000000000000000ull : 0x80000000ull) : 0;
  else if (op == RJ_OP_MIN)
    v = sgn ? (wide ? 0x7fffffffffffffffull : 0x7fffffffull) : ~0ull;
  else if (op == RJ_OP_AND)
    v = ~0ull;
  return LLVMConstInt(ty, v, 0);
}

LLVMValueRef pass_to_acc(pass_emit *e, LLVMValueRef v, rj_dtype t) {
  if (t == RJ_F16 || t == RJ_BF16) return LLVMBuildFPExt(e->B, v, pass_acc_type(e, t), "");
  return v;
}

LLVMValueRef pass_from_acc(pass_emit *e, LLVMValueRef v, rj_dtype t) {
  if (t == RJ_F16 || t == RJ_BF16) return LLVMBuildFPTrunc(e->B, v, pass_type(e, t), "");
  return v;
}

LLVMValueRef pass_call(pass_emit *e, const char *name, LLVMTypeRef *ovl, int novl,
                       LLVMValueRef *args, int nargs) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->M, id, ovl, (size_t)novl);
  LLVMTypeRef fty = LLVMIntrinsicGetType(e->C, id, ovl, (size_t)novl);
  return LLVMBuildCall2(e->B, fty, fn, args, (unsigned)nargs, "");
}

/* The ops without an intrinsic: sum (and mean, whose state is the sum), prod, and, or, xor. */
static LLVMValueRef arith(pass_emit *e, rj_op op, bool fl, LLVMValueRef a, LLVMValueRef b) {
  switch (op) {
  case RJ_OP_SUM:
  case RJ_OP_MEAN:
    return fl ? LLVMBuildFAdd(e->B, a, b, "") : LLVMBuildAdd(e->B, a, b, "");
  case RJ_OP_PROD:
    return fl ? LLVMBuildFMul(e->B, a, b, "") : LLVMBuildMul(e->B, a, b, "");
  case RJ_OP_AND:
    return LLVMBuildAnd(e->B, a, b, "");
  case RJ_OP_OR:
    return LLVMBuildOr(e->B, a, b, "");
  case RJ_OP_XOR:
    return LLVMBuildXor(e->B, a, b, "");
  default:
    return NULL;
  }
}

LLVMValueRef pass_combine(pass_emit *e, rj_op op, rj_dtype t, rj_nan nan, LLVMValueRef a,
                          LLVMValueRef b) {
  if (op == RJ_OP_CUSTOM) return custom_combine(e, t, a, b);
  LLVMTypeRef ty = pass_acc_type(e, t);
  LLVMValueRef args[2] = {a, b};
  bool fl = ir_dtype(t)->is_float;
  if (op != RJ_OP_MAX && op != RJ_OP_MIN) return arith(e, op, fl, a, b);
  if (fl) {
    const char *f = op == RJ_OP_MAX ? (nan == RJ_NAN_PROPAGATE ? "llvm.maximum" : "llvm.maxnum")
                                    : (nan == RJ_NAN_PROPAGATE ? "llvm.minimum" : "llvm.minnum");
    return pass_call(e, f, &ty, 1, args, 2);
  }
  bool sgn = ir_dtype(t)->is_signed;
  const char *f =
      op == RJ_OP_MAX ? (sgn ? "llvm.smax" : "llvm.umax") : (sgn ? "llvm.smin" : "llvm.umin");
  return pass_call(e, f, &ty, 1, args, 2);
}

LLVMValueRef pass_fold(pass_emit *e, rj_op op, rj_dtype t, rj_nan nan, LLVMValueRef acc,
                       LLVMValueRef x) {
  bool skip = op == RJ_OP_SUM || op == RJ_OP_PROD || op == RJ_OP_MEAN;
  if (ir_dtype(t)->is_float && nan == RJ_NAN_IGNORE && skip) {
    LLVMValueRef isnan = LLVMBuildFCmp(e->B, LLVMRealUNO, x, x, "");
    x = LLVMBuildSelect(e->B, isnan, pass_identity(e, op, t), x, "");
  }
  return pass_combine(e, op, t, nan, acc, x);
}

LLVMValueRef pass_mean(pass_emit *e, rj_op op, rj_dtype t, LLVMValueRef v, LLVMValueRef n) {
  if (op != RJ_OP_MEAN) return v;
  LLVMTypeRef ty = pass_acc_type(e, t);
  return LLVMBuildFDiv(e->B, v, LLVMBuildUIToFP(e->B, n, ty, ""), "mean");
}

LLVMValueRef pass_tid_x(pass_emit *e) {
  return pass_call(e, "llvm.nvvm.read.ptx.sreg.tid.x", NULL, 0, NULL, 0);
}

static LLVMValueRef shfl32(pass_emit *e, LLVMValueRef v, LLVMValueRef mm, int lanemask, int c) {
  bool f = LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMFloatTypeKind;
  LLVMValueRef args[4] = {mm, v, pass_i32(e, lanemask), pass_i32(e, c)};
  return pass_call(e, f ? "llvm.nvvm.shfl.sync.bfly.f32" : "llvm.nvvm.shfl.sync.bfly.i32", NULL, 0,
                   args, 4);
}

LLVMValueRef pass_shfl_bfly(pass_emit *e, LLVMValueRef v, LLVMValueRef mm, int lanemask,
                            int width) {
  int c = ((32 - width) << 8) | 0x1f; /* as CUDA's __shfl_xor_sync(mask, v, lanemask, width) */
  LLVMTypeRef ty = LLVMTypeOf(v);
  LLVMTypeKind k = LLVMGetTypeKind(ty);
  unsigned bits = k == LLVMIntegerTypeKind  ? LLVMGetIntTypeWidth(ty)
                  : k == LLVMDoubleTypeKind ? 64
                                            : 32;
  if (bits == 32) return shfl32(e, v, mm, lanemask, c);
  /* 64-bit: as <2 x i32>, each half shuffled */
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), v2 = LLVMVectorType(i32, 2);
  LLVMValueRef pair = LLVMBuildBitCast(e->B, v, v2, "");
  LLVMValueRef lo = LLVMBuildExtractElement(e->B, pair, pass_i32(e, 0), "");
  LLVMValueRef hi = LLVMBuildExtractElement(e->B, pair, pass_i32(e, 1), "");
  lo = shfl32(e, lo, mm, lanemask, c);
  hi = shfl32(e, hi, mm, lanemask, c);
  pair = LLVMBuildInsertElement(e->B, LLVMGetUndef(v2), lo, pass_i32(e, 0), "");
  pair = LLVMBuildInsertElement(e->B, pair, hi, pass_i32(e, 1), "");
  return LLVMBuildBitCast(e->B, pair, ty, "");
}

LLVMValueRef pass_bfly_tree(pass_emit *e, rj_op op, rj_dtype t, rj_nan nan, LLVMValueRef v,
                            LLVMValueRef mm, const int *masks, int n, int width) {
  for (int i = 0; i < n; i++)
    v = pass_combine(e, op, t, nan, v, pass_shfl_bfly(e, v, mm, masks[i], width));
  return v;
}

void pass_barrier_cta(pass_emit *e) {
  LLVMValueRef id = pass_i32(e, 0);
  pass_call(e, "llvm.nvvm.barrier.cta.sync.aligned.all", NULL, 0, &id, 1);
}

void pass_barrier_named(pass_emit *e, int id, int threads) {
  LLVMValueRef a[2] = {pass_i32(e, id), pass_i32(e, threads)};
  pass_call(e, "llvm.nvvm.barrier.cta.sync.aligned.count", NULL, 0, a, 2);
}

void pass_warp_sync(pass_emit *e) {
  LLVMValueRef m = pass_i32(e, -1);
  pass_call(e, "llvm.nvvm.bar.warp.sync", NULL, 0, &m, 1);
}

int pass_barrier_alloc(pass_emit *e) {
  for (int id = 1; id < 16; id++)
    if (!(e->barriers & (1u << id))) {
      e->barriers |= 1u << id;
      return id;
    }
  return -1;
}

rj_status pass_scope_barrier(pass_emit *e, rj_scope s) {
  switch (s) {
  case RJ_SCOPE_CTA:
    pass_barrier_cta(e);
    break;
  case RJ_SCOPE_WARPGROUP: {
    int id = pass_barrier_alloc(e);
    if (id < 0) return ir_fail(e->err, RJ_EUNSUPPORTED, "scope: all 15 named barriers are taken");
    pass_barrier_named(e, id, 128);
    break;
  }
  case RJ_SCOPE_WARP:
    pass_warp_sync(e);
    break;
  case RJ_SCOPE_THREAD:
    break;
  }
  return RJ_OK;
}

LLVMValueRef pass_entry_alloca(pass_emit *e, LLVMTypeRef ty, const char *name) {
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(e->fn);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(e->C);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first)
    LLVMPositionBuilderBefore(b, first);
  else
    LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef a = LLVMBuildAlloca(b, ty, name);
  LLVMDisposeBuilder(b);
  return a;
}

void pass_loop_begin(pass_emit *e, pass_loop *l, LLVMValueRef start, LLVMValueRef end,
                     LLVMValueRef step) {
  LLVMTypeRef ty = LLVMTypeOf(start); /* i32 or i64: the induction variable's type */
  l->var = pass_entry_alloca(e, ty, "i");
  l->step = step;
  LLVMBuildStore(e->B, start, l->var);
  l->head = LLVMAppendBasicBlockInContext(e->C, e->fn, "loop");
  l->body = LLVMAppendBasicBlockInContext(e->C, e->fn, "body");
  l->exit = LLVMAppendBasicBlockInContext(e->C, e->fn, "done");
  LLVMBuildBr(e->B, l->head);
  LLVMPositionBuilderAtEnd(e->B, l->head);
  LLVMValueRef i = LLVMBuildLoad2(e->B, ty, l->var, "");
  LLVMBuildCondBr(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, i, end, ""), l->body, l->exit);
  LLVMPositionBuilderAtEnd(e->B, l->body);
  l->i = LLVMBuildLoad2(e->B, ty, l->var, "");
}

void pass_loop_end(pass_emit *e, pass_loop *l) {
  LLVMValueRef i = LLVMBuildLoad2(e->B, LLVMGetAllocatedType(l->var), l->var, "");
  LLVMBuildStore(e->B, LLVMBuildAdd(e->B, i, l->step, ""), l->var);
  LLVMBuildBr(e->B, l->head);
  LLVMPositionBuilderAtEnd(e->B, l->exit);
}

/* !llvm.loop !{self, !{"llvm.loop.unroll.disable"}} on the loop's back edge br */
void pass_no_unroll(pass_emit *e, LLVMValueRef br) {
  LLVMMetadataRef tmp = LLVMTemporaryMDNode(e->C, NULL, 0);
  LLVMMetadataRef dis = LLVMMDStringInContext2(e->C, "llvm.loop.unroll.disable", 24);
  LLVMMetadataRef ops[2] = {tmp, LLVMMDNodeInContext2(e->C, &dis, 1)};
  LLVMMetadataRef loop = LLVMMDNodeInContext2(e->C, ops, 2);
  LLVMMetadataReplaceAllUsesWith(tmp, loop);
  LLVMSetMetadata(br, LLVMGetMDKindIDInContext(e->C, "llvm.loop", 9),
                  LLVMMetadataAsValue(e->C, loop));
}

void pass_if_begin(pass_emit *e, pass_if *f, LLVMValueRef cond) {
  f->then = LLVMAppendBasicBlockInContext(e->C, e->fn, "then");
  f->done = LLVMAppendBasicBlockInContext(e->C, e->fn, "endif");
  LLVMBuildCondBr(e->B, cond, f->then, f->done);
  LLVMPositionBuilderAtEnd(e->B, f->then);
}

void pass_if_end(pass_emit *e, pass_if *f) {
  LLVMBuildBr(e->B, f->done);
  LLVMPositionBuilderAtEnd(e->B, f->done);
}

void pass_need_feature(pass_emit *e, ir_feature f) {
  int v = ir_feature_ptx(e->target, f);
  if (v > e->ptx_needed) e->ptx_needed = v;
}

bool pass_has_feature(const ir_target *t, ir_feature f) {
  return ((t->features | t->emulated) & f) != 0;
}

LLVMValueRef pass_global_array(pass_emit *e, LLVMTypeRef elem, int64_t n, unsigned as,
                               const char *prefix) {
  char name[64];
  snprintf(name, sizeof name, "%s%d", prefix, e->uniq++);
  LLVMTypeRef at = LLVMArrayType2(elem, (uint64_t)n);
  LLVMValueRef g = LLVMAddGlobalInAddressSpace(e->M, at, name, as);
  LLVMSetInitializer(g, as == AS_SHARED ? LLVMGetUndef(at) : LLVMConstNull(at));
  LLVMSetLinkage(g, LLVMInternalLinkage);
  LLVMSetAlignment(g, 16);
  return g;
}

LLVMValueRef pass_const_table_i32(pass_emit *e, const int32_t *v, int64_t n, const char *prefix) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C);
  LLVMValueRef g = pass_global_array(e, i32, n, AS_GLOBAL, prefix);
  LLVMValueRef *vals = malloc(sizeof(LLVMValueRef) * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    vals[i] = LLVMConstInt(i32, (unsigned long long)v[i], 1);
  LLVMSetInitializer(g, LLVMConstArray2(i32, vals, (uint64_t)n));
  LLVMSetGlobalConstant(g, 1);
  free(vals);
  return g;
}

LLVMValueRef pass_region_offset(pass_emit *e, const rj_buffer *b, const bool *dims,
                                LLVMValueRef fused, bool add_start) {
  LLVMValueRef off = pass_i32(e, 0), rest = fused;
  int64_t mul = 1;
  for (int d = b->ndim - 1; d >= 0; d--) {
    int64_t ex = b->has_region ? b->extent[d] : b->shape[d];
    int64_t st = b->has_region ? b->start[d] : 0;
    if (dims[d]) {
      LLVMValueRef c = ex == 1 ? pass_i32(e, 0) : LLVMBuildURem(e->B, rest, pass_i32(e, ex), "");
      if (ex > 1) rest = LLVMBuildUDiv(e->B, rest, pass_i32(e, ex), "");
      off = LLVMBuildAdd(e->B, off, LLVMBuildMul(e->B, c, pass_i32(e, mul), ""), "");
    }
    if (add_start && st) off = LLVMBuildAdd(e->B, off, pass_i32(e, st * mul), "");
    mul *= b->shape[d];
  }
  return off;
}

LLVMValueRef pass_gep(pass_emit *e, LLVMTypeRef elem, LLVMValueRef base, LLVMValueRef idx) {
  return LLVMBuildGEP2(e->B, elem, base, &idx, 1, "");
}

const char *pass_need_mem(const rj_tile *t, rj_mem mem, char *buf, size_t n) {
  if (t->src.mem == mem && t->dst.mem == mem) return NULL;
  snprintf(buf, n, "src and dst must both be %s (src is %s, dst is %s)",
           mem == RJ_MEM_LOCAL ? "local (register) buffers" : "shared memory",
           ir_mem_name(t->src.mem), ir_mem_name(t->dst.mem));
  return buf;
}
