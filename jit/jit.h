/* jit/ — the public API: the context, the compile pipeline, the kernel cache, running. */
#ifndef RJ_JIT_H
#define RJ_JIT_H

#include "../ir/ir.h"
#include "../passes/passes.h"
#include "../runtime/rt.h"

#include <stdatomic.h>

/* One load of a kernel's PTX on one device (a kernel may be loaded on several GPUs at once: the
 * treduce split path launches the same slice kernel on each). */
typedef struct jit_module {
  int dev;
  void *module, *function;
  struct jit_module *next;
} jit_module;

struct rj_kernel {
  rj_ctx *ctx; /* the context that holds it (its IR text is made there when first asked) */
  char *key;   /* canonical request | target | ptx */
  char *ptx;
  /* the IR text before and after O3: made by a compile only where text_now is set
   * (REDJIT_DUMP_DIR), for caller IR and op custom; else NULL until first asked (jit_kernel_ir) */
  char *ll, *ll_opt;
  bool text_now;
  char *src; /* rj_compile_ir: the caller's IR bytes, compared on a cache hit */
  size_t srclen;
  char variant[RJ_NAME_MAX];
  char target[16];
  char entry[64];
  int ptx_version;
  double compile_ms;
  bool from_disk;     /* read from the disk cache by this process (compile_ms is the writer's) */
  double stage_ms[4]; /* of compile_ms: lowering, verify, O3, PTX (the compiler library's) */
  double disk_ms;     /* from_disk: ms this process spent reading it */
  rj_request req; /* the request it was compiled for (a runtime-size kernel serves others too) */
  /* the variant's plan for req, its launch geometry too (rj_kernel_dims; zero for
   * rj_compile_ir's, whose geometry is the caller's) */
  pass_plan plan;
  void *module, *function; /* the last jit_load's device `loaded_on` (-1: not loaded) */
  int loaded_on;
  jit_module *loads; /* every device it is loaded on (module / function above is one of them) */
  rj_kernel *next;   /* the context's cache list */
  uint64_t hash;     /* jit_hash64 of key */
  rj_kernel *chain;  /* the next kernel of its hash table bucket */
  uint64_t used;     /* the context's use count when it was last asked for (least recently used
                        goes first) */
  long long pins;    /* rj_compile / rj_compile_ir returns not yet released (rj_kernel_release):
                        while above 0 the kernel is never evicted and not counted in the bound */
  /* the cubin made from ptx by the driver's linker, for the device and driver cubin_key names
   * (loaded instead of the PTX: no PTX JIT); NULL: none yet */
  unsigned char *cubin;
  size_t cubin_len;
  /* op custom: the lowered kernel as bitcode, from lowering to the combine stage (custom.c) */
  char *custom_bc;
  size_t custom_bcn;
  char cubin_key[64];
};

/* The persistent cache of a context (diskcache.c), resolved on first use. */
enum { JIT_DISK_UNRESOLVED, JIT_DISK_ON, JIT_DISK_OFF };
typedef struct jit_disk {
  int state;
  bool set;      /* rj_ctx_set_disk_cache chose dir ("": off) over the environment */
  bool readonly; /* entries are read, none written */
  bool scanned;  /* bytes was measured once by this process */
  char dir[1024];
  char note[1200];           /* why the cache is off or read-only ("": nothing to say) */
  uint64_t max_bytes, bytes; /* the bound; the size last measured plus this process's writes */
  long long hits, writes, evictions;
} jit_disk;

struct rj_ctx {
  ir_err err;
  /* the compiler library's state (its LLVMContext, target machines: jit/llvm/llvm.h), made on
   * the context's first compile and freed by the library's `release` */
  struct jit_llvm *llvm;
  rj_kernel *kernels; /* cache */
  char *text;         /* the last explain / canonical text handed out */
  rt_cuda *cuda;      /* opened on first use */
  bool cuda_tried;
  char cuda_why[256]; /* why the driver could not be opened */
  long long compiles; /* kernels added to the cache (rj_ctx_compile_count) */
  long long memory_hits, nkernels;
  rj_kernel **table; /* the cache by key hash: chained buckets, a power of two of them */
  size_t nbuckets;
  struct jit_memo **memo; /* by request bytes (cache.c); NULL until the first compile */
  jit_disk disk;
  void *treduce; /* the treduce layer's state (jit/treduce/), made on its first use */
  void (*treduce_free)(rj_ctx *ctx); /* set with it; rj_ctx_free calls it */
  struct jit_text *texts; /* combine IR texts of parsed requests, freed with ctx (context.c) */
  uint64_t text_ids;      /* the last id given to a kept text (combine.text) */
  int log_state;          /* REDJIT_LOG: 0 not read yet, 1 on, 2 off (trace.c) */
  /* the bound of the kernels the cache owns (cache.c): those the library compiled for its own
   * calls, evicted least recently used first; pinned ones (pins > 0) are not counted */
  bool max_set;                        /* max_kernels resolved (context call or environment) */
  long long max_kernels;               /* 0: no bound */
  long long npinned, memory_evictions; /* npinned: kernels with pins > 0 */
  /* the kernels with pins > 0 by their address (pin.c): rj_kernel_release finds a caller's
   * pointer here without reading through it; open addressing, a power of two of slots */
  rj_kernel **pinset;
  size_t pincap;
  bool pin_keep;  /* inside rj_compile: the kernel a miss inserts is pinned next (not counted) */
  uint64_t tick;  /* uses so far: rj_kernel.used */
  int evict_hold; /* > 0: a call holds kernels it compiled; evictions wait */
  rj_kernel *evicted;  /* out of the cache, to be freed at the end of the call */
  jit_module *retired; /* loads of evicted kernels, unloaded in batches (context.c) */
  int nretired;
  int driver_version; /* cuDriverGetVersion, 0: not read yet (the cubin key) */
  long long cubin_loads, cubin_links, cubin_stale;
  _Atomic(uintptr_t) owner; /* the thread inside a public call on it (0: none; JIT_ENTER) */
  uint64_t serial;          /* this context's number among those made (never changes) */
  int depth;                /* how deeply that thread is inside (its nested public calls) */
};

/* Public entry points check their pointers: a NULL context is RJ_EINVAL (with nowhere to put a
 * message); a NULL required argument is RJ_EINVAL naming it. */
#define JIT_NEED(ctx, p, what)                                                                     \
  do {                                                                                             \
    if (!(ctx)) return RJ_EINVAL;                                                                  \
    if (!(p)) return jit_null(ctx, what);                                                          \
  } while (0)
rj_status jit_null(rj_ctx *ctx, const char *what);
/* RJ_EINVAL "FIELD: 0x... is not aligned to its N-byte WHAT" unless ptr % bytes == 0: a device
 * pointer the kernel reads or writes in units of `bytes` (a misaligned access faults the CUDA
 * context).  Checked before any GPU work by every launch call. */
rj_status jit_aligned(ir_err *e, const char *field, uint64_t ptr, unsigned bytes, const char *what);

/* One thread at a time inside a context.  Every public entry point that takes a context enters it
 * first with JIT_ENTER (JIT_ENTER_OR where it returns no status) and leaves it on every return
 * (the cleanup attribute); calls nested in the same thread (the harness calling rj_compile, an
 * rj_stream_time callback) go deeper.  A call from another thread while one is inside touches
 * nothing in the context and returns RJ_EBUSY (rj_errmsg names the misuse to that thread). */
typedef struct jit_guard {
  rj_ctx *ctx; /* the context entered; NULL when none was (a NULL ctx, or refused) */
} jit_guard;
bool jit_enter(const rj_ctx *ctx, jit_guard *g); /* false: another thread is inside */
void jit_leave(jit_guard *g);
rj_status jit_busy(const rj_ctx *ctx); /* RJ_EBUSY */
#define JIT_ENTER_OR(ctx, busy)                                                                    \
  jit_guard jit_guard_ __attribute__((cleanup(jit_leave))) = {0};                                  \
  if (!jit_enter((ctx), &jit_guard_)) return (busy)
#define JIT_ENTER(ctx) JIT_ENTER_OR(ctx, jit_busy(ctx))

/* context.c */
rj_status jit_validate(rj_ctx *ctx, const rj_request *r);
/* op custom: refuses (RJ_EINVAL naming combine.ir) a parsed request whose kept text is gone. */
rj_status jit_text_check(rj_ctx *ctx, const rj_request *r); /* ir_validate + variant name */
/* Ends a public call: on RJ_OK clears the message, on a failure with no message names the
 * status; returns s.  Every public entry point returns through it. */
rj_status jit_done(rj_ctx *ctx, rj_status s);
rj_status jit_cuda(rj_ctx *ctx, rt_cuda **out); /* the driver, opened once */
double jit_now_ms(void);                        /* a monotonic clock */
int jit_device_sms(rj_ctx *ctx, int device); /* its SM count, 0 when none is usable (no message) */
/* The SM count plans are made for instead of the device's: rj_options.sm_count, else
 * $REDJIT_SM_COUNT; *sms = -1 when neither is set.  A value outside 1 .. 65536: RJ_EINVAL. */
rj_status jit_sms_asked(rj_ctx *ctx, const rj_options *opt, int *sms);
/* An evicted kernel (out of the cache already): its loads are kept to be unloaded later, in a
 * batch after the devices' work has finished; the rest is freed now. */
void jit_retire(rj_ctx *ctx, rj_kernel *k);
void jit_retired_unload(rj_ctx *ctx); /* unloads every retired load now (rj_ctx_free, batches) */

/* evict.c: frees the kernels the call's insertions evicted (ctx->evicted), logging each; every
 * call that may insert a kernel ends with it. */
void jit_evicted_free(rj_ctx *ctx);

/* compile.c: the pipeline. */
/* rj_compile without the call's frame (ctx->err cleared by the caller, jit_done after): also
 * gives req's own plan (a cached runtime-size kernel was planned for another shape). */
rj_status jit_compile(rj_ctx *ctx, const rj_request *req, const rj_options *opt, rj_kernel **out,
                      pass_plan *plan);
/* v's plan for req (accepted by v) on tg.  The SM count is read from `device` when the plan
 * first asks, unless sms >= 0 (a kernel's plan.sms: replanning another shape for it). */
rj_status jit_plan(rj_ctx *ctx, const pass_variant *v, const rj_request *req, const ir_target *tg,
                   int device, int sms, pass_plan *out);

/* custom.c: op custom's stage, after lowering (other requests: nothing).  k keeps req's combine
 * text (k->src, which k->req points at); the caller's combine is screened, linked into the
 * kernel lowering left as bitcode, and compiled into k -- in redjit-irc (isolate.c), or in this
 * process where opt asks (rj_options.ir_in_process). */
rj_status jit_combine_stage(rj_ctx *ctx, const rj_request *req, const ir_target *tg,
                            const rj_options *opt, rj_kernel *k);

/* target.c: resolves opt's target into a table entry (auto: the device, else sm_90). */
rj_status jit_target(rj_ctx *ctx, const rj_options *opt, const ir_target **out);
/* ptx.c: the PTX version: opt's, or the least the target and `needed` allow; refuses every pair
 * LLVM would abort on. */
rj_status jit_pick_ptx(rj_ctx *ctx, const ir_target *t, const rj_options *opt, int needed,
                       int *ptx);

/* compiler.c: the compiler library (compiler.h), loaded on the first call that needs it; a
 * library that cannot be loaded is RJ_EUNSUPPORTED with the reason. */
/* v's emitter lowers req, planned by k->plan (read only), into k, then codegen (op custom: its
 * kernel as bitcode, for jit_combine_stage). */
rj_status jit_lower(rj_ctx *ctx, const pass_variant *v, const rj_request *req, const ir_target *tg,
                    const rj_options *opt, rj_kernel *k);
/* A caller's module compiled in this process into k (k->ptx_version set). */
rj_status jit_compile_module(rj_ctx *ctx, const char *ir, size_t n, const char *entry,
                             const ir_target *tg, rj_kernel *k);
/* op custom's link in this process: the compiler library's `combine` (jit/compiler.h). */
rj_status jit_compile_combine(rj_ctx *ctx, const char *mod, size_t n, const char *ir, size_t irn,
                              const char *names, const ir_target *tg, rj_kernel *k);
void jit_compiler_release(rj_ctx *ctx); /* the context's LLVM state, when it has any */
/* The build id of the compiler library this libredjit.so loads, for the disk cache's keys: a
 * rebuilt compiler never reads entries an earlier one wrote, and a hit needs no compiler. */
const char *jit_compiler_id(void);
/* The compiler library's `text` (compiler.h): k's IR text before and after O3, made again into
 * *ll and *ll_opt (the caller's to free) for k's target tg. */
rj_status jit_lower_text(rj_ctx *ctx, const rj_kernel *k, const ir_target *tg, char **ll,
                         char **ll_opt);

/* kernel.c: k->ll and k->ll_opt, made where they are NULL (rj_kernel_text's IR): k's variant
 * lowers k's request and plan again in k's context through the compiler library (the same module
 * its compile made: emitters are deterministic), O3 runs, no PTX.  Caller IR and op custom have
 * theirs from their compile.  false: they cannot be made (k's context's message is left as it
 * was). */
bool jit_kernel_ir(rj_kernel *k);

/* cache.c */
/* The key of req: the plan's key, or the request's canonical JSON, then jit_key_tail. */
rj_status jit_cache_key(rj_ctx *ctx, const rj_request *req, const ir_target *tg,
                        const rj_options *opt, const pass_plan *plan, char **key);
/* The key's end: "|target|ptx_asked", "|emulated" when so, "|smsN" when the plan read N. */
void jit_key_tail(char *buf, size_t n, const ir_target *tg, int ptx_asked, int sms);
rj_kernel *jit_cache_find(rj_ctx *ctx, const char *key);
void jit_cache_add(rj_ctx *ctx, rj_kernel *k);    /* takes k (key set), counts a compile */
void jit_cache_insert(rj_ctx *ctx, rj_kernel *k); /* takes k (key set), counts nothing */
/* Both insert k as the most recently used kernel, then evict the least recently used kernels the
 * cache owns (never k, never a pinned one) beyond the bound, unless a call holds them. */
void jit_cache_touch(rj_ctx *ctx, rj_kernel *k); /* k was asked for: now the most recent */
/* One more pin on k (a kernel handed to the caller): RJ_ENOMEM (with the message) when the
 * table of pinned kernels cannot grow, k's pins then unchanged. */
rj_status jit_cache_pin(rj_ctx *ctx, rj_kernel *k);
/* A call that keeps kernels it compiled across later compiles (treduce) holds evictions: +1 at
 * its start, -1 at its end. */
void jit_cache_hold(rj_ctx *ctx, int delta);
long long jit_cache_bound(rj_ctx *ctx); /* the bound of cache-owned kernels, 0: none */
void jit_cache_evict(rj_ctx *ctx);      /* evicts down to the bound now (a new bound) */
/* The kernel and plan the pipeline made of these very request bytes and options (NULL: none
 * remembered; op custom: its IR text by content, cache.c: the caller has checked that a parsed
 * text is still kept, jit_text_check); put remembers them (a bounded table: 1024 requests).  The
 * one fast path for a repeated request. */
rj_kernel *jit_memo_find(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                         pass_plan *plan);
void jit_memo_put(rj_ctx *ctx, const rj_request *req, const rj_options *opt, rj_kernel *k,
                  const pass_plan *plan);
void jit_memo_free(rj_ctx *ctx);
/* A 64-bit hash of n bytes (not cryptographic: names and checksums, the bytes decide). */
uint64_t jit_hash64(const void *p, size_t n, uint64_t seed);

/* diskcache.c: the persistent cache (off, read-only or unusable: find NULL, store nothing). */
/* The kernel stored under key, rebuilt (op custom's combine text too) and put in the memory
 * cache (NULL: none that verifies). */
rj_kernel *jit_disk_find(rj_ctx *ctx, const char *key);
void jit_disk_store(rj_ctx *ctx, const rj_kernel *k); /* a compiled kernel, for other processes */
bool jit_disk_on(rj_ctx *ctx);      /* the disk cache is in use (resolved on first ask) */
void jit_kernel_free(rj_kernel *k); /* a kernel never loaded */

/* trace.c: the PTX header, REDJIT_DUMP_DIR, REDJIT_LOG. */
/* Every line of the header redjit puts at the top of its PTX starts with this (comparisons of
 * PTX across builds drop these lines: scripts/ptx-corpus.sh). */
#define JIT_PTX_MARK "// redjit:"
/* Prepends the header to k->ptx: redjit's version, variant, target, entry, the canonical request,
 * the launch geometry and size parameters (what another tool needs to launch the PTX). */
rj_status jit_ptx_header(rj_ctx *ctx, rj_kernel *k);
/* A compiled kernel's request (.json), IR before and after O3 (.ll, .opt.ll) and PTX (.ptx) into
 * $REDJIT_DUMP_DIR, named <key hash>.<variant>; nothing when unset, one note on failure. */
void jit_dump(rj_ctx *ctx, const rj_kernel *k);
bool jit_dump_on(void);       /* REDJIT_DUMP_DIR is set: a compile makes the IR text too */
bool jit_log_on(rj_ctx *ctx); /* REDJIT_LOG is set (read once per context) */
/* One line "redjit: ..." on stderr when REDJIT_LOG is set. */
void jit_log(rj_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

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

/* tensor.c.  The launch of tensor kernel k for req (k compiled for req, or, for a runtime-size
 * kernel, for any request of the same bucket): grid, block and the kernel arguments (src, dst
 * and, for a runtime-size kernel, req's size parameters, from req's plan).  args point into a. */
#define JIT_TENSOR_MAXP 16
typedef struct jit_targs {
  unsigned grid[3], block[3];
  uint64_t ptr[5 + RJ_TENSOR_OTHERS_MAX]; /* src, dst, values?, the other inputs, segments' 2 */
  int64_t p[JIT_TENSOR_MAXP];
  void *args[5 + RJ_TENSOR_OTHERS_MAX + JIT_TENSOR_MAXP];
} jit_targs;

#endif
