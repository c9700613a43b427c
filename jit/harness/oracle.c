/* The CPU side of `run`: inputs drawn as docs/CLI.md ("redjit run") says, poison, the float64 /
 * exact-integer reference of every kind, and the comparison with the tolerances of docs/CLI.md
 * ("redjit run"). */
#include "harness.h"

#include <math.h>
#include <string.h>

void hr_rng_seed(hr_rng *g, uint64_t seed) {
  g->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
}

uint64_t hr_rng_next(hr_rng *g) { /* splitmix64 */
  uint64_t z = (g->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* ---------------------------------------------------------------- half and bfloat16 */
static float f32_of_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint32_t bits_of_f32(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float half_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return f32_of_bits(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    float v = (float)man * 0x1p-24f;
    return sign ? -v : v;
  }
  return f32_of_bits(sign | ((exp + 112) << 23) | (man << 13));
}

static uint16_t f32_to_half(float f) { /* round to nearest even */
  uint32_t u = bits_of_f32(f), sign = (u >> 16) & 0x8000;
  float a = fabsf(f);
  if (isnan(f)) return (uint16_t)(sign | 0x7e00);
  if (a >= 65520.0f) return (uint16_t)(sign | 0x7c00);
  if (a < 0x1p-14f) { /* subnormal: quantise to 2^-24 */
    float q = nearbyintf(a * 0x1p24f);
    return (uint16_t)(sign | (uint16_t)q);
  }
  uint32_t au = bits_of_f32(a);
  uint32_t exp = (au >> 23) - 112, man = au & 0x7fffff;
  uint32_t h = (exp << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

static float bf16_to_f32(uint16_t b) {
  return f32_of_bits((uint32_t)b << 16);
}

static uint16_t f32_to_bf16(float f) {
  uint32_t u = bits_of_f32(f);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

/* float8: e4m3fn (bias 7, no infinity, S.1111.111 NaN) and e5m2 (an f16's upper byte) */
static double e4m3_to_f64(uint8_t b) {
  int e = (b >> 3) & 15, m = b & 7;
  double v = (b & 0x7f) == 0x7f ? NAN : e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
  return b & 0x80 ? -v : v;
}

static uint8_t f64_to_e4m3(double x) { /* round to nearest even, saturating at 448 */
  uint8_t sign = signbit(x) ? 0x80 : 0;
  double a = fabs(x);
  if (isnan(x)) return 0x7f;
  if (a < 0x1p-6) return (uint8_t)(sign | (uint8_t)nearbyint(a * 0x1p9));
  int e;
  frexp(a, &e); /* a in [2^(e-1), 2^e) */
  double code = (e - 1 + 7) * 8 + nearbyint(ldexp(a, 4 - e)) - 8;
  return (uint8_t)(sign | (uint8_t)(code > 126 ? 126 : code));
}

static uint8_t f64_to_e5m2(double x) { /* through f16, round to nearest even */
  uint16_t h = f32_to_half((float)x);
  if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) return (uint8_t)((h >> 8) | 2);
  return (uint8_t)((h + 0x7f + ((h >> 8) & 1)) >> 8);
}

/* ---------------------------------------------------------------- element access */
uint64_t hr_load_bits(rj_dtype t, const void *p, int64_t i) {
  switch (ir_dtype(t)->bytes) {
  case 1:
    return ((const uint8_t *)p)[i];
  case 2:
    return ((const uint16_t *)p)[i];
  case 4:
    return ((const uint32_t *)p)[i];
  default:
    return ((const uint64_t *)p)[i];
  }
}

static void store_bits(rj_dtype t, void *p, int64_t i, uint64_t v) {
  switch (ir_dtype(t)->bytes) {
  case 1:
    ((uint8_t *)p)[i] = (uint8_t)v;
    break;
  case 2:
    ((uint16_t *)p)[i] = (uint16_t)v;
    break;
  case 4:
    ((uint32_t *)p)[i] = (uint32_t)v;
    break;
  default:
    ((uint64_t *)p)[i] = v;
    break;
  }
}

double hr_load_f64(rj_dtype t, const void *p, int64_t i) {
  switch (t) {
  case RJ_F16:
    return half_to_f32(((const uint16_t *)p)[i]);
  case RJ_BF16:
    return bf16_to_f32(((const uint16_t *)p)[i]);
  case RJ_F32:
    return ((const float *)p)[i];
  case RJ_F64:
    return ((const double *)p)[i];
  case RJ_I32:
    return ((const int32_t *)p)[i];
  case RJ_U32:
    return ((const uint32_t *)p)[i];
  case RJ_I64:
    return (double)((const int64_t *)p)[i];
  case RJ_U64:
    return (double)((const uint64_t *)p)[i];
  case RJ_I8:
    return ((const int8_t *)p)[i];
  case RJ_U8:
  case RJ_BOOL:
    return ((const uint8_t *)p)[i];
  case RJ_I16:
    return ((const int16_t *)p)[i];
  case RJ_U16:
    return ((const uint16_t *)p)[i];
  case RJ_E4M3:
    return e4m3_to_f64(((const uint8_t *)p)[i]);
  case RJ_E5M2:
    return half_to_f32((uint16_t)(((const uint8_t *)p)[i] << 8));
  }
  return 0;
}

/* v in the integer dtype t's range (saturating; NaN: 0) */
static double clamp_int(rj_dtype t, double v) {
  int bits = 8 * ir_dtype(t)->bytes;
  double lo = ir_dtype(t)->is_signed ? -ldexp(1, bits - 1) : 0;
  double hi = ir_dtype(t)->is_signed ? ldexp(1, bits - 1) - 1 : ldexp(1, bits) - 1;
  return isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v;
}

void hr_store_f64(rj_dtype t, void *p, int64_t i, double v) {
  switch (t) {
  case RJ_F16:
    ((uint16_t *)p)[i] = f32_to_half((float)v);
    break;
  case RJ_BF16:
    ((uint16_t *)p)[i] = f32_to_bf16((float)v);
    break;
  case RJ_F32:
    ((float *)p)[i] = (float)v;
    break;
  case RJ_F64:
    ((double *)p)[i] = v;
    break;
  case RJ_I32:
    ((int32_t *)p)[i] = (int32_t)v;
    break;
  case RJ_U32:
    ((uint32_t *)p)[i] = (uint32_t)v;
    break;
  case RJ_I64:
    ((int64_t *)p)[i] = (int64_t)v;
    break;
  case RJ_U64:
    ((uint64_t *)p)[i] = (uint64_t)v;
    break;
  case RJ_I8:
  case RJ_I16:
    store_bits(t, p, i, (uint64_t)(int64_t)clamp_int(t, v));
    break;
  case RJ_U8:
  case RJ_U16:
    store_bits(t, p, i, (uint64_t)clamp_int(t, v));
    break;
  case RJ_BOOL:
    ((uint8_t *)p)[i] = v != 0;
    break;
  case RJ_E4M3:
    ((uint8_t *)p)[i] = f64_to_e4m3(v);
    break;
  case RJ_E5M2:
    ((uint8_t *)p)[i] = f64_to_e5m2(v);
    break;
  }
}

void hr_fill_random(hr_rng *g, rj_dtype t, void *p, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = hr_rng_next(g);
    if (t == RJ_BOOL) {
      store_bits(t, p, i, r & 1);
    } else if (ir_dtype(t)->fp8) { /* a random byte of magnitude below 2: no NaN, no inf */
      store_bits(t, p, i, r & 0xbf);
    } else if (ir_dtype(t)->is_float) {
      double u = (double)(r >> 11) * 0x1p-53 * 2.0 - 1.0; /* [-1, 1) */
      hr_store_f64(t, p, i, u);
    } else if (ir_dtype(t)->is_signed) {
      hr_store_f64(t, p, i, (double)(int64_t)(r % 201) - 100.0);
    } else {
      hr_store_f64(t, p, i, (double)(r % 201));
    }
  }
}

/* Bits of an integer dtype: all ones but (set = false) / none but (set = true) one random bit
 * with probability 4 / len. */
static uint64_t sparse_bits(hr_rng *g, rj_dtype t, int64_t len, bool set) {
  int bits = 8 * ir_dtype(t)->bytes;
  uint64_t r = hr_rng_next(g), ones = bits == 64 ? ~0ull : (1ull << bits) - 1;
  uint64_t bit = (r % (uint64_t)(len > 4 ? len : 4)) < 4 ? 1ull << ((r >> 32) % (uint64_t)bits) : 0;
  return set ? bit : ones & ~bit;
}

void hr_fill_op(hr_rng *g, rj_op op, rj_dtype t, void *p, int64_t n, int64_t len) {
  bool fl = ir_dtype(t)->is_float, sgn = ir_dtype(t)->is_signed;
  if (op != RJ_OP_PROD && op != RJ_OP_AND && op != RJ_OP_OR && op != RJ_OP_XOR) {
    hr_fill_random(g, t, p, n);
    return;
  }
  /* log of a product: about N(0, 1.15^2), far from f16's subnormals (e^-9.7) and overflow (e^11).
   * bf16's spacing near 1 is 2^-8 .. 2^-7: a narrower spread would round most inputs one way */
  double s = len > 0 ? 2.0 / sqrt((double)len) : 0.5, least = t == RJ_BF16 ? 0x1p-6 : 0x1p-8;
  s = s > 0.5 ? 0.5 : s < least ? least : s;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = hr_rng_next(g);
    if (t == RJ_BOOL)
      store_bits(t, p, i, op == RJ_OP_AND ? (r & 15) != 0 : op == RJ_OP_OR ? (r & 15) == 0 : r & 1);
    else if (op == RJ_OP_PROD && fl)
      hr_store_f64(t, p, i, exp(s * ((double)(r >> 11) * 0x1p-53 * 2.0 - 1.0)));
    else if (op == RJ_OP_PROD)
      hr_store_f64(t, p, i,
                   sgn ? (double)(int64_t)(2 * (r % 100)) - 99.0 : (double)(2 * (r % 100) + 1));
    else if (op == RJ_OP_XOR)
      store_bits(t, p, i, r);
    else
      store_bits(t, p, i, sparse_bits(g, t, len, op == RJ_OP_OR));
  }
}

void hr_fill_nans(hr_rng *g, rj_dtype t, void *p, int64_t n, int count) {
  if (ir_dtype(t)->is_float && n > 0)
    for (int i = 0; i < count; i++)
      hr_store_f64(t, p, (int64_t)(hr_rng_next(g) % (uint64_t)n), NAN);
}

/* Poison: NaNs with a payload no arithmetic produces, and 0xDEAD... integers. */
static uint64_t poison_bits(rj_dtype t) {
  switch (t) {
  case RJ_F16:
  case RJ_BF16:
    return 0xFFB5; /* f16: -NaN, payload; bf16: -NaN, payload */
  case RJ_F32:
    return 0xFFBADBADull;
  case RJ_F64:
    return 0xFFF7BADBADBADBADull;
  case RJ_I32:
  case RJ_U32:
    return 0xDEADBEEFull;
  case RJ_I8: /* -128: outside the draws (-100 .. 100), as 0xDE (222) is for u8's (0 .. 200) */
    return 0x80;
  case RJ_U8:
  case RJ_BOOL:
    return 0xDE;
  case RJ_E4M3: /* -NaN: the kernels write NaN positive */
  case RJ_E5M2:
    return 0xFF;
  case RJ_I16:
  case RJ_U16:
    return 0xDEAD;
  default:
    return 0xDEADBEEFDEADBEEFull;
  }
}

void hr_fill_poison(rj_dtype t, void *p, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    store_bits(t, p, i, poison_bits(t));
}

bool hr_is_poison(rj_dtype t, const void *p, int64_t i) {
  return hr_load_bits(t, p, i) == poison_bits(t);
}

/* ---------------------------------------------------------------- the reference */
static uint64_t wrap(rj_dtype t, uint64_t u) {
  switch (t) {
  case RJ_I32:
    return (uint64_t)(int64_t)(int32_t)(uint32_t)u;
  case RJ_U32:
    return (uint32_t)u;
  default:
    return u;
  }
}

static uint64_t load_int(rj_dtype t, const void *p, int64_t i) {
  switch (t) {
  case RJ_I8:
    return (uint64_t)(int64_t)((const int8_t *)p)[i];
  case RJ_U8:
  case RJ_BOOL:
    return ((const uint8_t *)p)[i];
  case RJ_I16:
    return (uint64_t)(int64_t)((const int16_t *)p)[i];
  case RJ_U16:
    return ((const uint16_t *)p)[i];
  case RJ_I32:
    return (uint64_t)(int64_t)((const int32_t *)p)[i];
  case RJ_U32:
    return ((const uint32_t *)p)[i];
  default:
    return ((const uint64_t *)p)[i];
  }
}

void hr_oracle_init(rj_op op, rj_dtype t, hr_value *acc) {
  acc->mag = 0;
  acc->n = 0;
  acc->acc_f64 = 0;
  acc->zero_sign = 0;
  if (op == RJ_OP_MEAN) op = RJ_OP_SUM;
  if (op == RJ_OP_PROD || op == RJ_OP_AND || op == RJ_OP_OR || op == RJ_OP_XOR) {
    acc->f = 1.0;
    acc->u = op == RJ_OP_PROD ? 1 : op == RJ_OP_AND ? wrap(t, ~0ull) : 0;
    return;
  }
  acc->f = op == RJ_OP_SUM ? 0.0 : op == RJ_OP_MAX ? -INFINITY : INFINITY;
  switch (t) {
  case RJ_I32:
    acc->u = op == RJ_OP_SUM ? 0 : op == RJ_OP_MAX ? (uint64_t)(int64_t)INT32_MIN : INT32_MAX;
    break;
  case RJ_I64:
    acc->u = op == RJ_OP_SUM ? 0 : op == RJ_OP_MAX ? (uint64_t)INT64_MIN : INT64_MAX;
    break;
  case RJ_U32:
    acc->u = op == RJ_OP_MIN ? UINT32_MAX : 0;
    break;
  case RJ_U64:
    acc->u = op == RJ_OP_MIN ? UINT64_MAX : 0;
    break;
  default:
    acc->u = 0;
  }
}

void hr_oracle_add(rj_op op, rj_dtype t, rj_nan nan, hr_value *acc, const void *p, int64_t i) {
  rj_dtype at = ir_acc_dtype(op, t); /* i8 .. bool: i64 / u64 (mean: f64) */
  if (ir_dtype(t)->is_float || ir_dtype(at)->is_float) {
    double x = hr_load_f64(t, p, i);
    if (isnan(x)) {
      if (nan == RJ_NAN_IGNORE) return;
      acc->f = NAN;
      return;
    }
    acc->mag += fabs(x);
    acc->n++;
    if (isnan(acc->f)) return;
    if (op == RJ_OP_SUM || op == RJ_OP_MEAN)
      acc->f += x;
    else if (op == RJ_OP_PROD)
      acc->f *= x;
    else if (op == RJ_OP_MAX)
      acc->f = x > acc->f ? x : acc->f;
    else
      acc->f = x < acc->f ? x : acc->f;
    return;
  }
  uint64_t x = load_int(t, p, i);
  bool sgn = ir_dtype(at)->is_signed; /* as the accumulator compares: bool's max / min in i64 */
  acc->n++;
  if (op == RJ_OP_SUM) {
    acc->u = wrap(at, acc->u + x);
  } else if (op == RJ_OP_PROD) {
    acc->u = wrap(at, acc->u * x);
  } else if (op == RJ_OP_AND || op == RJ_OP_OR || op == RJ_OP_XOR) {
    acc->u = op == RJ_OP_AND ? acc->u & x : op == RJ_OP_OR ? acc->u | x : acc->u ^ x;
  } else {
    bool gt = sgn ? (int64_t)x > (int64_t)acc->u : x > acc->u;
    bool lt = sgn ? (int64_t)x < (int64_t)acc->u : x < acc->u;
    if ((op == RJ_OP_MAX && gt) || (op == RJ_OP_MIN && lt)) acc->u = x;
  }
}

void hr_oracle_narrow(rj_dtype res, hr_value *acc) {
  const ir_dtype_info *d = ir_dtype(res);
  if (d->is_float || res == RJ_BOOL || d->bytes >= 4) return;
  int bits = d->bytes * 8;
  if (!d->is_signed) { /* u8 / u16: from the u64 accumulator, unsigned */
    uint64_t hi = ((uint64_t)1 << bits) - 1;
    acc->u = acc->u > hi ? hi : acc->u;
    return;
  }
  int64_t v = (int64_t)acc->u, hi = ((int64_t)1 << (bits - 1)) - 1;
  acc->u = (uint64_t)(v > hi ? hi : v < -hi - 1 ? -hi - 1 : v);
}

void hr_oracle_finish(rj_op op, hr_value *acc, int64_t count) {
  if (op != RJ_OP_MEAN) return;
  acc->f /= (double)count; /* 0 elements: NaN, as torch */
  acc->mag /= (double)count;
}

void hr_oracle_empty(const rj_tensor *t, hr_value *acc, int64_t extent) {
  acc->zero_sign = t->op == RJ_OP_SUM && extent == 0 && !t->accum &&
                   t->fused.epilogue != RJ_EPI_IR && ir_dtype(ir_tensor_result(t))->is_float;
}

void hr_oracle_tile(const rj_tile *t, const void *src, const void *dst_old, hr_value *ref) {
  ir_tile_shape f;
  ir_tile_facts(t, &f);
  for (int64_t s = 0; s < f.spatial_len; s++) {
    hr_value *a = &ref[s];
    hr_oracle_init(t->op, t->dtype, a);
    for (int64_t r = 0; r < f.reduce_len; r++)
      hr_oracle_add(t->op, t->dtype, t->nan, a, src, ir_src_offset(t, s, r));
    if (dst_old) hr_oracle_add(t->op, t->dtype, t->nan, a, dst_old, ir_dst_offset(t, s));
    hr_oracle_finish(t->op, a, f.reduce_len);
  }
}

void hr_oracle_tensor(const rj_tensor *t, const ir_tview *v, const void *src, const void *dst_old,
                      hr_value *ref) {
  for (int64_t p = 0; p < v->outputs; p++) {
    hr_value *a = &ref[p];
    hr_oracle_init(t->op, ir_acc_dtype(t->op, t->dtype), a);
    int64_t base = ir_tview_offset(v, p, 0);
    for (int64_t r = 0; r < v->reduce_len; r++)
      hr_oracle_add(t->op, t->dtype, t->nan, a, src, base + ir_tview_offset(v, 0, r));
    if (dst_old) hr_oracle_add(t->op, ir_tensor_result(t), t->nan, a, dst_old, p);
    hr_oracle_finish(t->op, a, v->reduce_len);
    hr_oracle_empty(t, a, v->reduce_len);
    hr_oracle_narrow(ir_tensor_result(t), a);
    a->acc_f64 = t->acc_f64 && t->dtype != RJ_F64;
  }
}

static double tolerance(rj_dtype t) {
  switch (t) {
  case RJ_F64:
    return 1e-12;
  case RJ_F32:
    return 1e-5;
  case RJ_F16:
    return 2e-3;
  case RJ_BF16:
    return 1.6e-2;
  default:
    return 0;
  }
}

/* prod: relative.  The output's rounding (tolerance(t)), and the n roundings of the accumulation
 * type (f32 for f16 / bf16 / f32, f64 for f64), each at most half an ulp, independent: 16 sqrt(n)
 * units of roundoff covers them (n u bounds the worst case, too loose to see a lost factor). */
static double prod_tolerance(rj_dtype t, int64_t n) {
  double u = t == RJ_F64 ? 0x1p-53 : 0x1p-24;
  return tolerance(t) + 16.0 * sqrt((double)(n > 1 ? n : 1)) * u;
}

/* acc_dtype "f64" (f16 bf16 f32 outputs): the one rounding to t, half an ulp of t at the
 * reference (0 and subnormals: of the smallest normal binade), plus the roundoff of two f64
 * accumulations of n elements, the kernel's and the oracle's: n u each, of the sum of |x| (prod:
 * of the product).  Far inside tolerance(t): an f32 accumulation fails it for f32 outputs (for
 * f16 / bf16 outputs their own rounding dominates: test_gpu_scalar_ops's exact cases). */
static double acc_f64_tolerance(rj_op op, rj_dtype t, const hr_value *ref) {
  int bits = t == RJ_F32 ? 24 : t == RJ_F16 ? 11 : 8, emin = t == RJ_F16 ? -13 : -125, e = emin;
  if (ref->f != 0) frexp(ref->f, &e); /* |f| in [2^(e-1), 2^e): its ulp is 2^(e - bits) */
  double half_ulp = ldexp(1.0, (e < emin ? emin : e) - bits - 1);
  double n = (double)(ref->n > 1 ? ref->n : 1);
  return half_ulp + 2.0 * n * 0x1p-53 * (op == RJ_OP_PROD ? fabs(ref->f) : ref->mag);
}

bool hr_compare(rj_op op, rj_dtype t, const hr_value *ref, const void *got, int64_t i,
                double *abs_err, double *rel_err) {
  *abs_err = *rel_err = 0;
  /* a one- or two-byte integer result may be the poison itself: and / or / xor of any bits, a
   * wrapping sum or product (of 2-byte integers: one output in 65536, by chance); wider, the
   * poison is taken as not written */
  bool due = !ir_dtype(t)->is_float && ir_dtype(t)->bytes <= 2 && load_int(t, got, i) == ref->u;
  if (hr_is_poison(t, got, i) && !due) {
    *abs_err = *rel_err = INFINITY;
    return false;
  }
  if (!ir_dtype(t)->is_float) {
    uint64_t g = load_int(t, got, i), want = t == RJ_BOOL ? ref->u != 0 : ref->u; /* bool: 0 / 1 */
    if (g == want) return true;
    double d = ir_dtype(t)->is_signed ? (double)(int64_t)g - (double)(int64_t)want
                                      : (double)g - (double)want;
    *abs_err = fabs(d);
    *rel_err = want ? *abs_err / fabs((double)(int64_t)want) : INFINITY;
    return false;
  }
  double g = hr_load_f64(t, got, i), r = ref->f;
  if (t == RJ_E4M3 && isinf(r)) r = NAN; /* e4m3 has no infinity: an identity +-inf is NaN */
  if (isnan(r) || isnan(g)) {
    if (isnan(r) && isnan(g)) return true;
    *abs_err = *rel_err = INFINITY;
    return false;
  }
  if (isinf(r) || isinf(g)) { /* an all-NaN-ignored reduction yields the identity */
    if (g == r) return true;
    *abs_err = *rel_err = INFINITY;
    return false;
  }
  if (ref->zero_sign && r == 0 && g == 0 && signbit(g) != signbit(r)) {
    *rel_err = INFINITY; /* -0.0 where +0.0 is due, or the other way */
    return false;
  }
  *abs_err = fabs(g - r);
  *rel_err = r != 0 ? *abs_err / fabs(r) : (*abs_err ? INFINITY : 0);
  if (ref->acc_f64) return *abs_err <= acc_f64_tolerance(op, t, ref);
  if (op == RJ_OP_PROD) return *abs_err <= prod_tolerance(t, ref->n) * fabs(r);
  if (op != RJ_OP_SUM && op != RJ_OP_MEAN) return g == r; /* max / min are exact */
  return *abs_err <= tolerance(t) * ref->mag;
}
