/* The lowering of a planned request (the compiler library's side of jit_compile): the variant's
 * emitter builds the kernel into a fresh module of the context's LLVM, then codegen. */
#include "compiler.h"

#include <stdio.h>
#include <string.h>

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

/* The emitter of the variant named `variant` (this library's own registry: libredjit.so's has
 * no emitters) into a fresh module, then codegen into k.  needs k's plan */
rj_status jit_llvm_lower(rj_ctx *ctx, const char *variant, const rj_request *req,
                         const ir_target *tg, const rj_options *opt, rj_kernel *k,
                         pass_plan *plan) {
  ir_err *e = &ctx->err;
  const pass_variant *v = pass_variant_find(variant);
  if (!v || !v->kernel)
    return ir_fail(e, RJ_ELLVM, "internal: the compiler library has no emitter for variant %s",
                   variant);
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
  if (!s) s = jit_llvm_codegen_request(ctx, em.M, req, tg, k);
  if (!s) snprintf(k->entry, sizeof k->entry, "%s", em.entry);
  if (!s) keep_geometry(&em, k, plan);
  LLVMDisposeBuilder(em.B);
  LLVMDisposeModule(em.M);
  return s;
}
