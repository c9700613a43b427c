/* treduce on the caller's stream (rj_treduce_group's stream and async; docs/TREDUCE.md "Stream
 * ordering"), on the GPU(s), rank r on GPU r mod the GPU count.  The test makes its own driver
 * calls: a non-blocking stream on the root's GPU, a host function that sleeps on it, and async
 * memsets / copies; CUresult is an int and handles are pointers (no cuda.h: the library is used
 * through its public API only).  Ops mean and custom on the caller's stream:
 * CK_RUN_CASE=treduce_ops. Without a GPU it prints "SKIP: no GPU" and passes. */
#define _POSIX_C_SOURCE 200809L
#include "redjit_treduce.h"
#include "rjtest.h"

#include <dlfcn.h>
#include <time.h>

static rj_ctx *ctx;
static int gpu, ndev, cases_run, ring_failures;
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
  int (*DeviceGetAttribute)(int *, int, int);
  int (*ModuleLoadData)(void **, const void *);
  int (*ModuleGetFunction)(void **, void *, const char *);
  int (*ModuleUnload)(void *);
  int (*LaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                      void *, void **, void **);
  int (*CtxSetLimit)(int, size_t);
  int (*StreamBeginCapture)(void *, int);
  int (*StreamEndCapture)(void *, void **);
  int (*GraphInstantiate)(void **, void *, unsigned long long);
  int (*GraphLaunch)(void *, void *);
  int (*GraphExecDestroy)(void *);
  int (*GraphDestroy)(void *);
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
              {(void **)&cu.MemFreeHost, "cuMemFreeHost"},
              {(void **)&cu.DeviceGetAttribute, "cuDeviceGetAttribute"},
              {(void **)&cu.ModuleLoadData, "cuModuleLoadData"},
              {(void **)&cu.ModuleGetFunction, "cuModuleGetFunction"},
              {(void **)&cu.ModuleUnload, "cuModuleUnload"},
              {(void **)&cu.LaunchKernel, "cuLaunchKernel"},
              {(void **)&cu.CtxSetLimit, "cuCtxSetLimit"},
              {(void **)&cu.StreamBeginCapture, "cuStreamBeginCapture_v2"},
              {(void **)&cu.StreamEndCapture, "cuStreamEndCapture"},
              {(void **)&cu.GraphInstantiate, "cuGraphInstantiateWithFlags"},
              {(void **)&cu.GraphLaunch, "cuGraphLaunch"},
              {(void **)&cu.GraphExecDestroy, "cuGraphExecDestroy"},
              {(void **)&cu.GraphDestroy, "cuGraphDestroy"}};
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
static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The first of n elements of got that differs from want[i] (want NULL: from fill); n if none.  A
 * whole buffer is checked with one assertion on it. */
static int64_t first_diff(const int32_t *got, const int32_t *want, int32_t fill, int64_t n) {
  int64_t i = 0;
  while (i < n && got[i] == (want ? want[i] : fill))
    i++;
  return i;
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
  rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
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
    double t0 = now_ms();
    rj_ctx_free(c);
    double waited = now_ms() - t0;
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
  stream_case(4, 1, 1024, RJ_TREDUCE_RING, 1, 3, 1);
  /* the ring with 8 ranks: on 2 GPUs every rank is a hop (4 a GPU), and a GPU's inboxes (66 MiB
   * on 132 SMs, stored into by the other GPU's kernels) exceed the 64 MiB other staging buffers
   * are kept to: kept all the same, async or not (stream-ordered memory, tried first, is closed
   * to peers: CUDA_ERROR_ILLEGAL_ADDRESS on 2 x H200); on one GPU, 3 hops */
  stream_case(8, 0, 4096, RJ_TREDUCE_RING, 1, 3, 0);
  stream_case(8, 0, 4096, RJ_TREDUCE_RING, 0, 1, 0);
}
END_TEST

/* Ring calls A and B (i32 sums, n elements, expected wa / wb), K async pairs back to back: a
 * warm waiting call of each first (A must take hops_a hops, B hops_b), then A, B, A, B, ... into
 * poisoned destinations of their own on their roots' GPUs, then rj_treduce_sync: every result
 * exact.  The destinations are the helper's. */
static void ring_pairs(rj_treduce_group *ga, rj_treduce_group *gb, int K, int hops_a, int hops_b,
                       const int32_t *wa, const int32_t *wb, int64_t n) {
  enum { MAXK = 8 };
  ck_assert_int_le(K, MAXK);
  size_t bytes = (size_t)n * 4;
  rj_treduce_group *g[2] = {ga, gb};
  const int32_t *want[2] = {wa, wb};
  uint64_t d[2][MAXK];
  int32_t *h = malloc(bytes);
  ck_assert_ptr_nonnull(h);
  for (int k = 0; k < K; k++)
    for (int x = 0; x < 2; x++)
      ck_assert_int_eq(rj_device_alloc(ctx, g[x]->dst.device, bytes, &d[x][k]), RJ_OK);
  rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
  for (int x = 0; x < 2; x++) { /* warm */
    g[x]->path = RJ_TREDUCE_RING;
    g[x]->dst.ptr = d[x][0];
    ck_assert_msg(rj_treduce_run(ctx, g[x], NULL, &res) == RJ_OK, "%s", rj_errmsg(ctx));
    ck_assert_int_eq(res.hops, x ? hops_b : hops_a);
  }
  memset(h, 0xA5, bytes);
  for (int k = 0; k < K; k++)
    for (int x = 0; x < 2; x++)
      ck_assert_int_eq(rj_memcpy_htod(ctx, g[x]->dst.device, d[x][k], h, bytes), RJ_OK);
  ga->async = gb->async = 1;
  for (int k = 0; k < K; k++)
    for (int x = 0; x < 2; x++) {
      g[x]->dst.ptr = d[x][k];
      ck_assert_msg(rj_treduce_run(ctx, g[x], NULL, &res) == RJ_OK, "%s %d: %s", x ? "B" : "A", k,
                    rj_errmsg(ctx));
    }
  ck_assert_msg(rj_treduce_sync(ctx) == RJ_OK, "%s", rj_errmsg(ctx));
  for (int k = 0; k < K; k++)
    for (int x = 0; x < 2; x++) {
      ck_assert_int_eq(rj_memcpy_dtoh(ctx, g[x]->dst.device, h, d[x][k], bytes), RJ_OK);
      int64_t bad = first_diff(h, want[x], 0, n);
      ck_assert_msg(bad == n, "%s call %d: element %lld is %d, want %d", x ? "B" : "A", k,
                    (long long)bad, bad < n ? h[bad] : 0, bad < n ? want[x][bad] : 0);
      ck_assert_int_eq(rj_device_free(ctx, g[x]->dst.device, d[x][k]), RJ_OK);
      cases_run++;
    }
  free(h);
}

/* Async ring calls with other roots and layouts, back to back, on two GPUs.  A: 3 ranks (r on GPU
 * r mod 2), root 0: hops on GPUs 0, 1, 0, the last one's inbox at offset 0 of GPU 0's.  B: 2
 * ranks, root 1: hops on GPUs 1, 0, the second's inbox at that same offset.  B's first hop, on
 * GPU 1's stream 0, would store into that inbox while A's last hop still reads it; either of two
 * waits keeps it back: for the previous ring call's end, and for the backlog of every stream the
 * call's hops use (B's second hop runs on GPU 0's stream 0, behind A's end: A's root waits there
 * for A's hops).  Six A / B pairs, every call into a destination of its own, then
 * rj_treduce_sync: all exact (i32).  A mutant without either wait passes; ring_late_hop and
 * ring_backlog are the layouts that need each. */
START_TEST(ring_layouts) {
  if (!gpu) return;
  if (ndev < 2) {
    fprintf(stderr, "ring_layouts: SKIP, one GPU (it needs two)\n");
    return;
  }
  enum { K = 6 };
  const int64_t rows = 8192, cols = 1024, n = rows * cols;
  size_t bytes = (size_t)n * 4;
  rj_treduce_buf a[3], b[2];
  rj_treduce_group ga, gb;
  rjt_treduce_group(&ga, a, 3, 0, rows, cols, 2, RJ_OP_SUM, RJ_I32);
  rjt_treduce_group(&gb, b, 2, 1, rows, cols, 2, RJ_OP_SUM, RJ_I32);
  int32_t *h = malloc(bytes), *wa = calloc((size_t)n, 4), *wb = calloc((size_t)n, 4);
  ck_assert(h && wa && wb);
  for (int r = 0; r < 5; r++) {
    rj_treduce_buf *x = r < 3 ? &a[r] : &b[r - 3];
    int32_t *w = r < 3 ? wa : wb;
    ck_assert_int_eq(rj_device_alloc(ctx, x->device, bytes, &x->ptr), RJ_OK);
    for (int64_t i = 0; i < n; i++) {
      h[i] = (int32_t)((i * 7919 + r * 104729) % 2003) - 1001;
      w[i] += h[i];
    }
    ck_assert_int_eq(rj_memcpy_htod(ctx, x->device, x->ptr, h, bytes), RJ_OK);
  }
  ring_pairs(&ga, &gb, K, 3, 2, wa, wb, n);
  for (int r = 0; r < 5; r++) {
    rj_treduce_buf *x = r < 3 ? &a[r] : &b[r - 3];
    ck_assert_int_eq(rj_device_free(ctx, x->device, x->ptr), RJ_OK);
  }
  free(h);
  free(wa);
  free(wb);
}
END_TEST

/* The layout that needs the wait for the previous ring call's end, on two GPUs.  A: 49 ranks, root
 * 0, in fold order on GPUs 0 1 0 1 0, then 40 ranks on GPU 1, then 0 1 0 1: ten hops, five on
 * each GPU, so B_A = SMs / 5 blocks, and GPU 1's hop j = 2 (the 40-rank one, the slowest by far)
 * reads the inbox at [2, 3) x B_A x IR_RING_NB steps of GPU 1's region.  B: 2 ranks on GPU 1,
 * root 0: two hops there (streams 0 and 1), B_B = SMs / 2 blocks, the second's inbox at
 * [0, B_B) x IR_RING_NB steps, which overlaps A's j = 2 inbox (SMs / 2 > 2 SMs / 5).  B's start
 * waits for its streams' backlogs, A's GPU 1 hops j = 0 and 1, which end while the slow hop still
 * has up to 2 x IR_RING_NB steps per block to read: only the wait for A's end (the previous ring
 * call's) keeps B's first hop from storing into them.  Four async A / B pairs, each into a
 * poisoned destination of its own, then rj_treduce_sync: all exact (i32).  The 40-source hop
 * reads its sources from a table (passes/srcfold.c) and needs no local memory (a fully unrolled
 * fold of its 40 sources spills, 1272 bytes a thread, and its launch would have to grow the stack,
 * rt_fit_stack).  The reset below to the driver's default stack keeps the test independent
 * of what ran before it. */
START_TEST(ring_late_hop) {
  if (!gpu) return;
  if (ndev < 2) {
    fprintf(stderr, "ring_late_hop: SKIP, one GPU (it needs two)\n");
    return;
  }
  /* the driver's default stack (1 KiB a thread), whatever ran before in this process */
  cu_open();
  for (int dv = 0; dv < 2; dv++) {
    cu_enter(dv);
    ck_assert_int_eq(cu.CtxSetLimit(0, 1024), 0);
    cu_leave();
  }
  enum { K = 4, SLOW = 40, NA = 5 + SLOW + 4 };
  const int64_t n = (int64_t)16 << 20; /* 64 MiB per rank: 512 steps, about 20 per block of A */
  size_t bytes = (size_t)n * 4;
  rj_treduce_buf a[NA], b[2];
  rj_treduce_group ga, gb;
  rjt_treduce_group(&ga, a, NA, 0, n >> 10, 1024, 2, RJ_OP_SUM, RJ_I32);
  rjt_treduce_group(&gb, b, 2, 0, n >> 10, 1024, 2, RJ_OP_SUM, RJ_I32);
  for (int r = 0; r < NA; r++) /* root 0: fold position r is rank r */
    a[r].device = r < 5 ? r % 2 : r < 5 + SLOW ? 1 : (r - 5 - SLOW) % 2;
  int32_t *h = malloc(bytes), *wa = calloc((size_t)n, 4), *wb = calloc((size_t)n, 4);
  ck_assert(h && wa && wb);
  for (int r = 0; r < NA; r++) {
    ck_assert_int_eq(rj_device_alloc(ctx, a[r].device, bytes, &a[r].ptr), RJ_OK);
    for (int64_t i = 0; i < n; i++) {
      h[i] = (int32_t)((i * 7919 + r * 104729) % 2003) - 1001;
      wa[i] += h[i];
      if (r == 1 || r == 3) wb[i] += h[i];
    }
    ck_assert_int_eq(rj_memcpy_htod(ctx, a[r].device, a[r].ptr, h, bytes), RJ_OK);
  }
  b[0] = a[1]; /* B reads two of A's sources on GPU 1 */
  b[1] = a[3];
  ga.dst = a[0];
  gb.dst = b[0];
  ring_pairs(&ga, &gb, K, 10, 2, wa, wb, n);
  for (int r = 0; r < NA; r++)
    ck_assert_int_eq(rj_device_free(ctx, a[r].device, a[r].ptr), RJ_OK);
  free(h);
  free(wa);
  free(wb);
}
END_TEST

/* A ring call whose hop streams hold an earlier call's work that waits for another stream, on two
 * GPUs.  P: an async staged call rooted on GPU 0 (ranks on GPUs 0, 1) on stream S1 of GPU 0, where
 * a host function first sleeps 500 ms: its work on GPU 0's streams 0 (kernels) and 1 (copies)
 * waits for S1.  R: then an async ring call rooted on GPU 1 on stream S2 of GPU 1 (ranks on GPUs
 * 1 0 1 0: hops on GPU 1 streams 0, 1 and GPU 0 streams 0, 1) with ring_timeout_ms 100.  R's
 * start must wait for the backlog of every hop stream: without that, its hops on GPU 1 would start
 * at once and spin while those on GPU 0 sit behind P, and give up after 100 ms.  Warm calls first
 * (nothing grows or loads later, so nothing else drains).  rj_treduce_sync: RJ_OK, both exact. */
START_TEST(ring_backlog) {
  if (!gpu) return;
  if (ndev < 2) {
    fprintf(stderr, "ring_backlog: SKIP, one GPU (it needs two)\n");
    return;
  }
  const int64_t rows = 1024, cols = 1024, n = rows * cols;
  size_t bytes = (size_t)n * 4;
  rj_treduce_buf pb[2], rb[4];
  rj_treduce_group gp, gr;
  rjt_treduce_group(&gp, pb, 2, 0, rows, cols, 2, RJ_OP_SUM, RJ_I32);
  rjt_treduce_group(&gr, rb, 4, 0, rows, cols, 2, RJ_OP_SUM, RJ_I32);
  for (int r = 0; r < 4; r++)
    rb[r].device = 1 - r % 2;
  int32_t *h = malloc(bytes), *wp = calloc((size_t)n, 4), *wr = calloc((size_t)n, 4);
  ck_assert(h && wp && wr);
  for (int r = 0; r < 6; r++) {
    rj_treduce_buf *x = r < 2 ? &pb[r] : &rb[r - 2];
    int32_t *w = r < 2 ? wp : wr;
    ck_assert_int_eq(rj_device_alloc(ctx, x->device, bytes, &x->ptr), RJ_OK);
    for (int64_t i = 0; i < n; i++) {
      h[i] = (int32_t)((i * 7919 + r * 104729) % 2003) - 1001;
      w[i] += h[i];
    }
    ck_assert_int_eq(rj_memcpy_htod(ctx, x->device, x->ptr, h, bytes), RJ_OK);
  }
  gp.path = RJ_TREDUCE_STAGED;
  gr.path = RJ_TREDUCE_RING;
  gp.dst = pb[0];
  gr.dst = rb[0];
  ck_assert_int_eq(rj_device_alloc(ctx, 0, bytes, &gp.dst.ptr), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 1, bytes, &gr.dst.ptr), RJ_OK);
  rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
  ck_assert_msg(rj_treduce_run(ctx, &gp, NULL, &res) == RJ_OK, "%s", rj_errmsg(ctx)); /* warm */
  ck_assert_msg(rj_treduce_run(ctx, &gr, NULL, &res) == RJ_OK, "%s", rj_errmsg(ctx));
  ck_assert_int_eq(res.hops, 4);
  memset(h, 0xA5, bytes);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, gp.dst.ptr, h, bytes), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 1, gr.dst.ptr, h, bytes), RJ_OK);
  void *S1 = NULL, *S2 = NULL;
  static int sleep_ms = 500;
  cu_enter(0);
  ck_assert_int_eq(cu.StreamCreate(&S1, 1 /* CU_STREAM_NON_BLOCKING */), 0);
  ck_assert_int_eq(cu.LaunchHostFunc(S1, sleep_on_stream, &sleep_ms), 0);
  cu_leave();
  cu_enter(1);
  ck_assert_int_eq(cu.StreamCreate(&S2, 1), 0);
  cu_leave();
  gp.stream = S1;
  gr.stream = S2;
  gp.async = gr.async = 1;
  gr.ring_timeout_ms = 100;
  double t0 = now_ms();
  ck_assert_msg(rj_treduce_run(ctx, &gp, NULL, &res) == RJ_OK, "P: %s", rj_errmsg(ctx));
  ck_assert_msg(rj_treduce_run(ctx, &gr, NULL, &res) == RJ_OK, "R: %s", rj_errmsg(ctx));
  double queued = now_ms() - t0;
  ck_assert_msg(rj_treduce_sync(ctx) == RJ_OK, "%s", rj_errmsg(ctx));
  double synced = now_ms() - t0;
  fprintf(stderr, "ring_backlog: both queued in %.1f ms, done after %.1f ms\n", queued, synced);
  ck_assert_msg(queued < 250 && synced >= 450, "queued in %.1f ms, synced after %.1f ms", queued,
                synced);
  for (int k = 0; k < 2; k++) {
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, k, h, k ? gr.dst.ptr : gp.dst.ptr, bytes), RJ_OK);
    int64_t bad = first_diff(h, k ? wr : wp, 0, n);
    ck_assert_msg(bad == n, "%s: element %lld is %d, want %d", k ? "ring" : "staged",
                  (long long)bad, bad < n ? h[bad] : 0, bad < n ? (k ? wr : wp)[bad] : 0);
    cases_run++;
  }
  cu_enter(0);
  ck_assert_int_eq(cu.StreamDestroy(S1), 0);
  cu_leave();
  cu_enter(1);
  ck_assert_int_eq(cu.StreamDestroy(S2), 0);
  cu_leave();
  for (int r = 0; r < 6; r++) {
    rj_treduce_buf *x = r < 2 ? &pb[r] : &rb[r - 2];
    ck_assert_int_eq(rj_device_free(ctx, x->device, x->ptr), RJ_OK);
  }
  ck_assert_int_eq(rj_device_free(ctx, 0, gp.dst.ptr), RJ_OK);
  ck_assert_int_eq(rj_device_free(ctx, 1, gr.dst.ptr), RJ_OK);
  free(h);
  free(wp);
  free(wr);
}
END_TEST

/* Holds a GPU's SMs: 1024-thread blocks, as many as fill an SM's threads (two on H100 / H200);
 * blocks below `early`
 * return at once, so that 2 x early x 1024 threads stay free, and the others count themselves in
 * *arrived and wait until *release is set (both in page-locked host memory), or at most 30 s
 * (%globaltimer: a failed test never leaves it running). */
static const char hold_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry hold(.param .u64 release, .param .u64 arrived, .param .u32 early) {\n"
    "  .reg .pred %p<4>;\n  .reg .b32 %r<6>;\n  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [release];\n  ld.param.u64 %rd2, [arrived];\n"
    "  ld.param.u32 %r1, [early];\n  mov.u32 %r2, %ctaid.x;\n"
    "  setp.lt.u32 %p1, %r2, %r1;\n  @%p1 bra DONE;\n"
    "  mov.u32 %r3, %tid.x;\n  setp.ne.u32 %p2, %r3, 0;\n  @%p2 bra WAIT;\n"
    "  atom.sys.global.add.u32 %r4, [%rd2], 1;\n"
    "  mov.u64 %rd3, %globaltimer;\n"
    "SPIN:\n  ld.relaxed.sys.global.u32 %r5, [%rd1];\n  setp.ne.u32 %p2, %r5, 0;\n"
    "  @%p2 bra WAIT;\n  mov.u64 %rd4, %globaltimer;\n  sub.u64 %rd5, %rd4, %rd3;\n"
    "  setp.lt.u64 %p3, %rd5, 30000000000;\n  @%p3 bra SPIN;\n"
    "WAIT:\n  bar.sync 0;\n"
    "DONE:\n  ret;\n}\n";

/* A ring whose hops cannot all run at once gives up instead of hanging, and says so.  Three
 * ranks on GPU 0 (3 hops of 44 blocks on 132 SMs, 64 MiB each: 11-12 steps a block, more than
 * its 4 inbox slots); another kernel holds every SM but room for 4 hop blocks, so a hop's block
 * waits for a neighbour that cannot start.  With ring_timeout_ms 100:
 *  - a waiting call fails with RJ_ETIMEOUT naming ring_timeout_ms, in well under the 33 waves x
 *    100 ms the blocks would take one timeout each (they stop once one has given up);
 *  - an async call returns RJ_OK at once; rj_treduce_sync waits for it and reports RJ_ETIMEOUT,
 *    once (a second rj_treduce_sync is RJ_OK);
 *  - another async call, its caller's stream waited for: the next rj_treduce_run (any path)
 *    reports it and does not run (a poisoned destination stays as it was); the one after runs.
 * Once the SMs are released, waiting and async ring calls give exact i32 sums again. */
START_TEST(ring_gives_up) {
  if (!gpu) return;
  cu_open();
  int dev = 0, sms = 0, per_sm = 0;
  cu_enter(0);
  ck_assert_int_eq(cu.DeviceGet(&dev, 0), 0);
  ck_assert_int_eq(cu.DeviceGetAttribute(&sms, 16 /* MULTIPROCESSOR_COUNT */, dev), 0);
  ck_assert_int_eq(cu.DeviceGetAttribute(&per_sm, 39 /* MAX_THREADS_PER_MULTIPROCESSOR */, dev), 0);
  cu_leave();
  if (per_sm % 1024) { /* the holding blocks could not fill an SM's threads */
    fprintf(stderr, "ring_gives_up: SKIP, %d threads per SM is no multiple of 1024\n", per_sm);
    return;
  }
  const int ranks = 3;
  const int64_t rows = 16384, cols = 1024, n = rows * cols;
  size_t bytes = (size_t)n * 4;
  rj_treduce_buf b[3];
  rj_treduce_group g;
  rjt_treduce_group(&g, b, ranks, 0, rows, cols, 1, RJ_OP_SUM, RJ_I32);
  g.path = RJ_TREDUCE_RING;
  int32_t *h = malloc(bytes), *want = calloc((size_t)n, 4), *got = malloc(bytes);
  ck_assert(h && want && got);
  for (int r = 0; r < ranks; r++) {
    ck_assert_int_eq(rj_device_alloc(ctx, 0, bytes, &b[r].ptr), RJ_OK);
    for (int64_t i = 0; i < n; i++) {
      h[i] = (int32_t)((i * 7919 + r * 104729) % 2003) - 1001;
      want[i] += h[i];
    }
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, b[r].ptr, h, bytes), RJ_OK);
  }
  uint64_t dst = 0;
  ck_assert_int_eq(rj_device_alloc(ctx, 0, bytes, &dst), RJ_OK);
  g.dst.ptr = dst;
  /* warm: kernels loaded, inboxes and the status word made (nothing is allocated below) */
  rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
  ck_assert_msg(rj_treduce_run(ctx, &g, NULL, &res) == RJ_OK, "%s", rj_errmsg(ctx));
  ck_assert_int_eq(res.hops, 3);
  cu_enter(0);
  void *mod = NULL, *fn = NULL, *X = NULL, *S = NULL;
  volatile uint32_t *word = NULL;
  ck_assert_int_eq(cu.ModuleLoadData(&mod, hold_ptx), 0);
  ck_assert_int_eq(cu.ModuleGetFunction(&fn, mod, "hold"), 0);
  ck_assert_int_eq(cu.MemAllocHost((void **)&word, 64), 0);
  ck_assert_int_eq(cu.StreamCreate(&X, 1), 0);
  ck_assert_int_eq(cu.StreamCreate(&S, 1), 0);
  word[0] = word[1] = 0;
  uint64_t release = (uint64_t)(uintptr_t)&word[0], arrived = (uint64_t)(uintptr_t)&word[1];
  unsigned early = 2, grid = (unsigned)(per_sm / 1024) * (unsigned)sms;
  void *args[3] = {&release, &arrived, &early};
  ck_assert_int_eq(cu.LaunchKernel(fn, grid, 1, 1, 1024, 1, 1, 0, X, args, NULL), 0);
  double t0 = now_ms();
  while (word[1] < grid - early && now_ms() - t0 < 10000)
    usleep(1000);
  ck_assert_msg(word[1] == grid - early, "only %u of %u holding blocks started", word[1],
                grid - early);
  cu_leave();
  g.ring_timeout_ms = 100;
  g.stream = S;
  /* a waiting call */
  rj_status s = rj_treduce_run(ctx, &g, NULL, &res);
  ck_assert_msg(s == RJ_ETIMEOUT && strstr(rj_errmsg(ctx), "100 ms (ring_timeout_ms)"),
                "waiting call with the SMs held: %s: %s", rj_status_name(s), rj_errmsg(ctx));
  ck_assert_msg(res.call_ms < 2000, "the failed call took %.0f ms", res.call_ms);
  fprintf(stderr, "ring_gives_up: the waiting call failed after %.1f ms: %s\n", res.call_ms,
          rj_errmsg(ctx));
  ring_failures++;
  /* an async call, reported by rj_treduce_sync */
  fprintf(stderr, "ring_gives_up: an async call\n");
  g.async = 1;
  t0 = now_ms();
  s = rj_treduce_run(ctx, &g, NULL, &res);
  ck_assert_msg(s == RJ_OK && now_ms() - t0 < 100, "async call: %s (%s) after %.0f ms",
                rj_status_name(s), rj_errmsg(ctx), now_ms() - t0);
  s = rj_treduce_sync(ctx);
  ck_assert_msg(s == RJ_ETIMEOUT && strstr(rj_errmsg(ctx), "1 earlier asynchronous ring call "),
                "rj_treduce_sync after an async call that gave up: %s: %s", rj_status_name(s),
                rj_errmsg(ctx));
  ck_assert_int_eq(rj_treduce_sync(ctx), RJ_OK); /* reported once */
  ring_failures++;
  /* another, reported by the next call, which does not run */
  fprintf(stderr, "ring_gives_up: an async call, then a peer call\n");
  s = rj_treduce_run(ctx, &g, NULL, &res);
  ck_assert_msg(s == RJ_OK, "async call: %s", rj_errmsg(ctx));
  cu_enter(0);
  ck_assert_int_eq(cu.StreamSynchronize(S), 0);
  cu_leave();
  memset(got, 0xA5, bytes);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dst, got, bytes), RJ_OK);
  g.path = RJ_TREDUCE_PEER;
  g.async = 0;
  s = rj_treduce_run(ctx, &g, NULL, &res);
  ck_assert_msg(s == RJ_ETIMEOUT && strstr(rj_errmsg(ctx), "this call did not run"),
                "the call after an async one that gave up: %s: %s", rj_status_name(s),
                rj_errmsg(ctx));
  ring_failures++;
  memset(h, 0, bytes);
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, h, dst, bytes), RJ_OK);
  int64_t bad = first_diff(h, NULL, (int32_t)0xA5A5A5A5u, n);
  ck_assert_msg(bad == n, "element %lld changed to %d", (long long)bad, bad < n ? h[bad] : 0);
  /* release the SMs; then the peer call, and ring calls, run and are exact */
  fprintf(stderr, "ring_gives_up: released\n");
  word[0] = 1;
  cu_enter(0);
  ck_assert_int_eq(cu.StreamSynchronize(X), 0);
  cu_leave();
  g.ring_timeout_ms = 0;
  for (int k = 0; k < 3; k++) {
    g.path = k ? RJ_TREDUCE_RING : RJ_TREDUCE_PEER;
    g.async = k == 2;
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dst, got, bytes), RJ_OK); /* poisoned */
    s = rj_treduce_run(ctx, &g, NULL, &res);
    ck_assert_msg(s == RJ_OK, "call %d after the release: %s", k, rj_errmsg(ctx));
    ck_assert_int_eq(rj_treduce_sync(ctx), RJ_OK);
    cu_enter(0);
    ck_assert_int_eq(cu.StreamSynchronize(S), 0);
    cu_leave();
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, h, dst, bytes), RJ_OK);
    bad = first_diff(h, want, 0, n);
    ck_assert_msg(bad == n, "call %d (%s): element %lld is %d, want %d", k, res.path,
                  (long long)bad, bad < n ? h[bad] : 0, bad < n ? want[bad] : 0);
    cases_run++;
  }
  cu_enter(0);
  cu.StreamDestroy(X);
  cu.StreamDestroy(S);
  cu.ModuleUnload(mod);
  cu.MemFreeHost((void *)word);
  cu_leave();
  for (int r = 0; r < ranks; r++)
    ck_assert_int_eq(rj_device_free(ctx, 0, b[r].ptr), RJ_OK);
  ck_assert_int_eq(rj_device_free(ctx, 0, dst), RJ_OK);
  free(h);
  free(want);
  free(got);
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

/* ---- CUDA graphs (a case of its own: CK_RUN_CASE=graph) */

/* An async call on the caller's non-blocking stream S, after a warm call outside the capture,
 * captured into a graph (global capture mode: no call the capture prohibits, from any thread),
 * then the graph replayed 3 times, each after async memsets set the root's source to 7 + k:
 * replay k must give the other ranks' sum plus 7 + k (i32: exact).  The ring refuses capture
 * (ring: true), leaving the capture valid. */
static void graph_case(int ranks, rj_treduce_path path, int64_t rows) {
  int64_t cols = 1024, n = rows * cols;
  size_t bytes = (size_t)n * 4;
  rj_treduce_buf *b = calloc((size_t)ranks, sizeof *b);
  int32_t *h = malloc(bytes), *want = calloc((size_t)n, 4), *got = malloc(bytes * 3);
  ck_assert(b && h && want && got);
  rj_treduce_group g;
  rjt_treduce_group(&g, b, ranks, 0, rows, cols, ndev, RJ_OP_SUM, RJ_I32);
  g.path = path;
  for (int r = 0; r < ranks; r++) {
    ck_assert_int_eq(rj_device_alloc(ctx, b[r].device, bytes, &b[r].ptr), RJ_OK);
    for (int64_t i = 0; i < n; i++)
      h[i] = (int32_t)((i * 7919 + r * 104729) % 2003) - 1001;
    if (r) /* the root's source is set by the memsets */
      for (int64_t i = 0; i < n; i++)
        want[i] += h[i];
    ck_assert_int_eq(rj_memcpy_htod(ctx, b[r].device, b[r].ptr, h, bytes), RJ_OK);
  }
  ck_assert_int_eq(rj_device_alloc(ctx, 0, bytes, &g.dst.ptr), RJ_OK);
  void *S = NULL, *graph = NULL, *exec = NULL;
  cu_enter(0);
  ck_assert_int_eq(cu.StreamCreate(&S, 1 /* CU_STREAM_NON_BLOCKING */), 0);
  cu_leave();
  g.stream = S;
  rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
  rj_status s = rj_treduce_run(ctx, &g, NULL, &res); /* warm: compiled, loaded, streams made */
  ck_assert_msg(s == RJ_OK || s == RJ_EUNSUPPORTED, "warm-up, path %d: %s", path, rj_errmsg(ctx));
  g.async = 1;
  cu_enter(0);
  ck_assert_int_eq(cu.StreamBeginCapture(S, 0 /* CU_STREAM_CAPTURE_MODE_GLOBAL */), 0);
  cu_leave();
  if (s == RJ_OK) s = rj_treduce_run(ctx, &g, NULL, &res);
  cu_enter(0);
  int ended = cu.StreamEndCapture(S, &graph);
  if (path == RJ_TREDUCE_RING) {
    ck_assert_msg(s == RJ_EUNSUPPORTED && strstr(rj_errmsg(ctx), "captured into a CUDA graph"),
                  "ring under capture: %s", rj_errmsg(ctx));
    ck_assert_int_eq(ended, 0);
  } else if (s == RJ_OK) {
    ck_assert_msg(ended == 0, "path %s: cuStreamEndCapture %d (an unsafe call in the capture)",
                  res.path, ended);
    ck_assert_int_eq(cu.GraphInstantiate(&exec, graph, 0), 0);
    for (int k = 0; k < 3; k++) {
      ck_assert_int_eq(cu.MemsetD32Async(b[0].ptr, 7u + (unsigned)k, (size_t)n, S), 0);
      ck_assert_int_eq(cu.GraphLaunch(exec, S), 0);
      ck_assert_int_eq(cu.MemcpyDtoHAsync(got + (size_t)k * (size_t)n, g.dst.ptr, bytes, S), 0);
    }
    ck_assert_int_eq(cu.StreamSynchronize(S), 0);
    for (int k = 0; k < 3; k++) {
      int64_t bad = 0;
      while (bad < n && got[(size_t)k * (size_t)n + (size_t)bad] == want[bad] + 7 + k)
        bad++;
      ck_assert_msg(bad == n, "path %s, replay %d: element %lld is %d, want %d", res.path, k,
                    (long long)bad, bad < n ? got[(size_t)k * (size_t)n + (size_t)bad] : 0,
                    bad < n ? want[bad] + 7 + k : 0);
      cases_run++;
    }
    ck_assert_int_eq(cu.GraphExecDestroy(exec), 0);
  }
  if (graph) cu.GraphDestroy(graph);
  ck_assert_int_eq(cu.StreamSynchronize(S), 0);
  ck_assert_int_eq(cu.StreamDestroy(S), 0);
  cu_leave();
  for (int r = 0; r < ranks; r++)
    ck_assert_int_eq(rj_device_free(ctx, b[r].device, b[r].ptr), RJ_OK);
  ck_assert_int_eq(rj_device_free(ctx, 0, g.dst.ptr), RJ_OK);
  free(b);
  free(h);
  free(want);
  free(got);
}

START_TEST(graph_capture) {
  if (!gpu) return;
  cu_open();
  int ranks = ndev >= 2 ? ndev : 4;
  static const rj_treduce_path paths[] = {RJ_TREDUCE_AUTO,        RJ_TREDUCE_PEER,
                                          RJ_TREDUCE_STAGED,      RJ_TREDUCE_SPLIT,
                                          RJ_TREDUCE_SPLIT_EQUAL, RJ_TREDUCE_RING};
  for (int p = 0; p < 6; p++) {
    graph_case(ranks, paths[p], 16);   /* 64 KiB per rank */
    graph_case(ranks, paths[p], 1024); /* 4 MiB per rank */
  }
  graph_case(2 * ranks, RJ_TREDUCE_AUTO, 16); /* two ranks per GPU */
}
END_TEST

/* ---- ops mean and custom on the caller's stream (a case of their own: CK_RUN_CASE=treduce_ops)
 *
 * Two calls on `path` with the group's stream S (a host function first sleeps 150 ms on it),
 * waiting or async; before call k an async memset on S writes a value of k into the root's
 * source, and after it an async copy fetches the destination: call k must see memset k and copy
 * k must see call k.  mean: f32 over 4 ranks of small integers (exact: the sum, then x 0.25);
 * custom: the non-commutative affine combine on i64 (the memset writes both halves), composed in
 * rank order on the host. */
static const char *const AFFINE =
    "define i64 @aff(i64 %p, i64 %q) {\n  %pa = trunc i64 %p to i32\n  %ph = lshr i64 %p, 32\n"
    "  %pb = trunc i64 %ph to i32\n  %qa = trunc i64 %q to i32\n  %qh = lshr i64 %q, 32\n"
    "  %qb = trunc i64 %qh to i32\n  %a = mul i32 %pa, %qa\n  %t = mul i32 %pb, %qa\n"
    "  %b = add i32 %t, %qb\n  %az = zext i32 %a to i64\n  %bz = zext i32 %b to i64\n"
    "  %bs = shl i64 %bz, 32\n  %r = or i64 %az, %bs\n  ret i64 %r\n}\n";

static uint64_t affine(uint64_t p, uint64_t q) {
  uint32_t pa = (uint32_t)p, pb = (uint32_t)(p >> 32), qa = (uint32_t)q, qb = (uint32_t)(q >> 32);
  return (uint64_t)(pa * qa) | (uint64_t)(pb * qa + qb) << 32;
}

/* Rank r's element i (the root's: what memset k writes). */
static uint64_t ops_value(int custom, int r, int64_t i) {
  uint64_t v = (uint64_t)((i * 7919 + r * 104729) % 2003);
  if (custom) return v * 0x9E3779B97F4A7C15ull + (uint64_t)r;
  float f = (float)((int64_t)v % 13 - 6);
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

/* The memset before call k: 32-bit words of the root's source */
static unsigned ops_fill(int custom, int k) {
  float f = (float)(k + 1);
  unsigned u;
  memcpy(&u, &f, 4);
  return custom ? 2u * (unsigned)k + 3u : u;
}

static void ops_stream_case(int custom, rj_treduce_path path, int async) {
  const int ranks = 4, root = 1, calls = 2, eb = custom ? 8 : 4;
  int64_t rows = 300, cols = 1024, n = rows * cols;
  size_t bytes = (size_t)n * (size_t)eb;
  rj_treduce_buf b[4];
  unsigned char *h = malloc(bytes), *got = NULL;
  ck_assert_ptr_nonnull(h);
  int rdev = root % ndev;
  cu_enter(rdev);
  ck_assert_int_eq(cu.MemAllocHost((void **)&got, bytes * (size_t)calls), 0);
  cu_leave();
  rj_treduce_group g;
  rjt_treduce_group(&g, b, ranks, root, rows, cols, ndev, custom ? RJ_OP_CUSTOM : RJ_OP_MEAN,
                    custom ? RJ_I64 : RJ_F32);
  g.path = path;
  if (custom) {
    g.combine.ir = AFFINE;
    snprintf(g.combine.fn, sizeof g.combine.fn, "aff");
    g.combine.identity = 1;
  }
  for (int r = 0; r < ranks; r++) {
    ck_assert_int_eq(rj_device_alloc(ctx, b[r].device, bytes, &b[r].ptr), RJ_OK);
    for (int64_t i = 0; i < n; i++) {
      uint64_t v = ops_value(custom, r, i);
      memcpy(h + i * eb, &v, (size_t)eb);
    }
    ck_assert_int_eq(rj_memcpy_htod(ctx, b[r].device, b[r].ptr, h, bytes), RJ_OK);
  }
  ck_assert_int_eq(rj_device_alloc(ctx, rdev, bytes, &g.dst.ptr), RJ_OK);
  rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
  rj_status s = rj_treduce_run(ctx, &g, NULL, &res); /* warm */
  if (s == RJ_EUNSUPPORTED && ndev > 1) goto out;    /* no peer access; a ring from rank 0 */
  ck_assert_msg(s == RJ_OK, "warm-up, path %d: %s", path, rj_errmsg(ctx));
  memset(got, 0x5A, bytes * (size_t)calls);
  cu_enter(rdev);
  void *S = NULL;
  static int sleep_ms = 150;
  ck_assert_int_eq(cu.StreamCreate(&S, 1 /* CU_STREAM_NON_BLOCKING */), 0);
  ck_assert_int_eq(cu.LaunchHostFunc(S, sleep_on_stream, &sleep_ms), 0);
  g.stream = S;
  g.async = async;
  for (int k = 0; k < calls; k++) {
    ck_assert_int_eq(
        cu.MemsetD32Async(b[root].ptr, ops_fill(custom, k), (size_t)n * (size_t)eb / 4, S), 0);
    cu_leave();
    s = rj_treduce_run(ctx, &g, NULL, &res);
    cu_enter(rdev);
    ck_assert_msg(s == RJ_OK, "path %d, async %d, call %d: %s", path, async, k, rj_errmsg(ctx));
    if (async) ck_assert_msg(res.ms == 0 && cu.StreamQuery(S) == CU_NOT_READY, "call %d", k);
    ck_assert_int_eq(cu.MemcpyDtoHAsync(got + (size_t)k * bytes, g.dst.ptr, bytes, S), 0);
  }
  ck_assert_int_eq(cu.StreamSynchronize(S), 0);
  ck_assert_int_eq(cu.StreamDestroy(S), 0);
  cu_leave();
  for (int k = 0; k < calls; k++) {
    uint64_t fill = ops_fill(custom, k);
    for (int64_t i = 0; i < n; i++) {
      uint64_t acc = 1, gv = 0;
      float sum = 0, f;
      for (int r = 0; r < ranks; r++) {
        uint64_t v = r == root ? (custom ? fill | fill << 32 : fill) : ops_value(custom, r, i);
        uint32_t u = (uint32_t)v;
        memcpy(&f, &u, 4);
        sum += f;
        acc = affine(acc, v);
      }
      memcpy(&gv, got + (size_t)k * bytes + (size_t)i * (size_t)eb, (size_t)eb);
      if (!custom) {
        float want = sum * 0.25f, gf;
        uint32_t u = (uint32_t)gv;
        memcpy(&gf, &u, 4);
        ck_assert_msg(gf == want, "mean, path %s, async %d, call %d: element %lld is %g, want %g",
                      res.path, async, k, (long long)i, gf, want);
      } else {
        ck_assert_msg(gv == acc, "custom, path %s, async %d, call %d: element %lld", res.path,
                      async, k, (long long)i);
      }
    }
    cases_run++;
  }
out:
  for (int r = 0; r < ranks; r++)
    ck_assert_int_eq(rj_device_free(ctx, b[r].device, b[r].ptr), RJ_OK);
  ck_assert_int_eq(rj_device_free(ctx, rdev, g.dst.ptr), RJ_OK);
  free(h);
  cu_enter(rdev);
  cu.MemFreeHost(got);
  cu_leave();
}

START_TEST(ops_stream_order) {
  if (!gpu) return;
  cu_open();
  static const rj_treduce_path all[] = {RJ_TREDUCE_AUTO,  RJ_TREDUCE_PEER,        RJ_TREDUCE_STAGED,
                                        RJ_TREDUCE_SPLIT, RJ_TREDUCE_SPLIT_EQUAL, RJ_TREDUCE_RING};
  for (int p = 0; p < 6; p++)
    for (int async = 0; async < 2; async++) {
      ops_stream_case(0, all[p], async);
      if (all[p] != RJ_TREDUCE_STAGED) ops_stream_case(1, all[p], async); /* staged: refused */
    }
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
  /* a case of its own, so that CK_RUN_CASE=ring runs these alone */
  tc = tcase_create("ring");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, ring_gives_up);
  tcase_add_test(tc, ring_layouts);
  tcase_add_test(tc, ring_late_hop);
  tcase_add_test(tc, ring_backlog);
  suite_add_tcase(s, tc);
  tc = tcase_create("graph"); /* CUDA graph capture: CK_RUN_CASE=graph */
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, graph_capture);
  suite_add_tcase(s, tc);
  tc = tcase_create("treduce_ops"); /* mean and custom: CK_RUN_CASE=treduce_ops */
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, ops_stream_order);
  suite_add_tcase(s, tc);
  int failed = rjt_run_in_process(s);
  fprintf(stderr,
          "gpu_treduce_stream: %d request cases run on the GPU(s); %d ring failures as planned\n",
          cases_run, ring_failures);
  return failed ? 1 : 0;
}
