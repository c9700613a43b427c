/* Struct states of op custom as a language runtime would write them (LLVM IR text), shared by
 * tests/custom/test_custom.c (no GPU) and tests/tensor/test_gpu_tensor.c (their results against CPU
 * oracles).
 *
 *   Welford   {i64 n, f64 mean, f64 M2} from f32 elements; Chan's combine; finish: the sample
 *             variance M2 / (n - 1) as f64 (field 2's dtype).  Commutative.
 *   argmax    {f32 value, i64 index}: the larger value, the smaller index on ties; identity
 *             {-inf, INT64_MAX}; the output is field 1 (the index).  Commutative.
 *   matrix    {u32 a, b, c, d}: 2x2 matrices mod 2^32, lift(x, i) = [[x, i], [1, 0]], the product
 *             (associative, not commutative); finish a + 3b + 5c + 7d as u32.
 *   hmax      a scalar f16 state: the larger of two halves (identity -inf, 0xfc00). */
#ifndef RJ_TESTS_CUSTOM_IR_H
#define RJ_TESTS_CUSTOM_IR_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WF "{ i64, double, double }"
#define WELFORD_IR                                                                                 \
  "define " WF " @wlift(float %x, i64 %i) {\n"                                                     \
  "  %d = fpext float %x to double\n"                                                              \
  "  %a = insertvalue " WF " { i64 1, double 0.0, double 0.0 }, double %d, 1\n"                    \
  "  ret " WF " %a\n}\n"                                                                           \
  "define " WF " @wcomb(" WF " %a, " WF " %b) {\n"                                                 \
  "  %na = extractvalue " WF " %a, 0\n  %nb = extractvalue " WF " %b, 0\n"                         \
  "  %ma = extractvalue " WF " %a, 1\n  %mb = extractvalue " WF " %b, 1\n"                         \
  "  %qa = extractvalue " WF " %a, 2\n  %qb = extractvalue " WF " %b, 2\n"                         \
  "  %n = add i64 %na, %nb\n  %fa = sitofp i64 %na to double\n"                                    \
  "  %fb = sitofp i64 %nb to double\n  %fn = sitofp i64 %n to double\n"                            \
  "  %d = fsub double %mb, %ma\n  %r = fdiv double %fb, %fn\n  %dr = fmul double %d, %r\n"         \
  "  %m = fadd double %ma, %dr\n  %dd = fmul double %d, %dr\n  %c = fmul double %dd, %fa\n"        \
  "  %q0 = fadd double %qa, %qb\n  %q = fadd double %q0, %c\n"                                     \
  "  %s0 = insertvalue " WF " undef, i64 %n, 0\n  %s1 = insertvalue " WF " %s0, double %m, 1\n"    \
  "  %s2 = insertvalue " WF " %s1, double %q, 2\n"                                                 \
  "  %ea = icmp eq i64 %na, 0\n  %t = select i1 %ea, " WF " %b, " WF " %s2\n"                      \
  "  %eb = icmp eq i64 %nb, 0\n  %u = select i1 %eb, " WF " %a, " WF " %t\n"                       \
  "  ret " WF " %u\n}\n"                                                                           \
  "define double @wfin(" WF " %s) {\n"                                                             \
  "  %n = extractvalue " WF " %s, 0\n  %q = extractvalue " WF " %s, 2\n"                           \
  "  %n1 = sub i64 %n, 1\n  %f = sitofp i64 %n1 to double\n  %v = fdiv double %q, %f\n"            \
  "  ret double %v\n}\n"

#define AF "{ float, i64 }"
#define ARGMAX_IR                                                                                  \
  "define " AF " @alift(float %x, i64 %i) {\n"                                                     \
  "  %a = insertvalue " AF " undef, float %x, 0\n  %b = insertvalue " AF " %a, i64 %i, 1\n"        \
  "  ret " AF " %b\n}\n"                                                                           \
  "define " AF " @acomb(" AF " %a, " AF " %b) {\n"                                                 \
  "  %va = extractvalue " AF " %a, 0\n  %vb = extractvalue " AF " %b, 0\n"                         \
  "  %ia = extractvalue " AF " %a, 1\n  %ib = extractvalue " AF " %b, 1\n"                         \
  "  %gt = fcmp ogt float %va, %vb\n  %eq = fcmp oeq float %va, %vb\n"                             \
  "  %lt = icmp slt i64 %ia, %ib\n  %tie = and i1 %eq, %lt\n  %ta = or i1 %gt, %tie\n"             \
  "  %r = select i1 %ta, " AF " %a, " AF " %b\n  ret " AF " %r\n}\n"

#define MF "{ i32, i32, i32, i32 }"
#define MATRIX_IR                                                                                  \
  "define " MF " @mlift(i32 %x, i64 %i) {\n"                                                       \
  "  %t = trunc i64 %i to i32\n"                                                                   \
  "  %a = insertvalue " MF " { i32 0, i32 0, i32 1, i32 0 }, i32 %x, 0\n"                          \
  "  %b = insertvalue " MF " %a, i32 %t, 1\n  ret " MF " %b\n}\n"                                  \
  "define " MF " @mmul(" MF " %a, " MF " %b) {\n"                                                  \
  "  %a0 = extractvalue " MF " %a, 0\n  %a1 = extractvalue " MF " %a, 1\n"                         \
  "  %a2 = extractvalue " MF " %a, 2\n  %a3 = extractvalue " MF " %a, 3\n"                         \
  "  %b0 = extractvalue " MF " %b, 0\n  %b1 = extractvalue " MF " %b, 1\n"                         \
  "  %b2 = extractvalue " MF " %b, 2\n  %b3 = extractvalue " MF " %b, 3\n"                         \
  "  %p0 = mul i32 %a0, %b0\n  %q0 = mul i32 %a1, %b2\n  %c0 = add i32 %p0, %q0\n"                 \
  "  %p1 = mul i32 %a0, %b1\n  %q1 = mul i32 %a1, %b3\n  %c1 = add i32 %p1, %q1\n"                 \
  "  %p2 = mul i32 %a2, %b0\n  %q2 = mul i32 %a3, %b2\n  %c2 = add i32 %p2, %q2\n"                 \
  "  %p3 = mul i32 %a2, %b1\n  %q3 = mul i32 %a3, %b3\n  %c3 = add i32 %p3, %q3\n"                 \
  "  %s0 = insertvalue " MF " undef, i32 %c0, 0\n  %s1 = insertvalue " MF " %s0, i32 %c1, 1\n"     \
  "  %s2 = insertvalue " MF " %s1, i32 %c2, 2\n  %s3 = insertvalue " MF " %s2, i32 %c3, 3\n"       \
  "  ret " MF " %s3\n}\n"                                                                          \
  "define i32 @mfin(" MF " %s) {\n"                                                                \
  "  %a = extractvalue " MF " %s, 0\n  %b = extractvalue " MF " %s, 1\n"                           \
  "  %c = extractvalue " MF " %s, 2\n  %d = extractvalue " MF " %s, 3\n"                           \
  "  %b3 = mul i32 %b, 3\n  %c5 = mul i32 %c, 5\n  %d7 = mul i32 %d, 7\n"                          \
  "  %s1 = add i32 %a, %b3\n  %s2 = add i32 %s1, %c5\n  %s3 = add i32 %s2, %d7\n"                  \
  "  ret i32 %s3\n}\n"

#define HMAX_IR                                                                                    \
  "define half @hmax(half %a, half %b) {\n  %g = fcmp ogt half %a, %b\n"                           \
  "  %c = select i1 %g, half %a, half %b\n  ret half %c\n}\n"

/* the matrix state on the host: m = m * lift(x, i) */
static inline void matrix_fold(uint32_t m[4], uint32_t x, int64_t i) {
  uint32_t b[4] = {x, (uint32_t)i, 1, 0}, c[4];
  c[0] = m[0] * b[0] + m[1] * b[2];
  c[1] = m[0] * b[1] + m[1] * b[3];
  c[2] = m[2] * b[0] + m[3] * b[2];
  c[3] = m[2] * b[1] + m[3] * b[3];
  for (int k = 0; k < 4; k++)
    m[k] = c[k];
}

static inline uint32_t matrix_finish(const uint32_t m[4]) {
  return m[0] + 3u * m[1] + 5u * m[2] + 7u * m[3];
}

/* Scalar combines for kinds tile and subgroup (tests/custom/test_custom_kinds.c,
 * test_gpu_custom_kinds.c): fsum / dsum / hsum / bsum the float sums of f32 / f64 / f16 / bf16
 * (fn(a, b) = a + b), fmax the f32 maximum (NaN propagates, as op max), wadd the wrapping i32 sum,
 * xor64 the xor of u64, and mat16 the product of 2x2 matrices of u16 packed in a u64 (entries m0 m1
 * / m2 m3, m0 lowest; identity 0x0001000000000001): associative, not commutative. */
#define FSUM_IR                                                                                    \
  "define float @fsum(float %a, float %b) {\n  %c = fadd float %a, %b\n  ret float %c\n}\n"
#define DSUM_IR                                                                                    \
  "define double @dsum(double %a, double %b) {\n  %c = fadd double %a, %b\n  ret double %c\n}\n"
#define HSUM_IR "define half @hsum(half %a, half %b) {\n  %c = fadd half %a, %b\n  ret half %c\n}\n"
#define BSUM_IR                                                                                    \
  "define bfloat @bsum(bfloat %a, bfloat %b) {\n  %c = fadd bfloat %a, %b\n  ret bfloat %c\n}\n"
#define FMAX_IR                                                                                    \
  "declare float @llvm.maximum.f32(float, float)\n"                                                \
  "define float @fmax(float %a, float %b) {\n"                                                     \
  "  %c = call float @llvm.maximum.f32(float %a, float %b)\n  ret float %c\n}\n"
#define WADD_IR "define i32 @wadd(i32 %a, i32 %b) {\n  %c = add i32 %a, %b\n  ret i32 %c\n}\n"
#define XOR64_IR "define i64 @xor64(i64 %a, i64 %b) {\n  %c = xor i64 %a, %b\n  ret i64 %c\n}\n"
#define MAT16_IR                                                                                   \
  "define i64 @mat16(i64 %a, i64 %b) {\n"                                                          \
  "  %a0 = trunc i64 %a to i16\n  %a1s = lshr i64 %a, 16\n  %a1 = trunc i64 %a1s to i16\n"         \
  "  %a2s = lshr i64 %a, 32\n  %a2 = trunc i64 %a2s to i16\n  %a3s = lshr i64 %a, 48\n"            \
  "  %a3 = trunc i64 %a3s to i16\n"                                                                \
  "  %b0 = trunc i64 %b to i16\n  %b1s = lshr i64 %b, 16\n  %b1 = trunc i64 %b1s to i16\n"         \
  "  %b2s = lshr i64 %b, 32\n  %b2 = trunc i64 %b2s to i16\n  %b3s = lshr i64 %b, 48\n"            \
  "  %b3 = trunc i64 %b3s to i16\n"                                                                \
  "  %p0 = mul i16 %a0, %b0\n  %q0 = mul i16 %a1, %b2\n  %c0 = add i16 %p0, %q0\n"                 \
  "  %p1 = mul i16 %a0, %b1\n  %q1 = mul i16 %a1, %b3\n  %c1 = add i16 %p1, %q1\n"                 \
  "  %p2 = mul i16 %a2, %b0\n  %q2 = mul i16 %a3, %b2\n  %c2 = add i16 %p2, %q2\n"                 \
  "  %p3 = mul i16 %a2, %b1\n  %q3 = mul i16 %a3, %b3\n  %c3 = add i16 %p3, %q3\n"                 \
  "  %z0 = zext i16 %c0 to i64\n  %z1 = zext i16 %c1 to i64\n  %z2 = zext i16 %c2 to i64\n"        \
  "  %z3 = zext i16 %c3 to i64\n  %s1 = shl i64 %z1, 16\n  %s2 = shl i64 %z2, 32\n"                \
  "  %s3 = shl i64 %z3, 48\n  %o1 = or i64 %z0, %s1\n  %o2 = or i64 %o1, %s2\n"                    \
  "  %o3 = or i64 %o2, %s3\n  ret i64 %o3\n}\n"
#define MAT16_IDENTITY 0x0001000000000001ull

/* mat16 on the host */
static inline uint64_t mat16(uint64_t a, uint64_t b) {
  uint16_t x[4], y[4], c[4];
  for (int k = 0; k < 4; k++)
    x[k] = (uint16_t)(a >> (16 * k)), y[k] = (uint16_t)(b >> (16 * k));
  c[0] = (uint16_t)(x[0] * y[0] + x[1] * y[2]);
  c[1] = (uint16_t)(x[0] * y[1] + x[1] * y[3]);
  c[2] = (uint16_t)(x[2] * y[0] + x[3] * y[2]);
  c[3] = (uint16_t)(x[2] * y[1] + x[3] * y[3]);
  return (uint64_t)c[0] | (uint64_t)c[1] << 16 | (uint64_t)c[2] << 32 | (uint64_t)c[3] << 48;
}

/* s as the contents of a JSON string (malloc'd) */
static inline char *custom_ir_json(const char *s) {
  char *out = (char *)malloc(2 * strlen(s) + 1), *o = out;
  for (; *s; s++) {
    if (*s == '\n')
      *o++ = '\\', *o++ = 'n';
    else if (*s == '"' || *s == '\\')
      *o++ = '\\', *o++ = *s;
    else
      *o++ = *s;
  }
  *o = 0;
  return out;
}

/* ",\"combine\":{...}" of JSON (leading comma; static buffer) for ir / fn / identity (JSON text) /
 * commutative */
static inline const char *custom_combine_json(const char *ir, const char *fn, const char *identity,
                                              int commutative) {
  static char buf[8192];
  char *j = custom_ir_json(ir);
  snprintf(buf, sizeof buf,
           ",\"combine\":{\"ir\":\"%s\",\"function\":\"%s\",\"identity\":%s,\"commutative\":%s}", j,
           fn, identity, commutative ? "true" : "false");
  free(j);
  return buf;
}

enum { WELFORD, ARGMAX, MATRIX };
/* The JSON ",\"combine\":{...}" (leading comma; static buffer) of three struct states: Welford
 * {i64, f64, f64} (finish: the f64 variance), argmax {f32, i64} (result: the index), the 2x2 matrix
 * product over u32 (not commutative) */
static inline const char *custom_struct_combine(int which) {
  static char buf[12000];
  static const char *const ir[3] = {WELFORD_IR, ARGMAX_IR, MATRIX_IR};
  static const char *const rest[3] = {
      "\"function\":\"wcomb\",\"lift\":\"wlift\",\"finish\":\"wfin\",\"result\":2,"
      "\"commutative\":true,\"state\":[{\"dtype\":\"i64\",\"identity\":0},{\"dtype\":\"f64\","
      "\"identity\":0},{\"dtype\":\"f64\",\"identity\":0}]",
      "\"function\":\"acomb\",\"lift\":\"alift\",\"result\":1,\"commutative\":true,"
      "\"state\":[{\"dtype\":\"f32\",\"identity\":\"0xff800000\"},{\"dtype\":\"i64\","
      "\"identity\":\"0x7fffffffffffffff\"}]",
      "\"function\":\"mmul\",\"lift\":\"mlift\",\"finish\":\"mfin\",\"result\":0,"
      "\"state\":[{\"dtype\":\"u32\",\"identity\":1},{\"dtype\":\"u32\",\"identity\":0},"
      "{\"dtype\":\"u32\",\"identity\":0},{\"dtype\":\"u32\",\"identity\":1}]"};
  char *j = custom_ir_json(ir[which]);
  snprintf(buf, sizeof buf, ",\"combine\":{\"ir\":\"%s\",%s}", j, rest[which]);
  free(j);
  return buf;
}

#endif
