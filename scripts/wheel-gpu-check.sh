#!/usr/bin/env bash
# The wheel on the GPU machine: installs it into a fresh venv and runs the Python GPU suites
# against it, with no PYTHONPATH, REDJIT_LIBRARY or REDJIT_IRC: what a user of `pip install
# redjit-*.whl` gets.
#
# Here (the build machine), make the wheel into a git-ignored folder to carry:
#   pip wheel --no-build-isolation --no-index --no-deps -w carry-wheel .
# There (Ubuntu 24.04, Python 3.12, torch / CuPy in /opt/torch/.venv), with carry-wheel carried:
#   bash scripts/wheel-gpu-check.sh carry-wheel [PYTEST-ARGS...]
# The venv is made by that Python (PYTHON=, default /opt/torch/.venv/bin/python3, else python3)
# and sees its packages (torch, numpy, CuPy) through a .pth file; the wheel goes in with
# `pip install --no-index --no-deps`.  The suites (tests/python/test_gpu.py, test_custom.py,
# test_gpu_array_api.py, test_gpu_fused.py) run from a copy outside the source tree, so that
# nothing imports tools/python.  Exit status: the suites'.  KEEP=1 keeps the temp dir.
set -euo pipefail
wheels=$(cd "${1:?usage: wheel-gpu-check.sh WHEEL_DIR [PYTEST-ARGS...]}" && pwd)
shift
repo=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$py" ] || py=$(command -v python3)
whl=$(ls "$wheels"/redjit-*-py3-none-linux_x86_64.whl | tail -1)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/redjit-wheel.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then echo "wheel-gpu-check: keeping $tmp"
else trap 'rm -rf "$tmp"' EXIT; fi
echo "wheel-gpu-check: $whl with $py ($("$py" -V 2>&1)); $(nvidia-smi -L 2>/dev/null | head -1)"

"$py" -m venv "$tmp/venv" 2>/dev/null || "$py" -m venv --without-pip "$tmp/venv"
vpy=$tmp/venv/bin/python
vsite=$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$py" -c 'import site, sysconfig
for p in dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]] +
                       site.getsitepackages()):
    print(p)' >"$vsite/zz_outer_site.pth"  # torch, numpy, CuPy: after the venv's own packages
if "$vpy" -m pip --version >/dev/null 2>&1; then
  "$vpy" -m pip install -q --no-index --no-deps "$whl"
elif "$py" -m pip --version >/dev/null 2>&1; then
  "$py" -m pip install -q --no-index --no-deps --target "$vsite" "$whl"
else  # no pip anywhere: a wheel is a zip (the executables' modes set by hand)
  "$vpy" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$whl" "$vsite"
  chmod +x "$vsite/redjit/redjit" "$vsite/redjit/redjit-irc"
fi

mkdir -p "$tmp/t/tests"
cp -r "$repo/tests/python" "$tmp/t/tests/python"
cp -r "$repo/examples" "$tmp/t/examples"
rm -rf "$tmp/t/tests/python/__pycache__"
cd "$tmp/t"
run=(env -u PYTHONPATH -u REDJIT_LIBRARY -u REDJIT_IRC -u LD_LIBRARY_PATH "$vpy")
"${run[@]}" - "$vsite" <<'EOF'
import os, sys, redjit
site = os.path.realpath(sys.argv[1])
assert os.path.realpath(redjit.__file__).startswith(site), redjit.__file__
assert os.path.realpath(redjit.library_path()).startswith(site), redjit.library_path()
print("wheel-gpu-check: redjit", redjit.__version__, "from", os.path.dirname(redjit.__file__))
try:
    import torch
    print("wheel-gpu-check: torch", torch.__version__, "sees", torch.cuda.device_count(), "GPU(s)")
except ImportError as e:
    print("wheel-gpu-check: no torch:", e)
EOF
"${run[@]}" -m redjit --version
suites=(tests/python/test_gpu.py tests/python/test_custom.py tests/python/test_gpu_array_api.py
        tests/python/test_gpu_fused.py)
if "${run[@]}" -c 'import pytest' 2>/dev/null; then
  "${run[@]}" -m pytest -q -p no:cacheprovider -rs "${suites[@]}" "$@"
else
  rc=0
  for s in "${suites[@]}"; do "${run[@]}" "$s" "$@" || rc=1; done
  exit $rc
fi
