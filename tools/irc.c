/* redjit-irc — the compiler process of rj_compile_ir.  libredjit.so starts it (posix_spawn, with
 * time, address-space and core-dump limits) for each caller module that is not in the context's
 * cache, so that IR which makes LLVM abort, exit or fault ends this process, not the caller's.
 * It compiles with rj_compile_ir in process, on the public API only.
 *
 * The protocol (native byte order; a field is a uint64 length, then that many bytes):
 *   stdin   "RJIRC1\n\0", fields: target ("sm_90"), entry, PTX version (decimal), module
 *   stdout  "RJIRC1\n\0", uint32 status, fields: message, IR, IR after O3, PTX
 * A request that starts "RJIRC2\n\0" (op custom) has two more fields, the caller's combine IR and
 * its functions' names (the combine, then a struct state's lift and finish, space-separated): the
 * module is then redjit's own kernel (bitcode), and the combine is parsed, screened and linked into
 * it here (rj_irc_compile_combine) before the same compile. The reply is written once, after the
 * compile: a process that ends before writing all of it ended abnormally, and its standard error
 * (LLVM's "LLVM ERROR: ..." line) names why. */
#include "redjit.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IRC_MAGIC "RJIRC1\n"           /* with its NUL: 8 bytes */
#define IRC_MAGIC2 "RJIRC2\n"          /* a combine to link (op custom) */
#define IRC_SMALL 64                   /* target, entry, PTX version */
#define IRC_MODULE ((uint64_t)1 << 32) /* the module: 4 GiB at most */

static int read_all(void *p, size_t n) {
  for (char *c = p; n;) {
    ssize_t r = read(0, c, n);
    if (r <= 0) return -1;
    c += r;
    n -= (size_t)r;
  }
  return 0;
}

static int write_all(const void *p, size_t n) {
  for (const char *c = p; n;) {
    ssize_t r = write(1, c, n);
    if (r <= 0) return -1;
    c += r;
    n -= (size_t)r;
  }
  return 0;
}

/* One field into a new NUL-terminated buffer of at most cap bytes (NULL on a short read, a field
 * over cap or no memory). */
static char *read_field(uint64_t cap, size_t *len) {
  uint64_t n;
  if (read_all(&n, sizeof n) || n > cap) return NULL;
  char *p = malloc((size_t)n + 1);
  if (!p) return NULL;
  if (read_all(p, (size_t)n)) {
    free(p);
    return NULL;
  }
  p[n] = 0;
  *len = (size_t)n;
  return p;
}

static int write_field(const char *s) {
  uint64_t n = s ? strlen(s) : 0;
  return write_all(&n, sizeof n) || write_all(s ? s : "", (size_t)n);
}

static int reply(rj_status s, const char *msg, const rj_kernel *k) {
  uint32_t st = (uint32_t)s;
  return write_all(IRC_MAGIC, sizeof IRC_MAGIC) || write_all(&st, sizeof st) || write_field(msg) ||
         write_field(rj_kernel_text(k, RJ_EMIT_LLVM)) ||
         write_field(rj_kernel_text(k, RJ_EMIT_LLVM_OPT)) ||
         write_field(rj_kernel_text(k, RJ_EMIT_PTX));
}

/* libredjit.so's entry for this process (jit/isolate.h; exported, not public API) */
rj_status rj_irc_compile_combine(rj_ctx *ctx, const char *mod, size_t n, const char *entry,
                                 const char *ir, size_t irn, const char *fn, const rj_options *opt,
                                 rj_kernel **out);

int main(int argc, char **argv) {
  (void)argv;
  char magic[sizeof IRC_MAGIC];
  size_t n[6] = {0};
  char *f[6] = {NULL};
  bool combine = false;
  if (argc != 1 || isatty(0) || read_all(magic, sizeof magic) ||
      (memcmp(magic, IRC_MAGIC, sizeof magic) != 0 &&
       !(combine = memcmp(magic, IRC_MAGIC2, sizeof magic) == 0))) {
    fputs("redjit-irc: the compiler process of libredjit.so's rj_compile_ir; it speaks a binary "
          "protocol on its standard input and output, for the library only\n",
          stderr);
    return 2;
  }
  int nf = combine ? 6 : 4;
  for (int i = 0; i < nf; i++)
    if (!(f[i] = read_field(i == 3 || i == 4 ? IRC_MODULE : i == 5 ? 512 : IRC_SMALL, &n[i]))) {
      fprintf(stderr, "redjit-irc: the request was cut short or malformed (field %d)\n", i);
      return 2;
    }
  rj_ctx *ctx = rj_ctx_new();
  rj_options o;
  rj_options_init(&o);
  o.target = f[0];
  o.ptx_version = atoi(f[2]);
  o.ir_in_process = 1;
  rj_kernel *k = NULL;
  rj_status s = !ctx      ? RJ_ENOMEM
                : combine ? rj_irc_compile_combine(ctx, f[3], n[3], f[1], f[4], n[4], f[5], &o, &k)
                          : rj_compile_ir(ctx, f[3], n[3], f[1], &o, &k);
  int bad = reply(s, ctx ? rj_errmsg(ctx) : "out of memory", s ? NULL : k);
  rj_ctx_free(ctx);
  for (int i = 0; i < nf; i++)
    free(f[i]);
  return bad ? 1 : 0;
}
