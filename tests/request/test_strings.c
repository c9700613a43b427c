/* No string of a JSON request is cut short, and no number is printed in another notation: a \u0000
 * in any string field (and in a field's name) of every request in examples/ is refused, naming the
 * field, where cJSON would have ended the string at the NUL ("tensor\u0000junk" read as "tensor",
 * combine IR after the NUL dropped). */
#include "rjtest.h"

#include <dirent.h>
#include <stdbool.h>

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "%s", path);
  char *buf = malloc(1 << 16);
  size_t n = fread(buf, 1, (1 << 16) - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

/* text with "\u0000x" put before the closing quote at text[at]. */
static char *with_nul(const char *text, size_t at) {
  size_t n = strlen(text);
  char *t = malloc(n + 8);
  memcpy(t, text, at);
  memcpy(t + at, "\\u0000x", 7);
  memcpy(t + at + 7, text + at, n - at + 1);
  return t;
}

/* Every string (key or value) of one request: refused, naming the field. */
static int every_string(rj_ctx *ctx, const char *name, const char *text) {
  char key[64] = "";
  int strings = 0;
  for (const char *c = text; *c; c++) {
    if (*c != '"') continue;
    const char *start = ++c;
    while (*c && *c != '"')
      c += *c == '\\' ? 2 : 1;
    const char *after = c + 1;
    while (*after == ' ' || *after == '\n')
      after++;
    bool is_key = *after == ':';
    char *bad = with_nul(text, (size_t)(c - text));
    rj_request r;
    rj_status s = rj_request_parse(ctx, bad, &r);
    const char *msg = rj_errmsg(ctx);
    if (is_key) snprintf(key, sizeof key, "%.*s", (int)(c - start), start);
    ck_assert_msg(s == RJ_EINVAL && strstr(msg, "a string holding a NUL character"), "%s: %s %s",
                  name, rj_status_name(s), msg);
    ck_assert_msg(is_key ? strncmp(msg, "a field name:", 13) == 0 : strstr(msg, key) != NULL,
                  "%s: the field %s is not named: %s", name, key, msg);
    free(bad);
    strings++;
  }
  return strings;
}

START_TEST(nul_in_every_string) {
  rj_ctx *ctx = rj_ctx_new();
  const char *dir = rjt_fmt("%s/examples", REDJIT_SOURCE_DIR);
  DIR *d = opendir(dir);
  ck_assert_ptr_nonnull(d);
  int files = 0, strings = 0;
  char path[512];
  for (struct dirent *e; (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    char *text = slurp(path);
    rj_request r;
    ck_assert_msg(rj_request_parse(ctx, text, &r) == RJ_OK, "%s: %s", path, rj_errmsg(ctx));
    strings += every_string(ctx, e->d_name, text);
    files++;
    free(text);
  }
  closedir(d);
  ck_assert_int_ge(files, 10);
  ck_assert_int_ge(strings, 100);
  rj_ctx_free(ctx);
}
END_TEST

/* The examples' fields, one by one, named in full where nested; an escaped backslash before
 * "u0000" is text, not a NUL. */
START_TEST(named_in_full) {
  static const struct {
    const char *json, *msg;
  } c[] = {
      {"{\"kind\":\"tensor\\u0000junk\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4]}", "kind: "},
      {"{\"kind\":\"tensor\",\"op\":\"custom\",\"dtype\":\"f32\",\"shape\":[4],\"axes\":[0],"
       "\"combine\":{\"function\":\"f\",\"ir\":\"define\\u0000\"}}",
       "combine.ir: "},
      {"{\"kind\":\"tile\",\"op\":\"sum\",\"dtype\":\"f32\",\"scope\":\"cta\",\"threads\":32,"
       "\"src\":{\"mem\":\"sha\\u0000red\",\"shape\":[32]},\"dst\":{\"mem\":\"shared\","
       "\"shape\":[1]}}",
       "src.mem: "},
      {"{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\",\"shape\":[4,\"x\\u0000\"]}",
       "shape[1]: "},
  };
  rj_ctx *ctx = rj_ctx_new();
  for (int i = 0; i < 4; i++) {
    rj_request r;
    ck_assert_int_eq(rj_request_parse(ctx, c[i].json, &r), RJ_EINVAL);
    ck_assert_msg(strncmp(rj_errmsg(ctx), c[i].msg, strlen(c[i].msg)) == 0, "%s", rj_errmsg(ctx));
  }
  rj_request r;
  ck_assert_int_eq(rj_request_parse(ctx, "{\"kind\":\"tensor\\\\u0000\"}", &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "unknown value"), "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

/* Numbers out of range are printed as the integers they are, not in float notation. */
START_TEST(integers_printed_whole) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  ck_assert_int_eq(rj_request_parse(ctx,
                                    "{\"kind\":\"tensor\",\"op\":\"sum\",\"dtype\":\"f32\","
                                    "\"shape\":[4611686018427387904]}",
                                    &r),
                   RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "shape[0]: 4611686018427387904 is out of range"), "%s",
                rj_errmsg(ctx));
  ck_assert_int_eq(rj_request_parse(ctx,
                                    "{\"kind\":\"subgroup\",\"primitive\":\"reduce_add\","
                                    "\"dtype\":\"f32\",\"log2_size\":1e19}",
                                    &r),
                   RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "log2_size: 10000000000000000000 is out of range"), "%s",
                rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("strings");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, nul_in_every_string);
  tcase_add_test(tc, named_in_full);
  tcase_add_test(tc, integers_printed_whole);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
