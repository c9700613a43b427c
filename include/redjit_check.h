/*
 * redjit_check — running requests against a CPU oracle (`redjit run`) and timing them
 * (`redjit bench`).  An auxiliary layer, as lauxlib.h is beside lua.h: everything declared here is
 * built on the calls of redjit.h and redjit_treduce.h (jit/harness/), plus the library's own
 * plain-C helpers for request data (shapes, tensor views, register placements); no call reaches the
 * compiler's internals.
 *
 * Inputs, poison and tolerances: docs/CLI.md ("redjit run").  Every call returns an rj_status and
 * leaves its message in the context (rj_errmsg), as redjit.h's calls do; they need a GPU
 * (RJ_ENODEV, with the driver's reason, without one).
 */
#ifndef REDJIT_CHECK_H
#define REDJIT_CHECK_H

#include "redjit.h"
#include "redjit_treduce.h" /* rj_treduce_check, rj_treduce_bench */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rj_check_opts {
  uint32_t struct_size;
  rj_options compile;
  uint64_t
      seed; /* inputs drawn from this seed (docs/CLI.md, "redjit run": inputs and tolerances) */
  int nan_count; /* float dtypes: this many inputs replaced by NaN (0 = none) */
  /* 1: rj_check / rj_treduce_check launch without comparing the outputs with a reference (op
   * "custom", which has none, included): every destination element must still be written (the
   * poison gone, unless accum), the guards and sources unchanged, and under deterministic two
   * launches bitwise equal; res->checked stays 0.  Tensor and treduce requests only (RJ_EINVAL
   * naming "no_check" for tile and subgroup, before any compile; their op custom: compile it with
   * rj_compile and launch it with rj_kernel_launch). */
  int no_check;
  /* A tensor request's caller map (RJ_MAP_IR, LLVM IR) has no CPU oracle of its own: rj_check
   * takes its C reference, the map of one index's inputs (in[0] src's element, in[1 ..] the
   * other inputs', n of them, as float64); NULL: rj_check refuses the request (no_check runs it).
   */
  double (*map_ref)(const double *in, int n, void *ud);
  void *map_ud; /* map_ref's and epilogue_ref's ud */
  /* a caller's epilogue (RJ_EPI_IR): its C reference of one output's value, as float64 */
  double (*epilogue_ref)(double v, void *ud);
} rj_check_opts;

typedef struct rj_check_result {
  uint32_t struct_size; /* set by the caller: sizeof(rj_check_result) (redjit.h, ABI) */
  int ok;               /* every element within tolerance, nothing outside dst written */
  char variant[RJ_NAME_MAX];
  char target[16];
  int64_t checked;         /* elements compared */
  int64_t wrong;           /* elements out of tolerance */
  int64_t outside_written; /* elements outside the destination region that changed */
  double max_abs_err, max_rel_err;
  double compile_ms, load_ms, kernel_ms;
  char first_error[256]; /* the first wrong element, described */
  /* where this call got its kernels: "miss" (compiled here: compile_ms), "disk" (read from the
   * disk cache: cache_ms, compile_ms 0) or "memory" (held already: both 0) */
  char cache[8];
  double cache_ms; /* ms reading kernels from the disk cache */
} rj_check_result;

RJ_API void rj_check_opts_init(rj_check_opts *opt);
/* Compiles, loads and launches req on the GPU with random inputs, computes the float64 CPU
 * reference, and compares every output element.  Returns RJ_OK when the comparison ran; whether
 * it passed is res->ok.  RJ_ENODEV when there is no GPU. */
RJ_API rj_status rj_check(rj_ctx *ctx, const rj_request *req, const rj_check_opts *opt,
                          rj_check_result *res);

typedef struct rj_bench_result {
  uint32_t struct_size; /* set by the caller: sizeof(rj_bench_result) (redjit.h, ABI) */
  char variant[RJ_NAME_MAX];
  char target[16];
  double kernel_ms; /* median over runs, CUDA events */
  double bytes;     /* read once + written once */
  double gbps;
  int runs;
} rj_bench_result;

RJ_API rj_status rj_bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *opt,
                          rj_bench_result *res);

/* `redjit run` / `bench` for a treduce request with a chosen path (rj_check / rj_bench use
 * RJ_TREDUCE_AUTO): rank r on GPU r mod the GPU count, random sources, the float64 oracle, and
 * sources checked unchanged.  tres may be NULL. */
RJ_API rj_status rj_treduce_check(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                                  rj_treduce_path path, rj_check_result *res,
                                  rj_treduce_result *tres);
RJ_API rj_status rj_treduce_bench(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o,
                                  rj_treduce_path path, rj_bench_result *res,
                                  rj_treduce_result *tres);

#ifdef __cplusplus
}
#endif
#endif /* REDJIT_CHECK_H */
