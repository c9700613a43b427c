/* The bounds screen of a caller's module and of op custom's combine (docs/RELIABILITY.md,
 * "What the screen refuses"): what LLVM cannot compile in bounded time and memory, what NVPTX has
 * no memory for, and what the screen can prove goes out of bounds.  Everything here is decided
 * from the module before any LLVM pass runs; a refusal is RJ_EUNSUPPORTED (the field: `ir`, or
 * `combine.ir` for a combine) naming the function and the bound. */
#include "llvm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#define SIZE_UNITS                                                                                 \
  "(instructions; a basic block counts " STR(JIT_SCREEN_BLOCK) ", a division up to " STR(          \
      JIT_SCREEN_DIV128) ")"

typedef struct screen {
  rj_ctx *ctx;
  LLVMTargetDataRef td;
  const char *field; /* "ir" or "combine.ir" */
  jit_screen_mode mode;
  unsigned features; /* the target's IR_F_* */
  size_t nfn;
  struct fn_cost *fns; /* sorted by function */
} screen;

typedef struct fn_cost {
  LLVMValueRef f;
  uint64_t insts, inlined; /* its own instructions; with every call inlined (saturating) */
  int state;               /* 0 unvisited, 1 on the call stack, 2 done */
  int height;              /* the longest chain of calls from it */
} fn_cost;

static const char *fname(LLVMValueRef f, int *n) {
  size_t len = 0;
  const char *s = LLVMGetValueName2(f, &len);
  *n = len > 100 ? 100 : (int)len;
  return s;
}

/* ---------------------------------------------------------------- types */

static bool ptr_space_ok(unsigned as) { /* NVPTX's memories (NVPTXAddrSpace.h) */
  return as == 0 || as == 1 || as == 3 || as == 4 || as == 5 || as == 7 || as == 101;
}

/* Why type t cannot be compiled (NULL: it can); why: a buffer for the reason. */
static const char *bad_type(LLVMTypeRef t, int depth, char *why, size_t n) {
  if (depth > 16) {
    snprintf(why, n, "a type nested more than 16 deep");
    return why;
  }
  switch (LLVMGetTypeKind(t)) {
  case LLVMIntegerTypeKind:
    if (LLVMGetIntTypeWidth(t) <= JIT_SCREEN_INT_BITS) return NULL;
    snprintf(why, n, "an i%u (integers up to i%d)", LLVMGetIntTypeWidth(t), JIT_SCREEN_INT_BITS);
    return why;
  case LLVMPointerTypeKind:
    if (ptr_space_ok(LLVMGetPointerAddressSpace(t))) return NULL;
    snprintf(why, n, "a pointer in addrspace(%u), a memory NVPTX does not have",
             LLVMGetPointerAddressSpace(t));
    return why;
  case LLVMArrayTypeKind:
  case LLVMVectorTypeKind:
    return bad_type(LLVMGetElementType(t), depth + 1, why, n);
  case LLVMScalableVectorTypeKind: /* no size LLVM can ask for without a fatal error */
    snprintf(why, n, "a scalable vector, which NVPTX does not have");
    return why;
  case LLVMStructTypeKind:
    for (unsigned i = 0; i < LLVMCountStructElementTypes(t); i++)
      if (bad_type(LLVMStructGetTypeAtIndex(t, i), depth + 1, why, n)) return why;
    return NULL;
  default:
    return NULL;
  }
}

/* A value (not memory) of type t: its type, and at most JIT_SCREEN_VALUE_BYTES. */
static const char *bad_value(screen *sc, LLVMTypeRef t, char *why, size_t n) {
  if (bad_type(t, 0, why, n)) return why;
  LLVMTypeKind k = LLVMGetTypeKind(t);
  if ((k == LLVMArrayTypeKind || k == LLVMVectorTypeKind || k == LLVMStructTypeKind) &&
      LLVMTypeIsSized(t) && LLVMABISizeOfType(sc->td, t) > JIT_SCREEN_VALUE_BYTES) {
    snprintf(why, n, "a value of %llu bytes (values up to %d bytes; memory for more)",
             (unsigned long long)LLVMABISizeOfType(sc->td, t), JIT_SCREEN_VALUE_BYTES);
    return why;
  }
  return NULL;
}

/* ---------------------------------------------------------------- memory */

/* An index the screen can bound: a constant, `and` with a constant mask, `urem` by a constant,
 * a zext (of a narrow integer, or of a bounded one), `llvm.umin` with a constant, or a select
 * whose condition is `icmp ult / ule` of its true operand against a constant (a clamp).  Returns
 * the largest value it can take (UINT64_MAX: unbounded). */
static uint64_t const_of(LLVMValueRef c) {
  return c && LLVMIsAConstantInt(c) && LLVMConstIntGetSExtValue(c) >= 0
             ? (uint64_t)LLVMConstIntGetSExtValue(c)
             : UINT64_MAX;
}

static uint64_t min_u64(uint64_t a, uint64_t b) {
  return a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b) {
  return a > b ? a : b;
}

/* The select's true operand under its condition (icmp ult / ule of it against a constant). */
static uint64_t clamp_of(LLVMValueRef sel) {
  LLVMValueRef c = LLVMGetOperand(sel, 0), x = LLVMGetOperand(sel, 1);
  if (!LLVMIsAICmpInst(c) || LLVMGetOperand(c, 0) != x) return UINT64_MAX;
  uint64_t k = const_of(LLVMGetOperand(c, 1));
  LLVMIntPredicate p = LLVMGetICmpPredicate(c);
  if (k == UINT64_MAX || (p != LLVMIntULT && p != LLVMIntULE)) return UINT64_MAX;
  return p == LLVMIntULT ? (k ? k - 1 : 0) : k;
}

static uint64_t index_max(LLVMValueRef v, int depth) {
  if (LLVMIsAConstantInt(v)) return const_of(v);
  if (!LLVMIsAInstruction(v) || depth > 4) return UINT64_MAX;
  LLVMValueRef b = LLVMGetNumOperands(v) > 1 ? LLVMGetOperand(v, 1) : NULL;
  switch (LLVMGetInstructionOpcode(v)) {
  case LLVMAnd:
    return min_u64(const_of(b), index_max(LLVMGetOperand(v, 0), depth + 1));
  case LLVMURem:
    return const_of(b) && const_of(b) != UINT64_MAX ? const_of(b) - 1 : UINT64_MAX;
  case LLVMZExt: {
    LLVMTypeRef t = LLVMTypeOf(LLVMGetOperand(v, 0));
    if (LLVMGetTypeKind(t) != LLVMIntegerTypeKind) return UINT64_MAX;
    unsigned w = LLVMGetIntTypeWidth(t);
    return min_u64(w < 32 ? ((uint64_t)1 << w) - 1 : UINT64_MAX,
                   index_max(LLVMGetOperand(v, 0), depth + 1));
  }
  case LLVMSelect:
    return max_u64(min_u64(clamp_of(v), index_max(LLVMGetOperand(v, 1), depth + 1)),
                   index_max(LLVMGetOperand(v, 2), depth + 1));
  case LLVMCall: {
    LLVMValueRef f = LLVMGetCalledValue(v);
    size_t n = 0;
    const char *name = LLVMIsAFunction(f) ? LLVMGetValueName2(f, &n) : "";
    if (strncmp(name, "llvm.umin.", 10) != 0 || LLVMGetNumArgOperands(v) != 2) return UINT64_MAX;
    return min_u64(index_max(LLVMGetOperand(v, 0), depth + 1),
                   index_max(LLVMGetOperand(v, 1), depth + 1));
  }
  default:
    return UINT64_MAX;
  }
}

/* A GEP (instruction or constant expression) on a global or an alloca: NULL when its offset is
 * within the object (or, outside a combine, not constant), else why. */
static const char *bad_gep(screen *sc, LLVMValueRef g, char *why, size_t n) {
  LLVMValueRef base = LLVMGetOperand(g, 0);
  LLVMTypeRef obj;
  uint64_t count = 1;
  if (LLVMIsAGlobalVariable(base))
    obj = LLVMGlobalGetValueType(base);
  else if (LLVMIsAAllocaInst(base)) {
    obj = LLVMGetAllocatedType(base);
    if (LLVMIsAConstantInt(LLVMGetOperand(base, 0)))
      count = (uint64_t)LLVMConstIntGetZExtValue(LLVMGetOperand(base, 0));
  } else
    return NULL;
  LLVMTypeRef t = LLVMGetGEPSourceElementType(g);
  if (bad_type(obj, 0, why, n) || bad_type(t, 0, why, n)) return why; /* before any size */
  if (!LLVMTypeIsSized(obj) || !LLVMTypeIsSized(t)) return NULL;
  uint64_t size = LLVMABISizeOfType(sc->td, obj) * count;
  uint64_t off = 0, elems = LLVMABISizeOfType(sc->td, t) ? size / LLVMABISizeOfType(sc->td, t) : 0;
  bool known = true;
  for (int i = 1; i < LLVMGetNumOperands(g); i++) {
    LLVMValueRef ix = LLVMGetOperand(g, i);
    if (i > 1 && LLVMGetTypeKind(t) == LLVMStructTypeKind) {
      if (!LLVMIsAConstantInt(ix)) return NULL; /* not IR the verifier passes */
      unsigned f = (unsigned)LLVMConstIntGetZExtValue(ix);
      off += LLVMOffsetOfElement(sc->td, t, f);
      t = LLVMStructGetTypeAtIndex(t, f);
      continue;
    }
    if (i > 1) {
      if (LLVMGetTypeKind(t) != LLVMArrayTypeKind) return NULL; /* a vector: left to LLVM */
      elems = LLVMGetArrayLength2(t);
      t = LLVMGetElementType(t);
    }
    uint64_t max = index_max(ix, 0), esz = LLVMABISizeOfType(sc->td, t);
    if (!LLVMIsAConstantInt(ix)) {
      if (max < elems) { /* bounded: the offset is the worst case's */
        off += max * esz;
        continue;
      }
      if (sc->mode != JIT_SCREEN_COMBINE) {
        known = false;
        continue;
      }
      snprintf(why, n,
               "an index into %s that is not bounded (a constant, `and` with a mask, `urem`, "
               "`llvm.umin` or a select clamping it below its %llu elements)",
               LLVMIsAGlobalVariable(base) ? "a global" : "a local", (unsigned long long)elems);
      return why;
    }
    long long c = LLVMConstIntGetSExtValue(ix);
    if (c < 0 || (uint64_t)c > elems || (esz && (uint64_t)c > (UINT64_MAX - off) / esz)) {
      snprintf(why, n, "a constant index %lld past %s of %llu elements", c,
               LLVMIsAGlobalVariable(base) ? "a global" : "a local", (unsigned long long)elems);
      return why;
    }
    off += (uint64_t)c * esz;
  }
  if (known && off > size) {
    snprintf(why, n, "an offset of %llu bytes past %s of %llu bytes", (unsigned long long)off,
             LLVMIsAGlobalVariable(base) ? "a global" : "a local", (unsigned long long)size);
    return why;
  }
  return NULL;
}

static bool is_gep(LLVMValueRef v) {
  return LLVMIsAGetElementPtrInst(v) ||
         (LLVMIsAConstantExpr(v) && LLVMGetConstOpcode(v) == LLVMGetElementPtr);
}

/* An alloca: a constant count, and at most JIT_SCREEN_ALLOCA_BYTES (with the function's others:
 * *local). */
static const char *bad_alloca(screen *sc, LLVMValueRef a, uint64_t *local, char *why, size_t n) {
  LLVMValueRef c = LLVMGetOperand(a, 0);
  LLVMTypeRef t = LLVMGetAllocatedType(a);
  if (!LLVMIsAConstantInt(c) || !LLVMTypeIsSized(t)) return "an alloca of a run-time size";
  uint64_t k = LLVMConstIntGetZExtValue(c), sz = LLVMABISizeOfType(sc->td, t);
  if (sz && k > ((uint64_t)JIT_SCREEN_ALLOCA_BYTES << 1) / sz)
    k = (uint64_t)JIT_SCREEN_ALLOCA_BYTES;
  *local += k * sz;
  if (*local <= JIT_SCREEN_ALLOCA_BYTES) return NULL;
  snprintf(why, n, "allocas of more than %d bytes", JIT_SCREEN_ALLOCA_BYTES);
  return why;
}

/* ---------------------------------------------------------------- instructions */

/* The scalar operations a value of type t makes NVPTX do: one per element of a vector; for an
 * aggregate loaded or stored whole (`memory`), one per 4 bytes (extracting and inserting a
 * field costs nothing: SROA takes aggregates apart). */
static uint64_t lanes(screen *sc, LLVMTypeRef t, bool memory) {
  LLVMTypeKind k = LLVMGetTypeKind(t);
  if (k == LLVMVectorTypeKind) return LLVMGetVectorSize(t) ? LLVMGetVectorSize(t) : 1;
  if (!memory || (k != LLVMArrayTypeKind && k != LLVMStructTypeKind) || !LLVMTypeIsSized(t))
    return 1;
  uint64_t n = LLVMABISizeOfType(sc->td, t) / 4;
  return n ? n : 1;
}

/* An instruction's share of the bound: 1, and more for a division or remainder, which NVPTX
 * expands (an i64 one into a 32-bit fast path and branches, wider ones into a loop); times the
 * lanes of its widest value (lanes()). */
static uint64_t weight(screen *sc, LLVMValueRef i) {
  LLVMTypeRef t = LLVMTypeOf(i);
  LLVMOpcode op = LLVMGetInstructionOpcode(i);
  bool memory = op == LLVMLoad || op == LLVMStore;
  uint64_t w = 1, n = lanes(sc, t, memory);
  for (int o = 0; o < LLVMGetNumOperands(i) && o < 4; o++) {
    LLVMValueRef v = LLVMGetOperand(i, o);
    uint64_t m = LLVMIsABasicBlock(v) ? 1 : lanes(sc, LLVMTypeOf(v), memory);
    n = m > n ? m : n;
  }
  switch (op) {
  case LLVMUDiv:
  case LLVMSDiv:
  case LLVMURem:
  case LLVMSRem: {
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) t = LLVMGetElementType(t);
    unsigned b = LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? LLVMGetIntTypeWidth(t) : 128;
    w = b > 64 ? JIT_SCREEN_DIV128 : b > 32 ? JIT_SCREEN_DIV64 : JIT_SCREEN_DIV32;
    break;
  }
  default:
    break;
  }
  return w * (n > JIT_SCREEN_VALUE_BYTES ? JIT_SCREEN_VALUE_BYTES : n);
}

static fn_cost *cost_of(screen *sc, LLVMValueRef f);

static int by_fn(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const fn_cost *)a)->f, y = (uintptr_t)((const fn_cost *)b)->f;
  return x < y ? -1 : x > y;
}

static fn_cost *cost_of(screen *sc, LLVMValueRef f) {
  fn_cost key = {.f = f};
  return bsearch(&key, sc->fns, sc->nfn, sizeof key, by_fn);
}

/* Why instruction i cannot be compiled (NULL: it can). */
static const char *bad_inst(screen *sc, LLVMValueRef i, uint64_t *local, char *why, size_t n) {
  if (bad_value(sc, LLVMTypeOf(i), why, n)) return why;
  for (int o = 0; o < LLVMGetNumOperands(i); o++) {
    LLVMValueRef v = LLVMGetOperand(i, o);
    if (LLVMIsABasicBlock(v)) continue;
    if (bad_value(sc, LLVMTypeOf(v), why, n)) return why;
    if (is_gep(v) && !LLVMIsAInstruction(v) && bad_gep(sc, v, why, n)) return why;
  }
  switch (LLVMGetInstructionOpcode(i)) {
  case LLVMAlloca:
    if (bad_type(LLVMGetAllocatedType(i), 0, why, n)) return why;
    return bad_alloca(sc, i, local, why, n);
  case LLVMGetElementPtr:
    if (bad_type(LLVMGetGEPSourceElementType(i), 0, why, n)) return why;
    return bad_gep(sc, i, why, n);
  case LLVMAtomicRMW: { /* NVPTX cannot select these: "Cannot select: AtomicLoad..." aborts */
    unsigned as = LLVMGetPointerAddressSpace(LLVMTypeOf(LLVMGetOperand(i, 0)));
    if (as == 4 || as == 101)
      snprintf(why, n, "an atomic on %s memory (addrspace(%u)), which NVPTX cannot select",
               as == 4 ? "constant" : "parameter", as);
    else if (as == 7 && !(sc->features & IR_F_CLUSTER))
      snprintf(why, n,
               "an atomic on shared cluster memory (addrspace(7)), which needs a target "
               "with clusters (sm_90 or later)");
    else
      return NULL;
    return why;
  }
  default:
    return NULL;
  }
}

/* f's instructions with every call of a defined function inlined, into its fn_cost (saturating
 * at the bound + 1); recursion, and calls nested deeper than JIT_SCREEN_CALL_DEPTH, refused. */
static rj_status inline_cost(screen *sc, fn_cost *c, int depth) {
  int nl = 0;
  const char *name = fname(c->f, &nl);
  if (c->state == 1 || depth > JIT_SCREEN_CALL_DEPTH || c->height > JIT_SCREEN_CALL_DEPTH)
    return ir_fail(
        &sc->ctx->err, RJ_EUNSUPPORTED,
        "%s: function %.*s %s (refused: the kernel's calls must be inlined)", sc->field, nl, name,
        c->state == 1 ? "calls itself (recursion, direct or through others)"
                      : "is called through more than " STR(JIT_SCREEN_CALL_DEPTH) " nested calls");
  if (c->state == 2) return RJ_OK;
  c->state = 1;
  uint64_t sum = c->insts, cap = (uint64_t)JIT_SCREEN_INSTS + 1;
  for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(c->f); b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i)) {
      if (LLVMGetInstructionOpcode(i) != LLVMCall) continue;
      fn_cost *d = cost_of(sc, LLVMGetCalledValue(i));
      if (!d) continue; /* an intrinsic, a declaration or an indirect call */
      rj_status s = inline_cost(sc, d, depth + 1);
      if (s) return s;
      if (d->height + 1 > c->height) c->height = d->height + 1;
      sum = sum + d->inlined < cap ? sum + d->inlined : cap;
    }
  c->inlined = sum;
  c->state = 2;
  return c->height > JIT_SCREEN_CALL_DEPTH ? inline_cost(sc, c, depth) : RJ_OK; /* refused */
}

/* ---------------------------------------------------------------- the entry */

/* A symbol PTX can spell: letters, digits, '_' and '$', not led by a digit.  NVPTX renames '.'
 * and '@' in symbols local to the module; any other character ends LLVM ("Symbol name with
 * unsupported characters").  Intrinsics and unused declarations are never emitted; an unnamed
 * value gets a valid name. */
static const char *bad_name(const screen *sc, LLVMValueRef g) {
  size_t n = 0;
  const char *s = LLVMGetValueName2(g, &n);
  if (n > 5 && strncmp(s, "llvm.", 5) == 0 && LLVMIsAFunction(g)) return NULL;
  LLVMLinkage l = LLVMGetLinkage(g);
  /* a combine's (a map's) symbols are all made internal before linking: NVPTX renames them */
  bool local =
      l == LLVMInternalLinkage || l == LLVMPrivateLinkage || sc->mode == JIT_SCREEN_COMBINE;
  for (size_t k = 0; k < n; k++) {
    char c = s[k];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
              (c >= '0' && c <= '9' && k > 0) || (local && (c == '.' || c == '@'));
    if (!ok) return "a name PTX cannot spell (letters, digits, '_' and '$', not led by a digit)";
  }
  return NULL;
}

/* Names PTX can spell; no alias or ifunc (NVPTX aborts on aliases of kernels and spells no
 * alias's name of its own: one that is not a plain symbol ends LLVM) */
static rj_status screen_names(screen *sc, LLVMModuleRef M) {
  LLVMValueRef a = LLVMGetFirstGlobalAlias(M), i = LLVMGetFirstGlobalIFunc(M);
  if (a || i) {
    int nl = 0;
    const char *name = fname(a ? a : i, &nl);
    return ir_fail(&sc->ctx->err, RJ_EUNSUPPORTED,
                   "%s: @%.*s is an %s (refused: a module of "
                   "functions and globals only)",
                   sc->field, nl, name, a ? "alias" : "ifunc");
  }
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f) && !LLVMGetFirstUse(f)) continue; /* never emitted */
    int nl = 0;
    const char *name = fname(f, &nl), *bad = bad_name(sc, f);
    if (bad)
      return ir_fail(&sc->ctx->err, RJ_EUNSUPPORTED, "%s: function %.*s has %s", sc->field, nl,
                     name, bad);
  }
  return RJ_OK;
}

static rj_status screen_globals(screen *sc, LLVMModuleRef M) {
  char why[160];
  for (LLVMValueRef g = LLVMGetFirstGlobal(M); g; g = LLVMGetNextGlobal(g)) {
    int nl = 0;
    const char *name = fname(g, &nl);
    unsigned as = LLVMGetPointerAddressSpace(LLVMTypeOf(g));
    LLVMValueRef init = LLVMGetInitializer(g);
    const char *bad = bad_name(sc, g);
    if (!bad) bad = bad_type(LLVMGlobalGetValueType(g), 0, why, sizeof why);
    if (!bad && as != 0 && as != 1 && as != 3 && as != 4)
      bad = "an address space other than 0, 1 (global), 3 (shared) or 4 (constant)";
    else if (!bad && as == 3 && init && !LLVMIsUndef(init) && !LLVMIsPoison(init))
      bad = "an initial value in shared memory (addrspace(3)), which NVPTX cannot give";
    if (bad)
      return ir_fail(&sc->ctx->err, RJ_EUNSUPPORTED, "%s: global @%.*s has %s", sc->field, nl, name,
                     bad);
  }
  return RJ_OK;
}

static rj_status screen_functions(screen *sc, LLVMModuleRef M) {
  char why[200];
  uint64_t total = 0;
  for (size_t k = 0; k < sc->nfn; k++) {
    LLVMValueRef f = sc->fns[k].f;
    int nl = 0;
    const char *name = fname(f, &nl), *bad = NULL;
    if (sc->mode != JIT_SCREEN_LINKED)
      bad = bad_value(sc, LLVMGetReturnType(LLVMGlobalGetValueType(f)), why, sizeof why);
    for (unsigned p = 0; !bad && sc->mode != JIT_SCREEN_LINKED && p < LLVMCountParams(f); p++)
      bad = bad_value(sc, LLVMTypeOf(LLVMGetParam(f, p)), why, sizeof why);
    uint64_t local = 0;
    for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b && !bad; b = LLVMGetNextBasicBlock(b))
      for (LLVMValueRef i = LLVMGetFirstInstruction(b); i && !bad; i = LLVMGetNextInstruction(i)) {
        if (sc->mode != JIT_SCREEN_LINKED) bad = bad_inst(sc, i, &local, why, sizeof why);
        if (!bad) /* weighed once its types are known to have sizes */
          sc->fns[k].insts +=
              weight(sc, i) + (i == LLVMGetFirstInstruction(b) ? JIT_SCREEN_BLOCK : 0);
      }
    if (bad)
      return ir_fail(&sc->ctx->err, RJ_EUNSUPPORTED, "%s: function %.*s has %s", sc->field, nl,
                     name, bad);
    total += sc->fns[k].insts;
  }
  (void)M;
  if (total > JIT_SCREEN_INSTS)
    return ir_fail(&sc->ctx->err, RJ_EUNSUPPORTED,
                   "%s: a size of %llu " SIZE_UNITS
                   ", over the bound of " STR(JIT_SCREEN_INSTS) " (a compile in bounded time)",
                   sc->field, (unsigned long long)total);
  for (size_t k = 0; k < sc->nfn; k++) {
    rj_status s = inline_cost(sc, &sc->fns[k], 0);
    if (s) return s;
    int nl = 0;
    const char *name = fname(sc->fns[k].f, &nl);
    if (sc->fns[k].inlined > JIT_SCREEN_INSTS && sc->mode == JIT_SCREEN_LINKED)
      return ir_fail(&sc->ctx->err, RJ_EUNSUPPORTED,
                     "%s: inlined at each of its uses in redjit's kernel %.*s, the combine makes "
                     "it over a size of " STR(
                         JIT_SCREEN_INSTS) " " SIZE_UNITS
                                           " (a compile in bounded time): a smaller combine fits",
                     sc->field, nl, name);
    if (sc->fns[k].inlined > JIT_SCREEN_INSTS)
      return ir_fail(&sc->ctx->err, RJ_EUNSUPPORTED,
                     "%s: function %.*s with its calls inlined is over a size of " STR(
                         JIT_SCREEN_INSTS) " " SIZE_UNITS " (a compile in bounded time)",
                     sc->field, nl, name);
  }
  return RJ_OK;
}

rj_status jit_ir_screen(rj_ctx *ctx, LLVMModuleRef M, const ir_target *tg, const char *field,
                        jit_screen_mode mode) {
  screen sc = {.ctx = ctx, .field = field, .mode = mode, .features = tg->features};
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f))
    sc.nfn += LLVMCountBasicBlocks(f) > 0;
  sc.fns = calloc(sc.nfn ? sc.nfn : 1, sizeof *sc.fns);
  if (!sc.fns) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  size_t k = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f))
    if (LLVMCountBasicBlocks(f) > 0) sc.fns[k++].f = f;
  qsort(sc.fns, sc.nfn, sizeof *sc.fns, by_fn);
  sc.td = LLVMGetModuleDataLayout(M);
  rj_status s = mode == JIT_SCREEN_LINKED ? RJ_OK : screen_globals(&sc, M);
  if (!s && mode != JIT_SCREEN_LINKED) s = screen_names(&sc, M);
  if (!s) s = screen_functions(&sc, M);
  free(sc.fns);
  return s;
}
