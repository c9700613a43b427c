/* ir/ — requests as plain C data: tables, parsing, validation, layouts, tensor views, targets.
 * No LLVM and no CUDA here. */
#ifndef RJ_IR_H
#define RJ_IR_H

#include "redjit.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An error sink: the first message written wins.  Owned by whoever calls into ir/. */
typedef struct ir_err {
  char msg[1024];
  rj_status status;
} ir_err;

rj_status ir_fail(ir_err *e, rj_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A result struct of the caller's (struct_size its first field, redjit.h ABI): ir_result_in
 * refuses a struct_size below `least` (the struct's first version) with RJ_EINVAL naming
 * "what.struct_size"; ir_result_out copies the library's full result into it as far as both sizes
 * reach (zeroing the caller's fields past the library's), keeping its struct_size. */
rj_status ir_result_in(ir_err *e, const void *res, size_t least, const char *what);
void ir_result_out(void *res, const void *full, size_t full_size);

/* request.c — tables (ORDER DTYPE) and names */
typedef struct ir_dtype_info {
  const char *name;
  int bytes;
  bool is_float; /* f16 bf16 f32 f64 */
  bool is_signed;
  bool fp8; /* e4m3 e5m2: bytes, not an LLVM float type (is_float: their values are) */
} ir_dtype_info;

const ir_dtype_info *ir_dtype(rj_dtype t);
int ir_dtype_count(void);
/* i8 u8 i16 u16 bool e4m3 e5m2: kind tensor only (the other kinds refuse them naming dtype) */
bool ir_dtype_tensor_only(rj_dtype t);
/* The dtype a reduction of op over t computes in (states too): i64 / u64 for the small integers
 * and bool (f64 for their mean var std), f32 for float8, else t itself.  kind tensor's acc_dtype
 * "f64" is on top of this (passes/tensor.h tns_acc_dtype). */
rj_dtype ir_acc_dtype(rj_op op, rj_dtype t);
/* Ops (ORDER OP): the dtypes each takes (bit per rj_dtype) and whether it yields an i64 index. */
typedef struct ir_op_info {
  const char *name;
  unsigned dtypes;
  bool index_result; /* argmax / argmin */
} ir_op_info;
const ir_op_info *ir_op(rj_op op); /* NULL: not an op */
int ir_op_count(void);
const char *ir_op_name(rj_op op);
const char *ir_map_name(rj_map m); /* "abs", ...; "none" for RJ_MAP_NONE */
int ir_map_others(rj_map m); /* inputs besides src a built-in map reads: 1 (mul ... where) or 0 */
const char *ir_epilogue_name(rj_epilogue e); /* "sqrt", ...; "none" */
/* The result's dtype (NumPy's): i64 for an index; sum / prod of i8 i16 bool i64, of u8 u16 u64;
 * mean / var / std of those f64; float8's f32 but for max / min (t); else t. */
rj_dtype ir_op_result(rj_op op, rj_dtype t);
/* A request's output dtype: ir_op_result, or op custom's struct state's field c->result (c may
 * be NULL for other ops).  The kinds' wrappers (subgroup: the dtype for a primitive without an
 * op). */
rj_dtype ir_result_dtype(rj_op op, rj_dtype t, const rj_combine *c);
rj_dtype ir_tensor_result(const rj_tensor *t);
rj_dtype ir_tile_result(const rj_tile *t);
rj_dtype ir_subgroup_result(const rj_subgroup *g);
rj_dtype ir_treduce_result(const rj_treduce *t);
/* RJ_EINVAL naming the field when op is unknown or does not take dtype t. */
rj_status ir_check_op(rj_op op, rj_dtype t, ir_err *e);
/* the request's op; -1 for kinds without one (kind subgroup: RJ_OP_CUSTOM for reduce_custom and
 * reduce_all_custom, else -1) */
int ir_request_op(const rj_request *r);
/* The combine of a request of op custom (kinds tile, subgroup, tensor, treduce; every kind keeps
 * one rj_combine), or NULL.  _mut: for the owner of the request that rewrites combine.ir and
 * combine.text (jit/: the copies of the text it keeps; ir/json.c: a failed parse's). */
const rj_combine *ir_request_combine(const rj_request *r);
rj_combine *ir_request_combine_mut(rj_request *r);
/* Frees the copy of op custom's combine text that ir_parse gave r (every kind; NULL after). */
void ir_request_free_combine(rj_request *r);
/* Two combines are one when every field but `text` is equal and their IR texts are (by their
 * bytes, wherever they lie); false when either text is NULL.  A copy is an assignment. */
bool ir_combine_equal(const rj_combine *a, const rj_combine *b);
/* op custom: the names of the caller's functions as the compiler links them, "fn" (a scalar
 * state) or "fn lift" / "fn lift finish" (a struct state), space-separated (names hold no
 * spaces).  Returns the length snprintf would write (n: RJ_COMBINE_NAMES_MAX is enough). */
#define RJ_COMBINE_NAMES_MAX (3 * RJ_COMBINE_FN_MAX)
size_t ir_combine_names(const rj_combine *c, char *buf, size_t n);
const char *ir_scope_name(rj_scope s);
const char *ir_mem_name(rj_mem m);
const char *ir_kind_name(rj_kind k);
/* The subgroup primitives' names, in rj_primitive order (the request format's values). */
#define IR_PRIMITIVES (RJ_PRIM_REDUCE_ALL_CUSTOM + 1)
extern const char *const ir_primitive_names[IR_PRIMITIVES];
const char *ir_primitive_name(rj_primitive p);
/* The op a reduce primitive folds (sum min max prod and or xor ..., custom), -1 for the others;
 * *all: a reduce_all_* (every lane holds its group's result). */
int ir_primitive_op(rj_primitive p, bool *all);
/* NULL when primitive p takes dtype t, else the reason (after "dtype: "). */
const char *ir_primitive_dtype_reason(rj_primitive p, rj_dtype t);
int ir_scope_threads(rj_scope s); /* 1 / 32 / 128 / 0 (cta: the whole CTA) */

/* json.c — parsing and the canonical form */
/* A request of op custom (any kind) comes back with combine.ir a malloc'd copy the caller frees. */
rj_status ir_parse(const char *json, rj_request *out, ir_err *e);
/* Writes canonical JSON into a malloc'd string (*out); NULL on out-of-memory. */
rj_status ir_canonical(const rj_request *r, char **out, ir_err *e);
/* op custom: the canonical JSON of the request's "combine" alone (malloc'd, into *out), what a
 * runtime-size plan key of kind treduce leaves out; RJ_EINVAL for a request of another op. */
rj_status ir_combine_canonical(const rj_request *r, char **out, ir_err *e);

/* validate.c — every check a request must pass before dispatch; fills derived facts. */
typedef struct ir_tile_shape {
  int ndim; /* src dims */
  bool reduced[RJ_MAX_DIMS];
  int64_t spatial_len; /* product of the src region's kept extents */
  int64_t reduce_len;  /* product of the src region's reduced extents */
  int threads;         /* CTA size */
  int scope_threads;   /* threads in one instance of the scope */
} ir_tile_shape;

rj_status ir_validate(const rj_request *r, ir_err *e);
/* The static shared memory of one CTA, and the alignment the tile harness gives each array. */
#define IR_STATIC_SHARED (48 * 1024)
#define IR_MAX_SPAN ((int64_t)1 << 46) /* elements a strided view may span */
/* Register slots per thread that a tile's local buffers may span, src and dst together.  Up to
 * IR_LOCAL_UNROLL_SLOTS the kernels unroll every slot (constant indices: the slots stay in
 * registers); past a few hundred, LLVM's O3 and the NVPTX back end grow faster than linearly in
 * unrolled slots (StraightLineStrengthReduce, the load/store vectorizer, InstCombine, the SLP
 * vectorizer on integer folds), so larger tiles loop over their slots (computed indices: the
 * slot array lives in local memory) and compile in time that grows about linearly, up to
 * IR_MAX_LOCAL_SLOTS (docs/RELIABILITY.md has the figures).  (A thread has 255 registers.) */
#define IR_LOCAL_UNROLL_SLOTS 288
#define IR_MAX_LOCAL_SLOTS 4096
/* ... and the slots of all the scope's threads together (a warpgroup: 2048 per thread): the tile
 * kernel's placement tables and the analysis grow with them */
#define IR_MAX_LOCAL_CELLS (1 << 18)
#define IR_MAX_STEP ((int64_t)1 << 52) /* a layout stride's |step| (JSON numbers are exact) */
#define IR_ALIGN16(x) (((x) + 15) / 16 * 16)
void ir_tile_facts(const rj_tile *t, ir_tile_shape *out); /* needs a validated tile */
/* Whether a local tile whose src and dst span `slots` register slots per thread is unrolled
 * (else looped; see IR_LOCAL_UNROLL_SLOTS). */
static inline bool ir_local_unrolled(int64_t slots) {
  return slots <= IR_LOCAL_UNROLL_SLOTS;
}

/* treduce: the shape padded on the left to 5 dims (strides 0 there), chunks over the last two
 * dims (rows R, cols C) by the tile clamped to them (TR, TC); spans are in elements (0 when the
 * buffer is empty).  Needs a validated request. */
typedef struct ir_treduce_geom {
  int64_t shape[5], src_st[5], dst_st[5];
  int64_t numel, R, C, TR, TC;
  int64_t nrc, ncc, nouter, nchunks; /* row chunks, col chunks, outer rows, all chunks */
  int64_t src_span, dst_span;
} ir_treduce_geom;
void ir_treduce_facts(const rj_treduce *t, ir_treduce_geom *g);
/* The view with strides st (g's src_st or dst_st) is row-major and gap-free for g's shape (dims
 * of extent 1 may have any stride). */
bool ir_treduce_dense(const ir_treduce_geom *g, const int64_t *st);
/* treduce's fold order: the rank at fold position pos.  The root first, then the others in rank
 * order (i < root ? i : i+1); a non-commutative custom combine folds in rank order (pos itself). */
bool ir_treduce_rank_order(const rj_treduce *t); /* the non-commutative custom combine's */
int ir_treduce_rank_at(const rj_treduce *t, int pos);
/* op mean: what the sum is divided by (mean_count, or ranks) */
int64_t ir_treduce_mean_count(const rj_treduce *t);

/* Index helpers over a buffer's region: fused row-major indices to buffer offsets. */
/* Offset (row-major over the full buffer shape) of src element (spatial index s, reduce index r).
 */
int64_t ir_src_offset(const rj_tile *t, int64_t s, int64_t r);
/* Offset of dst element for fused spatial index s (row-major over the dst region). */
int64_t ir_dst_offset(const rj_tile *t, int64_t s);
int64_t ir_numel(const rj_buffer *b);

/* layout.c — a local buffer's placement on threads, enumerated.
 * elem[t * nslots + j] is the offset (row-major over the full buffer) of the element that thread
 * t (within the scope) holds in slot j, or -1. */
typedef struct ir_placement {
  int nthreads;  /* threads of the scope */
  int nslots;    /* slots per thread */
  int64_t *elem; /* nthreads * nslots */
} ir_placement;

rj_status ir_place(const rj_buffer *b, int scope_threads, const char *field, ir_placement *out,
                   ir_err *e);
void ir_placement_free(ir_placement *p);
/* The register slots per thread that b's placement spans (ir_place's nslots): the shape product
 * without a layout, else one past the largest slot its slot strides reach (used or not).
 * Saturates at INT64_MAX. */
int64_t ir_slot_span(const rj_buffer *b);

/* target.c — one table of GPU targets and what they have. */
typedef enum ir_feature {
  IR_F_REDUX_I32 = 1u << 0, /* redux.sync integer add/min/max/and/or/xor (sm_80, PTX 7.0) */
  IR_F_REDUX_F32 = 1u << 1, /* redux.sync f32 min/max (sm_100a / f family, PTX 8.6) */
  IR_F_ADD_F32X2 = 1u << 2, /* add.rn{.ftz}.f32x2 (sm_100+, PTX 8.6) */
  IR_F_MAX3_F32 = 1u << 3,  /* 3-input max/min.f32 (sm_100+, PTX 8.8) */
  IR_F_MAX_NAN = 1u << 4,   /* max.NaN / min.NaN f32 (sm_80, PTX 7.0) */
  IR_F_BF16_CVT = 1u << 5,  /* cvt.rn.bf16.f32 (sm_80) */
  IR_F_CLUSTER = 1u << 6,   /* thread-block clusters, barrier.cluster, mapa / st.shared::cluster
                               (sm_90+, PTX 7.8) */
} ir_feature;

typedef struct ir_target {
  const char *name; /* "sm_90a" */
  int sm;           /* 90 */
  char suffix;      /* 0, 'a' or 'f' */
  int min_ptx;      /* the least PTX ISA version LLVM and ptxas accept for it (e.g. 78) */
  unsigned features;
  int max_shared;    /* static shared memory bytes per block */
  unsigned emulated; /* features this entry provides by scalar emulation, not in hardware
                        (rj_options.emulate_packed): a subset of IR_F_EMULABLE */
} ir_target;

/* Features that have a scalar emulation (the same algorithm, each packed instruction replaced
 * by its scalar equivalents in the same order). */
#define IR_F_EMULABLE (IR_F_ADD_F32X2 | IR_F_MAX3_F32)

const ir_target *ir_target_find(const char *name);
int ir_target_count(void);
const ir_target *ir_target_at(int i);
/* The twin of t whose missing IR_F_EMULABLE features are emulated (t itself if none missing). */
const ir_target *ir_target_emulating(const ir_target *t);
/* The PTX version a feature needs (0 when the target lacks it). */
int ir_feature_ptx(const ir_target *t, ir_feature f);
const char *ir_feature_name(ir_feature f);
#define IR_MAX_PTX 90 /* the newest PTX ISA LLVM 22 emits */

/* tensor.c — kind "tensor": the source as a canonical view (size-1 dims dropped,
 * adjacent dims of one class merged, outermost first; at least one reduced dim). */
typedef struct ir_tview {
  int n;
  int64_t size[RJ_MAX_DIMS], stride[RJ_MAX_DIMS];
  bool red[RJ_MAX_DIMS];
  int64_t outputs;    /* destination elements (product of the kept dims) */
  int64_t reduce_len; /* elements folded into each */
  int64_t extent;     /* elements from the first to the last one the view touches, plus one */
} ir_tview;
void ir_tensor_view(const rj_tensor *t, ir_tview *v); /* needs a validated request */
/* A list request (rj_tensor.list_count, rj_reduce_multi): its most tensors, and its ops. */
#define IR_LIST_MAX 10240
#define IR_LIST_OPS                                                                                \
  ((1u << RJ_OP_SUM) | (1u << RJ_OP_MAX) | (1u << RJ_OP_MIN) | (1u << RJ_OP_PROD) |                \
   (1u << RJ_OP_MEAN) | (1u << RJ_OP_AND) | (1u << RJ_OP_OR) | (1u << RJ_OP_XOR))
/* Offset of reduced element r of output out (row-major over the kept / reduced dims). */
int64_t ir_tview_offset(const ir_tview *v, int64_t out, int64_t r);
/* src's logical strides (in elements) into st, and its dims of size > 1 by descending stride
 * into ord; returns their count (the fused maps place other inputs by this order). */
int ir_tensor_stride_order(const rj_tensor *t, int64_t *st, int *ord);

#endif
