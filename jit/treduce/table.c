/* Path tables: the measured GPU time of each treduce path at a ladder of bytes per rank, for R
 * ranks on G GPUs, and the automatic path's choice from them.  A table is text (one row a line,
 * docs/TREDUCE.md "How auto chooses"), parsed strictly: a line that does not parse refuses the
 * whole table, naming the line.  The built-in table holds figures measured with
 * scripts/bench-treduce.sh (docs/PERFORMANCE.md); rj_treduce_calibrate makes one on the machine. */
#include "treduce.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_MAGIC "redjit-treduce-paths 1"
#define TABLE_MAX_TEXT ((size_t)1 << 20) /* a table file is read up to this */

/* The built-in table: f32 sums, root 0, rank r on GPU r mod G, the GPU time of one operation
 * (the median of 25 runs, 7 from 256 MiB; rj_treduce_calibrate's rows: the median of 7), from
 * the runs docs/PERFORMANCE.md records. */
static const char default_table[] = TABLE_MAGIC
    "\n"
    "device any\n"
    "source built in: 2 x and 4 x NVIDIA H200 (NVLink NV18), scripts/bench-treduce.sh, "
    "2026-11-22; 4 and 8 ranks on 4 x H200: rj_treduce_calibrate, 2026-11-26\n"
    "# ranks gpus bytes_per_rank path gpu_us\n"
    "2 2 4096 peer 7.3\n2 2 16384 peer 7.8\n2 2 65536 peer 7.6\n2 2 262144 peer 9.2\n"
    "2 2 1048576 peer 11.6\n2 2 4194304 peer 20.6\n2 2 16777216 peer 53.8\n"
    "2 2 67108864 peer 188.8\n2 2 268435456 peer 726.2\n2 2 1073741824 peer 2864.8\n"
    "2 2 4096 ring 24.7\n2 2 16384 ring 27.6\n2 2 65536 ring 30.6\n2 2 262144 ring 25.2\n"
    "2 2 1048576 ring 30.0\n2 2 4194304 ring 42.2\n2 2 16777216 ring 106.0\n"
    "2 2 67108864 ring 243.5\n2 2 268435456 ring 796.2\n2 2 1073741824 ring 2995.8\n"
    "4 2 16777216 peer 98.1\n4 2 16777216 split 94.6\n4 2 16777216 split-equal 97.9\n"
    "4 2 16777216 ring 145.0\n4 2 67108864 peer 368.3\n4 2 67108864 split 323.5\n"
    "4 2 67108864 split-equal 327.5\n4 2 67108864 ring 443.5\n"
    "4 2 268435456 peer 1438.3\n4 2 268435456 split 1243.2\n"
    "4 2 268435456 split-equal 1267.5\n4 2 268435456 ring 1569.2\n"
    "6 2 16777216 peer 143.7\n6 2 16777216 split 127.8\n6 2 16777216 split-equal 118.7\n"
    "6 2 16777216 ring 204.0\n6 2 67108864 peer 552.5\n6 2 67108864 split 457.1\n"
    "6 2 67108864 split-equal 439.4\n6 2 67108864 ring 627.7\n"
    "6 2 268435456 peer 2149.2\n6 2 268435456 split 1752.5\n"
    "6 2 268435456 split-equal 1719.7\n6 2 268435456 ring 2318.9\n"
    "4 4 4096 peer 8.2\n4 4 16384 peer 9.2\n4 4 65536 peer 10.0\n4 4 262144 peer 11.1\n"
    "4 4 1048576 peer 17.6\n4 4 4194304 peer 43.2\n4 4 16777216 peer 143.2\n"
    "4 4 67108864 peer 542.4\n4 4 268435456 peer 2143.1\n4 4 1073741824 peer 8552.0\n"
    "4 4 4096 split 26.7\n4 4 16384 split 31.7\n4 4 65536 split 34.4\n4 4 262144 split 33.2\n"
    "4 4 1048576 split 42.3\n4 4 4194304 split 47.9\n4 4 16777216 split 100.5\n"
    "4 4 67108864 split 256.6\n4 4 268435456 split 877.1\n4 4 1073741824 split 3344.8\n"
    "4 4 4096 split-equal 29.2\n4 4 16384 split-equal 34.7\n4 4 65536 split-equal 37.0\n"
    "4 4 262144 split-equal 31.6\n4 4 1048576 split-equal 35.9\n4 4 4194304 split-equal 45.5\n"
    "4 4 16777216 split-equal 103.8\n4 4 67108864 split-equal 322.0\n"
    "4 4 268435456 split-equal 1176.0\n4 4 1073741824 split-equal 4591.2\n4 4 4096 ring 40.7\n"
    "4 4 16384 ring 42.8\n4 4 65536 ring 48.8\n4 4 262144 ring 51.1\n4 4 1048576 ring 48.9\n"
    "4 4 4194304 ring 70.1\n4 4 16777216 ring 175.2\n4 4 67108864 ring 319.5\n"
    "4 4 268435456 ring 873.2\n4 4 1073741824 ring 3067.9\n8 4 4096 peer 10.0\n"
    "8 4 16384 peer 10.1\n8 4 65536 peer 9.4\n8 4 262144 peer 12.9\n8 4 1048576 peer 26.1\n"
    "8 4 4194304 peer 76.3\n8 4 16777216 peer 277.9\n8 4 67108864 peer 1083.7\n"
    "8 4 268435456 peer 4291.4\n8 4 4096 split 32.7\n8 4 16384 split 30.7\n"
    "8 4 65536 split 28.7\n8 4 262144 split 31.4\n8 4 1048576 split 35.9\n"
    "8 4 4194304 split 56.3\n8 4 16777216 split 134.4\n8 4 67108864 split 472.0\n"
    "8 4 268435456 split 1810.1\n8 4 4096 split-equal 34.5\n8 4 16384 split-equal 31.3\n"
    "8 4 65536 split-equal 29.2\n8 4 262144 split-equal 29.4\n8 4 1048576 split-equal 34.4\n"
    "8 4 4194304 split-equal 60.2\n8 4 16777216 split-equal 146.8\n"
    "8 4 67108864 split-equal 503.5\n8 4 268435456 split-equal 1932.2\n8 4 4096 ring 76.4\n"
    "8 4 16384 ring 62.6\n8 4 65536 ring 59.8\n8 4 262144 ring 69.8\n8 4 1048576 ring 72.5\n"
    "8 4 4194304 ring 129.4\n8 4 16777216 ring 231.1\n8 4 67108864 ring 503.4\n"
    "8 4 268435456 ring 1634.8\n"
    "12 4 16777216 peer 410.8\n12 4 16777216 split 177.9\n"
    "12 4 16777216 split-equal 180.8\n12 4 67108864 peer 1620.2\n"
    "12 4 67108864 split 666.9\n12 4 67108864 split-equal 669.6\n"
    "12 4 268435456 peer 6420.3\n12 4 268435456 split 2572.6\n"
    "12 4 268435456 split-equal 2634.3\n";

static const char *const path_names[] = {"auto", "peer", "staged", "split", "split-equal", "ring"};

const char *jit_tr_path_name(rj_treduce_path p) {
  return (unsigned)p <= RJ_TREDUCE_RING ? path_names[p] : "?";
}

/* One line's row into r; false (with why) when it is not "RANKS GPUS BYTES PATH MICROSECONDS". */
static bool parse_row(const char *line, jit_tr_row *r, char *why, size_t n) {
  char path[32], extra[2];
  long long ranks, gpus, bytes;
  double us;
  int got = sscanf(line, "%lld %lld %lld %31s %lf %1s", &ranks, &gpus, &bytes, path, &us, extra);
  if (got != 5) {
    snprintf(why, n, "expected RANKS GPUS BYTES PATH MICROSECONDS, or device / source / #");
    return false;
  }
  r->path = RJ_TREDUCE_AUTO;
  for (int p = RJ_TREDUCE_PEER; p <= RJ_TREDUCE_RING; p++)
    if (strcmp(path, path_names[p]) == 0) r->path = (rj_treduce_path)p;
  if (r->path == RJ_TREDUCE_AUTO)
    snprintf(why, n, "path \"%s\": expected peer, staged, split, split-equal or ring", path);
  else if (ranks < 1 || ranks > 1024)
    snprintf(why, n, "ranks %lld: outside 1..1024", ranks);
  else if (gpus < 1 || gpus > RJ_TREDUCE_MAX_SLICES || gpus > ranks)
    snprintf(why, n, "gpus %lld: outside 1..%d and at most the ranks", gpus, RJ_TREDUCE_MAX_SLICES);
  else if (bytes < 1 || bytes > ((long long)1 << 46))
    snprintf(why, n, "bytes %lld: outside 1..2^46", bytes);
  else if (!(us > 0) || !isfinite(us) || us > 1e12)
    snprintf(why, n, "microseconds %g: expected a positive time", us);
  else {
    r->ranks = (int)ranks;
    r->gpus = (int)gpus;
    r->bytes = bytes;
    r->us = us;
    return true;
  }
  return false;
}

/* A keyword line ("device NAME", "source TEXT") into dst (its text after one space). */
static bool keyword(const char *line, const char *word, char *dst, size_t n) {
  size_t k = strlen(word);
  if (strncmp(line, word, k) != 0 || line[k] != ' ' || !line[k + 1]) return false;
  snprintf(dst, n, "%s", line + k + 1);
  return true;
}

/* Line `no` (its text in line) into t; false with why. */
static bool parse_line(jit_tr_table *t, int no, char *line, char *why, size_t n) {
  size_t len = strlen(line);
  while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
    line[--len] = 0;
  if (no == 1) {
    if (strcmp(line, TABLE_MAGIC) == 0) return true;
    snprintf(why, n, "expected \"%s\" (not a redjit path table, or another version of one)",
             TABLE_MAGIC);
    return false;
  }
  if (!line[0] || line[0] == '#') return true;
  if (keyword(line, "device", t->device, sizeof t->device)) return true;
  if (keyword(line, "source", t->source, sizeof t->source)) return true;
  if (!t->device[0]) {
    snprintf(why, n, "a row before the \"device NAME\" line");
    return false;
  }
  if (t->nrows == JIT_TR_TABLE_ROWS) {
    snprintf(why, n, "more than %d rows", JIT_TR_TABLE_ROWS);
    return false;
  }
  jit_tr_row *r = &t->row[t->nrows];
  if (!parse_row(line, r, why, n)) return false;
  for (int i = 0; i < t->nrows; i++)
    if (t->row[i].ranks == r->ranks && t->row[i].gpus == r->gpus && t->row[i].bytes == r->bytes &&
        t->row[i].path == r->path) {
      snprintf(why, n, "the same ranks, GPUs, bytes and path as line %d", t->row[i].line);
      return false;
    }
  r->line = no;
  t->nrows++;
  return true;
}

rj_status jit_tr_table_parse(const char *text, size_t len, const char *origin, jit_tr_table *t,
                             ir_err *e) {
  memset(t, 0, sizeof *t);
  snprintf(t->origin, sizeof t->origin, "%s", origin);
  char line[512], why[200] = "";
  int no = 0;
  for (size_t at = 0; at < len || no == 0;) {
    size_t end = at;
    while (end < len && text[end] != '\n')
      end++;
    no++;
    if (memchr(text + at, 0, end - at))
      return ir_fail(e, RJ_EINVAL, "table %s: line %d: a NUL byte (not a text table)", origin, no);
    if (end - at >= sizeof line)
      return ir_fail(e, RJ_EINVAL, "table %s: line %d: longer than %zu bytes", origin, no,
                     sizeof line - 1);
    memcpy(line, text + at, end - at);
    line[end - at] = 0;
    if (!parse_line(t, no, line, why, sizeof why))
      return ir_fail(e, RJ_EINVAL, "table %s: line %d: %s", origin, no, why);
    at = end + 1;
  }
  if (!t->device[0])
    return ir_fail(e, RJ_EINVAL, "table %s: no \"device NAME\" line (\"device any\": every GPU)",
                   origin);
  if (!t->nrows) return ir_fail(e, RJ_EINVAL, "table %s: no rows", origin);
  return RJ_OK;
}

rj_status jit_tr_table_default(jit_tr_table *t, ir_err *e) {
  return jit_tr_table_parse(default_table, sizeof default_table - 1, "default", t, e);
}

rj_status jit_tr_table_read(const char *file, jit_tr_table *t, ir_err *e) {
  FILE *f = fopen(file, "rb");
  if (!f) return ir_fail(e, RJ_EINVAL, "table \"%s\": cannot open it (%s)", file, strerror(errno));
  char *buf = malloc(TABLE_MAX_TEXT + 1);
  size_t n = buf ? fread(buf, 1, TABLE_MAX_TEXT + 1, f) : 0;
  bool bad = !buf || ferror(f);
  fclose(f);
  rj_status s = RJ_OK;
  char origin[300];
  snprintf(origin, sizeof origin, "\"%s\"", file);
  if (bad)
    s = ir_fail(e, buf ? RJ_EINVAL : RJ_ENOMEM, "table %s: cannot read it", origin);
  else if (n > TABLE_MAX_TEXT)
    s = ir_fail(e, RJ_EINVAL, "table %s: more than %zu bytes", origin, TABLE_MAX_TEXT);
  else
    s = jit_tr_table_parse(buf, n, origin, t, e);
  free(buf);
  return s;
}

char *jit_tr_table_format(const jit_tr_table *t) {
  size_t cap = 256 + sizeof t->device + sizeof t->source + (size_t)t->nrows * 80;
  char *out = malloc(cap);
  if (!out) return NULL;
  size_t k = (size_t)snprintf(out, cap, "%s\ndevice %s\n", TABLE_MAGIC, t->device);
  if (t->source[0]) k += (size_t)snprintf(out + k, cap - k, "source %s\n", t->source);
  k += (size_t)snprintf(out + k, cap - k, "# ranks gpus bytes_per_rank path gpu_us\n");
  for (int i = 0; i < t->nrows; i++) {
    const jit_tr_row *r = &t->row[i];
    k += (size_t)snprintf(out + k, cap - k, "%d %d %lld %s %.1f\n", r->ranks, r->gpus,
                          (long long)r->bytes, path_names[r->path], r->us);
  }
  return out;
}

void jit_tr_size_text(double bytes, char *buf, size_t n) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    u++;
  }
  if (bytes == floor(bytes))
    snprintf(buf, n, "%.0f %s", bytes, unit[u]);
  else
    snprintf(buf, n, "%.1f %s", bytes, unit[u]);
}

/* ---- the choice */

/* The table's extent of sizes for (ranks, gpus): *lo, *hi; false when it has no such row. */
static bool extent(const jit_tr_table *t, int ranks, int gpus, int64_t *lo, int64_t *hi) {
  *lo = INT64_MAX;
  *hi = 0;
  for (int i = 0; i < t->nrows; i++)
    if (t->row[i].ranks == ranks && t->row[i].gpus == gpus) {
      *lo = t->row[i].bytes < *lo ? t->row[i].bytes : *lo;
      *hi = t->row[i].bytes > *hi ? t->row[i].bytes : *hi;
    }
  return *hi > 0;
}

/* Path p's time at `bytes` for (ranks, gpus), into *us; *exact when a row has that size.  Between
 * two of p's rows: interpolated in log-log; above the table's largest size, when p has a row
 * there: proportional to the bytes; otherwise (below p's smallest row, or a gap at the top) p is
 * not estimated (false). */
static bool estimate(const jit_tr_table *t, int ranks, int gpus, int64_t top, rj_treduce_path p,
                     double bytes, double *us, bool *exact) {
  const jit_tr_row *lo = NULL, *hi = NULL;
  for (int i = 0; i < t->nrows; i++) {
    const jit_tr_row *r = &t->row[i];
    if (r->ranks != ranks || r->gpus != gpus || r->path != p) continue;
    if ((double)r->bytes <= bytes && (!lo || r->bytes > lo->bytes)) lo = r;
    if ((double)r->bytes >= bytes && (!hi || r->bytes < hi->bytes)) hi = r;
  }
  *exact = lo && (double)lo->bytes == bytes;
  if (*exact) {
    *us = lo->us;
    return true;
  }
  if (lo && hi) {
    double x = log(bytes / (double)lo->bytes) / log((double)hi->bytes / (double)lo->bytes);
    *us = exp(log(lo->us) + x * (log(hi->us) - log(lo->us)));
    return true;
  }
  if (lo && lo->bytes == top) {
    *us = lo->us * bytes / (double)lo->bytes;
    return true;
  }
  return false;
}

bool jit_tr_table_pick(const jit_tr_table *t, int ranks, int gpus, double bytes, unsigned eligible,
                       rj_treduce_path *path, char *why, size_t n) {
  int64_t lo, hi;
  if (!t || !extent(t, ranks, gpus, &lo, &hi) || bytes < (double)lo) return false;
  double us[2] = {HUGE_VAL, HUGE_VAL}; /* the fastest two */
  rj_treduce_path bp[2] = {RJ_TREDUCE_AUTO, RJ_TREDUCE_AUTO};
  bool ex[2] = {false, false};
  for (int p = RJ_TREDUCE_PEER; p <= RJ_TREDUCE_RING; p++) {
    double x;
    bool exact;
    if (!(eligible & (1u << p)) ||
        !estimate(t, ranks, gpus, hi, (rj_treduce_path)p, bytes, &x, &exact))
      continue;
    int at = x < us[0] ? 0 : x < us[1] ? 1 : 2;
    if (at == 0) {
      us[1] = us[0], bp[1] = bp[0], ex[1] = ex[0];
    }
    if (at < 2) us[at] = x, bp[at] = (rj_treduce_path)p, ex[at] = exact;
  }
  if (bp[0] == RJ_TREDUCE_AUTO) return false;
  /* "ring: measured 3076.0 us vs split 3342.0 us at 1 GiB ..."; a figure the table does not hold
   * at that size (interpolated, or scaled from its largest size) is marked "~" */
  bool both = ex[0] && (ex[1] || bp[1] == RJ_TREDUCE_AUTO);
  char size[32], vs[96] = "";
  jit_tr_size_text(bytes, size, sizeof size);
  if (bp[1] != RJ_TREDUCE_AUTO)
    snprintf(vs, sizeof vs, " vs %s %s%.1f us", path_names[bp[1]], ex[1] ? "" : "~", us[1]);
  snprintf(why, n, "%s: %s%s%.1f us%s at %s per rank (%d ranks on %d GPUs%s), table %s",
           path_names[bp[0]], both ? "measured " : "", ex[0] ? "" : "~", us[0], vs, size, ranks,
           gpus, both ? "" : "; ~: estimated from the table's sizes", t->origin);
  *path = bp[0];
  return true;
}
