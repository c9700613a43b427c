/* The NVPTX code generation driver kept across compiles (the compiler library).
 *
 * LLVMTargetMachineEmitToMemoryBuffer builds NVPTX's codegen pass pipeline (addPassesToEmitFile:
 * about a hundred legacy passes) for every module and tears it down after it, a quarter of a small
 * kernel's compile.  An emitter builds that pipeline once per target machine and runs it on each
 * module in turn, writing into one reused buffer; it is used by the target machine's context only
 * (one rj_ctx is used by one thread at a time), so it needs no lock.
 *
 * The legacy pass manager and the AsmPrinter are made to run on one module after another
 * (doInitialization / doFinalization reset the streamer, the MCContext and the machine module
 * info), with one exception in LLVM 22's NVPTX printer: NVPTXAsmPrinter::localDecls, the shared
 * variables it demotes into the function that alone uses them, is a map keyed by Function* that is
 * filled while printing and never cleared.  A later module whose function lands at a freed
 * function's address would print the old module's (freed) variables.  So a module with a global
 * the printer may demote (local linkage, shared address space) is never given to a kept pipeline:
 * jit_emitter_run answers 1 and the caller emits it through a fresh one.  No entry is ever added
 * to that map in a kept pipeline.  A module with debug info (only a caller's IR may have it) goes
 * through a fresh one too: the DWARF printer and NVPTX's target streamer keep state of their own
 * (NVPTXTargetStreamer's open-section flag is never reset), which redjit's kernels never reach. */
#include "llvm-c/TargetMachine.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace {

constexpr unsigned kSharedAddressSpace = 3; /* NVPTX's shared memory */

struct Emitter {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream out{buffer};
  llvm::legacy::PassManager passes;
};

/* Whether M must go through a fresh pipeline (see above): NVPTXAsmPrinter could demote one of
 * its globals into a function, or it carries debug info. */
bool fresh_only(const llvm::Module &M) {
  if (!M.debug_compile_units().empty()) return true;
  for (const llvm::GlobalVariable &g : M.globals())
    if (g.hasLocalLinkage() && g.getAddressSpace() == kSharedAddressSpace) return true;
  return false;
}

} // namespace

extern "C" {

/* An emitter of tm's PTX, NULL if one cannot be made (the caller emits each module afresh). */
void *jit_emitter_new(LLVMTargetMachineRef tm) {
  auto *e = new (std::nothrow) Emitter;
  if (!e) return nullptr;
  auto *machine = reinterpret_cast<llvm::TargetMachine *>(tm);
  if (machine->addPassesToEmitFile(e->passes, e->out, nullptr,
                                   llvm::CodeGenFileType::AssemblyFile)) {
    delete e;
    return nullptr;
  }
  return e;
}

void jit_emitter_free(void *emitter) {
  delete static_cast<Emitter *>(emitter);
}

/* Emits M's PTX into *ptx (malloc'ed, NUL-terminated): 0 done, 1 M is not for a kept pipeline
 * (nothing was run), -1 out of memory.  M's data layout is already tm's. */
int jit_emitter_run(void *emitter, LLVMModuleRef module, char **ptx) {
  auto *e = static_cast<Emitter *>(emitter);
  llvm::Module &M = *llvm::unwrap(module);
  if (fresh_only(M)) return 1;
  e->buffer.clear();
  e->passes.run(M);
  size_t n = e->buffer.size();
  *ptx = static_cast<char *>(std::malloc(n + 1));
  if (!*ptx) return -1;
  std::memcpy(*ptx, e->buffer.data(), n);
  (*ptx)[n] = 0;
  return 0;
}

} // extern "C"
