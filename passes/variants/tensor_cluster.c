/* tensor_cluster: a 1-D reduction of 32 KiB .. 4 MiB-class size (2^11 .. 2^18 16-byte vectors)
 * by one thread-block cluster of C = 8 CTAs, finished on chip: no workspace, no counter, no
 * fence / atomic hand-off, one launch.
 *
 *   every thread arrives at a cluster barrier (.relaxed where the target's PTX has it): CUDA
 *     needs every CTA of a cluster running before one touches another's shared memory;
 *   every thread of the cluster is lane rank * T + tid of C * T lanes over the whole array
 *     (tns_row_segment: 16-byte vector loads, U in flight per lane, scalar head and tail);
 *   each CTA folds its T lanes (warp trees, then warp 0 over the warp partials);
 *   every thread waits on that barrier: now every CTA of the cluster has started;
 *   thread 0 of CTA `rank` stores the CTA's value into slot `rank` of CTA 0's shared memory
 *     (mapa + st.shared::cluster);
 *   barrier.cluster.arrive (release) / barrier.cluster.wait (acquire);
 *   warp 0 of CTA 0 folds the C slots with a butterfly tree and lane 0 stores the result.
 *
 * The state ops (argmax argmin var std logsumexp) travel the same path as a state (tns_acc_*:
 * each slot of CTA 0 holds one, stored field by field through mapa).
 * The fold order is fixed by the shape and the source's alignment (deterministic).  Needs
 * thread-block clusters (the target table's IR_F_CLUSTER: sm_90 and later); the cluster size is
 * a compile-time attribute (.reqnctapercluster), so a plain cuLaunchKernel launches it. */
#include "../tensor.h"

#include <stdio.h>
#include <string.h>

/* CTAs per cluster: the portable maximum.  Vectors served: from just past one CTA's reach (up to
 * there a single CTA of tensor_rows is as fast) to where the whole chip (tensor_rows) wins. */
#define CL_C 8
#define CL_MIN_NV (1024 * 2 * TNS_U + 1)
#define CL_MAX_NV (CL_C * 1024 * 8)

typedef struct cluster_plan {
  int64_t N;
  int vec, T, U;
} cluster_plan;

static void make_plan(const rj_tensor *t, const ir_tview *v, cluster_plan *p) {
  p->N = v->size[0];
  p->vec = tns_vec(t->dtype);
  int64_t nv = (p->N + p->vec - 1) / p->vec;
  int64_t T = tns_pow2((nv + CL_C - 1) / CL_C);
  p->T = (int)(T < 128 ? 128 : T > 1024 ? 1024 : T);
  int64_t per = (nv + (int64_t)CL_C * p->T - 1) / ((int64_t)CL_C * p->T); /* vectors per lane */
  p->U = (int)(per < 1 ? 1 : per > TNS_U ? TNS_U : per);
}

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  if (tns_classify(&v) != TNS_ROWS || v.n != 1 || v.stride[0] != 1)
    return "not a 1-D reduction of a unit-stride array (one output)";
  bool forced = r->variant[0] && strcmp(r->variant, "auto") != 0;
  if (r->u.tensor.dynamic && !forced)
    return "dynamic: the cluster kernel's sizes are JIT constants (tensor_rows has the runtime-size "
           "kernel)";
  if (!(tg->features & IR_F_CLUSTER))
    return snprintf(buf, n, "target %s lacks %s (sm_90 and later)", tg->name,
                    ir_feature_name(IR_F_CLUSTER)),
           buf;
  int vec = tns_vec(r->u.tensor.dtype);
  int64_t nv = (v.size[0] + vec - 1) / vec;
  if (nv < CL_MIN_NV || nv > CL_MAX_NV)
    return snprintf(buf, n,
                    "%lld elements: one cluster serves %d .. %d 16-byte vectors (%lld .. %lld "
                    "elements of %s)",
                    (long long)v.size[0], CL_MIN_NV, CL_MAX_NV, (long long)CL_MIN_NV * vec,
                    (long long)CL_MAX_NV * vec, ir_dtype(r->u.tensor.dtype)->name),
           buf;
  return NULL;
}

/* Every thread of the cluster arrives at the cluster barrier: .relaxed (nothing to publish
 * yet) where the target's least PTX has it (8.0), else the plain arrive (.release: stronger, PTX
 * 7.8), so the kernel's PTX version does not rise. */
static void arrive_started(pass_emit *e) {
  pass_call(e,
            e->target->min_ptx >= 80 ? "llvm.nvvm.barrier.cluster.arrive.relaxed"
                                     : "llvm.nvvm.barrier.cluster.arrive",
            NULL, 0, NULL, 0);
}

_Static_assert(sizeof(cluster_plan) <= PASS_PLAN_PRIV, "cluster_plan fits the plan");

/* needs a request this variant accepts */
static rj_status plan(const rj_request *r, const pass_env *env, pass_plan *out) {
  const rj_tensor *t = &r->u.tensor;
  ir_tview v;
  ir_tensor_view(t, &v);
  cluster_plan p;
  make_plan(t, &v, &p);
  tns_plan_geometry(out, CL_C, (unsigned)p.T);
  char buf[256];
  if (t->dynamic) tns_plan_constant(out, tns_why_constant(r, env, buf, sizeof buf));
  memcpy(out->priv.bytes, &p, sizeof p);
  return RJ_OK;
}

static rj_status kernel(pass_emit *e, const rj_request *r, const pass_variant *self) {
  (void)self;
  const rj_tensor *t = &r->u.tensor;
  cluster_plan p;
  memcpy(&p, e->plan->priv.bytes, sizeof p);
  LLVMValueRef src, dst;
  tns_begin(e, &src, &dst, 0, NULL);
  int need = ir_feature_ptx(e->target, IR_F_CLUSTER);
  if (need > e->ptx_needed) e->ptx_needed = need;
  tns_launch_bounds(e, p.T, 1);
  char dims[32];
  snprintf(dims, sizeof dims, "%d,1,1", CL_C);
  LLVMAddTargetDependentFunctionAttr(e->fn, "nvvm.cluster_dim", dims);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(e->C), acc_ty = tns_acc_type(e, t);
  LLVMValueRef tid = pass_tid_x(e);
  /* the wait before the first remote store pairs with this (the reads hide its latency) */
  arrive_started(e);
  LLVMValueRef rank = pass_call(e, "llvm.nvvm.read.ptx.sreg.cluster.ctarank", NULL, 0, NULL, 0);
  LLVMValueRef lane = LLVMBuildAdd(
      e->B, LLVMBuildMul(e->B, LLVMBuildZExt(e->B, rank, i64, ""), tns_i64(e, p.T), ""),
      LLVMBuildZExt(e->B, tid, i64, ""), "lane");
  LLVMValueRef acc[16];
  tns_acc_init(e, t, acc, p.vec);
  tns_row_segment(e, t, p.vec, CL_C * p.T, p.U, src, tns_i64(e, p.N), lane, NULL, acc);
  LLVMValueRef val = tns_cta_reduce(e, t, tns_acc_total(e, t, acc, p.vec), tid, p.T);
  /* every CTA of the cluster is running from here on: CTA 0's shared memory exists */
  pass_call(e, "llvm.nvvm.barrier.cluster.wait", NULL, 0, NULL, 0);
  /* thread 0: this CTA's value into slot `rank` of CTA 0's shared memory */
  LLVMValueRef slots = pass_global_array(e, acc_ty, CL_C, AS_SHARED, "rj_cluster_part");
  pass_if w;
  pass_if_begin(e, &w, LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), ""));
  LLVMValueRef mapa_args[2] = {pass_gep(e, acc_ty, slots, rank), pass_i32(e, 0)};
  LLVMValueRef remote = pass_call(e, "llvm.nvvm.mapa.shared.cluster", NULL, 0, mapa_args, 2);
  LLVMBuildStore(e->B, val, remote);
  pass_if_end(e, &w);
  /* every thread of the cluster: arrive (release), wait (acquire) */
  pass_call(e, "llvm.nvvm.barrier.cluster.arrive", NULL, 0, NULL, 0);
  pass_call(e, "llvm.nvvm.barrier.cluster.wait", NULL, 0, NULL, 0);
  /* warp 0 of CTA 0 folds the C slots: lane l < C holds slot l, a butterfly tree over C lanes */
  LLVMValueRef first = LLVMBuildAnd(e->B, LLVMBuildICmp(e->B, LLVMIntEQ, rank, pass_i32(e, 0), ""),
                                    LLVMBuildICmp(e->B, LLVMIntULT, tid, pass_i32(e, 32), ""), "");
  pass_if f;
  pass_if_begin(e, &f, first);
  LLVMValueRef x = tns_fold_slots(e, t, slots, CL_C, tid);
  pass_if s;
  pass_if_begin(e, &s, LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), ""));
  tns_store(e, t, dst, tns_i64(e, 0), tns_result(e, t, x, tns_i64(e, p.N)));
  pass_if_end(e, &s);
  pass_if_end(e, &f);
  LLVMBuildRetVoid(e->B);
  return RJ_OK;
}

const pass_variant pass_variant_tensor_cluster = {
    .name = "tensor_cluster",
    .prio = 35,
    .kind = RJ_KIND_TENSOR,
    .summary = "mid-size 1-D reductions: one cluster of 8 CTAs, finished in distributed shared "
               "memory (no workspace, no atomics; sm_90+)",
    .ops = PASS_OPS_SCALAR | ST_OPS,
    .invariant_why =
        "the target (sm_90 and later only: another variant elsewhere) and the address (its scalar head)",
    .accepts = accepts,
    .plan = plan,
    .kernel = PASS_EMIT(kernel),
};
