/*
 * redjit — a JIT compiler for GPU reductions: the public header of libredjit.so.
 *
 * A reduction request (rj_request, plain C data, or JSON) is validated, dispatched to the first
 * registered variant whose predicates all pass, lowered to LLVM IR, optimised, turned into PTX by
 * LLVM's NVPTX backend and, when a GPU is present, loaded and launched through the CUDA driver
 * (libcuda is loaded with dlopen: everything up to PTX works on a machine with no driver).
 * Emitting redjit's primitives into the caller's own LLVM module is redjit_emit.h's business
 * (libredjit_emit.a).
 *
 * Contents
 *   version; status codes; context; requests; targets and options; compile and inspect; run on
 *   the GPU; tensor (rj_reduce); treduce; checking and benchmarking; errors.
 *
 * Status and message
 *  - Every fallible call returns an rj_status; RJ_OK (0) is success.  The message of the last
 *    failure is kept in the context: rj_errmsg(ctx), valid until the next call on that context.
 *    Messages name the request field ("src.shape[1]: ...") or the cause.
 *  - Nothing in the library aborts or exits the process.  Target / PTX-version / instruction
 *    combinations that LLVM's backend would kill the process on are rejected before codegen;
 *    caller IR (rj_compile_ir) is compiled in a process of its own.
 *
 * Ownership
 *  - Pointers returned by rj_ functions are owned by the context unless said otherwise, and live
 *    until rj_ctx_free (variant names; kernels: the next point) or until the next call on the
 *    context (messages, text such as rj_explain's and rj_request_canonical's).  Only rj_ctx_new
 *    and rj_request_new hand the caller something to free (rj_ctx_free, rj_request_free).
 *  - Kernels: each return of a kernel by rj_compile or rj_compile_ir adds a pin to it (the same
 *    request twice: the same kernel, two pins), and rj_kernel_release drops one.  A pinned kernel
 *    stays in its context until rj_ctx_free; at no pins it belongs to the cache again, as the
 *    kernels the library compiles for its own calls and never hands out (rj_reduce's,
 *    treduce's): the cache keeps at most a bound of them and evicts the least recently used
 *    (rj_ctx_set_memory_cache); a later call needing one compiles it again, or reads it from the
 *    disk cache.  A caller who never releases keeps every kernel it was given until rj_ctx_free.
 *
 * Thread safety
 *  - One rj_ctx is used by one thread at a time (like an LLVMContext).  A call on a context while
 *    another thread is inside a call on it does nothing and returns RJ_EBUSY at once (rj_errmsg
 *    tells the refused thread so; rj_ctx_compile_count returns -1; rj_ctx_free leaves the context
 *    as it is): a misuse is a status, never a crash or a deadlock.  Calls do not wait for each
 *    other: to share a context, hold a lock around its calls.  Calls from the thread already
 *    inside (an rj_stream_time callback, the harness calling rj_compile) go in.  Distinct
 *    contexts may be used concurrently from different threads; the only process-wide state is
 *    LLVM's one-time
 *    target initialisation, done under pthread_once, and a lock that lets one JSON parse run at a
 *    time (cJSON writes its last error position to a process-wide variable).  The CUDA driver's
 *    own per-device state is shared, as the driver shares it: every context uses the GPUs'
 *    primary contexts, and a ring call raises their stack limit (CU_LIMIT_STACK_SIZE) where it is
 *    below a hop kernel's need (on sm_90a at most 16 bytes, under the driver's default 1 KiB;
 *    docs/TREDUCE.md).
 *  - Kernels (rj_kernel) belong to their context and follow the same rule; the accessors of a
 *    kernel only read it, except rj_kernel_text's first ask for a kernel's LLVM IR, which makes it
 *    in the kernel's context (a call on that context: NULL while another thread is inside it).
 *    rj_kernel_release is a call on the kernel's context like any other: the thread that uses
 *    the context releases (RJ_EBUSY, the pin kept, while another thread is inside).
 * rj_variant_count and rj_variant_get read the library's own table and may be called from any
 * thread.
 *
 * Device memory
 *  - A device address is an rj_devptr (a CUdeviceptr value) of the GPU named beside it, in that
 *    GPU's primary context (the one the CUDA runtime uses).  A stream is a void * holding a
 *    CUstream / cudaStream_t; NULL is the legacy default stream.
 *
 * ABI
 *  - Public enums have explicit, append-only values.
 *  - Structs passed in carry struct_size, set by their init call (rj_request_init,
 *    rj_options_init, rj_treduce_group_init ...), and the library checks it.  rj_options and
 *    rj_check_opts may come from an older header: fields past the caller's struct_size are not
 *    read.  The others (rj_treduce_group, rj_request, rj_treduce_plan, rj_nccl_args) must have
 *    this library's size (RJ_EINVAL naming struct_size otherwise); bindings that cannot see the
 *    struct ask rj_request_size().
 *  - Structs the library writes (results: rj_variant_info, rj_treduce_result, redjit_check.h's
 *    rj_check_result and rj_bench_result) carry struct_size too, set by the caller to the size it
 *    compiled (`res.struct_size = sizeof res;`).  Their fields are only ever appended; the library
 *    writes no byte past the caller's struct_size (an older caller gets the fields it knows, a
 *    newer one's extra fields are zeroed), and a struct_size below the first version's size is
 *    RJ_EINVAL naming it.
 */
#ifndef REDJIT_H
#define REDJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(REDJIT_BUILD)
#define RJ_API __attribute__((visibility("default")))
#else
#define RJ_API
#endif
#if defined(__GNUC__)
#define RJ_PRINTF(fmt, first) __attribute__((format(printf, fmt, first)))
#else
#define RJ_PRINTF(fmt, first)
#endif

/* ---------------------------------------------------------------- version */
/* The project's one version: CMake reads these three lines (project(), redjit.pc, the package's
 * version file) and rj_version() spells them. */
#define RJ_VERSION_MAJOR 0
#define RJ_VERSION_MINOR 2
#define RJ_VERSION_PATCH 0
/* One number for #if checks: 10000 * major + 100 * minor + patch (0.2.0: 200). */
#define RJ_VERSION (RJ_VERSION_MAJOR * 10000 + RJ_VERSION_MINOR * 100 + RJ_VERSION_PATCH)

/* The library's version as "MAJOR.MINOR.PATCH": compare with RJ_VERSION_* at run time. */
RJ_API const char *rj_version(void);

/* ---------------------------------------------------------------- status codes (stable) */
/* Names and messages: rj_status_name and rj_errmsg, at the end of this header. */
typedef enum rj_status {
  RJ_OK = 0,
  RJ_EINVAL = 1,       /* the request (or an argument) is invalid: the message names the field */
  RJ_ENOVARIANT = 2,   /* valid, but no variant accepts it: the message lists each reason */
  RJ_ETARGET = 3,      /* unknown target, or a target / PTX version / instruction combination */
  RJ_ELLVM = 4,        /* LLVM failed (IR verification, codegen): an internal error */
  RJ_ENODEV = 5,       /* no CUDA driver or no such GPU */
  RJ_ECUDA = 6,        /* a CUDA driver call failed: the message names the call and the error */
  RJ_ENOMEM = 7,       /* host allocation failed */
  RJ_EUNSUPPORTED = 8, /* the request is valid but this build cannot do it yet */
  RJ_ETIMEOUT = 9,     /* a kernel gave up waiting for another GPU's (the ring path's hops) */
  RJ_ECRASH = 10,      /* rj_compile_ir's compiler process ended without an answer: killed by a
                          signal (LLVM's fatal errors abort), past its time or memory limit, or
                          exited without a reply; the message names the cause */
  RJ_EBUSY = 11        /* another thread is inside a call on this context (a misuse: one rj_ctx
                          is used by one thread at a time); the call did nothing */
} rj_status;

/* ---------------------------------------------------------------- context */
typedef struct rj_ctx rj_ctx;

/* Creates a context.  Returns NULL only when memory runs out.  Pair with rj_ctx_free. */
RJ_API rj_ctx *rj_ctx_new(void);
/* Frees the context and everything it owns (kernels, loaded modules, the driver handle, treduce's
 * streams and buffers, after waiting for its calls in flight).  NULL is a no-op. */
RJ_API void rj_ctx_free(rj_ctx *ctx);
/* Kernels ctx has compiled so far (every cache miss of rj_compile, rj_compile_ir, rj_reduce, run
 * and bench adds one; a kernel read from the disk cache is not compiled and adds none): a caller
 * or a test can see whether a call reused a kernel. */
RJ_API long long rj_ctx_compile_count(const rj_ctx *ctx);

/* The kernel caches.  Each context keeps the kernels it compiled in memory; every context, in
 * every process, also reads and writes a directory of compiled kernels, so that a kernel compiled
 * once is loaded, not compiled, by the next process (docs/C_API.md, "Caching").  The directory
 * is $REDJIT_CACHE_DIR, else $XDG_CACHE_HOME/redjit, else ~/.cache/redjit (created 0700 when
 * missing); REDJIT_CACHE_DISABLE=1 turns it off, REDJIT_CACHE_MAX_BYTES bounds it (default 256
 * MiB; the least recently used entries go first).  A directory that cannot be created or written
 * leaves the cache off or read-only and records one note (rj_cache_stats.disk_note; printed to
 * stderr when REDJIT_LOG is set): never a failed call.  A kernel read from the directory has the
 * same PTX, IR texts, geometry and compile time as the one compiled.  On a kernel's first load the
 * driver's linker makes a cubin of its PTX, kept in its entry under the driver's version and the
 * GPU's compute capability: a later process on the same driver and GPU loads the cubin, with no
 * PTX JIT (another driver or GPU, or a cubin that does not verify: the PTX, linked again).
 * Every PTX starts with "// redjit:" comment lines: version, variant, target, entry, canonical
 * request, launch geometry and size parameters.  REDJIT_DUMP_DIR=DIR writes each compiled
 * kernel's request, IR and PTX there; REDJIT_LOG=1 prints one "redjit: " line per cache hit,
 * miss, compile, eviction and load on stderr (docs/C_API.md, "Caching"). */
/* Sets ctx's directory over the environment's: dir NULL or "" turns the disk cache off for ctx
 * (no file is read or written).  RJ_EINVAL only for a path of 1024 bytes or more. */
RJ_API rj_status rj_ctx_set_disk_cache(rj_ctx *ctx, const char *dir);
typedef struct rj_cache_stats {
  uint32_t struct_size;     /* set by the caller: sizeof(rj_cache_stats) */
  long long compiles;       /* real compiles (rj_ctx_compile_count) */
  long long memory_hits;    /* requests served by the context's own kernels */
  long long disk_hits;      /* kernels read from the directory (compiles not counted) */
  long long disk_writes;    /* entries this context wrote */
  long long disk_evictions; /* entries it removed to keep the directory under its bound */
  long long kernels;        /* kernels ctx holds */
  const char *disk_dir;     /* the directory in use (NULL: the disk cache is off) */
  int disk_read_only;       /* 1: entries are read, none written */
  const char *disk_note;    /* why the disk cache is off or read-only ("": nothing to say) */
  /* later fields (an older caller's struct_size leaves them out) */
  long long memory_evictions; /* cache-owned kernels evicted to keep within max_kernels */
  long long kernels_pinned;   /* kernels holding a pin (rj_compile, rj_compile_ir, less
                                 rj_kernel_release) */
  long long max_kernels;      /* the bound of cache-owned kernels (0: none) */
  long long cubin_loads;      /* loads from a cubin the disk entry held (no PTX JIT) */
  long long cubin_links;      /* cubins the driver's linker made (then stored in the entry) */
  long long cubin_stale;      /* stored cubins not used: another driver version or device,
                                 refused by the driver, or a cubin part that did not verify */
} rj_cache_stats;
/* ctx's cache counters into *out (its struct_size set by the caller); strings owned by ctx. */
RJ_API rj_status rj_ctx_cache_stats(rj_ctx *ctx, rj_cache_stats *out);
/* The bound of the kernels ctx's cache owns: those the library compiled for its own calls
 * (rj_reduce, treduce's kernels); beyond it the least recently used go (their GPU modules are
 * unloaded later, in batches, after waiting for the GPU's work: docs/C_API.md, "Caching").
 * Kernels holding a pin (rj_compile, rj_compile_ir; rj_kernel_release) are never evicted, not
 * counted.
 * max_kernels 0: no bound.  Default: $REDJIT_CACHE_MAX_KERNELS, else 4096.  RJ_EINVAL when
 * negative. */
RJ_API rj_status rj_ctx_set_memory_cache(rj_ctx *ctx, long long max_kernels);

/* ---------------------------------------------------------------- requests */
/* Request enums (stable values). */
typedef enum rj_kind {
  RJ_KIND_TILE = 1,
  RJ_KIND_SUBGROUP = 2,
  RJ_KIND_TENSOR = 3,
  RJ_KIND_TREDUCE = 4
} rj_kind;

/* Reduction ops (stable values).  Which dtypes each takes, its result, and the kinds and variants
 * that serve it: docs/REQUESTS.md, "Ops".  argmax / argmin give an i64 index (the first of ties,
 * or the first NaN under nan "propagate"); mean / var / std / logsumexp take float dtypes and give
 * the input's dtype; and / or / xor take integer dtypes. */
typedef enum rj_op {
  RJ_OP_SUM = 0,
  RJ_OP_MAX = 1,
  RJ_OP_MIN = 2,
  RJ_OP_PROD = 3,
  RJ_OP_AND = 4,
  RJ_OP_OR = 5,
  RJ_OP_XOR = 6,
  RJ_OP_ARGMAX = 7,
  RJ_OP_ARGMIN = 8,
  RJ_OP_MEAN = 9,
  RJ_OP_VAR = 10,
  RJ_OP_STD = 11,
  RJ_OP_LOGSUMEXP = 12,
  RJ_OP_CUSTOM = 13 /* the caller's combine, given as LLVM IR (rj_combine) */
} rj_op;

/* ORDER DTYPE: keep in step with ir/request.c's dtype table. */
typedef enum rj_dtype {
  RJ_F16 = 0,
  RJ_BF16 = 1,
  RJ_F32 = 2,
  RJ_F64 = 3,
  RJ_I32 = 4,
  RJ_U32 = 5,
  RJ_I64 = 6,
  RJ_U64 = 7,
  RJ_I8 = 8,    /* kind tensor only (as the next six) */
  RJ_U8 = 9,    /* kind tensor only */
  RJ_I16 = 10,  /* kind tensor only */
  RJ_U16 = 11,  /* kind tensor only */
  RJ_BOOL = 12, /* kind tensor only: one byte, 0 or 1 */
  RJ_E4M3 = 13, /* kind tensor only: float8 e4m3fn */
  RJ_E5M2 = 14  /* kind tensor only: float8 e5m2 */
} rj_dtype;

typedef enum rj_scope {
  RJ_SCOPE_THREAD = 0,
  RJ_SCOPE_WARP = 1,
  RJ_SCOPE_WARPGROUP = 2,
  RJ_SCOPE_CTA = 3
} rj_scope;

typedef enum rj_mem { RJ_MEM_SHARED = 0, RJ_MEM_LOCAL = 1 } rj_mem;
typedef enum rj_nan { RJ_NAN_PROPAGATE = 0, RJ_NAN_IGNORE = 1 } rj_nan;
/* A tensor request's map at load (docs/TENSOR.md "Fused maps"); x: src, y: others[0]. */
typedef enum rj_map {
  RJ_MAP_NONE = 0,       /* x */
  RJ_MAP_ABS = 1,        /* |x| */
  RJ_MAP_SQUARE = 2,     /* x * x */
  RJ_MAP_MUL = 3,        /* x * y */
  RJ_MAP_SUB_SQUARE = 4, /* (x - y)^2 */
  RJ_MAP_ABS_SUB = 5,    /* |x - y| */
  RJ_MAP_WHERE = 6,      /* x where y != 0, else the op's identity */
  RJ_MAP_NONZERO = 7     /* 1 where x != 0, else 0 */
} rj_map;
/* A tensor request's epilogue, once per output before the store. */
typedef enum rj_epilogue {
  RJ_EPI_NONE = 0,
  RJ_EPI_SQRT = 1,
  RJ_EPI_SCALE = 2, /* times rj_tensor.scale */
  RJ_EPI_LOG = 3
} rj_epilogue;
#define RJ_TENSOR_OTHERS_MAX 3 /* inputs besides src */

/* A layout stride: a step in the thread's own register slots, in the lane id, or in the thread
 * index within the scope ("K", "K@lane", "K@thread" in JSON). */
typedef enum rj_unit { RJ_UNIT_SLOT = 0, RJ_UNIT_LANE = 1, RJ_UNIT_THREAD = 2 } rj_unit;

#define RJ_MAX_DIMS 8
#define RJ_MAX_SUBDIMS 4
#define RJ_MAX_REPLICATE 4
#define RJ_NAME_MAX 32
#define RJ_COMBINE_FN_MAX 128               /* rj_combine.fn, its NUL included */
#define RJ_COMBINE_IR_MAX ((size_t)1 << 20) /* rj_combine.ir: 1 MiB */
#define RJ_COMBINE_FIELDS_MAX 4             /* rj_combine.nfields: a struct state's fields */

/* Op custom's combine (JSON "combine"), one record in every kind that takes it: rj_tile,
 * rj_subgroup, rj_tensor, rj_treduce, rj_treduce_group.  docs/C_API.md "rj_combine". */
typedef struct rj_combine {
  const char *ir;    /* LLVM IR text, NUL-terminated, <= RJ_COMBINE_IR_MAX; read during the call */
  uint64_t text;     /* rj_request_parse's kept copy that ir points at; 0: the caller's own text */
  uint64_t identity; /* a scalar state's identity: its bits as the dtype stores them */
  uint64_t field_identity[RJ_COMBINE_FIELDS_MAX]; /* struct state: each field's identity bits */
  int commutative; /* 1: fn(a, b) == fn(b, a); 0: index order kept (fn(lower, higher)) */
  int nfields;     /* struct state: 1 .. RJ_COMBINE_FIELDS_MAX fields; 0: a scalar state */
  rj_dtype fields[RJ_COMBINE_FIELDS_MAX]; /* struct state: each field's dtype */
  int result;                     /* struct state: the field the output holds, 0 .. nfields - 1 */
  char fn[RJ_COMBINE_FN_MAX];     /* the combine T fn(T, T) (struct state: S fn(S, S)) */
  char lift[RJ_COMBINE_FN_MAX];   /* struct state: S lift(T x, i64 index), required */
  char finish[RJ_COMBINE_FN_MAX]; /* struct state: R finish(S), optional ("": field result) */
} rj_combine;

typedef struct rj_stride {
  int64_t step;
  rj_unit unit;
} rj_stride;

/* Places a local (register) buffer across the threads of the scope.  Dim d of the buffer is split
 * into nsub[d] sub-dims (most significant first) of extents shape[d][k] and strides stride[d][k].
 * replicate lists (extent, stride) pairs of lanes/threads that hold copies of the same elements. */
typedef struct rj_layout {
  int present; /* 0: no layout (thread scope: row-major slots; wider scopes: every thread holds
                  the whole buffer) */
  int nsub[RJ_MAX_DIMS];
  int64_t shape[RJ_MAX_DIMS][RJ_MAX_SUBDIMS];
  rj_stride stride[RJ_MAX_DIMS][RJ_MAX_SUBDIMS];
  int nreplicate;
  int64_t rep_extent[RJ_MAX_REPLICATE];
  rj_stride rep_stride[RJ_MAX_REPLICATE];
} rj_layout;

/* A tile buffer: shape, an optional region (start / extent; has_region = 0 means the whole
 * buffer), and for local memory an optional layout. */
typedef struct rj_buffer {
  rj_mem mem;
  int ndim;
  int64_t shape[RJ_MAX_DIMS];
  int has_region;
  int64_t start[RJ_MAX_DIMS];
  int64_t extent[RJ_MAX_DIMS];
  rj_layout layout;
} rj_buffer;

typedef enum rj_active_kind {
  RJ_ACTIVE_ALL = 0, /* the whole CTA: every instance of the scope */
  RJ_ACTIVE_WARP = 1,
  RJ_ACTIVE_WARPGROUP = 2,
  RJ_ACTIVE_THREAD = 3
} rj_active_kind;

/* kind "tile": a reduction primitive inside a CTA. */
typedef struct rj_tile {
  rj_op op;
  rj_dtype dtype;
  rj_scope scope;
  int threads; /* CTA size along threadIdx.x; 0 = the scope's default (1 / 32 / 128) */
  rj_active_kind active;
  int active_index;
  rj_buffer src, dst;
  int naxes;
  int axes[RJ_MAX_DIMS]; /* may be negative: counts from the end */
  int accum;
  rj_nan nan;
  /* var / std: the divisor is N - correction (JSON "correction", default 1, as rj_tensor's). */
  int correction;
  rj_combine combine; /* op custom (docs/REQUESTS.md): index order, fn(lower, higher) */
} rj_tile;

typedef enum rj_primitive {
  RJ_PRIM_SHUFFLE = 0,
  RJ_PRIM_BROADCAST = 1,
  RJ_PRIM_SHUFFLE_DOWN = 2,
  RJ_PRIM_SHUFFLE_UP = 3,
  RJ_PRIM_SHUFFLE_XOR = 4,
  RJ_PRIM_REDUCE_ADD = 5,
  RJ_PRIM_REDUCE_MIN = 6,
  RJ_PRIM_REDUCE_MAX = 7,
  RJ_PRIM_REDUCE_ALL_ADD = 8,
  RJ_PRIM_REDUCE_ALL_MIN = 9,
  RJ_PRIM_REDUCE_ALL_MAX = 10,
  RJ_PRIM_INVOCATION_ID = 11,
  RJ_PRIM_REDUCE_MUL = 12, /* the products and the bitwise folds (and / or / xor: integers) */
  RJ_PRIM_REDUCE_AND = 13,
  RJ_PRIM_REDUCE_OR = 14,
  RJ_PRIM_REDUCE_XOR = 15,
  RJ_PRIM_REDUCE_ALL_MUL = 16,
  RJ_PRIM_REDUCE_ALL_AND = 17,
  RJ_PRIM_REDUCE_ALL_OR = 18,
  RJ_PRIM_REDUCE_ALL_XOR = 19,
  RJ_PRIM_REDUCE_ARGMAX = 20, /* the state ops: argmax / argmin give an i64 lane index */
  RJ_PRIM_REDUCE_ARGMIN = 21,
  RJ_PRIM_REDUCE_VAR = 22,
  RJ_PRIM_REDUCE_STD = 23,
  RJ_PRIM_REDUCE_LOGSUMEXP = 24,
  RJ_PRIM_REDUCE_ALL_ARGMAX = 25,
  RJ_PRIM_REDUCE_ALL_ARGMIN = 26,
  RJ_PRIM_REDUCE_ALL_VAR = 27,
  RJ_PRIM_REDUCE_ALL_STD = 28,
  RJ_PRIM_REDUCE_ALL_LOGSUMEXP = 29,
  RJ_PRIM_REDUCE_CUSTOM = 30, /* op custom: the caller's combine (rj_subgroup.combine) */
  RJ_PRIM_REDUCE_ALL_CUSTOM = 31
} rj_primitive;

/* kind "subgroup": warp-level primitives.  Element i is owned by global thread i.  They compile
 * through rj_compile (and run through redjit_check.h's rj_check / rj_bench) like tiles.  Semantics,
 * including out-of-range lanes: docs/SUBGROUP.md. */
typedef struct rj_subgroup {
  rj_primitive primitive;
  rj_dtype dtype;
  int log2_size;
  int threads; /* per block */
  int blocks;
  int arg; /* broadcast lane, shuffle offset / mask, or the one shuffle index */
  int index_is_list;
  int index[32];  /* shuffle: lane l reads lane index[l] */
  int correction; /* reduce_var / _std (and reduce_all_*): the divisor N - correction (default 1) */
  rj_combine combine; /* reduce_custom, reduce_all_custom: lane order, fn(lower, higher) */
} rj_subgroup;

/* kind "tensor": a reduction over a whole array in global memory (run by rj_reduce). */
typedef struct rj_tensor {
  rj_op op;
  rj_dtype dtype;
  int ndim;
  int64_t shape[RJ_MAX_DIMS];
  int has_strides;
  int64_t strides[RJ_MAX_DIMS]; /* in elements */
  int naxes;
  int axes[RJ_MAX_DIMS];
  int accum;
  rj_nan nan;
  int deterministic; /* default 1: bit-identical results for the same input, shape, device and
                        source alignment (mod 16 bytes), run after run; no float atomics */
  /* JSON "dynamic" (optional, default false).  1: rows and columns views get a runtime-size
   * kernel — sizes and strides are kernel parameters, and one compiled kernel serves every shape
   * of the same class and plan bucket (docs/TENSOR.md, "JIT constants vs runtime sizes").
   * Generic views keep a constant kernel (rj_explain says so). */
  int dynamic;
  /* var / std: the divisor is N - correction (JSON "correction", default 1 as in torch.var; 0 for
   * the population variance).  Only with op var or std. */
  int correction;
  rj_combine combine; /* op custom (docs/REQUESTS.md): linked in redjit-irc only */
  /* argmax / argmin (JSON "values", default false): 1 also writes each extreme value (the input
   * dtype) into a second destination, given to rj_reduce_values / rj_tensor_launch_values. */
  int values;
  /* JSON "acc_dtype" (optional): 1 ("f64") accumulates sum, prod and mean of f16, bf16 and f32
   * inputs in f64 and rounds once at the store; 0 (default, "f32") accumulates them in f32.
   * f64 inputs accumulate in f64 either way. */
  int acc_f64;
  int nothers; /* JSON "others": inputs besides src, 0 .. RJ_TENSOR_OTHERS_MAX */
  rj_dtype other_dtype[RJ_TENSOR_OTHERS_MAX];               /* each other input's dtype */
  int other_has_strides[RJ_TENSOR_OTHERS_MAX];              /* 0: src's strides */
  int64_t other_strides[RJ_TENSOR_OTHERS_MAX][RJ_MAX_DIMS]; /* in elements; 0 broadcasts */
  rj_map map;                                               /* JSON "map": applied at load */
  rj_epilogue epilogue;                                     /* JSON "epilogue": once per output */
  double scale; /* JSON "scale": epilogue "scale"'s factor */
} rj_tensor;

/* kind "treduce": root reduce across devices (run by rj_treduce_run; see "treduce" below). */
typedef struct rj_treduce {
  rj_op op;
  rj_dtype dtype;
  int ranks;
  int root;
  int ndim; /* up to 5 */
  int64_t shape[5];
  int64_t tile[2];
  int pingpong;
  /* JSON "nan", "accum", "strides", "dst_strides" (all optional). */
  rj_nan nan;
  int accum;              /* fold the destination's old value in as well */
  int has_strides;        /* 0: row-major sources and destination */
  int64_t strides[5];     /* every rank's source, in elements (the root's; all ranks alike) */
  int64_t dst_strides[5]; /* the destination, in elements */
  /* JSON "dynamic" (optional, default false).  1: a runtime-size kernel where the sources and
   * the destination are dense row-major: the element count is a kernel parameter, and one
   * compiled kernel serves every shape of the same ranks, root, op, dtype, flags and tile bound
   * (docs/TREDUCE.md, "Runtime-size kernels").  Strided views keep a constant kernel (rj_explain
   * says so). */
  int dynamic;
  /* op "mean" (JSON "mean_count", optional): the sum is divided by this; 0: ranks.  rj_treduce_run
   * sets it on the last of several launches (more than 128 ranks, staged ranks), whose accum then
   * folds the earlier launches' partial sum: dst = (old + sum) / mean_count, with accum only when
   * mean_count > ranks. */
  int64_t mean_count;
  rj_combine combine; /* op custom (docs/TREDUCE.md): fold order fn(earlier ranks, later ranks) */
} rj_treduce;

typedef struct rj_request {
  uint32_t struct_size; /* sizeof(rj_request) as the caller compiled it: set by rj_request_init */
  rj_kind kind;
  char variant[RJ_NAME_MAX]; /* "" or "auto": dispatch; else force that variant */
  union {
    rj_tile tile;
    rj_subgroup subgroup;
    rj_tensor tensor;
    rj_treduce treduce;
  } u;
} rj_request;

/* Zeroes *req and fills the defaults of kind (axes [-1], nan propagate, deterministic ...). */
RJ_API void rj_request_init(rj_request *req, rj_kind kind);
/* For bindings that cannot see the struct (ctypes): sizeof(rj_request) as the library was built,
 * and a request allocated and initialised by the library (NULL when memory runs out), freed with
 * rj_request_free (NULL is a no-op). */
RJ_API size_t rj_request_size(void);
RJ_API rj_request *rj_request_new(rj_kind kind);
RJ_API void rj_request_free(rj_request *req);
/* Parses one JSON request (docs/REQUESTS.md) into *out, which it initialises first.
 * Unknown fields are errors.  Op custom: out's combine.ir points at ctx's copy of the text, one
 * per distinct text (combine.text names it), of which ctx keeps the 32 most recently parsed (at
 * most 32 x RJ_COMBINE_IR_MAX bytes): it stays valid until rj_ctx_free or until 32 other distinct
 * texts have been parsed in ctx since.  A call given a request whose text is no longer kept
 * returns RJ_EINVAL naming combine.ir (it reads nothing there): parse it again, or point
 * combine.ir at your own copy and set combine.text to 0. */
RJ_API rj_status rj_request_parse(rj_ctx *ctx, const char *json, rj_request *out);
/* Checks a request built in C the way rj_request_parse checks JSON. */
RJ_API rj_status rj_request_validate(rj_ctx *ctx, const rj_request *req);
/* The canonical JSON of a request (every field, defaults filled in), owned by ctx until the next
 * call.  Two requests with the same canonical text compile to the same kernel. */
RJ_API rj_status rj_request_canonical(rj_ctx *ctx, const rj_request *req, const char **json);
/* The output dtype of op on input dtype (kind tensor, NumPy's rule; docs/TENSOR.md "Dtypes"). */
RJ_API rj_dtype rj_result_dtype(rj_op op, rj_dtype dtype);

/* ---------------------------------------------------------------- targets and options */
typedef struct rj_options {
  uint32_t struct_size;
  const char *target; /* "auto" or NULL: GPU `device`'s compute capability, else sm_90;
                         or "sm_XX", "sm_XXa", "sm_XXf" */
  int device;         /* CUDA device ordinal, for "auto" and for launches */
  int ptx_version;    /* 0: the least the target and the kernel need; else e.g. 88 for PTX 8.8 */
  int emulate_packed; /* 1: on a target without add.f32x2 / 3-input max/min, sm100_packed still
                         runs, each packed instruction replaced by its scalar equivalents in the
                         same order (docs/TARGETS.md); read only when struct_size covers it */
  /* rj_compile_ir only (read when struct_size covers them; the compiler process: redjit-irc) */
  int ir_in_process; /* 1: compile the caller's IR in this process, no helper (also
                        REDJIT_IR_IN_PROCESS=1): faster, but IR that makes LLVM abort takes the
                        process down.  0: in the compiler process, the default */
  int ir_timeout_ms; /* the compiler process's wall-clock limit; 0: $REDJIT_IR_TIMEOUT_MS, else
                        2000 (what the screen accepts compiles well within it) */
  int ir_memory_mb;  /* its address-space limit in MiB; 0: $REDJIT_IR_MEMORY_MB (0 there: none),
                        else 512; -1: none */
  int reserved[8];   /* zero.  Room for options added later, so that structs embedding an
                        rj_options (rj_check_opts) keep their own fields where they are */
} rj_options;

/* Zeroes *opt, sets struct_size and the defaults (target "auto", device 0).  Every call taking a
 * const rj_options * also takes NULL for these defaults. */
RJ_API void rj_options_init(rj_options *opt);
/* Resolves opt->target ("auto" included) into buf, e.g. "sm_90".  buf holds at least 16 bytes. */
RJ_API rj_status rj_target_resolve(rj_ctx *ctx, const rj_options *opt, char *buf, size_t len);

/* ---------------------------------------------------------------- compile and inspect */
typedef struct rj_kernel rj_kernel;

/* validate -> dispatch -> lower -> optimise -> PTX.  The kernel is cached in ctx under the
 * canonical request + target + PTX version, owned by ctx, with one pin more for this return: it
 * stays until rj_ctx_free or until every pin is released (rj_kernel_release), the cache's bound
 * never evicting it meanwhile.  Needs no GPU. */
RJ_API rj_status rj_compile(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            rj_kernel **out);

/* Compiles an NVPTX module given as LLVM IR text (len 0: NUL-terminated; the portable form, e.g.
 * from LLVMPrintModuleToString) or bitcode (len bytes; from an LLVM that LLVM 22 reads) through
 * redjit's pipeline (verify, O3, PTX for opt's target): only bytes cross the boundary, never an
 * LLVM object.  entry: the kernel function; made a PTX kernel if it is not one.  The kernel is
 * cached in ctx (by content, entry, target and PTX version) and owned by it; rj_kernel_text gives
 * its IR and PTX, rj_kernel_launch runs it.  The PTX version is opt->ptx_version or the target's
 * least (pass rj_emitter.ptx_needed, redjit_emit.h, when larger).
 * The compile runs in a process of its own, redjit-irc (installed beside the library or in
 * libexec/redjit; $REDJIT_IRC names another), started for each module not in the cache, under a
 * wall-clock limit (opt->ir_timeout_ms, default 2 s) and an address-space limit (ir_memory_mb,
 * default 512 MiB), with core dumps off: IR on which LLVM aborts, exits, faults, never finishes or
 * runs out of memory ends that process, and this call returns RJ_ECRASH naming the cause (the
 * signal and LLVM's "LLVM ERROR: ..." line, the time limit, the memory limit).  The process is
 * always waited for (no zombie; SIGCHLD may be ignored or handled) and leaves no descriptor
 * open; a missing redjit-irc is RJ_EUNSUPPORTED.  It costs a process start per compile (about
 * 12 ms for a small module, against 1 ms here: docs/C_API.md).  opt->ir_in_process = 1 (or
 * REDJIT_IR_IN_PROCESS=1) compiles here instead, for callers who accept the risk: intrinsics
 * outside the list redjit knows NVPTX selects and fp128 / x86_fp80 / ppc_fp128 values are still
 * refused (RJ_EUNSUPPORTED), but other IR may reach a fatal error inside LLVM and end the process.
 */
RJ_API rj_status rj_compile_ir(rj_ctx *ctx, const char *ir, size_t len, const char *entry,
                               const rj_options *opt, rj_kernel **out);

/* Drops one of k's pins (each rj_compile / rj_compile_ir return of k added one; the kernel has
 * them as a count, so each holder releases its own).  At none, k is an ordinary entry of ctx's
 * cache again: it counts against the bound and, least recently used, may be evicted at once or
 * by a later call, after which k must not be used (its GPU modules are unloaded with the cache's
 * other evictions, in batches after the GPU's work: docs/C_API.md, "Caching").  A kernel is
 * reused while cached: rj_compile of the same request returns it again, with a new pin.
 * RJ_EINVAL with a message for k NULL, a k holding no pin (released once too often), and a k
 * that is not a kernel of ctx (another context's, or one released and since evicted): k is
 * looked up among ctx's kernels by address, nothing is read through it.  A released pointer
 * whose memory was reused by another kernel of ctx cannot be told apart: release each pin once.
 * A use of ctx like any call (RJ_EBUSY while another thread is inside it). */
RJ_API rj_status rj_kernel_release(rj_ctx *ctx, rj_kernel *k);

/* One line per variant in dispatch order: "NAME prio=P chosen", "NAME prio=P rejected: REASON"
 * or "NAME prio=P not tried".  *text is owned by ctx until the next call.  Returns RJ_OK when a
 * variant was chosen, RJ_ENOVARIANT (text still filled) when none accepts. */
RJ_API rj_status rj_explain(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            const char **text);

/* The registered variants (strings owned by the library). */
typedef struct rj_variant_info {
  uint32_t struct_size; /* set by the caller: sizeof(rj_variant_info) */
  const char *name;
  int priority;
  const char *kinds;   /* e.g. "tile" */
  const char *summary; /* one line */
} rj_variant_info;

RJ_API int rj_variant_count(const rj_ctx *ctx);
/* Variant i in dispatch order (priority descending, then name), into *out (its struct_size set
 * by the caller).  RJ_EINVAL for i out of range or a struct_size below the first version's. */
RJ_API rj_status rj_variant_get(const rj_ctx *ctx, int i, rj_variant_info *out);

/* A compiled kernel, read through these accessors (NULL k: NULL, 0, zeroed dims).  The strings
 * live as long as the kernel: until rj_ctx_free, or its eviction once released. */
typedef enum rj_emit { RJ_EMIT_PTX = 0, RJ_EMIT_LLVM = 1, RJ_EMIT_LLVM_OPT = 2 } rj_emit;
/* The text of a compiled kernel: its PTX, its LLVM IR as built, or after optimisation.  A compile
 * of a request makes the PTX alone: the first ask for its LLVM IR lowers it again in its context
 * (the same module; a few ms; the compiler library is loaded for it), so it is a use of that
 * context; NULL if that fails (out of memory, no compiler library, another thread inside the
 * context).  rj_compile_ir's kernels and op custom's have their IR text from their compile. */
RJ_API const char *rj_kernel_text(const rj_kernel *k, rj_emit what);
RJ_API const char *rj_kernel_variant(const rj_kernel *k); /* "ir" for rj_compile_ir's */
RJ_API const char *rj_kernel_target(const rj_kernel *k);
RJ_API const char *rj_kernel_entry(const rj_kernel *k);
/* Wall-clock milliseconds of the compile that produced k (a cache hit returns the first compile's
 * time), one total: from after target resolution (and validation), so not the driver start that
 * target "auto" may cause, through the cache lookup, dispatch, lowering to LLVM IR (rj_compile_ir:
 * parsing and checking the caller's IR), verification, optimisation and PTX emission.  Loading
 * onto a GPU is not included. */
RJ_API double rj_kernel_compile_ms(const rj_kernel *k);
/* Launch geometry the kernel was built for; shared_bytes is the dynamic shared memory to ask
 * for at launch (0 when the kernel's shared memory is all static, as the tile harness's is).
 * rj_compile_ir's kernels have none: the caller gives it to rj_kernel_launch. */
RJ_API void rj_kernel_dims(const rj_kernel *k, unsigned grid[3], unsigned block[3],
                           unsigned *shared_bytes);

/* ---------------------------------------------------------------- run on the GPU */
/* A device address: a CUdeviceptr value of the GPU named beside it (0 is no address). */
typedef uint64_t rj_devptr;

/* CUDA devices the driver sees; RJ_ENODEV when there is no driver. */
RJ_API rj_status rj_device_count(rj_ctx *ctx, int *count);

/* Device memory and launches on GPU `device` (its primary context), for kernels from
 * rj_compile_ir (or rj_compile).  args: one pointer per kernel parameter, as cuLaunchKernel
 * takes them (a device pointer parameter: the address of an rj_devptr).  Waits for the kernel;
 * *ms (may be NULL): its time by CUDA events. */
RJ_API rj_status rj_device_alloc(rj_ctx *ctx, int device, size_t bytes, rj_devptr *ptr);
RJ_API rj_status rj_device_free(rj_ctx *ctx, int device, rj_devptr ptr);
RJ_API rj_status rj_memcpy_htod(rj_ctx *ctx, int device, rj_devptr dst, const void *src,
                                size_t bytes);
RJ_API rj_status rj_memcpy_dtoh(rj_ctx *ctx, int device, void *dst, rj_devptr src, size_t bytes);
RJ_API rj_status rj_kernel_launch(rj_ctx *ctx, rj_kernel *k, int device, const unsigned grid[3],
                                  const unsigned block[3], unsigned shared_bytes, void **args,
                                  double *ms);
/* Loads k on GPU `device` now (rj_kernel_launch and rj_reduce load on first use), so that a
 * later launch pays no load; *ms (may be NULL): the time the load took, 0 when k was already
 * loaded there. */
RJ_API rj_status rj_kernel_load(rj_ctx *ctx, rj_kernel *k, int device, double *ms);
/* Waits for all work on GPU `device` (its primary context), every stream's. */
RJ_API rj_status rj_device_sync(rj_ctx *ctx, int device);
/* Times asynchronous work: records a CUDA event on `stream` (of GPU `device`; NULL: the legacy
 * default stream), calls enqueue(ctx, ud), which enqueues work there (rj_reduce, say), records a
 * second event, waits for it and sets *ms to the time between the two.  Returns enqueue's failure
 * as it left it (nothing is waited for then). */
typedef rj_status (*rj_enqueue_fn)(rj_ctx *ctx, void *ud);
RJ_API rj_status rj_stream_time(rj_ctx *ctx, int device, void *stream, rj_enqueue_fn enqueue,
                                void *ud, double *ms);

/* ---------------------------------------------------------------- tensor */
/* Reduces a tensor request (req->kind == RJ_KIND_TENSOR; docs/TENSOR.md) on the GPU:
 * src is element 0 of the source view, dst a contiguous destination of the kept dims
 * (row-major; one element when every dim is reduced).  Both are device addresses of device
 * opt->device (opt NULL: device 0, target auto), in that device's primary context (the one the
 * CUDA runtime uses).  The kernel is compiled on first use and cached in ctx (shape, strides,
 * axes, dtype, op, flags and the device's SM count are its key: sizes are JIT constants; the
 * cache keeps a bound of such kernels, rj_ctx_set_memory_cache), then
 * launched on `stream` (a CUstream / cudaStream_t; NULL = the legacy default stream) without
 * waiting.  With req->u.tensor.dynamic, rows and columns views use a runtime-size kernel instead:
 * its key is the class, dtype, op, flags, the plan bucket chosen from the sizes on the host, the
 * target and the SM count, so a new shape of a bucket already compiled costs no compile (the
 * request is still validated on every call).  src and dst must not overlap.  Split reductions
 * keep their partials in a workspace inside the loaded kernel, so launches of one kernel on one
 * ctx must be stream-ordered (for dynamic requests: every request sharing that kernel); to reduce
 * on concurrent streams use one ctx per stream.  A zero src or dst, or a request that is not a
 * valid tensor request, is RJ_EINVAL. */
RJ_API rj_status rj_reduce(rj_ctx *ctx, const rj_request *req, const rj_options *opt, rj_devptr src,
                           rj_devptr dst, void *stream);
/* rj_reduce without the request: launches tensor kernel k (rj_compile's kernel for a tensor
 * request that is not dynamic, compiled with opt->device = device) as rj_reduce launches it for
 * that request, on `stream` without waiting; k is loaded on device on first use.  Nothing is
 * validated again and no cache is looked at: a caller that keeps k per request (a language
 * binding, say) pays only the launch.  A NULL k, a kernel not compiled from a tensor request, a
 * runtime-size kernel (a dynamic request: its arguments depend on the shape, use rj_reduce), or
 * a zero src or dst is RJ_EINVAL. */
RJ_API rj_status rj_tensor_launch(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                  rj_devptr dst, void *stream);
/* rj_reduce / rj_tensor_launch of an argmax / argmin request with rj_tensor.values set: dst
 * receives the indices (int64_t), values the extreme values (the input dtype, one per output, the
 * same layout).  The plain calls refuse such a request (RJ_EINVAL naming "values"), and these
 * refuse one without it; a zero values pointer is RJ_EINVAL. */
RJ_API rj_status rj_reduce_values(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                                  rj_devptr src, rj_devptr dst, rj_devptr values, void *stream);
RJ_API rj_status rj_tensor_launch_values(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                         rj_devptr dst, rj_devptr values, void *stream);
/* rj_reduce / rj_tensor_launch with the request's "others" inputs (docs/TENSOR.md "Fused maps"):
 * others[i] is input i + 1's element 0, nothers == rj_tensor.nothers; values as
 * rj_reduce_values' under "values", else 0. */
RJ_API rj_status rj_reduce_n(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                             rj_devptr src, const rj_devptr *others, int nothers, rj_devptr dst,
                             rj_devptr values, void *stream);
RJ_API rj_status rj_tensor_launch_n(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                    const rj_devptr *others, int nothers, rj_devptr dst,
                                    rj_devptr values, void *stream);

/* ---------------------------------------------------------------- treduce */
/* Root-only reduce across ranks in one process (PTO-ISA TREDUCE on NVIDIA GPUs): the root's
 * destination receives the element-wise op of every rank's source.  Rank r's source lives on its
 * own device (several ranks may share one GPU).  A kernel on the root reads the ranks' sources
 * directly where it can (same GPU, or peer access enabled through cuCtxEnablePeerAccess where
 * cuDeviceCanAccessPeer allows); other ranks are staged into buffers on the root with
 * cuMemcpyPeerAsync (two buffers and events with ping-pong, one without).  At large sizes, when
 * the ranks live on several GPUs that can all access each other, the element range may be split
 * instead: each GPU reduces one slice of every rank's source and writes it into the root's
 * destination, the slices sized by a model of the GPUs' link traffic (rj_treduce_plan_make shows
 * the cut and the model).  Stream-ordered on the group's `stream` (a stream of the root's GPU;
 * NULL: the legacy default stream): the reduction starts after the work enqueued there before the
 * call; with `async` the call returns once everything is enqueued and later work on `stream` runs
 * after it, else it returns when the destination is written.  Sources on other GPUs must be
 * complete before the call (the library cannot see their streams).  Sources are only read.  The
 * streams, events and (up to 64 MiB each) staging buffers a call uses are kept in ctx for the
 * next call and released by rj_ctx_free (which waits for calls in flight); a ctx's calls run on
 * its streams in the order they were made, so an async call's buffers are never reused early.
 * See docs/TREDUCE.md. */
typedef enum rj_treduce_path {
  RJ_TREDUCE_AUTO = 0,   /* the fastest path a path table measured for the group's ranks, GPUs
                            and size (rj_treduce_table_load, below); where none has them, split
                            where the link model says it saves >= 8 MiB of the busiest GPU's link
                            time and every GPU pair can access each other; otherwise direct where
                            possible, staged where not (rj_treduce_choose says which and why) */
  RJ_TREDUCE_PEER = 1,   /* every rank read directly; RJ_EUNSUPPORTED where a GPU pair can't */
  RJ_TREDUCE_STAGED = 2, /* every rank other than the root staged by cuMemcpyPeerAsync */
  RJ_TREDUCE_SPLIT = 3,  /* the element range cut into one slice per GPU the ranks live on, each
                            reduced by its GPU straight into the root's destination (peer reads
                            and writes; RJ_EUNSUPPORTED where a GPU pair can't), the slices sized
                            to minimise the busiest GPU's modelled link load
                            (rj_treduce_plan_make; a GPU may get none); all ranks on one GPU: 3
                            slices on 3 streams of it.  Results are bit for bit the peer path's
                            (same per-element fold order) */
  RJ_TREDUCE_SPLIT_EQUAL = 4, /* the split path with one equal slice per GPU */
  RJ_TREDUCE_RING = 5         /* a chain through the ranks' GPUs in fold order (the root's first),
                                 hops of at most 127 consecutive ranks on one GPU: one persistent
                                 kernel per hop folds the partial results the previous hop stored
                                 into its inbox with its own ranks' and stores the result straight
                                 into the next hop's inbox (the last: the root's destination), in
                                 128 KiB steps handed on through counters in memory (every link
                                 carries one buffer, one way).  Dense row-major sources and
                                 destination only, not a sum of f16 / bf16 (the partial sums
                                 would round at every hop), at most 8 runs of ranks per GPU in
                                 fold order, peer access between neighbouring hops' GPUs;
                                 RJ_EUNSUPPORTED otherwise, naming the cause.  All ranks on one
                                 GPU: at least 3 hops on it (one per rank, below 3 ranks).  Bit
                                 for bit the peer path's results.  A hop that waits longer than
                                 the group's ring_timeout_ms (10 s) for its neighbour gives up:
                                 RJ_ETIMEOUT, from the call, or for an async call from a later
                                 one (rj_treduce_sync).  A context's
                                 ring calls run one after another; two contexts' (or processes')
                                 rings on the same GPUs at once can keep each other's hops from
                                 starting: give the ring its GPUs.  Taken by auto only where a
                                 path table measured it fastest; never under CUDA graph capture
                                 (docs/TREDUCE.md) */
} rj_treduce_path;

#define RJ_TREDUCE_MAX_DIMS 5

/* One rank's buffer (or the destination). */
typedef struct rj_treduce_buf {
  rj_devptr ptr; /* device address of element 0, aligned to the dtype */
  int device;    /* CUDA device ordinal holding it */
  int ndim;      /* 1..5; every source has the root's shape, and so does the destination */
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
  int64_t tile[2]; /* chunk bound over the last two dims (rows, cols); {0, 0}: the whole dims */
  int pingpong;    /* overlap the fetch of rank r+1 with the reduction of rank r */
  int accum;       /* fold the destination's old value in too */
  rj_treduce_path path;
  void *stream; /* a CUstream / cudaStream_t of the root's GPU (in its primary context); NULL: the
                   legacy default stream.  The reduction starts after the work enqueued on it
                   before the call (every GPU's part of it waits for that point) */
  int async;    /* 0: return when the destination is written (the call waits).  1: return once
                   everything is enqueued; work enqueued on `stream` after the call runs after the
                   reduction, and res->ms is 0 (not timed).  An async ring call whose hop gives
                   up (ring_timeout_ms) is reported later: by rj_treduce_sync, or by the
                   context's next rj_treduce_run, which then runs nothing */
  int64_t ring_timeout_ms; /* the ring path: how long a hop's kernel waits for its neighbour
                              before the call gives up (RJ_ETIMEOUT; the destination is then
                              incomplete), 1..3600000 ms; 0: 10000.  A runtime's watchdog: the
                              ring's kernels must all run at once, and other work holding a GPU's
                              SMs (another process's, another ring's) can keep one from starting */
  int dynamic; /* 1: runtime-size kernels (rj_treduce's `dynamic`): a new element count compiles
                  nothing where the buffers are dense row-major */
  rj_combine combine; /* op custom: as rj_treduce's (the text need only live for the call) */
} rj_treduce_group;

/* What a call did.  The caller sets struct_size (sizeof(rj_treduce_result)) before the call;
 * res->path tells which path ran. */
typedef struct rj_treduce_result {
  uint32_t struct_size; /* set by the caller */
  char variant[RJ_NAME_MAX];
  char target[16];
  char path[8];     /* "peer" (every rank read directly by the root's kernel), "staged", "split" or
                       "ring" */
  int direct_ranks; /* ranks the kernel read in place (the root's and same-GPU ones included) */
  int peer_ranks;   /* of those, on another GPU through peer access */
  int staged_ranks; /* copied to the root with cuMemcpyPeerAsync */
  int launches;     /* kernels launched */
  double compile_ms, load_ms;
  double ms;  /* the whole operation on the root's GPU, CUDA events (0 under async: not timed) */
  int slices; /* pieces the element range was cut into (1 on peer / staged; 0: empty) */
  int gpus;   /* GPUs that ran a slice (1 on peer / staged: the root's) */
  uint64_t dst_digest; /* rj_treduce_check only: FNV-1a 64 of the destination's elements' bytes
                          in row-major element order, so two paths compare bit for bit */
  double root_share;   /* of the elements, those the root's GPU reduced (1 on peer / staged and
                          when every rank is on the root's GPU; 0 when there are none) */
  double call_ms;      /* the whole call by the host's clock: compile-cache lookups, launches,
                          waits (what a caller waits; ms above is the GPU's part) */
  int hops;            /* the ring path: hops of the chain (its chunks are in slices); else 0 */
} rj_treduce_result;

/* Zeroes a group of `size` bytes (sizeof(rj_treduce_group) in the caller's header) and sets its
 * struct_size: the defaults, stream NULL and async 0 included.  rj_treduce_group_init(g) is a
 * macro for it with this header's size, and the exported function of that name (for bindings)
 * fills sizeof(rj_treduce_group) bytes.  rj_treduce_run refuses any other struct_size. */
RJ_API void rj_treduce_group_init_sized(rj_treduce_group *g, size_t size);
RJ_API void rj_treduce_group_init(rj_treduce_group *g);
#define rj_treduce_group_init(g) rj_treduce_group_init_sized((g), sizeof(rj_treduce_group))
/* The treduce request a group compiles as (what `redjit ptx` shows for it). */
RJ_API rj_status rj_treduce_request(rj_ctx *ctx, const rj_treduce_group *g, rj_request *out);
/* Runs the reduction.  opt: compile options (target "auto" resolves on the root's GPU; its device
 * field is ignored); NULL for defaults.  res may be NULL; else its struct_size is the caller's. */
RJ_API rj_status rj_treduce_run(rj_ctx *ctx, const rj_treduce_group *g, const rj_options *opt,
                                rj_treduce_result *res);
/* Waits for every rj_treduce_run of the context still in flight (async calls), on every GPU, and
 * reports what they could not: RJ_ETIMEOUT when async ring calls gave up since the last report
 * (how many, and the last of them; a failure is counted as reported once a call or this function
 * has returned it).  The next rj_treduce_run reports such failures too, without waiting, when
 * they have happened by then.  RJ_OK with nothing in flight, with or without a GPU. */
RJ_API rj_status rj_treduce_sync(rj_ctx *ctx);

/* The split plan: how the split path cuts a treduce request whose rank r lives on GPU
 * rank_device[r], the link model behind it, and what RJ_TREDUCE_AUTO takes — assuming every pair
 * of those GPUs can access each other (the run checks; auto falls back to peer / staged when one
 * can't).  Needs no GPU.  The model counts the bytes each GPU receives (in) and sends (out), in
 * units of one rank's buffer B: on the split path GPU g reads its slice of every rank not on it
 * and, unless it is the root, writes its partial sums to the root (under accum it also reads the
 * destination's old values of its slice from the root); each GPU's load is
 * max(in, out, (in + out) / 1.45), the time its link needs in units of B crossing one direction
 * (1.45: both directions together, fitted on 2 x H200 NVLink).  The peer path's load is the
 * root's in, (ranks not on the root's GPU) B.  docs/TREDUCE.md. */
#define RJ_TREDUCE_MAX_SLICES 64

typedef struct rj_treduce_slice {
  int device;         /* the GPU that reduces it */
  int local_ranks;    /* ranks whose source is on that GPU */
  int64_t start, len; /* along the plan's dim of the request's shape (len 0: that GPU idles) */
  double share;       /* of the elements */
  double in, out;     /* modelled bytes into / out of that GPU, in rank buffers (B) */
  double load;        /* max(in, out, (in + out) / 1.45) */
} rj_treduce_slice;

typedef struct rj_treduce_plan {
  uint32_t struct_size; /* set by rj_treduce_plan_init */
  rj_treduce_path path; /* what the call takes: RJ_TREDUCE_PEER or the split asked for / picked */
  int gpus;             /* distinct GPUs of the ranks */
  int dim;              /* the dim of the request's shape that is cut (-1: nothing to cut) */
  int slices;           /* entries of slice[]: one per GPU, the root's first (3 on one GPU);
                           1 (the root's) when there are fewer than two elements */
  double bytes_per_rank;
  double peer_load;   /* the root's on the peer path, in B */
  double split_load;  /* the busiest GPU's on the split path, in B */
  double saved_bytes; /* (peer_load - split_load) B: auto splits from 8 MiB */
  rj_treduce_slice slice[RJ_TREDUCE_MAX_SLICES];
  /* The ring path (RJ_TREDUCE_RING) for the same request and GPUs.  Its load is the busiest
   * GPU's link traffic in B, one way: every hop's result crosses one link. */
  int hops;           /* of the chain; 0 when the ring can't run it */
  int chunks;         /* pieces the element range is pipelined in */
  double ring_load;   /* -1 when the ring can't run it (ring_why says why) */
  char ring_why[128]; /* empty when it can */
} rj_treduce_plan;

RJ_API void rj_treduce_plan_init(rj_treduce_plan *p);
/* path: RJ_TREDUCE_AUTO (the model's cut, and auto's choice), RJ_TREDUCE_SPLIT or
 * RJ_TREDUCE_SPLIT_EQUAL (that cut; plan->path is the path itself).  RJ_EINVAL for an invalid
 * request or argument (named), RJ_EUNSUPPORTED for ranks on more than 64 GPUs. */
RJ_API rj_status rj_treduce_plan_make(rj_ctx *ctx, const rj_request *req, const int *rank_device,
                                      rj_treduce_path path, rj_treduce_plan *plan);

/* NCCL backend: the same reduction across processes, mapped to ncclReduce on a communicator the
 * caller made (libnccl.so.2 is loaded with dlopen; there is no link dependency).  Every rank of
 * the communicator calls it (NCCL's rule, unlike TREDUCE).  req (kind treduce) gives op, dtype,
 * shape, ranks (= the communicator's size) and root; tile and pingpong are NCCL's business and
 * ignored.  RJ_EUNSUPPORTED, with the reason, for what ncclReduce cannot do: strides, accum,
 * a sum under nan = ignore, a float max/min under nan = propagate (NCCL's float max/min are
 * fmax/fmin, which skip NaN: ask for nan = ignore), bf16 on NCCL < 2.10. */
typedef struct rj_nccl_args {
  uint32_t struct_size; /* set by rj_nccl_args_init */
  void *comm;           /* ncclComm_t */
  void *stream;         /* cudaStream_t / CUstream; NULL: the legacy default stream */
  rj_devptr src;        /* this rank's source */
  rj_devptr dst;        /* the root's destination; ignored on other ranks */
  int synchronize;      /* 1: wait for the stream before returning */
} rj_nccl_args;

RJ_API void rj_nccl_args_init(rj_nccl_args *a);
/* The NCCL version found (e.g. 22304), or RJ_ENODEV with the reason when libnccl.so.2 can't be
 * loaded. */
RJ_API rj_status rj_nccl_version(rj_ctx *ctx, int *version);
RJ_API rj_status rj_treduce_nccl(rj_ctx *ctx, const rj_request *req, const rj_nccl_args *a);

/* ---- treduce: the automatic path from measured times (docs/TREDUCE.md, "How auto chooses").
 * A path table holds the GPU time of each path (peer, staged, split, split-equal, ring) at a
 * ladder of bytes per rank, for R ranks on G GPUs (rank r on GPU r mod G).  RJ_TREDUCE_AUTO picks
 * the fastest path the table has for the group's ranks, GPUs and size (interpolated between the
 * ladder's sizes) among peer, split, split-equal and ring where they can run the group (all give
 * the peer path's bits; staged is never chosen), and falls back to the link model where no table
 * has that many ranks and GPUs.  The tables it reads, first to last: the context's own
 * (rj_treduce_table_load / _set / rj_treduce_calibrate), else the file REDJIT_TREDUCE_TABLE names
 * ("off": none, the model alone; "default": the built-in one alone), else treduce-paths.txt in
 * the kernel cache's folder (REDJIT_CACHE_DIR ...) when present; then the built-in table of
 * measured H100 / H200 figures.  A table measured on another GPU than the root's (its `device`
 * line) is not used.  The text format: a first line "redjit-treduce-paths 1", then lines
 * "device NAME" ("any": every GPU), "source TEXT" (optional) and "RANKS GPUS BYTES PATH
 * MICROSECONDS"; '#' starts a comment. */
/* Reads the table in `file` into the context (RJ_EINVAL naming the line for a table that does
 * not parse, RJ_EINVAL for a file that cannot be read or a table measured on another GPU than
 * this machine's GPU 0; the context's table is then unchanged).
 * file NULL: the context forgets its table (the environment, the cache folder and the built-in
 * table again); "": no table at all, the link model alone. */
RJ_API rj_status rj_treduce_table_load(rj_ctx *ctx, const char *file);
/* The same from len bytes of text; origin names it in messages and in `why` (NULL: "memory"). */
RJ_API rj_status rj_treduce_table_set(rj_ctx *ctx, const char *text, size_t len,
                                      const char *origin);
/* The text of the first table auto reads now ("" when it reads none), valid until the next call
 * on ctx. */
RJ_API rj_status rj_treduce_table_text(rj_ctx *ctx, const char **text);
/* Writes that table to file (NULL: treduce-paths.txt in the kernel cache's folder, RJ_EUNSUPPORTED
 * when the disk cache is off or read-only). */
RJ_API rj_status rj_treduce_table_save(rj_ctx *ctx, const char *file);
/* Measures every path on this machine's GPUs (ranks rank buffers of f32, rank r on GPU r mod the
 * GPU count, root 0, sum) at 4^k KiB per rank from 2^min_log2 to 2^max_log2 bytes (12..40, every
 * second power), the median GPU time of `runs` calls (1..101) after one warm-up, and makes the
 * result the context's table.  RJ_ENODEV without a GPU. */
RJ_API rj_status rj_treduce_calibrate(rj_ctx *ctx, int ranks, int min_log2, int max_log2, int runs);
/* The path RJ_TREDUCE_AUTO takes for req with rank r on GPU rank_device[r], and why ("ring:
 * measured 3076.0 us vs split 3342.0 us at 1 GiB per rank (4 ranks on 4 GPUs), table default" or
 * "model: ..."), the text valid until the next call on ctx.  Needs no GPU (with one, a table of
 * another GPU is not used). */
RJ_API rj_status rj_treduce_choose(rj_ctx *ctx, const rj_request *req, const int *rank_device,
                                   rj_treduce_path *path, const char **why);

/* ---------------------------------------------------------------- errors */
/* The message of the last failed call on ctx ("" if none; "no context" for NULL).  Valid until
 * the next call on ctx.  Each context keeps its own: calls on other contexts do not change it.
 * When this thread's last call on ctx was refused (RJ_EBUSY: another thread inside), the message
 * says so to this thread, whatever other threads or contexts did since (the last 16 contexts
 * refused to a thread are remembered). */
RJ_API const char *rj_errmsg(const rj_ctx *ctx);
/* Sets ctx's status and message, as a failing rj_ call leaves them, and returns s: for a layer
 * built on this API (redjit_check.h's calls) to report its own failures through rj_errmsg, as
 * luaL_error sits on lua_error.  fmt is printf's (it may name rj_errmsg(ctx)'s text: it is copied
 * first); NULL or "" with a failure gives the status's name.  s == RJ_OK clears the message. */
RJ_API rj_status rj_error_set(rj_ctx *ctx, rj_status s, const char *fmt, ...) RJ_PRINTF(3, 4);
/* A short stable name for a status ("RJ_EINVAL"; "RJ_E?" for a value this library does not
 * know). */
RJ_API const char *rj_status_name(rj_status s);

#ifdef __cplusplus
}
#endif
#endif /* REDJIT_H */
