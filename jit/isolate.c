/* rj_compile_ir's compile in a process of its own.  LLVM ends the process on some IR it cannot
 * compile (report_fatal_error aborts or exits; a few inputs fault inside it, or never finish), and
 * nothing in process can catch that.  So the caller's module goes to redjit-irc (tools/irc.c, the
 * protocol is there), started with posix_spawn under a wall-clock limit (kill, then waitpid),
 * an address-space limit and no core dumps; whatever way it ends becomes a status and a message.
 *
 * The helper is $REDJIT_IRC, else redjit-irc next to libredjit.so (a build tree), else in
 * REDJIT_LIBEXEC_REL from it (an install: ../libexec/redjit). */
#include "isolate.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#ifndef REDJIT_LIBEXEC_REL
#define REDJIT_LIBEXEC_REL "../libexec/redjit"
#endif
#define IRC_MAGIC "RJIRC1\n"            /* with its NUL: 8 bytes */
#define IRC_MAGIC2 "RJIRC2\n"           /* a request with a combine to link (op custom) */
#define IRC_REPLY_CAP ((size_t)1 << 30) /* the reply: 1 GiB at most */
#define IRC_TAIL 16384                  /* the last bytes of the helper's standard error kept */
/* the defaults: the bounds screen (jit/llvm/ir_screen.c) keeps what it accepts to about a quarter
 * of them (docs/RELIABILITY.md) */
#define IRC_TIMEOUT_MS 2000
#define IRC_MEMORY_MB 512

typedef struct irc_limits {
  long long timeout_ms, memory_mb; /* memory_mb 0: none */
} irc_limits;

typedef struct irc_proc {
  pid_t pid;
  int in, out, err; /* our ends: its standard input (a socket), output and error (pipes) */
} irc_proc;

typedef enum irc_end { IRC_EOF, IRC_TIME, IRC_BIG } irc_end;

typedef struct irc_io {
  const char *seg[5]; /* the request: its head, the module, then a combine's fields (RJIRC2) */
  size_t segn[5], sent;
  int nseg;
  char *reply;
  size_t rn, rcap;
  char tail[IRC_TAIL + 1]; /* NUL-terminated (tail_end) */
  size_t tn;
} irc_io;

/* ---------------------------------------------------------------- knobs */

#define OPT_FIELD(opt, f)                                                                          \
  ((opt) && (opt)->struct_size >= offsetof(rj_options, f) + sizeof(opt)->f ? (opt)->f : 0)

static long long env_num(const char *name, long long dflt) {
  const char *v = getenv(name);
  char *end;
  if (!v || !*v) return dflt;
  long long x = strtoll(v, &end, 10);
  return *end || x < 0 || x > INT_MAX ? dflt : x;
}

bool jit_ir_in_process(const rj_options *opt) {
  const char *v = getenv("REDJIT_IR_IN_PROCESS");
  return OPT_FIELD(opt, ir_in_process) == 1 || (v && strcmp(v, "1") == 0);
}

static irc_limits limits(const rj_options *opt) {
  int t = OPT_FIELD(opt, ir_timeout_ms), m = OPT_FIELD(opt, ir_memory_mb);
  irc_limits l;
  l.timeout_ms = t > 0 ? t : env_num("REDJIT_IR_TIMEOUT_MS", IRC_TIMEOUT_MS);
  if (l.timeout_ms <= 0) l.timeout_ms = IRC_TIMEOUT_MS;
  l.memory_mb = m > 0 ? m : m < 0 ? 0 : env_num("REDJIT_IR_MEMORY_MB", IRC_MEMORY_MB);
  return l;
}

/* The helper's path into path; false (looked says where it looked) when there is none. */
static bool helper_path(char *path, size_t n, char *looked, size_t ln) {
  const char *env = getenv("REDJIT_IRC");
  if (env && *env) {
    snprintf(path, n, "%s", env);
    snprintf(looked, ln, "$REDJIT_IRC (%s)", env);
    return access(path, X_OK) == 0;
  }
  Dl_info di;
  char lib[PATH_MAX];
  if (!dladdr((void *)jit_ir_isolated, &di) || !di.dli_fname || !realpath(di.dli_fname, lib)) {
    snprintf(looked, ln, "$REDJIT_IRC (unset; libredjit.so's own path is unknown)");
    return false;
  }
  char *slash = strrchr(lib, '/');
  if (slash) *slash = 0;
  snprintf(path, n, "%s/redjit-irc", lib);
  if (access(path, X_OK) == 0) return true;
  if (REDJIT_LIBEXEC_REL[0] == '/') /* an install with absolute directories */
    snprintf(path, n, REDJIT_LIBEXEC_REL "/redjit-irc");
  else
    snprintf(path, n, "%s/" REDJIT_LIBEXEC_REL "/redjit-irc", lib);
  if (access(path, X_OK) == 0) return true;
  snprintf(looked, ln, "%s/redjit-irc, %s and $REDJIT_IRC (unset)", lib, path);
  return false;
}

/* ---------------------------------------------------------------- the process */

static void shut(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* Lowers resource res of pid to v (or to the hard limit already there, if lower). */
static int cap_limit(pid_t pid, int res, rlim_t v) {
  struct rlimit old, now;
  if (prlimit(pid, res, NULL, &old)) return -1;
  if (old.rlim_max != RLIM_INFINITY && old.rlim_max < v) v = old.rlim_max;
  now.rlim_cur = now.rlim_max = v;
  return prlimit(pid, res, &now, NULL);
}

/* The child's limits, set before it is sent the module (it reads all of it before compiling). */
static int set_limits(pid_t pid, const irc_limits *l) {
  rlim_t cpu = (rlim_t)(l->timeout_ms / 1000 + 2); /* a backstop: the wall clock decides */
  if (cap_limit(pid, RLIMIT_CORE, 0) || cap_limit(pid, RLIMIT_CPU, cpu)) return -1;
  return l->memory_mb ? cap_limit(pid, RLIMIT_AS, (rlim_t)l->memory_mb << 20) : 0;
}

static int start(const char *path, int in, int out, int err, pid_t *pid) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&at);
  posix_spawn_file_actions_adddup2(&fa, in, 0);
  posix_spawn_file_actions_adddup2(&fa, out, 1);
  posix_spawn_file_actions_adddup2(&fa, err, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* none of the caller's descriptors */
#endif
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  char *argv[] = {(char *)path, NULL};
  int rc = posix_spawn(pid, path, &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  return rc;
}

/* Waits for p's end until deadline, then kills it (SIGKILL, then waitpid: never a zombie).
 * Returns whether *st is its wait status: not when the caller's SIGCHLD disposition (SIG_IGN, or
 * a handler that waits) reaped it first.  *killed: whether the deadline killed it. */
static bool reap(pid_t pid, double deadline, bool kill_now, int *st, bool *killed) {
  if (kill_now) kill(pid, SIGKILL);
  for (;;) {
    pid_t r = waitpid(pid, st, kill_now ? 0 : WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return false; /* ECHILD */
    if (jit_now_ms() >= deadline) {
      kill(pid, SIGKILL);
      kill_now = *killed = true;
      continue;
    }
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
}

static rj_status spawn(ir_err *e, const char *path, const irc_limits *l, irc_proc *p) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1}, rc = 0;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) || pipe2(out, O_CLOEXEC) ||
      pipe2(err, O_CLOEXEC))
    rc = errno;
  if (!rc) rc = start(path, in[1], out[1], err[1], &p->pid);
  shut(&in[1]), shut(&out[1]), shut(&err[1]);
  p->in = in[0], p->out = out[0], p->err = err[0];
  if (!rc && set_limits(p->pid, l)) {
    rc = errno;
    int st;
    bool killed;
    reap(p->pid, 0, true, &st, &killed);
  }
  if (rc) {
    shut(&p->in), shut(&p->out), shut(&p->err);
    return ir_fail(e, RJ_ECRASH, "ir: cannot start the compiler process %s: %s", path,
                   strerror(rc));
  }
  fcntl(p->out, F_SETFL, O_NONBLOCK);
  fcntl(p->err, F_SETFL, O_NONBLOCK);
  return RJ_OK;
}

/* ---------------------------------------------------------------- the exchange */

/* Sends what the socket takes of the request; 1 when all is sent, -1 when the child stopped
 * reading (it ended: its end is the news). */
static int send_some(int fd, irc_io *io) {
  size_t total = 0;
  for (int j = 0; j < io->nseg; j++)
    total += io->segn[j];
  while (io->sent < total) {
    int i = 0;
    size_t off = io->sent;
    while (off >= io->segn[i])
      off -= io->segn[i++];
    size_t len = io->segn[i] - off;
    ssize_t r =
        send(fd, io->seg[i] + off, len < (1 << 20) ? len : (1 << 20), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    io->sent += (size_t)r;
  }
  return 1;
}

/* Reads the reply; 1 at its end, 0 for more later, -1 past IRC_REPLY_CAP or out of memory. */
static int read_reply(int fd, irc_io *io) {
  for (;;) {
    if (io->rcap - io->rn < 65536) {
      size_t cap = io->rcap ? io->rcap * 2 : 1 << 20;
      char *r = cap <= IRC_REPLY_CAP + (1 << 20) ? realloc(io->reply, cap) : NULL;
      if (!r) return -1;
      io->reply = r, io->rcap = cap;
    }
    ssize_t r = read(fd, io->reply + io->rn, io->rcap - io->rn);
    if (r == 0) return 1;
    if (r < 0) return errno == EAGAIN || errno == EINTR ? 0 : 1;
    io->rn += (size_t)r;
  }
}

/* Keeps the last IRC_TAIL bytes of the child's standard error; 1 at its end. */
static int read_tail(int fd, irc_io *io) {
  char b[4096];
  for (;;) {
    ssize_t r = read(fd, b, sizeof b);
    if (r == 0) return 1;
    if (r < 0) return errno == EAGAIN || errno == EINTR ? 0 : 1;
    size_t k = (size_t)r;
    if (io->tn + k > IRC_TAIL) {
      size_t drop = io->tn + k - IRC_TAIL;
      memmove(io->tail, io->tail + drop, io->tn - drop);
      io->tn -= drop;
    }
    memcpy(io->tail + io->tn, b, k);
    io->tn += k;
  }
}

/* Sends the request and reads the reply and standard error until both end, the deadline passes
 * or the reply grows past its cap. */
static irc_end exchange(irc_proc *p, irc_io *io, double deadline) {
  while (p->out >= 0 || p->err >= 0) {
    struct pollfd f[3] = {{p->in, POLLOUT, 0}, {p->out, POLLIN, 0}, {p->err, POLLIN, 0}};
    double left = deadline - jit_now_ms();
    if (left <= 0) return IRC_TIME;
    int r = poll(f, 3, left > INT_MAX ? INT_MAX : (int)left + 1); /* a negative fd is skipped */
    if (r < 0 && errno != EINTR) return IRC_TIME;
    if (r <= 0) continue;
    if (f[0].revents && send_some(p->in, io) != 0) shut(&p->in); /* sent (EOF to it), or gone */
    if (f[1].revents) {
      int e = read_reply(p->out, io);
      if (e < 0) return IRC_BIG;
      if (e) shut(&p->out);
    }
    if (f[2].revents && read_tail(p->err, io)) shut(&p->err);
  }
  return IRC_EOF;
}

/* ---------------------------------------------------------------- the outcome */

static bool take(const char **p, const char *end, char **out) {
  uint64_t n;
  if (end - *p < (ptrdiff_t)sizeof n) return false;
  memcpy(&n, *p, sizeof n);
  *p += sizeof n;
  if (n > (uint64_t)(end - *p) || !(*out = malloc((size_t)n + 1))) return false;
  memcpy(*out, *p, (size_t)n);
  (*out)[n] = 0;
  *p += n;
  return true;
}

/* The reply, when it is whole: its status and message into e, its texts into k.  False when
 * it is cut short or malformed. */
static bool parse_reply(ir_err *e, const irc_io *io, rj_kernel *k, rj_status *s) {
  const char *p = io->reply, *end = io->reply + io->rn;
  uint32_t st;
  char *msg = NULL;
  if (io->rn < sizeof IRC_MAGIC + sizeof st || memcmp(p, IRC_MAGIC, sizeof IRC_MAGIC)) return false;
  memcpy(&st, p + sizeof IRC_MAGIC, sizeof st);
  p += sizeof IRC_MAGIC + sizeof st;
  bool ok = take(&p, end, &msg) && take(&p, end, &k->ll) && take(&p, end, &k->ll_opt) &&
            take(&p, end, &k->ptx) && p == end && st <= RJ_ECRASH && (st || k->ptx[0]);
  if (ok) *s = st ? ir_fail(e, (rj_status)st, "%s", msg) : RJ_OK;
  free(msg);
  return ok;
}

/* The line of the child's standard error that names its end: LLVM's "LLVM ERROR: ...", else
 * the last non-empty one. */
static void last_line(irc_io *io, char *out, size_t n) {
  char *llvm = NULL, *last = NULL, *save = NULL;
  for (char *line = strtok_r(io->tail, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (strstr(line, "LLVM ERROR:")) llvm = line;
    if (strspn(line, " \t\r") < strlen(line)) last = line;
  }
  snprintf(out, n, "%s%.400s", llvm || last ? ": " : "", llvm ? llvm : last ? last : "");
}

static void limit_text(char *b, size_t n, long long ms) {
  if (ms % 1000 == 0)
    snprintf(b, n, "%lld s", ms / 1000);
  else
    snprintf(b, n, "%lld ms", ms);
}

/* An end without a whole reply, named. */
static rj_status abnormal(ir_err *e, irc_io *io, irc_end end, bool known, int st,
                          const irc_limits *l) {
  char line[440], lim[32];
  io->tail[io->tn < IRC_TAIL ? io->tn : IRC_TAIL] = 0;
  bool oom = strstr(io->tail, "out of memory") || strstr(io->tail, "bad_alloc");
  last_line(io, line, sizeof line);
  limit_text(lim, sizeof lim, l->timeout_ms);
  if (end == IRC_TIME || (known && WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU))
    return ir_fail(e, RJ_ECRASH, "ir: the compile ran past its %s limit (rj_options.ir_timeout_ms)",
                   lim);
  if (end == IRC_BIG)
    return ir_fail(e, RJ_ECRASH, "ir: the compiler process's reply passed %zu MiB",
                   IRC_REPLY_CAP >> 20);
  if (oom && l->memory_mb)
    return ir_fail(e, RJ_ECRASH,
                   "ir: the compile needed more than %lld MiB, its memory limit "
                   "(rj_options.ir_memory_mb)%s",
                   l->memory_mb, line);
  const char *cut = io->rn ? " (its reply was cut short)" : "";
  if (known && WIFSIGNALED(st)) {
    const char *sig = sigabbrev_np(WTERMSIG(st));
    return ir_fail(e, RJ_ECRASH, "ir: the compiler process was killed by SIG%s%s%s",
                   sig ? sig : "?", cut, line);
  }
  if (known)
    return ir_fail(e, RJ_ECRASH, "ir: the compiler process exited with status %d without a reply%s",
                   WEXITSTATUS(st), line);
  return ir_fail(e, RJ_ECRASH,
                 "ir: the compiler process ended without a reply (its exit status went to the "
                 "caller's SIGCHLD disposition)%s",
                 line);
}

/* One exchange with a fresh helper: io's segments sent, its reply parsed into k. */
static rj_status run_helper(rj_ctx *ctx, irc_io *io, const rj_options *opt, rj_kernel *k) {
  char path[PATH_MAX + 64], looked[2 * PATH_MAX + 128];
  if (!helper_path(path, sizeof path, looked, sizeof looked))
    return ir_fail(&ctx->err, RJ_EUNSUPPORTED,
                   "ir: the compiler process redjit-irc is not installed: looked for %s (or set "
                   "rj_options.ir_in_process to compile in this process)",
                   looked);
  irc_limits l = limits(opt);
  irc_proc p;
  rj_status s = spawn(&ctx->err, path, &l, &p);
  if (s) return s;
  double deadline = jit_now_ms() + (double)l.timeout_ms;
  irc_end end = exchange(&p, io, deadline);
  shut(&p.in), shut(&p.out), shut(&p.err);
  int st = 0;
  bool killed = end != IRC_EOF;
  bool known = reap(p.pid, deadline, killed, &st, &killed);
  if (killed && end == IRC_EOF) end = IRC_TIME;
  if (end != IRC_EOF || !parse_reply(&ctx->err, io, k, &s))
    s = abnormal(&ctx->err, io, end, known, st, &l);
  return s;
}

/* The request's head into head (256 bytes): magic, target, entry, PTX version, the module's
 * length; its size. */
static size_t request_head(char *head, const char *magic, const ir_target *tg, const char *entry,
                           int ptx_version, size_t n) {
  char ptx[16];
  size_t h = sizeof IRC_MAGIC;
  memcpy(head, magic, h);
  snprintf(ptx, sizeof ptx, "%d", ptx_version);
  const char *f[3] = {tg->name, entry, ptx};
  for (int i = 0; i < 4; i++) {
    uint64_t len = i < 3 ? strlen(f[i]) : n;
    memcpy(head + h, &len, sizeof len);
    h += sizeof len;
    if (i < 3) memcpy(head + h, f[i], len), h += len;
  }
  return h;
}

rj_status jit_ir_isolated(rj_ctx *ctx, const char *ir, size_t n, const char *entry,
                          const ir_target *tg, const rj_options *opt, rj_kernel *k) {
  char head[256];
  irc_io *io = calloc(1, sizeof *io);
  if (!io) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  io->seg[0] = head, io->segn[0] = request_head(head, IRC_MAGIC, tg, entry, k->ptx_version, n);
  io->seg[1] = ir, io->segn[1] = n, io->nseg = 2;
  rj_status s = run_helper(ctx, io, opt, k);
  free(io->reply);
  free(io);
  return s;
}

rj_status jit_ir_isolated_combine(rj_ctx *ctx, const char *mod, size_t n, const char *entry,
                                  const char *ir, size_t irn, const char *fn, const ir_target *tg,
                                  const rj_options *opt, rj_kernel *k) {
  char head[256], fnf[8 + RJ_COMBINE_NAMES_MAX];
  uint64_t irlen = irn, fnlen = strlen(fn);
  if (fnlen >= RJ_COMBINE_NAMES_MAX)
    return ir_fail(&ctx->err, RJ_EINVAL, "combine.function: too long");
  memcpy(fnf, &fnlen, 8);
  memcpy(fnf + 8, fn, fnlen);
  irc_io *io = calloc(1, sizeof *io);
  if (!io) return ir_fail(&ctx->err, RJ_ENOMEM, "out of memory");
  io->seg[0] = head, io->segn[0] = request_head(head, IRC_MAGIC2, tg, entry, k->ptx_version, n);
  io->seg[1] = mod, io->segn[1] = n;
  io->seg[2] = (const char *)&irlen, io->segn[2] = 8;
  io->seg[3] = ir, io->segn[3] = irn;
  io->seg[4] = fnf, io->segn[4] = 8 + fnlen, io->nseg = 5;
  rj_status s = run_helper(ctx, io, opt, k);
  free(io->reply);
  free(io);
  return s;
}
