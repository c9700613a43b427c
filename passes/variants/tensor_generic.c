/* tensor_generic: any view the other tensor variants decline (several separated reduced dims,
 * non-unit innermost strides, broadcast dims).  G lanes per output (G = 1..32), each lane folds
 * reduced elements lane, lane + G, ... through constant-divisor index math, then a butterfly
 * tree of width G.  Correct for every valid view; not tuned. */
#include "../tensor.h"

#include <stdio.h>
#include <string.h>

#define GEN_U 4 /* guarded loads per lane per round (index math per load: kept small) */

/* G lanes per output (the reduced length, rounded up to a power of two, at most 32), CTAs of T. */
typedef struct generic_plan {
  int G, T;
} generic_plan;
_Static_assert(sizeof(generic_plan) <= PASS_PLAN_PRIV, "generic_plan fits the plan");

/* needs a request this variant accepts */
static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  int64_t g = tns_pow2(v.reduce_len);
  generic_plan p = {.G = (int)(g > 32 ? 32 : g), .T = 256};
  tns_plan_geometry(out, (unsigned)((v.outputs + p.T / p.G - 1) / (p.T / p.G)), (unsigned)p.T);
  char buf[256];
  if (r->u.tensor.dynamic) tns_plan_constant(out, tns_why_constant(r, env, buf, sizeof buf));
  memcpy(out->priv.bytes, &p, sizeof p);
  return RJ_OK;
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  const rj_tensor *t = &r->u.tensor;
  ir_tview v;
  ir_tensor_view(t, &v);
  generic_plan p;
  memcpy(&p, e->plan->priv.bytes, sizeof p);
  int G = p.G, T = p.T;
  LLVMValueRef src, dst;
  tns_begin(e, &src, &dst, 0, NULL);
  tns_launch_bounds(e, T, 4);
  LLVMTypeRef ty = pass_type(e, t->dtype), i64 = LLVMInt64TypeInContext(e->C);
  LLVMValueRef tid = pass_tid_x(e), bid = tns_ctaid(e);
  LLVMValueRef grp = LLVMBuildAdd(e->B, LLVMBuildMul(e->B, bid, pass_i32(e, T / G), ""),
                                  LLVMBuildUDiv(e->B, tid, pass_i32(e, G), ""), "");
  LLVMValueRef out = LLVMBuildZExt(e->B, grp, i64, "out");
  LLVMValueRef lane = LLVMBuildZExt(e->B, LLVMBuildURem(e->B, tid, pass_i32(e, G), ""), i64, "");
  LLVMValueRef valid = LLVMBuildICmp(e->B, LLVMIntULT, out, tns_i64(e, v.outputs), "");
  LLVMValueRef base =
      tns_fused_offset(e, &v, false, LLVMBuildSelect(e->B, valid, out, tns_i64(e, 0), ""));
  LLVMValueRef acc[GEN_U];
  tns_acc_init(e, t, acc, GEN_U);
  pass_loop l;
  LLVMValueRef len = LLVMBuildSelect(e->B, valid, tns_i64(e, v.reduce_len), tns_i64(e, 0), "");
  pass_loop_begin(e, &l, lane, len, tns_i64(e, (int64_t)G * GEN_U));
  for (int u = 0; u < GEN_U; u++) {
    LLVMValueRef ri = LLVMBuildAdd(e->B, l.i, tns_i64(e, (int64_t)u * G), "");
    pass_if in;
    pass_if_begin(e, &in, LLVMBuildICmp(e->B, LLVMIntSLT, ri, len, ""));
    LLVMValueRef off = LLVMBuildAdd(e->B, base, tns_fused_offset(e, &v, true, ri), "");
    tns_fold_elem(e, t, acc[u], tns_load(e, t, pass_gep(e, ty, src, off)),
                  tns_elem_idx(e, t, NULL, ri), NULL);
    pass_if_end(e, &in);
  }
  pass_loop_end(e, &l);
  LLVMValueRef val = tns_acc_total(e, t, acc, GEN_U);
  int masks[5], nm = 0;
  for (int m = G / 2; m >= 1; m /= 2)
    masks[nm++] = m;
  val = tns_bfly_tree(e, t, val, pass_i32(e, -1), masks, nm, G);
  tns_store_lane0(e, t, dst, out, tns_mean(e, t, val, tns_i64(e, v.reduce_len)), valid, lane);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_tensor_generic = {
    .name = "tensor_generic",
    .prio = 5,
    .kind = RJ_KIND_TENSOR,
    .summary = "any strided view: lanes per output, index math with constant divisors (untuned)",
    .ops = PASS_OPS_SCALAR | ST_OPS | PASS_OP(RJ_OP_CUSTOM),
    .invariant = true,
    .accepts = tns_accepts_any_view,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
