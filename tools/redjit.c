/* redjit — the command-line tool (docs/CLI.md).  It uses only the public API in
 * redjit.h, as Lua's lauxlib uses only lua.h.  The command and option tables are in cli_args.c,
 * help in cli_help.c, JSON output in cli_json.c. */
#include "redjit.h"
#include "redjit_check.h"
#include "redjit_treduce.h"

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Inputs are read up to a cap (a FIFO or /dev/zero stops there). */
#define REQUEST_CAP ((size_t)16 << 20) /* a request file or standard input: 16 MiB */
#define IR_CAP ((size_t)256 << 20)     /* --ir MODULE: 256 MiB */

/* Exit status for a library status (docs/CLI.md). */
static int exit_code(rj_status s) {
  switch (s) {
  case RJ_OK:
    return 0;
  case RJ_ENODEV:
  case RJ_ECUDA:
  case RJ_ETIMEOUT: /* a GPU kernel gave up waiting for another GPU's */
    return 3;
  default:
    return 2;
  }
}

/* Reads f to its end into a NUL-terminated buffer, at most cap bytes: past that (reading
 * stops at cap + 1), on a read error (the OS's reason), or when there is nothing to read ("empty
 * input"), writes why into err, naming the input (what, e.g. request "x.json"), and returns NULL.
 */
static char *read_capped(FILE *f, size_t cap, const char *what, size_t *len, char *err, size_t n) {
  size_t size = 4096, got = 0;
  char *buf = malloc(size);
  while (buf) {
    size_t room = size - got - 1, k = fread(buf + got, 1, room, f);
    got += k;
    if (got > cap) {
      snprintf(err, n, "%s: more than %zu MiB, the cap on this input", what, cap >> 20);
      free(buf);
      return NULL;
    }
    if (k < room) break; /* the end, or an error */
    /* grow, up to room for cap + 1 bytes and the NUL */
    size_t grow = size * 2 < cap + 2 ? size * 2 : cap + 2;
    char *b = realloc(buf, grow);
    if (!b) free(buf);
    buf = b;
    size = grow;
  }
  if (!buf || ferror(f) || got == 0) {
    int e = errno;
    if (!buf)
      snprintf(err, n, "%s: cannot read it (out of memory)", what);
    else if (got == 0 && !ferror(f))
      snprintf(err, n, "%s: empty input", what);
    else
      snprintf(err, n, "%s: cannot read it: %s", what, strerror(e));
    free(buf);
    return NULL;
  }
  buf[got] = 0;
  if (len) *len = got;
  return buf;
}

/* The name of an input in messages: "standard input" for -, else the path quoted. */
static const char *input_name(const char *kind, const char *path) {
  static char name[240];
  if (strcmp(path, "-") == 0)
    snprintf(name, sizeof name, "%s on standard input", kind);
  else
    snprintf(name, sizeof name, "%s \"%.200s\"", kind, path);
  return name;
}

static char *load_request(const char *arg, char *err, size_t n) {
  if (arg[0] == '{') return strdup(arg);
  FILE *f = strcmp(arg, "-") == 0 ? stdin : fopen(arg, "rb");
  if (!f) {
    snprintf(err, n, "%s: cannot open it: %s", input_name("request", arg), strerror(errno));
    return NULL;
  }
  char *text = read_capped(f, REQUEST_CAP, input_name("request", arg), NULL, err, n);
  if (f != stdin) fclose(f);
  return text;
}

/* A failure, said as docs/CLI.md says: run / bench / plan print one JSON line (and, when standard
 * error is a terminal, the message there too); the others print "redjit: MSG" on standard error.
 * A usage error adds where to read the command's usage (c NULL: no command yet). */
static int fail(const cli_command *c, const char *msg, rj_status s, bool usage) {
  if (c && c->json) {
    cJSON *o = cJSON_CreateObject();
    json_bool(o, "ok", false);
    json_str(o, "error", msg);
    json_str(o, "status", rj_status_name(s));
    json_line(stdout, o);
    if (!isatty(STDERR_FILENO)) return exit_code(s);
  }
  fprintf(stderr, "redjit: %s\n", msg);
  if (usage) fprintf(stderr, "try 'redjit %s%s'\n", c ? "help " : "--help", c ? c->name : "");
  return exit_code(s);
}

/* What one command works on. */
typedef struct job {
  rj_ctx *ctx;
  const cli_args *a;
  const cli_command *c;
  rj_check_opts opt;
  rj_request req;
  rj_treduce_path path;
} job;

/* The compile and check options the command line gave (the library's defaults for the rest). */
static void check_opts(const cli_args *a, rj_check_opts *o) {
  rj_check_opts_init(o);
  if (a->val[OPT_TARGET]) o->compile.target = a->val[OPT_TARGET];
  if (a->val[OPT_PTX_VERSION]) o->compile.ptx_version = (int)a->num[OPT_PTX_VERSION];
  if (a->val[OPT_DEVICE]) o->compile.device = (int)a->num[OPT_DEVICE];
  if (a->val[OPT_EMULATE_PACKED]) o->compile.emulate_packed = 1;
  if (a->val[OPT_SEED]) o->seed = a->num[OPT_SEED];
  if (a->val[OPT_NANS]) o->nan_count = (int)a->num[OPT_NANS];
  if (a->val[OPT_NO_CHECK]) o->no_check = 1;
}

/* `redjit plan`: the split plan of a treduce request with rank r on GPU r mod gpus, as JSON. */
static int cmd_plan(job *j) {
  const rj_request *req = &j->req;
  int gpus = (int)j->a->num[OPT_GPUS];
  if (req->kind != RJ_KIND_TREDUCE)
    return fail(j->c, "kind: plan takes a treduce request", RJ_EINVAL, false);
  if (!gpus && rj_device_count(j->ctx, &gpus) != RJ_OK) gpus = 0;
  if (gpus < 1) gpus = 1;
  int *dev = malloc(sizeof(int) * (size_t)req->u.treduce.ranks);
  if (!dev) return fail(j->c, "out of memory", RJ_ENOMEM, false);
  for (int r = 0; r < req->u.treduce.ranks; r++)
    dev[r] = r % gpus;
  rj_treduce_plan *p = malloc(sizeof *p);
  if (p) rj_treduce_plan_init(p);
  rj_status s = p ? rj_treduce_plan_make(j->ctx, req, dev, j->path, p) : RJ_ENOMEM;
  rj_treduce_path chosen = RJ_TREDUCE_AUTO;
  const char *why = NULL;
  char *why_copy = NULL; /* the why of auto's choice (kept: the next call on the context ends it) */
  if (!s && rj_treduce_choose(j->ctx, req, dev, &chosen, &why) == RJ_OK) why_copy = strdup(why);
  free(dev);
  if (s) {
    free(p);
    return fail(j->c, p ? rj_errmsg(j->ctx) : "out of memory", s, false);
  }
  cJSON *o = cJSON_CreateObject();
  json_bool(o, "ok", true);
  json_str(o, "path", cli_path_names[p->path]);
  json_int(o, "ranks", req->u.treduce.ranks);
  json_int(o, "gpus", p->gpus);
  json_num(o, "bytes_per_rank", "%.0f", p->bytes_per_rank);
  json_num(o, "peer_load", "%.4f", p->peer_load);
  json_num(o, "split_load", "%.4f", p->split_load);
  json_num(o, "saved_bytes", "%.0f", p->saved_bytes);
  json_int(o, "dim", p->dim);
  cJSON *slices = json_add(o, "slices", cJSON_CreateArray());
  for (int i = 0; i < p->slices; i++) {
    const rj_treduce_slice *sl = &p->slice[i];
    cJSON *e = json_add(slices, NULL, cJSON_CreateObject());
    json_int(e, "gpu", sl->device);
    json_int(e, "local_ranks", sl->local_ranks);
    json_int(e, "start", (long long)sl->start);
    json_int(e, "len", (long long)sl->len);
    json_num(e, "share", "%.4f", sl->share);
    json_num(e, "in", "%.4f", sl->in);
    json_num(e, "out", "%.4f", sl->out);
    json_num(e, "load", "%.4f", sl->load);
  }
  cJSON *ring = json_add(o, "ring", cJSON_CreateObject());
  json_num(ring, "load", "%.4f", p->ring_load);
  json_int(ring, "hops", p->hops);
  json_int(ring, "chunks", p->chunks);
  json_str(ring, "why_not", p->ring_why);
  if (why_copy) json_str(o, "why", why_copy); /* why auto takes its path (table or model) */
  json_line(stdout, o);
  free(why_copy);
  free(p);
  return 0;
}

/* `explain` of a treduce request: the path auto takes, rank r on GPU r mod --gpus (else the GPUs
 * present), and why, at the end of the chosen line: " (path auto on 4 GPUs: ring: measured ...)";
 * NULL (nothing to add) on one GPU without --gpus, where auto has nothing to choose. */
static char *treduce_note(job *j, const char *lines) {
  const rj_request *req = &j->req;
  int gpus = (int)j->a->num[OPT_GPUS];
  if (!gpus && rj_device_count(j->ctx, &gpus) != RJ_OK) gpus = 0;
  if (gpus < 1 || (gpus == 1 && !j->a->val[OPT_GPUS])) return NULL;
  int *dev = malloc(sizeof(int) * (size_t)req->u.treduce.ranks);
  if (!dev) return NULL;
  for (int r = 0; r < req->u.treduce.ranks; r++)
    dev[r] = r % gpus;
  char *copy = strdup(lines); /* the lines end with the next call on the context */
  rj_treduce_path path = RJ_TREDUCE_AUTO;
  const char *why = NULL;
  rj_status s = copy ? rj_treduce_choose(j->ctx, req, dev, &path, &why) : RJ_ENOMEM;
  free(dev);
  const char *at = copy && !s ? strstr(copy, " chosen") : NULL;
  if (!at) return copy;
  at += strlen(" chosen");
  size_t head = (size_t)(at - copy), n = strlen(copy) + strlen(why) + 64;
  char *out = malloc(n);
  if (out)
    snprintf(out, n, "%.*s (path auto on %d GPU%s: %s)%s", (int)head, copy, gpus,
             gpus > 1 ? "s" : "", why, at);
  free(copy);
  return out;
}

/* `redjit ptx --ir MODULE --entry KERNEL`: a caller's finished module through redjit's codegen. */
static int cmd_ptx_ir(job *j) {
  const cli_args *a = j->a;
  if (!a->val[OPT_IR] || !a->val[OPT_ENTRY] || a->operand)
    return fail(j->c, "--ir MODULE goes with `ptx` and --entry KERNEL, without a REQUEST",
                RJ_EINVAL, true);
  const char *path = a->val[OPT_IR];
  FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!f) {
    char msg[320];
    snprintf(msg, sizeof msg, "%s: cannot open it: %s", input_name("--ir MODULE", path),
             strerror(errno));
    return fail(j->c, msg, RJ_EINVAL, false);
  }
  size_t len = 0;
  char err[320];
  char *ir = read_capped(f, IR_CAP, input_name("--ir MODULE", path), &len, err, sizeof err);
  if (f != stdin) fclose(f);
  if (!ir) return fail(j->c, err, RJ_EINVAL, false);
  rj_kernel *k;
  rj_status s = rj_compile_ir(j->ctx, ir, len, a->val[OPT_ENTRY], &j->opt.compile, &k);
  free(ir);
  if (s) return fail(j->c, rj_errmsg(j->ctx), s, false);
  fputs(rj_kernel_text(k, (rj_emit)a->choice[OPT_EMIT]), stdout);
  return 0;
}

static int cmd_ptx(job *j) {
  rj_kernel *k;
  rj_status s = rj_compile(j->ctx, &j->req, &j->opt.compile, &k);
  if (s) return fail(j->c, rj_errmsg(j->ctx), s, false);
  const char *text = rj_kernel_text(k, (rj_emit)j->a->choice[OPT_EMIT]); /* IR: made now */
  if (!text) /* a kernel read from the disk cache, its text made by the compiler library */
    return fail(
        j->c,
        "--emit: the kernel's LLVM IR could not be made (no compiler library, or out of memory)",
        RJ_EUNSUPPORTED, false);
  fputs(text, stdout);
  return 0;
}

/* No variant accepting is said by the lines themselves, not on standard error. */
static int cmd_explain(job *j) {
  const char *lines = NULL;
  rj_status s = rj_explain(j->ctx, &j->req, &j->opt.compile, &lines);
  char *noted = !s && lines && j->req.kind == RJ_KIND_TREDUCE ? treduce_note(j, lines) : NULL;
  if (noted || lines) fputs(noted ? noted : lines, stdout);
  free(noted);
  if (s && s != RJ_ENOVARIANT) fprintf(stderr, "redjit: %s\n", rj_errmsg(j->ctx));
  return exit_code(s);
}

/* The keys a treduce run adds (CLI.md). */
static void treduce_run_keys(cJSON *o, const rj_treduce_result *tr) {
  char digest[24];
  snprintf(digest, sizeof digest, "%016llx", (unsigned long long)tr->dst_digest);
  json_str(o, "path", tr->path);
  json_int(o, "staged_ranks", tr->staged_ranks);
  json_int(o, "peer_ranks", tr->peer_ranks);
  json_int(o, "slices", tr->slices);
  json_int(o, "gpus", tr->gpus);
  json_num(o, "root_share", "%.4f", tr->root_share);
  json_str(o, "digest", digest);
}

static int cmd_run(job *j) {
  rj_check_result r = {.struct_size = sizeof(rj_check_result)};
  rj_treduce_result tr = {.struct_size = sizeof(rj_treduce_result)}; /* treduce: which path ran */
  bool treduce = j->req.kind == RJ_KIND_TREDUCE;
  rj_status s = treduce ? rj_treduce_check(j->ctx, &j->req, &j->opt, j->path, &r, &tr)
                        : rj_check(j->ctx, &j->req, &j->opt, &r);
  if (s) return fail(j->c, rj_errmsg(j->ctx), s, false);
  cJSON *o = cJSON_CreateObject();
  json_bool(o, "ok", r.ok);
  json_str(o, "variant", r.variant);
  json_str(o, "target", r.target);
  json_int(o, "checked", (long long)r.checked);
  json_num(o, "max_abs_err", "%.6g", r.max_abs_err);
  json_num(o, "max_rel_err", "%.6g", r.max_rel_err);
  json_num(o, "compile_ms", "%.3f", r.compile_ms);
  json_str(o, "cache", r.cache);
  json_num(o, "cache_ms", "%.3f", r.cache_ms);
  json_num(o, "load_ms", "%.3f", r.load_ms);
  json_num(o, "kernel_ms", "%.4f", r.kernel_ms);
  json_int(o, "wrong", (long long)r.wrong);
  json_int(o, "outside_written", (long long)r.outside_written);
  if (j->opt.no_check) json_bool(o, "compared", false); /* --no-check: outputs not compared */
  if (treduce) treduce_run_keys(o, &tr);
  if (!r.ok) json_str(o, "error", r.first_error);
  json_line(stdout, o);
  if (!r.ok && isatty(STDERR_FILENO)) fprintf(stderr, "redjit: run: %s\n", r.first_error);
  return r.ok ? 0 : 1;
}

static int cmd_bench(job *j) {
  rj_bench_result b = {.struct_size = sizeof(rj_bench_result)};
  rj_treduce_result tr = {.struct_size = sizeof(rj_treduce_result)};
  bool treduce = j->req.kind == RJ_KIND_TREDUCE;
  rj_status s = treduce ? rj_treduce_bench(j->ctx, &j->req, &j->opt, j->path, &b, &tr)
                        : rj_bench(j->ctx, &j->req, &j->opt, &b);
  if (s) return fail(j->c, rj_errmsg(j->ctx), s, false);
  cJSON *o = cJSON_CreateObject();
  json_bool(o, "ok", true);
  json_str(o, "variant", b.variant);
  json_str(o, "target", b.target);
  if (treduce) {
    json_str(o, "path", tr.path);
    json_int(o, "slices", tr.slices);
    json_int(o, "gpus", tr.gpus);
    json_num(o, "root_share", "%.4f", tr.root_share);
    json_num(o, "call_ms", "%.5f", tr.call_ms);
  }
  json_num(o, "kernel_ms", "%.5f", b.kernel_ms);
  json_num(o, "bytes", "%.0f", b.bytes);
  json_num(o, "gbps", "%.2f", b.gbps);
  json_int(o, "runs", b.runs);
  json_line(stdout, o);
  return 0;
}

static int cmd_variants(rj_ctx *ctx) {
  for (int i = 0; i < rj_variant_count(ctx); i++) {
    rj_variant_info v = {.struct_size = sizeof(rj_variant_info)};
    if (rj_variant_get(ctx, i, &v) == RJ_OK)
      printf("%s prio=%d kinds=%s  %s\n", v.name, v.priority, v.kinds, v.summary);
  }
  return 0;
}

/* `redjit help [COMMAND]`, `redjit help --table`. */
static int cmd_help(const cli_args *a) {
  if (a->val[OPT_TABLE]) {
    cli_markdown_table(stdout);
    return 0;
  }
  if (!a->operand) {
    cli_overview(stdout);
    return 0;
  }
  const cli_command *c = cli_command_find(a->operand);
  if (!c) {
    char names[160];
    cli_command_list(names, sizeof names);
    fprintf(stderr, "redjit: help: unknown command \"%.60s\" (commands: %s)\n", a->operand, names);
    return 2;
  }
  cli_command_help(stdout, c);
  return 0;
}

/* Reads the request and runs a command that takes one. */
static int request_command(job *j) {
  const cli_args *a = j->a;
  if (!a->operand) return fail(j->c, "missing REQUEST", RJ_EINVAL, true);
  char err[256];
  char *text = load_request(a->operand, err, sizeof err);
  if (!text) return fail(j->c, err, RJ_EINVAL, false);
  rj_status s = rj_request_parse(j->ctx, text, &j->req);
  int rc;
  if (s)
    rc = fail(j->c, rj_errmsg(j->ctx), s, false);
  else if (a->val[OPT_PATH] && j->req.kind != RJ_KIND_TREDUCE)
    rc = fail(j->c, "--path: only run, bench and plan of a treduce request take a path", RJ_EINVAL,
              true);
  else if (j->c->bit == CMD_PLAN)
    rc = cmd_plan(j);
  else if (j->c->bit == CMD_PTX)
    rc = cmd_ptx(j);
  else if (j->c->bit == CMD_EXPLAIN)
    rc = cmd_explain(j);
  else
    rc = j->c->bit == CMD_RUN ? cmd_run(j) : cmd_bench(j);
  free(text);
  return rc;
}

/* The command argv[1] names (--help and -h: help, --version: version); NULL when none, said. */
static const cli_command *command_of(int argc, char **argv) {
  if (argc < 2) {
    fail(NULL, "missing command", RJ_EINVAL, true);
    return NULL;
  }
  const char *name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) name = "help";
  if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) name = "version";
  const cli_command *c = cli_command_find(name);
  if (!c) {
    char names[160], msg[256];
    cli_command_list(names, sizeof names);
    snprintf(msg, sizeof msg, "unknown command \"%.60s\" (commands: %s)", argv[1], names);
    fail(NULL, msg, RJ_EINVAL, true);
  }
  return c;
}

/* -o FILE: standard output becomes FILE (created or truncated), so that everything the command
 * prints there, a JSON line saying an error included, goes to FILE.  When FILE cannot be opened,
 * standard output stays as it is and err says why (the OS's reason). */
static int open_output(const char *path, char *err, size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0 || fflush(stdout) != 0 || dup2(fd, STDOUT_FILENO) < 0) {
    snprintf(err, n, "--output: cannot open \"%.200s\": %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  close(fd);
  return 0;
}

/* The command's status, or 2 when -o FILE could not be written to the end (a full disk). */
static int flush_output(const cli_args *a, int rc) {
  if (!a->val[OPT_OUTPUT] || (fflush(stdout) == 0 && !ferror(stdout))) return rc;
  fprintf(stderr, "redjit: --output: cannot write \"%.200s\": %s\n", a->val[OPT_OUTPUT],
          strerror(errno));
  return rc ? rc : 2;
}

int main(int argc, char **argv) {
  const cli_command *c = command_of(argc, argv);
  if (!c) return 2;
  if (cli_wants_help(argc, argv)) {
    cli_command_help(stdout, c);
    return 0;
  }
  cli_args a;
  char why[256];
  if (cli_parse(c, argc, argv, &a, why, sizeof why)) return fail(c, why, RJ_EINVAL, true);
  if (c->bit == CMD_HELP) return cmd_help(&a);
  if (c->bit == CMD_VERSION) {
    printf("redjit %s\n", rj_version());
    return 0;
  }
  if (a.val[OPT_OUTPUT] && open_output(a.val[OPT_OUTPUT], why, sizeof why))
    return fail(c, why, RJ_EINVAL, false);
  job j = {.a = &a, .c = c, .path = (rj_treduce_path)a.choice[OPT_PATH]};
  check_opts(&a, &j.opt);
  if (!(j.ctx = rj_ctx_new())) return fail(c, "out of memory", RJ_ENOMEM, false);
  int rc;
  if (c->bit == CMD_VARIANTS)
    rc = cmd_variants(j.ctx);
  else if (a.val[OPT_IR] || a.val[OPT_ENTRY])
    rc = cmd_ptx_ir(&j);
  else
    rc = request_command(&j);
  rj_ctx_free(j.ctx);
  return flush_output(&a, rc);
}
