/* A library that exports the compiler library's entry but is another version's (9.9.9): what
 * libredjit.so must refuse with a status (tests/isolate/test_compiler_lib.c).  The table's first
 * fields, in jit/compiler.h's order: ABI, major, minor, patch. */
__attribute__((visibility("default"))) const void *rj_compiler_v1(void);
const void *rj_compiler_v1(void) {
  static const int table[32] = {1, 9, 9, 9};
  return table;
}
