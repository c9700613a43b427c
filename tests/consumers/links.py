#!/usr/bin/env python3
"""Every relative link of the Markdown files under DIR resolves: [text](path) and
[text](path#anchor), path relative to the file.  Prints each one that does not; exit 1 if any.
   python3 tests/consumers/links.py DIR"""
import os
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")


def broken(root):
    for dirpath, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            path = os.path.join(dirpath, name)
            text = open(path, encoding="utf-8").read()
            text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
            for target in LINK.findall(text):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                file = target.split("#")[0]
                if not os.path.exists(os.path.join(dirpath, file)):
                    yield f"{os.path.relpath(path, root)}: {target}"


def main():
    root = sys.argv[1]
    bad = list(broken(root))
    for b in bad:
        print(f"links: broken: {b}")
    count = sum(len(LINK.findall(open(os.path.join(d, f), encoding="utf-8").read()))
                for d, _, fs in os.walk(root) for f in fs if f.endswith(".md"))
    print(f"links: {count} links in {root}, {len(bad)} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
