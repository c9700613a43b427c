/* The bounds screen (jit/llvm/ir_screen.c, docs/RELIABILITY.md "What the screen refuses"): caller
 * IR and op custom's combine are refused, naming the function and the bound, for what LLVM cannot
 * compile in bounded time or NVPTX has no memory for, and what goes out of bounds where the screen
 * can see it; what it accepts at its bound compiles within 2 s of CPU and 512 MB, the compiler
 * process (redjit-irc) included. */
#include "rjtest.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define HEAD "target triple = \"nvptx64-nvidia-cuda\"\n"
#define KSIG "define void @k(ptr addrspace(1) %p, i64 %n) {\n"
#define KSIGF "define void @k(ptr addrspace(1) %%p, i64 %%n) {\n" /* in a format */

/* rj_compile_ir in process (the screen runs before LLVM in either place). */
static rj_status compile_ir(rj_ctx *ctx, const char *ir) {
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  o.ir_in_process = 1;
  rj_kernel *k = NULL;
  return rj_compile_ir(ctx, ir, 0, "k", &o, &k);
}

static void refused(const char *ir, const char *cause) {
  rj_ctx *ctx = rj_ctx_new();
  rj_status s = compile_ir(ctx, ir);
  ck_assert_msg(s == RJ_EUNSUPPORTED && strstr(rj_errmsg(ctx), cause), "%s: %s\n%.300s",
                rj_status_name(s), rj_errmsg(ctx), ir);
  ck_assert_msg(strncmp(rj_errmsg(ctx), "ir: ", 4) == 0, "%s", rj_errmsg(ctx));
  rj_ctx_free(ctx);
}

static void accepted(const char *ir) {
  rj_ctx *ctx = rj_ctx_new();
  rj_status s = compile_ir(ctx, ir);
  ck_assert_msg(s == RJ_OK, "%s: %s\n%.300s", rj_status_name(s), rj_errmsg(ctx), ir);
  rj_ctx_free(ctx);
}

START_TEST(recursion_and_depth) {
  refused(HEAD KSIG " call void @k(ptr addrspace(1) %p, i64 %n)\n ret void\n}\n",
          "function k calls itself");
  refused(HEAD "define void @a(ptr addrspace(1) %p) {\n call void @b(ptr addrspace(1) %p)\n"
               " ret void\n}\ndefine void @b(ptr addrspace(1) %p) {\n"
               " call void @a(ptr addrspace(1) %p)\n ret void\n}\n" KSIG
               " call void @a(ptr addrspace(1) %p)\n ret void\n}\n",
          "calls itself (recursion, direct or through others)");
  /* a chain of 70 calls, and one of 60 (accepted) */
  for (int depth = 60; depth <= 70; depth += 10) {
    char *ir = malloc(1 << 16);
    int n = snprintf(ir, 1 << 16, HEAD "define void @f0(ptr addrspace(1) %%p) {\n ret void\n}\n");
    for (int i = 1; i < depth; i++)
      n += snprintf(ir + n, (size_t)(1 << 16) - (size_t)n,
                    "define void @f%d(ptr addrspace(1) %%p) {\n call void @f%d(ptr addrspace(1) "
                    "%%p)\n ret void\n}\n",
                    i, i - 1);
    snprintf(ir + n, (size_t)(1 << 16) - (size_t)n,
             KSIGF " call void @f%d(ptr addrspace(1) %%p)\n ret void\n}\n", depth - 1);
    if (depth > 64)
      refused(ir, "nested calls");
    else
      accepted(ir);
    free(ir);
  }
}
END_TEST

START_TEST(memory) {
  refused(HEAD KSIG " %a = alloca float, i64 %n\n store float 0.0, ptr %a\n ret void\n}\n",
          "an alloca of a run-time size");
  refused(HEAD KSIG " %a = alloca [1073741824 x float]\n store float 0.0, ptr %a\n ret void\n}\n",
          "allocas of more than 16384 bytes");
  accepted(HEAD KSIG " %a = alloca [4096 x float]\n %q = getelementptr [4096 x float], ptr %a, "
                     "i64 0, i64 %n\n store float 0.0, ptr %q\n ret void\n}\n");
  refused(HEAD "@t = addrspace(1) global [128 x double] zeroinitializer\n" KSIG
               " %q = getelementptr [128 x double], ptr addrspace(1) @t, i64 0, i64 200\n"
               " store double 0.0, ptr addrspace(1) %q\n ret void\n}\n",
          "a constant index 200 past a global of 128 elements");
  refused(HEAD KSIG " %a = alloca [4 x float]\n %q = getelementptr [4 x float], ptr %a, i64 0, "
                    "i64 9\n store float 0.0, ptr %q\n ret void\n}\n",
          "past a local of 4 elements");
  refused(HEAD "@t = addrspace(1) global [4 x i32] zeroinitializer\n" KSIG
               " store i32 1, ptr addrspace(1) getelementptr (i8, ptr addrspace(1) @t, i64 64)\n"
               " ret void\n}\n",
          "past a global");
  /* a shared array indexed by the thread: kernels do this; the screen cannot bound it, and lets
   * it through (a fault at run time is the launch's status) */
  accepted(HEAD "@s = internal addrspace(3) global [256 x float] undef\n"
                "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n" KSIG
                " %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n %i = zext i32 %t to i64\n"
                " %q = getelementptr [256 x float], ptr addrspace(3) @s, i64 0, i64 %i\n"
                " store float 1.0, ptr addrspace(3) %q\n ret void\n}\n");
}
END_TEST

START_TEST(types_and_spaces) {
  refused(HEAD KSIG " %v = load i256, ptr addrspace(1) %p\n store i256 %v, ptr addrspace(1) %p\n"
                    " ret void\n}\n",
          "function k has an i256 (integers up to i128)");
  accepted(HEAD KSIG " %v = load i128, ptr addrspace(1) %p\n %m = mul i128 %v, %v\n"
                     " store i128 %m, ptr addrspace(1) %p\n ret void\n}\n");
  static const int spaces[] = {2, 8, 16, 64, 65536};
  for (int i = 0; i < 5; i++) {
    refused(rjt_fmt(HEAD "@g = addrspace(%d) global i32 0\n" KSIGF
                         " store i32 1, ptr addrspace(%d) @g\n ret void\n}\n",
                    spaces[i], spaces[i]),
            "global @g has an address space other than");
    refused(rjt_fmt(HEAD "define void @k(ptr addrspace(%d) %%p) {\n"
                         " store i32 1, ptr addrspace(%d) %%p\n ret void\n}\n",
                    spaces[i], spaces[i]),
            "a pointer in addrspace(");
  }
  refused(HEAD KSIG " %v = load <vscale x 4 x float>, ptr addrspace(1) %p\n"
                    " store <vscale x 4 x float> %v, ptr addrspace(1) %p\n ret void\n}\n",
          "a scalable vector");
  refused(HEAD KSIG
          " %a = alloca [1 x [1 x [1 x [1 x [1 x [1 x [1 x [1 x [1 x [1 x [1 x [1 x [1 x "
          "[1 x [1 x [1 x [1 x [1 x i8]]]]]]]]]]]]]]]]]]\n store i8 0, ptr %a\n ret void\n}\n",
          "a type nested more than 16 deep");
  for (int as = 4; as <= 101; as += 97)
    refused(rjt_fmt(HEAD
                    "define void @k(ptr addrspace(%d) %%p) {\n"
                    " %%o = atomicrmw add ptr addrspace(%d) %%p, i32 1 monotonic\n ret void\n}\n",
                    as, as),
            "an atomic on ");
  accepted(HEAD "define void @k(ptr addrspace(7) %p) {\n" /* sm_90 has clusters */
                " %o = atomicrmw add ptr addrspace(7) %p, i32 1 monotonic\n ret void\n}\n");
  refused(HEAD "@g = addrspace(3) global i32 7\n" KSIG " store i32 1, ptr addrspace(3) @g\n"
               " ret void\n}\n",
          "an initial value in shared memory");
}
END_TEST

/* n instructions `op ty` chained (each on the last and the loaded value). */
static char *chain(const char *ty, const char *op, int n) {
  size_t cap = (size_t)n * 48 + 512;
  char *ir = malloc(cap);
  int w = snprintf(ir, cap, HEAD KSIGF " %%v0 = load %s, ptr addrspace(1) %%p\n", ty);
  for (int i = 1; i < n; i++)
    w += snprintf(ir + w, cap - (size_t)w, " %%v%d = %s %s %%v%d, %%v0\n", i, op, ty, i - 1);
  snprintf(ir + w, cap - (size_t)w, " store %s %%v%d, ptr addrspace(1) %%p\n ret void\n}\n", ty,
           n - 1);
  return ir;
}

START_TEST(size) {
  char *ir = chain("float", "fadd", 40010);
  refused(ir, "over the bound of 40000");
  free(ir);
  ir = chain("i128", "udiv", 160); /* 256 each */
  refused(ir, "over the bound of 40000");
  free(ir);
  ir = chain("<256 x float>", "fadd", 200); /* 256 lanes each */
  refused(ir, "over the bound of 40000");
  free(ir);
}
END_TEST

/* ---------------------------------------------------------------- op custom */

static const char *custom(const char *kind_fields, const char *ir) {
  static char buf[1 << 20];
  size_t w = (size_t)snprintf(buf, sizeof buf,
                              "{%s,\"op\":\"custom\",\"dtype\":\"f32\",\"combine\":"
                              "{\"function\":\"f\",\"identity\":0,\"commutative\":true,\"ir\":\"",
                              kind_fields);
  for (const char *c = ir; *c && w < sizeof buf - 8; c++)
    w += (size_t)snprintf(buf + w, sizeof buf - w,
                          *c == '\n'  ? "\\n"
                          : *c == '"' ? "\\\""
                                      : "%c",
                          *c);
  snprintf(buf + w, sizeof buf - w, "\"}}");
  return buf;
}

#define TENSOR "\"kind\":\"tensor\",\"shape\":[64,1000],\"axes\":[1]"
#define TABLE                                                                                      \
  "@t = internal constant [8 x float] [float 1.0, float 2.0, float 3.0, float 4.0, "               \
  "float 5.0, float 6.0, float 7.0, float 8.0]\n"
#define FHEAD "define float @f(float %a, float %b) {\n %i = fptoui float %a to i64\n"

static rj_status compile_json(rj_ctx *ctx, const char *json) {
  rj_request r;
  if (rj_request_parse(ctx, json, &r)) return RJ_EINVAL;
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  return rj_compile(ctx, &r, &o, &k);
}

static void custom_is(const char *ir, rj_status want, const char *cause) {
  rj_ctx *ctx = rj_ctx_new();
  rj_status s = compile_json(ctx, custom(TENSOR, ir));
  ck_assert_msg(s == want && (!cause || strstr(rj_errmsg(ctx), cause)), "%s: %s\n%s",
                rj_status_name(s), rj_errmsg(ctx), ir);
  rj_ctx_free(ctx);
}

START_TEST(combine_bounds) {
  custom_is(TABLE FHEAD " %q = getelementptr [8 x float], ptr @t, i64 0, i64 %i\n"
                        " %v = load float, ptr %q\n %r = fadd float %v, %b\n ret float %r\n}\n",
            RJ_EUNSUPPORTED,
            "combine.ir: function f has an index into a global that is not bounded");
  custom_is(TABLE FHEAD " %j = and i64 %i, 7\n %q = getelementptr [8 x float], ptr @t, i64 0, "
                        "i64 %j\n %v = load float, ptr %q\n %r = fadd float %v, %b\n"
                        " ret float %r\n}\n",
            RJ_OK, NULL);
  custom_is(TABLE FHEAD " %j = urem i64 %i, 8\n %q = getelementptr [8 x float], ptr @t, i64 0, "
                        "i64 %j\n %v = load float, ptr %q\n %r = fadd float %v, %b\n"
                        " ret float %r\n}\n",
            RJ_OK, NULL);
  custom_is(FHEAD " %l = alloca [4 x float]\n %q = getelementptr [4 x float], ptr %l, i64 0, "
                  "i64 %i\n store float %b, ptr %q\n %v = load float, ptr %l\n ret float %v\n}\n",
            RJ_EUNSUPPORTED, "an index into a local that is not bounded");
  /* clamped by a select on `icmp ult`, by llvm.umin, by a mask under a zext: bounded */
  custom_is(TABLE FHEAD " %c = icmp ult i64 %i, 8\n %j = select i1 %c, i64 %i, i64 0\n"
                        " %q = getelementptr [8 x float], ptr @t, i64 0, i64 %j\n"
                        " %v = load float, ptr %q\n %r = fadd float %v, %b\n ret float %r\n}\n",
            RJ_OK, NULL);
  custom_is(TABLE "declare i64 @llvm.umin.i64(i64, i64)\n" FHEAD
                  " %j = call i64 @llvm.umin.i64(i64 %i, i64 7)\n"
                  " %q = getelementptr [8 x float], ptr @t, i64 0, i64 %j\n"
                  " %v = load float, ptr %q\n %r = fadd float %v, %b\n ret float %r\n}\n",
            RJ_OK, NULL);
  custom_is(TABLE FHEAD " %t = trunc i64 %i to i32\n %m = and i32 %t, 7\n %j = zext i32 %m to i64\n"
                        " %q = getelementptr [8 x float], ptr @t, i64 0, i64 %j\n"
                        " %v = load float, ptr %q\n %r = fadd float %v, %b\n ret float %r\n}\n",
            RJ_OK, NULL);
  custom_is(TABLE FHEAD " %c = icmp ult i64 %i, 9\n %j = select i1 %c, i64 %i, i64 0\n"
                        " %q = getelementptr [8 x float], ptr @t, i64 0, i64 %j\n"
                        " %v = load float, ptr %q\n %r = fadd float %v, %b\n ret float %r\n}\n",
            RJ_EUNSUPPORTED, "not bounded");
  custom_is(FHEAD " %l = alloca [4 x float]\n %q = getelementptr [4 x float], ptr %l, i64 0, "
                  "i64 6\n store float %b, ptr %q\n %v = load float, ptr %l\n ret float %v\n}\n",
            RJ_EUNSUPPORTED, "a constant index 6 past a local of 4 elements");
  custom_is("define float @f(float %a, float %b) {\n %r = call float @f(float %b, float %a)\n"
            " ret float %r\n}\n",
            RJ_EUNSUPPORTED, "calls itself");
  custom_is("define float @f(float %a, float %b) {\n %w = bitcast float %a to i32\n"
            " %x = zext i32 %w to i256\n"
            " %y = trunc i256 %x to i32\n %r = bitcast i32 %y to float\n ret float %r\n}\n",
            RJ_EUNSUPPORTED, "combine.ir: ");
}
END_TEST

/* ---------------------------------------------------------------- bounded at the bound */

/* A fadd chain of n instructions as a combine. */
static char *fadd_combine(int n) {
  size_t cap = (size_t)n * 40 + 128;
  char *ir = malloc(cap);
  int w =
      snprintf(ir, cap, "define float @f(float %%a, float %%b) {\n %%c0 = fadd float %%a, %%b\n");
  for (int i = 1; i < n; i++)
    w += snprintf(ir + w, cap - (size_t)w, " %%c%d = fadd float %%c%d, %%b\n", i, i - 1);
  snprintf(ir + w, cap - (size_t)w, " ret float %%c%d\n}\n", n - 1);
  return ir;
}

/* json (a request) or ir (a caller module) compiled by a child of its own, by the compiler
 * process (redjit-irc, the default): 0 compiled, 2 refused by the screen, 3 other. */
static int child(const char *json, const char *ir) {
  alarm(60);
  rj_ctx *ctx = rj_ctx_new();
  rj_ctx_set_disk_cache(ctx, NULL);
  rj_options o;
  rj_options_init(&o);
  o.target = "sm_90";
  rj_kernel *k = NULL;
  rj_status s = json ? compile_json(ctx, json) : rj_compile_ir(ctx, ir, 0, "k", &o, &k);
  if (s) fprintf(stderr, "%s %s\n", rj_status_name(s), rj_errmsg(ctx));
  rj_ctx_free(ctx);
  return s == RJ_OK ? 0 : s == RJ_EUNSUPPORTED ? 2 : 3;
}

static void bounded(const char *what, const char *json, const char *ir, int want) {
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) _exit(child(json, ir));
  int st = 0;
  struct rusage ru; /* the child and the compiler process it waited for */
  ck_assert_int_eq(wait4(pid, &st, 0, &ru), pid);
  double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  double mb = (double)ru.ru_maxrss / 1024.0;
  if (getenv("RJT_BOUNDS_VERBOSE")) printf("%6.2f s %5.0f MB %s\n", cpu, mb, what);
  ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == want, "%s: status 0x%x", what, st);
  ck_assert_msg(cpu <= 2.0, "%s: %.2f s of CPU", what, cpu);
  ck_assert_msg(mb <= 512.0, "%s: %.0f MB", what, mb);
}

#define LOCAL_TILE                                                                                 \
  "\"kind\":\"tile\",\"scope\":\"thread\",\"threads\":32,\"src\":{\"mem\":\"local\",\"shape\":"    \
  "[287]},\"dst\":{\"mem\":\"local\",\"shape\":[1]},\"axes\":[-1]"
#define SHARED_TILE                                                                                \
  "\"kind\":\"tile\",\"scope\":\"cta\",\"threads\":256,\"src\":{\"mem\":\"shared\",\"shape\":"     \
  "[2,300]},\"dst\":{\"mem\":\"shared\",\"shape\":[2]},\"axes\":[-1]"
#define TENSOR0 "\"kind\":\"tensor\",\"shape\":[64,1000],\"axes\":[0]"

/* A combine's symbols are made internal, so NVPTX renames '.' and '@' in them (front ends such as
 * Numba emit such names); other characters, and aliases, are refused. */
START_TEST(names) {
  custom_is("define internal float @h.1(float %x) {\n ret float %x\n}\n"
            "@k.tbl = constant [2 x float] [float 0.0, float 0.0]\n"
            "define float @f(float %a, float %b) {\n %v = load float, ptr @k.tbl\n"
            " %c = call float @h.1(float %a)\n %s = fadd float %c, %b\n"
            " %r = fadd float %s, %v\n ret float %r\n}\n",
            RJ_OK, NULL);
  custom_is("define float @h-1(float %x) {\n ret float %x\n}\n"
            "define float @f(float %a, float %b) {\n %c = call float @h-1(float %a)\n"
            " %r = fadd float %c, %b\n ret float %r\n}\n",
            RJ_EUNSUPPORTED, "function h-1 has a name PTX cannot spell");
  custom_is("define float @f(float %a, float %b) {\n %r = fadd float %a, %b\n ret float %r\n}\n"
            "@g = alias float (float, float), ptr @f\n",
            RJ_EUNSUPPORTED, "@g is an alias");
  refused(HEAD "@a = alias void (ptr addrspace(1), i64), ptr @k\n" KSIG " ret void\n}\n",
          "@a is an alias");
  refused(HEAD "@t.x = global i32 0\n" KSIG " store i32 1, ptr @t.x\n ret void\n}\n",
          "global @t.x has a name PTX cannot spell");
}
END_TEST

START_TEST(largest_accepted) {
  /* combines just under the bound on the kernels that inline them most (an unrolled register
   * tile of 287 slots, a column fold, a row fold, a shared tile), and just over it */
  static const struct {
    const char *kind;
    int n, over;
  } c[] = {
      {LOCAL_TILE, 115, 125}, {TENSOR0, 480, 520}, {TENSOR, 800, 900}, {SHARED_TILE, 4000, 5200}};
  for (int i = 0; i < 4; i++)
    for (int over = 0; over < 2; over++) {
      char *ir = fadd_combine(over ? c[i].over : c[i].n);
      bounded(rjt_fmt("combine of %d on %.40s", over ? c[i].over : c[i].n, c[i].kind),
              custom(c[i].kind, ir), NULL, over ? 2 : 0);
      free(ir);
    }
  /* caller modules at the bound: straight-line code, i64 and i128 divisions, branches */
  static const struct {
    const char *ty, *op;
    int n;
  } m[] = {{"float", "fadd", 39980},
           {"i64", "sdiv", 1240},
           {"i128", "udiv", 155},
           {"i32", "mul", 39980}};
  for (int i = 0; i < 4; i++) {
    char *ir = chain(m[i].ty, m[i].op, m[i].n);
    bounded(rjt_fmt("%d x %s %s", m[i].n, m[i].ty, m[i].op), NULL, ir, 0);
    free(ir);
  }
  size_t cap = 1 << 20;
  char *ir = malloc(cap);
  int w = snprintf(ir, cap,
                   HEAD "define void @k(ptr addrspace(1) %%p, i32 %%x) {\nb0:\n"
                        " %%v0 = load i32, ptr addrspace(1) %%p\n br label %%b1\n");
  for (int i = 1; i <= 1060; i++) { /* 2 blocks and 5 instructions a step */
    if (i == 1)
      w += snprintf(ir + w, cap - (size_t)w, "b1:\n %%v1 = phi i32 [ %%v0, %%b0 ]\n");
    else
      w += snprintf(ir + w, cap - (size_t)w,
                    "b%d:\n %%v%d = phi i32 [ %%v%d, %%b%d ], [ %%w%d, %%t%d ]\n", i, i, i - 1,
                    i - 1, i - 1, i - 1);
    if (i == 1060) break;
    w += snprintf(ir + w, cap - (size_t)w,
                  " %%c%d = icmp ult i32 %%v%d, %d\n br i1 %%c%d, label %%t%d, label %%b%d\n"
                  "t%d:\n %%w%d = add i32 %%v%d, %%x\n br label %%b%d\n",
                  i, i, i, i, i, i + 1, i, i, i, i + 1);
  }
  snprintf(ir + w, cap - (size_t)w, " store i32 %%v1060, ptr addrspace(1) %%p\n ret void\n}\n");
  bounded("branches", NULL, ir, 0);
  free(ir);
}
END_TEST

int main(void) {
  Suite *s = suite_create("screen");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, recursion_and_depth);
  tcase_add_test(tc, memory);
  tcase_add_test(tc, types_and_spaces);
  tcase_add_test(tc, size);
  tcase_add_test(tc, combine_bounds);
  tcase_add_test(tc, names);
  tcase_add_test(tc, largest_accepted);
  suite_add_tcase(s, tc);
  return rjt_main(s);
}
