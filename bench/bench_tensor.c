/* `redjit bench` over the cases of bench/cases.txt through the public API: one JSON line per
 * case with the compile time and the median kernel time of rj_bench (CUDA events, data rotated
 * through >= 256 MiB), for the constant kernel (sizes are JIT constants: every new shape
 * compiles once) and for the runtime-size kernel of the same request ("dynamic": true; one
 * context for all cases, so a case whose plan bucket an earlier case compiled costs no compile:
 * dyn_compiled false).  The last line sums the compile times of both.
 * Usage: bench_tensor [cases.txt] [--ptx-only]   (--ptx-only: compile times, no GPU) */
#include "redjit.h"
#include "redjit_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plan bucket rj_explain names for a dynamic request ("constant" when it has none). */
static void bucket_of(rj_ctx *ctx, const rj_request *r, const rj_options *o, char *out, size_t n) {
  const char *text = NULL, *b = NULL;
  snprintf(out, n, "constant");
  if (rj_explain(ctx, r, o, &text) == RJ_OK && (b = strstr(text, "bucket \""))) {
    b += strlen("bucket \"");
    snprintf(out, n, "%.*s", (int)strcspn(b, "\""), b);
  }
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "bench/cases.txt";
  int ptx_only = argc > 2 && strcmp(argv[2], "--ptx-only") == 0;
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "bench_tensor: cannot open %s\n", path);
    return 2;
  }
  rj_ctx *ctx = rj_ctx_new(), *dctx = rj_ctx_new();
  char line[512];
  int bad = 0, cases = 0, dyn_compiles = 0;
  double const_ms = 0, dyn_ms = 0;
  while (fgets(line, sizeof line, f)) {
    char name[96], dt[8], op[8], axes[64], shape[128];
    if (line[0] == '#' || sscanf(line, "%95s %7s %7s %63s %127s", name, dt, op, axes, shape) != 5)
      continue;
    char json[512], djson[512];
    snprintf(json, sizeof json,
             "{\"kind\":\"tensor\",\"op\":\"%s\",\"dtype\":\"%s\",\"shape\":[%s],\"axes\":[%s]}",
             op, dt, shape, axes);
    snprintf(djson, sizeof djson, "%.*s,\"dynamic\":true}", (int)strlen(json) - 1, json);
    rj_request r, dr;
    rj_status s = rj_request_parse(ctx, json, &r);
    if (!s) s = rj_request_parse(ctx, djson, &dr);
    rj_kernel *k = NULL, *dk = NULL;
    rj_options o;
    rj_options_init(&o);
    if (ptx_only) o.target = "sm_90";
    long long before = rj_ctx_compile_count(dctx);
    if (!s) s = rj_compile(ctx, &r, &o, &k);
    rj_ctx *bad_ctx = ctx;
    if (!s && (s = rj_compile(dctx, &dr, &o, &dk))) bad_ctx = dctx;
    if (s) {
      printf("{\"case\":\"%s\",\"ok\":false,\"error\":\"%s\"}\n", name, rj_errmsg(bad_ctx));
      bad++;
      continue;
    }
    int compiled = rj_ctx_compile_count(dctx) > before;
    char bucket[64];
    bucket_of(dctx, &dr, &o, bucket, sizeof bucket);
    cases++;
    const_ms += rj_kernel_compile_ms(k);
    if (compiled) {
      dyn_compiles++;
      dyn_ms += rj_kernel_compile_ms(dk);
    }
    unsigned g[3], b[3];
    rj_kernel_dims(k, g, b, NULL);
    char dyn[256];
    snprintf(dyn, sizeof dyn, "\"dyn_bucket\":\"%s\",\"dyn_compiled\":%s,\"dyn_compile_ms\":%.2f",
             bucket, compiled ? "true" : "false", rj_kernel_compile_ms(dk));
    if (ptx_only) {
      printf(
          "{\"case\":\"%s\",\"variant\":\"%s\",\"grid\":%u,\"block\":%u,\"compile_ms\":%.2f,%s}\n",
          name, rj_kernel_variant(k), g[0], b[0], rj_kernel_compile_ms(k), dyn);
      continue;
    }
    rj_check_opts co;
    rj_check_opts_init(&co);
    rj_bench_result br = {.struct_size = sizeof(rj_bench_result)},
                    dbr = {.struct_size = sizeof(rj_bench_result)};
    rj_ctx *failed = ctx;
    s = rj_bench(ctx, &r, &co, &br);
    if (!s && (s = rj_bench(dctx, &dr, &co, &dbr))) failed = dctx;
    if (s) {
      printf("{\"case\":\"%s\",\"ok\":false,\"error\":\"%s\"}\n", name, rj_errmsg(failed));
      bad++;
      continue;
    }
    printf("{\"case\":\"%s\",\"ok\":true,\"variant\":\"%s\",\"grid\":%u,\"block\":%u,"
           "\"compile_ms\":%.2f,\"kernel_ms\":%.5f,\"bytes\":%.0f,\"gbps\":%.1f,%s,"
           "\"dyn_kernel_ms\":%.5f,\"dyn_gbps\":%.1f,\"dyn_speed\":%.3f}\n",
           name, br.variant, g[0], b[0], rj_kernel_compile_ms(k), br.kernel_ms, br.bytes, br.gbps,
           dyn, dbr.kernel_ms, dbr.gbps, dbr.kernel_ms > 0 ? br.kernel_ms / dbr.kernel_ms : 0);
    fflush(stdout);
  }
  printf("{\"summary\":true,\"cases\":%d,\"const_compiles\":%d,\"const_compile_ms\":%.1f,"
         "\"dyn_compiles\":%d,\"dyn_compile_ms\":%.1f}\n",
         cases, cases, const_ms, dyn_compiles, dyn_ms);
  fclose(f);
  rj_ctx_free(ctx);
  rj_ctx_free(dctx);
  return bad ? 1 : 0;
}
