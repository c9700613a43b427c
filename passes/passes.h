/* passes/ — the variant registry, one file per variant (predicates beside the emitter), the shared
 * emit helpers and the optimisation pipeline.  A map of the folder, like QBE's all.h. */
#ifndef RJ_PASSES_H
#define RJ_PASSES_H

#include "../ir/ir.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

/* Address spaces of the NVPTX backend. */
enum { AS_GENERIC = 0, AS_GLOBAL = 1, AS_SHARED = 3 };

/* Where a plan is made: the target, and the device's facts, read on first use (a variant that
 * never asks never touches the driver). */
typedef struct pass_env pass_env;
struct pass_env {
  const ir_target *target;
  int (*sms)(const pass_env *env); /* the device's SM count (0: no device usable); cached */
  /* Why the registered variant `name` declines r on this target (NULL: it accepts), as its
   * predicates say (written into buf): a plan that explains its choice by another variant's
   * refusal asks here, through the registry, rather than calling that variant itself. */
  const char *(*why_not)(const pass_env *env, const char *name, const rj_request *r, char *buf,
                         size_t n);
  void *reader; /* the state behind sms() */
};

/* What a variant decides before it emits, made once per compile and kept with the kernel: the
 * cache key, the emitter, `explain` and the launch all read it.  It is the one owner of the
 * launch geometry: every variant's plan step sets grid, block and shared bytes; the emitter and
 * the launch read them (rj_kernel_dims: the kernel's plan). */
#define PASS_PLAN_NP 9     /* i64 size parameters of a runtime-size kernel, at most */
#define PASS_PLAN_PRIV 192 /* bytes of the variant's own plan */
typedef struct pass_plan {
  unsigned grid[3], block[3], shared_bytes; /* the launch geometry (the plan step's) */
  char key[192]; /* the cache key's request part ("": the request's canonical JSON) */
  int sms;       /* the SM count the plan was made for (0: none read); ends the cache key */
  int np;        /* size parameters after (src, dst): a runtime-size kernel when > 0 */
  int64_t p[PASS_PLAN_NP]; /* their values for the planned request */
  char note[384];          /* explain's note after "chosen" ("": none) */
  union {
    unsigned char bytes[PASS_PLAN_PRIV];
    int64_t align;
  } priv; /* the variant's own plan (memcpy in and out; each variant asserts its size) */
} pass_plan;

/* A lowering in progress: where IR goes, and what the emitted code needs. */
typedef struct pass_emit {
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMBuilderRef B;
  LLVMValueRef fn; /* the function being built */
  const ir_target *target;
  int ptx_needed;    /* raised by emitters that use versioned instructions */
  unsigned barriers; /* named barrier ids taken in this module (bit i = id i) */
  int uniq;          /* counter for unique global names */
  ir_err *err;
  const char *entry;
  int nparams;            /* i64 size parameters after (src, dst), as built */
  const pass_plan *plan;  /* the variant's plan, read only (the launch geometry is its) */
  const uint64_t *custom; /* op custom: the request's combine identity (its bits), else NULL */
  /* argmax / argmin with rj_tensor.values: the kernel takes a third pointer after dst (tensor
   * kernels: tns_begin), where tns_store writes each extreme value; else false / NULL */
  bool values;
  LLVMValueRef values_dst;
  /* tensor kernels with "others" (tns_begin): src and the other inputs' pointers, which the
   * fused map (passes/tensor_map.c) reads at src's element offsets */
  int nothers; /* the request's rj_tensor.nothers (0 for the other kinds) */
  LLVMValueRef src;
  LLVMValueRef others[RJ_TENSOR_OTHERS_MAX];
  /* tensor kernels with "segments" (tns_begin): the offsets and status pointers after the others */
  bool segmented;
  LLVMValueRef seg_offsets, seg_status;
} pass_emit;

/* Operands of a tile primitive.  src / dst: for shared memory, a pointer in addrspace(3) to
 * element 0 of the whole buffer (row-major); for local memory, a pointer to an array of the
 * thread's slots (ir_place order).  tid: the thread's index within its scope instance (i32). */
typedef struct pass_tile_args {
  LLVMValueRef src, dst;
  LLVMValueRef tid;
} pass_tile_args;

typedef struct pass_variant pass_variant;
struct pass_variant {
  const char *name;
  int prio;
  rj_kind kind;
  const char *summary;
  /* The ops it serves, a bit per rj_op (PASS_OP(RJ_OP_PROD) | ...); 0: sum, max and min. */
  unsigned ops;
  /* Why the ops outside ops are not served (explain and the refusal append it; NULL: nothing). */
  const char *ops_why;
  /* Every combine it emits is combine(lower indices, higher indices) over contiguous ranges, so
   * a non-commutative custom combine is reduced in index order (others decline one). */
  bool keeps_order;
  /* Where it does not: why its folds reorder operands (NULL: lanes take strided elements). */
  const char *order_why;
  /* Tensor variants: the reduction tree of each output depends only on its reduced length, the
   * dtype and the op (never on the outputs, grid, SM count, target or address), with the same
   * floating-point operations on every target: it serves "invariant": true (others decline it,
   * saying invariant_why: what their tree depends on).  A variant with both serves it by its
   * plan for such requests, its tree depending on invariant_why otherwise. */
  bool invariant;
  const char *invariant_why;
  bool lists; /* serves list requests (rj_tensor.list_count) and only those */
  /* Serves only tensor requests with "segments"; the variants without it decline those. */
  bool segmented;
  /* NULL when the variant accepts, else the reason (static text, or written into buf). */
  const char *(*accepts)(const rj_request *r, const ir_target *t, char *buf, size_t n);
  /* Plans an accepted request: at least its launch geometry (grid, block, shared bytes). */
  rj_status (*plan)(const rj_request *r, const pass_env *env, pass_plan *out);
  /* Builds the whole kernel into e->M (tile variants: pass_tile_kernel). */
  rj_status (*kernel)(pass_emit *e, const rj_request *r, const pass_variant *self);
  /* Tile variants: the primitive itself, inline at the builder's position. */
  rj_status (*tile)(pass_emit *e, const rj_tile *t, const pass_tile_args *a);
};

/* A variant names its emitters (.kernel, .tile) through PASS_EMIT(f).  libredjit.so builds
 * passes/ with RJ_PLAN_ONLY, where PASS_EMIT(f) is NULL: it dispatches and plans (the cache key)
 * with no LLVM, and its link drops the emit code (--gc-sections; -z defs fails the build on any
 * LLVM reference that remains).  The compiler library, libredjit-llvm, builds passes/ whole. */
#ifdef RJ_PLAN_ONLY
#define PASS_EMIT(f) NULL
#else
#define PASS_EMIT(f) f
#endif

/* registry.c — variants in dispatch order: priority descending, then name. */
int pass_variant_count(void);
const pass_variant *pass_variant_at(int i);
const pass_variant *pass_variant_find(const char *name);

#define PASS_OP(op) (1u << (op))
#define PASS_OPS_BASIC (PASS_OP(RJ_OP_SUM) | PASS_OP(RJ_OP_MAX) | PASS_OP(RJ_OP_MIN))
/* The ops of one scalar state folded by pass_combine: sum max min prod and or xor mean. */
#define PASS_OPS_SCALAR                                                                            \
  (PASS_OPS_BASIC | PASS_OP(RJ_OP_PROD) | PASS_OP(RJ_OP_AND) | PASS_OP(RJ_OP_OR) |                 \
   PASS_OP(RJ_OP_XOR) | PASS_OP(RJ_OP_MEAN))
/* Why the result of r's op does not depend on the order of its combines (a tensor request: integer
 * sum / prod, and / or / xor, argmax / argmin, max / min), in a few words; NULL where it does
 * (float sums, products, means, var / std, logsumexp, custom).  Every variant serves such a request
 * under "invariant": true, whatever its tree (docs/INVARIANCE.md). */
const char *pass_order_free(const rj_request *r);
/* r asks for "invariant": true and its op's result depends on the order of its combines: only a
 * tree fixed by the reduced length serves it (a variant with invariant set, by such a plan). */
bool pass_fixed_tree(const rj_request *r);
/* Why v declines r on target t (NULL: it accepts): the kind, the op, then v's own predicates. */
const char *pass_declines(const pass_variant *v, const rj_request *r, const ir_target *t, char *buf,
                          size_t n);

/* The plan of v for r (accepted by v): out zeroed, then v's plan step. */
rj_status pass_plan_make(const pass_variant *v, const rj_request *r, const pass_env *env,
                         pass_plan *out);

/* Dispatch: the first variant (or the forced one) whose predicates pass.  Writes one explain
 * line per variant into text (may be NULL).  Returns the chosen variant or NULL (e filled). */
const pass_variant *pass_dispatch(const rj_request *r, const ir_target *t, char *text, size_t n,
                                  ir_err *e);

/* emit.c — helpers shared by variants */
/* The predicate every tile variant starts with: NULL when src and dst are both in mem, else the
 * reason (written into buf). */
const char *pass_need_mem(const rj_tile *t, rj_mem mem, char *buf, size_t n);
LLVMTypeRef pass_type(pass_emit *e, rj_dtype t);     /* storage type */
LLVMTypeRef pass_acc_type(pass_emit *e, rj_dtype t); /* accumulation type (f16/bf16: float) */
int pass_acc_bytes(rj_dtype t);                      /* its bytes (no LLVM: plans call it) */
LLVMValueRef pass_i32(pass_emit *e, int64_t v);
LLVMValueRef pass_i64(pass_emit *e, int64_t v);
LLVMValueRef pass_identity(pass_emit *e, rj_op op, rj_dtype t);
LLVMValueRef pass_to_acc(pass_emit *e, LLVMValueRef v, rj_dtype t);
LLVMValueRef pass_from_acc(pass_emit *e, LLVMValueRef v, rj_dtype t);
/* op(a, b) on the accumulation type; nan decides max/min on NaN; integer sums, products wrap. */
LLVMValueRef pass_combine(pass_emit *e, rj_op op, rj_dtype t, rj_nan nan, LLVMValueRef a,
                          LLVMValueRef b);
/* acc = op(acc, x) for an input element x: with nan = ignore, NaN inputs are skipped. */
LLVMValueRef pass_fold(pass_emit *e, rj_op op, rj_dtype t, rj_nan nan, LLVMValueRef acc,
                       LLVMValueRef x);
/* mean: the sum v (accumulation type) divided by n reduced elements (an integer value, i32 or i64:
 * div.rn, as torch divides; 0 elements give NaN); the other ops: v unchanged.  Mean's identity,
 * combine and fold are sum's. */
LLVMValueRef pass_mean(pass_emit *e, rj_op op, rj_dtype t, LLVMValueRef v, LLVMValueRef n);
/* fused.c: a built-in one-input map (abs, square, nonzero; else x) of x in the accumulation
 * type, and a built-in epilogue (sqrt, scale by scale, log; else v) of an output v. */
LLVMValueRef pass_map_one(pass_emit *e, rj_map m, LLVMValueRef x);
LLVMValueRef pass_epilogue(pass_emit *e, rj_epilogue ep, double scale, LLVMValueRef v);
/* A tile variant that folds values as they are declining a mapped request: NULL when f maps
 * nothing, else buf ("map M, epilogue E: <as_is> (variant local maps them)"). */
const char *pass_fused_declined(const rj_fused *f, const char *as_is, char *buf, size_t n);
LLVMValueRef pass_call(pass_emit *e, const char *intrinsic, LLVMTypeRef *ovl, int novl,
                       LLVMValueRef *args, int nargs);
LLVMValueRef pass_tid_x(pass_emit *e);
/* shfl.sync.bfly of a value of the accumulation type; 64-bit values as two 32-bit shuffles. */
LLVMValueRef pass_shfl_bfly(pass_emit *e, LLVMValueRef v, LLVMValueRef membermask, int lanemask,
                            int width);
/* The butterfly tree v = op(v, shfl_xor(v, m)) for each m in masks, in order. */
LLVMValueRef pass_bfly_tree(pass_emit *e, rj_op op, rj_dtype t, rj_nan nan, LLVMValueRef v,
                            LLVMValueRef membermask, const int *masks, int n, int width);
void pass_barrier_cta(pass_emit *e);
void pass_barrier_named(pass_emit *e, int id, int threads);
void pass_warp_sync(pass_emit *e);
/* Takes a free named barrier id (1..15) of this module; -1 when all are taken. */
int pass_barrier_alloc(pass_emit *e);
/* The scope's barrier after a primitive (cta: bar.sync 0; warpgroup: a named barrier of 128;
 * warp: bar.warp.sync; thread: none). */
rj_status pass_scope_barrier(pass_emit *e, rj_scope s);

/* Structured control flow on the builder. */
typedef struct pass_loop {
  LLVMBasicBlockRef head, body, exit;
  LLVMValueRef var; /* alloca holding the induction variable (the type of start: i32 or i64) */
  LLVMValueRef i;   /* its value inside the body */
  LLVMValueRef step;
} pass_loop;
void pass_loop_begin(pass_emit *e, pass_loop *l, LLVMValueRef start, LLVMValueRef end,
                     LLVMValueRef step);
void pass_loop_end(pass_emit *e, pass_loop *l);
/* Marks br, a loop's back edge, llvm.loop.unroll.disable: LLVM keeps the loop a loop. */
void pass_no_unroll(pass_emit *e, LLVMValueRef br);
typedef struct pass_if {
  LLVMBasicBlockRef then, done;
} pass_if;
void pass_if_begin(pass_emit *e, pass_if *f, LLVMValueRef cond);
void pass_if_end(pass_emit *e, pass_if *f);
LLVMValueRef pass_entry_alloca(pass_emit *e, LLVMTypeRef ty, const char *name);
/* A module-level array in addrspace as (3: shared scratch; 1: constant tables). */
LLVMValueRef pass_global_array(pass_emit *e, LLVMTypeRef elem, int64_t n, unsigned as,
                               const char *prefix);
/* Many sources folded in order without holding them all in registers (passes/srcfold.c).
 * pass_src_table: thread 0 copies n global pointers (kernel parameters) into a table in shared
 * memory, then a barrier (every thread of the CTA must reach it: call it before any divergence).
 * pass_src_fold: folds sources 0 .. n-1 of the table into acc[0 .. nacc), `batch` pointers read at
 * a time in a loop (never unrolled); load() loads nx values of one source from its pointer, fold()
 * folds them into acc.  pipelined: batch j's loads are issued before batch j - 1 folds (and the
 * last n % batch together); otherwise each source is loaded, then folded.  volatile_table: the
 * table's loads may not be hoisted out of an enclosing loop (one with no barrier, where LLVM would
 * otherwise hoist all n pointers back into registers). */
enum { PASS_SRC_MAXBATCH = 16, PASS_SRC_MAXX = 4, PASS_SRC_MAXACC = 64 };
typedef struct pass_srcfold {
  LLVMValueRef tab; /* pass_src_table's */
  int n, batch, nx, nacc;
  bool pipelined, volatile_table;
  void (*load)(pass_emit *e, const void *cx, LLVMValueRef ptr, LLVMValueRef *x);
  void (*fold)(pass_emit *e, const void *cx, const LLVMValueRef *x, LLVMValueRef *acc);
  const void *cx;
} pass_srcfold;
LLVMValueRef pass_src_table(pass_emit *e, const LLVMValueRef *ptrs, int n, LLVMValueRef thread0);
void pass_src_fold(pass_emit *e, const pass_srcfold *f, LLVMValueRef *acc);
LLVMValueRef pass_const_table_i32(pass_emit *e, const int32_t *v, int64_t n, const char *prefix);
/* Index math: the offset of a region element, decomposing a fused index (row-major over the
 * dims selected by want[]) into the buffer's coordinates.  Constant divisors only. */
LLVMValueRef pass_region_offset(pass_emit *e, const rj_buffer *b, const bool *dims,
                                LLVMValueRef fused, bool add_start);
LLVMValueRef pass_gep(pass_emit *e, LLVMTypeRef elem, LLVMValueRef base, LLVMValueRef idx);

/* packed.c — packed / 3-input f32 instructions (inline asm) and their scalar emulation; real
 * when e->target->features has the feature (raising e->ptx_needed), else emulated. */
LLVMValueRef pass_asm(pass_emit *e, LLVMTypeRef ret, const char *text, const char *constraints,
                      LLVMValueRef *args, int n);
/* The same with side effects (asm volatile): never hoisted, merged or dropped (memory ordering,
 * flags polled in a loop). */
LLVMValueRef pass_asm_volatile(pass_emit *e, LLVMTypeRef ret, const char *text,
                               const char *constraints, LLVMValueRef *args, int n);
void pass_need_feature(pass_emit *e, ir_feature f);      /* e->ptx_needed >= what f needs */
bool pass_has_feature(const ir_target *t, ir_feature f); /* in hardware or emulated */
/* (a[0], a[1]) += (b0, b1): add.rn.ftz.f32x2, or two add.rn.ftz.f32. */
void pass_add_f32x2(pass_emit *e, LLVMValueRef a[2], LLVMValueRef b0, LLVMValueRef b1);
/* max/min.f32 (.NaN when nan = propagate), 2 inputs; 3 inputs, or two 2-input ops (a, b) then c. */
LLVMValueRef pass_minmax2_f32(pass_emit *e, rj_op op, rj_nan nan, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef pass_minmax3_f32(pass_emit *e, rj_op op, rj_nan nan, LLVMValueRef a, LLVMValueRef b,
                              LLVMValueRef c);

/* tile_kernel.c — the kernel around a tile primitive (global -> shared or registers -> primitive ->
 * global), used by every tile variant and by `run`; and its plan, every tile variant's: one CTA
 * of the tile's threads, no dynamic shared memory. */
rj_status pass_tile_kernel(pass_emit *e, const rj_request *r, const pass_variant *v);
rj_status pass_tile_plan(const rj_request *r, const pass_env *env, pass_plan *out);

/* The variants (one file each). */
extern const pass_variant pass_variant_shared;
extern const pass_variant pass_variant_local;
extern const pass_variant pass_variant_treduce, pass_variant_treduce_ring;
extern const pass_variant pass_variant_sm100_packed;
extern const pass_variant pass_variant_redux;
extern const pass_variant pass_variant_tensor_rows, pass_variant_tensor_cols,
    pass_variant_tensor_cluster, pass_variant_tensor_generic;
extern const pass_variant pass_variant_subgroup;
extern const pass_variant pass_variant_tensor_ordered;
extern const pass_variant pass_variant_tensor_multi;
extern const pass_variant pass_variant_tensor_inv_cols;
extern const pass_variant pass_variant_tensor_segmented;
/* op custom: the kernel calls this declaration of the state type, T (T, T); the caller's function
 * is linked to it in the compiler process (jit/custom.c). */
#define PASS_CUSTOM_COMBINE "rj.custom.combine"
/* op custom with a struct state S (passes/state.c): S lift(T x, i64 index), R finish(S) */
#define PASS_CUSTOM_LIFT "rj.custom.lift"
#define PASS_CUSTOM_FINISH "rj.custom.finish"
/* a tensor's caller map (RJ_MAP_IR): A map(T x, O1 y1 ...), the inputs' storage types, A the
 * accumulator's type (passes/tensor_map.c) */
#define PASS_CUSTOM_MAP "rj.custom.map"
/* a tensor's caller epilogue (RJ_EPI_IR): A epilogue(A) */
#define PASS_CUSTOM_EPILOGUE "rj.custom.epilogue"

#endif
