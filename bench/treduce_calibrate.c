/* The treduce path table of this machine: rj_treduce_calibrate for each rank count asked (rank r
 * on GPU r mod the GPU count, f32 sums, 4^k KiB per rank), the table written to FILE and printed.
 * Auto reads it from FILE through REDJIT_TREDUCE_TABLE, or as treduce-paths.txt in the kernel
 * cache's folder (SAVE=cache: written there too).  Built against redjit.h only.
 *   treduce_calibrate RANKS[,RANKS...] [MIN_LOG2=12] [MAX_LOG2=30] [RUNS=7] [FILE]
 * A rank count after the first may end with :MAX_LOG2 (8:28: 8 ranks up to 256 MiB per rank). */
#include "redjit.h"
#include "redjit_treduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: treduce_calibrate RANKS[,RANKS[:MAX_LOG2]...] [MIN_LOG2] [MAX_LOG2] "
                    "[RUNS] [FILE]\n");
    return 2;
  }
  int lo = argc > 2 ? atoi(argv[2]) : 12, hi = argc > 3 ? atoi(argv[3]) : 30;
  int runs = argc > 4 ? atoi(argv[4]) : 7;
  const char *file = argc > 5 ? argv[5] : NULL;
  rj_ctx *ctx = rj_ctx_new();
  int ndev = 0;
  if (!ctx || rj_device_count(ctx, &ndev) || ndev < 1) {
    fprintf(stderr, "SKIP: no GPU (%s)\n", ctx ? rj_errmsg(ctx) : "no context");
    rj_ctx_free(ctx);
    return 77;
  }
  char *list = strdup(argv[1]);
  rj_status s = list ? RJ_OK : RJ_ENOMEM;
  for (char *p = list ? strtok(list, ",") : NULL; p && !s; p = strtok(NULL, ",")) {
    char *colon = strchr(p, ':');
    int ranks = atoi(p), top = colon ? atoi(colon + 1) : hi;
    fprintf(stderr, "calibrating %d ranks on %d GPUs, 2^%d .. 2^%d bytes per rank\n", ranks,
            ranks < ndev ? ranks : ndev, lo, top);
    s = rj_treduce_calibrate(ctx, ranks, lo, top, runs);
  }
  free(list);
  const char *text = NULL;
  if (!s) s = rj_treduce_table_text(ctx, &text);
  if (!s) fputs(text, stdout);
  if (!s && file) s = rj_treduce_table_save(ctx, file);
  const char *save = getenv("SAVE");
  if (!s && save && strcmp(save, "cache") == 0) s = rj_treduce_table_save(ctx, NULL);
  if (s) fprintf(stderr, "treduce_calibrate: %s: %s\n", rj_status_name(s), rj_errmsg(ctx));
  rj_ctx_free(ctx);
  return s ? (s == RJ_ENODEV ? 77 : 2) : 0;
}
