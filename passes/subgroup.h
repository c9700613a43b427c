/* Subgroup (warp) primitive emitters: the internal API behind the `subgroup` variant
 * (passes/subgroup.c) and the public rj_emit_* embedding functions (embed/emit.c).
 *
 * Every emitter writes straight-line IR at e->B's position: no calls (only NVVM intrinsics, which
 * are instructions after codegen), no shared memory, no barriers.  They are meant to be reached
 * by all 32 lanes of the warp (full member mask 0xffffffff), from uniform control flow; the
 * llvm.nvvm.shfl.sync.* intrinsics are `convergent`, so LLVM's optimiser never sinks or hoists
 * them into divergent code.  Only e->C, e->M, e->B and e->err are used. */
#ifndef RJ_PASSES_SUBGROUP_H
#define RJ_PASSES_SUBGROUP_H

#include "passes.h"

typedef enum pass_shfl_mode {
  PASS_SHFL_IDX = 0,  /* lane reads lane b */
  PASS_SHFL_UP = 1,   /* lane reads lane - b; below lane 0: its own value */
  PASS_SHFL_DOWN = 2, /* lane reads lane + b; above lane 31: its own value */
  PASS_SHFL_BFLY = 3  /* lane reads lane ^ b; outside 0..31: its own value */
} pass_shfl_mode;

/* shfl.sync (full mask) of a 16-, 32- or 64-bit value (half, bfloat, i16, float, i32, double,
 * i64); 64-bit values as two 32-bit shuffles of their halves, 16-bit ones zero-extended.
 * b: an i32 value.  The PTX clamp operand is 0 for up, 0x1f otherwise (whole warp), so a source
 * lane outside the warp yields the lane's own value (shfl's predicate false). */
LLVMValueRef pass_shfl(pass_emit *e, pass_shfl_mode m, LLVMValueRef v, LLVMValueRef b);

/* The lane id (%laneid), i32. */
LLVMValueRef pass_lane_id(pass_emit *e);

/* Whether primitive p takes dtype t; NULL or the reason. */
const char *pass_subgroup_dtype_reason(rj_primitive p, rj_dtype t);

/* out = primitive p applied to v (the storage type of t) within groups of 2^k lanes:
 *  shuffle / broadcast: arg = the source lane (i32; outside 0..31: own value)
 *  shuffle_down / shuffle_up: arg = the offset (i32; a source lane outside the warp, or an
 *    offset outside 0..31: own value)
 *  shuffle_xor: arg = the mask (outside 0..31: own value)
 *  reduce_add / _min / _max / _mul / _and / _or / _xor: shuffle-down tree, offsets 2^(k-1) .. 1:
 *    lane 0 of each group of 2^k lanes holds the group's result (other lanes: partial results)
 *  reduce_all_*: xor butterfly over masks 1 .. 2^(k-1): every lane holds its group's result
 *  and / or / xor (integers only) of i32 / u32 with k = 5, on a target with redux.sync (sm_80+):
 *    one redux.sync instead of the tree (every lane holds the result)
 *  reduce_argmax / _argmin / _var / _std / _logsumexp (and reduce_all_*): the same trees moving a
 *    state (passes/state.h) field by field; the result is ir_op_result's (argmax / argmin: the
 *    i64 index in the group, the first of ties, a NaN's under propagation); var / std divide by
 *    N - correction
 *  invocation_id: the lane id as t (integer dtypes only); v and arg are ignored
 * f16 / bf16 reductions accumulate in f32 (one rounding at the end).  Float min / max propagate
 * NaN.  Integer sums and products wrap.  Shuffles ignore k (they address the whole warp).
 * e->target is read by the redux.sync choice (NULL: the tree). */
rj_status pass_subgroup(pass_emit *e, rj_primitive p, rj_dtype t, int k, LLVMValueRef v,
                        LLVMValueRef arg, int correction, LLVMValueRef *out);

/* reduce_custom / reduce_all_custom (p) of v (dtype t's storage type) over groups of 2^k lanes:
 * calls of PASS_CUSTOM_COMBINE, the request's combine linked in by the compiler
 * (jit/llvm/combine.c), so only the subgroup variant's kernel uses it; pass_subgroup refuses
 * these primitives.
 * commutative: the built-in ops' trees; else lane order (fn(lower lanes, higher lanes)): a
 * shuffle-down tree of offsets 1 .. 2^(k-1) (lane 0 of each group holds the result), or an
 * ordered butterfly (every lane). */
rj_status pass_subgroup_custom(pass_emit *e, rj_primitive p, rj_dtype t, int k, bool commutative,
                               LLVMValueRef v, LLVMValueRef *out);

#endif
