/* Compile latency per request kind: a cold miss (the first compile of a fresh process), a warm
 * miss (a compile after others in the same context), a memory hit (ns, median of many), a disk
 * hit in a fresh process (its first rj_compile, the kernel written by another process; then the
 * same with rj_ctx_new, and the whole process: exec, loading the libraries, the hit, exit); then
 * the memory hit against the number of kernels the context holds.  Needs no GPU.
 *   jit_latency [EXAMPLES_DIR]   (default: examples)
 * With --corpus, the warm miss of every request of a corpus file (tests/corpus/requests.jsonl:
 * one {"name", "target", "request"} per line; lines with "flags" or that fail are left out), each
 * the median of ROUNDS fresh contexts, then its median, 90th and 99th percentile per kind, and the
 * same per stage (rj_kernel_stage_ms: lowering, verify, O3, PTX; "other" is the rest of the
 * compile: dispatch, plan, cache key, target machine, PTX header):
 *   jit_latency --corpus FILE [ROUNDS]   (default 3) */
#include "bench_clock.h"
#include "redjit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

/* One compile's time in µs (negative: it failed). */
static double once_us(rj_ctx *ctx, const rj_request *r) {
  rj_kernel *k = NULL;
  double t0 = now_us();
  rj_status s = rj_compile(ctx, r, NULL, &k);
  return s ? -1 : now_us() - t0;
}

/* A memory hit in ns: the median over n batches of 100 hits. */
static double hit_ns(rj_ctx *ctx, const rj_request *r, int n) {
  double *t = malloc(sizeof *t * (size_t)n), med;
  rj_kernel *k = NULL;
  for (int i = 0; i < n; i++) {
    double t0 = now_us();
    for (int j = 0; j < 100; j++)
      rj_compile(ctx, r, NULL, &k);
    t[i] = (now_us() - t0) * 10;
  }
  qsort(t, (size_t)n, sizeof *t, cmp);
  med = t[n / 2];
  free(t);
  return med;
}

/* A fresh process's first compile of the request in file (`jit_latency --first FILE`): its time,
 * the same with rj_ctx_new before it (*with_ctx) and the whole child process's (*proc), in µs. */
typedef struct first_times {
  double us, with_ctx, proc;
  long long compiles;
} first_times;
static first_times first_in_child(const char *self, const char *file) {
  char cmd[8192], line[128] = "";
  snprintf(cmd, sizeof cmd, "'%s' --first '%s'", self, file);
  first_times t = {-1, -1, -1, -1};
  double t0 = now_us();
  FILE *p = popen(cmd, "r");
  if (p && fgets(line, sizeof line, p))
    sscanf(line, "%lf %lld %lf", &t.us, &t.compiles, &t.with_ctx);
  if (p && pclose(p) == 0) t.proc = now_us() - t0;
  return t;
}

static int first(const char *file) {
  double t0 = now_us();
  rj_ctx *ctx = rj_ctx_new();
  double t1 = now_us();
  rj_request r;
  if (rj_request_parse(ctx, slurp(file), &r)) return 1;
  double us = once_us(ctx, &r);
  printf("%.1f %lld %.1f\n", us, rj_ctx_compile_count(ctx), us + (t1 - t0));
  rj_ctx_free(ctx);
  return 0;
}

/* Another request of the examples (for a warm miss: the context has compiled something). */
static const char *rjb_other(const char *dir, const char *name) {
  static char file[4096];
  snprintf(file, sizeof file, "%s/%s", dir,
           strcmp(name, "tile_redux.json") ? "tile_redux.json" : "seed000_shared.json");
  return file;
}

/* One row of the table: the request in dir/name. */
static void row(const char *self, const char *dir, const char *name, const char *kind) {
  char file[4096], cache[64];
  snprintf(file, sizeof file, "%s/%s", dir, name);
  snprintf(cache, sizeof cache, "/tmp/jit_latency.XXXXXX");
  if (!mkdtemp(cache) || !slurp(file)) {
    printf("%-9s (cannot read %s)\n", kind, file);
    return;
  }
  setenv("REDJIT_CACHE_DIR", cache, 1);
  first_times cold = first_in_child(self, file), disk = first_in_child(self, file);
  rj_ctx *ctx = rj_ctx_new();
  rj_ctx_set_disk_cache(ctx, NULL);
  rj_request r, other;
  rj_request_parse(ctx, slurp(file), &r);
  rj_request_parse(ctx, slurp(rjb_other(dir, name)), &other);
  once_us(ctx, &other); /* the context and its target machine are warm */
  double warm = once_us(ctx, &r), hit = hit_ns(ctx, &r, 200);
  printf("%-9s %10.2f %10.2f %10.0f %10.1f %10.1f %10.2f   (compiles: %lld then %lld)\n", kind,
         cold.us / 1e3, warm / 1e3, hit, disk.us, disk.with_ctx, disk.proc / 1e3, cold.compiles,
         disk.compiles);
  rj_ctx_free(ctx);
  char rm[128];
  snprintf(rm, sizeof rm, "rm -rf '%s'", cache);
  if (system(rm)) return;
}

/* The memory hit against the number of kernels held: up to 2048 tile kernels (sizes, ops, dtypes).
 */
static void flatness(void) {
  rj_ctx *ctx = rj_ctx_new();
  rj_ctx_set_disk_cache(ctx, NULL);
  rj_request r;
  static const char *const dt[] = {"f32", "f16", "bf16", "i32", "u32", "f64"};
  static const char *const op[] = {"sum", "max", "min"};
  int at[] = {1, 64, 512, 2048}, done = 0;
  printf("\nmemory hit against kernels held (tile requests, disk cache off)\n%8s %10s\n", "kernels",
         "hit ns");
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
    for (; done < at[i]; done++) {
      char json[512];
      snprintf(json, sizeof json,
               "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\","
               "\"src\":{\"mem\":\"shared\",\"shape\":[%d,32]},\"dst\":{\"mem\":\"shared\","
               "\"shape\":[%d]}}",
               op[done / 128 % 3], dt[done / 384 % 6], 1 + done % 128, 1 + done % 128);
      if (rj_request_parse(ctx, json, &r) || once_us(ctx, &r) < 0) {
        printf("(request %d: %s)\n", done, rj_errmsg(ctx));
        rj_ctx_free(ctx);
        return;
      }
    }
    printf("%8d %10.0f\n", at[i], hit_ns(ctx, &r, 200));
  }
  rj_ctx_free(ctx);
}

/* ---------------------------------------------------------------- --corpus */

/* The figures of one compile: the whole, its stages (rj_kernel_stage_ms) and the rest. */
enum { ST_ALL, ST_LOWER, ST_VERIFY, ST_O3, ST_PTX, ST_OTHER, NST };
static const char *const st_name[NST] = {"compile", "lower", "verify", "O3", "PTX", "other"};

typedef struct miss {
  char kind[16], target[16], name[128];
  char *json;
  double (*us)[NST]; /* one per round; us[r][ST_ALL] negative: it failed */
} miss;

/* The value of the first string field `name` in line, or "" (a bench's reading of a known file
 * format, not a JSON parser). */
static void field(const char *line, const char *name, char *out, size_t n) {
  char pat[32];
  snprintf(pat, sizeof pat, "\"%s\": \"", name);
  const char *p = strstr(line, pat), *e;
  out[0] = 0;
  if (p && (e = strchr(p += strlen(pat), '"')) && (size_t)(e - p) < n)
    snprintf(out, n, "%.*s", (int)(e - p), p);
}

static int read_corpus(const char *file, miss **out, int rounds) {
  FILE *f = fopen(file, "r");
  if (!f) return -1;
  static char line[1 << 16];
  int n = 0, cap = 0;
  miss *m = NULL;
  while (fgets(line, sizeof line, f)) {
    char *req = strstr(line, "\"request\": "), *end = strrchr(line, '}');
    if (strstr(line, "\"flags\"") || !req || !end || end < req) continue;
    req += strlen("\"request\": ");
    *end = 0; /* the line's own closing brace */
    if (n == cap) m = realloc(m, sizeof *m * (size_t)(cap = cap ? cap * 2 : 256));
    miss *x = &m[n++];
    field(line, "target", x->target, sizeof x->target);
    field(line, "name", x->name, sizeof x->name);
    field(req, "kind", x->kind, sizeof x->kind);
    x->json = strdup(req);
    x->us = calloc((size_t)rounds, sizeof *x->us);
  }
  fclose(f);
  *out = m;
  return n;
}

/* The clock of --corpus: wall time, or with JIT_LATENCY_CPU=1 this thread's CPU time (steadier
 * where other work shares the cores), in µs. */
static double now(void) {
  static int cpu = -1;
  if (cpu < 0) cpu = getenv("JIT_LATENCY_CPU") && atoi(getenv("JIT_LATENCY_CPU"));
  if (!cpu) return now_us();
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* JIT_LATENCY_PTX_DIR=DIR: each compiled kernel's PTX into DIR/NAME.ptx (the first round's), and
 * one context for the whole corpus, so that every kernel is compiled after all those before it
 * in the same context (scripts/ptx-reuse.sh compares these with scripts/ptx-corpus.sh's). */
static const char *ptx_dir(void) {
  const char *d = getenv("JIT_LATENCY_PTX_DIR");
  return d && *d ? d : NULL;
}

static void write_ptx(const miss *x, const rj_kernel *k) {
  char path[1400];
  snprintf(path, sizeof path, "%s/%s.ptx", ptx_dir(), x->name);
  FILE *f = fopen(path, "w");
  const char *ptx = rj_kernel_text(k, RJ_EMIT_PTX);
  if (f && ptx) fputs(ptx, f);
  if (f) fclose(f);
}

static void one_round(miss *m, int n, int round) {
  rj_ctx *ctx = rj_ctx_new();
  rj_ctx_set_disk_cache(ctx, NULL);
  rj_options opt;
  rj_options_init(&opt);
  for (int i = -1; i < n; i++) { /* i = -1: a first compile warms the context */
    miss *x = &m[i < 0 ? 0 : i];
    rj_request r;
    opt.target = x->target;
    rj_kernel *k = NULL;
    long long before = rj_ctx_compile_count(ctx);
    double t0 = 0, us = -1;
    if (!rj_request_parse(ctx, x->json, &r) && (t0 = now(), !rj_compile(ctx, &r, &opt, &k)) &&
        rj_ctx_compile_count(ctx) > before) /* a hit (the same request twice) is left out */
      us = now() - t0;
    if (i >= 0) { /* the stages by the wall clock; "other": the rest of the whole */
      double *f = x->us[round], staged = 0;
      f[ST_ALL] = us;
      for (int st = 0; st < 4; st++)
        staged += f[ST_LOWER + st] = us >= 0 ? rj_kernel_stage_ms(k, st) * 1e3 : 0;
      f[ST_OTHER] = us >= 0 && us > staged ? us - staged : 0;
    }
    if (i >= 0 && us >= 0 && round == 0 && ptx_dir()) write_ptx(x, k);
    if (i >= 0 && i % 64 == 63 &&
        !ptx_dir()) { /* a fresh context now and then: its caches stay small */
      rj_ctx_free(ctx);
      ctx = rj_ctx_new();
      rj_ctx_set_disk_cache(ctx, NULL);
      if (!rj_request_parse(ctx, m[0].json, &r)) rj_compile(ctx, &r, &opt, &k);
    }
  }
  rj_ctx_free(ctx);
}

/* The median, 90th and 99th percentile of figure st of the requests whose kind is kind (NULL:
 * all), in ms; each request's figure is its median over the rounds. */
static void report(const miss *m, int n, int rounds, const char *kind, int st) {
  double *t = malloc(sizeof *t * (size_t)(n + 1)), r[64];
  int c = 0;
  for (int i = 0; i < n; i++) {
    if (kind && strcmp(m[i].kind, kind)) continue;
    int ok = 0;
    for (int j = 0; j < rounds; j++)
      if (m[i].us[j][ST_ALL] >= 0) r[ok++] = m[i].us[j][st];
    if (ok < rounds) continue;
    qsort(r, (size_t)ok, sizeof *r, cmp);
    t[c++] = r[ok / 2];
  }
  qsort(t, (size_t)c, sizeof *t, cmp);
  if (c)
    printf("%-9s %-8s %6d %10.2f %10.2f %10.2f %10.2f %10.2f\n", kind ? kind : "all", st_name[st],
           c, t[c / 2] / 1e3, t[c * 9 / 10] / 1e3, t[c * 99 / 100] / 1e3, t[c - 1] / 1e3,
           t[0] / 1e3);
  free(t);
}

/* JIT_LATENCY_TOP=N: the N slowest requests (their first round), with their stages. */
static int slower(const void *a, const void *b) {
  double x = (*(miss *const *)a)->us[0][ST_ALL], y = (*(miss *const *)b)->us[0][ST_ALL];
  return (x < y) - (x > y);
}

static void slowest(miss *m, int n) {
  int top = getenv("JIT_LATENCY_TOP") ? atoi(getenv("JIT_LATENCY_TOP")) : 0;
  miss **p = malloc(sizeof *p * (size_t)n);
  for (int i = 0; i < n; i++)
    p[i] = &m[i];
  qsort(p, (size_t)n, sizeof *p, slower);
  for (int i = 0; i < top && i < n; i++) {
    printf("%-48s", p[i]->name);
    for (int st = 0; st < NST; st++)
      printf(" %s %.2f", st_name[st], p[i]->us[0][st] / 1e3);
    printf("\n");
  }
  free(p);
}

static int corpus(const char *file, int rounds) {
  miss *m = NULL;
  if (rounds < 1 || rounds > 64) rounds = 3;
  int n = read_corpus(file, &m, rounds);
  if (n <= 0) return fprintf(stderr, "cannot read %s\n", file), 1;
  for (int j = 0; j < rounds; j++)
    one_round(m, n, j);
  printf("warm miss per request (median of %d rounds, %s), disk cache off\n", rounds,
         getenv("JIT_LATENCY_CPU") && atoi(getenv("JIT_LATENCY_CPU")) ? "thread CPU time" : "wall");
  printf("%-9s %-8s %6s %10s %10s %10s %10s %10s\n", "kind", "stage", "n", "median ms", "p90 ms",
         "p99 ms", "max ms", "min ms");
  static const char *const kinds[] = {"tile", "subgroup", "tensor", "treduce", NULL};
  for (int st = 0; st < NST; st++) /* "compile" (the whole) first, then its stages */
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
      report(m, n, rounds, kinds[i], st);
  slowest(m, n);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--first") == 0) return first(argv[2]);
  if (argc >= 3 && strcmp(argv[1], "--corpus") == 0)
    return corpus(argv[2], argc > 3 ? atoi(argv[3]) : 3);
  const char *dir = argc > 1 ? argv[1] : "examples";
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = 0;
  printf("%-9s %10s %10s %10s %10s %10s %10s\n", "kind", "cold ms", "warm ms", "mem hit ns",
         "disk hit us", "+ctx us", "proc ms");
  row(self, dir, "tile_shared_warpgroup.json", "tile");
  row(self, dir, "subgroup_reduce_all.json", "subgroup");
  row(self, dir, "tensor_rows.json", "tensor");
  row(self, dir, "treduce.json", "treduce");
  if (!getenv("JIT_LATENCY_NO_FLAT")) flatness();
  return 0;
}
