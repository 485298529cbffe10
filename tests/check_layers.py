#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Every #include between the modules of src/cudnnctl keeps the order docs/ARCHITECTURE.md
# declares: a module includes only modules to its left in the diagram under "## Modules", or
# one of its own column that the sentence below the diagram names ("`A` uses `B`"). Reads the
# order from the document itself, so the two cannot drift apart. Exit 1 lists each include
# that runs the wrong way, with its file and line.
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
doc = open(os.path.join(root, "docs", "ARCHITECTURE.md"), encoding="utf-8").read()
section = doc.split("## Modules", 1)[1]
diagram = section.split("```", 2)[1]
columns = [c.strip() for c in diagram.replace("\n", " ").split("<-")]
rank = {}
for i, column in enumerate(columns):
    for module in column.split(","):
        if module.strip():
            rank[module.strip()] = i
if len(rank) < 10:
    sys.exit("check_layers: could not read the module order from docs/ARCHITECTURE.md")
after = section.split("```", 2)[2].split("\n\n", 2)[1]
allowed = set()
for user, used in re.findall(r"`(\w+)` uses ((?:`\w+`(?:, | and )?)+)", after):
    for module in re.findall(r"`(\w+)`", used):
        allowed.add((user, module))

src = os.path.join(root, "src", "cudnnctl")
wrong = []
seen = set()
for directory, _, files in os.walk(src):
    for name in sorted(files):
        path = os.path.join(directory, name)
        module = os.path.relpath(path, src).split(os.sep)[0]
        if module not in rank:
            continue
        seen.add(module)
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s+"(\w+)/', line)
                if not m or m.group(1) == module or m.group(1) not in rank:
                    continue
                used = m.group(1)
                if rank[used] < rank[module] or (module, used) in allowed:
                    continue
                where = "to its right" if rank[used] > rank[module] else "of its own column"
                wrong.append("%s:%d: %s includes %s, %s" % (
                    os.path.relpath(path, root), number, module, used, where))
missing = sorted(set(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))) - set(rank))
for d in missing:
    wrong.append("src/cudnnctl/%s: a module that docs/ARCHITECTURE.md's diagram does not place" % d)
for w in wrong:
    print(w)
if wrong:
    print("check_layers: %d include(s) against the order of docs/ARCHITECTURE.md" % len(wrong))
    sys.exit(1)
print("check_layers: %d modules, every include runs to the left" % len(seen))
