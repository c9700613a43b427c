/* Shared pieces of the tensor variants (see tensor.h).  The combines, identities, f16/bf16
 * accumulation and butterfly trees are emit.c's, as in the tile variants. */
#include "tensor.h"

#include <stdarg.h>

#include "state.h"

#include <stdio.h>
#include <string.h>

tns_class tns_classify(const ir_tview *v) {
  int n = v->n;
  if (v->outputs == 0 || v->reduce_len == 0) return TNS_GENERIC; /* nothing to read */
  if (n == 2 && v->red[0] != v->red[1] && v->stride[v->red[0] ? 0 : 1] == 1) return TNS_ROWS;
  if (v->red[n - 1] && v->stride[n - 1] == 1 && (n == 1 || (n == 2 && !v->red[0]))) return TNS_ROWS;
  if (!v->red[n - 1] && ((n == 2 && v->red[0]) || (n == 3 && v->red[1] && !v->red[0])))
    return TNS_COLS;
  return TNS_GENERIC;
}

int tns_sms(int read) {
  return read > 0 ? read : TNS_DEFAULT_SMS;
}

int tns_vec(rj_dtype t) {
  return 16 / ir_dtype(t)->bytes;
}

int tns_vec_rc(rj_dtype t) {
  return ir_dtype(t)->bytes == 1 ? 8 : tns_vec(t);
}

/* about 16384 elements a segment, at most 4096 segments; chunk a whole round of TNS_INV_T x
 * TNS_INV_U elements */
int tns_inv_segments(int64_t n, int64_t *chunk) {
  int64_t S = (n + 16383) / 16384;
  if (S > 4096) S = 4096;
  int64_t round = (int64_t)TNS_INV_T * TNS_INV_U, ch = (n + S - 1) / S;
  *chunk = (ch + round - 1) / round * round;
  return (int)((n + *chunk - 1) / *chunk);
}

int64_t tns_pow2(int64_t x) {
  int64_t p = 1;
  while (p < x)
    p <<= 1;
  return p;
}

LLVMValueRef tns_i64(pass_emit *e, int64_t v) {
  return LLVMConstInt(LLVMInt64TypeInContext(e->C), (unsigned long long)v, 1);
}

static void add_attr(pass_emit *e, unsigned idx, const char *name) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(e->fn, idx, LLVMCreateEnumAttribute(e->C, kind, 0));
}

void tns_begin(pass_emit *e, LLVMValueRef *src, LLVMValueRef *dst, int np, LLVMValueRef *p) {
  LLVMTypeRef gptr = LLVMPointerTypeInContext(e->C, AS_GLOBAL);
  LLVMTypeRef params[5 + RJ_TENSOR_OTHERS_MAX + TNS_NP];
  for (int i = 0; i < 5 + RJ_TENSOR_OTHERS_MAX; i++)
    params[i] = gptr;
  unsigned first = e->values ? 3 : 2; /* argmax / argmin values: a third pointer */
  unsigned nothers = (unsigned)tns_map_inputs(e);
  first += nothers; /* the other inputs: after dst (and values) */
  unsigned seg = first;
  first += e->segmented ? 2 : 0; /* segments: offsets and status, after those */
  for (int i = 0; i < np; i++)
    params[first + (unsigned)i] = LLVMInt64TypeInContext(e->C);
  LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(e->C), params, first + (unsigned)np, 0);
  e->entry = "redjit_tensor";
  e->fn = LLVMAddFunction(e->M, e->entry, fty);
  LLVMSetFunctionCallConv(e->fn, LLVMPTXKernelCallConv);
  add_attr(e, 1, "noalias");
  add_attr(e, 1, "readonly");
  add_attr(e, 2, "noalias");
  LLVMPositionBuilderAtEnd(e->B, LLVMAppendBasicBlockInContext(e->C, e->fn, "entry"));
  *src = LLVMGetParam(e->fn, 0);
  *dst = LLVMGetParam(e->fn, 1);
  if (e->values) {
    add_attr(e, 3, "noalias");
    e->values_dst = LLVMGetParam(e->fn, 2);
  }
  e->src = *src;
  for (unsigned i = 0; i < nothers; i++) {
    add_attr(e, seg - nothers + i + 1, "noalias");
    add_attr(e, seg - nothers + i + 1, "readonly");
    e->others[i] = LLVMGetParam(e->fn, seg - nothers + i);
  }
  if (e->segmented) {
    add_attr(e, seg + 1, "readonly");
    e->seg_offsets = LLVMGetParam(e->fn, seg);
    e->seg_status = LLVMGetParam(e->fn, seg + 1);
  }
  for (int i = 0; i < np; i++)
    p[i] = LLVMGetParam(e->fn, first + (unsigned)i);
  e->nparams = np;
}

LLVMValueRef tns_ctaid(pass_emit *e) {
  return pass_call(e, "llvm.nvvm.read.ptx.sreg.ctaid.x", NULL, 0, NULL, 0);
}

rj_dtype tns_acc_dtype(const rj_tensor *t) {
  st_req s = st_of_tensor(t);
  if (s.masked) return s.dtype; /* the masked mean's W: its elements arrive in it */
  return t->acc_f64 && !st_on(&s) ? RJ_F64 : ir_acc_dtype(t->op, t->dtype);
}

/* an element of t's dtype in the accumulator's (tensor_dtype.c) */
static LLVMValueRef widen(pass_emit *e, const rj_tensor *t, LLVMValueRef x) {
  return tns_widen(e, x, t->dtype, tns_acc_dtype(t));
}

/* one element of t's dtype at p, in the accumulator's type, no map */
static LLVMValueRef load_raw(pass_emit *e, const rj_tensor *t, LLVMValueRef p) {
  return widen(e, t, LLVMBuildLoad2(e->B, pass_type(e, t->dtype), p, ""));
}

/* How t's loads of src are emitted: its 8- and 16-byte vector loads (tns_load_vec) and an
 * invariant kernel's element loads (tns_load_elem). */
typedef enum {
  LOAD_PLAIN,   /* an LLVM load (ld.global.nc: src is only read) */
  LOAD_ASM,     /* the same instruction as inline PTX */
  LOAD_ASM_HINT /* inline PTX with the hint: ld.global.nc.L1::no_allocate */
} vec_load;

/* Measured on an H100 (docs/PERFORMANCE.md "Loads that skip L1"): the hint is 6 - 14 % faster
 * with L2 full of dirty lines (as after a write of other data) on one input of 32 - 128 MiB, up to
 * about 9 % slower on some shapes with L2 clean, 3 % slower on 1 GiB.  So: the first input's
 * vector loads (a second input's or a mask's stay plain: hinting them too cost 3 - 6 %, hinting
 * only the first makes a masked sum 7 - 9 % faster flushed), of a runtime size or a constant size
 * whose elements take under TNS_SKIP_L1_MAX bytes, not of a list or segments, on a target whose
 * PTX has the hint (ISA 7.4: not sm_80 / sm_86's).  An invariant kernel does the same operations
 * on every target: where the hint is missing it loads through the same inline PTX without it, so
 * that O3 sees the same IR whatever the target. */
static vec_load vec_load_of(const pass_emit *e, const rj_tensor *t) {
  if (t->list_count || t->segments || !e->target) return LOAD_PLAIN;
  if (!t->dynamic) {
    double bytes = (double)ir_dtype(t->dtype)->bytes;
    for (int d = 0; d < t->ndim; d++)
      bytes *= (double)t->shape[d];
    if (bytes >= TNS_SKIP_L1_MAX) return LOAD_PLAIN;
  }
  if (e->target->min_ptx >= 74) return LOAD_ASM_HINT;
  return t->invariant ? LOAD_ASM : LOAD_PLAIN;
}

/* A vector of `bytes` (16 or 8) bytes at p through inline ld.global.nc (hint: with
 * .L1::no_allocate), as type vt.  The asm declares no memory effect, so codegen may move it
 * across stores and barriers: p must point into src, which the kernel only reads (and which no
 * output overlaps). */
static LLVMValueRef load_asm(pass_emit *e, LLVMTypeRef vt, LLVMValueRef p, int bytes, bool hint) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C), w[4] = {i32, i32, i32, i32};
  unsigned words = (unsigned)bytes / 4;
  LLVMTypeRef st = LLVMStructTypeInContext(e->C, w, words, 0);
  LLVMValueRef a = LLVMBuildPtrToInt(e->B, p, LLVMInt64TypeInContext(e->C), "");
  char text[96];
  snprintf(text, sizeof text, "ld.global.nc%s.v%u.b32 %s, [$%u];", hint ? ".L1::no_allocate" : "",
           words, words == 4 ? "{$0, $1, $2, $3}" : "{$0, $1}", words);
  LLVMValueRef r = pass_asm(e, st, text, words == 4 ? "=r,=r,=r,=r,l" : "=r,=r,l", &a, 1);
  LLVMValueRef v = LLVMGetUndef(LLVMVectorType(i32, words));
  for (unsigned i = 0; i < words; i++)
    v = LLVMBuildInsertElement(e->B, v, LLVMBuildExtractValue(e->B, r, i, ""), pass_i32(e, (int)i),
                               "");
  return LLVMBuildBitCast(e->B, v, vt, "");
}

/* One element of `bytes` (2, 4 or 8) at p through inline ld.global.nc (hint: with
 * .L1::no_allocate), as type ty; p into src, as load_asm's. */
static LLVMValueRef load_asm_scalar(pass_emit *e, LLVMTypeRef ty, LLVMValueRef p, int bytes,
                                    bool hint) {
  char text[64];
  snprintf(text, sizeof text, "ld.global.nc%s.b%d $0, [$1];", hint ? ".L1::no_allocate" : "",
           8 * bytes);
  const char *cons = bytes == 2 ? "=h,l" : bytes == 4 ? "=r,l" : "=l,l";
  LLVMValueRef a = LLVMBuildPtrToInt(e->B, p, LLVMInt64TypeInContext(e->C), "");
  LLVMValueRef w = pass_asm(e, LLVMIntTypeInContext(e->C, 8 * (unsigned)bytes), text, cons, &a, 1);
  return LLVMBuildBitCast(e->B, w, ty, "");
}

/* x, t's element at p (in the accumulator's type), through t's map if it has one */
static LLVMValueRef mapped(pass_emit *e, const rj_tensor *t, LLVMValueRef p, LLVMValueRef x) {
  return t->fused.map ? tns_map(e, t, p, 1, &x, tns_identity(e, t), &x) : x;
}

LLVMValueRef tns_load(pass_emit *e, const rj_tensor *t, LLVMValueRef p) {
  return mapped(e, t, p, load_raw(e, t, p));
}

LLVMValueRef tns_load_elem(pass_emit *e, const rj_tensor *t, LLVMValueRef p) {
  int bytes = ir_dtype(t->dtype)->bytes;
  vec_load how = t->invariant && bytes >= 2 ? vec_load_of(e, t) : LOAD_PLAIN;
  if (how == LOAD_PLAIN) return tns_load(e, t, p);
  return mapped(
      e, t, p,
      widen(e, t, load_asm_scalar(e, pass_type(e, t->dtype), p, bytes, how == LOAD_ASM_HINT)));
}

void tns_load_vec(pass_emit *e, const rj_tensor *t, LLVMValueRef p, int vec, LLVMValueRef *out) {
  LLVMTypeRef vt = LLVMVectorType(pass_type(e, t->dtype), (unsigned)vec);
  int bytes = vec * ir_dtype(t->dtype)->bytes;
  LLVMValueRef v;
  vec_load how = bytes == 16 || bytes == 8 ? vec_load_of(e, t) : LOAD_PLAIN;
  if (how != LOAD_PLAIN) {
    v = load_asm(e, vt, p, bytes, how == LOAD_ASM_HINT);
  } else {
    v = LLVMBuildLoad2(e->B, vt, p, "");
    LLVMSetAlignment(v, (unsigned)bytes);
  }
  for (int i = 0; i < vec; i++)
    out[i] = widen(e, t, LLVMBuildExtractElement(e->B, v, pass_i32(e, i), ""));
  if (t->fused.map) tns_map(e, t, p, vec, out, tns_identity(e, t), out);
}

/* An accumulator (of acc, tns_acc_dtype) as the result dtype r.  An f64 accumulator of f16 / bf16
 * / f32 rounded once: f32 directly; f16 / bf16 through f32 rounded to odd (toward zero, the last
 * bit set when inexact), whose 24 bits round to nearest even in 11 or 8 exactly as the f64 would
 * (the double rounding cannot land on a false tie).  Else tensor_dtype.c's exact narrowing. */
static LLVMValueRef narrow(pass_emit *e, rj_dtype acc, rj_dtype r, LLVMValueRef v) {
  if (acc != RJ_F64 || r == RJ_F64 || !ir_dtype(r)->is_float || ir_dtype(r)->fp8)
    return tns_narrow_exact(e, v, acc, r);
  if (r == RJ_F32) return LLVMBuildFPTrunc(e->B, v, LLVMFloatTypeInContext(e->C), "");
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C);
  LLVMValueRef f = pass_call(e, "llvm.nvvm.d2f.rz", NULL, 0, &v, 1);
  LLVMValueRef inexact = LLVMBuildFCmp(
      e->B, LLVMRealUNE, LLVMBuildFPExt(e->B, f, LLVMDoubleTypeInContext(e->C), ""), v, "");
  LLVMValueRef bits = LLVMBuildBitCast(e->B, f, i32, "");
  bits = LLVMBuildOr(e->B, bits, LLVMBuildZExt(e->B, inexact, i32, ""), "");
  return pass_from_acc(e, LLVMBuildBitCast(e->B, bits, LLVMFloatTypeInContext(e->C), ""), r);
}

LLVMTypeRef tns_acc_type(pass_emit *e, const rj_tensor *t) {
  st_req s = st_of_tensor(t);
  return st_on(&s) ? st_type(e, &s) : pass_acc_type(e, tns_acc_dtype(t));
}

LLVMValueRef tns_identity(pass_emit *e, const rj_tensor *t) {
  st_req s = st_of_tensor(t);
  return st_on(&s) ? st_identity(e, &s) : pass_identity(e, t->op, tns_acc_dtype(t));
}

LLVMValueRef tns_combine(pass_emit *e, const rj_tensor *t, LLVMValueRef a, LLVMValueRef b) {
  st_req s = st_of_tensor(t);
  if (st_on(&s)) return st_combine(e, &s, a, b);
  return pass_combine(e, t->op, tns_acc_dtype(t), t->nan, a, b);
}

LLVMValueRef tns_result(pass_emit *e, const rj_tensor *t, LLVMValueRef v, LLVMValueRef n) {
  st_req s = st_of_tensor(t);
  if (s.masked) return v;
  if (t->op == RJ_OP_SUM && !t->accum && ir_dtype(tns_acc_dtype(t))->is_float) {
    LLVMValueRef none = LLVMBuildICmp(e->B, LLVMIntEQ, n, LLVMConstNull(LLVMTypeOf(n)), "");
    return LLVMBuildSelect(e->B, none, LLVMConstNull(LLVMTypeOf(v)), v, "");
  }
  return pass_mean(e, t->op, tns_acc_dtype(t), v, n);
}

LLVMValueRef tns_bfly_tree(pass_emit *e, const rj_tensor *t, LLVMValueRef v, LLVMValueRef mm,
                           const int *masks, int n, int width) {
  st_req s = st_of_tensor(t);
  if (!st_on(&s)) return pass_bfly_tree(e, t->op, tns_acc_dtype(t), t->nan, v, mm, masks, n, width);
  return st_bfly_tree(e, &s, v, mm, masks, n, width);
}

LLVMValueRef tns_elem_idx(pass_emit *e, const rj_tensor *t, LLVMValueRef base, LLVMValueRef off) {
  st_req s = st_of_tensor(t);
  if (!st_wants_index(&s)) return NULL;
  return base ? LLVMBuildAdd(e->B, base, off, "") : off;
}

void tns_fold_elem(pass_emit *e, const rj_tensor *t, LLVMValueRef acc, LLVMValueRef x,
                   LLVMValueRef idx, LLVMValueRef ok) {
  st_req r = st_of_tensor(t);
  if (!st_on(&r)) {
    tns_acc_fold(e, t, acc, ok ? tns_or_identity(e, t, ok, x) : x);
    return;
  }
  LLVMValueRef s = LLVMBuildLoad2(e->B, st_slot_type(e, &r), acc, "");
  LLVMBuildStore(e->B, st_slot_fold(e, &r, s, x, idx, ok), acc);
}

void tns_fold_round(pass_emit *e, const rj_tensor *t, LLVMValueRef acc, LLVMValueRef *x,
                    LLVMValueRef *idx, LLVMValueRef *ok, int n) {
  st_req r = st_of_tensor(t);
  LLVMValueRef s = LLVMBuildLoad2(e->B, st_slot_type(e, &r), acc, "");
  LLVMBuildStore(e->B, st_slot_fold_round(e, &r, s, x, idx, ok, n), acc);
}

void tns_acc_init(pass_emit *e, const rj_tensor *t, LLVMValueRef *acc, int n) {
  bool st = st_is(t->op);
  st_req r = st_of_tensor(t);
  for (int i = 0; i < n; i++) {
    acc[i] = pass_entry_alloca(e, st ? st_slot_type(e, &r) : tns_acc_type(e, t), "acc");
    LLVMBuildStore(e->B, st ? st_slot_identity(e, &r) : tns_identity(e, t), acc[i]);
  }
}

LLVMValueRef tns_acc_value(pass_emit *e, const rj_tensor *t, LLVMValueRef acc) {
  if (!st_is(t->op)) return LLVMBuildLoad2(e->B, tns_acc_type(e, t), acc, "");
  st_req r = st_of_tensor(t);
  return st_slot_state(e, &r, LLVMBuildLoad2(e->B, st_slot_type(e, &r), acc, ""));
}

LLVMValueRef tns_acc_as_state(pass_emit *e, const rj_tensor *t, LLVMValueRef acc) {
  st_req r = st_of_tensor(t);
  if (!st_is(t->op) || st_slot_type(e, &r) == st_type(e, &r)) return acc;
  return pass_entry_alloca(e, st_type(e, &r), "state");
}

void tns_acc_fold(pass_emit *e, const rj_tensor *t, LLVMValueRef acc, LLVMValueRef x) {
  LLVMValueRef cur = LLVMBuildLoad2(e->B, tns_acc_type(e, t), acc, "");
  LLVMBuildStore(e->B, pass_fold(e, t->op, tns_acc_dtype(t), t->nan, cur, x), acc);
}

bool tns_vfoldable(const rj_tensor *t) {
  const ir_dtype_info *di = ir_dtype(t->dtype);
  bool op = t->op == RJ_OP_SUM || t->op == RJ_OP_MEAN || t->op == RJ_OP_PROD;
  return op && t->nan == RJ_NAN_PROPAGATE && !t->fused.map && !t->nothers && di->is_float &&
         !di->fp8 && (di->bytes == 2 || di->bytes == 4);
}

LLVMValueRef tns_vacc(pass_emit *e, const rj_tensor *t, int n) {
  LLVMTypeRef ty = LLVMVectorType(tns_acc_type(e, t), (unsigned)n);
  LLVMValueRef a = pass_entry_alloca(e, ty, "chains"), v = LLVMGetUndef(ty);
  for (int i = 0; i < n; i++)
    v = LLVMBuildInsertElement(e->B, v, tns_identity(e, t), pass_i32(e, i), "");
  LLVMBuildStore(e->B, v, a);
  return a;
}

LLVMValueRef tns_vload(pass_emit *e, const rj_tensor *t, int n, LLVMValueRef src,
                       LLVMValueRef off) {
  LLVMValueRef x[16], v = LLVMGetUndef(LLVMVectorType(tns_acc_type(e, t), (unsigned)n));
  tns_load_vec(e, t, pass_gep(e, pass_type(e, t->dtype), src, off), n, x);
  for (int i = 0; i < n; i++)
    v = LLVMBuildInsertElement(e->B, v, x[i], pass_i32(e, i), "");
  return v;
}

void tns_vfold(pass_emit *e, const rj_tensor *t, LLVMValueRef x, LLVMValueRef acc) {
  LLVMValueRef cur = LLVMBuildLoad2(e->B, LLVMTypeOf(x), acc, "");
  LLVMBuildStore(
      e->B, t->op == RJ_OP_PROD ? LLVMBuildFMul(e->B, cur, x, "") : LLVMBuildFAdd(e->B, cur, x, ""),
      acc);
}

LLVMValueRef tns_acc_total(pass_emit *e, const rj_tensor *t, LLVMValueRef *acc, int n) {
  LLVMValueRef v[64];
  bool st = st_is(t->op);
  st_req r = st_of_tensor(t);
  for (int i = 0; i < n; i++)
    v[i] = st ? LLVMBuildLoad2(e->B, st_slot_type(e, &r), acc[i], "")
              : LLVMBuildLoad2(e->B, tns_acc_type(e, t), acc[i], "");
  for (int w = 1; w < n; w *= 2)
    for (int i = 0; i + w < n; i += 2 * w)
      v[i] = st ? st_slot_combine(e, &r, v[i], v[i + w]) : tns_combine(e, t, v[i], v[i + w]);
  return st ? st_slot_state(e, &r, v[0]) : v[0];
}

LLVMValueRef tns_or_identity(pass_emit *e, const rj_tensor *t, LLVMValueRef ok, LLVMValueRef x) {
  return LLVMBuildSelect(e->B, ok, x, tns_identity(e, t), "");
}

LLVMValueRef tns_min64(pass_emit *e, LLVMValueRef a, LLVMValueRef b) {
  return LLVMBuildSelect(e->B, LLVMBuildICmp(e->B, LLVMIntSLT, a, b, ""), a, b, "");
}

LLVMValueRef tns_fold_slots(pass_emit *e, const rj_tensor *t, LLVMValueRef slots, int n,
                            LLVMValueRef lane) {
  LLVMTypeRef acc_ty = tns_acc_type(e, t);
  LLVMValueRef have = LLVMBuildICmp(e->B, LLVMIntULT, lane, pass_i32(e, n), "");
  LLVMValueRef idx = LLVMBuildSelect(e->B, have, lane, pass_i32(e, 0), "");
  LLVMValueRef p = LLVMBuildLoad2(e->B, acc_ty, pass_gep(e, acc_ty, slots, idx), "");
  p = LLVMBuildSelect(e->B, have, p, tns_identity(e, t), "");
  int m2[5], n2 = 0;
  for (int m = (int)tns_pow2(n) / 2; m >= 1; m /= 2)
    m2[n2++] = m;
  return tns_bfly_tree(e, t, p, pass_i32(e, -1), m2, n2, 32);
}

LLVMValueRef tns_cta_reduce(pass_emit *e, const rj_tensor *t, LLVMValueRef v, LLVMValueRef tid,
                            int T) {
  static const int masks[5] = {16, 8, 4, 2, 1};
  LLVMValueRef full = pass_i32(e, -1);
  v = tns_bfly_tree(e, t, v, full, masks, 5, 32);
  int nw = T / 32;
  if (nw == 1) return v;
  LLVMTypeRef acc_ty = tns_acc_type(e, t);
  LLVMValueRef scratch = pass_global_array(e, acc_ty, nw, AS_SHARED, "rj_warp_part");
  LLVMValueRef warp = LLVMBuildLShr(e->B, tid, pass_i32(e, 5), "warp");
  LLVMValueRef lane = LLVMBuildAnd(e->B, tid, pass_i32(e, 31), "lane");
  LLVMValueRef res = pass_entry_alloca(e, acc_ty, "cta_res");
  LLVMBuildStore(e->B, v, res);
  pass_if w;
  pass_if_begin(e, &w, LLVMBuildICmp(e->B, LLVMIntEQ, lane, pass_i32(e, 0), ""));
  LLVMBuildStore(e->B, v, pass_gep(e, acc_ty, scratch, warp));
  pass_if_end(e, &w);
  pass_barrier_cta(e);
  pass_if w0;
  pass_if_begin(e, &w0, LLVMBuildICmp(e->B, LLVMIntEQ, warp, pass_i32(e, 0), ""));
  LLVMBuildStore(e->B, tns_fold_slots(e, t, scratch, nw, lane), res);
  pass_if_end(e, &w0);
  return LLVMBuildLoad2(e->B, acc_ty, res, "");
}

void tns_store(pass_emit *e, const rj_tensor *t, LLVMValueRef dst, LLVMValueRef idx64,
               LLVMValueRef v) {
  st_req r = st_of_tensor(t);
  if (r.masked) v = st_finish(e, &r, v);      /* s / n in W: epilogue and rounding below */
  if (st_on(&r) && !r.masked) {               /* no accum (validation refuses it) */
    if (e->values_dst && st_indexed(t->op)) { /* the extreme value too, in the input dtype */
      LLVMValueRef x = narrow(e, r.dtype, t->dtype, LLVMBuildExtractValue(e->B, v, 0, ""));
      LLVMValueRef sx = LLVMBuildStore(e->B, x, pass_gep(e, LLVMTypeOf(x), e->values_dst, idx64));
      LLVMSetAlignment(sx, (unsigned)ir_dtype(t->dtype)->bytes);
    }
    v = st_finish(e, &r, v);
    LLVMValueRef st = LLVMBuildStore(e->B, v, pass_gep(e, LLVMTypeOf(v), dst, idx64));
    LLVMSetAlignment(st, (unsigned)ir_dtype(ir_tensor_result(t))->bytes);
    return;
  }
  rj_dtype res = ir_tensor_result(t), acc = tns_acc_dtype(t);
  LLVMTypeRef ty = pass_type(e, res);
  LLVMValueRef ptr = pass_gep(e, ty, dst, idx64);
  if (t->accum) {
    LLVMValueRef old = tns_widen(e, LLVMBuildLoad2(e->B, ty, ptr, ""), res, acc);
    v = pass_fold(e, t->op, acc, t->nan, v, old);
  }
  if (t->fused.epilogue) v = tns_epilogue(e, t, v);
  LLVMBuildStore(e->B, narrow(e, acc, res, v), ptr);
}

void tns_launch_bounds(pass_emit *e, int threads, int min_ctas) {
  char v[16];
  snprintf(v, sizeof v, "%d", threads);
  LLVMAddTargetDependentFunctionAttr(e->fn, "nvvm.maxntid", v);
  snprintf(v, sizeof v, "%d", min_ctas);
  LLVMAddTargetDependentFunctionAttr(e->fn, "nvvm.minctasm", v);
}

LLVMValueRef tns_load_volatile(pass_emit *e, LLVMTypeRef ty, LLVMValueRef p) {
  if (LLVMGetTypeKind(ty) == LLVMStructTypeKind) return st_load_volatile(e, ty, p);
  LLVMValueRef v = LLVMBuildLoad2(e->B, ty, p, "");
  LLVMSetVolatile(v, 1);
  return v;
}

LLVMValueRef tns_last_cta(pass_emit *e, LLVMValueRef cnt, LLVMValueRef tid, LLVMValueRef parts) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(e->C);
  LLVMValueRef flag = pass_global_array(e, i32, 1, AS_SHARED, "rj_last");
  pass_barrier_cta(e); /* every partial of this CTA is written and fenced */
  pass_if t0;
  pass_if_begin(e, &t0, LLVMBuildICmp(e->B, LLVMIntEQ, tid, pass_i32(e, 0), ""));
  /* fence.acq_rel.gpu around the count: releases the partials written before the barrier
   * (fences are cumulative), and acquires the other CTAs' for the reads after the next barrier */
  unsigned gpu = LLVMGetSyncScopeID(e->C, "device", 6);
  LLVMBuildFenceSyncScope(e->B, LLVMAtomicOrderingAcquireRelease, gpu, "");
  LLVMValueRef old = LLVMBuildAtomicRMWSyncScope(e->B, LLVMAtomicRMWBinOpAdd, cnt, pass_i32(e, 1),
                                                 LLVMAtomicOrderingMonotonic, gpu);
  LLVMBuildFenceSyncScope(e->B, LLVMAtomicOrderingAcquireRelease, gpu, "");
  LLVMValueRef lastn = LLVMBuildSub(e->B, LLVMBuildTrunc(e->B, parts, i32, ""), pass_i32(e, 1), "");
  LLVMValueRef last = LLVMBuildICmp(e->B, LLVMIntEQ, old, lastn, "");
  LLVMBuildStore(e->B, LLVMBuildZExt(e->B, last, i32, ""), pass_gep(e, i32, flag, pass_i32(e, 0)));
  pass_if_end(e, &t0);
  pass_barrier_cta(e);
  LLVMValueRef f = LLVMBuildLoad2(e->B, i32, pass_gep(e, i32, flag, pass_i32(e, 0)), "");
  return LLVMBuildICmp(e->B, LLVMIntNE, f, pass_i32(e, 0), "last");
}

int64_t tns_wave(int sms, int T) {
  return (int64_t)(sms > 0 ? sms : TNS_DEFAULT_SMS) * (65536 / TNS_REGS / T);
}

void tns_plan_geometry(pass_plan *out, unsigned grid, unsigned block) {
  out->grid[0] = grid;
  out->block[0] = block;
  out->grid[1] = out->grid[2] = out->block[1] = out->block[2] = 1;
  out->shared_bytes = 0;
}

/* appends to a key's text (cut at its size: the key is then refused below) */
static void key_add(char *b, size_t cap, const char *fmt, ...) {
  size_t n = strlen(b);
  va_list ap;
  va_start(ap, fmt);
  if (n < cap) vsnprintf(b + n, cap - n, fmt, ap);
  va_end(ap);
}

void tns_plan_runtime(pass_plan *out, const rj_request *r, const char *variant, const char *bucket,
                      const char *names) {
  const rj_tensor *t = &r->u.tensor;
  /* what else is compiled in: var / std's correction, argmax's values, an f64 accumulator, the
   * fused map with its inputs' dtypes, epilogue and scale (its bits) */
  char more[160] = "";
  if (t->op == RJ_OP_VAR || t->op == RJ_OP_STD)
    key_add(more, sizeof more, "|corr%d", t->correction);
  if (t->values) key_add(more, sizeof more, "|values");
  if (tns_acc_dtype(t) != ir_acc_dtype(t->op, t->dtype)) key_add(more, sizeof more, "|acc_f64");
  if (t->fused.map || t->fused.epilogue || t->nothers) {
    uint64_t scale;
    memcpy(&scale, &t->fused.scale, sizeof scale);
    key_add(more, sizeof more, "|map%d.%d.%d", t->fused.map, t->fused.epilogue, t->nothers);
    for (int i = 0; i < t->nothers && i < RJ_TENSOR_OTHERS_MAX; i++)
      key_add(more, sizeof more, ".%d", (int)t->other_dtype[i]);
    key_add(more, sizeof more, "|scale%016llx", (unsigned long long)scale);
  }
  snprintf(out->key, sizeof out->key, "{dynamic %s|%s|op%d|dtype%d|nan%d|accum%d|det%d%s}", variant,
           bucket, t->op, t->dtype, t->nan, t->accum, t->deterministic, more);
  snprintf(out->note, sizeof out->note,
           " (dynamic: bucket \"%s\" compiled in; %s are kernel parameters; grid %u x %u)", bucket,
           names, out->grid[0], out->block[0]);
}

void tns_plan_constant(pass_plan *out, const char *why) {
  snprintf(out->note, sizeof out->note, " (dynamic: constant kernel, sizes are JIT constants: %s)",
           why);
}

const char *tns_why_constant(const rj_request *r, const pass_env *env, char *buf, size_t n) {
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  tns_class c = tns_classify(&v);
  if (c == TNS_GENERIC)
    return "the canonical view is neither rows nor columns (generic views keep their sizes as JIT "
           "constants)";
  const char *name = c == TNS_ROWS ? "tensor_rows" : "tensor_cols";
  if (r->variant[0] && strcmp(r->variant, "auto") != 0 && strcmp(r->variant, name) != 0) {
    snprintf(buf, n, "the forced variant %s has no runtime-size kernel for this view", r->variant);
    return buf;
  }
  const char *why = env->why_not(env, name, r, buf, n);
  return why ? why : "its class's variant was not chosen";
}

/* Folds base[0 .. len) (elements; len an i64 value) into acc[vec], lane `lane` of G.  The body is
 * read in rounds of TNS_U vectors per lane, all loads of a round issued before any fold; the
 * last round's slots past the end re-read the last vector and fold the identity instead, so
 * there is no one-vector-at-a-time remainder loop (each of whose iterations would wait a full
 * memory round trip).  Fold order: per lane, vectors in index order (fixed by the shape). */
void tns_row_segment(pass_emit *e, const rj_tensor *t, int vec, int G, int U, LLVMValueRef base,
                     LLVMValueRef len, LLVMValueRef lane, LLVMValueRef idx0, LLVMValueRef *acc) {
  LLVMTypeRef ty = pass_type(e, t->dtype), i64 = LLVMInt64TypeInContext(e->C);
  int64_t bytes = ir_dtype(t->dtype)->bytes;
  st_req r = st_of_tensor(t);
  /* head: elements before the first 16-byte boundary (vec 1: none, nor a tail: lane l folds
   * elements l, l + G, ... in index order whatever the address) */
  LLVMValueRef head = tns_i64(e, 0);
  if (vec > 1) {
    LLVMValueRef addr = LLVMBuildPtrToInt(e->B, base, i64, "");
    LLVMValueRef mis = LLVMBuildAnd(e->B, LLVMBuildUDiv(e->B, addr, tns_i64(e, bytes), ""),
                                    tns_i64(e, vec - 1), "");
    head =
        LLVMBuildAnd(e->B, LLVMBuildSub(e->B, tns_i64(e, vec), mis, ""), tns_i64(e, vec - 1), "");
    head = tns_min64(e, head, len);
    pass_loop h; /* G may be smaller than the head */
    pass_loop_begin(e, &h, lane, head, tns_i64(e, G));
    tns_fold_elem(e, t, acc[0], tns_load(e, t, pass_gep(e, ty, base, h.i)),
                  tns_elem_idx(e, t, idx0, h.i), NULL);
    pass_loop_end(e, &h);
  }
  /* body: nv aligned vectors, rounds of TNS_U per lane */
  LLVMValueRef body = pass_gep(e, ty, base, head);
  LLVMValueRef nv = LLVMBuildSDiv(e->B, LLVMBuildSub(e->B, len, head, ""), tns_i64(e, vec), "nv");
  LLVMValueRef lastv = LLVMBuildSub(e->B, nv, tns_i64(e, 1), "");
  pass_loop l1;
  pass_loop_begin(e, &l1, lane, nv, tns_i64(e, (int64_t)U * G));
  LLVMValueRef x[TNS_U][16], ok[TNS_U];
  for (int u = 0; u < U; u++) {
    LLVMValueRef iv = LLVMBuildAdd(e->B, l1.i, tns_i64(e, (int64_t)u * G), "");
    ok[u] = LLVMBuildICmp(e->B, LLVMIntSLT, iv, nv, "");
    iv = LLVMBuildSelect(e->B, ok[u], iv, lastv, "");
    tns_load_vec(e, t, pass_gep(e, ty, body, LLVMBuildMul(e->B, iv, tns_i64(e, vec), "")), vec,
                 x[u]);
  }
  if (t->op == RJ_OP_LOGSUMEXP) /* slot by slot, a round at once */
    for (int k = 0; k < vec; k++) {
      LLVMValueRef xs[TNS_U], oks[TNS_U];
      for (int u = 0; u < U; u++)
        xs[u] = x[u][k], oks[u] = u ? ok[u] : NULL;
      tns_fold_round(e, t, acc[k], xs, NULL, oks, U);
    }
  else
    for (int u = 0; u < U; u++)
      for (int k = 0; k < vec; k++) {
        LLVMValueRef ix = NULL; /* the element's index in the row (indexed ops only) */
        if (st_wants_index(&r)) {
          LLVMValueRef iv = LLVMBuildAdd(e->B, l1.i, tns_i64(e, (int64_t)u * G), "");
          ix = LLVMBuildAdd(e->B, head, LLVMBuildMul(e->B, iv, tns_i64(e, vec), ""), "");
          ix = tns_elem_idx(e, t, idx0, LLVMBuildAdd(e->B, ix, tns_i64(e, k), ""));
        }
        tns_fold_elem(e, t, acc[k], x[u][k], ix, u ? ok[u] : NULL);
      }
  pass_loop_end(e, &l1);
  if (vec == 1) return;
  /* tail */
  LLVMValueRef tstart = LLVMBuildAdd(e->B, head, LLVMBuildMul(e->B, nv, tns_i64(e, vec), ""), "");
  pass_loop tl; /* and than the tail */
  pass_loop_begin(e, &tl, LLVMBuildAdd(e->B, tstart, lane, ""), len, tns_i64(e, G));
  tns_fold_elem(e, t, acc[1], tns_load(e, t, pass_gep(e, ty, base, tl.i)),
                tns_elem_idx(e, t, idx0, tl.i), NULL);
  pass_loop_end(e, &tl);
}

const char *tns_accepts_any_view(const rj_request *r, const ir_target *tg, char *buf, size_t n) {
  (void)tg;
  (void)buf;
  (void)n;
  ir_tview v;
  ir_tensor_view(&r->u.tensor, &v);
  if (v.outputs > ((int64_t)1 << 31)) return "more than 2^31 outputs";
  return NULL;
}

LLVMValueRef tns_fused_offset(pass_emit *e, const ir_tview *v, bool want, LLVMValueRef x) {
  LLVMValueRef off = tns_i64(e, 0);
  for (int d = v->n - 1; d >= 0; d--) {
    if (v->red[d] != want || v->size[d] == 0) continue; /* (0: an empty view's, never read) */
    LLVMValueRef c = LLVMBuildURem(e->B, x, tns_i64(e, v->size[d]), "");
    x = LLVMBuildUDiv(e->B, x, tns_i64(e, v->size[d]), "");
    off = LLVMBuildAdd(e->B, off, LLVMBuildMul(e->B, c, tns_i64(e, v->stride[d]), ""), "");
  }
  return off;
}

void tns_store_lane0(pass_emit *e, const rj_tensor *t, LLVMValueRef dst, LLVMValueRef idx64,
                     LLVMValueRef v, LLVMValueRef valid, LLVMValueRef lane) {
  pass_if w;
  LLVMValueRef first = LLVMBuildICmp(e->B, LLVMIntEQ, lane, tns_i64(e, 0), "");
  pass_if_begin(e, &w, LLVMBuildAnd(e->B, valid, first, ""));
  tns_store(e, t, dst, idx64, v);
  pass_if_end(e, &w);
}
