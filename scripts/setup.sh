#!/usr/bin/env bash
# Installs what redjit builds with, from Debian 12's packages (idempotent), then configures and
# builds into build/.  Needs root (or sudo) for apt-get on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(cmake make gcc g++ pkg-config llvm-22-dev check libsubunit-dev libcjson-dev zlib1g-dev
      libzstd-dev valgrind python3-pytest python3-venv python3-pip python3-setuptools python3-wheel
      clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# cuda.h: from the CUDA toolkit (/usr/local/cuda); Debian's non-free nvidia-cuda-dev also has it.
if [ ! -f /usr/local/cuda/include/cuda.h ] && [ ! -f /usr/include/cuda.h ]; then
  echo "setup: cuda.h not found; trying Debian's nvidia-cuda-dev (non-free)" >&2
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get install -y -qq nvidia-cuda-dev >/dev/null || {
    echo "setup: install the CUDA toolkit headers (cuda.h) and retry" >&2; exit 1; }
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
