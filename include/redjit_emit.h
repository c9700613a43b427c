/*
 * redjit_emit.h — emitting redjit's primitives into YOUR LLVM module (docs/EMBEDDING.md).
 *
 * These functions are in the static library libredjit_emit.a, not in libredjit.so.
 * libredjit.so carries its own LLVM 22, linked statically with hidden symbols, so an LLVMModuleRef
 * made by the caller's LLVM must never be handed to it.  libredjit_emit.a is built from the same
 * emitter sources, compiled against the LLVM-C headers only, with every symbol except rj_emit*
 * localised: linked into the caller's program, it calls the caller's LLVM.  To compile the
 * finished module, hand its text (LLVMPrintModuleToString) or bitcode to rj_compile_ir
 * (redjit.h), so that no LLVM object crosses into libredjit.so.
 *
 * Rules
 *  - LLVM: the caller links LLVM 22 (the LLVM-C API of its Core library); the emitters only
 *    create instructions, constants and intrinsic declarations through it.
 *  - Context and ownership: everything is created in the LLVMContext of em->module (the
 *    caller's); nothing is allocated that outlives a call, nothing is freed that the caller
 *    owns.  No rj_ctx is needed for emission.  The module must be an NVPTX module
 *    (nvptx64-nvidia-cuda); the emitters add intrinsic declarations (llvm.nvvm.*, llvm.smax ...)
 *    and, for local tiles with a layout, nothing else; shared tiles with long rows may add one
 *    internal addrspace(3) scratch array ("rj_partials*").
 *  - Position: em->builder must be positioned inside a function of em->module; the IR goes
 *    there, inline (no calls, no new functions), and the builder is left after it (possibly in
 *    a new basic block: tile emitters build loops).
 *  - Convergence: call sites must be reached by whole warps (subgroup primitives: all 32 lanes,
 *    full mask) or, for tiles, by every thread of the scope instance (cta scope: every thread of
 *    the block, which also meets the bar.sync the primitive ends with).  The shuffles are
 *    convergent intrinsics, so LLVM keeps them where they are.
 *  - Thread index: tile emitters take the thread's index within its scope instance from the
 *    caller (tid, an i32 value: e.g. threadIdx.x % 128 for a warpgroup); subgroup primitives
 *    read %laneid themselves.
 *  - Named barriers: a warpgroup-scope tile takes a free named barrier id (1..15) that is not in
 *    em->barriers_used, and adds it there; the caller passes the ids its own code uses, and
 *    keeps the updated mask for later emissions into the same kernel.  Id 0 (bar.sync 0) is the
 *    CTA barrier.
 *  - Errors: a failed call returns a status and leaves the message in em->errmsg (naming the
 *    argument or request field); IR already emitted by a failed tile call is left in place and
 *    must be discarded with its function.
 */
#ifndef REDJIT_EMIT_H
#define REDJIT_EMIT_H

#include "redjit.h" /* rj_status, rj_primitive, rj_dtype, rj_request */

#ifdef __cplusplus
extern "C" {
#endif

/* LLVM-C handle types, as llvm-c/Types.h spells them (a repeated identical typedef is valid C11
 * and C++), so that this header needs no LLVM headers. */
typedef struct LLVMOpaqueModule *LLVMModuleRef;
typedef struct LLVMOpaqueBuilder *LLVMBuilderRef;
typedef struct LLVMOpaqueValue *LLVMValueRef;

typedef struct rj_emitter {
  uint32_t struct_size;   /* set by rj_emitter_init */
  LLVMModuleRef module;   /* the caller's module (and through it, its LLVMContext) */
  LLVMBuilderRef builder; /* positioned in a function of module */
  const char *target;     /* "sm_90" (default, NULL) ...: only for target features */
  unsigned barriers_used; /* in/out: named barrier ids (bit i = id i) taken in this kernel */
  int ptx_needed;         /* out: the least PTX ISA version the emitted code needs (0: any);
                             pass it to rj_compile_ir as rj_options.ptx_version when larger */
  rj_status status;       /* out: of the last call */
  char errmsg[512];       /* out: the last failure's message ("" after success) */
} rj_emitter;

/* Zeroes *em and sets module, builder and struct_size. */
RJ_API void rj_emitter_init(rj_emitter *em, LLVMModuleRef module, LLVMBuilderRef builder);

/* *out = primitive p of value (whose LLVM type is dtype t's storage type: half, bfloat, float,
 * double, i32, i64) at the builder's position.  arg (an i32 value, may be non-constant): the
 * source lane (shuffle, broadcast), the offset (shuffle_down / _up) or the xor mask; NULL for
 * reductions and invocation_id.  log2_size (0..5): the group of the reductions.  A source lane
 * outside the warp, or arg outside 0..31, yields the lane's own value.  The state reductions'
 * *out is the result's type: argmax / argmin an i64 lane index in the group; var / std divide by
 * N - 1 (torch's default correction).  Semantics: docs/SUBGROUP.md. */
RJ_API rj_status rj_emit_subgroup(rj_emitter *em, rj_primitive p, rj_dtype t, int log2_size,
                                  LLVMValueRef value, LLVMValueRef arg, LLVMValueRef *out);

/* A tile reduction (req: kind tile, validated here) on the caller's buffers, inline, by the
 * tile variant (shared or local, by the buffers' memory; redux and sm100_packed are not
 * offered here): src / dst point at element 0 of the whole buffers, row-major, as
 * ptr addrspace(3) for shared memory, or, for local (register) buffers, at an array of the
 * thread's slots in the order the layout gives (docs/EMBEDDING.md).  tid: the thread's index
 * within its scope instance (i32).  req->active is ignored: the caller decides which threads
 * run it. */
RJ_API rj_status rj_emit_tile(rj_emitter *em, const rj_request *req, LLVMValueRef src,
                              LLVMValueRef dst, LLVMValueRef tid);

#ifdef __cplusplus
}
#endif
#endif /* REDJIT_EMIT_H */
