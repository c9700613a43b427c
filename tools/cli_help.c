/* Help text, generated from the command and option tables of cli_args.c. */
#include "cli.h"

#include <stdint.h>
#include <string.h>

static const char global_notes[] =
    "REQUEST: a JSON file, - for standard input, or the JSON text itself ({...}); files and\n"
    "standard input are read up to 16 MiB (an --ir MODULE up to 256 MiB).\n"
    "Options take a value as --opt VALUE or --opt=VALUE (short: -t VALUE or -tVALUE); given\n"
    "twice, the last one counts. -o FILE (--output FILE) writes the output to FILE.\n"
    "An option that does not apply to the command is an error. -- ends the options.\n"
    "run, bench and plan answer with exactly one JSON line on standard output, errors included.\n";

static const char exit_notes[] =
    "exit status: 0 success; 1 run found a wrong result; 2 usage error, unreadable input,\n"
    "invalid or unsupported request, or no variant; 3 no usable GPU or a CUDA error.\n";

void cli_command_list(char *buf, size_t n) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < cli_command_count && at < n; i++)
    at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? " " : "", cli_commands[i].name);
}

void cli_overview(FILE *out) {
  fputs("redjit: JIT-compiled GPU reductions\n\n"
        "usage: redjit COMMAND [REQUEST] [OPTIONS]\n"
        "       redjit COMMAND --help      that command's options\n"
        "       redjit --version, -V       the version\n\n"
        "commands:\n",
        out);
  for (int i = 0; i < cli_command_count; i++)
    fprintf(out, "  %-9s %s\n", cli_commands[i].name, cli_commands[i].summary);
  fprintf(out, "\n%s\n%s", global_notes, exit_notes);
}

/* The values an option takes, as help shows them. */
static void option_values(char *buf, size_t n, const cli_option *o) {
  buf[0] = 0;
  if (o->values) {
    snprintf(buf, n, "%s", o->values);
  } else if (o->kind == OPT_INT) {
    snprintf(buf, n, "%lld..%lld", o->lo, o->hi);
  } else if (o->kind == OPT_CHOICE) {
    size_t at = 0;
    for (int i = 0; o->choices[i] && at < n; i++)
      at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? "|" : "", o->choices[i]);
  }
}

/* "--name METAVAR", or "--name" for a flag. */
static void option_form(char *buf, size_t n, const cli_option *o) {
  snprintf(buf, n, "%s%s%s", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
}

void cli_option_form(char *buf, size_t n, const cli_option *o) {
  char form[40];
  option_form(form, sizeof form, o);
  if (o->short_name)
    snprintf(buf, n, "-%c, %s", o->short_name, form);
  else
    snprintf(buf, n, "%s", form);
}

static void option_help(FILE *out, const cli_option *o) {
  char form[48], values[80];
  cli_option_form(form, sizeof form, o);
  option_values(values, sizeof values, o);
  fprintf(out, "  %-20s %s\n", form, o->help);
  if (!values[0] && !o->deflt) return;
  fprintf(out, "  %-20s", "");
  if (values[0]) fprintf(out, " values: %s%s", values, o->deflt ? ";" : "");
  if (o->deflt) fprintf(out, " default: %s", o->deflt);
  fputc('\n', out);
}

void cli_command_help(FILE *out, const cli_command *c) {
  fprintf(out, "usage: redjit %s%s%s%s\n", c->name, c->operand ? " " : "",
          c->operand ? c->operand : "", " [OPTIONS]");
  if (c->bit == CMD_PTX) fputs("       redjit ptx --ir MODULE --entry KERNEL [OPTIONS]\n", out);
  fprintf(out, "\n%s\n\noptions:\n", c->about);
  for (int i = 0; i < OPT_COUNT; i++)
    if (cli_options[i].commands & c->bit) option_help(out, &cli_options[i]);
  fprintf(out, "  %-20s %s\n", "-h, --help", "print this help");
  if (c->json)
    fputs("\nEvery outcome, errors included, is one JSON line on standard output.\n", out);
  fprintf(out, "\nexample:\n  %s\n", c->example);
}

/* docs/CLI.md's table: one row per option, a column per command that takes options. */
void cli_markdown_table(FILE *out) {
  fputs("| option |", out);
  for (int i = 0; i < cli_command_count; i++)
    if (!(cli_commands[i].bit & (CMD_HELP | CMD_VERSION)))
      fprintf(out, " %s |", cli_commands[i].name);
  fputs("\n| --- |", out);
  for (int i = 0; i < cli_command_count; i++)
    if (!(cli_commands[i].bit & (CMD_HELP | CMD_VERSION))) fputs(" --- |", out);
  fputc('\n', out);
  for (int k = 0; k < OPT_COUNT; k++) {
    if (cli_options[k].commands == CMD_HELP) continue;
    char form[40];
    option_form(form, sizeof form, &cli_options[k]);
    fprintf(out, "| `%s` |", form);
    for (int i = 0; i < cli_command_count; i++)
      if (!(cli_commands[i].bit & (CMD_HELP | CMD_VERSION)))
        fputs(cli_options[k].commands & cli_commands[i].bit ? " yes |" : " |", out);
    fputc('\n', out);
  }
}
