/* Tables of the request vocabulary, defaults, and the error sink. */
#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rj_status ir_fail(ir_err *e, rj_status s, const char *fmt, ...) {
  if (e && e->status == RJ_OK) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->status = s;
  }
  return s;
}

/* ORDER DTYPE */
static const ir_dtype_info dtypes[] = {
    {"f16", 2, true, true, false},
    {"bf16", 2, true, true, false},
    {"f32", 4, true, true, false},
    {"f64", 8, true, true, false},
    {"i32", 4, false, true, false},
    {"u32", 4, false, false, false},
    {"i64", 8, false, true, false},
    {"u64", 8, false, false, false},
    /* kind tensor only (ir_dtype_tensor_only) */
    {"i8", 1, false, true, false},
    {"u8", 1, false, false, false},
    {"i16", 2, false, true, false},
    {"u16", 2, false, false, false},
    {"bool", 1, false, false, false},
    {"e4m3", 1, true, true, true},
    {"e5m2", 1, true, true, true},
};

int ir_dtype_count(void) {
  return (int)(sizeof dtypes / sizeof dtypes[0]);
}

bool ir_dtype_tensor_only(rj_dtype t) {
  return t >= RJ_I8 && ir_dtype(t);
}

/* the small integers and bool: reduced in 64 bits (sum / prod return them, NumPy's rule) */
static bool small_int(rj_dtype t) {
  return t >= RJ_I8 && t <= RJ_BOOL;
}

rj_dtype ir_acc_dtype(rj_op op, rj_dtype t) {
  if (ir_dtype(t) && ir_dtype(t)->fp8) return RJ_F32;
  if (!small_int(t)) return t;
  if (op == RJ_OP_MEAN || op == RJ_OP_VAR || op == RJ_OP_STD) return RJ_F64;
  return ir_dtype(t)->is_signed || t == RJ_BOOL ? RJ_I64 : RJ_U64;
}

const ir_dtype_info *ir_dtype(rj_dtype t) {
  if ((unsigned)t >= sizeof dtypes / sizeof dtypes[0]) return NULL;
  return &dtypes[t];
}

/* ORDER OP: keep in step with rj_op. */
#define FLOATS ((1u << RJ_F16) | (1u << RJ_BF16) | (1u << RJ_F32) | (1u << RJ_F64))
#define INTS ((1u << RJ_I32) | (1u << RJ_U32) | (1u << RJ_I64) | (1u << RJ_U64))
/* kind tensor only: the small integers and bool, the float8 formats */
#define SMALL ((1u << RJ_I8) | (1u << RJ_U8) | (1u << RJ_I16) | (1u << RJ_U16) | (1u << RJ_BOOL))
#define FP8 ((1u << RJ_E4M3) | (1u << RJ_E5M2))
static const ir_op_info ops[] = {
    {"sum", FLOATS | INTS | SMALL | FP8, false},
    {"max", FLOATS | INTS | SMALL | FP8, false},
    {"min", FLOATS | INTS | SMALL | FP8, false},
    {"prod", FLOATS | INTS | SMALL, false},
    {"and", INTS | SMALL, false},
    {"or", INTS | SMALL, false},
    {"xor", INTS | SMALL, false},
    {"argmax", FLOATS | INTS | SMALL | FP8, true},
    {"argmin", FLOATS | INTS | SMALL | FP8, true},
    {"mean", FLOATS | SMALL | FP8, false},
    {"var", FLOATS | SMALL | FP8, false},
    {"std", FLOATS | SMALL | FP8, false},
    {"logsumexp", FLOATS | FP8, false},
    {"custom", FLOATS | INTS, false},
};

const ir_op_info *ir_op(rj_op op) {
  if ((unsigned)op >= sizeof ops / sizeof ops[0]) return NULL;
  return &ops[op];
}

int ir_op_count(void) {
  return (int)(sizeof ops / sizeof ops[0]);
}

const char *ir_op_name(rj_op op) {
  return ir_op(op) ? ops[op].name : "?";
}

rj_dtype ir_op_result(rj_op op, rj_dtype t) {
  if (ir_op(op) && ops[op].index_result) return RJ_I64;
  if (op == RJ_OP_MAX || op == RJ_OP_MIN || op == RJ_OP_CUSTOM) return t;
  if (ir_dtype(t) && ir_dtype(t)->fp8) return RJ_F32;
  if (!small_int(t) || op == RJ_OP_AND || op == RJ_OP_OR || op == RJ_OP_XOR) return t;
  return ir_acc_dtype(op, t); /* sum prod: i64 / u64; mean var std: f64 */
}

rj_dtype ir_result_dtype(rj_op op, rj_dtype t, const rj_combine *c) {
  if (op == RJ_OP_CUSTOM && c && c->nfields > 0 && c->result >= 0 && c->result < c->nfields &&
      c->result < RJ_COMBINE_FIELDS_MAX)
    return c->fields[c->result];
  return ir_op_result(op, t);
}

rj_dtype ir_tensor_result(const rj_tensor *t) {
  return ir_result_dtype(t->op, t->dtype, &t->combine);
}

rj_dtype ir_tile_result(const rj_tile *t) {
  return ir_result_dtype(t->op, t->dtype, &t->combine);
}

rj_dtype ir_subgroup_result(const rj_subgroup *g) {
  int op = ir_primitive_op(g->primitive, NULL);
  return op < 0 ? g->dtype : ir_result_dtype((rj_op)op, g->dtype, &g->combine);
}

rj_dtype ir_treduce_result(const rj_treduce *t) {
  return ir_result_dtype(t->op, t->dtype, &t->combine);
}

/* rj_treduce must not grow rj_request's union (rj_tile is its largest member, rj_tensor next) */
_Static_assert(sizeof(rj_treduce) <= sizeof(rj_tensor), "rj_tensor is rj_request's largest kind");

rj_status ir_check_op(rj_op op, rj_dtype t, ir_err *e) {
  const ir_op_info *o = ir_op(op);
  if (!o) return ir_fail(e, RJ_EINVAL, "op: unknown value %d", (int)op);
  if (!ir_dtype(t)) return ir_fail(e, RJ_EINVAL, "dtype: unknown value %d", (int)t);
  if (!(o->dtypes & (1u << t))) {
    unsigned base = o->dtypes & (FLOATS | INTS);
    char also[96] = "";
    for (int d = RJ_I8; d < ir_dtype_count(); d++)
      if (o->dtypes & (1u << d))
        snprintf(also + strlen(also), sizeof also - strlen(also), " %s", dtypes[d].name);
    return ir_fail(e, RJ_EINVAL, "op: \"%s\" takes %s dtypes, not %s%s%s%s", o->name,
                   base == FLOATS ? "float (f16 bf16 f32 f64)"
                   : base == INTS ? "integer (i32 u32 i64 u64)"
                                  : "f16 bf16 f32 f64 i32 u32 i64 u64",
                   ir_dtype(t)->name, also[0] ? " (kind tensor also:" : "", also,
                   also[0] ? ")" : "");
  }
  return RJ_OK;
}

int ir_request_op(const rj_request *r) {
  switch (r->kind) {
  case RJ_KIND_TILE:
    return (int)r->u.tile.op;
  case RJ_KIND_TENSOR:
    return (int)r->u.tensor.op;
  case RJ_KIND_TREDUCE:
    return (int)r->u.treduce.op;
  case RJ_KIND_SUBGROUP: /* the custom primitives' op; the others have none here */
    return ir_primitive_op(r->u.subgroup.primitive, NULL) == RJ_OP_CUSTOM ? RJ_OP_CUSTOM : -1;
  default:
    return -1;
  }
}

rj_combine *ir_request_combine_mut(rj_request *r) {
  if (r && r->kind == RJ_KIND_TENSOR &&
      (r->u.tensor.fused.map == RJ_MAP_IR ||
       r->u.tensor.fused.epilogue == RJ_EPI_IR)) /* the IR's holder */
    return &r->u.tensor.combine;
  if (!r || ir_request_op(r) != RJ_OP_CUSTOM) return NULL;
  switch (r->kind) {
  case RJ_KIND_TILE:
    return &r->u.tile.combine;
  case RJ_KIND_SUBGROUP:
    return &r->u.subgroup.combine;
  case RJ_KIND_TENSOR:
    return &r->u.tensor.combine;
  case RJ_KIND_TREDUCE:
    return &r->u.treduce.combine;
  }
  return NULL;
}

void ir_request_free_combine(rj_request *r) {
  rj_combine *c = ir_request_combine_mut(r);
  if (!c) return;
  free((char *)c->ir);
  c->ir = NULL;
}

const rj_combine *ir_request_combine(const rj_request *r) {
  return ir_request_combine_mut((rj_request *)r);
}

bool ir_combine_equal(const rj_combine *a, const rj_combine *b) {
  if (!a->ir || !b->ir || a->identity != b->identity || a->commutative != b->commutative ||
      a->nfields != b->nfields || a->result != b->result ||
      memcmp(a->fields, b->fields, sizeof a->fields) != 0 ||
      memcmp(a->field_identity, b->field_identity, sizeof a->field_identity) != 0 ||
      strncmp(a->fn, b->fn, sizeof a->fn) != 0 || strncmp(a->lift, b->lift, sizeof a->lift) != 0 ||
      strncmp(a->finish, b->finish, sizeof a->finish) != 0)
    return false;
  return a->ir == b->ir || strcmp(a->ir, b->ir) == 0; /* the text decides, not where it lies */
}

size_t ir_combine_names(const rj_combine *c, char *buf, size_t n) {
  int w = c->nfields > 0
              ? snprintf(buf, n, "%s %s%s%s", c->fn, c->lift, c->finish[0] ? " " : "", c->finish)
              : snprintf(buf, n, "%s", c->fn);
  return w < 0 ? 0 : (size_t)w;
}

const char *ir_scope_name(rj_scope s) {
  static const char *n[] = {"thread", "warp", "warpgroup", "cta"};
  return (unsigned)s < 4 ? n[s] : "?";
}

int ir_scope_threads(rj_scope s) {
  static const int n[] = {1, 32, 128, 0};
  return (unsigned)s < 4 ? n[s] : 0;
}

const char *ir_mem_name(rj_mem m) {
  return m == RJ_MEM_SHARED ? "shared" : m == RJ_MEM_LOCAL ? "local" : "?";
}

const char *ir_kind_name(rj_kind k) {
  switch (k) {
  case RJ_KIND_TILE:
    return "tile";
  case RJ_KIND_SUBGROUP:
    return "subgroup";
  case RJ_KIND_TENSOR:
    return "tensor";
  case RJ_KIND_TREDUCE:
    return "treduce";
  }
  return "?";
}

const char *const ir_primitive_names[IR_PRIMITIVES] = {
    "shuffle",          "broadcast",         "shuffle_down",
    "shuffle_up",       "shuffle_xor",       "reduce_add",
    "reduce_min",       "reduce_max",        "reduce_all_add",
    "reduce_all_min",   "reduce_all_max",    "invocation_id",
    "reduce_mul",       "reduce_and",        "reduce_or",
    "reduce_xor",       "reduce_all_mul",    "reduce_all_and",
    "reduce_all_or",    "reduce_all_xor",    "reduce_argmax",
    "reduce_argmin",    "reduce_var",        "reduce_std",
    "reduce_logsumexp", "reduce_all_argmax", "reduce_all_argmin",
    "reduce_all_var",   "reduce_all_std",    "reduce_all_logsumexp",
    "reduce_custom",    "reduce_all_custom"};

const char *ir_primitive_name(rj_primitive p) {
  return (unsigned)p < IR_PRIMITIVES ? ir_primitive_names[p] : "?";
}

int ir_primitive_op(rj_primitive p, bool *all) {
  static const rj_op ops[] = {RJ_OP_SUM,    RJ_OP_MIN, RJ_OP_MAX, RJ_OP_PROD,
                              RJ_OP_AND,    RJ_OP_OR,  RJ_OP_XOR, RJ_OP_ARGMAX,
                              RJ_OP_ARGMIN, RJ_OP_VAR, RJ_OP_STD, RJ_OP_LOGSUMEXP};
  int i = -1;
  bool a = false;
  if (p >= RJ_PRIM_REDUCE_ADD && p <= RJ_PRIM_REDUCE_MAX) i = p - RJ_PRIM_REDUCE_ADD;
  if (p >= RJ_PRIM_REDUCE_ALL_ADD && p <= RJ_PRIM_REDUCE_ALL_MAX)
    i = p - RJ_PRIM_REDUCE_ALL_ADD, a = true;
  if (p >= RJ_PRIM_REDUCE_MUL && p <= RJ_PRIM_REDUCE_XOR) i = 3 + (p - RJ_PRIM_REDUCE_MUL);
  if (p >= RJ_PRIM_REDUCE_ALL_MUL && p <= RJ_PRIM_REDUCE_ALL_XOR)
    i = 3 + (p - RJ_PRIM_REDUCE_ALL_MUL), a = true;
  if (p >= RJ_PRIM_REDUCE_ARGMAX && p <= RJ_PRIM_REDUCE_LOGSUMEXP)
    i = 7 + (p - RJ_PRIM_REDUCE_ARGMAX);
  if (p >= RJ_PRIM_REDUCE_ALL_ARGMAX && p <= RJ_PRIM_REDUCE_ALL_LOGSUMEXP)
    i = 7 + (p - RJ_PRIM_REDUCE_ALL_ARGMAX), a = true;
  if (p == RJ_PRIM_REDUCE_CUSTOM || p == RJ_PRIM_REDUCE_ALL_CUSTOM) {
    if (all) *all = p == RJ_PRIM_REDUCE_ALL_CUSTOM;
    return RJ_OP_CUSTOM;
  }
  if (all) *all = a;
  return i < 0 ? -1 : (int)ops[i];
}

const char *ir_primitive_dtype_reason(rj_primitive p, rj_dtype t) {
  if (!ir_dtype(t)) return "unknown dtype";
  if (p == RJ_PRIM_INVOCATION_ID && ir_dtype(t)->is_float)
    return "invocation_id returns the lane id, an integer: use i32, u32, i64 or u64";
  int op = ir_primitive_op(p, NULL);
  if ((op == RJ_OP_AND || op == RJ_OP_OR || op == RJ_OP_XOR) && ir_dtype(t)->is_float)
    return "the bitwise reductions (reduce_and / _or / _xor, reduce_all_*) fold integers: use "
           "i32, u32, i64 or u64";
  if ((op == RJ_OP_VAR || op == RJ_OP_STD || op == RJ_OP_LOGSUMEXP) && !ir_dtype(t)->is_float)
    return "reduce_var / _std / _logsumexp (and reduce_all_*) take float dtypes (f16 bf16 f32 "
           "f64)";
  return NULL;
}

RJ_API void rj_request_init(rj_request *req, rj_kind kind) {
  if (!req) return;
  memset(req, 0, sizeof *req);
  req->struct_size = sizeof *req;
  req->kind = kind;
  switch (kind) {
  case RJ_KIND_TILE:
    req->u.tile.naxes = 1;
    req->u.tile.axes[0] = -1;
    req->u.tile.src.mem = req->u.tile.dst.mem = RJ_MEM_SHARED;
    req->u.tile.correction = 1;
    break;
  case RJ_KIND_SUBGROUP:
    req->u.subgroup.threads = 32;
    req->u.subgroup.correction = 1;
    req->u.subgroup.blocks = 1;
    break;
  case RJ_KIND_TENSOR:
    req->u.tensor.deterministic = 1;
    req->u.tensor.correction = 1;
    break;
  case RJ_KIND_TREDUCE:
    req->u.treduce.pingpong = 0;
    break;
  }
}

RJ_API size_t rj_request_size(void) {
  return sizeof(rj_request);
}

RJ_API rj_request *rj_request_new(rj_kind kind) {
  rj_request *req = calloc(1, sizeof *req);
  rj_request_init(req, kind);
  return req;
}

RJ_API void rj_request_free(rj_request *req) {
  free(req);
}

int64_t ir_numel(const rj_buffer *b) {
  int64_t n = 1;
  for (int d = 0; d < b->ndim; d++)
    n *= b->shape[d];
  return n;
}

rj_status ir_result_in(ir_err *e, const void *res, size_t least, const char *what) {
  uint32_t size;
  memcpy(&size, res, sizeof size);
  if (size >= least) return RJ_OK;
  return ir_fail(e, RJ_EINVAL,
                 "%s.struct_size: %u is below the %zu bytes of its first version (set it to "
                 "sizeof the struct before the call)",
                 what, size, least);
}

void ir_result_out(void *res, const void *full, size_t full_size) {
  uint32_t size;
  memcpy(&size, res, sizeof size);
  size_t n = size < full_size ? size : full_size;
  memcpy((char *)res + sizeof size, (const char *)full + sizeof size, n - sizeof size);
  if (size > full_size) memset((char *)res + full_size, 0, size - full_size);
}

const char *ir_map_name(rj_map m) {
  static const char *const n[] = {"none",    "abs",   "square",  "mul", "sub_square",
                                  "abs_sub", "where", "nonzero", "ir"};
  return (unsigned)m <= RJ_MAP_IR ? n[m] : "?";
}

int ir_map_others(rj_map m) {
  return m == RJ_MAP_MUL || m == RJ_MAP_SUB_SQUARE || m == RJ_MAP_ABS_SUB || m == RJ_MAP_WHERE;
}

const char *ir_epilogue_name(rj_epilogue e) {
  static const char *const n[] = {"none", "sqrt", "scale", "log", "ir"};
  return (unsigned)e <= RJ_EPI_IR ? n[e] : "?";
}
