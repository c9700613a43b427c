/* NCCL through dlopen("libnccl.so.2"): the entry points treduce's NCCL backend calls. */
#include "nccl.h"

#include <dlfcn.h>
#include <stdlib.h>

/* nccl.h: ncclDataType_t and ncclRedOp_t values (stable since NCCL 2.0; bf16 since 2.10) */
enum {
  NC_INT32 = 2,
  NC_UINT32 = 3,
  NC_INT64 = 4,
  NC_UINT64 = 5,
  NC_FLOAT16 = 6,
  NC_FLOAT32 = 7,
  NC_FLOAT64 = 8,
  NC_BFLOAT16 = 9
};
enum { NC_SUM = 0, NC_PROD = 1, NC_MAX = 2, NC_MIN = 3, NC_AVG = 4 }; /* avg: NCCL >= 2.10 */
enum { NC_INVALID_ARGUMENT = 4 };

struct rt_nccl {
  void *lib;
  int version;
  int (*CommCount)(void *, int *);
  int (*CommUserRank)(void *, int *);
  const char *(*GetErrorString)(int);
  int (*Reduce)(const void *, void *, size_t, int, int, int, void *, void *);
};

rj_status rt_nccl_open(rt_nccl **out, int *version, ir_err *e) {
  *out = NULL;
  void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    return ir_fail(e, RJ_ENODEV, "no NCCL: dlopen(libnccl.so.2) failed: %.300s",
                   why ? why : "not found");
  }
  int (*get_version)(int *) = (int (*)(int *))dlsym(lib, "ncclGetVersion");
  if (!get_version || get_version(version) != 0) {
    dlclose(lib);
    return ir_fail(e, RJ_ENODEV, "no NCCL: libnccl.so.2 lacks a working ncclGetVersion");
  }
  rt_nccl *nc = calloc(1, sizeof *nc);
  if (!nc) {
    dlclose(lib);
    return ir_fail(e, RJ_ENOMEM, "out of memory");
  }
  nc->lib = lib;
  nc->version = *version;
  nc->CommCount = (int (*)(void *, int *))dlsym(lib, "ncclCommCount");
  nc->CommUserRank = (int (*)(void *, int *))dlsym(lib, "ncclCommUserRank");
  nc->GetErrorString = (const char *(*)(int))dlsym(lib, "ncclGetErrorString");
  nc->Reduce = (int (*)(const void *, void *, size_t, int, int, int, void *, void *))dlsym(
      lib, "ncclReduce");
  *out = nc;
  return RJ_OK;
}

void rt_nccl_close(rt_nccl *nc) {
  if (!nc) return;
  dlclose(nc->lib);
  free(nc);
}

rj_status rt_nccl_need_reduce(const rt_nccl *nc, ir_err *e) {
  if (!nc->CommCount || !nc->CommUserRank || !nc->GetErrorString || !nc->Reduce)
    return ir_fail(e, RJ_ENODEV, "NCCL %d lacks ncclCommCount / ncclCommUserRank / ncclReduce",
                   nc->version);
  return RJ_OK;
}

int rt_nccl_count(const rt_nccl *nc, void *comm, int *n) {
  return nc->CommCount(comm, n);
}

int rt_nccl_user_rank(const rt_nccl *nc, void *comm, int *rank) {
  return nc->CommUserRank(comm, rank);
}

int rt_nccl_reduce(const rt_nccl *nc, uint64_t src, uint64_t dst, size_t count, rj_dtype dtype,
                   rj_op op, int root, void *comm, void *stream) {
  static const int dtypes[] = {NC_FLOAT16, NC_BFLOAT16, NC_FLOAT32, NC_FLOAT64,
                               NC_INT32,   NC_UINT32,   NC_INT64,   NC_UINT64}; /* ORDER DTYPE */
  static const int ops[] = {NC_SUM, NC_MAX, NC_MIN, NC_PROD}; /* ORDER OP: sum .. prod */
  int nop = op == RJ_OP_MEAN ? NC_AVG : (unsigned)op < sizeof ops / sizeof ops[0] ? ops[op] : -1;
  if (nop < 0) return NC_INVALID_ARGUMENT;
  return nc->Reduce((const void *)(uintptr_t)src, (void *)(uintptr_t)dst, count, dtypes[dtype], nop,
                    root, comm, stream);
}

const char *rt_nccl_error(const rt_nccl *nc, int result) {
  return nc->GetErrorString(result);
}
