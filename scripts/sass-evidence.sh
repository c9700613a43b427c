#!/bin/bash
# SASS evidence for the target model (docs/TARGETS.md): assembles the sm_100a PTX that redjit generated
# (docs/evidence/*.ptx, made on the build machine with `redjit ptx ... --target sm_100a`) with
# ptxas, disassembles the cubins with cuobjdump (or nvdisasm), and prints the float add / min /
# max / redux instructions, so that the packed add (FADD2-like), the 3-input FMNMX and REDUX show.
# Needs ptxas and cuobjdump or nvdisasm (the GPU machine has them; LLVM is not needed).
# Usage: bash scripts/sass-evidence.sh [PTX files...]      (default: docs/evidence/*.ptx)
set -u
cd "$(dirname "$0")/.."
CUDA=${CUDA_HOME:-/usr/local/cuda}
PATH="$CUDA/bin:$PATH"
command -v ptxas >/dev/null || { echo "sass-evidence: ptxas not found (set CUDA_HOME)"; exit 3; }
files=("$@")
[ ${#files[@]} -eq 0 ] && files=(docs/evidence/*.ptx)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "ptxas: $(ptxas --version | tail -1)"
status=0
for f in "${files[@]}"; do
  arch=$(sed -n 's/^\.target[[:space:]]*\([a-z0-9_]*\).*/\1/p' "$f" | head -1)
  name=$(basename "$f" .ptx)
  echo
  echo "== $name ($arch, $(sed -n 's/^\.version[[:space:]]*//p' "$f" | head -1))"
  echo "-- PTX:"
  grep -E 'f32x2|(max|min)[.a-zA-Z]*\.f32|redux|add\.rn' "$f" | sed 's/^[[:space:]]*/   /'
  if ! ptxas -arch="$arch" "$f" -o "$tmp/$name.cubin" 2>"$tmp/err"; then
    echo "-- ptxas FAILED:"; cat "$tmp/err"; status=1; continue
  fi
  if command -v cuobjdump >/dev/null; then
    cuobjdump -sass "$tmp/$name.cubin" >"$tmp/$name.sass" 2>&1
  elif command -v nvdisasm >/dev/null; then
    nvdisasm "$tmp/$name.cubin" >"$tmp/$name.sass" 2>&1
  else
    echo "-- no cuobjdump / nvdisasm: cubin assembled, SASS not shown"; continue
  fi
  echo "-- SASS (float add / min / max / redux):"
  grep -E 'FADD|FMNMX|FMAX|FMIN|REDUX|CREDUX|FADD2|FMUL2|FFMA2' "$tmp/$name.sass" | sed 's@/\*[0-9a-f]*\*/@@; s/^[[:space:]]*/   /'
  echo "-- counts: $(grep -oE '\b(FADD2?|FMNMX3?|REDUX|CREDUX)[.A-Z0-9]*' "$tmp/$name.sass" | sort | uniq -c | awk '{printf "%s x%s  ", $2, $1}')"
done
exit $status
