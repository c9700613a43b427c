/* A complete program on the C API (docs/C_API.md): sums the rows of a 1000 x 4096 f32 matrix.
 * It compiles the request and prints the kernel's variant, geometry and first PTX lines; with a
 * GPU it also reduces real data with rj_reduce and checks every row against the CPU.
 * Built from the source tree's root after the build (the rpath lets it find libredjit.so):
 *   cc examples/reduce_rows.c -Iinclude -Lbuild -lredjit -lm -Wl,-rpath,$PWD/build -o rows
 *   ./rows
 */
#include "redjit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 1000, COLS = 4096 };

static const char *request_json = "{\"kind\": \"tensor\", \"op\": \"sum\", \"dtype\": \"f32\","
                                  " \"shape\": [1000, 4096], \"axes\": [1]}";

/* Prints the status and the context's message; returns 1 (the exit status) on failure. */
static int failed(rj_ctx *ctx, rj_status s, const char *what) {
  if (s == RJ_OK) return 0;
  fprintf(stderr, "%s: %s: %s\n", what, rj_status_name(s), rj_errmsg(ctx));
  return 1;
}

/* Compiles the request (no GPU needed) and shows what it became. */
static int show_kernel(rj_ctx *ctx, const rj_request *req) {
  rj_kernel *k = NULL;
  if (failed(ctx, rj_compile(ctx, req, NULL, &k), "rj_compile")) return 1;
  unsigned grid[3], block[3], shared;
  rj_kernel_dims(k, grid, block, &shared);
  printf("variant %s, target %s, grid %u, block %u, compiled in %.1f ms\n", rj_kernel_variant(k),
         rj_kernel_target(k), grid[0], block[0], rj_kernel_compile_ms(k));
  const char *ptx = rj_kernel_text(k, RJ_EMIT_PTX);
  const char *entry = strstr(ptx, ".entry");
  printf("%.*s\n", (int)strcspn(entry, "("), entry);
  return 0;
}

/* Reduces random rows on GPU 0 and compares every sum with the CPU's (float64). */
static int run_on_gpu(rj_ctx *ctx, const rj_request *req) {
  size_t n = (size_t)ROWS * COLS;
  float *x = malloc(n * sizeof *x), *sums = malloc(ROWS * sizeof *sums);
  rj_devptr src = 0, dst = 0;
  int bad = !x || !sums;
  for (size_t i = 0; !bad && i < n; i++)
    x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
  bad = bad || failed(ctx, rj_device_alloc(ctx, 0, n * sizeof *x, &src), "rj_device_alloc") ||
        failed(ctx, rj_device_alloc(ctx, 0, ROWS * sizeof *sums, &dst), "rj_device_alloc") ||
        failed(ctx, rj_memcpy_htod(ctx, 0, src, x, n * sizeof *x), "rj_memcpy_htod") ||
        failed(ctx, rj_reduce(ctx, req, NULL, src, dst, NULL), "rj_reduce") ||
        failed(ctx, rj_memcpy_dtoh(ctx, 0, sums, dst, ROWS * sizeof *sums), "rj_memcpy_dtoh");
  int wrong = 0;
  for (int r = 0; !bad && r < ROWS; r++) {
    double want = 0;
    for (int c = 0; c < COLS; c++)
      want += x[(size_t)r * COLS + c];
    wrong += fabs(sums[r] - want) > 1e-3;
  }
  if (!bad) printf("%d rows reduced on the GPU, %d wrong\n", ROWS, wrong);
  if (src) rj_device_free(ctx, 0, src);
  if (dst) rj_device_free(ctx, 0, dst);
  free(x);
  free(sums);
  return bad || wrong;
}

int main(void) {
  rj_ctx *ctx = rj_ctx_new();
  if (!ctx) return 1;
  rj_request req;
  int status = failed(ctx, rj_request_parse(ctx, request_json, &req), "rj_request_parse");
  if (!status) status = show_kernel(ctx, &req);
  int gpus = 0;
  if (!status && rj_device_count(ctx, &gpus) == RJ_OK && gpus > 0)
    status = run_on_gpu(ctx, &req);
  else if (!status)
    printf("no GPU: %s\n", rj_errmsg(ctx));
  rj_ctx_free(ctx);
  return status;
}
