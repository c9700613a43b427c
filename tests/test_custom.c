/* op custom: a caller's combine given as LLVM IR text (no GPU needed).  The request's fields
 * (JSON and C) and their refusals, dispatch (a non-commutative combine only where index order is
 * kept), the PTX (the combine inlined: no call left; a custom sum compiles to op sum's very
 * PTX), the screen of the caller's IR, caller IR that crashes LLVM (a status, the process
 * lives), and the cache (keyed by the IR's text, not its address). */
#include "rjtest.h"

#include <stdint.h>

#define ADD_F32                                                                                    \
  "define float @add(float %a, float %b) {\n  %c = fadd float %a, %b\n  ret float %c\n}\n"
#define ADD_I64 "define i64 @add(i64 %a, i64 %b) {\n  %c = add i64 %a, %b\n  ret i64 %c\n}\n"
/* 2x2 matrices of 16-bit integers mod 2^16 packed in a u64 (a0 a1 / a2 a3, a0 lowest), product:
 * associative, not commutative; identity 0x0001000000000001 */
#define MATMUL                                                                                     \
  "define i64 @mm(i64 %a, i64 %b) {\n"                                                             \
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

/* A C tensor request of op custom: shape [m, n] reducing `axis`. */
static void custom_req(rj_request *r, rj_dtype dt, int64_t m, int64_t n, int axis, const char *ir,
                       const char *fn, uint64_t identity, int commutative) {
  rj_request_init(r, RJ_KIND_TENSOR);
  rj_tensor *t = &r->u.tensor;
  t->op = RJ_OP_CUSTOM;
  t->dtype = dt;
  t->ndim = 2;
  t->shape[0] = m;
  t->shape[1] = n;
  t->naxes = 1;
  t->axes[0] = axis;
  t->combine_ir = ir;
  snprintf(t->combine_fn, sizeof t->combine_fn, "%s", fn);
  t->combine_identity = identity;
  t->combine_commutative = commutative;
}

static rj_status compile(rj_ctx *ctx, const rj_request *r, int in_process, rj_kernel **k) {
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  o.ir_in_process = in_process;
  o.ir_timeout_ms = 5000;
  return rj_compile(ctx, r, &o, k);
}

/* s as a JSON string's contents */
static char *escape(const char *s) {
  char *out = malloc(2 * strlen(s) + 1), *o = out;
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

START_TEST(json_fields_and_canonical) {
  rj_ctx *ctx = rj_ctx_new();
  char *ir = escape(ADD_F32);
  rj_request r;
  rjt_parse(
      ctx,
      rjt_fmt("{\"kind\":\"tensor\",\"op\":\"custom\",\"dtype\":\"f32\",\"shape\":[4,8],"
              "\"axes\":[1],\"combine\":{\"ir\":\"%s\",\"function\":\"add\",\"identity\":-0.0,"
              "\"commutative\":true}}",
              ir),
      &r);
  ck_assert_int_eq(r.u.tensor.op, RJ_OP_CUSTOM);
  ck_assert_str_eq(r.u.tensor.combine_ir, ADD_F32);
  ck_assert_str_eq(r.u.tensor.combine_fn, "add");
  ck_assert_uint_eq(r.u.tensor.combine_identity, 0x80000000u);
  ck_assert_int_eq(r.u.tensor.combine_commutative, 1);
  const char *canon = NULL;
  ck_assert_int_eq(rj_request_canonical(ctx, &r, &canon), RJ_OK);
  ck_assert_msg(strstr(canon, "\"identity\":\"0x80000000\"") && strstr(canon, "fadd float"), "%s",
                canon);
  /* the canonical text parses back to the same request */
  rj_request back;
  rjt_parse(ctx, canon, &back);
  ck_assert_str_eq(back.u.tensor.combine_ir, ADD_F32);
  ck_assert_uint_eq(back.u.tensor.combine_identity, 0x80000000u);
  /* u64 identity by its bits; commutative defaults to false */
  rjt_parse(ctx,
            rjt_fmt("{\"kind\":\"tensor\",\"op\":\"custom\",\"dtype\":\"u64\",\"shape\":[9],"
                    "\"combine\":{\"ir\":\"%s\",\"function\":\"add\",\"identity\":"
                    "\"0xffffffffffffffff\"}}",
                    ir),
            &r);
  ck_assert_uint_eq(r.u.tensor.combine_identity, UINT64_MAX);
  ck_assert_int_eq(r.u.tensor.combine_commutative, 0);
  free(ir);
  rj_ctx_free(ctx);
}
END_TEST

typedef struct bad {
  const char *json, *want;
} bad;

START_TEST(json_refusals_name_fields) {
  static const bad cases[] = {
      {"\"op\":\"custom\",\"dtype\":\"f32\"", "combine: required with op \"custom\""},
      {"\"op\":\"sum\",\"dtype\":\"f32\",\"combine\":{}", "combine: applies only to op"},
      {"\"op\":\"custom\",\"dtype\":\"f32\",\"combine\":{\"function\":\"f\",\"identity\":0}",
       "combine.ir: required field is missing"},
      {"\"op\":\"custom\",\"dtype\":\"f32\",\"combine\":{\"ir\":\"x\",\"identity\":0}",
       "combine.function: required field is missing"},
      {"\"op\":\"custom\",\"dtype\":\"f32\",\"combine\":{\"ir\":\"x\",\"function\":\"f\"}",
       "combine.identity: required field is missing"},
      {"\"op\":\"custom\",\"dtype\":\"f32\",\"combine\":{\"ir\":\"x\",\"function\":\"f\","
       "\"identity\":0.1}",
       "combine.identity: not exactly representable as f32"},
      {"\"op\":\"custom\",\"dtype\":\"i32\",\"combine\":{\"ir\":\"x\",\"function\":\"f\","
       "\"identity\":4294967296}",
       "combine.identity: not an integer the dtype holds"},
      {"\"op\":\"custom\",\"dtype\":\"i32\",\"combine\":{\"ir\":\"x\",\"function\":\"f\","
       "\"identity\":\"0x100000000\"}",
       "combine.identity: 0x100000000 has bits above the 32 of i32"},
      {"\"op\":\"custom\",\"dtype\":\"i32\",\"combine\":{\"ir\":\"x\",\"function\":\"f\","
       "\"identity\":\"12\"}",
       "combine.identity: expected a number or \"0x...\""},
      {"\"op\":\"custom\",\"dtype\":\"f32\",\"combine\":{\"ir\":\"x\",\"function\":\"f\","
       "\"identity\":0,\"extra\":1}",
       "combine.extra: unknown field"},
      {"\"op\":\"custom\",\"dtype\":\"f32\",\"combine\":{\"ir\":\"\",\"function\":\"f\","
       "\"identity\":0}",
       "combine.ir: empty"},
      {"\"op\":\"custom\",\"dtype\":\"f32\",\"combine\":{\"ir\":\"x\",\"function\":\"a b\","
       "\"identity\":0}",
       "combine.function: character 1 is not printable ASCII"},
      {"\"op\":\"custom\",\"dtype\":\"f16\",\"combine\":{\"ir\":\"x\",\"function\":\"f\","
       "\"identity\":0}",
       "op: \"custom\" takes f32 f64 i32 u32 i64 u64"},
      {"\"op\":\"custom\",\"dtype\":\"f32\",\"nan\":\"ignore\",\"combine\":{\"ir\":\"x\","
       "\"function\":\"f\",\"identity\":0}",
       "nan: \"ignore\" applies to the built-in ops"},
      {"\"op\":\"custom\",\"dtype\":\"f32\",\"accum\":true,\"combine\":{\"ir\":\"x\","
       "\"function\":\"f\",\"identity\":0}",
       "accum: not with a non-commutative combine"},
  };
  rj_ctx *ctx = rj_ctx_new();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    rj_request r;
    const char *json = rjt_fmt("{\"kind\":\"tensor\",\"shape\":[4],%s}", cases[i].json);
    ck_assert_int_eq(rj_request_parse(ctx, json, &r), RJ_EINVAL);
    ck_assert_msg(strstr(rj_errmsg(ctx), cases[i].want), "%s\n  got: %s", json, rj_errmsg(ctx));
  }
  rj_request r;
  ck_assert_int_eq(rj_request_parse(ctx,
                                    "{\"kind\":\"treduce\",\"op\":\"custom\",\"dtype\":\"f32\","
                                    "\"ranks\":2,\"shape\":[4]}",
                                    &r),
                   RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "serves kind tensor only"), "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

START_TEST(c_refusals_name_fields) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  custom_req(&r, RJ_F32, 4, 8, 1, NULL, "add", 0, 1);
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "combine.ir: required"), "%s", rj_errmsg(ctx));
  char *big = malloc(RJ_COMBINE_IR_MAX + 2);
  memset(big, ' ', RJ_COMBINE_IR_MAX + 1);
  big[RJ_COMBINE_IR_MAX + 1] = 0;
  custom_req(&r, RJ_F32, 4, 8, 1, big, "add", 0, 1);
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "combine.ir: longer than 1048576 bytes"), "%s",
                rj_errmsg(ctx));
  free(big);
  custom_req(&r, RJ_F32, 4, 8, 1, ADD_F32, "", 0, 1);
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "combine.function: required"), "%s", rj_errmsg(ctx));
  custom_req(&r, RJ_F32, 4, 8, 1, ADD_F32, "add", 0, 2);
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "combine.commutative: 2"), "%s", rj_errmsg(ctx));
  /* combine fields on another op */
  custom_req(&r, RJ_F32, 4, 8, 1, ADD_F32, "add", 0, 1);
  r.u.tensor.op = RJ_OP_SUM;
  ck_assert_int_eq(rj_request_validate(ctx, &r), RJ_EINVAL);
  ck_assert_msg(strstr(rj_errmsg(ctx), "combine: applies only to op \"custom\""), "%s",
                rj_errmsg(ctx));
  rj_ctx_free(ctx);
}
END_TEST

static const char *explain(rj_ctx *ctx, const rj_request *r) {
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  const char *text = NULL;
  ck_assert_int_eq(rj_explain(ctx, r, &o, &text), RJ_OK);
  return text;
}

/* A non-commutative combine goes where index order is kept; a commutative one where op sum
 * goes (rows, columns and generic views). */
START_TEST(dispatch_by_commutativity) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  custom_req(&r, RJ_U64, 64, 1000, 1, MATMUL, "mm", 0x0001000000000001ull, 0);
  const char *t = explain(ctx, &r);
  ck_assert_msg(strstr(t, "tensor_ordered prio=4 chosen"), "%s", t);
  ck_assert_msg(strstr(t, "tensor_rows prio=30 rejected: its folds reorder operands"), "%s", t);
  ck_assert_msg(strstr(t, "tensor_cluster prio=35 rejected: does not serve op \"custom\""), "%s",
                t);
  custom_req(&r, RJ_U64, 64, 1000, 0, MATMUL, "mm", 0x0001000000000001ull, 0);
  t = explain(ctx, &r);
  ck_assert_msg(strstr(t, "tensor_ordered prio=4 chosen"), "%s", t);
  static const int axes[] = {1, 0};
  static const char *const want[] = {"tensor_rows prio=30 chosen", "tensor_cols prio=30 chosen"};
  for (int i = 0; i < 2; i++) {
    custom_req(&r, RJ_F32, 64, 1000, axes[i], ADD_F32, "add", 0x80000000u, 1);
    t = explain(ctx, &r);
    ck_assert_msg(strstr(t, want[i]), "%s", t);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* A custom sum is op sum's kernel exactly: same variant, same plan, the same PTX once the
 * combine is inlined (no call left), through the compiler process and in process alike. */
START_TEST(custom_sum_is_sum_ptx) {
  rj_ctx *ctx = rj_ctx_new();
  static const int64_t shapes[][3] = {{64, 1000, 1}, {1000, 64, 0}, {1, 100003, 1}, {7, 3, 0}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (int d = 0; d < 2; d++) {
      rj_request r;
      custom_req(&r, d ? RJ_I64 : RJ_F32, shapes[i][0], shapes[i][1], (int)shapes[i][2],
                 d ? ADD_I64 : ADD_F32, "add", d ? 0 : 0x80000000u, 1);
      rj_kernel *k = NULL, *kin = NULL, *ks = NULL;
      ck_assert_msg(compile(ctx, &r, 0, &k) == RJ_OK, "%s", rj_errmsg(ctx));
      char *ptx = strdup(rj_kernel_text(k, RJ_EMIT_PTX));
      ck_assert_msg(!strstr(ptx, "call"), "a call is left");
      rj_request again = r; /* another IR text: not the kernel just cached */
      again.u.tensor.combine_ir = d ? ADD_I64 "; in process\n" : ADD_F32 "; in process\n";
      ck_assert_msg(compile(ctx, &again, 1, &kin) == RJ_OK, "%s", rj_errmsg(ctx));
      ck_assert_str_eq(rj_kernel_text(kin, RJ_EMIT_PTX), ptx);
      rj_request s = r; /* op sum on the same variant (unforced, some go to tensor_cluster) */
      snprintf(s.variant, sizeof s.variant, "%s", rj_kernel_variant(k));
      s.u.tensor.op = RJ_OP_SUM;
      s.u.tensor.combine_ir = NULL;
      s.u.tensor.combine_fn[0] = 0;
      s.u.tensor.combine_identity = 0;
      s.u.tensor.combine_commutative = 0;
      ck_assert_msg(compile(ctx, &s, 0, &ks) == RJ_OK, "%s", rj_errmsg(ctx));
      ck_assert_str_eq(rj_kernel_variant(ks), rj_kernel_variant(k));
      ck_assert_str_eq(rj_kernel_text(ks, RJ_EMIT_PTX), ptx);
      free(ptx);
    }
  rj_ctx_free(ctx);
}
END_TEST

/* The ordered kernel calls the combine with (lower, higher): in its IR after linking, and no
 * call is left in its PTX. */
START_TEST(ordered_kernel_inlines) {
  rj_ctx *ctx = rj_ctx_new();
  rj_request r;
  custom_req(&r, RJ_U64, 5, 333, 1, MATMUL, "mm", 0x0001000000000001ull, 0);
  rj_kernel *k = NULL;
  ck_assert_msg(compile(ctx, &r, 0, &k) == RJ_OK, "%s", rj_errmsg(ctx));
  ck_assert_str_eq(rj_kernel_variant(k), "tensor_ordered");
  const char *ptx = rj_kernel_text(k, RJ_EMIT_PTX);
  ck_assert_msg(!strstr(ptx, "call"), "a call is left");
  const char *ll = rj_kernel_text(k, RJ_EMIT_LLVM), *opt = rj_kernel_text(k, RJ_EMIT_LLVM_OPT);
  ck_assert_msg(strstr(ll, "define internal i64 @rj.custom.combine(") && strstr(ll, "mul i16") &&
                    strstr(ll, "alwaysinline"),
                "the link makes the caller's function redjit's internal, alwaysinline combine");
  ck_assert_msg(!strstr(opt, "rj.custom.combine"), "O3 inlined every call");
  rj_ctx_free(ctx);
}
END_TEST

typedef struct screen_case {
  const char *ir, *fn, *want;
  rj_status st;
} screen_case;

/* What the screen refuses, naming the field: through the compiler process and in process. */
START_TEST(screen_refusals) {
  static const screen_case cases[] = {
      {"this is not IR", "add", "combine.ir: not LLVM 22 IR text", RJ_EINVAL},
      {ADD_F32, "sub", "combine.function: the module defines no function \"sub\"", RJ_EINVAL},
      {"define double @add(double %a, double %b) {\n  ret double %a\n}\n", "add",
       "combine.function: \"add\" has type double (double, double); the dtype's combine is float "
       "(float, float)",
       RJ_EINVAL},
      {"define float @add(float %a) {\n  ret float %a\n}\n", "add",
       "combine.function: \"add\" has type", RJ_EINVAL},
      {"@g = global float 0.0\ndefine float @add(float %a, float %b) {\n  store float %a, ptr @g\n"
       "  ret float %b\n}\n",
       "add", "combine.ir: global @g is not constant", RJ_EINVAL},
      {"define float @add(float %a, float %b) {\n  %p = inttoptr i64 16 to ptr\n"
       "  store float %a, ptr %p\n  ret float %b\n}\n",
       "add", "combine.ir: function add has a store to memory other than its own locals",
       RJ_EINVAL},
      {"declare float @ext(float)\ndefine float @add(float %a, float %b) {\n"
       "  %c = call float @ext(float %a)\n  ret float %c\n}\n",
       "add", "has a call of a function the module does not define", RJ_EINVAL},
      {"define float @add(float %a, float %b) {\n  %c = call float asm \"mov.f32 $0, $1;\", "
       "\"=f,f\"(float %a)\n  ret float %c\n}\n",
       "add", "has inline assembly", RJ_EINVAL},
      {"declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)\n"
       "define float @add(float %a, float %b) {\n"
       "  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)\n  ret float %a\n}\n",
       "add", "has an NVVM intrinsic", RJ_EINVAL},
      {"declare float @llvm.sin.f32(float)\ndefine float @add(float %a, float %b) {\n"
       "  %c = call float @llvm.sin.f32(float %a)\n  ret float %c\n}\n",
       "add", "ir: intrinsic llvm.sin.f32 is not one redjit knows NVPTX can select",
       RJ_EUNSUPPORTED},
      {"define float @add(float %a, float %b) {\n  %p = inttoptr i64 16 to ptr\n"
       "  %v = load float, ptr %p\n  ret float %v\n}\n",
       "add", "has a load from memory other than its own locals", RJ_EINVAL},
      {"define float @\"rj.custom.combine\"(float %a, float %b) {\n  ret float %a\n}\n"
       "define float @add(float %a, float %b) {\n  ret float %a\n}\n",
       "add", "a name redjit keeps for itself", RJ_EINVAL},
  };
  rj_ctx *ctx = rj_ctx_new();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int in = 0; in < 2; in++) {
      rj_request r;
      custom_req(&r, RJ_F32, 4, 100, 1, cases[i].ir, cases[i].fn, 0, 1);
      rj_kernel *k = NULL;
      rj_status s = compile(ctx, &r, in, &k);
      ck_assert_msg(s == cases[i].st && strstr(rj_errmsg(ctx), cases[i].want),
                    "case %zu (%s): %s %s", i, in ? "in process" : "isolated", rj_status_name(s),
                    rj_errmsg(ctx));
    }
  /* what passes the screen: locals, constant tables, its own helpers, selectable intrinsics,
   * host attributes and a host triple (as Numba's modules have) */
  static const char *ok =
      "target triple = \"x86_64-unknown-linux-gnu\"\n"
      "@t = private constant [2 x float] [float 1.0, float 2.0]\n"
      "declare float @llvm.fabs.f32(float)\n"
      "define internal float @helper(float %x) noinline {\n"
      "  %y = call float @llvm.fabs.f32(float %x)\n  ret float %y\n}\n"
      "define float @add(float %a, float %b) #0 {\n  %s = alloca float\n  store float %a, ptr %s\n"
      "  %l = load float, ptr %s\n  %g = getelementptr [2 x float], ptr @t, i64 0, i64 0\n"
      "  %one = load float, ptr %g\n  %h = call float @helper(float %b)\n"
      "  %m = fmul float %h, %one\n  %c = fadd float %l, %m\n  ret float %c\n}\n"
      "attributes #0 = { noinline optnone \"target-cpu\"=\"skylake\" \"target-features\"=\"+avx2\" }\n";
  rj_request r;
  custom_req(&r, RJ_F32, 4, 100, 1, ok, "add", 0x80000000u, 1);
  rj_kernel *k = NULL;
  ck_assert_msg(compile(ctx, &r, 0, &k) == RJ_OK, "%s", rj_errmsg(ctx));
  ck_assert_msg(!strstr(rj_kernel_text(k, RJ_EMIT_PTX), "call"), "inlined");
  rj_ctx_free(ctx);
}
END_TEST

static char *slurp(const char *name) {
  FILE *f = fopen(rjt_fmt("%s/tests/repro/%s", REDJIT_SOURCE_DIR, name), "rb");
  ck_assert_msg(f != NULL, "%s", name);
  char *buf = malloc(1 << 20);
  size_t n = fread(buf, 1, (1 << 20) - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

/* IR that makes LLVM's parser crash (or refuse), or run on, as the combine: a status naming the
 * compiler process or the IR, and this process goes on. */
START_TEST(crashing_ir_is_a_status) {
  rj_ctx *ctx = rj_ctx_new();
  static const char *const files[] = {"ir_parser_bignum.ll", "ir_i65536.ll"};
  for (int i = 0; i < 2; i++) {
    char *ir = slurp(files[i]);
    rj_request r;
    custom_req(&r, RJ_F32, 4, 100, 1, ir, "k", 0, 1);
    rj_options o;
    rj_options_init(&o);
    o.target = "sm_90";
    o.ir_timeout_ms = 3000;
    rj_kernel *k = NULL;
    rj_status s = rj_compile(ctx, &r, &o, &k);
    ck_assert_msg(k == NULL && (s == RJ_ECRASH || s == RJ_EINVAL), "%s: %s %s", files[i],
                  rj_status_name(s), rj_errmsg(ctx));
    ck_assert_msg(strstr(rj_errmsg(ctx), "ir: the compiler process") ||
                      strstr(rj_errmsg(ctx), "ran past its 3 s limit") ||
                      strstr(rj_errmsg(ctx), "combine."),
                  "%s: %s", files[i], rj_errmsg(ctx));
    free(ir);
  }
  rj_ctx_free(ctx);
}
END_TEST

/* The kernel is keyed by the IR's text: the same text elsewhere finds it, another text (at the
 * same address) does not, and the caller's buffer may change or go after the call. */
START_TEST(cache_by_text) {
  rj_ctx *ctx = rj_ctx_new();
  char *buf = strdup(ADD_F32), *copy = strdup(ADD_F32);
  rj_request r;
  custom_req(&r, RJ_F32, 64, 1000, 1, buf, "add", 0x80000000u, 1);
  rj_kernel *k1 = NULL, *k2 = NULL, *k3 = NULL;
  ck_assert_int_eq(compile(ctx, &r, 0, &k1), RJ_OK);
  long long made = rjt_made(ctx);
  r.u.tensor.combine_ir = copy;
  ck_assert_int_eq(compile(ctx, &r, 0, &k2), RJ_OK);
  ck_assert_ptr_eq(k1, k2);
  ck_assert_int_eq(rjt_made(ctx), made);
  /* the same address, another text: fmul instead of fadd */
  memcpy(strstr(copy, "fadd"), "fmul", 4);
  ck_assert_int_eq(compile(ctx, &r, 0, &k3), RJ_OK);
  ck_assert_ptr_ne(k1, k3);
  ck_assert_msg(strstr(rj_kernel_text(k3, RJ_EMIT_PTX), "mul.rn.f32"), "fmul's kernel");
  free(buf);
  free(copy);
  ck_assert_msg(strstr(rj_kernel_text(k1, RJ_EMIT_PTX), "add.rn.f32"), "fadd's kernel");
  rj_ctx_free(ctx);
}
END_TEST

int main(void) {
  Suite *s = suite_create("custom");
  TCase *tc = tcase_create("custom");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, json_fields_and_canonical);
  tcase_add_test(tc, json_refusals_name_fields);
  tcase_add_test(tc, c_refusals_name_fields);
  tcase_add_test(tc, dispatch_by_commutativity);
  tcase_add_test(tc, custom_sum_is_sum_ptx);
  tcase_add_test(tc, ordered_kernel_inlines);
  tcase_add_test(tc, screen_refusals);
  tcase_add_test(tc, crashing_ir_is_a_status);
  tcase_add_test(tc, cache_by_text);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
