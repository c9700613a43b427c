/* Properties of the emitted PTX, and ptxas assembling every variant's PTX (when ptxas exists). */
#include "rjtest.h"

#include <unistd.h>

#define SEED000                                                                                    \
  "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,"          \
  "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]},\"axes\":[-1]}"
#define SEED001                                                                                    \
  "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"thread\","                      \
  "\"src\":{\"mem\":\"local\",\"shape\":[4]},\"dst\":{\"mem\":\"local\",\"shape\":[1]}}"
#define WARP_ALL                                                                                    \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\","                           \
  "\"src\":{\"mem\":\"local\",\"shape\":[32],\"layout\":{\"shape\":[32],\"stride\":[\"1@lane\"]}}," \
  "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}}}"
#define MMA                                                                                                                             \
  "{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"%s\",\"scope\":\"warp\",\"accum\":%s,"                                                  \
  "\"src\":{\"mem\":\"local\",\"shape\":[16,%d],\"layout\":{\"shape\":[[2,8],[%d,4,2]],\"stride\":[[2,\"4@lane\"],[4,\"1@lane\",1]]}}," \
  "\"dst\":{\"mem\":\"local\",\"shape\":[16],\"layout\":{\"shape\":[[2,8]],\"stride\":[[1,\"4@lane\"]],\"replicate\":[[4,\"1@lane\"]]}}}"

START_TEST(seed000_shuffles) {
  rj_ctx *ctx = rj_ctx_new();
  const char *ptx = rjt_ptx(ctx, SEED000, "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 3);
  ck_assert_int_eq(rjt_count(ptx, ", 1, 6175, -1;"), 1);
  ck_assert_int_eq(rjt_count(ptx, ", 2, 6175, -1;"), 1);
  ck_assert_int_eq(rjt_count(ptx, ", 4, 6175, -1;"), 1);
  ck_assert_ptr_nonnull(strstr(ptx, "bar.sync \t0;"));
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(seed001_plain_loop) {
  rj_ctx *ctx = rj_ctx_new();
  const char *ptx = rjt_ptx(ctx, SEED001, "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl"), 0);
  ck_assert_int_eq(rjt_count(ptx, "bar."), 0);
  ck_assert_int_eq(rjt_count(ptx, "add.rn.f32"), 3); /* -0.0 identity folded away */
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(warp_tree_and_64bit) {
  rj_ctx *ctx = rj_ctx_new();
  const char *ptx = rjt_ptx(ctx, rjt_fmt(WARP_ALL, "sum", "f32"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 5);
  for (int m = 1; m <= 16; m <<= 1)
    ck_assert_int_eq(rjt_count(ptx, rjt_fmt(", %d, 31, -1;", m)), 1);
  ptx = rjt_ptx(ctx, rjt_fmt(WARP_ALL, "max", "f64"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 10); /* two halves per step */
  ptx = rjt_ptx(ctx, rjt_fmt(WARP_ALL, "min", "i64"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 10);
  ck_assert_int_ge(rjt_count(ptx, "min.s64"), 5);
  ptx = rjt_ptx(ctx, rjt_fmt(WARP_ALL, "max", "u32"), "sm_90");
  ck_assert_int_eq(rjt_count(ptx, "redux.sync.max.u32"), 1); /* whole warp, 32-bit: redux */
  char forced[1024];
  snprintf(forced, sizeof forced, "{\"variant\":\"local\",%s", rjt_fmt(WARP_ALL, "max", "u32") + 1);
  ptx = rjt_ptx(ctx, forced, "sm_90");
  ck_assert_int_ge(rjt_count(ptx, "max.u32"), 5);
  /* float max with nan=propagate is the NaN-propagating form; identities are infinities */
  ptx = rjt_ptx(ctx, rjt_fmt(WARP_ALL, "max", "f32"), "sm_90");
  ck_assert_int_ge(rjt_count(ptx, "max.NaN.f32"), 5);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(mma_fragment_rows) {
  rj_ctx *ctx = rj_ctx_new();
  /* each thread folds its 2J slots of a row, then lanes 1 and 2 bits: 2 rows x 2 shuffles */
  for (int J = 1; J <= 16; J *= 2) {
    const char *ptx = rjt_ptx(ctx, rjt_fmt(MMA, "sum", "f32", "true", 8 * J, J), "sm_90");
    ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 4);
    ck_assert_int_eq(rjt_count(ptx, ", 1, 31, -1;"), 2);
    ck_assert_int_eq(rjt_count(ptx, ", 2, 31, -1;"), 2);
  }
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(two_level_and_named_barrier) {
  rj_ctx *ctx = rj_ctx_new();
  /* one long row, 256 threads: 8 warps cooperate through shared partials */
  const char *ptx = rjt_ptx(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":256,"
      "\"src\":{\"mem\":\"shared\",\"shape\":[1,4096]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}}",
      "sm_90");
  ck_assert_ptr_nonnull(strstr(ptx, "rj_partials"));
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync.bfly.b32"), 5 + 3);
  /* warpgroup scope: a named barrier of 128 threads whose id is allocated (1), not 8 */
  ptx = rjt_ptx(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"f32\",\"scope\":\"warpgroup\",\"threads\":256,"
      "\"active\":{\"warpgroup\":1},"
      "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
      "sm_90");
  ck_assert_ptr_nonnull(strstr(ptx, "bar.sync \t1, 128;"));
  ck_assert_ptr_null(strstr(ptx, "bar.sync \t8"));
  /* warp scope: bar.warp.sync */
  ptx = rjt_ptx(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"min\",\"dtype\":\"f32\",\"scope\":\"warp\",\"threads\":256,"
      "\"active\":{\"warp\":5},"
      "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
      "sm_90");
  ck_assert_ptr_nonnull(strstr(ptx, "bar.warp.sync \t-1;"));
  rj_ctx_free(ctx);
}
END_TEST

/* ptxas, when the CUDA toolkit is installed, assembles every variant's PTX. */
static const char *find_ptxas(void) {
  static const char *const where[] = {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"};
  for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
    if (access(where[i], X_OK) == 0) return where[i];
  return NULL;
}

/* Writes ptx to a new file named from the template path (…XXXXXX), for ptxas. */
static void ptx_file(const char *ptx, char *path) {
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ssize_t w = write(fd, ptx, strlen(ptx));
  close(fd);
  if (w != (ssize_t)strlen(ptx)) unlink(path);
  ck_assert_int_eq(w, (ssize_t)strlen(ptx));
}

static const char *const corpus[] = {
    SEED000,
    SEED001,
    "{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"f16\",\"scope\":\"cta\",\"threads\":128,\"accum\":true,"
    "\"src\":{\"mem\":\"shared\",\"shape\":[8,16,2,22]},\"dst\":{\"mem\":\"shared\",\"shape\":[8,16]},\"axes\":[-2,-1]}",
    "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"bf16\",\"scope\":\"cta\",\"threads\":256,"
    "\"src\":{\"mem\":\"shared\",\"shape\":[2,4096]},\"dst\":{\"mem\":\"shared\",\"shape\":[2]}}",
    "{\"kind\":\"tile\",\"op\":\"min\",\"dtype\":\"u64\",\"scope\":\"warpgroup\",\"threads\":256,\"active\":{\"warpgroup\":1},"
    "\"src\":{\"mem\":\"shared\",\"shape\":[4,300]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
    "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"i64\",\"scope\":\"thread\",\"threads\":128,\"active\":{\"thread\":65},"
    "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]},\"nan\":\"ignore\"}",
    "{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"bf16\",\"scope\":\"warp\",\"accum\":true,"
    "\"src\":{\"mem\":\"local\",\"shape\":[16,64],\"layout\":{\"shape\":[[2,8],[8,4,2]],\"stride\":[[2,\"4@lane\"],[4,\"1@lane\",1]]}},"
    "\"dst\":{\"mem\":\"local\",\"shape\":[16],\"layout\":{\"shape\":[[2,8]],\"stride\":[[1,\"4@lane\"]],\"replicate\":[[4,\"1@lane\"]]}}}",
    "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f64\",\"scope\":\"warpgroup\","
    "\"src\":{\"mem\":\"local\",\"shape\":[128,16],\"layout\":{\"shape\":[128,16],\"stride\":[\"1@thread\",1]}},"
    "\"dst\":{\"mem\":\"local\",\"shape\":[128,1],\"layout\":{\"shape\":[128,1],\"stride\":[\"1@thread\",1]}}}",
    /* the scalar ops prod, and / or / xor, mean (test_scalar_ops.c checks their instructions) */
    "{\"kind\":\"tile\",\"op\":\"prod\",\"dtype\":\"f16\",\"scope\":\"cta\",\"threads\":256,\"nan\":\"ignore\","
    "\"src\":{\"mem\":\"shared\",\"shape\":[2,3000]},\"dst\":{\"mem\":\"shared\",\"shape\":[2]}}",
    "{\"kind\":\"tile\",\"op\":\"xor\",\"dtype\":\"u32\",\"scope\":\"warp\","
    "\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],\"stride\":[\"1@lane\",1]}},"
    "\"dst\":{\"mem\":\"local\",\"shape\":[4],\"layout\":{\"shape\":[4],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0]}",
    "{\"kind\":\"tensor\",\"op\":\"mean\",\"dtype\":\"bf16\",\"shape\":[1000,64],\"axes\":[0],\"dynamic\":true}",
    /* one input of a constant size: its vector loads skip L1 where the target's PTX has it */
    "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4096,4096],\"axes\":[1]}",
    "{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"u8\",\"shape\":[1000,4096],\"axes\":[0]}",
    "{\"kind\":\"treduce\",\"op\":\"and\",\"dtype\":\"i64\",\"ranks\":4,\"shape\":[512,33],\"accum\":true}",
};

START_TEST(ptxas_assembles) {
  const char *ptxas = find_ptxas();
  if (!ptxas) {
    fprintf(stderr, "SKIP: ptxas not found: PTX not assembled\n");
    return;
  }
  static const char *const targets[] = {"sm_80", "sm_90", "sm_90a", "sm_100a", "sm_120"};
  rj_ctx *ctx = rj_ctx_new();
  for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
    const char *ptx = rjt_ptx_raw(ctx, corpus[_i], targets[t]);
    char path[] = "/tmp/rjptxXXXXXX";
    ptx_file(ptx, path);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s -arch=%s %s -o /dev/null 2>&1", ptxas, targets[t], path);
    int rc = system(cmd);
    unlink(path);
    ck_assert_msg(rc == 0, "ptxas -arch=%s rejected case %d", targets[t], _i);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* The ring's hop kernel (passes/treduce_ring.c): up to 16 sources are folded straight from the
 * parameters; more come from a table in shared memory, 8 at a time, each parameter read once and
 * stored there once.  With ptxas: no hop kernel needs more than 256 bytes of stack a thread (the
 * driver's default stack is 1 KiB; before the table, 64-127 sources took 1.4-2.7 KB, and launching
 * such a hop made the driver grow the stack, which waits for the whole device). */
#define RING_HOP                                                                                   \
  "{\"kind\":\"treduce\",\"variant\":\"treduce_ring\",\"op\":\"%s\",\"dtype\":\"%s\","             \
  "\"ranks\":%d,\"shape\":[1],\"tile\":[1,%d]}"

/* The bytes of the kernel's source table in shared memory (passes/srcfold.c), or -1: none */
static int table_bytes(const char *ptx) {
  const char *at = strstr(ptx, ".b8 src_table");
  if (!at) return -1;
  ck_assert_ptr_null(strstr(at + 1, ".b8 src_table")); /* one table */
  at = strchr(at, '[');
  ck_assert_ptr_nonnull(at);
  return atoi(at + 1);
}

/* ptxas -v's stack frame for the PTX, in bytes */
static int stack_frame(const char *ptxas, const char *ptx) {
  char path[] = "/tmp/rjptxXXXXXX";
  ptx_file(ptx, path);
  FILE *p = popen(rjt_fmt("%s -arch=sm_90a -v %s -o /dev/null 2>&1", ptxas, path), "r");
  if (!p) unlink(path);
  ck_assert_ptr_nonnull(p);
  char line[512];
  int frame = -1;
  while (fgets(line, sizeof line, p)) {
    const char *at = strstr(line, " bytes stack frame");
    if (!at) continue;
    while (at > line && at[-1] >= '0' && at[-1] <= '9')
      at--;
    frame = atoi(at);
  }
  int rc = pclose(p);
  unlink(path);
  ck_assert_int_eq(rc, 0);
  ck_assert_msg(frame >= 0, "ptxas -v printed no stack frame");
  return frame;
}

START_TEST(ring_hop_sources) {
  rj_ctx *ctx = rj_ctx_new();
  static const int few[] = {2, 16}, many[] = {17, 40, 127};
  for (size_t i = 0; i < 2; i++) {
    const char *ptx = rjt_ptx(ctx, rjt_fmt(RING_HOP, "sum", "f32", few[i], 4), "sm_90a");
    ck_assert_int_eq(table_bytes(ptx), -1);
  }
  for (size_t i = 0; i < 3; i++) {
    int n = many[i];
    const char *ptx = rjt_ptx(ctx, rjt_fmt(RING_HOP, "sum", "f32", n, 4), "sm_90a");
    ck_assert_int_eq(table_bytes(ptx), 8 * n);
    for (int k = 10; k < 10 + n; k++)
      ck_assert_int_eq(rjt_count(ptx, rjt_fmt("redjit_treduce_ring_param_%d]", k)), 1);
    ck_assert_int_gt(rjt_count(ptx, "ld.shared.b64") + rjt_count(ptx, "ld.shared.v2.b64"), 0);
  }
  const char *ptxas = find_ptxas();
  if (!ptxas) {
    fprintf(stderr, "SKIP: ptxas not found: hop kernels' stack not measured\n");
    rj_ctx_free(ctx);
    return;
  }
  static const struct {
    const char *op, *dt;
    int vec;
  } kinds[] = {{"sum", "f32", 4},
               {"max", "f64", 2},
               {"min", "i64", 2},
               {"max", "bf16", 8},
               {"sum", "u32", 4}};
  static const int ns[] = {16, 40, 64, 127};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
      for (int w = 0; w < 2; w++) { /* one element per access, then 16 bytes */
        int v = w ? kinds[k].vec : 1;
        const char *json = rjt_fmt(RING_HOP, kinds[k].op, kinds[k].dt, ns[i], v);
        int frame = stack_frame(ptxas, rjt_ptx(ctx, json, "sm_90a"));
        ck_assert_msg(frame <= 256, "%d bytes of stack: %s", frame, json);
      }
  rj_ctx_free(ctx);
}
END_TEST

/* The peer path's kernel (passes/treduce.c) in the same way: beyond 16 ranks a table, its loads
 * volatile (the grid-stride loop has no barrier: LLVM would hoist all the pointers out of it),
 * each parameter read once; with ptxas, no stack at 17-128 ranks (before: 221 registers at 32
 * ranks, 1488 bytes of stack at 127), ping-pong on and off. */
#define PEER                                                                                       \
  "{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":%d,"                 \
  "\"shape\":[4096,1024],\"pingpong\":%s}"

START_TEST(peer_many_ranks) {
  rj_ctx *ctx = rj_ctx_new();
  const char *ptx = rjt_ptx(ctx, rjt_fmt(PEER, "sum", "f32", 16, 3, "true"), "sm_90a");
  ck_assert_int_eq(table_bytes(ptx), -1);
  static const int many[] = {17, 40, 128};
  for (size_t i = 0; i < 3; i++) {
    int n = many[i];
    ptx = rjt_ptx(ctx, rjt_fmt(PEER, "sum", "f32", n, n / 2, "true"), "sm_90a");
    ck_assert_int_eq(table_bytes(ptx), 8 * n);
    for (int k = 1; k <= n; k++)
      ck_assert_int_eq(rjt_count(ptx, rjt_fmt("redjit_treduce_param_%d]", k)), 1);
    ck_assert_int_gt(rjt_count(ptx, "ld.volatile.shared"), 0);
  }
  const char *ptxas = find_ptxas();
  if (!ptxas) {
    fprintf(stderr, "SKIP: ptxas not found: the peer kernel's stack not measured\n");
    rj_ctx_free(ctx);
    return;
  }
  static const char *const kinds[][2] = {
      {"sum", "f32"}, {"max", "f64"}, {"min", "bf16"}, {"sum", "i64"}};
  static const int ns[] = {17, 33, 64, 127, 128};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
      for (int pp = 0; pp < 2; pp++) {
        const char *json =
            rjt_fmt(PEER, kinds[k][0], kinds[k][1], ns[i], ns[i] - 1, pp ? "true" : "false");
        int frame = stack_frame(ptxas, rjt_ptx(ctx, json, "sm_90a"));
        ck_assert_msg(frame == 0, "%d bytes of stack: %s", frame, json);
      }
  rj_ctx_free(ctx);
}
END_TEST

/* The same kernel's runtime-size form ("dynamic": true): the table beyond 16 ranks, every source
 * parameter and n read once, and with ptxas no stack at 1-128 ranks. */
START_TEST(peer_runtime_size) {
  rj_ctx *ctx = rj_ctx_new();
#define PEER_DYN                                                                                   \
  "{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":%d,"                 \
  "\"shape\":[1000003],\"pingpong\":%s,\"dynamic\":true}"
  static const int many[] = {1, 16, 17, 40, 128};
  for (size_t i = 0; i < 5; i++) {
    int n = many[i];
    const char *ptx = rjt_ptx(ctx, rjt_fmt(PEER_DYN, "sum", "f32", n, n / 2, "true"), "sm_90a");
    ck_assert_int_eq(table_bytes(ptx), n > 16 ? 8 * n : -1);
    for (int k = 0; k <= n + 1; k++) /* dst, the sources, n */
      ck_assert_int_eq(rjt_count(ptx, rjt_fmt("redjit_treduce_param_%d]", k)), 1);
  }
  const char *ptxas = find_ptxas();
  if (!ptxas) {
    fprintf(stderr, "SKIP: ptxas not found: the runtime-size kernel's stack not measured\n");
    rj_ctx_free(ctx);
    return;
  }
  static const char *const kinds[][2] = {
      {"sum", "f32"}, {"max", "f64"}, {"min", "bf16"}, {"sum", "i64"}};
  static const int ns[] = {1, 16, 17, 128};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
      for (int pp = 0; pp < 2; pp++) {
        const char *json =
            rjt_fmt(PEER_DYN, kinds[k][0], kinds[k][1], ns[i], ns[i] - 1, pp ? "true" : "false");
        int frame = stack_frame(ptxas, rjt_ptx(ctx, json, "sm_90a"));
        ck_assert_msg(frame == 0, "%d bytes of stack: %s", frame, json);
      }
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ptx");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, seed000_shuffles);
  tcase_add_test(tc, seed001_plain_loop);
  tcase_add_test(tc, warp_tree_and_64bit);
  tcase_add_test(tc, mma_fragment_rows);
  tcase_add_test(tc, two_level_and_named_barrier);
  tcase_add_test(tc, ring_hop_sources);
  tcase_add_test(tc, peer_many_ranks);
  tcase_add_test(tc, peer_runtime_size);
  tcase_add_loop_test(tc, ptxas_assembles, 0, (int)(sizeof corpus / sizeof corpus[0]));
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
