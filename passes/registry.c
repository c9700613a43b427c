/* The variant registry and dispatch.  Variants are data (passes/<name>.c ends with its
 * pass_variant); the table below lists them, and dispatch walks it in priority order. */
#include "passes.h"

#include <stdio.h>
#include <string.h>

/* Every registered variant, in any order: pass_variant_at() sorts. */
static const pass_variant *const all[] = {
    &pass_variant_shared,          &pass_variant_local,
    &pass_variant_treduce,         &pass_variant_sm100_packed,
    &pass_variant_redux,           &pass_variant_tensor_rows,
    &pass_variant_tensor_cols,     &pass_variant_tensor_generic,
    &pass_variant_subgroup,        &pass_variant_tensor_cluster,
    &pass_variant_treduce_ring,    &pass_variant_tensor_ordered,
    &pass_variant_tensor_multi,    &pass_variant_tensor_segmented,
    &pass_variant_tensor_inv_cols,
};
#define NVAR ((int)(sizeof all / sizeof all[0]))

static bool before(const pass_variant *a, const pass_variant *b) {
  if (a->prio != b->prio) return a->prio > b->prio;
  return strcmp(a->name, b->name) < 0;
}

int pass_variant_count(void) {
  return NVAR;
}

/* The i-th variant in dispatch order (a selection over a table of a few entries). */
const pass_variant *pass_variant_at(int i) {
  if (i < 0 || i >= NVAR) return NULL;
  for (int k = 0; k < NVAR; k++) {
    int rank = 0;
    for (int j = 0; j < NVAR; j++)
      if (j != k && before(all[j], all[k])) rank++;
    if (rank == i) return all[k];
  }
  return NULL;
}

const pass_variant *pass_variant_find(const char *name) {
  for (int k = 0; k < NVAR; k++)
    if (strcmp(all[k]->name, name) == 0) return all[k];
  return NULL;
}

rj_status pass_plan_make(const pass_variant *v, const rj_request *r, const pass_env *env,
                         pass_plan *out) {
  memset(out, 0, sizeof *out);
  return v->plan ? v->plan(r, env, out) : RJ_OK;
}

static void line(char *text, size_t n, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void line(char *text, size_t n, size_t *used, const char *fmt, ...) {
  if (!text || *used >= n) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(text + *used, n - *used, fmt, ap);
  va_end(ap);
  if (k > 0) *used += (size_t)k < n - *used ? (size_t)k : n - *used - 1;
}

const char *pass_declines(const pass_variant *v, const rj_request *r, const ir_target *t, char *buf,
                          size_t n) {
  if (v->kind != r->kind) {
    snprintf(buf, n, "serves kind %s, not %s", ir_kind_name(v->kind), ir_kind_name(r->kind));
    return buf;
  }
  bool list = r->kind == RJ_KIND_TENSOR && r->u.tensor.list_count;
  if (list != v->lists) {
    snprintf(buf, n,
             list ? "a list request (list.count): tensor_multi serves lists"
                  : "serves list requests only (list.count)");
    return buf;
  }
  bool seg = r->kind == RJ_KIND_TENSOR && r->u.tensor.segments;
  if (seg != v->segmented)
    return seg ? "takes no \"segments\" (tensor_segmented does)" : "serves \"segments\" only";
  int op = ir_request_op(r);
  if (op >= 0 && !((v->ops ? v->ops : PASS_OPS_BASIC) & PASS_OP(op))) {
    snprintf(buf, n, "does not serve op \"%s\"%s%s", ir_op_name((rj_op)op), v->ops_why ? ": " : "",
             v->ops_why ? v->ops_why : "");
    return buf;
  }
  const rj_combine *cb = op == RJ_OP_CUSTOM ? ir_request_combine(r) : NULL; /* not a map's */
  if (cb && !cb->commutative && !v->keeps_order) {
    snprintf(buf, n, "%s, and the combine is not commutative (combine.commutative: false)",
             v->order_why ? v->order_why
                          : "its folds reorder operands (lanes take strided elements; trees pair "
                            "them so)");
    return buf;
  }
  if (!v->invariant && pass_fixed_tree(r)) {
    snprintf(buf, n, "not invariant (\"invariant\": true): its tree depends on %s",
             v->invariant_why ? v->invariant_why : "its plan");
    return buf;
  }
  return v->accepts(r, t, buf, n);
}

/* needs a validated request */
const pass_variant *pass_dispatch(const rj_request *r, const ir_target *t, char *text, size_t n,
                                  ir_err *e) {
  const char *forced = r->variant[0] && strcmp(r->variant, "auto") != 0 ? r->variant : NULL;
  if (forced && !pass_variant_find(forced)) {
    ir_fail(e, RJ_EINVAL, "variant: no variant named \"%s\" is registered (see `redjit variants`)",
            forced);
    return NULL;
  }
  size_t used = 0;
  if (text && n) text[0] = 0;
  const pass_variant *chosen = NULL;
  char why[1024];
  size_t wused = 0;
  why[0] = 0;
  for (int i = 0; i < NVAR; i++) {
    const pass_variant *v = pass_variant_at(i);
    if (chosen) {
      line(text, n, &used, "%s prio=%d not tried\n", v->name, v->prio);
      continue;
    }
    char buf[256];
    const char *reason = NULL;
    if (v->kind == r->kind && forced && strcmp(forced, v->name) != 0)
      reason = buf, snprintf(buf, sizeof buf, "not the forced variant \"%s\"", forced);
    else
      reason = pass_declines(v, r, t, buf, sizeof buf);
    if (reason) {
      line(text, n, &used, "%s prio=%d rejected: %s\n", v->name, v->prio, reason);
      if (v->kind == r->kind && (!forced || strcmp(forced, v->name) == 0))
        line(why, sizeof why, &wused, "; %s: %s", v->name, reason);
    } else {
      line(text, n, &used, "%s prio=%d chosen\n", v->name, v->prio);
      chosen = v;
    }
  }
  if (!chosen)
    ir_fail(e, RJ_ENOVARIANT, "no variant accepts this %s request%s%s", ir_kind_name(r->kind),
            why[0] ? why : " (no variant serves this kind yet)", "");
  return chosen;
}
