#!/bin/bash
# docs/TRY.md stays true: every ```sh block of it, in order, in one shell (set -e: the first
# command that fails fails the suite), from the top of the source tree, with the cudnnctl under
# test first on PATH (so the build block builds nothing) and mktemp's directory inside this
# suite's. Then the states the file promises: 9.1.0 active after the rollback, the adopted copy
# put back byte for byte, 8.9.7 active after the Ansible run; and `rm -rf $T` removed it all.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
SRC=$(cd "$E2E_DIR/../.." && pwd)
DOC=$SRC/docs/TRY.md

TEST "docs/TRY.md: every sh block runs, in order, in one shell"
script=$E2E_TMP/try.sh
{
  echo 'set -euo pipefail'
  python3 - "$DOC" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
blocks = re.findall(r"^```sh\n(.*?)^```$", text, re.S | re.M)
assert len(blocks) >= 6, f"{len(blocks)} sh blocks in docs/TRY.md"
for i, b in enumerate(blocks, 1):
    if b.strip() == "rm -rf $T":
        # the clean-up block last, after the checks below
        print('echo "== checks"')
        print('printf "%s\\n" "$T" >"$TRY_VARS"')
        print('cudnnctl --root "$R" --json status >"$TRY_VARS.status"')
        print('diff -r --no-dereference $T/cudnn-linux-x86_64-8.9.7.29_cuda12-archive/lib $A/usr/local/cuda/lib64')
        print('echo "adopted copy put back"')
    print(f'echo "== block {i}"')
    print(b)
PY
} >"$script"
bin=$E2E_TMP/bin
mkdir -p "$bin" "$E2E_TMP/home"
ln -s "$CUDNNCTL" "$bin/cudnnctl"
: >"$E2E_TMP/vars"
E2E_LAST_CMD="bash $script (docs/TRY.md's sh blocks)"
RC=0
(cd "$SRC" && env PATH="$bin:$PATH" HOME="$E2E_TMP/home" TMPDIR="$E2E_TMP" TRY_VARS="$E2E_TMP/vars" \
  ANSIBLE_LOCAL_TEMP="$E2E_TMP/home/.ansible/tmp" ANSIBLE_REMOTE_TEMP="$E2E_TMP/home/.ansible/tmp" \
  bash "$script" >"$OUT" 2>"$ERR" </dev/null) || RC=$?
E2E_LAST_RC=$RC
[ "$RC" -eq 0 ] || fail "docs/TRY.md's blocks failed (exit $RC)"
expect_contains "$OUT" "== block 6"
expect_contains "$OUT" "ok=" # the Ansible recap
expect_contains "$OUT" "failed=0"
mapfile -t vars <"$E2E_TMP/vars"
T=${vars[0]}
case "$T" in "$E2E_TMP"/*) ;; *) fail "mktemp made $T outside the suite's directory" ;; esac
[ ! -e "$T" ] || fail "the clean-up block left $T"
expect_contains "$OUT" "adopted copy put back"
expect_json 'd["active"]["version"]' 8.9.7.29 "$E2E_TMP/vars.status"
