/* A context keeps NVPTX's codegen pipeline per target machine and runs it on kernel after kernel
 * (jit/llvm/emitter.cpp): every kernel must come out byte-identical to the one a fresh context
 * emits, whatever was compiled before it in the same context -- kernels with shared variables the
 * PTX printer demotes (emitted through a fresh pipeline) among those without, several targets, both
 * orders.  The requests are lines of the PTX corpus (tests/corpus/requests.jsonl): every 25th, and
 * the first 48 (tile kernels in shared memory, one after another: without the guard in
 * emitter.cpp, the printer reads an earlier module's freed variables here). */
#include "rjtest.h"

enum { MAX_REQ = 64 };
static char *reqs[MAX_REQ], targets[MAX_REQ][16];
static int nreq;

/* The "request" object and the "target" of each stride-th corpus line without flags, up to max. */
static void read_corpus(int stride, int max) {
  FILE *f = fopen(REDJIT_SOURCE_DIR "/tests/corpus/requests.jsonl", "r");
  ck_assert_ptr_nonnull(f);
  static char line[1 << 16];
  nreq = 0;
  for (int i = 0; fgets(line, sizeof line, f) && nreq < max; i++) {
    char *req = strstr(line, "\"request\": "), *end = strrchr(line, '}');
    char *tg = strstr(line, "\"target\": \"");
    if (i % stride || strstr(line, "\"flags\"") || !req || !end || !tg || end < req) continue;
    *end = 0;
    reqs[nreq] = strdup(req + strlen("\"request\": "));
    sscanf(tg + strlen("\"target\": \""), "%15[^\"]", targets[nreq]);
    nreq++;
  }
  fclose(f);
  ck_assert_int_ge(nreq, 20);
}

static rj_ctx *ctx_new(void) {
  rj_ctx *ctx = rj_ctx_new();
  ck_assert_ptr_nonnull(ctx);
  ck_assert_int_eq(rj_ctx_set_disk_cache(ctx, NULL), RJ_OK);
  return ctx;
}

/* Request i's PTX compiled in ctx (malloc'ed), NULL where the request is refused. */
static char *ptx_of(rj_ctx *ctx, int i) {
  rj_request r;
  rj_options o;
  rj_options_init(&o);
  o.target = targets[i];
  rj_kernel *k = NULL;
  if (rj_request_parse(ctx, reqs[i], &r) || rj_compile(ctx, &r, &o, &k)) return NULL;
  return strdup(rj_kernel_text(k, RJ_EMIT_PTX));
}

static void same_in_one_context(int stride, int max, int step) {
  read_corpus(stride, max);
  char *fresh[MAX_REQ];
  int compiled = 0;
  for (int i = 0; i < nreq; i++) {
    rj_ctx *c = ctx_new();
    fresh[i] = ptx_of(c, i);
    compiled += fresh[i] != NULL;
    rj_ctx_free(c);
  }
  ck_assert_int_ge(compiled, 15);
  rj_ctx *ctx = ctx_new();
  for (int j = 0; j < nreq; j++) {
    int i = step > 0 ? j : nreq - 1 - j;
    char *p = ptx_of(ctx, i);
    ck_assert_msg((p == NULL) == (fresh[i] == NULL), "request %d: compiles in one only", i);
    ck_assert_msg(!p || strcmp(p, fresh[i]) == 0, "request %d (%s): PTX differs after %d others", i,
                  targets[i], j);
    free(p);
    free(fresh[i]);
  }
  rj_ctx_free(ctx);
  for (int i = 0; i < nreq; i++)
    free(reqs[i]);
}

START_TEST(forward) {
  same_in_one_context(25, MAX_REQ, 1);
}
END_TEST

START_TEST(backward) {
  same_in_one_context(25, MAX_REQ, -1);
}
END_TEST

START_TEST(shared_in_a_row) {
  same_in_one_context(1, 48, 1);
}
END_TEST

int main(void) {
  setenv("REDJIT_CACHE_DISABLE", "1", 1);
  Suite *s = suite_create("codegen_reuse");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, forward);
  tcase_add_test(tc, backward);
  tcase_add_test(tc, shared_in_a_row);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
