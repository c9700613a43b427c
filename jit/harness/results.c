/* What every public entry point of the harness shares: the caller's options over the defaults,
 * the results handed back as far as the caller's struct_size reaches, and the message at the end.
 */
#include "harness.h"

#include <string.h>

RJ_API void rj_check_opts_init(rj_check_opts *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof *opt);
  opt->struct_size = sizeof *opt;
  rj_options_init(&opt->compile);
}

void hr_check_opts(const rj_check_opts *in, rj_check_opts *full) {
  rj_check_opts_init(full);
  if (in) {
    size_t n = in->struct_size < sizeof *full ? in->struct_size : sizeof *full;
    memcpy(full, in, n);
    full->struct_size = sizeof *full;
  }
}

rj_status hr_done(rj_ctx *ctx, rj_status s) {
  if (!s || !rj_errmsg(ctx)[0]) rj_error_set(ctx, s, NULL);
  return s;
}

/* The size of each result struct's first version: a caller's struct_size below it is refused.
 * Fields are only appended, so these stay what they are when the structs grow. */
#define CHECK_RESULT_V1 sizeof(rj_check_result)
#define BENCH_RESULT_V1 sizeof(rj_bench_result)
#define TREDUCE_RESULT_V1 sizeof(rj_treduce_result)

/* ir_result_in, its message through the context. */
static rj_status result_size(rj_ctx *ctx, const void *res, size_t least, const char *what) {
  ir_err e = {0};
  rj_status s = ir_result_in(&e, res, least, what);
  return s ? rj_error_set(ctx, s, "%s", e.msg) : RJ_OK;
}

rj_status hr_results_begin(rj_ctx *ctx, hr_results *r, const rj_check_result *cres,
                           const rj_bench_result *bres, const rj_treduce_result *tres) {
  memset(r, 0, sizeof *r);
  r->check.struct_size = sizeof r->check;
  r->bench.struct_size = sizeof r->bench;
  r->treduce.struct_size = sizeof r->treduce;
  rj_status s = RJ_OK;
  if (cres) s = result_size(ctx, cres, CHECK_RESULT_V1, "res");
  if (!s && bres) s = result_size(ctx, bres, BENCH_RESULT_V1, "res");
  if (!s && tres) s = result_size(ctx, tres, TREDUCE_RESULT_V1, "tres");
  return s;
}

void hr_results_end(const hr_results *r, rj_check_result *cres, rj_bench_result *bres,
                    rj_treduce_result *tres) {
  if (cres) ir_result_out(cres, &r->check, sizeof r->check);
  if (bres) ir_result_out(bres, &r->bench, sizeof r->bench);
  if (tres) ir_result_out(tres, &r->treduce, sizeof r->treduce);
}

rj_status hr_enter(rj_ctx *ctx, const rj_check_opts *o, const rj_check_result *cres,
                   const rj_bench_result *bres, const rj_treduce_result *tres, hr_results *r,
                   rj_check_opts *full) {
  if (!ctx) return RJ_EINVAL;
  if (!cres && !bres) return rj_error_set(ctx, RJ_EINVAL, "res: NULL");
  rj_status s = hr_results_begin(ctx, r, cres, bres, tres);
  if (s) return hr_done(ctx, s);
  hr_check_opts(o, full);
  return RJ_OK;
}
