/* state_gen: builds passes/state.c's identities, element states, combines and results for the
 * host (x86, no GPU) into an LLVM IR file, one set of functions per op x dtype x nan policy:
 *   id_OP_DT_N(S *out)  elem_OP_DT_N(double x, i64 idx, S *out)  comb_OP_DT_N(S *a, S *b, S *out)
 *   fin_OP_DT_N(S *s) -> double  tfold_OP_DT_N(double *x, i8 *skip, i64 n, i64 base, S *out)
 *   rfold_OP_DT_N(as tfold)
 * (OP: argmax argmin var std lse, DT: f16 f32 f64 i32, N: 0 propagate, 1 ignore; var / std with
 * correction 1, and var_c3 with correction 3).  tests/ops/state_host/run.sh compiles it with llc
 * and runs check.c over it.
 *   state_gen OUT.ll */
#include "../../../passes/state.h"
#include <stdio.h>
#include <string.h>
static pass_emit E;
static LLVMValueRef begin(const char *name, LLVMTypeRef ret, LLVMTypeRef *p, int n) {
  LLVMValueRef f = LLVMAddFunction(E.M, name, LLVMFunctionType(ret, p, (unsigned)n, 0));
  E.fn = f;
  LLVMPositionBuilderAtEnd(E.B, LLVMAppendBasicBlockInContext(E.C, f, "e"));
  return f;
}
/* The GPU's approximate instructions (llvm.nvvm.*: ex2.approx, rcp.approx) have no x86 lowering:
 * their calls go to host_NAME (dots as underscores), which check.c defines with their error. */
static void host_intrinsics(void) {
  for (LLVMValueRef f = LLVMGetFirstFunction(E.M); f;) {
    LLVMValueRef next = LLVMGetNextFunction(f);
    size_t len = 0;
    const char *name = LLVMGetValueName2(f, &len);
    if (len > 10 && strncmp(name, "llvm.nvvm.", 10) == 0) {
      char host[96] = "host_";
      snprintf(host + 5, sizeof host - 5, "%s", name + 10);
      for (char *c = host; *c; c++)
        if (*c == '.') *c = '_';
      LLVMValueRef h = LLVMAddFunction(E.M, host, LLVMGlobalGetValueType(f));
      LLVMReplaceAllUsesWith(f, h);
      LLVMDeleteFunction(f);
    }
    f = next;
  }
}
/* Slots (st_slot_*): tfold_OP_DT_N(double *x, i8 *skip, i64 n, i64 base, S *out) folds x[0 .. n)
 * (indices base + i) in order into two slots from their identity, even indices into one and odd
 * into the other (as a vector's lanes), with ok false where skip[i] is set, and stores
 * st_slot_state of their st_slot_combine. */
static void build_tfold(const char *name, const st_req *t, int d) {
  LLVMTypeRef ptr = LLVMPointerTypeInContext(E.C, 0), i64 = LLVMInt64TypeInContext(E.C);
  LLVMTypeRef dbl = LLVMDoubleTypeInContext(E.C), i8 = LLVMInt8TypeInContext(E.C);
  LLVMTypeRef p[5] = {ptr, ptr, i64, i64, ptr};
  LLVMValueRef f = begin(name, LLVMVoidTypeInContext(E.C), p, 5);
  LLVMTypeRef sty = st_slot_type(&E, t);
  LLVMValueRef sl[2] = {LLVMBuildAlloca(E.B, sty, "s0"), LLVMBuildAlloca(E.B, sty, "s1")};
  LLVMValueRef i = LLVMBuildAlloca(E.B, i64, "i");
  LLVMBuildStore(E.B, st_slot_identity(&E, t), sl[0]);
  LLVMBuildStore(E.B, st_slot_identity(&E, t), sl[1]);
  LLVMBuildStore(E.B, LLVMConstInt(i64, 0, 0), i);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(E.C, f, "head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(E.C, f, "body");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(E.C, f, "done");
  LLVMBuildBr(E.B, head);
  LLVMPositionBuilderAtEnd(E.B, head);
  LLVMValueRef iv = LLVMBuildLoad2(E.B, i64, i, "");
  LLVMBuildCondBr(E.B, LLVMBuildICmp(E.B, LLVMIntSLT, iv, LLVMGetParam(f, 2), ""), body, done);
  LLVMPositionBuilderAtEnd(E.B, body);
  LLVMValueRef x =
      LLVMBuildLoad2(E.B, dbl, LLVMBuildGEP2(E.B, dbl, LLVMGetParam(f, 0), &iv, 1, ""), "");
  LLVMTypeRef acc = pass_acc_type(&E, t->dtype);
  x = d == 3 ? LLVMBuildFPToSI(E.B, x, acc, "") : d == 2 ? x : LLVMBuildFPTrunc(E.B, x, acc, "");
  LLVMValueRef sk =
      LLVMBuildLoad2(E.B, i8, LLVMBuildGEP2(E.B, i8, LLVMGetParam(f, 1), &iv, 1, ""), "");
  LLVMValueRef ok = LLVMBuildICmp(E.B, LLVMIntEQ, sk, LLVMConstInt(i8, 0, 0), "");
  LLVMValueRef odd = LLVMBuildTrunc(E.B, iv, LLVMInt1TypeInContext(E.C), "");
  LLVMValueRef slot = LLVMBuildSelect(E.B, odd, sl[1], sl[0], "");
  LLVMValueRef s = LLVMBuildLoad2(E.B, sty, slot, "");
  LLVMValueRef ix = LLVMBuildAdd(E.B, LLVMGetParam(f, 3), iv, "");
  LLVMBuildStore(E.B, st_slot_fold(&E, t, s, x, ix, ok), slot);
  LLVMBuildStore(E.B, LLVMBuildAdd(E.B, iv, LLVMConstInt(i64, 1, 0), ""), i);
  LLVMBuildBr(E.B, head);
  LLVMPositionBuilderAtEnd(E.B, done);
  LLVMValueRef a = LLVMBuildLoad2(E.B, sty, sl[0], ""), b = LLVMBuildLoad2(E.B, sty, sl[1], "");
  LLVMBuildStore(E.B, st_slot_state(&E, t, st_slot_combine(&E, t, a, b)), LLVMGetParam(f, 4));
  LLVMBuildRetVoid(E.B);
}
/* rfold_OP_DT_N(same arguments): x[0 .. n) in rounds of 4 into one slot (st_slot_fold_round; the
 * last round's missing elements re-read x[n - 1] with ok false), then st_slot_state. */
static void build_rfold(const char *name, const st_req *t, int d) {
  LLVMTypeRef ptr = LLVMPointerTypeInContext(E.C, 0), i64 = LLVMInt64TypeInContext(E.C);
  LLVMTypeRef dbl = LLVMDoubleTypeInContext(E.C), i8 = LLVMInt8TypeInContext(E.C);
  LLVMTypeRef p[5] = {ptr, ptr, i64, i64, ptr};
  LLVMValueRef f = begin(name, LLVMVoidTypeInContext(E.C), p, 5);
  LLVMTypeRef sty = st_slot_type(&E, t), acc = pass_acc_type(&E, t->dtype);
  LLVMValueRef slot = LLVMBuildAlloca(E.B, sty, "s"), i = LLVMBuildAlloca(E.B, i64, "i");
  LLVMValueRef n = LLVMGetParam(f, 2), last = LLVMBuildSub(E.B, n, LLVMConstInt(i64, 1, 0), "");
  LLVMBuildStore(E.B, st_slot_identity(&E, t), slot);
  LLVMBuildStore(E.B, LLVMConstInt(i64, 0, 0), i);
  LLVMBasicBlockRef head = LLVMAppendBasicBlockInContext(E.C, f, "head");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(E.C, f, "body");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(E.C, f, "done");
  LLVMBuildBr(E.B, head);
  LLVMPositionBuilderAtEnd(E.B, head);
  LLVMValueRef iv = LLVMBuildLoad2(E.B, i64, i, "");
  LLVMBuildCondBr(E.B, LLVMBuildICmp(E.B, LLVMIntSLT, iv, n, ""), body, done);
  LLVMPositionBuilderAtEnd(E.B, body);
  LLVMValueRef xs[4], ix[4], ok[4];
  for (int j = 0; j < 4; j++) {
    LLVMValueRef k = LLVMBuildAdd(E.B, iv, LLVMConstInt(i64, (unsigned)j, 0), "");
    LLVMValueRef in = LLVMBuildICmp(E.B, LLVMIntSLT, k, n, "");
    LLVMValueRef kc = LLVMBuildSelect(E.B, in, k, last, "");
    LLVMValueRef x =
        LLVMBuildLoad2(E.B, dbl, LLVMBuildGEP2(E.B, dbl, LLVMGetParam(f, 0), &kc, 1, ""), "");
    xs[j] = d == 3   ? LLVMBuildFPToSI(E.B, x, acc, "")
            : d == 2 ? x
                     : LLVMBuildFPTrunc(E.B, x, acc, "");
    LLVMValueRef sk =
        LLVMBuildLoad2(E.B, i8, LLVMBuildGEP2(E.B, i8, LLVMGetParam(f, 1), &kc, 1, ""), "");
    ok[j] =
        LLVMBuildAnd(E.B, in, LLVMBuildICmp(E.B, LLVMIntEQ, sk, LLVMConstInt(i8, 0, 0), ""), "");
    ix[j] = LLVMBuildAdd(E.B, LLVMGetParam(f, 3), k, "");
  }
  LLVMValueRef s = LLVMBuildLoad2(E.B, sty, slot, "");
  LLVMBuildStore(E.B, st_slot_fold_round(&E, t, s, xs, st_indexed(t->op) ? ix : NULL, ok, 4), slot);
  LLVMBuildStore(E.B, LLVMBuildAdd(E.B, iv, LLVMConstInt(i64, 4, 0), ""), i);
  LLVMBuildBr(E.B, head);
  LLVMPositionBuilderAtEnd(E.B, done);
  LLVMBuildStore(E.B, st_slot_state(&E, t, LLVMBuildLoad2(E.B, sty, slot, "")), LLVMGetParam(f, 4));
  LLVMBuildRetVoid(E.B);
}
int main(int argc, char **argv) {
  if (argc != 2) return 2;
  E.C = LLVMContextCreate();
  E.M = LLVMModuleCreateWithNameInContext("m", E.C);
  E.B = LLVMCreateBuilderInContext(E.C);
  LLVMTypeRef ptr = LLVMPointerTypeInContext(E.C, 0), vd = LLVMVoidTypeInContext(E.C);
  LLVMTypeRef i64 = LLVMInt64TypeInContext(E.C), dbl = LLVMDoubleTypeInContext(E.C);
  const char *on[] = {"argmax", "argmin", "var", "std", "lse", "var_c3"};
  rj_op ops[] = {RJ_OP_ARGMAX, RJ_OP_ARGMIN, RJ_OP_VAR, RJ_OP_STD, RJ_OP_LOGSUMEXP, RJ_OP_VAR};
  const char *dn[] = {"f16", "f32", "f64", "i32"};
  rj_dtype dts[] = {RJ_F16, RJ_F32, RJ_F64, RJ_I32};
  for (int o = 0; o < 6; o++)
    for (int d = 0; d < 4; d++)
      for (int nan = 0; nan < 2; nan++) {
        if (d == 3 && o >= 2) continue;
        st_req t = {.op = ops[o],
                    .dtype = dts[d],
                    .nan = nan ? RJ_NAN_IGNORE : RJ_NAN_PROPAGATE,
                    .correction = o == 5 ? 3 : 1};
        LLVMTypeRef st = st_type(&E, &t);
        char nm[64];
        LLVMTypeRef p3[3] = {ptr, ptr, ptr};
        snprintf(nm, sizeof nm, "comb_%s_%s_%d", on[o], dn[d], nan);
        LLVMValueRef f = begin(nm, vd, p3, 3);
        LLVMValueRef a = LLVMBuildLoad2(E.B, st, LLVMGetParam(f, 0), "");
        LLVMValueRef b = LLVMBuildLoad2(E.B, st, LLVMGetParam(f, 1), "");
        LLVMBuildStore(E.B, st_combine(&E, &t, a, b), LLVMGetParam(f, 2));
        LLVMBuildRetVoid(E.B);
        LLVMTypeRef pe[3] = {dbl, i64, ptr};
        snprintf(nm, sizeof nm, "elem_%s_%s_%d", on[o], dn[d], nan);
        f = begin(nm, vd, pe, 3);
        LLVMValueRef x = LLVMGetParam(f, 0);
        LLVMTypeRef acc = pass_acc_type(&E, t.dtype);
        x = d == 3   ? LLVMBuildFPToSI(E.B, x, acc, "")
            : d == 2 ? x
                     : LLVMBuildFPTrunc(E.B, x, acc, "");
        LLVMBuildStore(E.B, st_elem(&E, &t, x, st_indexed(t.op) ? LLVMGetParam(f, 1) : NULL),
                       LLVMGetParam(f, 2));
        LLVMBuildRetVoid(E.B);
        LLVMTypeRef p1[1] = {ptr};
        snprintf(nm, sizeof nm, "id_%s_%s_%d", on[o], dn[d], nan);
        f = begin(nm, vd, p1, 1);
        LLVMBuildStore(E.B, st_identity(&E, &t), LLVMGetParam(f, 0));
        LLVMBuildRetVoid(E.B);
        snprintf(nm, sizeof nm, "fin_%s_%s_%d", on[o], dn[d], nan);
        f = begin(nm, dbl, p1, 1);
        LLVMValueRef s = LLVMBuildLoad2(E.B, st, LLVMGetParam(f, 0), "");
        LLVMValueRef r = st_finish(&E, &t, s);
        if (st_indexed(t.op))
          r = LLVMBuildSIToFP(E.B, r, dbl, "");
        else if (d != 2)
          r = LLVMBuildFPExt(E.B, r, dbl, "");
        LLVMBuildRet(E.B, r);
        snprintf(nm, sizeof nm, "tfold_%s_%s_%d", on[o], dn[d], nan);
        build_tfold(nm, &t, d);
        snprintf(nm, sizeof nm, "rfold_%s_%s_%d", on[o], dn[d], nan);
        build_rfold(nm, &t, d);
      }
  host_intrinsics();
  char *err = NULL;
  int rc = LLVMPrintModuleToFile(E.M, argv[1], &err);
  if (rc) fprintf(stderr, "state_gen: %s\n", err);
  LLVMDisposeMessage(err);
  LLVMDisposeBuilder(E.B);
  LLVMDisposeModule(E.M);
  LLVMContextDispose(E.C);
  return rc ? 1 : 0;
}
