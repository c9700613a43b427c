/* The context's treduce state: what it keeps on each device between calls, streams, events and
 * staging buffers, and the ring's counter base and last end.  The state hangs off the
 * core's one slot for this layer, ctx->treduce, made on first use with ctx->treduce_free.  Creating
 * a stream or an event, or allocating a staging buffer, costs the host microseconds to milliseconds
 * per call; a context makes each once, in the device's primary context, and rj_ctx_free drains and
 * releases them.  Staging buffers above JIT_STAGE_KEEP are not kept (a 1 GiB buffer is not worth
 * holding for the next call): the caller frees those. A context is used by one thread at a time,
 * and a call's work runs on the context's streams in the order calls were made (an asynchronous
 * call's too; a ring call also waits for the previous ring call's end, ring.c), so a resource is
 * never used by two calls at once; a kept buffer that must grow is freed only after every device's
 * streams drain (a ring hop stores into the next GPU's inboxes), and rj_ctx_free drains them all
 * before it frees anything. */
#include "treduce.h"

#include <stdlib.h>
#include <string.h>

static void state_free(rj_ctx *ctx);

jit_treduce_state *jit_treduce_state_of(rj_ctx *ctx) {
  if (ctx->treduce) return ctx->treduce;
  jit_treduce_state *st = calloc(1, sizeof *st);
  if (!st) return NULL;
  st->ring_end_dev = -1;
  ctx->treduce = st;
  ctx->treduce_free = state_free;
  return st;
}

static jit_devres *devres(rj_ctx *ctx, int dev) {
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  if (!st) return NULL;
  for (jit_devres *d = st->devres; d; d = d->next)
    if (d->dev == dev) return d;
  jit_devres *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  d->dev = dev;
  d->next = st->devres;
  st->devres = d;
  return d;
}

/* Stream or event i of dev, made on first use. */
static rj_status cached(rj_ctx *ctx, rt_cuda *rt, int dev, bool stream, int i, void **out) {
  jit_devres *d = devres(ctx, dev);
  if (!d) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  void **slot = stream ? &d->stream[i] : &d->event[i];
  if (!*slot) {
    rj_status s = stream ? rt_stream_new(rt, slot, &ctx->err) : rt_event_new(rt, slot, &ctx->err);
    if (s) return s;
  }
  *out = *slot;
  return RJ_OK;
}

void *jit_dev_kept(rj_ctx *ctx, int dev, bool stream, int i) {
  const jit_treduce_state *st = ctx->treduce;
  for (const jit_devres *d = st ? st->devres : NULL; d; d = d->next)
    if (d->dev == dev) return stream ? d->stream[i] : d->event[i];
  return NULL;
}

rj_status jit_dev_stream(rj_ctx *ctx, rt_cuda *rt, int dev, int i, void **out) {
  return cached(ctx, rt, dev, true, i, out);
}

rj_status jit_dev_event(rj_ctx *ctx, rt_cuda *rt, int dev, int i, void **out) {
  return cached(ctx, rt, dev, false, i, out);
}

rj_status jit_dev_stage(rj_ctx *ctx, rt_cuda *rt, int dev, int b, size_t bytes, void *ordered,
                        uint64_t *out, bool *temporary) {
  *temporary = bytes > JIT_STAGE_KEEP;
  if (*temporary)
    return ordered ? rt_alloc_async(rt, bytes, ordered, out, &ctx->err)
                   : rt_alloc(rt, bytes, out, &ctx->err);
  return jit_dev_keep(ctx, rt, dev, b, bytes, out);
}

rj_status jit_dev_keep(rj_ctx *ctx, rt_cuda *rt, int dev, int b, size_t bytes, uint64_t *out) {
  jit_devres *d = devres(ctx, dev);
  if (!d) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (d->stage_bytes[b] < bytes) {
    /* the old buffer may still be in use by an asynchronous call, from any GPU (the ring's
     * inboxes are stored into by the previous hop's): drain every device's streams */
    rj_status s = jit_devres_sync(ctx);
    if (s) return s;
    rt_free(rt, d->stage[b]);
    d->stage[b] = 0;
    d->stage_bytes[b] = 0;
    s = rt_alloc(rt, bytes, &d->stage[b], &ctx->err);
    if (s) return s;
    d->stage_bytes[b] = bytes;
  }
  *out = d->stage[b];
  return RJ_OK;
}

rj_status jit_dev_flags(rj_ctx *ctx, rt_cuda *rt, int dev, uint64_t *out) {
  jit_devres *d = devres(ctx, dev);
  if (!d) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (!d->flags) {
    void *zero = calloc(1, JIT_DEV_FLAG_BYTES);
    if (!zero) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
    rj_status s = rt_alloc(rt, JIT_DEV_FLAG_BYTES, &d->flags, &ctx->err);
    if (!s) s = rt_htod(rt, d->flags, zero, JIT_DEV_FLAG_BYTES, &ctx->err);
    free(zero);
    if (s) {
      rt_free(rt, d->flags);
      d->flags = 0;
      return s;
    }
  }
  *out = d->flags;
  return RJ_OK;
}

rj_status jit_dev_status(rj_ctx *ctx, rt_cuda *rt, int dev, jit_devres **out) {
  jit_devres *d = devres(ctx, dev);
  if (!d) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (!d->status) {
    void *p = NULL;
    rj_status s = rt_host_alloc(rt, 2 * sizeof(uint64_t), &p, &ctx->err);
    if (s) return s;
    d->status = p;
  }
  *out = d;
  return RJ_OK;
}

rj_status jit_devres_sync(rj_ctx *ctx) {
  rj_status first = RJ_OK;
  const jit_treduce_state *st = ctx->treduce;
  for (jit_devres *d = st ? st->devres : NULL; d; d = d->next)
    for (int i = 0; i < JIT_DEV_STREAMS; i++) {
      ir_err ignored = {0}, *e = first ? &ignored : &ctx->err; /* the first failure's message */
      rj_status s = d->stream[i] ? rt_enter(ctx->cuda, d->dev, e) : RJ_OK;
      if (d->stream[i] && !s) {
        s = rt_stream_sync(ctx->cuda, d->stream[i], e);
        rt_leave(ctx->cuda);
      }
      first = first ? first : s;
    }
  return first;
}

rj_status jit_tr_device_count(rj_ctx *ctx, rt_cuda *rt, int *n) {
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  if (!st) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (!st->ndev) {
    rj_status s = rt_device_count(rt, &st->ndev, &ctx->err);
    if (s) return s;
  }
  *n = st->ndev;
  return RJ_OK;
}

rj_status jit_tr_peer(rj_ctx *ctx, rt_cuda *rt, int dev, int peer, int *can) {
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  if (!st) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (dev < 0 || dev >= RJ_TREDUCE_MAX_SLICES || peer < 0 || peer >= RJ_TREDUCE_MAX_SLICES)
    return ir_fail(&ctx->err, RJ_ENODEV, "device: GPU %d or %d is beyond the %d redjit handles",
                   dev, peer, RJ_TREDUCE_MAX_SLICES);
  uint64_t bit = (uint64_t)1 << peer;
  *can = (st->peer_on[dev] & bit) != 0;
  if (*can || (st->peer_no[dev] & bit)) return RJ_OK; /* asked before */
  rj_status s = rt_peer_can_access(rt, dev, peer, can, &ctx->err);
  if (s) return s;
  if (!*can) {
    st->peer_no[dev] |= bit;
    return RJ_OK;
  }
  if ((s = rt_enter(rt, dev, &ctx->err))) return s;
  s = rt_peer_enable(rt, peer, &ctx->err);
  rt_leave(rt);
  if (!s) st->peer_on[dev] |= bit;
  return s;
}

const char *jit_tr_gpu_name(rj_ctx *ctx, rt_cuda *rt, int dev) {
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  if (!st || dev < 0 || dev >= RJ_TREDUCE_MAX_SLICES) return NULL;
  if (!st->name[dev]) {
    char name[256] = "";
    ir_err ignored = {0};
    if (rt_device_name(rt, dev, name, (int)sizeof name, &ignored)) return NULL;
    st->name[dev] = strdup(name);
  }
  return st->name[dev];
}

const char *jit_tr_gpu_name_quiet(rj_ctx *ctx, int dev) {
  ir_err saved = ctx->err;
  rt_cuda *rt = NULL;
  int n = 0;
  const char *name = NULL;
  if (!jit_cuda(ctx, &rt) && !jit_tr_device_count(ctx, rt, &n) && dev >= 0 && dev < n)
    name = jit_tr_gpu_name(ctx, rt, dev);
  ctx->err = saved;
  return name;
}

/* At least `bytes` in *p (of *have bytes), grown (never shrunk); NULL when out of memory. */
static void *grown(rj_ctx *ctx, void **p, size_t *have, size_t bytes) {
  if (*have < bytes) {
    size_t grow = bytes < 4096 ? 4096 : bytes;
    void *q = malloc(grow); /* the old content is not kept */
    if (q) {
      free(*p);
      *p = q;
      *have = grow;
    }
  }
  if (*have < bytes) {
    ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
    return NULL;
  }
  return *p;
}

void *jit_tr_scratch(rj_ctx *ctx, size_t bytes) {
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  if (st) return grown(ctx, &st->scratch, &st->scratch_bytes, bytes);
  ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  return NULL;
}

void *jit_tr_scratch_call(rj_ctx *ctx, size_t bytes) {
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  if (st) return grown(ctx, &st->scratch_call, &st->scratch_call_bytes, bytes);
  ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  return NULL;
}

/* The state's host memory: tables, names, the memo, the scratch. */
static void state_host_free(jit_treduce_state *st) {
  free(st->table);
  free(st->builtin);
  for (int d = 0; d < RJ_TREDUCE_MAX_SLICES; d++)
    free(st->name[d]);
  free(st->memo.bufs);
  free(st->memo.src);
  free(st->memo.dev);
  free(st->memo.split_plan);
  free(st->scratch);
  free(st->scratch_call);
}

/* ctx->treduce_free: drains and releases every device's resources, then the state. */
static void state_free(rj_ctx *ctx) {
  jit_treduce_state *st = ctx->treduce;
  /* every device drained before anything is freed: a ring hop on one GPU stores into the next
   * one's inboxes and the previous one's counters */
  ir_err saved = ctx->err;
  if (ctx->cuda) jit_devres_sync(ctx);
  ctx->err = saved;
  for (jit_devres *d = st->devres, *n; d; d = n) {
    n = d->next;
    ir_err e = {0};
    if (ctx->cuda && rt_enter(ctx->cuda, d->dev, &e) == RJ_OK) {
      for (int i = 0; i < JIT_DEV_STREAMS; i++)
        if (d->stream[i]) rt_stream_free(ctx->cuda, d->stream[i]);
      for (int i = 0; i < JIT_DEV_EVENTS; i++)
        rt_event_free(ctx->cuda, d->event[i]);
      for (int b = 0; b < JIT_DEV_STAGES; b++)
        rt_free(ctx->cuda, d->stage[b]);
      rt_free(ctx->cuda, d->flags);
      rt_host_free(ctx->cuda, d->status);
      rt_leave(ctx->cuda);
    }
    free(d);
  }
  state_host_free(st);
  free(st);
  ctx->treduce = NULL;
  ctx->treduce_free = NULL;
}
