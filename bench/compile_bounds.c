/* The compile-time bound of requests: compiles each request (one JSON text a line on standard
 * input) in a child process of its own, for sm_90 with no disk cache, and prints per request its
 * wall-clock seconds, its CPU seconds (user + system), its peak resident memory (MB) and the
 * status.  A line starting with '#' is echoed as a heading.  No GPU needed.
 *   compile_bounds [LIMIT_S [TARGET]] < requests.jsonl
 * LIMIT_S (default 120): the child is killed past it; TARGET: default sm_90.
 * Used to find where compile time or memory grows faster than the request (docs/RELIABILITY.md). */
#include <redjit.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The child: parse and compile, exit 0 compiled, 2 refused (the message on stderr), 3 failed. */
static int compile_one(const char *json, const char *target) {
  rj_ctx *ctx = rj_ctx_new();
  rj_ctx_set_disk_cache(ctx, NULL);
  rj_options o;
  rj_options_init(&o);
  o.target = target;
  rj_request r;
  rj_kernel *k = NULL;
  int rc = 0;
  if (rj_request_parse(ctx, json, &r) != RJ_OK)
    rc = 2;
  else if (rj_compile(ctx, &r, &o, &k) != RJ_OK)
    rc = 3;
  if (rc) fprintf(stderr, "  %s\n", rj_errmsg(ctx));
  rj_ctx_free(ctx);
  return rc;
}

int main(int argc, char **argv) {
  unsigned limit = argc > 1 ? (unsigned)atoi(argv[1]) : 120;
  const char *target = argc > 2 ? argv[2] : "sm_90";
  static char line[1 << 20];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = 0;
    if (!line[0]) continue;
    if (line[0] == '#') {
      printf("%s\n", line);
      fflush(stdout);
      continue;
    }
    fflush(stdout);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
      alarm(limit);
      _exit(compile_one(line, target));
    }
    int st = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) < 0) return 1;
    double took = now_s() - t0;
    const char *what = WIFSIGNALED(st)        ? "killed"
                       : WEXITSTATUS(st) == 0 ? "ok"
                       : WEXITSTATUS(st) == 2 ? "refused"
                                              : "failed";
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
                 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    printf("%7.2f s %7.2f cpu %6.0f MB %-7s %.200s\n", took, cpu, (double)ru.ru_maxrss / 1024.0,
           what, line);
  }
  return 0;
}
