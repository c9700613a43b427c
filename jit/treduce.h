/* treduce (issue 5): the multi-rank engine shared by rj_treduce (jit/treduce.c) and `run` /
 * `bench` (jit/check_treduce.c). */
#ifndef RJ_JIT_TREDUCE_H
#define RJ_JIT_TREDUCE_H

#include "jit.h"

/* Runs a validated treduce request: src[r] on device dev[r], dst on dev[req root].  Compiles and
 * loads what it needs, picks each rank's path, launches, and waits.  res is filled (not NULL). */
rj_status jit_treduce_exec(rj_ctx *ctx, const rj_request *req, const uint64_t *src, const int *dev,
                           uint64_t dst, rj_treduce_path path, const rj_options *opt,
                           rj_treduce_result *res);

#endif
