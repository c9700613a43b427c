#!/usr/bin/env bash
# Tensor-reduction profiling on the GPU machine, from the binaries carried in $CARRY (scripts/carry.sh):
# Nsight Compute on one launch of each case's redjit kernel (after 5 warm-up launches of
# `redjit bench`), the same sections on torch's copy and CuPy's (CUB) sum of 1-D 2^24 f32, then
# bench/flush_probe.py (how much of do_bench's time is its flush's dirty write-back).
# Writes $OUT/ncu.txt, $OUT/probe.md (default OUT=/tmp/rjout).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${CARRY:-carry}
out=${OUT:-/tmp/rjout}; mkdir -p "$out"
cases=${CASES:-bench/cases-probe.txt}
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
sec="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats"
met="--metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,gpu__time_duration.sum,sm__cycles_active.avg,smsp__cycles_active.avg"
: >"$out/ncu.txt"
grep -v '^#' "$cases" | while read -r name dt op axes shape; do
  [ -n "$name" ] || continue
  req="{\"kind\":\"tensor\",\"op\":\"$op\",\"dtype\":\"$dt\",\"shape\":[$shape],\"axes\":[$axes]}"
  echo "=== $name $req" | tee -a "$out/ncu.txt"
  "$ncu" --launch-skip 5 --launch-count 1 -k redjit_tensor $sec $met "$dir/redjit" bench "$req" \
    >>"$out/ncu.txt" 2>&1
done
cat >/tmp/peer24.py <<'PY'
import torch, cupy
x = torch.rand(1 << 24, device="cuda"); y = torch.empty_like(x); c = cupy.asarray(x)
for _ in range(3):
    y.copy_(x); cupy.sum(c)
torch.cuda.synchronize()
PY
echo "=== peers 1d-2^24 (copy_, then cupy.sum's kernels)" | tee -a "$out/ncu.txt"
"$ncu" --launch-skip 4 --launch-count 3 $sec $met python3 /tmp/peer24.py >>"$out/ncu.txt" 2>&1
grep -E "^===|redjit_tensor|Kernel|Duration|DRAM Throughput|dram__bytes|Memory Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Waves Per SM|gpu__time|L2 Hit|Warp Cycles Per Issued|Stall" "$out/ncu.txt" | head -400
echo "== flush probe"
PYTHONUNBUFFERED=1 python3 bench/flush_probe.py "$PWD/$dir/libredjit.so.0.2" "$cases" | tee "$out/probe.md"
