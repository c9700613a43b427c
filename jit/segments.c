/* rj_segments_status: the checked side of segmented reductions (docs/TENSOR.md "Segmented
 * reductions").  Their kernels never fault on invalid offsets: they clamp them and OR RJ_SEG_*
 * bits into the caller's status word; this call waits for the device, reads and zeroes the word,
 * and turns a set bit into RJ_EINVAL naming "segments". */
#include "jit.h"

#include <string.h>

/* The message of the bits set in w. */
static rj_status report(rj_ctx *ctx, uint32_t w) {
  if (!w) return RJ_OK;
  return ir_fail(&ctx->err, RJ_EINVAL,
                 "segments: invalid offsets in a launch since the last check (status 0x%x:%s%s%s); "
                 "those segments were reduced over their offsets clamped to [0, N] and made "
                 "non-decreasing",
                 (unsigned)w, w & RJ_SEG_NEGATIVE ? " an offset below 0" : "",
                 w & RJ_SEG_DECREASING ? " offsets[s + 1] < offsets[s]" : "",
                 w & RJ_SEG_PAST_END ? " an offset past the reduced extent" : "");
}

RJ_API rj_status rj_segments_status(rj_ctx *ctx, int device, rj_devptr status) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  if (!status) return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "status: NULL device pointer"));
  rt_cuda *rt = NULL;
  rj_status s = jit_cuda(ctx, &rt);
  if (s || (s = rt_enter(rt, device, &ctx->err))) return jit_done(ctx, s);
  uint32_t w = 0, zero = 0;
  s = rt_sync(rt, &ctx->err);
  if (!s) s = rt_dtoh(rt, &w, status, sizeof w, &ctx->err);
  if (!s && w) s = rt_htod(rt, status, &zero, sizeof zero, &ctx->err);
  rt_leave(rt);
  return jit_done(ctx, s ? s : report(ctx, w));
}
