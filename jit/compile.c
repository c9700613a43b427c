/* The compile pipeline: validate -> dispatch -> lower -> verify -> optimise -> PTX.
 * rj_compile reads top to bottom like QBE's main: one stage per line. */
#include "../passes/passes.h"
#include "../passes/tensor.h"
#include "jit.h"

#include <llvm-c/Analysis.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRIPLE "nvptx64-nvidia-cuda"

double jit_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---------------------------------------------------------------- targets */

rj_status jit_target(rj_ctx *ctx, const rj_options *opt, const ir_target **out) {
  const char *name = opt && opt->target ? opt->target : "auto";
  char buf[16];
  if (strcmp(name, "auto") == 0) {
    name = "sm_90"; /* no GPU usable: the default */
    rt_cuda *rt = NULL;
    ir_err saved = ctx->err;
    int major = 0, minor = 0;
    if (jit_cuda(ctx, &rt) == RJ_OK &&
        rt_device_cc(rt, opt ? opt->device : 0, &major, &minor, &ctx->err) == RJ_OK) {
      snprintf(buf, sizeof buf, "sm_%d%da", major, minor);
      if (!ir_target_find(buf)) snprintf(buf, sizeof buf, "sm_%d%d", major, minor);
      name = buf;
    }
    ctx->err = saved;
    if (!ir_target_find(name))
      return ir_fail(&ctx->err, RJ_ETARGET,
                     "target: the GPU's compute capability (%s) is not in redjit's target table",
                     name);
  }
  *out = ir_target_find(name);
  if (*out && opt && opt->struct_size >= offsetof(rj_options, emulate_packed) + sizeof(int) &&
      opt->emulate_packed)
    *out = ir_target_emulating(*out);
  if (!*out) {
    char known[512];
    size_t k = 0;
    for (int i = 0; i < ir_target_count() && k < sizeof known - 16; i++)
      k += (size_t)snprintf(known + k, sizeof known - k, " %s", ir_target_at(i)->name);
    return ir_fail(&ctx->err, RJ_ETARGET, "target: unknown target \"%.32s\" (known:%s)", name,
                   known);
  }
  return RJ_OK;
}

RJ_API rj_status rj_target_resolve(rj_ctx *ctx, const rj_options *opt, char *buf, size_t len) {
  JIT_NEED(ctx, buf && len, "buf");
  memset(&ctx->err, 0, sizeof ctx->err);
  const ir_target *t = NULL;
  rj_status s = jit_target(ctx, opt, &t);
  if (!s) snprintf(buf, len, "%s", t->name);
  return jit_status(ctx, s);
}

/* The PTX version: the caller's, or the least the target and the emitted code need.  Every
 * combination LLVM would abort on is refused here, before codegen. */
rj_status jit_pick_ptx(rj_ctx *ctx, const ir_target *t, const rj_options *opt, int needed,
                       int *ptx) {
  static const int known[] = {32, 40, 41, 42, 43, 50, 60, 61, 62, 63, 64, 65, 70, 71, 72, 73,
                              74, 75, 76, 77, 78, 80, 81, 82, 83, 84, 85, 86, 87, 88, 90};
  int want = opt ? opt->ptx_version : 0;
  int least = needed > t->min_ptx ? needed : t->min_ptx;
  if (!want) {
    *ptx = least;
    return RJ_OK;
  }
  bool ok = false;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    ok |= known[i] == want;
  if (!ok)
    return ir_fail(&ctx->err, RJ_ETARGET, "ptx_version: %d is not a PTX ISA version LLVM 22 emits",
                   want);
  if (want < t->min_ptx)
    return ir_fail(&ctx->err, RJ_ETARGET,
                   "ptx_version: PTX %d.%d does not support target %s (it needs PTX %d.%d)",
                   want / 10, want % 10, t->name, t->min_ptx / 10, t->min_ptx % 10);
  if (want < needed)
    return ir_fail(&ctx->err, RJ_ETARGET,
                   "ptx_version: PTX %d.%d is too old for the instructions this kernel uses "
                   "(they need PTX %d.%d)",
                   want / 10, want % 10, needed / 10, needed % 10);
  *ptx = want;
  return RJ_OK;
}

static rj_status target_machine(rj_ctx *ctx, const ir_target *t, int ptx,
                                LLVMTargetMachineRef *out) {
  for (int i = 0; i < ctx->ntms; i++)
    if (ctx->tms[i].ptx == ptx && strcmp(ctx->tms[i].target, t->name) == 0) {
      *out = ctx->tms[i].tm;
      return RJ_OK;
    }
  LLVMTargetRef target;
  char *msg = NULL;
  if (LLVMGetTargetFromTriple(TRIPLE, &target, &msg)) {
    rj_status s = ir_fail(&ctx->err, RJ_ELLVM, "LLVM: %s", msg ? msg : "no NVPTX target");
    LLVMDisposeMessage(msg);
    return s;
  }
  char features[16];
  snprintf(features, sizeof features, "+ptx%d", ptx);
  LLVMTargetMachineRef tm =
      LLVMCreateTargetMachine(target, TRIPLE, t->name, features, LLVMCodeGenLevelAggressive,
                              LLVMRelocDefault, LLVMCodeModelDefault);
  if (!tm)
    return ir_fail(&ctx->err, RJ_ELLVM, "LLVM: cannot create a target machine for %s", t->name);
  if (ctx->ntms == (int)(sizeof ctx->tms / sizeof ctx->tms[0])) { /* full: drop the oldest */
    LLVMDisposeTargetMachine(ctx->tms[0].tm);
    memmove(ctx->tms, ctx->tms + 1, sizeof ctx->tms[0] * (size_t)(ctx->ntms - 1));
    ctx->ntms--;
  }
  jit_tm *slot = &ctx->tms[ctx->ntms++];
  snprintf(slot->target, sizeof slot->target, "%s", t->name);
  slot->ptx = ptx;
  slot->tm = tm;
  *out = tm;
  return RJ_OK;
}

/* ---------------------------------------------------------------- stages */

static char *module_text(LLVMModuleRef M) {
  char *s = LLVMPrintModuleToString(M), *copy = strdup(s);
  LLVMDisposeMessage(s);
  return copy;
}

static rj_status verify(rj_ctx *ctx, LLVMModuleRef M, bool theirs) {
  char *msg = NULL;
  if (LLVMVerifyModule(M, LLVMReturnStatusAction, &msg)) {
    rj_status s =
        theirs ? ir_fail(&ctx->err, RJ_EINVAL, "ir: the module does not verify: %.700s", msg)
               : ir_fail(&ctx->err, RJ_ELLVM, "internal: LLVM IR does not verify: %.700s", msg);
    LLVMDisposeMessage(msg);
    return s;
  }
  LLVMDisposeMessage(msg);
  return RJ_OK;
}

static rj_status emit_ptx(rj_ctx *ctx, LLVMTargetMachineRef tm, LLVMModuleRef M, char **ptx) {
  char *msg = NULL;
  LLVMMemoryBufferRef buf = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, M, LLVMAssemblyFile, &msg, &buf)) {
    rj_status s = ir_fail(&ctx->err, RJ_ELLVM, "internal: NVPTX codegen failed: %s", msg);
    LLVMDisposeMessage(msg);
    return s;
  }
  size_t n = LLVMGetBufferSize(buf);
  *ptx = malloc(n + 1);
  if (*ptx) {
    memcpy(*ptx, LLVMGetBufferStart(buf), n);
    (*ptx)[n] = 0;
  }
  LLVMDisposeMemoryBuffer(buf);
  return *ptx ? RJ_OK : ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
}

rj_kernel *jit_cache_find(rj_ctx *ctx, const char *key) {
  for (rj_kernel *k = ctx->kernels; k; k = k->next)
    if (strcmp(k->key, key) == 0) return k;
  return NULL;
}

rj_status jit_codegen(rj_ctx *ctx, LLVMModuleRef M, const ir_target *tg, rj_kernel *k,
                      bool theirs) {
  LLVMTargetMachineRef tm = NULL;
  rj_status s = target_machine(ctx, tg, k->ptx_version, &tm);
  if (s) return s;
  LLVMSetTarget(M, TRIPLE);
  LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(M, dl);
  LLVMDisposeTargetData(dl);
  if ((s = verify(ctx, M, theirs))) return s;
  if (!(k->ll = module_text(M))) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  ctx->llvm_diag[0] = 0;
  if ((s = pass_optimize(M, tm, &ctx->err))) return s;
  if (!(k->ll_opt = module_text(M))) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  s = emit_ptx(ctx, tm, M, &k->ptx);
  if (!s && ctx->llvm_diag[0]) /* an error LLVM diagnosed but carried on past */
    s = ir_fail(&ctx->err, theirs ? RJ_EUNSUPPORTED : RJ_ELLVM, "%sLLVM: %s",
                theirs ? "ir: " : "internal: ", ctx->llvm_diag);
  return s;
}

void jit_kernel_free(rj_kernel *k) {
  if (!k) return;
  free(k->key);
  free(k->ptx);
  free(k->ll);
  free(k->ll_opt);
  free(k->src);
  free(k);
}

void jit_cache_add(rj_ctx *ctx, rj_kernel *k) {
  ctx->compiles++;
  k->loaded_on = -1;
  k->next = ctx->kernels;
  ctx->kernels = k;
}

/* ---------------------------------------------------------------- the pipeline */

/* Issue 6: a dynamic tensor request whose view takes a runtime-size kernel (d filled) is keyed by
 * what the kernel compiles in — class (variant), plan bucket, dtype, op, nan, accum,
 * deterministic — not by its sizes; anything else by its canonical JSON. */
static rj_status cache_text(const rj_request *req, const ir_target *tg, int sms, tns_dyn *d,
                            bool *dyn, char **text, ir_err *e) {
  char why[256];
  *dyn = req->kind == RJ_KIND_TENSOR && req->u.tensor.dynamic &&
         !tns_dynamic(req, tg, sms, d, why, sizeof why);
  if (!*dyn) return ir_canonical(req, text, e);
  const rj_tensor *t = &req->u.tensor;
  char buf[192];
  snprintf(buf, sizeof buf, "{dynamic %s|%s|op%d|dtype%d|nan%d|accum%d|det%d}", d->variant,
           d->bucket, t->op, t->dtype, t->nan, t->accum, t->deterministic);
  *text = strdup(buf);
  return *text ? RJ_OK : ir_fail(e, RJ_ENOMEM, "out of memory");
}

RJ_API rj_status rj_compile(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            rj_kernel **out) {
  JIT_NEED(ctx, out, "out");
  memset(&ctx->err, 0, sizeof ctx->err);
  *out = NULL;
  ir_err *e = &ctx->err;
  const ir_target *tg = NULL;
  const pass_variant *v = NULL;
  char *canon = NULL, key[64], *fullkey = NULL;
  rj_status s;
  /* 1. validate, resolve the target, look in the cache */
  if ((s = jit_validate(ctx, req)) || (s = jit_target(ctx, opt, &tg))) return jit_status(ctx, s);
  double t0 = jit_now_ms(); /* compile time proper: after the target (auto may start the driver) */
  int sms = req->kind == RJ_KIND_TENSOR ? jit_tensor_sms(ctx, opt) : 0; /* issue 6 */
  tns_dyn dyn;
  bool isdyn = false;
  if ((s = cache_text(req, tg, sms, &dyn, &isdyn, &canon, e))) return jit_status(ctx, s);
  snprintf(key, sizeof key, "|%s|%d%s", tg->name, opt ? opt->ptx_version : 0,
           tg->emulated ? "|emulated" : "");
  if (sms) snprintf(key + strlen(key), sizeof key - strlen(key), "|sms%d", sms);
  fullkey = malloc(strlen(canon) + strlen(key) + 1);
  if (!fullkey) {
    free(canon);
    return jit_status(ctx, ir_fail(e, RJ_ENOMEM, "out of memory"));
  }
  strcpy(fullkey, canon);
  strcat(fullkey, key);
  free(canon);
  if ((*out = jit_cache_find(ctx, fullkey))) {
    free(fullkey);
    return jit_status(ctx, RJ_OK);
  }
  /* 2. dispatch */
  if (!(v = pass_dispatch(req, tg, NULL, 0, e))) {
    free(fullkey);
    return jit_status(ctx, e->status);
  }
  /* 3. lower into a fresh module */
  pass_emit em = {.C = ctx->llvm, .target = tg, .err = e};
  em.sms = sms;
  em.M = LLVMModuleCreateWithNameInContext("redjit", ctx->llvm);
  em.B = LLVMCreateBuilderInContext(ctx->llvm);
  rj_kernel *k = calloc(1, sizeof *k);
  if (!k) s = ir_fail(e, RJ_ENOMEM, "out of memory");
  if (!s) s = v->kernel(&em, req, v);
  if (!s && isdyn != (em.nparams > 0))
    s = ir_fail(e, RJ_ELLVM, "internal: %s %s a runtime-size kernel for a request keyed %s",
                v->name, em.nparams ? "built" : "did not build", isdyn ? "as one" : "by its sizes");
  if (!s) s = jit_pick_ptx(ctx, tg, opt, em.ptx_needed, &k->ptx_version);
  /* 4. verify, keep the IR as built, optimise, keep it again, emit PTX */
  if (!s) s = jit_codegen(ctx, em.M, tg, k, false);
  LLVMDisposeBuilder(em.B);
  LLVMDisposeModule(em.M);
  if (s) {
    jit_kernel_free(k);
    free(fullkey);
    return jit_status(ctx, s);
  }
  /* 5. into the cache */
  k->key = fullkey;
  k->req = *req;
  snprintf(k->variant, sizeof k->variant, "%s", v->name);
  snprintf(k->target, sizeof k->target, "%s", tg->name);
  snprintf(k->entry, sizeof k->entry, "%s", em.entry);
  memcpy(k->grid, em.grid, sizeof k->grid);
  memcpy(k->block, em.block, sizeof k->block);
  k->shared_bytes = em.shared_bytes;
  k->dyn_np = em.nparams;
  k->sms = sms;
  if (isdyn) snprintf(k->bucket, sizeof k->bucket, "%s", dyn.bucket);
  k->compile_ms = jit_now_ms() - t0;
  jit_cache_add(ctx, k);
  *out = k;
  return jit_status(ctx, RJ_OK);
}

/* The chosen line of a dynamic tensor request says what kind of kernel it gets:
 * "tensor_rows prio=30 chosen (dynamic: bucket \"rows lanes T=256 G=4\" compiled in; M N RS S
 * chunk are kernel parameters)", or "(dynamic: constant kernel, sizes are JIT constants: WHY)". */
static void explain_dynamic(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            const ir_target *tg, char *buf, size_t n) {
  char why[256], note[384];
  tns_dyn d;
  const char *no = tns_dynamic(req, tg, jit_tensor_sms(ctx, opt), &d, why, sizeof why);
  if (no)
    snprintf(note, sizeof note, " (dynamic: constant kernel, sizes are JIT constants: %s)", no);
  else
    snprintf(note, sizeof note,
             " (dynamic: bucket \"%s\" compiled in; %s are kernel parameters; grid %u x %u)",
             d.bucket, d.names, d.grid, d.block);
  char *at = strstr(buf, " chosen\n");
  if (!at) return;
  at += strlen(" chosen");
  size_t tail = strlen(at), add = strlen(note);
  if ((size_t)(at - buf) + add + tail + 1 > n) return;
  memmove(at + add, at, tail + 1);
  memcpy(at, note, add);
}

RJ_API rj_status rj_explain(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                            const char **text) {
  JIT_NEED(ctx, text, "text");
  memset(&ctx->err, 0, sizeof ctx->err);
  const ir_target *tg = NULL;
  rj_status s;
  if ((s = jit_validate(ctx, req)) || (s = jit_target(ctx, opt, &tg))) return jit_status(ctx, s);
  size_t n = 8192;
  char *buf = malloc(n);
  if (!buf) return jit_status(ctx, ir_fail(&ctx->err, RJ_ENOMEM, "out of memory"));
  const pass_variant *v = pass_dispatch(req, tg, buf, n, &ctx->err);
  if (v && req->kind == RJ_KIND_TENSOR && req->u.tensor.dynamic) /* issue 6: say which kernel */
    explain_dynamic(ctx, req, opt, tg, buf, n);
  free(ctx->text);
  ctx->text = buf;
  *text = buf;
  return jit_status(ctx, v ? RJ_OK : ctx->err.status);
}

RJ_API int rj_variant_count(const rj_ctx *ctx) {
  (void)ctx;
  return pass_variant_count();
}

RJ_API rj_status rj_variant_get(const rj_ctx *ctx, int i, rj_variant_info *out) {
  (void)ctx;
  const pass_variant *v = pass_variant_at(i);
  if (!v || !out) return RJ_EINVAL;
  out->name = v->name;
  out->priority = v->prio;
  out->kinds = ir_kind_name(v->kind);
  out->summary = v->summary;
  return RJ_OK;
}

RJ_API const char *rj_kernel_text(const rj_kernel *k, rj_emit what) {
  if (!k) return NULL;
  return what == RJ_EMIT_LLVM ? k->ll : what == RJ_EMIT_LLVM_OPT ? k->ll_opt : k->ptx;
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
RJ_API void rj_kernel_dims(const rj_kernel *k, unsigned grid[3], unsigned block[3],
                           unsigned *shared_bytes) {
  static const unsigned zero[3] = {0, 0, 0};
  if (grid) memcpy(grid, k ? k->grid : zero, sizeof zero);
  if (block) memcpy(block, k ? k->block : zero, sizeof zero);
  if (shared_bytes) *shared_bytes = k ? k->shared_bytes : 0;
}
