/* op custom: a caller's own combine `T fn(T, T)`, given as LLVM IR text, in redjit's kernel.
 * redjit lowers its kernel as for any op (trusted code); its combines are calls of the
 * declaration PASS_CUSTOM_COMBINE, and lowering leaves the kernel as bitcode.  Then one stage of
 * the pipeline, jit_combine_stage: the kernel keeps the request's combine text, and the caller's
 * IR is parsed, screened and linked into the kernel, then compiled (the compiler library's
 * jit/llvm/combine.c) -- in the compiler process redjit-irc (jit/isolate.c), as rj_compile_ir's
 * modules are, or in this process under rj_options.ir_in_process (REDJIT_IR_IN_PROCESS=1). */
#include "isolate.h"
#include "jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* k keeps req's combine text: a copy in k->src, which k->req points at (the caller's request
 * may be gone when k is next used). */
static rj_status keep_text(rj_ctx *ctx, rj_kernel *k, const rj_request *req) {
  const rj_combine *from = ir_request_combine(req);
  rj_combine *t = ir_request_combine_mut(&k->req);
  if (!from || !t) return RJ_OK;
  size_t n = strlen(from->ir);
  char *copy = malloc(n + 1);
  if (!copy) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  memcpy(copy, from->ir, n + 1);
  free(k->src);
  k->src = copy;
  k->srclen = n;
  t->ir = copy;
  t->text = 0; /* the kernel's own copy, not the context's kept one */
  return RJ_OK;
}

rj_status jit_combine_stage(rj_ctx *ctx, const rj_request *req, const ir_target *tg,
                            const rj_options *opt, rj_kernel *k) {
  const rj_combine *t = ir_request_combine(req);
  if (!k->custom_bc || !t) return RJ_OK;
  rj_status s = keep_text(ctx, k, req);
  char names[RJ_COMBINE_NAMES_MAX + RJ_COMBINE_FN_MAX];
  ir_combine_names(t, names, RJ_COMBINE_NAMES_MAX);
  const rj_tensor *tn = req->kind == RJ_KIND_TENSOR ? &req->u.tensor : NULL;
  if (tn && (tn->fused.map == RJ_MAP_IR ||
             tn->fused.epilogue == RJ_EPI_IR)) /* the fourth and fifth roles */
    snprintf(names, sizeof names, "   %s %s", tn->fused.map == RJ_MAP_IR ? tn->fused.map_fn : "",
             tn->fused.epilogue == RJ_EPI_IR ? tn->fused.epilogue_fn : "");
  if (!s && jit_ir_in_process(opt))
    s = jit_compile_combine(ctx, k->custom_bc, k->custom_bcn, k->src, k->srclen, names, tg, k);
  else if (!s)
    s = jit_ir_isolated_combine(ctx, k->custom_bc, k->custom_bcn, k->entry, k->src, k->srclen,
                                names, tg, opt, k);
  free(k->custom_bc);
  k->custom_bc = NULL;
  k->custom_bcn = 0;
  return s;
}

RJ_API rj_status rj_irc_compile_combine(rj_ctx *ctx, const char *mod, size_t n, const char *entry,
                                        const char *ir, size_t irn, const char *fn,
                                        const rj_options *opt, rj_kernel **out) {
  if (!ctx || !mod || !entry || !ir || !fn || !out) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  const ir_target *tg = NULL;
  rj_kernel *k = calloc(1, sizeof *k);
  if (k) k->ctx = ctx;
  rj_status s = k ? jit_target(ctx, opt, &tg) : ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (!s) s = jit_pick_ptx(ctx, tg, opt, 0, &k->ptx_version);
  if (!s) s = jit_compile_combine(ctx, mod, n, ir, irn, fn, tg, k);
  if (!s && !(k->key = strdup("combine"))) s = ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (s) {
    jit_kernel_free(k);
    return jit_done(ctx, s);
  }
  snprintf(k->entry, sizeof k->entry, "%s", entry);
  jit_cache_add(ctx, k);
  *out = k;
  return jit_done(ctx, RJ_OK);
}
