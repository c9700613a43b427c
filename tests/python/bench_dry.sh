#!/usr/bin/env bash
# The Python peer benchmarks (bench/*_peers.py) without a GPU: --dry compiles every redjit request
# a run would time and prints its plan, so a broken script or a request the library refuses is
# caught here rather than on the GPU machine.  Needs REDJIT_LIBRARY (ctest sets it).
set -euo pipefail
cd "$(dirname "$0")/../.."
for b in fused_peers segmented_peers state_ops_peers; do
  out=$(/usr/bin/python3 "bench/$b.py" --dry) || { echo "bench/$b.py --dry failed"; exit 1; }
  grep -q "every request compiled" <<<"$out" || { echo "bench/$b.py --dry: $out"; exit 1; }
  echo "bench/$b.py --dry: $(grep -c '^|' <<<"$out") table lines"
done
