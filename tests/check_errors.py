#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# docs/ERRORS.md lists every error.code the binary can emit: each ErrorCode::<name> used in
# src/ has a row, each row is an ErrorCode, its "error.code" string (code_name) is the row's
# name and its category (category()) the row's category, with the exit code of that category.
import re
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
result_cpp = (root / "src/cudnnctl/core/result.cpp").read_text()
doc = (root / "docs/ERRORS.md").read_text()

used = set()
for p in (root / "src").rglob("*.[ch]pp"):
    used |= set(re.findall(r"ErrorCode::([a-z_]+)", p.read_text()))

rows = {}
for m in re.finditer(r"^\| `([a-z_]+)` \| (\d) \| ([a-z_]+) \|", doc, re.M):
    rows[m.group(1)] = (int(m.group(2)), m.group(3))

names = dict(re.findall(r"case ErrorCode::([a-z_]+):\n    return \"([a-z_]+)\";", result_cpp))
body = result_cpp[result_cpp.index("ErrorCode category("):result_cpp.index("const std::vector<ErrorCode>& all_error_codes")]
category = {}
pending = []
for line in body.splitlines():
    if m := re.match(r"\s*case ErrorCode::([a-z_]+):", line):
        pending.append(m.group(1))
    elif m := re.match(r"\s*return ErrorCode::([a-z_]+);", line):
        for p in pending:
            category[p] = m.group(1)
        pending = []
exits = {"environment": 1, "internal": 1, "usage": 2, "network": 3, "integrity": 4,
         "rolled_back": 5, "busy": 6, "requirement": 7, "problems": 8}

problems = []
for code in sorted(used):
    if code not in rows:
        problems.append(f"ErrorCode::{code} is used in src/ but has no row in docs/ERRORS.md")
for code, (ex, cat) in rows.items():
    if names.get(code) != code:
        problems.append(f"row {code}: code_name gives {names.get(code)!r}")
    want_cat = category.get(code, code)
    if cat != want_cat:
        problems.append(f"row {code}: category {cat}, but category() gives {want_cat}")
    if exits.get(want_cat) != ex:
        problems.append(f"row {code}: exit {ex}, but its category {want_cat} exits {exits.get(want_cat)}")
if len(rows) < 9:
    problems.append(f"only {len(rows)} rows parsed from docs/ERRORS.md")
for p in problems:
    print("check_errors: " + p, file=sys.stderr)
print(f"check_errors: {len(rows)} codes documented, {len(used)} used in src/")
sys.exit(1 if problems else 0)
