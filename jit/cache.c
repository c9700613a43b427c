/* The kernel cache: the key text of a request, and the context's list of compiled kernels
 * (string keys, searched in order). */
#include "jit.h"

#include <stdlib.h>
#include <string.h>

rj_kernel *jit_cache_find(rj_ctx *ctx, const char *key) {
  for (rj_kernel *k = ctx->kernels; k; k = k->next)
    if (strcmp(k->key, key) == 0) return k;
  return NULL;
}

void jit_kernel_free(rj_kernel *k) {
  if (!k) return;
  free(k->key);
  free(k->ptx);
  free(k->ll);
  free(k->ll_opt);
  free(k->src);
  free(k);
}

void jit_cache_add(rj_ctx *ctx, rj_kernel *k) {
  ctx->compiles++;
  k->loaded_on = -1;
  k->next = ctx->kernels;
  ctx->kernels = k;
}

