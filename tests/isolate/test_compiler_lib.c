/* The compiler library (libredjit-llvm.so.VERSION, LLVM inside) is loaded only by a compile that
 * no cache serves: a process whose kernels all come from the disk cache never maps it (its
 * /proc/self/maps is read before and after), and a compiler library that is missing, has no
 * entry, or is another build's is a status naming it and the cause, while hits go on working.
 * Each case runs in a child process of its own: loading is once per process. */
#include "rjtest.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <sys/stat.h>

static const char *const requests[] = {
    "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":"
    "\"shared\",\"shape\":[4,32]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
    "{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"f16\",\"shape\":[64,1000],\"axes\":[1]}",
    "{\"kind\":\"subgroup\",\"primitive\":\"reduce_all_add\",\"dtype\":\"i32\",\"log2_size\":5}",
};
#define NREQ ((int)(sizeof requests / sizeof requests[0]))
/* Not in the cache the cases fill: its compile is a miss. */
static const char *const other =
    "{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":"
    "\"shared\",\"shape\":[8,32]},\"dst\":{\"mem\":\"shared\",\"shape\":[8]}}";

/* Whether this process has the compiler library mapped. */
static bool compiler_mapped(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  bool found = false;
  while (f && !found && fgets(line, sizeof line, f))
    found = strstr(line, "libredjit-llvm") != NULL;
  if (f) fclose(f);
  return found;
}

/* A check of a child: NULL when it holds, else what failed (static text or rjt_fmt's). */
typedef const char *(*child_fn)(const char *arg);

/* fn(arg) in a child process; its failure becomes this test's. */
static void in_child(child_fn fn, const char *arg) {
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fd[0]);
    const char *why = fn(arg);
    if (why && write(fd[1], why, strlen(why)) < 0) _exit(3);
    _exit(why ? 1 : 0);
  }
  close(fd[1]);
  char why[4096] = "";
  ssize_t n = read(fd[0], why, sizeof why - 1);
  why[n > 0 ? n : 0] = 0;
  close(fd[0]);
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %s (status %d)",
                why[0] ? why : "no message", st);
}

/* Compiles request json on sm_90; its status, the kernel into *k. */
static rj_status compile(rj_ctx *ctx, const char *json, rj_kernel **k) {
  rj_request r;
  rj_status s = rj_request_parse(ctx, json, &r);
  if (s) return s;
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  return rj_compile(ctx, &r, &o, k);
}

/* Compiles every request (into REDJIT_CACHE_DIR): the compiler is loaded by then. */
static const char *fill(const char *unused) {
  (void)unused;
  rj_ctx *ctx = rj_ctx_new();
  rj_kernel *k = NULL;
  for (int i = 0; i < NREQ; i++)
    if (compile(ctx, requests[i], &k)) return rjt_fmt("request %d: %s", i, rj_errmsg(ctx));
  bool mapped = compiler_mapped();
  rj_ctx_free(ctx);
  return mapped ? NULL : "a process that compiled has no libredjit-llvm in /proc/self/maps";
}

/* Every request from the disk cache, none compiled, the compiler never mapped; then, when
 * arg is "miss", one compile that maps it; when "text", the LLVM IR of a kernel read from disk
 * (made when asked, by the compiler library, which that maps). */
static const char *hits(const char *arg) {
  if (compiler_mapped()) return "the compiler library is mapped before any call";
  rj_ctx *ctx = rj_ctx_new();
  rj_kernel *k = NULL;
  for (int i = 0; i < NREQ; i++) {
    if (compile(ctx, requests[i], &k)) return rjt_fmt("request %d: %s", i, rj_errmsg(ctx));
    const char *ptx = rj_kernel_text(k, RJ_EMIT_PTX);
    if (!ptx || !strstr(ptx, ".entry")) return rjt_fmt("request %d: a hit without PTX", i);
  }
  rj_cache_stats st = {.struct_size = sizeof st};
  rj_request r;
  const char *text = NULL;
  if (rj_ctx_cache_stats(ctx, &st) || st.compiles != 0 || st.disk_hits != NREQ)
    return rjt_fmt("compiles %lld, disk hits %lld (want 0, %d)", st.compiles, st.disk_hits, NREQ);
  if (rj_request_parse(ctx, requests[1], &r) || rj_explain(ctx, &r, NULL, &text) ||
      !strstr(text, "chosen") || rj_variant_count(ctx) < 1)
    return rjt_fmt("explain / variants: %s", rj_errmsg(ctx));
  if (compiler_mapped()) return "a process of cache hits mapped the compiler library";
  if (arg && strcmp(arg, "miss") == 0) {
    if (compile(ctx, other, &k)) return rjt_fmt("the miss: %s", rj_errmsg(ctx));
    if (!compiler_mapped()) return "a miss did not map the compiler library";
  }
  if (arg && strcmp(arg, "text") == 0) {
    const char *ll = rj_kernel_text(k, RJ_EMIT_LLVM), *opt = rj_kernel_text(k, RJ_EMIT_LLVM_OPT);
    if (!ll || !opt || !strstr(ll, rjt_fmt("@%s(", rj_kernel_entry(k))) || !strcmp(ll, opt))
      return rjt_fmt("a disk kernel's IR text: %.200s", ll ? ll : "(null)");
    if (!compiler_mapped()) return "a disk kernel's IR text did not map the compiler library";
    if (rj_ctx_compile_count(ctx) != 0) return "a disk kernel's IR text counted a compile";
  }
  rj_ctx_free(ctx);
  return NULL;
}

static const char *fresh_dir(void) {
  static char dir[256];
  snprintf(dir, sizeof dir, "%s/rjcl.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("REDJIT_CACHE_DIR", dir, 1);
  unsetenv("REDJIT_CACHE_DISABLE");
  unsetenv("REDJIT_COMPILER_LIB");
  return dir;
}

START_TEST(hits_never_load_the_compiler) {
  fresh_dir();
  in_child(fill, NULL);
  in_child(hits, "miss");
  in_child(hits, "text");
}
END_TEST

/* With the compiler library named in REDJIT_COMPILER_LIB = arg: hits work (their PTX; their
 * LLVM IR, made when asked, is NULL and the context's message stays), misses fail with a
 * status naming the library and why (wanting the text in `want`), every time, rj_compile_ir's
 * in-process compile the same. */
static const char *without(const char *want) {
  rj_ctx *ctx = rj_ctx_new();
  rj_kernel *k = NULL;
  for (int i = 0; i < NREQ; i++)
    if (compile(ctx, requests[i], &k)) return rjt_fmt("hit %d: %s", i, rj_errmsg(ctx));
  if (!rj_kernel_text(k, RJ_EMIT_PTX) || rj_kernel_text(k, RJ_EMIT_LLVM) ||
      rj_kernel_text(k, RJ_EMIT_LLVM_OPT) || rj_errmsg(ctx)[0])
    return rjt_fmt("a hit's texts without the compiler: the IR made, or a message: %s",
                   rj_errmsg(ctx));
  for (int i = 0; i < 2; i++) {
    rj_status s = compile(ctx, other, &k);
    if (s != RJ_EUNSUPPORTED || !strstr(rj_errmsg(ctx), "compiler library: ") ||
        !strstr(rj_errmsg(ctx), getenv("REDJIT_COMPILER_LIB")) || !strstr(rj_errmsg(ctx), want))
      return rjt_fmt("miss %d: %s: %s (want RJ_EUNSUPPORTED naming the library and \"%s\")", i,
                     rj_status_name(s), rj_errmsg(ctx), want);
  }
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  o.ir_in_process = 1;
  const char *ir = "define void @k() {\n  ret void\n}\n";
  rj_status s = rj_compile_ir(ctx, ir, 0, "k", &o, &k);
  if (s != RJ_EUNSUPPORTED || !strstr(rj_errmsg(ctx), want))
    return rjt_fmt("rj_compile_ir: %s: %s", rj_status_name(s), rj_errmsg(ctx));
  rj_ctx_free(ctx);
  return NULL;
}

/* The library this test runs on (the directory of the compiler the build made). */
static const char *libredjit_path(void) {
  static char path[4096];
  Dl_info di;
  ck_assert(dladdr((void *)rj_version, &di) && di.dli_fname);
  ck_assert_ptr_nonnull(realpath(di.dli_fname, path));
  return path;
}

START_TEST(missing_compiler_is_a_status) {
  fresh_dir();
  in_child(fill, NULL);
  setenv("REDJIT_COMPILER_LIB", "/nonexistent/libredjit-llvm.so", 1);
  in_child(without, "cannot load /nonexistent/libredjit-llvm.so");
  unsetenv("REDJIT_COMPILER_LIB");
}
END_TEST

/* tests/isolate/fake_compiler.c's library: beside this program (scripts/carry.sh copies it there),
 * else where the build made it. */
static const char *fake_compiler(void) {
  static char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 64);
  char *slash = n > 0 ? (path[n] = 0, strrchr(path, '/')) : NULL;
  if (slash) strcpy(slash + 1, "libfake_compiler.so");
  return slash && access(path, R_OK) == 0 ? path : REDJIT_FAKE_COMPILER;
}

START_TEST(wrong_compiler_is_a_status) {
  fresh_dir();
  in_child(fill, NULL);
  setenv("REDJIT_COMPILER_LIB", libredjit_path(), 1); /* a library, but no entry */
  in_child(without, "it has no rj_compiler_v1");
  setenv("REDJIT_COMPILER_LIB", fake_compiler(), 1); /* the entry of another version */
  in_child(without, "it is redjit 9.9.9");
  unsetenv("REDJIT_COMPILER_LIB");
}
END_TEST

int main(void) {
  Suite *s = suite_create("compiler_lib");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, hits_never_load_the_compiler);
  tcase_add_test(tc, missing_compiler_is_a_status);
  tcase_add_test(tc, wrong_compiler_is_a_status);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
