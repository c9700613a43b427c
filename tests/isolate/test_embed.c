/* A language runtime's view of redjit.  This program links its OWN LLVM (Core, static)
 * and libredjit_emit.a, builds a kernel with the LLVM-C API — its own parameters, loads from
 * global memory, loops and shared arrays — and calls redjit's emitters in the middle: a subgroup
 * reduce_all_add, a shared-memory tile reduction and a register (local) tile reduction.  It
 * prints the IR, pushes it through redjit's pipeline (rj_compile_ir: O3 and PTX by the LLVM
 * hidden inside libredjit.so: two LLVMs in one process), and runs it on the GPU against a
 * float64 oracle.  GPU parts skip, saying so, without a GPU. */
#include "rjtest.h"
#include "redjit_emit.h"

#include <llvm-c/Core.h>
#include <math.h>
#include <stdbool.h>

#define BLOCKS 4
#define THREADS 128
#define K 8    /* elements each thread sums in its own loop (part A) */
#define ROWS 8 /* part B: a [ROWS, COLS] shared tile per block, reduced along COLS */
#define COLS 64
#define SLOTS 4 /* part C: 4 register slots per lane, reduced over the warp */

#define TILE_REQ                                                                                   \
  "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":128,"         \
  "\"src\":{\"mem\":\"shared\",\"shape\":[8,64]},\"dst\":{\"mem\":\"shared\",\"shape\":[8]}}"
#define LOCAL_REQ                                                                                         \
  "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"warp\","                               \
  "\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{\"shape\":[32,4],\"stride\":[\"1@lane\",1]}}," \
  "\"dst\":{\"mem\":\"local\",\"shape\":[1],\"layout\":{\"shape\":[1],\"stride\":[1],"                    \
  "\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0,1]}"

/* ---------------------------------------------------------------- the "runtime's" IR helpers */
typedef struct rt {
  LLVMContextRef C;
  LLVMModuleRef M;
  LLVMBuilderRef B;
  LLVMValueRef fn;
  LLVMTypeRef i32, f32, ptr1;
} rt;

static LLVMValueRef ci(rt *r, int v) {
  return LLVMConstInt(r->i32, (unsigned long long)(long long)v, 1);
}

static LLVMValueRef intrinsic(rt *r, const char *name, LLVMValueRef *args, unsigned n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  LLVMValueRef f = LLVMGetIntrinsicDeclaration(r->M, id, NULL, 0);
  return LLVMBuildCall2(r->B, LLVMIntrinsicGetType(r->C, id, NULL, 0), f, args, n, "");
}

static LLVMValueRef at(rt *r, LLVMTypeRef ty, LLVMValueRef base, LLVMValueRef i) {
  return LLVMBuildGEP2(r->B, ty, base, &i, 1, "");
}

/* for (i = start; i < end; i += step) body(i): the runtime's own loop, with an alloca'd counter */
typedef struct loop {
  LLVMValueRef var, i;
  LLVMBasicBlockRef head, body, exit;
  LLVMValueRef step;
} loop;

static void loop_begin(rt *r, loop *l, LLVMValueRef start, LLVMValueRef end, LLVMValueRef step) {
  LLVMBuilderRef eb = LLVMCreateBuilderInContext(r->C);
  LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(r->fn);
  LLVMValueRef first = LLVMGetFirstInstruction(entry);
  if (first)
    LLVMPositionBuilderBefore(eb, first);
  else
    LLVMPositionBuilderAtEnd(eb, entry);
  l->var = LLVMBuildAlloca(eb, r->i32, "i");
  LLVMDisposeBuilder(eb);
  l->step = step;
  LLVMBuildStore(r->B, start, l->var);
  l->head = LLVMAppendBasicBlockInContext(r->C, r->fn, "rt.loop");
  l->body = LLVMAppendBasicBlockInContext(r->C, r->fn, "rt.body");
  l->exit = LLVMAppendBasicBlockInContext(r->C, r->fn, "rt.done");
  LLVMBuildBr(r->B, l->head);
  LLVMPositionBuilderAtEnd(r->B, l->head);
  LLVMValueRef i = LLVMBuildLoad2(r->B, r->i32, l->var, "");
  LLVMBuildCondBr(r->B, LLVMBuildICmp(r->B, LLVMIntSLT, i, end, ""), l->body, l->exit);
  LLVMPositionBuilderAtEnd(r->B, l->body);
  l->i = LLVMBuildLoad2(r->B, r->i32, l->var, "");
}

static void loop_end(rt *r, loop *l) {
  LLVMValueRef i = LLVMBuildLoad2(r->B, r->i32, l->var, "");
  LLVMBuildStore(r->B, LLVMBuildAdd(r->B, i, l->step, ""), l->var);
  LLVMBuildBr(r->B, l->head);
  LLVMPositionBuilderAtEnd(r->B, l->exit);
}

static void rt_init(rt *r, const char *name) {
  r->C = LLVMContextCreate();
  r->M = LLVMModuleCreateWithNameInContext(name, r->C);
  LLVMSetTarget(r->M, "nvptx64-nvidia-cuda");
  r->B = LLVMCreateBuilderInContext(r->C);
  r->i32 = LLVMInt32TypeInContext(r->C);
  r->f32 = LLVMFloatTypeInContext(r->C);
  r->ptr1 = LLVMPointerTypeInContext(r->C, 1);
}

static void rt_free(rt *r) {
  LLVMDisposeBuilder(r->B);
  LLVMDisposeModule(r->M);
  LLVMContextDispose(r->C);
}

static char *module_text(rt *r) {
  char *s = LLVMPrintModuleToString(r->M), *copy = strdup(s);
  LLVMDisposeMessage(s);
  return copy;
}

/* A test kernel k(float *in, float *out) begun in r (rt_init'ed here); its thread index. */
static LLVMValueRef tile_kernel_begin(rt *r) {
  rt_init(r, "m");
  LLVMTypeRef params[2] = {r->ptr1, r->ptr1};
  r->fn = LLVMAddFunction(r->M, "k", LLVMFunctionType(LLVMVoidTypeInContext(r->C), params, 2, 0));
  LLVMPositionBuilderAtEnd(r->B, LLVMAppendBasicBlockInContext(r->C, r->fn, "entry"));
  return intrinsic(r, "llvm.nvvm.read.ptx.sreg.tid.x", NULL, 0);
}

/* The rest of a test kernel around a register tile: rj_emit_tile of json (src, dst: the tile's
 * allocas; the lane from tid), dst[out] stored to the kernel's parameter 1 at tid, and the module
 * compiled for sm_90; its PTX (ctx's, with the kernel). */
static const char *tile_kernel_ptx(rj_ctx *ctx, rt *r, const char *json, LLVMValueRef src,
                                   LLVMValueRef dst, LLVMValueRef tid, int out) {
  rj_request req;
  rjt_parse(ctx, json, &req);
  rj_emitter em;
  rj_emitter_init(&em, r->M, r->B);
  LLVMValueRef lane = LLVMBuildAnd(r->B, tid, ci(r, 31), "lane");
  ck_assert_msg(rj_emit_tile(&em, &req, src, dst, lane) == RJ_OK, "%s", em.errmsg);
  LLVMValueRef v = LLVMBuildLoad2(r->B, r->f32, at(r, r->f32, dst, ci(r, out)), "");
  LLVMBuildStore(r->B, v, at(r, r->f32, LLVMGetParam(r->fn, 1), tid));
  LLVMBuildRetVoid(r->B);
  char *ir = module_text(r);
  rj_kernel *k = NULL;
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  ck_assert_msg(rj_compile_ir(ctx, ir, 0, "k", &o, &k) == RJ_OK, "%s", rj_errmsg(ctx));
  free(ir);
  return rj_kernel_text(k, RJ_EMIT_PTX);
}

/* ---------------------------------------------------------------- the kernel
 * rt_kernel(a, b, c, out_a, out_b, out_c, k):
 *  A: acc = sum of a[gid*k .. gid*k+k) (the runtime's loop); out_a[gid] = reduce_all_add(acc, 5)
 *  B: the block's [8, 64] slice of b -> shared (the runtime's copy loop), bar.sync, redjit's
 *     shared tile reduction into an [8] shared array, then threads 0..7 store out_b[block*8+t]
 *  C: 4 register slots per lane from c[gid*4 ..], redjit's register tile over the warp,
 *     out_c[gid] = the warp's sum (every lane holds it) */
static void build_kernel(rt *r, rj_ctx *ctx, rj_emitter *em) {
  LLVMTypeRef params[7] = {r->ptr1, r->ptr1, r->ptr1, r->ptr1, r->ptr1, r->ptr1, r->i32};
  r->fn = LLVMAddFunction(r->M, "rt_kernel",
                          LLVMFunctionType(LLVMVoidTypeInContext(r->C), params, 7, 0));
  LLVMSetFunctionCallConv(r->fn, LLVMPTXKernelCallConv);
  LLVMPositionBuilderAtEnd(r->B, LLVMAppendBasicBlockInContext(r->C, r->fn, "entry"));
  LLVMValueRef tid = intrinsic(r, "llvm.nvvm.read.ptx.sreg.tid.x", NULL, 0);
  LLVMValueRef bid = intrinsic(r, "llvm.nvvm.read.ptx.sreg.ctaid.x", NULL, 0);
  LLVMValueRef gid = LLVMBuildAdd(r->B, LLVMBuildMul(r->B, bid, ci(r, THREADS), ""), tid, "gid");
  LLVMValueRef kparam = LLVMGetParam(r->fn, 6);
  rj_emitter_init(em, r->M, r->B);
  em->target = "sm_90";
  em->barriers_used = 1u << 0; /* bar.sync 0 is the runtime's own CTA barrier */

  /* A. the runtime's loop, then redjit's butterfly */
  LLVMValueRef acc = LLVMBuildAlloca(r->B, r->f32, "acc");
  LLVMBuildStore(r->B, LLVMConstReal(r->f32, 0.0), acc);
  loop l;
  loop_begin(r, &l, ci(r, 0), kparam, ci(r, 1));
  LLVMValueRef ix = LLVMBuildAdd(r->B, LLVMBuildMul(r->B, gid, kparam, ""), l.i, "");
  LLVMValueRef x = LLVMBuildLoad2(r->B, r->f32, at(r, r->f32, LLVMGetParam(r->fn, 0), ix), "");
  LLVMBuildStore(r->B, LLVMBuildFAdd(r->B, LLVMBuildLoad2(r->B, r->f32, acc, ""), x, ""), acc);
  loop_end(r, &l);
  LLVMValueRef mine = LLVMBuildLoad2(r->B, r->f32, acc, "mine");
  LLVMValueRef total = NULL;
  rj_status s = rj_emit_subgroup(em, RJ_PRIM_REDUCE_ALL_ADD, RJ_F32, 5, mine, NULL, &total);
  ck_assert_msg(s == RJ_OK, "rj_emit_subgroup: %s", em->errmsg);
  LLVMBuildStore(r->B, total, at(r, r->f32, LLVMGetParam(r->fn, 3), gid));

  /* B. shared tile on the runtime's own shared arrays */
  LLVMTypeRef srct = LLVMArrayType2(r->f32, ROWS * COLS), dstt = LLVMArrayType2(r->f32, ROWS);
  LLVMValueRef ssrc = LLVMAddGlobalInAddressSpace(r->M, srct, "rt_tile_src", 3);
  LLVMValueRef sdst = LLVMAddGlobalInAddressSpace(r->M, dstt, "rt_tile_dst", 3);
  LLVMSetInitializer(ssrc, LLVMGetUndef(srct));
  LLVMSetInitializer(sdst, LLVMGetUndef(dstt));
  LLVMSetLinkage(ssrc, LLVMInternalLinkage);
  LLVMSetLinkage(sdst, LLVMInternalLinkage);
  LLVMSetAlignment(ssrc, 16);
  LLVMSetAlignment(sdst, 16);
  loop c;
  loop_begin(r, &c, tid, ci(r, ROWS * COLS), ci(r, THREADS));
  LLVMValueRef gi = LLVMBuildAdd(r->B, LLVMBuildMul(r->B, bid, ci(r, ROWS * COLS), ""), c.i, "");
  LLVMValueRef v = LLVMBuildLoad2(r->B, r->f32, at(r, r->f32, LLVMGetParam(r->fn, 1), gi), "");
  LLVMBuildStore(r->B, v, at(r, r->f32, ssrc, c.i));
  loop_end(r, &c);
  LLVMValueRef zero = ci(r, 0);
  intrinsic(r, "llvm.nvvm.barrier.cta.sync.aligned.all", &zero, 1);
  rj_request req;
  rjt_parse(ctx, TILE_REQ, &req);
  s = rj_emit_tile(em, &req, ssrc, sdst, tid);
  ck_assert_msg(s == RJ_OK, "rj_emit_tile (shared): %s", em->errmsg);
  LLVMBasicBlockRef wr = LLVMAppendBasicBlockInContext(r->C, r->fn, "rt.write");
  LLVMBasicBlockRef after = LLVMAppendBasicBlockInContext(r->C, r->fn, "rt.after");
  LLVMBuildCondBr(r->B, LLVMBuildICmp(r->B, LLVMIntULT, tid, ci(r, ROWS), ""), wr, after);
  LLVMPositionBuilderAtEnd(r->B, wr);
  v = LLVMBuildLoad2(r->B, r->f32, at(r, r->f32, sdst, tid), "");
  LLVMValueRef oi = LLVMBuildAdd(r->B, LLVMBuildMul(r->B, bid, ci(r, ROWS), ""), tid, "");
  LLVMBuildStore(r->B, v, at(r, r->f32, LLVMGetParam(r->fn, 4), oi));
  LLVMBuildBr(r->B, after);
  LLVMPositionBuilderAtEnd(r->B, after);

  /* C. register tile: the runtime's slots (allocas), redjit's warp reduction */
  LLVMValueRef slots = LLVMBuildAlloca(r->B, LLVMArrayType2(r->f32, SLOTS), "slots");
  LLVMValueRef out1 = LLVMBuildAlloca(r->B, LLVMArrayType2(r->f32, 1), "out1");
  for (int j = 0; j < SLOTS; j++) {
    LLVMValueRef si = LLVMBuildAdd(r->B, LLVMBuildMul(r->B, gid, ci(r, SLOTS), ""), ci(r, j), "");
    v = LLVMBuildLoad2(r->B, r->f32, at(r, r->f32, LLVMGetParam(r->fn, 2), si), "");
    LLVMBuildStore(r->B, v, at(r, r->f32, slots, ci(r, j)));
  }
  rjt_parse(ctx, LOCAL_REQ, &req);
  LLVMValueRef lane = LLVMBuildAnd(r->B, tid, ci(r, 31), "lane"); /* tid within the warp */
  s = rj_emit_tile(em, &req, slots, out1, lane);
  ck_assert_msg(s == RJ_OK, "rj_emit_tile (local): %s", em->errmsg);
  v = LLVMBuildLoad2(r->B, r->f32, at(r, r->f32, out1, ci(r, 0)), "");
  LLVMBuildStore(r->B, v, at(r, r->f32, LLVMGetParam(r->fn, 5), gid));
  LLVMBuildRetVoid(r->B);
}

static float frand(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static void check_close(const char *what, int i, float got, double want, double mag) {
  ck_assert_msg(fabs((double)got - want) <= 1e-5 * mag + 1e-30,
                "%s[%d]: got %.9g, expected %.9g (tolerance %.3g)", what, i, (double)got, want,
                1e-5 * mag);
}

START_TEST(runtime_kernel) {
  unsigned maj = 0, min = 0, pat = 0;
  LLVMGetVersion(&maj, &min, &pat);
  fprintf(stderr, "the runtime's LLVM: %u.%u.%u; redjit %s\n", maj, min, pat, rj_version());
  rj_ctx *ctx = rj_ctx_new();
  rt r;
  rt_init(&r, "runtime_module");
  rj_emitter em;
  build_kernel(&r, ctx, &em);
  ck_assert_int_eq(em.barriers_used, 1); /* cta scope: bar.sync 0 only, no named barrier taken */
  char *ir = module_text(&r);
  printf("---- the runtime's module, redjit's primitives inline\n%s", ir);
  /* inline: no call to anything but intrinsics, no function but the kernel */
  ck_assert_int_eq(rjt_count(ir, "define "), 1);
  ck_assert_int_ge(rjt_count(ir, "@llvm.nvvm.shfl.sync.bfly"), 5 + 2);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  rj_status s = rj_compile_ir(ctx, ir, 0, "rt_kernel", &o, &k);
  ck_assert_msg(s == RJ_OK, "rj_compile_ir: %s", rj_errmsg(ctx));
  const char *ptx = rj_kernel_text(k, RJ_EMIT_PTX);
  printf("---- its PTX (redjit's LLVM)\n%s", ptx);
  ck_assert_int_ge(rjt_count(ptx, "shfl.sync.bfly.b32"), 5 + 5 + 3);
  ck_assert_int_ge(rjt_count(ptx, "bar.sync"), 2);
  ck_assert_ptr_null(strstr(ptx, "call.uni"));
  ck_assert_str_eq(rj_kernel_entry(k), "rt_kernel");
  /* the same text again: the cached kernel */
  rj_kernel *k2 = NULL;
  ck_assert_int_eq(rj_compile_ir(ctx, ir, 0, "rt_kernel", &o, &k2), RJ_OK);
  ck_assert_ptr_eq(k, k2);
  free(ir);
  rt_free(&r);
  if (!rjt_have_gpu(ctx)) {
    rj_ctx_free(ctx);
    return;
  }
  /* on the GPU: recompiled for the device's own target */
  rt_init(&r, "runtime_module");
  build_kernel(&r, ctx, &em);
  ir = module_text(&r);
  rt_free(&r);
  rj_options_init(&o);
  s = rj_compile_ir(ctx, ir, 0, "rt_kernel", &o, &k);
  free(ir);
  ck_assert_msg(s == RJ_OK, "rj_compile_ir (auto target): %s", rj_errmsg(ctx));
  enum {
    N = BLOCKS * THREADS,
    NA = N * K,
    NB = BLOCKS * ROWS * COLS,
    NC = N * SLOTS,
    NOB = BLOCKS * ROWS
  };
  static float a[NA], b[NB], c[NC], oa[N], ob[NOB], oc[N];
  for (int seed = 1; seed <= 3; seed++) {
    uint64_t st = (uint64_t)seed * 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < NA; i++)
      a[i] = frand(&st);
    for (int i = 0; i < NB; i++)
      b[i] = frand(&st);
    for (int i = 0; i < NC; i++)
      c[i] = frand(&st);
    uint64_t d[6];
    size_t sz[6] = {sizeof a, sizeof b, sizeof c, sizeof oa, sizeof ob, sizeof oc};
    for (int i = 0; i < 6; i++) {
      ck_assert_msg(rj_device_alloc(ctx, 0, sz[i], &d[i]) == RJ_OK, "%s", rj_errmsg(ctx));
    }
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, d[0], a, sizeof a), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, d[1], b, sizeof b), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, d[2], c, sizeof c), RJ_OK);
    memset(oa, 0xff, sizeof oa); /* poison: NaN */
    memset(ob, 0xff, sizeof ob);
    memset(oc, 0xff, sizeof oc);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, d[3], oa, sizeof oa), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, d[4], ob, sizeof ob), RJ_OK);
    ck_assert_int_eq(rj_memcpy_htod(ctx, 0, d[5], oc, sizeof oc), RJ_OK);
    int kk = K;
    void *args[7] = {&d[0], &d[1], &d[2], &d[3], &d[4], &d[5], &kk};
    unsigned grid[3] = {BLOCKS, 1, 1}, block[3] = {THREADS, 1, 1};
    double ms = 0;
    s = rj_kernel_launch(ctx, k, 0, grid, block, 0, args, &ms);
    ck_assert_msg(s == RJ_OK, "launch: %s", rj_errmsg(ctx));
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, oa, d[3], sizeof oa), RJ_OK);
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, ob, d[4], sizeof ob), RJ_OK);
    ck_assert_int_eq(rj_memcpy_dtoh(ctx, 0, oc, d[5], sizeof oc), RJ_OK);
    for (int i = 0; i < 6; i++)
      ck_assert_int_eq(rj_device_free(ctx, 0, d[i]), RJ_OK);
    /* the float64 oracle: every lane of every warp, every tile row */
    for (int w = 0; w < N / 32; w++) {
      double sa = 0, ma = 0, sc = 0, mc = 0;
      for (int i = w * 32 * K; i < (w + 1) * 32 * K; i++)
        sa += a[i], ma += fabs(a[i]);
      for (int i = w * 32 * SLOTS; i < (w + 1) * 32 * SLOTS; i++)
        sc += c[i], mc += fabs(c[i]);
      for (int l = 0; l < 32; l++) {
        check_close("out_a (subgroup reduce_all_add)", w * 32 + l, oa[w * 32 + l], sa, ma);
        check_close("out_c (local tile)", w * 32 + l, oc[w * 32 + l], sc, mc);
      }
    }
    for (int row = 0; row < NOB; row++) {
      double sb = 0, mb = 0;
      for (int j = 0; j < COLS; j++)
        sb += b[row * COLS + j], mb += fabs(b[row * COLS + j]);
      check_close("out_b (shared tile)", row, ob[row], sb, mb);
    }
    fprintf(stderr, "seed %d: %d + %d + %d outputs match the float64 oracle (%.3f ms)\n", seed, N,
            NOB, N, ms);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* Every primitive x dtype emitted into a runtime's one-line kernel, compiled by redjit. */
START_TEST(every_primitive_compiles) {
  rj_ctx *ctx = rj_ctx_new();
  static const rj_dtype dts[] = {RJ_F16, RJ_BF16, RJ_F32, RJ_F64, RJ_I32, RJ_U32, RJ_I64, RJ_U64};
  for (int p = RJ_PRIM_SHUFFLE; p <= RJ_PRIM_INVOCATION_ID; p++)
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
      bool isfloat = dts[d] <= RJ_F64;
      if (p == RJ_PRIM_INVOCATION_ID && isfloat) continue;
      rt r;
      rt_init(&r, "m");
      LLVMTypeRef tys[8] = {LLVMHalfTypeInContext(r.C),
                            LLVMBFloatTypeInContext(r.C),
                            r.f32,
                            LLVMDoubleTypeInContext(r.C),
                            r.i32,
                            r.i32,
                            LLVMInt64TypeInContext(r.C),
                            LLVMInt64TypeInContext(r.C)};
      LLVMTypeRef ty = tys[dts[d]];
      LLVMTypeRef params[3] = {r.ptr1, r.ptr1, r.i32};
      r.fn = LLVMAddFunction(r.M, "k", LLVMFunctionType(LLVMVoidTypeInContext(r.C), params, 3, 0));
      LLVMPositionBuilderAtEnd(r.B, LLVMAppendBasicBlockInContext(r.C, r.fn, "entry"));
      LLVMValueRef tid = intrinsic(&r, "llvm.nvvm.read.ptx.sreg.tid.x", NULL, 0);
      LLVMValueRef x = LLVMBuildLoad2(r.B, ty, at(&r, ty, LLVMGetParam(r.fn, 0), tid), "");
      rj_emitter em;
      rj_emitter_init(&em, r.M, r.B);
      LLVMValueRef y = NULL;
      bool takes_arg = p <= RJ_PRIM_SHUFFLE_XOR;
      rj_status s = rj_emit_subgroup(&em, (rj_primitive)p, dts[d], 3, x,
                                     takes_arg ? LLVMGetParam(r.fn, 2) : NULL, &y);
      ck_assert_msg(s == RJ_OK, "primitive %d dtype %zu: %s", p, d, em.errmsg);
      LLVMBuildStore(r.B, y, at(&r, ty, LLVMGetParam(r.fn, 1), tid));
      LLVMBuildRetVoid(r.B);
      char *ir = module_text(&r);
      rj_kernel *k = NULL;
      rj_options o;
      rj_options_init(&o);
      o.target = "sm_90";
      s = rj_compile_ir(ctx, ir, 0, "k", &o, &k);
      ck_assert_msg(s == RJ_OK, "primitive %d dtype %zu: %s\n%s", p, d, rj_errmsg(ctx), ir);
      const char *ptx = rj_kernel_text(k, RJ_EMIT_PTX);
      int wide = dts[d] == RJ_F64 || dts[d] == RJ_I64 || dts[d] == RJ_U64;
      bool red = p >= RJ_PRIM_REDUCE_ADD && p <= RJ_PRIM_REDUCE_ALL_MAX;
      int want = p == RJ_PRIM_INVOCATION_ID ? 0
                 : red                      ? 3 * (wide && !(dts[d] <= RJ_BF16) ? 2 : 1)
                                            : (wide ? 2 : 1);
      ck_assert_msg(rjt_count(ptx, "shfl.sync") == want,
                    "primitive %d dtype %zu: %d shuffles, not %d", p, d,
                    rjt_count(ptx, "shfl.sync"), want);
      free(ir);
      rt_free(&r);
    }
  rj_ctx_free(ctx);
}
END_TEST

/* Errors name the argument; nothing is emitted into a wrong place. */
/* A register tile past 288 slots a thread (300 + 300 here) is emitted as loops over the
 * runtime's slot arrays: the module compiles, the warp's shuffles inside those loops. */
START_TEST(looped_local_tile) {
  rj_ctx *ctx = rj_ctx_new();
  rt r;
  LLVMValueRef tid = tile_kernel_begin(&r);
  LLVMValueRef src = LLVMBuildAlloca(r.B, LLVMArrayType2(r.f32, 300), "slots");
  LLVMValueRef dst = LLVMBuildAlloca(r.B, LLVMArrayType2(r.f32, 300), "out");
  loop l;
  loop_begin(&r, &l, ci(&r, 0), ci(&r, 300), ci(&r, 1));
  LLVMValueRef gi = LLVMBuildAdd(r.B, LLVMBuildMul(r.B, tid, ci(&r, 300), ""), l.i, "");
  LLVMBuildStore(r.B, LLVMBuildLoad2(r.B, r.f32, at(&r, r.f32, LLVMGetParam(r.fn, 0), gi), ""),
                 at(&r, r.f32, src, l.i));
  LLVMBuildStore(r.B, LLVMConstReal(r.f32, 0), at(&r, r.f32, dst, l.i));
  loop_end(&r, &l);
  const char *ptx = tile_kernel_ptx(
      ctx, &r,
      "{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"f32\",\"scope\":\"warp\",\"src\":"
      "{\"mem\":\"local\",\"shape\":[32,300],\"layout\":{\"shape\":[32,300],\"stride\":"
      "[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[300],\"layout\":{\"shape\":"
      "[300],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":[0],\"accum\":true}",
      src, dst, tid, 299);
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync"), 5); /* one butterfly, in the loop */
  ck_assert_ptr_nonnull(strstr(ptx, "__local_depot"));
  rt_free(&r);
  rj_ctx_free(ctx);
}
END_TEST

/* A fused map and epilogue (docs/TENSOR.md "Fused maps") through the embedding library: the
 * square at each slot before the fold, the square root before the store. */
START_TEST(mapped_local_tile) {
  rj_ctx *ctx = rj_ctx_new();
  rt r;
  LLVMValueRef tid = tile_kernel_begin(&r);
  LLVMValueRef src = LLVMBuildAlloca(r.B, LLVMArrayType2(r.f32, 4), "slots");
  LLVMValueRef dst = LLVMBuildAlloca(r.B, LLVMArrayType2(r.f32, 1), "out");
  for (int j = 0; j < 4; j++) {
    LLVMValueRef gi = LLVMBuildAdd(r.B, LLVMBuildMul(r.B, tid, ci(&r, 4), ""), ci(&r, j), "");
    LLVMBuildStore(r.B, LLVMBuildLoad2(r.B, r.f32, at(&r, r.f32, LLVMGetParam(r.fn, 0), gi), ""),
                   at(&r, r.f32, src, ci(&r, j)));
  }
  const char *ptx = tile_kernel_ptx(
      ctx, &r,
      "{\"kind\":\"tile\",\"op\":\"sum\",\"map\":\"square\",\"epilogue\":\"sqrt\",\"dtype\":"
      "\"f32\",\"scope\":\"warp\",\"src\":{\"mem\":\"local\",\"shape\":[32,4],\"layout\":{"
      "\"shape\":[32,4],\"stride\":[\"1@lane\",1]}},\"dst\":{\"mem\":\"local\",\"shape\":[1],"
      "\"layout\":{\"shape\":[1],\"stride\":[1],\"replicate\":[[32,\"1@lane\"]]}},\"axes\":"
      "[0,1]}",
      src, dst, tid, 0);
  ck_assert_int_ge(rjt_count(ptx, "mul.rn.f32"), 4); /* each slot squared */
  ck_assert_int_eq(rjt_count(ptx, "sqrt.rn.f32"), 1);
  ck_assert_int_eq(rjt_count(ptx, "shfl.sync"), 5);
  rt_free(&r);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(emitter_errors) {
  rj_ctx *ctx = rj_ctx_new();
  rt r;
  rt_init(&r, "m");
  rj_emitter em;
  LLVMValueRef out = NULL;
  rj_emitter_init(&em, r.M, r.B);
  /* the builder is not in a block yet */
  ck_assert_int_eq(rj_emit_subgroup(&em, RJ_PRIM_BROADCAST, RJ_F32, 0, NULL, NULL, &out),
                   RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(em.errmsg, "builder"));
  r.fn = LLVMAddFunction(r.M, "k", LLVMFunctionType(LLVMVoidTypeInContext(r.C), NULL, 0, 0));
  LLVMPositionBuilderAtEnd(r.B, LLVMAppendBasicBlockInContext(r.C, r.fn, "entry"));
  LLVMValueRef f = LLVMConstReal(r.f32, 1.0);
  ck_assert_int_eq(rj_emit_subgroup(&em, RJ_PRIM_REDUCE_ADD, RJ_F32, 6, f, NULL, &out), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(em.errmsg, "log2_size"));
  ck_assert_int_eq(rj_emit_subgroup(&em, RJ_PRIM_REDUCE_ADD, RJ_F64, 2, f, NULL, &out), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(em.errmsg, "value"));
  ck_assert_int_eq(rj_emit_subgroup(&em, RJ_PRIM_SHUFFLE_XOR, RJ_F32, 0, f, NULL, &out), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(em.errmsg, "arg"));
  ck_assert_int_eq(rj_emit_subgroup(&em, RJ_PRIM_INVOCATION_ID, RJ_F32, 0, NULL, NULL, &out),
                   RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(em.errmsg, "dtype"));
  ck_assert_int_eq(rj_emit_subgroup(&em, RJ_PRIM_INVOCATION_ID, RJ_I32, 0, NULL, NULL, &out),
                   RJ_OK);
  ck_assert_str_eq(em.errmsg, "");
  /* the caller's combine is linked only where a request is compiled: no emitter takes it */
  for (int p = RJ_PRIM_REDUCE_CUSTOM; p <= RJ_PRIM_REDUCE_ALL_CUSTOM; p++) {
    ck_assert_int_eq(rj_emit_subgroup(&em, (rj_primitive)p, RJ_F32, 5, f, NULL, &out), RJ_EINVAL);
    ck_assert_msg(strstr(em.errmsg, "calls the caller's combine") &&
                      strstr(em.errmsg, "primitive:"),
                  "%s", em.errmsg);
  }
  /* tiles: a subgroup request, a shared tile on a global pointer, a bad tid */
  rj_request req;
  rjt_parse(ctx, "{\"kind\":\"subgroup\",\"primitive\":\"broadcast\",\"dtype\":\"f32\"}", &req);
  LLVMValueRef p1 = LLVMConstNull(r.ptr1), p3 = LLVMConstNull(LLVMPointerTypeInContext(r.C, 3));
  ck_assert_int_eq(rj_emit_tile(&em, &req, p3, p3, LLVMConstInt(r.i32, 0, 0)), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(em.errmsg, "kind"));
  rjt_parse(ctx, TILE_REQ, &req);
  ck_assert_int_eq(rj_emit_tile(&em, &req, p1, p3, LLVMConstInt(r.i32, 0, 0)), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(em.errmsg, "src"));
  ck_assert_int_eq(rj_emit_tile(&em, &req, p3, p3, f), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(em.errmsg, "tid"));
  /* op custom: refused, as the subgroup primitives above */
  rjt_parse(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"custom\",\"dtype\":\"f32\",\"scope\":\"warp\","
      "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]},"
      "\"combine\":{\"ir\":\"x\",\"function\":\"f\",\"identity\":0}}",
      &req);
  ck_assert_int_eq(rj_emit_tile(&em, &req, p3, p3, LLVMConstInt(r.i32, 0, 0)), RJ_EINVAL);
  ck_assert_msg(strstr(em.errmsg, "op: \"custom\" calls the caller's combine"), "%s", em.errmsg);
  /* a warpgroup tile takes a free named barrier the caller did not reserve */
  rjt_parse(
      ctx,
      "{\"kind\":\"tile\",\"op\":\"max\",\"dtype\":\"f32\",\"scope\":\"warpgroup\",\"threads\":256,\"active\":{\"warpgroup\":0},"
      "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
      &req);
  em.barriers_used = 0x7; /* ids 0, 1, 2 are the runtime's */
  ck_assert_int_eq(rj_emit_tile(&em, &req, p3, p3, LLVMConstInt(r.i32, 0, 0)), RJ_OK);
  ck_assert_uint_eq(em.barriers_used, 0xf);
  em.barriers_used = 0xffff;
  ck_assert_int_eq(rj_emit_tile(&em, &req, p3, p3, LLVMConstInt(r.i32, 0, 0)), RJ_EUNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(em.errmsg, "named barriers"));
  /* rj_compile_ir: junk text, a missing entry */
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile_ir(ctx, "this is not IR", 0, "k", NULL, &k), RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "ir:"));
  ck_assert_int_eq(rj_compile_ir(ctx, "define void @k() { ret void }", 0, "nope", NULL, &k),
                   RJ_EINVAL);
  ck_assert_ptr_nonnull(strstr(rj_errmsg(ctx), "entry"));
  rt_free(&r);
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("embed");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, runtime_kernel);
  tcase_add_test(tc, every_primitive_compiles);
  tcase_add_test(tc, looped_local_tile);
  tcase_add_test(tc, mapped_local_tile);
  tcase_add_test(tc, emitter_errors);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
