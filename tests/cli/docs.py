#!/usr/bin/env python3
"""The documents a new user follows, run: every code block of README.md, docs/GETTING_STARTED.md,
docs/CLI.md, docs/C_API.md and docs/PYTHON.md, and the build line in the header comment of each
examples/*.c.

   python3 tests/cli/docs.py SOURCE_DIR BUILD_DIR [FILE...]

What a block is, by its fence's language:
- sh / console / bash / shell / none, holding lines "$ COMMAND": a transcript.  Each COMMAND (a
  line ending in a backslash goes on) runs in bash; its standard output and error must be the
  lines shown under it, up to the next "$ " line, exactly; a line "…" alone stands for any
  number of lines.
- sh without "$ " lines: a script, run in bash -e; it must succeed.
- c holding a main function: a complete program, compiled against the build (-Werror) and run;
  it must exit 0.  One that starts with a comment "/* NAME.c: ..." is also written to NAME.c in
  the scratch folder, for the commands after it.
- python: run by python3 with the build's library; it must exit 0.
A block preceded by "<!-- no-test: REASON -->" (a GPU needed, a fragment, an illustration, a
build of its own) is not run and is counted as skipped, by reason.  Any other block (a C
fragment, JSON, CMake) is an error until it is marked.

Commands run in a scratch folder that holds links to every top-level entry of the source tree,
with build/ linking to BUILD_DIR, so ./build/redjit and examples/... are what the documents say
and nothing is written into the source tree.  No GPU is visible to them (CUDA_VISIBLE_DEVICES=""),
so target auto is sm_90 on any machine, as the documents show.  Prints how many blocks ran and
were skipped.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

DOCS = ["README.md", "docs/GETTING_STARTED.md", "docs/CLI.md", "docs/C_API.md", "docs/PYTHON.md"]
SHELLS = {"sh", "console", "bash", "shell", ""}
MARK = re.compile(r"^\s*<!--\s*no-test(?::\s*(.*?))?\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")
TIMEOUT = 120


class Block:
    def __init__(self, path, line, lang, lines, skip):
        self.path, self.line, self.lang, self.lines, self.skip = path, line, lang, lines, skip

    def where(self):
        return f"{self.path}:{self.line}"


def blocks(src, rel):
    """The fenced blocks of one document, with the no-test mark before each (or None)."""
    text = open(os.path.join(src, rel), encoding="utf-8").read().split("\n")
    out, i, last = [], 0, None  # last: the last non-blank line before a fence
    while i < len(text):
        m = FENCE.match(text[i])
        if not m:
            if text[i].strip():
                last = text[i]
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2), i + 1
        body = []
        i += 1
        while i < len(text) and text[i].strip() != "```":
            body.append(text[i][len(indent):] if text[i].startswith(indent) else text[i])
            i += 1
        mark = MARK.match(last or "")
        skip = (mark.group(1) or "no reason given") if mark else None
        out.append(Block(rel, start, lang, body, skip))
        i += 1
        last = None
    return out


def scratch(src, build):
    """A folder of links to the source tree's entries, build/ to the build."""
    d = tempfile.mkdtemp(prefix="redjit-docs.")
    for name in os.listdir(src):
        if name not in ("build", ".git"):
            os.symlink(os.path.join(src, name), os.path.join(d, name))
    os.symlink(build, os.path.join(d, "build"))
    return d


def run(cmd, cwd, env, stdin=subprocess.DEVNULL):
    try:
        p = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, stdin=stdin,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        return 124, (e.output or b"").decode("utf-8", "replace") + f"\n(ran past {TIMEOUT} s)"
    return p.returncode, p.stdout.decode("utf-8", "replace")


def transcript(b, cwd, env):
    """The "$ COMMAND" lines with the output shown under each; a list of failures."""
    steps, i = [], 0
    while i < len(b.lines):
        line = b.lines[i]
        if not line.startswith("$ "):
            return [f"{b.where()}: a line before the first '$ ' command: {line!r}"]
        cmd = line[2:]
        while cmd.endswith("\\") and i + 1 < len(b.lines):
            i += 1
            cmd = cmd[:-1] + "\n" + b.lines[i]
        i += 1
        want = []
        while i < len(b.lines) and not b.lines[i].startswith("$ "):
            want.append(b.lines[i])
            i += 1
        steps.append((cmd, want))
    bad = []
    for cmd, want in steps:
        rc, out = run(cmd, cwd, env)
        got = out.split("\n")
        if got and got[-1] == "":
            got.pop()
        if not matches(want, got):
            diff = "\n".join(f"    - {w}" for w in want) + "\n" + "\n".join(f"    + {g}" for g in got)
            bad.append(f"{b.where()}: `{cmd}` (exit {rc}) printed other lines than shown:\n{diff}")
    return bad


def matches(want, got):
    """got is want, a line "…" in want standing for any number of lines."""
    if not want:
        return not got
    if want[0] == "…":
        return any(matches(want[1:], got[k:]) for k in range(len(got) + 1))
    return bool(got) and got[0] == want[0] and matches(want[1:], got[1:])


def script(b, cwd, env):
    rc, out = run("set -e\n" + "\n".join(b.lines), cwd, env)
    return [] if rc == 0 else [f"{b.where()}: the script failed (exit {rc}):\n{out}"]


def program(b, cwd, env, src, build, name):
    """A complete C program: compiled against the build with -Werror, then run."""
    c = os.path.join(cwd, ".docs", name + ".c")
    os.makedirs(os.path.dirname(c), exist_ok=True)
    text = "\n".join(b.lines) + "\n"
    for path in [c] + [os.path.join(cwd, m) for m in re.findall(r"^/\* (\w+\.c):", text)]:
        with open(path, "w") as f:
            f.write(text)
    exe = c[:-2]
    cc = [os.environ.get("CC", "cc"), "-std=c17", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE",
          "-I", os.path.join(src, "include"), c, "-L", build, "-lredjit", "-lm",
          "-Wl,-rpath," + build, "-o", exe]
    p = subprocess.run(cc, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
    if p.returncode:
        return [f"{b.where()}: the program does not compile:\n{p.stdout.decode()}"]
    rc, out = run(exe, cwd, env)
    return [] if rc == 0 else [f"{b.where()}: the program exited {rc}:\n{out}"]


def python(b, cwd, env):
    rc, out = run_python(b, cwd, env)
    return [] if rc == 0 else [f"{b.where()}: python exited {rc}:\n{out}"]


def run_python(b, cwd, env):
    try:
        p = subprocess.run([sys.executable, "-c", "\n".join(b.lines)], cwd=cwd, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return 124, f"(ran past {TIMEOUT} s)"
    return p.returncode, p.stdout.decode("utf-8", "replace")


def check(b, cwd, env, src, build, n):
    """Runs one block; returns (kind it ran as, failures)."""
    if b.lang in SHELLS and any(line.startswith("$ ") for line in b.lines):
        return "transcript", transcript(b, cwd, env)
    if b.lang in ("sh", "bash", "shell"):
        return "script", script(b, cwd, env)
    if b.lang == "c" and re.search(r"\bint\s+main\s*\(", "\n".join(b.lines)):
        return "C program", program(b, cwd, env, src, build, f"block{n}")
    if b.lang == "python":
        return "python", python(b, cwd, env)
    what = "a C fragment" if b.lang == "c" else f"a ```{b.lang} block"
    return "unmarked", [f"{b.where()}: {what} that is not run: mark it <!-- no-test: REASON -->"]


def build_lines(src):
    """The build lines of each examples/*.c, from its header comment: the line " *   cc ..." and
    the indented lines after it (" *   ./prog"), run as one script."""
    out = []
    for name in sorted(os.listdir(os.path.join(src, "examples"))):
        if not name.endswith(".c"):
            continue
        rel = f"examples/{name}"
        lines = open(os.path.join(src, rel), encoding="utf-8").read().split("\n")
        for k, line in enumerate(lines):
            if re.match(r"^ \*   cc ", line):
                cmds = [line[5:]]
                for more in lines[k + 1:]:
                    m = re.match(r"^ \*   (\S.*?)\s*(\*/)?$", more)
                    if not m:
                        break
                    cmds.append(m.group(1))
                out.append(Block(rel, k + 1, "sh", cmds, None))
    return out


def main():
    src, build = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    files = sys.argv[3:] or DOCS
    cwd = scratch(src, build)
    env = dict(os.environ)
    env["PATH"] = build + os.pathsep + env.get("PATH", "")
    env["REDJIT_CACHE_DIR"] = os.path.join(cwd, ".cache")
    env["CUDA_VISIBLE_DEVICES"] = ""  # the documents show what a machine without a GPU prints
    env["REDJIT_LIBRARY"] = os.path.join(build, "libredjit.so")
    env["PYTHONPATH"] = os.path.join(src, "tools", "python")
    ran, skipped, failures = collections.Counter(), collections.Counter(), []
    todo = [b for rel in files for b in blocks(src, rel)] + (build_lines(src) if not sys.argv[3:] else [])
    try:
        for n, b in enumerate(todo):
            if b.skip:
                skipped[b.skip] += 1
                continue
            kind, bad = check(b, cwd, env, src, build, n)
            if kind != "unmarked":
                ran[kind] += 1
            failures += bad
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
    for f in failures:
        print("docs: FAIL: " + f)
    print(f"docs: ran {sum(ran.values())} blocks (" +
          ", ".join(f"{v} {k}" for k, v in sorted(ran.items())) + f"), skipped {sum(skipped.values())}:")
    for reason, count in sorted(skipped.items(), key=lambda kv: -kv[1]):
        print(f"  {count} x {reason}")
    print(f"docs: {len(failures)} failing" if failures else "docs: every block that ran is true")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
