/* A caller's finished module (IR text or bitcode, made by any LLVM, e.g. one that used
 * the rj_emit* functions of libredjit_emit.a) through redjit's pipeline: parse into the
 * context's LLVM, verify, O3, PTX; and the device calls a language runtime needs to run it
 * (memory, launch).  Nothing LLVM crosses the library boundary: only bytes.  The compile itself
 * is the compiler library's (jit/llvm/ir_module.c), in process or in redjit-irc (isolate.c). */
#include "../passes/passes.h"
#include "isolate.h"
#include "jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t fnv1a(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
  return h;
}

RJ_API rj_status rj_compile_ir(rj_ctx *ctx, const char *ir, size_t len, const char *entry,
                               const rj_options *opt, rj_kernel **out) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  ir_err *e = &ctx->err;
  if (out) *out = NULL;
  if (!ir || !entry || !out)
    return jit_done(ctx, ir_fail(e, RJ_EINVAL, "ir, entry and out are required"));
  if (!entry[0] || strlen(entry) >= sizeof((rj_kernel *)0)->entry)
    return jit_done(ctx, ir_fail(e, RJ_EINVAL, "entry: empty or longer than 63 characters"));
  size_t n = len ? len : strlen(ir);
  const ir_target *tg = NULL;
  int ptx = 0;
  rj_status s;
  if ((s = jit_target(ctx, opt, &tg)) || (s = jit_pick_ptx(ctx, tg, opt, 0, &ptx)))
    return jit_done(ctx, s);
  double t0 = jit_now_ms();
  /* 1. the cache: by content hash, length, entry, target and PTX version */
  char key[192];
  snprintf(key, sizeof key, "ir:%016llx:%zu|%s|%s|%d", (unsigned long long)fnv1a(ir, n), n, entry,
           tg->name, ptx);
  for (rj_kernel *c = ctx->kernels; c; c = c->next) /* the hash names it; the bytes decide */
    if (c->src && c->srclen == n && strcmp(c->key, key) == 0 && memcmp(c->src, ir, n) == 0) {
      jit_cache_touch(ctx, c);
      jit_log(ctx, "memory hit %016llx ir", (unsigned long long)c->hash);
      if ((s = jit_cache_pin(ctx, c))) return jit_done(ctx, s); /* a pin per return */
      *out = c;
      return jit_done(ctx, RJ_OK);
    }
  /* 2. the compile: in the compiler process (jit/isolate.c), or here when the caller asks */
  rj_kernel *k = calloc(1, sizeof *k);
  if (!k) return jit_done(ctx, ir_fail(e, RJ_ENOMEM, "out of memory"));
  k->ctx = ctx;
  k->ptx_version = ptx;
  s = jit_ir_in_process(opt) ? jit_compile_module(ctx, ir, n, entry, tg, k)
                             : jit_ir_isolated(ctx, ir, n, entry, tg, opt, k);
  if (!s && !(k->key = strdup(key))) s = ir_fail(e, RJ_ENOMEM, "out of memory");
  if (!s && !(k->src = malloc(n))) s = ir_fail(e, RJ_ENOMEM, "out of memory");
  if (s) {
    jit_kernel_free(k);
    return jit_done(ctx, s);
  }
  memcpy(k->src, ir, n);
  k->srclen = n;
  /* 3. into the cache; the launch geometry is the caller's (rj_kernel_launch), and k->req stays
   * zeroed: there is no request behind this kernel */
  snprintf(k->variant, sizeof k->variant, "ir");
  snprintf(k->target, sizeof k->target, "%s", tg->name);
  snprintf(k->entry, sizeof k->entry, "%s", entry);
  k->compile_ms = jit_now_ms() - t0;
  /* the compiler process's PTX has its header already (it ran this very call, in process) */
  if (strncmp(k->ptx, JIT_PTX_MARK, strlen(JIT_PTX_MARK)) != 0) s = jit_ptx_header(ctx, k);
  if (s || (s = jit_cache_pin(ctx, k))) { /* pinned before it counts against the bound */
    jit_kernel_free(k);
    return jit_done(ctx, s);
  }
  jit_cache_add(ctx, k);
  jit_evicted_free(ctx);
  jit_log(ctx, "miss %016llx ir: compiled in %.3f ms", (unsigned long long)k->hash, k->compile_ms);
  jit_dump(ctx, k);
  *out = k;
  return jit_done(ctx, RJ_OK);
}
