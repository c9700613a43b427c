/* A program that uses an installed (or embedded) redjit: compiles a tile request for sm_90 with
 * rj_compile and prints the PTX's first .entry line, after a treduce plan (redjit_treduce.h, no
 * GPU either) that must cut a 2-GPU request in two.  Needs no GPU.  Built by
 * tests/consumers/run.sh through find_package(redjit), pkg-config and add_subdirectory. */
#include <redjit.h>
#include <redjit_treduce.h>
#include <stdio.h>
#include <string.h>

/* rj_treduce_plan_make of 4 ranks on GPUs 0 0 1 1 (forced split): two slices. */
static int treduce_plan(rj_ctx *ctx) {
  const char *json = "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,"
                     "\"root\":0,\"shape\":[1024,1024]}";
  const int rank_device[4] = {0, 0, 1, 1};
  rj_request req;
  rj_treduce_plan plan;
  rj_treduce_plan_init(&plan);
  if (rj_request_parse(ctx, json, &req) != RJ_OK ||
      rj_treduce_plan_make(ctx, &req, rank_device, RJ_TREDUCE_SPLIT, &plan) != RJ_OK) {
    fprintf(stderr, "consumer: %s\n", rj_errmsg(ctx));
    return 1;
  }
  if (plan.gpus != 2 || plan.slices != 2) {
    fprintf(stderr, "consumer: the plan has %d GPUs and %d slices, not 2 and 2\n", plan.gpus,
            plan.slices);
    return 1;
  }
  return 0;
}

int main(void) {
  const char *json = "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f16\",\"scope\":\"cta\","
                     "\"threads\":256,\"src\":{\"mem\":\"shared\",\"shape\":[2,4096]},"
                     "\"dst\":{\"mem\":\"shared\",\"shape\":[2]}}";
  rj_ctx *ctx = rj_ctx_new();
  if (!ctx) return 1;
  if (treduce_plan(ctx) != 0) {
    rj_ctx_free(ctx);
    return 1;
  }
  rj_request req;
  rj_options opt;
  rj_kernel *k;
  rj_options_init(&opt);
  opt.target = "sm_90";
  int rc = 1;
  if (rj_request_parse(ctx, json, &req) != RJ_OK || rj_compile(ctx, &req, &opt, &k) != RJ_OK) {
    fprintf(stderr, "consumer: %s\n", rj_errmsg(ctx));
  } else {
    const char *ptx = rj_kernel_text(k, RJ_EMIT_PTX);
    const char *e = ptx ? strstr(ptx, ".entry") : NULL;
    if (e) {
      while (e > ptx && e[-1] != '\n')
        e--;
      printf("redjit %s: %.*s\n", rj_version(), (int)strcspn(e, "\n"), e);
      rc = 0;
    } else {
      fprintf(stderr, "consumer: no .entry in the PTX\n");
    }
  }
  rj_ctx_free(ctx);
  return rc;
}
