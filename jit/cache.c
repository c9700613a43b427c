/* The kernel cache: the key text of a request, and the context's compiled kernels, in a list
 * and a hash table by the key's 64-bit hash (the text
 * decides on a hash match), which grows to keep a bucket at one kernel on average. */
#include "jit.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jit_key_tail(char *buf, size_t n, const ir_target *tg, int ptx_asked, int sms) {
  snprintf(buf, n, "|%s|%d%s", tg->name, ptx_asked, tg->emulated ? "|emulated" : "");
  size_t used = strlen(buf);
  if (sms) snprintf(buf + used, n - used, "|sms%d", sms);
}

rj_status jit_cache_key(rj_ctx *ctx, const rj_request *req, const ir_target *tg,
                        const rj_options *opt, const pass_plan *plan, char **key) {
  char *canon = NULL, tail[64];
  /* op custom: the canonical text (its combine's IR whole) even behind a runtime-size plan key;
   * kind treduce's plan key holds the rest of the request, so there the combine alone (one kernel
   * for every count) */
  bool custom = ir_request_combine(req) != NULL; /* op custom, or a tensor's caller map */
  rj_status s = RJ_OK;
  if (!plan->key[0] || (custom && req->kind != RJ_KIND_TREDUCE))
    s = ir_canonical(req, &canon, &ctx->err);
  else if (custom)
    s = ir_combine_canonical(req, &canon, &ctx->err);
  if (s) return s;
  const char *head = plan->key[0] ? plan->key : canon, *more = plan->key[0] && custom ? canon : "";
  jit_key_tail(tail, sizeof tail, tg, opt ? opt->ptx_version : 0, plan->sms);
  *key = malloc(strlen(head) + strlen(more) + strlen(tail) + 1);
  if (*key) {
    strcpy(*key, head);
    strcat(*key, more);
    strcat(*key, tail);
  }
  free(canon);
  return *key ? RJ_OK : ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
}

#define JIT_MAX_KERNELS 4096 /* the default bound of the kernels the cache owns */

static void evict(rj_ctx *ctx, rj_kernel *keep);

rj_kernel *jit_cache_find(rj_ctx *ctx, const char *key) {
  if (!ctx->nbuckets) return NULL;
  uint64_t h = jit_hash64(key, strlen(key), 0);
  for (rj_kernel *k = ctx->table[h & (ctx->nbuckets - 1)]; k; k = k->chain)
    if (k->hash == h && strcmp(k->key, key) == 0) return k;
  return NULL;
}

/* Twice the buckets (at least 64), every kernel rehashed; false when out of memory (the table
 * stays as it was, only longer chains). */
static bool table_grow(rj_ctx *ctx) {
  size_t n = ctx->nbuckets ? 2 * ctx->nbuckets : 64;
  rj_kernel **t = calloc(n, sizeof *t);
  if (!t) return false;
  for (size_t i = 0; i < ctx->nbuckets; i++)
    for (rj_kernel *k = ctx->table[i], *next; k; k = next) {
      next = k->chain;
      k->chain = t[k->hash & (n - 1)];
      t[k->hash & (n - 1)] = k;
    }
  free(ctx->table);
  ctx->table = t;
  ctx->nbuckets = n;
  return true;
}

void jit_kernel_free(rj_kernel *k) {
  if (!k) return;
  free(k->cubin);
  free(k->key);
  free(k->ptx);
  free(k->ll);
  free(k->ll_opt);
  free(k->src);
  free(k->custom_bc);
  free(k);
}

/* ---------------------------------------------------------------- the bound */

/* REDJIT_CACHE_MAX_KERNELS: a decimal count, 0 for no bound; anything else is the default. */
static long long max_kernels_of(const char *env) {
  if (!env || !env[0]) return JIT_MAX_KERNELS;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(env, &end, 10);
  return errno || end == env || *end || v < 0 ? JIT_MAX_KERNELS : v;
}

long long jit_cache_bound(rj_ctx *ctx) {
  if (!ctx->max_set) {
    ctx->max_kernels = max_kernels_of(getenv("REDJIT_CACHE_MAX_KERNELS"));
    ctx->max_set = true;
  }
  return ctx->max_kernels;
}

void jit_cache_touch(rj_ctx *ctx, rj_kernel *k) {
  k->used = ++ctx->tick;
}

void jit_cache_hold(rj_ctx *ctx, int delta) {
  ctx->evict_hold += delta;
}

static void memo_forget(rj_ctx *ctx, const rj_kernel *k);

/* v out of the list, its bucket and the memo (its key no longer finds it). */
static void cache_remove(rj_ctx *ctx, rj_kernel *v) {
  for (rj_kernel **p = &ctx->kernels; *p; p = &(*p)->next)
    if (*p == v) {
      *p = v->next;
      break;
    }
  for (rj_kernel **p = ctx->nbuckets ? &ctx->table[v->hash & (ctx->nbuckets - 1)] : NULL; p && *p;
       p = &(*p)->chain)
    if (*p == v) {
      *p = v->chain;
      break;
    }
  memo_forget(ctx, v);
  ctx->nkernels--;
}

/* While the cache owns more kernels than its bound, the least recently used one other than keep
 * goes: out of the cache onto ctx->evicted, which evict.c empties at the end of the call (no one
 * can reach an evicted kernel but the call that inserted keep).  Pinned kernels are not counted
 * and never go: the caller holds them.  The walk for the oldest is linear in the kernels held,
 * on a miss only (a compile or a disk read costs far more). */
static void evict(rj_ctx *ctx, rj_kernel *keep) {
  long long max = jit_cache_bound(ctx);
  /* a kernel rj_compile is about to pin is not the cache's: it is not counted */
  long long going = keep && ctx->pin_keep && !keep->pins ? 1 : 0;
  while (max && !ctx->evict_hold && ctx->nkernels - ctx->npinned - going > max) {
    rj_kernel *lru = NULL;
    for (rj_kernel *k = ctx->kernels; k; k = k->next)
      if (!k->pins && k != keep && (!lru || k->used < lru->used)) lru = k;
    if (!lru) return;
    cache_remove(ctx, lru);
    ctx->memory_evictions++;
    lru->next = ctx->evicted;
    ctx->evicted = lru;
  }
}

void jit_cache_evict(rj_ctx *ctx) {
  evict(ctx, NULL);
}

void jit_cache_insert(rj_ctx *ctx, rj_kernel *k) {
  k->hash = jit_hash64(k->key, strlen(k->key), 0);
  if ((size_t)ctx->nkernels >= ctx->nbuckets && !table_grow(ctx) && !ctx->nbuckets) {
    k->chain = NULL; /* no table at all: kept in the list only (freed with the context) */
  } else {
    size_t b = k->hash & (ctx->nbuckets - 1);
    k->chain = ctx->table[b];
    ctx->table[b] = k;
  }
  ctx->nkernels++;
  k->loaded_on = -1;
  k->next = ctx->kernels;
  ctx->kernels = k;
  jit_cache_touch(ctx, k);
  evict(ctx, k);
}

void jit_cache_add(rj_ctx *ctx, rj_kernel *k) {
  ctx->compiles++;
  jit_cache_insert(ctx, k);
}

static uint64_t mix(uint64_t h) {
  h ^= h >> 32;
  h *= 0xd6e8feb86659fd93ull;
  h ^= h >> 32;
  return h;
}

uint64_t jit_hash64(const void *p, size_t n, uint64_t seed) {
  const unsigned char *b = p;
  uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ull), w;
  for (; n >= 8; n -= 8, b += 8) {
    memcpy(&w, b, 8);
    h = (h ^ mix(w)) * 0xff51afd7ed558ccdull;
  }
  w = 0;
  memcpy(&w, b, n);
  return mix(h ^ mix(w ^ n));
}

/* ---------------------------------------------------------------- by request bytes */

/* A request as it arrived, with the options that decide its kernel, and what the pipeline made
 * of it: a repeated request finds its kernel and plan without validation, dispatch, planning or
 * key text (rj_compile, rj_reduce and every other call go through it).  Equal bytes are the same
 * request; unequal bytes (padding, another spelling of one request) take the pipeline, which
 * finds the kernel by its key.  The bytes are the request's header and its kind's member of the
 * union; op custom's combine.ir and combine.text are left out (zeroed in the copy keyed on):
 * its IR text is hashed and compared instead, so that a buffer given new text at the same
 * address is another request, and equal text at another address the same one. */
#define JIT_MEMO_SLOTS 1024 /* direct-mapped: a collision replaces the slot */
typedef struct jit_memo {
  uint64_t hash;
  rj_request req;   /* op custom: combine.ir and combine.text zeroed */
  const char *text; /* op custom: the IR text, the kernel's own copy (k->req's); else NULL */
  char target[32];
  int device, ptx_version, emulate;
  int sms; /* rj_options.sm_count */
  rj_kernel *k;
  pass_plan plan;
} jit_memo;

/* The bytes of req that decide its kernel: its header and its kind's member of the union. */
static size_t memo_len(const rj_request *req) {
  size_t head = offsetof(rj_request, u);
  switch (req->kind) {
  case RJ_KIND_TILE:
    return head + sizeof req->u.tile;
  case RJ_KIND_SUBGROUP:
    return head + sizeof req->u.subgroup;
  case RJ_KIND_TENSOR:
    return head + sizeof req->u.tensor;
  case RJ_KIND_TREDUCE:
    return head + sizeof req->u.treduce;
  }
  return sizeof *req;
}

/* What the memo keys req on, into *bytes: req itself, or for op custom a copy in *norm with
 * combine.ir and combine.text zeroed and *text its IR text (NULL for the other ops).  False for a
 * request of op custom without text. */
static bool memo_bytes(const rj_request *req, rj_request *norm, const rj_request **bytes,
                       const char **text) {
  *bytes = req;
  *text = NULL;
  if (!ir_request_combine(req)) return true;
  memcpy(norm, req, memo_len(req));
  rj_combine *c = ir_request_combine_mut(norm);
  if (!c || !c->ir) return false;
  *text = c->ir;
  c->ir = NULL;
  c->text = 0;
  *bytes = norm;
  return true;
}

/* The memo of (req, opt) without its kernel and plan (*bytes, *text: memo_bytes'); false for
 * what is never memoised (a request of another struct size, a long target name, op custom
 * without text). */
static bool memo_key(const rj_request *req, const rj_options *opt, jit_memo *m, rj_request *norm,
                     const rj_request **bytes, const char **text) {
  const char *t = opt && opt->target ? opt->target : "auto";
  if (!req || req->struct_size != sizeof *req || strlen(t) >= sizeof m->target ||
      !memo_bytes(req, norm, bytes, text))
    return false;
  memset(m->target, 0, sizeof m->target);
  strcpy(m->target, t);
  m->device = opt ? opt->device : 0;
  m->ptx_version = opt ? opt->ptx_version : 0;
  m->emulate = opt && opt->struct_size >= offsetof(rj_options, emulate_packed) + sizeof(int)
                   ? opt->emulate_packed
                   : 0;
  m->sms =
      opt && opt->struct_size >= offsetof(rj_options, sm_count) + sizeof(int) ? opt->sm_count : 0;
  uint64_t seed = jit_hash64(m->target, sizeof m->target, 0) ^ (uint64_t)m->device << 32 ^
                  (uint64_t)m->ptx_version << 8 ^ (uint64_t)m->emulate ^ (uint64_t)m->sms << 40;
  if (*text) seed = jit_hash64(*text, strlen(*text), seed);
  m->hash = jit_hash64(*bytes, memo_len(req), seed);
  return true;
}

/* op custom: m's combine, its text the kernel's copy, is req's (ir_combine_equal: by text) */
static bool same_combine(const jit_memo *m, const rj_request *req) {
  rj_combine a = *ir_request_combine(&m->req);
  a.ir = m->text;
  return ir_combine_equal(&a, ir_request_combine(req));
}

rj_kernel *jit_memo_find(rj_ctx *ctx, const rj_request *req, const rj_options *opt,
                         pass_plan *plan) {
  jit_memo key, *m;
  rj_request norm;
  const rj_request *bytes;
  const char *text;
  if (!ctx->memo || !memo_key(req, opt, &key, &norm, &bytes, &text) ||
      !(m = ctx->memo[key.hash % JIT_MEMO_SLOTS]) || m->hash != key.hash ||
      m->device != key.device || m->ptx_version != key.ptx_version || m->emulate != key.emulate ||
      m->sms != key.sms || memcmp(m->target, key.target, sizeof key.target) != 0 ||
      memcmp(&m->req, bytes, memo_len(req)) != 0 || !m->text != !text ||
      (text && !same_combine(m, req)))
    return NULL;
  *plan = m->plan;
  return m->k;
}

void jit_memo_put(rj_ctx *ctx, const rj_request *req, const rj_options *opt, rj_kernel *k,
                  const pass_plan *plan) {
  jit_memo key, **slot;
  rj_request norm;
  const rj_request *bytes;
  const char *text;
  if (!memo_key(req, opt, &key, &norm, &bytes, &text)) return;
  const rj_combine *own = ir_request_combine(&k->req);
  if (text && (!own || !own->ir)) return; /* op custom: the kernel keeps the text it was made of */
  if (!ctx->memo && !(ctx->memo = calloc(JIT_MEMO_SLOTS, sizeof *ctx->memo))) return;
  slot = &ctx->memo[key.hash % JIT_MEMO_SLOTS];
  if (!*slot && !(*slot = malloc(sizeof **slot))) return;
  **slot = key;
  memcpy(&(*slot)->req, bytes, memo_len(req));
  (*slot)->text = text ? own->ir : NULL;
  (*slot)->k = k;
  (*slot)->plan = *plan;
}

/* Every slot that remembers k is emptied (k is being evicted). */
static void memo_forget(rj_ctx *ctx, const rj_kernel *k) {
  for (int i = 0; ctx->memo && i < JIT_MEMO_SLOTS; i++)
    if (ctx->memo[i] && ctx->memo[i]->k == k) {
      free(ctx->memo[i]);
      ctx->memo[i] = NULL;
    }
}

void jit_memo_free(rj_ctx *ctx) {
  for (int i = 0; ctx->memo && i < JIT_MEMO_SLOTS; i++)
    free(ctx->memo[i]);
  free(ctx->memo);
}
