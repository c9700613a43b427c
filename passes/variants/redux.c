/* reduction -> redux (warp scope): the local variant's plan (passes/local.h: per-thread fold of
 * the register slots, proved for the layout), with the cross-lane step done by one redux.sync
 * instead of a five-step shfl.sync.bfly tree.  Serves a reduction that spans all 32 lanes of the
 * warp (the plan's reduced lane bits are exactly 1, 2, 4, 8, 16), for
 *   - i32 / u32 sum, max, min, and, or, xor: redux.sync.{add,min,max,umin,umax,and,or,xor}.  The
 *     target table's IR_F_REDUX_I32 (sm_80+);
 *   - f32 max, min: redux.sync.{max,min}{.NaN}.f32 (.NaN when nan = propagate).  The target
 *     table's IR_F_REDUX_F32 (sm_100a/f, sm_103a/f: LLVM 22 aborts on the intrinsic elsewhere).
 * Anything else declines with the reason, and local (the shuffle tree) runs. */
#include "local.h"

#include <stdio.h>

static ir_feature feature(const rj_tile *t) {
  return t->dtype == RJ_F32 ? IR_F_REDUX_F32 : IR_F_REDUX_I32;
}

static const char *intrinsic(const rj_tile *t) {
  bool prop = t->nan == RJ_NAN_PROPAGATE;
  switch (t->dtype) {
  case RJ_F32:
    if (t->op == RJ_OP_MAX)
      return prop ? "llvm.nvvm.redux.sync.fmax.NaN" : "llvm.nvvm.redux.sync.fmax";
    if (t->op == RJ_OP_MIN)
      return prop ? "llvm.nvvm.redux.sync.fmin.NaN" : "llvm.nvvm.redux.sync.fmin";
    return NULL;
  case RJ_I32:
  case RJ_U32: {
    bool sgn = t->dtype == RJ_I32;
    switch (t->op) {
    case RJ_OP_SUM:
      return "llvm.nvvm.redux.sync.add";
    case RJ_OP_MAX:
      return sgn ? "llvm.nvvm.redux.sync.max" : "llvm.nvvm.redux.sync.umax";
    case RJ_OP_MIN:
      return sgn ? "llvm.nvvm.redux.sync.min" : "llvm.nvvm.redux.sync.umin";
    case RJ_OP_AND:
      return "llvm.nvvm.redux.sync.and";
    case RJ_OP_OR:
      return "llvm.nvvm.redux.sync.or";
    case RJ_OP_XOR:
      return "llvm.nvvm.redux.sync.xor";
    default:
      return NULL;
    }
  }
  default:
    return NULL;
  }
}

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  const rj_tile *t = &r->u.tile;
  const char *mapped =
      pass_fused_declined(&t->fused, "redux.sync folds the registers as they are", buf, n);
  if (mapped) return mapped;
  if (t->scope != RJ_SCOPE_WARP)
    return snprintf(buf, n, "scope is %s: redux.sync reduces across one warp (scope warp only)",
                    ir_scope_name(t->scope)),
           buf;
  if (pass_need_mem(t, RJ_MEM_LOCAL, buf, n)) return buf;
  if (!intrinsic(t))
    return snprintf(buf, n, "%s %s: redux.sync does %s", ir_dtype(t->dtype)->name,
                    ir_op_name(t->op),
                    t->op == RJ_OP_SUM || t->op == RJ_OP_MAX || t->op == RJ_OP_MIN
                        ? "i32/u32 sum, max, min and f32 max, min only"
                        : "and, or, xor of i32/u32 only"),
           buf;
  ir_feature f = feature(t);
  if (!(tg->features & f))
    return snprintf(buf, n, "target %s lacks %s", tg->name, ir_feature_name(f)), buf;
  pass_local_plan p;
  bool ok = pass_local_analyze(t, &p, buf, n);
  if (ok && p.nmask != 5) {
    char bits[64] = "";
    size_t k = 0;
    for (int i = 0; i < p.nmask && k < sizeof bits; i++)
      k += (size_t)snprintf(bits + k, sizeof bits - k, "%s%d", i ? "," : "", p.masks[i]);
    snprintf(buf, n,
             "the reduction spans lane bits {%s}, not all 32 lanes: redux.sync reduces the whole "
             "warp",
             bits);
    ok = false;
  }
  pass_local_plan_free(&p);
  return ok ? NULL : buf;
}

static LLVMValueRef cross(pass_emit *e, const rj_tile *t, const pass_local_plan *p,
                          LLVMValueRef acc) {
  (void)p;
  pass_need_feature(e, feature(t));
  LLVMValueRef args[2] = {acc, pass_i32(e, -1)};
  return pass_call(e, intrinsic(t), NULL, 0, args, 2);
}

static rj_status tile(pass_emit *e, const rj_tile *t, const pass_tile_args *a) {
  if (!intrinsic(t) || !(e->target->features & feature(t)))
    return ir_fail(e->err, RJ_ETARGET, "redux: target %s cannot do redux.sync for %s %s",
                   e->target->name, ir_dtype(t->dtype)->name, ir_op_name(t->op));
  pass_local_plan p;
  char why[512];
  rj_status s;
  if (!pass_local_analyze(t, &p, why, sizeof why))
    s = ir_fail(e->err, RJ_ENOVARIANT, "redux: %s", why);
  else if (p.nmask != 5)
    s = ir_fail(e->err, RJ_ENOVARIANT, "redux: not a reduction over all 32 lanes");
  else
    s = pass_local_emit(e, t, a, &p, cross);
  pass_local_plan_free(&p);
  return s;
}

const pass_variant pass_variant_redux = {
    .name = "redux",
    .prio = 15,
    .kind = RJ_KIND_TILE,
    .summary = "warp-scope register reduction over all 32 lanes with one redux.sync (i32/u32 "
               "sum/max/min/and/or/xor sm_80+, f32 max/min sm_100a/f)",
    .ops = PASS_OPS_BASIC | PASS_OP(RJ_OP_AND) | PASS_OP(RJ_OP_OR) | PASS_OP(RJ_OP_XOR),
    .ops_why = "redux.sync folds one 32-bit value per lane (add min max and or xor): no product, "
               "mean or multi-field state (argmax argmin var std logsumexp), and no caller's "
               "combine (op custom: the shared and local variants call it)",
    .accepts = accepts,
    .plan = pass_tile_plan,
    .kernel = PASS_EMIT(pass_tile_kernel),
    .tile = PASS_EMIT(tile),
};
