/* The redjit command line's parts: the command and option tables (the one source for parsing,
 * help text and the table in docs/CLI.md), the parser, help, and one-line JSON output. */
#ifndef REDJIT_CLI_H
#define REDJIT_CLI_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* ---------------------------------------------------------------- commands */
enum {
  CMD_PTX = 1 << 0,
  CMD_EXPLAIN = 1 << 1,
  CMD_RUN = 1 << 2,
  CMD_BENCH = 1 << 3,
  CMD_PLAN = 1 << 4,
  CMD_VARIANTS = 1 << 5,
  CMD_HELP = 1 << 6,
  CMD_VERSION = 1 << 7,
};

typedef struct cli_command {
  const char *name;
  unsigned bit;        /* CMD_* */
  const char *operand; /* the positional argument in the synopsis ("REQUEST"); NULL: none */
  bool needs_operand;
  bool json;           /* answers with exactly one JSON line on standard output (docs/CLI.md) */
  const char *summary; /* one line, for the overview */
  const char *about;   /* a paragraph, for the command's help */
  const char *example;
} cli_command;

extern const cli_command cli_commands[];
extern const int cli_command_count;

/* The command named name, or NULL. */
const cli_command *cli_command_find(const char *name);

/* ---------------------------------------------------------------- options */
typedef enum opt_id {
  OPT_TARGET,
  OPT_EMIT,
  OPT_PTX_VERSION,
  OPT_EMULATE_PACKED,
  OPT_SEED,
  OPT_DEVICE,
  OPT_NANS,
  OPT_NO_CHECK,
  OPT_PATH,
  OPT_GPUS,
  OPT_IR,
  OPT_ENTRY,
  OPT_OUTPUT,
  OPT_TABLE,
  OPT_COUNT
} opt_id;

typedef enum opt_kind {
  OPT_FLAG,   /* no value */
  OPT_STRING, /* any text */
  OPT_CHOICE, /* one of choices */
  OPT_INT,    /* decimal, lo..hi */
  OPT_U64,    /* decimal, 0..2^64-1 */
} opt_kind;

typedef struct cli_option {
  const char *name;    /* "--target" */
  const char *metavar; /* "T" (NULL for a flag) */
  opt_kind kind;
  unsigned commands;          /* the CMD_* it applies to */
  long long lo, hi;           /* OPT_INT */
  const char *const *choices; /* OPT_CHOICE: NULL-terminated */
  const char *values, *deflt; /* help: the values taken (when not from lo/hi or choices), default */
  const char *help;           /* help: what it does */
  char short_name;            /* 't' for -t, or 0 */
} cli_option;

extern const cli_option cli_options[OPT_COUNT];

/* The --path names, in rj_treduce_path's order. */
extern const char *const cli_path_names[];

/* What the command line said: the command, each option's value (flags: ""; NULL when not
 * given; an option given twice: the last), numbers converted, and the positional operand. */
typedef struct cli_args {
  const cli_command *cmd;
  const char *val[OPT_COUNT];
  unsigned long long num[OPT_COUNT]; /* OPT_INT, OPT_U64 */
  int choice[OPT_COUNT];             /* OPT_CHOICE: the index in choices */
  const char *operand;
} cli_args;

/* Parses argv[2..] for command cmd.  On a usage error, writes the message into err and
 * returns -1. */
int cli_parse(const cli_command *cmd, int argc, char **argv, cli_args *a, char *err, size_t n);

/* Whether argv[2..] asks for help (--help or -h as an option, not as an option's value). */
bool cli_wants_help(int argc, char **argv);

/* ---------------------------------------------------------------- help */
void cli_overview(FILE *out);
void cli_command_help(FILE *out, const cli_command *c);
void cli_markdown_table(FILE *out);         /* the command -> option table of docs/CLI.md */
void cli_command_list(char *buf, size_t n); /* "ptx explain ..." */
/* "-t, --target T", "--emulate-packed": an option as help and the man page show it. */
void cli_option_form(char *buf, size_t n, const cli_option *o);

/* ---------------------------------------------------------------- JSON */
/* An object printed as one line in the spacing of docs/CLI.md's examples ({"key": value, ...});
 * cJSON escapes every string.  Numbers keep the printf format each key has always had (non-finite:
 * null). */
void json_num(cJSON *o, const char *key, const char *fmt, double v);
void json_int(cJSON *o, const char *key, long long v);
void json_str(cJSON *o, const char *key, const char *v);
void json_bool(cJSON *o, const char *key, bool v);
/* Adds item (an object or array) to o under key, or to array o when key is NULL; returns it. */
cJSON *json_add(cJSON *o, const char *key, cJSON *item);
/* Prints o and a newline, then frees it; o NULL (out of memory) prints an RJ_ENOMEM line. */
void json_line(FILE *out, cJSON *o);

#endif
