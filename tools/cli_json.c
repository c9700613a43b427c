/* One-line JSON: objects built with cJSON, printed in the spacing of docs/CLI.md's examples.  cJSON
 * prints each leaf (so it escapes every string); this file only joins members with ", " and ": ".
 */
#include "cli.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

static bool json_failed; /* a member could not be added (out of memory) */

static void check(const cJSON *added) {
  if (!added) json_failed = true;
}

void json_num(cJSON *o, const char *key, const char *fmt, double v) {
  char buf[64];
  if (isfinite(v))
    snprintf(buf, sizeof buf, fmt, v);
  else
    snprintf(buf, sizeof buf, "null");
  check(cJSON_AddRawToObject(o, key, buf));
}

void json_int(cJSON *o, const char *key, long long v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", v);
  check(cJSON_AddRawToObject(o, key, buf));
}

void json_str(cJSON *o, const char *key, const char *v) {
  check(cJSON_AddStringToObject(o, key, v ? v : ""));
}

void json_bool(cJSON *o, const char *key, bool v) {
  check(cJSON_AddBoolToObject(o, key, v));
}

cJSON *json_add(cJSON *o, const char *key, cJSON *item) {
  bool ok =
      item && o && (key ? cJSON_AddItemToObject(o, key, item) : cJSON_AddItemToArray(o, item));
  if (ok) return item;
  json_failed = true;
  cJSON_Delete(item);
  return NULL;
}

/* A leaf (string, number, raw, bool, null) as cJSON prints it. */
static bool put_leaf(FILE *out, const cJSON *v) {
  char *s = cJSON_PrintUnformatted(v);
  if (s) fputs(s, out);
  cJSON_free(s);
  return s != NULL;
}

static bool put_value(FILE *out, const cJSON *v) {
  bool object = cJSON_IsObject(v), ok = true;
  if (!object && !cJSON_IsArray(v)) return put_leaf(out, v);
  fputc(object ? '{' : '[', out);
  for (const cJSON *m = v->child; m && ok; m = m->next) {
    if (m != v->child) fputs(", ", out);
    if (object) {
      cJSON key = {.type = cJSON_String, .valuestring = m->string};
      ok = put_leaf(out, &key);
      fputs(": ", out);
    }
    ok = ok && put_value(out, m);
  }
  fputc(object ? '}' : ']', out);
  return ok;
}

void json_line(FILE *out, cJSON *o) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = o && !json_failed ? open_memstream(&text, &len) : NULL;
  bool ok = mem && put_value(mem, o);
  if (mem) fclose(mem);
  if (ok)
    fprintf(out, "%s\n", text);
  else
    fputs("{\"ok\": false, \"error\": \"out of memory\", \"status\": \"RJ_ENOMEM\"}\n", out);
  free(text);
  cJSON_Delete(o);
  json_failed = false;
}
