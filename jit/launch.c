/* The one load and the one launch: every path that runs a kernel (rj_reduce, rj_kernel_launch,
 * treduce, the run / bench harness) goes through jit_load and jit_launch. */
#include "jit.h"

#include <stdlib.h>

rj_status jit_load(rj_ctx *ctx, rj_kernel *k, int dev, double *ms) {
  double t0 = jit_now_ms();
  if (ms) *ms = 0;
  for (jit_module *m = k->loads; m; m = m->next)
    if (m->dev == dev) {
      k->module = m->module;
      k->function = m->function;
      k->loaded_on = dev;
      return RJ_OK;
    }
  rt_cuda *rt;
  rj_status s = jit_cuda(ctx, &rt);
  if (s) return s;
  jit_module *m = calloc(1, sizeof *m);
  if (!m) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  s = rt_module_load(rt, k->ptx, k->entry, &m->module, &m->function, &ctx->err);
  if (s) {
    free(m);
    return s;
  }
  m->dev = dev;
  m->next = k->loads;
  k->loads = m;
  k->module = m->module;
  k->function = m->function;
  k->loaded_on = dev;
  if (ms) *ms = jit_now_ms() - t0;
  return RJ_OK;
}

rj_status jit_launch(rj_ctx *ctx, rj_kernel *k, int dev, const jit_launch_args *l) {
  rt_cuda *rt = NULL;
  rj_status s = jit_cuda(ctx, &rt);
  if (!s) s = jit_load(ctx, k, dev, NULL);
  if (s) return s;
  if (l->ms)
    return rt_launch(rt, k->function, l->grid, l->block, l->shared, l->args, l->ms, &ctx->err);
  return rt_launch_async(rt, k->function, l->grid, l->block, l->shared, l->args, l->stream,
                         &ctx->err);
}
