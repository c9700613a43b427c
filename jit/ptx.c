/* The PTX version of a compile, with no LLVM: built into libredjit.so (rj_compile_ir's cache key)
 * and into the compiler library (a lowering's version follows the instructions it used). */
#include "jit.h"

#include <stdio.h>

/* The PTX version: the caller's, or the least the target and the emitted code need.  Every
 * combination LLVM would abort on is refused here, before codegen. */
rj_status jit_pick_ptx(rj_ctx *ctx, const ir_target *t, const rj_options *opt, int needed,
                       int *ptx) {
  static const int known[] = {32, 40, 41, 42, 43, 50, 60, 61, 62, 63, 64, 65, 70, 71, 72, 73,
                              74, 75, 76, 77, 78, 80, 81, 82, 83, 84, 85, 86, 87, 88, 90};
  int want = opt ? opt->ptx_version : 0;
  int least = needed > t->min_ptx ? needed : t->min_ptx;
  if (!want) {
    *ptx = least;
    return RJ_OK;
  }
  bool ok = false;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    ok |= known[i] == want;
  if (!ok)
    return ir_fail(&ctx->err, RJ_ETARGET, "ptx_version: %d is not a PTX ISA version LLVM 22 emits",
                   want);
  if (want < t->min_ptx)
    return ir_fail(&ctx->err, RJ_ETARGET,
                   "ptx_version: PTX %d.%d does not support target %s (it needs PTX %d.%d)",
                   want / 10, want % 10, t->name, t->min_ptx / 10, t->min_ptx % 10);
  if (want < needed)
    return ir_fail(&ctx->err, RJ_ETARGET,
                   "ptx_version: PTX %d.%d is too old for the instructions this kernel uses "
                   "(they need PTX %d.%d)",
                   want / 10, want % 10, needed / 10, needed % 10);
  *ptx = want;
  return RJ_OK;
}
