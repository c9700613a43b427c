#!/usr/bin/env bash
# The public headers are written for users: no history words (issue numbers, sessions,
# "Appended ..."), and each compiles on its own as C17 with the project's warnings.
#   tests/api/header_words.sh SOURCE_DIR C_COMPILER
set -uo pipefail
src=$1 cc=$2
fail=0
if grep -nE 'issue [0-9]|session|Appended' "$src"/include/*.h; then
  echo "header_words: history words in include/*.h (say it as a fact for users)" >&2
  fail=1
fi
for h in "$src"/include/*.h; do
  if ! echo "#include \"$(basename "$h")\"" |
    "$cc" -std=c17 -Wall -Wextra -Werror -fsyntax-only -I"$src/include" -x c -; then
    echo "header_words: $(basename "$h") is not self-contained" >&2
    fail=1
  fi
done
exit $fail
