/* `run` and `bench` for tensor requests: not implemented yet. */
#include "jit.h"

rj_status jit_check_tensor(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                           rj_check_result *res) {
  (void)req;
  (void)o;
  (void)res;
  return ir_fail(&ctx->err, RJ_EUNSUPPORTED, "run: kind tensor cannot be run yet");
}

rj_status jit_bench_tensor(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                           rj_bench_result *res) {
  (void)req;
  (void)o;
  (void)res;
  return ir_fail(&ctx->err, RJ_EUNSUPPORTED, "bench: kind tensor cannot be run yet");
}
