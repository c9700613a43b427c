#!/usr/bin/env bash
# Lists the C functions longer than a screen: for every .c under ir/ passes/ jit/ runtime/ embed/
# tools/, each function definition of more than N lines (default 100), longest first, as
#   LENGTH  FILE:LINE  NAME
# LENGTH counts from the line holding the function's name to its closing brace, both included.
#   scripts/function-lengths.sh [N]
# Functions come from Universal Ctags (`ctags --fields=+ne`, Debian's universal-ctags); without it,
# from a python3 scan of top-level brace blocks that follow a `name(` line.  A report, not a test:
# it always exits 0.  The rule it serves (STYLE.md: functions a screen long) allows a kernel
# emitter already split into named steps to run to ~120 lines when its body reads as a list of
# steps.
set -euo pipefail
cd "$(dirname "$0")/.."
max=${1:-100}
files=$(git ls-files -- 'ir/*.c' 'passes/*.c' 'jit/*.c' 'runtime/*.c' 'embed/*.c' 'tools/*.c')

if ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
  # shellcheck disable=SC2086
  ctags --languages=C --kinds-C=f --fields=+ne -x --_xformat='%N %F %n %e' $files |
    awk -v max="$max" '$4 != "" { n = $4 - $3 + 1; if (n > max) printf "%5d  %s:%d  %s\n", n, $2, $3, $1 }'
else
  # shellcheck disable=SC2086
  python3 - "$max" $files <<'EOF'
import re, sys
max_len, rows = int(sys.argv[1]), []
for path in sys.argv[2:]:
    text = open(path, encoding="utf-8").read()
    # blank out comments, strings and character literals, keeping the line breaks
    text = re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text, flags=re.S)
    lines, depth, name, start = text.split("\n"), 0, None, 0
    for no, line in enumerate(lines, 1):
        if depth == 0:
            m = re.match(r'^[A-Za-z_][\w \t\*]*?\b(\w+)\s*\(', line)
            if m and not line.rstrip().endswith(";"):
                name, start = m.group(1), no
        for ch in line:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and name and no - start + 1 > max_len:
                    rows.append((no - start + 1, path, start, name))
        if depth == 0 and line.rstrip().endswith(("}", ";")):
            name = None
for n, path, start, name in rows:
    print("%5d  %s:%d  %s" % (n, path, start, name))
EOF
fi | sort -k1,1nr -k2
