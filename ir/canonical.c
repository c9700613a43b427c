/* The canonical form of a request (docs/REQUESTS.md, "The canonical form"): rj_request back to
 * JSON through cJSON, every field written, defaults filled in. */
#include "ir.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *ints(const int64_t *v, int n);
static cJSON *int32s(const int *v, int n);

/* "shape", "strides" and "axes" of a tensor request (a list request has none). */
static void view_json(cJSON *o, const rj_tensor *t) {
  cJSON_AddItemToObject(o, "shape", ints(t->shape, t->ndim));
  if (t->has_strides) cJSON_AddItemToObject(o, "strides", ints(t->strides, t->ndim));
  int ax[RJ_MAX_DIMS]; /* negative axes counted from the end, as for tiles */
  for (int i = 0; i < t->naxes; i++)
    ax[i] = t->axes[i] < 0 ? t->axes[i] + t->ndim : t->axes[i];
  cJSON_AddItemToObject(o, "axes", int32s(ax, t->naxes));
}

/* "list": {"count", "total"} of a list request */
static cJSON *list_json(const rj_tensor *t) {
  cJSON *l = cJSON_CreateObject();
  cJSON_AddNumberToObject(l, "count", (double)t->list_count);
  cJSON_AddBoolToObject(l, "total", t->list_total);
  return l;
}

/* "map", "epilogue" and "scale" of a tensor or tile request (rj_fused), each only when set; a
 * caller's map or epilogue with its IR text (ir: combine.ir) whole, as op custom's combine. */
static void map_json(cJSON *o, const rj_fused *f, const char *ir) {
  if (f->map == RJ_MAP_IR) {
    cJSON *m = cJSON_AddObjectToObject(o, "map");
    if (m) cJSON_AddStringToObject(m, "ir", ir ? ir : "");
    if (m) cJSON_AddStringToObject(m, "function", f->map_fn);
  } else if (f->map) {
    cJSON_AddStringToObject(o, "map", ir_map_name(f->map));
  }
  if (f->epilogue == RJ_EPI_IR) { /* its own text, unless the map's module holds it */
    cJSON *m = cJSON_AddObjectToObject(o, "epilogue");
    if (m && f->map != RJ_MAP_IR) cJSON_AddStringToObject(m, "ir", ir ? ir : "");
    if (m) cJSON_AddStringToObject(m, "function", f->epilogue_fn);
  } else if (f->epilogue) {
    cJSON_AddStringToObject(o, "epilogue", ir_epilogue_name(f->epilogue));
  }
  if (f->epilogue == RJ_EPI_SCALE) cJSON_AddNumberToObject(o, "scale", f->scale);
}

/* "others", "map", "epilogue" and "scale" of a tensor request, each only when set. */
static void fused_json(cJSON *o, const rj_tensor *t) {
  if (t->nothers) {
    cJSON *l = cJSON_AddArrayToObject(o, "others");
    for (int i = 0; l && i < t->nothers; i++) {
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "dtype", ir_dtype(t->other_dtype[i])->name);
      if (t->other_has_strides[i])
        cJSON_AddItemToObject(x, "strides", ints(t->other_strides[i], t->ndim));
      cJSON_AddItemToArray(l, x);
    }
  }
  map_json(o, &t->fused, t->combine.ir);
}

static cJSON *ints(const int64_t *v, int n) {
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; a && i < n; i++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
  return a;
}

static cJSON *int32s(const int *v, int n) {
  int64_t w[RJ_MAX_DIMS > 32 ? RJ_MAX_DIMS : 32];
  for (int i = 0; i < n; i++)
    w[i] = v[i];
  return ints(w, n);
}

static cJSON *stride_json(rj_stride s) {
  if (s.unit == RJ_UNIT_SLOT) return cJSON_CreateNumber((double)s.step);
  char b[48];
  snprintf(b, sizeof b, "%lld@%s", (long long)s.step, s.unit == RJ_UNIT_LANE ? "lane" : "thread");
  return cJSON_CreateString(b);
}

static cJSON *layout_json(const rj_layout *L, int ndim) {
  cJSON *o = cJSON_CreateObject(), *S = cJSON_CreateArray(), *D = cJSON_CreateArray();
  for (int d = 0; d < ndim; d++) {
    if (L->nsub[d] == 1) {
      cJSON_AddItemToArray(S, cJSON_CreateNumber((double)L->shape[d][0]));
      cJSON_AddItemToArray(D, stride_json(L->stride[d][0]));
    } else {
      cJSON *s = cJSON_CreateArray(), *t = cJSON_CreateArray();
      for (int k = 0; k < L->nsub[d]; k++) {
        cJSON_AddItemToArray(s, cJSON_CreateNumber((double)L->shape[d][k]));
        cJSON_AddItemToArray(t, stride_json(L->stride[d][k]));
      }
      cJSON_AddItemToArray(S, s);
      cJSON_AddItemToArray(D, t);
    }
  }
  cJSON_AddItemToObject(o, "shape", S);
  cJSON_AddItemToObject(o, "stride", D);
  if (L->nreplicate) {
    cJSON *R = cJSON_CreateArray();
    for (int i = 0; i < L->nreplicate; i++) {
      cJSON *pr = cJSON_CreateArray();
      cJSON_AddItemToArray(pr, cJSON_CreateNumber((double)L->rep_extent[i]));
      cJSON_AddItemToArray(pr, stride_json(L->rep_stride[i]));
      cJSON_AddItemToArray(R, pr);
    }
    cJSON_AddItemToObject(o, "replicate", R);
  }
  return o;
}

static cJSON *buffer_json(const rj_buffer *b) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "mem", b->mem == RJ_MEM_LOCAL ? "local" : "shared");
  cJSON_AddItemToObject(o, "shape", ints(b->shape, b->ndim));
  int64_t st[RJ_MAX_DIMS], ex[RJ_MAX_DIMS];
  for (int d = 0; d < b->ndim; d++) {
    st[d] = b->has_region ? b->start[d] : 0;
    ex[d] = b->has_region ? b->extent[d] : b->shape[d];
  }
  cJSON_AddItemToObject(o, "start", ints(st, b->ndim));
  cJSON_AddItemToObject(o, "extent", ints(ex, b->ndim));
  if (b->layout.present) cJSON_AddItemToObject(o, "layout", layout_json(&b->layout, b->ndim));
  return o;
}

/* The combine verbatim: its IR text whole (so equal keys mean equal IR, byte for byte), the
 * identity as its bits. */
static cJSON *combine_json(const rj_request *r) {
  const rj_combine *u = ir_request_combine(r);
  if (!u) return NULL;
  cJSON *c = cJSON_CreateObject();
  char bits[24];
  snprintf(bits, sizeof bits, "0x%llx", (unsigned long long)u->identity);
  cJSON_AddStringToObject(c, "ir", u->ir ? u->ir : "");
  cJSON_AddStringToObject(c, "function", u->fn);
  if (u->nfields == 0) cJSON_AddStringToObject(c, "identity", bits);
  cJSON_AddBoolToObject(c, "commutative", u->commutative);
  if (u->nfields == 0) return c;
  cJSON *st = cJSON_AddArrayToObject(c, "state");
  for (int i = 0; i < u->nfields && i < RJ_COMBINE_FIELDS_MAX; i++) {
    cJSON *f = cJSON_CreateObject();
    snprintf(bits, sizeof bits, "0x%llx", (unsigned long long)u->field_identity[i]);
    const ir_dtype_info *d = ir_dtype(u->fields[i]);
    cJSON_AddStringToObject(f, "dtype", d ? d->name : "?");
    cJSON_AddStringToObject(f, "identity", bits);
    cJSON_AddItemToArray(st, f);
  }
  cJSON_AddStringToObject(c, "lift", u->lift);
  if (u->finish[0]) cJSON_AddStringToObject(c, "finish", u->finish);
  cJSON_AddNumberToObject(c, "result", u->result);
  return c;
}

rj_status ir_combine_canonical(const rj_request *r, char **out, ir_err *e) {
  *out = NULL;
  if (ir_request_op(r) != RJ_OP_CUSTOM) return ir_fail(e, RJ_EINVAL, "combine: not op \"custom\"");
  cJSON *c = combine_json(r);
  if (c) *out = cJSON_PrintUnformatted(c);
  cJSON_Delete(c);
  return *out ? RJ_OK : ir_fail(e, RJ_ENOMEM, "out of memory");
}

static void tile_fields(cJSON *o, const rj_request *r) {
  const rj_tile *t = &r->u.tile;
  cJSON_AddStringToObject(o, "op", ir_op_name(t->op));
  cJSON_AddStringToObject(o, "dtype", ir_dtype(t->dtype)->name);
  cJSON_AddStringToObject(o, "scope", ir_scope_name(t->scope));
  cJSON_AddNumberToObject(o, "threads", t->threads ? t->threads : ir_scope_threads(t->scope));
  if (t->active) {
    static const char *const ak[] = {NULL, "warp", "warpgroup", "thread"};
    cJSON *a = cJSON_CreateObject();
    cJSON_AddNumberToObject(a, ak[t->active], t->active_index);
    cJSON_AddItemToObject(o, "active", a);
  }
  cJSON_AddItemToObject(o, "src", buffer_json(&t->src));
  cJSON_AddItemToObject(o, "dst", buffer_json(&t->dst));
  int ax[RJ_MAX_DIMS];
  for (int i = 0; i < t->naxes; i++)
    ax[i] = t->axes[i] < 0 ? t->axes[i] + t->src.ndim : t->axes[i];
  cJSON_AddItemToObject(o, "axes", int32s(ax, t->naxes));
  cJSON_AddBoolToObject(o, "accum", t->accum);
  cJSON_AddStringToObject(o, "nan", t->nan == RJ_NAN_IGNORE ? "ignore" : "propagate");
  if (t->op == RJ_OP_VAR || t->op == RJ_OP_STD)
    cJSON_AddNumberToObject(o, "correction", t->correction);
  if (t->op == RJ_OP_CUSTOM) cJSON_AddItemToObject(o, "combine", combine_json(r));
  map_json(o, &t->fused, NULL); /* built-in maps only (validated) */
}

static void subgroup_fields(cJSON *o, const rj_request *r) {
  const rj_subgroup *g = &r->u.subgroup;
  cJSON_AddStringToObject(o, "primitive", ir_primitive_name(g->primitive));
  cJSON_AddStringToObject(o, "dtype", ir_dtype(g->dtype)->name);
  cJSON_AddNumberToObject(o, "log2_size", g->log2_size);
  cJSON_AddNumberToObject(o, "threads", g->threads);
  cJSON_AddNumberToObject(o, "blocks", g->blocks);
  cJSON_AddNumberToObject(o, "arg", g->arg);
  if (g->index_is_list) cJSON_AddItemToObject(o, "index", int32s(g->index, 32));
  int op = ir_primitive_op(g->primitive, NULL);
  if (op == RJ_OP_VAR || op == RJ_OP_STD) cJSON_AddNumberToObject(o, "correction", g->correction);
  if (op == RJ_OP_CUSTOM) cJSON_AddItemToObject(o, "combine", combine_json(r));
}

static void tensor_fields(cJSON *o, const rj_request *r) {
  const rj_tensor *t = &r->u.tensor;
  cJSON_AddStringToObject(o, "op", ir_op_name(t->op));
  cJSON_AddStringToObject(o, "dtype", ir_dtype(t->dtype)->name);
  if (t->list_count) cJSON_AddItemToObject(o, "list", list_json(t)); /* in place of the view */
  if (!t->list_count) view_json(o, t);
  cJSON_AddBoolToObject(o, "accum", t->accum);
  cJSON_AddStringToObject(o, "nan", t->nan == RJ_NAN_IGNORE ? "ignore" : "propagate");
  cJSON_AddBoolToObject(o, "deterministic", t->deterministic);
  if (t->dynamic) cJSON_AddBoolToObject(o, "dynamic", 1);     /* absent: false (older texts) */
  if (t->invariant) cJSON_AddBoolToObject(o, "invariant", 1); /* absent: false */
  if (t->op == RJ_OP_VAR || t->op == RJ_OP_STD)
    cJSON_AddNumberToObject(o, "correction", t->correction);
  if (t->op == RJ_OP_CUSTOM) cJSON_AddItemToObject(o, "combine", combine_json(r));
  if (t->values) cJSON_AddBoolToObject(o, "values", 1); /* absent: false (older texts) */
  if (t->acc_f64 && t->dtype != RJ_F64)                 /* absent: the dtype's own accumulator */
    cJSON_AddStringToObject(o, "acc_dtype", "f64");
  fused_json(o, t);  /* absent: one input, no map, no epilogue (older texts) */
  if (t->segments) { /* absent: no segments (older texts) */
    cJSON *g = cJSON_AddObjectToObject(o, "segments");
    cJSON_AddNumberToObject(g, "count", (double)t->segments);
    cJSON_AddStringToObject(g, "dtype", ir_dtype(t->segments_dtype)->name);
  }
}

static void treduce_fields(cJSON *o, const rj_request *r) {
  const rj_treduce *t = &r->u.treduce;
  cJSON_AddStringToObject(o, "op", ir_op_name(t->op));
  cJSON_AddStringToObject(o, "dtype", ir_dtype(t->dtype)->name);
  cJSON_AddNumberToObject(o, "ranks", t->ranks);
  cJSON_AddNumberToObject(o, "root", t->root);
  cJSON_AddItemToObject(o, "shape", ints(t->shape, t->ndim));
  if (t->tile[0] || t->tile[1]) /* [0, 0], no bound, is the absent field (a given one is >= 1) */
    cJSON_AddItemToObject(o, "tile", ints(t->tile, 2));
  cJSON_AddBoolToObject(o, "pingpong", t->pingpong);
  cJSON_AddStringToObject(o, "nan", t->nan == RJ_NAN_IGNORE ? "ignore" : "propagate");
  cJSON_AddBoolToObject(o, "accum", t->accum);
  if (t->has_strides) {
    cJSON_AddItemToObject(o, "strides", ints(t->strides, t->ndim));
    cJSON_AddItemToObject(o, "dst_strides", ints(t->dst_strides, t->ndim));
  }
  if (t->dynamic) cJSON_AddBoolToObject(o, "dynamic", 1);     /* absent: false (older texts) */
  if (t->invariant) cJSON_AddBoolToObject(o, "invariant", 1); /* absent: false */
  if (t->mean_count) cJSON_AddNumberToObject(o, "mean_count", (double)t->mean_count);
  if (t->op == RJ_OP_CUSTOM) cJSON_AddItemToObject(o, "combine", combine_json(r));
}

rj_status ir_canonical(const rj_request *r, char **out, ir_err *e) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return ir_fail(e, RJ_ENOMEM, "out of memory");
  cJSON_AddStringToObject(o, "kind", ir_kind_name(r->kind));
  cJSON_AddStringToObject(o, "variant", r->variant[0] ? r->variant : "auto");
  switch (r->kind) {
  case RJ_KIND_TILE:
    tile_fields(o, r);
    break;
  case RJ_KIND_SUBGROUP:
    subgroup_fields(o, r);
    break;
  case RJ_KIND_TENSOR:
    tensor_fields(o, r);
    break;
  case RJ_KIND_TREDUCE:
    treduce_fields(o, r);
    break;
  }
  *out = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return *out ? RJ_OK : ir_fail(e, RJ_ENOMEM, "out of memory");
}
