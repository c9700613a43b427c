/* The JSON reader (ir/json.c) and the canonical writer (ir/canonical.c) on their own, through
 * rj_request_parse and rj_request_canonical (no compile, no GPU):
 *   round_trip  every request of the PTX corpus (tests/corpus/requests.jsonl): parse, canonical,
 *               parse, canonical is a fixed point, the same request (the canonical texts agree;
 *               the canonical text parsed twice, the same bytes); a refused request is refused
 *               again with the same status and message, and so is its text parsed in a new
 *               context.
 *   errors      every error path of the reader: wrong types, unknown values, values out of range,
 *               required fields missing, unknown and repeated keys, at every level (buffers,
 *               layouts, combines, struct states): RJ_EINVAL, and the message starts with the
 *               field's path ("src.layout.stride[0][1]: ...") and says what is wrong. */
#include "rjtest.h"

#include <cJSON.h>
#include <math.h>
#include <stdbool.h>

/* ---- round trip of the corpus */

/* The corpus file: under the source tree, else (a carried binary) under the working directory. */
static FILE *open_corpus(void) {
  FILE *f = fopen(REDJIT_SOURCE_DIR "/tests/corpus/requests.jsonl", "r");
  return f ? f : fopen("tests/corpus/requests.jsonl", "r");
}

/* The request of a corpus line {"name": ..., "target": ..., "request": {...}} (request last), in
 * place: NULL when the line is not of that form. */
static char *corpus_request(char *line) {
  char *r = strstr(line, "\"request\": ");
  if (!r) return NULL;
  r += strlen("\"request\": ");
  size_t n = strlen(r);
  while (n && (r[n - 1] == '\n' || r[n - 1] == '\r' || r[n - 1] == ' '))
    n--;
  if (n < 2 || r[0] != '{' || r[n - 1] != '}') return NULL;
  r[n - 1] = 0; /* the line's closing brace */
  return r;
}

static char *copy(const char *s) {
  char *d = strdup(s);
  ck_assert_ptr_nonnull(d);
  return d;
}

/* ---- the canonical text keeps every field the request gave, with its value */

/* Whether canonical value c says what given value g says (key: the field's name, for the rules:
 * axes counted from the end, strides "K" as a string, identities as their bits; dtype: the
 * enclosing object's, for identities; ndim: the request's, for axes). */
static bool same_value(const cJSON *g, const cJSON *c, const char *key, const char *dtype, int ndim,
                       char *why, size_t n);

/* The bits of identity g of dtype: 1, or -1 where this test does not compute them (f16, bf16). */
static int identity_bits(const cJSON *g, const char *dtype, unsigned long long *bits) {
  if (cJSON_IsString(g)) return sscanf(g->valuestring, "0x%llx", bits) == 1;
  double x = g->valuedouble;
  if (strcmp(dtype, "f64") == 0) return memcpy(bits, &x, 8), 1;
  if (strcmp(dtype, "f32") == 0) {
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    return *bits = u, 1;
  }
  if (dtype[0] == 'i' || dtype[0] == 'u') {
    long long i = (long long)x;
    *bits = strstr(dtype, "64") ? (unsigned long long)i : (unsigned long long)i & 0xffffffffull;
    return 1;
  }
  return -1;
}

static bool same_object(const cJSON *g, const cJSON *c, const char *dtype, int ndim, char *why,
                        size_t n) {
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(g, "dtype");
  const char *own = cJSON_IsString(dt) ? dt->valuestring : dtype;
  bool f32_acc = !strcmp(own, "f16") || !strcmp(own, "bf16") || !strcmp(own, "f32");
  for (const cJSON *k = g->child; k; k = k->next) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k->string);
    if (!v && strcmp(k->string, "index") == 0 && cJSON_IsNumber(k)) /* a subgroup's "arg" */
      v = cJSON_GetObjectItemCaseSensitive(c, "arg");
    if (!v && strcmp(k->string, "acc_dtype") == 0 && cJSON_IsString(k) &&
        strcmp(k->valuestring, f32_acc ? "f32" : "f64") == 0)
      continue; /* the dtype's own accumulator: written as no acc_dtype */
    if (!v && (cJSON_IsFalse(k) || (cJSON_IsNumber(k) && k->valuedouble == 0)) &&
        (!strcmp(k->string, "dynamic") || !strcmp(k->string, "values") ||
         !strcmp(k->string, "mean_count")))
      continue; /* false, 0: written as absent */
    if (!v) return snprintf(why, n, "%s: missing", k->string), false;
    if (!same_value(k, v, k->string, own, ndim, why, n)) return false;
  }
  return true;
}

static bool same_value(const cJSON *g, const cJSON *c, const char *key, const char *dtype, int ndim,
                       char *why, size_t n) {
  if (strcmp(key, "identity") == 0) {
    unsigned long long a = 0, b = 0;
    if (identity_bits(g, dtype, &a) < 0) return true;
    if (!cJSON_IsString(c) || sscanf(c->valuestring, "0x%llx", &b) != 1 || a != b)
      return snprintf(why, n, "identity: not the given value's bits"), false;
    return true;
  }
  if (cJSON_IsObject(g))
    return cJSON_IsObject(c) && same_object(g, c, dtype, ndim, why, n)
               ? true
               : (why[0] ? false : (snprintf(why, n, "%s: not an object", key), false));
  if (cJSON_IsArray(g)) {
    if (!cJSON_IsArray(c) || cJSON_GetArraySize(c) != cJSON_GetArraySize(g))
      return snprintf(why, n, "%s: another length", key), false;
    for (const cJSON *a = g->child, *b = c->child; a; a = a->next, b = b->next) {
      if (strcmp(key, "axes") == 0 && cJSON_IsNumber(a) && cJSON_IsNumber(b)) {
        int ax = (int)a->valuedouble;
        if ((ax < 0 ? ax + ndim : ax) != (int)b->valuedouble)
          return snprintf(why, n, "axes: %d is not %d", ax, (int)b->valuedouble), false;
      } else if (!same_value(a, b, key, dtype, ndim, why, n)) {
        return false;
      }
    }
    return true;
  }
  if (cJSON_IsString(g) && cJSON_IsNumber(c) && strchr(g->valuestring, '@') == NULL)
    return atof(g->valuestring) == c->valuedouble
               ? true
               : (snprintf(why, n, "%s: %s is not %g", key, g->valuestring, c->valuedouble), false);
  if (!cJSON_Compare(g, c, true)) {
    char *a = cJSON_PrintUnformatted(g), *b = cJSON_PrintUnformatted(c);
    snprintf(why, n, "%s: %s is not %s", key, a ? a : "?", b ? b : "?");
    free(a);
    free(b);
    return false;
  }
  return true;
}

/* Every field of request text json in canonical text canon, with the value given. */
static void keeps_fields(const char *name, const char *json, const char *canon) {
  cJSON *g = cJSON_Parse(json), *c = cJSON_Parse(canon);
  ck_assert_msg(g && c, "%s: not JSON", name);
  /* a named fused op (docs/TENSOR.md "Fused maps") is spelled out as op, map and epilogue */
  static const char *const named[] = {"dot", "sumsq",         "norm",       "amax",       "mse",
                                      "l1",  "count_nonzero", "masked_sum", "masked_mean"};
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(g, "op");
  for (int i = 0; i < 9 && cJSON_IsString(op); i++)
    if (strcmp(op->valuestring, named[i]) == 0) {
      cJSON_DeleteItemFromObjectCaseSensitive(g, "op");
      cJSON_DeleteItemFromObjectCaseSensitive(g, "p");
      break;
    }
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(g, "shape");
  const cJSON *src = cJSON_GetObjectItemCaseSensitive(g, "src");
  if (src) sh = cJSON_GetObjectItemCaseSensitive(src, "shape");
  char why[512] = "";
  bool same = same_object(g, c, "", sh ? cJSON_GetArraySize(sh) : 0, why, sizeof why);
  ck_assert_msg(same, "%s: the canonical text changes a field (%s)\n  %s\n  %s", name, why, json,
                canon);
  cJSON_Delete(g);
  cJSON_Delete(c);
}

/* One accepted request: canonical c1 of the text; c1 parsed again (in ctx, and in a new context)
 * gives c1 back (the same request: the text has every field, defaults filled in, so the first
 * parse's bytes may differ where a default is written out, e.g. a buffer's region), and c1 parsed
 * twice gives the same bytes. */
static void accepted(rj_ctx *ctx, const char *name, const char *json, rj_request *r1) {
  const char *c = NULL;
  rj_status s = rj_request_canonical(ctx, r1, &c);
  ck_assert_msg(s == RJ_OK, "%s: canonical refused (%s): %s", name, rj_status_name(s),
                rj_errmsg(ctx));
  char *c1 = copy(c);
  keeps_fields(name, json, c1);
  rj_request r2;
  s = rj_request_parse(ctx, c1, &r2);
  ck_assert_msg(s == RJ_OK, "%s: its canonical text is refused (%s): %s\n  %s", name,
                rj_status_name(s), rj_errmsg(ctx), c1);
  ck_assert_int_eq(rj_request_canonical(ctx, &r2, &c), RJ_OK);
  ck_assert_msg(strcmp(c, c1) == 0, "%s: canonical is not a fixed point:\n  %s\n  %s", name, c1, c);
  /* the canonical text read twice: the same bytes (op custom's request points at the context's
   * copy of its IR text and names it: one copy per distinct text, so the same within ctx) */
  rj_request r2b;
  ck_assert_int_eq(rj_request_parse(ctx, c1, &r2b), RJ_OK);
  ck_assert_msg(memcmp(&r2, &r2b, sizeof r2) == 0, "%s: the canonical text read twice differs",
                name);
  rj_ctx *fresh = rj_ctx_new();
  rj_request r3;
  ck_assert_int_eq(rj_request_parse(fresh, c1, &r3), RJ_OK);
  ck_assert_int_eq(rj_request_canonical(fresh, &r3, &c), RJ_OK);
  ck_assert_msg(strcmp(c, c1) == 0, "%s: another context's canonical differs", name);
  if (!strstr(c1, "\"combine\"")) /* no text pointer: the bytes are the request */
    ck_assert_msg(memcmp(&r2, &r3, sizeof r3) == 0, "%s: another context's request differs", name);
  rj_ctx_free(fresh);
  free(c1);
}

/* One refused request: refused again, the same way, in ctx and in a new context. */
static void refused(rj_ctx *ctx, const char *name, const char *json, rj_status s1) {
  char *m1 = copy(rj_errmsg(ctx));
  ck_assert_msg(m1[0] != 0, "%s: refused (%s) with no message", name, rj_status_name(s1));
  rj_request r;
  ck_assert_int_eq(rj_request_parse(ctx, json, &r), s1);
  ck_assert_msg(strcmp(rj_errmsg(ctx), m1) == 0, "%s: refused differently:\n  %s\n  %s", name, m1,
                rj_errmsg(ctx));
  rj_ctx *fresh = rj_ctx_new();
  ck_assert_int_eq(rj_request_parse(fresh, json, &r), s1);
  ck_assert_str_eq(rj_errmsg(fresh), m1);
  rj_ctx_free(fresh);
  free(m1);
}

START_TEST(round_trip) {
  FILE *f = open_corpus();
  ck_assert_msg(f != NULL, "cannot open tests/corpus/requests.jsonl");
  rj_ctx *ctx = rj_ctx_new();
  static char line[1 << 16];
  int n = 0, ok = 0, custom = 0;
  while (fgets(line, sizeof line, f)) {
    char name[128];
    snprintf(name, sizeof name, "corpus line %d", n + 1);
    char *json = corpus_request(line);
    ck_assert_msg(json != NULL, "%s: not {\"name\", \"target\", \"request\"}", name);
    rj_request r1;
    rj_status s = rj_request_parse(ctx, json, &r1);
    if (s == RJ_OK) {
      accepted(ctx, name, json, &r1);
      ok++;
      custom += strstr(json, "\"combine\"") != NULL;
    } else {
      refused(ctx, name, json, s);
    }
    n++;
  }
  fclose(f);
  rj_ctx_free(ctx);
  printf("round_trip: %d corpus requests, %d accepted (%d op custom), %d refused\n", n, ok, custom,
         n - ok);
  ck_assert_int_gt(n, 1000);
  ck_assert_int_gt(ok, n * 9 / 10);
  ck_assert_int_gt(custom, 10);
  ck_assert_int_gt(n - ok, 0); /* the corpus holds refusals too */
}
END_TEST

/* ---- every error of the reader names its field */

/* Request texts with ' for " (readable tables). */
static const char *q(const char *s) {
  static char b[4096];
  size_t i = 0;
  for (; s[i] && i < sizeof b - 1; i++)
    b[i] = s[i] == '\'' ? '"' : s[i];
  b[i] = 0;
  return b;
}

typedef struct bad_json {
  const char *json;  /* ' for " */
  const char *field; /* the message starts with "field: " */
  const char *what;  /* and then holds this */
} bad_json;

#define TILE_HEAD "{'kind':'tile','op':'sum','dtype':'f32','scope':'cta','threads':32,"
#define TILE_DST "'dst':{'mem':'shared','shape':[32]}"
#define TILE_OK TILE_HEAD "'src':{'mem':'shared','shape':[32,32]}," TILE_DST ",'axes':[-1]}"
/* a tile with src's fields S (after mem and shape [32, 32]) */
#define TILE_SRC(S) TILE_HEAD "'src':{'mem':'shared','shape':[32,32]" S "}," TILE_DST "}"
/* a tile whose src has layout L (shape [32, 32] in registers, the warp's lanes) */
#define TILE_LAYOUT(L)                                                                             \
  "{'kind':'tile','op':'sum','dtype':'f32','scope':'warp','src':{'mem':'local','shape':[32,32],"   \
  "'layout':" L "},'dst':{'mem':'local','shape':[32]}}"
#define TENSOR(F) "{'kind':'tensor','op':'sum','dtype':'f32','shape':[64,64]" F "}"
#define SUBGROUP(F) "{'kind':'subgroup','primitive':'reduce_add','dtype':'f32'" F "}"
#define TREDUCE(F) "{'kind':'treduce','op':'sum','dtype':'f32','ranks':4,'shape':[64,64]" F "}"
/* op custom on a tensor: combine C (the IR is not read by the reader) */
#define CUSTOM(C) "{'kind':'tensor','op':'custom','dtype':'f32','shape':[64],'combine':" C "}"
#define CUSTOM_DT(DT, C)                                                                           \
  "{'kind':'tensor','op':'custom','dtype':'" DT "','shape':[64],'combine':" C "}"
#define FN "'ir':'x','function':'f'"
#define STATE(F) CUSTOM("{" FN ",'state':[" F "]}")

/* requests that are valid: the table's cases differ from them in one field */
static const char *const valid[] = {
    TILE_OK,
    TILE_LAYOUT("{'shape':[[2,16],[32]],'stride':[[1,'1@lane'],[2]]}"),
    TENSOR(""),
    SUBGROUP(""),
    TREDUCE(""),
    CUSTOM("{'ir':'define float @f(float %a, float %b) {\\n %c = fadd float %a, %b\\n ret float "
           "%c\\n}\\n','function':'f','identity':0}"),
    /* the bounds: a function name of 127 characters, identities exact in f16 / bf16 (normal,
     * subnormal, infinite), a stride "K" given as a string */
    CUSTOM("{'ir':'x','function':'"
           "f123456789f123456789f123456789f123456789f123456789f123456789f123456789f123456789"
           "f123456789f123456789f123456789f123456789f123456','identity':0}"),
    CUSTOM_DT("f16", "{" FN ",'identity':1.5}"),
    CUSTOM_DT("f16", "{" FN ",'identity':5.9604644775390625e-08}"),
    CUSTOM_DT("f16", "{" FN ",'identity':-65504}"),
    CUSTOM_DT("bf16", "{" FN ",'identity':'0xff80'}"),
    CUSTOM_DT("i64", "{" FN ",'identity':-9007199254740992}"),
    CUSTOM("{" FN ",'state':[{'dtype':'i64','identity':0},{'dtype':'f64','identity':0.1}],"
           "'lift':'l','finish':'g','result':1}"),
    TILE_LAYOUT("{'shape':[[2,16],[32]],'stride':[['1','1@lane'],['2']]}"),
};

static const bad_json reader_errors[] = {
    /* the text and the kind */
    {"{", "request", "malformed JSON near byte"},
    {"[1]", "request", "expected a JSON object"},
    {"{}", "kind", "required field is missing"},
    {"{'kind':3}", "kind", "expected a string"},
    {"{'kind':'blob'}", "kind", "unknown value \"blob\" (one of: tile subgroup tensor treduce)"},
    {"{'kind':'tensor','variant':5}", "variant", "expected \"auto\" or a variant name"},
    {"{'kind':'tensor','variant':''}", "variant", "expected \"auto\" or a variant name"},
    {"{'kind':'tensor','variant':'abcdefghijabcdefghijabcdefghij12'}", "variant",
     "expected \"auto\" or a variant name"},
    /* unknown and repeated keys, at every level */
    {TENSOR(",'bogus':1"), "bogus", "unknown field"},
    {TENSOR(",'accum':true,'accum':false"), "accum", "field given twice"},
    {TILE_SRC(",'bogus':1"), "src.bogus", "unknown field"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[1,32],'bogus':1}"), "src.layout.bogus",
     "unknown field"},
    {CUSTOM("{" FN ",'identity':0,'bogus':1}"), "combine.bogus", "unknown field"},
    {STATE("{'dtype':'f32','identity':0,'bogus':1}"), "combine.state[0].bogus", "unknown field"},
    {SUBGROUP(",'bogus':1"), "bogus", "unknown field"},
    {TREDUCE(",'bogus':1"), "bogus", "unknown field"},
    {TILE_OK "x", "request", "malformed JSON"},
    /* op, dtype, the enums */
    {"{'kind':'tensor','dtype':'f32','shape':[4]}", "op", "required field is missing"},
    {"{'kind':'tensor','op':7,'dtype':'f32','shape':[4]}", "op", "expected a string"},
    {"{'kind':'tensor','op':'median','dtype':'f32','shape':[4]}", "op",
     "unknown value \"median\" (one of: sum max min prod and or xor argmax argmin mean var std "
     "logsumexp custom)"},
    {"{'kind':'tensor','op':'sum','shape':[4]}", "dtype", "required field is missing"},
    {"{'kind':'tensor','op':'sum','dtype':'f8','shape':[4]}", "dtype",
     "unknown value \"f8\" (one of: f16 bf16 f32 f64 i32 u32 i64 u64 i8 u8 i16 u16 bool e4m3 "
     "e5m2)"},
    {TENSOR(",'nan':'skip'"), "nan", "unknown value \"skip\" (one of: propagate ignore)"},
    {TENSOR(",'nan':true"), "nan", "expected a string"},
    {TENSOR(",'acc_dtype':'f16'"), "acc_dtype", "unknown value \"f16\" (one of: f32 f64)"},
    {"{'kind':'tensor','op':'sum','dtype':'f64','shape':[4],'acc_dtype':'f32'}", "acc_dtype",
     "\"f32\" is the accumulator of f16, bf16 and f32 inputs only"},
    {"{'kind':'tensor','op':'sum','dtype':'i32','shape':[4],'acc_dtype':'f32'}", "acc_dtype",
     "\"f32\" is the accumulator of f16, bf16 and f32 inputs only"},
    /* booleans */
    {TENSOR(",'accum':1"), "accum", "expected true or false"},
    {TENSOR(",'deterministic':'yes'"), "deterministic", "expected true or false"},
    {TENSOR(",'dynamic':null"), "dynamic", "expected true or false"},
    {TENSOR(",'values':0"), "values", "expected true or false"},
    {TREDUCE(",'pingpong':1"), "pingpong", "expected true or false"},
    /* lists of integers */
    {"{'kind':'tensor','op':'sum','dtype':'f32'}", "shape", "required field is missing"},
    {"{'kind':'tensor','op':'sum','dtype':'f32','shape':64}", "shape",
     "expected a list of integers"},
    {"{'kind':'tensor','op':'sum','dtype':'f32','shape':[1,2,3,4,5,6,7,8,9]}", "shape",
     "at most 8 entries (got 9)"},
    {"{'kind':'tensor','op':'sum','dtype':'f32','shape':[4,'8']}", "shape[1]",
     "expected an integer"},
    {"{'kind':'tensor','op':'sum','dtype':'f32','shape':[4,2.5]}", "shape[1]",
     "expected an integer"},
    {"{'kind':'tensor','op':'sum','dtype':'f32','shape':[9007199254740993e10]}", "shape[0]",
     "is out of range [-4503599627370496, 4503599627370496]"},
    {TENSOR(",'axes':[9]"), "axes[0]", "9 is out of range [-8, 8]"},
    {TENSOR(",'axes':{}"), "axes", "expected a list of integers"},
    {TENSOR(",'strides':[1]"), "strides", "must have one entry per dim of shape"},
    {TENSOR(",'strides':[1,true]"), "strides[1]", "expected an integer"},
    /* tile: scope, threads, active */
    {"{'kind':'tile','op':'sum','dtype':'f32','src':{'mem':'shared','shape':[4]},'dst':{'mem':"
     "'shared','shape':[1]}}",
     "scope", "required field is missing"},
    {"{'kind':'tile','op':'sum','dtype':'f32','scope':'grid'}", "scope",
     "unknown value \"grid\" (one of: thread warp warpgroup cta)"},
    {"{'kind':'tile','op':'sum','dtype':'f32','scope':'cta','src':{'mem':'shared','shape':[4]},"
     "'dst':{'mem':'shared','shape':[1]}}",
     "threads", "required field is missing"},
    {"{'kind':'tile','op':'sum','dtype':'f32','scope':'cta','threads':2000}", "threads",
     "2000 is out of range [1, 1024]"},
    {"{'kind':'tile','op':'sum','dtype':'f32','scope':'cta','threads':'all'}", "threads",
     "expected an integer"},
    {TILE_HEAD "'active':3," TILE_DST "}", "active",
     "expected one of {\"warp\": W}, {\"warpgroup\": G}, {\"thread\": T}"},
    {TILE_HEAD "'active':{'warp':0,'thread':1}," TILE_DST "}", "active", "expected one of"},
    {TILE_HEAD "'active':{'lane':0}," TILE_DST "}", "active.lane",
     "unknown field (one of warp, warpgroup, thread)"},
    {TILE_HEAD "'active':{'warp':1024}," TILE_DST "}", "active.warp",
     "1024 is out of range [0, 1023]"},
    {TILE_HEAD "'active':{'thread':'x'}," TILE_DST "}", "active.thread", "expected an integer"},
    /* buffers */
    {TILE_HEAD TILE_DST "}", "src", "required field is missing"},
    {TILE_HEAD "'src':[1]," TILE_DST "}", "src", "expected an object {\"mem\", \"shape\", ...}"},
    {TILE_HEAD "'src':{'mem':'shared','shape':[32,32]}}", "dst", "required field is missing"},
    {TILE_HEAD "'src':{'shape':[32,32]}," TILE_DST "}", "src.mem", "required field is missing"},
    {TILE_HEAD "'src':{'mem':'global','shape':[32,32]}," TILE_DST "}", "src.mem",
     "unknown value \"global\" (one of: shared local)"},
    {TILE_HEAD "'src':{'mem':'shared'}," TILE_DST "}", "src.shape", "required field is missing"},
    {TILE_HEAD "'src':{'mem':'shared','shape':[32,'x']}," TILE_DST "}", "src.shape[1]",
     "expected an integer"},
    {TILE_SRC(",'start':[0]"), "src.start", "must have one entry per dim of shape"},
    {TILE_SRC(",'extent':[4,4,4]"), "src.extent", "must have one entry per dim of shape"},
    {TILE_SRC(",'start':'0'"), "src.start", "expected a list of integers"},
    {TILE_SRC(",'extent':[1,2,3,4,5,6,7,8,9]"), "src.extent", "at most 8 entries (got 9)"},
    {TILE_HEAD "'src':{'mem':'shared','shape':[32,32]},'dst':{'mem':'shared','shape':[32],"
               "'bogus':0}}",
     "dst.bogus", "unknown field"},
    /* layouts */
    {TILE_LAYOUT("[1]"), "src.layout", "expected an object {\"shape\", \"stride\", \"replicate\"}"},
    {TILE_LAYOUT("{'stride':[1,32]}"), "src.layout.shape", "required field is missing"},
    {TILE_LAYOUT("{'shape':32,'stride':[1,32]}"), "src.layout.shape",
     "expected a list (one entry per dim, at most 8)"},
    {TILE_LAYOUT("{'shape':[1,1,1,1,1,1,1,1,1],'stride':[1,1,1,1,1,1,1,1,1]}"), "src.layout.shape",
     "expected a list (one entry per dim, at most 8)"},
    {TILE_LAYOUT("{'shape':[32,32]}"), "src.layout.stride", "required field is missing"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[1]}"), "src.layout.stride",
     "expected a list with one entry per entry of shape"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':1}"), "src.layout.stride",
     "expected a list with one entry per entry of shape"},
    {TILE_LAYOUT("{'shape':[32],'stride':[1]}"), "src.layout.shape",
     "must have one entry per dim of the buffer's shape"},
    {TILE_LAYOUT("{'shape':[[],32],'stride':[[],32]}"), "src.layout.shape[0]",
     "a split dim has 1 to 4 sub-dims"},
    {TILE_LAYOUT("{'shape':[[2,2,2,2,2],32],'stride':[[1,2,4,8,16],32]}"), "src.layout.shape[0]",
     "a split dim has 1 to 4 sub-dims"},
    {TILE_LAYOUT("{'shape':[[2,16],32],'stride':[1,32]}"), "src.layout.stride[0]",
     "must be a list as long as the matching shape entry"},
    {TILE_LAYOUT("{'shape':[[2,16],32],'stride':[[1],32]}"), "src.layout.stride[0]",
     "must be a list as long as the matching shape entry"},
    {TILE_LAYOUT("{'shape':[[2,0],32],'stride':[[1,2],32]}"), "src.layout.shape[0][1]",
     "0 is out of range [1, 4503599627370496]"},
    {TILE_LAYOUT("{'shape':[[2,16],32],'stride':[[1,'2@warp'],32]}"), "src.layout.stride[0][1]",
     "expected \"K@lane\" or \"K@thread\""},
    {TILE_LAYOUT("{'shape':['32',32],'stride':[1,32]}"), "src.layout.shape[0]",
     "expected an integer"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[[1],32]}"), "src.layout.stride[0]",
     "must be a single stride, as the shape entry is"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[true,32]}"), "src.layout.stride[0]",
     "expected an integer, \"K@lane\" or \"K@thread\""},
    {TILE_LAYOUT("{'shape':[32,32],'stride':['lane',32]}"), "src.layout.stride[0]",
     "expected \"K@lane\" or \"K@thread\""},
    {TILE_LAYOUT("{'shape':[32,32],'stride':['-x',32]}"), "src.layout.stride[0]",
     "expected \"K@lane\" or \"K@thread\""},
    {TILE_LAYOUT("{'shape':[32,32],'stride':['1 @lane',32]}"), "src.layout.stride[0]",
     "expected \"K@lane\" or \"K@thread\""},
    {TILE_LAYOUT("{'shape':[32,32],'stride':['99999999999999999999@lane',32]}"),
     "src.layout.stride[0]", "the step is out of range [-4503599627370496, 4503599627370496]"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':['4503599627370497@thread',32]}"),
     "src.layout.stride[0]", "the step is out of range"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[1e300,32]}"), "src.layout.stride[0]",
     "is out of range [-4503599627370496, 4503599627370496]"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[1.5,32]}"), "src.layout.stride[0]",
     "expected an integer"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[1,32],'replicate':{}}"), "src.layout.replicate",
     "expected a list of at most 4 [extent, stride] pairs"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[1,32],'replicate':[[2,1],[2,1],[2,1],[2,1],[2,1]]}"),
     "src.layout.replicate", "expected a list of at most 4 [extent, stride] pairs"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[1,32],'replicate':[[2]]}"), "src.layout.replicate[0]",
     "expected [extent, stride]"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[1,32],'replicate':[4]}"), "src.layout.replicate[0]",
     "expected [extent, stride]"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[1,32],'replicate':[[0,'1@lane']]}"),
     "src.layout.replicate[0]", "0 is out of range [1, 4503599627370496]"},
    {TILE_LAYOUT("{'shape':[32,32],'stride':[1,32],'replicate':[[2,'1@warp']]}"),
     "src.layout.replicate[0]", "expected \"K@lane\" or \"K@thread\""},
    /* correction */
    {TENSOR(",'correction':0"), "correction", "applies only to op \"var\" or \"std\""},
    {"{'kind':'tensor','op':'var','dtype':'f32','shape':[4],'correction':1e10}", "correction",
     "10000000000 is out of range (0 .. 2^30)"},
    {"{'kind':'tensor','op':'var','dtype':'f32','shape':[4],'correction':0.5}", "correction",
     "expected an integer"},
    {"{'kind':'tensor','op':'std','dtype':'f32','shape':[4],'correction':'1'}", "correction",
     "expected an integer"},
    {SUBGROUP(",'correction':1"), "correction",
     "applies only to the primitives reduce_var, reduce_std, reduce_all_var and reduce_all_std"},
    {TILE_HEAD "'src':{'mem':'shared','shape':[4]}," TILE_DST ",'correction':1}", "correction",
     "applies only to op \"var\" or \"std\""},
    /* subgroup */
    {"{'kind':'subgroup','dtype':'f32'}", "primitive", "required field is missing"},
    {"{'kind':'subgroup','primitive':'reduce_median','dtype':'f32'}", "primitive",
     "unknown value \"reduce_median\" (one of: shuffle broadcast"},
    {"{'kind':'subgroup','primitive':'shuffle'}", "dtype", "required field is missing"},
    {SUBGROUP(",'log2_size':1e10"), "log2_size", "10000000000 is out of range (0..5)"},
    {SUBGROUP(",'log2_size':'5'"), "log2_size", "expected an integer"},
    {SUBGROUP(",'threads':-3e9"), "threads", "-3000000000 is out of range (a multiple of 32 in"},
    {SUBGROUP(",'threads':[32]"), "threads", "expected an integer"},
    {SUBGROUP(",'blocks':1e12"), "blocks", "1000000000000 is out of range (1..65535)"},
    {SUBGROUP(",'blocks':2.5"), "blocks", "expected an integer"},
    {SUBGROUP(",'arg':2e9"), "arg", "2000000000 is out of range [-1073741824, 1073741824]"},
    {SUBGROUP(",'index':[0,1,2]"), "index", "a list must have exactly 32 lane ids"},
    {SUBGROUP(",'index':[0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,'x']"),
     "index[31]", "expected an integer"},
    {SUBGROUP(",'index':'x'"), "index", "expected an integer"},
    {SUBGROUP(",'index':2e9"), "index", "2000000000 is out of range [-1073741824, 1073741824]"},
    {SUBGROUP(",'combine':{" FN ",'identity':0}"), "combine",
     "applies only to the primitives reduce_custom and reduce_all_custom"},
    /* treduce */
    {"{'kind':'treduce','op':'sum','dtype':'f32','shape':[4]}", "ranks",
     "required field is missing"},
    {"{'kind':'treduce','op':'sum','dtype':'f32','ranks':1e10,'shape':[4]}", "ranks",
     "10000000000 is out of range (1..1024)"},
    {"{'kind':'treduce','op':'sum','dtype':'f32','ranks':'4','shape':[4]}", "ranks",
     "expected an integer"},
    {TREDUCE(",'root':-1e10"), "root", "-10000000000 is out of range (0..ranks-1)"},
    {"{'kind':'treduce','op':'sum','dtype':'f32','ranks':4,'shape':[1,1,1,1,1,1]}", "shape",
     "at most 5 entries (got 6)"},
    {"{'kind':'treduce','op':'sum','dtype':'f32','ranks':4}", "shape", "required field is missing"},
    {TREDUCE(",'tile':[4]"), "tile", "expected [rows, cols]"},
    {TREDUCE(",'tile':[4,4,4]"), "tile", "at most 2 entries (got 3)"},
    {TREDUCE(",'tile':[0,4]"), "tile[0]", "must be at least 1"},
    {TREDUCE(",'tile':[4,-1]"), "tile[1]", "must be at least 1"},
    {TREDUCE(",'mean_count':-1"), "mean_count", "-1 is out of range [0, 1073741824]"},
    {TREDUCE(",'strides':[1]"), "strides", "expected one stride per dim of shape"},
    {TREDUCE(",'dst_strides':[64,1,1]"), "dst_strides", "expected one stride per dim of shape"},
    {TREDUCE(",'dst_strides':[64,'1']"), "dst_strides[1]", "expected an integer"},
    {TREDUCE(",'combine':{" FN ",'identity':0}"), "combine", "applies only to op \"custom\""},
    /* combine */
    {"{'kind':'tensor','op':'custom','dtype':'f32','shape':[64]}", "combine",
     "required with op \"custom\""},
    {TENSOR(",'combine':{" FN ",'identity':0}"), "combine", "applies only to op \"custom\""},
    {TILE_HEAD "'src':{'mem':'shared','shape':[4]}," TILE_DST ",'combine':{}}", "combine",
     "applies only to op \"custom\""},
    {CUSTOM("'f'"), "combine", "expected an object {ir, function, identity, commutative}"},
    {CUSTOM("{'function':'f','identity':0}"), "combine.ir", "required field is missing"},
    {CUSTOM("{'ir':1,'function':'f','identity':0}"), "combine.ir",
     "expected a string (LLVM IR text)"},
    {CUSTOM("{'ir':'x','identity':0}"), "combine.function", "required field is missing"},
    {CUSTOM("{'ir':'x','function':3,'identity':0}"), "combine.function",
     "expected a function name of at most 127 characters"},
    {CUSTOM("{'ir':'x','function':'"
            "f123456789f123456789f123456789f123456789f123456789f123456789f123456789f123456789"
            "f123456789f123456789f123456789f123456789f1234567','identity':0}"),
     "combine.function", "expected a function name of at most 127 characters"},
    {CUSTOM("{" FN "}"), "combine.identity", "required field is missing"},
    {CUSTOM("{" FN ",'identity':0,'state':[{'dtype':'f32','identity':0}]}"), "combine.identity",
     "not with \"state\" (each field has its identity)"},
    {CUSTOM("{" FN ",'identity':true}"), "combine.identity",
     "expected a number or \"0x...\" (its bits)"},
    {CUSTOM("{" FN ",'identity':'1.0'}"), "combine.identity",
     "expected a number or \"0x...\" (the identity's bits, hexadecimal)"},
    {CUSTOM("{" FN ",'identity':'0x'}"), "combine.identity", "expected a number or \"0x...\""},
    {CUSTOM("{" FN ",'identity':'0x12g'}"), "combine.identity", "expected a number or \"0x...\""},
    {CUSTOM("{" FN ",'identity':'0x-1'}"), "combine.identity", "expected a number or \"0x...\""},
    {CUSTOM("{" FN ",'identity':'0x10000000000000000'}"), "combine.identity",
     "expected a number or \"0x...\""},
    {CUSTOM("{" FN ",'identity':0.1}"), "combine.identity",
     "not exactly representable as f32 (give \"0x...\" bits)"},
    {CUSTOM_DT("f16", "{" FN ",'identity':0.1}"), "combine.identity",
     "not exactly representable as f16 (give \"0x...\" bits)"},
    {CUSTOM_DT("f16", "{" FN ",'identity':65536}"), "combine.identity",
     "not exactly representable as f16"},
    {CUSTOM_DT("f16", "{" FN ",'identity':1e-8}"), "combine.identity",
     "not exactly representable as f16"},
    {CUSTOM_DT("bf16", "{" FN ",'identity':1.001}"), "combine.identity",
     "not exactly representable as bf16 (give \"0x...\" bits)"},
    {CUSTOM_DT("i32", "{" FN ",'identity':1.5}"), "combine.identity",
     "not an integer the dtype holds exactly within +-2^53 (give \"0x...\" bits)"},
    {CUSTOM_DT("i32", "{" FN ",'identity':2147483648}"), "combine.identity",
     "not an integer the dtype holds exactly"},
    {CUSTOM_DT("u32", "{" FN ",'identity':-1}"), "combine.identity",
     "not an integer the dtype holds exactly"},
    {CUSTOM_DT("u64", "{" FN ",'identity':1e17}"), "combine.identity",
     "not an integer the dtype holds exactly within +-2^53"},
    {CUSTOM("{" FN ",'identity':0,'commutative':1}"), "combine.commutative",
     "expected true or false"},
    {CUSTOM("{" FN ",'identity':0,'commutative':true,'commutative':false}"), "combine.commutative",
     "field given twice"},
    /* struct states */
    {CUSTOM("{" FN ",'state':{}}"), "combine.state",
     "expected a list of 1 to 4 fields {dtype, identity}"},
    {CUSTOM("{" FN ",'state':[]}"), "combine.state", "expected a list of 1 to 4 fields"},
    {STATE("{'dtype':'f32','identity':0},{'dtype':'f32','identity':0},{'dtype':'f32','identity':0}"
           ",{'dtype':'f32','identity':0},{'dtype':'f32','identity':0}"),
     "combine.state", "expected a list of 1 to 4 fields"},
    {STATE("{'dtype':'f32','identity':0},'f32'"), "combine.state[1]",
     "expected an object {dtype, identity}"},
    {STATE("{'identity':0}"), "combine.state[0].dtype", "required field is missing"},
    {STATE("{'dtype':'f24','identity':0}"), "combine.state[0].dtype", "unknown value \"f24\""},
    {STATE("{'dtype':'f32'}"), "combine.state[0].identity", "required field is missing"},
    {STATE("{'dtype':'i64','identity':0},{'dtype':'f16','identity':0.1}"),
     "combine.state[1].identity", "not exactly representable as f16"},
    {CUSTOM("{" FN ",'state':[{'dtype':'f32','identity':0}],'lift':7}"), "combine.lift",
     "expected a function name of at most 127 characters"},
    {CUSTOM("{" FN ",'state':[{'dtype':'f32','identity':0}],'finish':[]}"), "combine.finish",
     "expected a function name of at most 127 characters"},
    {CUSTOM("{" FN ",'state':[{'dtype':'f32','identity':0}],'result':4}"), "combine.result",
     "4 is out of range [0, 3]"},
    {CUSTOM("{" FN ",'state':[{'dtype':'f32','identity':0}],'result':'0'}"), "combine.result",
     "expected an integer"},
};

START_TEST(valid_bases) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++)
    rjt_parse(ctx, q(valid[i]), &r);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(errors) {
  const bad_json *c = &reader_errors[_i];
  char json[4096];
  snprintf(json, sizeof json, "%s", q(c->json));
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  rj_status s = rj_request_parse(ctx, json, &r);
  const char *m = rj_errmsg(ctx);
  ck_assert_msg(s == RJ_EINVAL, "got %s (%s) for %s", rj_status_name(s), m, json);
  size_t n = strlen(c->field);
  ck_assert_msg(strncmp(m, c->field, n) == 0 && m[n] == ':' && m[n + 1] == ' ',
                "the message does not start with \"%s: \": %s\n  request: %s", c->field, m, json);
  ck_assert_msg(strstr(m + n, c->what) != NULL,
                "the message does not say \"%s\": %s\n  request: %s", c->what, m, json);
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(no_text) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  ck_assert_int_eq(rj_request_parse(ctx, NULL, &r), RJ_EINVAL);
  ck_assert_str_eq(rj_errmsg(ctx), "request: no JSON text");
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("json");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, round_trip);
  tcase_add_test(tc, valid_bases);
  tcase_add_loop_test(tc, errors, 0, (int)(sizeof reader_errors / sizeof reader_errors[0]));
  tcase_add_test(tc, no_text);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
