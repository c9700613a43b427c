/* jit/llvm/ — the compiler library, libredjit-llvm.so.VERSION: lowering (a variant's emitter into
 * a module), codegen, a caller's module, op custom's link; LLVM 22 linked in.  libredjit.so never
 * includes this header: it reaches these functions through the table of jit/compiler.h alone,
 * which compiler_lib.c fills. */
#ifndef RJ_LLVM_H
#define RJ_LLVM_H

#include "../compiler.h"

#include <llvm-c/TargetMachine.h>

/* A target machine for one (target, PTX version), with its kept codegen pipeline. */
typedef struct jit_tm {
  char target[16];
  int ptx;
  LLVMTargetMachineRef tm;
  void *emitter;   /* tm's codegen pipeline kept across compiles (emitter.cpp); NULL: none yet */
  bool no_emitter; /* one could not be made: each module is emitted through a fresh one */
} jit_tm;

/* A context's LLVM (rj_ctx.llvm), made on its first compile (compiler_lib.c) and freed by the
 * table's `release`. */
struct jit_llvm {
  LLVMContextRef C;
  jit_tm tms[16];
  int ntms;
  char diag[512]; /* the first error LLVM diagnosed during codegen ("" if none) */
};

/* lower.c: the table's `lower` and `text`. */
rj_status jit_llvm_lower(rj_ctx *ctx, const char *variant, const rj_request *req,
                         const ir_target *tg, const rj_options *opt, rj_kernel *k);
rj_status jit_llvm_text(rj_ctx *ctx, const rj_kernel *k, const ir_target *tg, char **ll,
                        char **ll_opt);

/* ir_module.c: the table's `module`, and the screens of a caller's module before codegen
 * (RJ_EUNSUPPORTED naming what LLVM's backend would exit the process on): intrinsics NVPTX
 * cannot select on tg, float types and conversions it cannot lower. */
rj_status jit_llvm_module(rj_ctx *ctx, const char *ir, size_t n, const char *entry,
                          const ir_target *tg, rj_kernel *k);
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
 * custom, whose kernel is left as bitcode in k->custom_bc for the combine stage; and that
 * stage's link, the table's `combine`. */
rj_status jit_llvm_codegen_request(rj_ctx *ctx, LLVMModuleRef M, const rj_request *req,
                                   const ir_target *tg, rj_kernel *k);
rj_status jit_llvm_combine(rj_ctx *ctx, const char *mod, size_t n, const char *ir, size_t irn,
                           const char *names, const ir_target *tg, rj_kernel *k);

/* codegen.c: codegen of a lowered module into k (k->ptx_version set): triple and data layout,
 * verify, O3, PTX.  how: JIT_CG_THEIRS (the caller's IR: a failure to verify is their RJ_EINVAL,
 * not internal), JIT_CG_TEXT (k->ll and k->ll_opt: the IR text before and after O3),
 * JIT_CG_NO_PTX (stop after O3: the text alone). */
enum { JIT_CG_THEIRS = 1, JIT_CG_TEXT = 2, JIT_CG_NO_PTX = 4 };
rj_status jit_codegen(rj_ctx *ctx, LLVMModuleRef M, const ir_target *tg, rj_kernel *k,
                      unsigned how);
void jit_tm_dispose(jit_tm *t); /* t's emitter, then its target machine */
double jit_llvm_now_ms(void);   /* a monotonic clock (the stage times of rj_kernel) */

/* emitter.cpp: NVPTX's codegen pipeline for one target machine, built once and run on module
 * after module.  jit_emitter_run: 0 *ptx made (malloc'ed), 1 M is not one a kept pipeline may
 * take (emit it afresh), -1 out of memory. */
void *jit_emitter_new(LLVMTargetMachineRef tm);
void jit_emitter_free(void *emitter);
int jit_emitter_run(void *emitter, LLVMModuleRef M, char **ptx);

/* tuning.cpp: LLVM's options the compiler library sets, once, before its first compile. */
void jit_llvm_tune(void);

#endif
