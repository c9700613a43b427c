/* The lowering of a planned request (the compiler library's side of jit_compile): the variant's
 * emitter builds the kernel into a fresh module of the context's LLVM, then codegen; and the same
 * lowering again for a compiled kernel's IR text, asked for after its compile. */
#include "llvm.h"

#include <stdio.h>
#include <stdlib.h>

/* The emitter of the variant named `variant` (this library's own registry: libredjit.so's has
 * no emitters) for req into em's fresh module (em: target and plan set). */
static rj_status emit_module(rj_ctx *ctx, const char *variant, const rj_request *req,
                             const pass_plan *plan, pass_emit *em) {
  ir_err *e = &ctx->err;
  const pass_variant *v = pass_variant_find(variant);
  if (!v || !v->kernel)
    return ir_fail(e, RJ_ELLVM, "internal: the compiler library has no emitter for variant %s",
                   variant);
  em->C = ctx->llvm->C;
  em->err = e;
  const rj_combine *cb = ir_request_combine(req);
  if (cb) em->custom = &cb->identity;
  em->values = req->kind == RJ_KIND_TENSOR && req->u.tensor.values;
  em->nothers = req->kind == RJ_KIND_TENSOR ? req->u.tensor.nothers : 0;
  em->segmented = req->kind == RJ_KIND_TENSOR && req->u.tensor.segments;
  em->M = LLVMModuleCreateWithNameInContext("redjit", ctx->llvm->C);
  em->B = LLVMCreateBuilderInContext(ctx->llvm->C);
  rj_status s = v->kernel(em, req, v);
  if (!s && em->nparams != plan->np)
    s = ir_fail(e, RJ_ELLVM, "internal: %s built %d size parameters for a plan of %d", v->name,
                em->nparams, plan->np);
  return s;
}

/* The emitter of the variant named `variant` into a fresh module, then codegen into k (the PTX;
 * the IR text only where k->text_now: jit_llvm_text makes it when asked).  k->plan, read only,
 * is the variant's plan: the launch geometry is its. */
rj_status jit_llvm_lower(rj_ctx *ctx, const char *variant, const rj_request *req,
                         const ir_target *tg, const rj_options *opt, rj_kernel *k) {
  pass_emit em = {.target = tg, .plan = &k->plan};
  double t0 = jit_llvm_now_ms();
  rj_status s = emit_module(ctx, variant, req, &k->plan, &em);
  k->stage_ms[0] += jit_llvm_now_ms() - t0;
  if (!s) s = jit_pick_ptx(ctx, tg, opt, em.ptx_needed, &k->ptx_version);
  if (!s) s = jit_llvm_codegen_request(ctx, em.M, req, tg, k);
  if (!s) snprintf(k->entry, sizeof k->entry, "%s", em.entry);
  if (em.B) LLVMDisposeBuilder(em.B);
  if (em.M) LLVMDisposeModule(em.M);
  return s;
}

/* k's module made again as its compile made it -- its variant's emitter, k's request, k's plan,
 * k's PTX version -- then verify and O3, keeping the text before and after; no PTX. */
rj_status jit_llvm_text(rj_ctx *ctx, const rj_kernel *k, const ir_target *tg, char **ll,
                        char **ll_opt) {
  rj_kernel text = {.ptx_version = k->ptx_version};
  pass_emit em = {.target = tg, .plan = &k->plan};
  rj_status s = emit_module(ctx, k->variant, &k->req, &k->plan, &em);
  if (!s) s = jit_codegen(ctx, em.M, tg, &text, JIT_CG_TEXT | JIT_CG_NO_PTX);
  if (em.B) LLVMDisposeBuilder(em.B);
  if (em.M) LLVMDisposeModule(em.M);
  if (s) return free(text.ll), free(text.ll_opt), s;
  *ll = text.ll;
  *ll_opt = text.ll_opt;
  return RJ_OK;
}
