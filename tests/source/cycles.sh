#!/usr/bin/env bash
# No circle of files: in libredjit.so's and its compiler library's objects, file A depends on
# file B when A refers to a symbol B defines.  Those dependencies must form no cycle
# (docs/ARCHITECTURE.md: each layer calls only the layers below it, and inside a layer a file
# that dispatches is not also the helpers its callees call back), and no file calls a layer above
# its own (or, from the run / bench harness, anything of the core but its public rj_ calls).  The
# core reaches the compiler library (jit/llvm/) only through its table (jit/compiler.h: no direct
# call), and the compiler library calls nothing of the core but jit/ptx.c, which both build.
# Prints what breaks a rule and exits 1.
#   tests/source/cycles.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$1 src=$2
# libredjit.so's objects and its compiler library's (passes/ whole, lowering, codegen): one graph
objdirs="$build/CMakeFiles/redjit.dir $build/CMakeFiles/redjit-llvm.dir"
for objdir in $objdirs; do
  [ -d "$objdir" ] || { echo "cycles: no objects under $objdir (build the libraries first)"; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Objects whose source still exists (a build folder may keep objects of removed files).
for objdir in $objdirs; do
  while IFS= read -r obj; do
    rel=${obj#"$objdir"/}
    rel=${rel%.o}
    [ -f "$src/$rel" ] || continue
    nm "$obj" | awk -v f="$rel" '$2 ~ /^[TDBR]$/ {print "def", $3, f} $1 == "U" {print "use", $2, f}'
  done < <(find "$objdir" -name '*.c.o')
done > "$tmp/syms"

awk '$1 == "def" {def[$2] = $3} $1 == "use" {use[NR] = $2 " " $3}
     END {for (i in use) {split(use[i], u, " "); if ((u[1] in def) && def[u[1]] != u[2])
            print u[2], def[u[1]]}}' "$tmp/syms" | sort -u > "$tmp/edges"

# Calls against the layering (docs/ARCHITECTURE.md), seen in the symbols themselves, so a
# hand-written declaration or a header pulled in indirectly cannot hide one: FROM-regex TO-regex.
upward=$(awk '
  ($1 ~ /^jit\/[^\/]+$/ && $2 ~ /^jit\/(treduce|harness|llvm)\//) ||
  ($1 ~ /^jit\/(treduce|harness)\// && $2 ~ /^jit\/llvm\//) ||
  ($1 ~ /^jit\/llvm\// && $2 !~ /^(jit\/llvm\/|jit\/ptx\.c$|ir\/|passes\/)/) ||
  ($1 ~ /^passes\// && $2 ~ /^(jit|runtime)\//) ||
  ($1 ~ /^runtime\// && $2 ~ /^(jit|passes)\//) ||
  ($1 ~ /^ir\// && $2 !~ /^ir\//) ||
  ($1 ~ /^jit\/treduce\// && $2 ~ /^jit\/harness\//) ||
  ($1 ~ /^jit\/harness\// && $2 ~ /^(passes|runtime)\//)' "$tmp/edges")
harness_internal=$(awk '$1 == "def" {def[$2] = $3} $1 == "use" {use[NR] = $2 " " $3}
  END {for (i in use) {split(use[i], u, " "); d = def[u[1]]
         if (u[2] ~ /^jit\/harness\// && d != "" && d !~ /^(jit\/harness|ir)\// && u[1] !~ /^rj_/)
           print u[2], "->", d, "(" u[1] ")"}}' "$tmp/syms")
if [ -n "$upward$harness_internal" ]; then
  echo "cycles: calls against the layering (caller -> callee):"
  printf '%s\n' "$upward" "$harness_internal" | sed '/^$/d; s/^/  /'
  exit 1
fi

if tsort "$tmp/edges" >/dev/null 2>"$tmp/loops"; then
  echo "cycles: none among $(cut -d' ' -f3 "$tmp/syms" | sort -u | wc -l) files"
else
  echo "cycles: files that depend on each other:"
  grep -v "input contains a loop" "$tmp/loops" | sed 's/^tsort: /  /'
  exit 1
fi
