#!/usr/bin/env bash
# libredjit.so and its compiler library as files: libredjit.so depends on no LLVM and exports
# only rj_ symbols; the compiler library exports its entry alone; and a libredjit.so with no
# compiler library beside it (copied with the CLI into a folder of their own) still answers
# `redjit variants`, `explain` and `version`, while `ptx` (a miss) fails naming the library, as
# it does with another build of the compiler library beside it.
#   tests/isolate/compiler_lib.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$1 src=$2
fail=0
bad() { echo "compiler_lib: $*"; fail=1; }

lib=$(readlink -f "$build/libredjit.so")
compiler=$(ls "$build"/libredjit-llvm.so.* 2>/dev/null | head -1)
[ -f "$lib" ] && [ -f "$compiler" ] || { echo "compiler_lib: build the libraries first"; exit 1; }
ldd "$lib" | grep -qi llvm && bad "libredjit.so depends on LLVM: $(ldd "$lib" | grep -i llvm)"
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^rj_')
[ -z "$others" ] || bad "libredjit.so exports more than rj_: $(echo $others | head -c 300)"
llvm_refs=$(nm -D --undefined-only "$lib" | grep -ci llvm)
[ "$llvm_refs" = 0 ] || bad "libredjit.so refers to $llvm_refs LLVM symbols"
exports=$(nm -D --defined-only "$compiler" | awk '{print $3}')
[ "$exports" = rj_compiler_v1 ] || bad "the compiler library exports: $(echo $exports | head -c 300)"
size=$(stat -c %s "$lib")
[ "$size" -lt 8000000 ] || bad "libredjit.so is $size bytes: LLVM inside?"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$lib" "$tmp/libredjit.so.0.2"
cp "$build/redjit" "$tmp/redjit"
req="$src/examples/tensor_rows.json"
export REDJIT_CACHE_DISABLE=1
unset REDJIT_COMPILER_LIB
grep -q tensor_rows <<<"$("$tmp/redjit" variants)" || bad "variants without the compiler library"
grep -q "tensor_rows.*chosen" <<<"$("$tmp/redjit" explain "$req" --target sm_90)" ||
  bad "explain without the compiler library"
"$tmp/redjit" version >/dev/null || bad "version without the compiler library"
out=$("$tmp/redjit" ptx "$req" --target sm_90 2>&1)
rc=$?
[ $rc -ne 0 ] || bad "ptx without the compiler library succeeded"
[ $rc -lt 128 ] || bad "ptx without the compiler library ended by signal $((rc - 128))"
grep -q "compiler library: cannot load $tmp/libredjit-llvm.so" <<<"$out" ||
  bad "ptx's message does not name the missing library: $out"
# another build of it (here: its build id removed) is refused, with the reason
name=$(basename "$compiler")
objcopy --remove-section .note.gnu.build-id "$compiler" "$tmp/$name"
out2=$("$tmp/redjit" ptx "$req" --target sm_90 2>&1)
grep -q "is not this libredjit.so's compiler library: it is another build" <<<"$out2" ||
  bad "another build of the compiler library: $out2"
# and this build's, beside it, compiles
cp "$compiler" "$tmp/"
grep -q "\.entry" <<<"$("$tmp/redjit" ptx "$req" --target sm_90)" || bad "ptx with the compiler library"
# a kernel read from the disk cache makes its LLVM IR when asked, through the compiler library:
# without one, `--emit llvm` fails naming the cause while its PTX still comes from the cache
unset REDJIT_CACHE_DISABLE
export REDJIT_CACHE_DIR=$tmp/cache
want=$("$tmp/redjit" ptx "$req" --target sm_90 --emit llvm) # compiles, fills the cache
mv "$tmp/$name" "$tmp/away.so"
grep -q "\.entry" <<<"$("$tmp/redjit" ptx "$req" --target sm_90)" || bad "a disk hit without the compiler library"
out3=$("$tmp/redjit" ptx "$req" --target sm_90 --emit llvm 2>&1)
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] || bad "--emit llvm of a disk hit without the compiler library: exit $rc"
grep -q "the kernel's LLVM IR could not be made" <<<"$out3" || bad "--emit llvm without the compiler library: $out3"
mv "$tmp/away.so" "$tmp/$name"
[ "$("$tmp/redjit" ptx "$req" --target sm_90 --emit llvm)" = "$want" ] ||
  bad "--emit llvm of a disk hit differs from the compiled kernel's"
[ $fail = 0 ] && echo "compiler_lib: libredjit.so $size bytes, no LLVM; missing compiler: $out"
exit $fail
