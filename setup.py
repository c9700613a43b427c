"""Builds the Python package with the C library inside it (pyproject.toml has the metadata).

build_py copies tools/python/redjit, then builds the library with CMake (build-python/cmake, a
Release build without tests; or the CMake build tree named by $REDJIT_CMAKE_BUILD_DIR, built
again there), installs it into a staging prefix (stripped), and copies into the package folder:
libredjit.so.0.2, libredjit-llvm.so.VERSION, redjit-irc and the redjit CLI, each with the run path
$ORIGIN, and every shared library they need beyond the C runtime, zlib and zstd (libcjson.so.1),
so that the package runs where those are not installed.  The wheel is py3-none-linux_<machine>:
the library is C behind ctypes, usable from any Python 3."""
import glob
import os
import platform
import re
import shutil
import subprocess
import tempfile

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
# Libraries every Linux x86-64 system has (glibc's, libgcc's, zlib and zstd): not bundled.
_SYSTEM = re.compile(r"^(ld-linux.*|linux-vdso.*|libc|libm|libdl|libpthread|librt|libgcc_s|"
                     r"libstdc\+\+|libz|libzstd)\.so(\.\d+)*$")


def _version():
    text = open(os.path.join(ROOT, "include", "redjit.h")).read()
    parts = [re.search(rf"^#define RJ_VERSION_{p} +(\d+) *$", text, re.M) for p in
             ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise SystemExit("setup.py: include/redjit.h lacks its RJ_VERSION_* lines")
    return ".".join(m.group(1) for m in parts)


def _run(cmd, **kw):
    print("setup.py: " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def _cmake_build():
    """The CMake build tree, configured (when new) and built."""
    tree = os.environ.get("REDJIT_CMAKE_BUILD_DIR")
    cmake = os.environ.get("CMAKE", "cmake")
    if not tree:
        tree = os.path.join(ROOT, "build-python", "cmake")
        if not os.path.exists(os.path.join(tree, "CMakeCache.txt")):
            _run([cmake, "-S", ROOT, "-B", tree, "-DCMAKE_BUILD_TYPE=Release",
                  "-DREDJIT_BUILD_TESTS=OFF", "-DREDJIT_WERROR=OFF"])
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
    _run([cmake, "--build", tree, "-j", jobs])  # all: cmake --install installs every target
    return tree, cmake


def _needed(path):
    """{soname: resolved path} of what `ldd path` resolves outside the system set."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if m and not _SYSTEM.match(m.group(1)) and not m.group(1).startswith("libredjit"):
            if not os.path.exists(m.group(2)):
                raise SystemExit(f"setup.py: {path} needs {m.group(1)}, not found")
            found[m.group(1)] = m.group(2)
    return found


def _set_rpath(cmake, files):
    """Run path $ORIGIN on each file (CMake's own ELF editor: no patchelf needed)."""
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, "rpath.cmake")
        with open(script, "w") as f:
            for p in files:
                f.write(f'file(RPATH_SET FILE "{p}" NEW_RPATH "$ORIGIN")\n')
        _run([cmake, "-P", script])


def bundle(pkg):
    """Puts the built library, compiler library, redjit-irc and CLI into package folder pkg."""
    tree, cmake = _cmake_build()
    with tempfile.TemporaryDirectory() as stage:
        _run([cmake, "--install", tree, "--prefix", stage, "--strip"],
             stdout=subprocess.DEVNULL)

        def one(pattern):
            hits = sorted(glob.glob(os.path.join(stage, pattern), recursive=True))
            if not hits:
                raise SystemExit(f"setup.py: the install of {tree} has no {pattern}")
            return hits[0]

        lib = one("**/libredjit.so.0.2")
        files = {"libredjit.so.0.2": lib,
                 os.path.basename(one("**/libredjit-llvm.so.*")): one("**/libredjit-llvm.so.*"),
                 "redjit-irc": one("**/redjit-irc"), "redjit": one("bin/redjit")}
        copied = []
        for name, src in files.items():
            dst = os.path.join(pkg, name)
            if os.path.lexists(dst):
                os.remove(dst)
            shutil.copy2(os.path.realpath(src), dst)
            copied.append(dst)
        extra = {}
        for p in copied:
            extra.update(_needed(p))
        for name, src in extra.items():
            dst = os.path.join(pkg, name)
            shutil.copy2(os.path.realpath(src), dst)
            os.chmod(dst, 0o755)
        _set_rpath(cmake, [p for p in copied if "redjit-llvm" not in p])  # it has none
    with open(os.path.join(pkg, "_version.py"), "w") as f:
        f.write(f'VERSION = "{_version()}"  # written by setup.py\n')


class BuildPy(build_py):
    def run(self):
        super().run()
        if not self.dry_run:
            bundle(os.path.join(self.build_lib, "redjit"))


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # platlib, and a platform tag: the package carries binaries
        return True


cmdclass = {"build_py": BuildPy}
try:
    from wheel.bdist_wheel import bdist_wheel

    class BdistWheel(bdist_wheel):
        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):  # no CPython ABI: ctypes over a C library
            return "py3", "none", "linux_" + platform.machine()

    cmdclass["bdist_wheel"] = BdistWheel
except ImportError:  # no wheel package: pip install --no-build-isolation needs it (python3-wheel)
    pass

setup(version=_version(), cmdclass=cmdclass, distclass=BinaryDistribution,
      options={"build": {"build_base": "build-python"}})
