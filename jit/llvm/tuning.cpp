/* LLVM options the compiler library sets once, before its first compile.  They are options of
 * its own static copy of LLVM (symbols hidden), so no other LLVM in the process sees them.  Each
 * is set through LLVM's option registry: a bad value would be a line on stderr, never an exit
 * as in LLVMParseCommandLineOptions, and an option this LLVM lacks is skipped (the setting is
 * then LLVM's default; the PTX corpus shows any change it makes).
 *
 * slp-schedule-budget 3000 (LLVM's default: 100000): the SLP vectorizer's scheduling region per
 * block.  The unrolled blocks of the largest kernels (segmented state ops on sm_100 and later,
 * whose cost model offers f32x2) spent most of their O3 there: the slowest request of the PTX
 * corpus compiles in 362 ms instead of 503, and every request of the corpus keeps the same
 * output, PTX or refusal (docs/PERFORMANCE.md, "Cache misses per stage"). */
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/CommandLine.h"

namespace {

void set_option(const char *name, const char *value) {
  auto &opts = llvm::cl::getRegisteredOptions();
  auto it = opts.find(name);
  if (it != opts.end()) (void)it->second->addOccurrence(0, name, value);
}

} // namespace

extern "C" void jit_llvm_tune(void) {
  set_option("slp-schedule-budget", "3000");
}
