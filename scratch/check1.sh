#!/usr/bin/env bash
# one device call: the GPU checks of the merged new work
cd "$(dirname "$0")/.."
export REDJIT_CLI=$PWD/carry/redjit REDJIT_CACHE_DIR=/tmp/rjc
o=${OUT:-/tmp/o}; mkdir -p $o
run() { local name=$1; shift; local s=$SECONDS; timeout ${T:-300} "$@" > $o/$name.log 2>&1; local rc=$?
  echo "$name rc=$rc $((SECONDS-s))s $(grep -E '^[0-9]+%: Checks' $o/$name.log | tail -1) $(grep -E 'cases run|passed|failed' $o/$name.log | tail -1)"
  [ $rc != 0 ] && grep -E ":F:|:E:|FAIL|Error|error" $o/$name.log | head -8; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run memcache carry/test_memcache
run gpu_cache carry/test_gpu_cache
CK_RUN_CASE=custom_struct run custom_struct carry/test_gpu_tensor
CK_RUN_CASE=values run values carry/test_gpu_tensor
CK_RUN_CASE=cluster run cluster carry/test_gpu_tensor_state
CK_RUN_CASE=state_shared run state_shared carry/test_gpu_tile
CK_RUN_CASE=state_local run state_local carry/test_gpu_tile
CK_RUN_CASE=mul_bitwise run mul_bitwise carry/test_gpu_subgroup
CK_RUN_CASE=states run sg_states carry/test_gpu_subgroup
CARRY=carry run state_ops bash scripts/state-ops-gpu.sh
CARRY=carry JOBS=8 run kind_ops bash scripts/kind-ops-gpu.sh
REDJIT_LIBRARY=$PWD/carry/libredjit.so.0 PYTHONPATH=$PWD/tools/python run pytest python3 -m pytest -q -x tests/python
tail -3 $o/pytest.log
