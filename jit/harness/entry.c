/* The public entry points of redjit_check.h (rj_check, rj_bench; treduce's own are in
 * check_treduce.c): defaults, validation, compile -> load, then the kind's run or bench. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compiles req and loads it on o->compile.device, naming its variant and target; c (NULL: not
 * asked) gets the cache, compile, disk-read and load times. */
static rj_status prepare(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                         char variant[RJ_NAME_MAX], char target[16], rj_check_result *c,
                         rj_kernel **k) {
  rj_cache_stats before = {.struct_size = sizeof before}, after = {.struct_size = sizeof after};
  long long compiles = rj_ctx_compile_count(ctx);
  rj_ctx_cache_stats(ctx, &before);
  rj_status s = rj_compile(ctx, req, &o->compile, k);
  if (s) return s;
  rj_ctx_cache_stats(ctx, &after);
  snprintf(variant, RJ_NAME_MAX, "%s", rj_kernel_variant(*k));
  snprintf(target, 16, "%s", rj_kernel_target(*k));
  if (c) { /* the time this call spent: a compile here, a disk read, or nothing (memory) */
    bool miss = rj_ctx_compile_count(ctx) > compiles, disk = after.disk_hits > before.disk_hits;
    snprintf(c->cache, sizeof c->cache, "%s", miss ? "miss" : disk ? "disk" : "memory");
    c->compile_ms = miss ? rj_kernel_compile_ms(*k) : 0;
    c->cache_ms = disk ? rj_kernel_disk_ms(*k) : 0;
  }
  return rj_kernel_load(ctx, *k, o->compile.device, c ? &c->load_ms : NULL);
}

/* run and bench, per request kind (ORDER KIND: rj_kind values index this table); treduce's
 * kernels are rj_treduce_run's, outside these frames. */
static const struct {
  hr_check_fn *check;
  hr_bench_fn *bench;
} by_kind[] = {
    [RJ_KIND_TILE] = {hr_check_tile, hr_bench_tile},
    [RJ_KIND_SUBGROUP] = {hr_check_subgroup, hr_bench_subgroup},
    [RJ_KIND_TENSOR] = {hr_check_tensor, hr_bench_tensor},
};

/* The pin prepare's rj_compile took, released (k NULL: none), the call's status and message
 * kept. */
static rj_status let_go(rj_ctx *ctx, rj_kernel *k, rj_status s) {
  if (!k) return s;
  if (!s) return rj_kernel_release(ctx, k);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", rj_errmsg(ctx));
  rj_kernel_release(ctx, k);
  return rj_error_set(ctx, s, "%s", msg);
}

/* What rj_check can do with req, before any compile: op custom has no CPU oracle (a checked run
 * is refused), and no_check serves kinds tensor and treduce (those with op custom). */
static rj_status check_reach(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o) {
  bool custom = ir_request_op(req) == RJ_OP_CUSTOM;
  if (req->kind == RJ_KIND_TENSOR && req->u.tensor.fused.map == RJ_MAP_IR && !o->no_check &&
      !o->map_ref)
    return rj_error_set(ctx, RJ_EUNSUPPORTED,
                        "map: a caller's map (LLVM IR) has no CPU oracle of its own; give its C "
                        "reference (rj_check_opts.map_ref), or launch it unchecked (no_check, "
                        "`redjit run --no-check`)");
  if (req->kind == RJ_KIND_TENSOR && req->u.tensor.fused.epilogue == RJ_EPI_IR && !o->no_check &&
      !o->epilogue_ref)
    return rj_error_set(ctx, RJ_EUNSUPPORTED,
                        "epilogue: a caller's epilogue (LLVM IR) has no CPU oracle of its own; "
                        "give its C reference (rj_check_opts.epilogue_ref), or launch it "
                        "unchecked (no_check, `redjit run --no-check`)");
  if (o->no_check && req->kind != RJ_KIND_TENSOR)
    return rj_error_set(ctx, RJ_EINVAL,
                        custom ? "no_check: tensor and treduce requests only (a %s request of op "
                                 "custom: compile it with rj_compile, launch it with "
                                 "rj_kernel_launch and check it against your own reference)"
                               : "no_check: tensor and treduce requests only (every op of a %s "
                                 "request but custom has an oracle: run it checked)",
                        ir_kind_name(req->kind));
  if (o->no_check || !custom) return RJ_OK;
  if (req->kind == RJ_KIND_SUBGROUP)
    return rj_error_set(ctx, RJ_EUNSUPPORTED,
                        "primitive: %s (op \"custom\") has no CPU oracle (the caller's IR does "
                        "not run on the CPU); check it against your own reference (rj_compile, "
                        "rj_kernel_launch)",
                        ir_primitive_name(req->u.subgroup.primitive));
  return rj_error_set(ctx, RJ_EUNSUPPORTED,
                      "op: \"custom\" has no CPU oracle (the caller's IR does not run on the "
                      "CPU); check it against your own reference (%s)%s",
                      req->kind == RJ_KIND_TENSOR ? "rj_reduce" : "rj_compile, rj_kernel_launch",
                      req->kind == RJ_KIND_TENSOR
                          ? ", or launch it unchecked (no_check, `redjit run --no-check`)"
                          : "");
}

/* The kind's run (checking) or bench of a validated request into r; the kernel is the cache's
 * again afterwards. */
static rj_status run_body(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, hr_results *r,
                          bool checking) {
  rj_check_result *c = checking ? &r->check : NULL;
  if (req->kind == RJ_KIND_TREDUCE)
    return hr_treduce(ctx, req, o, RJ_TREDUCE_AUTO, c, &r->bench, &r->treduce);
  rj_kernel *k = NULL;
  rj_status s;
  if (c && (s = check_reach(ctx, req, o))) return s;
  if (c) {
    s = prepare(ctx, req, o, c->variant, c->target, c, &k);
    return let_go(ctx, k, s ? s : by_kind[req->kind].check(ctx, req, o, k, c));
  }
  s = prepare(ctx, req, o, r->bench.variant, r->bench.target, NULL, &k);
  return let_go(ctx, k, s ? s : by_kind[req->kind].bench(ctx, req, o, k, &r->bench));
}

/* Defaults, validation, then the kind's run (cres) or bench (bres), its results handed out as
 * far as the caller's struct reaches. */
static rj_status run_kind(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                          rj_check_result *cres, rj_bench_result *bres) {
  hr_results r;
  rj_check_opts full;
  rj_status s = hr_enter(ctx, o, cres, bres, NULL, &r, &full);
  if (s) return s;
  s = rj_request_validate(ctx, req);
  if (!s) s = run_body(ctx, req, &full, &r, cres != NULL);
  hr_results_end(&r, cres, bres, NULL);
  return hr_done(ctx, s);
}

RJ_API rj_status rj_check(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                          rj_check_result *res) {
  return run_kind(ctx, req, o, res, NULL);
}

RJ_API rj_status rj_bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                          rj_bench_result *res) {
  return run_kind(ctx, req, o, NULL, res);
}
