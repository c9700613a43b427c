/* The context: owner of all state (kernel cache, the driver; LLVM context and target machines,
 * which the compiler library makes and frees). */
#include "../passes/passes.h"
#include "jit.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static _Atomic(uint64_t) serials; /* contexts made so far: rj_ctx.serial */

RJ_API rj_ctx *rj_ctx_new(void) {
  rj_ctx *ctx = calloc(1, sizeof(rj_ctx)); /* its LLVM is made on its first compile */
  if (ctx) ctx->serial = atomic_fetch_add_explicit(&serials, 1, memory_order_relaxed) + 1;
  return ctx;
}

/* Unloads every load of k (each in its device's context), then frees it. */
static void kernel_free(rj_ctx *ctx, rj_kernel *k) {
  for (jit_module *m = k->loads, *n; m; m = n) {
    n = m->next;
    ir_err e = {0};
    if (ctx->cuda && rt_enter(ctx->cuda, m->dev, &e) == RJ_OK) {
      rt_module_unload(ctx->cuda, m->module);
      rt_leave(ctx->cuda);
    }
    free(m);
  }
  jit_kernel_free(k);
}

/* Loads of evicted kernels are unloaded in batches of this many (see jit_retire). */
#define JIT_RETIRE_BATCH 32

/* Unloading a module while a launch of it may still be queued or running is not safe: the
 * driver does not wait for that work (cuModuleUnload frees the code and the module's globals,
 * which the split reductions use as their workspace), and rj_reduce returns before its kernel
 * ran, on a stream the library cannot see.  So an evicted kernel's loads wait here; once
 * JIT_RETIRE_BATCH of them have gathered (and at rj_ctx_free), each device they are on is
 * synchronised (cuCtxSynchronize: every stream of its primary context) and they are unloaded.
 * One wait per batch of evictions, each of which followed a compile or a disk read. */
void jit_retire(rj_ctx *ctx, rj_kernel *k) {
  for (jit_module *m = k->loads, *n; m; m = n) {
    n = m->next;
    m->next = ctx->retired;
    ctx->retired = m;
    ctx->nretired++;
  }
  k->loads = NULL;
  jit_kernel_free(k);
  if (ctx->nretired >= JIT_RETIRE_BATCH) jit_retired_unload(ctx);
}

void jit_retired_unload(rj_ctx *ctx) {
  while (ctx->retired) {
    int dev = ctx->retired->dev;
    ir_err e = {0};
    bool in = ctx->cuda && rt_enter(ctx->cuda, dev, &e) == RJ_OK;
    if (in) rt_sync(ctx->cuda, &e); /* a failure (a context already broken): unload anyway */
    for (jit_module **p = &ctx->retired; *p;) {
      jit_module *m = *p;
      if (m->dev != dev) {
        p = &m->next;
        continue;
      }
      *p = m->next;
      if (in) rt_module_unload(ctx->cuda, m->module);
      free(m);
      ctx->nretired--;
    }
    if (in) rt_leave(ctx->cuda);
  }
}

/* ---------------------------------------------------------------- one thread at a time */

static _Thread_local char this_thread; /* its address names the calling thread */

/* The contexts on which this thread's last call was refused (RJ_EBUSY): their message is this
 * thread's, not the context's (another thread's call is inside it), so it is kept here, per
 * context, until this thread's next call on that same context goes in.  A call on another
 * context leaves it alone.  The serial tells a context from a later one at the same address;
 * the last JIT_REFUSALS contexts refused are remembered. */
#define JIT_REFUSALS 16
typedef struct jit_refusal {
  const rj_ctx *ctx;
  uint64_t serial;
} jit_refusal;
static _Thread_local jit_refusal refusals[JIT_REFUSALS];
static _Thread_local unsigned refusals_next;

/* ctx's refusal of this thread, NULL when its last call on ctx was not refused (ctx->serial is
 * read only: it never changes after rj_ctx_new). */
static jit_refusal *refusal_of(const rj_ctx *ctx) {
  for (int i = 0; i < JIT_REFUSALS; i++)
    if (refusals[i].ctx == ctx && refusals[i].serial == ctx->serial) return &refusals[i];
  return NULL;
}

static void refusal_forget(const rj_ctx *ctx) {
  jit_refusal *r = refusal_of(ctx);
  if (r) r->ctx = NULL;
}

static void refusal_note(const rj_ctx *ctx) {
  if (refusal_of(ctx)) return;
  refusals[refusals_next++ % JIT_REFUSALS] = (jit_refusal){ctx, ctx->serial};
}

static const char busy_msg[] =
    "another thread is inside a call on this context; one rj_ctx is used by one "
    "thread at a time (use a context per thread, or hold a lock around its calls)";

bool jit_enter(const rj_ctx *cctx, jit_guard *g) {
  rj_ctx *ctx = (rj_ctx *)cctx; /* owner and depth only: a const call reads, but it enters too */
  uintptr_t me = (uintptr_t)&this_thread, none = 0;
  g->ctx = NULL;
  if (!ctx) return true;
  if (atomic_load_explicit(&ctx->owner, memory_order_relaxed) == me) {
    ctx->depth++; /* a nested call of this thread */
  } else if (atomic_compare_exchange_strong_explicit(&ctx->owner, &none, me, memory_order_acquire,
                                                     memory_order_relaxed)) {
    ctx->depth = 1;
    refusal_forget(ctx);
  } else {
    refusal_note(ctx);
    return false;
  }
  g->ctx = ctx;
  return true;
}

void jit_leave(jit_guard *g) {
  if (g->ctx && --g->ctx->depth == 0)
    atomic_store_explicit(&g->ctx->owner, 0, memory_order_release);
}

rj_status jit_busy(const rj_ctx *ctx) {
  (void)ctx; /* its message is this thread's (rj_errmsg): the context is another thread's now */
  return RJ_EBUSY;
}

/* The combine IR texts of parsed requests (op custom): one copy per distinct text, owned by
 * the context, most recently parsed first.  They are bounded: beyond JIT_TEXTS_KEPT distinct
 * texts the least recently parsed goes (at most JIT_TEXTS_KEPT x RJ_COMBINE_IR_MAX bytes per
 * context).  Kernels keep their own copy (jit_combine_stage): only the parsed requests point here,
 * and a request parsed JIT_TEXTS_KEPT distinct texts ago is parsed again (redjit.h says so). */
#define JIT_TEXTS_KEPT 32
typedef struct jit_text {
  struct jit_text *next;
  uint64_t id; /* the requests' combine.text */
  char s[];
} jit_text;

static const char *text_keep(rj_ctx *ctx, const char *text, uint64_t *id) {
  int n = 0;
  for (jit_text **p = &ctx->texts, *t; (t = *p); p = &t->next, n++)
    if (strcmp(t->s, text) == 0) { /* to the front: the most recently parsed */
      *p = t->next;
      t->next = ctx->texts;
      ctx->texts = t;
      *id = t->id;
      return t->s;
    }
  size_t len = strlen(text);
  jit_text *t = malloc(sizeof *t + len + 1);
  if (!t) return NULL;
  memcpy(t->s, text, len + 1);
  t->id = *id = ++ctx->text_ids;
  t->next = ctx->texts;
  ctx->texts = t;
  if (n + 1 > JIT_TEXTS_KEPT) { /* the last one goes */
    jit_text **p = &ctx->texts;
    while ((*p)->next)
      p = &(*p)->next;
    free(*p);
    *p = NULL;
  }
  return t->s;
}

static void texts_free(rj_ctx *ctx) {
  for (jit_text *t = ctx->texts, *n; t; t = n) {
    n = t->next;
    free(t);
  }
  ctx->texts = NULL;
}

RJ_API void rj_ctx_free(rj_ctx *ctx) {
  if (!ctx) return;
  uintptr_t none = 0;
  /* A call is inside it (another thread's, or this thread's own from a callback): freeing it
   * would pull it from under that call.  It is left as it is: a leak, not a crash. */
  if (!atomic_compare_exchange_strong_explicit(&ctx->owner, &none, (uintptr_t)&this_thread,
                                               memory_order_acquire, memory_order_relaxed))
    return;
  ctx->depth = 1; /* what it frees may call back in (treduce's streams) */
  refusal_forget(ctx);
  if (ctx->treduce_free) ctx->treduce_free(ctx);
  for (rj_kernel *k = ctx->evicted, *n; k; k = n) { /* none: each call frees its own */
    n = k->next;
    jit_retire(ctx, k);
  }
  jit_retired_unload(ctx); /* evicted kernels' modules */
  for (rj_kernel *k = ctx->kernels, *n; k; k = n) {
    n = k->next;
    kernel_free(ctx, k);
  }
  jit_compiler_release(ctx);
  rt_close(ctx->cuda);
  free(ctx->table);
  free(ctx->pinset); /* pin.c's set of pinned kernels */
  jit_memo_free(ctx);
  texts_free(ctx);
  free(ctx->text);
  free(ctx);
}

RJ_API long long rj_ctx_compile_count(const rj_ctx *ctx) {
  JIT_ENTER_OR(ctx, -1);
  return ctx ? ctx->compiles : 0;
}

RJ_API const char *rj_errmsg(const rj_ctx *ctx) {
  if (ctx && refusal_of(ctx)) return busy_msg; /* before entering: that forgets it */
  JIT_ENTER_OR(ctx, busy_msg);
  return ctx ? ctx->err.msg : "no context";
}

RJ_API rj_status rj_error_set(rj_ctx *ctx, rj_status s, const char *fmt, ...) {
  JIT_ENTER(ctx);
  if (!ctx) return s;
  char msg[sizeof ctx->err.msg] = "";
  if (fmt) { /* into a copy first: the arguments may point at ctx's message */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
  }
  memset(&ctx->err, 0, sizeof ctx->err);
  if (s && msg[0]) ir_fail(&ctx->err, s, "%s", msg);
  return jit_done(ctx, s);
}

rj_status jit_done(rj_ctx *ctx, rj_status s) {
  if (s == RJ_OK) {
    ctx->err.msg[0] = 0;
    ctx->err.status = RJ_OK;
  } else if (ctx->err.status == RJ_OK) { /* a status with no message: say at least its name */
    ir_fail(&ctx->err, s, "%s", rj_status_name(s));
  }
  return s;
}

rj_status jit_null(rj_ctx *ctx, const char *what) {
  memset(&ctx->err, 0, sizeof ctx->err);
  return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL, "%s: NULL", what));
}

rj_status jit_aligned(ir_err *e, const char *field, uint64_t ptr, unsigned bytes,
                      const char *what) {
  if (ptr % bytes == 0) return RJ_OK;
  return ir_fail(e, RJ_EINVAL, "%s: 0x%llx is not aligned to its %u-byte %s", field,
                 (unsigned long long)ptr, bytes, what);
}

int jit_device_sms(rj_ctx *ctx, int device) {
  rt_cuda *rt = NULL;
  ir_err saved = ctx->err;
  int sms = 0;
  if (jit_cuda(ctx, &rt) != RJ_OK || rt_device_sms(rt, device, &sms, &ctx->err) != RJ_OK) sms = 0;
  ctx->err = saved;
  return sms;
}

rj_status jit_cuda(rj_ctx *ctx, rt_cuda **out) {
  if (!ctx->cuda && !ctx->cuda_tried) {
    ctx->cuda_tried = true;
    ir_err e = {0};
    rj_status s = rt_open(&ctx->cuda, &e);
    if (s) snprintf(ctx->cuda_why, sizeof ctx->cuda_why, "%s", e.msg);
  }
  if (!ctx->cuda) return ir_fail(&ctx->err, RJ_ENODEV, "%s", ctx->cuda_why);
  *out = ctx->cuda;
  return RJ_OK;
}

RJ_API rj_dtype rj_result_dtype(rj_op op, rj_dtype dtype) {
  return ir_op_result(op, dtype);
}

RJ_API const char *rj_status_name(rj_status s) {
  static const char *const n[] = {"RJ_OK",           "RJ_EINVAL",   "RJ_ENOVARIANT", "RJ_ETARGET",
                                  "RJ_ELLVM",        "RJ_ENODEV",   "RJ_ECUDA",      "RJ_ENOMEM",
                                  "RJ_EUNSUPPORTED", "RJ_ETIMEOUT", "RJ_ECRASH",     "RJ_EBUSY"};
  return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "RJ_E?";
}

#define RJ_STR_(x) #x
#define RJ_STR(x) RJ_STR_(x)
RJ_API const char *rj_version(void) {
  return RJ_STR(RJ_VERSION_MAJOR) "." RJ_STR(RJ_VERSION_MINOR) "." RJ_STR(RJ_VERSION_PATCH);
}

RJ_API void rj_options_init(rj_options *opt) {
  if (!opt) return;
  memset(opt, 0, sizeof *opt);
  opt->struct_size = sizeof *opt;
  opt->target = "auto";
}

rj_status jit_text_check(rj_ctx *ctx, const rj_request *r) {
  const rj_combine *cb = r ? ir_request_combine(r) : NULL;
  if (!cb || !cb->text) return RJ_OK; /* NULL: ir_validate says so */
  for (const jit_text *t = ctx->texts; t; t = t->next)
    if (t->id == cb->text) return RJ_OK; /* kept (combine.ir is it, or the caller's own) */
  return ir_fail(&ctx->err, RJ_EINVAL,
                 "combine.ir: the text this request was parsed with is no longer kept (a "
                 "context keeps the %d most recently parsed): parse the request again, or point "
                 "combine.ir at your own text and set combine.text to 0",
                 JIT_TEXTS_KEPT);
}

rj_status jit_validate(rj_ctx *ctx, const rj_request *r) {
  rj_status s = jit_text_check(ctx, r);
  if (s) return s;
  s = ir_validate(r, &ctx->err);
  if (!s && r->variant[0] && strcmp(r->variant, "auto") != 0 && !pass_variant_find(r->variant))
    s = ir_fail(&ctx->err, RJ_EINVAL,
                "variant: no variant named \"%s\" is registered (see `redjit variants`)",
                r->variant);
  return s;
}

RJ_API rj_status rj_request_parse(rj_ctx *ctx, const char *json, rj_request *out) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, out, "out");
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_status s = ir_parse(json, out, &ctx->err);
  rj_combine *cb = s ? NULL : ir_request_combine_mut(out);
  if (cb && cb->ir) { /* ctx keeps the text */
    char *ir = (char *)cb->ir;
    cb->ir = text_keep(ctx, ir, &cb->text);
    free(ir);
    if (!cb->ir) s = ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  }
  if (!s) s = jit_validate(ctx, out);
  return jit_done(ctx, s);
}

RJ_API rj_status rj_request_validate(rj_ctx *ctx, const rj_request *req) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, req, "req");
  memset(&ctx->err, 0, sizeof ctx->err);
  return jit_done(ctx, jit_validate(ctx, req));
}

RJ_API rj_status rj_device_count(rj_ctx *ctx, int *count) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, count, "count");
  memset(&ctx->err, 0, sizeof ctx->err);
  *count = 0;
  rt_cuda *rt;
  rj_status s = jit_cuda(ctx, &rt);
  if (!s) s = rt_device_count(rt, count, &ctx->err);
  return jit_done(ctx, s);
}

RJ_API rj_status rj_request_canonical(rj_ctx *ctx, const rj_request *req, const char **json) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, json, "json");
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_status s = jit_validate(ctx, req);
  char *text = NULL;
  if (!s) s = ir_canonical(req, &text, &ctx->err);
  if (!s) {
    free(ctx->text);
    ctx->text = text;
    *json = text;
  }
  return jit_done(ctx, s);
}

double jit_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
