#!/usr/bin/env bash
# Gathers what the GPU machine needs into carry/ (ignored by git; name it in the device tool's
# carry list): libredjit.so and its compiler library libredjit-llvm.so.VERSION (LLVM inside,
# loaded from libredjit.so's folder on a miss), the CLI, the caller-IR compiler process (redjit-irc),
# the test binaries, and the two Debian libraries they load that Ubuntu's image lacks (cJSON,
# subunit).  Everything finds its libraries through rpath $ORIGIN.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}   # the build folder to take binaries from
carry=${CARRY:-carry}   # where to gather them (git-ignored)
cmake --build "$build" -j"$(nproc)" >/dev/null
rm -rf "$carry" && mkdir -p "$carry"
cp -L "$build"/libredjit.so.0.2 "$build"/libredjit-llvm.so.* "$build"/redjit "$build"/redjit-irc "$carry"/
cp -L "$build"/tests/test_* "$build"/tests/libfake_compiler.so "$carry"/ 2>/dev/null || true
for f in "$build"/bench/*; do if [ -x "$f" ] && [ -f "$f" ]; then cp -L "$f" "$carry"/; fi; done
for lib in libcjson.so.1 libsubunit.so.0; do cp -L "/usr/lib/x86_64-linux-gnu/$lib" "$carry"/; done
strip --strip-unneeded "$carry"/libredjit.so.0.2 "$carry"/libredjit-llvm.so.* # build ids stay
du -sh "$carry"
