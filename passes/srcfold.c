/* srcfold: folding many sources in order without holding every source in registers (treduce's
 * peer kernel, passes/variants/treduce.c, and the ring's hop kernel,
 * passes/variants/treduce_ring.c).
 *
 * A kernel that takes its sources as parameters and folds them in a fully unrolled sequence keeps
 * every source's pointer (and, for memory-level parallelism, every source's loads) live at once:
 * from 24-36 sources, by dtype, ptxas spilled (1.4-2.7 KB of stack a thread at 64-127 sources),
 * and the kernels slowed several-fold.  Here thread 0 copies the pointers once into a table in
 * shared memory (pass_src_table, at the kernel's start), and pass_src_fold reads the table
 * `batch` pointers at a time in a loop; pipelined, the loop issues batch j's loads before it folds
 * batch j - 1, so a batch of loads is always in flight.  The loop's table reads depend on its
 * counter, so they stay in it; the first batch's and the last n % batch sources' (constant
 * indices) may be hoisted out of an enclosing loop without barriers, unless volatile_table.  LLVM
 * may not unroll the loop: unrolled (it did so up to ~40 sources), every pointer and load is live
 * at once again, and on one H100 the ring's hop of 17-24 f32 sources ran 1.2-1.45 x slower
 * (docs/PERFORMANCE.md).  The fold order is the sources' order, so the bits are those of the
 * unrolled sequence. */
#include "passes.h"

LLVMValueRef pass_src_table(pass_emit *e, const LLVMValueRef *ptrs, int n, LLVMValueRef thread0) {
  LLVMTypeRef gptr = LLVMTypeOf(ptrs[0]);
  LLVMValueRef tab = pass_global_array(e, gptr, n, AS_SHARED, "src_table");
  pass_if t0;
  pass_if_begin(e, &t0, thread0);
  for (int k = 0; k < n; k++)
    LLVMSetAlignment(LLVMBuildStore(e->B, ptrs[k], pass_gep(e, gptr, tab, pass_i32(e, k))), 8);
  pass_if_end(e, &t0);
  pass_barrier_cta(e);
  return tab;
}

/* Source k's pointer from the table: k an i32 value, or (k == NULL) the constant kc. */
static LLVMValueRef entry(pass_emit *e, const pass_srcfold *f, LLVMValueRef k, int kc) {
  LLVMTypeRef gptr = LLVMPointerTypeInContext(e->C, AS_GLOBAL);
  LLVMValueRef p =
      LLVMBuildLoad2(e->B, gptr, pass_gep(e, gptr, f->tab, k ? k : pass_i32(e, kc)), "src");
  LLVMSetAlignment(p, 8);
  if (f->volatile_table) LLVMSetVolatile(p, 1);
  return p;
}

/* Loads n sources (the first: k0 + 0, or the constant kc0) into x[g * nx ...]. */
static void load_n(pass_emit *e, const pass_srcfold *f, LLVMValueRef k0, int kc0, int n,
                   LLVMValueRef *x) {
  for (int g = 0; g < n; g++) {
    LLVMValueRef k = k0 ? LLVMBuildAdd(e->B, k0, pass_i32(e, g), "") : NULL;
    f->load(e, f->cx, entry(e, f, k, kc0 + g), x + g * f->nx);
  }
}

static void fold_n(pass_emit *e, const pass_srcfold *f, int n, LLVMValueRef *x, LLVMValueRef *acc) {
  for (int g = 0; g < n; g++)
    f->fold(e, f->cx, x + g * f->nx, acc);
}

/* Values kept in allocas across the loop (promoted to registers): saved to (creating) or
 * restored from slot[0 .. n). */
static void keep(pass_emit *e, LLVMValueRef *slot, LLVMValueRef *v, int n, bool save) {
  for (int i = 0; i < n; i++) {
    if (!save) {
      v[i] = LLVMBuildLoad2(e->B, LLVMGetAllocatedType(slot[i]), slot[i], "");
      continue;
    }
    if (!slot[i]) slot[i] = pass_entry_alloca(e, LLVMTypeOf(v[i]), "kept");
    LLVMBuildStore(e->B, v[i], slot[i]);
  }
}

void pass_src_fold(pass_emit *e, const pass_srcfold *f, LLVMValueRef *acc) {
  const int B = f->batch, nx = B * f->nx, whole = f->n / B * B;
  LLVMValueRef x[PASS_SRC_MAXBATCH * PASS_SRC_MAXX], xn[PASS_SRC_MAXBATCH * PASS_SRC_MAXX];
  LLVMValueRef as[PASS_SRC_MAXACC] = {0}, xs[PASS_SRC_MAXBATCH * PASS_SRC_MAXX] = {0};
  const bool pipe = f->pipelined && whole > 0;
  if (pipe) load_n(e, f, NULL, 0, B, x);
  keep(e, as, acc, f->nacc, true);
  if (pipe) keep(e, xs, x, nx, true);
  pass_loop kb;
  pass_loop_begin(e, &kb, pass_i32(e, pipe ? B : 0), pass_i32(e, whole), pass_i32(e, B));
  keep(e, as, acc, f->nacc, false);
  if (pipe) {
    keep(e, xs, x, nx, false);
    load_n(e, f, kb.i, 0, B, xn);
    fold_n(e, f, B, x, acc);
    keep(e, xs, xn, nx, true);
  } else {
    for (int g = 0; g < B; g++) { /* each source loaded, then folded */
      load_n(e, f, LLVMBuildAdd(e->B, kb.i, pass_i32(e, g), ""), 0, 1, x);
      fold_n(e, f, 1, x, acc);
    }
  }
  keep(e, as, acc, f->nacc, true);
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(e->B);
  pass_loop_end(e, &kb);
  pass_no_unroll(e, LLVMGetBasicBlockTerminator(latch));
  keep(e, as, acc, f->nacc, false);
  if (pipe) {
    keep(e, xs, x, nx, false);
    fold_n(e, f, B, x, acc);
  }
  for (int k = whole; k < f->n; k += pipe ? f->n - whole : 1) { /* the last n % batch sources */
    int m = pipe ? f->n - whole : 1;
    load_n(e, f, NULL, k, m, x);
    fold_n(e, f, m, x, acc);
  }
}
