/* treduce's automatic path from path tables, without a GPU: the built-in table's choices and their
 * why, a table of the caller's (set, loaded, saved, read from the cache folder or
 * REDJIT_TREDUCE_TABLE), the paths a request cannot take left out, the link model where no table
 * has the ranks and GPUs, and every refusal of a table that does not parse (status and message
 * naming the line; the context's table unchanged). */
#include "rjtest.h"

#include <sys/stat.h>

static rj_ctx *ctx;
static char dir[64];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/rjt_table_%ld", (long)getpid());
  mkdir(dir, 0700);
  setenv("REDJIT_CACHE_DIR", dir, 1); /* no table of a user's cache folder */
  unsetenv("REDJIT_TREDUCE_TABLE");
  ctx = rj_ctx_new();
}

static void teardown(void) {
  rj_ctx_free(ctx);
  char f[128];
  snprintf(f, sizeof f, "%s/treduce-paths.txt", dir);
  remove(f);
  rmdir(dir);
}

/* Auto's path for `ranks` f32 ranks of `bytes` each, rank r on GPU r mod gpus; *why its text. */
static rj_treduce_path choose(int ranks, int gpus, long long bytes, const char *dtype,
                              const char **why) {
  char json[256];
  long long elems = bytes / (strcmp(dtype, "f32") == 0 ? 4 : 2);
  snprintf(json, sizeof json,
           "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"%s\",\"ranks\":%d,\"root\":0,"
           "\"shape\":[%lld,1024]}",
           dtype, ranks, elems / 1024);
  rj_request r;
  rjt_parse(ctx, json, &r);
  int dev[64];
  for (int i = 0; i < ranks; i++)
    dev[i] = i % gpus;
  rj_treduce_path p = RJ_TREDUCE_AUTO;
  rj_status s = rj_treduce_choose(ctx, &r, dev, &p, why);
  ck_assert_msg(s == RJ_OK, "%s", rj_errmsg(ctx));
  return p;
}

#define MiB (1LL << 20)

START_TEST(builtin_choices) {
  const char *why;
  ck_assert_int_eq(choose(4, 4, 1024 * MiB, "f32", &why), RJ_TREDUCE_RING);
  ck_assert_msg(strstr(why, "ring: measured 3067.9 us vs split 3344.8 us at 1 GiB per rank (4 "
                            "ranks on 4 GPUs), table default"),
                "%s", why);
  ck_assert_int_eq(choose(4, 4, 4096, "f32", &why), RJ_TREDUCE_PEER);
  ck_assert_msg(strstr(why, "peer: measured 8.2 us vs split 26.7 us at 4 KiB"), "%s", why);
  ck_assert_int_eq(choose(4, 4, 256 * MiB, "f32", &why), RJ_TREDUCE_RING);
  ck_assert_int_eq(choose(6, 2, 64 * MiB, "f32", &why), RJ_TREDUCE_SPLIT_EQUAL);
  /* between the ladder's sizes: estimated, said with "~" */
  ck_assert_int_eq(choose(4, 4, 128 * MiB, "f32", &why), RJ_TREDUCE_SPLIT);
  ck_assert_msg(strstr(why, "split: ~") && strstr(why, "estimated"), "%s", why);
  /* above the largest size: in proportion, the ring still first */
  ck_assert_int_eq(choose(4, 4, 2048 * MiB, "f32", &why), RJ_TREDUCE_RING);
  /* the ring cannot take an f16 sum: the split instead */
  ck_assert_int_eq(choose(4, 4, 1024 * MiB, "f16", &why), RJ_TREDUCE_SPLIT);
  ck_assert_msg(strstr(why, "split: ") && !strstr(why, "ring"), "%s", why);
  /* no table has 3 ranks on 3 GPUs, or 4 on 2 below 16 MiB: the link model */
  ck_assert_int_eq(choose(3, 3, 64 * MiB, "f32", &why), RJ_TREDUCE_SPLIT);
  ck_assert_msg(strstr(why, "model: split (the split saves") &&
                    strstr(why, "no table has 3 ranks on 3 GPUs"),
                "%s", why);
  ck_assert_int_eq(choose(4, 2, 4 * MiB, "f32", &why), RJ_TREDUCE_PEER);
  ck_assert_msg(strncmp(why, "model: peer", 11) == 0, "%s", why);
  ck_assert_int_eq(choose(2, 1, 4 * MiB, "f32", &why), RJ_TREDUCE_PEER);
  ck_assert_msg(strstr(why, "model: peer (the ranks are on one GPU)"), "%s", why);
}
END_TEST

static const char *mine = "redjit-treduce-paths 1\n"
                          "# a comment\n"
                          "device any\n"
                          "source a test\n"
                          "4 4 4096 split-equal 5.0\n"
                          "4 4 4096 peer 9.0\n"
                          "4 4 1048576 peer 20.0\n"
                          "4 4 1048576 split-equal 30.0\n";

START_TEST(own_table) {
  ck_assert_int_eq(rj_treduce_table_set(ctx, mine, strlen(mine), "mine"), RJ_OK);
  const char *why;
  ck_assert_int_eq(choose(4, 4, 4096, "f32", &why), RJ_TREDUCE_SPLIT_EQUAL);
  ck_assert_msg(strstr(why, "split-equal: measured 5.0 us vs peer 9.0 us at 4 KiB per rank (4 "
                            "ranks on 4 GPUs), table \"mine\""),
                "%s", why);
  ck_assert_int_eq(choose(4, 4, 1 * MiB, "f32", &why), RJ_TREDUCE_PEER);
  /* what it lacks (1 GiB is above its sizes but it has no ring there ... the built-in one has
   * 8 ranks on 4 GPUs) comes from the built-in table */
  ck_assert_int_eq(choose(8, 4, 64 * MiB, "f32", &why), RJ_TREDUCE_SPLIT);
  ck_assert_msg(strstr(why, "table default"), "%s", why);
  /* the plan says the same path */
  rj_request r;
  rjt_parse(ctx,
            "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,\"root\":0,"
            "\"shape\":[1,1024]}",
            &r);
  int dev[4] = {0, 1, 2, 3};
  rj_treduce_plan p;
  rj_treduce_plan_init(&p);
  ck_assert_int_eq(rj_treduce_plan_make(ctx, &r, dev, RJ_TREDUCE_AUTO, &p), RJ_OK);
  ck_assert_int_eq(p.path, RJ_TREDUCE_SPLIT_EQUAL);
  /* its text, saved and loaded back */
  const char *text;
  ck_assert_int_eq(rj_treduce_table_text(ctx, &text), RJ_OK);
  ck_assert_msg(strstr(text, "redjit-treduce-paths 1\ndevice any\nsource a test\n") &&
                    strstr(text, "4 4 4096 split-equal 5.0\n"),
                "%s", text);
  char f[128];
  snprintf(f, sizeof f, "%s/saved.txt", dir);
  ck_assert_int_eq(rj_treduce_table_save(ctx, f), RJ_OK);
  ck_assert_int_eq(rj_treduce_table_load(ctx, NULL), RJ_OK); /* back to the built-in one */
  ck_assert_int_eq(choose(4, 4, 4096, "f32", &why), RJ_TREDUCE_PEER);
  ck_assert_int_eq(rj_treduce_table_load(ctx, f), RJ_OK);
  ck_assert_int_eq(choose(4, 4, 4096, "f32", &why), RJ_TREDUCE_SPLIT_EQUAL);
  ck_assert_msg(strstr(why, "saved.txt"), "%s", why);
  remove(f);
  /* "": no table at all, the model alone */
  ck_assert_int_eq(rj_treduce_table_load(ctx, ""), RJ_OK);
  ck_assert_int_eq(choose(4, 4, 1024 * MiB, "f32", &why), RJ_TREDUCE_SPLIT);
  ck_assert_msg(strncmp(why, "model: split", 12) == 0 && strstr(why, "no path table"), "%s", why);
  ck_assert_int_eq(rj_treduce_table_text(ctx, &text), RJ_OK);
  ck_assert_str_eq(text, "");
  ck_assert_int_eq(rj_treduce_table_save(ctx, f), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "nothing to save"), "%s", rj_errmsg(ctx));
}
END_TEST

/* A table that does not parse: RJ_EINVAL naming the line; the context keeps its table. */
static void refused(const char *text, size_t len, const char *want) {
  ck_assert_int_eq(rj_treduce_table_set(ctx, text, len, "bad"), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), want), "want \"%s\" in: %s", want, rj_errmsg(ctx));
  const char *why;
  ck_assert_int_eq(choose(4, 4, 4096, "f32", &why), RJ_TREDUCE_SPLIT_EQUAL); /* still mine */
}

START_TEST(refusals) {
  ck_assert_int_eq(rj_treduce_table_set(ctx, mine, strlen(mine), "mine"), RJ_OK);
  refused("", 0, "table \"bad\": line 1: expected \"redjit-treduce-paths 1\"");
  refused("{\"json\": 1}", 11, "line 1: expected \"redjit-treduce-paths 1\" (not a redjit");
  refused("redjit-treduce-paths 2\ndevice any\n", 33, "line 1: expected");
  refused("redjit-treduce-paths 1\n4 4 4096 peer 9.0\n", 41, "line 2: a row before");
  refused("redjit-treduce-paths 1\ndevice any\n", 34, "no rows");
  refused("redjit-treduce-paths 1\n4 4 4096 peer 9.0\n", 41, "line 2");
  refused("redjit-treduce-paths 1\ndevice any\n4 4 4096 fast 9.0\n", 52,
          "line 3: path \"fast\": expected peer, staged, split, split-equal or ring");
  refused("redjit-treduce-paths 1\ndevice any\n4 4 4096 peer -1\n", 50,
          "line 3: microseconds -1: expected a positive time");
  refused("redjit-treduce-paths 1\ndevice any\n4 4 4096 peer nan\n", 51, "line 3: microseconds");
  refused("redjit-treduce-paths 1\ndevice any\n0 1 4096 peer 1\n", 49, "line 3: ranks 0");
  refused("redjit-treduce-paths 1\ndevice any\n4 8 4096 peer 1\n", 49, "line 3: gpus 8");
  refused("redjit-treduce-paths 1\ndevice any\n4 4 0 peer 1\n", 46, "line 3: bytes 0");
  refused("redjit-treduce-paths 1\ndevice any\n4 4 4096 peer 1 2\n", 51,
          "line 3: expected RANKS GPUS BYTES PATH MICROSECONDS");
  refused("redjit-treduce-paths 1\ndevice any\n4 4 4096 peer\n", 47, "line 3: expected RANKS");
  refused("redjit-treduce-paths 1\ndevice any\n4 4 4096 peer 1\n4 4 4096 peer 2\n", 65,
          "line 4: the same ranks, GPUs, bytes and path as line 3");
  refused("redjit-treduce-paths 1\ndevice any\n4 4 4096 peer 1\0\n", 50, "line 3: a NUL byte");
  char big[1200];
  memset(big, '#', sizeof big);
  memcpy(big, "redjit-treduce-paths 1\n", 23);
  refused(big, sizeof big, "line 2: longer than 511 bytes");
  /* random bytes never crash it */
  unsigned x = 12345;
  for (int i = 0; i < 200; i++) {
    char junk[300];
    memcpy(junk, "redjit-treduce-paths 1\ndevice any\n", 34);
    for (size_t k = 34; k < sizeof junk; k++)
      junk[k] = (char)((x = x * 1103515245u + 12345u) >> 16 & 0x7f);
    rj_status s = rj_treduce_table_set(ctx, junk, sizeof junk, "junk");
    ck_assert(s == RJ_OK || s == RJ_EINVAL);
  }
  ck_assert_int_eq(rj_treduce_table_set(ctx, mine, strlen(mine), "mine"), RJ_OK);
  /* files */
  ck_assert_int_eq(rj_treduce_table_load(ctx, "/nonexistent/t.txt"), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "table \"/nonexistent/t.txt\": cannot open it"), "%s",
                rj_errmsg(ctx));
  ck_assert_int_eq(rj_treduce_table_load(ctx, "/"), RJ_EINVAL); /* a folder */
  ck_assert_int_eq(rj_treduce_table_set(ctx, NULL, 0, NULL), RJ_EINVAL);
  /* choose's arguments */
  rj_request r;
  rjt_parse(ctx,
            "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":2,\"root\":0,"
            "\"shape\":[1024]}",
            &r);
  rj_treduce_path p;
  const char *why;
  int bad[2] = {0, -1};
  ck_assert_int_eq(rj_treduce_choose(ctx, &r, bad, &p, &why), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "rank_device[1]: -1"), "%s", rj_errmsg(ctx));
  ck_assert_int_eq(rj_treduce_choose(ctx, &r, NULL, &p, &why), RJ_EINVAL);
  rjt_parse(ctx,
            "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,4],"
            "\"axes\":[1]}",
            &r);
  ck_assert_int_eq(rj_treduce_choose(ctx, &r, bad, &p, &why), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "kind: tensor"), "%s", rj_errmsg(ctx));
}
END_TEST

/* Where auto finds a table: REDJIT_TREDUCE_TABLE (a file, off, default), else the cache folder. */
START_TEST(found_tables) {
  char f[128];
  snprintf(f, sizeof f, "%s/treduce-paths.txt", dir);
  ck_assert_int_eq(rj_treduce_table_set(ctx, mine, strlen(mine), "mine"), RJ_OK);
  ck_assert_int_eq(rj_treduce_table_save(ctx, NULL), RJ_OK); /* into the cache folder */
  struct stat st;
  ck_assert_int_eq(stat(f, &st), 0);
  rj_ctx *c2 = rj_ctx_new();
  rj_ctx *keep = ctx;
  ctx = c2;
  const char *why;
  ck_assert_int_eq(choose(4, 4, 4096, "f32", &why), RJ_TREDUCE_SPLIT_EQUAL);
  ck_assert_msg(strstr(why, "treduce-paths.txt"), "%s", why);
  rj_ctx_free(c2);
  setenv("REDJIT_TREDUCE_TABLE", "off", 1);
  ctx = rj_ctx_new();
  ck_assert_int_eq(choose(4, 4, 4096, "f32", &why), RJ_TREDUCE_PEER);
  ck_assert_msg(strstr(why, "model: peer") && strstr(why, "no path table"), "%s", why);
  rj_ctx_free(ctx);
  setenv("REDJIT_TREDUCE_TABLE", "default", 1);
  ctx = rj_ctx_new();
  ck_assert_int_eq(choose(4, 4, 4096, "f32", &why), RJ_TREDUCE_PEER);
  ck_assert_msg(strstr(why, "table default"), "%s", why);
  rj_ctx_free(ctx);
  /* a table that does not parse is not read; auto says so where it decides by the model */
  FILE *w = fopen(f, "w");
  fputs("redjit-treduce-paths 1\ndevice any\n4 4 4096 peer x\n", w);
  fclose(w);
  setenv("REDJIT_TREDUCE_TABLE", f, 1);
  ctx = rj_ctx_new();
  ck_assert_int_eq(choose(4, 4, 4096, "f32", &why), RJ_TREDUCE_PEER); /* the built-in one */
  ck_assert_int_eq(choose(3, 3, 64 * MiB, "f32", &why), RJ_TREDUCE_SPLIT);
  ck_assert_msg(strstr(why, "REDJIT_TREDUCE_TABLE not read: table") && strstr(why, "line 3"), "%s",
                why);
  rj_ctx_free(ctx);
  unsetenv("REDJIT_TREDUCE_TABLE");
  ctx = keep;
}
END_TEST

/* The CLI's whole output (rjt_cli keeps its first line). */
static int cli_all(const char *args, char *out, size_t n) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s 2>&1", rjt_cli_path(), args);
  FILE *p = popen(cmd, "r");
  ck_assert_ptr_nonnull(p);
  size_t k = fread(out, 1, n - 1, p);
  out[k] = 0;
  int rc = pclose(p);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* `redjit plan` says why; `redjit explain --gpus N` puts auto's path on the chosen line. */
START_TEST(cli_why) {
  char out[8192];
  const char *req = "{\"kind\":\"treduce\",\"op\":\"sum\",\"dtype\":\"f32\",\"ranks\":4,"
                    "\"root\":0,\"shape\":[262144,1024],\"tile\":[64,1024]}";
  int rc = rjt_cli(rjt_fmt("plan '%s' --gpus 4", req), out, sizeof out);
  ck_assert_msg(rc == 0 && strstr(out, "\"path\": \"ring\"") &&
                    strstr(out, "\"why\": \"ring: measured 3067.9 us vs split 3344.8 us"),
                "%d: %s", rc, out);
  rc = cli_all(rjt_fmt("explain '%s' --gpus 4", req), out, sizeof out);
  ck_assert_msg(rc == 0 && strstr(out, "treduce prio=10 chosen (path auto on 4 GPUs: ring: "
                                       "measured 3067.9 us"),
                "%d: %s", rc, out);
  rc = cli_all(rjt_fmt("explain '%s' --gpus 1", req), out, sizeof out);
  ck_assert_msg(rc == 0 && strstr(out, "chosen (path auto on 1 GPU: model: peer"), "%d: %s", rc,
                out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("treduce_table");
  TCase *tc = tcase_create("treduce_table");
  tcase_set_timeout(tc, 300);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, builtin_choices);
  tcase_add_test(tc, own_table);
  tcase_add_test(tc, refusals);
  tcase_add_test(tc, found_tables);
  tcase_add_test(tc, cli_why);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
