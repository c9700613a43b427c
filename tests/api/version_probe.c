/* Prints the header's version macros and the library's rj_version(), for tests/api/version.sh. */
#include "redjit.h"
#include <stdio.h>

int main(void) {
  printf("header %d.%d.%d\nlibrary %s\n", RJ_VERSION_MAJOR, RJ_VERSION_MINOR, RJ_VERSION_PATCH,
         rj_version());
  return 0;
}
