/* treduce on the GPU(s): rank r on GPU r mod the GPU count, so the whole suite runs on one GPU
 * (ranks sharing it).  Every case goes through rj_treduce_check (random sources, poisoned
 * destination and guards, the float64 oracle, sources checked unchanged) on the automatic path
 * and, for part of the matrix, the staged path (cuMemcpyPeerAsync / DtoD copies + accumulating
 * kernels).  Most cases also run the split path forced (one slice per GPU of the ranks; 3 slices
 * on 3 streams when they share one GPU) and the peer path forced on the same inputs: both must
 * pass the oracle and their destinations must be equal bit for bit (rj_treduce_result's digest).
 * The ops mean and custom have a case of their own (CK_RUN_CASE=treduce_ops): mean against the
 * oracle on every path; a custom add bit for bit op sum's; a non-commutative custom combine in
 * rank order, exact.  Op custom's f16 / bf16 and struct states (CK_RUN_CASE=treduce_custom): an
 * f16 / bf16 custom add bit for bit op sum's, a Welford state against a float64 two-pass
 * reference, a matrix state (non-commutative, integer) exact in rank order, and the paths that
 * refuse a struct state saying why.  Without a GPU it prints "SKIP: no GPU" and passes. */
#include "custom_ir.h"
#include "redjit_check.h"
#include "redjit_treduce.h"
#include "rjtest.h"

#include <math.h>

static rj_ctx *ctx;
static int gpu, ndev, cases_run, split_cases, ring_cases, ring_refused, no_peer, no_split;
static void setup(void) {
  ctx = rj_ctx_new();
  gpu = rjt_have_gpu(ctx);
  if (gpu) ck_assert_int_eq(rj_device_count(ctx, &ndev), RJ_OK);
}
static void teardown(void) {
  rj_ctx_free(ctx);
}

/* One check on a path; RJ_EUNSUPPORTED is returned (not failed) when `may_refuse`. */
static rj_status check_path(const char *json, rj_treduce_path path, uint64_t seed, int nans,
                            int expect_checked, int may_refuse, rj_treduce_result *tr) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  rj_check_opts o;
  rj_check_opts_init(&o);
  o.seed = seed;
  o.nan_count = nans;
  rj_check_result res = {.struct_size = sizeof(rj_check_result)};
  rj_status s = rj_treduce_check(ctx, &r, &o, path, &res, tr);
  if (s == RJ_EUNSUPPORTED && may_refuse) return s;
  ck_assert_msg(s == RJ_OK, "run failed (%s): %s\n  path %d, request: %s", rj_status_name(s),
                rj_errmsg(ctx), path, json);
  ck_assert_msg(res.ok,
                "wrong result (path %s, %lld wrong of %lld, %lld outside written): %s\n"
                "  seed %llu, request: %s",
                tr->path, (long long)res.wrong, (long long)res.checked,
                (long long)res.outside_written, res.first_error, (unsigned long long)seed, json);
  if (expect_checked >= 0)
    ck_assert_int_eq(res.checked, expect_checked);
  else
    ck_assert_int_gt(res.checked, 0);
  if (path == RJ_TREDUCE_STAGED && r.u.treduce.ranks > 1) {
    ck_assert_str_eq(tr->path, "staged");
    ck_assert_int_eq(tr->staged_ranks, r.u.treduce.ranks - 1);
  }
  if (path == RJ_TREDUCE_AUTO)
    ck_assert_int_eq(tr->staged_ranks + tr->direct_ranks, r.u.treduce.ranks);
  cases_run++;
  return RJ_OK;
}

static void run_path(const char *json, rj_treduce_path path, uint64_t seed, int nans,
                     int expect_checked) {
  rj_treduce_result tr = {.struct_size = sizeof(rj_treduce_result)};
  check_path(json, path, seed, nans, expect_checked, 0, &tr);
}

/* The plan rj_treduce_check's device map (rank r on GPU r mod the count) gets. */
static void plan_for(const rj_request *r, rj_treduce_path path, rj_treduce_plan *p) {
  int dev[1100];
  for (int k = 0; k < r->u.treduce.ranks; k++)
    dev[k] = k % ndev;
  rj_treduce_plan_init(p);
  ck_assert_int_eq(rj_treduce_plan_make(ctx, r, dev, path, p), RJ_OK);
}

/* Whether a treduce request has strides that are not row-major and gap-free (dims of extent 1
 * aside), for the source (dst = 0) or the destination. */
static int strided(const rj_treduce *t, int dst) {
  if (!t->has_strides) return 0;
  int64_t m = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    if (t->shape[d] > 1 && (dst ? t->dst_strides : t->strides)[d] != m) return 1;
    m *= t->shape[d];
  }
  return 0;
}

/* The ring path forced on the same inputs as `peer`: it refuses exactly what the plan says it
 * can't run — a sum of f16 / bf16, strided views (re-derived here), more than 4 runs of ranks on
 * a GPU — and otherwise passes the oracle with the peer path's bits, in the plan's hops and
 * chunks. */
static void run_ring(const char *json, const rj_request *r, const rj_treduce_plan *p, uint64_t seed,
                     int nans, int expect_checked, const rj_treduce_result *peer) {
  const rj_treduce *t = &r->u.treduce;
  int64_t numel = 1;
  for (int d = 0; d < t->ndim; d++)
    numel *= t->shape[d];
  int f16sum = (t->op == RJ_OP_SUM || t->op == RJ_OP_MEAN || t->op == RJ_OP_PROD) &&
               (t->dtype == RJ_F16 || t->dtype == RJ_BF16);
  int views = numel > 0 && (strided(t, 0) || strided(t, 1));
  if (f16sum || views) ck_assert_msg(p->ring_load < 0, "the plan takes the ring: %s", json);
  rj_treduce_result ring = {.struct_size = sizeof(rj_treduce_result)};
  rj_status s = check_path(json, RJ_TREDUCE_RING, seed, nans, expect_checked, 1, &ring);
  if (p->ring_load < 0) {
    ck_assert_int_eq(s, RJ_EUNSUPPORTED);
    ck_assert_msg(strstr(rj_errmsg(ctx), p->ring_why), "refusal '%s', plan '%s'", rj_errmsg(ctx),
                  p->ring_why);
    ck_assert(strstr(rj_errmsg(ctx), f16sum  ? "would round"
                                     : views ? "strided view"
                                             : "runs of consecutive ranks"));
    ring_refused++;
    return;
  }
  ck_assert_msg(s == RJ_OK, "ring refused: %s (%s)", rj_errmsg(ctx), json);
  ck_assert_str_eq(ring.path, "ring");
  ck_assert_int_eq(ring.hops, p->hops);
  ck_assert_int_eq(ring.slices, p->chunks);
  ck_assert_int_eq(ring.gpus, t->ranks < ndev ? t->ranks : ndev);
  ck_assert_msg(ring.dst_digest == peer->dst_digest,
                "ring / peer differ: digests %016llx %016llx (seed %llu): %s",
                (unsigned long long)ring.dst_digest, (unsigned long long)peer->dst_digest,
                (unsigned long long)seed, json);
  ring_cases++;
}

/* The split path forced — the link model's slices and equal slices — and the peer path forced on
 * the same inputs: all pass the oracle, with the same bits.  Also how many slices and GPUs took
 * part: with equal slices one per GPU of the ranks (3 when they share one GPU), exactly that many
 * when a dim cuts evenly enough; with the model's slices the plan's non-empty ones, and the root's
 * share the plan's (rj_treduce_plan_make). */
static void run_split(const char *json, uint64_t seed, int nans, int expect_checked) {
  rj_treduce_result peer = {.struct_size = sizeof(rj_treduce_result)},
                    split = {.struct_size = sizeof(rj_treduce_result)},
                    equal = {.struct_size = sizeof(rj_treduce_result)};
  if (check_path(json, RJ_TREDUCE_PEER, seed, nans, expect_checked, 1, &peer)) {
    if (!no_peer++)
      fprintf(stderr, "gpu_treduce: no peer access between the GPUs: %s\n", rj_errmsg(ctx));
    return;
  }
  if (check_path(json, RJ_TREDUCE_SPLIT_EQUAL, seed, nans, expect_checked, 1, &equal)) {
    ck_assert_msg(strstr(rj_errmsg(ctx), "cuDeviceCanAccessPeer"), "split refused: %s",
                  rj_errmsg(ctx));
    if (!no_split++) fprintf(stderr, "gpu_treduce: split refused: %s\n", rj_errmsg(ctx));
    return;
  }
  check_path(json, RJ_TREDUCE_SPLIT, seed, nans, expect_checked, 0, &split);
  rj_request r;
  rjt_parse(ctx, json, &r);
  const rj_treduce *t = &r.u.treduce;
  int distinct = t->ranks < ndev ? t->ranks : ndev, want = distinct >= 2 ? distinct : 3;
  int64_t numel = 1, longest = 0;
  for (int d = 0; d < t->ndim; d++) {
    numel *= t->shape[d];
    if (t->shape[d] > longest) longest = t->shape[d];
  }
  ck_assert_str_eq(split.path, "split");
  ck_assert_str_eq(equal.path, "split");
  ck_assert_str_eq(peer.path, "peer");
  rj_treduce_plan p;
  plan_for(&r, RJ_TREDUCE_SPLIT, &p);
  if (numel == 0) {
    ck_assert_int_eq(split.slices, 0);
    ck_assert_int_eq(equal.slices, 0);
  } else {
    ck_assert_msg(equal.slices >= 1 && equal.slices <= want, "%d slices (want %d): %s",
                  equal.slices, want, json);
    /* a dim that cuts into `want` slices within 12.5% of even exists: the cut takes `want` */
    if (want <= 8 && (longest % want == 0 || longest >= 8 * want))
      ck_assert_int_eq(equal.slices, want);
    ck_assert_int_eq(equal.gpus, distinct >= 2 ? equal.slices : 1);
    int nonempty = 0;
    for (int i = 0; i < p.slices; i++)
      nonempty += p.slice[i].len > 0;
    ck_assert_int_eq(split.slices, nonempty);
    ck_assert_int_eq(split.gpus, distinct >= 2 ? nonempty : 1);
    double share = p.gpus >= 2 ? p.slice[0].share : 1; /* one GPU: it reduces everything */
    ck_assert_msg(split.root_share == share, "root share %g, plan %g: %s", split.root_share, share,
                  json);
  }
  ck_assert_msg(split.dst_digest == peer.dst_digest && equal.dst_digest == peer.dst_digest,
                "split / split-equal / peer differ: digests %016llx %016llx %016llx (seed %llu): "
                "%s",
                (unsigned long long)split.dst_digest, (unsigned long long)equal.dst_digest,
                (unsigned long long)peer.dst_digest, (unsigned long long)seed, json);
  split_cases++;
  run_ring(json, &r, &p, seed, nans, expect_checked, &peer);
}

/* auto on every case; staged on some; split (vs peer) on some */
static void run3(const char *json, int staged_too, int split_too) {
  run_path(json, RJ_TREDUCE_AUTO, 7, 0, -1);
  if (staged_too) run_path(json, RJ_TREDUCE_STAGED, 8, 0, -1);
  if (split_too) run_split(json, 9, 0, -1);
}

static void run(const char *json, int staged_too) {
  run3(json, staged_too, 1);
}

/* The reference matrix: 2, 4, 8 ranks; root 0 and the last; f32 and i32; 1x256 .. 512x32 with
 * row tiles; ping-pong on and off. */
static const char *const shapes[][2] = {
    {"[1,256]", "[1,256]"},  {"[1,4096]", "[1,4096]"}, {"[128,32]", "[16,32]"},
    {"[256,64]", "[32,64]"}, {"[512,32]", "[64,32]"},
};

START_TEST(reference_matrix) {
  if (!gpu) return;
  static const int ranks[] = {2, 4, 8};
  static const char *const dts[] = {"f32", "i32"};
  for (int n = 0; n < 3; n++)
    for (int root = 0; root < 2; root++)
      for (int d = 0; d < 2; d++)
        for (int pp = 0; pp < 2; pp++) {
          int R = ranks[n];
          run(rjt_fmt(
                  "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":%d,"
                  "\"shape\":%s,\"tile\":%s,\"pingpong\":%s}",
                  dts[d], R, root ? R - 1 : 0, shapes[_i][0], shapes[_i][1], pp ? "true" : "false"),
              (n + root + pp) % 2);
        }
}
END_TEST

START_TEST(ops_and_roots) {
  if (!gpu) return;
  static const char *const ops[] = {"sum", "max", "min"};
  static const char *const dts[] = {"f32", "i32", "u32", "i64", "u64", "f64"};
  for (int o = 0; o < 3; o++)
    for (int d = 0; d < 6; d++)
      run(rjt_fmt("{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":4,\"root\":2,"
                  "\"shape\":[128,32],\"tile\":[16,32],\"pingpong\":%s}",
                  ops[o], dts[d], (o + d) % 2 ? "true" : "false"),
          d < 2);
}
END_TEST

/* Partial final chunks in rows, cols and both; f16 / bf16 / f64; 3- to 5-D; 1-D. */
START_TEST(partial_chunks_and_dims) {
  if (!gpu) return;
  static const char *const cases[][2] = {
      {"[100,32]", "[16,32]"},  {"[64,37]", "[64,16]"},    {"[100,37]", "[16,32]"},
      {"[7,5]", "[3,2]"},       {"[1000]", "[1,300]"},     {"[3,50,70]", "[16,32]"},
      {"[2,3,17,19]", "[4,8]"}, {"[2,2,3,9,33]", "[5,7]"}, {"[5,1,1]", "[1,1]"},
      {"[33,1025]", "[0,0]"},   {"[2000,3]", "[999,2]"},
  };
  static const char *const dts[] = {"f16", "bf16", "f32", "f64", "i32"};
  static const char *const ops[] = {"sum", "max", "min"};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int d = 0; d < 5; d++) {
      const char *tile = strcmp(cases[c][1], "[0,0]") ? rjt_fmt(",\"tile\":%s", cases[c][1]) : "";
      char t[64];
      snprintf(t, sizeof t, "%s", tile);
      run(rjt_fmt("{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":%d,"
                  "\"shape\":%s%s,\"pingpong\":%s}",
                  ops[(c + d) % 3], dts[d], 2 + (int)(c % 3) * 3, (int)(c % 2), cases[c][0], t,
                  (c + d) % 2 ? "true" : "false"),
          (c + d) % 3 == 0);
    }
}
END_TEST

/* Empty rows (the reference's EmptyRows case): nothing is read, the destination stays poisoned. */
START_TEST(empty_rows) {
  if (!gpu) return;
  for (int p = 0; p < 3; p++)
    run_path(
        "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[1,1,1,0,256],"
        "\"tile\":[1,256]}",
        (rj_treduce_path)(p == 1 ? RJ_TREDUCE_STAGED : RJ_TREDUCE_AUTO), 3, 0, 0);
  run_split(
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[1,1,1,0,256],"
      "\"tile\":[1,256]}",
      3, 0, 0);
  run_path(
      "{\"kind\":\"treduce\",\"op\":\"max\",\"dtype\":\"i32\",\"ranks\":4,\"root\":1,\"shape\":[4,0]}",
      RJ_TREDUCE_AUTO, 3, 0, 0);
}
END_TEST

/* One rank (a copy), strides (gapped sources, transposed destination), accum, NaN policies. */
START_TEST(extensions) {
  if (!gpu) return;
  run("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":1,\"shape\":[64,33],\"tile\":[8,8]}",
      0);
  run("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":3,\"root\":1,\"shape\":[20,30],"
      "\"strides\":[40,1],\"dst_strides\":[1,20],\"tile\":[8,16],\"pingpong\":true}",
      1);
  run("{\"kind\":\"treduce\",\"op\":\"max\",\"dtype\":\"i32\",\"ranks\":5,\"root\":4,\"shape\":[3,20,30],"
      "\"strides\":[1000,45,2],\"tile\":[7,9],\"accum\":true}",
      1);
  run("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"bf16\",\"ranks\":3,\"shape\":[40,50],\"accum\":true,"
      "\"tile\":[16,16],\"pingpong\":true}",
      1);
  static const char *const ops[] = {"sum", "max", "min"};
  for (int o = 0; o < 3; o++)
    for (int nan = 0; nan < 2; nan++)
      for (int s = 0; s < 2; s++)
        run_path(
            rjt_fmt("{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"f32\",\"ranks\":4,\"root\":1,"
                    "\"shape\":[64,64],\"tile\":[16,64],\"nan\":\"%s\",\"pingpong\":true}",
                    ops[o], nan ? "ignore" : "propagate"),
            s ? RJ_TREDUCE_STAGED : RJ_TREDUCE_AUTO, 50 + (uint64_t)s, 20, -1);
  for (int o = 0; o < 3; o++) /* NaNs through the split path: the same bits as the peer path */
    run_split(
        rjt_fmt("{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"f32\",\"ranks\":4,\"root\":1,"
                "\"shape\":[64,64],\"tile\":[16,64],\"nan\":\"%s\",\"pingpong\":true}",
                ops[o], o % 2 ? "ignore" : "propagate"),
        60, 20, -1);
  /* many ranks: more than one kernel's 128 */
  run("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"i32\",\"ranks\":130,\"root\":129,\"shape\":[3,70],"
      "\"tile\":[2,64]}",
      0);
}
END_TEST

/* The split path on its own cuts: outer dims, whole row tiles, single rows (slice boundaries inside
 * chunks: partial chunks), whole col tiles and single cols; strided sources with a transposed or
 * gapped destination; accum (the destination's old value read from the root by every GPU); all
 * dtypes; root != 0; more than 128 ranks (two launches per slice).  Every case vs the oracle and
 * bit for bit vs the peer path. */
START_TEST(split_cuts) {
  if (!gpu) return;
  static const char *const cases[] = {
      /* outer dims: [3,50,70] cut along dim 0 (3 slices) or rows (2) */
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":3,\"root\":2,\"shape\":[3,50,70],\"tile\":[16,32]",
      "\"op\":\"max\",\"dtype\":\"f16\",\"ranks\":4,\"root\":1,\"shape\":[2,2,3,9,33],\"tile\":[5,7],"
      "\"pingpong\":true",
      "\"op\":\"min\",\"dtype\":\"bf16\",\"ranks\":2,\"root\":1,\"shape\":[5,4,3,17],\"tile\":[2,16]",
      /* whole row tiles, single rows */
      "\"op\":\"sum\",\"dtype\":\"f64\",\"ranks\":5,\"root\":4,\"shape\":[512,32],\"tile\":[64,32]",
      "\"op\":\"sum\",\"dtype\":\"i64\",\"ranks\":3,\"root\":0,\"shape\":[100,37],\"tile\":[16,32],"
      "\"pingpong\":true",
      "\"op\":\"max\",\"dtype\":\"u32\",\"ranks\":2,\"root\":1,\"shape\":[2000,3],\"tile\":[999,2]",
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":2,\"shape\":[33,1025]",
      /* cols: whole col tiles, single cols (1-D) */
      "\"op\":\"sum\",\"dtype\":\"f16\",\"ranks\":3,\"root\":1,\"shape\":[1,4096],\"tile\":[1,512]",
      "\"op\":\"min\",\"dtype\":\"i32\",\"ranks\":2,\"root\":1,\"shape\":[1000],\"tile\":[1,300]",
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[7]",
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":3,\"shape\":[2,2]",
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"shape\":[1,1,1]",
      /* strides: gapped sources, transposed destination; a strided cut along cols */
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":3,\"root\":1,\"shape\":[20,30],\"strides\":[40,1],"
      "\"dst_strides\":[1,20],\"tile\":[8,16],\"pingpong\":true",
      "\"op\":\"max\",\"dtype\":\"i32\",\"ranks\":5,\"root\":4,\"shape\":[3,20,30],"
      "\"strides\":[1000,45,2],\"tile\":[7,9],\"accum\":true",
      "\"op\":\"sum\",\"dtype\":\"bf16\",\"ranks\":4,\"root\":3,\"shape\":[2,1,45],"
      "\"strides\":[200,100,3],\"dst_strides\":[1,90,2],\"tile\":[1,8],\"accum\":true",
      "\"op\":\"min\",\"dtype\":\"f64\",\"ranks\":2,\"root\":1,\"shape\":[6,5,4,3,2],"
      "\"strides\":[1,6,30,120,360],\"dst_strides\":[120,24,6,2,1],\"tile\":[2,2]",
      /* accum, big enough for many CTAs per slice */
      "\"op\":\"sum\",\"dtype\":\"bf16\",\"ranks\":3,\"root\":1,\"shape\":[3,700,513],\"tile\":[32,128],"
      "\"accum\":true,\"pingpong\":true",
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":3,\"shape\":[2048,1024],\"tile\":[64,1024],"
      "\"pingpong\":true",
      /* more than 128 ranks: two launches per slice, the second accumulating */
      "\"op\":\"sum\",\"dtype\":\"f16\",\"ranks\":131,\"root\":130,\"shape\":[5,70],\"tile\":[2,64]",
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    run_split(rjt_fmt("{\"kind\":\"treduce\",%s}", cases[c]), 100 + c, 0, -1);
}
END_TEST

/* The ring path over many steps (128 KiB each: every block's inbox slots reused many times, a
 * partial last step, odd lengths that leave elements after the last 16-byte access), every op,
 * accum (hop 0 folds the destination's old value first), root != 0, f16 max (exact through the
 * hops), 400 ranks (hops of at most 127 ranks: 4 hops on one GPU), hops of more than 16 sources
 * (their kernels read the sources from a table, 8 at a time: here on one GPU hops of 34, 34 and
 * 32 f32 sources, of 18 (the destination's old values first), 17 and 17 i64 under accum, 3 of
 * 127 bf16, and 3 of 18 f32 with 3 elements after the last 16-byte access — last batches of 2,
 * 2, 1, 7 and 2 sources; f32 sums are order-sensitive, so a source folded out of order changes
 * the ring's bits or the peer path's; the peer kernel, on every case, reads more than 16 ranks
 * from a table too: 100, 51 with ping-pong and accum, 381, 54 with ping-pong, and 400 in launches
 * of at most 128), and
 * refusals: a bf16 sum, strided sources.  Each through run_split: the oracle and the peer path's
 * bits.  (On several GPUs, ranks r mod count make runs of one rank: the many-rank cases are then
 * refusals, "more than 8 runs", as the plan says.) */
START_TEST(ring_chunks) {
  if (!gpu) return;
  static const char *const cases[] = {
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":2,\"shape\":[700,1500],"
      "\"tile\":[64,1500],\"pingpong\":true",
      "\"op\":\"sum\",\"dtype\":\"i32\",\"ranks\":3,\"root\":0,\"shape\":[3,1000,1001],"
      "\"tile\":[16,512]",
      "\"op\":\"max\",\"dtype\":\"f64\",\"ranks\":5,\"root\":4,\"shape\":[1100,1000],"
      "\"accum\":true,\"pingpong\":true",
      "\"op\":\"min\",\"dtype\":\"u64\",\"ranks\":2,\"root\":1,\"shape\":[2100001]",
      "\"op\":\"max\",\"dtype\":\"f16\",\"ranks\":4,\"root\":1,\"shape\":[3000,1000],"
      "\"tile\":[8,1000]",
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":6,\"root\":5,\"shape\":[1,2,3,4,100001],"
      "\"accum\":true",
      "\"op\":\"sum\",\"dtype\":\"i32\",\"ranks\":400,\"root\":7,\"shape\":[3,70],"
      "\"tile\":[2,64]",
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":100,\"root\":3,\"shape\":[300,1001]",
      "\"op\":\"max\",\"dtype\":\"i64\",\"ranks\":51,\"root\":50,\"shape\":[200001],"
      "\"accum\":true,\"pingpong\":true",
      "\"op\":\"min\",\"dtype\":\"bf16\",\"ranks\":381,\"root\":1,\"shape\":[999,131]",
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":54,\"root\":20,\"shape\":[1001,999],"
      "\"pingpong\":true",
      "\"op\":\"sum\",\"dtype\":\"bf16\",\"ranks\":3,\"shape\":[300,1000]",
      "\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":3,\"shape\":[300,1000],"
      "\"strides\":[1001,1]",
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    run_split(rjt_fmt("{\"kind\":\"treduce\",%s}", cases[c]), 200 + c, c % 3 == 0 ? 10 : 0, -1);
}
END_TEST

/* The automatic choice is the plan's (rj_treduce_plan_make, given peer access).  By the link
 * model alone (no path table): split where it saves >= 8 MiB of the busiest GPU's link time (here
 * 4 ranks of 32 MiB: on >= 2 GPUs), peer otherwise (one GPU; 1 MiB per rank anywhere).  With the
 * tables auto reads (the built-in one, or a calibrated one): the call takes the plan's path. */
static void auto_takes_plan(const char *json) {
  rj_treduce_result tr = {.struct_size = sizeof(rj_treduce_result)};
  rj_request r;
  rj_treduce_plan p;
  rjt_parse(ctx, json, &r);
  plan_for(&r, RJ_TREDUCE_AUTO, &p);
  check_path(json, RJ_TREDUCE_AUTO, 5, 0, -1, 0, &tr);
  const char *want = p.path == RJ_TREDUCE_RING                                        ? "ring"
                     : p.path == RJ_TREDUCE_SPLIT || p.path == RJ_TREDUCE_SPLIT_EQUAL ? "split"
                                                                                      : NULL;
  if (want && !no_peer && !no_split)
    ck_assert_msg(strcmp(tr.path, want) == 0, "auto took %s, the plan %d", tr.path, p.path);
  else
    ck_assert_msg(strcmp(tr.path, "split") && strcmp(tr.path, "ring"), "auto took %s, the plan %d",
                  tr.path, p.path);
}

START_TEST(auto_choice) {
  if (!gpu) return;
  auto_takes_plan("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,"
                  "\"root\":1,\"shape\":[8192,1024],\"tile\":[64,1024]}");
  auto_takes_plan("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,"
                  "\"root\":1,\"shape\":[256,1024],\"tile\":[64,1024]}");
  ck_assert_int_eq(rj_treduce_table_load(ctx, ""), RJ_OK); /* the link model alone */
  const char *big = "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":1,"
                    "\"shape\":[8192,1024],\"tile\":[64,1024]}"; /* 32 MiB per rank */
  const char *small =
      "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":1,"
      "\"shape\":[256,1024],\"tile\":[64,1024]}";
  rj_treduce_result tr = {.struct_size = sizeof(rj_treduce_result)};
  rj_request r;
  rj_treduce_plan p;
  rjt_parse(ctx, big, &r);
  plan_for(&r, RJ_TREDUCE_AUTO, &p);
  ck_assert_int_eq(p.path, ndev >= 2 ? RJ_TREDUCE_SPLIT : RJ_TREDUCE_PEER); /* never the ring */
  check_path(big, RJ_TREDUCE_AUTO, 5, 0, -1, 0, &tr);
  if (p.path == RJ_TREDUCE_SPLIT && !no_peer && !no_split) {
    ck_assert_str_eq(tr.path, "split");
    ck_assert(tr.root_share == p.slice[0].share);
  } else {
    ck_assert_msg(strcmp(tr.path, "split") && strcmp(tr.path, "ring"), "auto %s on %d GPU(s)",
                  tr.path, ndev);
  }
  check_path(small, RJ_TREDUCE_AUTO, 5, 0, -1, 0, &tr);
  ck_assert_msg(strcmp(tr.path, "split") && strcmp(tr.path, "ring"), "auto %s at 1 MiB per rank",
                tr.path);
  ck_assert_int_eq(tr.slices, 1);
  ck_assert_int_eq(tr.gpus, 1);
  ck_assert(tr.root_share == 1);
}
END_TEST

/* rj_treduce_run on the caller's own buffers (rj_device_alloc, rank r on GPU r mod the count):
 * i32 sums (exact) and f32 max over 5 ranks, root 3, on every path, three calls each (the
 * context's streams, events and staging buffers are reused), then a staged call whose buffers
 * exceed what the context keeps (> 64 MiB: allocated and freed by the call) and a small one
 * after it.  The destination is compared with the host's result element by element; every source
 * is read back unchanged; the reported times are positive. */
/* skew: every buffer starts that many elements past a 256-byte boundary (1: no 16-byte access) */
static void own_buffers(int64_t rows, int64_t cols, rj_dtype dt, rj_op op, int ranks, int root,
                        const rj_treduce_path *paths, int npaths, int calls, int skew) {
  int64_t n = rows * cols;
  size_t bytes = (size_t)n * 4;
  rj_treduce_buf *b = calloc((size_t)ranks, sizeof *b);
  uint32_t **host = calloc((size_t)ranks, sizeof *host);
  uint32_t *want = malloc(bytes), *got = malloc(bytes);
  ck_assert(b && host && want && got);
  rj_treduce_group g;
  rjt_treduce_group(&g, b, ranks, root, rows, cols, ndev, op, dt);
  uint64_t x = 12345 + (uint64_t)n;
  for (int r = 0; r < ranks; r++) {
    host[r] = malloc(bytes);
    ck_assert_ptr_nonnull(host[r]);
    for (int64_t i = 0; i < n; i++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      int32_t v = (int32_t)(x >> 40) % 2001 - 1000;
      if (dt == RJ_F32) {
        float f = (float)v / 7.0f;
        memcpy(&host[r][i], &f, 4);
      } else {
        host[r][i] = (uint32_t)v;
      }
    }
    ck_assert_int_eq(rj_device_alloc(ctx, b[r].device, bytes + 16, &b[r].ptr), RJ_OK);
    b[r].ptr += (uint64_t)skew * 4;
    ck_assert_int_eq(rj_memcpy_htod(ctx, b[r].device, b[r].ptr, host[r], bytes), RJ_OK);
  }
  for (int64_t i = 0; i < n; i++) { /* the host's result: exact for both */
    if (dt == RJ_F32) {
      float m = -INFINITY, f;
      for (int r = 0; r < ranks; r++) {
        memcpy(&f, &host[r][i], 4);
        m = f > m ? f : m;
      }
      memcpy(&want[i], &m, 4);
    } else {
      uint32_t sum = 0;
      for (int r = 0; r < ranks; r++)
        sum += host[r][i];
      want[i] = sum;
    }
  }
  ck_assert_int_eq(rj_device_alloc(ctx, g.dst.device, bytes + 16, &g.dst.ptr), RJ_OK);
  g.dst.ptr += (uint64_t)skew * 4;
  for (int pi = 0; pi < npaths; pi++)
    for (int c = 0; c < calls; c++) {
      memset(got, 0xA5, bytes);
      ck_assert_int_eq(rj_memcpy_htod(ctx, g.dst.device, g.dst.ptr, got, bytes), RJ_OK);
      g.path = paths[pi];
      rj_treduce_result res = {.struct_size = sizeof(rj_treduce_result)};
      rj_status s = rj_treduce_run(ctx, &g, NULL, &res);
      if (s == RJ_EUNSUPPORTED && (paths[pi] == RJ_TREDUCE_PEER || paths[pi] == RJ_TREDUCE_SPLIT ||
                                   paths[pi] == RJ_TREDUCE_SPLIT_EQUAL))
        break; /* no peer access between these GPUs: said by the other tests */
      ck_assert_msg(s == RJ_OK, "rj_treduce_run, path %d, call %d: %s", paths[pi], c,
                    rj_errmsg(ctx));
      ck_assert_msg(res.ms > 0 && res.call_ms >= res.ms * 0.5, "ms %g, call_ms %g", res.ms,
                    res.call_ms);
      ck_assert_int_eq(rj_memcpy_dtoh(ctx, g.dst.device, got, g.dst.ptr, bytes), RJ_OK);
      for (int64_t i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "path %s (%d), call %d: element %lld is %08x, want %08x",
                      res.path, paths[pi], c, (long long)i, got[i], want[i]);
      cases_run++;
    }
  for (int r = 0; r < ranks; r++) { /* sources unchanged */
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, b[r].device, got, b[r].ptr, bytes), RJ_OK);
    ck_assert_msg(memcmp(got, host[r], bytes) == 0, "rank %d's source changed", r);
    ck_assert_int_eq(rj_device_free(ctx, b[r].device, b[r].ptr - (uint64_t)skew * 4), RJ_OK);
    free(host[r]);
  }
  ck_assert_int_eq(rj_device_free(ctx, g.dst.device, g.dst.ptr - (uint64_t)skew * 4), RJ_OK);
  free(b);
  free(host);
  free(want);
  free(got);
}

/* A hop kernel whose neighbour never runs gives up after its timeout instead of hanging: the
 * ring's hop kernel (forced variant "treduce_ring") launched alone with an inbox whose ready
 * counters nobody raises, a 2 ms timeout.  Every block stores base + 1 into the status word and
 * returns without touching the destination; with the counters raised it folds. */
START_TEST(ring_timeout) {
  if (!gpu) return;
  rj_request r;
  rjt_parse(ctx,
            "{\"kind\":\"treduce\",\"variant\":\"treduce_ring\",\"op\":\"sum\","
            "\"dtype\":\"i32\",\"ranks\":1,\"shape\":[1],\"tile\":[1,4]}",
            &r);
  rj_kernel *k = NULL;
  ck_assert_msg(rj_compile(ctx, &r, NULL, &k) == RJ_OK, "%s", rj_errmsg(ctx));
  ck_assert_str_eq(rj_kernel_variant(k), "treduce_ring");
  const int64_t n = 100000, step = (128 << 10) / 4;
  const unsigned B = 2; /* 4 steps: block 0 takes steps 0 and 2, block 1 steps 1 and 3 */
  uint64_t dst, in, flags, status, src;
  size_t inbox = (size_t)B * 4 * (size_t)step * 4;
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)n * 4, &dst), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, (size_t)n * 4, &src), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, inbox, &in), RJ_OK);
  ck_assert_int_eq(rj_device_alloc(ctx, 0, 2048 + 8, &flags), RJ_OK);
  status = flags + 2048;
  int32_t *h = malloc(inbox), *got = malloc((size_t)n * 4);
  uint64_t zero[257] = {0}, st = 0;
  ck_assert(h && got);
  for (int64_t i = 0; i < (int64_t)(inbox / 4); i++)
    h[i] = (int32_t)(i % 1000) - 500;
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, in, h, inbox), RJ_OK);
  ck_assert_int_eq(rj_memcpy_htod(ctx, 0, src, h, (size_t)n * 4), RJ_OK);
  for (int round = 0; round < 2; round++) {
    uint64_t base = (uint64_t)(round + 7) << 32, next = 0, nr = 0, pc = flags + 1024;
    int64_t numel = n, timeout = 2000000;
    if (round) /* the counters raised past every step: block b's slot i holds step b + i B */
      for (int b = 0; b < 2; b++)
        zero[b] = base + 2;
    memset(got, 0x5A, (size_t)n * 4);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, dst, got, (size_t)n * 4), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, flags, zero, sizeof zero), RJ_OK);
    void *args[11] = {&dst, &in, &next, &flags, &nr, &pc, &status, &numel, &base, &timeout, &src};
    unsigned grid[3] = {B, 1, 1}, block[3];
    rj_kernel_dims(k, NULL, block, NULL);
    double ms = 0;
    ck_assert_msg(rj_kernel_launch(ctx, k, 0, grid, block, 0, args, &ms) == RJ_OK, "%s",
                  rj_errmsg(ctx));
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, &st, status, 8), RJ_OK);
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, got, dst, (size_t)n * 4), RJ_OK);
    if (!round) {
      ck_assert_msg(st == base + 1 && ms >= 1.5, "status %llx (want %llx), %.2f ms",
                    (unsigned long long)st, (unsigned long long)(base + 1), ms);
      for (int64_t i = 0; i < n; i++)
        ck_assert_int_eq(got[i], 0x5A5A5A5A);
      continue;
    }
    ck_assert_msg(st == 0, "status %llx: a block gave up", (unsigned long long)st);
    for (int64_t i = 0; i < n; i++) { /* step c = b + i B sits in block b's slot i */
      int64_t c = i / step, blk = c % B, slot = c / B;
      int64_t at = (blk * 4 + slot) * step + i % step;
      ck_assert_int_eq(got[i], h[at] + h[i]);
    }
  }
  free(h);
  free(got);
  ck_assert_int_eq(rj_device_free(ctx, 0, dst), RJ_OK);
  ck_assert_int_eq(rj_device_free(ctx, 0, src), RJ_OK);
  ck_assert_int_eq(rj_device_free(ctx, 0, in), RJ_OK);
  ck_assert_int_eq(rj_device_free(ctx, 0, flags), RJ_OK);
}
END_TEST

START_TEST(caller_buffers) {
  if (!gpu) return;
  static const rj_treduce_path all[] = {RJ_TREDUCE_AUTO,  RJ_TREDUCE_PEER,        RJ_TREDUCE_STAGED,
                                        RJ_TREDUCE_SPLIT, RJ_TREDUCE_SPLIT_EQUAL, RJ_TREDUCE_RING};
  own_buffers(300, 257, RJ_I32, RJ_OP_SUM, 5, 3, all, 6, 3, 0);
  own_buffers(129, 1000, RJ_F32, RJ_OP_MAX, 5, 3, all, 6, 3, 0);
  own_buffers(200, 300, RJ_I32, RJ_OP_SUM, 4, 0, all, 6, 2, 0); /* the same ctx, another root */
  static const rj_treduce_path ring[] = {RJ_TREDUCE_RING};
  own_buffers(2100, 1024, RJ_I32, RJ_OP_SUM, 4, 1, ring, 1, 3, 0); /* 8.2 MiB: 66 steps */
  /* not 16-byte aligned: the ring's element-by-element kernels, one odd element in the last step */
  own_buffers(2100, 1023, RJ_F32, RJ_OP_MAX, 4, 1, ring, 1, 2, 1);
  own_buffers(333, 1001, RJ_I32, RJ_OP_SUM, 3, 2, all, 6, 1, 1);
  /* 60 ranks, not 16-byte aligned: the peer kernel's and (one GPU: hops of 20) the ring's tables
   * with one element per access (on several GPUs the ring refuses 60 runs of one rank) */
  own_buffers(700, 1001, RJ_I32, RJ_OP_SUM, 60, 7, all, ndev == 1 ? 6 : 5, 1, 1);
  static const rj_treduce_path staged[] = {RJ_TREDUCE_STAGED};
  own_buffers(17000, 1024, RJ_I32, RJ_OP_SUM, 2, 1, staged, 1, 2, 0); /* 66.4 MiB: not kept */
  own_buffers(64, 64, RJ_I32, RJ_OP_SUM, 3, 0, staged, 1, 2, 0);
}
END_TEST

/* rj_check (what `redjit run` calls) on a treduce request. */
START_TEST(through_rj_check) {
  if (!gpu) return;
  rjt_run_ok(ctx,
             "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":1,"
             "\"shape\":[512,32],\"tile\":[64,32],\"pingpong\":true}",
             11, 0);
  cases_run++;
}
END_TEST

/* ---- ops mean and custom (a case of their own: CK_RUN_CASE=treduce_ops) */

/* mean on every path against the float64 oracle (sum / ranks): f32, f64, f16, bf16; 1 to 17
 * ranks, 130 (two launches, the last dividing); tails in rows and cols; split, split-equal and
 * the ring bit for bit the peer path's; staged for f32 / f64; runtime-size kernels among them. */
START_TEST(mean_paths) {
  if (!gpu) return;
  static const char *const dts[] = {"f32", "f64", "f16", "bf16"};
  static const int ranks[] = {1, 2, 3, 5, 8, 17};
  static const char *const shapes[][2] = {
      {"[37,70]", "[16,64]"}, {"[1000]", "[1,300]"}, {"[3,50,70]", "[16,32]"}};
  for (int d = 0; d < 4; d++)
    for (int n = 0; n < 6; n++) {
      int R = ranks[n], root = (d + n) % R, wide = d < 2;
      const char *const *sh = shapes[(d + n) % 3];
      run3(rjt_fmt("{\"kind\":\"treduce\",\"op\":\"mean\",\"dtype\":\"%s\",\"ranks\":%d,"
                   "\"root\":%d,\"shape\":%s,\"tile\":%s,\"pingpong\":%s%s}",
                   dts[d], R, root, sh[0], sh[1], n % 2 ? "true" : "false",
                   n % 3 == 1 ? ",\"dynamic\":true" : ""),
           wide && R > 1, 1);
    }
  for (int d = 0; d < 2; d++) { /* 130 ranks: launches of 128 and 2, the second dividing */
    const char *json = rjt_fmt("{\"kind\":\"treduce\",\"op\":\"mean\",\"dtype\":\"%s\","
                               "\"ranks\":130,\"root\":77,\"shape\":[33,65],\"tile\":[8,64]}",
                               dts[d]);
    run_path(json, RJ_TREDUCE_AUTO, 21, 0, 33 * 65);
    run_path(json, RJ_TREDUCE_STAGED, 22, 0, 33 * 65);
    const char *dyn = rjt_fmt("{\"kind\":\"treduce\",\"op\":\"mean\",\"dtype\":\"%s\","
                              "\"ranks\":130,\"root\":3,\"shape\":[1001],\"dynamic\":true}",
                              dts[d]);
    run_path(dyn, RJ_TREDUCE_AUTO, 23, 0, 1001);
    run_path(dyn, RJ_TREDUCE_STAGED, 24, 0, 1001);
  }
}
END_TEST

/* What a mean of f16 / bf16 in several passes is refused with (its partial sums would round to
 * the dtype), and the ring's refusal. */
START_TEST(mean_refusals) {
  if (!gpu) return;
  rj_treduce_result tr = {.struct_size = sizeof(rj_treduce_result)};
  const char *many = "{\"kind\":\"treduce\",\"op\":\"mean\",\"dtype\":\"f16\",\"ranks\":130,"
                     "\"shape\":[64]}";
  ck_assert_int_eq(check_path(many, RJ_TREDUCE_AUTO, 1, 0, -1, 1, &tr), RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(rj_errmsg(ctx), "op: a mean of f16 over 130 ranks"), "%s", rj_errmsg(ctx));
  const char *three = "{\"kind\":\"treduce\",\"op\":\"mean\",\"dtype\":\"bf16\",\"ranks\":3,"
                      "\"shape\":[64]}";
  ck_assert_int_eq(check_path(three, RJ_TREDUCE_STAGED, 1, 0, -1, 1, &tr), RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(rj_errmsg(ctx), "passes"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(check_path(three, RJ_TREDUCE_RING, 1, 0, -1, 1, &tr), RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(rj_errmsg(ctx), "a mean of bf16 would round"), "%s", rj_errmsg(ctx));
  run_path(three, RJ_TREDUCE_PEER, 2, 0, 64); /* one pass: served */
}
END_TEST

static const char *const OPS_ADD_F32 =
    "define float @add(float %a, float %b) {\n  %c = fadd float %a, %b\n  ret float %c\n}\n";
static const char *const OPS_ADD_I32 =
    "define i32 @add(i32 %a, i32 %b) {\n  %c = add i32 %a, %b\n  ret i32 %c\n}\n";
/* x -> a*x + b mod 2^32 (the matrix [[a, b], [0, 1]]) as an i64 (a low, b high); composed p then
 * q: (pa*qa, pb*qa + qb).  Not commutative; identity 1. */
static const char *const OPS_AFFINE =
    "define i64 @aff(i64 %p, i64 %q) {\n  %pa = trunc i64 %p to i32\n  %ph = lshr i64 %p, 32\n"
    "  %pb = trunc i64 %ph to i32\n  %qa = trunc i64 %q to i32\n  %qh = lshr i64 %q, 32\n"
    "  %qb = trunc i64 %qh to i32\n  %a = mul i32 %pa, %qa\n  %t = mul i32 %pb, %qa\n"
    "  %b = add i32 %t, %qb\n  %az = zext i32 %a to i64\n  %bz = zext i32 %b to i64\n"
    "  %bs = shl i64 %bz, 32\n  %r = or i64 %az, %bs\n  ret i64 %r\n}\n";

static uint64_t ops_affine(uint64_t p, uint64_t q) {
  uint32_t pa = (uint32_t)p, pb = (uint32_t)(p >> 32), qa = (uint32_t)q, qb = (uint32_t)(q >> 32);
  return (uint64_t)(pa * qa) | (uint64_t)(pb * qa + qb) << 32;
}

/* A group's buffers on the GPUs (rank r on GPU r mod the count), contents kept on the host, rows
 * x cols with tile [16, 64] (tails in both): sources of eb-byte elements, a destination of ob-byte
 * ones (a struct state's output: its field's dtype; else ob = eb). */
typedef struct ops_bufs {
  int ranks, eb, ob;
  int64_t n;
  rj_treduce_buf b[160];
  rj_treduce_group g;
  unsigned char *host[160], *got;
  unsigned char *old; /* under accum: the destination's values before the call (NULL: poison) */
} ops_bufs;

static int ops_dynamic; /* the groups ops_make builds ask for runtime-size kernels */

static void ops_make(ops_bufs *o, int ranks, int root, int64_t rows, int64_t cols, rj_op op,
                     rj_dtype dt, uint64_t x) {
  ck_assert_int_le(ranks, 160);
  o->ranks = ranks;
  o->eb = o->ob = dt == RJ_I64 || dt == RJ_F64 ? 8 : 4;
  o->n = rows * cols;
  size_t bytes = (size_t)o->n * (size_t)o->eb;
  rjt_treduce_group(&o->g, o->b, ranks, root, rows, cols, ndev, op, dt);
  o->g.tile[0] = 16;
  o->g.tile[1] = 64;
  o->g.dynamic = ops_dynamic;
  o->old = malloc(bytes);
  o->got = malloc(bytes);
  ck_assert(o->old && o->got);
  for (int r = 0; r <= ranks; r++) {
    unsigned char *h = r < ranks ? (o->host[r] = malloc(bytes)) : o->old;
    ck_assert_ptr_nonnull(h);
    for (int64_t i = 0; i < o->n; i++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      if (dt == RJ_F32) {
        float f = (float)((int32_t)(x >> 40) % 20001 - 10000) / 7.0f;
        memcpy(h + i * 4, &f, 4);
      } else if (dt == RJ_I32) {
        uint32_t v = (uint32_t)(x >> 32);
        memcpy(h + i * 4, &v, 4);
      } else {
        memcpy(h + i * 8, &x, 8);
      }
    }
    if (r == ranks) break;
    ck_assert_int_eq(rj_device_alloc(ctx, o->b[r].device, bytes, &o->b[r].ptr), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, o->b[r].device, o->b[r].ptr, h, bytes), RJ_OK);
  }
  o->g.dst = o->b[root];
  ck_assert_int_eq(rj_device_alloc(ctx, o->g.dst.device, bytes, &o->g.dst.ptr), RJ_OK);
}

/* rj_treduce_run on path into o->got (the destination first poisoned, or o->old under accum). */
static rj_status ops_run(ops_bufs *o, rj_treduce_path path, rj_treduce_result *res) {
  size_t bytes = (size_t)o->n * (size_t)o->ob;
  memset(o->got, 0xA5, bytes);
  const void *before = o->g.accum && o->old ? o->old : o->got;
  ck_assert_int_eq(rj_memcpy_htod(ctx, o->g.dst.device, o->g.dst.ptr, before, bytes), RJ_OK);
  o->g.path = path;
  *res = (rj_treduce_result){.struct_size = sizeof(rj_treduce_result)};
  rj_status s = rj_treduce_run(ctx, &o->g, NULL, res);
  if (!s)
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, o->g.dst.device, o->got, o->g.dst.ptr, bytes), RJ_OK);
  return s;
}

static void ops_free(ops_bufs *o) {
  for (int r = 0; r < o->ranks; r++) {
    ck_assert_int_eq(rj_device_free(ctx, o->b[r].device, o->b[r].ptr), RJ_OK);
    free(o->host[r]);
  }
  ck_assert_int_eq(rj_device_free(ctx, o->g.dst.device, o->g.dst.ptr), RJ_OK);
  free(o->old);
  free(o->got);
}

static const rj_treduce_path OPS_PATHS[] = {RJ_TREDUCE_AUTO,        RJ_TREDUCE_PEER,
                                            RJ_TREDUCE_STAGED,      RJ_TREDUCE_SPLIT,
                                            RJ_TREDUCE_SPLIT_EQUAL, RJ_TREDUCE_RING};

/* A refusal a path may make for lack of peer access between the GPUs (never on one GPU). */
static int ops_no_peer(rj_status s) {
  return s == RJ_EUNSUPPORTED && ndev > 1 && strstr(rj_errmsg(ctx), "cuDeviceCanAccessPeer");
}

/* Several GPUs: a path this machine's topology refuses (no peer access, more runs of ranks than
 * the ring takes, staged ranks that a non-commutative combine cannot follow on auto). */
static int ops_topology_refusal(rj_status s, rj_treduce_path path) {
  return ops_no_peer(s) ||
         (s == RJ_EUNSUPPORTED && ndev > 1 &&
          ((path == RJ_TREDUCE_RING && strstr(rj_errmsg(ctx), "runs of consecutive ranks")) ||
           (path == RJ_TREDUCE_AUTO && strstr(rj_errmsg(ctx), "staged ranks"))));
}

/* op custom's combine (a scalar state) on the group */
static void ops_combine(ops_bufs *o, const char *ir, const char *fn, uint64_t identity,
                        int commutative) {
  o->g.combine.ir = ir;
  snprintf(o->g.combine.fn, sizeof o->g.combine.fn, "%s", fn);
  o->g.combine.identity = identity;
  o->g.combine.commutative = commutative;
}

/* A commutative custom add is op sum's fold: on every path, the same bits as op sum on that
 * path (f32: within the float64 oracle's tolerance too; i32: exact, wrapping). */
static void custom_as_sum(rj_dtype dt, int ranks, int root, int64_t rows, int64_t cols) {
  ops_bufs o;
  ops_make(&o, ranks, root, rows, cols, RJ_OP_SUM, dt, 99 + (uint64_t)ranks);
  size_t bytes = (size_t)o.n * 4;
  unsigned char *sum = malloc(bytes);
  ck_assert_ptr_nonnull(sum);
  for (int p = 0; p < 6; p++) {
    rj_treduce_result res;
    o.g.op = RJ_OP_SUM;
    o.g.combine.ir = NULL;
    o.g.combine.fn[0] = 0;
    o.g.combine.identity = 0;
    o.g.combine.commutative = 0;
    rj_status s = ops_run(&o, OPS_PATHS[p], &res);
    if (ops_no_peer(s) || (s == RJ_EUNSUPPORTED && OPS_PATHS[p] == RJ_TREDUCE_RING)) continue;
    ck_assert_msg(s == RJ_OK, "sum, path %d: %s", OPS_PATHS[p], rj_errmsg(ctx));
    memcpy(sum, o.got, bytes);
    for (int64_t i = 0; i < o.n; i++) { /* the oracle */
      double want = 0, mag = 0;
      uint32_t wi = 0;
      for (int k = 0; k < ranks; k++) {
        float f;
        uint32_t u;
        memcpy(&f, o.host[k] + i * 4, 4);
        memcpy(&u, o.host[k] + i * 4, 4);
        want += f;
        mag += fabs(f);
        wi += u;
      }
      float gf;
      uint32_t gu;
      memcpy(&gf, sum + i * 4, 4);
      memcpy(&gu, sum + i * 4, 4);
      if (dt == RJ_F32)
        ck_assert_msg(fabs(gf - want) <= 1e-5 * mag, "sum element %lld: %g, want %g", (long long)i,
                      gf, want);
      else
        ck_assert_msg(gu == wi, "sum element %lld: %u, want %u", (long long)i, gu, wi);
    }
    o.g.op = RJ_OP_CUSTOM;
    ops_combine(&o, dt == RJ_F32 ? OPS_ADD_F32 : OPS_ADD_I32, "add", dt == RJ_F32 ? 0x80000000u : 0,
                1); /* -0.0f, 0 */
    s = ops_run(&o, OPS_PATHS[p], &res);
    ck_assert_msg(s == RJ_OK, "custom, path %d: %s", OPS_PATHS[p], rj_errmsg(ctx));
    ck_assert_msg(memcmp(sum, o.got, bytes) == 0, "custom add differs from sum on path %s (%d)",
                  res.path, OPS_PATHS[p]);
    cases_run++;
  }
  free(sum);
  ops_free(&o);
}

START_TEST(custom_as_sum_case) {
  if (!gpu) return;
  custom_as_sum(RJ_F32, 5, 2, 37, 70);
  custom_as_sum(RJ_I32, 3, 0, 100, 129);
  custom_as_sum(RJ_F32, 17, 16, 9, 200); /* the source table in shared memory */
  custom_as_sum(RJ_F32, 130, 5, 5, 67);  /* two launches, the second accumulating */
  custom_as_sum(RJ_I32, 1, 0, 33, 33);
  ops_dynamic = 1; /* runtime-size kernels */
  custom_as_sum(RJ_F32, 5, 2, 37, 70);
  custom_as_sum(RJ_I32, 130, 5, 5, 67);
  ops_dynamic = 0;
}
END_TEST

/* A non-commutative custom combine (affine maps composed) folds in rank order 0, 1, ..., R-1
 * whatever the root, the old value first under accum: exact against the host's composition on
 * auto, peer, split, split-equal and the ring where its chain starts on the root's GPU; staged
 * ranks and a ring starting elsewhere are refused, saying why. */
static void custom_rank_order(int ranks, int root, int64_t rows, int64_t cols, int accum) {
  ops_bufs o;
  ops_make(&o, ranks, root, rows, cols, RJ_OP_CUSTOM, RJ_I64, 7 + (uint64_t)ranks * 31);
  o.g.accum = accum;
  ops_combine(&o, OPS_AFFINE, "aff", 1, 0);
  for (int p = 0; p < 6; p++) {
    rj_treduce_path path = OPS_PATHS[p];
    rj_treduce_result res;
    rj_status s = ops_run(&o, path, &res);
    if (ops_topology_refusal(s, path)) continue;
    int ring_refuses = path == RJ_TREDUCE_RING && 0 % ndev != root % ndev;
    if ((path == RJ_TREDUCE_STAGED && ranks > 1) || ring_refuses) {
      ck_assert_msg(s == RJ_EUNSUPPORTED, "path %d: %s", path, rj_status_name(s));
      ck_assert_msg(strstr(rj_errmsg(ctx), "commutative"), "%s", rj_errmsg(ctx));
      continue;
    }
    ck_assert_msg(s == RJ_OK, "path %d: %s", path, rj_errmsg(ctx));
    for (int64_t i = 0; i < o.n; i++) {
      uint64_t want = 1, v, got;
      if (accum) memcpy(&want, o.old + i * 8, 8);
      for (int k = 0; k < ranks; k++) {
        memcpy(&v, o.host[k] + i * 8, 8);
        want = ops_affine(want, v);
      }
      memcpy(&got, o.got + i * 8, 8);
      ck_assert_msg(got == want,
                    "path %s (%d), %d ranks, root %d: element %lld is %016llx, want %016llx",
                    res.path, path, ranks, root, (long long)i, (unsigned long long)got,
                    (unsigned long long)want);
    }
    cases_run++;
  }
  ops_free(&o);
}

START_TEST(custom_rank_order_case) {
  if (!gpu) return;
  custom_rank_order(2, 1, 37, 70, 0);
  custom_rank_order(5, 2, 37, 70, 0);
  custom_rank_order(5, 0, 100, 33, 1);
  custom_rank_order(17, 9, 20, 70, 0);  /* the table in shared memory */
  custom_rank_order(130, 64, 7, 65, 0); /* two launches */
  custom_rank_order(3, 2, 1, 1, 1);
  ops_dynamic = 1; /* runtime-size kernels: the same rank order */
  custom_rank_order(5, 2, 37, 70, 0);
  custom_rank_order(17, 9, 20, 70, 1);
  custom_rank_order(130, 64, 7, 65, 0);
  ops_dynamic = 0;
}
END_TEST

/* ---- op custom beyond a scalar state of 32 / 64 bits (CK_RUN_CASE=treduce_custom): f16 / bf16
 * scalar states and struct states (tests/custom_ir.h). */

typedef void (*cust_fill)(unsigned char *h, int64_t n, uint64_t x);

static void cust_make(ops_bufs *o, int ranks, int root, int64_t rows, int64_t cols, rj_dtype dt,
                      int eb, int ob, cust_fill fill, uint64_t seed) {
  ck_assert_int_le(ranks, 160);
  o->ranks = ranks;
  o->eb = eb;
  o->ob = ob;
  o->n = rows * cols;
  rjt_treduce_group(&o->g, o->b, ranks, root, rows, cols, ndev, RJ_OP_CUSTOM, dt);
  o->g.tile[0] = 16;
  o->g.tile[1] = 64;
  o->got = malloc((size_t)o->n * (size_t)ob);
  ck_assert_ptr_nonnull(o->got);
  o->old = NULL;
  size_t bytes = (size_t)o->n * (size_t)eb;
  for (int r = 0; r < ranks; r++) {
    ck_assert_ptr_nonnull(o->host[r] = malloc(bytes));
    fill(o->host[r], o->n, seed + (uint64_t)r * 7919);
    ck_assert_int_eq(rj_device_alloc(ctx, o->b[r].device, bytes, &o->b[r].ptr), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, o->b[r].device, o->b[r].ptr, o->host[r], bytes), RJ_OK);
  }
  o->g.dst = o->b[root];
  ck_assert_int_eq(rj_device_alloc(ctx, o->g.dst.device, (size_t)o->n * (size_t)ob, &o->g.dst.ptr),
                   RJ_OK);
}

static uint64_t lcg(uint64_t *x) {
  *x = *x * 6364136223846793005ull + 1442695040888963407ull;
  return *x >> 33;
}

/* The f16 / bf16 bits of a float the format holds exactly (normal, or zero). */
static uint16_t half_bits(float f, rj_dtype dt) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (dt == RJ_BF16 || !(u & 0x7fffffffu)) return (uint16_t)(u >> 16);
  int e = (int)((u >> 23) & 0xff) - 127 + 15;
  return (uint16_t)(((u >> 16) & 0x8000u) | (uint32_t)e << 10 | ((u >> 13) & 0x3ffu));
}

/* f16: multiples of 1/4 in [-2, 2]; bf16: -1, 0, 1 (every partial sum of up to 160 ranks is
 * exact in the dtype, so a sum rounded once and a sum rounded at every step agree) */
static void fill_f16(unsigned char *h, int64_t n, uint64_t x) {
  for (int64_t i = 0; i < n; i++) {
    uint16_t b = half_bits((float)((int)(lcg(&x) % 17) - 8) / 4.0f, RJ_F16);
    memcpy(h + i * 2, &b, 2);
  }
}
static void fill_bf16(unsigned char *h, int64_t n, uint64_t x) {
  for (int64_t i = 0; i < n; i++) {
    uint16_t b = half_bits((float)((int)(lcg(&x) % 3) - 1), RJ_BF16);
    memcpy(h + i * 2, &b, 2);
  }
}

static const char *const HADD_IR =
    "define half @hadd(half %a, half %b) {\n  %c = fadd half %a, %b\n  ret half %c\n}\n";
static const char *const BADD_IR =
    "define bfloat @badd(bfloat %a, bfloat %b) {\n  %c = fadd bfloat %a, %b\n  ret bfloat %c\n}\n";

/* An f16 / bf16 custom add (the state kept in the dtype) on every path: bit for bit op sum's on
 * the same path (sum accumulates in f32 and rounds once; the values keep every partial sum exact)
 * and the exact sum; the ring, which refuses a sum of f16, serves the custom add. */
static void half_as_sum(rj_dtype dt, int ranks, int root, int64_t rows, int64_t cols) {
  ops_bufs o;
  cust_make(&o, ranks, root, rows, cols, dt, 2, 2, dt == RJ_F16 ? fill_f16 : fill_bf16,
            5 + (uint64_t)ranks);
  size_t bytes = (size_t)o.n * 2;
  unsigned char *sum = malloc(bytes), *exact = malloc(bytes);
  ck_assert(sum && exact);
  for (int64_t i = 0; i < o.n; i++) { /* the exact sum, in float (exact: small multiples) */
    float f = 0;
    for (int k = 0; k < ranks; k++) {
      uint16_t b;
      memcpy(&b, o.host[k] + i * 2, 2);
      uint32_t u = dt == RJ_BF16 ? (uint32_t)b << 16 : 0;
      if (dt == RJ_F16 && (b & 0x7fff))
        u = (uint32_t)(b & 0x8000) << 16 | (uint32_t)(((b >> 10) & 0x1f) - 15 + 127) << 23 |
            (uint32_t)(b & 0x3ff) << 13;
      float v;
      memcpy(&v, &u, 4);
      f += v;
    }
    uint16_t w = half_bits(f, dt);
    memcpy(exact + i * 2, &w, 2);
  }
  for (int p = 0; p < 6; p++) {
    rj_treduce_path path = OPS_PATHS[p];
    rj_treduce_result res;
    o.g.op = RJ_OP_SUM;
    o.g.combine.ir = NULL;
    o.g.combine.fn[0] = 0;
    o.g.combine.identity = 0;
    o.g.combine.commutative = 0;
    rj_status s = ops_run(&o, path, &res);
    if (ops_no_peer(s)) continue;
    int have_sum = s == RJ_OK;
    if (have_sum)
      memcpy(sum, o.got, bytes);
    else
      ck_assert_msg(s == RJ_EUNSUPPORTED && (path == RJ_TREDUCE_RING || ranks > 128),
                    "sum, path %d: %s", path, rj_errmsg(ctx));
    o.g.op = RJ_OP_CUSTOM;
    ops_combine(&o, dt == RJ_F16 ? HADD_IR : BADD_IR, dt == RJ_F16 ? "hadd" : "badd", 0x8000,
                1); /* -0.0 */
    s = ops_run(&o, path, &res);
    if (s == RJ_EUNSUPPORTED && ndev > 1 && path == RJ_TREDUCE_RING &&
        strstr(rj_errmsg(ctx), "runs of consecutive ranks"))
      continue;
    ck_assert_msg(s == RJ_OK, "custom %s, path %d: %s", dt == RJ_F16 ? "f16" : "bf16", path,
                  rj_errmsg(ctx));
    if (have_sum)
      ck_assert_msg(memcmp(sum, o.got, bytes) == 0, "custom add differs from sum on path %s (%d)",
                    res.path, path);
    ck_assert_msg(memcmp(exact, o.got, bytes) == 0, "custom add inexact on path %s (%d)", res.path,
                  path);
    cases_run++;
  }
  free(sum);
  free(exact);
  ops_free(&o);
}

/* f16 values, three in four of them zero (the first non-zero one is then often a later rank's) */
static void fill_sparse_f16(unsigned char *h, int64_t n, uint64_t x) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t v = lcg(&x);
    uint16_t b = v % 4 ? 0 : half_bits((float)((int)(v / 4 % 16) + 1) / 4.0f, RJ_F16);
    memcpy(h + i * 2, &b, 2);
  }
}

/* The first non-zero half: associative, not commutative; identity 0. */
static const char *const HFIRST_IR =
    "define half @hfirst(half %a, half %b) {\n  %z = fcmp oeq half %a, 0xH0000\n"
    "  %c = select i1 %z, half %b, half %a\n  ret half %c\n}\n";

/* A non-commutative f16 combine (the first non-zero value) in rank order whatever the root, the
 * old value first under accum (the state is f16: the destination holds it exactly), over one or
 * two launches: exact on auto, peer, split, split-equal and the ring; staged ranks refused. */
static void half_rank_order(int ranks, int root, int64_t rows, int64_t cols, int accum) {
  ops_bufs o;
  cust_make(&o, ranks, root, rows, cols, RJ_F16, 2, 2, fill_sparse_f16, 77 + (uint64_t)ranks);
  size_t bytes = (size_t)o.n * 2;
  o.old = malloc(bytes);
  ck_assert_ptr_nonnull(o.old);
  fill_sparse_f16(o.old, o.n, 3);
  o.g.accum = accum;
  ops_combine(&o, HFIRST_IR, "hfirst", 0, 0);
  for (int p = 0; p < 6; p++) {
    rj_treduce_path path = OPS_PATHS[p];
    rj_treduce_result res;
    rj_status s = ops_run(&o, path, &res);
    if (ops_topology_refusal(s, path)) continue;
    if ((path == RJ_TREDUCE_STAGED && ranks > 1) ||
        (path == RJ_TREDUCE_RING && 0 % ndev != root % ndev)) {
      ck_assert_msg(s == RJ_EUNSUPPORTED && strstr(rj_errmsg(ctx), "commutative"), "path %d: %s",
                    path, rj_errmsg(ctx));
      continue;
    }
    ck_assert_msg(s == RJ_OK, "hfirst, path %d: %s", path, rj_errmsg(ctx));
    for (int64_t i = 0; i < o.n; i++) {
      uint16_t want = 0, v, got;
      if (accum) memcpy(&want, o.old + i * 2, 2);
      for (int k = 0; k < ranks && !want; k++) {
        memcpy(&v, o.host[k] + i * 2, 2);
        want = v;
      }
      memcpy(&got, o.got + i * 2, 2);
      ck_assert_msg(got == want,
                    "hfirst path %s (%d), %d ranks, root %d, accum %d: element %lld "
                    "is 0x%04x, want 0x%04x",
                    res.path, path, ranks, root, accum, (long long)i, got, want);
    }
    cases_run++;
  }
  ops_free(&o);
}

START_TEST(half_as_sum_case) {
  if (!gpu) return;
  half_as_sum(RJ_F16, 2, 1, 37, 70);
  half_as_sum(RJ_BF16, 5, 2, 37, 70);
  half_as_sum(RJ_F16, 17, 16, 9, 200); /* the source table in shared memory */
  half_as_sum(RJ_BF16, 130, 5, 5, 67); /* two launches, the second accumulating */
  half_as_sum(RJ_F16, 1, 0, 33, 33);
  half_rank_order(5, 2, 37, 70, 1);
  half_rank_order(17, 9, 20, 70, 0);
  half_rank_order(130, 64, 7, 65, 1); /* two launches, the old value and the partial first */
  half_rank_order(3, 2, 1, 1, 0);
}
END_TEST

static void fill_f32(unsigned char *h, int64_t n, uint64_t x) {
  for (int64_t i = 0; i < n; i++) {
    float f = (float)((int64_t)(lcg(&x) % 200001) - 100000) / 977.0f + 3.0f;
    memcpy(h + i * 4, &f, 4);
  }
}
static void fill_u32(unsigned char *h, int64_t n, uint64_t x) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t v = (uint32_t)lcg(&x) ^ (uint32_t)(lcg(&x) << 17);
    memcpy(h + i * 4, &v, 4);
  }
}

/* A path that must refuse a struct state (staged ranks, the ring, more than 128 ranks), saying
 * why; 1 when it did (the case then goes on), 0 when the path should serve it. */
static int struct_refused(rj_status s, rj_treduce_path path, int ranks) {
  int must = ranks > 128 || path == RJ_TREDUCE_RING || (path == RJ_TREDUCE_STAGED && ranks > 1);
  if (!must) return 0;
  ck_assert_msg(s == RJ_EUNSUPPORTED, "path %d, %d ranks: %s (want a refusal)", path, ranks,
                rj_status_name(s));
  ck_assert_msg(strstr(rj_errmsg(ctx), "struct state") ||
                    (path == RJ_TREDUCE_STAGED && strstr(rj_errmsg(ctx), "commutative")),
                "path %d: %s", path, rj_errmsg(ctx));
  return 1;
}

static void struct_state_fields(rj_treduce_group *g, const char *ir, const char *fn,
                                const char *lift, const char *fin, int nf, const rj_dtype *f,
                                const uint64_t *id, int result, int comm) {
  g->op = RJ_OP_CUSTOM;
  g->combine.ir = ir;
  snprintf(g->combine.fn, sizeof g->combine.fn, "%s", fn);
  snprintf(g->combine.lift, sizeof g->combine.lift, "%s", lift);
  snprintf(g->combine.finish, sizeof g->combine.finish, "%s", fin);
  g->combine.nfields = nf;
  for (int i = 0; i < nf; i++) {
    g->combine.fields[i] = f[i];
    g->combine.field_identity[i] = id[i];
  }
  g->combine.result = result;
  g->combine.commutative = comm;
}

/* The Welford state {i64 n, f64 mean, f64 M2} over the ranks' f32 elements, finish the sample
 * variance as f64: against a float64 two-pass reference, on every path that serves it, the split
 * paths bit for bit the peer path's (the same fold order); the others refuse, saying why. */
static void welford_case(int ranks, int root, int64_t rows, int64_t cols) {
  static const rj_dtype wf[3] = {RJ_I64, RJ_F64, RJ_F64};
  static const uint64_t wid[3] = {0, 0, 0};
  ops_bufs o;
  cust_make(&o, ranks, root, rows, cols, RJ_F32, 4, 8, fill_f32, 11 + (uint64_t)ranks);
  struct_state_fields(&o.g, WELFORD_IR, "wcomb", "wlift", "wfin", 3, wf, wid, 2, 1);
  size_t bytes = (size_t)o.n * 8;
  unsigned char *peer = malloc(bytes);
  ck_assert_ptr_nonnull(peer);
  int have_peer = 0;
  for (int p = 0; p < 6; p++) {
    rj_treduce_path path = OPS_PATHS[p];
    rj_treduce_result res;
    rj_status s = ops_run(&o, path, &res);
    if (ops_no_peer(s) || struct_refused(s, path, ranks)) continue;
    ck_assert_msg(s == RJ_OK, "welford, path %d: %s", path, rj_errmsg(ctx));
    for (int64_t i = 0; i < o.n; i++) {
      double mean = 0, m2 = 0, sq = 0, got;
      for (int k = 0; k < ranks; k++) {
        float f;
        memcpy(&f, o.host[k] + i * 4, 4);
        mean += f;
      }
      mean /= ranks;
      for (int k = 0; k < ranks; k++) {
        float f;
        memcpy(&f, o.host[k] + i * 4, 4);
        m2 += (f - mean) * (f - mean);
        sq += (double)f * f;
      }
      double want = m2 / (ranks - 1);
      memcpy(&got, o.got + i * 8, 8);
      ck_assert_msg(fabs(got - want) <= 1e-12 * sq + 1e-300,
                    "welford path %s (%d), %d ranks: element %lld is %.17g, want %.17g", res.path,
                    path, ranks, (long long)i, got, want);
    }
    if (path == RJ_TREDUCE_PEER) memcpy(peer, o.got, bytes), have_peer = 1;
    if (have_peer && (path == RJ_TREDUCE_SPLIT || path == RJ_TREDUCE_SPLIT_EQUAL))
      ck_assert_msg(memcmp(peer, o.got, bytes) == 0, "split differs from peer (%d)", path);
    cases_run++;
  }
  free(peer);
  ops_free(&o);
}

/* The 2x2 matrix state of u32 elements (not associative-commutative: a product), lift(x, position)
 * with position the rank's place in fold order: declared non-commutative it folds in rank order
 * (position = rank); declared commutative (a lie the fold order makes harmless here: treduce's
 * kernels fold in fold order) the root's rank comes first.  Exact against the host's fold. */
static void matrix_case(int ranks, int root, int64_t rows, int64_t cols, int comm) {
  static const rj_dtype mf[4] = {RJ_U32, RJ_U32, RJ_U32, RJ_U32};
  static const uint64_t mid[4] = {1, 0, 0, 1};
  ops_bufs o;
  cust_make(&o, ranks, root, rows, cols, RJ_U32, 4, 4, fill_u32, 23 + (uint64_t)ranks);
  struct_state_fields(&o.g, MATRIX_IR, "mmul", "mlift", "mfin", 4, mf, mid, 0, comm);
  for (int p = 0; p < 6; p++) {
    rj_treduce_path path = OPS_PATHS[p];
    rj_treduce_result res;
    rj_status s = ops_run(&o, path, &res);
    if (ops_no_peer(s) || struct_refused(s, path, ranks)) continue;
    if (s == RJ_EUNSUPPORTED && path == RJ_TREDUCE_AUTO && ndev > 1 &&
        strstr(rj_errmsg(ctx), "staged"))
      continue; /* several GPUs without peer access */
    ck_assert_msg(s == RJ_OK, "matrix, path %d: %s", path, rj_errmsg(ctx));
    for (int64_t i = 0; i < o.n; i++) {
      uint32_t m[4] = {1, 0, 0, 1}, x, got;
      for (int k = 0; k < ranks; k++) {
        int r = comm ? (k == 0 ? root : (k - 1 < root ? k - 1 : k)) : k;
        memcpy(&x, o.host[r] + i * 4, 4);
        matrix_fold(m, x, k);
      }
      memcpy(&got, o.got + i * 4, 4);
      ck_assert_msg(got == matrix_finish(m),
                    "matrix path %s (%d), %d ranks, root %d, commutative %d: element %lld is "
                    "%u, want %u",
                    res.path, path, ranks, root, comm, (long long)i, got, matrix_finish(m));
    }
    cases_run++;
  }
  ops_free(&o);
}

START_TEST(struct_state_case) {
  if (!gpu) return;
  welford_case(5, 2, 37, 70);
  welford_case(17, 3, 20, 70); /* the table in shared memory: positions counted in the loop */
  welford_case(2, 0, 1, 1);
  welford_case(130, 5, 3, 67); /* refused everywhere: two launches would hand on the output */
  matrix_case(5, 2, 37, 70, 0);
  matrix_case(17, 9, 20, 70, 0);
  matrix_case(5, 2, 37, 70, 1);
  matrix_case(20, 13, 9, 65, 1);
  matrix_case(1, 0, 33, 33, 0);
}
END_TEST

/* Runtime-size kernels ("dynamic": true): odd counts, tails of every slot and piece, 1- to 3-D
 * dense shapes, many ranks (the table), f16 to f64, on every path run() takes, against the
 * oracle; the peer path's destination equals the constant kernel's bit for bit (the same fold
 * order); and the counts after the first compile nothing. */
static void dyn_case(const char *fmt, const char *shape, int staged_too) {
  char dyn[512], cst[512];
  snprintf(dyn, sizeof dyn, fmt, shape, ",\"dynamic\":true");
  snprintf(cst, sizeof cst, fmt, shape, "");
  run3(dyn, staged_too, 1);
  rj_treduce_result a = {.struct_size = sizeof a}, b = {.struct_size = sizeof b};
  if (check_path(dyn, RJ_TREDUCE_PEER, 5, 0, -1, 1, &a)) return; /* no peer access */
  check_path(cst, RJ_TREDUCE_PEER, 5, 0, -1, 0, &b);
  ck_assert_msg(a.dst_digest == b.dst_digest, "dynamic %016llx, constant %016llx: %s",
                (unsigned long long)a.dst_digest, (unsigned long long)b.dst_digest, dyn);
}

START_TEST(dynamic_counts) {
  if (!gpu) return;
  static const char *const shapes[] = {"[1]",    "[2]",      "[3]",       "[255]",   "[1023]",
                                       "[1024]", "[1025]",   "[4097]",    "[65537]", "[1000003]",
                                       "[7,9]",  "[3,5,67]", "[2,1,1025]"};
  static const char *const dts[] = {"f32", "i32", "f16", "f64", "bf16", "u64"};
  static const char *const ops[] = {"sum", "max", "min"};
  int n = (int)(sizeof shapes / sizeof shapes[0]);
  for (int i = 0; i < n; i++) {
    int R = i % 4 == 3 ? 20 : 2 + i % 3; /* 20: the source table */
    dyn_case(rjt_fmt("{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":%d,"
                     "\"root\":%d,\"shape\":%%s,\"pingpong\":%s%s%%s}",
                     ops[i % 3], dts[i % 6], R, R - 1, i % 2 ? "true" : "false",
                     i % 5 == 4 ? ",\"accum\":true" : ""),
             shapes[i], i % 3 == 0);
  }
  /* a tile bound: T = 32 threads, pieces of 128 */
  dyn_case("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":3,\"root\":1,"
           "\"shape\":%s,\"tile\":[4,8]%s}",
           "[1001]", 1);
  /* one compile serves every count after the first, here on the peer path */
  rj_ctx *fresh = rj_ctx_new();
  rj_ctx *keep = ctx;
  ctx = fresh;
  long long after_first = -1;
  for (int i = 0; i < n; i++) {
    rj_treduce_result tr = {.struct_size = sizeof tr};
    const char *json = rjt_fmt("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\","
                               "\"ranks\":3,\"root\":1,\"shape\":%s,\"dynamic\":true}",
                               shapes[i]);
    char copy[512];
    snprintf(copy, sizeof copy, "%s", json);
    if (check_path(copy, RJ_TREDUCE_PEER, 3, 0, -1, 1, &tr)) break;
    if (i == 0) after_first = rjt_made(ctx);
  }
  long long end = rjt_made(ctx);
  ctx = keep;
  rj_ctx_free(fresh);
  if (after_first >= 0)
    ck_assert_msg(end == after_first, "%lld compiles after the first count (want 0)",
                  end - after_first);
}
END_TEST

int main(void) {
  if (!rjt_gpu_present()) return RJT_SKIP;
  Suite *s = suite_create("gpu_treduce");
  TCase *tc = tcase_create("gpu");
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_loop_test(tc, reference_matrix, 0, 5);
  tcase_add_test(tc, ops_and_roots);
  tcase_add_test(tc, partial_chunks_and_dims);
  tcase_add_test(tc, empty_rows);
  tcase_add_test(tc, extensions);
  tcase_add_test(tc, through_rj_check);
  tcase_add_test(tc, split_cuts);
  tcase_add_test(tc, ring_chunks);
  tcase_add_test(tc, ring_timeout);
  tcase_add_test(tc, auto_choice);
  tcase_add_test(tc, caller_buffers);
  suite_add_tcase(s, tc);
  /* runtime-size kernels: a case of their own (CK_RUN_CASE=dynamic) */
  TCase *dyn = tcase_create("dynamic");
  tcase_set_timeout(dyn, 600);
  tcase_add_checked_fixture(dyn, setup, teardown);
  tcase_add_test(dyn, dynamic_counts);
  suite_add_tcase(s, dyn);
  /* mean and custom: a case of their own (CK_RUN_CASE=treduce_ops) */
  TCase *ops = tcase_create("treduce_ops");
  tcase_set_timeout(ops, 600);
  tcase_add_checked_fixture(ops, setup, teardown);
  tcase_add_test(ops, mean_paths);
  tcase_add_test(ops, mean_refusals);
  tcase_add_test(ops, custom_as_sum_case);
  tcase_add_test(ops, custom_rank_order_case);
  suite_add_tcase(s, ops);
  /* f16 / bf16 and struct states of op custom: a case of their own (CK_RUN_CASE=treduce_custom) */
  TCase *cust = tcase_create("treduce_custom");
  tcase_set_timeout(cust, 600);
  tcase_add_checked_fixture(cust, setup, teardown);
  tcase_add_test(cust, half_as_sum_case);
  tcase_add_test(cust, struct_state_case);
  suite_add_tcase(s, cust);
  int failed = rjt_run_in_process(s);
  fprintf(stderr,
          gpu ? "gpu_treduce: %d request cases run on the GPU(s); %d split-vs-peer comparisons; "
                "%d ring-vs-peer, %d ring refusals as planned\n"
              : "gpu_treduce: SKIPPED (no GPU): %d cases, %d comparisons, %d, %d\n",
          cases_run, split_cases, ring_cases, ring_refused);
  return failed ? 1 : 0;
}
