#!/usr/bin/env bash
# The man page and the bash completion (docs/CLI.md, "Man page and completion").
#   tests/cli/man_completion.sh REDJIT REDJIT_1 COMPLETION
# redjit.1 renders without warnings and holds every line of `redjit --help` and of each
# `redjit help COMMAND`; the completion offers the commands, a command's options (no other's),
# an option's choices, and files for -o / --ir / the REQUEST.
set -uo pipefail
redjit=$(realpath "$1") page=$2 completion=$(realpath "$3")
fail() { echo "man_completion: FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/redjit-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

[ -s "$page" ] || fail "$page is missing"
if command -v man >/dev/null; then
  warn=$(MANWIDTH=200 man --warnings -l "$page" 2>&1 >"$tmp/man.txt") || fail "man -l: $warn"
  [ -z "$warn" ] || fail "redjit.1 renders with warnings: $warn"
  norm() { sed -e 's/^ *//' -e 's/ *$//' -e 's/  */ /g' -e 's/\x{2010}/-/g' | grep -v '^$'; }
  norm <"$tmp/man.txt" >"$tmp/man.norm"
  lines=0
  cmds=$("$redjit" --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')
  [ "$(echo $cmds)" = "ptx explain run bench plan variants help version" ] || fail "commands: $cmds"
  for args in --help $(printf 'help:%s ' $cmds); do
    "$redjit" ${args/:/ } | norm >"$tmp/help.txt"
    while IFS= read -r line; do
      grep -qxF -- "$line" "$tmp/man.norm" || fail "redjit.1 lacks the line of 'redjit ${args/:/ }': $line"
      lines=$((lines + 1))
    done <"$tmp/help.txt"
  done
  echo "man_completion: redjit.1 holds the $lines lines of the help"
else
  echo "man_completion: no man here: the page is not rendered"
fi

dir=$(dirname "$redjit")
complete_() { # the completions of the words "$@" (the last: the word being completed)
  (cd "$tmp/files" && PATH=$dir:$PATH bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
    _redjit; echo "${COMPREPLY[*]}"' _ "$completion" "$redjit" "$@")
}
expect() { # expect WANT WORDS...
  local want=$1
  shift
  local got
  got=$(complete_ "$@")
  [ "$got" = "$want" ] || fail "completing '$*': got '$got', want '$want'"
}
mkdir "$tmp/files" && touch "$tmp/files/req.json" "$tmp/files/module.ll"
expect "ptx plan" p
expect "ptx explain run bench plan variants help version --help --version -h -V" ""
expect "-o --output -h --help" variants -
expect "--emit --emulate-packed --entry" ptx x --e
expect "--seed" run x --se
expect "" ptx x --se # --seed is run's
expect "ptx llvm llvm-opt" ptx x --emit ""
expect "llvm llvm-opt" ptx x -e ll
expect "split split-equal" plan x --path spl
expect "auto" explain x -t ""
expect "" run x --seed ""
expect "req.json" ptx r
expect "module.ll" ptx --ir m
expect "req.json" run x -o r
expect "run" help r
echo "man_completion: the completion offers commands, options, choices and files"
