/* ptx_time: the time of one redjit kernel from its PTX file alone, to compare two kernels of the
 * same request (another plan, hand-edited PTX) without rebuilding the library.
 *
 *   ptx_time FILE.ptx SRC_BYTES [OTHER_BYTES ...]
 *
 * FILE.ptx is `redjit ptx REQUEST`'s output: its header comments give the launch ("launch grid
 * X Y Z, block X Y Z, shared S") and the parameters ("params src dst others[0] ..."; values,
 * segments and size parameters are not supported).  Each input is allocated with the given size
 * and filled with a constant-ish pattern; dst gets 64 MiB.  Prints the median of 30 launches
 * timed by CUDA events, each after a 256 MiB memset (L2 flushed), then the same with the inputs
 * rotated through about 2 GiB of copies, as GB/s of the inputs' bytes.  Results are not checked:
 * `redjit run` and the GPU suites do that.
 *
 * Built on the GPU machine (it needs libcuda): nvcc -O2 -o ptx_time bench/ptx_time.c -lcuda */
#include <cuda.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNS 30
#define WARM 3
#define MAX_IN 4
#define MAX_COPIES 64

static int failed(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS) return 0;
  const char *s = NULL;
  cuGetErrorString(r, &s);
  fprintf(stderr, "ptx_time: %s: %s\n", what, s ? s : "?");
  return 1;
}

static int by_value(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

typedef struct launch {
  unsigned grid[3], block[3], shared;
  char params[256];
} launch;

/* The launch and parameter lines of a redjit PTX header. */
static int read_header(const char *ptx, launch *l) {
  const char *g = strstr(ptx, "launch grid"), *p = strstr(ptx, "// redjit: params ");
  if (!g || !p) return 1;
  if (sscanf(g, "launch grid %u %u %u, block %u %u %u, shared %u", &l->grid[0], &l->grid[1],
             &l->grid[2], &l->block[0], &l->block[1], &l->block[2], &l->shared) != 7)
    return 1;
  return sscanf(p, "// redjit: params %255[^\n]", l->params) != 1;
}

/* The kernel's arguments for copy k of the inputs (in[k][0] src, in[k][1 + i] others[i]). */
static int arguments(const launch *l, CUdeviceptr in[][MAX_IN], int nin, int k, CUdeviceptr dst,
                     CUdeviceptr *pv, void **args) {
  char tmp[256];
  int n = 0;
  strcpy(tmp, l->params);
  for (char *tok = strtok(tmp, " "); tok && n < 8; tok = strtok(NULL, " ")) {
    int i = -1;
    if (!strcmp(tok, "src"))
      i = 0;
    else if (!strncmp(tok, "others[", 7))
      i = 1 + atoi(tok + 7);
    else if (strcmp(tok, "dst"))
      return fprintf(stderr, "ptx_time: parameter %s\n", tok), -1;
    if (i >= nin) return fprintf(stderr, "ptx_time: no size given for %s\n", tok), -1;
    pv[n] = i < 0 ? dst : in[k][i];
    args[n] = &pv[n];
    n++;
  }
  return n;
}

static int run(CUfunction fn, const launch *l, CUdeviceptr in[][MAX_IN], int nin, int copies,
               CUdeviceptr dst, CUdeviceptr flush, size_t flush_bytes, bool rotate, float *ms) {
  CUevent e0, e1;
  if (failed(cuEventCreate(&e0, 0), "cuEventCreate") || failed(cuEventCreate(&e1, 0), "event"))
    return 1;
  float t[RUNS];
  for (int r = 0; r < RUNS + WARM; r++) {
    CUdeviceptr pv[8];
    void *args[8];
    if (arguments(l, in, nin, rotate ? r % copies : 0, dst, pv, args) < 0) return 1;
    if (!rotate && failed(cuMemsetD8(flush, (unsigned char)r, flush_bytes), "flush")) return 1;
    if (failed(cuEventRecord(e0, 0), "record") ||
        failed(cuLaunchKernel(fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                              l->block[2], l->shared, 0, args, NULL),
               "cuLaunchKernel") ||
        failed(cuEventRecord(e1, 0), "record") || failed(cuEventSynchronize(e1), "launch"))
      return 1;
    if (r >= WARM && failed(cuEventElapsedTime(&t[r - WARM], e0, e1), "elapsed")) return 1;
  }
  qsort(t, RUNS, sizeof t[0], by_value);
  *ms = t[RUNS / 2];
  cuEventDestroy(e0);
  cuEventDestroy(e1);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc - 2 > MAX_IN) {
    fprintf(stderr, "usage: ptx_time FILE.ptx SRC_BYTES [OTHER_BYTES ...] (up to %d inputs)\n",
            MAX_IN);
    return 2;
  }
  static char ptx[16 << 20];
  FILE *f = fopen(argv[1], "rb");
  if (!f) return perror(argv[1]), 2;
  size_t len = fread(ptx, 1, sizeof ptx - 1, f);
  fclose(f);
  ptx[len] = 0;
  launch l;
  if (read_header(ptx, &l)) return fprintf(stderr, "ptx_time: no redjit launch header\n"), 2;
  int nin = argc - 2;
  size_t bytes[MAX_IN], total = 0;
  for (int i = 0; i < nin; i++) {
    char *end = NULL;
    total += bytes[i] = strtoull(argv[i + 2], &end, 0);
    if (!end || *end || bytes[i] < 4)
      return fprintf(stderr, "ptx_time: %s: a size in bytes, at least 4\n", argv[i + 2]), 2;
  }
  int copies = (int)((2ull << 30) / total) + 1;
  if (copies > MAX_COPIES) copies = MAX_COPIES;
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn;
  CUdeviceptr in[MAX_COPIES][MAX_IN], dst, flush;
  size_t flush_bytes = 256u << 20;
  if (failed(cuInit(0), "cuInit") || failed(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
      failed(cuCtxCreate(&ctx, NULL, 0, dev), "cuCtxCreate") ||
      failed(cuModuleLoadData(&mod, ptx), "cuModuleLoadData") ||
      failed(cuModuleGetFunction(&fn, mod, "redjit_tensor"), "redjit_tensor") ||
      (l.shared && failed(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             (int)l.shared),
                          "shared")) ||
      failed(cuMemAlloc(&dst, 64u << 20), "cuMemAlloc") ||
      failed(cuMemAlloc(&flush, flush_bytes), "cuMemAlloc"))
    return 3;
  for (int k = 0; k < copies; k++)
    for (int i = 0; i < nin; i++)
      if (failed(cuMemAlloc(&in[k][i], bytes[i]), "cuMemAlloc") ||
          failed(cuMemsetD32(in[k][i], 0x3f800000u ^ (unsigned)(k * 7 + i), bytes[i] / 4),
                 "cuMemsetD32"))
        return 3;
  for (int rotate = 0; rotate < 2; rotate++) {
    float ms;
    if (run(fn, &l, in, nin, copies, dst, flush, flush_bytes, rotate, &ms)) return 3;
    printf("%-32s %s %9.1f us %7.0f GB/s\n", argv[1], rotate ? "rotated" : "flushed", ms * 1e3,
           (double)total / (ms * 1e-3) / 1e9);
  }
  return 0;
}
