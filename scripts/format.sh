#!/usr/bin/env bash
# Formats every C source with the repository's .clang-format (Debian's clang-format).
#   scripts/format.sh          rewrite in place
#   scripts/format.sh --check  list the files that differ, exit 1 if any
set -uo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in $files; do clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || { echo "$f"; bad=1; }; done
  exit $bad
fi
clang-format -i $files
