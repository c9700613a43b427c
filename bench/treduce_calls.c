/* The host's time of whole rj_treduce_run calls on the caller's buffers: what a runtime that
 * calls redjit in a loop waits per call (GPU time, launches, cross-GPU events, the context's
 * cache lookups, and whatever a call sets up and tears down).  Rank r on GPU r mod the GPU count,
 * f32 sum, root 0, shape [rows, cols], tile [64, cols], ping-pong; for each path asked, 20
 * warm-up calls, then CALLS timed (clock_gettime around each call), and the median and the 10th /
 * 90th percentiles printed as one JSON line per path.  Built against redjit.h only (it runs with
 * any libredjit.so.0.2 of the same ABI, e.g. to compare two builds: LD_LIBRARY_PATH).  ASYNC=1:
 * the group's async flag on the legacy default stream, so a call only enqueues; the calls run
 * back to back and "per_call_us" is the whole loop (with its final wait) over CALLS.
 *   treduce_calls [RANKS=2] [ROWS=1] [COLS=1024] [CALLS=200] [PATHS=auto,peer,staged,split]
 *                 [ASYNC=0] */
#define _POSIX_C_SOURCE 200809L
#include "bench_clock.h"
#include "redjit.h"
#include "redjit_treduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
  int ranks = argc > 1 ? atoi(argv[1]) : 2, calls = argc > 4 ? atoi(argv[4]) : 200;
  long rows = argc > 2 ? atol(argv[2]) : 1, cols = argc > 3 ? atol(argv[3]) : 1024;
  const char *paths = argc > 5 ? argv[5] : "auto,peer,staged,split";
  int async = argc > 6 ? atoi(argv[6]) : 0;
  static const char *const names[] = {"auto", "peer", "staged", "split", "split-equal"};
  if (ranks < 1 || ranks > 64 || rows < 1 || cols < 1 || calls < 1) {
    fprintf(stderr, "usage: treduce_calls [RANKS] [ROWS] [COLS] [CALLS] [PATHS]\n");
    return 2;
  }
  rj_ctx *ctx = rj_ctx_new();
  int ndev = 0;
  if (!ctx || rj_device_count(ctx, &ndev) || ndev < 1) {
    fprintf(stderr, "SKIP: no GPU (%s)\n", ctx ? rj_errmsg(ctx) : "no context");
    rj_ctx_free(ctx);
    return 77;
  }
  size_t bytes = (size_t)rows * (size_t)cols * 4;
  rj_treduce_buf src[64];
  memset(src, 0, sizeof src);
  float *host = calloc((size_t)rows * (size_t)cols, sizeof *host);
  double *t = malloc(sizeof *t * (size_t)calls);
  int rc = !host || !t;
  for (int r = 0; r < ranks && !rc; r++) {
    src[r].device = r % ndev;
    src[r].ndim = 2;
    src[r].shape[0] = rows;
    src[r].shape[1] = cols;
    rc = rj_device_alloc(ctx, src[r].device, bytes, &src[r].ptr) ||
         rj_memcpy_htod(ctx, src[r].device, src[r].ptr, host, bytes);
  }
  rj_treduce_group g;
  rj_treduce_group_init(&g);
  g.ranks = ranks;
  g.src = src;
  g.dst = src[0];
  g.op = RJ_OP_SUM;
  g.dtype = RJ_F32;
  g.tile[0] = 64;
  g.tile[1] = cols;
  g.pingpong = 1;
  g.async = async != 0;
  if (!rc) rc = rj_device_alloc(ctx, 0, bytes, &g.dst.ptr);
  char *list = strdup(paths);
  for (char *p = strtok(list, ","); p && !rc; p = strtok(NULL, ",")) {
    int path = -1;
    for (int i = 0; i < 5; i++)
      if (strcmp(p, names[i]) == 0) path = i;
    if (path < 0) {
      fprintf(stderr, "unknown path %s\n", p);
      rc = 2;
      break;
    }
    g.path = (rj_treduce_path)path;
    rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
    rj_status s = RJ_OK;
    float last = 0;
    double loop0 = 0;
    for (int i = 0; i < 20 + calls && !s; i++) {
      if (i == 20) { /* the warm-up calls done (a copy on the legacy stream waits for them) */
        s = rj_memcpy_dtoh(ctx, 0, &last, g.dst.ptr, sizeof last);
        loop0 = now_us();
      }
      double t0 = now_us();
      if (!s) s = rj_treduce_run(ctx, &g, NULL, &res);
      if (i >= 20) t[i - 20] = now_us() - t0;
    }
    if (!s) s = rj_memcpy_dtoh(ctx, 0, &last, g.dst.ptr, sizeof last); /* the last call done */
    double per_call = (now_us() - loop0) / calls;
    if (s) {
      printf("{\"path\": \"%s\", \"ok\": false, \"status\": \"%s\"}\n", p, rj_status_name(s));
      fprintf(stderr, "%s: %s\n", p, rj_errmsg(ctx));
      continue;
    }
    qsort(t, (size_t)calls, sizeof *t, cmp);
    printf(
        "{\"path\": \"%s\", \"ran\": \"%s\", \"ranks\": %d, \"gpus\": %d, \"bytes_per_rank\": %zu, "
        "\"calls\": %d, \"async\": %d, \"call_us_median\": %.1f, \"p10\": %.1f, \"p90\": %.1f, "
        "\"per_call_us\": %.1f, \"gpu_us\": %.1f}\n",
        p, res.path, ranks, ranks < ndev ? ranks : ndev, bytes, calls, async != 0, t[calls / 2],
        t[calls / 10], t[calls * 9 / 10], per_call, res.ms * 1e3);
  }
  free(list);
  if (rc) fprintf(stderr, "setup failed: %s\n", rj_errmsg(ctx));
  for (int r = 0; r < ranks; r++)
    if (src[r].ptr) rj_device_free(ctx, src[r].device, src[r].ptr);
  if (g.dst.ptr) rj_device_free(ctx, 0, g.dst.ptr);
  free(host);
  free(t);
  rj_ctx_free(ctx);
  return rc ? 2 : 0;
}
