/* Validation: every check a request must pass before dispatch.  Messages name the field.
 * Variant-specific limits (group sizes, layouts a variant cannot lower) are predicates in
 * passes/, not here. */
#include "ir.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MAX_ELEMS ((int64_t)1 << 40)

/* least: 1, or 0 where a dim of size 0 is a request (kind tensor) */
static rj_status check_dims(ir_err *e, const char *f, const int64_t *shape, int ndim, int maxd,
                            int64_t *numel, int least) {
  if (ndim < 1 || ndim > maxd)
    return ir_fail(e, RJ_EINVAL, "%s: expected 1 to %d dims (got %d)", f, maxd, ndim);
  int64_t n = 1; /* of the dims not 0: bounded too, as a view's outputs and reduce_len are */
  bool empty = false;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < least)
      return ir_fail(e, RJ_EINVAL, "%s[%d]: every dim must be at least %d (got %lld)", f, d, least,
                     (long long)shape[d]);
    empty |= shape[d] == 0;
    if (shape[d] == 0) continue;
    if (shape[d] > MAX_ELEMS || n > MAX_ELEMS / shape[d])
      return ir_fail(e, RJ_EINVAL, "%s: more than 2^40 elements", f);
    n *= shape[d];
  }
  if (numel) *numel = empty ? 0 : n;
  return RJ_OK;
}

/* Normalises axes into reduced[]; fails on range or repeats (least: 1, or 0 where no axis, a
 * reduction of one element per output, is a request: kind tensor). */
static rj_status check_axes(ir_err *e, const int *axes, int naxes, int ndim, bool *reduced,
                            int least) {
  if (naxes < least || naxes > ndim)
    return ir_fail(e, RJ_EINVAL, "axes: expected %d to %d axes (got %d)", least, ndim, naxes);
  for (int d = 0; d < RJ_MAX_DIMS; d++)
    reduced[d] = false;
  for (int i = 0; i < naxes; i++) {
    int a = axes[i];
    if (a < -ndim || a >= ndim)
      return ir_fail(e, RJ_EINVAL, "axes[%d]: %d is out of range for %d dims", i, a, ndim);
    if (a < 0) a += ndim;
    if (reduced[a]) return ir_fail(e, RJ_EINVAL, "axes[%d]: axis %d is repeated", i, a);
    reduced[a] = true;
  }
  return RJ_OK;
}

/* One layout stride: a known unit and |step| <= IR_MAX_STEP (ir_place's arithmetic is checked
 * too; this names the field).  f: the field, e.g. "src.layout.stride[1][0]". */
static rj_status check_stride(ir_err *e, const char *f, rj_stride st) {
  if ((unsigned)st.unit > RJ_UNIT_THREAD)
    return ir_fail(e, RJ_EINVAL, "%s: unknown unit %d", f, (int)st.unit);
  if (st.step < -IR_MAX_STEP || st.step > IR_MAX_STEP)
    return ir_fail(e, RJ_EINVAL, "%s: step %lld is out of range [%lld, %lld]", f,
                   (long long)st.step, (long long)-IR_MAX_STEP, (long long)IR_MAX_STEP);
  return RJ_OK;
}

static rj_status check_strides(ir_err *e, const char *name, const rj_layout *L, int ndim) {
  char f[64];
  rj_status s;
  for (int d = 0; d < ndim; d++)
    for (int k = 0; k < L->nsub[d]; k++) {
      if (L->nsub[d] == 1)
        snprintf(f, sizeof f, "%s.layout.stride[%d]", name, d);
      else
        snprintf(f, sizeof f, "%s.layout.stride[%d][%d]", name, d, k);
      if ((s = check_stride(e, f, L->stride[d][k]))) return s;
    }
  for (int i = 0; i < L->nreplicate; i++) {
    snprintf(f, sizeof f, "%s.layout.replicate[%d]", name, i);
    if ((s = check_stride(e, f, L->rep_stride[i]))) return s;
  }
  return RJ_OK;
}

static rj_status check_buffer(ir_err *e, const char *name, const rj_buffer *b, int64_t *region) {
  char f[48];
  snprintf(f, sizeof f, "%s.shape", name);
  if (b->mem != RJ_MEM_SHARED && b->mem != RJ_MEM_LOCAL)
    return ir_fail(e, RJ_EINVAL, "%s.mem: expected shared or local", name);
  rj_status s = check_dims(e, f, b->shape, b->ndim, RJ_MAX_DIMS, NULL, 1);
  if (s) return s;
  int64_t n = 1;
  for (int d = 0; d < b->ndim; d++) {
    int64_t st = b->has_region ? b->start[d] : 0, ex = b->has_region ? b->extent[d] : b->shape[d];
    if (st < 0 || st >= b->shape[d])
      return ir_fail(e, RJ_EINVAL, "%s.start[%d]: %lld is outside [0, %lld)", name, d,
                     (long long)st, (long long)b->shape[d]);
    if (ex < 1)
      return ir_fail(e, RJ_EINVAL, "%s.extent[%d]: must be at least 1 (got %lld)", name, d,
                     (long long)ex);
    if (ex > b->shape[d] - st)
      return ir_fail(e, RJ_EINVAL,
                     "%s.extent[%d]: region [%lld, %lld) runs past the dim's size %lld", name, d,
                     (long long)st, (long long)(st + ex), (long long)b->shape[d]);
    n *= ex;
  }
  *region = n;
  const rj_layout *L = &b->layout;
  if (L->present) {
    if (b->mem != RJ_MEM_LOCAL)
      return ir_fail(e, RJ_EINVAL, "%s.layout: only local (register) buffers take a layout", name);
    for (int d = 0; d < b->ndim; d++) {
      if (L->nsub[d] < 1 || L->nsub[d] > RJ_MAX_SUBDIMS)
        return ir_fail(e, RJ_EINVAL, "%s.layout.shape[%d]: expected 1 to 4 sub-dims", name, d);
      int64_t p = 1;
      for (int k = 0; k < L->nsub[d]; k++) {
        if (L->shape[d][k] < 1 || L->shape[d][k] > MAX_ELEMS)
          return ir_fail(e, RJ_EINVAL, "%s.layout.shape[%d]: sub-dims must be at least 1", name, d);
        p *= L->shape[d][k];
        if (p > MAX_ELEMS) return ir_fail(e, RJ_EINVAL, "%s.layout.shape[%d]: too large", name, d);
      }
      if (p != b->shape[d])
        return ir_fail(e, RJ_EINVAL,
                       "%s.layout.shape[%d]: sub-dims multiply to %lld, but the dim is %lld", name,
                       d, (long long)p, (long long)b->shape[d]);
    }
    if (L->nreplicate < 0 || L->nreplicate > RJ_MAX_REPLICATE)
      return ir_fail(e, RJ_EINVAL, "%s.layout.replicate: at most 4 entries", name);
    for (int i = 0; i < L->nreplicate; i++) {
      if (L->rep_extent[i] < 1 || L->rep_extent[i] > 1024)
        return ir_fail(e, RJ_EINVAL, "%s.layout.replicate[%d]: extent must be 1 to 1024", name, i);
      if (L->rep_stride[i].unit == RJ_UNIT_SLOT)
        return ir_fail(e, RJ_EINVAL,
                       "%s.layout.replicate[%d]: copies are held by other lanes or threads "
                       "(stride \"K@lane\" or \"K@thread\")",
                       name, i);
    }
    return check_strides(e, name, L, b->ndim);
  }
  return RJ_OK;
}

/* Local buffers: src and dst together span at most IR_MAX_LOCAL_SLOTS register slots per thread
 * (a sparse slot stride counts the whole range it spans, used or not), and the scope's threads
 * hold at most IR_MAX_LOCAL_CELLS slots in all: past those, compile time, memory and the
 * kernel's local memory grow past their bounds (ir.h, docs/RELIABILITY.md). */
static rj_status check_local_slots(const rj_tile *t, ir_err *e) {
  int64_t span[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    const rj_buffer *b = k ? &t->dst : &t->src;
    if (b->mem == RJ_MEM_LOCAL) span[k] = ir_slot_span(b);
  }
  const char *what[2] = {t->src.layout.present ? "src.layout" : "src.shape",
                         t->dst.layout.present ? "dst.layout" : "dst.shape"};
  if (span[0] > IR_MAX_LOCAL_SLOTS)
    return ir_fail(e, RJ_EINVAL,
                   "%s: %lld register slots per thread; local buffers hold at most %d (src and dst "
                   "together)",
                   what[0], (long long)span[0], IR_MAX_LOCAL_SLOTS);
  if (span[1] > IR_MAX_LOCAL_SLOTS - span[0])
    return ir_fail(e, RJ_EINVAL,
                   "%s: %lld register slot%s per thread%s, and src has %lld; local buffers "
                   "hold at most %d (src and dst together)",
                   what[1], (long long)span[1], span[1] == 1 ? "" : "s",
                   t->dst.layout.present ? " (the range its slot strides span)" : "",
                   (long long)span[0], IR_MAX_LOCAL_SLOTS);
  int64_t T = ir_scope_threads(t->scope);
  if (T > 1 && T * (span[0] + span[1]) > IR_MAX_LOCAL_CELLS)
    return ir_fail(e, RJ_EINVAL,
                   "%s: src and dst span %lld register slots per thread, %lld over the %lld "
                   "threads of the %s; a %s's local buffers hold at most %d (%d slots per thread)",
                   what[span[1] > span[0]], (long long)(span[0] + span[1]),
                   (long long)(T * (span[0] + span[1])), (long long)T, ir_scope_name(t->scope),
                   ir_scope_name(t->scope), IR_MAX_LOCAL_CELLS, (int)(IR_MAX_LOCAL_CELLS / T));
  return RJ_OK;
}

/* mean has no accumulating form: "dst = old + mean" and "dst = mean of old and the inputs" are
 * both plausible readings, so the caller adds the old value itself.  Nor a NaN-skipping one:
 * torch's nanmean divides by the count of non-NaN elements, a second state the scalar kernels do
 * not keep. */
static rj_status check_mean(rj_op op, int accum, rj_nan nan, ir_err *e) {
  if (op != RJ_OP_MEAN) return RJ_OK;
  if (accum)
    return ir_fail(
        e, RJ_EINVAL,
        "accum: op \"mean\" does not accumulate into the destination (ambiguous: "
        "old + mean, or the mean with the old value?); add the old value after the call");
  if (nan == RJ_NAN_IGNORE)
    return ir_fail(e, RJ_EINVAL,
                   "nan: \"ignore\" with op \"mean\" is not served (a mean over the non-NaN "
                   "elements needs their count); use \"propagate\"");
  return RJ_OK;
}

/* The state ops (argmax argmin var std logsumexp): var / std's correction; no accum. */
static rj_status check_state(rj_op op, int accum, int correction, ir_err *e) {
  if ((op == RJ_OP_VAR || op == RJ_OP_STD) && (correction < 0 || correction > 1 << 30))
    return ir_fail(e, RJ_EINVAL, "correction: %d, expected 0 .. 2^30", correction);
  if (accum && (op == RJ_OP_ARGMAX || op == RJ_OP_ARGMIN || op == RJ_OP_VAR || op == RJ_OP_STD ||
                op == RJ_OP_LOGSUMEXP))
    return ir_fail(e, RJ_EINVAL,
                   "accum: op \"%s\" cannot accumulate into dst (an index, a variance or a "
                   "logsumexp is not a partial result to fold into)",
                   ir_op_name(op));
  return RJ_OK;
}

/* How a kind uses its combine (every kind's, validate_combine below): the request's op (kind
 * subgroup: RJ_OP_CUSTOM for the custom primitives, else RJ_OP_SUM), dtype, nan and accum; accum
 * folds the old value first (accum_ordered: kind treduce), with a non-commutative combine or an
 * f16 / bf16 state (the dtype's) too, which the other kinds refuse. */
typedef struct combine_use {
  rj_op op;
  rj_dtype dtype;
  rj_nan nan;
  int accum;
  bool accum_ordered;
} combine_use;
static rj_status validate_combine(combine_use u, const rj_combine *c, ir_err *e);

/* i8 u8 i16 u16 bool e4m3 e5m2: kind tensor only */
static rj_status check_kind_dtype(rj_dtype t, rj_kind k, ir_err *e) {
  if (!ir_dtype_tensor_only(t)) return RJ_OK;
  return ir_fail(e, RJ_EINVAL, "dtype: %s applies to kind tensor only, not kind %s",
                 ir_dtype(t)->name, ir_kind_name(k));
}

static rj_status check_fused_record(const rj_fused *f, ir_err *e);
static rj_status check_fused_op(rj_op op, rj_dtype dt, const rj_fused *f, int accum, bool acc64,
                                bool one_input, ir_err *e);

/* A tile's map and epilogue: the one-input built-ins (kind tensor takes the rest). */
static rj_status check_tile_map(const rj_tile *t, ir_err *e) {
  rj_status s = check_fused_record(&t->fused, e);
  if (s) return s;
  if (ir_map_others(t->fused.map))
    return ir_fail(e, RJ_EINVAL,
                   "map: \"%s\" takes a second input; kind \"tile\" reduces one (abs, square, "
                   "nonzero; kind tensor takes others)",
                   ir_map_name(t->fused.map));
  if (t->fused.map == RJ_MAP_IR)
    return ir_fail(e, RJ_EINVAL,
                   "map: kind \"tile\" takes the built-in maps abs, square and nonzero (a "
                   "caller's map as LLVM IR: kind tensor)");
  if (t->fused.epilogue == RJ_EPI_IR)
    return ir_fail(e, RJ_EINVAL,
                   "epilogue: kind \"tile\" takes the built-in epilogues sqrt, scale and log (a "
                   "caller's epilogue as LLVM IR: kind tensor)");
  return check_fused_op(t->op, t->dtype, &t->fused, t->accum, t->dtype == RJ_F64, true, e);
}

static rj_status validate_tile(const rj_tile *t, ir_err *e) {
  rj_status s;
  if ((s = check_kind_dtype(t->dtype, RJ_KIND_TILE, e))) return s;
  if ((s = ir_check_op(t->op, t->dtype, e))) return s;
  if ((s = check_mean(t->op, t->accum, t->nan, e))) return s;
  if ((s = check_state(t->op, t->accum, t->correction, e))) return s;
  combine_use u = {.op = t->op, .dtype = t->dtype, .nan = t->nan, .accum = t->accum};
  if ((s = validate_combine(u, &t->combine, e))) return s;
  if ((s = check_tile_map(t, e))) return s;
  if ((unsigned)t->scope > RJ_SCOPE_CTA)
    return ir_fail(e, RJ_EINVAL, "scope: unknown value %d", t->scope);
  if ((unsigned)t->nan > RJ_NAN_IGNORE) return ir_fail(e, RJ_EINVAL, "nan: unknown value");
  int scope_n = ir_scope_threads(t->scope);
  int threads = t->threads ? t->threads : scope_n;
  if (t->scope == RJ_SCOPE_CTA && t->threads == 0)
    return ir_fail(e, RJ_EINVAL, "threads: required for scope cta");
  if (threads < 1 || threads > 1024)
    return ir_fail(e, RJ_EINVAL, "threads: %d is outside 1..1024", threads);
  if (scope_n > 1 && threads % scope_n)
    return ir_fail(e, RJ_EINVAL, "threads: %d is not a multiple of the %s size %d", threads,
                   ir_scope_name(t->scope), scope_n);
  /* active: which instance of the scope performs the op */
  static const rj_active_kind want[] = {RJ_ACTIVE_THREAD, RJ_ACTIVE_WARP, RJ_ACTIVE_WARPGROUP,
                                        RJ_ACTIVE_ALL};
  static const char *const akn[] = {"all", "warp", "warpgroup", "thread"};
  if ((unsigned)t->active > RJ_ACTIVE_THREAD) return ir_fail(e, RJ_EINVAL, "active: unknown kind");
  if (t->active != RJ_ACTIVE_ALL) {
    if (t->active != want[t->scope])
      return ir_fail(e, RJ_EINVAL, "active.%s: scope %s selects its instance with active.%s",
                     akn[t->active], ir_scope_name(t->scope),
                     t->scope == RJ_SCOPE_CTA ? "(none: the whole CTA)" : akn[want[t->scope]]);
    int count = threads / (scope_n ? scope_n : threads);
    if (t->active_index < 0 || t->active_index >= count)
      return ir_fail(e, RJ_EINVAL, "active.%s: %d is outside 0..%d for %d threads", akn[t->active],
                     t->active_index, count - 1, threads);
  } else if (t->src.mem == RJ_MEM_SHARED && t->dst.mem == RJ_MEM_SHARED && scope_n &&
             threads > scope_n) {
    return ir_fail(e, RJ_EINVAL,
                   "active: %d %ss of this CTA would each reduce the same shared buffers; "
                   "choose one with active.%s",
                   threads / scope_n, ir_scope_name(t->scope), akn[want[t->scope]]);
  }
  int64_t src_n = 0, dst_n = 0;
  if ((s = check_buffer(e, "src", &t->src, &src_n))) return s;
  if ((s = check_buffer(e, "dst", &t->dst, &dst_n))) return s;
  bool red[RJ_MAX_DIMS];
  if ((s = check_axes(e, t->axes, t->naxes, t->src.ndim, red, 1))) return s;
  int64_t spatial = 1;
  for (int d = 0; d < t->src.ndim; d++)
    if (!red[d]) spatial *= t->src.has_region ? t->src.extent[d] : t->src.shape[d];
  if (dst_n != spatial)
    return ir_fail(e, RJ_EINVAL,
                   "dst.shape: the destination region has %lld elements, but the source region "
                   "keeps %lld",
                   (long long)dst_n, (long long)spatial);
  for (int k = 0; k < 2; k++) {
    const rj_buffer *b = k ? &t->dst : &t->src;
    const char *n = k ? "dst" : "src";
    if (b->layout.present && t->scope == RJ_SCOPE_THREAD)
      for (int d = 0; d < b->ndim; d++)
        for (int j = 0; j < b->layout.nsub[d]; j++)
          if (b->layout.stride[d][j].unit != RJ_UNIT_SLOT)
            return ir_fail(e, RJ_EINVAL,
                           "%s.layout.stride[%d]: at thread scope one thread holds the whole "
                           "buffer; lane and thread strides need scope warp or wider",
                           n, d);
    if (b->mem == RJ_MEM_LOCAL && t->scope == RJ_SCOPE_CTA)
      return ir_fail(e, RJ_EINVAL,
                     "%s.mem: local (register) buffers are per thread; scope cta needs shared "
                     "memory",
                     n);
  }
  if ((s = check_local_slots(t, e))) return s;
  if (t->src.mem == RJ_MEM_SHARED && t->dst.mem == RJ_MEM_SHARED) {
    /* each array 16-byte aligned, as the harness places them; dst in the result's dtype */
    int64_t b = ir_dtype(t->dtype)->bytes, bd = ir_dtype(ir_tile_result(t))->bytes;
    int64_t bytes = IR_ALIGN16(ir_numel(&t->src) * b) + IR_ALIGN16(ir_numel(&t->dst) * bd);
    if (bytes > IR_STATIC_SHARED)
      return ir_fail(e, RJ_EINVAL,
                     "src.shape: src and dst take %lld bytes of shared memory; a CTA's static "
                     "shared memory is 48 KiB",
                     (long long)bytes);
  }
  return RJ_OK;
}

static rj_status validate_subgroup(const rj_subgroup *g, ir_err *e) {
  if ((unsigned)g->primitive >= IR_PRIMITIVES)
    return ir_fail(e, RJ_EINVAL, "primitive: unknown value");
  int op = ir_primitive_op(g->primitive, NULL);
  if ((op == RJ_OP_VAR || op == RJ_OP_STD) && (g->correction < 0 || g->correction > 1 << 30))
    return ir_fail(e, RJ_EINVAL, "correction: %d, expected 0 .. 2^30", g->correction);
  if (!ir_dtype(g->dtype)) return ir_fail(e, RJ_EINVAL, "dtype: unknown value");
  rj_status ks = check_kind_dtype(g->dtype, RJ_KIND_SUBGROUP, e);
  if (ks) return ks;
  if (g->log2_size < 0 || g->log2_size > 5)
    return ir_fail(e, RJ_EINVAL, "log2_size: %d is outside 0..5 (a group is 1 to 32 lanes)",
                   g->log2_size);
  if (g->threads < 32 || g->threads > 1024 || g->threads % 32)
    return ir_fail(e, RJ_EINVAL, "threads: %d must be a multiple of 32 in 32..1024", g->threads);
  if (g->blocks < 1 || g->blocks > 65535)
    return ir_fail(e, RJ_EINVAL, "blocks: %d is outside 1..65535", g->blocks);
  const char *why = ir_primitive_dtype_reason(g->primitive, g->dtype);
  if (why) return ir_fail(e, RJ_EINVAL, "dtype: %s", why);
  combine_use u = {.op = op == RJ_OP_CUSTOM ? RJ_OP_CUSTOM : RJ_OP_SUM, .dtype = g->dtype};
  rj_status s = validate_combine(u, &g->combine, e);
  if (s) return s;
  bool lane_arg = g->primitive == RJ_PRIM_BROADCAST || g->primitive == RJ_PRIM_SHUFFLE_DOWN ||
                  g->primitive == RJ_PRIM_SHUFFLE_UP || g->primitive == RJ_PRIM_SHUFFLE_XOR ||
                  (g->primitive == RJ_PRIM_SHUFFLE && !g->index_is_list);
  if (lane_arg && (g->arg < 0 || g->arg > 31))
    return ir_fail(e, RJ_EINVAL, "%s: %d is not a lane (0..31)",
                   g->primitive == RJ_PRIM_SHUFFLE ? "index" : "arg", g->arg);
  if (g->index_is_list) {
    if (g->primitive != RJ_PRIM_SHUFFLE)
      return ir_fail(e, RJ_EINVAL, "index: only the shuffle primitive takes an index list");
    for (int i = 0; i < 32; i++)
      if (g->index[i] < 0 || g->index[i] > 31)
        return ir_fail(e, RJ_EINVAL, "index[%d]: %d is not a lane (0..31)", i, g->index[i]);
  }
  return RJ_OK;
}

/* A combine's function name: 1 .. 127 printable ASCII characters, no space, quote or backslash. */
static rj_status check_name(const char *name, const char *field, bool required, ir_err *e) {
  size_t fn = strnlen(name, RJ_COMBINE_FN_MAX);
  if (fn == 0 && required) return ir_fail(e, RJ_EINVAL, "%s: required with op \"custom\"", field);
  if (fn == RJ_COMBINE_FN_MAX)
    return ir_fail(e, RJ_EINVAL, "%s: longer than %d characters", field, RJ_COMBINE_FN_MAX - 1);
  for (size_t i = 0; i < fn; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c <= ' ' || c >= 127 || c == '"' || c == '\\')
      return ir_fail(e, RJ_EINVAL,
                     "%s: character %zu is not printable ASCII (no space, quote or backslash)",
                     field, i);
  }
  return RJ_OK;
}

/* identity bits within the dtype's width (field: its name in messages) */
static rj_status check_bits(uint64_t bits, rj_dtype t, const char *field, ir_err *e) {
  int w = 8 * ir_dtype(t)->bytes;
  if (w < 64 && bits >> w)
    return ir_fail(e, RJ_EINVAL, "%s: 0x%llx has bits above the %d of %s", field,
                   (unsigned long long)bits, w, ir_dtype(t)->name);
  return RJ_OK;
}

/* A struct state's fields (nfields > 0), or none of its fields for a scalar state. */
static rj_status validate_state(const rj_combine *t, ir_err *e) {
  int n = t->nfields;
  if (n == 0) {
    if (t->lift[0]) return ir_fail(e, RJ_EINVAL, "combine.lift: applies only with combine.state");
    if (t->finish[0])
      return ir_fail(e, RJ_EINVAL, "combine.finish: applies only with combine.state");
    if (t->result) return ir_fail(e, RJ_EINVAL, "combine.result: applies only with combine.state");
    return RJ_OK;
  }
  if (n < 0 || n > RJ_COMBINE_FIELDS_MAX)
    return ir_fail(e, RJ_EINVAL, "combine.state: %d fields, expected 1 to %d", n,
                   RJ_COMBINE_FIELDS_MAX);
  if (t->identity)
    return ir_fail(e, RJ_EINVAL,
                   "combine.identity: not with combine.state (each field has its identity)");
  for (int i = 0; i < n; i++) {
    char field[48];
    snprintf(field, sizeof field, "combine.state[%d].dtype", i);
    if (!ir_dtype(t->fields[i]))
      return ir_fail(e, RJ_EINVAL, "%s: unknown value %d", field, (int)t->fields[i]);
    if (ir_dtype_tensor_only(t->fields[i]))
      return ir_fail(e, RJ_EINVAL, "%s: %s is not a state field dtype (f16 .. u64)", field,
                     ir_dtype(t->fields[i])->name);
    snprintf(field, sizeof field, "combine.state[%d].identity", i);
    rj_status s = check_bits(t->field_identity[i], t->fields[i], field, e);
    if (s) return s;
  }
  rj_status s = check_name(t->lift, "combine.lift", true, e);
  if (!s) s = check_name(t->finish, "combine.finish", false, e);
  if (s) return s;
  if (t->result < 0 || t->result >= n)
    return ir_fail(e, RJ_EINVAL, "combine.result: %d, expected a field 0 .. %d", t->result, n - 1);
  return RJ_OK;
}

static bool any_field(const rj_combine *t) {
  return t->ir || t->fn[0] || t->identity || t->commutative || t->nfields || t->lift[0] ||
         t->finish[0] || t->result;
}

/* Op custom's combine as u uses it: its fields, or none of them for the other ops. */
static rj_status validate_combine(combine_use u, const rj_combine *t, ir_err *e) {
  if (u.op != RJ_OP_CUSTOM)
    return any_field(t) ? ir_fail(e, RJ_EINVAL, "combine: applies only to op \"custom\"") : RJ_OK;
  if (!t->ir)
    return ir_fail(e, RJ_EINVAL, "combine.ir: required with op \"custom\" (LLVM IR text)");
  size_t n = strnlen(t->ir, RJ_COMBINE_IR_MAX + 1);
  if (n == 0) return ir_fail(e, RJ_EINVAL, "combine.ir: empty");
  if (n > RJ_COMBINE_IR_MAX)
    return ir_fail(e, RJ_EINVAL, "combine.ir: longer than %zu bytes (RJ_COMBINE_IR_MAX)",
                   (size_t)RJ_COMBINE_IR_MAX);
  int nfields = t->nfields;
  rj_status s = check_name(t->fn, "combine.function", true, e);
  if (!s) s = validate_state(t, e);
  if (!s && !nfields) s = check_bits(t->identity, u.dtype, "combine.identity", e);
  if (s) return s;
  if ((unsigned)t->commutative > 1)
    return ir_fail(e, RJ_EINVAL, "combine.commutative: %d, expected 0 or 1", t->commutative);
  if (u.nan != RJ_NAN_PROPAGATE)
    return ir_fail(e, RJ_EINVAL,
                   "nan: \"ignore\" applies to the built-in ops; a custom combine sees every "
                   "element (filter NaNs in it)");
  if (u.accum && !t->commutative && !u.accum_ordered)
    return ir_fail(e, RJ_EINVAL,
                   "accum: not with a non-commutative combine (the order of the old value and "
                   "the result is not defined yet)");
  if (u.accum && nfields && u.accum_ordered)
    return ir_fail(e, RJ_EINVAL,
                   "accum: not with a struct state (the destination holds the output, field "
                   "combine.result or finish's, not a state to fold into)");
  if (u.accum && !u.accum_ordered && (nfields || u.dtype == RJ_F16 || u.dtype == RJ_BF16))
    return ir_fail(e, RJ_EINVAL,
                   "accum: not with a struct state or an f16 / bf16 custom state (the output is "
                   "not a state to fold into)");
  return RJ_OK;
}

/* acc_dtype "f64" (acc_f64): sums, products and means of floats. */
static rj_status check_acc_f64(const rj_tensor *t, ir_err *e) {
  if ((unsigned)t->acc_f64 > 1)
    return ir_fail(e, RJ_EINVAL, "acc_dtype: acc_f64 %d, expected 0 or 1", t->acc_f64);
  if (!t->acc_f64) return RJ_OK;
  if (t->op != RJ_OP_SUM && t->op != RJ_OP_PROD && t->op != RJ_OP_MEAN)
    return ir_fail(e, RJ_EINVAL,
                   "acc_dtype: \"f64\" applies to ops sum, prod and mean, not \"%s\"%s",
                   ir_op_name(t->op),
                   t->op == RJ_OP_CUSTOM ? " (a custom state chooses its own field types)" : "");
  if (!ir_dtype(t->dtype)->is_float || ir_dtype(t->dtype)->fp8)
    return ir_fail(e, RJ_EINVAL, "acc_dtype: \"f64\" applies to float dtypes, not %s",
                   ir_dtype(t->dtype)->name);
  return RJ_OK;
}

/* ---- fused maps: "others", "map", "epilogue", "scale" (docs/TENSOR.md "Fused maps") */

/* Whether src's layout is nested (descending strides each above the span of the smaller ones,
 * every dim of size > 1 with a stride >= 1): an offset in it names one index. */
static bool src_nested(const rj_tensor *t) {
  int64_t st[RJ_MAX_DIMS], span = 1;
  int ord[RJ_MAX_DIMS];
  for (int i = ir_tensor_stride_order(t, st, ord) - 1; i >= 0; i--) { /* smallest stride first */
    if (st[ord[i]] < span) return false;
    span = st[ord[i]] * t->shape[ord[i]];
  }
  return true;
}

static rj_status check_others(const rj_tensor *t, ir_err *e) {
  if (t->nothers < 0 || t->nothers > RJ_TENSOR_OTHERS_MAX)
    return ir_fail(e, RJ_EINVAL, "others: %d inputs, expected 0 .. %d", t->nothers,
                   RJ_TENSOR_OTHERS_MAX);
  if (t->fused.map != RJ_MAP_IR && t->nothers != ir_map_others(t->fused.map))
    return ir_fail(e, RJ_EINVAL, "others: %d inputs, map \"%s\" takes %d besides src", t->nothers,
                   ir_map_name(t->fused.map), ir_map_others(t->fused.map));
  for (int i = 0; i < t->nothers; i++) {
    if (!ir_dtype(t->other_dtype[i]))
      return ir_fail(e, RJ_EINVAL, "others[%d].dtype: unknown dtype %d", i, t->other_dtype[i]);
    if (ir_dtype(t->other_dtype[i])->fp8)
      return ir_fail(e, RJ_EINVAL, "others[%d].dtype: %s, the fused maps do not take float8 inputs",
                     i, ir_dtype(t->other_dtype[i])->name);
    if (t->fused.map != RJ_MAP_WHERE && t->fused.map != RJ_MAP_IR && t->other_dtype[i] != t->dtype)
      return ir_fail(e, RJ_EINVAL,
                     "others[%d].dtype: %s, map \"%s\" takes src's dtype %s (a mask of map "
                     "\"where\" may differ)",
                     i, ir_dtype(t->other_dtype[i])->name, ir_map_name(t->fused.map),
                     ir_dtype(t->dtype)->name);
    if ((unsigned)t->other_has_strides[i] > 1)
      return ir_fail(e, RJ_EINVAL, "others[%d].strides: has_strides %d, expected 0 or 1", i,
                     t->other_has_strides[i]);
    if (!t->other_has_strides[i]) continue;
    for (int d = 0; d < t->ndim; d++)
      if (t->other_strides[i][d] < 0)
        return ir_fail(e, RJ_EINVAL, "others[%d].strides[%d]: %lld; strides are non-negative", i, d,
                       (long long)t->other_strides[i][d]);
    if (!src_nested(t))
      return ir_fail(e, RJ_EINVAL,
                     "others[%d].strides: need src's layout nested (no stride 0, no overlap) "
                     "to place another layout",
                     i);
    if (t->dynamic)
      return ir_fail(e, RJ_EINVAL,
                     "others[%d].strides: not with \"dynamic\" (an input of its own layout "
                     "needs a constant kernel; omit strides for src's layout)",
                     i);
  }
  return RJ_OK;
}

/* map RJ_MAP_IR: the text in combine.ir, a float src (its elements pass as they are), any other
 * inputs' (0 .. RJ_TENSOR_OTHERS_MAX), not with op custom (whose combine holds its own text) */
static rj_status check_map_ir(const rj_tensor *t, ir_err *e) {
  if (t->op == RJ_OP_CUSTOM)
    return ir_fail(e, RJ_EINVAL,
                   "map: a caller's map is not with op \"custom\" (its combine.lift is the map)");
  if (!t->combine.ir) return ir_fail(e, RJ_EINVAL, "map.ir: required (LLVM IR text in combine.ir)");
  size_t n = strnlen(t->combine.ir, RJ_COMBINE_IR_MAX + 1);
  if (n == 0) return ir_fail(e, RJ_EINVAL, "map.ir: empty");
  if (n > RJ_COMBINE_IR_MAX)
    return ir_fail(e, RJ_EINVAL, "map.ir: longer than %zu bytes (RJ_COMBINE_IR_MAX)",
                   (size_t)RJ_COMBINE_IR_MAX);
  if (!t->fused.map_fn[0]) return ir_fail(e, RJ_EINVAL, "map.function: required (the map's name)");
  rj_status s = check_name(t->fused.map_fn, "map.function", true, e);
  if (s) return s;
  if (!ir_dtype(t->dtype)->is_float || ir_dtype(t->dtype)->fp8)
    return ir_fail(e, RJ_EINVAL, "map: a caller's map applies to f16, bf16, f32 and f64, not %s",
                   ir_dtype(t->dtype)->name);
  return RJ_OK;
}

/* The built-in maps and epilogues a base op and dtype take (kinds tensor and tile); acc64: the
 * accumulator is f64 (else f32 for floats: the scale must fit it). */
static rj_status check_fused_op(rj_op op, rj_dtype dt, const rj_fused *f, int accum, bool acc64,
                                bool one_input, ir_err *e) {
  rj_map map = f->map;
  rj_epilogue epi = f->epilogue;
  double scale = f->scale;
  bool base =
      op == RJ_OP_SUM || op == RJ_OP_MEAN || op == RJ_OP_MAX || op == RJ_OP_MIN || op == RJ_OP_PROD;
  if ((map || epi) && !base)
    return ir_fail(e, RJ_EINVAL, "%s: applies to ops sum, mean, max, min and prod, not \"%s\"",
                   map ? "map" : "epilogue", ir_op_name(op));
  bool int_map = map == RJ_MAP_WHERE || map == RJ_MAP_NONZERO; /* integers take these */
  if ((map || epi) && ir_dtype(dt)->fp8)
    return ir_fail(e, RJ_EINVAL, "%s: the fused maps do not take float8 dtypes (%s)",
                   map ? "map" : "epilogue", ir_dtype(dt)->name);
  if (epi && !ir_dtype(dt)->is_float)
    return ir_fail(e, RJ_EINVAL, "epilogue: applies to float dtypes, not %s", ir_dtype(dt)->name);
  if (map && !int_map && !ir_dtype(dt)->is_float)
    return ir_fail(e, RJ_EINVAL, "map: \"%s\" applies to float dtypes, not %s (integers take %s)",
                   ir_map_name(map), ir_dtype(dt)->name,
                   one_input ? "\"nonzero\"" : "\"where\" and \"nonzero\"");
  if (map && !ir_dtype(dt)->is_float && op == RJ_OP_MEAN)
    return ir_fail(e, RJ_EINVAL,
                   "map: op mean of an integer dtype (%s) takes no map: reduce sum, and divide",
                   ir_dtype(dt)->name);
  if (epi && accum)
    return ir_fail(e, RJ_EINVAL, "epilogue: not with accum (the old value has had its epilogue)");
  if (epi != RJ_EPI_SCALE && scale != 0)
    return ir_fail(e, RJ_EINVAL, "scale: applies only to epilogue \"scale\"");
  if (epi == RJ_EPI_SCALE && !isfinite(scale))
    return ir_fail(e, RJ_EINVAL, "scale: %g, expected a finite number", scale);
  if (epi == RJ_EPI_SCALE && !acc64 && fabs(scale) > FLT_MAX)
    return ir_fail(e, RJ_EINVAL,
                   "scale: %g does not fit the f32 accumulator of %s (at most %g in magnitude)",
                   scale, ir_dtype(dt)->name, (double)FLT_MAX);
  return RJ_OK;
}

/* An rj_fused record of any kind: its enums in range, each function name only with its IR. */
static rj_status check_fused_record(const rj_fused *f, ir_err *e) {
  if ((unsigned)f->map > RJ_MAP_IR) return ir_fail(e, RJ_EINVAL, "map: %d, not a map", f->map);
  if (f->map != RJ_MAP_IR && f->map_fn[0])
    return ir_fail(e, RJ_EINVAL, "map.function: applies only to a caller's map (RJ_MAP_IR)");
  if ((unsigned)f->epilogue > RJ_EPI_IR)
    return ir_fail(e, RJ_EINVAL, "epilogue: %d, not an epilogue", f->epilogue);
  if (f->epilogue != RJ_EPI_IR && f->epilogue_fn[0])
    return ir_fail(e, RJ_EINVAL,
                   "epilogue.function: applies only to a caller's epilogue (RJ_EPI_IR)");
  return RJ_OK;
}

static rj_status check_map(const rj_tensor *t, ir_err *e) {
  rj_status s0 = check_fused_record(&t->fused, e);
  if (s0 || (s0 = t->fused.map == RJ_MAP_IR ? check_map_ir(t, e) : RJ_OK)) return s0;
  if (t->fused.epilogue == RJ_EPI_IR) {
    if (t->op == RJ_OP_CUSTOM)
      return ir_fail(e, RJ_EINVAL, "epilogue: a caller's epilogue is not with op \"custom\"");
    if (!t->combine.ir || !t->combine.ir[0])
      return ir_fail(e, RJ_EINVAL, "epilogue.ir: required (LLVM IR text in combine.ir)");
    if (strnlen(t->combine.ir, RJ_COMBINE_IR_MAX + 1) > RJ_COMBINE_IR_MAX)
      return ir_fail(e, RJ_EINVAL, "epilogue.ir: longer than %zu bytes (RJ_COMBINE_IR_MAX)",
                     (size_t)RJ_COMBINE_IR_MAX);
    rj_status se = check_name(t->fused.epilogue_fn, "epilogue.function", true, e);
    if (se) return se;
  }
  return (s0 = check_fused_op(t->op, t->dtype, &t->fused, t->accum,
                              t->dtype == RJ_F64 || t->acc_f64, false, e))
             ? s0
             : check_others(t, e);
}

/* An empty reduction (a reduced dim of size 0) with outputs: max min argmax argmin have no
 * identity, and refuse as NumPy raises; the others write theirs (mean var std: NaN). */
static rj_status check_empty(const rj_tensor *t, const bool *red, ir_err *e) {
  int64_t outputs = 1;
  int zero = -1;
  for (int d = 0; d < t->ndim; d++)
    if (red[d] && t->shape[d] == 0)
      zero = d;
    else if (!red[d])
      outputs *= t->shape[d] ? 1 : 0;
  bool none = t->op == RJ_OP_MAX || t->op == RJ_OP_MIN || t->op == RJ_OP_ARGMAX ||
              t->op == RJ_OP_ARGMIN || t->op == RJ_OP_CUSTOM;
  if (zero < 0 || outputs == 0 || !none) return RJ_OK;
  return ir_fail(e, RJ_EINVAL,
                 "shape[%d]: 0 along a reduced axis (axes): op \"%s\" of an empty reduction has "
                 "no identity (NumPy raises)",
                 zero, ir_op_name(t->op));
}

/* A list request ("list", rj_reduce_multi): N 1-D tensors each reduced whole, the view's
 * fields unused; the scalar ops, maps and epilogues, no second input. */
static rj_status validate_list(const rj_tensor *t, ir_err *e) {
  if (t->list_count < 1 || t->list_count > IR_LIST_MAX)
    return ir_fail(e, RJ_EINVAL, "list.count: %lld is outside 1..%d", (long long)t->list_count,
                   IR_LIST_MAX);
  if ((unsigned)t->list_total > 1)
    return ir_fail(e, RJ_EINVAL, "list.total: %d, expected 0 or 1", t->list_total);
  if (t->ndim || t->naxes || t->has_strides)
    return ir_fail(e, RJ_EINVAL, "shape: not with \"list\" (lengths and strides are in the table)");
  if (!(IR_LIST_OPS & (1u << t->op)))
    return ir_fail(e, RJ_EINVAL,
                   "op: \"%s\" is not served over a list (sum, max, min, prod, mean, and, or, "
                   "xor and the named fused ops are)",
                   ir_op_name(t->op));
  if (t->op == RJ_OP_MEAN && t->list_total)
    return ir_fail(e, RJ_EINVAL,
                   "list.total: not with op mean (reduce sum with total, and divide by the "
                   "lengths' sum)");
  static const char *const no[] = {"accum", "values", "dynamic"};
  int on[] = {t->accum, t->values, t->dynamic};
  for (int i = 0; i < 3; i++)
    if (on[i]) return ir_fail(e, RJ_EINVAL, "%s: not with \"list\"", no[i]);
  if (t->nothers || ir_map_others(t->fused.map))
    return ir_fail(e, RJ_EINVAL,
                   "others: a list takes one input per tensor (maps abs, square and nonzero)");
  if (t->fused.map == RJ_MAP_IR || t->fused.epilogue == RJ_EPI_IR)
    return ir_fail(e, RJ_EINVAL, "%s: a caller's IR is not served over a list (built-in ones are)",
                   t->fused.map == RJ_MAP_IR ? "map" : "epilogue");
  if (t->segments) return ir_fail(e, RJ_EINVAL, "segments: not with \"list\"");
  rj_status s = check_acc_f64(t, e);
  return s ? s : check_map(t, e);
}

/* "segments" (docs/TENSOR.md "Segmented reductions"): S segments of axis 0 of a contiguous 1-D
 * src, or of the rows of a contiguous 2-D one; the fields it does not combine with yet refused. */
static rj_status check_segments(const rj_tensor *t, ir_err *e) {
  if (t->segments < 0 || t->segments >= ((int64_t)1 << 31))
    return ir_fail(e, RJ_EINVAL, "segments.count: %lld, expected 1 .. 2^31 - 1",
                   (long long)t->segments);
  if (!t->segments) return RJ_OK;
  if (t->segments_dtype != RJ_I32 && t->segments_dtype != RJ_I64)
    return ir_fail(e, RJ_EINVAL, "segments.dtype: %s, expected i32 or i64",
                   ir_dtype(t->segments_dtype) ? ir_dtype(t->segments_dtype)->name : "?");
  if (t->ndim < 1 || t->ndim > 2 || t->naxes != 1 || t->axes[0] != 0)
    return ir_fail(e, RJ_EINVAL,
                   "segments: need a 1-D src, or a 2-D [N, C] one, reduced over axis 0 (axes: "
                   "[0])");
  const char *no = t->has_strides ? "strides (src must be contiguous)"
                   : t->nothers || t->fused.map || t->fused.epilogue ? "others, map or epilogue"
                   : t->accum                                        ? "accum"
                   : t->values                                       ? "values"
                   : t->dynamic                                      ? "dynamic"
                   : t->op == RJ_OP_CUSTOM                           ? "op custom"
                                                                     : NULL;
  if (no) return ir_fail(e, RJ_EINVAL, "segments: not with %s", no);
  if (t->segments_dtype == RJ_I32 && t->shape[0] > INT32_MAX)
    return ir_fail(e, RJ_EINVAL, "segments.dtype: i32 offsets cannot reach shape[0] = %lld",
                   (long long)t->shape[0]);
  int64_t cols = t->ndim == 2 ? t->shape[1] : 1;
  if (cols && t->segments > ((int64_t)1 << 31) / cols)
    return ir_fail(e, RJ_EINVAL, "segments.count: %lld segments x %lld columns exceed 2^31 outputs",
                   (long long)t->segments, (long long)cols);
  return RJ_OK;
}

/* A strided view: non-negative strides, a span within 2^46 elements, kept dims not overlapping */
static rj_status check_tensor_strides(const rj_tensor *t, const bool *red, ir_err *e) {
  for (int d = 0; d < t->ndim; d++)
    if (t->strides[d] < 0 || (t->strides[d] == 0 && t->shape[d] > 1 && !red[d]))
      return ir_fail(e, RJ_EINVAL,
                     "strides[%d]: %lld; strides are non-negative and a kept dim of size > 1 "
                     "needs a non-zero stride",
                     d, (long long)t->strides[d]);
  { /* the view's span, before anything multiplies strides by sizes */
    int64_t span = 0, step = 0;
    for (int d = 0; d < t->ndim; d++)
      if (t->strides[d] > IR_MAX_SPAN ||
          __builtin_mul_overflow(t->shape[d] - 1, t->strides[d], &step) ||
          (span += step) > IR_MAX_SPAN)
        return ir_fail(e, RJ_EINVAL, "strides[%d]: the view would span more than 2^46 elements", d);
  }
  { /* kept dims must not overlap: distinct outputs read distinct elements */
    int ord[RJ_MAX_DIMS], n = 0;
    for (int d = 0; d < t->ndim; d++)
      if (!red[d] && t->shape[d] > 1) ord[n++] = d;
    for (int i = 1; i < n; i++) /* by stride, ascending */
      for (int j = i; j > 0 && t->strides[ord[j]] < t->strides[ord[j - 1]]; j--) {
        int x = ord[j];
        ord[j] = ord[j - 1];
        ord[j - 1] = x;
      }
    int64_t span = 0; /* the last element offset reached by the smaller-stride kept dims */
    for (int i = 0; i < n; i++) {
      int d = ord[i];
      if (t->strides[d] <= span)
        return ir_fail(e, RJ_EINVAL,
                       "strides[%d]: %lld makes outputs overlap (kept dims must not share "
                       "elements: it must exceed %lld)",
                       d, (long long)t->strides[d], (long long)span);
      span += (t->shape[d] - 1) * t->strides[d];
    }
  }
  return RJ_OK;
}

/* values, dynamic and invariant: 0 or 1, and where they apply */
static rj_status check_tensor_flags(const rj_tensor *t, ir_err *e) {
  if ((unsigned)t->values > 1)
    return ir_fail(e, RJ_EINVAL, "values: %d, expected 0 or 1", t->values);
  if (t->values && t->op != RJ_OP_ARGMAX && t->op != RJ_OP_ARGMIN)
    return ir_fail(e, RJ_EINVAL,
                   "values: applies only to op \"argmax\" or \"argmin\" (the extreme value "
                   "beside its index)");
  if ((unsigned)t->dynamic > 1)
    return ir_fail(e, RJ_EINVAL, "dynamic: %d, expected 0 or 1", t->dynamic);
  if ((unsigned)t->invariant > 1)
    return ir_fail(e, RJ_EINVAL, "invariant: %d, expected 0 or 1", t->invariant);
  if (t->invariant && !t->deterministic)
    return ir_fail(e, RJ_EINVAL,
                   "invariant: needs \"deterministic\" (an invariant result is deterministic)");
  return RJ_OK;
}

static rj_status validate_tensor(const rj_tensor *t, ir_err *e) {
  rj_status s = ir_check_op(t->op, t->dtype, e);
  if (s || (s = check_mean(t->op, t->accum, t->nan, e))) return s;
  if (t->list_count || t->list_total) return validate_list(t, e);
  combine_use u = {.op = t->op, .dtype = t->dtype, .nan = t->nan, .accum = t->accum};
  rj_combine cb = t->combine;
  if ((t->fused.map == RJ_MAP_IR || t->fused.epilogue == RJ_EPI_IR) && t->op != RJ_OP_CUSTOM)
    /* combine.ir holds the map's (the epilogue's) text */
    cb.ir = NULL, cb.text = 0;
  if ((s = validate_combine(u, &cb, e))) return s;
  if ((s = check_tensor_flags(t, e))) return s;
  if ((s = check_state(t->op, t->accum, t->correction, e))) return s;
  if ((s = check_acc_f64(t, e))) return s;
  s = check_dims(e, "shape", t->shape, t->ndim, RJ_MAX_DIMS, NULL, 0);
  if (s) return s;
  bool red[RJ_MAX_DIMS];
  if ((s = check_axes(e, t->axes, t->naxes, t->ndim, red, 0))) return s;
  if ((s = check_segments(t, e))) return s;
  if (!t->segments && (s = check_empty(t, red, e))) return s;
  if (t->has_strides && (s = check_tensor_strides(t, red, e))) return s;
  return check_map(t, e);
}

/* The destination's strides must not send two elements to one place: sorted by stride, each dim
 * (of extent > 1) must step past everything the smaller dims span. */
static bool injective(const int64_t *shape, const int64_t *strides, int ndim) {
  int ord[5], n = 0;
  for (int d = 0; d < ndim; d++)
    if (shape[d] > 1) ord[n++] = d;
  for (int i = 1; i < n; i++) /* insertion sort by stride */
    for (int j = i; j > 0 && strides[ord[j]] < strides[ord[j - 1]]; j--) {
      int x = ord[j];
      ord[j] = ord[j - 1];
      ord[j - 1] = x;
    }
  int64_t span = 0; /* the largest offset the dims so far reach */
  for (int i = 0; i < n; i++) {
    if (strides[ord[i]] <= span) return false;
    span += (shape[ord[i]] - 1) * strides[ord[i]];
  }
  return true;
}

static rj_status validate_treduce(const rj_treduce *t, ir_err *e) {
  rj_status s = ir_check_op(t->op, t->dtype, e);
  if (!s) s = check_kind_dtype(t->dtype, RJ_KIND_TREDUCE, e);
  if (s) return s;
  /* mean_count: rj_treduce_run's last launch of several divides by every rank's count, and its
   * accum folds the earlier launches' partial sum */
  if (t->op != RJ_OP_MEAN && t->mean_count)
    return ir_fail(e, RJ_EINVAL, "mean_count: applies only to op \"mean\"");
  if (t->mean_count && (t->mean_count < t->ranks || t->mean_count > 1 << 20))
    return ir_fail(e, RJ_EINVAL, "mean_count: %lld is outside ranks..2^20 (%d..1048576; 0: ranks)",
                   (long long)t->mean_count, t->ranks);
  if ((s = check_mean(t->op, t->accum && t->mean_count <= t->ranks, t->nan, e))) return s;
  combine_use u = {
      .op = t->op, .dtype = t->dtype, .nan = t->nan, .accum = t->accum, .accum_ordered = true};
  if ((s = validate_combine(u, &t->combine, e))) return s;
  if ((unsigned)t->nan > RJ_NAN_IGNORE) return ir_fail(e, RJ_EINVAL, "nan: unknown value");
  if (t->ranks < 1 || t->ranks > 1024)
    return ir_fail(e, RJ_EINVAL, "ranks: %d is outside 1..1024", t->ranks);
  if (t->root < 0 || t->root >= t->ranks)
    return ir_fail(e, RJ_EINVAL, "root: %d is outside 0..%d", t->root, t->ranks - 1);
  /* a dim may be 0 (the reference's empty rows: nothing is read or written) */
  if (t->ndim < 1 || t->ndim > 5)
    return ir_fail(e, RJ_EINVAL, "shape: expected 1 to 5 dims (got %d)", t->ndim);
  int64_t n = 1;
  for (int d = 0; d < t->ndim; d++) {
    if (t->shape[d] < 0)
      return ir_fail(e, RJ_EINVAL, "shape[%d]: a dim is at least 0 (got %lld)", d,
                     (long long)t->shape[d]);
    if (t->shape[d] > MAX_ELEMS || (t->shape[d] && n > MAX_ELEMS / t->shape[d]))
      return ir_fail(e, RJ_EINVAL, "shape: more than 2^40 elements");
    n *= t->shape[d];
  }
  for (int i = 0; i < 2; i++)
    if (t->tile[i] < 0 || (t->tile[i] == 0 && (t->tile[0] || t->tile[1])))
      return ir_fail(e, RJ_EINVAL, "tile[%d]: must be at least 1 (got %lld)", i,
                     (long long)t->tile[i]);
  if ((unsigned)t->accum > 1) return ir_fail(e, RJ_EINVAL, "accum: expected 0 or 1");
  if ((unsigned)t->dynamic > 1)
    return ir_fail(e, RJ_EINVAL, "dynamic: %d, expected 0 or 1", t->dynamic);
  if ((unsigned)t->invariant > 1)
    return ir_fail(e, RJ_EINVAL, "invariant: %d, expected 0 or 1", t->invariant);
  if (t->has_strides) {
    for (int k = 0; k < 2; k++) {
      const int64_t *st = k ? t->dst_strides : t->strides;
      for (int d = 0; d < t->ndim; d++)
        if (st[d] < 0 || st[d] > MAX_ELEMS)
          return ir_fail(e, RJ_EINVAL, "%s[%d]: %lld is outside 0..2^40",
                         k ? "dst_strides" : "strides", d, (long long)st[d]);
    }
    for (int k = 0; k < 2; k++) {
      const int64_t *st = k ? t->dst_strides : t->strides;
      int64_t span = 0;
      for (int d = 0; d < t->ndim && n; d++) {
        if (st[d] && t->shape[d] - 1 > (((int64_t)1 << 46) - span) / st[d])
          return ir_fail(e, RJ_EINVAL, "%s: the buffer would span more than 2^46 elements",
                         k ? "dst_strides" : "strides");
        span += (t->shape[d] - 1) * st[d];
      }
    }
    if (n && !injective(t->shape, t->dst_strides, t->ndim))
      return ir_fail(e, RJ_EINVAL,
                     "dst_strides: two destination elements would share an address (the strides "
                     "overlap)");
  }
  return RJ_OK;
}

rj_status ir_validate(const rj_request *r, ir_err *e) {
  if (!r) return ir_fail(e, RJ_EINVAL, "request: NULL");
  if (r->struct_size != sizeof(rj_request))
    return ir_fail(e, RJ_EINVAL,
                   "request.struct_size: %u, this library expects %zu (use rj_request_init)",
                   r->struct_size, sizeof(rj_request));
  if (memchr(r->variant, 0, sizeof r->variant) == NULL)
    return ir_fail(e, RJ_EINVAL, "variant: not NUL-terminated");
  switch (r->kind) {
  case RJ_KIND_TILE:
    return validate_tile(&r->u.tile, e);
  case RJ_KIND_SUBGROUP:
    return validate_subgroup(&r->u.subgroup, e);
  case RJ_KIND_TENSOR:
    return validate_tensor(&r->u.tensor, e);
  case RJ_KIND_TREDUCE:
    return validate_treduce(&r->u.treduce, e);
  }
  return ir_fail(e, RJ_EINVAL, "kind: unknown value %d", r->kind);
}

void ir_tile_facts(const rj_tile *t, ir_tile_shape *f) {
  memset(f, 0, sizeof *f);
  f->ndim = t->src.ndim;
  for (int i = 0; i < t->naxes; i++) {
    int a = t->axes[i] < 0 ? t->axes[i] + t->src.ndim : t->axes[i];
    f->reduced[a] = true;
  }
  f->spatial_len = f->reduce_len = 1;
  for (int d = 0; d < t->src.ndim; d++) {
    int64_t ex = t->src.has_region ? t->src.extent[d] : t->src.shape[d];
    if (f->reduced[d])
      f->reduce_len *= ex;
    else
      f->spatial_len *= ex;
  }
  f->scope_threads = ir_scope_threads(t->scope);
  f->threads = t->threads ? t->threads : f->scope_threads;
  if (t->scope == RJ_SCOPE_CTA) f->scope_threads = f->threads;
}

int64_t ir_src_offset(const rj_tile *t, int64_t s, int64_t r) {
  const rj_buffer *b = &t->src;
  bool red[RJ_MAX_DIMS] = {0};
  for (int i = 0; i < t->naxes; i++)
    red[t->axes[i] < 0 ? t->axes[i] + b->ndim : t->axes[i]] = 1;
  int64_t off = 0, mul = 1;
  for (int d = b->ndim - 1; d >= 0; d--) {
    int64_t ex = b->has_region ? b->extent[d] : b->shape[d];
    int64_t st = b->has_region ? b->start[d] : 0;
    int64_t c;
    if (red[d]) {
      c = r % ex;
      r /= ex;
    } else {
      c = s % ex;
      s /= ex;
    }
    off += (st + c) * mul;
    mul *= b->shape[d];
  }
  return off;
}

int64_t ir_dst_offset(const rj_tile *t, int64_t s) {
  const rj_buffer *b = &t->dst;
  int64_t off = 0, mul = 1;
  for (int d = b->ndim - 1; d >= 0; d--) {
    int64_t ex = b->has_region ? b->extent[d] : b->shape[d];
    int64_t st = b->has_region ? b->start[d] : 0;
    off += (st + s % ex) * mul;
    s /= ex;
    mul *= b->shape[d];
  }
  return off;
}

bool ir_treduce_rank_order(const rj_treduce *t) {
  return t->op == RJ_OP_CUSTOM && !t->combine.commutative;
}

int ir_treduce_rank_at(const rj_treduce *t, int pos) {
  if (ir_treduce_rank_order(t)) return pos;
  return pos == 0 ? t->root : (pos - 1 < t->root ? pos - 1 : pos);
}

int64_t ir_treduce_mean_count(const rj_treduce *t) {
  return t->mean_count ? t->mean_count : t->ranks;
}

void ir_treduce_facts(const rj_treduce *t, ir_treduce_geom *g) {
  memset(g, 0, sizeof *g);
  int pad = 5 - t->ndim;
  int64_t ms = 1, md = 1;
  g->numel = 1;
  for (int d = 4; d >= 0; d--) {
    int k = d - pad;
    g->shape[d] = k >= 0 ? t->shape[k] : 1;
    if (k >= 0) {
      g->src_st[d] = t->has_strides ? t->strides[k] : ms;
      g->dst_st[d] = t->has_strides ? t->dst_strides[k] : md;
    }
    ms *= g->shape[d] ? g->shape[d] : 1;
    md *= g->shape[d] ? g->shape[d] : 1;
    g->numel *= g->shape[d];
  }
  g->R = g->shape[3];
  g->C = g->shape[4];
  g->TR = t->tile[0] && t->tile[0] < g->R ? t->tile[0] : g->R;
  g->TC = t->tile[1] && t->tile[1] < g->C ? t->tile[1] : g->C;
  if (g->numel == 0) return;
  g->nrc = (g->R + g->TR - 1) / g->TR;
  g->ncc = (g->C + g->TC - 1) / g->TC;
  g->nouter = g->shape[0] * g->shape[1] * g->shape[2];
  g->nchunks = g->nouter * g->nrc * g->ncc;
  g->src_span = g->dst_span = 1;
  for (int d = 0; d < 5; d++) {
    g->src_span += (g->shape[d] - 1) * g->src_st[d];
    g->dst_span += (g->shape[d] - 1) * g->dst_st[d];
  }
}

bool ir_treduce_dense(const ir_treduce_geom *g, const int64_t *st) {
  int64_t m = 1;
  for (int d = 4; d >= 0; d--) {
    if (g->shape[d] > 1 && st[d] != m) return false;
    m *= g->shape[d];
  }
  return true;
}
