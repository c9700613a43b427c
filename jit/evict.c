/* The end of a call that may have inserted kernels: the kernels its insertions evicted from the
 * cache are logged and retired (context.c: their modules wait to be unloaded), and the public
 * call that sets the bound. */
#include "jit.h"

#include <string.h>

void jit_evicted_free(rj_ctx *ctx) {
  while (ctx->evicted) {
    rj_kernel *k = ctx->evicted;
    ctx->evicted = k->next;
    if (jit_log_on(ctx))
      jit_log(ctx, "evict %016llx %s (%lld kernels owned by the cache, bound %lld)",
              (unsigned long long)k->hash, k->variant, ctx->nkernels - ctx->npinned,
              jit_cache_bound(ctx));
    jit_retire(ctx, k);
  }
}

RJ_API rj_status rj_ctx_set_memory_cache(rj_ctx *ctx, long long max_kernels) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  if (max_kernels < 0)
    return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL,
                                 "max_kernels: %lld is negative (0: no bound)", max_kernels));
  ctx->max_kernels = max_kernels;
  ctx->max_set = true;
  jit_cache_evict(ctx);
  jit_evicted_free(ctx);
  return jit_done(ctx, RJ_OK);
}
