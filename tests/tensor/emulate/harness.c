/* Runs one tensor kernel on the CPU (tests/tensor/emulate/run.py): compiles a request through
 * libredjit, writes its LLVM IR as built, has run.py's retargeting turn it into a host shared
 * object (nvvm intrinsics -> the emu_* functions below), then runs its CTAs one after another
 * with one POSIX thread per GPU thread: barriers are a CTA's pthread barrier, a shuffle an
 * exchange between a warp's threads.  The source is deterministic bytes from a seed (the
 * exponent's top bit cleared: no NaN or infinity); the first MiB of dst goes to a file.  SPREAD
 * (default 1) puts element i at element i * SPREAD (a strided view of the same values), OFFSET
 * (default 0) bytes move the whole source off its 16-byte alignment; NARROW 1 (f32, bf16) or 2
 * (f16) keeps every value within [0.5, 2) in magnitude, so that every add rounds and any change of
 * order shows in the bits.
 *   harness JSON SRC_BYTES SEED ELEMENT_BYTES OUT_FILE WORK_DIR RETARGET_COMMAND
 *           [SPREAD OFFSET [NARROW]] */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redjit.h"

#define DST_BYTES ((size_t)1 << 20)

static __thread unsigned my_tid, my_cta;
static unsigned nthreads, nctas;
static pthread_barrier_t cta_bar, warp_bar[32];
static uint32_t xch[1024];

unsigned emu_tid(void);
unsigned emu_ctaid(void);
unsigned emu_nctaid(void);
void emu_barrier(int id);
void emu_warpsync(int mask);
int emu_shfl_bfly(int mask, int v, int lanemask, int c);
float emu_shfl_bfly_f(int mask, float v, int lanemask, int c);
uint16_t emu_f2bf(float x);

unsigned emu_tid(void) {
  return my_tid;
}
unsigned emu_ctaid(void) {
  return my_cta;
}
unsigned emu_nctaid(void) {
  return nctas;
}
void emu_barrier(int id) {
  (void)id;
  pthread_barrier_wait(&cta_bar);
}
void emu_warpsync(int mask) {
  (void)mask;
  pthread_barrier_wait(&warp_bar[my_tid / 32]);
}
/* shfl.sync.bfly of every thread of the warp (the kernels shuffle converged, masks < width) */
int emu_shfl_bfly(int mask, int v, int lanemask, int c) {
  (void)mask, (void)c;
  unsigned w = my_tid / 32, l = my_tid % 32;
  xch[my_tid] = (uint32_t)v;
  pthread_barrier_wait(&warp_bar[w]);
  int r = (int)xch[w * 32 + (l ^ (unsigned)lanemask)];
  pthread_barrier_wait(&warp_bar[w]);
  return r;
}

float emu_shfl_bfly_f(int mask, float v, int lanemask, int c) {
  int i;
  memcpy(&i, &v, 4);
  i = emu_shfl_bfly(mask, i, lanemask, c);
  memcpy(&v, &i, 4);
  return v;
}

/* f32 -> bf16, rounded to nearest even (the host's C library has no __truncsfbf2) */
uint16_t emu_f2bf(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  if ((b & 0x7fffffff) > 0x7f800000) return (uint16_t)(b >> 16 | 0x40); /* a quiet NaN */
  return (uint16_t)((b + 0x7fff + (b >> 16 & 1)) >> 16);
}

typedef void (*kernel_fn)(void *, void *);
static kernel_fn fn;
static void *src, *dst;

static void *thread_main(void *a) {
  my_tid = (unsigned)((uintptr_t)a & 0xffff);
  my_cta = (unsigned)((uintptr_t)a >> 16);
  fn(src, dst);
  return NULL;
}

/* the kernel of json as a host shared object in dir; its grid and block */
static int build(const char *json, const char *dir, const char *retarget, unsigned *grid,
                 unsigned *block) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90a";
  rj_kernel *k = NULL;
  if (rj_request_parse(ctx, json, &r) || rj_compile(ctx, &r, &o, &k)) {
    fprintf(stderr, "%s: %s\n", json, rj_errmsg(ctx));
    return 2;
  }
  unsigned b[3];
  rj_kernel_dims(k, grid, b, NULL);
  *block = b[0];
  char ll[1024], cmd[4096];
  snprintf(ll, sizeof ll, "%s/k.ll", dir);
  FILE *f = fopen(ll, "w");
  if (!f) return 3;
  fputs(rj_kernel_text(k, RJ_EMIT_LLVM), f);
  fclose(f);
  rj_ctx_free(ctx);
  snprintf(cmd, sizeof cmd, "%s %s %s/k.so", retarget, ll, dir);
  return system(cmd) ? 3 : 0;
}

/* every CTA, one after another, twice (the last-CTA counters must be reset for the next) */
static void launch(void) {
  pthread_barrier_init(&cta_bar, NULL, nthreads);
  for (unsigned w = 0; w * 32 < nthreads; w++)
    pthread_barrier_init(&warp_bar[w], NULL, nthreads - w * 32 < 32 ? nthreads - w * 32 : 32);
  pthread_t th[1024];
  for (int rep = 0; rep < 2; rep++)
    for (unsigned c = 0; c < nctas; c++) {
      for (unsigned t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(uintptr_t)(t | (uintptr_t)c << 16));
      for (unsigned t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    }
}

int main(int argc, char **argv) {
  if (argc != 8 && argc != 10 && argc != 11) {
    fprintf(
        stderr,
        "usage: harness JSON SRC_BYTES SEED ELEMENT_BYTES OUT WORK_DIR RETARGET [SPREAD OFFSET]\n");
    return 2;
  }
  size_t n = strtoull(argv[2], NULL, 10), esz = strtoull(argv[4], NULL, 10);
  uint64_t seed = strtoull(argv[3], NULL, 10);
  unsigned grid[3], block;
  int rc = build(argv[1], argv[6], argv[7], grid, &block);
  if (rc) return rc;
  char so[1024];
  snprintf(so, sizeof so, "%s/k.so", argv[6]);
  void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!h || !(fn = (kernel_fn)(uintptr_t)dlsym(h, "redjit_tensor"))) {
    fprintf(stderr, "%s\n", dlerror());
    return 3;
  }
  unsigned char *p = malloc(n + 64);
  dst = calloc(1, DST_BYTES);
  if (!p || !dst || block > 1024 || grid[0] >= 65536) return 3;
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    p[i] = (unsigned char)(seed >> 56);
  }
  for (size_t i = esz - 1; i < n; i += esz)
    p[i] &= 0xbf; /* floats below 2 in magnitude (e4m3: no NaN) */
  int narrow = argc == 11 ? atoi(argv[10]) : 0;
  for (size_t i = esz - 1; narrow && i < n; i += esz)
    p[i] = narrow == 1 ? (unsigned char)((p[i] & 0x80) | 0x3f)  /* exponent 126 or 127 */
                       : (unsigned char)((p[i] & 0x83) | 0x38); /* f16: exponent 14 */
  size_t spread = argc >= 10 ? strtoull(argv[8], NULL, 10) : 1;
  size_t off = argc >= 10 ? strtoull(argv[9], NULL, 10) : 0;
  unsigned char *q = calloc(1, n * spread + off + 64);
  if (!q || !spread || off > 64) return 3;
  for (size_t i = 0; i < n; i += esz)
    memcpy(q + off + i * spread, p + i, esz);
  src = q + off;
  nthreads = block;
  nctas = grid[0];
  launch();
  FILE *f = fopen(argv[5], "wb");
  if (!f || fwrite(dst, 1, DST_BYTES, f) != DST_BYTES) return 3;
  fclose(f);
  return 0;
}
