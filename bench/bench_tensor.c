/* `redjit bench` over the cases of bench/cases.txt through the public API: one JSON line per
 * case with the compile time (sizes are JIT constants: every new shape compiles once) and the
 * median kernel time of rj_bench (CUDA events, data rotated through >= 256 MiB).
 * Usage: bench_tensor [cases.txt] [--ptx-only]   (--ptx-only: compile times, no GPU) */
#include "redjit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "bench/cases.txt";
  int ptx_only = argc > 2 && strcmp(argv[2], "--ptx-only") == 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "bench_tensor: cannot open %s\n", path);
    return 2;
  }
  rj_ctx *ctx = rj_ctx_new();
  char line[512];
  int bad = 0;
  while (fgets(line, sizeof line, f)) {
    char name[96], dt[8], op[8], axes[64], shape[128];
    if (line[0] == '#' || sscanf(line, "%95s %7s %7s %63s %127s", name, dt, op, axes, shape) != 5)
      continue;
    char json[512];
    snprintf(json, sizeof json,
             "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[%s],\"axes\":[%s]}",
             op, dt, shape, axes);
    rj_request r;
    rj_status s = rj_request_parse(ctx, json, &r);
    rj_kernel *k = NULL;
    rj_options o;
    rj_options_init(&o);
    if (ptx_only) o.target = "sm_90";
    if (!s) s = rj_compile(ctx, &r, &o, &k);
    if (s) {
      printf("{\"case\":\"%s\",\"ok\":false,\"error\":\"%s\"}\n", name, rj_errmsg(ctx));
      bad++;
      continue;
    }
    unsigned g[3], b[3];
    rj_kernel_dims(k, g, b, NULL);
    if (ptx_only) {
      printf("{\"case\":\"%s\",\"variant\":\"%s\",\"grid\":%u,\"block\":%u,\"compile_ms\":%.2f}\n",
             name, rj_kernel_variant(k), g[0], b[0], rj_kernel_compile_ms(k));
      continue;
    }
    rj_check_opts co;
    rj_check_opts_init(&co);
    rj_bench_result br;
    s = rj_bench(ctx, &r, &co, &br);
    if (s) {
      printf("{\"case\":\"%s\",\"ok\":false,\"error\":\"%s\"}\n", name, rj_errmsg(ctx));
      bad++;
      continue;
    }
    printf("{\"case\":\"%s\",\"ok\":true,\"variant\":\"%s\",\"grid\":%u,\"block\":%u,"
           "\"compile_ms\":%.2f,\"kernel_ms\":%.5f,\"bytes\":%.0f,\"gbps\":%.1f}\n",
           name, br.variant, g[0], b[0], rj_kernel_compile_ms(k), br.kernel_ms, br.bytes, br.gbps);
    fflush(stdout);
  }
  fclose(f);
  rj_ctx_free(ctx);
  return bad ? 1 : 0;
}
