/* reduction -> sm100_packed (seed 002): one thread folds a 1-D f32 register vector (length >= 8)
 * to a scalar with Blackwell's packed instructions, exactly as the reference implementation
 * (TVM sm100_packed.py, ../shared/reference/tvm-tirx-reduction.md section 2c):
 *
 *  sum:  ls[0..7] = x[0..7] (accum: ls[0] = x[0] + dst); each further chunk of 8 as four
 *        add.rn.ftz.f32x2 on (ls[2j], ls[2j+1]); the remainder scalar into ls[0]; then
 *        (0,1) += (2,3), (4,5) += (6,7), (0,1) += (4,5); dst = ls[0] + ls[1].
 *  max/min: t[i] = op(x[2i], x[2i+1]) (accum: t[0] = op3(x[0], x[1], dst)); each further chunk
 *        t[i] = op3(t[i], x[8c+2i], x[8c+2i+1]); the remainder into t[0] with the 2-input op;
 *        dst = op3(op(t[0], t[1]), t[2], t[3]).
 *
 * The packed instructions come from passes/packed.c: real when the target table says the target
 * has them, else (rj_options.emulate_packed) each replaced by scalar equivalents in the same
 * order.  nan: propagate uses max/min.NaN; ignore uses max/min (NaN-skipping), and for sums
 * replaces NaN inputs by -0.0 before they enter the packed adds. */
#include "../passes.h"

#include <stdio.h>
#include <stdlib.h>

static ir_feature needed(rj_op op) {
  return op == RJ_OP_SUM ? IR_F_ADD_F32X2 : IR_F_MAX3_F32;
}

/* The register slot of each src element (region order) and of the dst element; false with the
 * reason. */
static bool slots(const rj_tile *t, int64_t *src_slot, int64_t len, int64_t *dst_slot, char *why,
                  size_t n) {
  ir_placement ps = {0}, pd = {0};
  ir_err e = {0};
  bool ok = false;
  if (ir_place(&t->src, 1, "src", &ps, &e) || ir_place(&t->dst, 1, "dst", &pd, &e)) {
    snprintf(why, n, "%s", e.msg);
    goto out;
  }
  for (int64_t i = 0; i < len; i++) {
    int64_t x = ir_src_offset(t, 0, i), found = -1;
    for (int64_t j = 0; j < ps.nslots; j++)
      if (ps.elem[j] == x) {
        if (found >= 0) {
          snprintf(why, n, "src.layout: element %lld is in two register slots", (long long)x);
          goto out;
        }
        found = j;
      }
    if (found < 0) {
      snprintf(why, n, "src.layout: element %lld is in no register slot", (long long)x);
      goto out;
    }
    if (src_slot) src_slot[i] = found;
  }
  int64_t y = ir_dst_offset(t, 0), found = -1;
  for (int64_t j = 0; j < pd.nslots && found < 0; j++)
    if (pd.elem[j] == y) found = j;
  if (found < 0) {
    snprintf(why, n, "dst.layout: element %lld is in no register slot", (long long)y);
    goto out;
  }
  if (dst_slot) *dst_slot = found;
  ok = true;
out:
  ir_placement_free(&ps);
  ir_placement_free(&pd);
  return ok;
}

static const char *accepts(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  const rj_tile *t = &r->u.tile;
  const char *mapped =
      pass_fused_declined(&t->fused, "the packed fold takes the registers as they are", buf, n);
  if (mapped) return mapped;
  if (t->scope != RJ_SCOPE_THREAD)
    return snprintf(buf, n, "scope is %s: the packed fold is one thread's (scope thread only)",
                    ir_scope_name(t->scope)),
           buf;
  if (pass_need_mem(t, RJ_MEM_LOCAL, buf, n)) return buf;
  ir_tile_shape f;
  ir_tile_facts(t, &f);
  if (f.spatial_len != 1)
    return snprintf(buf, n,
                    "dst length is %lld: the packed fold reduces to one element (dst length 1)",
                    (long long)f.spatial_len),
           buf;
  if (t->src.ndim != 1)
    return snprintf(buf, n, "src region is %d-D: the packed fold takes a 1-D src", t->src.ndim),
           buf;
  if (t->dtype != RJ_F32)
    return snprintf(buf, n, "dtype is %s: the packed instructions are f32 only",
                    ir_dtype(t->dtype)->name),
           buf;
  ir_feature need = needed(t->op);
  if (!pass_has_feature(tg, need))
    return snprintf(buf, n,
                    "target %s lacks %s (sm_100 and later); emulate_packed (--emulate-packed) runs "
                    "the same algorithm with scalar instructions",
                    tg->name, ir_feature_name(need)),
           buf;
  if (f.reduce_len < 8)
    return snprintf(buf, n, "src length is %lld: the packed fold needs at least 8 elements",
                    (long long)f.reduce_len),
           buf;
  int64_t span = ir_slot_span(&t->src) + ir_slot_span(&t->dst);
  if (!ir_local_unrolled(span))
    return snprintf(buf, n,
                    "src and dst span %lld register slots: the packed fold is unrolled, up to %d "
                    "(the local variant loops over larger tiles)",
                    (long long)span, IR_LOCAL_UNROLL_SLOTS),
           buf;
  return slots(t, NULL, f.reduce_len, NULL, buf, n) ? NULL : buf;
}

static rj_status tile(pass_emit *e, const rj_tile *t, const pass_tile_args *a) {
  ir_tile_shape f;
  ir_tile_facts(t, &f);
  int64_t L = f.reduce_len, dslot = 0;
  int64_t *slot = malloc(sizeof(int64_t) * (size_t)L);
  LLVMValueRef *x = malloc(sizeof(LLVMValueRef) * (size_t)L);
  char why[512];
  if (!slot || !x) {
    free(slot);
    free(x);
    return ir_fail(e->err, RJ_ENOMEM, "out of memory");
  }
  if (!slots(t, slot, L, &dslot, why, sizeof why)) {
    free(slot);
    free(x);
    return ir_fail(e->err, RJ_ENOVARIANT, "sm100_packed: %s", why);
  }
  LLVMTypeRef f32 = LLVMFloatTypeInContext(e->C);
  bool skip_nan = t->op == RJ_OP_SUM && t->nan == RJ_NAN_IGNORE;
  LLVMValueRef nz = LLVMConstReal(f32, -0.0);
  for (int64_t i = 0; i < L; i++) {
    x[i] = LLVMBuildLoad2(e->B, f32, pass_gep(e, f32, a->src, pass_i32(e, slot[i])), "");
    if (skip_nan)
      x[i] = LLVMBuildSelect(e->B, LLVMBuildFCmp(e->B, LLVMRealUNO, x[i], x[i], ""), nz, x[i], "");
  }
  LLVMValueRef dptr = pass_gep(e, f32, a->dst, pass_i32(e, dslot));
  LLVMValueRef old = NULL;
  if (t->accum) {
    old = LLVMBuildLoad2(e->B, f32, dptr, "");
    if (skip_nan)
      old = LLVMBuildSelect(e->B, LLVMBuildFCmp(e->B, LLVMRealUNO, old, old, ""), nz, old, "");
  }
  int64_t nfull = L / 8, rem = L % 8, rbase = nfull * 8;
  LLVMValueRef res;
  if (t->op == RJ_OP_SUM) {
    LLVMValueRef ls[8];
    for (int i = 0; i < 8; i++)
      ls[i] = x[i];
    if (old) ls[0] = LLVMBuildFAdd(e->B, x[0], old, "");
    for (int64_t c = 1; c < nfull; c++)
      for (int j = 0; j < 4; j++)
        pass_add_f32x2(e, &ls[2 * j], x[8 * c + 2 * j], x[8 * c + 2 * j + 1]);
    for (int64_t i = 0; i < rem; i++)
      ls[0] = LLVMBuildFAdd(e->B, ls[0], x[rbase + i], "");
    pass_add_f32x2(e, &ls[0], ls[2], ls[3]);
    pass_add_f32x2(e, &ls[4], ls[6], ls[7]);
    pass_add_f32x2(e, &ls[0], ls[4], ls[5]);
    res = LLVMBuildFAdd(e->B, ls[0], ls[1], "");
  } else {
    LLVMValueRef tm[4];
    for (int i = 0; i < 4; i++)
      tm[i] = i == 0 && old ? pass_minmax3_f32(e, t->op, t->nan, x[0], x[1], old)
                            : pass_minmax2_f32(e, t->op, t->nan, x[2 * i], x[2 * i + 1]);
    for (int64_t c = 1; c < nfull; c++)
      for (int i = 0; i < 4; i++)
        tm[i] = pass_minmax3_f32(e, t->op, t->nan, tm[i], x[8 * c + 2 * i], x[8 * c + 2 * i + 1]);
    for (int64_t i = 0; i < rem; i++)
      tm[0] = pass_minmax2_f32(e, t->op, t->nan, tm[0], x[rbase + i]);
    res = pass_minmax2_f32(e, t->op, t->nan, tm[0], tm[1]);
    res = pass_minmax3_f32(e, t->op, t->nan, res, tm[2], tm[3]);
  }
  LLVMBuildStore(e->B, res, dptr);
  free(slot);
  free(x);
  return RJ_OK;
}

const pass_variant pass_variant_sm100_packed = {
    .name = "sm100_packed",
    .prio = 20,
    .kind = RJ_KIND_TILE,
    .summary = "thread-scope 1-D f32 fold to a scalar with add.rn.ftz.f32x2 / 3-input max/min "
               "(sm_100+; scalar emulation with emulate_packed)",
    .ops_why = "its packed instructions are add.f32x2 and 3-input max / min (op custom: the "
               "caller's combine is no packed instruction; the local variant calls it)",
    .accepts = accepts,
    .plan = pass_tile_plan,
    .kernel = PASS_EMIT(pass_tile_kernel),
    .tile = PASS_EMIT(tile),
};
