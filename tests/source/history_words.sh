#!/usr/bin/env bash
# The repository speaks to its users in the present tense; its history lives in git and
# CHANGELOG.md.  This checks every tracked text file (git ls-files; without git, every file but
# build outputs) for history words: issue numbers ("issue 6", "Issue6", "issue #6"), sessions
# ("session 4", "last session", "this session") and "Appended by/in".  Each hit is printed as
# FILE:LINE:TEXT and the test fails; say the fact instead (what the code does, and why).
#   tests/source/history_words.sh SOURCE_DIR
set -uo pipefail
cd "$1" || exit 2
pattern='issue ?#?[0-9]|session ?#?[0-9]|(last|this|next|previous|earlier|later) session|appended (by|in)'
# Not checked: the changelog (history is its subject) and this script (it spells the words).
skip='^(CHANGELOG\.md|tests/source/history_words\.sh)$'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files)
else
  files=$(find . -type f -not -path './.git/*' -not -path './build*' -not -path './carry*' | sed 's|^\./||')
fi
files=$(printf '%s\n' "$files" | grep -vE "$skip")
hits=$(printf '%s\n' "$files" | tr '\n' '\0' | xargs -0 grep -snIiE "$pattern" --)
if [ -n "$hits" ]; then
  printf '%s\n' "$hits"
  echo "history_words: $(printf '%s\n' "$hits" | wc -l) history word(s) above; state the fact for users (history lives in git and CHANGELOG.md)" >&2
  exit 1
fi
exit 0
