/* runtime/nccl.h — libnccl.so.2 through dlopen, as runtime/cuda.c does the CUDA driver: the
 * only code that touches NCCL (jit/treduce/nccl.c, treduce's NCCL backend, calls it).  Opened
 * per use (no link dependency, no global state); NCCL's enums are written out in runtime/nccl.c,
 * so nccl.h is not needed to build. */
#ifndef RJ_RT_NCCL_H
#define RJ_RT_NCCL_H

#include "../ir/ir.h"

typedef struct rt_nccl rt_nccl;

/* Opens libnccl.so.2 and asks its version (ncclGetVersion into *version: 22809 for 2.28.9);
 * RJ_ENODEV when it is missing or its ncclGetVersion fails.  Pair a success with rt_nccl_close. */
rj_status rt_nccl_open(rt_nccl **out, int *version, ir_err *e);
void rt_nccl_close(rt_nccl *nc);
/* RJ_ENODEV unless the library has ncclCommCount, ncclCommUserRank, ncclGetErrorString and
 * ncclReduce (every call below needs them). */
rj_status rt_nccl_need_reduce(const rt_nccl *nc, ir_err *e);
/* ncclCommCount, ncclCommUserRank and ncclReduce (dtype and op mapped to NCCL's) on the caller's
 * communicator: NCCL's result, 0 on success; rt_nccl_error is its text. */
int rt_nccl_count(const rt_nccl *nc, void *comm, int *n);
int rt_nccl_user_rank(const rt_nccl *nc, void *comm, int *rank);
int rt_nccl_reduce(const rt_nccl *nc, uint64_t src, uint64_t dst, size_t count, rj_dtype dtype,
                   rj_op op, int root, void *comm, void *stream);
const char *rt_nccl_error(const rt_nccl *nc, int result);

#endif
