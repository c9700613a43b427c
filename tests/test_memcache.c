/* The bound of the memory cache: kernels the library compiles for its own calls (rj_reduce here)
 * are evicted least recently used first beyond the bound; kernels handed out by rj_compile stay
 * until rj_ctx_free.  Bookkeeping only: without a GPU rj_reduce compiles its kernel, then stops
 * at the launch (RJ_ENODEV); with one it launches on real buffers.  The disk cache is off. */
#include "rjtest.h"

static int gpu;
static rj_devptr src = 0x1000, dst = 0x2000; /* never touched without a GPU */

static rj_ctx *ctx_new(void) {
  rj_ctx *ctx = rj_ctx_new();
  ck_assert_ptr_nonnull(ctx);
  ck_assert_int_eq(rj_ctx_set_disk_cache(ctx, NULL), RJ_OK);
  gpu = rjt_have_gpu(ctx);
  if (gpu) {
    static const float zero[4 * 512];
    ck_assert_int_eq(rj_device_alloc(ctx, 0, sizeof zero, &src), RJ_OK);
    ck_assert_int_eq(rj_device_alloc(ctx, 0, 64, &dst), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, src, zero, sizeof zero), RJ_OK);
  }
  return ctx;
}

/* Request i: a distinct tensor kernel for each i (its row length). */
static const char *request(int i) {
  return rjt_fmt("{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,%d],"
                 "\"axes\":[1]}",
                 64 + i);
}

static void reduce(rj_ctx *ctx, int i) {
  rj_request r;
  rjt_parse(ctx, request(i), &r);
  rj_status s = rj_reduce(ctx, &r, NULL, src, dst, NULL);
  ck_assert_msg(s == (gpu ? RJ_OK : RJ_ENODEV), "request %d: %s: %s", i, rj_status_name(s),
                rj_errmsg(ctx));
}

static rj_kernel *compile(rj_ctx *ctx, int i) {
  rj_request r;
  rjt_parse(ctx, request(i), &r);
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
  return k;
}

static rj_cache_stats stats(rj_ctx *ctx) {
  rj_cache_stats st = {.struct_size = sizeof st};
  ck_assert_int_eq(rj_ctx_cache_stats(ctx, &st), RJ_OK);
  return st;
}

/* 10 distinct requests under a bound of 3: never more than 3 kernels, 7 evicted. */
START_TEST(count_stays_at_the_bound) {
  rj_ctx *ctx = ctx_new();
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 3), RJ_OK);
  for (int i = 0; i < 10; i++) {
    reduce(ctx, i);
    rj_cache_stats st = stats(ctx);
    ck_assert_int_eq(st.kernels, i < 3 ? i + 1 : 3);
    ck_assert_int_eq(st.memory_evictions, i < 3 ? 0 : i - 2);
  }
  rj_cache_stats st = stats(ctx);
  ck_assert_int_eq(st.compiles, 10);
  ck_assert_int_eq(st.max_kernels, 3);
  ck_assert_int_eq(st.kernels_pinned, 0);
  rj_ctx_free(ctx);
}
END_TEST

/* The least recently used kernel goes: A B C, A again, D evicts B (not A). */
START_TEST(least_recently_used_goes) {
  rj_ctx *ctx = ctx_new();
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 3), RJ_OK);
  reduce(ctx, 0);
  reduce(ctx, 1);
  reduce(ctx, 2);
  reduce(ctx, 0);
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 3);
  reduce(ctx, 3); /* evicts 1 */
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 4);
  reduce(ctx, 0);
  reduce(ctx, 2);
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 4);
  reduce(ctx, 1); /* compiled again; evicts 3 */
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 5);
  reduce(ctx, 3);
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 6);
  ck_assert_int_eq(stats(ctx).memory_evictions, 3);
  rj_ctx_free(ctx);
}
END_TEST

/* Kernels rj_compile returned are never evicted and not counted against the bound, including one
 * rj_reduce had compiled first (rj_compile pins it). */
START_TEST(pinned_kernels_stay) {
  rj_ctx *ctx = ctx_new();
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 2), RJ_OK);
  rj_kernel *pinned[5];
  static char ptx[5][1 << 16];
  reduce(ctx, 100); /* owned first ... */
  for (int i = 0; i < 5; i++) {
    pinned[i] = compile(ctx, 100 + i); /* ... then pinned */
    snprintf(ptx[i], sizeof ptx[i], "%s", rj_kernel_text(pinned[i], RJ_EMIT_PTX));
  }
  long long compiled = rj_ctx_compile_count(ctx);
  ck_assert_int_eq(compiled, 5);
  for (int i = 0; i < 12; i++)
    reduce(ctx, i);
  rj_cache_stats st = stats(ctx);
  ck_assert_int_eq(st.kernels_pinned, 5);
  ck_assert_int_eq(st.kernels, 5 + 2);
  ck_assert_int_eq(st.memory_evictions, 10);
  for (int i = 0; i < 5; i++) {
    ck_assert_str_eq(rj_kernel_text(pinned[i], RJ_EMIT_PTX), ptx[i]);
    ck_assert_ptr_eq(compile(ctx, 100 + i), pinned[i]);
    reduce(ctx, 100 + i); /* rj_reduce finds the pinned kernel too */
  }
  ck_assert_int_eq(rj_ctx_compile_count(ctx), compiled + 12);
  rj_ctx_free(ctx);
}
END_TEST

/* The bound's settings: the default, the environment, no bound, a lower bound evicting at once,
 * a negative one refused. */
START_TEST(bound_settings) {
  unsetenv("REDJIT_CACHE_MAX_KERNELS");
  rj_ctx *ctx = ctx_new();
  ck_assert_int_eq(stats(ctx).max_kernels, 4096);
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, -1), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "max_kernels"));
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 0), RJ_OK);
  for (int i = 0; i < 5; i++)
    reduce(ctx, i);
  ck_assert_int_eq(stats(ctx).kernels, 5);
  ck_assert_int_eq(stats(ctx).memory_evictions, 0);
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 2), RJ_OK);
  ck_assert_int_eq(stats(ctx).kernels, 2);
  ck_assert_int_eq(stats(ctx).memory_evictions, 3);
  reduce(ctx, 4); /* the most recent two stayed */
  reduce(ctx, 3);
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 5);
  rj_ctx_free(ctx);
  const char *env[][2] = {{"2", "2"}, {"0", "0"}, {"abc", "4096"}, {"-3", "4096"}, {"", "4096"}};
  for (int i = 0; i < 5; i++) {
    setenv("REDJIT_CACHE_MAX_KERNELS", env[i][0], 1);
    ctx = ctx_new();
    ck_assert_int_eq(stats(ctx).max_kernels, atoll(env[i][1]));
    rj_ctx_free(ctx);
  }
  unsetenv("REDJIT_CACHE_MAX_KERNELS");
  ck_assert_int_eq(rj_ctx_set_memory_cache(NULL, 1), RJ_EINVAL);
}
END_TEST

int main(void) {
  setenv("REDJIT_CACHE_DISABLE", "1", 1);
  Suite *s = suite_create("memcache");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, count_stays_at_the_bound);
  tcase_add_test(tc, least_recently_used_goes);
  tcase_add_test(tc, pinned_kernels_stay);
  tcase_add_test(tc, bound_settings);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
