/* The redjit command line (CONTRACT.md section 1): outputs and exit statuses, and bad input
 * that must never crash it. */
#include "rjtest.h"

#include <ctype.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs "feed | redjit args" (args: a shell fragment; feed "": none); returns its exit status,
 * output in out. */
static int cli_fed(char *out, size_t n, const char *feed, const char *args) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s%s'%s' %s 2>&1", feed, *feed ? " | " : "", rjt_cli_path(), args);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  size_t k = fread(out, 1, n - 1, p);
  out[k] = 0;
  int st = pclose(p);
  ck_assert_msg(WIFEXITED(st), "redjit %s did not exit normally (signal?)", args);
  return WEXITSTATUS(st);
}

static int cli(char *out, size_t n, const char *args) {
  return cli_fed(out, n, "", args);
}

static char *tmpfile_with(const char *text) {
  static char path[64];
  strcpy(path, "/tmp/rjcliXXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  return path;
}

#define SEED000                                                                                    \
  "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,"          \
  "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]},\"axes\":[-1]}"

static char out[1 << 16];

START_TEST(ptx_and_explain) {
  char *f = tmpfile_with(SEED000);
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx %s --target sm_90", f)), 0);
  ck_assert_ptr_nonnull(strstr(out, ".target sm_90"));
  ck_assert_int_eq(rjt_count(out, "shfl.sync.bfly.b32"), 3);
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx %s --emit llvm", f)), 0);
  ck_assert_ptr_nonnull(strstr(out, "@llvm.nvvm.shfl.sync.bfly.f32"));
  ck_assert_ptr_nonnull(strstr(out, "alloca")); /* as built: before mem2reg */
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx %s --emit llvm-opt", f)), 0);
  ck_assert_ptr_null(strstr(out, "alloca"));
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("explain %s", f)), 0);
  ck_assert_ptr_nonnull(strstr(out, "shared prio=10 chosen\n"));
  ck_assert_ptr_nonnull(strstr(out, "local prio=10 rejected: "));
  /* the request as text and on standard input */
  ck_assert_int_eq(cli(out, sizeof out, "explain '" SEED000 "'"), 0);
  ck_assert_ptr_nonnull(strstr(out, "shared prio=10 chosen"));
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx - < %s", f)), 0);
  ck_assert_ptr_nonnull(strstr(out, ".entry redjit_tile"));
  ck_assert_int_eq(cli(out, sizeof out, "variants"), 0);
  ck_assert_ptr_nonnull(strstr(out, "shared prio=10 kinds=tile"));
  unlink(f);
}
END_TEST

/* ptx --ir: a caller's own module through redjit's codegen */
START_TEST(ptx_of_caller_ir) {
  char *f = tmpfile_with("target triple = \"nvptx64-nvidia-cuda\"\n"
                         "declare float @llvm.sqrt.f32(float)\n"
                         "define void @k(ptr addrspace(1) %p, float %a) {\n"
                         "  %r = call float @llvm.sqrt.f32(float %a)\n"
                         "  store float %r, ptr addrspace(1) %p\n  ret void\n}\n");
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx --ir %s --entry k --target sm_90", f)), 0);
  ck_assert_ptr_nonnull(strstr(out, ".visible .entry k("));
  ck_assert_ptr_nonnull(strstr(out, "sqrt.rn.f32"));
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx --ir %s --entry k --emit llvm-opt", f)), 0);
  ck_assert_ptr_nonnull(strstr(out, "define ptx_kernel void @k"));
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx --ir %s", f)), 2); /* no --entry */
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx --ir %s --entry nope", f)), 2);
  ck_assert_ptr_nonnull(strstr(out, "no function \"nope\""));
  unlink(f);
  f = tmpfile_with("target triple = \"nvptx64-nvidia-cuda\"\ndeclare float @llvm.sin.f32(float)\n"
                   "define void @k(ptr addrspace(1) %p, float %a) {\n"
                   "  %r = call float @llvm.sin.f32(float %a)\n"
                   "  store float %r, ptr addrspace(1) %p\n  ret void\n}\n");
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx --ir %s --entry k", f)), 2); /* refused */
  ck_assert_ptr_nonnull(strstr(out, "llvm.sin.f32"));
  unlink(f);
}
END_TEST

START_TEST(bad_input_is_status_2) {
  static const char *const cases[] = {
      "{\"kind\":\"tile\",\"op\":\"sum\",", /* truncated */
      "\x01\x02garbage",                    /* not JSON */
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,"
      "\"src\":{\"mem\":\"shared\",\"shape\":[99999999999,99999999]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,"
      "\"src\":{\"mem\":\"shared\",\"shape\":[4,8],\"extent\":[4,-3]},\"dst\":{\"mem\":\"shared\",\"shape\":[4]}}",
      "{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,"
      "\"src\":{\"mem\":\"shared\",\"shape\":[4,8]},\"dst\":{\"mem\":\"local\",\"shape\":[4]}}", /* no variant */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *f = tmpfile_with(cases[i]);
    ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx %s", f)), 2);
    ck_assert_ptr_nonnull(strstr(out, "redjit: "));
    ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("explain %s", f)), 2);
    /* run and bench still print one JSON line */
    ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("run %s", f)), 2);
    ck_assert_msg(strncmp(out, "{\"ok\": false, \"error\": ", 23) == 0, "%s", out);
    ck_assert_int_eq(rjt_count(out, "\n"), 1);
    ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("bench %s", f)), 2);
    ck_assert_msg(strncmp(out, "{\"ok\": false", 12) == 0, "%s", out);
    unlink(f);
  }
  ck_assert_int_eq(cli(out, sizeof out, "ptx /nonexistent/request.json"), 2);
  ck_assert_msg(strstr(out, "request \"/nonexistent/request.json\": cannot open it: No such file"),
                "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "frobnicate x"), 2);
  ck_assert_int_eq(cli(out, sizeof out, ""), 2);
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' --target sm_7"), 2);
  ck_assert_ptr_nonnull(strstr(out, "unknown target"));
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' --emit asm"), 2);
  /* argument errors of run and bench are one JSON line too */
  static const char *const argerr[] = {"run '" SEED000 "' --seed banana", "run",
                                       "bench '" SEED000 "' --bogus", "run '" SEED000 "' --device"};
  for (size_t i = 0; i < sizeof argerr / sizeof argerr[0]; i++) {
    ck_assert_int_eq(cli(out, sizeof out, argerr[i]), 2);
    ck_assert_msg(strncmp(out, "{\"ok\": false, \"error\": ", 23) == 0, "%s: %s", argerr[i], out);
    ck_assert_int_eq(rjt_count(out, "\n"), 1);
  }
}
END_TEST

/* Every number option: the whole argument, in range, else status 2 naming the option (a
 * --ptx-version of 4294967384 is refused, not cut to 32 bits, where it would read as 88).  run /
 * bench / plan say it in JSON. */
START_TEST(numbers_are_checked) {
  static const struct {
    const char *args, *msg;
  } cases[] = {
      {"ptx '" SEED000 "' --ptx-version 4294967384", "--ptx-version: 4294967384 is out of range"},
      {"ptx '" SEED000 "' --ptx-version 88x", "--ptx-version: \"88x\" is not a number"},
      {"ptx '" SEED000 "' --ptx-version ' 88'", "--ptx-version: \" 88\" is not a number"},
      {"explain '" SEED000 "' --ptx-version -1", "--ptx-version: -1 is out of range (0..999)"},
      {"run '" SEED000 "' --seed -1", "--seed: -1 is out of range"},
      {"run '" SEED000 "' --seed 18446744073709551616", "--seed: 18446744073709551616 is out of"},
      {"run '" SEED000 "' --seed 0x10", "--seed: \\\"0x10\\\" is not a number"},
      {"run '" SEED000 "' --device 4294967296", "--device: 4294967296 is out of range (0..1023)"},
      {"bench '" SEED000 "' --device -1", "--device: -1 is out of range"},
      {"run '" SEED000 "' --nans 99999999999999999999", "--nans: 99999999999999999999 is out"},
      {"run '" SEED000 "' --nans ''", "--nans: \\\"\\\" is not a number"},
      {"plan '" SEED000 "' --gpus 4294967297", "--gpus: 4294967297 is out of range (1..64)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ck_assert_msg(cli(out, sizeof out, cases[i].args) == 2, "%s: %s", cases[i].args, out);
    ck_assert_msg(strstr(out, cases[i].msg), "%s: \"%s\" lacks \"%s\"", cases[i].args, out,
                  cases[i].msg);
  }
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' --ptx-version 88"), 0);
  ck_assert_ptr_nonnull(strstr(out, ".version 8.8"));
}
END_TEST

/* Request and IR inputs are read up to a cap (16 MiB, 256 MiB), character devices and pipes
 * included, and refused past it naming the input (/dev/zero grew the process until killed). */
START_TEST(inputs_are_capped) {
  ck_assert_int_eq(cli(out, sizeof out, "ptx /dev/zero"), 2);
  ck_assert_msg(strstr(out, "request \"/dev/zero\": more than 16 MiB"), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "explain - < /dev/zero"), 2);
  ck_assert_msg(strstr(out, "request on standard input: more than 16 MiB"), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "run /dev/zero"), 2); /* one JSON line */
  ck_assert_msg(strncmp(out, "{\"ok\": false, \"error\": \"request ", 32) == 0, "%s", out);
  ck_assert_msg(strstr(out, "more than 16 MiB, the cap on this input"), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "ptx --ir /dev/zero --entry k"), 2);
  ck_assert_msg(strstr(out, "--ir MODULE \"/dev/zero\": more than 256 MiB"), "%s", out);
  /* a pipe that never ends */
  ck_assert_int_eq(cli_fed(out, sizeof out, "yes '{'", "ptx -"), 2);
  ck_assert_msg(strstr(out, "request on standard input: more than 16 MiB"), "%s", out);
  ck_assert_int_eq(cli_fed(out, sizeof out, "yes", "ptx --ir - --entry k"), 2);
  ck_assert_msg(strstr(out, "--ir MODULE on standard input: more than 256 MiB"), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "ptx /tmp"), 2); /* a directory: a read error */
  ck_assert_msg(strstr(out, "request \"/tmp\": cannot read it: Is a directory"), "%s", out);
}
END_TEST

/* Nothing to read is "empty input", naming the input; a file that cannot be opened is said with
 * the OS's reason. */
START_TEST(empty_and_unopenable_inputs) {
  ck_assert_int_eq(cli_fed(out, sizeof out, "printf ''", "ptx -"), 2);
  ck_assert_str_eq(out, "redjit: request on standard input: empty input\n");
  ck_assert_int_eq(cli(out, sizeof out, "explain /dev/null"), 2);
  ck_assert_str_eq(out, "redjit: request \"/dev/null\": empty input\n");
  ck_assert_int_eq(cli(out, sizeof out, "run - < /dev/null"), 2);
  ck_assert_str_eq(out, "{\"ok\": false, \"error\": \"request on standard input: empty input\", "
                        "\"status\": \"RJ_EINVAL\"}\n");
  ck_assert_int_eq(cli(out, sizeof out, "ptx --ir - --entry k < /dev/null"), 2);
  ck_assert_str_eq(out, "redjit: --ir MODULE on standard input: empty input\n");
  ck_assert_int_eq(cli(out, sizeof out, "ptx --ir /nonexistent.ll --entry k"), 2);
  ck_assert_str_eq(out, "redjit: --ir MODULE \"/nonexistent.ll\": cannot open it: No such file or "
                        "directory\n");
  char *f = tmpfile_with(SEED000);
  ck_assert_int_eq(chmod(f, 0), 0);
  if (access(f, R_OK) != 0) { /* not as root, who reads it anyway */
    ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx %s", f)), 2);
    ck_assert_msg(strstr(out, rjt_fmt("request \"%s\": cannot open it: Permission denied", f)),
                  "%s", out);
  }
  unlink(f);
}
END_TEST

/* -t, -e, -d, -s are --target, --emit, --device, --seed (-t VALUE or -tVALUE); -V is --version;
 * -o FILE / --output FILE write what the command prints to FILE. */
START_TEST(short_options_and_output) {
  static char longer[1 << 16];
  ck_assert_int_eq(cli(longer, sizeof longer, "ptx '" SEED000 "' --target sm_80 --emit llvm"), 0);
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' -t sm_80 -e llvm"), 0);
  ck_assert_str_eq(out, longer);
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' -tsm_80 -ellvm"), 0);
  ck_assert_str_eq(out, longer);
  ck_assert_int_eq(cli(out, sizeof out, "-V"), 0);
  ck_assert_str_eq(out, rjt_fmt("redjit %s\n", rj_version()));
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' -t"), 2);
  ck_assert_msg(strstr(out, "-t: missing value (-t T)"), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "variants -s 3"), 2);
  ck_assert_msg(strstr(out, "--seed does not apply to variants"), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' -q"), 2);
  ck_assert_msg(strstr(out, "unknown option \"-q\""), "%s", out);
  /* -o: the output in FILE, nothing on standard output */
  static char ptx[1 << 16], file[1 << 16];
  ck_assert_int_eq(cli(ptx, sizeof ptx, "ptx '" SEED000 "' -t sm_90"), 0);
  const char *o = "/tmp/rjcli_output.ptx";
  static const char *const forms[] = {"-o %s", "-o%s", "--output %s", "--output=%s"};
  for (size_t i = 0; i < 4; i++) {
    unlink(o);
    char opt[64];
    snprintf(opt, sizeof opt, forms[i], o);
    ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("ptx '" SEED000 "' -t sm_90 %s", opt)), 0);
    ck_assert_str_eq(out, "");
    FILE *f = fopen(o, "r");
    ck_assert_ptr_nonnull(f);
    file[fread(file, 1, sizeof file - 1, f)] = 0;
    fclose(f);
    ck_assert_str_eq(file, ptx);
  }
  /* a JSON command's line goes there too, an error's included */
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("plan '" SEED000 "' -o %s", o)), 2);
  ck_assert_str_eq(out, "");
  FILE *f = fopen(o, "r");
  ck_assert_ptr_nonnull(f);
  file[fread(file, 1, sizeof file - 1, f)] = 0;
  fclose(f);
  ck_assert_msg(strncmp(file, "{\"ok\": false, \"error\": \"kind: plan takes a treduce", 47) == 0,
                "%s", file);
  unlink(o);
  ck_assert_int_eq(cli(out, sizeof out, "variants -o /nonexistent/dir/out"), 2);
  ck_assert_str_eq(out, "redjit: --output: cannot open \"/nonexistent/dir/out\": No such file or "
                        "directory\n");
  ck_assert_int_eq(cli(out, sizeof out, "run '" SEED000 "' -o /nonexistent/dir/out"), 2);
  ck_assert_msg(strstr(out, "\"error\": \"--output: cannot open"), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "variants -o /dev/full"), 2); /* a write that fails */
  ck_assert_msg(strstr(out, "--output: cannot write \"/dev/full\""), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "help -o x"), 2);
  ck_assert_msg(strstr(out, "--output does not apply to help"), "%s", out);
}
END_TEST

/* The fuzzer's reproducers in tests/repro/ through the CLI: status 2 naming the field. */
START_TEST(repro_requests) {
  ck_assert_int_eq(
      cli(out, sizeof out, rjt_fmt("ptx '%s'", rjt_repro("json_log2size_truncated.json"))), 2);
  ck_assert_msg(strstr(out, "redjit: log2_size: 4294967301 is out of range (0..5)"), "%s", out);
  ck_assert_int_eq(
      cli(out, sizeof out, rjt_fmt("ptx '%s'", rjt_repro("json_ubsan_stride_overflow.json"))), 2);
  ck_assert_msg(strstr(out, "redjit: src.layout.stride[0]: \"9223372036854775807@thread\": the "
                            "step is out of range"),
                "%s", out);
}
END_TEST

/* Without a GPU, run exits 3 with one JSON line; with one, it passes (exit 0), and op custom
 * runs under --no-check (outputs not compared). */
START_TEST(run_status) {
  rj_ctx *ctx = rj_ctx_new();
  int gpu = rjt_have_gpu(ctx);
  rj_ctx_free(ctx);
  /* op custom: no oracle, so run refuses it (before any GPU) unless told not to compare */
  const char *custom = REDJIT_SOURCE_DIR "/examples/tensor_custom_welford.json";
  ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("run %s", custom)), 2);
  ck_assert_msg(strstr(out, "no CPU oracle") && strstr(out, "--no-check"), "%s", out);
  int rc = cli(out, sizeof out, "run '" SEED000 "' --seed 3");
  if (!gpu) {
    ck_assert_int_eq(rc, 3);
    ck_assert_msg(strncmp(out, "{\"ok\": false, \"error\": ", 23) == 0, "%s", out);
  } else {
    ck_assert_msg(rc == 0, "%s", out);
    ck_assert_ptr_nonnull(
        strstr(out, "{\"ok\": true, \"variant\": \"shared\", \"target\": \"sm_90"));
    ck_assert_ptr_nonnull(strstr(out, "\"checked\": 4,"));
    ck_assert_int_eq(cli(out, sizeof out, "bench '" SEED000 "'"), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"gbps\": "));
    rc = cli(out, sizeof out, rjt_fmt("run %s --no-check", custom));
    ck_assert_msg(rc == 0 && strstr(out, "\"checked\": 0,") && strstr(out, "\"compared\": false"),
                  "%s", out);
  }
}
END_TEST

/* run reports the time this process spent: a miss its compile; a disk-cache hit "cache": "disk",
 * the read's time and no compile (not the compile time the entry keeps).  With a GPU only. */
START_TEST(run_reports_disk_hit) {
  rj_ctx *ctx = rj_ctx_new();
  int gpu = rjt_have_gpu(ctx);
  rj_ctx_free(ctx);
  if (!gpu) return;
  char dir[] = "/tmp/rjclicacheXXXXXX", args[512];
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(args, sizeof args, "run '" SEED000 "' --seed 3");
  const char *was = getenv("REDJIT_CACHE_DIR");
  char *saved = was ? strdup(was) : NULL;
  setenv("REDJIT_CACHE_DIR", dir, 1); /* the child's cache: fresh, so the first run compiles */
  double ms[2][2];
  for (int i = 0; i < 2; i++) {
    ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("%s", args)), 0);
    const char *c = strstr(out, "\"compile_ms\": "), *d = strstr(out, "\"cache_ms\": ");
    ck_assert_msg(c && d, "%s", out);
    ms[i][0] = atof(c + 14);
    ms[i][1] = atof(d + 12);
    ck_assert_msg(strstr(out, i ? "\"cache\": \"disk\"" : "\"cache\": \"miss\""), "%s", out);
  }
  ck_assert_msg(ms[0][0] > 0 && ms[0][1] == 0, "miss: compile %g, read %g", ms[0][0], ms[0][1]);
  ck_assert_msg(ms[1][0] == 0 && ms[1][1] > 0, "disk: compile %g, read %g", ms[1][0], ms[1][1]);
  if (saved)
    setenv("REDJIT_CACHE_DIR", saved, 1);
  else
    unsetenv("REDJIT_CACHE_DIR");
  free(saved);
}
END_TEST

/* ---------------------------------------------------------------- conventions: help, version,
 * option syntax, applicability, JSON escaping */

/* The options each command's help must mention (CLI.md's table). */
static const struct {
  const char *cmd, *opts[12];
} cmd_opts[] = {
    {"ptx",
     {"--target", "--emit", "--ptx-version", "--emulate-packed", "--device", "--ir", "--entry",
      "--output"}},
    {"explain",
     {"--target", "--ptx-version", "--emulate-packed", "--device", "--gpus", "--output"}},
    {"run",
     {"--target", "--ptx-version", "--emulate-packed", "--seed", "--device", "--nans", "--no-check",
      "--path", "--output"}},
    {"bench", {"--target", "--ptx-version", "--emulate-packed", "--device", "--path", "--output"}},
    {"plan", {"--path", "--gpus", "--output"}},
    {"variants", {"--output"}},
    {"help", {"--table"}},
    {"version", {NULL}},
};
static const char *const all_opts[] = {"--target", "--emit",   "--ptx-version", "--emulate-packed",
                                       "--seed",   "--device", "--nans",        "--no-check",
                                       "--path",   "--gpus",   "--ir",          "--entry",
                                       "--output", "--table"};

static bool lists(const char *const *opts, const char *o) {
  for (; *opts; opts++)
    if (strcmp(*opts, o) == 0) return true;
  return false;
}

START_TEST(help_and_version) {
  static char first[1 << 14];
  ck_assert_int_eq(cli(first, sizeof first, "--help"), 0);
  for (size_t i = 0; i < sizeof cmd_opts / sizeof cmd_opts[0]; i++)
    ck_assert_msg(strstr(first, rjt_fmt("\n  %s ", cmd_opts[i].cmd)), "%s", cmd_opts[i].cmd);
  ck_assert_ptr_nonnull(strstr(first, "exit status"));
  static const char *const same[] = {"-h", "help"};
  for (size_t i = 0; i < 2; i++) {
    ck_assert_int_eq(cli(out, sizeof out, same[i]), 0);
    ck_assert_str_eq(out, first);
  }
  ck_assert_int_eq(cli(out, sizeof out, "--version"), 0);
  ck_assert_str_eq(out, rjt_fmt("redjit %s\n", rj_version()));
  ck_assert_int_eq(cli(out, sizeof out, "version"), 0);
  ck_assert_str_eq(out, rjt_fmt("redjit %s\n", rj_version()));
  ck_assert_int_eq(cli(out, sizeof out, "help frobnicate"), 2);
  ck_assert_msg(strstr(out, "ptx explain run bench plan variants"), "%s", out);
}
END_TEST

/* help CMD, CMD --help and CMD -h: the same text, naming every option of CMD and no other. */
START_TEST(command_help) {
  static char first[1 << 14];
  for (size_t i = 0; i < sizeof cmd_opts / sizeof cmd_opts[0]; i++) {
    const char *c = cmd_opts[i].cmd;
    ck_assert_int_eq(cli(first, sizeof first, rjt_fmt("help %s", c)), 0);
    ck_assert_msg(strstr(first, rjt_fmt("usage: redjit %s", c)), "%s", first);
    ck_assert_msg(strstr(first, "example:\n  redjit "), "%s", first);
    for (size_t k = 0; k < sizeof all_opts / sizeof all_opts[0]; k++) {
      bool listed = strstr(first, rjt_fmt("  %s ", all_opts[k])) != NULL ||
                    strstr(first, rjt_fmt(", %s ", all_opts[k])) != NULL; /* "-t, --target" */
      ck_assert_msg(listed == lists(cmd_opts[i].opts, all_opts[k]), "help %s: %s", c, all_opts[k]);
    }
    ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("%s --help", c)), 0);
    ck_assert_str_eq(out, first);
    ck_assert_int_eq(cli(out, sizeof out, rjt_fmt("%s '" SEED000 "' -h", c)), 0);
    ck_assert_str_eq(out, first);
  }
  ck_assert_int_eq(cli(out, sizeof out, "run --help"), 0); /* help, not a JSON line */
  ck_assert_ptr_null(strstr(out, "\"ok\""));
}
END_TEST

/* docs/CLI.md holds the command -> option table exactly as `redjit help --table` prints it. */
START_TEST(docs_table_is_the_cli_table) {
  ck_assert_int_eq(cli(out, sizeof out, "help --table"), 0);
  FILE *f = fopen(REDJIT_SOURCE_DIR "/docs/CLI.md", "r");
  ck_assert_ptr_nonnull(f);
  static char doc[1 << 17];
  doc[fread(doc, 1, sizeof doc - 1, f)] = 0;
  fclose(f);
  ck_assert_msg(strstr(doc, out), "docs/CLI.md lacks the table:\n%s", out);
}
END_TEST

/* --opt=value and --opt value are the same; a flag takes no value. */
START_TEST(option_syntax) {
  static char spaced[1 << 16];
  ck_assert_int_eq(cli(spaced, sizeof spaced, "ptx '" SEED000 "' --target sm_90 --emit llvm"), 0);
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' --target=sm_90 --emit=llvm"), 0);
  ck_assert_str_eq(out, spaced);
  ck_assert_int_eq(cli(spaced, sizeof spaced, "ptx '" SEED000 "' --ptx-version 88"), 0);
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' --ptx-version=88"), 0);
  ck_assert_str_eq(out, spaced);
  /* given twice: the last counts */
  ck_assert_int_eq(cli(spaced, sizeof spaced, "ptx '" SEED000 "' --target sm_90"), 0);
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' --target sm_80 --target=sm_90"), 0);
  ck_assert_str_eq(out, spaced);
  ck_assert_int_eq(cli(out, sizeof out, "ptx '" SEED000 "' --emulate-packed=1"), 2);
  ck_assert_msg(strstr(out, "--emulate-packed takes no value"), "%s", out);
  ck_assert_msg(strstr(out, "try 'redjit help ptx'"), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "run '" SEED000 "' --seed=banana"), 2);
  ck_assert_msg(strstr(out, "--seed: \\\"banana\\\" is not a number"), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "ptx -- '" SEED000 "'"), 0); /* -- ends the options */
}
END_TEST

/* An option the command does not take is an error naming both; run / bench / plan say it as
 * their one JSON line. */
START_TEST(inapplicable_options) {
  static const struct {
    const char *args, *msg;
  } text[] = {
      {"variants --seed 3", "redjit: --seed does not apply to variants\n"},
      {"explain '" SEED000 "' --emit llvm", "--emit does not apply to explain"},
      {"ptx '" SEED000 "' --gpus 2", "--gpus does not apply to ptx"},
      {"variants extra", "unexpected argument \"extra\""},
      {"ptx '" SEED000 "' '" SEED000 "'", "one REQUEST only"},
      {"frobnicate", "try 'redjit --help'"},
  };
  for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
    ck_assert_msg(cli(out, sizeof out, text[i].args) == 2, "%s: %s", text[i].args, out);
    ck_assert_msg(strstr(out, text[i].msg), "%s: %s", text[i].args, out);
  }
  static const struct {
    const char *args, *msg;
  } json[] = {
      {"run '" SEED000 "' --ir x.ll", "\"error\": \"--ir does not apply to run\""},
      {"bench '" SEED000 "' --seed 1", "\"error\": \"--seed does not apply to bench\""},
      {"plan '" SEED000 "' --target sm_90", "\"error\": \"--target does not apply to plan\""},
      {"run '" SEED000 "' --emulate-packed=yes", "takes no value"},
      {"run '" SEED000 "' --no-check", "no_check: tensor and treduce requests only"},
      {"bench '" SEED000 "' --no-check", "\"error\": \"--no-check does not apply to bench\""},
  };
  for (size_t i = 0; i < sizeof json / sizeof json[0]; i++) {
    ck_assert_msg(cli(out, sizeof out, json[i].args) == 2, "%s: %s", json[i].args, out);
    ck_assert_msg(strncmp(out, "{\"ok\": false, \"error\": ", 23) == 0, "%s", out);
    ck_assert_msg(strstr(out, json[i].msg), "%s: %s", json[i].args, out);
    ck_assert_int_eq(rjt_count(out, "\n"), 1);
  }
}
END_TEST

/* A small JSON checker: the end of the value at p, or NULL when it is not valid JSON. */
static const char *jv_value(const char *p);
static const char *jv_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
    p++;
  return p;
}
static const char *jv_string(const char *p) {
  if (!p || *p++ != '"') return NULL;
  for (; *p != '"'; p++) {
    if ((unsigned char)*p < 0x20) return NULL; /* a raw control char, or the end */
    if (*p != '\\') continue;
    if (*++p != 'u') {
      if (!*p || !strchr("\"\\/bfnrt", *p)) return NULL;
      continue;
    }
    for (int i = 1; i <= 4; i++)
      if (!isxdigit((unsigned char)p[i])) return NULL;
    p += 4;
  }
  return p + 1;
}
static const char *jv_members(const char *p, char close) {
  if (*(p = jv_ws(p)) == close) return p + 1;
  for (;;) {
    if (close == '}') {
      if (!(p = jv_string(jv_ws(p))) || *(p = jv_ws(p)) != ':') return NULL;
      p++;
    }
    if (!(p = jv_value(p))) return NULL;
    if (*(p = jv_ws(p)) == close) return p + 1;
    if (*p++ != ',') return NULL;
  }
}
static const char *jv_value(const char *p) {
  p = jv_ws(p);
  if (*p == '"') return jv_string(p);
  if (*p == '{' || *p == '[') return jv_members(p + 1, *p == '{' ? '}' : ']');
  static const char *const lit[] = {"true", "false", "null"};
  for (int i = 0; i < 3; i++)
    if (strncmp(p, lit[i], strlen(lit[i])) == 0) return p + strlen(lit[i]);
  if (*p != '-' && !isdigit((unsigned char)*p)) return NULL;
  size_t n = strspn(p, "-+0123456789.eE");
  return n ? p + n : NULL;
}
static void assert_one_json_line(const char *line) {
  const char *end = jv_value(line);
  ck_assert_msg(end && strcmp(jv_ws(end), "") == 0 && rjt_count(line, "\n") == 1, "not JSON: %s",
                line);
}

/* Quotes, backslashes and control characters in a message are escaped: the line stays JSON. */
START_TEST(json_is_escaped) {
  ck_assert_int_eq(cli(out, sizeof out, "run '" SEED000 "' --seed \"$(printf 'a\"b\\\\c\\td')\""),
                   2);
  assert_one_json_line(out);
  ck_assert_msg(strstr(out, "\"--seed: \\\"a\\\"b\\\\c\\td\\\" is not a number\""), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "bench \"$(printf '/nonexistent/q\"\\001\\nx')\""), 2);
  assert_one_json_line(out);
  ck_assert_msg(strstr(out, "/nonexistent/q\\\"\\u0001\\nx"), "%s", out);
  ck_assert_int_eq(cli(out, sizeof out, "plan '{\"kind\":\"tile\",\"o\\tp\":1}'"), 2);
  assert_one_json_line(out);
  ck_assert_int_eq(cli(out, sizeof out,
                       "plan '{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":3,"
                       "\"root\":0,\"shape\":[4096]}' --gpus 3 --path ring"),
                   0);
  assert_one_json_line(out);
  ck_assert_msg(strstr(out, "\"why_not\": \""), "%s", out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cli");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, ptx_and_explain);
  tcase_add_test(tc, ptx_of_caller_ir);
  tcase_add_test(tc, bad_input_is_status_2);
  tcase_add_test(tc, run_status);
  tcase_add_test(tc, run_reports_disk_hit);
  tcase_add_test(tc, numbers_are_checked);
  tcase_add_test(tc, inputs_are_capped);
  tcase_add_test(tc, repro_requests);
  tcase_add_test(tc, help_and_version);
  tcase_add_test(tc, command_help);
  tcase_add_test(tc, docs_table_is_the_cli_table);
  tcase_add_test(tc, option_syntax);
  tcase_add_test(tc, inapplicable_options);
  tcase_add_test(tc, json_is_escaped);
  tcase_add_test(tc, empty_and_unopenable_inputs);
  tcase_add_test(tc, short_options_and_output);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
