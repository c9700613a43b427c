/* treduce on the caller's stream (rj_treduce_group's stream and async; docs/TREDUCE.md "Stream
 * ordering"), on the GPU(s), rank r on GPU r mod the GPU count.  The test makes its own driver
 * calls: a non-blocking stream on the root's GPU, a host function that sleeps on it, and async
 * memsets / copies; CUresult is an int and handles are pointers (no cuda.h: the library is used
 * through its public API only).  Without a GPU it prints "SKIP: no GPU" and passes. */
#define _POSIX_C_SOURCE 200809L
#include "rjtest.h"

#include <dlfcn.h>
#include <time.h>

static rj_ctx *ctx;
static int gpu, ndev, cases_run, ring_refused;
static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
  if (gpu) ck_assert_int_eq(rj_device_count(ctx, &ndev), RJ_OK);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

static struct {
  void *lib;
  int (*DeviceGet)(int *, int);
  int (*PrimaryCtxRetain)(void **, int);
  int (*CtxPush)(void *);
  int (*CtxPop)(void **);
  int (*StreamCreate)(void **, unsigned);
  int (*StreamDestroy)(void *);
  int (*StreamQuery)(void *);
  int (*StreamSynchronize)(void *);
  int (*LaunchHostFunc)(void *, void (*)(void *), void *);
  int (*MemsetD32Async)(uint64_t, unsigned, size_t, void *);
  int (*MemcpyDtoHAsync)(void *, uint64_t, size_t, void *);
  int (*CtxCreate)(void **, unsigned, int);
  int (*CtxDestroy)(void *);
  int (*MemAllocHost)(void **, size_t);
  int (*MemFreeHost)(void *);
} cu;
#define CU_NOT_READY 600 /* CUDA_ERROR_NOT_READY */

static void cu_open(void) {
  if (cu.lib) return;
  cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  ck_assert_ptr_nonnull(cu.lib);
  struct {
    void **slot;
    const char *name;
  } syms[] = {{(void **)&cu.DeviceGet, "cuDeviceGet"},
              {(void **)&cu.PrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
              {(void **)&cu.CtxPush, "cuCtxPushCurrent_v2"},
              {(void **)&cu.CtxPop, "cuCtxPopCurrent_v2"},
              {(void **)&cu.StreamCreate, "cuStreamCreate"},
              {(void **)&cu.StreamDestroy, "cuStreamDestroy_v2"},
              {(void **)&cu.StreamQuery, "cuStreamQuery"},
              {(void **)&cu.StreamSynchronize, "cuStreamSynchronize"},
              {(void **)&cu.LaunchHostFunc, "cuLaunchHostFunc"},
              {(void **)&cu.MemsetD32Async, "cuMemsetD32Async"},
              {(void **)&cu.MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
              {(void **)&cu.CtxCreate, "cuCtxCreate_v2"},
              {(void **)&cu.CtxDestroy, "cuCtxDestroy_v2"},
              {(void **)&cu.MemAllocHost, "cuMemAllocHost_v2"},
              {(void **)&cu.MemFreeHost, "cuMemFreeHost"}};
  for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
    *syms[i].slot = dlsym(cu.lib, syms[i].name);
    ck_assert_msg(*syms[i].slot != NULL, "libcuda lacks %s", syms[i].name);
  }
}

/* Makes GPU dev's primary context current (the library's), for the test's own calls. */
static void cu_enter(int dev) {
  int d = 0;
  void *c = NULL;
  ck_assert_int_eq(cu.DeviceGet(&d, dev), 0);
  ck_assert_int_eq(cu.PrimaryCtxRetain(&c, d), 0);
  ck_assert_int_eq(cu.CtxPush(c), 0);
}
static void cu_leave(void) {
  void *c = NULL;
  cu.CtxPop(&c);
}
static void sleep_on_stream(void *ms) {
  usleep((useconds_t)(*(int *)ms) * 1000);
}

/* `calls` calls on `path` with the group's stream S, a non-blocking stream of the root's GPU on
 * which a host function first sleeps 150 ms; before call k async memsets write 7 + k into the
 * root's source and 1000 + 3k into another rank m's on the root's GPU (where there is one: on the
 * staged path it is copied into a staging buffer), and after it an async copy fetches the
 * destination.  Call k must see memsets k (it starts after S's earlier work) and copy k must see
 * call k (async: S waits for it; the calls after it reuse its streams, events and staging
 * buffers, which must not be refilled before call k has folded them).  free_ctx: the calls use
 * a context of their own, freed right after them (before S is waited for): rj_ctx_free must wait
 * for the calls in flight, and their results must still arrive.  Async: every call returns
 * while S still sleeps, and ms is 0; not async: a call returns after S's work and the
 * reduction.  i32 sums: exact. */
static void stream_case(int ranks, int root, int64_t rows, rj_treduce_path path, int async,
                        int calls, int free_ctx) {
  int64_t cols = 1024, n = rows * cols;
  size_t bytes = (size_t)n * 4;
  rj_treduce_buf *b = calloc((size_t)ranks, sizeof *b);
  int32_t *h = malloc(bytes), *want = malloc(bytes), *got = NULL;
  ck_assert(b && h && want);
  int rdev = root % ndev, m = -1;
  for (int r = 0; r < ranks && m < 0; r++)
    if (r != root && r % ndev == rdev) m = r;
  cu_enter(rdev); /* pinned, so that the copies on S are asynchronous too */
  ck_assert_int_eq(cu.MemAllocHost((void **)&got, bytes * (size_t)calls), 0);
  cu_leave();
  memset(want, 0, bytes);
  rj_treduce_group g;
  rjt_treduce_group(&g, b, ranks, root, rows, cols, ndev, RJ_OP_SUM, RJ_I32);
  g.path = path;
  for (int r = 0; r < ranks; r++) {
    ck_assert_int_eq(rj_device_alloc(ctx, b[r].device, bytes, &b[r].ptr), RJ_OK);
    for (int64_t i = 0; i < n; i++)
      h[i] = (int32_t)((i * 7919 + r * 104729) % 2003) - 1001;
    if (r != root && r != m)
      for (int64_t i = 0; i < n; i++)
        want[i] += h[i];
    ck_assert_int_eq(rj_memcpy_htod(ctx, b[r].device, b[r].ptr, h, bytes), RJ_OK);
  }
  ck_assert_int_eq(rj_device_alloc(ctx, rdev, bytes, &g.dst.ptr), RJ_OK);
  rj_treduce_result res;
  rj_ctx *c = free_ctx ? rj_ctx_new() : ctx;
  ck_assert_ptr_nonnull(c);
  /* warm: kernels compiled and loaded, so that the timed calls only enqueue */
  rj_status s = rj_treduce_run(c, &g, NULL, &res);
  if (s == RJ_EUNSUPPORTED && path != RJ_TREDUCE_RING)
    goto out; /* no peer access: said elsewhere */
  ck_assert_msg(s == RJ_OK, "warm-up, path %d: %s", path, rj_errmsg(c));
  memset(got, 0xA5, bytes);
  ck_assert_int_eq(rj_memcpy_htod(ctx, rdev, g.dst.ptr, got, bytes), RJ_OK);
  memset(got, 0x5A, bytes * (size_t)calls);
  cu_enter(rdev);
  void *S = NULL;
  static int sleep_ms = 150;
  ck_assert_int_eq(cu.StreamCreate(&S, 1 /* CU_STREAM_NON_BLOCKING */), 0);
  ck_assert_int_eq(cu.LaunchHostFunc(S, sleep_on_stream, &sleep_ms), 0);
  g.stream = S;
  g.async = async;
  for (int k = 0; k < calls; k++) {
    ck_assert_int_eq(cu.MemsetD32Async(b[root].ptr, 7u + (unsigned)k, (size_t)n, S), 0);
    if (m >= 0)
      ck_assert_int_eq(cu.MemsetD32Async(b[m].ptr, 1000u + 3u * (unsigned)k, (size_t)n, S), 0);
    cu_leave();
    s = rj_treduce_run(c, &g, NULL, &res);
    cu_enter(rdev);
    int q = cu.StreamQuery(S);
    if (path == RJ_TREDUCE_RING && async) {
      ck_assert_msg(s == RJ_EUNSUPPORTED && strstr(rj_errmsg(c), "async"), "ring async: %s (%s)",
                    rj_status_name(s), rj_errmsg(c));
      ring_refused++;
      break;
    }
    ck_assert_msg(s == RJ_OK, "path %d, async %d, call %d: %s", path, async, k, rj_errmsg(c));
    if (async)
      ck_assert_msg(q == CU_NOT_READY && res.ms == 0 && res.call_ms < 100,
                    "async call %d, path %s: stream query %d, ms %g, call_ms %g", k, res.path, q,
                    res.ms, res.call_ms);
    else
      ck_assert_msg(q == 0 && res.ms > 0 && (k || res.call_ms >= 140),
                    "waiting call %d, path %s: stream query %d, ms %g, call_ms %g", k, res.path, q,
                    res.ms, res.call_ms);
    ck_assert_int_eq(cu.MemcpyDtoHAsync(got + (size_t)k * (size_t)n, g.dst.ptr, bytes, S), 0);
  }
  if (free_ctx) { /* S still sleeps: the calls are in flight */
    cu_leave();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rj_ctx_free(c);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    ck_assert_msg(!async || waited >= 100, "rj_ctx_free returned after %.1f ms", waited);
    c = ctx;
    cu_enter(rdev);
  }
  ck_assert_int_eq(cu.StreamSynchronize(S), 0);
  ck_assert_int_eq(cu.StreamDestroy(S), 0);
  cu_leave();
  for (int k = 0; s == RJ_OK && k < calls; k++) {
    int32_t add = 7 + k + (m >= 0 ? 1000 + 3 * k : 0);
    for (int64_t i = 0; i < n; i++)
      ck_assert_msg(got[(size_t)k * (size_t)n + (size_t)i] == want[i] + add,
                    "path %s, async %d, call %d: element %lld is %d, want %d", res.path, async, k,
                    (long long)i, got[(size_t)k * (size_t)n + (size_t)i], want[i] + add);
    cases_run++;
  }
out:
  if (c != ctx) rj_ctx_free(c);
  for (int r = 0; r < ranks; r++)
    ck_assert_int_eq(rj_device_free(ctx, b[r].device, b[r].ptr), RJ_OK);
  ck_assert_int_eq(rj_device_free(ctx, rdev, g.dst.ptr), RJ_OK);
  free(b);
  free(h);
  free(want);
  cu_enter(rdev);
  cu.MemFreeHost(got);
  cu_leave();
}

START_TEST(stream_order) {
  if (!gpu) return;
  cu_open();
  static const rj_treduce_path all[] = {RJ_TREDUCE_AUTO,  RJ_TREDUCE_PEER,        RJ_TREDUCE_STAGED,
                                        RJ_TREDUCE_SPLIT, RJ_TREDUCE_SPLIT_EQUAL, RJ_TREDUCE_RING};
  for (int p = 0; p < 6; p++)
    for (int async = 0; async < 2; async++)
      stream_case(4, 1, 4096, all[p], async, async ? 4 : 2, 0); /* 16 MiB per rank */
  /* a staging buffer above the kept 64 MiB: allocated and freed on the kernel stream */
  stream_case(3, 0, 17000, RJ_TREDUCE_STAGED, 1, 2, 0);
  stream_case(3, 0, 17000, RJ_TREDUCE_STAGED, 0, 1, 0);
  stream_case(5, 3, 300, RJ_TREDUCE_STAGED, 1, 6, 0); /* 5 ranks, 2 buffers: ping-pong reused */
  /* rj_ctx_free with async calls in flight waits for them */
  stream_case(4, 1, 1024, RJ_TREDUCE_STAGED, 1, 3, 1);
  stream_case(4, 1, 1024, RJ_TREDUCE_SPLIT, 1, 3, 1);
}
END_TEST

/* A stream of another context than the root GPU's primary one is refused, naming `stream`. */
START_TEST(stream_foreign) {
  if (!gpu) return;
  cu_open();
  rj_treduce_buf b[2];
  memset(b, 0, sizeof b);
  for (int r = 0; r < 2; r++) {
    b[r].ndim = 1;
    b[r].shape[0] = 1024;
    ck_assert_int_eq(rj_device_alloc(ctx, 0, 4096, &b[r].ptr), RJ_OK);
  }
  rj_treduce_group g;
  rj_treduce_group_init(&g);
  g.ranks = 2;
  g.src = b;
  g.dst = b[1];
  g.op = RJ_OP_SUM;
  g.dtype = RJ_I32;
  int d = 0;
  void *other = NULL, *S = NULL, *c = NULL;
  ck_assert_int_eq(cu.DeviceGet(&d, 0), 0);
  ck_assert_int_eq(cu.CtxCreate(&other, 0, d), 0); /* made current */
  ck_assert_int_eq(cu.StreamCreate(&S, 1), 0);
  cu.CtxPop(&c);
  g.stream = S;
  rj_status s = rj_treduce_run(ctx, &g, NULL, NULL);
  ck_assert_msg(s == RJ_EINVAL && strstr(rj_errmsg(ctx), "stream"), "%s: %s", rj_status_name(s),
                rj_errmsg(ctx));
  cu.CtxPush(other);
  cu.StreamDestroy(S);
  cu.CtxPop(&c);
  cu.CtxDestroy(other);
  for (int r = 0; r < 2; r++)
    ck_assert_int_eq(rj_device_free(ctx, 0, b[r].ptr), RJ_OK);
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_treduce_stream");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, stream_order);
  tcase_add_test(tc, stream_foreign);
  suite_add_tcase(s, tc);
  int failed = rjt_run_in_process(s);
  fprintf(stderr,
          "gpu_treduce_stream: %d request cases run on the GPU(s); %d ring refusals as planned\n",
          cases_run, ring_refused);
  return failed ? 1 : 0;
}
