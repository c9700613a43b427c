/* jit/isolate.c: rj_compile_ir's compile in a process of its own (redjit-irc, tools/irc.c). */
#ifndef RJ_ISOLATE_H
#define RJ_ISOLATE_H

#include "jit.h"

/* Whether opt (or REDJIT_IR_IN_PROCESS=1) asks for the caller's IR to be compiled in process. */
bool jit_ir_in_process(const rj_options *opt);
/* Compiles module ir[0 .. n) for entry on tg at PTX version k->ptx_version in redjit-irc, under
 * opt's time and memory limits, into k->ll, k->ll_opt and k->ptx.  The helper's own refusal comes
 * back with its status and message; an abnormal end is RJ_ECRASH naming the cause; a missing
 * helper RJ_EUNSUPPORTED. */
rj_status jit_ir_isolated(rj_ctx *ctx, const char *ir, size_t n, const char *entry,
                          const ir_target *tg, const rj_options *opt, rj_kernel *k);

/* custom.c: op custom, a caller's combine linked into redjit's kernel (the linking itself is the
 * compiler library's: jit/llvm/combine.c). */
/* The compiler process's side (tools/irc.c; exported for it, not public API): redjit's kernel
 * module (bitcode) with the caller's combine ir[0 .. irn) function fn linked in, compiled for
 * opt's target and PTX version into *out (owned by ctx). */
RJ_API rj_status rj_irc_compile_combine(rj_ctx *ctx, const char *mod, size_t n, const char *entry,
                                        const char *ir, size_t irn, const char *fn,
                                        const rj_options *opt, rj_kernel **out);
/* op custom's link in redjit-irc: as jit_ir_isolated, with redjit's kernel (bitcode) as the
 * module and the combine's IR and function names sent along. */
rj_status jit_ir_isolated_combine(rj_ctx *ctx, const char *mod, size_t n, const char *entry,
                                  const char *ir, size_t irn, const char *fn, const ir_target *tg,
                                  const rj_options *opt, rj_kernel *k);

#endif
