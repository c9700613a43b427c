/* JSON requests (docs/REQUESTS.md) to rj_request, through cJSON (back: canonical.c).
 * Unknown fields are errors; every message names the field. */
#include "ir.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct P {
  ir_err *e;
  char path[128]; /* field being parsed, for messages */
} P;

static rj_status bad(P *p, const char *what) {
  return ir_fail(p->e, RJ_EINVAL, "%s: %s", p->path, what);
}

static void at(P *p, const char *parent, const char *key) {
  if (parent && *parent)
    snprintf(p->path, sizeof p->path, "%s.%s", parent, key);
  else
    snprintf(p->path, sizeof p->path, "%s", key);
}

static rj_status known_keys(P *p, const cJSON *o, const char *parent, const char *const *keys) {
  for (const cJSON *c = o->child; c; c = c->next) {
    bool ok = false;
    for (int i = 0; keys[i]; i++)
      if (c->string && strcmp(c->string, keys[i]) == 0) ok = true;
    if (!ok) {
      at(p, parent, c->string ? c->string : "?");
      return bad(p, "unknown field");
    }
    for (const cJSON *d = c->next; d; d = d->next)
      if (d->string && c->string && strcmp(d->string, c->string) == 0) {
        at(p, parent, c->string);
        return bad(p, "field given twice");
      }
  }
  return RJ_OK;
}

/* An integral number as the integer it is (2^62 as 4611686018427387904, not 4.6e+18); past
 * 10^20, where the digits say nothing more, in exponent notation. */
static const char *int_text(double d, char *buf, size_t n) {
  snprintf(buf, n, fabs(d) < 1e20 ? "%.0f" : "%.17g", d);
  return buf;
}

static rj_status as_int(P *p, const cJSON *v, int64_t lo, int64_t hi, int64_t *out) {
  if (!cJSON_IsNumber(v)) return bad(p, "expected an integer");
  double d = v->valuedouble;
  if (!isfinite(d) || d != floor(d)) return bad(p, "expected an integer");
  if (d < (double)lo || d > (double)hi) {
    char m[96], t[32];
    snprintf(m, sizeof m, "%s is out of range [%lld, %lld]", int_text(d, t, sizeof t),
             (long long)lo, (long long)hi);
    return bad(p, m);
  }
  *out = (int64_t)d;
  return RJ_OK;
}

static rj_status get_int(P *p, const cJSON *o, const char *parent, const char *key, int64_t lo,
                         int64_t hi, bool required, int64_t *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  at(p, parent, key);
  if (!v) return required ? bad(p, "required field is missing") : RJ_OK;
  return as_int(p, v, lo, hi, out);
}

/* A top-level field held in an int (its default kept when absent).  A value an int cannot hold
 * is refused here, naming the field and the range validation enforces (range: its text); any
 * other value is left to validation, whose messages say more. */
static rj_status get_int32(P *p, const cJSON *o, const char *key, const char *range, bool required,
                           int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  at(p, "", key);
  if (!v) return required ? bad(p, "required field is missing") : RJ_OK;
  if (!cJSON_IsNumber(v)) return bad(p, "expected an integer");
  double d = v->valuedouble;
  if (!isfinite(d) || d != floor(d)) return bad(p, "expected an integer");
  if (d < INT_MIN || d > INT_MAX) {
    char m[128];
    char t[32];
    snprintf(m, sizeof m, "%s is out of range (%s)", int_text(d, t, sizeof t), range);
    return bad(p, m);
  }
  *out = (int)d;
  return RJ_OK;
}

static rj_status get_bool(P *p, const cJSON *o, const char *parent, const char *key, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  at(p, parent, key);
  if (!v) return RJ_OK;
  if (!cJSON_IsBool(v)) return bad(p, "expected true or false");
  *out = cJSON_IsTrue(v) ? 1 : 0;
  return RJ_OK;
}

static rj_status get_enum(P *p, const cJSON *o, const char *parent, const char *key,
                          const char *const *names, int n, bool required, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  at(p, parent, key);
  if (!v) return required ? bad(p, "required field is missing") : RJ_OK;
  if (!cJSON_IsString(v)) return bad(p, "expected a string");
  for (int i = 0; i < n; i++)
    if (names[i] && strcmp(v->valuestring, names[i]) == 0) {
      *out = i;
      return RJ_OK;
    }
  char m[768];
  int k = snprintf(m, sizeof m, "unknown value \"%.40s\" (one of:", v->valuestring);
  for (int i = 0; i < n && k < (int)sizeof m - 16; i++)
    if (names[i]) k += snprintf(m + k, sizeof m - (size_t)k, " %s", names[i]);
  snprintf(m + k, sizeof m - (size_t)k, ")");
  return bad(p, m);
}

/* A list of at most max integers. */
static rj_status get_ints(P *p, const cJSON *o, const char *parent, const char *key, int max,
                          int64_t lo, int64_t hi, bool required, int64_t *out, int *n) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  at(p, parent, key);
  if (!v) return required ? bad(p, "required field is missing") : RJ_OK;
  if (!cJSON_IsArray(v)) return bad(p, "expected a list of integers");
  int cnt = cJSON_GetArraySize(v);
  if (cnt > max) {
    char m[64];
    snprintf(m, sizeof m, "at most %d entries (got %d)", max, cnt);
    return bad(p, m);
  }
  char base[128];
  snprintf(base, sizeof base, "%s", p->path);
  int i = 0;
  for (const cJSON *c = v->child; c; c = c->next, i++) {
    snprintf(p->path, sizeof p->path, "%s[%d]", base, i);
    rj_status s = as_int(p, c, lo, hi, &out[i]);
    if (s) return s;
  }
  *n = cnt;
  return RJ_OK;
}

static const char *const op_names[] = {"sum", "max", "min",       "prod",   "and",
                                       "or",  "xor", "argmax",    "argmin", "mean",
                                       "var", "std", "logsumexp", "custom"}; /* ORDER OP */
#define NOPS ((int)(sizeof op_names / sizeof op_names[0]))
/* ORDER DTYPE (ir/request.c's table; i8 .. e5m2: kind tensor only, validation says so) */
static const char *const dtype_names[] = {"f16", "bf16", "f32", "f64", "i32",  "u32",  "i64", "u64",
                                          "i8",  "u8",   "i16", "u16", "bool", "e4m3", "e5m2"};
#define NDTYPES ((int)(sizeof dtype_names / sizeof dtype_names[0]))
static const char *const scope_names[] = {"thread", "warp", "warpgroup", "cta"};
static const char *const mem_names[] = {"shared", "local"};
static const char *const nan_names[] = {"propagate", "ignore"};
#define BIG ((int64_t)1 << 52)

/* "K", "K@lane", "K@thread" */
static rj_status parse_stride(P *p, const cJSON *v, rj_stride *out) {
  if (cJSON_IsNumber(v)) {
    int64_t k;
    rj_status s = as_int(p, v, -IR_MAX_STEP, IR_MAX_STEP, &k);
    out->step = k;
    out->unit = RJ_UNIT_SLOT;
    return s;
  }
  if (!cJSON_IsString(v)) return bad(p, "expected an integer, \"K@lane\" or \"K@thread\"");
  const char *s = v->valuestring;
  char *end;
  /* K: an optional '-' and decimal digits (no blanks, no '+'), bounded as a numeric stride */
  if (!(s[0] >= '0' && s[0] <= '9') && !(s[0] == '-' && s[1] >= '0' && s[1] <= '9'))
    return bad(p, "expected \"K@lane\" or \"K@thread\"");
  errno = 0;
  long long k = strtoll(s, &end, 10);
  if (errno == ERANGE || k < -IR_MAX_STEP || k > IR_MAX_STEP) {
    char m[128];
    snprintf(m, sizeof m, "\"%.40s\": the step is out of range [%lld, %lld]", s,
             (long long)-IR_MAX_STEP, (long long)IR_MAX_STEP);
    return bad(p, m);
  }
  if (strcmp(end, "@lane") == 0)
    out->unit = RJ_UNIT_LANE;
  else if (strcmp(end, "@thread") == 0)
    out->unit = RJ_UNIT_THREAD;
  else if (*end == 0)
    out->unit = RJ_UNIT_SLOT;
  else
    return bad(p, "expected \"K@lane\" or \"K@thread\"");
  out->step = k;
  return RJ_OK;
}

static rj_status parse_layout(P *p, const cJSON *v, const char *parent, rj_layout *L) {
  char self[128];
  snprintf(self, sizeof self, "%s", parent);
  if (!cJSON_IsObject(v)) {
    snprintf(p->path, sizeof p->path, "%s", self);
    return bad(p, "expected an object {\"shape\", \"stride\", \"replicate\"}");
  }
  static const char *const keys[] = {"shape", "stride", "replicate", NULL};
  rj_status s = known_keys(p, v, self, keys);
  if (s) return s;
  const cJSON *S = cJSON_GetObjectItemCaseSensitive(v, "shape");
  const cJSON *D = cJSON_GetObjectItemCaseSensitive(v, "stride");
  at(p, self, "shape");
  if (!S) return bad(p, "required field is missing");
  if (!cJSON_IsArray(S) || cJSON_GetArraySize(S) > RJ_MAX_DIMS)
    return bad(p, "expected a list (one entry per dim, at most 8)");
  at(p, self, "stride");
  if (!D) return bad(p, "required field is missing");
  if (!cJSON_IsArray(D) || cJSON_GetArraySize(D) != cJSON_GetArraySize(S))
    return bad(p, "expected a list with one entry per entry of shape");
  L->present = 1;
  int d = 0;
  for (const cJSON *a = S->child, *b = D->child; a; a = a->next, b = b->next, d++) {
    char sp[128], dp[128];
    snprintf(sp, sizeof sp, "%s.shape[%d]", self, d);
    snprintf(dp, sizeof dp, "%s.stride[%d]", self, d);
    if (cJSON_IsArray(a)) {
      int n = cJSON_GetArraySize(a);
      snprintf(p->path, sizeof p->path, "%s", sp);
      if (n < 1 || n > RJ_MAX_SUBDIMS) return bad(p, "a split dim has 1 to 4 sub-dims");
      snprintf(p->path, sizeof p->path, "%s", dp);
      if (!cJSON_IsArray(b) || cJSON_GetArraySize(b) != n)
        return bad(p, "must be a list as long as the matching shape entry");
      int k = 0;
      for (const cJSON *x = a->child, *y = b->child; x; x = x->next, y = y->next, k++) {
        snprintf(p->path, sizeof p->path, "%s[%d]", sp, k);
        if ((s = as_int(p, x, 1, BIG, &L->shape[d][k]))) return s;
        snprintf(p->path, sizeof p->path, "%s[%d]", dp, k);
        if ((s = parse_stride(p, y, &L->stride[d][k]))) return s;
      }
      L->nsub[d] = n;
    } else {
      snprintf(p->path, sizeof p->path, "%s", sp);
      if ((s = as_int(p, a, 1, BIG, &L->shape[d][0]))) return s;
      snprintf(p->path, sizeof p->path, "%s", dp);
      if (cJSON_IsArray(b)) return bad(p, "must be a single stride, as the shape entry is");
      if ((s = parse_stride(p, b, &L->stride[d][0]))) return s;
      L->nsub[d] = 1;
    }
  }
  /* the number of dims is checked against the buffer in validation: record it in nsub[] only */
  for (int k = d; k < RJ_MAX_DIMS; k++)
    L->nsub[k] = 0;
  const cJSON *R = cJSON_GetObjectItemCaseSensitive(v, "replicate");
  if (R) {
    at(p, self, "replicate");
    if (!cJSON_IsArray(R) || cJSON_GetArraySize(R) > RJ_MAX_REPLICATE)
      return bad(p, "expected a list of at most 4 [extent, stride] pairs");
    int i = 0;
    for (const cJSON *r = R->child; r; r = r->next, i++) {
      snprintf(p->path, sizeof p->path, "%s.replicate[%d]", self, i);
      if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) != 2)
        return bad(p, "expected [extent, stride]");
      if ((s = as_int(p, r->child, 1, BIG, &L->rep_extent[i]))) return s;
      if ((s = parse_stride(p, r->child->next, &L->rep_stride[i]))) return s;
    }
    L->nreplicate = i;
  }
  return RJ_OK;
}

/* The number of dims the layout names (entries of its shape). */
static int layout_dims(const rj_layout *L) {
  int n = 0;
  while (n < RJ_MAX_DIMS && L->nsub[n] > 0)
    n++;
  return n;
}

static rj_status parse_buffer(P *p, const cJSON *o, const char *name, rj_buffer *b) {
  at(p, "", name);
  if (!o) return bad(p, "required field is missing");
  if (!cJSON_IsObject(o)) return bad(p, "expected an object {\"mem\", \"shape\", ...}");
  static const char *const keys[] = {"mem", "shape", "start", "extent", "layout", NULL};
  rj_status s = known_keys(p, o, name, keys);
  if (s) return s;
  int m = 0;
  if ((s = get_enum(p, o, name, "mem", mem_names, 2, true, &m))) return s;
  b->mem = (rj_mem)m;
  int64_t v[RJ_MAX_DIMS];
  int n = 0;
  if ((s = get_ints(p, o, name, "shape", RJ_MAX_DIMS, -BIG, BIG, true, v, &n))) return s;
  b->ndim = n;
  for (int i = 0; i < n; i++)
    b->shape[i] = v[i];
  int ns = -1, ne = -1;
  int64_t st[RJ_MAX_DIMS], ex[RJ_MAX_DIMS];
  if ((s = get_ints(p, o, name, "start", RJ_MAX_DIMS, -BIG, BIG, false, st, &ns))) return s;
  if ((s = get_ints(p, o, name, "extent", RJ_MAX_DIMS, -BIG, BIG, false, ex, &ne))) return s;
  if (ns >= 0 || ne >= 0) {
    b->has_region = 1;
    if (ns >= 0 && ns != n) {
      at(p, name, "start");
      return bad(p, "must have one entry per dim of shape");
    }
    if (ne >= 0 && ne != n) {
      at(p, name, "extent");
      return bad(p, "must have one entry per dim of shape");
    }
    for (int i = 0; i < n; i++) {
      b->start[i] = ns >= 0 ? st[i] : 0;
      b->extent[i] = ne >= 0 ? ex[i] : b->shape[i] - b->start[i];
    }
  }
  const cJSON *L = cJSON_GetObjectItemCaseSensitive(o, "layout");
  if (L) {
    char lp[64];
    snprintf(lp, sizeof lp, "%s.layout", name);
    if ((s = parse_layout(p, L, lp, &b->layout))) return s;
    if (layout_dims(&b->layout) != n) {
      snprintf(p->path, sizeof p->path, "%s.shape", lp);
      return bad(p, "must have one entry per dim of the buffer's shape");
    }
  }
  return RJ_OK;
}

/* "op" and "dtype", required in every kind of request. */
static rj_status get_op_dtype(P *p, const cJSON *o, rj_op *op, rj_dtype *dtype) {
  int v = 0;
  rj_status s = get_enum(p, o, "", "op", op_names, NOPS, true, &v);
  if (s) return s;
  *op = (rj_op)v;
  if ((s = get_enum(p, o, "", "dtype", dtype_names, NDTYPES, true, &v))) return s;
  *dtype = (rj_dtype)v;
  return RJ_OK;
}

/* "nan", optional: absent is value 0. */
static rj_status get_nan(P *p, const cJSON *o, rj_nan *nan) {
  int v = 0;
  rj_status s = get_enum(p, o, "", "nan", nan_names, 2, false, &v);
  if (!s) *nan = (rj_nan)v;
  return s;
}

/* "shape", required: at most max extents (each checked by validation, not here). */
static rj_status get_shape(P *p, const cJSON *o, int max, int64_t *shape, int *ndim) {
  int64_t vals[RJ_MAX_DIMS];
  int n = 0;
  rj_status s = get_ints(p, o, "", "shape", max, -BIG, BIG, true, vals, &n);
  if (s) return s;
  *ndim = n;
  for (int i = 0; i < n; i++)
    shape[i] = vals[i];
  return RJ_OK;
}

static rj_status parse_axes(P *p, const cJSON *o, int *naxes, int *axes) {
  int64_t v[RJ_MAX_DIMS];
  int n = -1;
  rj_status s = get_ints(p, o, "", "axes", RJ_MAX_DIMS, -RJ_MAX_DIMS, RJ_MAX_DIMS, false, v, &n);
  if (s) return s;
  if (n >= 0) {
    *naxes = n;
    for (int i = 0; i < n; i++)
      axes[i] = (int)v[i];
  }
  return RJ_OK;
}

/* "correction" (var / std only; default 1) of a tensor or tile request. */
static rj_status get_correction(P *p, const cJSON *o, int op, int *correction) {
  if (!cJSON_GetObjectItemCaseSensitive(o, "correction")) return RJ_OK;
  if (op != RJ_OP_VAR && op != RJ_OP_STD) {
    at(p, "", "correction");
    return bad(p, cJSON_GetObjectItemCaseSensitive(o, "primitive")
                      ? "applies only to the primitives reduce_var, reduce_std, reduce_all_var "
                        "and reduce_all_std"
                      : "applies only to op \"var\" or \"std\"");
  }
  return get_int32(p, o, "correction", "0 .. 2^30", false, correction);
}

/* "combine" of op custom, every kind's (below) */
static rj_status get_combine(P *p, const cJSON *o, rj_op op, rj_dtype dtype, rj_combine *c);

/* A subgroup request given a tensor's fused-map field: refused naming it (a lane's value is the
 * caller's own register, mapped by the caller before the call). */
static rj_status no_fused_map(P *p, const cJSON *o) {
  static const char *const keys[] = {"map", "epilogue", "others", "scale", "p", NULL};
  for (int i = 0; keys[i]; i++)
    if (cJSON_GetObjectItemCaseSensitive(o, keys[i]))
      return at(p, "", keys[i]),
             bad(p, "kind \"subgroup\" takes no fused map: a lane's value is the caller's own "
                    "register, so map it before the call (kinds tile and tensor take maps)");
  return RJ_OK;
}

/* "op" and "dtype" of a tile request (a named one-input fused op sets op, map and epilogue;
 * *named: its row + 1), and its "map", "epilogue", "scale": the fused maps section below */
static rj_status get_tile_op(P *p, const cJSON *o, rj_tile *t, int *named);
static rj_status get_fused_map(P *p, const cJSON *o, rj_fused *f, int named, rj_tensor *t);

static rj_status parse_tile(P *p, const cJSON *o, rj_tile *t) {
  static const char *const keys[] = {"kind",     "op",         "dtype",   "scope",   "threads",
                                     "active",   "src",        "dst",     "axes",    "accum",
                                     "nan",      "correction", "variant", "combine", "map",
                                     "epilogue", "scale",      "p",       NULL};
  if (cJSON_GetObjectItemCaseSensitive(o, "others"))
    return at(p, "", "others"),
           bad(p, "kind \"tile\" reduces one input (kind tensor takes others)");
  rj_status s = known_keys(p, o, "", keys);
  int v = 0, named = 0;
  int64_t i64 = 0;
  if (s) return s;
  if ((s = get_tile_op(p, o, t, &named))) return s;
  if ((s = get_enum(p, o, "", "scope", scope_names, 4, true, &v))) return s;
  t->scope = (rj_scope)v;
  if ((s = get_int(p, o, "", "threads", 1, 1024, t->scope == RJ_SCOPE_CTA, &i64))) return s;
  t->threads = (int)i64;
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "active");
  if (a) {
    at(p, "", "active");
    if (!cJSON_IsObject(a) || cJSON_GetArraySize(a) != 1)
      return bad(p, "expected one of {\"warp\": W}, {\"warpgroup\": G}, {\"thread\": T}");
    static const char *const ak[] = {NULL, "warp", "warpgroup", "thread"};
    int k = 0;
    for (int i = 1; i < 4; i++)
      if (strcmp(a->child->string, ak[i]) == 0) k = i;
    if (!k) {
      at(p, "active", a->child->string);
      return bad(p, "unknown field (one of warp, warpgroup, thread)");
    }
    at(p, "active", ak[k]);
    if ((s = as_int(p, a->child, 0, 1023, &i64))) return s;
    t->active = (rj_active_kind)k;
    t->active_index = (int)i64;
  }
  if ((s = parse_buffer(p, cJSON_GetObjectItemCaseSensitive(o, "src"), "src", &t->src))) return s;
  if ((s = parse_buffer(p, cJSON_GetObjectItemCaseSensitive(o, "dst"), "dst", &t->dst))) return s;
  if ((s = parse_axes(p, o, &t->naxes, t->axes))) return s;
  if ((s = get_bool(p, o, "", "accum", &t->accum))) return s;
  if ((s = get_nan(p, o, &t->nan))) return s;
  if ((s = get_correction(p, o, t->op, &t->correction))) return s;
  if ((s = get_fused_map(p, o, &t->fused, named, NULL))) return s;
  return get_combine(p, o, t->op, t->dtype, &t->combine);
}

static rj_status parse_subgroup(P *p, const cJSON *o, rj_subgroup *g) {
  static const char *const keys[] = {"kind",       "primitive", "dtype",   "log2_size",
                                     "threads",    "blocks",    "index",   "arg",
                                     "correction", "variant",   "combine", NULL};
  rj_status s = no_fused_map(p, o);
  if (!s) s = known_keys(p, o, "", keys);
  int v = 0;
  int64_t i64 = 0;
  if (s) return s;
  if ((s = get_enum(p, o, "", "primitive", ir_primitive_names, IR_PRIMITIVES, true, &v))) return s;
  g->primitive = (rj_primitive)v;
  if ((s = get_enum(p, o, "", "dtype", dtype_names, NDTYPES, true, &v))) return s;
  g->dtype = (rj_dtype)v;
  if ((s = get_int32(p, o, "log2_size", "0..5", false, &g->log2_size))) return s;
  if ((s = get_int32(p, o, "threads", "a multiple of 32 in 32..1024", false, &g->threads)))
    return s;
  if ((s = get_int32(p, o, "blocks", "1..65535", false, &g->blocks))) return s;
  i64 = g->arg;
  if ((s = get_int(p, o, "", "arg", -(1 << 30), 1 << 30, false, &i64))) return s;
  g->arg = (int)i64;
  const cJSON *ix = cJSON_GetObjectItemCaseSensitive(o, "index");
  if (ix) {
    at(p, "", "index");
    if (cJSON_IsArray(ix)) {
      if (cJSON_GetArraySize(ix) != 32) return bad(p, "a list must have exactly 32 lane ids");
      int64_t v32[32];
      int n = 0;
      if ((s = get_ints(p, o, "", "index", 32, -(1 << 30), 1 << 30, true, v32, &n))) return s;
      g->index_is_list = 1;
      for (int i = 0; i < 32; i++)
        g->index[i] = (int)v32[i];
    } else {
      if ((s = as_int(p, ix, -(1 << 30), 1 << 30, &i64))) return s;
      g->arg = (int)i64;
    }
  }
  if ((s = get_correction(p, o, ir_primitive_op(g->primitive, NULL), &g->correction))) return s;
  bool custom = ir_primitive_op(g->primitive, NULL) == RJ_OP_CUSTOM;
  if (cJSON_GetObjectItemCaseSensitive(o, "combine") && !custom) { /* the custom primitives' */
    at(p, "", "combine");
    return bad(p, "applies only to the primitives reduce_custom and reduce_all_custom");
  }
  return get_combine(p, o, custom ? RJ_OP_CUSTOM : RJ_OP_SUM, g->dtype, &g->combine);
}

/* The bits of x as f16 (bf16: as bf16) when it holds x exactly (finite x; infinities too). */
static bool half_bits(double x, bool bf, uint64_t *bits) {
  int mb = bf ? 7 : 10, emin = bf ? -126 : -14, emax = bf ? 127 : 15, eb = bf ? 8 : 5;
  uint64_t sign = signbit(x) ? 1ull << 15 : 0;
  double a = fabs(x);
  if (isnan(x)) return false;
  if (isinf(a)) return *bits = sign | (((1ull << eb) - 1) << mb), true;
  if (a == 0) return *bits = sign, true;
  int ex;
  frexp(a, &ex); /* a = m * 2^ex, m in [0.5, 1): the exponent of a is ex - 1 */
  ex -= 1;
  if (ex > emax) return false;
  if (ex < emin) { /* subnormal: a multiple of 2^(emin - mb) below 2^emin */
    double q = ldexp(a, mb - emin);
    if (q != floor(q)) return false;
    return *bits = sign | (uint64_t)q, true;
  }
  double q = ldexp(a, mb - ex); /* [2^mb, 2^(mb+1)) */
  if (q != floor(q)) return false;
  uint64_t m = (uint64_t)q - (1ull << mb);
  *bits = sign | ((uint64_t)(ex - emin + 1) << mb) | m;
  return true;
}

/* "identity" of a combine: a number the dtype holds exactly, or "0x..." its bits. */
static rj_status get_identity(P *p, const cJSON *v, rj_dtype dt, uint64_t *bits) {
  const ir_dtype_info *d = ir_dtype(dt);
  if (cJSON_IsString(v)) {
    const char *x = v->valuestring;
    char *end = NULL;
    errno = 0;
    unsigned long long b = strtoull(x, &end, 16);
    if (strncmp(x, "0x", 2) != 0 || !x[2] || *end || errno || strchr(x, '-'))
      return bad(p, "expected a number or \"0x...\" (the identity's bits, hexadecimal)");
    *bits = b;
    return RJ_OK;
  }
  if (!cJSON_IsNumber(v)) return bad(p, "expected a number or \"0x...\" (its bits)");
  double x = v->valuedouble;
  if (dt == RJ_F64) return memcpy(bits, &x, 8), RJ_OK;
  if (dt == RJ_F16 || dt == RJ_BF16) {
    if (!half_bits(x, dt == RJ_BF16, bits))
      return bad(p, dt == RJ_F16 ? "not exactly representable as f16 (give \"0x...\" bits)"
                                 : "not exactly representable as bf16 (give \"0x...\" bits)");
    return RJ_OK;
  }
  if (dt == RJ_F32) {
    float f = (float)x;
    uint32_t u;
    if ((double)f != x) return bad(p, "not exactly representable as f32 (give \"0x...\" bits)");
    memcpy(&u, &f, 4);
    return *bits = u, RJ_OK;
  }
  double lo = d->is_signed ? -ldexp(1, 8 * d->bytes - 1) : 0, hi = ldexp(1, 8 * d->bytes);
  if (d->is_signed) hi /= 2;
  if (!isfinite(x) || x != floor(x) || x < lo || x >= hi || fabs(x) > 9007199254740992.0)
    return bad(p, "not an integer the dtype holds exactly within +-2^53 (give \"0x...\" bits)");
  int64_t i = (int64_t)x;
  *bits = d->bytes == 8 ? (uint64_t)i : (uint64_t)i & 0xffffffffull;
  return RJ_OK;
}

/* A function name of a combine ("combine.<key>"), at most RJ_COMBINE_FN_MAX - 1 characters. */
static rj_status get_name(P *p, const cJSON *c, const char *key, char *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, key);
  at(p, "combine", key);
  if (!v) return RJ_OK;
  if (!cJSON_IsString(v) || strlen(v->valuestring) >= RJ_COMBINE_FN_MAX)
    return bad(p, "expected a function name of at most 127 characters");
  snprintf(out, RJ_COMBINE_FN_MAX, "%s", v->valuestring);
  return RJ_OK;
}

/* "combine.state": [{"dtype", "identity"}, ...], 1 .. RJ_COMBINE_FIELDS_MAX fields. */
static rj_status get_state(P *p, const cJSON *st, rj_combine *t) {
  static const char *const keys[] = {"dtype", "identity", NULL};
  int n = cJSON_GetArraySize(st);
  at(p, "combine", "state");
  if (!cJSON_IsArray(st) || n < 1 || n > RJ_COMBINE_FIELDS_MAX)
    return bad(p, "expected a list of 1 to 4 fields {dtype, identity}");
  for (int i = 0; i < n; i++) {
    char parent[32];
    snprintf(parent, sizeof parent, "combine.state[%d]", i);
    const cJSON *f = cJSON_GetArrayItem(st, i);
    snprintf(p->path, sizeof p->path, "%s", parent);
    if (!cJSON_IsObject(f)) return bad(p, "expected an object {dtype, identity}");
    rj_status s = known_keys(p, f, parent, keys);
    int v = 0;
    if (!s) s = get_enum(p, f, parent, "dtype", dtype_names, NDTYPES, true, &v);
    if (s) return s;
    t->fields[i] = (rj_dtype)v;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(f, "identity");
    at(p, parent, "identity");
    if (!id) return bad(p, "required field is missing");
    if ((s = get_identity(p, id, t->fields[i], &t->field_identity[i]))) return s;
  }
  t->nfields = n;
  return RJ_OK;
}

/* A struct state's keys of "combine" (state, lift, finish, result) into u. */
static rj_status get_struct_state(P *p, const cJSON *c, const cJSON *st, rj_combine *u) {
  rj_status s = st ? get_state(p, st, u) : RJ_OK;
  if (!s) s = get_name(p, c, "lift", u->lift);
  if (!s) s = get_name(p, c, "finish", u->finish);
  if (s) return s;
  int64_t r = 0;
  if ((s = get_int(p, c, "combine", "result", 0, RJ_COMBINE_FIELDS_MAX - 1, false, &r))) return s;
  u->result = (int)r;
  return RJ_OK;
}

/* "combine" (op custom only): {"ir", "function", "identity", "commutative"}, or for a struct
 * state {"ir", "function", "state", "lift", "finish", "result", "commutative"}.
 * The IR text is copied into t->ir (malloc; ir_parse's caller owns it).  op, dtype: the
 * request's (kind subgroup: RJ_OP_CUSTOM for the custom primitives). */
static rj_status get_combine(P *p, const cJSON *o, rj_op op, rj_dtype dtype, rj_combine *t) {
  static const char *const keys[] = {"ir",   "function", "identity", "commutative", "state",
                                     "lift", "finish",   "result",   NULL};
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "combine");
  at(p, "", "combine");
  if (!c) return op == RJ_OP_CUSTOM ? bad(p, "required with op \"custom\"") : RJ_OK;
  if (op != RJ_OP_CUSTOM) return bad(p, "applies only to op \"custom\"");
  if (!cJSON_IsObject(c)) return bad(p, "expected an object {ir, function, identity, commutative}");
  rj_status s = known_keys(p, c, "combine", keys);
  if (s) return s;
  const cJSON *ir = cJSON_GetObjectItemCaseSensitive(c, "ir");
  const cJSON *fn = cJSON_GetObjectItemCaseSensitive(c, "function");
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "identity");
  const cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "state");
  at(p, "combine", "ir");
  if (!ir) return bad(p, "required field is missing");
  if (!cJSON_IsString(ir)) return bad(p, "expected a string (LLVM IR text)");
  at(p, "combine", "function");
  if (!fn) return bad(p, "required field is missing");
  if ((s = get_name(p, c, "function", t->fn))) return s;
  at(p, "combine", "identity");
  if (st && id) return bad(p, "not with \"state\" (each field has its identity)");
  if (!st && !id) return bad(p, "required field is missing");
  if (id && (s = get_identity(p, id, dtype, &t->identity))) return s;
  if ((s = get_struct_state(p, c, st, t))) return s;
  if ((s = get_bool(p, c, "combine", "commutative", &t->commutative))) return s;
  if (!(t->ir = strdup(ir->valuestring))) return ir_fail(p->e, RJ_ENOMEM, "out of memory");
  return RJ_OK;
}

/* "acc_dtype" of a tensor request: "f64", or "f32" where that is the default (validation checks
 * which ops and dtypes take f64). */
static rj_status get_acc_dtype(P *p, const cJSON *o, rj_dtype dtype, int *acc_f64) {
  static const char *const names[] = {"f32", "f64"};
  int v = -1;
  rj_status s = get_enum(p, o, "", "acc_dtype", names, 2, false, &v);
  if (s || v != 0) {
    *acc_f64 = v == 1;
    return s;
  }
  if (dtype == RJ_F64 || !ir_dtype(dtype)->is_float)
    return bad(p, "\"f32\" is the accumulator of f16, bf16 and f32 inputs only");
  return RJ_OK;
}

/* ---- fused maps (docs/TENSOR.md "Fused maps") */
static const char *const map_names[] = {"none",       "abs",     "square", "mul",
                                        "sub_square", "abs_sub", "where",  "nonzero"};
static const char *const epi_names[] = {"none", "sqrt", "scale", "log"};

/* The named ops of a tensor request, each a base op, a map and an epilogue (canonical text
 * spells them out).  norm: its "p" picks the row. */
typedef struct fused_op {
  const char *name;
  rj_op op;
  rj_map map;
  rj_epilogue epi;
  int acc_f64; /* 1: f64 accumulator for f16 / bf16 / f32 (the L2 norm: no overflow) */
} fused_op;
static const fused_op fused_ops[] = {
    {"dot", RJ_OP_SUM, RJ_MAP_MUL, RJ_EPI_NONE, 0},
    {"sumsq", RJ_OP_SUM, RJ_MAP_SQUARE, RJ_EPI_NONE, 0},
    {"amax", RJ_OP_MAX, RJ_MAP_ABS, RJ_EPI_NONE, 0},
    {"mse", RJ_OP_MEAN, RJ_MAP_SUB_SQUARE, RJ_EPI_NONE, 0},
    {"l1", RJ_OP_MEAN, RJ_MAP_ABS_SUB, RJ_EPI_NONE, 0},
    {"count_nonzero", RJ_OP_SUM, RJ_MAP_NONZERO, RJ_EPI_NONE, 0},
    {"norm", RJ_OP_SUM, RJ_MAP_SQUARE, RJ_EPI_SQRT, 1}, /* p 2 (default) */
    {"norm", RJ_OP_SUM, RJ_MAP_ABS, RJ_EPI_NONE, 0},    /* p 1 */
    {"norm", RJ_OP_MAX, RJ_MAP_ABS, RJ_EPI_NONE, 0},    /* p "inf" */
    {"masked_sum", RJ_OP_SUM, RJ_MAP_WHERE, RJ_EPI_NONE, 0},
    {"masked_mean", RJ_OP_MEAN, RJ_MAP_WHERE, RJ_EPI_NONE, 0}, /* divided by the selected count */
};
#define NFUSED_OPS ((int)(sizeof fused_ops / sizeof fused_ops[0]))

/* "p" of op norm: 1, 2 (default) or "inf"; the row of fused_ops. */
static rj_status norm_p(P *p, const cJSON *o, int *row) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "p");
  at(p, "", "p");
  *row = 6;
  if (!v) return RJ_OK;
  if (cJSON_IsString(v) && strcmp(v->valuestring, "inf") == 0) return *row = 8, RJ_OK;
  if (cJSON_IsNumber(v) && (v->valuedouble == 1 || v->valuedouble == 2))
    return *row = v->valuedouble == 1 ? 7 : 6, RJ_OK;
  return bad(p, "expected 1, 2 or \"inf\" (op norm)");
}

/* "op" and "dtype" of a tensor or tile request: a named fused op sets op, map and epilogue
 * (*named: its row + 1; "p" only with norm); the others are get_op_dtype's. */
static rj_status get_fused_op(P *p, const cJSON *o, rj_op *op, rj_dtype *dtype, rj_fused *f,
                              int *named) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "op");
  int row = -1;
  *named = 0;
  for (int i = 0; v && cJSON_IsString(v) && i < NFUSED_OPS; i++)
    if (row < 0 && strcmp(v->valuestring, fused_ops[i].name) == 0) row = i; /* norm: row 6 */
  rj_status s;
  if (row == 6 && (s = norm_p(p, o, &row))) return s;
  if (row != 6 && row != 7 && row != 8 && cJSON_GetObjectItemCaseSensitive(o, "p"))
    return at(p, "", "p"), bad(p, "applies only to op \"norm\"");
  if (row < 0) return get_op_dtype(p, o, op, dtype);
  int d = 0;
  if ((s = get_enum(p, o, "", "dtype", dtype_names, NDTYPES, true, &d))) return s;
  *dtype = (rj_dtype)d;
  *op = fused_ops[row].op;
  f->map = fused_ops[row].map;
  f->epilogue = fused_ops[row].epi;
  *named = row + 1;
  return RJ_OK;
}

/* "others": a list of {"dtype", "strides"?} objects, the inputs after src. */
static rj_status get_others(P *p, const cJSON *o, rj_tensor *t) {
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "others");
  at(p, "", "others");
  if (!l) return RJ_OK;
  if (!cJSON_IsArray(l)) return bad(p, "expected a list of {\"dtype\", \"strides\"} objects");
  int n = cJSON_GetArraySize(l);
  if (n > RJ_TENSOR_OTHERS_MAX) return bad(p, "at most 3 entries (inputs besides src)");
  static const char *const keys[] = {"dtype", "strides", NULL};
  for (int i = 0; i < n; i++) {
    const cJSON *x = cJSON_GetArrayItem(l, i);
    char name[32];
    snprintf(name, sizeof name, "others[%d]", i);
    snprintf(p->path, sizeof p->path, "%s", name);
    if (!cJSON_IsObject(x)) return bad(p, "expected an object {\"dtype\", \"strides\"}");
    rj_status s = known_keys(p, x, name, keys);
    int d = 0, ns = -1;
    if (s || (s = get_enum(p, x, name, "dtype", dtype_names, NDTYPES, true, &d))) return s;
    t->other_dtype[i] = (rj_dtype)d;
    s = get_ints(p, x, name, "strides", RJ_MAX_DIMS, -BIG, BIG, false, t->other_strides[i], &ns);
    if (s) return s;
    if (ns >= 0 && ns != t->ndim)
      return at(p, name, "strides"), bad(p, "must have one entry per dim of shape");
    t->other_has_strides[i] = ns >= 0;
  }
  t->nothers = n;
  return RJ_OK;
}

/* "map": {"ir", "function"}, the caller's map as LLVM IR: the text copied into combine.ir
 * (malloc; ir_parse's caller owns it, as op custom's), the name into map_fn. */
static rj_status get_map_ir(P *p, const cJSON *m, rj_tensor *t) {
  static const char *const keys[] = {"ir", "function", NULL};
  rj_status s = known_keys(p, m, "map", keys);
  if (s) return s;
  at(p, "", "map");
  if (t->op == RJ_OP_CUSTOM)
    return bad(p, "a caller's map is not with op \"custom\" (its combine.lift is the map)");
  const cJSON *ir = cJSON_GetObjectItemCaseSensitive(m, "ir");
  const cJSON *fn = cJSON_GetObjectItemCaseSensitive(m, "function");
  at(p, "map", "ir");
  if (!ir) return bad(p, "required field is missing");
  if (!cJSON_IsString(ir)) return bad(p, "expected a string (LLVM IR text)");
  at(p, "map", "function");
  if (!fn) return bad(p, "required field is missing");
  if (!cJSON_IsString(fn) || strlen(fn->valuestring) >= RJ_COMBINE_FN_MAX)
    return bad(p, "expected a function name of at most 127 characters");
  snprintf(t->fused.map_fn, sizeof t->fused.map_fn, "%s", fn->valuestring);
  t->fused.map = RJ_MAP_IR;
  if (!(t->combine.ir = strdup(ir->valuestring))) return ir_fail(p->e, RJ_ENOMEM, "out of memory");
  return RJ_OK;
}

/* "epilogue": {"function", "ir"}, the caller's epilogue as LLVM IR: "ir" its own module, or
 * none when the map's module (a caller's map) holds the function. */
static rj_status get_epilogue_ir(P *p, const cJSON *m, rj_tensor *t) {
  static const char *const keys[] = {"ir", "function", NULL};
  rj_status s = known_keys(p, m, "epilogue", keys);
  if (s) return s;
  at(p, "", "epilogue");
  if (t->op == RJ_OP_CUSTOM)
    return bad(p, "a caller's epilogue is not with op \"custom\" (its combine.finish is one)");
  const cJSON *ir = cJSON_GetObjectItemCaseSensitive(m, "ir");
  const cJSON *fn = cJSON_GetObjectItemCaseSensitive(m, "function");
  at(p, "epilogue", "ir");
  if (ir && t->fused.map == RJ_MAP_IR)
    return bad(p, "not with a caller's map (its module holds it)");
  if (!ir && t->fused.map != RJ_MAP_IR) return bad(p, "required field is missing");
  if (ir && !cJSON_IsString(ir)) return bad(p, "expected a string (LLVM IR text)");
  at(p, "epilogue", "function");
  if (!fn) return bad(p, "required field is missing");
  if (!cJSON_IsString(fn) || strlen(fn->valuestring) >= RJ_COMBINE_FN_MAX)
    return bad(p, "expected a function name of at most 127 characters");
  snprintf(t->fused.epilogue_fn, sizeof t->fused.epilogue_fn, "%s", fn->valuestring);
  t->fused.epilogue = RJ_EPI_IR;
  if (ir && !(t->combine.ir = strdup(ir->valuestring)))
    return ir_fail(p->e, RJ_ENOMEM, "out of memory");
  return RJ_OK;
}

/* "map", "epilogue", "scale" of a tensor (t) or tile (t NULL: a map or epilogue as LLVM IR is
 * refused) request; a named op's map and epilogue are its own (not given again). */
static rj_status get_fused_map(P *p, const cJSON *o, rj_fused *f, int named, rj_tensor *t) {
  static const char *const keys[] = {"map", "epilogue"};
  for (int i = 0; named && i < 2; i++)
    if (cJSON_GetObjectItemCaseSensitive(o, keys[i]))
      return at(p, "", keys[i]), bad(p, "not with a named fused op (it sets its own)");
  const cJSON *mo = cJSON_GetObjectItemCaseSensitive(o, "map");
  const cJSON *eo = cJSON_GetObjectItemCaseSensitive(o, "epilogue");
  bool mir = mo && cJSON_IsObject(mo), eir = eo && cJSON_IsObject(eo);
  if (!t && mir)
    return at(p, "", "map"), bad(p, "kind \"tile\" takes the built-in maps abs, square and "
                                    "nonzero (a caller's map as LLVM IR: kind tensor)");
  if (!t && eir)
    return at(p, "", "epilogue"), bad(p, "kind \"tile\" takes the built-in epilogues sqrt, scale "
                                         "and log (a caller's epilogue as LLVM IR: kind tensor)");
  int m = f->map, e = f->epilogue;
  rj_status s = mir ? get_map_ir(p, mo, t) : get_enum(p, o, "", "map", map_names, 8, false, &m);
  if (!s && !mir) f->map = (rj_map)m;
  if (s || (s = eir ? get_epilogue_ir(p, eo, t)
                    : get_enum(p, o, "", "epilogue", epi_names, 4, false, &e)))
    return s;
  if (!eir) f->epilogue = (rj_epilogue)e;
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "scale");
  at(p, "", "scale");
  if (!c) return f->epilogue == RJ_EPI_SCALE ? bad(p, "required with epilogue \"scale\"") : RJ_OK;
  if (!cJSON_IsNumber(c)) return bad(p, "expected a number");
  f->scale = c->valuedouble;
  return RJ_OK;
}

/* A tile's op: get_fused_op's, but the named ops of two inputs and the f64-accumulated norm
 * (a tile accumulates f16 / bf16 / f32 in f32), refused naming "op". */
static rj_status get_tile_op(P *p, const cJSON *o, rj_tile *t, int *named) {
  rj_status s = get_fused_op(p, o, &t->op, &t->dtype, &t->fused, named);
  if (s || !*named) return s;
  const fused_op *f = &fused_ops[*named - 1];
  char m[256];
  at(p, "", "op");
  if (ir_map_others(f->map)) {
    snprintf(m, sizeof m,
             "\"%s\" takes a second input; kind \"tile\" reduces one (kind tensor takes others)",
             f->name);
    return bad(p, m);
  }
  if (f->acc_f64 && (t->dtype == RJ_F32 || t->dtype == RJ_BF16)) {
    const char *d = ir_dtype(t->dtype)->name;
    snprintf(m, sizeof m,
             "\"norm\" (p 2) of %s: kind \"tile\" accumulates in f32, where the squares of "
             "large %s values overflow (kind tensor accumulates in f64); f16 and f64 tiles take it",
             d, d);
    return bad(p, m);
  }
  return RJ_OK;
}

/* "list": {"count": N, "total": bool}, a list of 1-D tensors given at launch (rj_reduce_multi),
 * which takes the place of "shape", "strides" and "axes" (each tensor is reduced whole). */
static rj_status get_list(P *p, const cJSON *o, rj_tensor *t) {
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "list");
  at(p, "", "list");
  if (!l) return RJ_OK;
  if (!cJSON_IsObject(l)) return bad(p, "expected an object {\"count\", \"total\"}");
  static const char *const keys[] = {"count", "total", NULL};
  static const char *const views[] = {"shape", "strides", "axes"};
  for (int i = 0; i < 3; i++)
    if (cJSON_GetObjectItemCaseSensitive(o, views[i]))
      return at(p, "", views[i]),
             bad(p, "not with \"list\" (each tensor's length and stride are in the table)");
  rj_status s = known_keys(p, l, "list", keys);
  if (s || (s = get_int(p, l, "list", "count", 1, BIG, true, &t->list_count))) return s;
  return get_bool(p, l, "list", "total", &t->list_total);
}

/* "segments": {"count": S, "dtype": "i32" | "i64" (default)}, offsets given at launch. */
static rj_status get_segments(P *p, const cJSON *o, rj_tensor *t) {
  const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "segments");
  at(p, "", "segments");
  if (!g) return RJ_OK;
  if (!cJSON_IsObject(g)) return bad(p, "expected an object {\"count\", \"dtype\"}");
  static const char *const keys[] = {"count", "dtype", NULL};
  rj_status s = known_keys(p, g, "segments", keys);
  int d = RJ_I64;
  if (s || (s = get_int(p, g, "segments", "count", 1, (int64_t)1 << 31, true, &t->segments)))
    return s;
  if ((s = get_enum(p, g, "segments", "dtype", dtype_names, NDTYPES, false, &d))) return s;
  t->segments_dtype = (rj_dtype)d;
  return RJ_OK;
}

static rj_status parse_tensor(P *p, const cJSON *o, rj_tensor *t) {
  static const char *const keys[] = {
      "kind",    "op",     "dtype",         "shape",   "axes",     "strides",
      "accum",   "nan",    "deterministic", "variant", "dynamic",  "correction",
      "combine", "values", "acc_dtype",     "others",  "map",      "epilogue",
      "scale",   "p",      "invariant",     "list",    "segments", NULL};
  rj_status s = known_keys(p, o, "", keys);
  int64_t vals[RJ_MAX_DIMS];
  int named = 0;
  if (s) return s;
  if ((s = get_fused_op(p, o, &t->op, &t->dtype, &t->fused, &named))) return s;
  if ((s = get_list(p, o, t))) return s;
  if (!t->list_count && (s = get_shape(p, o, RJ_MAX_DIMS, t->shape, &t->ndim))) return s;
  int ns = -1;
  if ((s = get_ints(p, o, "", "strides", RJ_MAX_DIMS, -BIG, BIG, false, vals, &ns))) return s;
  if (ns >= 0) {
    t->has_strides = 1;
    if (ns != t->ndim) {
      at(p, "", "strides");
      return bad(p, "must have one entry per dim of shape");
    }
    for (int i = 0; i < ns; i++)
      t->strides[i] = vals[i];
  }
  t->naxes = -1;
  if ((s = parse_axes(p, o, &t->naxes, t->axes))) return s;
  if (t->naxes < 0) { /* default: every axis */
    t->naxes = t->ndim;
    for (int i = 0; i < t->ndim; i++)
      t->axes[i] = i;
  }
  if ((s = get_bool(p, o, "", "accum", &t->accum))) return s;
  if ((s = get_bool(p, o, "", "deterministic", &t->deterministic))) return s;
  if ((s = get_bool(p, o, "", "dynamic", &t->dynamic))) return s;
  if ((s = get_bool(p, o, "", "invariant", &t->invariant))) return s;
  if ((s = get_bool(p, o, "", "values", &t->values))) return s;
  if ((s = get_nan(p, o, &t->nan))) return s;
  if ((s = get_correction(p, o, t->op, &t->correction))) return s;
  if ((s = get_acc_dtype(p, o, t->dtype, &t->acc_f64))) return s;
  if (named && fused_ops[named - 1].acc_f64 && !cJSON_GetObjectItemCaseSensitive(o, "acc_dtype"))
    t->acc_f64 = t->dtype != RJ_F64 && ir_dtype(t->dtype) && ir_dtype(t->dtype)->is_float;
  if ((s = get_others(p, o, t)) || (s = get_fused_map(p, o, &t->fused, named, t))) return s;
  if ((s = get_segments(p, o, t))) return s;
  return get_combine(p, o, t->op, t->dtype, &t->combine);
}

static rj_status parse_treduce(P *p, const cJSON *o, rj_treduce *t) {
  static const char *const keys[] = {"kind",    "op",        "dtype",       "ranks",   "root",
                                     "shape",   "tile",      "pingpong",    "variant", "nan",
                                     "accum",   "strides",   "dst_strides", "dynamic", "mean_count",
                                     "combine", "invariant", NULL};
  rj_status s = known_keys(p, o, "", keys);
  int64_t vals[RJ_MAX_DIMS];
  if (s) return s;
  if ((s = get_op_dtype(p, o, &t->op, &t->dtype))) return s;
  if ((s = get_int32(p, o, "ranks", "1..1024", true, &t->ranks))) return s;
  t->root = 0;
  if ((s = get_int32(p, o, "root", "0..ranks-1", false, &t->root))) return s;
  if ((s = get_shape(p, o, 5, t->shape, &t->ndim))) return s;
  int nt = -1;
  if ((s = get_ints(p, o, "", "tile", 2, -BIG, BIG, false, vals, &nt))) return s;
  if (nt >= 0) {
    at(p, "", "tile");
    if (nt != 2) return bad(p, "expected [rows, cols]");
    for (int i = 0; i < 2; i++)
      if (vals[i] < 1) { /* a given tile is a bound: [0, 0] is only the C default "no bound" */
        snprintf(p->path, sizeof p->path, "tile[%d]", i);
        return bad(p, "must be at least 1");
      }
    t->tile[0] = vals[0];
    t->tile[1] = vals[1];
  }
  if ((s = get_bool(p, o, "", "pingpong", &t->pingpong))) return s;
  if ((s = get_bool(p, o, "", "accum", &t->accum))) return s;
  if ((s = get_bool(p, o, "", "dynamic", &t->dynamic))) return s;
  if ((s = get_bool(p, o, "", "invariant", &t->invariant))) return s;
  if ((s = get_nan(p, o, &t->nan))) return s;
  if ((s = get_int(p, o, "", "mean_count", 0, 1 << 30, false, &t->mean_count))) return s;
  if ((s = get_combine(p, o, t->op, t->dtype, &t->combine))) return s;
  const char *sk[2] = {"strides", "dst_strides"};
  int64_t *sv[2] = {t->strides, t->dst_strides};
  for (int k = 0; k < 2; k++) {
    int ns = -1;
    if ((s = get_ints(p, o, "", sk[k], 5, -BIG, BIG, false, vals, &ns))) return s;
    if (ns < 0) continue;
    at(p, "", sk[k]);
    if (ns != t->ndim) return bad(p, "expected one stride per dim of shape");
    t->has_strides = 1;
    for (int i = 0; i < ns; i++)
      sv[k][i] = vals[i];
  }
  if (t->has_strides) /* a list not given is row-major */
    for (int k = 0; k < 2; k++) {
      if (cJSON_GetObjectItemCaseSensitive(o, sk[k])) continue;
      int64_t m = 1;
      for (int d = t->ndim - 1; d >= 0; d--) {
        sv[k][d] = m; /* saturating: validation refuses such shapes, without overflow first */
        int64_t sh = t->shape[d] > 0 ? t->shape[d] : 1;
        m = m <= INT64_MAX / sh ? m * sh : INT64_MAX;
      }
    }
  return RJ_OK;
}

/* A string of the (valid) JSON text holding the escape \u0000: cJSON's strings end at their first
 * NUL, so the rest of such a string would be dropped unseen.  Fills path with the field that
 * holds it ("combine.ir", "shape[1]"; a field's name itself: "a field name") and returns true. */
static bool nul_in_string(const char *json, char *path, size_t n) {
  enum { DEPTH = 16, NAME = 48 };
  char name[DEPTH][NAME] = {{0}};
  int idx[DEPTH] = {0}, depth = 0;
  bool obj[DEPTH] = {false}, want_key = false;
  for (const char *c = json; *c; c++) {
    if (*c == '{' || *c == '[') {
      if (++depth < DEPTH) obj[depth] = *c == '{', idx[depth] = 0, name[depth][0] = 0;
      want_key = *c == '{';
    } else if (*c == '}' || *c == ']') {
      depth--;
    } else if (*c == ',') {
      if (depth > 0 && depth < DEPTH) idx[depth]++;
      want_key = depth > 0 && depth < DEPTH && obj[depth];
    } else if (*c == '"') {
      const char *start = ++c;
      bool nul = false;
      for (; *c && *c != '"'; c++)
        if (*c == '\\' && c[1]) {
          nul |= c[1] == 'u' && strncmp(c + 2, "0000", 4) == 0;
          c++;
        }
      bool key = want_key;
      want_key = false;
      if (key && depth < DEPTH)
        snprintf(name[depth], NAME, "%.*s", (int)(c - start < NAME ? c - start : NAME - 1), start);
      if (!nul) {
        if (!*c) return false;
        continue;
      }
      size_t k = 0;
      path[0] = 0;
      for (int d = 1; d <= depth && d < DEPTH && k < n; d++)
        k += (size_t)(obj[d] ? snprintf(path + k, n - k, "%s%s", k ? "." : "", name[d])
                             : snprintf(path + k, n - k, "[%d]", idx[d]));
      if (key) snprintf(path, n, "a field name");
      return true;
    }
  }
  return false;
}

rj_status ir_parse(const char *json, rj_request *out, ir_err *e) {
  P p = {e, ""};
  if (!json) return ir_fail(e, RJ_EINVAL, "request: no JSON text");
  const char *end = NULL;
  /* cJSON stores each parse's error position in a process-wide variable: parses from contexts
   * on different threads take turns (the one lock redjit holds; no redjit data lives behind it) */
  static pthread_mutex_t cjson_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&cjson_lock);
  cJSON *o = cJSON_ParseWithOpts(json, &end, 1);
  pthread_mutex_unlock(&cjson_lock);
  if (!o) { /* the parse end, not cJSON_GetErrorPtr(): that one is process-global */
    long off = end && end >= json ? (long)(end - json) : -1;
    return ir_fail(e, RJ_EINVAL, "request: malformed JSON near byte %ld", off);
  }
  rj_status s = RJ_OK;
  bool inited = false;
  if (!cJSON_IsObject(o)) {
    s = ir_fail(e, RJ_EINVAL, "request: expected a JSON object");
    goto out;
  }
  char nul_at[128];
  if (nul_in_string(json, nul_at, sizeof nul_at)) {
    s = ir_fail(e, RJ_EINVAL, "%s: a string holding a NUL character (\\u0000)", nul_at);
    goto out;
  }
  static const char *const kinds[] = {NULL, "tile", "subgroup", "tensor", "treduce"};
  int k = 0;
  if ((s = get_enum(&p, o, "", "kind", kinds, 5, true, &k))) goto out;
  rj_request_init(out, (rj_kind)k);
  inited = true;
  const cJSON *var = cJSON_GetObjectItemCaseSensitive(o, "variant");
  if (var) {
    at(&p, "", "variant");
    if (!cJSON_IsString(var) || strlen(var->valuestring) >= RJ_NAME_MAX || !var->valuestring[0]) {
      s = bad(&p, "expected \"auto\" or a variant name");
      goto out;
    }
    snprintf(out->variant, sizeof out->variant, "%s", var->valuestring);
  }
  switch (out->kind) {
  case RJ_KIND_TILE:
    s = parse_tile(&p, o, &out->u.tile);
    break;
  case RJ_KIND_SUBGROUP:
    s = parse_subgroup(&p, o, &out->u.subgroup);
    break;
  case RJ_KIND_TENSOR:
    s = parse_tensor(&p, o, &out->u.tensor);
    break;
  case RJ_KIND_TREDUCE:
    s = parse_treduce(&p, o, &out->u.treduce);
    break;
  }
out:;
  rj_combine *cb = s && inited ? ir_request_combine_mut(out) : NULL;
  if (cb) { /* a failed parse keeps no copy */
    free((char *)cb->ir);
    cb->ir = NULL;
  }
  cJSON_Delete(o);
  return s;
}
