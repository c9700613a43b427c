/* The one load and the one launch: every path that runs a kernel (rj_reduce, rj_kernel_launch,
 * treduce, the run / bench harness) goes through jit_load and jit_launch.  A kernel with a disk
 * cache entry is loaded as a cubin: the one its entry holds when it was linked for this driver
 * version and this device's compute capability, else one the driver's linker makes from the PTX
 * now (then stored in the entry, so the next process loads it without the PTX JIT). */
#include "jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The key a cubin for device dev is good under: the driver's version and the device's compute
 * capability ("cuda 12080 sm_90").  REDJIT_CUBIN_DRIVER=N pretends the driver is version N
 * (tests: a cubin another driver made is ignored).  false when either cannot be read. */
static bool cubin_key(rj_ctx *ctx, rt_cuda *rt, int dev, char *key, size_t n, int *cc) {
  ir_err e = {0};
  int major = 0, minor = 0;
  if (!ctx->driver_version && rt_driver_version(rt, &ctx->driver_version, &e) != RJ_OK)
    ctx->driver_version = 0;
  const char *fake = getenv("REDJIT_CUBIN_DRIVER");
  int version = fake && fake[0] ? atoi(fake) : ctx->driver_version;
  if (version <= 0 || rt_device_cc(rt, dev, &major, &minor, &e) != RJ_OK) return false;
  snprintf(key, n, "cuda %d sm_%d%d", version, major, minor);
  *cc = 10 * major + minor;
  return true;
}

/* k's module on device dev into m (the current context is dev's), and how it was loaded: from
 * the stored cubin, from a cubin linked now, or from the PTX.  Whatever goes wrong with a cubin
 * (none, another driver or device, refused by the driver, the linker failing) ends in the PTX
 * load, whose failure is the call's. */
static rj_status load_module(rj_ctx *ctx, rt_cuda *rt, rj_kernel *k, int dev, jit_module *m,
                             const char **how) {
  char key[64];
  ir_err e = {0};
  int cc = 0;
  *how = "PTX";
  /* cubins only for kernels with a disk entry, and one cubin a kernel: a kernel already loaded
   * on a device of another compute capability keeps its cubin and loads its PTX here */
  bool cubins = !k->src && jit_disk_on(ctx) && cubin_key(ctx, rt, dev, key, sizeof key, &cc);
  if (cubins && k->cubin && strcmp(k->cubin_key, key) != 0 && k->loads) cubins = false;
  if (cubins && k->cubin) {
    if (strcmp(k->cubin_key, key) == 0 &&
        rt_module_load(rt, k->cubin, k->entry, &m->module, &m->function, &e) == RJ_OK) {
      ctx->cubin_loads++;
      *how = "cubin";
      return RJ_OK;
    }
    ctx->cubin_stale++; /* another driver or device, or a cubin the driver refused */
    free(k->cubin);
    k->cubin = NULL;
    k->cubin_len = 0;
  }
  unsigned char *bin = NULL;
  size_t n = 0;
  /* PTX for sm_90a and the like is linked for that target, on a device of that very compute
   * capability only (elsewhere the PTX load decides, and says why it fails) */
  int accel = 0;
  size_t tl = strlen(k->target);
  if (tl > 3 && k->target[tl - 1] == 'a') accel = atoi(k->target + 3);
  if (accel && accel != cc) cubins = false;
  if (cubins && rt_link_cubin(rt, k->ptx, accel, &bin, &n, &e) == RJ_OK) {
    if (rt_module_load(rt, bin, k->entry, &m->module, &m->function, &e) == RJ_OK) {
      k->cubin = bin;
      k->cubin_len = n;
      snprintf(k->cubin_key, sizeof k->cubin_key, "%s", key);
      ctx->cubin_links++;
      *how = "PTX, linked into a cubin";
      jit_disk_store(ctx, k); /* the entry now holds the cubin */
      return RJ_OK;
    }
    free(bin);
  }
  return rt_module_load(rt, k->ptx, k->entry, &m->module, &m->function, &ctx->err);
}

rj_status jit_load(rj_ctx *ctx, rj_kernel *k, int dev, double *ms) {
  double t0 = jit_now_ms();
  if (ms) *ms = 0;
  for (jit_module *m = k->loads; m; m = m->next)
    if (m->dev == dev) {
      k->module = m->module;
      k->function = m->function;
      k->loaded_on = dev;
      return RJ_OK;
    }
  rt_cuda *rt;
  rj_status s = jit_cuda(ctx, &rt);
  if (s) return s;
  jit_module *m = calloc(1, sizeof *m);
  if (!m) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  const char *how = "PTX";
  s = load_module(ctx, rt, k, dev, m, &how);
  if (s) {
    free(m);
    return s;
  }
  m->dev = dev;
  m->next = k->loads;
  k->loads = m;
  k->module = m->module;
  k->function = m->function;
  k->loaded_on = dev;
  double took = jit_now_ms() - t0;
  if (ms) *ms = took;
  jit_log(ctx, "load %016llx %s on GPU %d from %s in %.3f ms", (unsigned long long)k->hash,
          k->variant, dev, how, took);
  return RJ_OK;
}

rj_status jit_launch(rj_ctx *ctx, rj_kernel *k, int dev, const jit_launch_args *l) {
  if (!l->grid[0] || !l->grid[1] || !l->grid[2]) { /* no outputs (a tensor dim of size 0) */
    if (l->ms) *l->ms = 0;
    return RJ_OK;
  }
  rt_cuda *rt = NULL;
  rj_status s = jit_cuda(ctx, &rt);
  if (!s) s = jit_load(ctx, k, dev, NULL);
  if (s) return s;
  if (l->ms)
    return rt_launch(rt, k->function, l->grid, l->block, l->shared, l->args, l->ms, &ctx->err);
  return rt_launch_async(rt, k->function, l->grid, l->block, l->shared, l->args, l->stream,
                         &ctx->err);
}
