/* The compile pipeline: validate -> dispatch -> lower -> verify -> optimise -> PTX.
 * rj_compile reads top to bottom like QBE's main: one stage per line. */
#include "../passes/passes.h"
#include "../passes/tensor.h"
#include "jit.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the pipeline */

/* Issue 6: a dynamic tensor request whose view takes a runtime-size kernel (d filled) is keyed by
 * what the kernel compiles in — class (variant), plan bucket, dtype, op, nan, accum,
 * deterministic — not by its sizes; anything else by its canonical JSON. */
static rj_status cache_text(const rj_request *req, const ir_target *tg, int sms, tns_dyn *d,
                            bool *dyn, char **text, ir_err *e) {
  char why[256];
  *dyn = req->kind == RJ_KIND_TENSOR && req->u.tensor.dynamic &&
         !tns_dynamic(req, tg, sms, d, why, sizeof why);
  if (!*dyn) return ir_canonical(req, text, e);
  const rj_tensor *t = &req->u.tensor;
  char buf[192];
  snprintf(buf, sizeof buf, "{dynamic %s|%s|op%d|dtype%d|nan%d|accum%d|det%d}", d->variant,
           d->bucket, t->op, t->dtype, t->nan, t->accum, t->deterministic);
  *text = strdup(buf);
  return *text ? RJ_OK : ir_fail(e, RJ_ENOMEM, "out of memory");
}

RJ_API rj_status rj_compile(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            rj_kernel **out) {
  JIT_NEED(ctx, out, "out");
  memset(&ctx->err, 0, sizeof ctx->err);
  *out = NULL;
  ir_err *e = &ctx->err;
  const ir_target *tg = NULL;
  const pass_variant *v = NULL;
  char *canon = NULL, key[64], *fullkey = NULL;
  rj_status s;
  /* 1. validate, resolve the target, look in the cache */
  if ((s = jit_validate(ctx, req)) || (s = jit_target(ctx, opt, &tg))) return jit_done(ctx, s);
  double t0 = jit_now_ms(); /* compile time proper: after the target (auto may start the driver) */
  int sms = req->kind == RJ_KIND_TENSOR ? jit_tensor_sms(ctx, opt) : 0; /* issue 6 */
  tns_dyn dyn;
  bool isdyn = false;
  if ((s = cache_text(req, tg, sms, &dyn, &isdyn, &canon, e))) return jit_done(ctx, s);
  snprintf(key, sizeof key, "|%s|%d%s", tg->name, opt ? opt->ptx_version : 0,
           tg->emulated ? "|emulated" : "");
  if (sms) snprintf(key + strlen(key), sizeof key - strlen(key), "|sms%d", sms);
  fullkey = malloc(strlen(canon) + strlen(key) + 1);
  if (!fullkey) {
    free(canon);
    return jit_done(ctx, ir_fail(e, RJ_ENOMEM, "out of memory"));
  }
  strcpy(fullkey, canon);
  strcat(fullkey, key);
  free(canon);
  if ((*out = jit_cache_find(ctx, fullkey))) {
    free(fullkey);
    return jit_done(ctx, RJ_OK);
  }
  /* 2. dispatch */
  if (!(v = pass_dispatch(req, tg, NULL, 0, e))) {
    free(fullkey);
    return jit_done(ctx, e->status);
  }
  /* 3. lower into a fresh module */
  pass_emit em = {.C = ctx->llvm, .target = tg, .err = e};
  em.sms = sms;
  em.M = LLVMModuleCreateWithNameInContext("redjit", ctx->llvm);
  em.B = LLVMCreateBuilderInContext(ctx->llvm);
  rj_kernel *k = calloc(1, sizeof *k);
  if (!k) s = ir_fail(e, RJ_ENOMEM, "out of memory");
  if (!s) s = v->kernel(&em, req, v);
  if (!s && isdyn != (em.nparams > 0))
    s = ir_fail(e, RJ_ELLVM, "internal: %s %s a runtime-size kernel for a request keyed %s",
                v->name, em.nparams ? "built" : "did not build", isdyn ? "as one" : "by its sizes");
  if (!s) s = jit_pick_ptx(ctx, tg, opt, em.ptx_needed, &k->ptx_version);
  /* 4. verify, keep the IR as built, optimise, keep it again, emit PTX */
  if (!s) s = jit_codegen(ctx, em.M, tg, k, false);
  LLVMDisposeBuilder(em.B);
  LLVMDisposeModule(em.M);
  if (s) {
    jit_kernel_free(k);
    free(fullkey);
    return jit_done(ctx, s);
  }
  /* 5. into the cache */
  k->key = fullkey;
  k->req = *req;
  snprintf(k->variant, sizeof k->variant, "%s", v->name);
  snprintf(k->target, sizeof k->target, "%s", tg->name);
  snprintf(k->entry, sizeof k->entry, "%s", em.entry);
  memcpy(k->grid, em.grid, sizeof k->grid);
  memcpy(k->block, em.block, sizeof k->block);
  k->shared_bytes = em.shared_bytes;
  k->dyn_np = em.nparams;
  k->sms = sms;
  if (isdyn) snprintf(k->bucket, sizeof k->bucket, "%s", dyn.bucket);
  k->compile_ms = jit_now_ms() - t0;
  jit_cache_add(ctx, k);
  *out = k;
  return jit_done(ctx, RJ_OK);
}
