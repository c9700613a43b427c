#!/usr/bin/env bash
# The Python package from a user's side, offline (only Debian's python3-venv, python3-pip,
# python3-setuptools and python3-wheel; no package index):
#   1. a copy of the source tree (its tracked files: a fresh clone), `pip install
#      --no-build-isolation .` into a fresh venv (--system-site-packages: Debian's setuptools and
#      wheel), which builds the library with CMake;
#   2. `pip wheel --no-build-isolation .` there, then the wheel installed with `pip install
#      --no-index --no-deps` into another fresh venv (no system site-packages), after the source
#      copy is deleted;
#   3. `cmake --install` of BUILD_DIR into a prefix, its package found through PYTHONPATH;
# each importing redjit with no REDJIT_LIBRARY / PYTHONPATH (3: PYTHONPATH only), compiling a
# request, compiling IR in redjit-irc, and running the CLI (`python -m redjit`, the `redjit`
# script).  The wheel's libraries find each other and libcjson.so.1 in the package folder.
#   tests/python/install.sh SOURCE_DIR BUILD_DIR VERSION     (env: PYTHON, default /usr/bin/python3;
#                                                            KEEP=1 keeps the temp dir)
set -euo pipefail
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd) version=$3
py=${PYTHON:-/usr/bin/python3}
cmake=${CMAKE:-cmake}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/redjit-pyinstall.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then echo "python_install: keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
fail() { echo "python_install: FAIL: $*" >&2; exit 1; }
t0=$SECONDS
step() { echo "== [$((SECONDS - t0))s] $*"; }
for m in venv pip setuptools wheel; do
  "$py" -c "import $m" 2>/dev/null || fail "$py lacks $m (apt-get install python3-$m; scripts/setup.sh)"
done

# What a user's program does: import, versions, a compile, IR through redjit-irc, in a clean env.
check='
import os, sys, redjit
want, where = sys.argv[1], sys.argv[2]
assert redjit.__version__ == redjit.version() == want, (redjit.__version__, want)
lib = redjit.library_path()
assert lib.startswith(where), (lib, where)
k = redjit.compile({"kind": "tensor", "op": "sum", "dtype": "f32", "shape": [4096, 64],
                    "axes": [1]}, target="sm_90")
assert k.variant == "tensor_rows" and ".entry" in k.ptx, k.variant
ir = ("target triple = \"nvptx64-nvidia-cuda\"\n"
      "define void @k(ptr addrspace(1) %p) {\n  store float 1.0, ptr addrspace(1) %p\n  ret void\n}\n")
assert ".entry k" in redjit.compile_ir(ir, "k", target="sm_90").ptx  # in redjit-irc
from redjit import _array_api
c = _array_api._truth_op("all", "f16")  # a custom combine: lowered in redjit-irc too
k = redjit.compile(redjit.tensor_request((64, 64), None, (1,), "f16", c), target="sm_90")
assert ".entry" in k.ptx
print("ok", lib)
'
clean_env=(env -u REDJIT_LIBRARY -u PYTHONPATH -u REDJIT_IRC -u LD_LIBRARY_PATH
           REDJIT_CACHE_DISABLE=1 HOME="$tmp/home")
mkdir -p "$tmp/home"

step "a fresh copy of the source tree (tracked files)"
mkdir "$tmp/src"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$src" ls-files -z --cached --others --exclude-standard | "$py" -c '
import os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
for f in sys.stdin.buffer.read().decode().split("\0"):
    if f and os.path.isfile(os.path.join(src, f)):
        os.makedirs(os.path.dirname(os.path.join(dst, f)), exist_ok=True)
        shutil.copy2(os.path.join(src, f), os.path.join(dst, f))' "$src" "$tmp/src"
else
  cp -a "$src/." "$tmp/src/"
  rm -rf "$tmp/src/build" "$tmp/src/build-python"
fi
[ -f "$tmp/src/pyproject.toml" ] || fail "no pyproject.toml in the copy"

step "venv A (--system-site-packages): pip install --no-build-isolation ."
"$py" -m venv --system-site-packages "$tmp/a"
(cd "$tmp/src" && "${clean_env[@]}" "$tmp/a/bin/pip" install -q --no-build-isolation --no-index \
   --no-deps . >"$tmp/pip-install.log" 2>&1) || { tail -40 "$tmp/pip-install.log"; fail "pip install ."; }
site_a=$("$tmp/a/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
(cd "$tmp" && "${clean_env[@]}" "$tmp/a/bin/python" -c "$check" "$version" "$site_a/redjit/") ||
  fail "venv A: the installed package"
out=$(cd "$tmp" && "${clean_env[@]}" "$tmp/a/bin/python" -m redjit --version)
[ "$out" = "redjit $version" ] || fail "venv A: python -m redjit --version printed '$out'"
out=$("${clean_env[@]}" "$tmp/a/bin/redjit" explain --target sm_90 "$tmp/src/examples/tensor_rows.json")
[[ $out == *"tensor_rows prio=30 chosen"* ]] || fail "venv A: redjit explain: $out"

step "pip wheel --no-build-isolation . (py3-none-linux), the source copy then deleted"
(cd "$tmp/src" && "${clean_env[@]}" "$tmp/a/bin/pip" wheel -q --no-build-isolation --no-index \
   --no-deps -w "$tmp/wheels" . >"$tmp/pip-wheel.log" 2>&1) || { tail -40 "$tmp/pip-wheel.log"; fail "pip wheel ."; }
whl=$(ls "$tmp"/wheels/redjit-"$version"-py3-none-linux_*.whl) || fail "no py3-none-linux wheel: $(ls "$tmp/wheels")"
listing=$("$py" -m zipfile -l "$whl")
for f in libredjit.so.0.2 libredjit-llvm.so."$version" redjit-irc redjit libcjson.so.1 py.typed \
         __main__.py _array_api.py _version.py; do
  grep -q "redjit/$f " <<<"$listing" || fail "the wheel lacks redjit/$f"
done
rm -rf "$tmp/src" "$tmp/a"

step "venv B (no system site-packages): pip install --no-index --no-deps the wheel"
"$py" -m venv "$tmp/b"
"${clean_env[@]}" "$tmp/b/bin/pip" install -q --no-index --no-deps "$whl" >"$tmp/pip-b.log" 2>&1 ||
  { cat "$tmp/pip-b.log"; fail "installing the wheel"; }
site_b=$("$tmp/b/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
(cd "$tmp" && "${clean_env[@]}" "$tmp/b/bin/python" -c "$check" "$version" "$site_b/redjit/") ||
  fail "venv B: the wheel's package"
for f in libredjit.so.0.2 redjit-irc redjit; do  # libcjson and libredjit from the package folder
  deps=$(ldd "$site_b/redjit/$f")
  grep -E "lib(cjson|redjit)[^ ]* => " <<<"$deps" | grep -v "=> $site_b/redjit/" &&
    fail "$f resolves a library outside the package: $deps"
  grep -q "not found" <<<"$deps" && fail "$f: $deps"
done
out=$(cd "$tmp" && "${clean_env[@]}" "$tmp/b/bin/python" -m redjit --version)
[ "$out" = "redjit $version" ] || fail "venv B: python -m redjit --version printed '$out'"

step "cmake --install: the package in <prefix>/lib/python3/dist-packages"
"$cmake" --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
pyd=$tmp/prefix/lib/python3/dist-packages
[ -f "$pyd/redjit/__init__.py" ] && [ -f "$pyd/redjit/py.typed" ] && [ -f "$pyd/redjit/_installed.py" ] ||
  fail "cmake --install put no package into $pyd"
(cd "$tmp" && env -u REDJIT_LIBRARY REDJIT_CACHE_DISABLE=1 HOME="$tmp/home" PYTHONPATH="$pyd" "$py" -c "$check" \
   "$version" "$tmp/prefix/") || fail "the prefix's package"
out=$(cd "$tmp" && env -u REDJIT_LIBRARY PYTHONPATH="$pyd" "$py" -m redjit --version)
[ "$out" = "redjit $version" ] || fail "the prefix's python -m redjit --version printed '$out'"
step "passed"
