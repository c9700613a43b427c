/* The persistent kernel cache: one file per kernel in a directory shared by every process, named
 * by a 128-bit hash of the key (format, redjit version, LLVM version, the library file's identity
 * and the memory cache's key text) and holding everything a hit needs to rebuild the rj_kernel
 * without LLVM, and, once the kernel was loaded, the cubin the driver's linker made of its PTX
 * with that cubin's own key (driver version and compute capability: launch.c).  Entries are
 * written to a temporary file and renamed into place; on reading, anything that does not verify
 * (magic, format, sizes, lengths, checksum, the stored key) is ignored and later replaced; a
 * cubin part that does not verify (its length, its own checksum, the ELF magic) is dropped and
 * the kernel keeps its PTX, so the cubin is linked again and the entry rewritten.  A directory that
 * cannot be used turns the cache off (or, when only writing fails, read-only) with one note, never
 * a failure. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "jit.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <llvm/Config/llvm-config.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DISK_FORMAT 3 /* 3: no geometry in the head (the plan's), op custom's combine text */
/* key, ptx, ll, ll_opt ("": not made), cubin_key, op custom's combine text ("": none) */
#define DISK_NSTR 6
#define DISK_MAX_FILE (64u << 20)     /* larger files are not entries */
#define DISK_MAX_BYTES (256ull << 20) /* the default bound of the directory */
#define DISK_SUFFIX ".rjk"
static const char ELF_MAGIC[4] = {0x7f, 'E', 'L', 'F'}; /* a cubin is an ELF file */

typedef struct disk_head {
  char magic[8]; /* "rjkcache" */
  uint32_t format, head_size, plan_size, req_size;
  uint64_t len[DISK_NSTR]; /* each string is followed by its NUL */
  int32_t ptx_version;
  double compile_ms;
  char variant[RJ_NAME_MAX], target[16], entry[64];
  uint64_t cubin_len, cubin_sum; /* the cubin after the checksum (0: none), its own checksum */
} disk_head;

/* ---------------------------------------------------------------- where */

/* The library file's size and modification time, then the compiler library's build id: a rebuilt
 * library never reads entries an earlier build wrote (kernels may differ while the version number
 * does not). */
static char build_id[192];
static void build_id_once(void) {
  Dl_info info;
  struct stat st;
  if (dladdr((void *)build_id_once, &info) && info.dli_fname && stat(info.dli_fname, &st) == 0)
    snprintf(build_id, sizeof build_id, "%lld.%lld.%ld+%s", (long long)st.st_size,
             (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec, jit_compiler_id());
}

/* The one note of a cache that is off or read-only; REDJIT_LOG set also prints it. */
static void disk_note(jit_disk *d, const char *what, const char *why) {
  if (d->note[0]) return;
  snprintf(d->note, sizeof d->note, "redjit: disk cache %s: %s (%s)", what, d->dir, why);
  const char *log = getenv("REDJIT_LOG");
  if (log && log[0]) fprintf(stderr, "%s\n", d->note);
}

/* mkdir -p, mode 0700 for what it creates. */
static int make_dirs(const char *dir) {
  char p[sizeof((jit_disk *)0)->dir];
  snprintf(p, sizeof p, "%s", dir);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      if (mkdir(p, 0700) && errno != EEXIST) return -1;
      *s = '/';
    }
  return mkdir(p, 0700) && errno != EEXIST ? -1 : 0;
}

/* REDJIT_CACHE_MAX_BYTES: a decimal byte count, optionally with a K, M or G suffix (powers of
 * 1024); anything else, or 0, is the default. */
static uint64_t max_bytes_of(const char *env) {
  if (!env || !env[0]) return DISK_MAX_BYTES;
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(env, &end, 10);
  int shift = !*end ? 0
                    : (end[1]                       ? -1
                       : *end == 'K' || *end == 'k' ? 10
                       : *end == 'M' || *end == 'm' ? 20
                       : *end == 'G' || *end == 'g' ? 30
                                                    : -1);
  if (errno || end == env || shift < 0 || !v || v > (UINT64_MAX >> shift)) return DISK_MAX_BYTES;
  return (uint64_t)v << shift;
}

/* The directory: the context's setting, else REDJIT_CACHE_DISABLE / REDJIT_CACHE_DIR /
 * $XDG_CACHE_HOME/redjit / ~/.cache/redjit; created when missing. */
static void disk_resolve(jit_disk *d) {
  const char *env, *home;
  d->state = JIT_DISK_OFF;
  if (!d->set) {
    int w;
    if ((env = getenv("REDJIT_CACHE_DISABLE")) && env[0] && strcmp(env, "0") != 0) return;
    if ((env = getenv("REDJIT_CACHE_DIR")) && env[0])
      w = snprintf(d->dir, sizeof d->dir, "%s", env);
    else if ((env = getenv("XDG_CACHE_HOME")) && env[0])
      w = snprintf(d->dir, sizeof d->dir, "%s/redjit", env);
    else if ((home = getenv("HOME")) && home[0])
      w = snprintf(d->dir, sizeof d->dir, "%s/.cache/redjit", home);
    else
      return;
    _Static_assert(sizeof d->dir == 1024, "the note says 1023 bytes");
    if (w >= (int)sizeof d->dir) { /* never another directory: the path cut short */
      snprintf(d->dir + 40, sizeof d->dir - 40, "...");
      return disk_note(d, "off", "the path is longer than 1023 bytes");
    }
  }
  if (!d->dir[0]) return;
  env = getenv("REDJIT_CACHE_MAX_BYTES");
  d->max_bytes = max_bytes_of(env);
  if (make_dirs(d->dir)) return disk_note(d, "off", strerror(errno));
  struct stat st; /* kernels are loaded from here: only a directory no one else may write to */
  if (stat(d->dir, &st) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return disk_note(d, "off", "not owned by this user, or writable by others");
  d->state = JIT_DISK_ON;
  if (access(d->dir, W_OK)) {
    d->readonly = true;
    disk_note(d, "read-only", strerror(errno));
  }
}

static jit_disk *disk(rj_ctx *ctx) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, build_id_once);
  if (ctx->disk.state == JIT_DISK_UNRESOLVED) disk_resolve(&ctx->disk);
  return ctx->disk.state == JIT_DISK_ON ? &ctx->disk : NULL;
}

/* The stored key: everything that decides the kernel besides the memory cache's key text. */
static char *full_key(const char *key) {
  char head[384];
  int n = snprintf(head, sizeof head, "rjkcache %d|redjit %s|LLVM %s|build %s\n", DISK_FORMAT,
                   rj_version(), LLVM_VERSION_STRING, build_id);
  char *k = malloc((size_t)n + strlen(key) + 1);
  if (k) {
    memcpy(k, head, (size_t)n);
    strcpy(k + n, key);
  }
  return k;
}

static void entry_path(const jit_disk *d, const char *fkey, char *path, size_t n) {
  size_t len = strlen(fkey);
  snprintf(path, n, "%s/%016llx%016llx" DISK_SUFFIX, d->dir,
           (unsigned long long)jit_hash64(fkey, len, 1),
           (unsigned long long)jit_hash64(fkey, len, 0x9e3779b97f4a7c15ull));
}

/* ---------------------------------------------------------------- reading */

/* The whole file at path (NULL: missing, unreadable, empty or too large for an entry). */
static unsigned char *read_all(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW); /* a FIFO never blocks */
  if (fd < 0) return NULL;
  struct stat st;
  unsigned char *buf = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      (uint64_t)st.st_size <= DISK_MAX_FILE && (buf = malloc((size_t)st.st_size))) {
    size_t got = 0;
    ssize_t r = 1;
    while (got < (size_t)st.st_size && (r = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
      got += (size_t)r;
    if (got != (size_t)st.st_size) {
      free(buf);
      buf = NULL;
    }
    *size = got;
  }
  if (buf) futimens(fd, NULL); /* used now: the eviction keeps it longest */
  close(fd);
  return buf;
}

static bool terminated(const char *s, size_t n) {
  return memchr(s, 0, n) != NULL;
}

/* The stored plan is read by the launch (size parameters into fixed arrays, its key and note as
 * strings): its counts in range and its strings terminated, whatever the file says. */
static bool plan_valid(const unsigned char *at) {
  pass_plan p;
  memcpy(&p, at, sizeof p);
  return p.np >= 0 && p.np <= PASS_PLAN_NP && p.sms >= 0 && terminated(p.key, sizeof p.key) &&
         terminated(p.note, sizeof p.note);
}

/* Checks an entry's frame: head, plan, request, strings, checksum, then an optional cubin part;
 * on success str[i] point at its strings and *main (what the checksum covers, and the checksum)
 * is where the cubin part starts.  Trusts nothing. */
static bool entry_valid(const unsigned char *buf, size_t size, const char *fkey, disk_head *h,
                        const char *str[DISK_NSTR], size_t *main) {
  uint64_t sum;
  if (size < sizeof *h + sizeof sum) return false;
  memcpy(h, buf, sizeof *h);
  if (memcmp(h->magic, "rjkcache", 8) != 0 || h->format != DISK_FORMAT ||
      h->head_size != sizeof *h || h->plan_size != sizeof(pass_plan) ||
      h->req_size != sizeof(rj_request))
    return false;
  uint64_t at = sizeof *h + sizeof(pass_plan) + sizeof(rj_request);
  for (int i = 0; i < DISK_NSTR; i++) {
    if (h->len[i] >= size || at + h->len[i] + 1 > size - sizeof sum) return false;
    str[i] = (const char *)buf + at;
    at += h->len[i] + 1;
    if (str[i][h->len[i]] != 0) return false;
  }
  memcpy(&sum, buf + at, sizeof sum);
  if (jit_hash64(buf, at, 7) != sum) return false;
  *main = at + sizeof sum;
  return strcmp(str[0], fkey) == 0 && terminated(h->variant, sizeof h->variant) &&
         terminated(h->target, sizeof h->target) && terminated(h->entry, sizeof h->entry) &&
         ir_target_find(h->target) && pass_variant_find(h->variant) && plan_valid(buf + sizeof *h);
}

/* The entry's cubin part (at buf + main), when it is whole and checks: its length, its checksum,
 * the ELF magic, a key.  Anything else: no cubin (the kernel's PTX is loaded, linked again). */
static bool cubin_valid(const unsigned char *buf, size_t size, size_t main, const disk_head *h,
                        const char *key) {
  const unsigned char *c = buf + main;
  return h->cubin_len >= 4 && size - main == h->cubin_len && key[0] &&
         h->len[4] < sizeof((rj_kernel *)0)->cubin_key && memcmp(c, ELF_MAGIC, 4) == 0 &&
         jit_hash64(c, h->cubin_len, 11) == h->cubin_sum;
}

/* The kernel an entry describes (its own copies of the texts); NULL when out of memory. */
static rj_kernel *entry_kernel(const unsigned char *buf, const disk_head *h,
                               const char *str[DISK_NSTR], const char *key) {
  rj_kernel *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  k->key = strdup(key);
  k->ptx = strdup(str[1]);
  bool text = str[2][0] && str[3][0]; /* the IR text, where its writer had made it */
  if (text) {
    k->ll = strdup(str[2]);
    k->ll_opt = strdup(str[3]);
  }
  if (!k->key || !k->ptx || (text && (!k->ll || !k->ll_opt))) {
    jit_kernel_free(k);
    return NULL;
  }
  memcpy(&k->plan, buf + sizeof *h, sizeof k->plan);
  memcpy(&k->req, buf + sizeof *h + sizeof k->plan, sizeof k->req);
  rj_combine *cb = ir_request_combine_mut(&k->req); /* op custom: the writer's pointer, */
  if (cb) {                                         /* replaced by the kernel's own text */
    cb->ir = k->src = strdup(str[5]);
    cb->text = 0;
    k->srclen = h->len[5];
    if (!k->src) return jit_kernel_free(k), NULL;
  }
  snprintf(k->variant, sizeof k->variant, "%s", h->variant);
  snprintf(k->target, sizeof k->target, "%s", h->target);
  snprintf(k->entry, sizeof k->entry, "%s", h->entry);
  k->ptx_version = h->ptx_version;
  k->compile_ms = h->compile_ms;
  return k;
}

rj_kernel *jit_disk_find(rj_ctx *ctx, const char *key) {
  jit_disk *d = disk(ctx);
  char *fkey = d ? full_key(key) : NULL, path[sizeof d->dir + 64];
  if (!fkey) return NULL;
  entry_path(d, fkey, path, sizeof path);
  size_t size = 0;
  unsigned char *buf = read_all(path, &size);
  disk_head h;
  const char *str[DISK_NSTR];
  size_t main = 0;
  double t0 = jit_now_ms();
  rj_kernel *k =
      buf && entry_valid(buf, size, fkey, &h, str, &main) ? entry_kernel(buf, &h, str, key) : NULL;
  if (k && size > main) { /* a cubin part */
    if (cubin_valid(buf, size, main, &h, str[4]) && (k->cubin = malloc(h.cubin_len))) {
      memcpy(k->cubin, buf + main, h.cubin_len);
      k->cubin_len = h.cubin_len;
      snprintf(k->cubin_key, sizeof k->cubin_key, "%s", str[4]);
    } else {
      ctx->cubin_stale++;
    }
  }
  free(buf);
  free(fkey);
  if (!k) return NULL;
  k->ctx = ctx;
  k->from_disk = true;
  k->disk_ms = jit_now_ms() - t0;
  d->hits++;
  jit_cache_insert(ctx, k);
  if (jit_log_on(ctx))
    jit_log(ctx, "disk hit %016llx %s%s: read in %.3f ms", (unsigned long long)k->hash, k->variant,
            k->cubin ? " with a cubin" : "", k->disk_ms);
  return k;
}

/* ---------------------------------------------------------------- eviction */

typedef struct disk_file {
  char name[64];
  off_t size;
  struct timespec used;
} disk_file;

static int older(const void *a, const void *b) {
  const struct timespec *x = &((const disk_file *)a)->used, *y = &((const disk_file *)b)->used;
  if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? -1 : 1;
  return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* The directory's entries (and temporary files a dead writer left, removed after an hour). */
static disk_file *disk_list(jit_disk *d, size_t *n, uint64_t *total) {
  DIR *dir = opendir(d->dir);
  disk_file *f = NULL;
  size_t cap = 0;
  *n = 0;
  *total = 0;
  if (!dir) return NULL;
  time_t now = time(NULL);
  for (struct dirent *e; (e = readdir(dir));) {
    struct stat st;
    char path[sizeof d->dir + 300];
    size_t len = strlen(e->d_name);
    snprintf(path, sizeof path, "%s/%s", d->dir, e->d_name);
    bool tmp = strncmp(e->d_name, ".tmp.", 5) == 0;
    if ((!tmp && (len < 5 || strcmp(e->d_name + len - 4, DISK_SUFFIX) != 0)) ||
        len >= sizeof f->name || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
      continue;
    if (tmp) {
      if (now - st.st_mtime > 3600) unlink(path);
      continue;
    }
    if (*n == cap) {
      disk_file *g = realloc(f, (cap = cap ? 2 * cap : 64) * sizeof *f);
      if (!g) break;
      f = g;
    }
    snprintf(f[*n].name, sizeof f[*n].name, "%s", e->d_name);
    f[*n].size = st.st_size;
    f[*n].used = st.st_mtim;
    *total += (uint64_t)st.st_size;
    (*n)++;
  }
  closedir(dir);
  return f;
}

/* Least recently used first, until the directory is at three quarters of its bound (so that the
 * next scan is many writes away).  d->bytes is then the directory's size. */
static void disk_evict(jit_disk *d) {
  size_t n;
  uint64_t total;
  disk_file *f = disk_list(d, &n, &total);
  if (total > d->max_bytes) {
    qsort(f, n, sizeof *f, older);
    for (size_t i = 0; i < n && total > d->max_bytes / 4 * 3; i++) {
      char path[sizeof d->dir + 80];
      snprintf(path, sizeof path, "%s/%s", d->dir, f[i].name);
      if (unlink(path) == 0) {
        total -= (uint64_t)f[i].size;
        d->evictions++;
      }
    }
  }
  d->bytes = total;
  d->scanned = true;
  free(f);
}

/* ---------------------------------------------------------------- writing */

/* k's entry: head, plan, request, the strings, the checksum, the cubin (if any). */
static unsigned char *entry_bytes(const rj_kernel *k, const char *fkey, size_t *size) {
  const char *str[DISK_NSTR] = {fkey, k->ptx, k->ll ? k->ll : "", k->ll_opt ? k->ll_opt : "",
                                k->cubin ? k->cubin_key : ""};
  str[5] = k->src ? k->src : ""; /* op custom's combine text (jit_combine_stage) */
  disk_head h;
  memset(&h, 0, sizeof h); /* padding too: the file's bytes are all defined */
  h.format = DISK_FORMAT;
  h.head_size = sizeof h;
  h.plan_size = sizeof(pass_plan);
  h.req_size = sizeof(rj_request);
  h.ptx_version = k->ptx_version;
  h.compile_ms = k->compile_ms;
  memcpy(h.magic, "rjkcache", 8);
  memcpy(h.variant, k->variant, sizeof h.variant);
  memcpy(h.target, k->target, sizeof h.target);
  memcpy(h.entry, k->entry, sizeof h.entry);
  if (k->cubin) {
    h.cubin_len = k->cubin_len;
    h.cubin_sum = jit_hash64(k->cubin, k->cubin_len, 11);
  }
  size_t n = sizeof h + sizeof k->plan + sizeof k->req + sizeof(uint64_t) + h.cubin_len;
  for (int i = 0; i < DISK_NSTR; i++)
    n += (h.len[i] = strlen(str[i])) + 1;
  unsigned char *buf = malloc(n), *at = buf;
  if (!buf) return NULL;
  memcpy(at, &h, sizeof h), at += sizeof h;
  memcpy(at, &k->plan, sizeof k->plan), at += sizeof k->plan;
  memcpy(at, &k->req, sizeof k->req), at += sizeof k->req;
  for (int i = 0; i < DISK_NSTR; i++)
    memcpy(at, str[i], h.len[i] + 1), at += h.len[i] + 1;
  uint64_t sum = jit_hash64(buf, (size_t)(at - buf), 7);
  memcpy(at, &sum, sizeof sum), at += sizeof sum;
  if (k->cubin) memcpy(at, k->cubin, k->cubin_len);
  *size = n;
  return buf;
}

/* buf into path through a temporary file of the same directory and a rename: a reader sees the
 * whole entry or none.  0, or an errno. */
static int write_atomic(const jit_disk *d, const char *path, const unsigned char *buf, size_t n) {
  static _Atomic unsigned seq; /* contexts in several threads write at once */
  char tmp[sizeof d->dir + 64];
  snprintf(tmp, sizeof tmp, "%s/.tmp.%ld.%u.%p", d->dir, (long)getpid(), atomic_fetch_add(&seq, 1),
           (void *)buf);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  size_t put = 0;
  ssize_t w = 1;
  while (put < n && (w = write(fd, buf + put, n - put)) > 0)
    put += (size_t)w;
  int err = put == n ? 0 : w < 0 ? errno : ENOSPC;
  if (close(fd) && !err) err = errno;
  if (!err && rename(tmp, path)) err = errno;
  if (err) unlink(tmp);
  return err;
}

void jit_disk_store(rj_ctx *ctx, const rj_kernel *k) {
  jit_disk *d = disk(ctx);
  if (!d || d->readonly || !k->ptx) return;
  char *fkey = full_key(k->key), path[sizeof d->dir + 64];
  size_t n = 0;
  unsigned char *buf = fkey ? entry_bytes(k, fkey, &n) : NULL;
  if (buf) {
    entry_path(d, fkey, path, sizeof path);
    int err = write_atomic(d, path, buf, n);
    if (err) {
      d->readonly = true;
      disk_note(d, "read-only", strerror(err));
    } else {
      d->writes++;
      if (!d->scanned || (d->bytes += n) > d->max_bytes) disk_evict(d);
    }
  }
  free(buf);
  free(fkey);
}

bool jit_disk_on(rj_ctx *ctx) {
  return disk(ctx) != NULL;
}

/* ---------------------------------------------------------------- the API */

RJ_API rj_status rj_ctx_set_disk_cache(rj_ctx *ctx, const char *dir) {
  JIT_ENTER(ctx);
  if (!ctx) return RJ_EINVAL;
  memset(&ctx->err, 0, sizeof ctx->err);
  jit_disk *d = &ctx->disk;
  if (dir && strlen(dir) >= sizeof d->dir)
    return jit_done(ctx,
                    ir_fail(&ctx->err, RJ_EINVAL, "dir: longer than %zu bytes", sizeof d->dir - 1));
  long long hits = d->hits, writes = d->writes, evictions = d->evictions;
  memset(d, 0, sizeof *d);
  d->hits = hits, d->writes = writes, d->evictions = evictions;
  d->set = true;
  snprintf(d->dir, sizeof d->dir, "%s", dir ? dir : "");
  disk(ctx); /* resolved now: the note, if any, is there at once */
  return jit_done(ctx, RJ_OK);
}

RJ_API rj_status rj_ctx_cache_stats(rj_ctx *ctx, rj_cache_stats *out) {
  JIT_ENTER(ctx);
  JIT_NEED(ctx, out, "out");
  memset(&ctx->err, 0, sizeof ctx->err);
  rj_status s = ir_result_in(&ctx->err, out, sizeof(rj_cache_stats), "out");
  if (s) return jit_done(ctx, s);
  jit_disk *d = &ctx->disk;
  bool on = disk(ctx) != NULL;
  rj_cache_stats full = {.struct_size = sizeof full,
                         .compiles = ctx->compiles,
                         .memory_hits = ctx->memory_hits,
                         .disk_hits = d->hits,
                         .disk_writes = d->writes,
                         .disk_evictions = d->evictions,
                         .kernels = ctx->nkernels,
                         .disk_dir = on ? d->dir : NULL,
                         .disk_read_only = on && d->readonly,
                         .disk_note = d->note,
                         .memory_evictions = ctx->memory_evictions,
                         .kernels_pinned = ctx->npinned,
                         .max_kernels = jit_cache_bound(ctx),
                         .cubin_loads = ctx->cubin_loads,
                         .cubin_links = ctx->cubin_links,
                         .cubin_stale = ctx->cubin_stale};
  ir_result_out(out, &full, sizeof full);
  return jit_done(ctx, RJ_OK);
}
