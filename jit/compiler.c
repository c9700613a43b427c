/* Loading the compiler library (jit/compiler.h) on the first miss: $REDJIT_COMPILER_LIB, else
 * libredjit-llvm.so.VERSION beside libredjit.so (its own path, by dladdr), dlopen'ed RTLD_LOCAL
 * (LLVM inside it stays hidden: another LLVM in the process, llvmlite's say, is not disturbed).
 * libredjit.so was built with one build of it (REDJIT_COMPILER_ID, its GNU build id) and loads
 * that one only.  A library that is missing, has no entry, or is another version or build is a
 * status and a message on every compile that needs it, never a crash; cache hits never ask. */
#include "compiler.h"
#ifdef REDJIT_COMPILER_STATIC
/* One binary that holds the compiler library's code too (the caller-IR fuzzer, scripts/fuzz.sh):
 * its entry is called directly, nothing is loaded. */
const jit_compiler *rj_compiler_v1(void);
#define REDJIT_COMPILER_ID "static"
#else
#include "rj_compiler_id.h"
#endif

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef REDJIT_COMPILER_NAME
#define REDJIT_COMPILER_NAME "libredjit-llvm.so"
#endif

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const jit_compiler *compiler; /* NULL: not loadable, `why` says why */
static char why[PATH_MAX + 512];

/* The compiler library's path into path (n >= PATH_MAX); false when libredjit.so's own path is
 * unknown and the environment names none. */
static bool compiler_path(char *path, size_t n) {
  const char *env = getenv("REDJIT_COMPILER_LIB");
  if (env && *env) return snprintf(path, n, "%s", env) < (int)n;
  Dl_info di;
  char lib[PATH_MAX];
  if (!dladdr((void *)compiler_path, &di) || !di.dli_fname || !realpath(di.dli_fname, lib))
    return false;
  char *slash = strrchr(lib, '/');
  if (!slash) return false;
  *slash = 0;
  return snprintf(path, n, "%s/%s", lib, REDJIT_COMPILER_NAME) < (int)n;
}

/* NULL when c is this library's compiler, else what differs (written into buf). */
static const char *mismatch(const jit_compiler *c, char *buf, size_t n) {
  if (!c) return "its entry returned no table";
  if (c->abi != JIT_COMPILER_ABI || c->major != RJ_VERSION_MAJOR || c->minor != RJ_VERSION_MINOR ||
      c->patch != RJ_VERSION_PATCH) {
    snprintf(buf, n, "it is redjit %d.%d.%d (compiler ABI %d), this libredjit.so %d.%d.%d (ABI %d)",
             c->major, c->minor, c->patch, c->abi, RJ_VERSION_MAJOR, RJ_VERSION_MINOR,
             RJ_VERSION_PATCH, JIT_COMPILER_ABI);
    return buf;
  }
  if (c->ctx_size != sizeof(rj_ctx) || c->kernel_size != sizeof(rj_kernel) ||
      c->request_size != sizeof(rj_request) || c->plan_size != sizeof(pass_plan) ||
      c->target_size != sizeof(ir_target))
    return "it was built from another source tree (its data layouts differ)";
  return NULL;
}

/* The GNU build id (hex) of the loaded object that holds address `at`. */
typedef struct build_id {
  const void *at;
  char hex[128];
} build_id;

static void note_id(const char *p, size_t n, char *hex, size_t hn) {
  for (size_t off = 0; off + sizeof(ElfW(Nhdr)) <= n;) {
    const ElfW(Nhdr) *h = (const void *)(p + off);
    size_t name = (h->n_namesz + 3) & ~(size_t)3, desc = (h->n_descsz + 3) & ~(size_t)3;
    const unsigned char *d = (const unsigned char *)(h + 1) + name;
    if (h->n_type == NT_GNU_BUILD_ID && h->n_namesz == 4 && memcmp(h + 1, "GNU", 4) == 0)
      for (size_t i = 0; i < h->n_descsz && 2 * i + 2 < hn; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    off += sizeof *h + name + desc;
  }
}

static int find_id(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  build_id *b = data;
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, at = (uintptr_t)b->at;
    holds |= ph->p_type == PT_LOAD && at >= lo && at < lo + ph->p_memsz;
  }
  for (int i = 0; holds && i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_NOTE)
      note_id((const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
              info->dlpi_phdr[i].p_memsz, b->hex, sizeof b->hex);
  return holds;
}

static void load(void) {
#ifdef REDJIT_COMPILER_STATIC
  compiler = rj_compiler_v1();
  return;
#endif
  char path[PATH_MAX], buf[256];
  if (!compiler_path(path, sizeof path)) {
    snprintf(why, sizeof why, "libredjit.so's own path is unknown (set REDJIT_COMPILER_LIB)");
    return;
  }
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(why, sizeof why, "cannot load %s: %s", path, e ? e : "?");
    return;
  }
  const jit_compiler *(*entry)(void) = NULL;
  *(void **)&entry = dlsym(h, JIT_COMPILER_ENTRY);
  const jit_compiler *c = entry ? entry() : NULL;
  const char *bad = entry ? mismatch(c, buf, sizeof buf) : "it has no " JIT_COMPILER_ENTRY;
  build_id id = {.at = c};
  if (!bad && (dl_iterate_phdr(find_id, &id), strcmp(id.hex, REDJIT_COMPILER_ID) != 0)) {
    snprintf(buf, sizeof buf, "it is another build (build id \"%s\", this libredjit.so's is %s)",
             id.hex, REDJIT_COMPILER_ID);
    bad = buf;
  }
  if (bad) { /* left loaded: unloading a library whose constructors ran gains nothing */
    snprintf(why, sizeof why, "%s is not this libredjit.so's compiler library: %s", path, bad);
    return;
  }
  compiler = c;
}

/* The compiler library, loaded on first use; NULL with ctx's error set when it cannot be. */
static const jit_compiler *get(rj_ctx *ctx) {
  pthread_once(&load_once, load);
  if (!compiler)
    ir_fail(&ctx->err, RJ_EUNSUPPORTED,
            "compiler library: %s (a kernel that is in no cache is compiled by it: install it "
            "beside libredjit.so, or name it in REDJIT_COMPILER_LIB)",
            why);
  return compiler;
}

rj_status jit_lower(rj_ctx *ctx, const pass_variant *v, const rj_request *req, const ir_target *tg,
                    const rj_options *opt, rj_kernel *k) {
  const jit_compiler *c = get(ctx);
  return c ? c->lower(ctx, v->name, req, tg, opt, k) : ctx->err.status;
}

rj_status jit_compile_module(rj_ctx *ctx, const char *ir, size_t n, const char *entry,
                             const ir_target *tg, rj_kernel *k) {
  const jit_compiler *c = get(ctx);
  return c ? c->module(ctx, ir, n, entry, tg, k) : ctx->err.status;
}

rj_status jit_compile_combine(rj_ctx *ctx, const char *mod, size_t n, const char *ir, size_t irn,
                              const char *names, const ir_target *tg, rj_kernel *k) {
  const jit_compiler *c = get(ctx);
  return c ? c->combine(ctx, mod, n, ir, irn, names, tg, k) : ctx->err.status;
}

rj_status jit_lower_text(rj_ctx *ctx, const rj_kernel *k, const ir_target *tg, char **ll,
                         char **ll_opt) {
  const jit_compiler *c = get(ctx);
  return c ? c->text(ctx, k, tg, ll, ll_opt) : ctx->err.status;
}

void jit_compiler_release(rj_ctx *ctx) {
  if (ctx->llvm && compiler) compiler->release(ctx);
}

const char *jit_compiler_id(void) {
  return REDJIT_COMPILER_ID;
}
