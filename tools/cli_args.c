/* The command and option tables, and the parser that reads argv through them. */
#include "cli.h"

#include "redjit.h"
#include "redjit_treduce.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REQUEST_CMDS (CMD_PTX | CMD_EXPLAIN | CMD_RUN | CMD_BENCH)
#define OUTPUT_CMDS (REQUEST_CMDS | CMD_PLAN | CMD_VARIANTS)

const cli_command cli_commands[] = {
    {"ptx", CMD_PTX, "REQUEST", true, false,
     "print the PTX (or LLVM IR) of a request's kernel; needs no GPU",
     "Compiles REQUEST (validate, dispatch, LLVM IR, O3, PTX) and prints the kernel module's PTX,\n"
     "or its LLVM IR with --emit. With --ir MODULE --entry KERNEL instead of a REQUEST, compiles\n"
     "your own NVPTX module (LLVM IR text or bitcode) through the same back end.",
     "redjit ptx examples/seed000_shared.json --target=sm_90"},
    {"explain", CMD_EXPLAIN, "REQUEST", true, false,
     "show which variant dispatch chooses and why the others decline",
     "Prints one line per registered variant, in dispatch order: NAME prio=P chosen,\n"
     "NAME prio=P rejected: REASON, or NAME prio=P not tried. Status 2 when none accepts.",
     "redjit explain examples/tensor_rows.json"},
    {"run", CMD_RUN, "REQUEST", true, true,
     "compile, launch and check a request on the GPU (one JSON line)",
     "Compiles, loads and launches REQUEST on the GPU with random inputs, compares every output\n"
     "element with a float64 CPU reference and checks nothing outside the destination changed\n"
     "(--no-check: launched without the comparison, for op custom). Prints exactly one JSON\n"
     "line, errors included. Status 1 when a result is wrong.",
     "redjit run examples/seed000_shared.json --seed 3"},
    {"bench", CMD_BENCH, "REQUEST", true, true,
     "time a request's kernel on the GPU (one JSON line)",
     "Runs REQUEST's kernel repeatedly on fresh data (CUDA events, after warm-up, the median of\n"
     "at least 20 runs) and prints one JSON line with kernel_ms, bytes and gbps, errors included.",
     "redjit bench examples/tensor_rows.json"},
    {"plan", CMD_PLAN, "TREDUCE_REQUEST", true, true,
     "show how a treduce request splits over the GPUs (one JSON line); needs no GPU",
     "Prints the split plan of a treduce request with rank r on GPU r mod --gpus, and the ring\n"
     "path's load, as one JSON line, errors included.",
     "redjit plan '{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":0,"
     "\"shape\":[67108864]}' --gpus=4"},
    {"variants", CMD_VARIANTS, NULL, false, false, "list the registered variants",
     "Prints one line per registered variant, in dispatch order:\nNAME prio=P kinds=KIND  SUMMARY.",
     "redjit variants"},
    {"help", CMD_HELP, "[COMMAND]", false, false,
     "this overview, or a command's options: redjit help COMMAND",
     "Prints the overview, or COMMAND's usage, options and an example (as redjit COMMAND --help).",
     "redjit help run"},
    {"version", CMD_VERSION, NULL, false, false,
     "print redjit's version (also redjit --version, redjit -V)",
     "Prints \"redjit X.Y.Z\": the version of the library the tool runs on.", "redjit --version"},
};
const int cli_command_count = (int)(sizeof cli_commands / sizeof cli_commands[0]);

const char *const cli_path_names[] = {"auto",        "peer", "staged", "split",
                                      "split-equal", "ring", NULL};
static const char *const emit_names[] = {"ptx", "llvm", "llvm-opt", NULL};

const cli_option cli_options[OPT_COUNT] = {
    [OPT_TARGET] = {"--target", "T", OPT_STRING, REQUEST_CMDS, 0, 0, NULL,
                    "auto, sm_XX, sm_XXa, sm_XXf", "auto",
                    "what to compile for (auto: GPU --device's, else sm_90)", 't'},
    [OPT_EMIT] = {"--emit", "W", OPT_CHOICE, CMD_PTX, 0, 0, emit_names, NULL, "ptx",
                  "print the PTX, the LLVM IR as built, or after O3", 'e'},
    [OPT_PTX_VERSION] = {"--ptx-version", "N", OPT_INT, REQUEST_CMDS, 0, 999, NULL, NULL, "0",
                         "PTX ISA version, 88 for 8.8 (0: the least needed)"},
    [OPT_EMULATE_PACKED] = {"--emulate-packed", NULL, OPT_FLAG, REQUEST_CMDS, 0, 0, NULL, NULL,
                            "off", "sm100_packed before sm_100: scalar equivalents"},
    [OPT_SEED] = {"--seed", "N", OPT_U64, CMD_RUN, 0, 0, NULL, "0..2^64-1", "0",
                  "seed of the random inputs", 's'},
    [OPT_DEVICE] = {"--device", "K", OPT_INT, REQUEST_CMDS, 0, 1023, NULL, NULL, "0",
                    "the GPU to run on, and the one --target auto reads", 'd'},
    [OPT_NANS] = {"--nans", "K", OPT_INT, CMD_RUN, 0, 1 << 24, NULL, NULL, "0",
                  "turn K random float inputs into NaN"},
    [OPT_NO_CHECK] = {"--no-check", NULL, OPT_FLAG, CMD_RUN, 0, 0, NULL, NULL, "off",
                      "launch without comparing outputs (op custom: no oracle); tensor, treduce"},
    [OPT_PATH] = {"--path", "P", OPT_CHOICE, CMD_RUN | CMD_BENCH | CMD_PLAN, 0, 0, cli_path_names,
                  NULL, "auto", "treduce requests: the path to take (plan: not peer, staged)"},
    [OPT_GPUS] = {"--gpus", "N", OPT_INT, CMD_PLAN | CMD_EXPLAIN, 1, RJ_TREDUCE_MAX_SLICES, NULL,
                  NULL, "the GPUs present, else 1",
                  "plan (explain: auto's path) for rank r on GPU r mod N"},
    [OPT_IR] = {"--ir", "MODULE", OPT_STRING, CMD_PTX, 0, 0, NULL, "a file or -", NULL,
                "compile this LLVM IR / bitcode module instead of a REQUEST"},
    [OPT_ENTRY] = {"--entry", "KERNEL", OPT_STRING, CMD_PTX, 0, 0, NULL, "a function name", NULL,
                   "with --ir: the module's kernel"},
    [OPT_OUTPUT] = {"--output", "FILE", OPT_STRING, OUTPUT_CMDS, 0, 0, NULL, "a file path",
                    "standard output", "write the output to FILE (created or truncated)", 'o'},
    [OPT_TABLE] = {"--table", NULL, OPT_FLAG, CMD_HELP, 0, 0, NULL, NULL, "off",
                   "print the command/option table of docs/CLI.md"},
};

const cli_command *cli_command_find(const char *name) {
  for (int i = 0; i < cli_command_count; i++)
    if (strcmp(name, cli_commands[i].name) == 0) return &cli_commands[i];
  return NULL;
}

/* The option that arg names, or -1: "--x" or "--x=v" by its name (*eq then points at "v"), "-c"
 * or "-cVALUE" by its short name (*eq then points at "VALUE"). */
static int find_option(const char *arg, const char **eq) {
  *eq = NULL;
  if (arg[0] == '-' && arg[1] && arg[1] != '-') {
    for (int i = 0; i < OPT_COUNT; i++)
      if (cli_options[i].short_name == arg[1]) {
        *eq = arg[2] ? arg + 2 : NULL;
        return i;
      }
    return -1;
  }
  const char *e = strchr(arg, '=');
  size_t len = e ? (size_t)(e - arg) : strlen(arg);
  *eq = e ? e + 1 : NULL;
  for (int i = 0; i < OPT_COUNT; i++)
    if (strlen(cli_options[i].name) == len && strncmp(arg, cli_options[i].name, len) == 0) return i;
  return -1;
}

static bool is_help(const char *arg) {
  return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

bool cli_wants_help(int argc, char **argv) {
  for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
    const char *eq;
    int id = find_option(argv[i], &eq);
    if (is_help(argv[i])) return true;
    if (id >= 0 && cli_options[id].kind != OPT_FLAG && !eq) i++; /* skip its value */
  }
  return false;
}

/* A number: all of v in decimal (an optional '-', then digits), within lo..hi. */
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

/* A number 0..2^64-1, as parse_int. */
static int parse_u64(const char *opt, const char *v, unsigned long long *out, char *err, size_t n) {
  const char *d = v + (v[0] == '-');
  if (!*d || strspn(d, "0123456789") != strlen(d)) {
    snprintf(err, n, "%s: \"%.40s\" is not a number", opt, v);
    return -1;
  }
  errno = 0;
  unsigned long long x = strtoull(v, NULL, 10);
  if (v[0] == '-' || errno == ERANGE) {
    snprintf(err, n, "%s: %.40s is out of range (0..%llu)", opt, v, (unsigned long long)UINT64_MAX);
    return -1;
  }
  *out = x;
  return 0;
}

/* OPT_CHOICE: the index of v in choices, else -1 with "expected a, b or c". */
static int parse_choice(const cli_option *o, const char *v, char *err, size_t n) {
  int k = 0;
  for (; o->choices[k]; k++)
    if (strcmp(v, o->choices[k]) == 0) return k;
  size_t at = (size_t)snprintf(err, n, "%s: expected", o->name);
  for (int i = 0; i < k && at < n; i++)
    at += (size_t)snprintf(err + at, n - at, "%s%s",
                           i == 0       ? " "
                           : i == k - 1 ? " or "
                                        : ", ",
                           o->choices[i]);
  return -1;
}

/* Stores option id's value v (NULL for a flag) into a. */
static int set_value(int id, const char *v, cli_args *a, char *err, size_t n) {
  const cli_option *o = &cli_options[id];
  long long x;
  a->val[id] = v ? v : "";
  switch (o->kind) {
  case OPT_INT:
    if (parse_int(o->name, v, o->lo, o->hi, &x, err, n)) return -1;
    a->num[id] = (unsigned long long)x;
    return 0;
  case OPT_U64:
    return parse_u64(o->name, v, &a->num[id], err, n);
  case OPT_CHOICE:
    return (a->choice[id] = parse_choice(o, v, err, n)) < 0 ? -1 : 0;
  default:
    return 0;
  }
}

/* One option argument at argv[*i]: known, applicable to the command, with its value (from
 * "=value" or the next argument). */
static int parse_option(const cli_command *cmd, int argc, char **argv, int *i, cli_args *a,
                        char *err, size_t n) {
  const char *arg = argv[*i], *eq;
  int id = find_option(arg, &eq);
  if (id < 0) {
    snprintf(err, n, "unknown option \"%.60s\"", arg);
    return -1;
  }
  const cli_option *o = &cli_options[id];
  if (!(o->commands & cmd->bit)) {
    snprintf(err, n, "%s does not apply to %s", o->name, cmd->name);
    return -1;
  }
  if (o->kind == OPT_FLAG) {
    if (eq) snprintf(err, n, "%s takes no value (\"%.60s\")", o->name, arg);
    return eq ? -1 : set_value(id, NULL, a, err, n);
  }
  if (!eq && *i + 1 >= argc) {
    snprintf(err, n, "%s: missing value (%s %s)", arg, arg, o->metavar);
    return -1;
  }
  return set_value(id, eq ? eq : argv[++*i], a, err, n);
}

int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *a, char *err, size_t n) {
  memset(a, 0, sizeof *a);
  a->cmd = cmd;
  err[0] = 0;
  bool options = true; /* until "--" */
  for (int i = 2; i < argc; i++) {
    const char *arg = argv[i];
    if (options && strcmp(arg, "--") == 0) {
      options = false;
    } else if (options && arg[0] == '-' && arg[1] != 0) {
      if (parse_option(cmd, argc, argv, &i, a, err, n)) return -1;
    } else if (!cmd->operand) {
      snprintf(err, n, "unexpected argument \"%.60s\" (%s takes none)", arg, cmd->name);
      return -1;
    } else if (a->operand) {
      snprintf(err, n, "unexpected argument \"%.60s\" (one %s only)", arg, cmd->operand);
      return -1;
    } else {
      a->operand = arg;
    }
  }
  return 0;
}
