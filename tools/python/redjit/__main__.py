"""python -m redjit ARGS...: the redjit CLI (docs/CLI.md) with the same arguments.

Runs the CLI binary that came with the package (pip's package folder), else the one of a
`cmake --install` prefix (<prefix>/bin), else the source tree's build/redjit; the process is
replaced by it (its exit status is the CLI's)."""
import os
import sys

__all__ = ["cli_path", "main"]


def _is_elf(p):
    try:
        with open(p, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def cli_path():
    """The redjit CLI binary this package runs, or None."""
    pkg = os.path.dirname(os.path.abspath(__file__))
    cands = [os.path.join(pkg, "redjit")]
    try:
        from . import _installed  # written by cmake --install
        cands.append(os.path.normpath(os.path.join(pkg, _installed.BINDIR, "redjit")))
    except ImportError:
        pass
    up3 = os.path.dirname(os.path.dirname(os.path.dirname(pkg)))
    cands.append(os.path.join(up3, "build", "redjit"))
    for p in cands:
        if os.access(p, os.X_OK) and _is_elf(p):  # never a script (pip's `redjit` entry point)
            return p
    return None


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    p = cli_path()
    if p is None:
        sys.stderr.write("redjit: the CLI binary is not installed with this package (pip install "
                         "builds it; from a source tree, build it: cmake --build build)\n")
        return 127
    os.execv(p, ["redjit"] + args)


if __name__ == "__main__":
    sys.exit(main())
