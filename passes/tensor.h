/* Tensor variants: shared pieces of passes/variants/tensor_*.c (passes/tensor_common.c).
 *
 * Every tensor kernel is `redjit_tensor(src, dst)` with sizes and strides as JIT constants, or
 * (runtime-size kernels, below) `redjit_tensor(src, dst, i64 sizes...)`.
 * Kernels that split a reduction over several CTAs finish in the same launch: each CTA leaves
 * its partial in a module-global workspace, counts itself on an integer counter, and the last
 * CTA of a group folds the partials in a fixed order (deterministic: no float atomics) and
 * resets the counter to 0 for the next launch.  The workspace therefore belongs to the loaded
 * module: launches of one kernel must be ordered (one stream, or synchronised streams). */
#ifndef RJ_PASSES_TENSOR_H
#define RJ_PASSES_TENSOR_H

#include "passes.h"
#include "state.h"

#define TNS_SKIP_L1_MAX                                                                            \
  (512.0 * 1024 * 1024) /* a constant-size src under this: its loads skip L1 */
#define TNS_U 8         /* independent 16-byte loads in flight per thread (rows and cols kernels) */
#define TNS_REGS 64     /* registers per thread the launch bounds allow (1024 threads per SM) */
#define TNS_DEFAULT_SMS 132

typedef enum tns_class { TNS_ROWS, TNS_COLS, TNS_GENERIC } tns_class;

/* The class of a canonical view: rows (the innermost dim is reduced, unit stride, at most one
 * kept dim outside it), cols (outer, reduce, inner: the innermost dim is kept), generic. */
tns_class tns_classify(const ir_tview *v);
int tns_sms(int read);       /* an SM count read by a plan, or TNS_DEFAULT_SMS when none was */
int tns_vec(rj_dtype t);     /* elements per 16-byte vector */
int64_t tns_pow2(int64_t x); /* the next power of two >= x */

/* Elements per vector load of tensor_rows and tensor_cols: a 16-byte vector, 8 bytes for the
 * 1-byte dtypes (8 slots, not 16: no spills at 64 registers, and half the IR to compile). */
int tns_vec_rc(rj_dtype t);

/* The invariant tree of a reduced length N (docs/INVARIANCE.md), one owner for tensor_generic
 * and tensor_inv_cols: N <= TNS_INV_LANES_MAX, pow2(N) <= 32 lanes of TNS_INV_U accumulators;
 * longer, tns_inv_segments(N, &chunk) segments of chunk elements, a CTA of TNS_INV_T threads
 * folding each into TNS_INV_U accumulators. */
#define TNS_INV_U 4
#define TNS_INV_LANES_MAX 4096
#define TNS_INV_T 256
int tns_inv_segments(int64_t n, int64_t *chunk);

/* Kernel skeleton: the function redjit_tensor(ptr addrspace(1) noalias readonly src,
 * ptr addrspace(1) noalias dst, i64 p0 .. i64 p{np-1}), builder at its entry.  Returns the
 * params; np = 0 (constant kernels): just src and dst.  Sets e->nparams = np.  The launch
 * geometry is the plan's (tns_plan_geometry).  With e->values (argmax / argmin values), a third
 * pointer follows dst (e->values_dst; tns_store writes the extreme values there). */
void tns_begin(pass_emit *e, LLVMValueRef *src, LLVMValueRef *dst, int np, LLVMValueRef *p);
LLVMValueRef tns_ctaid(pass_emit *e);
LLVMValueRef tns_i64(pass_emit *e, int64_t v);
/* The predicate of the variants that take any view: at most 2^31 outputs. */
const char *tns_accepts_any_view(const rj_request *r, const ir_target *tg, char *buf, size_t n);
/* The offset of element x of a view, x fused row-major over the dims with red[d] == want. */
LLVMValueRef tns_fused_offset(pass_emit *e, const ir_tview *v, bool want, LLVMValueRef x);
/* The dtype t's scalar accumulator folds in: f64 under acc_dtype "f64" (rj_tensor.acc_f64),
 * else ir_acc_dtype (f16 / bf16: emit.c's f32, pass_acc_type; i8 .. bool: i64 / u64 or f64;
 * float8: f32).  States keep their own types (st_of_tensor: of ir_acc_dtype). */
rj_dtype tns_acc_dtype(const rj_tensor *t);
/* tensor_dtype.c, one owner of the element conversions: an element of `from` (as loaded) in the
 * acc type of `to` (sign / zero extension, int to f64, f16 / bf16 / float8 to f32, f32 to f64);
 * an accumulator of `from` as `to` where that is exact (truncating integers, float8 re-encoded
 * from a value it holds; else pass_from_acc). */
LLVMValueRef tns_widen(pass_emit *e, LLVMValueRef x, rj_dtype from, rj_dtype to);
LLVMValueRef tns_narrow_exact(pass_emit *e, LLVMValueRef v, rj_dtype from, rj_dtype to);
/* Loads one element of t's dtype (in the acc type of tns_acc_dtype) / a vector of vec values at
 * p (aligned to its size: 16 bytes, or 8 for tns_vec_rc's 1-byte vectors). */
LLVMValueRef tns_load(pass_emit *e, const rj_tensor *t, LLVMValueRef p);
/* tns_load for the main loop of tensor_generic's trips, which reads element by element: an
 * invariant kernel's loads there are inline ld.global.nc, with the L1 hint on sm_87+ (the same IR
 * on every target); others' are tns_load's */
LLVMValueRef tns_load_elem(pass_emit *e, const rj_tensor *t, LLVMValueRef p);
void tns_load_vec(pass_emit *e, const rj_tensor *t, LLVMValueRef p, int vec, LLVMValueRef *out);
/* ---- tensor_map.c: fused maps and epilogues (docs/TENSOR.md "Fused maps") */
/* The inputs besides src the kernel takes (the request's nothers; 0 without a map). */
int tns_map_inputs(const pass_emit *e);
/* The map of t at n consecutive src elements from p (their values x[0 .. n), already in the
 * accumulator's type): out[i] = map(x[i], the other inputs at the same index); id: the op's
 * identity in that type (map where's masked-out value).  Op mean of map where (the masked mean):
 * out[i] is the element's state {x or 0, 1 or 0} (passes/state.h).  Calls nothing of
 * tensor_common.c. */
LLVMValueRef tns_map(pass_emit *e, const rj_tensor *t, LLVMValueRef p, int n, LLVMValueRef *x,
                     LLVMValueRef id, LLVMValueRef *out);
/* t's epilogue of an output v (acc type): sqrt, scale or log. */
LLVMValueRef tns_epilogue(pass_emit *e, const rj_tensor *t, LLVMValueRef v);

/* The accumulator of t's op: the acc type, or a state (passes/state.h: argmax argmin var std
 * logsumexp); its identity, combine and butterfly tree.  Every tensor emitter goes through these
 * (sum / max / min: exactly emit.c's). */
LLVMTypeRef tns_acc_type(pass_emit *e, const rj_tensor *t);
LLVMValueRef tns_identity(pass_emit *e, const rj_tensor *t);
LLVMValueRef tns_combine(pass_emit *e, const rj_tensor *t, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef tns_bfly_tree(pass_emit *e, const rj_tensor *t, LLVMValueRef v, LLVMValueRef mm,
                           const int *masks, int n, int width);
/* v, the fold of n elements, as the output's value (before tns_store's epilogue and rounding):
 * op mean v / n in the accumulator (pass_mean); a float sum of no element +0.0, as NumPy's (the
 * folds start from -0.0 so that a sum of -0.0 elements stays -0.0; under accum v, which leaves
 * the stored value as it is); the other ops, and the masked mean (a state divided by its own
 * count in tns_store): v.  With n a constant the select folds away. */
LLVMValueRef tns_result(pass_emit *e, const rj_tensor *t, LLVMValueRef v, LLVMValueRef n);
/* The index of an element in its reduction, base + off (base NULL: off), for the ops that fold
 * indices (argmax / argmin); NULL for the others (nothing emitted). */
LLVMValueRef tns_elem_idx(pass_emit *e, const rj_tensor *t, LLVMValueRef base, LLVMValueRef off);
/* Folds element x (acc type; idx its index, see tns_elem_idx) into the acc slot at acc (one of
 * tns_acc_init; a slot's elements must come in increasing index order); when ok is not NULL,
 * nothing where ok is false (a predicated slot of an unrolled round).  sum / max / min:
 * tns_acc_fold of tns_or_identity, as before; state ops: st_slot_fold. */
void tns_fold_elem(pass_emit *e, const rj_tensor *t, LLVMValueRef acc, LLVMValueRef x,
                   LLVMValueRef idx, LLVMValueRef ok);
/* State ops: folds a round of n elements x[0 .. n) of one acc slot at once (st_slot_fold_round:
 * idx NULL or their indices, ok[i] NULL or the element's predicate). */
void tns_fold_round(pass_emit *e, const rj_tensor *t, LLVMValueRef acc, LLVMValueRef *x,
                    LLVMValueRef *idx, LLVMValueRef *ok, int n);
/* acc slots: n allocas of the acc type holding the identity (state ops: st_slot_type holding
 * st_slot_identity, passes/state.h) */
void tns_acc_init(pass_emit *e, const rj_tensor *t, LLVMValueRef *acc, int n);
/* The value of an acc slot of tns_acc_init: its load (state ops: st_slot_state of it). */
LLVMValueRef tns_acc_value(pass_emit *e, const rj_tensor *t, LLVMValueRef acc);
/* An alloca of the acc type (a state) for a fold of states: acc itself when the slot is of that
 * type, else a new one. */
LLVMValueRef tns_acc_as_state(pass_emit *e, const rj_tensor *t, LLVMValueRef acc);
void tns_acc_fold(pass_emit *e, const rj_tensor *t, LLVMValueRef acc, LLVMValueRef x);
/* Combines the n slots, of one output, in order (a fixed tree: pairs, then pairs of pairs; state
 * ops: st_slot_combine, then one st_slot_state). */
LLVMValueRef tns_acc_total(pass_emit *e, const rj_tensor *t, LLVMValueRef *acc, int n);
/* Invariant vector folds: n chains of one thread as one vector of the acc type (element i: chain
 * i), so that the IR holds the same vector operations for every target (sm_100a's SLP vectoriser
 * would pack scalar chains its own way).  tns_vfoldable: the requests they serve (float sum,
 * mean, prod of 2- or 4-byte elements, NaNs propagated, no map: pass_fold's add or multiply).
 * tns_vacc: the identity's vector (an alloca); tns_vload: the n elements at src[off] (aligned to
 * the vector) in the acc type; tns_vfold: chain i folds element i of x. */
bool tns_vfoldable(const rj_tensor *t);
LLVMValueRef tns_vacc(pass_emit *e, const rj_tensor *t, int n);
LLVMValueRef tns_vload(pass_emit *e, const rj_tensor *t, int n, LLVMValueRef src, LLVMValueRef off);
void tns_vfold(pass_emit *e, const rj_tensor *t, LLVMValueRef x, LLVMValueRef acc);
/* x when ok, else the op's identity (acc type): a predicated slot of an unrolled round. */
LLVMValueRef tns_or_identity(pass_emit *e, const rj_tensor *t, LLVMValueRef ok, LLVMValueRef x);
/* min(a, b), signed i64 */
LLVMValueRef tns_min64(pass_emit *e, LLVMValueRef a, LLVMValueRef b);
/* CTA of T threads (multiple of 32): the value of thread 0 is op over every thread's v (warp
 * butterfly trees, then warp 0 over the warp partials in shared memory).  The shared scratch
 * may be reused after the next barrier. */
LLVMValueRef tns_cta_reduce(pass_emit *e, const rj_tensor *t, LLVMValueRef v, LLVMValueRef tid,
                            int T);
/* One warp: lane l < n (n <= 32) takes slots[l] (acc type, shared), the other lanes the identity;
 * a butterfly over pow2(n) lanes leaves op over the n slots, in a fixed order, in lane 0. */
LLVMValueRef tns_fold_slots(pass_emit *e, const rj_tensor *t, LLVMValueRef slots, int n,
                            LLVMValueRef lane);
/* dst[idx] = v (folded with the old value under accum), converted to the storage type; a state's
 * result (st_finish) in the type of ir_op_result. */
void tns_store(pass_emit *e, const rj_tensor *t, LLVMValueRef dst, LLVMValueRef idx64,
               LLVMValueRef v);
/* tns_store by lane 0 (lane: i64) of a group whose output exists (valid: i1). */
void tns_store_lane0(pass_emit *e, const rj_tensor *t, LLVMValueRef dst, LLVMValueRef idx64,
                     LLVMValueRef v, LLVMValueRef valid, LLVMValueRef lane);
/* The last-CTA-finishes handshake on counter `cnt` (i32 in global) of `parts` CTAs, after this
 * CTA's partials are written: a barrier, then thread 0's acq_rel GPU-scope atomic add; returns an
 * i1, uniform over the CTA, true in the last CTA (the caller resets the counter there).  Ends with
 * a barrier. */
LLVMValueRef tns_last_cta(pass_emit *e, LLVMValueRef cnt, LLVMValueRef tid, LLVMValueRef parts);
/* .maxntid threads and .minnctapersm min_ctas: ptxas keeps registers within the launch. */
void tns_launch_bounds(pass_emit *e, int threads, int min_ctas);
LLVMValueRef tns_load_volatile(pass_emit *e, LLVMTypeRef ty, LLVMValueRef p);

/* tensor_rows.c: folds base[0 .. len) (elements; i64 values) into acc[vec] as lane `lane` of G
 * lanes: a scalar head up to the first 16-byte boundary, the aligned body in rounds of U vectors
 * per lane (all loads of a round issued before any fold), a scalar tail; acc[0] and acc[1] also
 * take the head and tail.  Fold order per lane: fixed by the shape and the base's alignment.
 * idx0: the index of base's element in the reduction (i64; NULL: 0), for argmax / argmin. */
void tns_row_segment(pass_emit *e, const rj_tensor *t, int vec, int G, int U, LLVMValueRef base,
                     LLVMValueRef len, LLVMValueRef lane, LLVMValueRef idx0, LLVMValueRef *acc);

/* loops: pass_loop (passes/passes.h), on i64 induction variables */

/* ---- runtime-size kernels (rj_tensor.dynamic; docs/TENSOR.md "JIT constants vs runtime sizes")
 * The plan's discrete choices (its bucket: rows lanes G / threads T / CTA or split mode; cols
 * vector or scalar, BX, split or not) are compiled in and name the kernel; the sizes, strides,
 * split count and chunk are i64 kernel parameters after (src, dst), in the order below.  One
 * emitter per class: each size is an LLVMValueRef, a constant (constant kernels, unchanged) or
 * a parameter.  Workspaces of split buckets are sized by the one-wave bound (tns_wave). */
#define TNS_NP PASS_PLAN_NP /* size parameters, at most */
/* A 1-D launch of grid CTAs of block threads. */
void tns_plan_geometry(pass_plan *out, unsigned grid, unsigned block);
/* A runtime-size kernel's plan (out->np and out->p set): the cache key names the variant, the
 * bucket (the compile-time choices, e.g. "rows lanes T=256 G=4") and the request's op, dtype,
 * nan, accum and deterministic, not its sizes; explain's note names the parameters (`names`,
 * e.g. "M N RS S chunk") and the geometry. */
void tns_plan_runtime(pass_plan *out, const rj_request *r, const char *variant, const char *bucket,
                      const char *names);
/* A dynamic request that keeps a constant kernel: explain's note says why. */
void tns_plan_constant(pass_plan *out, const char *why);
/* Why a dynamic request served by a variant with no runtime-size kernel (tensor_generic,
 * tensor_cluster) keeps a constant kernel: its view is generic, another variant is forced, or
 * the variant of its class (rows or cols) declined it (that variant's reason, asked for the
 * note only: dispatch has chosen already).  Static text, or written into buf. */
const char *tns_why_constant(const rj_request *r, const pass_env *env, char *buf, size_t n);
/* CTAs of T threads resident at once on sms SMs (TNS_REGS registers per thread) */
int64_t tns_wave(int sms, int T);

#endif
