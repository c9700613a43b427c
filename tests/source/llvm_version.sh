#!/usr/bin/env bash
# CMake refuses an llvm-config (given as -DLLVM_CONFIG or found through -DLLVM_DIR) that is not
# LLVM 22, with a message naming it and its version, before anything is built.
#   tests/source/llvm_version.sh SOURCE_DIR        (env: CMAKE)
set -uo pipefail
src=$1 cmake=${CMAKE:-cmake}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/redjit-llvmver.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "llvm_version: FAIL: $*" >&2; exit 1; }
mkdir -p "$tmp/llvm17/bin" "$tmp/llvm17/lib/cmake/llvm"
printf '#!/bin/sh\necho 17.0.6\n' >"$tmp/llvm17/bin/llvm-config"
printf '#!/bin/sh\nexit 1\n' >"$tmp/broken-llvm-config"
chmod +x "$tmp/llvm17/bin/llvm-config" "$tmp/broken-llvm-config"
configure() { # configure(NAME, ARGS...): must fail; its output in $tmp/NAME.log
  local name=$1
  shift
  if "$cmake" -S "$src" -B "$tmp/$name" -DREDJIT_BUILD_TESTS=OFF "$@" >"$tmp/$name.log" 2>&1; then
    fail "$name: configured with $*"
  fi
  echo "== $name"
  grep -A3 "CMake Error" "$tmp/$name.log"
}
want() { grep -q "$2" <(tr -s ' \n' ' ' <"$tmp/$1.log") || { cat "$tmp/$1.log"; fail "$1: no '$2'"; }; }
configure config17 -DLLVM_CONFIG="$tmp/llvm17/bin/llvm-config"
want config17 "redjit needs LLVM 22, but LLVM_CONFIG=$tmp/llvm17/bin/llvm-config is LLVM 17.0.6"
configure dir17 -DLLVM_DIR="$tmp/llvm17/lib/cmake/llvm"
want dir17 "is LLVM 17.0.6"
configure broken -DLLVM_CONFIG="$tmp/broken-llvm-config"
want broken "is LLVM none: .*--version. failed"
echo "llvm_version: LLVM 17 and a failing llvm-config refused"
