/* The compiler library (libredjit-llvm.so.VERSION: passes/ with its emitters, lowering, codegen,
 * the caller's-IR compile, LLVM 22 linked in) and libredjit.so meet here: one table of functions
 * behind one exported entry, rj_compiler_v1.  libredjit.so loads the library on its first miss
 * (jit/compiler.c) and checks the table before it calls anything in it; a process whose kernels
 * all come from the caches never loads it.  Both libraries are built from one tree, so the data
 * that crosses (rj_ctx, rj_kernel, rj_request, pass_plan, ir_target) has one layout, which the
 * table's sizes confirm. */
#ifndef RJ_COMPILER_H
#define RJ_COMPILER_H

#include "jit.h"

#define JIT_COMPILER_ABI 2 /* 2: the table has `text` */
#define JIT_COMPILER_ENTRY "rj_compiler_v1"

typedef struct jit_compiler {
  int abi;                 /* JIT_COMPILER_ABI */
  int major, minor, patch; /* RJ_VERSION_* of its build */
  size_t ctx_size, kernel_size, request_size, plan_size, target_size;
  /* The variant named `variant` lowers req (planned: plan) into k, then codegen (jit_compile's
   * lowering: k->ptx, entry, ptx_version, geometry; ll and ll_opt where k->text_now, and for op
   * custom linked here). */
  rj_status (*lower)(rj_ctx *ctx, const char *variant, const rj_request *req, const ir_target *tg,
                     const rj_options *opt, rj_kernel *k, pass_plan *plan);
  /* A caller's module ir[0 .. n) for entry on tg (k->ptx_version set) into k. */
  rj_status (*module)(rj_ctx *ctx, const char *ir, size_t n, const char *entry, const ir_target *tg,
                      rj_kernel *k);
  /* The context's LLVM state (its LLVMContext, target machines), at rj_ctx_free. */
  void (*release)(rj_ctx *ctx);
  /* op custom in redjit-irc: redjit's lowered kernel mod[0 .. n) (bitcode) with the caller's
   * combine ir[0 .. irn) function fn linked in, screened and compiled for tg into k. */
  rj_status (*combine)(rj_ctx *ctx, const char *mod, size_t n, const char *ir, size_t irn,
                       const char *fn, const ir_target *tg, rj_kernel *k);
  /* The IR text of k, compiled by `lower` (not caller IR, not op custom) for tg: its module made
   * again, before and after O3, into *ll and *ll_opt (malloc'ed; the caller frees them). */
  rj_status (*text)(rj_ctx *ctx, const rj_kernel *k, const ir_target *tg, char **ll, char **ll_opt);
} jit_compiler;

/* The compiler library's side (jit/lower.c, jit/ir_module.c). */
rj_status jit_llvm_lower(rj_ctx *ctx, const char *variant, const rj_request *req,
                         const ir_target *tg, const rj_options *opt, rj_kernel *k, pass_plan *plan);
rj_status jit_llvm_module(rj_ctx *ctx, const char *ir, size_t n, const char *entry,
                          const ir_target *tg, rj_kernel *k);
rj_status jit_llvm_text(rj_ctx *ctx, const rj_kernel *k, const ir_target *tg, char **ll,
                        char **ll_opt);
/* ir_module.c: the screens of a caller's module before codegen (RJ_EUNSUPPORTED naming what
 * LLVM's backend would exit the process on): intrinsics NVPTX cannot select on tg, float types
 * and conversions it cannot lower. */
rj_status jit_ir_check_intrinsics(rj_ctx *ctx, LLVMModuleRef M, const ir_target *tg);
rj_status jit_ir_check_types(rj_ctx *ctx, LLVMModuleRef M);
/* ir_screen.c: the bounds screen (docs/RELIABILITY.md): RJ_EUNSUPPORTED naming `field`, the
 * function and the bound for integers wider than JIT_SCREEN_INT_BITS, values (not memory) over
 * JIT_SCREEN_VALUE_BYTES, pointers and globals in address spaces NVPTX lacks, initialised shared
 * globals, atomics NVPTX cannot select on tg (on constant or parameter memory; on shared cluster
 * memory without clusters), allocas of a run-time size or over JIT_SCREEN_ALLOCA_BYTES a function,
 * constant indices past a global or an alloca, recursion, calls nested deeper than
 * JIT_SCREEN_CALL_DEPTH, and more than JIT_SCREEN_INSTS (weighted) instructions in the module or in
 * a function with its calls inlined.  A combine (JIT_SCREEN_COMBINE) also may not index its locals
 * or constant globals with a value the screen cannot bound; JIT_SCREEN_LINKED (redjit's kernel with
 * the combine linked in) counts instructions only. */
#define JIT_SCREEN_INT_BITS 128
#define JIT_SCREEN_VALUE_BYTES 1024
#define JIT_SCREEN_ALLOCA_BYTES 16384
#define JIT_SCREEN_CALL_DEPTH 64
#define JIT_SCREEN_INSTS 40000 /* the bound, in units of one instruction: */
#define JIT_SCREEN_BLOCK 16    /* a basic block counts as 16 instructions, */
#define JIT_SCREEN_DIV32 8     /* a division or remainder of up to 32 bits as 8, */
#define JIT_SCREEN_DIV64 32    /* of 33 to 64 bits as 32 */
#define JIT_SCREEN_DIV128 256  /* and wider as 256 */
typedef enum { JIT_SCREEN_CALLER, JIT_SCREEN_COMBINE, JIT_SCREEN_LINKED } jit_screen_mode;
rj_status jit_ir_screen(rj_ctx *ctx, LLVMModuleRef M, const ir_target *tg, const char *field,
                        jit_screen_mode mode);
/* combine.c (op custom): lowering's codegen of M for req into k -- jit_codegen, except for op
 * custom: linked here then codegen when k->custom_here, else left as bitcode in k->custom_bc
 * for redjit-irc; and redjit-irc's side, the table's `combine`. */
rj_status jit_llvm_codegen_request(rj_ctx *ctx, LLVMModuleRef M, const rj_request *req,
                                   const ir_target *tg, rj_kernel *k);
rj_status jit_llvm_combine(rj_ctx *ctx, const char *mod, size_t n, const char *ir, size_t irn,
                           const char *fn, const ir_target *tg, rj_kernel *k);

#endif
