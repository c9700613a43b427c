/* The host side of a repeated rj_treduce_run, without a GPU: the library runs on
 * tests/treduce/fake_cuda.c, a stand-in driver that counts every driver call (ctest puts it first
 * on LD_LIBRARY_PATH as libcuda.so.1; with the real driver this suite skips).  A call repeated on
 * the same group makes no host allocation, and no driver call beyond its launches, its events, the
 * context push around them and (waiting) the event wait: no device count, peer-access query,
 * stream or event creation, symbol lookup or allocation.  Also on the fake topology: auto's path
 * and why, and a table measured on another GPU left unread. */
#include "rjtest.h"

#include <dlfcn.h>
#include <stdbool.h>

static void *fake; /* the counting driver */
static long long (*calls)(const char *name);
static long long (*total)(void);
static void (*reset)(void);

/* ---- host allocations, counted while `counting` (glibc: the test's own malloc family forwards
 * to glibc's; not under a sanitizer, which has its own) */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COUNT_MALLOC 0
#else
#define COUNT_MALLOC 1
#endif
static volatile int counting;
static volatile long long allocs;
#if COUNT_MALLOC
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
void *malloc(size_t n) {
  if (counting) allocs++;
  return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
  if (counting) allocs++;
  return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
  if (counting) allocs++;
  return __libc_realloc(p, n);
}
void free(void *p) {
  __libc_free(p);
}
#endif

static rj_ctx *ctx;

/* The fake driver's counters, or false when the driver loaded is not the fake. */
static bool fake_driver(void) {
  int n = 0;
  if (rj_device_count(ctx, &n) != RJ_OK) return false;
  void *lib = fake = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  calls = lib ? (long long (*)(const char *))dlsym(lib, "fake_cuda_calls") : NULL;
  total = lib ? (long long (*)(void))dlsym(lib, "fake_cuda_total") : NULL;
  reset = lib ? (void (*)(void))dlsym(lib, "fake_cuda_reset") : NULL;
  return calls && total && reset;
}

static void setup(void) {
  ctx = rj_ctx_new();
  rj_treduce_table_load(ctx, NULL);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

/* 4 ranks of n f32 on GPUs r mod 4, root 0, at fake addresses. */
static void group(rj_treduce_group *g, rj_treduce_buf *b, int ranks, int64_t n) {
  rjt_fake_group(g, b, ranks, n, RJ_OP_SUM);
  g->root = 0;
  for (int r = 0; r < ranks; r++)
    b[r].device = r % 4;
  g->dst = b[0];
  rjt_fake_pointers(g, b);
}

/* The driver calls and allocations of one call repeated after a first; *res its result. */
static long long repeated(rj_treduce_group *g, rj_treduce_result *res) {
  rj_treduce_result first = {.struct_size = sizeof first};
  ck_assert_msg(rj_treduce_run(ctx, g, NULL, &first) == RJ_OK, "%s", rj_errmsg(ctx));
  reset();
  allocs = 0;
  counting = 1;
  res->struct_size = sizeof *res;
  rj_status s = rj_treduce_run(ctx, g, NULL, res);
  counting = 0;
  ck_assert_msg(s == RJ_OK, "%s", rj_errmsg(ctx));
  return allocs;
}

/* Driver calls other than the ones a call must make. */
static long long extra_calls(void) {
  static const char *const need[] = {
      "cuLaunchKernel",      "cuEventRecord",      "cuEventSynchronize", "cuEventElapsedTime",
      "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuStreamWaitEvent",  "cuCtxGetCurrent"};
  long long n = total();
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    n -= calls(need[i]);
  return n;
}

START_TEST(peer_call_repeated) {
  if (!fake_driver()) return;
  rj_treduce_group g;
  rj_treduce_buf b[4];
  group(&g, b, 4, 4096); /* 16 KiB per rank: auto takes peer */
  rj_treduce_result res;
  long long a = repeated(&g, &res);
  ck_assert_str_eq(res.path, "peer");
  ck_assert_int_eq(res.peer_ranks, 3);
  ck_assert_int_eq(calls("cuLaunchKernel"), 1);
  ck_assert_int_eq(calls("cuEventRecord"), 2);
  ck_assert_int_eq(calls("cuEventSynchronize"), 1);
  ck_assert_int_eq(calls("cuCtxPushCurrent_v2"), 1);
  /* is the root's context current, push, 2 records, launch, event wait, elapsed time, pop */
  ck_assert_int_eq(total(), 8);
  ck_assert_msg(extra_calls() == 0,
                "%lld driver calls beyond the launch and events (%lld peer "
                "queries, %lld device counts)",
                extra_calls(), calls("cuDeviceCanAccessPeer"), calls("cuDeviceGetCount"));
  if (COUNT_MALLOC) ck_assert_msg(a == 0, "%lld allocations in a repeated call", a);
  /* async: the caller's stream waits for the end instead */
  g.async = 1;
  a = repeated(&g, &res);
  ck_assert_int_eq(calls("cuEventSynchronize"), 0);
  /* current?, push, launch, the end's record, the caller's stream waits, pop */
  ck_assert_int_eq(total(), 6);
  ck_assert_msg(extra_calls() == 0, "%lld", extra_calls());
  if (COUNT_MALLOC) ck_assert_int_eq(a, 0);
  /* the root's context current already (as the CUDA runtime leaves it): no push, no pop */
  int (*retain)(void **, int) = (int (*)(void **, int))dlsym(fake, "cuDevicePrimaryCtxRetain");
  int (*push)(void *) = (int (*)(void *))dlsym(fake, "cuCtxPushCurrent_v2");
  int (*pop)(void **) = (int (*)(void **))dlsym(fake, "cuCtxPopCurrent_v2");
  void *c = NULL;
  ck_assert(retain && push && pop && retain(&c, 0) == 0 && push(c) == 0);
  a = repeated(&g, &res);
  ck_assert_int_eq(calls("cuCtxPushCurrent_v2"), 0);
  ck_assert_int_eq(total(), 4); /* current?, launch, record, wait */
  g.async = 0;
  a = repeated(&g, &res);
  ck_assert_int_eq(total(), 6); /* current?, 2 records, launch, event wait, elapsed time */
  pop(&c);
}
END_TEST

START_TEST(split_call_repeated) {
  if (!fake_driver()) return;
  rj_treduce_group g;
  rj_treduce_buf b[4];
  group(&g, b, 4, 1 << 20); /* 4 MiB per rank */
  g.path = RJ_TREDUCE_SPLIT;
  rj_treduce_result res;
  long long a = repeated(&g, &res);
  ck_assert_str_eq(res.path, "split");
  ck_assert_int_eq(calls("cuLaunchKernel"), 3); /* 4 ranks on 4 GPUs: the root has no slice */
  /* a context entered once per GPU with a slice, twice on the root's (the start, the end) */
  ck_assert_int_eq(calls("cuCtxPushCurrent_v2"), 5);
  ck_assert_msg(extra_calls() == 0, "%lld driver calls beyond launches and events", extra_calls());
  if (COUNT_MALLOC) ck_assert_msg(a == 0, "%lld allocations in a repeated call", a);
}
END_TEST

/* A changed group is checked again: the memo keys on every byte of it and its buffers. */
START_TEST(changed_group_checked) {
  if (!fake_driver()) return;
  rj_treduce_group g;
  rj_treduce_buf b[4];
  group(&g, b, 4, 4096);
  rj_treduce_result res = {.struct_size = sizeof res};
  ck_assert_int_eq(rj_treduce_run(ctx, &g, NULL, &res), RJ_OK);
  b[2].shape[0] = 4095; /* in place: the same src pointer */
  ck_assert_int_eq(rj_treduce_run(ctx, &g, NULL, &res), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "src[2].shape[0]"), "%s", rj_errmsg(ctx));
  b[2].shape[0] = 4096;
  ck_assert_int_eq(rj_treduce_run(ctx, &g, NULL, &res), RJ_OK);
  b[3].device = 9; /* no such GPU */
  ck_assert_int_eq(rj_treduce_run(ctx, &g, NULL, &res), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "src[3].device: no GPU 9 (4 present)"), "%s",
                rj_errmsg(ctx));
  b[3].device = 3;
  g.async = 2;
  ck_assert_int_eq(rj_treduce_run(ctx, &g, NULL, &res), RJ_EINVAL);
  g.async = 0;
  ck_assert_int_eq(rj_treduce_run(ctx, &g, NULL, &res), RJ_OK);
}
END_TEST

/* Auto on the fake 4 GPUs: the built-in table (device any), and a table of another GPU unread. */
START_TEST(auto_on_fake_gpus) {
  if (!fake_driver()) return;
  rj_treduce_group g;
  rj_treduce_buf b[4];
  group(&g, b, 4, 4096);
  rj_request r;
  ck_assert_int_eq(rj_treduce_request(ctx, &g, &r), RJ_OK);
  int dev[4] = {0, 1, 2, 3};
  rj_treduce_path p;
  const char *why;
  ck_assert_int_eq(rj_treduce_choose(ctx, &r, dev, &p, &why), RJ_OK);
  ck_assert_msg(p == RJ_TREDUCE_PEER && strstr(why, "table default"), "%s", why);
  const char *h200 = "redjit-treduce-paths 1\ndevice NVIDIA H200\n4 4 16384 split-equal 1\n"
                     "4 4 16384 peer 9\n";
  /* given to the context: refused */
  ck_assert_int_eq(rj_treduce_table_set(ctx, h200, strlen(h200), "h200"), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "table \"h200\": measured on NVIDIA H200, but this "
                                       "machine's GPU 0 is Fake GPU"),
                "%s", rj_errmsg(ctx));
  /* found by a later process (REDJIT_TREDUCE_TABLE here): not read, and said */
  char f[64];
  snprintf(f, sizeof f, "/tmp/rjt_h200_%ld.txt", (long)getpid());
  FILE *w = fopen(f, "w");
  ck_assert_ptr_nonnull(w);
  fputs(h200, w);
  fclose(w);
  setenv("REDJIT_TREDUCE_TABLE", f, 1);
  rj_ctx *c2 = rj_ctx_new();
  ck_assert_int_eq(rj_treduce_choose(c2, &r, dev, &p, &why), RJ_OK);
  ck_assert_msg(p == RJ_TREDUCE_PEER && strstr(why, "table default") &&
                    strstr(why, "not read: measured on NVIDIA H200, the root's GPU is Fake GPU"),
                "%s", why);
  rj_ctx_free(c2);
  unsetenv("REDJIT_TREDUCE_TABLE");
  remove(f);
  rj_treduce_result res = {.struct_size = sizeof res};
  ck_assert_int_eq(rj_treduce_run(ctx, &g, NULL, &res), RJ_OK);
  ck_assert_str_eq(res.path, "peer");
  const char *fake = "redjit-treduce-paths 1\ndevice Fake GPU\n4 4 16384 split-equal 1\n"
                     "4 4 16384 peer 9\n";
  ck_assert_int_eq(rj_treduce_table_set(ctx, fake, strlen(fake), "fake"), RJ_OK);
  ck_assert_int_eq(rj_treduce_run(ctx, &g, NULL, &res), RJ_OK);
  ck_assert_str_eq(res.path, "split");
  ck_assert_int_eq(res.slices, 4); /* equal slices: the root has one */
  /* the ring picked by a table runs the ring */
  const char *ring = "redjit-treduce-paths 1\ndevice any\n4 4 16384 ring 1\n4 4 16384 peer 9\n";
  ck_assert_int_eq(rj_treduce_table_set(ctx, ring, strlen(ring), "ring"), RJ_OK);
  ck_assert_int_eq(rj_treduce_run(ctx, &g, NULL, &res), RJ_OK);
  ck_assert_str_eq(res.path, "ring");
}
END_TEST

/* rj_treduce_calibrate on the fake GPUs: a row per path and size, the GPU's name, auto reading
 * it; its refusals. */
START_TEST(calibrate_on_fake_gpus) {
  if (!fake_driver()) return;
  ck_assert_int_eq(rj_treduce_calibrate(ctx, 4, 12, 14, 3), RJ_OK);
  const char *text;
  ck_assert_int_eq(rj_treduce_table_text(ctx, &text), RJ_OK);
  ck_assert_msg(strstr(text, "device Fake GPU\n") && strstr(text, "4 4 4096 peer 10.0\n") &&
                    strstr(text, "4 4 16384 ring 10.0\n") &&
                    strstr(text, "4 4 16384 split-equal 10.0\n") &&
                    strstr(text, "4 4 4096 staged 10.0\n"),
                "%s", text);
  ck_assert_int_eq(rjt_count(text, "\n4 4 "), 10);                  /* 5 paths at 2 sizes */
  ck_assert_int_eq(rj_treduce_calibrate(ctx, 8, 12, 12, 1), RJ_OK); /* added to it */
  ck_assert_int_eq(rj_treduce_table_text(ctx, &text), RJ_OK);
  ck_assert_int_eq(rjt_count(text, "\n4 4 "), 10);
  ck_assert_int_eq(rjt_count(text, "\n8 4 "), 5);
  rj_treduce_group g;
  rj_treduce_buf b[4];
  group(&g, b, 4, 4096);
  rj_request r;
  ck_assert_int_eq(rj_treduce_request(ctx, &g, &r), RJ_OK);
  int dev[4] = {0, 1, 2, 3};
  rj_treduce_path p;
  const char *why;
  ck_assert_int_eq(rj_treduce_choose(ctx, &r, dev, &p, &why), RJ_OK);
  ck_assert_msg(strstr(why, "table calibrated"), "%s", why);
  ck_assert_int_eq(rj_treduce_calibrate(ctx, 0, 12, 14, 3), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "ranks: 0"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_treduce_calibrate(ctx, 4, 14, 12, 3), RJ_EINVAL);
  ck_assert_int_eq(rj_treduce_calibrate(ctx, 4, 12, 41, 3), RJ_EINVAL);
  ck_assert_int_eq(rj_treduce_calibrate(ctx, 4, 12, 14, 0), RJ_EINVAL);
}
END_TEST

int main(void) {
  /* the driver on the library path must be the fake (loaded, not initialised, before any fork) */
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib || !dlsym(lib, "fake_cuda_calls")) {
    /* ctest sets FAKE_CUDA_GPUS with the library path: there the fake must be found; elsewhere
     * (a GPU machine running every carried suite) there is nothing to count */
    bool ctest = getenv("FAKE_CUDA_GPUS") != NULL;
    printf("%s: libcuda.so.1 is not tests/treduce/fake_cuda.c (ctest puts build/tests/fakecuda on "
           "LD_LIBRARY_PATH)\n",
           ctest ? "FAIL" : "SKIP");
    return ctest ? 1 : 0;
  }
  Suite *s = suite_create("treduce_calls");
  TCase *tc = tcase_create("treduce_calls");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, peer_call_repeated);
  tcase_add_test(tc, split_call_repeated);
  tcase_add_test(tc, changed_group_checked);
  tcase_add_test(tc, auto_on_fake_gpus);
  tcase_add_test(tc, calibrate_on_fake_gpus);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
