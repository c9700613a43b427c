/* The compile-time side of constant vs runtime-size ("dynamic") tensor kernels.  Compiles
 * K shapes of one class twice in fresh contexts — constant requests, then the same requests with
 * "dynamic": true — and prints, per class, the compiles each needed and their total time.  No GPU
 * needed (target sm_90, 132 SMs assumed when no driver answers).
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
    if (cls[0] == '1') /* 1-D, 2^16 .. 2^26 elements */
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
  const char *cls[] = {"1-D", "rows", "cols"};
  for (int c = 0; c < 3; c++)
    for (int d = 0; d < 2; d++)
      if (run(cls[c], K, d, 12345u + (unsigned)c)) return 1;
  return 0;
}
