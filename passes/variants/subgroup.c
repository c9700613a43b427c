/* kind subgroup (seed 003): warp-level primitives, one kernel per request.
 *
 * The kernel: element i is owned by global thread i = blockIdx.x * threads + threadIdx.x;
 * out[i] = primitive(in[i]).  threads is a multiple of 32 (validated), so every warp is full and
 * the body is straight-line code: no branch, no call, no shared memory, no barrier; each
 * shfl.sync runs under the full mask.  The primitive emitters (pass_shfl, pass_subgroup) are
 * reused by the embedding API (embed/emit.c).  Semantics: docs/SUBGROUP.md. */
#include "../subgroup.h"

#include "../state.h"

#include <stdio.h>
#include <string.h>

static const char *const shfl_names[4][2] = {
    {"llvm.nvvm.shfl.sync.idx.i32", "llvm.nvvm.shfl.sync.idx.f32"},
    {"llvm.nvvm.shfl.sync.up.i32", "llvm.nvvm.shfl.sync.up.f32"},
    {"llvm.nvvm.shfl.sync.down.i32", "llvm.nvvm.shfl.sync.down.f32"},
    {"llvm.nvvm.shfl.sync.bfly.i32", "llvm.nvvm.shfl.sync.bfly.f32"},
};

static LLVMValueRef shfl32(pass_emit *e, pass_shfl_mode m, LLVMValueRef v, LLVMValueRef b) {
  bool f = LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMFloatTypeKind;
  /* c: up clamps at lane 0 (segment mask 0, clamp 0); the others at lane 31 */
  LLVMValueRef args[4] = {pass_i32(e, -1), v, b, pass_i32(e, m == PASS_SHFL_UP ? 0 : 0x1f)};
  return pass_call(e, shfl_names[m][f], NULL, 0, args, 4);
}

LLVMValueRef pass_shfl(pass_emit *e, pass_shfl_mode m, LLVMValueRef v, LLVMValueRef b) {
  LLVMTypeRef ty = LLVMTypeOf(v), i32 = LLVMInt32TypeInContext(e->C);
  LLVMTypeKind k = LLVMGetTypeKind(ty);
  unsigned bits = k == LLVMIntegerTypeKind                           ? LLVMGetIntTypeWidth(ty)
                  : k == LLVMDoubleTypeKind                          ? 64
                  : k == LLVMHalfTypeKind || k == LLVMBFloatTypeKind ? 16
                                                                     : 32;
  if (bits == 32) return shfl32(e, m, v, b);
  if (bits == 16) {
    LLVMTypeRef i16 = LLVMInt16TypeInContext(e->C);
    LLVMValueRef x = k == LLVMIntegerTypeKind ? v : LLVMBuildBitCast(e->B, v, i16, "");
    x = shfl32(e, m, LLVMBuildZExt(e->B, x, i32, ""), b);
    x = LLVMBuildTrunc(e->B, x, i16, "");
    return k == LLVMIntegerTypeKind ? x : LLVMBuildBitCast(e->B, x, ty, "");
  }
  /* 64-bit: the two 32-bit halves, each shuffled from the same source lane */
  LLVMTypeRef v2 = LLVMVectorType(i32, 2);
  LLVMValueRef pair = LLVMBuildBitCast(e->B, v, v2, "");
  LLVMValueRef lo = shfl32(e, m, LLVMBuildExtractElement(e->B, pair, pass_i32(e, 0), ""), b);
  LLVMValueRef hi = shfl32(e, m, LLVMBuildExtractElement(e->B, pair, pass_i32(e, 1), ""), b);
  pair = LLVMBuildInsertElement(e->B, LLVMGetUndef(v2), lo, pass_i32(e, 0), "");
  pair = LLVMBuildInsertElement(e->B, pair, hi, pass_i32(e, 1), "");
  return LLVMBuildBitCast(e->B, pair, ty, "");
}

LLVMValueRef pass_lane_id(pass_emit *e) {
  return pass_call(e, "llvm.nvvm.read.ptx.sreg.laneid", NULL, 0, NULL, 0);
}

const char *pass_subgroup_dtype_reason(rj_primitive p, rj_dtype t) {
  return ir_primitive_dtype_reason(p, t);
}

/* and / or / xor of a 32-bit integer over the whole warp (k = 5) as one redux.sync, where the
 * target has it (sm_80+): every lane gets the result, which serves reduce_* and reduce_all_*.
 * NULL: the shuffle tree. */
static const char *redux_intrinsic(pass_emit *e, rj_op op, rj_dtype t, int k) {
  if (k != 5 || (t != RJ_I32 && t != RJ_U32) || !e->target ||
      !(e->target->features & IR_F_REDUX_I32))
    return NULL;
  return op == RJ_OP_AND   ? "llvm.nvvm.redux.sync.and"
         : op == RJ_OP_OR  ? "llvm.nvvm.redux.sync.or"
         : op == RJ_OP_XOR ? "llvm.nvvm.redux.sync.xor"
                           : NULL;
}

/* A reduce primitive: op over groups of 2^k lanes, a shuffle-down tree (offsets 2^(k-1) .. 1;
 * lane 0 of each group holds the result) or, for reduce_all_*, an xor butterfly (masks
 * 1 .. 2^(k-1); every lane). */
static LLVMValueRef reduce(pass_emit *e, rj_op op, bool all, rj_dtype t, int k, LLVMValueRef v) {
  const char *rx = redux_intrinsic(e, op, t, k);
  if (rx) {
    pass_need_feature(e, IR_F_REDUX_I32);
    LLVMValueRef args[2] = {v, pass_i32(e, -1)};
    return pass_call(e, rx, NULL, 0, args, 2);
  }
  LLVMValueRef acc = pass_to_acc(e, v, t);
  if (!all) {
    for (int i = k - 1; i >= 0; i--)
      acc = pass_combine(e, op, t, RJ_NAN_PROPAGATE, acc,
                         pass_shfl(e, PASS_SHFL_DOWN, acc, pass_i32(e, 1 << i)));
  } else {
    for (int i = 0; i < k; i++)
      acc = pass_combine(e, op, t, RJ_NAN_PROPAGATE, acc,
                         pass_shfl(e, PASS_SHFL_BFLY, acc, pass_i32(e, 1 << i)));
  }
  return pass_from_acc(e, acc, t);
}

/* A state's fields shuffled one by one (mode m, argument b). */
static LLVMValueRef shfl_state(pass_emit *e, pass_shfl_mode m, LLVMValueRef s, LLVMValueRef b) {
  unsigned n = LLVMCountStructElementTypes(LLVMTypeOf(s));
  for (unsigned i = 0; i < n; i++)
    s = LLVMBuildInsertValue(e->B, s, pass_shfl(e, m, LLVMBuildExtractValue(e->B, s, i, ""), b), i,
                             "");
  return s;
}

/* A state op (argmax argmin var std logsumexp; passes/state.h) over groups of 2^k lanes: each lane
 * the state of its value (argmax / argmin: its index in the group, lane & (2^k - 1)), the same
 * trees as the other reductions moving the state field by field, the result st_finish's (an i64
 * index, or the input's dtype).  NaN propagates. */
static LLVMValueRef reduce_state(pass_emit *e, rj_op op, bool all, rj_dtype t, int k,
                                 int correction, LLVMValueRef v) {
  st_req st = {op, t, RJ_NAN_PROPAGATE, correction, NULL, 0, false, false};
  LLVMValueRef idx = NULL;
  if (st_indexed(op))
    idx = LLVMBuildZExt(e->B, LLVMBuildAnd(e->B, pass_lane_id(e), pass_i32(e, (1 << k) - 1), ""),
                        LLVMInt64TypeInContext(e->C), "");
  LLVMValueRef s = st_elem(e, &st, pass_to_acc(e, v, t), idx);
  for (int i = 0; i < k; i++) {
    int off = all ? 1 << i : 1 << (k - 1 - i);
    s = st_combine(e, &st, s,
                   shfl_state(e, all ? PASS_SHFL_BFLY : PASS_SHFL_DOWN, s, pass_i32(e, off)));
  }
  return st_finish(e, &st, s);
}

/* Op custom over groups of 2^k lanes, the caller's combine called on the dtype itself (f16 /
 * bf16 too: no f32 accumulator), or with a struct state st (NULL: scalar) on the states: each
 * lane lifts its value with its index in the group (lane & (2^k - 1)), the trees shuffle the
 * state field by field and the result is finish's (or field result).  commutative: the trees of
 * the built-in ops (the same order as reduce_add's).  Not: lane order kept, fn(lower lanes, higher
 * lanes) at every step -- reduce_custom a shuffle-down tree of offsets 1 .. 2^(k-1) (lane 0 of a
 * group ends with its lanes in order: the lanes at multiples of 2^(i+1) hold contiguous runs),
 * reduce_all_custom the ordered butterfly (the lane with the mask's bit set takes the partner's
 * value first). */
static LLVMValueRef reduce_custom(pass_emit *e, const st_req *st, bool all, rj_dtype t, int k,
                                  bool commutative, LLVMValueRef v) {
  LLVMValueRef lane = all && !commutative ? pass_lane_id(e) : NULL;
  if (st) {
    LLVMValueRef idx = LLVMBuildAnd(e->B, pass_lane_id(e), pass_i32(e, (1 << k) - 1), "");
    idx = LLVMBuildZExt(e->B, idx, LLVMInt64TypeInContext(e->C), "");
    v = st_elem(e, st, pass_to_acc(e, v, t), idx);
  }
  for (int i = 0; i < k; i++) {
    int off = commutative && !all ? 1 << (k - 1 - i) : 1 << i;
    pass_shfl_mode m = all ? PASS_SHFL_BFLY : PASS_SHFL_DOWN;
    LLVMValueRef o =
        st ? shfl_state(e, m, v, pass_i32(e, off)) : pass_shfl(e, m, v, pass_i32(e, off));
    LLVMValueRef a = v, b = o;
    if (lane) {
      LLVMValueRef hi = LLVMBuildICmp(
          e->B, LLVMIntNE, LLVMBuildAnd(e->B, lane, pass_i32(e, off), ""), pass_i32(e, 0), "");
      a = LLVMBuildSelect(e->B, hi, o, v, "");
      b = LLVMBuildSelect(e->B, hi, v, o, "");
    }
    v = st ? st_combine(e, st, a, b) : pass_combine(e, RJ_OP_CUSTOM, t, RJ_NAN_PROPAGATE, a, b);
  }
  return st ? st_finish(e, st, v) : v;
}

rj_status pass_subgroup_custom(pass_emit *e, rj_primitive p, rj_dtype t, int k, bool commutative,
                               LLVMValueRef v, LLVMValueRef *out) {
  *out = NULL;
  bool all = false;
  if (ir_primitive_op(p, &all) != RJ_OP_CUSTOM)
    return ir_fail(e->err, RJ_EINVAL, "primitive: %s is not reduce_custom or reduce_all_custom",
                   ir_primitive_name(p));
  if (!ir_dtype(t)) return ir_fail(e->err, RJ_EINVAL, "dtype: unknown value");
  if (k < 0 || k > 5)
    return ir_fail(e->err, RJ_EINVAL, "log2_size: %d is outside 0..5 (a group is 1 to 32 lanes)",
                   k);
  if (!v || LLVMTypeOf(v) != pass_type(e, t))
    return ir_fail(e->err, RJ_EINVAL, "value: its LLVM type is not the storage type of dtype %s",
                   ir_dtype(t)->name);
  *out = reduce_custom(e, NULL, all, t, k, commutative, v);
  return RJ_OK;
}

rj_status pass_subgroup(pass_emit *e, rj_primitive p, rj_dtype t, int k, LLVMValueRef v,
                        LLVMValueRef arg, int correction, LLVMValueRef *out) {
  *out = NULL;
  const char *why = pass_subgroup_dtype_reason(p, t);
  if (why) return ir_fail(e->err, RJ_EINVAL, "dtype: %s", why);
  if ((unsigned)p >= IR_PRIMITIVES) return ir_fail(e->err, RJ_EINVAL, "primitive: unknown value");
  if (ir_primitive_op(p, NULL) == RJ_OP_CUSTOM)
    return ir_fail(e->err, RJ_EINVAL,
                   "primitive: %s calls the caller's combine, linked only where a kind subgroup "
                   "request is compiled (rj_compile); no emitter takes it",
                   ir_primitive_name(p));
  bool all = false;
  int op = ir_primitive_op(p, &all);
  if (op >= 0 && (k < 0 || k > 5))
    return ir_fail(e->err, RJ_EINVAL, "log2_size: %d is outside 0..5 (a group is 1 to 32 lanes)",
                   k);
  if (p == RJ_PRIM_INVOCATION_ID) {
    LLVMValueRef id = pass_lane_id(e);
    LLVMTypeRef ty = pass_type(e, t);
    *out = ir_dtype(t)->bytes == 8 ? LLVMBuildZExt(e->B, id, ty, "") : id;
    return RJ_OK;
  }
  if (!v) return ir_fail(e->err, RJ_EINVAL, "value: missing");
  if (LLVMTypeOf(v) != pass_type(e, t))
    return ir_fail(e->err, RJ_EINVAL, "value: its LLVM type is not the storage type of dtype %s",
                   ir_dtype(t)->name);
  if (op >= 0 && st_is((rj_op)op)) {
    if (correction < 0 || correction > 1 << 30)
      return ir_fail(e->err, RJ_EINVAL, "correction: %d, expected 0 .. 2^30", correction);
    *out = reduce_state(e, (rj_op)op, all, t, k, correction, v);
    return RJ_OK;
  }
  if (op >= 0) {
    *out = reduce(e, (rj_op)op, all, t, k, v);
    return RJ_OK;
  }
  if (!arg || LLVMTypeOf(arg) != LLVMInt32TypeInContext(e->C))
    return ir_fail(e->err, RJ_EINVAL, "arg: %s needs an i32 lane, offset or mask",
                   ir_primitive_name(p));
  pass_shfl_mode m = p == RJ_PRIM_SHUFFLE_UP     ? PASS_SHFL_UP
                     : p == RJ_PRIM_SHUFFLE_DOWN ? PASS_SHFL_DOWN
                     : p == RJ_PRIM_SHUFFLE_XOR  ? PASS_SHFL_BFLY
                                                 : PASS_SHFL_IDX;
  LLVMValueRef r = pass_shfl(e, m, v, arg);
  /* an argument outside 0..31 keeps the lane's own value (folds away for constants) */
  LLVMValueRef in = LLVMBuildICmp(e->B, LLVMIntULT, arg, pass_i32(e, 32), "");
  *out = LLVMBuildSelect(e->B, in, r, v, "");
  return RJ_OK;
}

/* ---------------------------------------------------------------- the variant */

static const char *accepts(const rj_request *r, const ir_target *t, char *buf, size_t n) {
  (void)t;
  const char *why = pass_subgroup_dtype_reason(r->u.subgroup.primitive, r->u.subgroup.dtype);
  if (!why) return NULL;
  snprintf(buf, n, "dtype: %s", why);
  return buf;
}

/* The launch: `blocks` CTAs of `threads` threads, no dynamic shared memory. */
static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  (void)env;
  const rj_subgroup *g = &r->u.subgroup;
  out->grid[0] = (unsigned)g->blocks;
  out->grid[1] = out->grid[2] = 1;
  out->block[0] = (unsigned)g->threads;
  out->block[1] = out->block[2] = 1;
  out->shared_bytes = 0;
  return RJ_OK;
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  const rj_subgroup *g = &r->u.subgroup;
  LLVMTypeRef gptr = LLVMPointerTypeInContext(e->C, AS_GLOBAL);
  LLVMTypeRef params[2] = {gptr, gptr};
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(e->C), params, 2, 0);
  e->entry = "redjit_subgroup";
  e->fn = LLVMAddFunction(e->M, e->entry, fty);
  LLVMSetFunctionCallConv(e->fn, LLVMPTXKernelCallConv);
  LLVMPositionBuilderAtEnd(e->B, LLVMAppendBasicBlockInContext(e->C, e->fn, "entry"));
  LLVMTypeRef ty = pass_type(e, g->dtype);
  LLVMValueRef bid = pass_call(e, "llvm.nvvm.read.ptx.sreg.ctaid.x", NULL, 0, NULL, 0);
  LLVMValueRef gid = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, bid, pass_i32(e, g->threads), ""),
                                  pass_tid_x(e), "gid");
  LLVMValueRef x = LLVMBuildLoad2(e->B, ty, pass_gep(e, ty, LLVMGetParam(e->fn, 0), gid), "x");
  LLVMValueRef arg = pass_i32(e, g->arg);
  if (g->primitive == RJ_PRIM_SHUFFLE && g->index_is_list) {
    int32_t tab[32];
    for (int i = 0; i < 32; i++)
      tab[i] = g->index[i];
    LLVMValueRef table = pass_const_table_i32(e, tab, 32, "rj_shfl_index");
    LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C);
    arg = LLVMBuildLoad2(e->B, i32, pass_gep(e, i32, table, pass_lane_id(e)), "index");
  }
  LLVMValueRef y = NULL;
  st_req st = st_of_subgroup(g); /* op custom's struct state (combine.nfields > 0) */
  bool all = false, custom = ir_primitive_op(g->primitive, &all) == RJ_OP_CUSTOM;
  rj_status s = RJ_OK;
  if (custom && st.combine->nfields > 0)
    y = reduce_custom(e, &st, all, g->dtype, g->log2_size, g->combine.commutative != 0, x);
  else if (custom)
    s = pass_subgroup_custom(e, g->primitive, g->dtype, g->log2_size, g->combine.commutative != 0,
                             x, &y);
  else
    s = pass_subgroup(e, g->primitive, g->dtype, g->log2_size, x, arg, g->correction, &y);
  if (s) return s;
  LLVMTypeRef oty = pass_type(e, ir_subgroup_result(g)); /* argmax: i64; a struct state: field
                                                             result's dtype */
  LLVMBuildStore(e->B, y, pass_gep(e, oty, LLVMGetParam(e->fn, 1), gid));
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_subgroup = {
    .name = "subgroup",
    .prio = 10,
    .kind = RJ_KIND_SUBGROUP,
    .summary = "warp primitives: shfl.sync idx/up/down/bfly, shuffle-down and butterfly trees "
               "(64-bit as two 32-bit shuffles), redux.sync for 32-bit and/or/xor, states field "
               "by field, the caller's combine in lane order",
    .ops = PASS_OPS_BASIC | PASS_OP(RJ_OP_CUSTOM), /* kind subgroup's op: custom or none */
    .keeps_order = true, /* reduce_custom / reduce_all_custom: lane order kept when asked */
    .accepts = accepts,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
    .tile = NULL,
};
