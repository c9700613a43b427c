/* `run` and `bench` for list requests (rj_reduce_multi), through the public call.
 *
 * run: list.count tensors of lengths drawn from the seed (every 16th empty, every 16th of one
 * element, 31 and 33, then mostly up to 4 Ki, some up to 64 Ki and 1 Mi, a few up to 4 Mi; once
 * 2^23 elements are drawn, the rest up to 4 Ki each), most of unit stride and every 7th of stride 2
 * or 3, at element offsets 0..3 in one poisoned device buffer; the table is uploaded once.  The
 * per-tensor outputs and the total go to poisoned buffers with guards; the float64 reference of
 * each tensor is the 1-D tensor request's (hr_oracle_tensor / hr_oracle_fused), and the total's
 * that of every element in one array.  Two launches from the same inputs must agree bit for bit.
 * bench: the same list, CUDA events around each launch; bytes = every element read once + the
 * outputs written. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define MULTI_BUDGET ((int64_t)1 << 23) /* elements of a run's list, at most */

/* A run's list: lengths, strides, element offsets into src, and the buffers. */
typedef struct mlist {
  int64_t n, *len, *st, *off, elems;
  hr_buf src, dst, tot;
  rj_devptr table;
  void *got[2], *gtot[2];
} mlist;

static int64_t draw_len(hr_rng *g, int64_t i, int64_t used) {
  static const int64_t fixed[4] = {0, 1, 31, 33};
  int f = (int)(i % 16) - 1; /* tensors 1 .. 4 of every 16: 0, 1, 31, 33 elements */
  if (f >= 0 && f < 4) return fixed[f];
  uint64_t r = hr_rng_next(g) % 1000;
  int64_t cap = r < 700 ? 4096 : r < 950 ? 65536 : r < 995 ? 1 << 20 : 1 << 22;
  if (used + cap > MULTI_BUDGET) cap = 4096;
  return (int64_t)(hr_rng_next(g) % (uint64_t)cap);
}

/* the lengths, strides and offsets (element indices into src); m->src.n: the extent */
static rj_status layout(rj_ctx *ctx, const rj_check_opts *o, mlist *m) {
  m->len = calloc((size_t)m->n, sizeof(int64_t));
  m->st = calloc((size_t)m->n, sizeof(int64_t));
  m->off = calloc((size_t)m->n, sizeof(int64_t));
  if (!m->len || !m->st || !m->off) return hr_nomem(ctx);
  hr_rng g;
  hr_rng_seed(&g, o->seed * 7919 + 11);
  int64_t at = 0;
  for (int64_t i = 0; i < m->n; i++) {
    m->len[i] = draw_len(&g, i, m->elems);
    m->st[i] = i % 7 == 6 ? 2 + (int64_t)(hr_rng_next(&g) % 2) : 1;
    m->off[i] = at + (int64_t)(hr_rng_next(&g) % 4);
    at = m->off[i] + (m->len[i] ? (m->len[i] - 1) * m->st[i] + 1 : 0);
    m->elems += m->len[i];
  }
  m->src.n = at;
  return RJ_OK;
}

/* the table on the device: every tensor's element 0, length and stride */
static rj_status upload_table(rj_ctx *ctx, int dev, mlist *m) {
  rj_multi_entry *e = calloc((size_t)m->n, sizeof *e);
  if (!e) return hr_nomem(ctx);
  size_t eb = (size_t)ir_dtype(m->src.t)->bytes;
  for (int64_t i = 0; i < m->n; i++)
    e[i] = (rj_multi_entry){hr_payload_dev(&m->src) + (uint64_t)m->off[i] * eb, m->len[i], m->st[i],
                            0};
  size_t bytes = (size_t)m->n * sizeof *e;
  rj_status s = rj_device_alloc(ctx, dev, bytes, &m->table);
  if (!s) s = rj_memcpy_htod(ctx, dev, m->table, e, bytes);
  free(e);
  return s;
}

/* every buffer: the layout, src random (NaNs at random elements), dst and total poison */
static rj_status inputs(rj_ctx *ctx, const rj_check_opts *o, const rj_tensor *t, mlist *m) {
  int dev = o->compile.device;
  rj_status s = layout(ctx, o, m);
  int64_t extent = m->src.n;
  if (s || (s = hr_buf_make(ctx, &m->src, dev, t->dtype, extent))) return s;
  if ((s = hr_buf_make(ctx, &m->dst, dev, ir_tensor_result(t), m->n))) return s;
  if ((s = hr_buf_make(ctx, &m->tot, dev, ir_tensor_result(t), 1))) return s;
  hr_rng g;
  hr_rng_seed(&g, o->seed);
  int64_t most = 1; /* prod's draw is scaled by the longest reduction */
  for (int64_t i = 0; i < m->n; i++)
    most = m->len[i] > most ? m->len[i] : most;
  hr_fill_op(&g, t->op, t->dtype, hr_payload(&m->src), extent, most);
  if (extent) hr_fill_nans(&g, t->dtype, hr_payload(&m->src), extent, o->nan_count);
  for (int k = 0; k < 2; k++) {
    m->got[k] = malloc(hr_buf_bytes(&m->dst));
    m->gtot[k] = malloc(hr_buf_bytes(&m->tot));
    if (!m->got[k] || !m->gtot[k]) return hr_nomem(ctx);
  }
  if ((s = hr_buf_up(ctx, &m->src))) return s;
  return upload_table(ctx, dev, m);
}

typedef struct mcall {
  const rj_request *req;
  const rj_options *opt;
  rj_devptr table, dst, total;
} mcall;

static rj_status enqueue(rj_ctx *ctx, void *ud) {
  const mcall *c = ud;
  return rj_reduce_multi(ctx, c->req, c->opt, c->table, c->req->u.tensor.list_count, c->dst,
                         c->total, NULL);
}

/* launch k (0, 1): poisoned outputs up, the launch, both down into got[k] / gtot[k] */
static rj_status launch(rj_ctx *ctx, const rj_check_opts *o, const rj_request *req, mlist *m, int k,
                        rj_check_result *res) {
  mcall c = {req, &o->compile, m->table, hr_payload_dev(&m->dst), 0};
  if (req->u.tensor.list_total) c.total = hr_payload_dev(&m->tot);
  double ms = 0;
  rj_status s = hr_buf_up(ctx, &m->dst);
  if (!s) s = hr_buf_up(ctx, &m->tot);
  if (!s) s = rj_stream_time(ctx, o->compile.device, NULL, enqueue, &c, &ms);
  if (!s) s = rj_memcpy_dtoh(ctx, m->dst.device, m->got[k], m->dst.dev, hr_buf_bytes(&m->dst));
  if (!s) s = rj_memcpy_dtoh(ctx, m->tot.device, m->gtot[k], m->tot.dev, hr_buf_bytes(&m->tot));
  if (k == 0) res->kernel_ms = ms;
  return s;
}

/* tensor i of the list as a 1-D tensor request */
static rj_tensor one_tensor(const rj_tensor *t, int64_t len, int64_t st) {
  rj_tensor x = *t;
  x.list_count = 0;
  x.list_total = 0;
  x.ndim = 1;
  x.shape[0] = len;
  x.has_strides = 1;
  x.strides[0] = st;
  x.naxes = 1;
  x.axes[0] = 0;
  return x;
}

/* the float64 reference of one 1-D tensor of len elements (stride st) at p */
static hr_value reference(const rj_tensor *t, int64_t len, int64_t st, const void *p) {
  rj_tensor x = one_tensor(t, len, st);
  ir_tview v;
  ir_tensor_view(&x, &v);
  hr_value r;
  memset(&r, 0, sizeof r);
  if (hr_fused(&x))
    hr_oracle_fused(&x, &v, p, NULL, NULL, NULL, &r); /* no IR map on a list */
  else
    hr_oracle_tensor(&x, &v, p, NULL, &r);
  return r;
}

/* the total's reference: every element copied into one array */
static rj_status total_ref(rj_ctx *ctx, const rj_tensor *t, const mlist *m, hr_value *r) {
  size_t eb = (size_t)ir_dtype(t->dtype)->bytes;
  char *all = malloc((size_t)(m->elems ? m->elems : 1) * eb), *src = hr_payload(&m->src);
  if (!all) return hr_nomem(ctx);
  int64_t at = 0;
  for (int64_t i = 0; i < m->n; i++)
    for (int64_t j = 0; j < m->len[i]; j++, at++)
      memcpy(all + (size_t)at * eb, src + (size_t)(m->off[i] + j * m->st[i]) * eb, eb);
  *r = reference(t, m->elems, 1, all);
  free(all);
  return RJ_OK;
}

/* the outputs against the reference, the guards, the two launches' bits */
static rj_status verify(rj_ctx *ctx, const rj_tensor *t, mlist *m, rj_check_result *res) {
  rj_dtype rt = ir_tensor_result(t);
  size_t eb = (size_t)ir_dtype(t->dtype)->bytes, rb = (size_t)ir_dtype(rt)->bytes;
  rj_op op = hr_fused(t) && (t->op == RJ_OP_MAX || t->op == RJ_OP_MIN) ? RJ_OP_SUM : t->op;
  const char *got = (const char *)m->got[0] + HR_GUARD * rb;
  for (int64_t i = 0; i < m->n; i++) {
    hr_value r = reference(t, m->len[i], m->st[i], (char *)hr_payload(&m->src) + m->off[i] * eb);
    hr_check_elem(res, op, rt, &r, got, i, "tensor %lld (%lld elements, stride %lld)", (long long)i,
                  (long long)m->len[i], (long long)m->st[i]);
  }
  if (t->list_total) {
    hr_value r;
    rj_status s = total_ref(ctx, t, m, &r);
    if (s) return s;
    hr_check_elem(res, op, rt, &r, (const char *)m->gtot[0] + HR_GUARD * rb, 0,
                  "total (%lld elements)", (long long)m->elems);
  }
  int64_t hits = hr_guard_hits(rt, m->got[0], m->n) + hr_guard_hits(rt, m->gtot[0], 1);
  hr_outside(res, hits, "%lld guard elements around dst and total were written", (long long)hits);
  if (memcmp(m->got[0], m->got[1], hr_buf_bytes(&m->dst)) ||
      memcmp(m->gtot[0], m->gtot[1], hr_buf_bytes(&m->tot))) {
    res->wrong++;
    hr_note(res, "deterministic: two launches on the same list gave different bits");
  }
  res->ok = res->wrong == 0 && res->outside_written == 0;
  return RJ_OK;
}

static void release(rj_ctx *ctx, mlist *m, rj_status s) {
  hr_buf_free(ctx, &m->src, s);
  hr_buf_free(ctx, &m->dst, s);
  hr_buf_free(ctx, &m->tot, s);
  hr_free(ctx, m->src.device, m->table, s);
  for (int k = 0; k < 2; k++) {
    free(m->got[k]);
    free(m->gtot[k]);
  }
  free(m->len);
  free(m->st);
  free(m->off);
}

rj_status hr_check_multi(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, rj_kernel *k,
                         rj_check_result *res) {
  (void)k; /* rj_reduce_multi finds it in the cache */
  mlist m = {.n = req->u.tensor.list_count};
  rj_status s = inputs(ctx, o, &req->u.tensor, &m);
  for (int run = 0; run < 2 && !s; run++)
    s = launch(ctx, o, req, &m, run, res);
  if (!s) s = verify(ctx, &req->u.tensor, &m, res);
  release(ctx, &m, s);
  return s;
}

typedef struct mbench {
  mcall c;
  int device;
} mbench;

static rj_status bench_run(rj_ctx *ctx, void *ud, int i, double *ms) {
  (void)i;
  mbench *b = ud;
  return rj_stream_time(ctx, b->device, NULL, enqueue, &b->c, ms);
}

rj_status hr_bench_multi(rj_ctx *ctx, const rj_request *req, const rj_check_opts *o, rj_kernel *k,
                         rj_bench_result *res) {
  (void)k;
  const rj_tensor *t = &req->u.tensor;
  mlist m = {.n = t->list_count};
  rj_status s = inputs(ctx, o, t, &m);
  mbench b = {{req, &o->compile, m.table, hr_payload_dev(&m.dst), 0}, o->compile.device};
  if (t->list_total) b.c.total = hr_payload_dev(&m.tot);
  enum { WARM = 5, RUNS = 30 };
  double ms[RUNS];
  double bytes = (double)m.elems * ir_dtype(t->dtype)->bytes +
                 (double)(m.n + 1) * ir_dtype(ir_tensor_result(t))->bytes;
  if (!s) s = hr_bench_loop(ctx, WARM, RUNS, bench_run, &b, ms, bytes, res);
  release(ctx, &m, s);
  return s;
}
