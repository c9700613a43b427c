/* A complete program on redjit_treduce.h (docs/TREDUCE.md): 4 ranks' 512 x 32 f32 buffers summed
 * into rank 1's destination.  It prints how the split path would cut the work if the ranks lived
 * on two GPUs (no GPU needed), and with a GPU it runs the reduction on real buffers, rank r on GPU
 * r mod the GPU count, and checks every element against the CPU.
 * Built from the source tree's root after the build (the rpath lets it find libredjit.so):
 *   cc examples/treduce_sum.c -Iinclude -Lbuild -lredjit -Wl,-rpath,$PWD/build -o treduce_sum
 *   ./treduce_sum */
#include "redjit_treduce.h"

#include <stdio.h>
#include <stdlib.h>

enum { RANKS = 4, ROOT = 1, ROWS = 512, COLS = 32, N = ROWS * COLS };

static const char *request_json = "{\"kind\": \"treduce\", \"op\": \"sum\", \"dtype\": \"f32\","
                                  " \"ranks\": 4, \"root\": 1, \"shape\": [512, 32]}";

/* Prints the status and the context's message; returns 1 (the exit status) on failure. */
static int failed(rj_ctx *ctx, rj_status s, const char *what) {
  if (s == RJ_OK) return 0;
  fprintf(stderr, "%s: %s: %s\n", what, rj_status_name(s), rj_errmsg(ctx));
  return 1;
}

/* The split plan for ranks 0 and 2 on GPU 0, ranks 1 and 3 on GPU 1 (no GPU needed). */
static int show_plan(rj_ctx *ctx, const rj_request *req) {
  const int rank_device[RANKS] = {0, 1, 0, 1};
  rj_treduce_plan plan;
  rj_treduce_plan_init(&plan);
  if (failed(ctx, rj_treduce_plan_make(ctx, req, rank_device, RJ_TREDUCE_SPLIT, &plan),
             "rj_treduce_plan_make"))
    return 1;
  printf("split over %d GPUs along dim %d: busiest link %.2f rank buffers (peer path: %.2f)\n",
         plan.gpus, plan.dim, plan.split_load, plan.peer_load);
  for (int i = 0; i < plan.slices; i++)
    printf("  GPU %d reduces [%lld, %lld) of that dim (%.0f%% of the elements)\n",
           plan.slice[i].device, (long long)plan.slice[i].start,
           (long long)(plan.slice[i].start + plan.slice[i].len), 100 * plan.slice[i].share);
  return 0;
}

/* Fills rank r's host source with small integers, so that every sum is exact in f32. */
static void fill(float *host, int r) {
  for (int i = 0; i < N; i++)
    host[i] = (float)((i * 7 + r * 3) % 11);
}

/* Reduces RANKS device buffers into the root's and compares each element with the CPU's sum. */
static int run(rj_ctx *ctx, int gpus, float *host) {
  rj_treduce_buf src[RANKS];
  rj_treduce_group g;
  rj_treduce_group_init(&g);
  int rc = 0, allocated = 0;
  for (int r = 0; r < RANKS && rc == 0; r++) {
    src[r] = (rj_treduce_buf){.device = r % gpus, .ndim = 2, .shape = {ROWS, COLS}};
    fill(host, r);
    rc = failed(ctx, rj_device_alloc(ctx, src[r].device, N * sizeof(float), &src[r].ptr),
                "rj_device_alloc");
    allocated += rc == 0;
    if (rc == 0)
      rc = failed(ctx, rj_memcpy_htod(ctx, src[r].device, src[r].ptr, host, N * sizeof(float)),
                  "rj_memcpy_htod");
  }
  g.dst = (rj_treduce_buf){.device = src[ROOT].device, .ndim = 2, .shape = {ROWS, COLS}};
  if (rc == 0)
    rc = failed(ctx, rj_device_alloc(ctx, g.dst.device, N * sizeof(float), &g.dst.ptr),
                "rj_device_alloc");
  g.ranks = RANKS, g.root = ROOT, g.src = src, g.op = RJ_OP_SUM, g.dtype = RJ_F32;
  rj_treduce_result res = {.struct_size = sizeof res};
  if (rc == 0) rc = failed(ctx, rj_treduce_run(ctx, &g, NULL, &res), "rj_treduce_run");
  if (rc == 0)
    rc = failed(ctx, rj_memcpy_dtoh(ctx, g.dst.device, host, g.dst.ptr, N * sizeof(float)),
                "rj_memcpy_dtoh");
  for (int i = 0; i < N && rc == 0; i++) {
    float want = 0;
    for (int r = 0; r < RANKS; r++)
      want += (float)((i * 7 + r * 3) % 11);
    if (host[i] != want) {
      fprintf(stderr, "element %d: %g, want %g\n", i, host[i], want);
      rc = 1;
    }
  }
  if (rc == 0)
    printf("%s path on %d GPU(s): %d launch(es), %.3f ms; every element checked\n", res.path,
           res.gpus, res.launches, res.ms);
  for (int r = 0; r < allocated; r++)
    rj_device_free(ctx, src[r].device, src[r].ptr);
  if (g.dst.ptr) rj_device_free(ctx, g.dst.device, g.dst.ptr);
  return rc;
}

int main(void) {
  rj_ctx *ctx = rj_ctx_new();
  if (!ctx) return 1;
  rj_request req;
  int rc = failed(ctx, rj_request_parse(ctx, request_json, &req), "rj_request_parse");
  if (rc == 0) rc = show_plan(ctx, &req);
  int gpus = 0;
  if (rc == 0 && rj_device_count(ctx, &gpus) == RJ_OK && gpus > 0) {
    float *host = malloc(N * sizeof(float));
    rc = host ? run(ctx, gpus, host) : 1;
    free(host);
  } else if (rc == 0) {
    printf("no GPU (%s): the reduction itself was not run\n",
           *rj_errmsg(ctx) ? rj_errmsg(ctx) : "none");
  }
  rj_ctx_free(ctx);
  return rc;
}
