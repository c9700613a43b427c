#!/usr/bin/env bash
# redjit from a user's side: installs the build to a temporary prefix and builds and runs
# consumer.c (rj_compile of a tile request; prints the PTX's first .entry line) three ways:
#   1. find_package(redjit CONFIG) + redjit::redjit      (CMake package of the install)
#   2. pkg-config --cflags --libs redjit                  (redjit.pc of the install)
#   3. add_subdirectory(<source>) + redjit::redjit        (redjit built again as a subproject)
# and checks what is installed (headers, libredjit_emit.a, the CLI's RPATH, the exports).
#   tests/consumers/run.sh SOURCE_DIR BUILD_DIR VERSION      (env: CMAKE, CC; KEEP=1 keeps the temp dir)
set -euo pipefail
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd) version=$3
cmake=${CMAKE:-cmake} cc=${CC:-cc}
here=$src/tests/consumers
tmp=$(mktemp -d "${TMPDIR:-/tmp}/redjit-consumers.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then echo "consumers: keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
jobs=$(nproc 2>/dev/null || echo 2)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
fail() { echo "consumers: FAIL: $*" >&2; exit 1; }
t0=$SECONDS
step() { echo "== [$((SECONDS - t0))s] $*"; }
want_entry() { # the consumer's output: "redjit VERSION: .visible .entry NAME("
  local out=$1 how=$2
  echo "$how: $out"
  [[ $out == "redjit $version: "*".entry "* ]] || fail "$how printed no '.entry' line for $version"
}

step "install to $tmp/prefix"
"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
p=$tmp/prefix
libdir=$(dirname "$(find "$p" -name libredjit.so -print -quit)")
[ -d "$libdir" ] || fail "no libredjit.so installed"
for f in include/redjit.h include/redjit_treduce.h include/redjit_check.h include/redjit_emit.h bin/redjit \
         share/doc/redjit/LICENSE share/doc/redjit/README.md share/doc/redjit/CHANGELOG.md \
         share/doc/redjit/docs/EMBEDDING.md share/redjit/examples/tile_redux.json; do
  [ -e "$p/$f" ] || fail "$f is not installed"
done
for f in libredjit.so.0.2 "libredjit-llvm.so.$version" libredjit_emit.a cmake/redjit/redjitConfig.cmake \
         cmake/redjit/redjitConfigVersion.cmake pkgconfig/redjit.pc; do
  [ -e "$libdir/$f" ] || fail "${libdir#"$p"/}/$f is not installed"
done
# the man page (made from the CLI's help) renders without warnings; the bash completion completes
# from the installed CLI; every relative link of the installed documentation resolves
[ -e "$p/share/man/man1/redjit.1" ] || fail "share/man/man1/redjit.1 is not installed"
if command -v man >/dev/null; then
  warn=$(MANWIDTH=100 man --warnings -l "$p/share/man/man1/redjit.1" 2>&1 >"$tmp/man.txt") ||
    fail "man -l redjit.1 failed: $warn"
  [ -z "$warn" ] || fail "redjit.1 renders with warnings: $warn"
  grep -q "usage: redjit ptx REQUEST" "$tmp/man.txt" || fail "redjit.1 lacks ptx's usage"
fi
comp=$p/share/bash-completion/completions/redjit
[ -e "$comp" ] || fail "share/bash-completion/completions/redjit is not installed"
got=$(bash -c 'source "$1"; COMP_WORDS=("$2" ptx x --e); COMP_CWORD=3; _redjit; echo "${COMPREPLY[*]}"' \
  _ "$comp" "$p/bin/redjit")
[ "$got" = "--emit --emulate-packed --entry" ] || fail "completion of 'redjit ptx x --e' gave '$got'"
python3 "$src/tests/consumers/links.py" "$p/share/doc/redjit" || fail "broken links in share/doc/redjit"
python3 "$src/tests/consumers/links.py" "$p/share/redjit/examples" || fail "broken links in share/redjit/examples"
# the embedding archive exports rj_emit* only; libredjit.so exports rj_* only
bad=$(nm -g --defined-only "$libdir/libredjit_emit.a" | awk 'NF==3 && $3 !~ /^rj_emit/')
[ -z "$bad" ] || fail "libredjit_emit.a exports more than rj_emit*: $bad"
bad=$(nm -D --defined-only "$libdir/libredjit.so" | awk '$3 !~ /^rj_/')
[ -z "$bad" ] || fail "libredjit.so exports more than rj_*: $bad"
# its compiler library (loaded from beside it on a miss) exports its entry alone, and it no LLVM
bad=$(nm -D --defined-only "$libdir/libredjit-llvm.so.$version" | awk '$3 != "rj_compiler_v1"')
[ -z "$bad" ] || fail "libredjit-llvm.so.$version exports more than rj_compiler_v1: $bad"
! nm -D "$libdir/libredjit.so" | grep -qi llvm || fail "libredjit.so refers to LLVM symbols"
# the installed CLI finds the installed library by its RPATH alone
out=$(env -u LD_LIBRARY_PATH "$p/bin/redjit" ptx "$src/examples/tile_redux.json" | grep -m1 '\.entry') ||
  fail "the installed redjit CLI does not run"
echo "installed CLI: $out"

step "1. find_package(redjit $version) + redjit::redjit"
"$cmake" -S "$here/find_package" -B "$tmp/fp" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_COMPILER="$cc" \
  -DREDJIT_WANT_VERSION="$version" >"$tmp/fp.log" 2>&1 || { cat "$tmp/fp.log"; fail "find_package"; }
"$cmake" --build "$tmp/fp" >>"$tmp/fp.log" 2>&1 || { cat "$tmp/fp.log"; fail "find_package build"; }
want_entry "$(env -u LD_LIBRARY_PATH "$tmp/fp/consumer")" "find_package"
# 0.x: the version file refuses another minor version
major=${version%%.*} minor=${version#*.}; minor=${minor%%.*}
if [ "$major" = 0 ]; then
  if "$cmake" -S "$here/find_package" -B "$tmp/fp2" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_COMPILER="$cc" \
       -DREDJIT_WANT_VERSION="0.$((minor + 1))" >"$tmp/fp2.log" 2>&1; then
    fail "find_package(redjit 0.$((minor + 1))) accepted $version"
  fi
  grep -q "considered but not accepted" "$tmp/fp2.log" || { cat "$tmp/fp2.log"; fail "find_package(redjit 0.$((minor + 1))) failed otherwise"; }
  echo "find_package(redjit 0.$((minor + 1))) refuses $version (SameMinorVersion)"
fi

step "2. pkg-config --cflags --libs redjit"
export PKG_CONFIG_PATH=$libdir/pkgconfig
[ "$(pkg-config --modversion redjit)" = "$version" ] || fail "redjit.pc's version is not $version"
# shellcheck disable=SC2046
"$cc" -std=c17 -Wall -Wextra -Werror "$here/consumer.c" $(pkg-config --cflags --libs redjit) \
  -Wl,-rpath,"$libdir" -o "$tmp/pc-consumer"
want_entry "$("$tmp/pc-consumer")" "pkg-config"
# redjit.pc is relocatable: moved, the prefix still gives the right paths
mv "$p" "$tmp/moved"
PKG_CONFIG_PATH=${libdir/"$p"/"$tmp/moved"}/pkgconfig pkg-config --cflags redjit | grep -q -- "-I$tmp/moved/" ||
  fail "redjit.pc does not follow a moved prefix"
env -u LD_LIBRARY_PATH "$tmp/moved/bin/redjit" variants >/dev/null || fail "the moved CLI does not find its library"
mv "$tmp/moved" "$p"

step "3. add_subdirectory($src) + redjit::redjit (redjit built again as a subproject)"
"$cmake" -S "$here/subdirectory" -B "$tmp/sub" -DREDJIT_SOURCE_DIR="$src" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$cc" "${launcher[@]}" >"$tmp/sub.log" 2>&1 || { cat "$tmp/sub.log"; fail "add_subdirectory configure"; }
"$cmake" --build "$tmp/sub" -j"$jobs" >>"$tmp/sub.log" 2>&1 || { tail -40 "$tmp/sub.log"; fail "add_subdirectory build"; }
[ -f "$tmp/sub/redjit/libredjit_emit.a" ] || fail "the subproject did not make libredjit_emit.a in its own binary dir"
want_entry "$(env -u LD_LIBRARY_PATH "$tmp/sub/consumer")" "add_subdirectory"

step "ok"
