/* The float64 reference of fused tensor requests (docs/TENSOR.md "Fused maps"): each element's
 * map from src and the other inputs (each other input placed by its own view of the same logical
 * shape), folded as hr_oracle_add folds (mean: divided by the count of elements folded, the
 * selected ones under map where), then the epilogue, whose tolerance scale (mag) follows
 * it: sqrt halves a relative error, log turns it into an absolute one, scale multiplies both. */
#include "harness.h"

#include <math.h>

bool hr_fused(const rj_tensor *t) {
  return t->fused.map || t->fused.epilogue || t->nothers;
}

void hr_other_view(const rj_tensor *t, int k, ir_tview *v) {
  rj_tensor o = *t;
  if (t->other_has_strides[k]) {
    o.has_strides = 1;
    for (int d = 0; d < t->ndim; d++)
      o.strides[d] = t->other_strides[k][d];
  }
  ir_tensor_view(&o, v);
}

/* the map of element x (y: input 1's element, NaN-free masks included); *skip: not folded (a
 * masked-out element, the op's identity) */
static double map1(rj_map map, double x, double y, bool *skip) {
  *skip = false;
  switch (map) {
  case RJ_MAP_ABS:
    return fabs(x);
  case RJ_MAP_SQUARE:
    return x * x;
  case RJ_MAP_MUL:
    return x * y;
  case RJ_MAP_SUB_SQUARE:
    return (x - y) * (x - y);
  case RJ_MAP_ABS_SUB:
    return fabs(x - y);
  case RJ_MAP_WHERE:
    *skip = !(y != 0);
    return x;
  case RJ_MAP_NONZERO:
    return x != 0 ? 1.0 : 0.0;
  default:
    return x;
  }
}

/* the epilogue of a finished output, and its tolerance scale (a caller's: its C reference, the
 * scale the larger of the value's and the result's) */
static void epilogue(rj_epilogue ep, double scale, const rj_check_opts *o, hr_value *a) {
  double s = a->f;
  switch (ep) {
  case RJ_EPI_IR:
    a->f = o->epilogue_ref(s, o->map_ud);
    a->mag = fmax(a->mag, fabs(a->f));
    break;
  case RJ_EPI_SQRT:
    a->f = sqrt(s);
    a->mag = a->f > 0 ? a->mag / (2 * a->f) + a->f : sqrt(a->mag);
    break;
  case RJ_EPI_LOG:
    a->f = log(s);
    a->mag = (s != 0 ? a->mag / fabs(s) : INFINITY) + fabs(a->f);
    break;
  case RJ_EPI_SCALE:
    a->f = s * scale;
    a->mag *= fabs(scale);
    break;
  default:
    break;
  }
}

/* integers (maps where and nonzero): exact, wrapping, as hr_oracle_add */
static void oracle_int(const rj_tensor *t, const ir_tview *v, const void *src,
                       const void *const *others, const void *dst_old, hr_value *ref) {
  ir_tview ov;
  if (t->nothers) hr_other_view(t, 0, &ov);
  for (int64_t p = 0; p < v->outputs; p++) {
    hr_value *a = &ref[p];
    hr_oracle_init(t->op, ir_acc_dtype(t->op, t->dtype), a); /* i8's max: from INT64_MIN */
    for (int64_t r = 0; r < v->reduce_len; r++) {
      int64_t off = ir_tview_offset(v, p, r);
      if (t->fused.map == RJ_MAP_WHERE) {
        double m = hr_load_f64(t->other_dtype[0], others[0], ir_tview_offset(&ov, p, r));
        if (m != 0) hr_oracle_add(t->op, t->dtype, t->nan, a, src, off);
        continue;
      }
      uint64_t one = hr_load_f64(t->dtype, src, off) != 0; /* little-endian: the dtype's 0 / 1 */
      hr_oracle_add(t->op, t->dtype, t->nan, a, &one, 0);
    }
    if (dst_old) hr_oracle_add(t->op, ir_tensor_result(t), t->nan, a, dst_old, p); /* i8 sum: i64 */
    hr_oracle_narrow(ir_tensor_result(t), a);
  }
}

void hr_oracle_fused(const rj_tensor *t, const ir_tview *v, const void *src,
                     const void *const *others, const void *dst_old, const rj_check_opts *o,
                     hr_value *ref) {
  if (!ir_dtype(t->dtype)->is_float) {
    oracle_int(t, v, src, others, dst_old, ref);
    return;
  }
  ir_tview ov, ovs[RJ_TENSOR_OTHERS_MAX];
  if (t->nothers) hr_other_view(t, 0, &ov);
  for (int k = 0; k < t->nothers; k++)
    hr_other_view(t, k, &ovs[k]);
  for (int64_t p = 0; p < v->outputs; p++) {
    hr_value *a = &ref[p];
    hr_oracle_init(t->op, RJ_F64, a);
    int64_t count = 0; /* the elements folded: mean's divisor (the masked mean: the selected) */
    for (int64_t r = 0; r < v->reduce_len; r++) {
      double x = hr_load_f64(t->dtype, src, ir_tview_offset(v, p, r)), y = 0;
      if (t->nothers) y = hr_load_f64(t->other_dtype[0], others[0], ir_tview_offset(&ov, p, r));
      bool skip;
      double m = map1(t->fused.map, x, y, &skip);
      if (t->fused.map == RJ_MAP_IR) { /* the caller's C reference (check_reach: there is one) */
        double in[1 + RJ_TENSOR_OTHERS_MAX] = {x};
        for (int k = 0; k < t->nothers; k++)
          in[k + 1] = hr_load_f64(t->other_dtype[k], others[k], ir_tview_offset(&ovs[k], p, r));
        m = o->map_ref(in, t->nothers, o->map_ud);
      }
      if (!skip) hr_oracle_add(t->op, RJ_F64, t->nan, a, &m, 0);
      count += !skip;
    }
    if (dst_old) hr_oracle_add(t->op, t->dtype, t->nan, a, dst_old, p);
    hr_oracle_finish(t->op, a, count); /* no element selected: 0 / 0, NaN */
    hr_oracle_empty(t, a, v->reduce_len);
    if (t->op == RJ_OP_MAX || t->op == RJ_OP_MIN) a->mag = fabs(a->f); /* checked as a sum */
    epilogue(t->fused.epilogue, t->fused.scale, o, a);
    a->acc_f64 = t->acc_f64 && t->dtype != RJ_F64;
  }
}

void hr_oracle_tile_fused(const rj_tile *t, const void *src, const void *dst_old, hr_value *ref) {
  ir_tile_shape f;
  ir_tile_facts(t, &f);
  bool fl = ir_dtype(t->dtype)->is_float; /* integers: map nonzero, exact as hr_oracle_add */
  for (int64_t s = 0; s < f.spatial_len; s++) {
    hr_value *a = &ref[s];
    hr_oracle_init(t->op, fl ? RJ_F64 : t->dtype, a);
    for (int64_t r = 0; r < f.reduce_len; r++) {
      double x = hr_load_f64(t->dtype, src, ir_src_offset(t, s, r));
      bool skip;
      double m = map1(t->fused.map, x, 0, &skip);
      uint64_t one = x != 0; /* little-endian: the dtype's 0 / 1 */
      if (fl)
        hr_oracle_add(t->op, RJ_F64, t->nan, a, &m, 0);
      else if (t->fused.map == RJ_MAP_NONZERO)
        hr_oracle_add(t->op, t->dtype, t->nan, a, &one, 0);
      else
        hr_oracle_add(t->op, t->dtype, t->nan, a, src, ir_src_offset(t, s, r));
    }
    if (dst_old) hr_oracle_add(t->op, t->dtype, t->nan, a, dst_old, ir_dst_offset(t, s));
    hr_oracle_finish(t->op, a, f.reduce_len);
    if (fl && (t->op == RJ_OP_MAX || t->op == RJ_OP_MIN)) a->mag = fabs(a->f); /* as a sum */
    epilogue(t->fused.epilogue, t->fused.scale, NULL, a);
  }
}
