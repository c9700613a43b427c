/* rj_compile_ir compiles caller IR in its compiler process (redjit-irc): every reproducer in
 * tests/repro/ that makes LLVM abort, exit, fault, run forever or ask for 26 GB ends that process,
 * and this one gets a status naming the cause, in bounded time, with no descriptor left open and
 * no child left behind; a valid module compiles to the PTX the in-process path gives. */
#include "rjtest.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <time.h>

#define TIMEOUT_MS 3000 /* the CLI's compile limit */
#define SLACK_MS 30000  /* the others': they end on their own, in seconds even when loaded */

typedef struct repro {
  const char *file, *entry, *target, *cause; /* cause: a part of the message */
  bool may_refuse; /* LLVM's parser reads uninitialised memory here: it crashes, or refuses */
  bool screened;   /* refused by the screen (RJ_EUNSUPPORTED) before LLVM sees it, in process too */
} repro;

static const repro repros[] = {
    {"ir_sharedinit.ll", "k", NULL, "initial value in shared memory", false, true},
    {"ir_localglobal.ll", "k", NULL, "global @g has an address space other than", false, true},
    {"ir_alias.ll", "k", NULL, "@a is an alias", false, true},
    {"ir_clusterid.ll", "k", "sm_80", "Cannot select: intrinsic", false, false},
    {"ir_barcluster.ll", "k", "sm_80", "Cannot select: intrinsic", false, false},
    {"ir_i128atomic.ll", "k", "sm_100a", "does not support \"seq_cst\"", false, false},
    {"ir_syncscope.ll", "k", NULL, "does not support syncscope", false, false},
    {"ir_addrspace2.ll", "k", NULL, "global @g has an address space other than", false, true},
    {"bc_fatal_symbol_name.bc", "redjit_tile", "sm_80", "Symbol name with unsupported", false,
     false},
    {"bc_oom.bc", "k", "sm_120", "needed more than 1024 MiB", false, false},
    {"ir_parser_bignum.ll", "k", NULL, "ir: ", true, false},
    {"ir_structret.ll", "k", NULL, "function f has a value of 400000 bytes", false, true},
    {"ir_i65536.ll", "k", NULL, "function k has an i65536 (integers up to i128)", false, true},
    {"ir_addrspace_fatal_1.ll", "sum", NULL, "a pointer in addrspace(64)", false, true},
    {"ir_addrspace_fatal_2.ll", "sum", NULL, "@buf has an address space other than", false, true},
    {"ir_addrspace_fatal_3.ll", "sum", NULL, "@buf has an address space other than", false, true},
    {"ir_addrspace_fatal_4.ll", "sum", NULL, "@buf has an address space other than", false, true},
    {"ir_addrspace_fatal_5.ll", "sum", NULL, "@buf has an address space other than", false, true},
    {"ir_atomic_const.ll", "sum", NULL, "an atomic on constant memory (addrspace(4))", false, true},
    {"ir_atomic_cluster.ll", "sum", "sm_80", "an atomic on shared cluster memory", false, true},
    {"ir_fuzz_wide_vector.ll", "vec", NULL, "a value of 131072 bytes", false, true},
    {"ir_fuzz_offset_past_global.ll", "sum", NULL, "an offset of 1056 bytes past a global", false,
     true},
    {"ir_fuzz_i256.ll", "sum", NULL, "an i256 (integers up to i128)", false, true},
    {"ir_fuzz_addrspace32.ll", "sum", NULL, "a pointer in addrspace(32)", false, true},
    {"ir_fuzz_index_past_global.ll", "sum", NULL, "a constant index 8 past a global", false, true},
    {"ir_fuzz_symbol_dash.ll", "-sum", NULL, "function -sum has a name PTX cannot spell", false,
     true},
};

static char *slurp(const char *name, size_t *n) {
  FILE *f = fopen(rjt_repro(name), "rb");
  ck_assert_msg(f != NULL, "%s", name);
  char *buf = malloc(1 << 20);
  *n = fread(buf, 1, 1 << 20, f);
  fclose(f);
  buf[*n] = 0;
  return buf;
}

static int open_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The options of these tests: the short limit, and 1024 MiB unless the environment says (the
 * sanitizer run turns the address-space limit off: ASan reserves terabytes of it). */
static int limit_ms(const repro *r) {
  (void)r;
  return SLACK_MS;
}

static void options(rj_options *o, const char *target, int timeout_ms) {
  rj_options_init(o);
  o->target = target ? target : "sm_90";
  o->ir_timeout_ms = timeout_ms;
  o->ir_memory_mb = getenv("REDJIT_IR_MEMORY_MB") ? 0 : 1024;
}

static bool memory_limited(void) {
  const char *m = getenv("REDJIT_IR_MEMORY_MB");
  return !m || strcmp(m, "0") != 0;
}

START_TEST(repro_is_a_status) {
  const repro *r = &repros[_i];
  if (strcmp(r->file, "bc_oom.bc") == 0 && !memory_limited()) return; /* would take 26 GB */
  rj_ctx *ctx = rj_ctx_new();
  size_t n;
  char *ir = slurp(r->file, &n);
  rj_options o;
  options(&o, r->target, limit_ms(r));
  rj_kernel *k = NULL;
  int fds = open_fds();
  double t0 = now_s();
  rj_status s = rj_compile_ir(ctx, ir, n, r->entry, &o, &k);
  double took = now_s() - t0;
  rj_status want = r->screened ? RJ_EUNSUPPORTED : RJ_ECRASH;
  ck_assert_msg((s == want || (r->may_refuse && s == RJ_EINVAL)) && k == NULL, "%s: %s %s", r->file,
                rj_status_name(s), rj_errmsg(ctx));
  ck_assert_msg(strstr(rj_errmsg(ctx), r->cause), "%s: %s", r->file, rj_errmsg(ctx));
  ck_assert_msg(took < limit_ms(r) / 1000.0 + 5, "%s took %.1f s", r->file, took);
  ck_assert_int_eq(open_fds(), fds);
  errno = 0;
  ck_assert_msg(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "a child is left behind");
  free(ir);
  rj_ctx_free(ctx);
}
END_TEST

/* The CLI says the same and exits 2. */
START_TEST(repro_through_the_cli) {
  const repro *r = &repros[_i];
  if (strcmp(r->file, "bc_oom.bc") == 0 && !memory_limited()) return;
  const char *cmd =
      rjt_fmt("REDJIT_IR_TIMEOUT_MS=%d %s ptx --ir %s --entry %s %s%s 2>&1 >/dev/null", TIMEOUT_MS,
              rjt_cli_path(), rjt_repro(r->file), r->entry, r->target ? "--target " : "",
              r->target ? r->target : "");
  FILE *p = popen(cmd, "r");
  char out[2048] = "";
  size_t got = fread(out, 1, sizeof out - 1, p);
  out[got] = 0;
  int st = pclose(p);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "%s: %d %s", r->file, st, out);
  ck_assert_msg(strstr(out, r->may_refuse || r->screened ? "redjit: ir: " : "redjit: ir: the co"),
                "%s: %s", r->file, out);
}
END_TEST

static const char *valid = "target triple = \"nvptx64-nvidia-cuda\"\n"
                           "declare float @llvm.sqrt.f32(float)\n"
                           "define void @k(ptr addrspace(1) %p, float %a) {\n"
                           "  %s = call float @llvm.sqrt.f32(float %a)\n"
                           "  %r = fmul float %s, %a\n"
                           "  store float %r, ptr addrspace(1) %p\n"
                           "  ret void\n}\n";

START_TEST(valid_module_same_as_in_process) {
  rj_ctx *here = rj_ctx_new(), *iso = rj_ctx_new();
  rj_options o;
  options(&o, "sm_90", SLACK_MS);
  rj_kernel *a = NULL, *b = NULL, *c = NULL;
  int fds = open_fds();
  ck_assert_int_eq(rj_compile_ir(iso, valid, 0, "k", &o, &b), RJ_OK);
  ck_assert_int_eq(open_fds(), fds);
  o.ir_in_process = 1;
  ck_assert_int_eq(rj_compile_ir(here, valid, 0, "k", &o, &a), RJ_OK);
  for (int w = RJ_EMIT_PTX; w <= RJ_EMIT_LLVM_OPT; w++)
    ck_assert_str_eq(rj_kernel_text(a, (rj_emit)w), rj_kernel_text(b, (rj_emit)w));
  ck_assert_str_eq(rj_kernel_entry(b), "k");
  ck_assert_str_eq(rj_kernel_variant(b), "ir");
  /* a cache hit starts no process: with the helper gone it still answers */
  o.ir_in_process = 0;
  setenv("REDJIT_IRC", "/nonexistent/redjit-irc", 1);
  ck_assert_int_eq(rj_compile_ir(iso, valid, 0, "k", &o, &c), RJ_OK);
  ck_assert_ptr_eq(b, c);
  ck_assert_int_eq(rj_ctx_compile_count(iso), 1);
  /* a miss without the helper: a status, not a crash */
  o.target = "sm_80";
  ck_assert_int_eq(rj_compile_ir(iso, valid, 0, "k", &o, &c), RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(rj_errmsg(iso), "redjit-irc is not installed"), "%s", rj_errmsg(iso));
  ck_assert_msg(strstr(rj_errmsg(iso), "/nonexistent/redjit-irc"), "%s", rj_errmsg(iso));
  unsetenv("REDJIT_IRC");
  /* the helper's own refusals come back as they are */
  ck_assert_int_eq(rj_compile_ir(iso, valid, 0, "nope", &o, &c), RJ_EINVAL);
  ck_assert_str_eq(rj_errmsg(iso), "entry: the module defines no function \"nope\"");
  ck_assert_int_eq(rj_compile_ir(iso, "not IR", 0, "k", &o, &c), RJ_EINVAL);
  rj_ctx_free(here);
  rj_ctx_free(iso);
}
END_TEST

static void on_child(int sig) {
  (void)sig;
}

/* SIGCHLD ignored (children reaped by the kernel) or handled (waits interrupted). */
START_TEST(sigchld_ignored_or_handled) {
  size_t n;
  char *ir = slurp("ir_syncscope.ll", &n);
  rj_options o;
  options(&o, "sm_90", SLACK_MS);
  for (int pass = 0; pass < 2; pass++) {
    struct sigaction sa = {0};
    sa.sa_handler = pass ? on_child : SIG_IGN;
    sigaction(SIGCHLD, &sa, NULL);
    rj_ctx *ctx = rj_ctx_new();
    rj_kernel *k;
    ck_assert_int_eq(rj_compile_ir(ctx, ir, n, "k", &o, &k), RJ_ECRASH);
    ck_assert_msg(strstr(rj_errmsg(ctx), "syncscope"), "%s", rj_errmsg(ctx));
    ck_assert_int_eq(rj_compile_ir(ctx, valid, 0, "k", &o, &k), RJ_OK);
    rj_ctx_free(ctx);
  }
  signal(SIGCHLD, SIG_DFL);
  free(ir);
}
END_TEST

/* The screen's refusals come before LLVM: in process too, the same status and message. */
START_TEST(screened_in_process) {
  const repro *r = &repros[_i];
  if (!r->screened) return;
  rj_ctx *ctx = rj_ctx_new();
  size_t n;
  char *ir = slurp(r->file, &n);
  rj_options o;
  options(&o, r->target, SLACK_MS);
  o.ir_in_process = 1;
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile_ir(ctx, ir, n, r->entry, &o, &k), RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(rj_errmsg(ctx), r->cause), "%s: %s", r->file, rj_errmsg(ctx));
  free(ir);
  rj_ctx_free(ctx);
}
END_TEST

/* A compiler process that never ends (a script that sleeps) is killed at the default limit, 2 s
 * (ir_timeout_ms 0, no REDJIT_IR_TIMEOUT_MS), and waited for. */
START_TEST(default_time_limit) {
  char script[] = "/tmp/rjt_sleepy_XXXXXX";
  int fd = mkstemp(script);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  fputs("#!/bin/sh\nexec sleep 30\n", f);
  fclose(f);
  chmod(script, 0700);
  setenv("REDJIT_IRC", script, 1);
  unsetenv("REDJIT_IR_TIMEOUT_MS");
  rj_ctx *ctx = rj_ctx_new();
  rj_options o;
  options(&o, "sm_90", 0);
  rj_kernel *k = NULL;
  double t0 = now_s();
  ck_assert_int_eq(rj_compile_ir(ctx, valid, 0, "k", &o, &k), RJ_ECRASH);
  double took = now_s() - t0;
  ck_assert_msg(strstr(rj_errmsg(ctx), "ran past its 2 s limit"), "%s", rj_errmsg(ctx));
  ck_assert_msg(took >= 1.9 && took < 5, "%.1f s", took);
  errno = 0;
  ck_assert_msg(waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD, "a child is left behind");
  rj_ctx_free(ctx);
  unsetenv("REDJIT_IRC");
  unlink(script);
}
END_TEST

int main(void) {
  Suite *s = suite_create("isolate");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  int nr = (int)(sizeof repros / sizeof repros[0]);
  tcase_add_loop_test(tc, repro_is_a_status, 0, nr);
  tcase_add_loop_test(tc, repro_through_the_cli, 0, nr);
  tcase_add_test(tc, valid_module_same_as_in_process);
  tcase_add_test(tc, sigchld_ignored_or_handled);
  tcase_add_loop_test(tc, screened_in_process, 0, nr);
  tcase_add_test(tc, default_time_limit);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
