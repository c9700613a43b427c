/* treduce's plans without a GPU (rj_treduce_plan_make, `redjit plan`): the split path's link
 * model re-derived and checked against random plans and share vectors, its fixed points and
 * errors; the ring path's hops, load, chunk rule and refusals. */
#include "redjit_treduce.h"
#include "rjtest.h"

#include <math.h>

static rj_ctx *ctx;
static void setup(void) {
  ctx = rj_ctx_new();
  rj_treduce_table_load(ctx, ""); /* auto by the link model alone (test_treduce_table: tables) */
}
static void teardown(void) {
  rj_ctx_free(ctx);
}
/* ---- the split plan (rj_treduce_plan_make): no GPU needed */

static rj_status plan(const char *json, int gpus, rj_treduce_path path, rj_treduce_plan *p) {
  rj_request r;
  rjt_parse(ctx, json, &r);
  int dev[1100];
  for (int i = 0; i < r.u.treduce.ranks; i++)
    dev[i] = i % gpus;
  rj_treduce_plan_init(p);
  return rj_treduce_plan_make(ctx, &r, dev, path, p);
}

/* The link model, written again here: GPU i's (in, out) for share f, and its load. */
static double model_load(const rj_treduce *t, int i, int local, double f, double *in, double *out) {
  int N = t->ranks, acc = t->accum;
  *in = f * (N - local) + (i == 0 ? 1 - f : acc ? f : 0);
  *out = local * (1 - f) + (i == 0 ? (acc ? 1 - f : 0) : f);
  return fmax(fmax(*in, *out), (*in + *out) / 1.45);
}

/* What every plan must be: slices contiguous from 0 covering the cut dim, shares summing to 1,
 * one slice per GPU (3 on one), the link model recomputed from the shares, auto's rule. */
static void plan_invariants(const rj_request *r, const int *dev, rj_treduce_path path,
                            const rj_treduce_plan *p) {
  const rj_treduce *t = &r->u.treduce;
  int64_t numel = 1;
  for (int d = 0; d < t->ndim; d++)
    numel *= t->shape[d];
  int distinct = 1, local[64] = {0}, gpu[64] = {dev[t->root]}; /* the root's GPU first */
  for (int k = 0; k < t->ranks; k++) {
    int i = 0;
    while (i < distinct && gpu[i] != dev[k])
      i++;
    if (i == distinct) gpu[distinct++] = dev[k];
    local[i]++;
  }
  ck_assert_int_eq(p->gpus, distinct);
  ck_assert_int_eq(p->slices, numel == 0 || (p->dim < 0 && numel == 1) ? 1
                              : distinct >= 2                          ? distinct
                                                                       : 3);
  ck_assert_int_eq(p->slice[0].device, dev[t->root]);
  double bytes = (double)numel * (t->dtype == RJ_F64 || t->dtype == RJ_I64 || t->dtype == RJ_U64 ? 8
                                  : t->dtype == RJ_F16 || t->dtype == RJ_BF16                    ? 2
                                                                              : 4);
  ck_assert(p->bytes_per_rank == bytes);
  if (numel == 0) return;
  int64_t ext = p->dim >= 0 ? t->shape[p->dim] : 1, at = 0;
  double share = 0, worst = 0;
  for (int i = 0; i < p->slices; i++) {
    const rj_treduce_slice *sl = &p->slice[i];
    ck_assert_int_eq(sl->start, at);
    ck_assert_int_ge(sl->len, 0);
    at += sl->len;
    ck_assert(fabs(sl->share - (double)sl->len / (double)ext) < 1e-12);
    share += sl->share;
    if (distinct >= 2) {
      ck_assert_int_eq(sl->device, gpu[i]);
      ck_assert_int_eq(sl->local_ranks, local[i]);
      double in, out, l = model_load(t, i, local[i], sl->share, &in, &out);
      ck_assert_msg(fabs(sl->in - in) < 1e-9 && fabs(sl->out - out) < 1e-9 &&
                        fabs(sl->load - l) < 1e-9,
                    "slice %d: in %g out %g load %g, model %g %g %g", i, sl->in, sl->out, sl->load,
                    in, out, l);
      worst = fmax(worst, l);
    } else {
      ck_assert_int_eq(sl->device, gpu[0]);
      ck_assert(sl->load == 0 && sl->in == 0 && sl->out == 0);
    }
  }
  ck_assert_int_eq(at, ext);
  ck_assert(fabs(share - 1) < 1e-9);
  ck_assert(fabs(p->split_load - worst) < 1e-9);
  ck_assert(p->peer_load == (distinct >= 2 ? t->ranks - local[0] : 0));
  ck_assert(fabs(p->saved_bytes - (p->peer_load - p->split_load) * bytes) < 1);
  if (path == RJ_TREDUCE_AUTO)
    ck_assert_int_eq(p->path, distinct >= 2 && p->saved_bytes >= 8 << 20 ? RJ_TREDUCE_SPLIT
                                                                         : RJ_TREDUCE_PEER);
  else
    ck_assert_int_eq(p->path, path);
}

/* The model's optimum on fine cuts: one rank on each of 4 GPUs leaves the root without a slice
 * (each GPU moving one buffer each way: 2 / 1.45); 2 of 4 ranks on each of 2 GPUs gives the root
 * 0.633 (1.633 B, against 1.72 B for equal slices and 2 B for peer), more under accum; 2 ranks on 2
 * GPUs: everything on the root (the peer path's load, so auto stays on peer); equal slices are
 * equal; auto's threshold. */
START_TEST(split_plan_model) {
  rj_treduce_plan p;
  const char *big = "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":%d,\"root\":"
                    "%d,\"shape\":[%d,1024],\"tile\":[64,1024]%s}";
  /* 4 ranks on 4 GPUs, 64 MiB each: root-free */
  ck_assert_int_eq(plan(rjt_fmt(big, 4, 2, 16384, ""), 4, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert_int_eq(p.path, RJ_TREDUCE_SPLIT);
  ck_assert_int_eq(p.dim, 0);
  ck_assert_int_eq(p.slice[0].device, 2);
  ck_assert_int_eq(p.slice[0].len, 0);
  ck_assert(p.peer_load == 3);
  ck_assert_msg(fabs(p.split_load - 2 / 1.45) < 0.01, "split load %g", p.split_load);
  for (int i = 1; i < 4; i++)
    ck_assert(fabs(p.slice[i].share - 1.0 / 3) < 0.01);
  /* equal slices: a quarter each, the root receiving 1.5 B and sending 0.75 B */
  ck_assert_int_eq(plan(rjt_fmt(big, 4, 2, 16384, ""), 4, RJ_TREDUCE_SPLIT_EQUAL, &p), RJ_OK);
  ck_assert_int_eq(p.path, RJ_TREDUCE_SPLIT_EQUAL);
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(p.slice[i].len, 4096);
  ck_assert(fabs(p.slice[0].in - 1.5) < 1e-9 && fabs(p.slice[0].out - 0.75) < 1e-9);
  ck_assert(fabs(p.split_load - 2.25 / 1.45) < 1e-9);
  /* 4 ranks on 2 GPUs */
  ck_assert_int_eq(plan(rjt_fmt(big, 4, 0, 16384, ""), 2, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert_int_eq(p.path, RJ_TREDUCE_SPLIT);
  ck_assert_msg(fabs(p.slice[0].share - 0.633) < 0.01, "root share %g", p.slice[0].share);
  ck_assert_msg(fabs(p.split_load - 1.633) < 0.01, "split load %g", p.split_load);
  ck_assert(p.peer_load == 2);
  ck_assert_int_eq(p.slice[0].len % 64, 0); /* whole row tiles */
  ck_assert_int_eq(plan(rjt_fmt(big, 4, 0, 16384, ",\"accum\":true"), 2, RJ_TREDUCE_AUTO, &p),
                   RJ_OK);
  ck_assert_msg(fabs(p.slice[0].share - 0.739) < 0.01, "root share under accum %g",
                p.slice[0].share);
  /* 2 ranks on 2 GPUs: everything on the root, nothing saved, auto stays on peer */
  ck_assert_int_eq(plan(rjt_fmt(big, 2, 1, 16384, ""), 2, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert_int_eq(p.path, RJ_TREDUCE_PEER);
  ck_assert(p.slice[0].share == 1 && p.slice[0].device == 1);
  ck_assert(fabs(p.saved_bytes) < 1);
  /* one GPU: 3 even slices, no traffic, peer */
  ck_assert_int_eq(plan(rjt_fmt(big, 4, 1, 16384, ""), 1, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert_int_eq(p.path, RJ_TREDUCE_PEER);
  ck_assert_int_eq(p.slices, 3);
  /* the threshold: 4 ranks on 4 GPUs save about 1.62 B: split from about 5 MiB per rank */
  ck_assert_int_eq(plan(rjt_fmt(big, 4, 0, 1536, ""), 4, RJ_TREDUCE_AUTO, &p), RJ_OK); /* 6 MiB */
  ck_assert_int_eq(p.path, RJ_TREDUCE_SPLIT);
  ck_assert_int_eq(plan(rjt_fmt(big, 4, 0, 1024, ""), 4, RJ_TREDUCE_AUTO, &p), RJ_OK); /* 4 MiB */
  ck_assert_int_eq(p.path, RJ_TREDUCE_PEER);
}
END_TEST

static uint64_t lcg = 0x9e3779b97f4a7c15ull;
static int rnd(int n) {
  lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
  return (int)(lcg >> 33) % n;
}

/* Parses json into r (through copy: rjt_fmt's buffer is reused) and draws each rank's GPU. */
static void random_map(const char *json, char *copy, size_t n, int gpus, rj_request *r, int *dev) {
  snprintf(copy, n, "%s", json);
  rjt_parse(ctx, copy, r);
  for (int k = 0; k < r->u.treduce.ranks; k++)
    dev[k] = rnd(gpus);
}

/* The balanced shares are the model's optimum: on a fine cut (65536 single rows), no other share
 * vector — equal ones, random ones, each GPU alone — has a smaller largest load. */
START_TEST(split_plan_optimal) {
  for (int it = 0; it < 200; it++) {
    int ranks = 2 + rnd(10), gpus = 2 + rnd(5), accum = rnd(2);
    const char *json =
        rjt_fmt("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":%d,\"root\":%d,"
                "\"shape\":[65536],\"tile\":[1,1]%s}",
                ranks, rnd(ranks), accum ? ",\"accum\":true" : "");
    char copy[256];
    rj_request r;
    int dev[12];
    random_map(json, copy, sizeof copy, gpus, &r, dev);
    rj_treduce_plan p;
    rj_treduce_plan_init(&p);
    ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_SPLIT, &p), RJ_OK);
    plan_invariants(&r, dev, RJ_TREDUCE_SPLIT, &p);
    if (p.gpus < 2) continue;
    int local[64];
    for (int i = 0; i < p.slices; i++)
      local[i] = p.slice[i].local_ranks;
    for (int trial = 0; trial < 300; trial++) {
      double f[64], sum = 0, worst = 0, in, out;
      for (int i = 0; i < p.slices; i++) {
        f[i] = trial == 0          ? 1.0
               : trial <= p.slices ? (i == trial - 1 ? 1.0 : 0.0)
                                   : (double)rnd(1000);
        sum += f[i];
      }
      if (sum == 0) continue;
      for (int i = 0; i < p.slices; i++)
        worst = fmax(worst, model_load(&r.u.treduce, i, local[i], f[i] / sum, &in, &out));
      ck_assert_msg(p.split_load <= worst + 2e-4,
                    "%s on %d GPUs: plan's load %g, shares of trial %d give %g", copy, p.gpus,
                    p.split_load, trial, worst);
    }
  }
}
END_TEST

/* Random requests (shape, tile, strides, ranks, root) on random rank-to-GPU maps, each path. */
START_TEST(split_plan_random) {
#define RND rnd
  static const char *const dts[] = {"f32", "f16", "f64", "i32", "bf16", "u64"};
  for (int it = 0; it < 400; it++) {
    int ndim = 1 + RND(5), ranks = 1 + RND(12), root = RND(ranks), gpus = 1 + RND(6);
    char shape[128] = "", tile[64];
    for (int d = 0; d < ndim; d++) {
      int ext = RND(10) == 0 ? RND(3) : 1 + RND(d == ndim - 1 ? 300 : 40);
      snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%d", d ? "," : "", ext);
    }
    int tr = 1 + RND(20), tc = 1 + RND(70);
    snprintf(tile, sizeof tile, "%d,%d", tr, tc);
    const char *dt = dts[RND(6)];
    const char *json = rjt_fmt("{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"%s\",\"ranks\":%d,"
                               "\"root\":%d,\"shape\":[%s],\"tile\":[%s]%s}",
                               dt, ranks, root, shape, tile, RND(3) ? "" : ",\"accum\":true");
    char copy[512];
    rj_request r;
    int dev[12];
    random_map(json, copy, sizeof copy, gpus, &r, dev);
    static const rj_treduce_path paths[] = {RJ_TREDUCE_AUTO, RJ_TREDUCE_SPLIT,
                                            RJ_TREDUCE_SPLIT_EQUAL};
    rj_treduce_plan p[3];
    for (int k = 0; k < 3; k++) {
      rj_treduce_plan_init(&p[k]);
      rj_status s = rj_treduce_plan_make(ctx, &r, dev, paths[k], &p[k]);
      ck_assert_msg(s == RJ_OK, "%s: %s", copy, rj_errmsg(ctx));
      plan_invariants(&r, dev, paths[k], &p[k]);
    }
    /* auto plans the model's cut */
    ck_assert_int_eq(memcmp(p[0].slice, p[1].slice, sizeof p[0].slice), 0);
  }
#undef RND
}
END_TEST

/* Bad arguments: each named. */
START_TEST(split_plan_errors) {
  rj_request r;
  rjt_parse(ctx,
            "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":65,\"shape\":[4]}",
            &r);
  int dev[65];
  for (int i = 0; i < 65; i++)
    dev[i] = i;
  rj_treduce_plan p;
  rj_treduce_plan_init(&p);
  ck_assert_int_eq(rj_treduce_plan_make(NULL, &r, dev, RJ_TREDUCE_AUTO, &p), RJ_EINVAL);
  ck_assert_int_eq(rj_treduce_plan_make(ctx, NULL, dev, RJ_TREDUCE_AUTO, &p), RJ_EINVAL);
  ck_assert_str_eq(rj_errmsg(ctx), "req: NULL");
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, NULL, RJ_TREDUCE_AUTO, &p), RJ_EINVAL);
  ck_assert_str_eq(rj_errmsg(ctx), "rank_device: NULL");
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_AUTO, NULL), RJ_EINVAL);
  ck_assert_str_eq(rj_errmsg(ctx), "plan: NULL");
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_AUTO, &p), RJ_EUNSUPPORTED);
  ck_assert_msg(strstr(rj_errmsg(ctx), "more than 64 GPUs"), "%s", rj_errmsg(ctx));
  dev[64] = 3;
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_AUTO, &p), RJ_OK);
  dev[7] = -1;
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_AUTO, &p), RJ_EINVAL);
  ck_assert_str_eq(rj_errmsg(ctx), "rank_device[7]: -1 is negative");
  dev[7] = 7;
  for (int path = RJ_TREDUCE_PEER; path <= RJ_TREDUCE_STAGED; path++) {
    ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, (rj_treduce_path)path, &p), RJ_EINVAL);
    ck_assert_msg(strstr(rj_errmsg(ctx), "path:"), "%s", rj_errmsg(ctx));
  }
  p.struct_size = 8;
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_AUTO, &p), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "plan.struct_size"), "%s", rj_errmsg(ctx));
  rj_treduce_plan_init(&p);
  r.u.treduce.root = 70; /* an invalid request */
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_AUTO, &p), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "root"), "%s", rj_errmsg(ctx));
  rjt_parse(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\","
      "\"src\":{\"mem\":\"shared\",\"shape\":[32]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}}",
      &r);
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_AUTO, &p), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "kind"), "%s", rj_errmsg(ctx));
}
END_TEST

/* The ring's chunk count, from its rule: steps of 128 KiB, the last one partial. */
static int64_t ring_chunks(int64_t n, int bytes) {
  int64_t step = (128 << 10) / bytes;
  return n <= 0 ? 0 : (n + step - 1) / step;
}

/* The ring in the plan: hops are the runs of consecutive ranks on one GPU in fold order (the root
 * first, then i < root ? i : i+1) of at most 127 ranks, at least 3 on one GPU; its load the
 * busiest GPU's one-way link traffic; its chunks the rule above; and what it refuses (a sum of
 * f16 / bf16, strided views, more than 8 runs on a GPU), each named.  Auto never takes it. */
START_TEST(ring_plan) {
  const char *f = "{\"kind\":\"treduce\",\"op\":\"%s\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":%d,"
                  "\"shape\":[%d,1024]%s}";
  rj_treduce_plan p;
  ck_assert_int_eq(plan(rjt_fmt(f, "sum", "f32", 4, 0, 16384, ""), 4, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert_int_eq(p.path, RJ_TREDUCE_SPLIT); /* not the ring */
  ck_assert(p.ring_load == 1 && p.hops == 4 && p.ring_why[0] == 0);
  ck_assert_int_eq(p.chunks, ring_chunks(16384 * 1024, 4));
  ck_assert_int_eq(p.chunks, 512); /* 64 MiB in steps of 128 KiB */
  ck_assert_int_eq(plan(rjt_fmt(f, "sum", "f32", 4, 2, 16384, ""), 4, RJ_TREDUCE_RING, &p), RJ_OK);
  ck_assert(p.path == RJ_TREDUCE_RING && p.ring_load == 1 && p.hops == 4);
  /* 8 ranks on 4 GPUs (r mod 4): 8 runs, two per GPU; 2 ranks on 2 GPUs: root -> 1 -> root */
  ck_assert_int_eq(plan(rjt_fmt(f, "max", "f64", 8, 0, 300, ""), 4, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert(p.ring_load == 2 && p.hops == 8);
  ck_assert_int_eq(p.chunks, ring_chunks(300 * 1024, 8));
  ck_assert_int_eq(plan(rjt_fmt(f, "sum", "i32", 2, 1, 7, ""), 2, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert(p.ring_load == 1 && p.hops == 2 && p.chunks == 1);
  /* contiguous placement: ranks 0, 1 on GPU 0 and 2, 3 on GPU 1 are two hops */
  rj_request r;
  rjt_parse(ctx, rjt_fmt(f, "min", "u32", 4, 0, 64, ""), &r);
  int dev[4] = {0, 0, 1, 1};
  rj_treduce_plan_init(&p);
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_RING, &p), RJ_OK);
  ck_assert(p.ring_load == 1 && p.hops == 2);
  /* one GPU: runs of ceil(ranks / 3), no link traffic */
  ck_assert_int_eq(plan(rjt_fmt(f, "sum", "f32", 5, 4, 64, ""), 1, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert(p.ring_load == 0 && p.hops == 3);
  ck_assert_int_eq(plan(rjt_fmt(f, "sum", "f32", 2, 0, 64, ""), 1, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert(p.ring_load == 0 && p.hops == 2);
  ck_assert_int_eq(plan(rjt_fmt(f, "sum", "f32", 1, 0, 64, ""), 1, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert(p.ring_load == 0 && p.hops == 1);
  /* at most 127 ranks a hop: 400 on one GPU are 4 hops of 100; 254 on 2 GPUs, GPU 0 holding ranks
   * 0..126 and GPU 1 the rest, are two hops; 256 so placed are four (127 + 1 on each GPU) */
  ck_assert_int_eq(plan(rjt_fmt(f, "max", "f32", 400, 0, 8, ""), 1, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert(p.ring_load == 0 && p.hops == 4);
  int many[256];
  for (int n = 254; n <= 256; n += 2) {
    for (int i = 0; i < n; i++)
      many[i] = i >= n / 2;
    rjt_parse(ctx, rjt_fmt(f, "max", "f32", n, 0, 8, ""), &r);
    rj_treduce_plan_init(&p);
    ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, many, RJ_TREDUCE_RING, &p), RJ_OK);
    ck_assert_msg(p.hops == (n == 254 ? 2 : 4) && p.ring_load == 1, "%d ranks: %d hops", n, p.hops);
  }
  /* chunk counts on odd sizes and dtypes, against the rule */
  static const int64_t sizes[] = {1, 1000, 65535, 65536, 196608, 1 << 20, 3000001, 50000000};
  for (int i = 0; i < 8; i++)
    for (int b = 2; b <= 8; b *= 2) {
      const char *dt = b == 2 ? "f16" : b == 4 ? "i32" : "i64";
      ck_assert_int_eq(plan(rjt_fmt("{\"kind\":\"treduce\",\"op\":\"max\",\"dtype\":\"%s\","
                                    "\"ranks\":3,\"shape\":[%lld]}",
                                    dt, (long long)sizes[i]),
                            3, RJ_TREDUCE_AUTO, &p),
                       RJ_OK);
      ck_assert_msg(p.chunks == ring_chunks(sizes[i], b), "%lld x %d B: %d chunks, rule %lld",
                    (long long)sizes[i], b, p.chunks, (long long)ring_chunks(sizes[i], b));
    }
  ck_assert_int_eq(plan(rjt_fmt(f, "sum", "f32", 3, 0, 0, ""), 3, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert(p.ring_load == 1 && p.chunks == 0); /* empty: nothing to move */
  /* refusals, named */
  ck_assert_int_eq(plan(rjt_fmt(f, "sum", "bf16", 4, 0, 64, ""), 4, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert_msg(p.ring_load == -1 && p.hops == 0 && strstr(p.ring_why, "sum of bf16"), "%s",
                p.ring_why);
  ck_assert_int_eq(plan(rjt_fmt(f, "max", "bf16", 4, 0, 64, ""), 4, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert(p.ring_load == 1);
  ck_assert_int_eq(
      plan(rjt_fmt(f, "sum", "f32", 3, 0, 64, ",\"strides\":[1030,1]"), 3, RJ_TREDUCE_AUTO, &p),
      RJ_OK);
  ck_assert_msg(p.ring_load == -1 && strstr(p.ring_why, "sources is a strided view"), "%s",
                p.ring_why);
  ck_assert_int_eq(
      plan(rjt_fmt(f, "sum", "f32", 3, 0, 64, ",\"dst_strides\":[1,64]"), 3, RJ_TREDUCE_AUTO, &p),
      RJ_OK);
  ck_assert_msg(p.ring_load == -1 && strstr(p.ring_why, "destination is a strided view"), "%s",
                p.ring_why);
  ck_assert_int_eq(
      plan(rjt_fmt(f, "sum", "f32", 3, 0, 64, ",\"strides\":[1024,1]"), 3, RJ_TREDUCE_AUTO, &p),
      RJ_OK);
  ck_assert(p.ring_load == 1); /* strides given, but row-major */
  ck_assert_int_eq(plan(rjt_fmt(f, "sum", "f32", 36, 0, 64, ""), 4, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert_msg(p.ring_load == -1 && strstr(p.ring_why, "GPU 0 holds more than 8 runs"), "%s",
                p.ring_why);
  ck_assert_int_eq(plan(rjt_fmt(f, "sum", "f32", 32, 0, 64, ""), 4, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert(p.ring_load == 8 && p.hops == 32);
}
END_TEST

/* `redjit plan`: one JSON line (the same plan as the C call), errors as JSON with status 2. */
START_TEST(cli_plan) {
  const char *req = "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":0,"
                    "\"shape\":[16384,1024],\"tile\":[64,1024]}";
  char out[4096], q[512];
  snprintf(q, sizeof q, "plan '%s' --gpus 2", req);
  int rc = rjt_cli(q, out, sizeof out);
  rj_treduce_plan p;
  ck_assert_int_eq(plan(req, 2, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert_msg(rc == 0 && strstr(out, "\"ok\": true") && strstr(out, "\"path\": \"split\"") &&
                    strstr(out, "\"gpus\": 2") && strstr(out, "\"peer_load\": 2.0000") &&
                    strstr(out, rjt_fmt("\"len\": %lld", (long long)p.slice[0].len)),
                "%d: %s", rc, out);
  snprintf(q, sizeof q, "plan '%s' --gpus 4 --path split-equal", req);
  rc = rjt_cli(q, out, sizeof out);
  ck_assert_msg(rc == 0 && strstr(out, "\"path\": \"split-equal\"") &&
                    strstr(out, "\"split_load\": 1.5517") &&
                    strstr(out, "{\"gpu\": 3, \"local_ranks\": 1, \"start\": 12288, \"len\": 4096"),
                "%d: %s", rc, out);
  snprintf(q, sizeof q, "plan '%s' --gpus 4 --path ring", req);
  rc = rjt_cli(q, out, sizeof out);
  ck_assert_msg(rc == 0 && strstr(out, "\"path\": \"ring\"") &&
                    strstr(out, "\"ring\": {\"load\": 1.0000, \"hops\": 4, \"chunks\": 512, "
                                "\"why_not\": \"\"}"),
                "%d: %s", rc, out);
  snprintf(q, sizeof q, "plan '%s' --gpus 4 --path staged", req);
  rc = rjt_cli(q, out, sizeof out);
  ck_assert_msg(rc == 2 && strstr(out, "\"ok\": false") && strstr(out, "path"), "%d: %s", rc, out);
  snprintf(q, sizeof q, "plan '%s' --gpus 0", req);
  rc = rjt_cli(q, out, sizeof out);
  ck_assert_msg(rc == 2 && strstr(out, "\"ok\": false") && strstr(out, "--gpus"), "%d: %s", rc,
                out);
  snprintf(q, sizeof q, "ptx '%s' --gpus 2", req);
  rc = rjt_cli(q, out, sizeof out);
  ck_assert_msg(rc == 2 && strstr(out, "--gpus"), "%d: %s", rc, out);
  rc = rjt_cli(
      "plan '{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":{"
      "\"mem\":\"shared\",\"shape\":[32]},\"dst\":{\"mem\":\"shared\",\"shape\":[1]}}'",
      out, sizeof out);
  ck_assert_msg(rc == 2 && strstr(out, "\"ok\": false") && strstr(out, "kind"), "%d: %s", rc, out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("treduce_plan");
  TCase *tc = tcase_create("treduce_plan");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, split_plan_model);
  tcase_add_test(tc, split_plan_random);
  tcase_add_test(tc, split_plan_optimal);
  tcase_add_test(tc, split_plan_errors);
  tcase_add_test(tc, ring_plan);
  tcase_add_test(tc, cli_plan);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
