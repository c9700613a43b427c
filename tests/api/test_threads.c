/* Threads: a context per thread runs concurrently and gives each thread what one thread alone
 * gets; threads sharing one context (a misuse) get RJ_OK or RJ_EBUSY from every call, never a
 * crash, and a call refused names the misuse.  Built under ThreadSanitizer by scripts/tsan.sh.
 * The threads record what they saw; the main thread asserts (Check's asserts are not for
 * threads). */
#include "rjtest.h"

#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#define NTHREADS 4

static const char *const requests[] = {
    "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,"
    "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
    "{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"f16\",\"scope\":\"warp\","
    "\"src\":{\"mem\":\"shared\",\"shape\":[2,64]},\"dst\":{\"mem\":\"shared\",\"shape\":[2]}}",
    "{\"kind\":\"subgroup\",\"primitive\":\"reduce_all_add\",\"dtype\":\"i64\",\"log2_size\":5,"
    "\"threads\":64,\"blocks\":2}",
    "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1]}",
    "{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"bf16\",\"shape\":[1024,32768],\"axes\":[0],"
    "\"nan\":\"ignore\"}",
};
#define NREQ ((int)(sizeof requests / sizeof requests[0]))

static const char ir_module[] =
    "target triple = \"nvptx64-nvidia-cuda\"\n"
    "define void @k(ptr addrspace(1) %p, float %a) {\n"
    "  %x = fmul float %a, %a\n  store float %x, ptr addrspace(1) %p\n  ret void\n}\n";

typedef struct worker {
  rj_ctx *ctx; /* shared, or NULL: the worker makes its own */
  rj_ctx *use; /* the one it uses */
  int id, rounds;
  long long ok, busy;
  char ptx[NREQ][64]; /* a fingerprint of each request's PTX: its length and a hash */
  char fail[512];     /* the first thing that went wrong ("" if nothing) */
} worker;

static void failed(worker *w, const char *fmt, ...) RJ_PRINTF(2, 3);
static void failed(worker *w, const char *fmt, ...) {
  if (w->fail[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->fail, sizeof w->fail, fmt, ap);
  va_end(ap);
}

static void fingerprint(const char *text, char *out, size_t n) {
  unsigned long long h = 1469598103934665603ull;
  for (const char *p = text; *p; p++)
    h = (h ^ (unsigned char)*p) * 1099511628211ull;
  snprintf(out, n, "%zu:%016llx", strlen(text), h);
}

/* One status: RJ_OK counts, RJ_EBUSY counts (and must be named to this thread), any other is a
 * failure unless it is `also` (e.g. RJ_ENODEV without a GPU).  Returns s == RJ_OK. */
static bool seen(worker *w, const char *call, rj_status s, rj_status also) {
  if (s == RJ_OK) {
    w->ok++;
    return true;
  }
  if (s == RJ_EBUSY && w->ctx) {
    w->busy++;
    if (!strstr(rj_errmsg(w->use), "another thread is inside a call on this context"))
      failed(w, "%s: RJ_EBUSY, but rj_errmsg says \"%s\"", call, rj_errmsg(w->use));
    return false;
  }
  if (s != also) failed(w, "%s: %s (%s)", call, rj_status_name(s), rj_errmsg(w->use));
  return false;
}

/* The public calls a CPU can make, in a round: parse, validate, canonical, compile (text read
 * back), explain, caller IR compiled in process, the counters, a device count, an error set. */
static void one_round(worker *w, rj_ctx *ctx, int round) {
  int i = (w->id + round) % NREQ;
  rj_request r;
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  if (!seen(w, "rj_request_parse", rj_request_parse(ctx, requests[i], &r), RJ_OK)) return;
  seen(w, "rj_request_validate", rj_request_validate(ctx, &r), RJ_OK);
  const char *canon = NULL;
  if (seen(w, "rj_request_canonical", rj_request_canonical(ctx, &r, &canon), RJ_OK) && !canon)
    failed(w, "rj_request_canonical: RJ_OK without text");
  rj_kernel *k = NULL;
  if (seen(w, "rj_compile", rj_compile(ctx, &r, &o, &k), RJ_OK)) {
    char fp[64];
    fingerprint(rj_kernel_text(k, RJ_EMIT_PTX), fp, sizeof fp);
    if (!w->ptx[i][0]) snprintf(w->ptx[i], sizeof w->ptx[i], "%s", fp);
    if (strcmp(fp, w->ptx[i]) != 0) failed(w, "request %d: the PTX changed between calls", i);
  }
  const char *text = NULL;
  seen(w, "rj_explain", rj_explain(ctx, &r, &o, &text), RJ_OK);
  o.ir_in_process = round % 2;
  if (o.ir_in_process) seen(w, "rj_compile_ir", rj_compile_ir(ctx, ir_module, 0, "k", &o, &k), 0);
  rj_cache_stats st = {.struct_size = sizeof st};
  seen(w, "rj_ctx_cache_stats", rj_ctx_cache_stats(ctx, &st), RJ_OK);
  if (rj_ctx_compile_count(ctx) < -1) failed(w, "rj_ctx_compile_count below -1");
  int n = 0;
  seen(w, "rj_device_count", rj_device_count(ctx, &n), RJ_ENODEV);
  char buf[64];
  seen(w, "rj_target_resolve", rj_target_resolve(ctx, &o, buf, sizeof buf), RJ_OK);
  rj_status e = rj_error_set(ctx, RJ_EINVAL, "a binding's own failure %d", round);
  if (e != RJ_EINVAL) seen(w, "rj_error_set", e, RJ_OK);
}

static void *work(void *arg) {
  worker *w = arg;
  rj_ctx *ctx = w->ctx ? w->ctx : rj_ctx_new();
  if (!ctx) {
    failed(w, "rj_ctx_new: NULL");
    return NULL;
  }
  w->use = ctx;
  for (int round = 0; round < w->rounds; round++)
    one_round(w, ctx, round);
  if (!w->ctx) rj_ctx_free(ctx);
  return NULL;
}

static void run_workers(worker *w, rj_ctx *shared, int rounds) {
  pthread_t t[NTHREADS];
  for (int i = 0; i < NTHREADS; i++) {
    memset(&w[i], 0, sizeof w[i]);
    w[i].ctx = shared, w[i].id = i, w[i].rounds = rounds;
    ck_assert_int_eq(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < NTHREADS; i++) {
    ck_assert_int_eq(pthread_join(t[i], NULL), 0);
    ck_assert_msg(!w[i].fail[0], "thread %d: %s", i, w[i].fail);
  }
}

/* A context per thread: every call succeeds, and each thread's PTX is what one thread alone
 * compiles. */
START_TEST(context_per_thread) {
  worker w[NTHREADS], alone;
  run_workers(w, NULL, 2 * NREQ);
  memset(&alone, 0, sizeof alone);
  alone.rounds = NREQ;
  work(&alone);
  ck_assert_msg(!alone.fail[0], "%s", alone.fail);
  for (int i = 0; i < NTHREADS; i++) {
    ck_assert_int_gt(w[i].ok, 0);
    ck_assert_int_eq(w[i].busy, 0);
    for (int q = 0; q < NREQ; q++)
      ck_assert_msg(strcmp(w[i].ptx[q], alone.ptx[q]) == 0, "thread %d, request %d: %s vs %s", i, q,
                    w[i].ptx[q], alone.ptx[q]);
  }
}
END_TEST

/* Threads sharing one context: RJ_OK or RJ_EBUSY from every call, never a crash; afterwards the
 * context works as if nothing had happened. */
START_TEST(shared_context_refuses) {
  rj_ctx *ctx = rj_ctx_new();
  worker w[NTHREADS];
  run_workers(w, ctx, 4 * NREQ);
  long long ok = 0, busy = 0;
  for (int i = 0; i < NTHREADS; i++)
    ok += w[i].ok, busy += w[i].busy;
  fprintf(stderr, "shared context: %lld calls went in, %lld were refused (RJ_EBUSY)\n", ok, busy);
  ck_assert_int_gt(ok, 0);
  worker after;
  memset(&after, 0, sizeof after);
  after.ctx = ctx, after.rounds = NREQ;
  work(&after);
  ck_assert_msg(!after.fail[0], "%s", after.fail);
  ck_assert_int_eq(after.busy, 0);
  rj_ctx_free(ctx);
}
END_TEST

/* ---------------------------------------------------------------- a refusal, step by step */

typedef struct holder {
  rj_ctx *ctx;
  rj_status s;
} holder;

/* Inside rj_compile_ir for as long as its compiler process (a script that sleeps) lives. */
static void *hold(void *arg) {
  holder *h = arg;
  rj_kernel *k = NULL;
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  h->s = rj_compile_ir(h->ctx, ir_module, 0, "k", &o, &k);
  return NULL;
}

/* One thread is inside a call (a compile whose compiler process sleeps 3 s): every call from
 * another thread is refused at once, with RJ_EBUSY and a message naming the misuse, and frees
 * nothing; that thread's calls on another context leave the refusal's message as it is; when
 * the first call returns, the other thread's calls go in again. */
START_TEST(refusal_is_named) {
  char dir[] = "/tmp/rjt-threads-XXXXXX", script[64];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(script, sizeof script, "%s/irc", dir);
  FILE *f = fopen(script, "w");
  ck_assert_ptr_nonnull(f);
  fputs("#!/bin/sh\nexec sleep 3\n", f);
  fclose(f);
  ck_assert_int_eq(chmod(script, 0700), 0);
  setenv("REDJIT_IRC", script, 1); /* before any thread starts */
  holder h = {rj_ctx_new(), RJ_OK};
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_request r;
  rj_kernel *k = NULL, *mine = NULL; /* mine: its LLVM IR, made when first asked, not yet */
  rjt_parse(h.ctx, requests[0], &r);
  ck_assert_int_eq(rj_compile(h.ctx, &r, &o, &mine), RJ_OK);
  pthread_t t;
  ck_assert_int_eq(pthread_create(&t, NULL, hold, &h), 0);
  /* wait until it is inside: rj_ctx_compile_count says -1 while another thread is */
  struct timespec ms = {0, 1000000};
  int waited = 0;
  while (rj_ctx_compile_count(h.ctx) != -1 && waited++ < 2000)
    nanosleep(&ms, NULL);
  ck_assert_int_eq(rj_ctx_compile_count(h.ctx), -1);
  ck_assert_int_eq(rj_request_parse(h.ctx, requests[0], &r), RJ_EBUSY);
  ck_assert_str_eq(rj_status_name(RJ_EBUSY), "RJ_EBUSY");
  ck_assert_ptr_nonnull(strstr(rj_errmsg(h.ctx), "another thread is inside a call"));
  ck_assert_int_eq(rj_compile(h.ctx, &r, &o, &k), RJ_EBUSY);
  ck_assert_ptr_nonnull(rj_kernel_text(mine, RJ_EMIT_PTX)); /* made: a read, no use of ctx */
  ck_assert_ptr_null(rj_kernel_text(mine, RJ_EMIT_LLVM));   /* to be made: in ctx, refused */
  ck_assert_int_eq(rj_error_set(h.ctx, RJ_EINVAL, "mine"), RJ_EBUSY);
  ck_assert_int_eq(rj_ctx_set_memory_cache(h.ctx, 1), RJ_EBUSY); /* it evicts: a use */
  ck_assert_int_eq(rj_tensor_launch(h.ctx, mine, 0, 1, 1, NULL), RJ_EBUSY);
  rj_ctx_free(h.ctx); /* refused too: the context stays, for the thread inside it */
  ck_assert_ptr_nonnull(strstr(rj_errmsg(h.ctx), "another thread is inside a call"));
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  ck_assert_int_eq(h.s, RJ_ECRASH); /* the script answered nothing */
  /* calls on another context, one going in and one failing, change nothing of h.ctx's */
  rj_ctx *other = rj_ctx_new();
  rj_request r2;
  rjt_parse(other, requests[0], &r2);
  ck_assert_int_eq(rj_request_parse(other, "{\"kind\":\"nope\"}", &r2), RJ_EINVAL);
  char theirs[512];
  snprintf(theirs, sizeof theirs, "%s", rj_errmsg(other));
  ck_assert_ptr_nonnull(strstr(theirs, "kind"));
  /* rj_errmsg still tells this thread about its own last call: the refused one */
  ck_assert_ptr_nonnull(strstr(rj_errmsg(h.ctx), "another thread is inside a call"));
  ck_assert_str_eq(rj_errmsg(other), theirs); /* and the other context keeps its own */
  ck_assert_ptr_nonnull(strstr(rj_errmsg(h.ctx), "another thread is inside a call"));
  rj_ctx_free(other);
  rjt_parse(h.ctx, requests[0], &r); /* this thread's turn now */
  ck_assert_str_eq(rj_errmsg(h.ctx), "");
  ck_assert_int_eq(rj_compile(h.ctx, &r, &o, &k), RJ_OK);
  ck_assert_ptr_nonnull(rj_kernel_text(mine, RJ_EMIT_LLVM));
  rj_ctx_free(h.ctx);
  unsetenv("REDJIT_IRC");
  unlink(script);
  rmdir(dir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("threads");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, context_per_thread);
  tcase_add_test(tc, shared_context_refuses);
  tcase_add_test(tc, refusal_is_named);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
