/* The compile pipeline: validate -> dispatch -> plan -> key -> cache -> lower -> codegen (verify,
 * optimise, PTX) -> op custom's combine.  jit_compile reads top to bottom like QBE's func(): one
 * stage per line, the same for every kind of request; what differs between kinds is in the
 * variants' plans, which decide the launch geometry too.  Every stage up to the caches runs here
 * with no LLVM; lowering and codegen are the compiler library's (jit/compiler.c loads it on the
 * first miss; jit/llvm/ is its side), and op custom's combine is linked in its own stage
 * (jit/custom.c). */
#include "jit.h"

#include <stddef.h>
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

#define JIT_SMS_MAX 65536

rj_status jit_sms_asked(rj_ctx *ctx, const rj_options *opt, int *sms) {
  *sms = -1;
  if (opt && opt->struct_size >= offsetof(rj_options, sm_count) + sizeof(int) && opt->sm_count) {
    if (opt->sm_count < 1 || opt->sm_count > JIT_SMS_MAX)
      return ir_fail(&ctx->err, RJ_EINVAL, "sm_count: %d, expected 1 .. %d (0: the device's)",
                     opt->sm_count, JIT_SMS_MAX);
    *sms = opt->sm_count;
    return RJ_OK;
  }
  const char *env = getenv("REDJIT_SM_COUNT");
  if (!env || !*env) return RJ_OK;
  char *end = NULL;
  long n = strtol(env, &end, 10);
  if (*end || n < 1 || n > JIT_SMS_MAX)
    return ir_fail(&ctx->err, RJ_EINVAL, "REDJIT_SM_COUNT: \"%.32s\", expected 1 .. %d", env,
                   JIT_SMS_MAX);
  *sms = (int)n;
  return RJ_OK;
}

rj_status jit_plan(rj_ctx *ctx, const pass_variant *v, const rj_request *req, const ir_target *tg,
                   int device, int sms, pass_plan *out) {
  env_reader reader = {.ctx = ctx, .device = device, .sms = sms};
  pass_env env = {.target = tg, .sms = read_sms, .why_not = why_not, .reader = &reader};
  rj_status s = pass_plan_make(v, req, &env, out);
  if (!s && !out->block[0]) /* the plan owns the launch geometry */
    s = ir_fail(&ctx->err, RJ_ELLVM, "internal: variant %s planned no launch geometry", v->name);
  return s;
}

/* ---------------------------------------------------------------- the kernel */

/* A kernel for req as v plans it, with everything but the code: key (taken), names, the plan. */
static rj_kernel *kernel_new(rj_ctx *ctx, char *key, const rj_request *req, const pass_variant *v,
                             const ir_target *tg, const pass_plan *plan) {
  rj_kernel *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  k->ctx = ctx;
  k->text_now = jit_dump_on(); /* the dump has the IR text of the compile itself */
  k->key = key;
  k->req = *req;
  k->plan = *plan;
  snprintf(k->variant, sizeof k->variant, "%s", v->name);
  snprintf(k->target, sizeof k->target, "%s", tg->name);
  return k;
}

/* ---------------------------------------------------------------- the pipeline */

/* by: "" for a hit by the key, " (memo)" for one by the request's bytes (jit_memo_find) */
static void memory_hit(rj_ctx *ctx, rj_kernel *k, const char *by) {
  ctx->memory_hits++;
  jit_cache_touch(ctx, k);
  if (jit_log_on(ctx))
    jit_log(ctx, "memory hit %016llx %s%s", (unsigned long long)k->hash, k->variant, by);
}

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
  if ((s = jit_text_check(ctx, req))) return s; /* a stale parsed text: never read, not even here */
  if ((*out = jit_memo_find(ctx, req, opt, plan))) return memory_hit(ctx, *out, " (memo)"), RJ_OK;
  if ((s = jit_validate(ctx, req))) return s;
  if ((s = jit_target(ctx, opt, &tg))) return s;
  double t0 = jit_now_ms(); /* compile time proper: after the target (auto may start the driver) */
  if (!(v = pass_dispatch(req, tg, NULL, 0, &ctx->err))) return ctx->err.status;
  int sms = -1;
  if ((s = jit_sms_asked(ctx, opt, &sms))) return s;
  if ((s = jit_plan(ctx, v, req, tg, opt ? opt->device : 0, sms, plan))) return s;
  if ((s = jit_cache_key(ctx, req, tg, opt, plan, &key))) return s;
  if ((*out = jit_cache_find(ctx, key)))
    return free(key), memory_hit(ctx, *out, ""), remember(ctx, req, opt, *out, plan);
  if ((*out = jit_disk_find(ctx, key)))
    return free(key), jit_evicted_free(ctx), remember(ctx, req, opt, *out, plan);
  if (!(k = kernel_new(ctx, key, req, v, tg, plan)))
    return free(key), ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if ((s = jit_lower(ctx, v, req, tg, opt, k)) ||      /* the variant's kernel, then codegen */
      (s = jit_combine_stage(ctx, req, tg, opt, k)) || /* op custom: screen, isolate, link */
      (s = jit_ptx_header(ctx, k)))                    /* the launch facts atop the PTX */
    return jit_kernel_free(k), s;
  k->compile_ms = jit_now_ms() - t0;
  jit_cache_add(ctx, k);
  jit_log(ctx, "miss %016llx %s: compiled in %.3f ms", (unsigned long long)k->hash, k->variant,
          k->compile_ms);
  jit_dump(ctx, k);
  jit_disk_store(ctx, k);
  jit_evicted_free(ctx);
  *out = k;
  return remember(ctx, req, opt, k, plan);
}

RJ_API rj_status rj_compile(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            rj_kernel **out) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, out, "out");
  memset(&ctx->err, 0, sizeof ctx->err);
  pass_plan plan;
  ctx->pin_keep = true;
  rj_status s = jit_compile(ctx, req, opt, out, &plan);
  ctx->pin_keep = false;
  if (!s && (s = jit_cache_pin(ctx, *out))) *out = NULL; /* one pin more: rj_kernel_release */
  return jit_done(ctx, s);
}
