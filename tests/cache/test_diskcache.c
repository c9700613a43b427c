/* The persistent kernel cache: another process finds a kernel on disk and compiles nothing; bad
 * entries are ignored and replaced; unusable directories leave the cache off or read-only with a
 * note and RJ_OK; processes writing at once; the size bound; the switches.  Needs no GPU. */
#include "rjtest.h"

#include <dirent.h>
#include <sys/stat.h>

/* A tile request, different for each i. */
static const char *request(int i) {
  static const char *const ops[] = {"sum", "max", "min"};
  return rjt_fmt("{\"kind\":\"tile\",\"op\":\"%s\",\"dtype\":\"f32\",\"scope\":\"cta\","
                 "\"threads\":256,\"src\":{\"mem\":\"shared\",\"shape\":[2,%d]},"
                 "\"dst\":{\"mem\":\"shared\",\"shape\":[2]}}",
                 ops[i % 3], 256 * (1 + i / 3));
}

static uint64_t text_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Compiles request(i) in a fresh context with the environment's cache: the PTX's hash (0: the
 * compile failed).  Plain C: child processes call it outside Check. */
static uint64_t compile_plain(int i, rj_cache_stats *st) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_kernel *k = NULL;
  uint64_t h = 0;
  st->struct_size = sizeof *st;
  if (rj_request_parse(ctx, request(i), &r) == RJ_OK && rj_compile(ctx, &r, NULL, &k) == RJ_OK &&
      rj_ctx_cache_stats(ctx, st) == RJ_OK && st->compiles == rj_ctx_compile_count(ctx))
    h = text_hash(rj_kernel_text(k, RJ_EMIT_PTX));
  rj_ctx_free(ctx);
  return h;
}

static uint64_t compile_fresh(int i, rj_cache_stats *st) {
  uint64_t h = compile_plain(i, st);
  ck_assert_msg(h, "request %d did not compile", i);
  return h;
}

/* A fresh cache directory for one test, set as REDJIT_CACHE_DIR. */
static const char *fresh_dir(void) {
  static char dir[256];
  snprintf(dir, sizeof dir, "%s/rjdc.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  setenv("REDJIT_CACHE_DIR", dir, 1);
  unsetenv("REDJIT_CACHE_DISABLE");
  unsetenv("REDJIT_CACHE_MAX_BYTES");
  return dir;
}

/* Regular files in dir whose name ends with suffix; the first one's path into first. */
static int count_files(const char *dir, const char *suffix, char *first, size_t n) {
  DIR *d = opendir(dir);
  int count = 0;
  if (!d) return 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name), sl = strlen(suffix);
    if (e->d_name[0] == '.' && strcmp(suffix, ".tmp") != 0) continue;
    if (strcmp(suffix, ".tmp") == 0 ? strncmp(e->d_name, ".tmp.", 5) != 0
                                    : len < sl || strcmp(e->d_name + len - sl, suffix) != 0)
      continue;
    if (!count++ && first) snprintf(first, n, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  return count;
}

/* This binary as a child process: `child I` compiles request(i) and prints
 * "compiles disk_hits ptx-hash"; `many I` compiles requests 0..5 and i+6. */
static char self[4096]; /* this binary's path */
static FILE *spawn(const char *mode, int i) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "'%s' %s %d", self, mode, i);
  FILE *f = popen(cmd, "r");
  ck_assert_ptr_nonnull(f);
  return f;
}

static int child(const char *mode, int i) {
  rj_cache_stats st;
  if (strcmp(mode, "twice") == 0) { /* request(i) twice in one context, nothing on stdout */
    rj_ctx *ctx = rj_ctx_new();
    rj_request r;
    rj_kernel *k = NULL;
    int bad = rj_request_parse(ctx, request(i), &r) || rj_compile(ctx, &r, NULL, &k) ||
              rj_compile(ctx, &r, NULL, &k);
    rj_ctx_free(ctx);
    return bad;
  }
  if (strcmp(mode, "child") == 0) {
    uint64_t h = compile_plain(i, &st);
    printf("%lld %lld %016llx\n", st.compiles, st.disk_hits, (unsigned long long)h);
    return 0;
  }
  for (int j = 0; j < 7; j++)
    if (!compile_plain(j < 6 ? j : i + 6, &st)) return 1;
  printf("ok\n");
  return 0;
}

START_TEST(second_process_compiles_nothing) {
  fresh_dir();
  long long compiles[2], hits[2];
  unsigned long long hash[2];
  for (int run = 0; run < 2; run++) {
    FILE *f = spawn("child", 4);
    ck_assert_int_eq(fscanf(f, "%lld %lld %llx", &compiles[run], &hits[run], &hash[run]), 3);
    ck_assert_int_eq(pclose(f), 0);
  }
  ck_assert_int_eq(compiles[0], 1);
  ck_assert_int_eq(hits[0], 0);
  ck_assert_int_eq(compiles[1], 0);
  ck_assert_int_eq(hits[1], 1);
  ck_assert_msg(hash[0] == hash[1], "the PTX read from disk differs from the compiled PTX");
}
END_TEST

/* Everything a kernel read from disk says is what the compiled one said. */
START_TEST(disk_kernel_is_the_compiled_one) {
  fresh_dir();
  rj_ctx *a = rj_ctx_new(), *b = rj_ctx_new();
  rj_request r;
  rjt_parse(a,
            "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[64,4096],"
            "\"axes\":[1]}",
            &r);
  rj_kernel *ka = NULL, *kb = NULL;
  ck_assert_int_eq(rj_compile(a, &r, NULL, &ka), RJ_OK);
  ck_assert_int_eq(rj_compile(b, &r, NULL, &kb), RJ_OK);
  ck_assert_int_eq(rj_ctx_compile_count(b), 0);
  for (int w = RJ_EMIT_PTX; w <= RJ_EMIT_LLVM_OPT; w++)
    ck_assert_str_eq(rj_kernel_text(ka, w), rj_kernel_text(kb, w));
  ck_assert_str_eq(rj_kernel_variant(ka), rj_kernel_variant(kb));
  ck_assert_str_eq(rj_kernel_entry(ka), rj_kernel_entry(kb));
  ck_assert_str_eq(rj_kernel_target(ka), rj_kernel_target(kb));
  ck_assert(rj_kernel_compile_ms(ka) == rj_kernel_compile_ms(kb));
  ck_assert(rj_kernel_disk_ms(ka) == -1); /* compiled by a, read from disk by b */
  ck_assert_msg(rj_kernel_disk_ms(kb) >= 0 && rj_kernel_disk_ms(kb) < 1000, "disk read %g ms",
                rj_kernel_disk_ms(kb));
  ck_assert(rj_kernel_disk_ms(NULL) == -1);
  unsigned ga[3], gb[3], ba[3], bb[3], sa, sb;
  rj_kernel_dims(ka, ga, ba, &sa);
  rj_kernel_dims(kb, gb, bb, &sb);
  ck_assert(!memcmp(ga, gb, sizeof ga) && !memcmp(ba, bb, sizeof ba) && sa == sb);
  rj_kernel *again = NULL; /* and the second ask is a memory hit */
  ck_assert_int_eq(rj_compile(b, &r, NULL, &again), RJ_OK);
  ck_assert_ptr_eq(again, kb);
  rj_cache_stats st = {.struct_size = sizeof st};
  ck_assert_int_eq(rj_ctx_cache_stats(b, &st), RJ_OK);
  ck_assert_int_eq(st.disk_hits, 1);
  ck_assert_int_eq(st.memory_hits, 1);
  ck_assert_int_eq(st.kernels, 1);
  ck_assert_str_eq(st.disk_note, "");
  rj_ctx_free(a);
  rj_ctx_free(b);
}
END_TEST

static void put_file(const char *path, const void *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
  fclose(f);
}

static size_t get_file(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  size_t n = fread(buf, 1, cap, f);
  fclose(f);
  return n;
}

/* A bad entry in place of request 0's: garbage, truncated, empty, another format version, one
 * flipped byte, another request's entry under this name.  Each is ignored (compiled again, the
 * same PTX) and replaced (the next process reads it). */
START_TEST(bad_entries_ignored_and_replaced) {
  const char *dir = fresh_dir();
  rj_cache_stats st;
  uint64_t good = compile_fresh(0, &st);
  char path[512], other[512];
  ck_assert_int_eq(count_files(dir, ".rjk", path, sizeof path), 1);
  static char buf[1 << 20], alien[1 << 20];
  size_t n = get_file(path, buf, sizeof buf), m = 0;
  switch (_i) {
  case 0:
    memset(buf, 0x5a, n);
    break;
  case 1:
    n /= 2;
    break;
  case 2:
    n = 0;
    break;
  case 3:
    buf[8] ^= 0x7f;
    break; /* the format version */
  case 4:
    buf[n / 2] ^= 1;
    break;
  case 5: /* request 1's entry, renamed to request 0's name */
    ck_assert_int_eq(unlink(path), 0);
    compile_fresh(1, &st);
    ck_assert_int_eq(count_files(dir, ".rjk", other, sizeof other), 1);
    m = get_file(other, alien, sizeof alien);
    memcpy(buf, alien, m);
    n = m;
    break;
  }
  put_file(path, buf, n);
  ck_assert(compile_fresh(0, &st) == good);
  ck_assert_int_eq(st.compiles, 1);
  ck_assert_int_eq(st.disk_hits, 0);
  ck_assert(compile_fresh(0, &st) == good);
  ck_assert_int_eq(st.compiles, 0);
  ck_assert_int_eq(st.disk_hits, 1);
}
END_TEST

/* The entry's optional cubin part follows its checksum: bytes there that are no valid cubin
 * part (garbage, a cut one) are ignored, counted, and the rest of the entry still serves. */
START_TEST(bad_cubin_part_ignored) {
  const char *dir = fresh_dir();
  rj_cache_stats st;
  uint64_t good = compile_fresh(2, &st);
  char path[512];
  ck_assert_int_eq(count_files(dir, ".rjk", path, sizeof path), 1);
  static char buf[1 << 20];
  size_t n = get_file(path, buf, sizeof buf);
  static const char tail[][8] = {"\x7f"
                                 "ELFxyz",
                                 "garbage"};
  memcpy(buf + n, tail[_i], sizeof tail[_i]);
  put_file(path, buf, n + sizeof tail[_i]);
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_kernel *k = NULL;
  rjt_parse(ctx, request(2), &r);
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
  ck_assert(text_hash(rj_kernel_text(k, RJ_EMIT_PTX)) == good);
  st.struct_size = sizeof st;
  ck_assert_int_eq(rj_ctx_cache_stats(ctx, &st), RJ_OK);
  ck_assert_int_eq(st.compiles, 0);
  ck_assert_int_eq(st.disk_hits, 1);
  ck_assert_int_eq(st.cubin_stale, 1);
  ck_assert_int_eq(st.cubin_loads + st.cubin_links, 0);
  rj_ctx_free(ctx);
}
END_TEST

/* Every PTX starts with its header: "// redjit:" lines naming the version, the variant, the
 * canonical request and the launch; a request's text cannot add a line; the code follows. */
START_TEST(ptx_header) {
  fresh_dir();
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_kernel *k = NULL;
  rjt_parse(ctx,
            "{\"kind\":\"tensor\",\"op\":\"max\",\"dtype\":\"f32\",\"shape\":[3000,77],"
            "\"axes\":[1],\"dynamic\":true}",
            &r);
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
  const char *ptx = rj_kernel_text(k, RJ_EMIT_PTX), *json = NULL;
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &json), RJ_OK);
  char line[4096];
  int n = 0;
  const char *p = ptx;
  for (; strncmp(p, "// redjit:", 10) == 0; p = strchr(p, '\n') + 1, n++) {
    ck_assert_ptr_nonnull(strchr(p, '\n'));
    snprintf(line, sizeof line, "%.*s", (int)(strchr(p, '\n') - p), p);
    if (n == 0)
      ck_assert_msg(strstr(line, rj_version()) && strstr(line, rj_kernel_variant(k)) &&
                        strstr(line, rj_kernel_entry(k)),
                    "%s", line);
    if (n == 1) ck_assert_str_eq(line + strlen("// redjit: request "), json);
  }
  ck_assert_int_ge(n, 4);
  ck_assert_ptr_nonnull(strstr(ptx, "// redjit: launch grid "));
  ck_assert_ptr_nonnull(strstr(ptx, "// redjit: params src dst i64="));
  ck_assert_msg(strncmp(p, "//\n// Generated by LLVM NVPTX Back-End", 38) == 0, "%.80s", p);
  rj_ctx_free(ctx);
}
END_TEST

/* REDJIT_DUMP_DIR: a compiled kernel leaves its request, IR before and after O3 and PTX there,
 * named by its key's hash and variant; a hit writes nothing; a directory that cannot be written
 * fails no call. */
START_TEST(dump_dir) {
  const char *dir = fresh_dir();
  char dump[300];
  snprintf(dump, sizeof dump, "%s/dump", dir);
  setenv("REDJIT_DUMP_DIR", dump, 1);
  unsetenv("REDJIT_CACHE_DIR");
  setenv("REDJIT_CACHE_DISABLE", "1", 1);
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_kernel *k = NULL, *again = NULL;
  rjt_parse(ctx, request(5), &r);
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &again), RJ_OK);
  const char *suffix[] = {".json", ".ll", ".opt.ll", ".ptx"};
  const rj_emit what[] = {RJ_EMIT_LLVM, RJ_EMIT_LLVM, RJ_EMIT_LLVM_OPT, RJ_EMIT_PTX};
  static char got[1 << 20];
  for (int i = 0; i < 4; i++) {
    char path[512];
    ck_assert_int_eq(count_files(dump, suffix[i], path, sizeof path), i == 1 ? 2 : 1);
    if (i == 1) ck_assert_int_eq(count_files(dump, ".opt.ll", NULL, 0), 1);
    char named[64];
    snprintf(named, sizeof named, ".%s%s", rj_kernel_variant(k), i == 1 ? "" : suffix[i]);
    ck_assert_msg(strstr(path, named), "%s: not named by the variant", path);
    if (i == 1) continue; /* the first .ll found may be either */
    size_t n = get_file(path, got, sizeof got - 1);
    got[n] = 0;
    const char *want = i == 0 ? NULL : rj_kernel_text(k, what[i]);
    if (want) ck_assert_str_eq(got, want);
    if (i == 0) ck_assert_ptr_nonnull(strstr(got, "\"kind\":\"tile\""));
  }
  rj_ctx_free(ctx);
  setenv("REDJIT_DUMP_DIR", "/dev/null/dump", 1);
  ctx = rj_ctx_new();
  rjt_parse(ctx, request(6), &r);
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
  rj_ctx_free(ctx);
  unsetenv("REDJIT_DUMP_DIR");
}
END_TEST

/* The dump directory is trusted as the cache's: a link planted at a dump's name is replaced, never
 * followed; a directory others may write to gets nothing. */
START_TEST(dump_dir_trust) {
  const char *dir = fresh_dir();
  char dump[300], victim[300], path[512];
  snprintf(dump, sizeof dump, "%s/dump", dir);
  snprintf(victim, sizeof victim, "%s/victim", dir);
  FILE *f = fopen(victim, "w");
  fputs("victim\n", f);
  fclose(f);
  setenv("REDJIT_DUMP_DIR", dump, 1);
  unsetenv("REDJIT_CACHE_DIR");
  setenv("REDJIT_CACHE_DISABLE", "1", 1);
  for (int pass = 0; pass < 3; pass++) {
    if (pass == 1) { /* the PTX's name now a link to the victim */
      ck_assert_int_eq(count_files(dump, ".ptx", path, sizeof path), 1);
      ck_assert_int_eq(unlink(path), 0);
      ck_assert_int_eq(symlink(victim, path), 0);
    }
    if (pass == 2) { /* a directory anyone may write to (a sticky /tmp-like one) */
      ck_assert_int_eq(unlink(path), 0);
      ck_assert_int_eq(chmod(dump, 01777), 0);
    }
    rj_ctx *ctx = rj_ctx_new();
    rj_request r;
    rj_kernel *k = NULL;
    rjt_parse(ctx, request(5), &r);
    ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
    rj_ctx_free(ctx);
  }
  char got[64] = "";
  ck_assert_int_eq(get_file(victim, got, sizeof got - 1), 7);
  ck_assert_str_eq(got, "victim\n");
  struct stat st;
  ck_assert_int_eq(count_files(dump, ".ptx", NULL, 0), 0); /* pass 2 wrote nothing */
  ck_assert_int_eq(count_files(dump, ".json", path, sizeof path), 1);
  ck_assert_int_eq(lstat(path, &st), 0);
  ck_assert(S_ISREG(st.st_mode) && (st.st_mode & 077) == 0);
  unsetenv("REDJIT_DUMP_DIR");
}
END_TEST

/* A REDJIT_CACHE_DIR longer than 1023 bytes leaves the cache off with a note saying so; no
 * directory named by the path cut short is made. */
START_TEST(long_cache_dir) {
  const char *dir = fresh_dir();
  static char path[1200];
  int w = snprintf(path, sizeof path, "%s", dir);
  while (w < 1100)
    w += snprintf(path + w, sizeof path - (size_t)w, "/%.60s",
                  "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd");
  setenv("REDJIT_CACHE_DIR", path, 1);
  unsetenv("REDJIT_CACHE_DISABLE");
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_kernel *k = NULL;
  rjt_parse(ctx, request(5), &r);
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
  rj_cache_stats st = {.struct_size = sizeof st};
  ck_assert_int_eq(rj_ctx_cache_stats(ctx, &st), RJ_OK);
  ck_assert_ptr_null(st.disk_dir);
  ck_assert_msg(st.disk_note && strstr(st.disk_note, "the path is longer than 1023 bytes"), "%s",
                st.disk_note ? st.disk_note : "(none)");
  char first[300];
  snprintf(first, sizeof first, "%.*s", (int)strlen(dir) + 61, path); /* its first part */
  struct stat sb;
  ck_assert_int_ne(stat(first, &sb), 0); /* nothing made */
  rj_ctx_free(ctx);
}
END_TEST

/* REDJIT_LOG=1: one "redjit: " line per miss, memory hit and disk hit, on stderr. */
START_TEST(log_lines) {
  fresh_dir();
  char out[2][4096];
  for (int run = 0; run < 2; run++) {
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "REDJIT_LOG=1 '%s' twice 7 2>&1", self);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(out[run], 1, sizeof out[run] - 1, f);
    out[run][n] = 0;
    ck_assert_int_eq(pclose(f), 0);
    for (const char *p = out[run]; *p; p = strchr(p, '\n') + 1)
      ck_assert_msg(strncmp(p, "redjit: ", 8) == 0 && strchr(p, '\n'), "%s", out[run]);
  }
  ck_assert_int_eq(rjt_count(out[0], "redjit: miss "), 1);
  ck_assert_int_eq(rjt_count(out[0], "redjit: memory hit "), 1);
  ck_assert_int_eq(rjt_count(out[0], "redjit: disk hit "), 0);
  ck_assert_ptr_nonnull(strstr(out[0], " ms\n"));
  ck_assert_int_eq(rjt_count(out[1], "redjit: miss "), 0);
  ck_assert_int_eq(rjt_count(out[1], "redjit: disk hit "), 1);
  ck_assert_int_eq(rjt_count(out[1], "redjit: memory hit "), 1);
}
END_TEST

/* A directory that cannot be created: the cache is off, with a note, and compiles succeed.  A
 * directory without write permission (not testable as root, where permissions do not bind):
 * read-only, with a note. */
START_TEST(unusable_directory_degrades) {
  const char *dir = fresh_dir();
  rj_cache_stats st = {.struct_size = sizeof st};
  setenv("REDJIT_CACHE_DIR", "/dev/null/redjit", 1);
  compile_fresh(0, &st);
  ck_assert_int_eq(st.compiles, 1);
  ck_assert_ptr_null(st.disk_dir);
  ck_assert_msg(strstr(st.disk_note, "off") && strstr(st.disk_note, "/dev/null/redjit"), "note: %s",
                st.disk_note);
  rj_ctx *ctx = rj_ctx_new(); /* the same through the context's setting */
  ck_assert_int_eq(rj_ctx_set_disk_cache(ctx, "/dev/null/x"), RJ_OK);
  ck_assert_int_eq(rj_ctx_cache_stats(ctx, &st), RJ_OK);
  ck_assert_ptr_null(st.disk_dir);
  ck_assert_str_ne(st.disk_note, "");
  rj_ctx_free(ctx);
  if (geteuid() == 0) return;
  ck_assert_int_eq(chmod(dir, 0500), 0);
  setenv("REDJIT_CACHE_DIR", dir, 1);
  compile_fresh(0, &st);
  chmod(dir, 0700);
  ck_assert_int_eq(st.compiles, 1);
  ck_assert_int_eq(st.disk_read_only, 1);
  ck_assert_ptr_nonnull(strstr(st.disk_note, "read-only"));
  ck_assert_int_eq(count_files(dir, ".rjk", NULL, 0), 0);
}
END_TEST

/* 8 processes at once into one directory, each compiling six requests they share and one of its
 * own: 14 entries, no temporary file left, and every entry read back by a fresh context. */
/* What the cache directory may hold is not trusted: a directory others may write to is not used
 * (its kernels would be loaded), and a FIFO where an entry should be is skipped, not waited on. */
START_TEST(untrusted_directory_and_fifo) {
  const char *dir = fresh_dir();
  rj_cache_stats st = {.struct_size = sizeof st};
  ck_assert_int_eq(chmod(dir, 0777), 0);
  compile_fresh(0, &st);
  ck_assert_ptr_null(st.disk_dir);
  ck_assert_msg(strstr(st.disk_note, "writable by others"), "note: %s", st.disk_note);
  ck_assert_int_eq(chmod(dir, 0700), 0);
  compile_fresh(0, &st); /* writes the entry */
  char entry[512];
  ck_assert_int_eq(count_files(dir, ".rjk", entry, sizeof entry), 1);
  ck_assert_int_eq(unlink(entry), 0);
  ck_assert_int_eq(mkfifo(entry, 0600), 0);
  compile_fresh(0, &st); /* returns: the FIFO is not an entry */
  ck_assert_int_eq(st.compiles, 1);
  /* a compile with no request after a successful one is refused, not a crash */
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_request_parse(ctx, request(0), &r), RJ_OK);
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
  ck_assert_int_eq(rj_compile(ctx, NULL, NULL, &k), RJ_EINVAL);
  rj_ctx_free(ctx);
  unlink(entry);
}
END_TEST

START_TEST(processes_at_once) {
  const char *dir = fresh_dir();
  FILE *f[8];
  for (int i = 0; i < 8; i++)
    f[i] = spawn("many", i);
  for (int i = 0; i < 8; i++) {
    char line[16] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f[i]));
    ck_assert_str_eq(line, "ok\n");
    ck_assert_int_eq(pclose(f[i]), 0);
  }
  ck_assert_int_eq(count_files(dir, ".rjk", NULL, 0), 14);
  ck_assert_int_eq(count_files(dir, ".tmp", NULL, 0), 0);
  for (int i = 0; i < 14; i++) {
    rj_cache_stats st;
    compile_fresh(i, &st);
    ck_assert_int_eq(st.compiles, 0);
    ck_assert_int_eq(st.disk_hits, 1);
  }
}
END_TEST

static long long dir_bytes(const char *dir) {
  DIR *d = opendir(dir);
  long long total = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    struct stat s;
    if (e->d_name[0] != '.' && !stat(rjt_fmt("%s/%s", dir, e->d_name), &s)) total += s.st_size;
  }
  if (d) closedir(d);
  return total;
}

/* A bound of 40 000 bytes: the directory stays under it, the least recently used entries go. */
START_TEST(eviction_at_the_bound) {
  const char *dir = fresh_dir();
  setenv("REDJIT_CACHE_MAX_BYTES", "40000", 1);
  rj_cache_stats st;
  long long evicted = 0;
  for (int i = 0; i < 12; i++) {
    compile_fresh(i, &st);
    evicted += st.disk_evictions;
    ck_assert_int_le(dir_bytes(dir), 40000);
  }
  ck_assert_int_gt(evicted, 0);
  compile_fresh(11, &st); /* the newest stays */
  ck_assert_int_eq(st.disk_hits, 1);
  compile_fresh(0, &st); /* the oldest went */
  ck_assert_int_eq(st.compiles, 1);
}
END_TEST

/* REDJIT_CACHE_DISABLE=1 and rj_ctx_set_disk_cache(ctx, NULL): no file, not even the directory. */
START_TEST(disabled_writes_nothing) {
  const char *dir = fresh_dir();
  char sub[300];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  setenv("REDJIT_CACHE_DIR", sub, 1);
  setenv("REDJIT_CACHE_DISABLE", "1", 1);
  rj_cache_stats st;
  compile_fresh(0, &st);
  ck_assert_ptr_null(st.disk_dir);
  ck_assert_str_eq(st.disk_note, "");
  unsetenv("REDJIT_CACHE_DISABLE");
  rj_ctx *ctx = rj_ctx_new();
  ck_assert_int_eq(rj_ctx_set_disk_cache(ctx, NULL), RJ_OK);
  rj_request r;
  rjt_parse(ctx, request(1), &r);
  rj_kernel *k = NULL;
  ck_assert_int_eq(rj_compile(ctx, &r, NULL, &k), RJ_OK);
  rj_ctx_free(ctx);
  struct stat s;
  ck_assert_int_ne(stat(sub, &s), 0);
  ck_assert_int_eq(count_files(dir, "", NULL, 0), 0);
}
END_TEST

int main(int argc, char **argv) {
  if (argc == 3) return child(argv[1], atoi(argv[2]));
  if (!realpath(argv[0], self)) return 1;
  Suite *s = suite_create("diskcache");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, second_process_compiles_nothing);
  tcase_add_test(tc, disk_kernel_is_the_compiled_one);
  tcase_add_loop_test(tc, bad_entries_ignored_and_replaced, 0, 6);
  tcase_add_loop_test(tc, bad_cubin_part_ignored, 0, 2);
  tcase_add_test(tc, ptx_header);
  tcase_add_test(tc, dump_dir);
  tcase_add_test(tc, log_lines);
  tcase_add_test(tc, unusable_directory_degrades);
  tcase_add_test(tc, untrusted_directory_and_fifo);
  tcase_add_test(tc, processes_at_once);
  tcase_add_test(tc, eviction_at_the_bound);
  tcase_add_test(tc, disabled_writes_nothing);
  tcase_add_test(tc, dump_dir_trust);
  tcase_add_test(tc, long_cache_dir);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
