/* The kernel cache: the key text of a request, and the context's list of compiled kernels
 * (string keys, searched in order). */
#include "jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jit_key_tail(char *buf, size_t n, const ir_target *tg, int ptx_asked, int sms) {
  snprintf(buf, n, "|%s|%d%s", tg->name, ptx_asked, tg->emulated ? "|emulated" : "");
  size_t used = strlen(buf);
  if (sms) snprintf(buf + used, n - used, "|sms%d", sms);
}

rj_status jit_cache_key(rj_ctx *ctx, const rj_request *req, const ir_target *tg,
                        const rj_options *opt, const pass_plan *plan, char **key) {
  char *canon = NULL, tail[64];
  rj_status s = plan->key[0] ? RJ_OK : ir_canonical(req, &canon, &ctx->err);
  if (s) return s;
  const char *head = plan->key[0] ? plan->key : canon;
  jit_key_tail(tail, sizeof tail, tg, opt ? opt->ptx_version : 0, plan->sms);
  *key = malloc(strlen(head) + strlen(tail) + 1);
  if (*key) {
    strcpy(*key, head);
    strcat(*key, tail);
  }
  free(canon);
  return *key ? RJ_OK : ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
}

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

void jit_cache_insert(rj_ctx *ctx, rj_kernel *k) {
  ctx->nkernels++;
  k->loaded_on = -1;
  k->next = ctx->kernels;
  ctx->kernels = k;
}

void jit_cache_add(rj_ctx *ctx, rj_kernel *k) {
  ctx->compiles++;
  jit_cache_insert(ctx, k);
}

static uint64_t mix(uint64_t h) {
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  return h;
}

uint64_t jit_hash64(const void *p, size_t n, uint64_t seed) {
  const unsigned char *b = p;
  uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull), w;
  for (; n >= 8; n -= 8, b += 8) {
    memcpy(&w, b, 8);
    h = (h ^ mix(w)) * 0xff51afd7ed558ccdull;
  }
  w = 0;
  memcpy(&w, b, n);
  return mix(h ^ mix(w ^ n));
}
