/*
 * redjit.h — libredjit.so, a JIT compiler for GPU reductions.
 *
 * A request (rj_request, or JSON) is validated, dispatched to the first variant that accepts it,
 * lowered to LLVM IR, optimised and emitted as PTX by LLVM's NVPTX backend; with a GPU, loaded
 * and launched through the CUDA driver (dlopen'ed: everything up to PTX works without one).
 *
 * Contents: version · status codes · context and caches · requests · targets and options ·
 *   compile and inspect · run on the GPU · tensor (rj_reduce) · errors.
 * Beside it: redjit_treduce.h (reduce across GPUs; NCCL) · redjit_check.h (run / bench against a
 *   float64 reference) · redjit_emit.h (emit into your own LLVM module; libredjit_emit.a).
 * Reference (one section per section here): docs/C_API.md.  The rules, said once:
 *  - Status: every fallible call returns rj_status (RJ_OK = 0); rj_errmsg(ctx) names the field
 *    or cause, until the next call on ctx.  Nothing aborts or exits the process.
 *  - Ownership: what a call returns is ctx's (texts until the next call on ctx); only rj_ctx_new
 *    and rj_request_new return something to free.  Each kernel return adds a pin
 *    (rj_kernel_release drops one).
 *  - Threads: one rj_ctx is used by one thread at a time (else RJ_EBUSY, nothing done);
 *    distinct contexts run concurrently.
 *  - ABI: enum values are stable and append-only; structs carry struct_size (inputs: set by
 *    their init call; results: set by the caller to its sizeof, never written past).
 *  - Device memory: an rj_devptr of the GPU named beside it, in its primary context; a stream is
 *    a void * CUstream / cudaStream_t, NULL the legacy default stream.
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
/* The project's one version (CMake reads these three lines). */
#define RJ_VERSION_MAJOR 0
#define RJ_VERSION_MINOR 2
#define RJ_VERSION_PATCH 0
#define RJ_VERSION (RJ_VERSION_MAJOR * 10000 + RJ_VERSION_MINOR * 100 + RJ_VERSION_PATCH)

RJ_API const char *rj_version(void); /* the library's "MAJOR.MINOR.PATCH" */

/* ---------------------------------------------------------------- status codes (stable) */
typedef enum rj_status {
  RJ_OK = 0,
  RJ_EINVAL = 1,       /* the request or an argument is invalid: the message names the field */
  RJ_ENOVARIANT = 2,   /* valid, but no variant accepts it: the message lists each reason */
  RJ_ETARGET = 3,      /* unknown target, or a target / PTX version / instruction combination */
  RJ_ELLVM = 4,        /* LLVM failed (IR verification, codegen): an internal error */
  RJ_ENODEV = 5,       /* no CUDA driver or no such GPU */
  RJ_ECUDA = 6,        /* a CUDA driver call failed: the message names the call and the error */
  RJ_ENOMEM = 7,       /* host allocation failed */
  RJ_EUNSUPPORTED = 8, /* the request is valid but this build cannot do it yet */
  RJ_ETIMEOUT = 9,     /* a kernel gave up waiting for another GPU's (the ring path's hops) */
  RJ_ECRASH = 10,      /* rj_compile_ir's compiler process ended without an answer */
  RJ_EBUSY = 11        /* another thread is inside a call on this context: nothing was done */
} rj_status;

/* ---------------------------------------------------------------- context and caches */
typedef struct rj_ctx rj_ctx;

RJ_API rj_ctx *rj_ctx_new(void);      /* NULL only when memory runs out; pair with rj_ctx_free */
RJ_API void rj_ctx_free(rj_ctx *ctx); /* frees everything ctx owns; NULL is a no-op */
RJ_API long long rj_ctx_compile_count(const rj_ctx *ctx); /* kernels compiled (a hit adds none) */
RJ_API rj_status rj_ctx_set_disk_cache(rj_ctx *ctx, const char *dir);         /* NULL or "": off */
RJ_API rj_status rj_ctx_set_memory_cache(rj_ctx *ctx, long long max_kernels); /* 0: no bound */

typedef struct rj_cache_stats {
  uint32_t struct_size;       /* set by the caller: sizeof(rj_cache_stats) */
  long long compiles;         /* real compiles (rj_ctx_compile_count) */
  long long memory_hits;      /* requests served by the context's own kernels */
  long long disk_hits;        /* kernels read from the directory (compiles not counted) */
  long long disk_writes;      /* entries this context wrote */
  long long disk_evictions;   /* entries it removed to keep the directory under its bound */
  long long kernels;          /* kernels ctx holds */
  const char *disk_dir;       /* the directory in use (NULL: the disk cache is off) */
  int disk_read_only;         /* 1: entries are read, none written */
  const char *disk_note;      /* why the disk cache is off or read-only ("": nothing to say) */
  long long memory_evictions; /* (later fields from here on) cache-owned kernels evicted */
  long long kernels_pinned;   /* kernels holding a pin */
  long long max_kernels;      /* the bound of cache-owned kernels (0: none) */
  long long cubin_loads;      /* loads from a cubin the disk entry held (no PTX JIT) */
  long long cubin_links;      /* cubins the driver's linker made (then stored in the entry) */
  long long cubin_stale;      /* stored cubins not used (another driver or GPU, refused, bad) */
} rj_cache_stats;

RJ_API rj_status rj_ctx_cache_stats(rj_ctx *ctx, rj_cache_stats *out); /* strings: ctx's */

/* ---------------------------------------------------------------- requests */
typedef enum rj_kind {
  RJ_KIND_TILE = 1,
  RJ_KIND_SUBGROUP = 2,
  RJ_KIND_TENSOR = 3,
  RJ_KIND_TREDUCE = 4
} rj_kind;

/* Ops, and the dtypes and kinds each takes: docs/REQUESTS.md, "Ops". */
typedef enum rj_op {
  RJ_OP_SUM = 0,
  RJ_OP_MAX = 1,
  RJ_OP_MIN = 2,
  RJ_OP_PROD = 3,
  RJ_OP_AND = 4, /* and / or / xor: integer dtypes */
  RJ_OP_OR = 5,
  RJ_OP_XOR = 6,
  RJ_OP_ARGMAX = 7, /* argmax / argmin: an i64 index (the first of ties) */
  RJ_OP_ARGMIN = 8,
  RJ_OP_MEAN = 9, /* mean / var / std / logsumexp: float dtypes */
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
/* A tensor request's map at load (x: src, y: others[0]), and its epilogue before the store. */
typedef enum rj_map {
  RJ_MAP_NONE = 0,       /* x */
  RJ_MAP_ABS = 1,        /* |x| */
  RJ_MAP_SQUARE = 2,     /* x * x */
  RJ_MAP_MUL = 3,        /* x * y */
  RJ_MAP_SUB_SQUARE = 4, /* (x - y)^2 */
  RJ_MAP_ABS_SUB = 5,    /* |x - y| */
  RJ_MAP_WHERE = 6,      /* x where y != 0, else the op's identity */
  RJ_MAP_NONZERO = 7,    /* 1 where x != 0, else 0 */
  RJ_MAP_IR = 8          /* the caller's: combine.ir's function map_fn (x, others...) -> acc */
} rj_map;
typedef enum rj_epilogue {
  RJ_EPI_NONE = 0,
  RJ_EPI_SQRT = 1,
  RJ_EPI_SCALE = 2, /* times rj_fused.scale */
  RJ_EPI_LOG = 3,
  RJ_EPI_IR = 4 /* the caller's: A epilogue_fn(A) of combine.ir (the map's module, or its own) */
} rj_epilogue;
#define RJ_TENSOR_OTHERS_MAX 3 /* inputs besides src */
/* A layout stride's unit: register slots, lane id, thread index ("K", "K@lane", "K@thread"). */
typedef enum rj_unit { RJ_UNIT_SLOT = 0, RJ_UNIT_LANE = 1, RJ_UNIT_THREAD = 2 } rj_unit;

#define RJ_MAX_DIMS 8
#define RJ_MAX_SUBDIMS 4
#define RJ_MAX_REPLICATE 4
#define RJ_NAME_MAX 32
#define RJ_COMBINE_FN_MAX 128               /* rj_combine.fn, its NUL included */
#define RJ_COMBINE_IR_MAX ((size_t)1 << 20) /* rj_combine.ir: 1 MiB */
#define RJ_COMBINE_FIELDS_MAX 4             /* rj_combine.nfields: a struct state's fields */

/* Op custom's combine (JSON "combine"), embedded as `combine` in every kind that takes it. */
typedef struct rj_combine {
  const char *ir;    /* LLVM IR text, NUL-terminated; read during the call only */
  uint64_t text;     /* set by rj_request_parse (ctx's kept copy); 0: ir is the caller's */
  uint64_t identity; /* scalar state: fn's identity, its bits as the dtype stores them */
  uint64_t field_identity[RJ_COMBINE_FIELDS_MAX]; /* struct state: each field's identity bits */
  int commutative; /* 1: fn(a, b) == fn(b, a); 0: index order, fn(lower, higher) */
  int nfields;     /* struct state: 1 .. RJ_COMBINE_FIELDS_MAX fields; 0: a scalar state */
  rj_dtype fields[RJ_COMBINE_FIELDS_MAX]; /* struct state: each field's dtype */
  int result;                             /* struct state: the output's field */
  char fn[RJ_COMBINE_FN_MAX];             /* T fn(T, T) (struct state: S fn(S, S)) */
  char lift[RJ_COMBINE_FN_MAX];           /* struct state: S lift(T x, i64 index), required */
  char finish[RJ_COMBINE_FN_MAX]; /* struct state: R finish(S), optional ("": field result) */
} rj_combine;

/* A fused map and epilogue (docs/TENSOR.md "Fused maps"): one record, `fused` in rj_tensor and
 * rj_tile (a tile takes the one-input built-ins; the caller's IR roles are kind tensor's). */
typedef struct rj_fused {
  rj_map map;                          /* applied at load (RJ_MAP_NONE: the element itself) */
  rj_epilogue epilogue;                /* once per output, before the store */
  double scale;                        /* epilogue RJ_EPI_SCALE's factor */
  char map_fn[RJ_COMBINE_FN_MAX];      /* map RJ_MAP_IR: its function (IR text: combine.ir) */
  char epilogue_fn[RJ_COMBINE_FN_MAX]; /* epilogue RJ_EPI_IR: its function (in combine.ir) */
} rj_fused;

typedef struct rj_stride {
  int64_t step;
  rj_unit unit;
} rj_stride;

/* A local (register) buffer's placement across the scope's threads (docs/C_API.md, "Requests"). */
typedef struct rj_layout {
  int present; /* 0: no layout */
  int nsub[RJ_MAX_DIMS];
  int64_t shape[RJ_MAX_DIMS][RJ_MAX_SUBDIMS];
  rj_stride stride[RJ_MAX_DIMS][RJ_MAX_SUBDIMS];
  int nreplicate;
  int64_t rep_extent[RJ_MAX_REPLICATE];
  rj_stride rep_stride[RJ_MAX_REPLICATE];
} rj_layout;

/* A tile buffer. */
typedef struct rj_buffer {
  rj_mem mem;
  int ndim;
  int64_t shape[RJ_MAX_DIMS];
  int has_region; /* 0: the whole buffer */
  int64_t start[RJ_MAX_DIMS];
  int64_t extent[RJ_MAX_DIMS];
  rj_layout layout; /* local memory only */
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
  int threads; /* CTA size along threadIdx.x; 0: the scope's default (1 / 32 / 128) */
  rj_active_kind active;
  int active_index;
  rj_buffer src, dst;
  int naxes;
  int axes[RJ_MAX_DIMS]; /* may be negative: counts from the end */
  int accum;
  rj_nan nan;
  int correction;     /* var / std: the divisor N - correction (default 1) */
  rj_combine combine; /* op custom: index order, fn(lower, higher) */
  rj_fused fused;     /* map at load, epilogue per output: the one-input built-ins */
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

/* kind "subgroup": warp-level primitives; element i is owned by global thread i. */
typedef struct rj_subgroup {
  rj_primitive primitive;
  rj_dtype dtype;
  int log2_size;
  int threads; /* per block */
  int blocks;
  int arg; /* broadcast lane, shuffle offset / mask, or the one shuffle index */
  int index_is_list;
  int index[32];      /* shuffle: lane l reads lane index[l] */
  int correction;     /* reduce_var / _std (and reduce_all_*): the divisor N - correction */
  rj_combine combine; /* reduce_custom, reduce_all_custom: lane order */
} rj_subgroup;

/* kind "tensor": a reduction over a whole array in global memory (rj_reduce). */
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
  int deterministic;  /* default 1: bit-identical results run after run; no float atomics */
  int dynamic;        /* 1: rows / columns views get a runtime-size kernel */
  int correction;     /* var / std: the divisor N - correction (default 1) */
  rj_combine combine; /* op custom: parsed and linked in redjit-irc only */
  int values;         /* argmax / argmin: also write the values (rj_reduce_values) */
  int acc_f64;        /* 1: sum / prod / mean of f16, bf16, f32 accumulate in f64 */
  int nothers;        /* "others": inputs besides src, 0 .. RJ_TENSOR_OTHERS_MAX */
  rj_dtype other_dtype[RJ_TENSOR_OTHERS_MAX];               /* each other input's dtype */
  int other_has_strides[RJ_TENSOR_OTHERS_MAX];              /* 0: src's strides */
  int64_t other_strides[RJ_TENSOR_OTHERS_MAX][RJ_MAX_DIMS]; /* in elements; 0 broadcasts */
  rj_fused fused;                                           /* map at load, epilogue per output */
  int invariant;      /* 1: each output's bits depend on its reduced length and dtype only */
  int64_t list_count; /* "list": a list of this many 1-D tensors (rj_reduce_multi); 0: no list */
  int list_total;   /* "list.total": also the op over every tensor, into rj_reduce_multi's total */
  int64_t segments; /* "segments".count: S segments by offsets (rj_reduce_segments); 0: none */
  rj_dtype segments_dtype; /* the offsets' dtype: RJ_I32 or RJ_I64 */
} rj_tensor;

/* kind "treduce": root reduce across ranks' buffers (run by redjit_treduce.h's rj_treduce_run). */
typedef struct rj_treduce {
  rj_op op;
  rj_dtype dtype;
  int ranks;
  int root;
  int ndim; /* up to 5 */
  int64_t shape[5];
  int64_t tile[2];
  int pingpong;
  rj_nan nan;
  int accum;              /* fold the destination's old value in as well */
  int has_strides;        /* 0: row-major sources and destination */
  int64_t strides[5];     /* every rank's source, in elements (the root's; all ranks alike) */
  int64_t dst_strides[5]; /* the destination, in elements */
  int dynamic;            /* 1: a runtime-size kernel for dense row-major buffers */
  int64_t mean_count;     /* op mean: the divisor; 0: ranks */
  rj_combine combine;     /* op custom: fold order, fn(earlier ranks, later ranks) */
  int invariant;          /* 1: refuse what would fold in another order (staged float sums, NCCL) */
} rj_treduce;

typedef struct rj_request {
  uint32_t struct_size; /* set by rj_request_init */
  rj_kind kind;
  char variant[RJ_NAME_MAX]; /* "" or "auto": dispatch; else force that variant */
  union {
    rj_tile tile;
    rj_subgroup subgroup;
    rj_tensor tensor;
    rj_treduce treduce;
  } u;
} rj_request;

RJ_API void rj_request_init(rj_request *req, rj_kind kind); /* zeroes, sets the kind's defaults */
RJ_API size_t rj_request_size(void);             /* sizeof(rj_request) as the library was built */
RJ_API rj_request *rj_request_new(rj_kind kind); /* initialised; NULL out of memory */
RJ_API void rj_request_free(rj_request *req);    /* NULL is a no-op */
/* Op custom: out's combine.ir points at ctx's copy, kept while among the 32 latest texts parsed. */
RJ_API rj_status rj_request_parse(rj_ctx *ctx, const char *json, rj_request *out);
RJ_API rj_status rj_request_validate(rj_ctx *ctx, const rj_request *req); /* parse's checks */
/* The canonical JSON (every default filled in); *json is ctx's until the next call. */
RJ_API rj_status rj_request_canonical(rj_ctx *ctx, const rj_request *req, const char **json);
/* The output dtype of op on input dtype (kind tensor, NumPy's rule; docs/TENSOR.md "Dtypes"). */
RJ_API rj_dtype rj_result_dtype(rj_op op, rj_dtype dtype);

/* ---------------------------------------------------------------- targets and options */
typedef struct rj_options {
  uint32_t struct_size; /* set by rj_options_init */
  const char *target;   /* "auto" or NULL: GPU device's, else sm_90; or "sm_XX", "sm_XXa", ... */
  int device;           /* CUDA device ordinal, for "auto" and for launches */
  int ptx_version;      /* 0: the least the target and kernel need; else e.g. 88 for PTX 8.8 */
  int emulate_packed;   /* 1: sm100_packed on a target without its packed instructions */
  int ir_in_process;    /* rj_compile_ir: 1 compiles in this process (no redjit-irc) */
  int ir_timeout_ms;    /* rj_compile_ir: its process's wall-clock limit; 0: default (2 s) */
  int ir_memory_mb;     /* rj_compile_ir: its address-space limit; 0: default (512); -1: none */
  int sm_count;         /* > 0: plan as if the GPU had this many SMs (tests); 0: the device's */
  int reserved[7];      /* zero: room for later options */
} rj_options;

RJ_API void rj_options_init(rj_options *opt); /* target "auto", device 0; NULL opt: the same */
/* opt->target ("auto" included) into buf, e.g. "sm_90"; len at least 16. */
RJ_API rj_status rj_target_resolve(rj_ctx *ctx, const rj_options *opt, char *buf, size_t len);

/* ---------------------------------------------------------------- compile and inspect */
typedef struct rj_kernel rj_kernel;

/* Kernels are ctx's; each return adds a pin, released by rj_kernel_release.  Needs no GPU. */
RJ_API rj_status rj_compile(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            rj_kernel **out);
/* The caller's NVPTX module: IR text (len 0: NUL-terminated) or bitcode; compiled in redjit-irc. */
RJ_API rj_status rj_compile_ir(rj_ctx *ctx, const char *ir, size_t len, const char *entry,
                               const rj_options *opt, rj_kernel **out);
/* Drops one pin; at none, k is the cache's and may be evicted (then unusable). */
RJ_API rj_status rj_kernel_release(rj_ctx *ctx, rj_kernel *k);
/* One line per variant ("NAME prio=P chosen" / "rejected: REASON" / "not tried"); ctx's text. */
RJ_API rj_status rj_explain(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            const char **text);

typedef struct rj_variant_info {
  uint32_t struct_size; /* set by the caller: sizeof(rj_variant_info) */
  const char *name;     /* strings: the library's */
  int priority;
  const char *kinds;   /* e.g. "tile" */
  const char *summary; /* one line */
} rj_variant_info;

RJ_API int rj_variant_count(const rj_ctx *ctx); /* the variant table: any thread */
/* Variant i in dispatch order (priority descending, then name). */
RJ_API rj_status rj_variant_get(const rj_ctx *ctx, int i, rj_variant_info *out);

/* A kernel's accessors (NULL k: NULL, 0, zeroed dims); strings live as long as the kernel. */
typedef enum rj_emit { RJ_EMIT_PTX = 0, RJ_EMIT_LLVM = 1, RJ_EMIT_LLVM_OPT = 2 } rj_emit;
RJ_API const char *rj_kernel_text(const rj_kernel *k, rj_emit what); /* IR: a use of k's ctx */
RJ_API const char *rj_kernel_variant(const rj_kernel *k);            /* "ir" for rj_compile_ir's */
RJ_API const char *rj_kernel_target(const rj_kernel *k);
RJ_API const char *rj_kernel_entry(const rj_kernel *k);
RJ_API double rj_kernel_compile_ms(const rj_kernel *k); /* wall-clock ms of its compile */
RJ_API double rj_kernel_disk_ms(const rj_kernel *k); /* ms this process read it from disk; -1 not */
RJ_API double rj_kernel_stage_ms(const rj_kernel *k, int stage); /* 0 lower 1 verify 2 O3 3 PTX */
/* Launch geometry (shared_bytes: dynamic shared memory); none for rj_compile_ir's kernels. */
RJ_API void rj_kernel_dims(const rj_kernel *k, unsigned grid[3], unsigned block[3],
                           unsigned *shared_bytes);

/* ---------------------------------------------------------------- run on the GPU */
typedef uint64_t rj_devptr; /* a CUdeviceptr of the GPU named beside it; 0: no address */

RJ_API rj_status rj_device_count(rj_ctx *ctx, int *count); /* RJ_ENODEV: no driver */
RJ_API rj_status rj_device_alloc(rj_ctx *ctx, int device, size_t bytes, rj_devptr *ptr);
RJ_API rj_status rj_device_free(rj_ctx *ctx, int device, rj_devptr ptr);
RJ_API rj_status rj_memcpy_htod(rj_ctx *ctx, int device, rj_devptr dst, const void *src,
                                size_t bytes);
RJ_API rj_status rj_memcpy_dtoh(rj_ctx *ctx, int device, void *dst, rj_devptr src, size_t bytes);
/* args: one pointer per kernel parameter, as cuLaunchKernel's; waits; *ms (or NULL): its time. */
RJ_API rj_status rj_kernel_launch(rj_ctx *ctx, rj_kernel *k, int device, const unsigned grid[3],
                                  const unsigned block[3], unsigned shared_bytes, void **args,
                                  double *ms);
RJ_API rj_status rj_kernel_load(rj_ctx *ctx, rj_kernel *k, int device, double *ms); /* ahead */
RJ_API rj_status rj_device_sync(rj_ctx *ctx, int device); /* every stream of the GPU */
/* Times what enqueue(ctx, ud) enqueues on stream, by CUDA events (waits for it). */
typedef rj_status (*rj_enqueue_fn)(rj_ctx *ctx, void *ud);
RJ_API rj_status rj_stream_time(rj_ctx *ctx, int device, void *stream, rj_enqueue_fn enqueue,
                                void *ud, double *ms);

/* ---------------------------------------------------------------- tensor (rj_reduce) */
/* Compiles on first use (cached in ctx), launches on stream without waiting.  src: element 0 of
 * the view; dst: contiguous, row-major; both on GPU opt->device. */
RJ_API rj_status rj_reduce(rj_ctx *ctx, const rj_request *req, const rj_options *opt, rj_devptr src,
                           rj_devptr dst, void *stream);
/* rj_reduce of rj_compile's tensor kernel k (not dynamic): no validation, no lookup. */
RJ_API rj_status rj_tensor_launch(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                  rj_devptr dst, void *stream);
/* argmax / argmin with rj_tensor.values: dst the int64 indices, values the values. */
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
/* A request with "segments" (docs/TENSOR.md "Segmented reductions"): offsets, S + 1 entries of
 * segments_dtype; status (0: none) a u32 the kernel ORs RJ_SEG_* bits into on invalid offsets. */
RJ_API rj_status rj_reduce_segments(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                                    rj_devptr src, rj_devptr offsets, rj_devptr dst,
                                    rj_devptr status, void *stream);
RJ_API rj_status rj_tensor_launch_segments(rj_ctx *ctx, rj_kernel *k, int device, rj_devptr src,
                                           rj_devptr offsets, rj_devptr dst, rj_devptr status,
                                           void *stream);
/* Waits for device, reads and zeroes *status: RJ_OK, or RJ_EINVAL naming "segments" and the bits.
 */
RJ_API rj_status rj_segments_status(rj_ctx *ctx, int device, rj_devptr status);
#define RJ_SEG_NEGATIVE 1u   /* status bit: an offset below 0 */
#define RJ_SEG_DECREASING 2u /* status bit: offsets[s + 1] < offsets[s] */
#define RJ_SEG_PAST_END 4u   /* status bit: an offset past the reduced extent */

/* A list request's table entry (docs/TENSOR.md "Many tensors"): element i at ptr + i*stride*size.
 */
typedef struct rj_multi_entry {
  rj_devptr ptr;
  int64_t len, stride, reserved;
} rj_multi_entry;
/* table: device array of n == list.count entries; dst: n outputs (0: none); total: 1 (0: none). */
RJ_API rj_status rj_reduce_multi(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                                 rj_devptr table, int64_t n, rj_devptr dst, rj_devptr total,
                                 void *stream);

/* ---------------------------------------------------------------- errors */
RJ_API const char *rj_errmsg(const rj_ctx *ctx); /* "" if none; until the next call on ctx */
/* Sets ctx's status and message as a failing call does, and returns s (RJ_OK clears). */
RJ_API rj_status rj_error_set(rj_ctx *ctx, rj_status s, const char *fmt, ...) RJ_PRINTF(3, 4);
RJ_API const char *rj_status_name(rj_status s); /* "RJ_EINVAL"; "RJ_E?" for an unknown value */

#ifdef __cplusplus
}
#endif
#endif /* REDJIT_H */
