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
 * With EMU_MODE=seg or list the source is ragged instead (ragged() below: segments or a list
 * of tensors of EMU_LENS, placed by EMU_OFF and EMU_STRIDE).  With EMU_MASK=1 the kernel takes
 * a u8 mask of the source's shape as its other input (map "where"): bytes 0 or 1 from the seed,
 * about half of them set (contiguous: with SPREAD 1 only).
 *   harness JSON SRC_BYTES SEED ELEMENT_BYTES OUT_FILE WORK_DIR RETARGET_COMMAND
 *           [SPREAD OFFSET [NARROW]] */
#include <dlfcn.h>
#include <fenv.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "redjit.h"

#define DST_BYTES ((size_t)1 << 20)

static __thread unsigned my_tid, my_cta;
static unsigned nthreads, nctas;
static pthread_barrier_t cta_bar;
static uint32_t xch[1024];

unsigned emu_tid(void);
unsigned emu_ctaid(void);
unsigned emu_nctaid(void);
void emu_barrier(int id);
void emu_warpsync(int mask);
int emu_shfl_bfly(int mask, int v, int lanemask, int c);
float emu_shfl_bfly_f(int mask, float v, int lanemask, int c);
int emu_shfl_up(int mask, int v, int delta, int c);
unsigned emu_ballot(int mask, int pred);
uint16_t emu_f2bf(float x);
float emu_d2f_rz(double x);
float emu_rcp_approx(float x);

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
/* The threads of a warp that a member mask names (a whole warp, or a group of consecutive lanes,
 * e.g. 8 of the segmented warp phase) meet here: one barrier per (warp, first lane, whole warp or
 * not), so that the groups of a warp and the warp itself never share one. */
typedef struct mbar {
  pthread_mutex_t m;
  pthread_cond_t c;
  unsigned waiting, gen;
} mbar;
static mbar mbars[32][32][2];

static void mask_wait(unsigned mask) {
  unsigned w = my_tid / 32, lanes = nthreads - w * 32 < 32 ? nthreads - w * 32 : 32;
  unsigned full = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
  mask &= full;
  unsigned n = (unsigned)__builtin_popcount(mask), first = (unsigned)__builtin_ctz(mask | 1u << 31);
  mbar *b = &mbars[w][first][mask == full];
  pthread_mutex_lock(&b->m);
  unsigned g = b->gen;
  if (++b->waiting == n) {
    b->waiting = 0;
    b->gen++;
    pthread_cond_broadcast(&b->c);
  } else {
    while (g == b->gen)
      pthread_cond_wait(&b->c, &b->m);
  }
  pthread_mutex_unlock(&b->m);
}

void emu_warpsync(int mask) {
  mask_wait((unsigned)mask);
}
/* shfl.sync.bfly among the threads of mask (lanemask < the group's width) */
int emu_shfl_bfly(int mask, int v, int lanemask, int c) {
  (void)c;
  unsigned w = my_tid / 32, l = my_tid % 32;
  xch[my_tid] = (uint32_t)v;
  mask_wait((unsigned)mask);
  int r = (int)xch[w * 32 + (l ^ (unsigned)lanemask)];
  mask_wait((unsigned)mask);
  return r;
}

float emu_shfl_bfly_f(int mask, float v, int lanemask, int c) {
  int i;
  memcpy(&i, &v, 4);
  i = emu_shfl_bfly(mask, i, lanemask, c);
  memcpy(&v, &i, 4);
  return v;
}

/* shfl.sync.up of a whole warp (c: 0): lane l takes lane l - delta's v, lanes below delta their
 * own */
int emu_shfl_up(int mask, int v, int delta, int c) {
  (void)c;
  unsigned l = my_tid % 32;
  xch[my_tid] = (uint32_t)v;
  mask_wait((unsigned)mask);
  int r = l >= (unsigned)delta ? (int)xch[my_tid - (unsigned)delta] : v;
  mask_wait((unsigned)mask);
  return r;
}

/* vote.ballot.sync of a whole warp: bit l set when lane l's pred is (an i1: its low bit) */
unsigned emu_ballot(int mask, int pred) {
  unsigned w = my_tid / 32;
  xch[my_tid] = (uint32_t)(pred & 1);
  mask_wait((unsigned)mask);
  unsigned r = 0;
  for (unsigned l = 0; l < 32 && w * 32 + l < nthreads; l++)
    if ((unsigned)mask >> l & 1) r |= xch[w * 32 + l] << l;
  mask_wait((unsigned)mask);
  return r;
}

/* cvt.rz.f32.f64: f64 -> f32 rounded toward zero */
float emu_d2f_rz(double x) {
  int mode = fegetround();
  fesetround(FE_TOWARDZERO);
  volatile float f = (float)x;
  fesetround(mode);
  return f;
}

/* rcp.approx.ftz.f32: within an ulp of 1 / x (the correctly rounded quotient here) */
float emu_rcp_approx(float x) {
  return 1.0f / x;
}

/* f32 -> bf16, rounded to nearest even (the host's C library has no __truncsfbf2) */
uint16_t emu_f2bf(float x) {
  uint32_t b;
  memcpy(&b, &x, 4);
  if ((b & 0x7fffffff) > 0x7f800000) return (uint16_t)(b >> 16 | 0x40); /* a quiet NaN */
  return (uint16_t)((b + 0x7fff + (b >> 16 & 1)) >> 16);
}

/* every kernel here takes at most four 8-byte parameters (pointers; a list kernel's last is its
 * i64 count), passed in integer registers: (src, dst), (src, dst, offsets, status) or (table,
 * dst, total, n) */
typedef void (*kernel_fn)(void *, void *, void *, void *);
static kernel_fn fn;
static void *src, *dst, *arg2, *arg3;

static void *thread_main(void *a) {
  my_tid = (unsigned)((uintptr_t)a & 0xffff);
  my_cta = (unsigned)((uintptr_t)a >> 16);
  fn(src, dst, arg2, arg3);
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
  for (unsigned w = 0; w < 32; w++)
    for (unsigned f = 0; f < 32; f++)
      for (int k = 0; k < 2; k++) {
        pthread_mutex_init(&mbars[w][f][k].m, NULL);
        pthread_cond_init(&mbars[w][f][k].c, NULL);
      }
  pthread_t th[1024];
  for (int rep = 0; rep < 2; rep++)
    for (unsigned c = 0; c < nctas; c++) {
      for (unsigned t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)(uintptr_t)(t | (uintptr_t)c << 16));
      for (unsigned t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    }
}

/* Element j of segment or tensor i: bytes from (seed, i, j) alone, so that every placement of
 * the same lengths holds the same values (floats below 2 in magnitude; NARROW as above). */
static void element(uint64_t seed, int64_t i, int64_t j, size_t esz, int narrow, unsigned char *o) {
  uint64_t h = seed ^ ((uint64_t)i * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)j * 0xc2b2ae3d27d4eb4fULL);
  for (size_t b = 0; b < esz; b++) {
    h = h * 6364136223846793005ULL + 1442695040888963407ULL;
    o[b] = (unsigned char)(h >> 56);
  }
  o[esz - 1] &= 0xbf;
  if (narrow)
    o[esz - 1] = narrow == 1 ? (unsigned char)((o[esz - 1] & 0x80) | 0x3f)
                             : (unsigned char)((o[esz - 1] & 0x83) | 0x38);
}

#define EMU_MAX_LENS 4096
/* EMU_MODE=seg or list (with EMU_LENS=l0,l1,... (l*k: k of length l; at most EMU_MAX_LENS),
 * EMU_OFF elements, EMU_STRIDE for lists): the
 * segments (one array of N = sum + EMU_OFF + 8 elements, i64 offsets shifted by EMU_OFF) or the
 * tensors (each in a slot of its own at element EMU_OFF, stride EMU_STRIDE) of those lengths, and
 * the kernel's parameters for them; a list's total goes to the second half of dst, which is
 * poisoned (all bits set) first.  0: done. */
static int ragged(const char *mode, uint64_t seed, size_t esz, int narrow) {
  memset(dst, 0xff, DST_BYTES); /* poison (NaN): every output must be written */
  static int64_t len[EMU_MAX_LENS];
  int64_t n = 0, sum = 0;
  for (const char *p = getenv("EMU_LENS"); p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : "") {
    char *end;
    int64_t l = strtoll(p, &end, 10), k = *end == '*' ? strtoll(end + 1, NULL, 10) : 1;
    for (; k > 0; k--) {
      if (n == EMU_MAX_LENS || l < 0) return 3;
      sum += len[n++] = l;
    }
  }
  int64_t off = getenv("EMU_OFF") ? strtoll(getenv("EMU_OFF"), NULL, 10) : 0;
  int64_t st = getenv("EMU_STRIDE") ? strtoll(getenv("EMU_STRIDE"), NULL, 10) : 1;
  if (!n || off < 0 || off > 64 || st < 1 || st > 4) return 3;
  if (!strcmp(mode, "seg")) { /* EMU_COLS=C: rows of C elements, segment i's row j column c
                                 holding its element j * C + c */
    int64_t C = getenv("EMU_COLS") ? strtoll(getenv("EMU_COLS"), NULL, 10) : 1;
    if (C < 1 || C > 256) return 3;
    unsigned char *q = calloc((size_t)((sum + off + 8) * C), esz);
    int64_t *o = calloc((size_t)n + 1, 8);
    if (!q || !o) return 3;
    for (int64_t i = 0, at = off; i < n; at += len[i], i++) {
      o[i] = at;
      for (int64_t j = 0; j < len[i] * C; j++)
        element(seed, i, j, esz, narrow, q + (size_t)(at * C + j) * esz);
    }
    o[n] = off + sum;
    src = q, arg2 = o, arg3 = NULL;
    return 0;
  }
  int64_t slot = 0;
  for (int i = 0; i < n; i++)
    slot = len[i] * st > slot ? len[i] * st : slot;
  slot += off + 8;
  unsigned char *q = calloc((size_t)(slot * n), esz);
  int64_t *table = calloc((size_t)n * 4, 8);
  if (!q || !table) return 3;
  for (int64_t i = 0; i < n; i++) {
    for (int64_t j = 0; j < len[i]; j++)
      element(seed, i, j, esz, narrow, q + (size_t)(slot * i + off + j * st) * esz);
    table[4 * i] = (int64_t)(uintptr_t)(q + (size_t)(slot * i + off) * esz);
    table[4 * i + 1] = len[i];
    table[4 * i + 2] = st;
  }
  src = table, arg2 = (unsigned char *)dst + DST_BYTES / 2, arg3 = (void *)(uintptr_t)n;
  return 0;
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
  const char *mode = getenv("EMU_MODE");
  if (mode && *mode) {
    if ((rc = ragged(mode, seed, esz, narrow))) return rc;
  } else {
    unsigned char *q = calloc(1, n * spread + off + 64);
    if (!q || !spread || off > 64) return 3;
    for (size_t i = 0; i < n; i += esz)
      memcpy(q + off + i * spread, p + i, esz);
    src = q + off;
  }
  if (getenv("EMU_MASK") && !strcmp(getenv("EMU_MASK"), "1")) {
    unsigned char *m = malloc(n / esz + 64);
    if (!m) return 3;
    for (size_t i = 0; i < n / esz; i++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      m[i] = (unsigned char)(seed >> 63);
    }
    arg2 = m;
  }
  nthreads = block;
  nctas = grid[0];
  launch();
  FILE *f = fopen(argv[5], "wb");
  if (!f || fwrite(dst, 1, DST_BYTES, f) != DST_BYTES) return 3;
  fclose(f);
  return 0;
}
