/* Tensor requests: the canonical view of the source and its offsets.
 *
 * Canonicalisation: dims of size 1 are dropped, and adjacent dims of the same class (both reduced
 * or both kept) merge when the outer stride equals the inner stride times the inner size.  The
 * fused order of kept dims is unchanged (so the destination's row-major order is too).  When no
 * reduced dim is left (every reduced dim had size 1) a reduced dim of size 1 is appended.
 *
 * A view of no element to read (a dim of size 0: no outputs, or outputs of an empty reduction)
 * is two dims, kept [outputs] of stride 0 and reduced [reduce_len], extent 0: nothing is read, and
 * each output (if any) is the op's identity (or its empty mean: NaN). */
#include "ir.h"

#include <string.h>

void ir_tensor_view(const rj_tensor *t, ir_tview *v) {
  memset(v, 0, sizeof *v);
  bool red[RJ_MAX_DIMS] = {0};
  for (int i = 0; i < t->naxes; i++)
    red[t->axes[i] < 0 ? t->axes[i] + t->ndim : t->axes[i]] = true;
  int64_t st[RJ_MAX_DIMS], mul = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    st[d] = t->has_strides ? t->strides[d] : mul;
    mul *= t->shape[d];
  }
  v->outputs = v->reduce_len = v->extent = 1;
  for (int d = 0; d < t->ndim; d++) {
    if (red[d])
      v->reduce_len *= t->shape[d];
    else
      v->outputs *= t->shape[d];
    v->extent += (t->shape[d] - 1) * st[d];
    if (t->shape[d] == 1) continue;
    int n = v->n;
    if (n && v->red[n - 1] == red[d] && v->stride[n - 1] == st[d] * t->shape[d]) {
      v->size[n - 1] *= t->shape[d];
      v->stride[n - 1] = st[d];
      continue;
    }
    v->size[n] = t->shape[d];
    v->stride[n] = st[d];
    v->red[n] = red[d];
    v->n++;
  }
  if (v->outputs == 0 || v->reduce_len == 0) {
    *v = (ir_tview){.n = 2,
                    .size = {v->outputs, v->reduce_len},
                    .stride = {0, 1},
                    .red = {false, true},
                    .outputs = v->outputs,
                    .reduce_len = v->reduce_len};
    return;
  }
  bool any = false;
  for (int d = 0; d < v->n; d++)
    any |= v->red[d];
  if (!any) {
    v->size[v->n] = 1;
    v->stride[v->n] = 1;
    v->red[v->n] = true;
    v->n++;
  }
}

int64_t ir_tview_offset(const ir_tview *v, int64_t out, int64_t r) {
  int64_t off = 0;
  for (int d = v->n - 1; d >= 0; d--) {
    int64_t *x = v->red[d] ? &r : &out;
    if (v->size[d] == 0) return 0; /* an empty view has no element: no offset to divide out */
    off += (*x % v->size[d]) * v->stride[d];
    *x /= v->size[d];
  }
  return off;
}

int ir_tensor_stride_order(const rj_tensor *t, int64_t *st, int *ord) {
  int64_t mul = 1;
  int n = 0;
  for (int d = t->ndim - 1; d >= 0; d--) {
    st[d] = t->has_strides ? t->strides[d] : mul;
    mul *= t->shape[d];
    if (t->shape[d] > 1) ord[n++] = d;
  }
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && st[ord[j]] > st[ord[j - 1]]; j--) {
      int x = ord[j];
      ord[j] = ord[j - 1];
      ord[j - 1] = x;
    }
  return n;
}
