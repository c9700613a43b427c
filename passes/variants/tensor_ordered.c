/* tensor_ordered: op custom with a non-commutative combine, on any view.  One warp per output:
 * lane l folds the l-th contiguous chunk of the reduced elements (ceil(len / 32) of them, in
 * index order, one accumulator), then a butterfly over ascending lane masks 1, 2, 4, 8, 16 with
 * combine(own, other).  The value that reaches lane 0 only ever combines a lower lane's range
 * (own) with the next higher one's (other), so lane 0 holds combine over the elements in index
 * order: combine(lower, higher) everywhere.  A struct state (op custom's combine.state) is
 * shuffled field by field, as in every tensor variant.  Correct for every valid view; not tuned
 * (each lane reads its own chunk: loads do not coalesce). */
#include "../tensor.h"

#include <stdio.h>
#include <string.h>

#define ORD_T 256 /* threads per CTA: 8 outputs */

static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  (void)env;
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  int per = ORD_T / 32;
  tns_plan_geometry(out, (unsigned)((v.outputs + per - 1) / per), ORD_T);
  if (r->u.tensor.dynamic) tns_plan_constant(out, "tensor_ordered has no runtime-size kernel");
  return RJ_OK;
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  const rj_tensor *t = &r->u.tensor;
  ir_tview v;
  ir_tensor_view(t, &v);
  LLVMValueRef src, dst;
  tns_begin(e, &src, &dst, 0, NULL);
  tns_launch_bounds(e, ORD_T, 4);
  LLVMTypeRef ty = pass_type(e, t->dtype), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef tid = pass_tid_x(e), bid = tns_ctaid(e);
  LLVMValueRef grp = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, bid, pass_i32(e, ORD_T / 32), ""),
                                  LLVMBuildUDiv(e->B, tid, pass_i32(e, 32), ""), "");
  LLVMValueRef out = LLVMBuildZExt(e->B, grp, i64, "out");
  LLVMValueRef lane = LLVMBuildZExt(e->B, LLVMBuildURem(e->B, tid, pass_i32(e, 32), ""), i64, "");
  LLVMValueRef valid = LLVMBuildICmp(e->B, LLVMIntULT, out, tns_i64(e, v.outputs), "");
  LLVMValueRef base =
      tns_fused_offset(e, &v, false, LLVMBuildSelect(e->B, valid, out, tns_i64(e, 0), ""));
  int64_t chunk = (v.reduce_len + 31) / 32;
  LLVMValueRef len = LLVMBuildSelect(e->B, valid, tns_i64(e, v.reduce_len), tns_i64(e, 0), "");
  LLVMValueRef lo = LLVMBuildMul(e->B, lane, tns_i64(e, chunk), "");
  LLVMValueRef hi = tns_min64(e, LLVMBuildAdd(e->B, lo, tns_i64(e, chunk), ""), len);
  LLVMValueRef acc;
  tns_acc_init(e, t, &acc, 1);
  pass_loop l;
  pass_loop_begin(e, &l, lo, hi, tns_i64(e, 1));
  LLVMValueRef off = LLVMBuildAdd(e->B, base, tns_fused_offset(e, &v, true, l.i), "");
  tns_fold_elem(e, t, acc, tns_load(e, t, pass_gep(e, ty, src, off)), tns_elem_idx(e, t, NULL, l.i),
                NULL);
  pass_loop_end(e, &l);
  LLVMValueRef val = LLVMBuildLoad2(e->B, tns_acc_type(e, t), acc, "");
  static const int masks[5] = {1, 2, 4, 8, 16}; /* ascending: lane 0 keeps index order */
  val = tns_bfly_tree(e, t, val, pass_i32(e, -1), masks, 5, 32);
  tns_store_lane0(e, t, dst, out, val, valid, lane);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_tensor_ordered = {
    .name = "tensor_ordered",
    .prio = 4,
    .kind = RJ_KIND_TENSOR,
    .summary = "op custom in index order (a non-commutative combine): a warp per output, lanes "
               "fold contiguous chunks, an ascending butterfly (untuned)",
    .ops = PASS_OP(RJ_OP_CUSTOM),
    .keeps_order = true,
    .invariant = true,
    .accepts = tns_accepts_any_view,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
