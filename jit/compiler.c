/* Loading the compiler library (jit/compiler.h) on the first miss: $REDJIT_COMPILER_LIB, else
 * libredjit-llvm.so.VERSION beside libredjit.so (its own path, by dladdr), dlopen'ed RTLD_LOCAL
 * (LLVM inside it stays hidden: another LLVM in the process, llvmlite's say, is not disturbed).
 * A library that is missing, has no entry, or was built from another version or layout is a
 * status and a message on every compile that needs it, never a crash; cache hits never ask. */
#include "compiler.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static void load(void) {
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
                    const rj_options *opt, rj_kernel *k, pass_plan *plan) {
  const jit_compiler *c = get(ctx);
  return c ? c->lower(ctx, v->name, req, tg, opt, k, plan) : ctx->err.status;
}

rj_status jit_compile_module(rj_ctx *ctx, const char *ir, size_t n, const char *entry,
                             const ir_target *tg, rj_kernel *k) {
  const jit_compiler *c = get(ctx);
  return c ? c->module(ctx, ir, n, entry, tg, k) : ctx->err.status;
}

void jit_compiler_release(rj_ctx *ctx) {
  if (ctx->llvm && compiler) compiler->release(ctx);
}

void jit_compiler_identity(char *buf, size_t n) {
  char path[PATH_MAX];
  struct stat st;
  if (compiler_path(path, sizeof path) && stat(path, &st) == 0)
    snprintf(buf, n, "%lld.%lld.%ld", (long long)st.st_size, (long long)st.st_mtim.tv_sec,
             (long)st.st_mtim.tv_nsec);
  else
    snprintf(buf, n, "none");
}
