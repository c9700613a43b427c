#!/usr/bin/env bash
# The main job: build, then compile the seed 000 request and print its PTX and its dispatch
# explanation; on a machine with a GPU, also run it against the CPU oracle.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
req=examples/seed000_shared.json
echo "== request ($req)"; cat "$req"
echo "== redjit explain"; ./build/redjit explain "$req"
echo "== redjit ptx --target sm_90"; ./build/redjit ptx "$req" --target sm_90
echo "== redjit run"
set +e
./build/redjit run "$req"; rc=$?
set -e
case $rc in
  0) echo "ran on the GPU: ok" ;;
  3) echo "(no usable GPU here: run skipped; the PTX above needs none)" ;;
  *) echo "run failed with status $rc"; exit $rc ;;
esac
