/* GPU suite for the caches: a kernel's cubin, linked by the driver on its first load and kept in
 * its disk entry, is what the next process loads (and the kernel computes the right result); a
 * cubin of another driver version, or a corrupt one, is ignored and linked again; rj_reduce under
 * a small memory-cache bound evicts and reloads kernels while earlier launches are still queued,
 * with every result right, and so does rj_compile's kernels released (rj_kernel_release) right
 * after their launch.  Skips without a GPU. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "rjtest.h"

#include <stdbool.h>
#include <dirent.h>

static char self[4096]; /* this binary: its child processes run one check each */
static char dir[256];

static const char *const request =
    "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[1000,333],\"axes\":[1]}";

/* `check`: request checked against the CPU oracle in a fresh context, printing
 * "OK compiles disk_hits cubin_loads cubin_links cubin_stale" (OK: 1 when right). */
static int child(void) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_check_opts o;
  rj_check_opts_init(&o);
  rj_check_result res = {.struct_size = sizeof res};
  rj_cache_stats st = {.struct_size = sizeof st};
  rj_status s = rj_request_parse(ctx, request, &r);
  if (!s) s = rj_check(ctx, &r, &o, &res);
  if (!s) s = rj_ctx_cache_stats(ctx, &st);
  if (s) fprintf(stderr, "check: %s\n", rj_errmsg(ctx));
  printf("%d %lld %lld %lld %lld %lld\n", !s && res.ok, st.compiles, st.disk_hits, st.cubin_loads,
         st.cubin_links, st.cubin_stale);
  rj_ctx_free(ctx);
  return 0;
}

typedef struct outcome {
  int ok;
  long long compiles, disk_hits, loads, links, stale;
} outcome;

/* One child process (driver: REDJIT_CUBIN_DRIVER for it, NULL: the real version). */
static outcome run_child(const char *driver) {
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "%s%s%s'%s' check", driver ? "REDJIT_CUBIN_DRIVER=" : "",
           driver ? driver : "", driver ? " " : "", self);
  FILE *f = popen(cmd, "r");
  ck_assert_ptr_nonnull(f);
  outcome o;
  ck_assert_int_eq(fscanf(f, "%d %lld %lld %lld %lld %lld", &o.ok, &o.compiles, &o.disk_hits,
                          &o.loads, &o.links, &o.stale),
                   6);
  ck_assert_int_eq(pclose(f), 0);
  ck_assert_msg(o.ok, "the kernel's result is wrong (or the check failed)");
  return o;
}

static void expect(outcome o, long long compiles, long long disk_hits, long long loads,
                   long long links, long long stale) {
  ck_assert_int_eq(o.compiles, compiles);
  ck_assert_int_eq(o.disk_hits, disk_hits);
  ck_assert_int_eq(o.loads, loads);
  ck_assert_int_eq(o.links, links);
  ck_assert_int_eq(o.stale, stale);
}

static void fresh_dir(void) {
  snprintf(dir, sizeof dir, "%s/rjgc.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("REDJIT_CACHE_DIR", dir, 1);
  unsetenv("REDJIT_CACHE_DISABLE");
  unsetenv("REDJIT_CUBIN_DRIVER");
}

/* The one entry of the directory, read into buf (its size) and its path. */
static size_t entry(char *path, size_t n, unsigned char *buf, size_t cap) {
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  path[0] = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (strstr(e->d_name, ".rjk")) snprintf(path, n, "%s/%s", dir, e->d_name);
  closedir(d);
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  size_t got = fread(buf, 1, cap, f);
  fclose(f);
  return got;
}

/* First process compiles and links; the second loads the cubin (no compile, no link); a
 * process that sees another driver version ignores it and links its own, and the next one with
 * the real version does the same; then the cubin is loaded again. */
START_TEST(cubin_across_processes) {
  fresh_dir();
  expect(run_child(NULL), 1, 0, 0, 1, 0);
  expect(run_child(NULL), 0, 1, 1, 0, 0);
  expect(run_child("1"), 0, 1, 0, 1, 1);
  expect(run_child(NULL), 0, 1, 0, 1, 1);
  expect(run_child(NULL), 0, 1, 1, 0, 0);
}
END_TEST

/* A cubin part with a flipped byte, or cut short: ignored (counted), the PTX loaded and linked
 * again, the entry rewritten; the next process loads the new cubin. */
START_TEST(corrupt_cubin_relinked) {
  fresh_dir();
  expect(run_child(NULL), 1, 0, 0, 1, 0);
  static unsigned char buf[8 << 20];
  char path[512];
  size_t n = entry(path, sizeof path, buf, sizeof buf);
  static const unsigned char elf[4] = {0x7f, 'E', 'L', 'F'};
  unsigned char *at = memmem(buf, n, elf, 4);
  ck_assert_ptr_nonnull(at);
  size_t cubin = n - (size_t)(at - buf);
  if (_i == 0)
    at[cubin / 2] ^= 0x20;
  else
    n -= cubin / 3;
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(buf, 1, n, f), n);
  fclose(f);
  expect(run_child(NULL), 0, 1, 0, 1, 1);
  expect(run_child(NULL), 0, 1, 1, 0, 0);
}
END_TEST

/* 2 x shapes sums of 4 rows of ones, (64 + 37 j) columns for shape j, under a memory bound of 2
 * kernels, all enqueued on one stream before anything is waited for (so evicted kernels'
 * launches are still queued when their modules are retired and, every 32, unloaded); through
 * rj_reduce, or (compiled) rj_compile + rj_tensor_launch + rj_kernel_release.  Every result must
 * be right; the cache's statistics are returned. */
static rj_cache_stats bounded_sums(int shapes, bool compiled) {
  setenv("REDJIT_CACHE_DISABLE", "1", 1);
  rj_ctx *ctx = rj_ctx_new();
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 2), RJ_OK);
  enum { ROWS = 4, MAXSHAPES = 40, MAXC = 64 + 37 * MAXSHAPES };
  ck_assert_int_le(shapes, MAXSHAPES);
  static float ones[ROWS * MAXC], out[2 * MAXSHAPES * ROWS];
  for (int i = 0; i < ROWS * MAXC; i++)
    ones[i] = 1.0f;
  rj_devptr src, dst;
  ck_assert_int_eq(rj_device_alloc(ctx, 0, sizeof ones, &src), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, sizeof out, &dst), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, src, ones, sizeof ones), RJ_OK);
  for (int i = 0; i < 2 * shapes; i++) {
    rj_request r;
    rjt_parse(ctx,
              rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[%d,%d],"
                      "\"axes\":[1]}",
                      ROWS, 64 + 37 * (i % shapes)),
              &r);
    rj_devptr to = dst + sizeof(float) * ROWS * (size_t)i;
    rj_kernel *k = NULL;
    rj_status s = RJ_OK;
    if (!compiled)
      s = rj_reduce(ctx, &r, NULL, src, to, NULL);
    else if (!(s = rj_compile(ctx, &r, NULL, &k)))
      s = rj_tensor_launch(ctx, k, 0, src, to, NULL);
    ck_assert_msg(s == RJ_OK, "%d: %s", i, rj_errmsg(ctx));
    if (k) ck_assert_int_eq(rj_kernel_release(ctx, k), RJ_OK);
  }
  ck_assert_int_eq(rj_device_sync(ctx, 0), RJ_OK);
  ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, out, dst, sizeof(float) * ROWS * 2 * shapes), RJ_OK);
  for (int i = 0; i < 2 * shapes; i++)
    for (int r = 0; r < ROWS; r++)
      ck_assert_msg(out[i * ROWS + r] == (float)(64 + 37 * (i % shapes)), "call %d row %d: %g", i,
                    r, out[i * ROWS + r]);
  rj_cache_stats st = {.struct_size = sizeof st};
  ck_assert_int_eq(rj_ctx_cache_stats(ctx, &st), RJ_OK);
  rj_device_free(ctx, 0, src);
  rj_device_free(ctx, 0, dst);
  rj_ctx_free(ctx);
  return st;
}

/* rj_reduce under a bound of 2 kernels: 24 shapes, twice over; every result right. */
START_TEST(bounded_cache_reduces_right) {
  enum { SHAPES = 24 };
  rj_cache_stats st = bounded_sums(SHAPES, false);
  ck_assert_int_eq(st.kernels, 2);
  ck_assert_int_eq(st.memory_evictions, 2 * SHAPES - 2);
  ck_assert_int_eq(st.compiles, 2 * SHAPES);
}
END_TEST

/* Kernels from rj_compile, each launched (not waited for) and then released, under a bound of 2:
 * released kernels are evicted while their launches are still queued; every result right, in two
 * rounds (the second compiles every kernel again: the first round's were evicted). */
START_TEST(released_kernels_evicted_run_right) {
  enum { SHAPES = 40 };
  rj_cache_stats st = bounded_sums(SHAPES, true);
  ck_assert_int_eq(st.kernels, 2);
  ck_assert_int_eq(st.kernels_pinned, 0);
  ck_assert_int_eq(st.memory_evictions, 2 * SHAPES - 2);
  ck_assert_int_eq(st.compiles, 2 * SHAPES);
}
END_TEST

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "check") == 0) return child();
  if (!rjt_gpu_present()) return RJT_SKIP;
  if (!realpath(argv[0], self)) return 1;
  Suite *s = suite_create("gpu_cache");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, cubin_across_processes);
  tcase_add_loop_test(tc, corrupt_cubin_relinked, 0, 2);
  tcase_add_test(tc, bounded_cache_reduces_right);
  tcase_add_test(tc, released_kernels_evicted_run_right);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
