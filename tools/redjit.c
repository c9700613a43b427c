/* redjit — the command-line tool (CONTRACT.md section 1).  It uses only the public API in
 * redjit.h, as Lua's lauxlib uses only lua.h. */
#include "redjit.h"
#include "redjit_check.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inputs are read up to a cap (a FIFO or /dev/zero stops there), and numbers within a range. */
#define REQUEST_CAP ((size_t)16 << 20) /* a request file or standard input: 16 MiB */
#define IR_CAP ((size_t)256 << 20)     /* --ir MODULE: 256 MiB */
#define MAX_DEVICE 1023
#define MAX_NANS (1 << 24)
#define MAX_PTX_VERSION 999

static const char usage[] =
    "usage: redjit ptx      REQUEST [--target T] [--emit ptx|llvm|llvm-opt] [--ptx-version N]\n"
    "       redjit ptx      --ir MODULE --entry KERNEL [--target T] [--emit ...] (LLVM IR / bitcode)\n"
    "       (ptx, explain, run, bench also take --emulate-packed)\n"
    "       redjit explain  REQUEST [--target T]\n"
    "       redjit run      REQUEST [--target T] [--seed N] [--device K] [--nans K]\n"
    "       redjit bench    REQUEST [--target T] [--device K]\n"
    "       (run and bench of a treduce request also take --path auto|peer|staged|split|split-equal|ring)\n"
    "       redjit plan     TREDUCE_REQUEST [--gpus N] [--path auto|split|split-equal|ring]\n"
    "       redjit variants\n"
    "REQUEST: a JSON file, - for standard input, or the JSON text itself ({...}).\n"
    "Files and standard input are read up to 16 MiB (REQUEST) or 256 MiB (--ir MODULE).\n"
    "Numbers (decimal): --seed 0..2^64-1, --device 0..1023, --nans 0..16777216,\n"
    "  --ptx-version 0..999 (0: the least needed), --gpus 1..64.\n"
    "Exit: 0 ok, 1 run found a wrong result, 2 invalid request or no variant, 3 no GPU or CUDA "
    "error.\n";

/* Exit status for a library status (CONTRACT.md). */
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
 * stops at cap + 1), or on a read error, writes why into err, naming the input (what, e.g.
 * request "x.json"), and returns NULL. */
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
  if (!buf || ferror(f)) {
    snprintf(err, n, "%s: cannot read it%s", what, buf ? "" : " (out of memory)");
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
    snprintf(err, n, "request: cannot open \"%s\"", arg);
    return NULL;
  }
  char *text = read_capped(f, REQUEST_CAP, input_name("request", arg), NULL, err, n);
  if (f != stdin) fclose(f);
  return text;
}

static void json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      fprintf(out, "\\%c", c);
    else if (c < 0x20)
      fprintf(out, "\\u%04x", c);
    else
      fputc(c, out);
  }
  fputc('"', out);
}

static void json_number(FILE *out, double v) {
  if (isfinite(v))
    fprintf(out, "%.6g", v);
  else
    fputs("null", out);
}

static int fail_json(const char *msg, rj_status s) {
  fputs("{\"ok\": false, \"error\": ", stdout);
  json_string(stdout, msg);
  printf(", \"status\": \"%s\"}\n", rj_status_name(s));
  return exit_code(s);
}

typedef struct args {
  const char *cmd, *request, *emit;
  const char *ir, *entry; /* ptx --ir MODULE --entry KERNEL */
  const char *path;       /* run / bench / plan of a treduce request: --path */
  int gpus;               /* plan: rank r on GPU r mod gpus (0: the GPUs present, else 1) */
  rj_check_opts check;
} args;

/* A number option's value: all of v in decimal (an optional '-', then digits), within lo..hi.
 * On an error, writes a message naming the option into err and returns -1. */
static int parse_int(const char *opt, const char *v, long long lo, long long hi, long long *out,
                     char *err, size_t n) {
  const char *d = v + (v[0] == '-');
  if (!*d || strspn(d, "0123456789") != strlen(d)) {
    snprintf(err, n, "%s: \"%.40s\" is not a number", opt, v);
    return -1;
  }
  errno = 0;
  long long x = strtoll(v, NULL, 10);
  if (errno == ERANGE || x < lo || x > hi) {
    snprintf(err, n, "%s: %.40s is out of range (%lld..%lld)", opt, v, lo, hi);
    return -1;
  }
  *out = x;
  return 0;
}

/* --seed: 0..2^64-1, as parse_int. */
static int parse_seed(const char *v, uint64_t *out, char *err, size_t n) {
  const char *d = v + (v[0] == '-');
  if (!*d || strspn(d, "0123456789") != strlen(d)) {
    snprintf(err, n, "--seed: \"%.40s\" is not a number", v);
    return -1;
  }
  errno = 0;
  unsigned long long x = strtoull(v, NULL, 10);
  if (v[0] == '-' || errno == ERANGE) {
    snprintf(err, n, "--seed: %.40s is out of range (0..%llu)", v, (unsigned long long)UINT64_MAX);
    return -1;
  }
  *out = x;
  return 0;
}

/* An int option of parse_args: --gpus, --device, --nans, --ptx-version; 0 when o is none. */
static int int_option(const char *o, args *a, int **dst, long long *lo, long long *hi) {
  static const struct {
    const char *name;
    long long lo, hi;
  } opts[] = {{"--gpus", 1, RJ_TREDUCE_MAX_SLICES},
              {"--device", 0, MAX_DEVICE},
              {"--nans", 0, MAX_NANS},
              {"--ptx-version", 0, MAX_PTX_VERSION}};
  int *fields[] = {&a->gpus, &a->check.compile.device, &a->check.nan_count,
                   &a->check.compile.ptx_version};
  for (int i = 0; i < 4; i++)
    if (strcmp(o, opts[i].name) == 0) {
      *dst = fields[i];
      *lo = opts[i].lo;
      *hi = opts[i].hi;
      return 1;
    }
  return 0;
}

/* Fills a; on an error, writes the message into err and returns -1. */
static int parse_args(int argc, char **argv, args *a, char *err, size_t n) {
  memset(a, 0, sizeof *a);
  err[0] = 0;
  rj_check_opts_init(&a->check);
  a->emit = "ptx";
  if (argc < 2) {
    snprintf(err, n, "missing command");
    return -1;
  }
  a->cmd = argv[1];
  for (int i = 2; i < argc; i++) {
    const char *o = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int *field;
    long long lo, hi, x;
    if (strcmp(o, "--target") == 0 && v) {
      a->check.compile.target = v;
    } else if (strcmp(o, "--emit") == 0 && v) {
      a->emit = v;
    } else if (strcmp(o, "--ir") == 0 && v) {
      a->ir = v;
    } else if (strcmp(o, "--entry") == 0 && v) {
      a->entry = v;
    } else if (strcmp(o, "--path") == 0 && v) {
      a->path = v;
    } else if (int_option(o, a, &field, &lo, &hi) && v) {
      if (parse_int(o, v, lo, hi, &x, err, n)) return -1;
      *field = (int)x;
    } else if (strcmp(o, "--seed") == 0 && v) {
      if (parse_seed(v, &a->check.seed, err, n)) return -1;
    } else if (strcmp(o, "--emulate-packed") == 0) {
      a->check.compile.emulate_packed = 1;
      continue;
    } else if (!a->request && (o[0] != '-' || o[1] == 0 || o[0] == '{')) {
      a->request = o;
      continue;
    } else {
      snprintf(err, n, "unknown or incomplete option \"%s\"", o);
      return -1;
    }
    i++;
  }
  return 0;
}

/* rj_treduce_path's names, as --path takes them */
static const char *const path_names[] = {"auto", "peer", "staged", "split", "split-equal", "ring"};

/* --path's value (auto when absent); -1 when it names none. */
static int path_kind(const char *path) {
  if (!path) return RJ_TREDUCE_AUTO;
  for (int i = 0; i < 6; i++)
    if (strcmp(path, path_names[i]) == 0) return i;
  return -1;
}

/* `redjit plan`: the split plan of a treduce request with rank r on GPU r mod gpus, as JSON. */
static int cmd_plan(rj_ctx *ctx, const rj_request *req, int path, int gpus) {
  if (req->kind != RJ_KIND_TREDUCE)
    return fail_json("kind: plan takes a treduce request", RJ_EINVAL);
  if (!gpus && rj_device_count(ctx, &gpus) != RJ_OK) gpus = 0;
  if (gpus < 1) gpus = 1;
  int *dev = malloc(sizeof(int) * (size_t)req->u.treduce.ranks);
  if (!dev) return fail_json("out of memory", RJ_ENOMEM);
  for (int r = 0; r < req->u.treduce.ranks; r++)
    dev[r] = r % gpus;
  rj_treduce_plan *p = malloc(sizeof *p);
  if (p) rj_treduce_plan_init(p);
  rj_status s = p ? rj_treduce_plan_make(ctx, req, dev, (rj_treduce_path)path, p) : RJ_ENOMEM;
  free(dev);
  if (s) {
    free(p);
    return fail_json(p ? rj_errmsg(ctx) : "out of memory", s);
  }
  printf("{\"ok\": true, \"path\": \"%s\", \"ranks\": %d, \"gpus\": %d, \"bytes_per_rank\": %.0f, "
         "\"peer_load\": %.4f, \"split_load\": %.4f, \"saved_bytes\": %.0f, \"dim\": %d, "
         "\"slices\": [",
         path_names[p->path], req->u.treduce.ranks, p->gpus, p->bytes_per_rank, p->peer_load,
         p->split_load, p->saved_bytes, p->dim);
  for (int i = 0; i < p->slices; i++) {
    const rj_treduce_slice *sl = &p->slice[i];
    printf("%s{\"gpu\": %d, \"local_ranks\": %d, \"start\": %lld, \"len\": %lld, \"share\": %.4f, "
           "\"in\": %.4f, \"out\": %.4f, \"load\": %.4f}",
           i ? ", " : "", sl->device, sl->local_ranks, (long long)sl->start, (long long)sl->len,
           sl->share, sl->in, sl->out, sl->load);
  }
  printf("], \"ring\": {\"load\": %.4f, \"hops\": %d, \"chunks\": %d, \"why_not\": \"%s\"}}\n",
         p->ring_load, p->hops, p->chunks, p->ring_why);
  free(p);
  return 0;
}

/* --emit's value; -1 when it names none. */
static int emit_kind(const char *emit) {
  if (strcmp(emit, "ptx") == 0) return RJ_EMIT_PTX;
  if (strcmp(emit, "llvm") == 0) return RJ_EMIT_LLVM;
  if (strcmp(emit, "llvm-opt") == 0) return RJ_EMIT_LLVM_OPT;
  fprintf(stderr, "redjit: --emit: expected ptx, llvm or llvm-opt\n");
  return -1;
}

static int cmd_ptx_ir(rj_ctx *ctx, const args *a) {
  if (strcmp(a->cmd, "ptx") != 0 || !a->entry || a->request) {
    fprintf(stderr, "redjit: --ir MODULE goes with `ptx` and --entry KERNEL, without a REQUEST\n");
    return 2;
  }
  int what = emit_kind(a->emit);
  if (what < 0) return 2;
  FILE *f = strcmp(a->ir, "-") == 0 ? stdin : fopen(a->ir, "rb");
  if (!f) {
    fprintf(stderr, "redjit: --ir: cannot open \"%s\"\n", a->ir);
    return 2;
  }
  size_t len = 0;
  char err[320];
  char *ir = read_capped(f, IR_CAP, input_name("--ir MODULE", a->ir), &len, err, sizeof err);
  if (f != stdin) fclose(f);
  if (!ir) {
    fprintf(stderr, "redjit: %s\n", err);
    return 2;
  }
  rj_kernel *k;
  rj_status s = rj_compile_ir(ctx, ir, len, a->entry, &a->check.compile, &k);
  free(ir);
  if (s) {
    fprintf(stderr, "redjit: %s\n", rj_errmsg(ctx));
    return exit_code(s);
  }
  fputs(rj_kernel_text(k, (rj_emit)what), stdout);
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

int main(int argc, char **argv) {
  args a;
  char why[256];
  if (parse_args(argc, argv, &a, why, sizeof why)) {
    /* run and bench answer with one JSON line even here (CONTRACT.md), and so does plan */
    if (a.cmd &&
        (strcmp(a.cmd, "run") == 0 || strcmp(a.cmd, "bench") == 0 || strcmp(a.cmd, "plan") == 0))
      return fail_json(why, RJ_EINVAL);
    fprintf(stderr, "redjit: %s\n%s", why, usage);
    return 2;
  }
  rj_ctx *ctx = rj_ctx_new();
  if (!ctx) {
    fputs("redjit: out of memory\n", stderr);
    return 2;
  }
  int rc = 2;
  bool json_errors =
      strcmp(a.cmd, "run") == 0 || strcmp(a.cmd, "bench") == 0 || strcmp(a.cmd, "plan") == 0;
  char *text = NULL;
  rj_request req;
  rj_status s;
  if (strcmp(a.cmd, "variants") == 0) {
    rc = cmd_variants(ctx);
    goto done;
  }
  if (strcmp(a.cmd, "ptx") && strcmp(a.cmd, "explain") && !json_errors) {
    fprintf(stderr, "redjit: unknown command \"%s\"\n%s", a.cmd, usage);
    goto done;
  }
  if (a.ir) { /* a caller's finished module through redjit's codegen (rj_compile_ir) */
    rc = cmd_ptx_ir(ctx, &a);
    goto done;
  }
  if (!a.request) {
    if (json_errors)
      rc = fail_json("missing REQUEST", RJ_EINVAL);
    else
      fprintf(stderr, "redjit %s: missing REQUEST\n%s", a.cmd, usage);
    goto done;
  }
  char err[256];
  if (!(text = load_request(a.request, err, sizeof err))) {
    rc = json_errors ? fail_json(err, RJ_EINVAL) : (fprintf(stderr, "redjit: %s\n", err), 2);
    goto done;
  }
  if ((s = rj_request_parse(ctx, text, &req))) {
    rc = json_errors ? fail_json(rj_errmsg(ctx), s)
                     : (fprintf(stderr, "redjit: %s\n", rj_errmsg(ctx)), exit_code(s));
    goto done;
  }
  int path = path_kind(a.path);
  if (a.path && (!json_errors || req.kind != RJ_KIND_TREDUCE || path < 0)) {
    const char *why = path < 0
                          ? "--path: expected auto, peer, staged, split, split-equal or ring"
                          : "--path: only run, bench and plan of a treduce request take a path";
    rc = json_errors ? fail_json(why, RJ_EINVAL) : (fprintf(stderr, "redjit: %s\n", why), 2);
    goto done;
  }
  if (a.gpus && strcmp(a.cmd, "plan")) {
    rc = json_errors ? fail_json("--gpus: only plan takes it", RJ_EINVAL)
                     : (fprintf(stderr, "redjit: --gpus: only plan takes it\n"), 2);
    goto done;
  }
  if (strcmp(a.cmd, "plan") == 0) {
    rc = cmd_plan(ctx, &req, path, a.gpus);
  } else if (strcmp(a.cmd, "ptx") == 0) {
    int what = emit_kind(a.emit);
    if (what < 0) goto done;
    rj_kernel *k;
    if ((s = rj_compile(ctx, &req, &a.check.compile, &k))) {
      fprintf(stderr, "redjit: %s\n", rj_errmsg(ctx));
      rc = exit_code(s);
      goto done;
    }
    fputs(rj_kernel_text(k, (rj_emit)what), stdout);
    rc = 0;
  } else if (strcmp(a.cmd, "explain") == 0) {
    const char *lines = NULL;
    s = rj_explain(ctx, &req, &a.check.compile, &lines);
    if (lines) fputs(lines, stdout);
    if (s && s != RJ_ENOVARIANT) fprintf(stderr, "redjit: %s\n", rj_errmsg(ctx));
    rc = exit_code(s);
  } else if (strcmp(a.cmd, "run") == 0) {
    rj_check_result r = {.struct_size = sizeof(rj_check_result)};
    rj_treduce_result tr = {.struct_size = sizeof(rj_treduce_result)}; /* treduce: which path ran */
    if ((s = req.kind == RJ_KIND_TREDUCE
                 ? rj_treduce_check(ctx, &req, &a.check, (rj_treduce_path)path, &r, &tr)
                 : rj_check(ctx, &req, &a.check, &r))) {
      rc = fail_json(rj_errmsg(ctx), s);
      goto done;
    }
    printf("{\"ok\": %s, \"variant\": ", r.ok ? "true" : "false");
    json_string(stdout, r.variant);
    printf(", \"target\": ");
    json_string(stdout, r.target);
    printf(", \"checked\": %lld, \"max_abs_err\": ", (long long)r.checked);
    json_number(stdout, r.max_abs_err);
    printf(", \"max_rel_err\": ");
    json_number(stdout, r.max_rel_err);
    printf(", \"compile_ms\": %.3f, \"load_ms\": %.3f, \"kernel_ms\": %.4f", r.compile_ms,
           r.load_ms, r.kernel_ms);
    printf(", \"wrong\": %lld, \"outside_written\": %lld", (long long)r.wrong,
           (long long)r.outside_written);
    if (req.kind == RJ_KIND_TREDUCE)
      printf(", \"path\": \"%s\", \"staged_ranks\": %d, \"peer_ranks\": %d, \"slices\": %d, "
             "\"gpus\": %d, \"root_share\": %.4f, \"digest\": \"%016llx\"",
             tr.path, tr.staged_ranks, tr.peer_ranks, tr.slices, tr.gpus, tr.root_share,
             (unsigned long long)tr.dst_digest);
    if (!r.ok) {
      printf(", \"error\": ");
      json_string(stdout, r.first_error);
    }
    printf("}\n");
    rc = r.ok ? 0 : 1;
  } else {
    rj_bench_result b = {.struct_size = sizeof(rj_bench_result)};
    rj_treduce_result tr = {.struct_size = sizeof(rj_treduce_result)};
    if ((s = req.kind == RJ_KIND_TREDUCE
                 ? rj_treduce_bench(ctx, &req, &a.check, (rj_treduce_path)path, &b, &tr)
                 : rj_bench(ctx, &req, &a.check, &b))) {
      rc = fail_json(rj_errmsg(ctx), s);
      goto done;
    }
    printf("{\"ok\": true, \"variant\": ");
    json_string(stdout, b.variant);
    printf(", \"target\": ");
    json_string(stdout, b.target);
    if (req.kind == RJ_KIND_TREDUCE)
      printf(
          ", \"path\": \"%s\", \"slices\": %d, \"gpus\": %d, \"root_share\": %.4f, \"call_ms\": %.5f",
          tr.path, tr.slices, tr.gpus, tr.root_share, tr.call_ms);
    printf(", \"kernel_ms\": %.5f, \"bytes\": %.0f, \"gbps\": %.2f, \"runs\": %d}\n", b.kernel_ms,
           b.bytes, b.gbps, b.runs);
    rc = 0;
  }
done:
  free(text);
  rj_ctx_free(ctx);
  return rc;
}
