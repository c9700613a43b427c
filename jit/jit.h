/* jit/ — the public API: the context, the compile pipeline, the kernel cache, running. */
#ifndef RJ_JIT_H
#define RJ_JIT_H

#include "../ir/ir.h"
#include "../runtime/rt.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

/* One load of a kernel's PTX on one device (a kernel may be loaded on several GPUs at once: the
 * treduce split path launches the same slice kernel on each). */
typedef struct jit_module {
  int dev;
  void *module, *function;
  struct jit_module *next;
} jit_module;

struct rj_kernel {
  char *key; /* canonical request | target | ptx */
  char *ptx, *ll, *ll_opt;
  char *src; /* rj_compile_ir: the caller's IR bytes, compared on a cache hit */
  size_t srclen;
  char variant[RJ_NAME_MAX];
  char target[16];
  char entry[64];
  int ptx_version;
  unsigned grid[3], block[3], shared_bytes;
  double compile_ms;
  rj_request req;  /* the request it was compiled for (a dynamic kernel serves other shapes too) */
  int dyn_np;      /* issue 6: size parameters after (src, dst) of a runtime-size tensor kernel */
  int sms;         /* tensor kernels: the SM count the plan was made for (0: none read) */
  char bucket[64]; /* runtime-size tensor kernels: the plan bucket compiled in */
  void *module, *function; /* the last jit_load's device `loaded_on` (-1: not loaded) */
  int loaded_on;
  jit_module *loads; /* every device it is loaded on (module / function above is one of them) */
  rj_kernel *next;   /* the context's cache list */
};

/* devres.c: what a context keeps on one device between calls (treduce's streams, events and
 * staging buffers), made on first use. */
#define JIT_DEV_STREAMS 8
#define JIT_DEV_EVENTS 18
#define JIT_EV_CALLER 17   /* event 17 of the root's GPU: recorded on the caller's stream */
#define JIT_EV_RING_END 16 /* event 16 of a ring call's root's GPU: that call's end (all hops) */
#define JIT_DEV_STAGES 3   /* staging slots: 0, 1 the staged path, 2 the ring path */
#define JIT_DEV_FLAG_BYTES 32768          /* the ring path's counters on one device */
#define JIT_STAGE_KEEP ((size_t)64 << 20) /* larger staging buffers are not kept */
typedef struct jit_devres {
  int dev;
  void *stream[JIT_DEV_STREAMS], *event[JIT_DEV_EVENTS];
  uint64_t stage[JIT_DEV_STAGES];
  size_t stage_bytes[JIT_DEV_STAGES];
  uint64_t flags;    /* JIT_DEV_FLAG_BYTES, zeroed when made: the ring path's counters */
  uint64_t *status;  /* page-locked host words of the ring calls rooted here: [0] base + 1 of the
                        last call a hop gave up in, [1] how many calls gave up (treduce_ring.c) */
  uint64_t reported; /* of those calls, how many were reported */
  struct jit_devres *next;
} jit_devres;

typedef struct jit_tm {
  char target[16];
  int ptx;
  LLVMTargetMachineRef tm;
} jit_tm;

struct rj_ctx {
  ir_err err;
  LLVMContextRef llvm;
  jit_tm tms[16];
  int ntms;
  rj_kernel *kernels; /* cache */
  char *text;         /* the last explain / canonical text handed out */
  rt_cuda *cuda;      /* opened on first use */
  bool cuda_tried;
  char cuda_why[256];  /* why the driver could not be opened */
  char llvm_diag[512]; /* the first error LLVM diagnosed during codegen ("" if none) */
  long long compiles;  /* kernels added to the cache (rj_ctx_compile_count) */
  jit_devres *devres;  /* per device, made on first use */
  uint64_t ring_base;  /* the next ring call's counter base (jit/treduce_ring.c) */
  int ring_end_dev;    /* the GPU whose JIT_EV_RING_END marks the last ring call's end; -1 */
};

/* Public entry points check their pointers: a NULL context is RJ_EINVAL (with nowhere to put a
 * message); a NULL required argument is RJ_EINVAL naming it. */
#define JIT_NEED(ctx, p, what)                                                                     \
  do {                                                                                             \
    if (!(ctx)) return RJ_EINVAL;                                                                  \
    if (!(p)) return jit_null(ctx, what);                                                          \
  } while (0)
rj_status jit_null(rj_ctx *ctx, const char *what);

/* context.c */
rj_status jit_validate(rj_ctx *ctx, const rj_request *r); /* ir_validate + variant name */
rj_status jit_status(rj_ctx *ctx, rj_status s);           /* clears the message on RJ_OK */
rj_status jit_cuda(rj_ctx *ctx, rt_cuda **out);           /* the driver, opened once */
void jit_llvm_init(void);                                 /* one-time target registration */

/* compile.c */
/* Resolves opt's target into a table entry (auto: the device, else sm_90). */
rj_status jit_target(rj_ctx *ctx, const rj_options *opt, const ir_target **out);
/* The PTX version: opt's, or the least the target and `needed` allow; refuses every pair LLVM
 * would abort on. */
rj_status jit_pick_ptx(rj_ctx *ctx, const ir_target *t, const rj_options *opt, int needed,
                       int *ptx);
/* Codegen of a lowered module into k (k->ptx_version set): triple and data layout, verify (a
 * failure is the caller's RJ_EINVAL when theirs, else internal), IR text, O3, IR text, PTX. */
rj_status jit_codegen(rj_ctx *ctx, LLVMModuleRef M, const ir_target *tg, rj_kernel *k, bool theirs);
rj_kernel *jit_cache_find(rj_ctx *ctx, const char *key);
void jit_cache_add(rj_ctx *ctx, rj_kernel *k); /* takes k, with k->key set */
void jit_kernel_free(rj_kernel *k);            /* a kernel never loaded */
double jit_now_ms(void);

/* launch.c: the one load and the one launch every path uses. */
/* Loads k on device dev (once per device; the current context must be dev's) and makes that
 * load k->module / k->function.  Loads on other devices stay (rj_ctx_free unloads them all).
 * *ms (may be NULL): the time the load took (0 when k was already loaded on dev). */
rj_status jit_load(rj_ctx *ctx, rj_kernel *k, int dev, double *ms);
/* How to launch a kernel: geometry, dynamic shared bytes, one pointer per kernel parameter (as
 * cuLaunchKernel takes them), and either a stream to launch on without waiting (NULL: the legacy
 * default stream) or, with ms set, a launch that is waited for and timed by events. */
typedef struct jit_launch_args {
  unsigned grid[3], block[3], shared;
  void **args;
  void *stream; /* used when ms is NULL */
  double *ms;   /* non-NULL: wait for the kernel, *ms = its time */
} jit_launch_args;
/* Loads k on dev if it is not loaded there yet, then launches it as l says; the current context
 * must be dev's (rt_enter). */
rj_status jit_launch(rj_ctx *ctx, rj_kernel *k, int dev, const jit_launch_args *l);

/* devres.c.  Stream i / event i of device dev (the current context must be dev's), made on first
 * use and kept; a staging buffer b of at least `bytes`, kept when it is at most JIT_STAGE_KEEP
 * (else *temporary: with `ordered` NULL the caller rt_frees it after draining, else it is
 * allocated on stream `ordered` and the caller rt_free_asyncs it there after its last use);
 * rj_ctx_free drains and releases them all. */
rj_status jit_dev_stream(rj_ctx *ctx, rt_cuda *rt, int dev, int i, void **out);
rj_status jit_dev_event(rj_ctx *ctx, rt_cuda *rt, int dev, int i, void **out);
rj_status jit_dev_stage(rj_ctx *ctx, rt_cuda *rt, int dev, int b, size_t bytes, void *ordered,
                        uint64_t *out, bool *temporary);
/* The same buffer b, kept whatever its size (the ring's inboxes: other GPUs' kernels store into
 * them, and stream-ordered memory of a device's default pool is not open to its peers).  A kept
 * buffer grows only after every device's streams drain: another GPU's kernel may store into it. */
rj_status jit_dev_keep(rj_ctx *ctx, rt_cuda *rt, int dev, int b, size_t bytes, uint64_t *out);
/* The device's counter region (JIT_DEV_FLAG_BYTES), zeroed when it is made, kept until the
 * context is freed; the current context must be dev's. */
rj_status jit_dev_flags(rj_ctx *ctx, rt_cuda *rt, int dev, uint64_t *out);
/* The device's ring status word (page-locked host memory, zeroed when made, a device address on
 * every GPU too) and its record of what was reported; kept until the context is freed. */
rj_status jit_dev_status(rj_ctx *ctx, rt_cuda *rt, int dev, jit_devres **out);
/* Waits for every stream the context keeps, on every device (rj_treduce_sync); all of them even
 * when one fails (the first failure is returned). */
rj_status jit_devres_sync(rj_ctx *ctx);
void jit_devres_free(rj_ctx *ctx);

/* tensor.c (issue 6): the SM count of opt's device through the driver, 0 when none is usable. */
int jit_tensor_sms(rj_ctx *ctx, const rj_options *opt);
/* The launch of tensor kernel k for req (k compiled for req, or, for a runtime-size kernel, for
 * any request of the same bucket): grid, block and the kernel arguments (src, dst and, for a
 * runtime-size kernel, req's size parameters).  args point into a. */
#define JIT_TENSOR_MAXP 16
typedef struct jit_targs {
  unsigned grid[3], block[3];
  uint64_t ptr[2];
  int64_t p[JIT_TENSOR_MAXP];
  void *args[2 + JIT_TENSOR_MAXP];
} jit_targs;
rj_status jit_tensor_args(rj_ctx *ctx, const rj_kernel *k, const rj_request *req, uint64_t src,
                          uint64_t dst, jit_targs *a);

#endif
