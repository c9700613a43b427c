/* What a compile leaves for people and other tools: the header comment at the top of every PTX
 * redjit emits (enough to load and launch a dumped PTX elsewhere), the files REDJIT_DUMP_DIR asks
 * for, and the one-line-per-event log REDJIT_LOG asks for.  None of it can fail a call: a dump
 * that cannot be written leaves one note on stderr, a log line that cannot be formatted is cut. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "jit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- the log */

bool jit_log_on(rj_ctx *ctx) {
  if (!ctx->log_state) {
    const char *v = getenv("REDJIT_LOG");
    ctx->log_state = v && v[0] && strcmp(v, "0") != 0 ? 1 : 2;
  }
  return ctx->log_state == 1;
}

void jit_log(rj_ctx *ctx, const char *fmt, ...) {
  if (!jit_log_on(ctx)) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "redjit: %s\n", line); /* one write per line: lines of threads do not mix */
}

/* ---------------------------------------------------------------- the PTX header */

/* s with every character that could end a comment line (control characters, DEL) replaced by
 * '?': a request's text never injects a line into the PTX (canonical JSON is one line already). */
static void put_plain(char *dst, size_t n, const char *s) {
  size_t i = 0;
  for (; s && s[i] && i + 1 < n; i++)
    dst[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
  dst[i < n ? i : n - 1] = 0;
}

/* The header's lines, each starting JIT_PTX_MARK: version, variant, target, entry; the request
 * (canonical JSON; none for caller IR); a runtime-size kernel's bucket; the launch (grid, block,
 * dynamic shared bytes; none for caller IR) and, for tensor kernels, the parameters: (src, dst)
 * and the size parameters with their values for that request (for a runtime-size treduce kernel:
 * (dst, src_0 .. src_{N-1}, n) and n's). */
static char *header_text(const rj_kernel *k) {
  char *canon = NULL, plain[4096], bucket[sizeof k->plan.key];
  ir_err e = {0};
  if (k->req.kind && ir_canonical(&k->req, &canon, &e) != RJ_OK) canon = NULL;
  put_plain(plain, sizeof plain, canon ? canon : "");
  free(canon);
  put_plain(bucket, sizeof bucket, k->plan.key);
  size_t cap = 8192, used;
  char *h = malloc(cap);
  if (!h) return NULL;
  char variant[sizeof k->variant], target[sizeof k->target], entry[sizeof k->entry];
  put_plain(variant, sizeof variant, k->variant);
  put_plain(target, sizeof target, k->target);
  put_plain(entry, sizeof entry, k->entry); /* rj_compile_ir's: the caller's function name */
  used = (size_t)snprintf(h, cap, JIT_PTX_MARK " redjit %s, variant %s, target %s, entry %s\n",
                          rj_version(), variant, target, entry);
  if (plain[0]) used += (size_t)snprintf(h + used, cap - used, JIT_PTX_MARK " request %s\n", plain);
  if (bucket[0])
    used += (size_t)snprintf(h + used, cap - used, JIT_PTX_MARK " bucket %s\n", bucket);
  const pass_plan *p = &k->plan; /* the launch geometry is the plan's */
  if (p->block[0])
    used += (size_t)snprintf(
        h + used, cap - used, JIT_PTX_MARK " launch grid %u %u %u, block %u %u %u, shared %u\n",
        p->grid[0], p->grid[1], p->grid[2], p->block[0], p->block[1], p->block[2], p->shared_bytes);
  if (k->req.kind == RJ_KIND_TENSOR && k->req.u.tensor.list_count) /* rj_reduce_multi's */
    used += (size_t)snprintf(h + used, cap - used, JIT_PTX_MARK " params table dst total i64=n\n");
  else if (k->req.kind == RJ_KIND_TENSOR) { /* rj_reduce's arguments: (src, dst, sizes...) */
    used += (size_t)snprintf(h + used, cap - used, JIT_PTX_MARK " params src dst");
    for (int i = 0; i < k->req.u.tensor.nothers && used < cap; i++) /* after dst (values) */
      used += (size_t)snprintf(h + used, cap - used, " others[%d]", i);
    for (int i = 0; i < k->plan.np && used < cap; i++)
      used += (size_t)snprintf(h + used, cap - used, " i64=%lld", (long long)k->plan.p[i]);
    if (used < cap) used += (size_t)snprintf(h + used, cap - used, "\n");
  }
  if (k->req.kind == RJ_KIND_TREDUCE && k->plan.np && used < cap) /* (dst, src_0.., n) */
    used +=
        (size_t)snprintf(h + used, cap - used, JIT_PTX_MARK " params dst src_0..src_%d i64=%lld\n",
                         k->req.u.treduce.ranks - 1, (long long)k->plan.p[0]);
  if (used >= cap) h[cap - 2] = '\n', h[cap - 1] = 0;
  return h;
}

rj_status jit_ptx_header(rj_ctx *ctx, rj_kernel *k) {
  char *h = header_text(k);
  size_t hn = h ? strlen(h) : 0, pn = strlen(k->ptx);
  char *ptx = h ? malloc(hn + pn + 1) : NULL;
  if (!ptx) {
    free(h);
    return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  }
  memcpy(ptx, h, hn);
  memcpy(ptx + hn, k->ptx, pn + 1);
  free(h);
  free(k->ptx);
  k->ptx = ptx;
  return RJ_OK;
}

/* ---------------------------------------------------------------- REDJIT_DUMP_DIR */

static atomic_int dump_noted;

static void dump_note(const char *dir, const char *path, int err) {
  if (atomic_exchange(&dump_noted, 1)) return;
  fprintf(stderr, "redjit: REDJIT_DUMP_DIR %s: cannot write %s (%s); the kernel is unaffected\n",
          dir, path, strerror(err));
}

/* text into dir/base+suffix: written to a new file of a name of its own (O_EXCL | O_NOFOLLOW:
 * never through a link someone planted) and renamed over the name, which replaces a link there
 * rather than following it. */
static bool dump_one(const char *dir, const char *base, const char *suffix, const char *text) {
  static atomic_uint seq;
  char path[1400], tmp[1450];
  snprintf(path, sizeof path, "%s/%s%s", dir, base, suffix);
  snprintf(tmp, sizeof tmp, "%s/.%s%s.%ld.%u.tmp", dir, base, suffix, (long)getpid(),
           atomic_fetch_add(&seq, 1));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  int err = f ? 0 : errno;
  if (!f && fd >= 0) close(fd);
  if (f) {
    size_t n = strlen(text);
    if (fwrite(text, 1, n, f) != n || (n && text[n - 1] != '\n' && fputc('\n', f) == EOF))
      err = errno ? errno : EIO;
    if (fclose(f) && !err) err = errno ? errno : EIO;
    if (!err && rename(tmp, path)) err = errno;
    if (err) unlink(tmp);
  }
  if (err) dump_note(dir, path, err);
  return !err;
}

/* The dump directory is trusted as the disk cache's is: a directory owned by
 * this user and writable by no one else. */
static bool dump_dir_ok(const char *dir) {
  if (strlen(dir) > 1024) return dump_note(dir, dir, ENAMETOOLONG), false;
  if (mkdir(dir, 0700) && errno != EEXIST) return dump_note(dir, dir, errno), false;
  struct stat st;
  if (stat(dir, &st)) return dump_note(dir, dir, errno), false;
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
    if (!atomic_exchange(&dump_noted, 1))
      fprintf(stderr,
              "redjit: REDJIT_DUMP_DIR %s: not a directory owned by this user and "
              "writable by no one else; nothing dumped (the kernel is unaffected)\n",
              dir);
    return false;
  }
  return true;
}

bool jit_dump_on(void) {
  const char *dir = getenv("REDJIT_DUMP_DIR");
  return dir && dir[0];
}

void jit_dump(rj_ctx *ctx, const rj_kernel *k) {
  (void)ctx;
  const char *dir = getenv("REDJIT_DUMP_DIR");
  if (!jit_dump_on() || !dump_dir_ok(dir)) return;
  char base[128], variant[RJ_NAME_MAX];
  put_plain(variant, sizeof variant, k->variant);
  for (char *c = variant; *c; c++) /* a file name: no directory separator */
    if (*c == '/' || *c == '?') *c = '_';
  snprintf(base, sizeof base, "%016llx.%s",
           (unsigned long long)jit_hash64(k->key, strlen(k->key), 0), variant);
  char *canon = NULL;
  ir_err e = {0};
  if (k->req.kind && ir_canonical(&k->req, &canon, &e) == RJ_OK) {
    bool ok = dump_one(dir, base, ".json", canon);
    free(canon);
    if (!ok) return;
  }
  if ((k->ll && !dump_one(dir, base, ".ll", k->ll)) ||
      (k->ll_opt && !dump_one(dir, base, ".opt.ll", k->ll_opt)))
    return;
  dump_one(dir, base, ".ptx", k->ptx);
}
