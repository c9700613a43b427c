#!/usr/bin/env bash
# The host check of passes/state.c: state_gen's IR compiled for x86 by llc, linked with check.c.
#   tests/ops/state_host/run.sh STATE_GEN LLVM_BINDIR CC
set -euo pipefail
gen=$1 bindir=$2 cc=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$gen" "$work/states.ll"
"$bindir/llc" -O2 -filetype=obj -relocation-model=pic "$work/states.ll" -o "$work/states.o"
"$cc" -O2 -std=gnu17 -w "$here/check.c" "$work/states.o" -o "$work/check" -lm
"$work/check"
