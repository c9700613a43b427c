/* state_gen: builds passes/state.c's identities, element states, combines and results for the
 * host (x86, no GPU) into an LLVM IR file, one set of functions per op x dtype x nan policy:
 *   id_OP_DT_N(S *out)  elem_OP_DT_N(double x, i64 idx, S *out)  comb_OP_DT_N(S *a, S *b, S *out)
 *   fin_OP_DT_N(S *s) -> double
 * (OP: argmax argmin var std lse, DT: f16 f32 f64 i32, N: 0 propagate, 1 ignore; var / std with
 * correction 1, and var_c3 with correction 3).  tests/state_host/run.sh compiles it with llc and
 * runs check.c over it.
 *   state_gen OUT.ll */
#include "../../passes/state.h"
#include <stdio.h>
#include <string.h>
static pass_emit E;
static LLVMValueRef begin(const char *name, LLVMTypeRef ret, LLVMTypeRef *p, int n) {
  LLVMValueRef f = LLVMAddFunction(E.M, name, LLVMFunctionType(ret, p, (unsigned)n, 0));
  E.fn = f;
  LLVMPositionBuilderAtEnd(E.B, LLVMAppendBasicBlockInContext(E.C, f, "e"));
  return f;
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
        rj_tensor t = {.op = ops[o],
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
      }
  char *err = NULL;
  int rc = LLVMPrintModuleToFile(E.M, argv[1], &err);
  if (rc) fprintf(stderr, "state_gen: %s\n", err);
  LLVMDisposeMessage(err);
  LLVMDisposeBuilder(E.B);
  LLVMDisposeModule(E.M);
  LLVMContextDispose(E.C);
  return rc ? 1 : 0;
}
