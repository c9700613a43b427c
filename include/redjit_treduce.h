/*
 * redjit_treduce.h — treduce: root reduce across GPUs, a layer above redjit.h (in libredjit.so).
 *
 * The root's destination receives the element-wise op of every rank's source; rank r's source
 * lives on its own GPU (several ranks may share one), and sources are only read.  In one process
 * (rj_treduce_run, by the peer, staged, split or ring path) or across processes (the NCCL
 * backend, rj_treduce_nccl).  The request it compiles is redjit.h's kind treduce (rj_treduce).
 *
 * Contents: paths · buffers and the group · results · run and sync · the split plan · path
 *   tables (auto's choice) · NCCL.
 * Guide and reference (fields, paths, streams, errors): docs/TREDUCE.md.  redjit.h's rules hold:
 * status and rj_errmsg, one thread per context, struct_size.
 */
#ifndef REDJIT_TREDUCE_H
#define REDJIT_TREDUCE_H

#include "redjit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- paths */
typedef enum rj_treduce_path {
  RJ_TREDUCE_AUTO = 0,        /* the fastest a path table measured; else by the link model */
  RJ_TREDUCE_PEER = 1,        /* every rank read directly by the root's kernel */
  RJ_TREDUCE_STAGED = 2,      /* every rank but the root's copied to it (cuMemcpyPeerAsync) */
  RJ_TREDUCE_SPLIT = 3,       /* one slice per GPU, sized by the link model */
  RJ_TREDUCE_SPLIT_EQUAL = 4, /* the split path with equal slices */
  RJ_TREDUCE_RING = 5         /* a chain of hop kernels through the GPUs (never under capture) */
} rj_treduce_path;

/* ---------------------------------------------------------------- buffers and the group */
#define RJ_TREDUCE_MAX_DIMS 5

typedef struct rj_treduce_buf {
  rj_devptr ptr; /* element 0, aligned to the dtype */
  int device;    /* CUDA device ordinal holding it */
  int ndim;      /* 1..5: the root's shape, for every buffer */
  int64_t shape[RJ_TREDUCE_MAX_DIMS];
  int has_strides;                      /* 0: row-major */
  int64_t strides[RJ_TREDUCE_MAX_DIMS]; /* in elements; sources: the same on every rank */
} rj_treduce_buf;

typedef struct rj_treduce_group {
  uint32_t struct_size; /* set by rj_treduce_group_init */
  int ranks;
  int root;
  const rj_treduce_buf *src; /* ranks entries, src[r] = rank r's source */
  rj_treduce_buf dst;        /* on src[root].device */
  rj_op op;
  rj_dtype dtype;
  rj_nan nan;
  int64_t tile[2]; /* chunk bound over the last two dims; {0, 0}: the whole dims */
  int pingpong;    /* overlap the fetch of rank r+1 with the reduction of rank r */
  int accum;       /* fold the destination's old value in too */
  rj_treduce_path path;
  void *stream;            /* of the root's GPU; NULL: the legacy default stream */
  int async;               /* 1: return once enqueued (res->ms 0) */
  int64_t ring_timeout_ms; /* the ring's watchdog, 1..3600000; 0: 10000 */
  int dynamic;             /* 1: runtime-size kernels (rj_treduce's dynamic) */
  rj_combine combine;      /* op custom: as rj_treduce's; ir read during the call only */
  int invariant;           /* 1: rj_treduce's invariant (refuse staged float sums) */
} rj_treduce_group;

/* Zeroes `size` bytes of *g and sets struct_size (the defaults); the macro gives this header's. */
RJ_API void rj_treduce_group_init_sized(rj_treduce_group *g, size_t size);
RJ_API void rj_treduce_group_init(rj_treduce_group *g); /* exported too: the whole group */
#define rj_treduce_group_init(g) rj_treduce_group_init_sized((g), sizeof(rj_treduce_group))

/* ---------------------------------------------------------------- results */
typedef struct rj_treduce_result {
  uint32_t struct_size; /* set by the caller: sizeof(rj_treduce_result) */
  char variant[RJ_NAME_MAX];
  char target[16];
  char path[8];     /* "peer", "staged", "split" or "ring": the path that ran */
  int direct_ranks; /* ranks the kernel read in place (the root's and same-GPU ones too) */
  int peer_ranks;   /* of those, on another GPU through peer access */
  int staged_ranks; /* copied to the root with cuMemcpyPeerAsync */
  int launches;     /* kernels launched */
  double compile_ms, load_ms;
  double ms;           /* the operation on the root's GPU, CUDA events (0 under async) */
  int slices;          /* pieces the element range was cut into (1 on peer / staged) */
  int gpus;            /* GPUs that ran a slice */
  uint64_t dst_digest; /* rj_treduce_check only: FNV-1a 64 of the destination's elements */
  double root_share;   /* of the elements, those the root's GPU reduced */
  double call_ms;      /* the whole call by the host's clock */
  int hops;            /* the ring path: hops of the chain; else 0 */
  char cache[8];   /* as rj_check_result's: "miss", "disk" or "memory" (compile_ms: this call's) */
  double cache_ms; /* ms reading kernels from the disk cache */
} rj_treduce_result;

/* ---------------------------------------------------------------- run and sync */
/* The treduce request a group compiles as (what `redjit ptx` shows for it). */
RJ_API rj_status rj_treduce_request(rj_ctx *ctx, const rj_treduce_group *g, rj_request *out);
/* Runs the group's reduction, stream-ordered on g->stream.  opt: NULL for defaults; res: NULL. */
RJ_API rj_status rj_treduce_run(rj_ctx *ctx, const rj_treduce_group *g, const rj_options *opt,
                                rj_treduce_result *res);
RJ_API rj_status rj_treduce_sync(rj_ctx *ctx); /* waits for async calls; reports their failures */

/* ---------------------------------------------------------------- the split plan (no GPU) */
#define RJ_TREDUCE_MAX_SLICES 64

typedef struct rj_treduce_slice {
  int device;         /* the GPU that reduces it */
  int local_ranks;    /* ranks whose source is on that GPU */
  int64_t start, len; /* along the plan's dim (len 0: that GPU idles) */
  double share;       /* of the elements */
  double in, out;     /* modelled bytes into / out of that GPU, in rank buffers (B) */
  double load;        /* max(in, out, (in + out) / 1.45) */
} rj_treduce_slice;

typedef struct rj_treduce_plan {
  uint32_t struct_size; /* set by rj_treduce_plan_init */
  rj_treduce_path path; /* what the call takes: RJ_TREDUCE_PEER or the split asked for / picked */
  int gpus;             /* distinct GPUs of the ranks */
  int dim;              /* the dim of the request's shape that is cut (-1: nothing to cut) */
  int slices;           /* entries of slice[]: one per GPU, the root's first */
  double bytes_per_rank;
  double peer_load;   /* the root's on the peer path, in B */
  double split_load;  /* the busiest GPU's on the split path, in B */
  double saved_bytes; /* (peer_load - split_load) B: auto splits from 8 MiB */
  rj_treduce_slice slice[RJ_TREDUCE_MAX_SLICES];
  int hops;           /* the ring path: hops of the chain; 0 when the ring can't run it */
  int chunks;         /* pieces the element range is pipelined in */
  double ring_load;   /* the busiest GPU's ring traffic in B; -1 when the ring can't run it */
  char ring_why[128]; /* why it can't ("" when it can) */
} rj_treduce_plan;

RJ_API void rj_treduce_plan_init(rj_treduce_plan *p);
/* How a request's ranks on GPUs rank_device[r] are cut; path AUTO, SPLIT or SPLIT_EQUAL. */
RJ_API rj_status rj_treduce_plan_make(rj_ctx *ctx, const rj_request *req, const int *rank_device,
                                      rj_treduce_path path, rj_treduce_plan *plan);

/* ---------------------------------------------------------------- path tables (auto's choice) */
/* Measured path times auto picks from (docs/TREDUCE.md, "How auto chooses": format, order). */
RJ_API rj_status rj_treduce_table_load(rj_ctx *ctx, const char *file); /* NULL: forget; "": none */
RJ_API rj_status rj_treduce_table_set(rj_ctx *ctx, const char *text, size_t len,
                                      const char *origin);
RJ_API rj_status rj_treduce_table_text(rj_ctx *ctx, const char **text); /* ctx's, to next call */
RJ_API rj_status rj_treduce_table_save(rj_ctx *ctx, const char *file);  /* NULL: cache folder */
/* Measures every path on this machine's GPUs and makes the result ctx's table (needs GPUs). */
RJ_API rj_status rj_treduce_calibrate(rj_ctx *ctx, int ranks, int min_log2, int max_log2, int runs);
/* The path auto takes for rank r on GPU rank_device[r], and why (ctx's text); no GPU needed. */
RJ_API rj_status rj_treduce_choose(rj_ctx *ctx, const rj_request *req, const int *rank_device,
                                   rj_treduce_path *path, const char **why);

/* ---------------------------------------------------------------- NCCL backend */
/* ncclReduce on the caller's communicator (libnccl.so.2 dlopen'ed); every rank calls it. */
typedef struct rj_nccl_args {
  uint32_t struct_size; /* set by rj_nccl_args_init */
  void *comm;           /* ncclComm_t */
  void *stream;         /* cudaStream_t / CUstream; NULL: the legacy default stream */
  rj_devptr src;        /* this rank's source */
  rj_devptr dst;        /* the root's destination; ignored on other ranks */
  int synchronize;      /* 1: wait for the stream before returning */
} rj_nccl_args;

RJ_API void rj_nccl_args_init(rj_nccl_args *a);
RJ_API rj_status rj_nccl_version(rj_ctx *ctx, int *version); /* e.g. 22304; RJ_ENODEV: none */
RJ_API rj_status rj_treduce_nccl(rj_ctx *ctx, const rj_request *req, const rj_nccl_args *a);

#ifdef __cplusplus
}
#endif
#endif /* REDJIT_TREDUCE_H */
