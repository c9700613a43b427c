/* Whether a tensor request's result depends on the order of its combines (passes.h:
 * pass_order_free): a property of the op and dtype alone, asked by the registry, by `explain` and
 * by the variants that fold in another order under "invariant": true. */
#include "passes.h"

const char *pass_order_free(const rj_request *r) {
  if (r->kind != RJ_KIND_TENSOR) return NULL;
  const rj_tensor *t = &r->u.tensor;
  const ir_dtype_info *d = ir_dtype(t->dtype), *acc = ir_dtype(ir_acc_dtype(t->op, t->dtype));
  switch (t->op) {
  case RJ_OP_AND:
  case RJ_OP_OR:
  case RJ_OP_XOR:
    return "bitwise, exact";
  case RJ_OP_SUM:
  case RJ_OP_PROD: /* the integers' sums and products wrap in their accumulator: exact */
    return t->acc_f64 || !acc || acc->is_float ? NULL : "integer arithmetic wraps, exact";
  case RJ_OP_ARGMAX:
  case RJ_OP_ARGMIN:
    return "the extreme element, ties to the smaller index";
  case RJ_OP_MAX:
  case RJ_OP_MIN:
    return d && d->is_float ? "one of the inputs, +0 above -0, a NaN canonical or skipped"
                            : "one of the inputs";
  default:
    return NULL;
  }
}

bool pass_fixed_tree(const rj_request *r) {
  return r->kind == RJ_KIND_TENSOR && r->u.tensor.invariant && !pass_order_free(r);
}
