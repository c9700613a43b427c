/* The compiler library (libredjit-llvm.so.VERSION, built from jit/llvm/ and passes/ whole: the
 * emitters, lowering, codegen, the caller's-IR compile, op custom's link, LLVM 22 linked in) and
 * libredjit.so meet here: one table of functions behind one exported entry, rj_compiler_v1.  The
 * core (the files of jit/ itself) reaches the compiler library through this table alone
 * (tests/source/layers.sh, tests/source/cycles.sh).  libredjit.so loads the library on its first
 * miss (jit/compiler.c) and checks the table before it calls anything in it; a process whose
 * kernels all come from the caches never loads it.  Both libraries are built from one tree, so the
 * data that crosses (rj_ctx, rj_kernel, rj_request, pass_plan, ir_target) has one layout, which the
 * table's sizes confirm. */
#ifndef RJ_COMPILER_H
#define RJ_COMPILER_H

#include "jit.h"

#define JIT_COMPILER_ABI 3 /* 3: `lower` reads the kernel's plan, writes none */
#define JIT_COMPILER_ENTRY "rj_compiler_v1"

typedef struct jit_compiler {
  int abi;                 /* JIT_COMPILER_ABI */
  int major, minor, patch; /* RJ_VERSION_* of its build */
  size_t ctx_size, kernel_size, request_size, plan_size, target_size;
  /* The variant named `variant` lowers req into k, planned by k->plan (read only: the plan owns
   * the launch geometry), then codegen: k->ptx_version, ptx and entry (ll and ll_opt where
   * k->text_now).  op custom stops before codegen: its kernel is left as bitcode in k->custom_bc
   * for the combine stage (jit/custom.c), which calls `combine`. */
  rj_status (*lower)(rj_ctx *ctx, const char *variant, const rj_request *req, const ir_target *tg,
                     const rj_options *opt, rj_kernel *k);
  /* A caller's module ir[0 .. n) for entry on tg (k->ptx_version set) into k. */
  rj_status (*module)(rj_ctx *ctx, const char *ir, size_t n, const char *entry, const ir_target *tg,
                      rj_kernel *k);
  /* The context's LLVM state (its LLVMContext, target machines), at rj_ctx_free. */
  void (*release)(rj_ctx *ctx);
  /* op custom's link: redjit's lowered kernel mod[0 .. n) (bitcode) with the caller's combine
   * ir[0 .. irn) (its functions `names`, ir_combine_names) screened, linked in and compiled for
   * tg into k (k->ptx_version set): in redjit-irc, or in the caller's process when asked. */
  rj_status (*combine)(rj_ctx *ctx, const char *mod, size_t n, const char *ir, size_t irn,
                       const char *names, const ir_target *tg, rj_kernel *k);
  /* The IR text of k, compiled by `lower` (not caller IR, not op custom) for tg: its module made
   * again, before and after O3, into *ll and *ll_opt (malloc'ed; the caller frees them). */
  rj_status (*text)(rj_ctx *ctx, const rj_kernel *k, const ir_target *tg, char **ll, char **ll_opt);
} jit_compiler;

#endif
