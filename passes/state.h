/* Ops whose accumulator is a state of several fields (passes/state.c): argmax / argmin (the
 * extreme and its index), var / std (Welford: count, mean, M2), logsumexp (the running max m and
 * the sum s of exp(x - m)).  A state is an LLVM struct value; the tensor variants hold it where
 * they hold a sum/max/min accumulator (registers, shared memory, the split workspaces) and fold it
 * with st_combine in the same fixed orders, so every result is deterministic.
 *
 *   argmax / argmin  {acc value, i64 index}; identity {-inf / +inf (integers: the limits), -1}.
 *                    a beats b on a larger (smaller) value, or an equal value and a smaller index
 *                    (unsigned: the identity's -1 loses every tie); under nan "propagate" a NaN
 *                    beats every number and NaNs tie.  A total order: any fold order gives the
 *                    first index of the extreme.
 *   var / std        {i64 n, W mean, W M2}, W = f32 (f16 bf16 f32) or f64; Chan's combine, an
 *                    empty side returned exactly; result M2 / max(0, n - correction) (as torch:
 *                    inf or nan when n <= correction), std its square root.
 *   logsumexp        {W m, W s}; one exp per combine (the smaller max's sum is scaled); result
 *                    m + log(s): -inf for -inf rows (and empty ones), +inf when an element is.
 *   masked mean      {W s, i64 n} (a tensor's op mean of map "where", W its accumulator): the
 *                    selected elements' sum and count (n an i32 where every output's count fits:
 *                    count32), each element {x or 0, 1 or 0} from the map
 *                    (tns_map); result s / n in W (NaN for no element), rounded by tns_store.
 *   custom           the caller's state (rj_combine): a literal struct of its fields, or
 *                    {T} for an f16 / bf16 scalar state; element states, combines and the result
 *                    are calls of PASS_CUSTOM_LIFT / _COMBINE / _FINISH (or field selection),
 *                    linked to the caller's functions in the compiler (jit/llvm/combine.c).
 * Under nan "ignore" a NaN element folds as the identity (st_elem). */
#ifndef RJ_PASSES_STATE_H
#define RJ_PASSES_STATE_H

#include "passes.h"

#define ST_OPS                                                                                     \
  (PASS_OP(RJ_OP_ARGMAX) | PASS_OP(RJ_OP_ARGMIN) | PASS_OP(RJ_OP_VAR) | PASS_OP(RJ_OP_STD) |       \
   PASS_OP(RJ_OP_LOGSUMEXP))

bool st_is(rj_op op); /* a state op */
/* What the state code reads of a request, whatever its kind: op, dtype, nan, correction and op
 * custom's combine (a pointer into the request; NULL where there is none).  Kind subgroup: the
 * primitive's op (RJ_OP_SUM for one without), nan propagate; kind treduce: correction (it has
 * no var / std), 0. */
typedef struct st_req {
  rj_op op;
  rj_dtype dtype;
  rj_nan nan;
  int correction;
  const rj_combine *combine;
  int exact;    /* 1: IEEE-rounded operations only (no MUFU approximations): invariant requests */
  bool masked;  /* a tensor's op mean of map "where": the masked mean state (dtype: its W) */
  bool count32; /* the masked mean's count in an i32: a constant kernel of reduced length < 2^31 */
} st_req;
st_req st_of_tensor(const rj_tensor *t);
st_req st_of_tile(const rj_tile *t);
st_req st_of_subgroup(const rj_subgroup *g);
st_req st_of_treduce(const rj_treduce *t);
bool st_indexed(rj_op op); /* argmax / argmin: folds need each element's index */
/* t's accumulator is a state: a state op, or op custom with a struct state (or an f16 / bf16
 * input, whose scalar state is held as a struct of one field). */
bool st_on(const st_req *t);
/* t's element states take each element's index: argmax / argmin, op custom's lift. */
bool st_wants_index(const st_req *t);
/* Bytes of one state, at most (workspace sizing). */
int st_bytes(const st_req *t);
LLVMTypeRef st_type(pass_emit *e, const st_req *t);
LLVMValueRef st_identity(pass_emit *e, const st_req *t);
/* The state of one element x (acc type) at index idx (i64; NULL unless st_indexed). */
LLVMValueRef st_elem(pass_emit *e, const st_req *t, LLVMValueRef x, LLVMValueRef idx);
LLVMValueRef st_combine(pass_emit *e, const st_req *t, LLVMValueRef a, LLVMValueRef b);
/* shfl.sync.bfly of a state, field by field (64-bit fields as two 32-bit shuffles). */
LLVMValueRef st_shfl_bfly(pass_emit *e, LLVMValueRef v, LLVMValueRef mm, int lanemask, int width);
/* A thread's slot: what one accumulator of a tensor kernel folds its elements into, one at a time
 * and in increasing index order (a lane's elements of its rows, columns or fused index), before
 * st_slot_state turns it into a state for the shuffles, shared memory and workspaces.
 *   argmax / argmin  the state; an element replaces it when strictly better, or when the slot is
 *                    still empty (index -1): the earlier element keeps a tie.
 *   var / std        {i64 n, W k, W s1, W s2}: s1 and s2 sum d and d * d for d = x - k, k the
 *                    slot's first element (set lazily); one subtract, add and fma per element,
 *                    no division; st_slot_state makes (n, k + s1 / n, s2 - s1 * s1 / n).
 *   logsumexp        the state {m, s}: one exp per element, exp(-|x - m|), and no branch; a
 *                    round (st_slot_fold_round) takes its max first, then exp(x - max) each.
 *   custom           the state; each element's st_elem is combined in (st_combine), in order.
 * Under nan "ignore" a NaN element is skipped; ok (i1, or NULL: true) skips the element too. */
LLVMTypeRef st_slot_type(pass_emit *e, const st_req *t);
LLVMValueRef st_slot_identity(pass_emit *e, const st_req *t);
LLVMValueRef st_slot_fold(pass_emit *e, const st_req *t, LLVMValueRef s, LLVMValueRef x,
                          LLVMValueRef idx, LLVMValueRef ok);
LLVMValueRef st_slot_state(pass_emit *e, const st_req *t, LLVMValueRef s);
/* A round of n elements x[0 .. n) of one slot at once (in index order; idx[i] as st_slot_fold's,
 * idx NULL when not st_indexed; ok[i] as its ok, NULL entries true).  logsumexp: the round's max
 * first, then one exp per element ("online softmax"); the others: st_slot_fold in turn. */
LLVMValueRef st_slot_fold_round(pass_emit *e, const st_req *t, LLVMValueRef s, LLVMValueRef *x,
                                LLVMValueRef *idx, LLVMValueRef *ok, int n);
/* Two slots of one output as one (var / std: b's sums moved to a's shift; the others:
 * st_combine), so that slots fold into one before their single st_slot_state. */
LLVMValueRef st_slot_combine(pass_emit *e, const st_req *t, LLVMValueRef a, LLVMValueRef b);
/* The butterfly tree v = combine(v, st_shfl_bfly(v, m)) for each m in masks, in order. */
LLVMValueRef st_bfly_tree(pass_emit *e, const st_req *t, LLVMValueRef v, LLVMValueRef mm,
                          const int *masks, int n, int width);
/* The result in the storage type of ir_op_result (argmax: the i64 index); the masked mean: s / n
 * in its W (tns_store applies the epilogue and rounds). */
LLVMValueRef st_finish(pass_emit *e, const st_req *t, LLVMValueRef s);
/* A volatile load of a state, field by field. */
LLVMValueRef st_load_volatile(pass_emit *e, LLVMTypeRef ty, LLVMValueRef p);
/* log(x) in the working float of t (f64 for f64, else f32) from plain arithmetic: NaN kept, x < 0
 * NaN, 0 -inf, +inf +inf, subnormals scaled first */
LLVMValueRef st_log(pass_emit *e, rj_dtype t, LLVMValueRef x);

/* Tile variants (shared, local): the accumulator of a tile's op, a scalar of the accumulation
 * type folded by emit.c (sum max min prod and or xor mean, op custom of a 32- or 64-bit dtype:
 * exactly pass_identity / pass_fold / pass_bfly_tree) or a state (the state ops; op custom with
 * a struct state, or of f16 / bf16, its scalar held as a struct of one field, st_on). */
bool st_tile_on(const rj_tile *t); /* the tile's accumulator is a state (st_on) */
LLVMTypeRef st_tile_acc_type(pass_emit *e, const rj_tile *t);
LLVMValueRef st_tile_identity(pass_emit *e, const rj_tile *t);
/* acc folded with element x (the acc type of the dtype) at index idx of the reduction (i32 or
 * i64; read by argmax / argmin and op custom's lift only: st_wants_index). */
LLVMValueRef st_tile_fold(pass_emit *e, const rj_tile *t, LLVMValueRef acc, LLVMValueRef x,
                          LLVMValueRef idx);
/* The butterfly over masks; op custom with a non-commutative combine: lane order kept, every
 * lane's result fn over its lanes from the lowest (the masks are lane bits, below 32). */
LLVMValueRef st_tile_tree(pass_emit *e, const rj_tile *t, LLVMValueRef v, LLVMValueRef mm,
                          const int *masks, int n, int width);

#endif
