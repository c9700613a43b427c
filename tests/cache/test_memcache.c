/* The bound of the memory cache: kernels the library compiles for its own calls (rj_reduce here)
 * are evicted least recently used first beyond the bound; kernels handed out by rj_compile stay
 * while they hold a pin (until rj_kernel_release, or rj_ctx_free).  Bookkeeping only: without a GPU
 * rj_reduce compiles its kernel, then stops at the launch (RJ_ENODEV); with one it launches on real
 * buffers.  The disk cache is off. */
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

static void release_ok(rj_ctx *ctx, rj_kernel *k) {
  rj_status s = rj_kernel_release(ctx, k);
  ck_assert_msg(s == RJ_OK, "release: %s: %s", rj_status_name(s), rj_errmsg(ctx));
}

/* Pins are counted: the same request compiled twice is one kernel with two pins.  Released, a
 * kernel is the cache's again: counted against the bound, evicted least recently used first at
 * the release that passes the bound (not before), and compiled again when asked for after. */
START_TEST(released_kernels_are_evicted_at_the_bound) {
  rj_ctx *ctx = ctx_new();
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 2), RJ_OK);
  rj_kernel *k[4];
  for (int i = 0; i < 4; i++)
    k[i] = compile(ctx, 200 + i);
  ck_assert_ptr_eq(compile(ctx, 200), k[0]); /* a second pin, and k[0] the most recent */
  rj_cache_stats st = stats(ctx);
  ck_assert_int_eq(st.kernels, 4);
  ck_assert_int_eq(st.kernels_pinned, 4);
  ck_assert_int_eq(st.compiles, 4);
  release_ok(ctx, k[0]); /* one of two pins: still pinned */
  ck_assert_int_eq(stats(ctx).kernels_pinned, 4);
  release_ok(ctx, k[0]);
  release_ok(ctx, k[1]); /* the cache owns two: at the bound, nothing goes */
  st = stats(ctx);
  ck_assert_int_eq(st.kernels_pinned, 2);
  ck_assert_int_eq(st.kernels, 4);
  ck_assert_int_eq(st.memory_evictions, 0);
  reduce(ctx, 201); /* a released kernel still serves (no compile), k[1] the most recent now */
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 4);
  release_ok(ctx, k[2]); /* three owned: the least recently used goes, k[2] (its compile) */
  st = stats(ctx);
  ck_assert_int_eq(st.kernels_pinned, 1);
  ck_assert_int_eq(st.kernels, 3);
  ck_assert_int_eq(st.memory_evictions, 1);
  reduce(ctx, 200); /* k[0] and k[1] stayed */
  reduce(ctx, 201);
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 4);
  /* k[2] is gone: its pointer is no kernel of ctx any more, and releasing it says so */
  ck_assert_int_eq(rj_kernel_release(ctx, k[2]), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "not a kernel of this context"));
  reduce(ctx, 202); /* compiled again, the cache's: k[0] (least recent) goes */
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 5);
  ck_assert_int_eq(stats(ctx).memory_evictions, 2);
  /* compiled again and pinned: not counted against the bound, so nothing goes for it */
  rj_kernel *again = compile(ctx, 200);
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 6);
  st = stats(ctx);
  ck_assert_int_eq(st.kernels_pinned, 2);
  ck_assert_int_eq(st.kernels, 4);
  ck_assert_int_eq(st.memory_evictions, 2);
  release_ok(ctx, again); /* owned: k[1], 202's, again: k[1] goes */
  ck_assert_int_eq(stats(ctx).memory_evictions, 3);
  reduce(ctx, 200);
  reduce(ctx, 202);
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 6);
  release_ok(ctx, k[3]); /* its only use was its compile: it goes at once */
  st = stats(ctx);
  ck_assert_int_eq(st.kernels_pinned, 0);
  ck_assert_int_eq(st.kernels, 2);
  ck_assert_int_eq(st.memory_evictions, 4);
  reduce(ctx, 203);
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 7);
  rj_ctx_free(ctx);
}
END_TEST

/* Misuse is a status with a message, never a crash: NULL, a kernel released once too often, a
 * kernel of another context (its pins untouched), an address that is no kernel at all. */
START_TEST(release_misuse) {
  rj_ctx *ctx = ctx_new(), *other = ctx_new();
  rj_kernel *k = compile(ctx, 300), *theirs = compile(other, 300);
  ck_assert_int_eq(rj_kernel_release(NULL, k), RJ_EINVAL);
  ck_assert_int_eq(rj_kernel_release(ctx, NULL), RJ_EINVAL);
  ck_assert_str_eq(rj_errmsg(ctx), "k: NULL");
  ck_assert_int_eq(rj_kernel_release(ctx, theirs), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "not a kernel of this context"));
  ck_assert_int_eq(stats(other).kernels_pinned, 1);
  int junk[64] = {0};
  ck_assert_int_eq(rj_kernel_release(ctx, (rj_kernel *)junk), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "not a kernel of this context"));
  release_ok(ctx, k); /* no bound reached: k stays cached, with no pin */
  ck_assert_int_eq(rj_kernel_release(ctx, k), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "holds no pin"));
  ck_assert_int_eq(stats(ctx).kernels, 1);
  ck_assert_int_eq(stats(ctx).kernels_pinned, 0);
  ck_assert_ptr_eq(compile(ctx, 300), k); /* found in the cache, pinned again */
  ck_assert_int_eq(stats(ctx).kernels_pinned, 1);
  ck_assert_int_eq(rj_ctx_compile_count(ctx), 1);
  release_ok(other, theirs);
  rj_ctx_free(ctx); /* k's pin: freed with the context */
  rj_ctx_free(other);
}
END_TEST

/* Many kernels pinned, several pins each, released in a scrambled order: every count right at
 * every step (the set of pinned kernels grows, and shrinks in any order). */
START_TEST(many_pins_any_order) {
  enum { N = 150 };
  rj_ctx *ctx = ctx_new();
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 0), RJ_OK);
  static rj_kernel *k[N];
  static int pins[N], order[3 * N];
  int n = 0;
  for (int i = 0; i < N; i++) {
    pins[i] = 1 + i % 3;
    for (int p = 0; p < pins[i]; p++) {
      rj_kernel *got = compile(ctx, 400 + i);
      if (p) ck_assert_ptr_eq(got, k[i]);
      k[i] = got;
      order[n++] = i;
    }
  }
  ck_assert_int_eq(stats(ctx).kernels_pinned, N);
  unsigned seed = 12345;
  for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
    seed = seed * 1103515245u + 12345u;
    int j = (int)((seed >> 8) % (unsigned)(i + 1)), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  long long held = N;
  for (int r = 0; r < n; r++) {
    int i = order[r];
    release_ok(ctx, k[i]);
    if (--pins[i] == 0) held--;
    ck_assert_int_eq(stats(ctx).kernels_pinned, held);
  }
  for (int i = 0; i < N; i++)
    ck_assert_int_eq(rj_kernel_release(ctx, k[i]), RJ_EINVAL);
  ck_assert_int_eq(stats(ctx).kernels, N);
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 10), RJ_OK);
  ck_assert_int_eq(stats(ctx).kernels, 10);
  rj_ctx_free(ctx);
}
END_TEST

/* rj_compile_ir: a pin per return too, its memory hits included. */
static const char ir_module[] = "target triple = \"nvptx64-nvidia-cuda\"\n"
                                "define void @k(ptr addrspace(1) %p) {\n"
                                "  store float 1.0, ptr addrspace(1) %p\n"
                                "  ret void\n"
                                "}\n";

START_TEST(compile_ir_pins) {
  rj_ctx *ctx = ctx_new();
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  o.ir_in_process = 1;
  rj_kernel *a = NULL, *b = NULL;
  ck_assert_int_eq(rj_compile_ir(ctx, ir_module, 0, "k", &o, &a), RJ_OK);
  ck_assert_int_eq(rj_compile_ir(ctx, ir_module, 0, "k", &o, &b), RJ_OK);
  ck_assert_ptr_eq(a, b);
  ck_assert_int_eq(stats(ctx).kernels_pinned, 1);
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 1), RJ_OK);
  compile(ctx, 500);
  release_ok(ctx, a);
  ck_assert_int_eq(stats(ctx).kernels, 2);
  release_ok(ctx, a); /* the cache owns it alone: at the bound, it stays */
  ck_assert_int_eq(stats(ctx).kernels, 2);
  ck_assert_int_eq(stats(ctx).kernels_pinned, 1);
  ck_assert_int_eq(rj_kernel_release(ctx, a), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "holds no pin"));
  ck_assert_int_eq(rj_ctx_set_memory_cache(ctx, 0), RJ_OK);
  rj_ctx_free(ctx);
}
END_TEST

/* rj_check compiles through rj_compile and releases that pin when it ends, failed or not (here
 * without a GPU it fails at the load, its message kept): the kernel stays, the cache's. */
START_TEST(check_releases_its_pin) {
  rj_ctx *ctx = ctx_new();
  rj_request r;
  rjt_parse(ctx, request(600), &r);
  rj_check_opts o;
  rj_check_opts_init(&o);
  rj_check_result res = {.struct_size = sizeof res};
  rj_status s = rj_check(ctx, &r, &o, &res);
  ck_assert_msg(s == (gpu ? RJ_OK : RJ_ENODEV), "%s: %s", rj_status_name(s), rj_errmsg(ctx));
  if (!gpu) ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "driver"));
  rj_cache_stats st = stats(ctx);
  ck_assert_int_eq(st.kernels, 1);
  ck_assert_int_eq(st.kernels_pinned, 0);
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
  tcase_add_test(tc, released_kernels_are_evicted_at_the_bound);
  tcase_add_test(tc, release_misuse);
  tcase_add_test(tc, many_pins_any_order);
  tcase_add_test(tc, compile_ir_pins);
  tcase_add_test(tc, check_releases_its_pin);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
