/* libFuzzer target: any bytes as a JSON request through the parser, validation and the canonical
 * form (ir/, instrumented).  Properties: nothing crashes, hangs or leaks; every refusal names a
 * field or cause; an accepted request's canonical text parses back, validates, and prints the
 * same text again.  Built and run by scripts/fuzz.sh. */
#include "../../ir/ir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failure the fuzzer reports: abort() is what libFuzzer catches as a finding. */
static void finding(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_request: %s: %s\n", what, detail);
  abort();
}

static void round_trip(const rj_request *r) {
  ir_err e = {0};
  char *canon = NULL, *again = NULL;
  if (ir_canonical(r, &canon, &e)) finding("canonical of an accepted request failed", e.msg);
  rj_request back;
  if (ir_parse(canon, &back, &e) || ir_validate(&back, &e))
    finding("the canonical text does not parse back", e.msg);
  if (ir_canonical(&back, &again, &e) || strcmp(canon, again) != 0)
    finding("the canonical text is not a fixed point", canon);
  free(canon);
  free(again);
  if (back.kind == RJ_KIND_TENSOR) free((char *)back.u.tensor.combine.ir); /* op custom's copy */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  rj_request r;
  ir_err e = {0};
  rj_status s = ir_parse(text, &r, &e), parsed = s;
  if (!s) s = ir_validate(&r, &e);
  if (s && !e.msg[0]) finding("a refusal without a message", text);
  if (!s) round_trip(&r);
  if (!parsed && r.kind == RJ_KIND_TENSOR) free((char *)r.u.tensor.combine.ir); /* op custom's */
  free(text);
  return 0;
}
