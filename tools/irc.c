/* redjit-irc — the compiler process of rj_compile_ir.  libredjit.so starts it (posix_spawn, with
 * time, address-space and core-dump limits) for each caller module that is not in the context's
 * cache, so that IR which makes LLVM abort, exit or fault ends this process, not the caller's.
 * It compiles with rj_compile_ir in process, on the public API only.
 *
 * The protocol (native byte order; a field is a uint64 length, then that many bytes):
 *   stdin   "RJIRC1\n\0", fields: target ("sm_90"), entry, PTX version (decimal), module
 *   stdout  "RJIRC1\n\0", uint32 status, fields: message, IR, IR after O3, PTX
 * The reply is written once, after the compile: a process that ends before writing all of it
 * ended abnormally, and its standard error (LLVM's "LLVM ERROR: ..." line) names why. */
#include "redjit.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IRC_MAGIC "RJIRC1\n"           /* with its NUL: 8 bytes */
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

int main(int argc, char **argv) {
  (void)argv;
  char magic[sizeof IRC_MAGIC];
  size_t n[4] = {0};
  char *f[4] = {NULL};
  if (argc != 1 || isatty(0) || read_all(magic, sizeof magic) ||
      memcmp(magic, IRC_MAGIC, sizeof magic) != 0) {
    fputs("redjit-irc: the compiler process of libredjit.so's rj_compile_ir; it speaks a binary "
          "protocol on its standard input and output, for the library only\n",
          stderr);
    return 2;
  }
  for (int i = 0; i < 4; i++)
    if (!(f[i] = read_field(i < 3 ? IRC_SMALL : IRC_MODULE, &n[i]))) {
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
  rj_status s = ctx ? rj_compile_ir(ctx, f[3], n[3], f[1], &o, &k) : RJ_ENOMEM;
  int bad = reply(s, ctx ? rj_errmsg(ctx) : "out of memory", s ? NULL : k);
  rj_ctx_free(ctx);
  for (int i = 0; i < 4; i++)
    free(f[i]);
  return bad ? 1 : 0;
}
