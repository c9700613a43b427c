/* Helpers shared by the Check suites.  Tests use only the public API. */
#ifndef RJ_TEST_H
#define RJ_TEST_H

#include "redjit.h"
#include "redjit_check.h"
#include "redjit_treduce.h"

#include <check.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* x stored as an element of dtype d at p: f32, f64, or bf16 truncated (the host then reads back
 * exactly what the GPU reads); other dtypes: nothing. */
static inline void rjt_put_float(rj_dtype d, float x, unsigned char *p) {
  uint32_t fb;
  memcpy(&fb, &x, 4);
  if (d == RJ_F32) memcpy(p, &x, 4);
  if (d == RJ_F64) {
    double v = x;
    memcpy(p, &v, 8);
  }
  if (d == RJ_BF16) {
    uint16_t h = (uint16_t)(fb >> 16);
    memcpy(p, &h, 2);
  }
}

/* The element of dtype d (f32, f64 or bf16) at p. */
static inline double rjt_get_float(rj_dtype d, const unsigned char *p) {
  if (d == RJ_F64) {
    double v;
    memcpy(&v, p, 8);
    return v;
  }
  float f;
  if (d == RJ_BF16) {
    uint32_t fb = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 24;
    memcpy(&f, &fb, 4);
  } else {
    memcpy(&f, p, 4);
  }
  return f;
}

/* Parses a request that must be valid. */
static inline void rjt_parse(rj_ctx *ctx, const char *json, rj_request *r) {
  rj_status s = rj_request_parse(ctx, json, r);
  ck_assert_msg(s == RJ_OK, "parse failed (%s): %s\n  request: %s", rj_status_name(s),
                rj_errmsg(ctx), json);
}

/* Parses a request that must be refused with RJ_EINVAL and a message holding msg. */
static inline void rjt_refused(rj_ctx *ctx, const char *json, const char *msg) {
  rj_request r;
  rj_status s = rj_request_parse(ctx, json, &r);
  ck_assert_msg(s == RJ_EINVAL, "%s: %s (%s)", json, rj_status_name(s), rj_errmsg(ctx));
  ck_assert_msg(strstr(rj_errmsg(ctx), msg), "\"%s\" not in \"%s\"", msg, rj_errmsg(ctx));
}

/* Kernels ctx compiled or read from the disk cache: the distinct kernels its calls needed (a
 * kernel another process compiled is read, not compiled). */
static inline long long rjt_made(rj_ctx *ctx) {
  rj_cache_stats st = {.struct_size = sizeof st};
  rj_ctx_cache_stats(ctx, &st);
  return st.compiles + st.disk_hits;
}

/* printf into a static buffer (one at a time). */
static inline const char *rjt_fmt(const char *fmt, ...) {
  static char buf[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

/* Occurrences of needle in text. */
static inline int rjt_count(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* A text of a request's kernel for a target (what: RJ_EMIT_PTX, RJ_EMIT_LLVM, ...), as the
 * library made it; it lives as long as the kernel in ctx. */
static inline const char *rjt_text(rj_ctx *ctx, const char *json, const char *target,
                                   rj_emit what) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_options o;
  rj_options_init(&o);
  o.target = target;
  rj_kernel *k = NULL;
  rj_status s = rj_compile(ctx, &r, &o, &k);
  ck_assert_msg(s == RJ_OK, "compile failed (%s): %s\n  request: %s", rj_status_name(s),
                rj_errmsg(ctx), json);
  return rj_kernel_text(k, what);
}

/* Bytes of the .shared arrays a PTX text declares (`.shared .align A .b8 name[N];`; a scalar's
 * size by its type) */
static inline long rjt_shared_bytes(const char *ptx) {
  long total = 0;
  for (const char *at = strstr(ptx, "\t.shared ."); at; at = strstr(at + 1, "\t.shared .")) {
    const char *end = strchr(at, ';'), *open = strchr(at, '[');
    if (open && end && open < end)
      total += strtol(open + 1, NULL, 10);
    else
      total += strstr(at, ".u64") && strstr(at, ".u64") < end ? 8 : 4;
  }
  return total;
}

/* The PTX of a request for a target, as the library made it. */
static inline const char *rjt_ptx_raw(rj_ctx *ctx, const char *json, const char *target) {
  return rjt_text(ctx, json, target, RJ_EMIT_PTX);
}

/* The PTX of a request for a target with every load's L1 hint (".L1::no_allocate", which
 * tensor kernels put on their first input's loads) taken out, so that checks of the loads'
 * widths see one spelling.  The text lives until the 8th call after. */
static inline const char *rjt_ptx(rj_ctx *ctx, const char *json, const char *target) {
  static char *ring[8];
  static int next;
  const char *raw = rjt_ptx_raw(ctx, json, target), *hint = ".L1::no_allocate";
  char *out = (char *)malloc(strlen(raw) + 1), *w = out;
  ck_assert_msg(out != NULL, "out of memory");
  for (const char *r = raw; *r;) {
    if (!strncmp(r, hint, strlen(hint)))
      r += strlen(hint);
    else
      *w++ = *r++;
  }
  *w = 0;
  free(ring[next]);
  ring[next] = out;
  next = (next + 1) % 8;
  return out;
}

/* True when a GPU is usable; otherwise says so once, so that GPU tests skip visibly. */
static inline int rjt_have_gpu(rj_ctx *ctx) {
  int n = 0;
  if (rj_device_count(ctx, &n) != RJ_OK || n < 1) {
    static int said;
    if (!said++) fprintf(stderr, "SKIP: no GPU (%s): GPU checks skipped\n", rj_errmsg(ctx));
    return 0;
  }
  return 1;
}

/* A treduce group over b[0 .. ranks): rank r's buffer on GPU r mod ndev, shape [rows, cols]
 * (pointers left to the caller, the destination's too: a copy of the root's), op, dtype,
 * tile [64, cols], ping-pong; every other field its default. */
static inline void rjt_treduce_group(rj_treduce_group *g, rj_treduce_buf *b, int ranks, int root,
                                     int64_t rows, int64_t cols, int ndev, rj_op op, rj_dtype dt) {
  for (int r = 0; r < ranks; r++) {
    memset(&b[r], 0, sizeof b[r]);
    b[r].device = r % ndev;
    b[r].ndim = 2;
    b[r].shape[0] = rows;
    b[r].shape[1] = cols;
  }
  rj_treduce_group_init(g);
  g->ranks = ranks;
  g->root = root;
  g->src = b;
  g->dst = b[root];
  g->op = op;
  g->dtype = dt;
  g->tile[0] = 64;
  g->tile[1] = cols;
  g->pingpong = 1;
}

/* Fake addresses for g's buffers b (its src; validation and compiles need no GPU): rank r at
 * 0x100000 * (r + 1), the destination at 0x900000. */
static inline void rjt_fake_pointers(rj_treduce_group *g, rj_treduce_buf *b) {
  for (int r = 0; r < g->ranks; r++)
    b[r].ptr = 0x100000u * (uint64_t)(r + 1);
  g->dst.ptr = 0x900000u;
}

/* A group of `ranks` 1-D f32 buffers of n elements at fake addresses (rjt_fake_pointers), root
 * 1, op; every other field its default. */
static inline void rjt_fake_group(rj_treduce_group *g, rj_treduce_buf *b, int ranks, int64_t n,
                                  rj_op op) {
  rj_treduce_group_init(g);
  for (int r = 0; r < ranks; r++) {
    memset(&b[r], 0, sizeof b[r]);
    b[r].ndim = 1;
    b[r].shape[0] = n;
  }
  g->ranks = ranks;
  g->root = 1;
  g->src = b;
  g->dst = b[1];
  g->op = op;
  g->dtype = RJ_F32;
  rjt_fake_pointers(g, b);
}

/* Runs one request on the GPU and asserts it passes. */
static inline void rjt_run_ok(rj_ctx *ctx, const char *json, uint64_t seed, int nans) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_check_opts o;
  rj_check_opts_init(&o);
  o.seed = seed;
  o.nan_count = nans;
  rj_check_result res = {.struct_size = sizeof(rj_check_result)};
  rj_status s = rj_check(ctx, &r, &o, &res);
  ck_assert_msg(s == RJ_OK, "run failed (%s): %s\n  request: %s", rj_status_name(s), rj_errmsg(ctx),
                json);
  ck_assert_msg(res.ok,
                "wrong result (variant %s, %lld wrong of %lld, %lld outside written): %s\n"
                "  seed %llu, request: %s",
                res.variant, (long long)res.wrong, (long long)res.checked,
                (long long)res.outside_written, res.first_error, (unsigned long long)seed, json);
  ck_assert_int_gt(res.checked, 0);
}

/* For GPU suites: with no usable GPU, says so and returns RJT_SKIP (ctest reports "Skipped"). */
#define RJT_SKIP 77
static inline int rjt_gpu_present(void) {
  /* probed in a child: a process that initialised CUDA must not fork (Check forks each test) */
  pid_t pid = fork();
  if (pid == 0) {
    rj_ctx *ctx = rj_ctx_new();
    int n = 0;
    rj_status s = rj_device_count(ctx, &n);
    if (s != RJ_OK || n < 1)
      fprintf(stderr, "SKIP: no GPU (%s): this suite needs one\n",
              s ? rj_errmsg(ctx) : "0 devices");
    rj_ctx_free(ctx);
    _exit(s == RJ_OK && n > 0 ? 0 : 1);
  }
  int st = 0;
  return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* The path of tests/repro/NAME: under the source tree the suite was built from, else (a carried
 * binary on another machine) under the working directory, the repository root. */
static inline const char *rjt_repro(const char *name) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/tests/repro/%s", REDJIT_SOURCE_DIR, name);
  if (access(path, R_OK) != 0) snprintf(path, sizeof path, "tests/repro/%s", name);
  return path;
}

/* The text of tests/repro/NAME (at most 4 KiB: the request reproducers), in a static buffer. */
static inline const char *rjt_repro_text(const char *name) {
  static char text[4096];
  FILE *f = fopen(rjt_repro(name), "rb");
  ck_assert_msg(f != NULL, "cannot open tests/repro/%s", name);
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  return text;
}

/* The CLI to run: $REDJIT_CLI (the carried one on the GPU machine), else the one built. */
static inline const char *rjt_cli_path(void) {
  return getenv("REDJIT_CLI") ? getenv("REDJIT_CLI") : REDJIT_CLI_BUILT;
}

/* Runs the CLI (rjt_cli_path) with args; returns its exit status and its first output line in
 * out. */
static inline int rjt_cli(const char *args, char *out, size_t n) {
  const char *bin = rjt_cli_path();
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  out[0] = 0;
  if (!fgets(out, (int)n, p)) out[0] = 0;
  char sink[256];
  while (fgets(sink, sizeof sink, p)) {
  }
  int rc = pclose(p);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Runs one suite of the given test functions; exit status for ctest. */
/* Runs a suite in this process (CK_NOFORK: the GPU suites count their cases in globals, and a
 * process that initialised CUDA must not fork); the number of failed tests. */
static inline int rjt_run_in_process(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed;
}

static inline int rjt_main(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}

#endif
