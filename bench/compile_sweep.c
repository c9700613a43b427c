/* The compile-time side of constant vs runtime-size ("dynamic") kernels.  Compiles K shapes of
 * one class twice in fresh contexts — constant requests, then the same requests with
 * "dynamic": true — and prints, per class, the compiles each needed and their total time.  Classes:
 * tensor 1-D, rows and columns (docs/TENSOR.md), and treduce over 4 ranks, 1-D counts and 2-D
 * shapes (docs/TREDUCE.md).  No GPU needed (target sm_90, 132 SMs assumed when no driver answers).
 *   compile_sweep [K]     (default 40 shapes per class; fixed seed) */
#include <redjit.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int run(const char *cls, int K, int dynamic, unsigned seed) {
  rj_ctx *ctx = rj_ctx_new();
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  srand(seed);
  double t0 = now_ms();
  long long c0 = rj_ctx_compile_count(ctx);
  for (int i = 0; i < K; i++) {
    char json[256];
    long long a = 1 + rand() % 4096, b = 1 + rand() % 65536;
    const char *dyn = dynamic ? ",\"dynamic\":true" : "";
    if (cls[0] == 't' && cls[8] == '1') /* treduce, 1-D: 1 .. 2^26 elements */
      snprintf(json, sizeof json,
               "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,"
               "\"root\":1,\"shape\":[%lld]%s}",
               (1LL << (rand() % 26)) + rand() % 65536, dyn);
    else if (cls[0] == 't') /* treduce, 2-D: (1 .. 4096) x (1 .. 65536) */
      snprintf(json, sizeof json,
               "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,"
               "\"root\":1,\"shape\":[%lld,%lld]%s}",
               a, b, dyn);
    else if (cls[0] == '1') /* 1-D, 2^16 .. 2^26 elements */
      snprintf(json, sizeof json,
               "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[%lld]%s}",
               (65536LL << (rand() % 10)) + rand() % 65536, dynamic ? ",\"dynamic\":true" : "");
    else
      snprintf(
          json, sizeof json,
          "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[%lld,%lld],\"axes\":[%d]%s}",
          a, b, cls[0] == 'r' ? 1 : 0, dynamic ? ",\"dynamic\":true" : "");
    rj_request r;
    rj_kernel *k;
    if (rj_request_parse(ctx, json, &r) || rj_compile(ctx, &r, &o, &k)) {
      fprintf(stderr, "%s: %s\n", json, rj_errmsg(ctx));
      rj_ctx_free(ctx);
      return 1;
    }
  }
  printf("{\"class\":\"%s\",\"shapes\":%d,\"dynamic\":%s,\"compiles\":%lld,\"ms\":%.1f}\n", cls, K,
         dynamic ? "true" : "false", rj_ctx_compile_count(ctx) - c0, now_ms() - t0);
  rj_ctx_free(ctx);
  return 0;
}

int main(int argc, char **argv) {
  int K = argc > 1 ? atoi(argv[1]) : 40;
  const char *cls[] = {"1-D", "rows", "cols", "treduce 1-D", "treduce 2-D"};
  for (int c = 0; c < 5; c++)
    for (int d = 0; d < 2; d++)
      if (run(cls[c], K, d, 12345u + (unsigned)c)) return 1;
  return 0;
}
