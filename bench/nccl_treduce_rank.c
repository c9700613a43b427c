/* One rank of the NCCL treduce test: N processes, one per GPU, each running this program with
 * RJ_RANK, RJ_NRANKS and RJ_ID_FILE set (scripts/nccl-treduce-test.sh starts them).  Rank 0 makes
 * the NCCL unique id and writes it to RJ_ID_FILE; the others wait for it.  Every rank fills its
 * source with exactly representable values (rank * 1000 + i mod 997), calls rj_treduce_nccl for
 * sum / max / min over f32 / i32 / bf16 / f64, and the root checks every element exactly.
 * The driver and NCCL are dlopen'ed here too (a test harness, not the library).
 * Build: cc -std=c17 -I include bench/nccl_treduce_rank.c -L build -lredjit -ldl -o nccl_rank
 * Exit 0: all checks passed on this rank; 1: a wrong element; 2: setup failed; 77: skipped. */
#define _DEFAULT_SOURCE /* usleep */
#include "redjit.h"
#include "redjit_treduce.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*fn_i)(unsigned);
typedef struct {
  char b[128];
} nc_id;

int main(void) {
  const char *rs = getenv("RJ_RANK"), *ns = getenv("RJ_NRANKS"), *idf = getenv("RJ_ID_FILE");
  if (!rs || !ns || !idf) {
    fprintf(stderr,
            "SKIP: set RJ_RANK, RJ_NRANKS and RJ_ID_FILE (see scripts/nccl-treduce-test.sh)\n");
    return 77;
  }
  int rank = atoi(rs), n = atoi(ns);
  void *cu = dlopen("libcuda.so.1", RTLD_NOW), *nc = dlopen("libnccl.so.2", RTLD_NOW);
  if (!cu || !nc) {
    fprintf(stderr, "SKIP: rank %d: no %s\n", rank, cu ? "libnccl.so.2" : "libcuda.so.1");
    return 77;
  }
  int (*cuInit)(unsigned) = (int (*)(unsigned))dlsym(cu, "cuInit");
  int (*cuDeviceGet)(int *, int) = (int (*)(int *, int))dlsym(cu, "cuDeviceGet");
  int (*cuRetain)(void **, int) = (int (*)(void **, int))dlsym(cu, "cuDevicePrimaryCtxRetain");
  int (*cuSetCurrent)(void *) = (int (*)(void *))dlsym(cu, "cuCtxSetCurrent");
  int (*cuAlloc)(uint64_t *, size_t) = (int (*)(uint64_t *, size_t))dlsym(cu, "cuMemAlloc_v2");
  int (*cuHtoD)(uint64_t, const void *, size_t) =
      (int (*)(uint64_t, const void *, size_t))dlsym(cu, "cuMemcpyHtoD_v2");
  int (*cuDtoH)(void *, uint64_t, size_t) =
      (int (*)(void *, uint64_t, size_t))dlsym(cu, "cuMemcpyDtoH_v2");
  int (*ncId)(nc_id *) = (int (*)(nc_id *))dlsym(nc, "ncclGetUniqueId");
  int (*ncInit)(void **, int, nc_id, int) =
      (int (*)(void **, int, nc_id, int))dlsym(nc, "ncclCommInitRank");
  int (*ncDestroy)(void *) = (int (*)(void *))dlsym(nc, "ncclCommDestroy");
  int dev = 0;
  void *cctx = NULL;
  if (cuInit(0) || cuDeviceGet(&dev, rank) || cuRetain(&cctx, dev) || cuSetCurrent(cctx)) {
    fprintf(stderr, "rank %d: cannot use GPU %d\n", rank, rank);
    return 2;
  }
  nc_id id;
  if (rank == 0) {
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s.tmp", idf);
    FILE *f = fopen(tmp, "wb");
    if (ncId(&id) || !f || fwrite(&id, sizeof id, 1, f) != 1) return 2;
    fclose(f);
    rename(tmp, idf);
  } else {
    FILE *f = NULL;
    for (int i = 0; i < 600 && !(f = fopen(idf, "rb")); i++)
      usleep(100000);
    if (!f || fread(&id, sizeof id, 1, f) != 1) return 2;
    fclose(f);
  }
  void *comm = NULL;
  if (ncInit(&comm, n, id, rank)) {
    fprintf(stderr, "rank %d: ncclCommInitRank failed\n", rank);
    return 2;
  }
  rj_ctx *ctx = rj_ctx_new();
  int version = 0;
  rj_nccl_version(ctx, &version);
  static const char *const dts[] = {"f32", "i32", "bf16", "f64"};
  static const int bytes[] = {4, 4, 2, 8};
  static const char *const ops[] = {"sum", "max", "min"};
  const int64_t count = 3 * 1000 * 37; /* shape [3,1000,37] */
  int wrong = 0, runs = 0;
  for (int d = 0; d < 4; d++)
    for (int o = 0; o < 3; o++) {
      for (int root = 0; root < n; root += (n > 1 ? n - 1 : 1)) {
        char json[256];
        snprintf(json, sizeof json,
                 "{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":%d,"
                 "\"shape\":[3,1000,37],\"nan\":\"%s\"}",
                 ops[o], dts[d], n, root, o ? "ignore" : "propagate");
        rj_request req;
        if (rj_request_parse(ctx, json, &req)) return 2;
        size_t sz = (size_t)count * (size_t)bytes[d];
        unsigned char *h = malloc(sz), *g = malloc(sz);
        for (int64_t i = 0; i < count; i++) {
          double v = (double)((rank * 7 + i) % 97) + (o ? rank : 0); /* exact in every dtype */
          if (d == 0) ((float *)h)[i] = (float)v;
          if (d == 1) ((int32_t *)h)[i] = (int32_t)v;
          if (d == 2) {
            float f = (float)v;
            uint32_t u;
            memcpy(&u, &f, 4);
            ((uint16_t *)h)[i] = (uint16_t)(u >> 16);
          }
          if (d == 3) ((double *)h)[i] = v;
        }
        uint64_t src = 0, dst = 0;
        if (cuAlloc(&src, sz) || cuAlloc(&dst, sz) || cuHtoD(src, h, sz)) return 2;
        rj_nccl_args a;
        rj_nccl_args_init(&a);
        a.comm = comm;
        a.src = src;
        a.dst = dst;
        rj_status s = rj_treduce_nccl(ctx, &req, &a);
        if (s) {
          fprintf(stderr, "rank %d: %s: %s\n", rank, json, rj_errmsg(ctx));
          return 2;
        }
        runs++;
        if (rank == root) {
          cuDtoH(g, dst, sz);
          for (int64_t i = 0; i < count; i++) {
            double want = o == 1 ? -1e300 : o == 2 ? 1e300 : 0;
            for (int r = 0; r < n; r++) {
              double v = (double)((r * 7 + i) % 97) + (o ? r : 0);
              want = o == 0 ? want + v : o == 1 ? (v > want ? v : want) : (v < want ? v : want);
            }
            double got = d == 0   ? ((float *)g)[i]
                         : d == 1 ? ((int32_t *)g)[i]
                         : d == 3 ? ((double *)g)[i]
                                  : 0;
            if (d == 2) {
              uint32_t u = (uint32_t)((uint16_t *)g)[i] << 16;
              float f;
              memcpy(&f, &u, 4);
              got = f;
            }
            double tol = d == 2 ? 0.01 * (want < 0 ? -want : want) + 0.5 : 0; /* bf16: 8 bits */
            if (got - want > tol || want - got > tol) {
              if (wrong++ < 5)
                fprintf(stderr, "rank %d (root): %s element %lld: got %g, expected %g\n", rank,
                        json, (long long)i, got, want);
            }
          }
        }
        free(h);
        free(g);
      }
    }
  printf("rank %d of %d: NCCL %d, %d reduces, %d wrong elements\n", rank, n, version, runs, wrong);
  ncDestroy(comm);
  rj_ctx_free(ctx);
  return wrong ? 1 : 0;
}
