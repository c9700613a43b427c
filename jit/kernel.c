/* What the API says about kernels and variants: the kernel accessors, `explain`, the variant
 * table. */
#include "jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plan's note goes at the end of the chosen line: "tensor_rows prio=30 chosen (dynamic:
 * bucket \"rows lanes T=256 G=4 ...\" compiled in; M N RS S chunk are kernel parameters; ...)". */
static void add_note(char *buf, size_t n, const char *note) {
  char *at = strstr(buf, " chosen\n");
  if (!at || !note[0]) return;
  at += strlen(" chosen");
  size_t tail = strlen(at), add = strlen(note);
  if ((size_t)(at - buf) + add + tail + 1 > n) return;
  memmove(at + add, at, tail + 1);
  memcpy(at, note, add);
}

/* A tensor request's fused map and epilogue, appended as one line (nothing without them). */
static void add_fused(char *buf, size_t n, const rj_request *req) {
  const rj_tensor *t = &req->u.tensor;
  if (req->kind == RJ_KIND_TILE) { /* one input, built-ins only */
    const rj_tile *l = &req->u.tile;
    size_t k = strlen(buf);
    if ((!l->fused.map && !l->fused.epilogue) || k >= n) return;
    k += (size_t)snprintf(buf + k, n - k, "fused: map %s of src (%s); %s; epilogue %s",
                          ir_map_name(l->fused.map), ir_dtype(l->dtype)->name, ir_op_name(l->op),
                          ir_epilogue_name(l->fused.epilogue));
    if (k < n && l->fused.epilogue == RJ_EPI_SCALE)
      k += (size_t)snprintf(buf + k, n - k, " by %.17g", l->fused.scale);
    if (k < n) snprintf(buf + k, n - k, "\n");
    return;
  }
  if (req->kind != RJ_KIND_TENSOR || (!t->fused.map && !t->fused.epilogue)) return;
  size_t k = strlen(buf);
  if (k >= n) return;
  k += (size_t)snprintf(buf + k, n - k, "fused: map %s%s%s of src (%s)", ir_map_name(t->fused.map),
                        t->fused.map == RJ_MAP_IR ? " " : "",
                        t->fused.map == RJ_MAP_IR ? t->fused.map_fn : "", ir_dtype(t->dtype)->name);
  for (int i = 0; i < t->nothers && k < n; i++)
    k += (size_t)snprintf(buf + k, n - k, ", others[%d] (%s, %s)", i,
                          ir_dtype(t->other_dtype[i])->name,
                          t->other_has_strides[i] ? "its own strides" : "src's layout");
  if (k < n)
    k += (size_t)snprintf(buf + k, n - k, "; %s%s; epilogue %s", ir_op_name(t->op),
                          t->op == RJ_OP_MEAN && t->fused.map == RJ_MAP_WHERE
                              ? " of the selected elements (divided by their count)"
                              : "",
                          ir_epilogue_name(t->fused.epilogue));
  if (k < n && t->fused.epilogue == RJ_EPI_IR)
    k += (size_t)snprintf(buf + k, n - k, " %s", t->fused.epilogue_fn);
  if (k < n && t->fused.epilogue == RJ_EPI_SCALE)
    k += (size_t)snprintf(buf + k, n - k, " by %.17g", t->fused.scale);
  if (k < n && t->acc_f64) k += (size_t)snprintf(buf + k, n - k, "; accumulated in f64");
  if (k < n) snprintf(buf + k, n - k, "\n");
}

/* A tensor request's invariance, one line: whether the bits of each output depend only on its
 * reduced length and dtype (docs/INVARIANCE.md), and when not, on what. */
static void add_invariance(char *buf, size_t n, const rj_request *req, const pass_variant *v,
                           const pass_plan *plan) {
  size_t k = strlen(buf);
  if (req->kind != RJ_KIND_TENSOR || k >= n) return;
  ir_tview tv;
  ir_tensor_view(&req->u.tensor, &tv);
  const char *free = pass_order_free(req);
  if (req->u.tensor.invariant && free)
    snprintf(buf + k, n - k,
             "invariant: yes (%s: the result of %s does not depend on the order of its combines "
             "(%s), so every tree gives the same bits)\n",
             v->name, ir_op_name(req->u.tensor.op), free);
  else if (req->u.tensor.invariant) {
    char each[96];
    snprintf(each, sizeof each, "each output depends only on its reduced length %lld and the dtype",
             (long long)tv.reduce_len);
    snprintf(
        buf + k, n - k,
        "invariant: yes (%s: the tree of %s; IEEE-rounded operations, the same on every "
        "target)\n",
        v->name,
        req->u.tensor.list_count
            ? "each tensor depends only on its length and the dtype, not on its stride, its "
              "address or the other tensors; the total folds their values in a fixed tree over their "
              "list positions"
        : req->u.tensor.segments ? "each segment depends only on its length and the dtype, "
                                   "not on where it starts or on the other segments"
                                 : each);
  } else if (v->invariant && !v->invariant_why)
    snprintf(buf + k, n - k,
             "invariant: no (not asked: %s's tree depends only on the reduced length here, but "
             "another view's variant may differ and f32 var / std / logsumexp use the hardware's "
             "approximations; \"invariant\": true promises it)\n",
             v->name);
  else
    snprintf(buf + k, n - k, "invariant: no (%s: its tree depends on %s; %s%.0d%s)\n", v->name,
             v->invariant_why ? v->invariant_why : "its plan",
             plan->sms ? "planned for " : "no SM count read: the default", plan->sms,
             plan->sms ? " SMs" : "");
}

RJ_API rj_status rj_explain(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            const char **text) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, text, "text");
  memset(&ctx->err, 0, sizeof ctx->err);
  const ir_target *tg = NULL;
  rj_status s;
  if ((s = jit_validate(ctx, req)) || (s = jit_target(ctx, opt, &tg))) return jit_done(ctx, s);
  size_t n = 8192;
  char *buf = malloc(n);
  if (!buf) return jit_done(ctx, ir_fail(&ctx->err, RJ_ENOMEM, "out of memory"));
  const pass_variant *v = pass_dispatch(req, tg, buf, n, &ctx->err);
  pass_plan plan;
  int sms = -1;
  s = v ? jit_sms_asked(ctx, opt, &sms) : ctx->err.status;
  if (!s) s = jit_plan(ctx, v, req, tg, opt ? opt->device : 0, sms, &plan);
  if (!s) add_note(buf, n, plan.note);
  if (!s) add_fused(buf, n, req);
  if (!s) add_invariance(buf, n, req, v, &plan);
  free(ctx->text);
  ctx->text = buf;
  *text = buf;
  return jit_done(ctx, s);
}

RJ_API int rj_variant_count(const rj_ctx *ctx) {
  (void)ctx;
  return pass_variant_count();
}

RJ_API rj_status rj_variant_get(const rj_ctx *ctx, int i, rj_variant_info *out) {
  (void)ctx;
  const pass_variant *v = pass_variant_at(i);
  ir_err e = {0}; /* ctx is const here: the status alone reports a failure */
  if (!v || !out || ir_result_in(&e, out, sizeof(rj_variant_info), "out")) return RJ_EINVAL;
  rj_variant_info full = {.struct_size = sizeof full,
                          .name = v->name,
                          .priority = v->prio,
                          .kinds = ir_kind_name(v->kind),
                          .summary = v->summary};
  ir_result_out(out, &full, sizeof full);
  return RJ_OK;
}

/* k's target: its name, emulating packed instructions where its key's tail says so
 * (jit_key_tail: "|target|ptx_asked|emulated..."). */
static const ir_target *kernel_target(const rj_kernel *k) {
  const ir_target *tg = ir_target_find(k->target);
  char tail[32];
  snprintf(tail, sizeof tail, "|%s|", k->target);
  const char *at = NULL;
  for (const char *p = k->key; p && (p = strstr(p, tail)); p++)
    at = p;
  return tg && at && strstr(at, "|emulated") ? ir_target_emulating(tg) : tg;
}

bool jit_kernel_ir(rj_kernel *k) {
  if (k->ll && k->ll_opt) return true;
  rj_ctx *ctx = k->ctx;
  const ir_target *tg = kernel_target(k);
  bool custom = ir_request_combine(&k->req) != NULL; /* op custom, a caller's map: linked */
  if (!ctx || !tg || custom || !k->req.kind || !pass_variant_find(k->variant)) return false;
  ir_err saved = ctx->err; /* a text getter leaves the context's last message alone */
  char *ll = NULL, *ll_opt = NULL;
  rj_status s = jit_lower_text(ctx, k, tg, &ll, &ll_opt);
  ctx->err = saved;
  if (s) return false;
  free(k->ll);
  free(k->ll_opt);
  k->ll = ll;
  k->ll_opt = ll_opt;
  return true;
}

/* The IR text is made on first ask (a compile makes the PTX alone): a use of the kernel's
 * context, entered as by any call on it (another thread inside it: NULL). */
RJ_API const char *rj_kernel_text(const rj_kernel *k, rj_emit what) {
  if (!k) return NULL;
  if (what != RJ_EMIT_LLVM && what != RJ_EMIT_LLVM_OPT) return k->ptx;
  if (!k->ll || !k->ll_opt) {
    JIT_ENTER_OR(k->ctx, NULL);
    if (!jit_kernel_ir((rj_kernel *)k)) return NULL;
  }
  return what == RJ_EMIT_LLVM ? k->ll : k->ll_opt;
}
RJ_API const char *rj_kernel_variant(const rj_kernel *k) {
  return k ? k->variant : NULL;
}
RJ_API const char *rj_kernel_target(const rj_kernel *k) {
  return k ? k->target : NULL;
}
RJ_API const char *rj_kernel_entry(const rj_kernel *k) {
  return k ? k->entry : NULL;
}
RJ_API double rj_kernel_compile_ms(const rj_kernel *k) {
  return k ? k->compile_ms : 0;
}
RJ_API double rj_kernel_stage_ms(const rj_kernel *k, int stage) {
  return k && stage >= 0 && stage < 4 ? k->stage_ms[stage] : -1;
}
RJ_API double rj_kernel_disk_ms(const rj_kernel *k) {
  return k && k->from_disk ? k->disk_ms : -1;
}
RJ_API void rj_kernel_dims(const rj_kernel *k, unsigned grid[3], unsigned block[3],
                           unsigned *shared_bytes) {
  static const unsigned zero[3] = {0, 0, 0};
  if (grid) memcpy(grid, k ? k->plan.grid : zero, sizeof zero); /* the plan's geometry */
  if (block) memcpy(block, k ? k->plan.block : zero, sizeof zero);
  if (shared_bytes) *shared_bytes = k ? k->plan.shared_bytes : 0;
}
