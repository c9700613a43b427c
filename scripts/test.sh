#!/usr/bin/env bash
# Builds and runs every test suite (ctest).  GPU suites skip, saying so, when no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build && ctest --output-on-failure -j"$(nproc)"
