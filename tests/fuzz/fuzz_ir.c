/* libFuzzer target: any bytes as a caller's module through rj_compile_ir, compiled in this process
 * (rj_options.ir_in_process: the code redjit-irc runs) so that a million runs fit in minutes:
 * the argument checks, the target and PTX version, the cache, parsing, the entry, intrinsic and
 * type screening, verification, O3 and NVPTX codegen.  redjit's sources are built with
 * AddressSanitizer, UndefinedBehaviorSanitizer and coverage; LLVM is linked as installed.
 *
 * Properties: nothing in redjit crashes, leaks or misbehaves; every refusal has a message; an
 * accepted module has PTX with an entry and its kernel names it; the same module again is the
 * cached kernel.  LLVM's own fatal errors and crashes are what rj_compile_ir's compiler process
 * contains: this target's fatal-error handler names them ("inside LLVM") before LLVM ends the
 * process, and scripts/fuzz.sh runs each such input again through the isolated path, which must
 * give a status.  With FUZZ_IR_ISOLATED=1 the target runs every input that way (the compiler
 * process is $REDJIT_IRC); with FUZZ_IR_VERBOSE=1 it prints each input's status.  Built and run
 * by scripts/fuzz.sh (target "ir"). */
#include "redjit.h"

#include <llvm-c/ErrorHandling.h>
#include <stdbool.h>
#include "plant.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rj_ctx *ctx;
static int runs_on_ctx;
static int isolated, verbose;

static void finding(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_ir: %s: %s\n", what, detail);
  abort();
}

/* report_fatal_error: LLVM calls this, then ends the process (what isolation is for). */
static void on_llvm_fatal(const char *reason) {
  fprintf(stderr,
          "fuzz_ir: LLVM fatal error inside LLVM (rj_compile_ir's compiler process "
          "contains it): %s\n",
          reason);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  setenv("REDJIT_CACHE_DISABLE", "1", 1); /* no disk: each run is its own */
  isolated = getenv("FUZZ_IR_ISOLATED") && strcmp(getenv("FUZZ_IR_ISOLATED"), "1") == 0;
  verbose = isolated || (getenv("FUZZ_IR_VERBOSE") && strcmp(getenv("FUZZ_IR_VERBOSE"), "1") == 0);
  LLVMInstallFatalErrorHandler(on_llvm_fatal);
  return 0;
}

/* The kernel: the first void function the text defines (else the first one, else "k"). */
static void entry_of(const char *text, char *out, size_t n) {
  snprintf(out, n, "k");
  bool first = true;
  for (const char *d = strstr(text, "define "); d; d = strstr(d + 7, "define ")) {
    const char *at = strchr(d, '@'), *nl = strchr(d, '\n');
    if (!at || (nl && nl < at)) continue;
    size_t len = strcspn(at + 1, "(\n \t");
    if (len == 0 || len >= n) continue;
    bool is_void = false;
    for (const char *v = strstr(d, "void"); v && v < at && !is_void; v = strstr(v + 4, "void"))
      is_void = true;
    if (first || is_void) snprintf(out, n, "%.*s", (int)len, at + 1);
    first = false;
    if (is_void) return;
  }
}

/* ---------------------------------------------------------------- the mutator */

/* Words of one kind.  Byte mutations mostly break the parse, and LLVM (not instrumented) gives
 * the fuzzer no coverage to climb back with; a module with one word swapped for another of its
 * kind (all its occurrences, or one) parses more often than not, so more runs reach verification,
 * screening, O3 and codegen. */
static const char *const kinds[][21] = {
    {"i1", "i8", "i16", "i32", "i64", "i128", "i256"},
    {"half", "bfloat", "float", "double", "fp128"},
    {"add", "sub", "mul", "sdiv", "udiv", "srem", "urem", "shl", "lshr", "ashr", "and", "or",
     "xor"},
    {"fadd", "fsub", "fmul", "fdiv", "frem"},
    {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"},
    {"oeq", "one", "olt", "ole", "ogt", "oge", "ord", "uno", "ueq", "une"},
    {"trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp",
     "bitcast"},
    {"monotonic", "acquire", "release", "acq_rel", "seq_cst", "unordered"},
    {"sqrt",      "fabs",   "floor",   "ceil",    "rint",  "nearbyint", "round",
     "roundeven", "sin",    "cos",     "exp",     "exp2",  "log",       "log2",
     "minnum",    "maxnum", "minimum", "maximum", "ctpop", "ctlz"},
    {"load", "store", "atomicrmw", "cmpxchg", "fence"},
    {"internal", "private", "external", "weak", "linkonce_odr", "common"},
    {"0", "1", "2", "3", "4", "5", "7", "8", "16", "31", "32", "64", "255", "1024", "65536"},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

static bool word_char(uint8_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The word of data[at ..) (at a word's start), with the index of its kind and of itself there. */
static bool known_word(const uint8_t *data, size_t size, size_t at, size_t *len, int *kind,
                       int *idx) {
  size_t n = 0;
  while (at + n < size && word_char(data[at + n]))
    n++;
  *len = n;
  for (int k = 0; k < (int)NKINDS; k++)
    for (int i = 0; i < 21 && kinds[k][i]; i++)
      if (strlen(kinds[k][i]) == n && memcmp(kinds[k][i], data + at, n) == 0) {
        *kind = k, *idx = i;
        return true;
      }
  return false;
}

/* Replaces the word w (whole words only) at `at`, or everywhere when at is SIZE_MAX, by r. */
static size_t replace(uint8_t *data, size_t size, size_t max, const char *w, const char *r,
                      size_t at) {
  size_t wl = strlen(w), rl = strlen(r), o = 0;
  uint8_t *out = malloc(max);
  if (!out) return size;
  for (size_t i = 0; i < size;) {
    bool hit = (at == SIZE_MAX || i == at) && i + wl <= size && memcmp(data + i, w, wl) == 0 &&
               (i == 0 || !word_char(data[i - 1])) && (i + wl == size || !word_char(data[i + wl]));
    if (hit && o + rl <= max) {
      memcpy(out + o, r, rl), o += rl, i += wl;
    } else if (o < max) {
      out[o++] = data[i++];
    } else {
      break;
    }
  }
  memcpy(data, out, o);
  free(out);
  return o;
}

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed) {
  uint32_t r = seed * 2654435761u + 1;
  if (size == 0 || r % 3 == 0) return LLVMFuzzerMutate(data, size, max);
  for (int tries = 0; tries < 16; tries++) {
    r = r * 1664525u + 1013904223u;
    size_t at = (r >> 8) % size;
    while (at < size && word_char(data[at])) /* to the end of the word it falls in */
      at++;
    while (at < size && !word_char(data[at])) /* to the next word */
      at++;
    size_t len;
    int k, i;
    if (at >= size || !known_word(data, size, at, &len, &k, &i)) continue;
    int n = 0;
    while (n < 21 && kinds[k][n])
      n++;
    int j = (int)((r >> 4) % (uint32_t)(n - 1));
    const char *to = kinds[k][j >= i ? j + 1 : j];
    return replace(data, size, max, kinds[k][i], to, (r >> 2) % 2 ? SIZE_MAX : at);
  }
  return LLVMFuzzerMutate(data, size, max);
}

static const char *const targets[] = {"sm_90", "sm_80", "sm_86", "sm_100a", "sm_90a", "sm_120"};

static void check_kernel(const rj_kernel *k, const char *entry, const char *ir, size_t n,
                         const rj_options *o) {
  const char *text = n ? "(bytes)" : ir;
  const char *ptx = rj_kernel_text(k, RJ_EMIT_PTX);
  if (!ptx || !strstr(ptx, ".entry") || !strstr(ptx, ".version"))
    finding("an accepted module's PTX has no entry", text);
  if (!rj_kernel_text(k, RJ_EMIT_LLVM) || !rj_kernel_text(k, RJ_EMIT_LLVM_OPT))
    finding("an accepted module's kernel has no IR text", text);
  if (strcmp(rj_kernel_entry(k), entry) != 0) finding("the kernel names another entry", entry);
  long long before = rj_ctx_compile_count(ctx);
  rj_kernel *again = NULL;
  if (rj_compile_ir(ctx, ir, n, entry, o, &again) != RJ_OK || again != k ||
      rj_ctx_compile_count(ctx) != before)
    finding("the same module again is not the cached kernel", rj_errmsg(ctx));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_plant();
  if (!ctx && !(ctx = rj_ctx_new())) return 0;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  char entry[80];
  entry_of(text, entry, sizeof entry);
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; i++)
    h = (h ^ data[i]) * 16777619u;
  rj_options o;
  rj_options_init(&o);
  o.target = targets[h % (sizeof targets / sizeof targets[0])];
  o.ir_in_process = !isolated;
  /* the text up to its first NUL, or all of the bytes (bitcode): both are what callers pass */
  size_t n = (h >> 8) % 2 ? size : 0;
  rj_kernel *k = NULL;
  const char *ir = n ? (const char *)data : text;
  rj_status s = rj_compile_ir(ctx, ir, n, entry, &o, &k);
  if (verbose)
    fprintf(stderr, "fuzz_ir: %s: %s: %.200s\n", isolated ? "isolated" : "in process",
            rj_status_name(s), rj_errmsg(ctx));
  if (s != RJ_OK && !rj_errmsg(ctx)[0]) finding("a refusal without a message", text);
  if (s == RJ_EBUSY || (!isolated && s == RJ_ECRASH) || !strcmp(rj_status_name(s), "RJ_E?"))
    finding("a status rj_compile_ir does not give here", rj_status_name(s));
  if (s == RJ_OK) check_kernel(k, entry, ir, n, &o);
  /* a fresh context now and then: each one keeps every kernel and LLVM's uniqued constants */
  if (s == RJ_OK || ++runs_on_ctx >= 512) {
    rj_ctx_free(ctx);
    ctx = NULL;
    runs_on_ctx = 0;
  }
  free(text);
  return 0;
}
