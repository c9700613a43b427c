/* The compile pipeline: validate -> dispatch -> plan -> key -> cache -> lower -> codegen (verify,
 * optimise, PTX).  jit_compile reads top to bottom like QBE's func(): one stage per line, the
 * same for every kind of request; what differs between kinds is in the variants' plans. */
#include "isolate.h"
#include "jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the plan */

/* The device facts a plan may ask for, read on first ask. */
typedef struct env_reader {
  rj_ctx *ctx;
  int device;
  int sms; /* -1: not read yet */
} env_reader;

static int read_sms(const pass_env *env) {
  env_reader *r = env->reader;
  if (r->sms < 0) r->sms = jit_device_sms(r->ctx, r->device);
  return r->sms;
}

static const char *why_not(const pass_env *env, const char *name, const rj_request *r, char *buf,
                           size_t n) {
  const pass_variant *v = pass_variant_find(name);
  return v ? pass_declines(v, r, env->target, buf, n) : "no such variant";
}

rj_status jit_plan(rj_ctx *ctx, const pass_variant *v, const rj_request *req, const ir_target *tg,
                   int device, int sms, pass_plan *out) {
  env_reader reader = {.ctx = ctx, .device = device, .sms = sms};
  pass_env env = {.target = tg, .sms = read_sms, .why_not = why_not, .reader = &reader};
  return pass_plan_make(v, req, &env, out);
}

/* ---------------------------------------------------------------- lowering */

/* A kernel for req as v plans it, with everything but the code: key (taken), names, the plan. */
static rj_kernel *kernel_new(char *key, const rj_request *req, const pass_variant *v,
                             const ir_target *tg, const pass_plan *plan) {
  rj_kernel *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  k->key = key;
  k->req = *req;
  if (jit_custom_keep(k, req)) return free(k), NULL; /* op custom: k keeps its IR text */
  k->plan = *plan;
  snprintf(k->variant, sizeof k->variant, "%s", v->name);
  snprintf(k->target, sizeof k->target, "%s", tg->name);
  return k;
}

/* The launch geometry is the plan's, where the emitter left it (variants without a plan step
 * set theirs while emitting): both the kernel and the caller's plan keep it. */
static void keep_geometry(const pass_emit *em, rj_kernel *k, pass_plan *plan) {
  memcpy(k->grid, em->grid, sizeof k->grid);
  memcpy(k->block, em->block, sizeof k->block);
  k->shared_bytes = em->shared_bytes;
  memcpy(plan->grid, em->grid, sizeof plan->grid);
  memcpy(plan->block, em->block, sizeof plan->block);
  plan->shared_bytes = em->shared_bytes;
  k->plan = *plan;
}

/* v's emitter into a fresh module, then codegen into k.  needs k's plan */
static rj_status lower(rj_ctx *ctx, const pass_variant *v, const rj_request *req,
                       const ir_target *tg, const rj_options *opt, rj_kernel *k, pass_plan *plan) {
  ir_err *e = &ctx->err;
  pass_emit em = {.C = ctx->llvm, .target = tg, .err = e, .plan = &k->plan};
  if (req->kind == RJ_KIND_TENSOR && req->u.tensor.op == RJ_OP_CUSTOM) em.custom = &req->u.tensor;
  memcpy(em.grid, plan->grid, sizeof em.grid);
  memcpy(em.block, plan->block, sizeof em.block);
  em.shared_bytes = plan->shared_bytes;
  em.M = LLVMModuleCreateWithNameInContext("redjit", ctx->llvm);
  em.B = LLVMCreateBuilderInContext(ctx->llvm);
  rj_status s = v->kernel(&em, req, v);
  if (!s && em.nparams != plan->np)
    s = ir_fail(e, RJ_ELLVM, "internal: %s built %d size parameters for a plan of %d", v->name,
                em.nparams, plan->np);
  if (!s) s = jit_pick_ptx(ctx, tg, opt, em.ptx_needed, &k->ptx_version);
  if (!s) s = jit_codegen_request(ctx, em.M, req, tg, opt, k, em.entry);
  if (!s) snprintf(k->entry, sizeof k->entry, "%s", em.entry);
  if (!s) keep_geometry(&em, k, plan);
  LLVMDisposeBuilder(em.B);
  LLVMDisposeModule(em.M);
  return s;
}

/* ---------------------------------------------------------------- the pipeline */

static rj_status remember(rj_ctx *ctx, const rj_request *req, const rj_options *opt, rj_kernel *k,
                          const pass_plan *plan) {
  jit_memo_put(ctx, req, opt, k, plan);
  return RJ_OK;
}

rj_status jit_compile(rj_ctx *ctx, const rj_request *req, const rj_options *opt, rj_kernel **out,
                      pass_plan *plan) {
  const ir_target *tg = NULL;
  const pass_variant *v = NULL;
  char *key = NULL;
  rj_kernel *k = NULL;
  rj_status s;
  *out = NULL;
  if ((*out = jit_memo_find(ctx, req, opt, plan))) return ctx->memory_hits++, RJ_OK;
  if ((s = jit_validate(ctx, req))) return s;
  if ((s = jit_target(ctx, opt, &tg))) return s;
  double t0 = jit_now_ms(); /* compile time proper: after the target (auto may start the driver) */
  if (!(v = pass_dispatch(req, tg, NULL, 0, &ctx->err))) return ctx->err.status;
  if ((s = jit_plan(ctx, v, req, tg, opt ? opt->device : 0, -1, plan))) return s;
  if ((s = jit_cache_key(ctx, req, tg, opt, plan, &key))) return s;
  if ((*out = jit_cache_find(ctx, key)))
    return free(key), ctx->memory_hits++, remember(ctx, req, opt, *out, plan);
  if ((*out = jit_disk_find(ctx, key, plan)))
    return free(key), jit_custom_keep(*out, req), remember(ctx, req, opt, *out, plan);
  if (!(k = kernel_new(key, req, v, tg, plan)))
    return free(key), ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if ((s = lower(ctx, v, req, tg, opt, k, plan))) return jit_kernel_free(k), s;
  k->compile_ms = jit_now_ms() - t0;
  jit_cache_add(ctx, k);
  jit_disk_store(ctx, k);
  *out = k;
  return remember(ctx, req, opt, k, plan);
}

RJ_API rj_status rj_compile(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            rj_kernel **out) {
  JIT_NEED(ctx, out, "out");
  memset(&ctx->err, 0, sizeof ctx->err);
  pass_plan plan;
  return jit_done(ctx, jit_compile(ctx, req, opt, out, &plan));
}
