/* The optimisation pipeline after lowering: LLVM's O3 through the new pass manager, with the
 * target machine so that NVPTX's own passes and cost model take part. */
#include "passes.h"

#include <llvm-c/Error.h>
#include <llvm-c/Transforms/PassBuilder.h>

rj_status pass_optimize(LLVMModuleRef M, LLVMTargetMachineRef tm, ir_err *e) {
  LLVMPassBuilderOptionsRef o = LLVMCreatePassBuilderOptions();
  LLVMErrorRef err = LLVMRunPasses(M, "default<O3>", tm, o);
  LLVMDisposePassBuilderOptions(o);
  if (err) {
    char *m = LLVMGetErrorMessage(err);
    ir_fail(e, RJ_ELLVM, "internal: LLVM optimisation failed: %s", m);
    LLVMDisposeErrorMessage(m);
    return RJ_ELLVM;
  }
  return RJ_OK;
}
