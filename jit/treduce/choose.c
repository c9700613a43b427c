/* The automatic path: which tables auto reads (the context's own, else REDJIT_TREDUCE_TABLE's file,
 * else treduce-paths.txt beside the kernel cache; then the built-in one), the choice among the
 * paths that can run the request, and the public calls that set, show, save and explain them. */
#include "treduce.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TABLE_FILE "treduce-paths.txt" /* its name in the kernel cache's folder */

enum { TABLE_AUTO, TABLE_OWN, TABLE_NONE };

/* A table read from file into *out (malloc'd); on failure the note says why it is not used. */
static void resolve_file(jit_treduce_state *st, const char *file, const char *from) {
  jit_tr_table *t = malloc(sizeof *t);
  ir_err e = {0};
  if (t && !jit_tr_table_read(file, t, &e)) {
    st->table = t;
    return;
  }
  free(t);
  snprintf(st->table_note, sizeof st->table_note, "%s not read: %s", from,
           t ? e.msg : "out of memory");
}

/* table_mode TABLE_AUTO: the environment's table, else the cache folder's (read once). */
static void resolve(rj_ctx *ctx, jit_treduce_state *st) {
  st->resolved = true;
  const char *env = getenv("REDJIT_TREDUCE_TABLE");
  if (env && strcmp(env, "off") == 0) {
    st->builtin_off = true;
    return;
  }
  if (env && strcmp(env, "default") == 0) return;
  if (env && env[0]) return resolve_file(st, env, "REDJIT_TREDUCE_TABLE");
  if (!jit_disk_on(ctx)) return;
  char file[1200];
  snprintf(file, sizeof file, "%s/%s", ctx->disk.dir, TABLE_FILE);
  if (access(file, F_OK) == 0) resolve_file(st, file, "the cache folder's " TABLE_FILE);
}

/* The tables auto reads now, first to last, into t[2] (NULL where none). */
static void tables(rj_ctx *ctx, jit_treduce_state *st, const jit_tr_table *t[2]) {
  if (st->table_mode == TABLE_AUTO && !st->resolved) resolve(ctx, st);
  t[0] = st->table_mode != TABLE_NONE ? st->table : NULL;
  t[1] = NULL;
  if (st->table_mode == TABLE_NONE || st->builtin_off) return;
  if (!st->builtin && (st->builtin = malloc(sizeof *st->builtin))) {
    ir_err e = {0};
    if (jit_tr_table_default(st->builtin, &e)) { /* cannot happen: tests parse it */
      free(st->builtin);
      st->builtin = NULL;
    }
  }
  t[1] = st->builtin;
}

/* The paths auto may take for req (bit 1 << path): peer always (it stages the ranks it cannot
 * read); split and split-equal on 2 or more GPUs; the ring where its plan can run the request.
 * These give the peer path's bits.  Never staged by choice: it folds a float sum's staged ranks
 * after the others (other bits), and the peer path stages what it must. */
static unsigned eligible(const rj_request *req, const int *dev, int G) {
  unsigned m = 1u << RJ_TREDUCE_PEER;
  if (G >= 2) m |= 1u << RJ_TREDUCE_SPLIT | 1u << RJ_TREDUCE_SPLIT_EQUAL;
  int hops = 0;
  int64_t chunks = 0;
  char why[128];
  if (jit_treduce_ring_facts(req, dev, &hops, &chunks, why, sizeof why) >= 0)
    m |= 1u << RJ_TREDUCE_RING;
  return m;
}

/* Whether table t may be read for a root GPU named gpu (NULL: unknown, read); else a note. */
static bool same_gpu(const jit_tr_table *t, const char *gpu, char *note, size_t n) {
  if (!gpu || strcmp(t->device, "any") == 0 || strcmp(t->device, gpu) == 0) return true;
  snprintf(note, n, "; table %s not read: measured on %s, the root's GPU is %s", t->origin,
           t->device, gpu);
  return false;
}

rj_treduce_path jit_treduce_auto(rj_ctx *ctx, const rj_request *req, const int *dev,
                                 const char *gpu, char *why, size_t n) {
  const rj_treduce *tr = &req->u.treduce;
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  int gpus[RJ_TREDUCE_MAX_SLICES];
  int G = jit_tr_gpus(tr, dev, gpus, NULL);
  ir_treduce_geom g;
  ir_treduce_facts(tr, &g);
  double bytes = (double)g.numel * ir_dtype(tr->dtype)->bytes;
  const jit_tr_table *t[2] = {NULL, NULL};
  if (st) tables(ctx, st, t);
  char note[400] = "";
  if (st && st->table_note[0]) snprintf(note, sizeof note, "; %s", st->table_note);
  rj_treduce_path take;
  unsigned paths = G > 0 && bytes > 0 && (t[0] || t[1]) ? eligible(req, dev, G) : 0;
  for (int i = 0; paths && i < 2; i++)
    if (t[i] && same_gpu(t[i], gpu, note, sizeof note) &&
        jit_tr_table_pick(t[i], tr->ranks, G, bytes, paths, &take, why, n)) {
      size_t k = strlen(why);
      snprintf(why + k, n - k, "%s", note); /* a table before it that was not read */
      return take;
    }
  take = jit_treduce_model(req, dev, why, n);
  size_t k = strlen(why);
  if (!t[0] && !t[1] && !note[0])
    snprintf(why + k, n - k, "; no path table");
  else if (G > 1 && bytes > 0 && !note[0])
    snprintf(why + k, n - k, "; no table has %d ranks on %d GPU%s at this size", tr->ranks, G,
             G > 1 ? "s" : "");
  else
    snprintf(why + k, n - k, "%s", note);
  return take;
}

/* ---- the public calls */

/* t (malloc'd, or NULL) becomes the context's table in `mode`. */
static rj_status own(rj_ctx *ctx, jit_tr_table *t, int mode) {
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  if (!st) {
    free(t);
    return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  }
  free(st->table);
  st->table = t;
  st->table_mode = mode;
  st->resolved = false;
  st->builtin_off = false;
  st->table_note[0] = 0;
  st->table_gen++;
  return RJ_OK;
}

rj_status jit_tr_table_own(rj_ctx *ctx, jit_tr_table *t) {
  return own(ctx, t, TABLE_OWN);
}

/* A table given to the context must be of this machine's GPUs (where there is one to ask): its
 * device "any" or GPU 0's name. */
static rj_status same_machine(rj_ctx *ctx, const jit_tr_table *t) {
  const char *gpu = jit_tr_gpu_name_quiet(ctx, 0);
  if (!gpu || strcmp(t->device, "any") == 0 || strcmp(t->device, gpu) == 0) return RJ_OK;
  return ir_fail(&ctx->err, RJ_EINVAL,
                 "table %s: measured on %s, but this machine's GPU 0 is %s (a table of another "
                 "GPU is not read; \"device any\" is read on every GPU)",
                 t->origin, t->device, gpu);
}

/* t (malloc'd, parsed with status s) becomes the context's own table, if it is this machine's. */
static rj_status take_table(rj_ctx *ctx, jit_tr_table *t, rj_status s) {
  if (!s) s = same_machine(ctx, t);
  if (!s) return own(ctx, t, TABLE_OWN);
  free(t);
  return s;
}

RJ_API rj_status rj_treduce_table_load(rj_ctx *ctx, const char *file) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  if (!file || !file[0]) return jit_done(ctx, own(ctx, NULL, file ? TABLE_NONE : TABLE_AUTO));
  jit_tr_table *t = malloc(sizeof *t);
  if (!t) return jit_done(ctx, ir_fail(&ctx->err, RJ_ENOMEM, "out of memory"));
  return jit_done(ctx, take_table(ctx, t, jit_tr_table_read(file, t, &ctx->err)));
}

RJ_API rj_status rj_treduce_table_set(rj_ctx *ctx, const char *text, size_t len,
                                      const char *origin) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, text, "text");
  memset(&ctx->err, 0, sizeof ctx->err);
  jit_tr_table *t = malloc(sizeof *t);
  if (!t) return jit_done(ctx, ir_fail(&ctx->err, RJ_ENOMEM, "out of memory"));
  char name[300];
  snprintf(name, sizeof name, "\"%.280s\"", origin ? origin : "memory");
  return jit_done(ctx, take_table(ctx, t, jit_tr_table_parse(text, len, name, t, &ctx->err)));
}

/* The first table auto reads now (NULL: none). */
static const jit_tr_table *first_table(rj_ctx *ctx) {
  jit_treduce_state *st = jit_treduce_state_of(ctx);
  const jit_tr_table *t[2] = {NULL, NULL};
  if (st) tables(ctx, st, t);
  return t[0] ? t[0] : t[1];
}

RJ_API rj_status rj_treduce_table_text(rj_ctx *ctx, const char **text) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, text, "text");
  memset(&ctx->err, 0, sizeof ctx->err);
  const jit_tr_table *t = first_table(ctx);
  char *out = t ? jit_tr_table_format(t) : strdup("");
  if (!out) return jit_done(ctx, ir_fail(&ctx->err, RJ_ENOMEM, "out of memory"));
  free(ctx->text);
  ctx->text = out;
  *text = out;
  return jit_done(ctx, RJ_OK);
}

/* Writes t's text to file, through a temporary file renamed over it. */
static rj_status write_table(rj_ctx *ctx, const jit_tr_table *t, const char *file) {
  char *text = jit_tr_table_format(t), tmp[1300];
  if (!text) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", file, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fputs(text, f) >= 0;
  ok = f && fclose(f) == 0 && ok;
  free(text);
  if (ok && rename(tmp, file) == 0) return RJ_OK;
  int err = errno;
  remove(tmp);
  return ir_fail(&ctx->err, RJ_EINVAL, "table: cannot write \"%s\" (%s)", file, strerror(err));
}

RJ_API rj_status rj_treduce_table_save(rj_ctx *ctx, const char *file) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  const jit_tr_table *t = first_table(ctx);
  if (!t)
    return jit_done(ctx, ir_fail(&ctx->err, RJ_EINVAL,
                                 "table: auto reads no table (rj_treduce_table_load \"\", or "
                                 "REDJIT_TREDUCE_TABLE=off): nothing to save"));
  char path[1200];
  if (!file) {
    if (!jit_disk_on(ctx) || ctx->disk.readonly)
      return jit_done(ctx, ir_fail(&ctx->err, RJ_EUNSUPPORTED,
                                   "table: the kernel cache's folder is %s; name a file",
                                   jit_disk_on(ctx) ? "read-only" : "off"));
    snprintf(path, sizeof path, "%s/%s", ctx->disk.dir, TABLE_FILE);
    file = path;
  }
  return jit_done(ctx, write_table(ctx, t, file));
}

RJ_API rj_status rj_treduce_choose(rj_ctx *ctx, const rj_request *req, const int *rank_device,
                                   rj_treduce_path *path, const char **why) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, req, "req");
  JIT_NEED(ctx, rank_device, "rank_device");
  JIT_NEED(ctx, path, "path");
  JIT_NEED(ctx, why, "why");
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_status s = jit_validate(ctx, req);
  if (!s && req->kind != RJ_KIND_TREDUCE)
    s = ir_fail(&ctx->err, RJ_EINVAL, "kind: %s, paths are chosen for treduce requests",
                ir_kind_name(req->kind));
  for (int r = 0; !s && r < req->u.treduce.ranks; r++)
    if (rank_device[r] < 0 || rank_device[r] >= RJ_TREDUCE_MAX_SLICES)
      s = ir_fail(&ctx->err, RJ_EINVAL, "rank_device[%d]: %d is outside 0..%d", r, rank_device[r],
                  RJ_TREDUCE_MAX_SLICES - 1);
  jit_treduce_state *st = s ? NULL : jit_treduce_state_of(ctx);
  if (!s && !st) s = ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  if (s) return jit_done(ctx, s);
  const char *gpu = jit_tr_gpu_name_quiet(ctx, rank_device[req->u.treduce.root]);
  *path = jit_treduce_auto(ctx, req, rank_device, gpu, st->why, sizeof st->why);
  *why = st->why;
  return jit_done(ctx, RJ_OK);
}

RJ_API rj_status rj_treduce_plan_make(rj_ctx *ctx, const rj_request *req, const int *rank_device,
                                      rj_treduce_path path, rj_treduce_plan *out) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, req, "req");
  JIT_NEED(ctx, rank_device, "rank_device");
  JIT_NEED(ctx, out, "plan");
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_status s = jit_treduce_plan(ctx, req, rank_device, path, out);
  if (!s && path == RJ_TREDUCE_AUTO) { /* what the call takes: the tables', else the model's */
    char why[400];
    const char *gpu = jit_tr_gpu_name_quiet(ctx, rank_device[req->u.treduce.root]);
    out->path = jit_treduce_auto(ctx, req, rank_device, gpu, why, sizeof why);
  }
  return jit_done(ctx, s);
}
