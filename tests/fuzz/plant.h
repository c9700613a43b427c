/* A finding planted on purpose, to prove that scripts/fuzz.sh fails on each kind of finding
 * (tests/fuzz/fuzz_script.sh): FUZZ_PLANT=crash (abort), leak (an unreachable allocation) or
 * timeout (an endless loop) on every input.  Unset, nothing happens. */
#ifndef REDJIT_FUZZ_PLANT_H
#define REDJIT_FUZZ_PLANT_H
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile fuzz_plant_sink;

static void fuzz_plant(void) {
  const char *p = getenv("FUZZ_PLANT");
  if (!p) return;
  if (strcmp(p, "crash") == 0) abort();
  if (strcmp(p, "leak") == 0) {
    fuzz_plant_sink = malloc(64);
    fuzz_plant_sink = NULL; /* unreachable now: LeakSanitizer's */
  }
  if (strcmp(p, "timeout") == 0)
    for (;;)
      sleep(1);
}
#endif
