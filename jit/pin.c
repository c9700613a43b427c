/* Pins: a kernel handed to the caller (rj_compile, rj_compile_ir) holds one pin per return, and
 * rj_kernel_release drops one.  While it holds any, the cache's bound neither counts nor evicts
 * it; at none it is an ordinary cache entry again.  The pinned kernels are also kept in a set by
 * address (open addressing, linear probing), so that a pointer the caller passes back is checked
 * against this context's own kernels before anything is read through it. */
#include "jit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t slot_of(const rj_kernel *k, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)k;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

/* The slot holding k, or the empty slot where it would go (cap > 0, never full). */
static size_t find(const rj_ctx *ctx, const rj_kernel *k) {
  size_t i = slot_of(k, ctx->pincap);
  while (ctx->pinset[i] && ctx->pinset[i] != k)
    i = (i + 1) & (ctx->pincap - 1);
  return i;
}

static bool pinned(const rj_ctx *ctx, const rj_kernel *k) {
  return ctx->pincap && ctx->pinset[find(ctx, k)] == k;
}

/* Twice the slots (at least 64), every pinned kernel placed again; false when out of memory. */
static bool grow(rj_ctx *ctx) {
  size_t cap = ctx->pincap ? 2 * ctx->pincap : 64;
  rj_kernel **old = ctx->pinset, **t = calloc(cap, sizeof *t);
  size_t oldcap = ctx->pincap;
  if (!t) return false;
  ctx->pinset = t;
  ctx->pincap = cap;
  for (size_t i = 0; i < oldcap; i++)
    if (old[i]) ctx->pinset[find(ctx, old[i])] = old[i];
  free(old);
  return true;
}

/* k out of the set; the entries after it in its run move back to where a lookup finds them. */
static void drop(rj_ctx *ctx, const rj_kernel *k) {
  size_t mask = ctx->pincap - 1, i = find(ctx, k), j = i;
  ctx->pinset[i] = NULL;
  for (;;) {
    j = (j + 1) & mask;
    rj_kernel *m = ctx->pinset[j];
    if (!m) return;
    size_t home = slot_of(m, ctx->pincap);
    /* m stays where it is when its home lies cyclically in (i, j] */
    if (i <= j ? (i < home && home <= j) : (i < home || home <= j)) continue;
    ctx->pinset[i] = m;
    ctx->pinset[j] = NULL;
    i = j;
  }
}

rj_status jit_cache_pin(rj_ctx *ctx, rj_kernel *k) {
  if (k->pins == 0) {
    if ((size_t)(ctx->npinned + 1) * 2 > ctx->pincap && !grow(ctx))
      return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
    ctx->pinset[find(ctx, k)] = k;
    ctx->npinned++;
  }
  k->pins++;
  return RJ_OK;
}

/* Whether k is one of ctx's cached kernels (pointers compared, none followed): the error path's
 * way to tell a kernel with no pins from a pointer this context does not hold. */
static bool cached(const rj_ctx *ctx, const rj_kernel *k) {
  for (const rj_kernel *c = ctx->kernels; c; c = c->next)
    if (c == k) return true;
  return false;
}

RJ_API rj_status rj_kernel_release(rj_ctx *ctx, rj_kernel *k) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, k, "k");
  memset(&ctx->err, 0, sizeof ctx->err);
  if (!pinned(ctx, k))
    return jit_done(
        ctx, cached(ctx, k)
                 ? ir_fail(&ctx->err, RJ_EINVAL,
                           "k: holds no pin (released as often as rj_compile / rj_compile_ir "
                           "returned it)")
                 : ir_fail(&ctx->err, RJ_EINVAL,
                           "k: not a kernel of this context (another context's, or released "
                           "and since evicted)"));
  if (--k->pins == 0) {
    drop(ctx, k);
    ctx->npinned--;
    jit_cache_evict(ctx); /* beyond the bound now: the least recently used goes, maybe k */
    jit_evicted_free(ctx);
  }
  return jit_done(ctx, RJ_OK);
}
