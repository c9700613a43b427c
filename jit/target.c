/* The target of a compile: the caller's, or the GPU's own (auto), resolved in the target table
 * with no LLVM (a cache hit needs it: the target is part of the key). */
#include "jit.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

rj_status jit_target(rj_ctx *ctx, const rj_options *opt, const ir_target **out) {
  const char *name = opt && opt->target ? opt->target : "auto";
  char buf[16];
  if (strcmp(name, "auto") == 0) {
    name = "sm_90"; /* no GPU usable: the default */
    rt_cuda *rt = NULL;
    ir_err saved = ctx->err;
    int major = 0, minor = 0;
    if (jit_cuda(ctx, &rt) == RJ_OK &&
        rt_device_cc(rt, opt ? opt->device : 0, &major, &minor, &ctx->err) == RJ_OK) {
      snprintf(buf, sizeof buf, "sm_%d%da", major, minor);
      if (!ir_target_find(buf)) snprintf(buf, sizeof buf, "sm_%d%d", major, minor);
      name = buf;
    }
    ctx->err = saved;
    if (!ir_target_find(name))
      return ir_fail(&ctx->err, RJ_ETARGET,
                     "target: the GPU's compute capability (%s) is not in redjit's target table",
                     name);
  }
  *out = ir_target_find(name);
  if (*out && opt && opt->struct_size >= offsetof(rj_options, emulate_packed) + sizeof(int) &&
      opt->emulate_packed)
    *out = ir_target_emulating(*out);
  if (!*out) {
    char known[512];
    size_t k = 0;
    for (int i = 0; i < ir_target_count() && k < sizeof known - 16; i++)
      k += (size_t)snprintf(known + k, sizeof known - k, " %s", ir_target_at(i)->name);
    return ir_fail(&ctx->err, RJ_ETARGET, "target: unknown target \"%.32s\" (known:%s)", name,
                   known);
  }
  return RJ_OK;
}

RJ_API rj_status rj_target_resolve(rj_ctx *ctx, const rj_options *opt, char *buf, size_t len) {
  JIT_NEED(ctx, buf && len, "buf");
  memset(&ctx->err, 0, sizeof ctx->err);
  const ir_target *t = NULL;
  rj_status s = jit_target(ctx, opt, &t);
  if (!s) snprintf(buf, len, "%s", t->name);
  return jit_done(ctx, s);
}
