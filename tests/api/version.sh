#!/usr/bin/env bash
# One version everywhere: CMake's project() version (read from include/redjit.h), the header's
# RJ_VERSION_* macros, rj_version(), redjit.pc, and `redjit --version` when the CLI has it.
#   tests/api/version.sh CMAKE_VERSION VERSION_PROBE REDJIT_CLI REDJIT_PC
set -uo pipefail
want=$1 probe=$2 cli=$3 pc=$4
fail=0
check() { # name value
  if [ "$2" = "$want" ]; then echo "ok   $1: $2"; else echo "FAIL $1: '$2', CMake says $want"; fail=1; fi
}
out=$("$probe") || { echo "FAIL version_probe did not run"; exit 1; }
check "redjit.h RJ_VERSION_MAJOR.MINOR.PATCH" "$(sed -n 's/^header //p' <<<"$out")"
check "rj_version()" "$(sed -n 's/^library //p' <<<"$out")"
check "redjit.pc Version" "$(sed -n 's/^Version: *//p' "$pc")"
v=$("$cli" --version 2>&1) || { echo "FAIL redjit --version exited non-zero: $v"; fail=1; }
check "redjit --version" "$(grep -oE '[0-9]+\.[0-9]+\.[0-9]+' <<<"$v" | head -1)"
exit $fail
