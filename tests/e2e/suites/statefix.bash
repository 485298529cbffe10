#!/bin/bash
# Crash-state fixtures in the dpkg style (tests/t-db): a hand-made state as an interrupted
# command (or a damaged disk, or a hostile hand) could leave it, and the exact outcome
# `recover` must reach. Each fixture is a copy of a template root plus a journal written
# here. docs/RELIABILITY.md "Crash-state fixtures".
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl
cr_templates

E91=9.1.0.70-cuda12-linux-x86_64
E897=8.9.7.29-cuda12-linux-x86_64
N=0

# journal ROOT KEY=JSON...: write <root>/var/lib/cudnnctl/journal.json (format 1) with the
# given fields over defaults of an install of 8.9.7 from generation 1.
journal() {
  local r=$1
  shift
  python3 - "$r/var/lib/cudnnctl/journal.json" "$@" <<'PYEOF'
import json, sys
j = {"format": 1, "txid": "fixture0000000001", "command": "install",
     "argv": "install 8.9.7", "pid": 999999, "boot_id": "x", "started": "2024-01-01T00:00:00Z",
     "phase": "prepare", "staging": "", "entry": "8.9.7.29-cuda12-linux-x86_64",
     "entry_created": False, "from_generation": 1, "to_generation": None,
     "generation_created": False, "delete_generations": [], "delete_entries": []}
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    j[k] = json.loads(v)
open(sys.argv[1], "w").write(json.dumps(j, indent=2) + "\n")
PYEOF
}

# fixture NAME TEMPLATE: start a fixture (a copy of TEMPLATE); sets R, H0
fixture() {
  TEST "fixture: $1"
  R=$(cr_copy "$2" "fx.$N")
  H0=$(cr_hist_count "$R")
  N=$((N + 1))
}
# add_entry ROOT ENTRY: copy a complete store entry from the template "three"
add_entry() { cp -a "$CR_TPL/three/opt/cudnn/store/$2" "$1/opt/cudnn/store/$2"; }
# add_gen ROOT N ENTRY PARENT: a generation link and its metadata
add_gen() {
  ln -sfn "../store/$3" "$1/opt/cudnn/generations/$2"
  printf '{"generation": %s, "entry": "%s", "parent": %s, "created": "x", "command": "install"}\n' \
    "$2" "$3" "$4" >"$1/opt/cudnn/generations/$2.json"
}
# add_gen2: 8.9.7's store entry and generation 2 (parent 1) on $R, current unchanged
add_gen2() {
  add_entry "$R" $E897
  add_gen "$R" 2 $E897 1
}
recover_ok() {
  expect_exit 0 cudnnctl --root "$R" recover
  cr_check "$R" --clean --loader "$@"
  cr_expect_verify "$R"
}

fixture "prepare, half-extracted staging, no entry yet" one
mkdir -p "$R/opt/cudnn/store/.staging-deadbeef-4242-abcd/lib"
head -c 5000 /dev/urandom >"$R/opt/cudnn/store/.staging-deadbeef-4242-abcd/lib/libcudnn.so.8.9.7"
journal "$R" staging='".staging-deadbeef-4242-abcd"'
recover_ok --allowed 1 --history-count $((H0 + 1)) --record="-1:undone-by-recover:install:1"
expect_no_file "$R/opt/cudnn/store/.staging-deadbeef-4242-abcd"

fixture "prepare, entry renamed into the store, journal not yet at entry-committed" one
add_entry "$R" $E897
journal "$R" staging='".staging-deadbeef-4242-abcd"' entry_created=true
recover_ok --allowed 1 --history-count $((H0 + 1)) --record="-1:undone-by-recover:install:1"
expect_no_file "$R/opt/cudnn/store/$E897"

fixture "entry-committed: entry in the store, no generation" one
add_entry "$R" $E897
journal "$R" phase='"entry-committed"' entry_created=true
recover_ok --allowed 1 --record="-1:undone-by-recover:install:1"
expect_no_file "$R/opt/cudnn/store/$E897"

fixture "generation-created: generation 2 exists, current still 1" one
add_gen2
journal "$R" phase='"generation-created"' entry_created=true to_generation=2 generation_created=true
recover_ok --allowed 1 --record="-1:undone-by-recover:install:1:2"
expect_no_file "$R/opt/cudnn/generations/2"
expect_no_file "$R/opt/cudnn/generations/2.json"

fixture "switching, current still old" one
add_gen2
journal "$R" phase='"switching"' entry_created=true to_generation=2 generation_created=true
recover_ok --allowed 1 --record="-1:undone-by-recover:install:1:2"

for ph in switching switched integrated; do
  fixture "$ph, current already new, drop-in still old" one
  add_gen2
  ln -sfn generations/2 "$R/opt/cudnn/current"
  journal "$R" phase="\"$ph\"" entry_created=true to_generation=2 generation_created=true
  recover_ok --allowed 2 --history-count $((H0 + 1)) --record="-1:completed-by-recover:install:1:2"
done

fixture "reverting, current still new" one
add_gen2
ln -sfn generations/2 "$R/opt/cudnn/current"
journal "$R" phase='"reverting"' entry_created=true to_generation=2 generation_created=true
recover_ok --allowed 1 --record="-1:rolled-back:install:1:2"
expect_no_file "$R/opt/cudnn/store/$E897"

fixture "reverting, current already back at old, new generation half deleted" one
add_entry "$R" $E897
printf '{"generation": 2}\n' >"$R/opt/cudnn/generations/2.json"
journal "$R" phase='"reverting"' entry_created=true to_generation=2 generation_created=true
recover_ok --allowed 1 --record="-1:rolled-back:install:1:2"
expect_no_file "$R/opt/cudnn/store/$E897"

fixture "deleting, half done (generation link gone, entry still there)" two
rm "$R/opt/cudnn/generations/1"
journal "$R" phase='"deleting"' command='"remove"' argv='"remove 9.1.0"' entry='""' \
  from_generation=2 to_generation=2 delete_generations='[1]' delete_entries="[\"$E91\"]"
recover_ok --allowed 2 --history-count $((H0 + 1)) --record="-1:completed-by-recover:remove:2:2"
expect_no_file "$R/opt/cudnn/store/$E91"

fixture "deleting, entry renamed to .trash-* and half removed" two
rm "$R/opt/cudnn/generations/1" "$R/opt/cudnn/generations/1.json"
mv "$R/opt/cudnn/store/$E91" "$R/opt/cudnn/store/.trash-$E91-0a0b"
rm -r "$R/opt/cudnn/store/.trash-$E91-0a0b/include"
journal "$R" phase='"deleting"' command='"gc"' argv='"gc"' entry='""' \
  from_generation=2 to_generation=2 delete_generations='[1]' delete_entries="[\"$E91\"]"
recover_ok --allowed 2 --record="-1:completed-by-recover:gc:2:2"

fixture "committed: history already has the journal's txid" two
journal "$R" phase='"integrated"' to_generation=2 generation_created=true \
  txid="\"$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])["txid"])' "$R/var/lib/cudnnctl/history.jsonl")\""
recover_ok --allowed 2 --history-count "$H0"

# Damaged or hostile journals: nothing in them is trusted. The active generation stays,
# is re-integrated, and the journal is dropped with a "journal-discarded" record.
discarded() { # NAME TEMPLATE JOURNAL_TEXT
  fixture "$1" "$2"
  printf '%s' "$3" >"$R/var/lib/cudnnctl/journal.json"
  tree_snapshot "$R/etc" | grep -v -e ld.so.cache -e 00-cudnnctl.conf >"$E2E_TMP/etc.before"
  local cur
  cur=$(cr_current "$R")
  expect_exit 0 cudnnctl --root "$R" recover
  expect_contains "$ERR" "journal"
  cr_check "$R" --allowed "$cur" --clean --loader --history-count $((H0 + 1)) --record="-1:journal-discarded"
  cr_expect_verify "$R"
  tree_snapshot "$R/etc" | grep -v -e ld.so.cache -e 00-cudnnctl.conf >"$E2E_TMP/etc.after"
  cmp -s "$E2E_TMP/etc.before" "$E2E_TMP/etc.after" || fail "recover changed $R/etc"
  [ "$(ls "$R/opt/cudnn/store" | wc -l)" -eq "$(ls "$CR_TPL/$2/opt/cudnn/store" | wc -l)" ] ||
    fail "recover deleted a store entry"
}
discarded "torn journal (cut in the middle)" two '{"format": 1, "txid": "ab", "command": "inst'
discarded "empty journal" two ''
discarded "journal of another format" two '{"format": 99, "txid": "a", "command": "install", "phase": "prepare"}'
discarded "journal that is a JSON array" two '[1, 2, 3]'
discarded "journal with an unknown phase" two '{"format": 1, "txid": "a", "command": "install", "phase": "frobbing"}'
discarded "journal with a wrong type" two '{"format": "1", "txid": "a", "command": "install", "phase": "prepare"}'
discarded "journal with binary garbage" two "$(head -c 300 /dev/urandom | tr -d '\0')"
discarded "hostile entry name ../../etc" two \
  '{"format": 1, "txid": "a", "command": "install", "phase": "prepare", "entry": "../../../etc", "entry_created": true, "from_generation": 2}'
discarded "hostile entry name .." two \
  '{"format": 1, "txid": "a", "command": "install", "phase": "entry-committed", "entry": "..", "entry_created": true, "from_generation": 2}'
discarded "hostile delete list" two \
  '{"format": 1, "txid": "a", "command": "gc", "phase": "deleting", "entry": "", "from_generation": 2, "to_generation": 2, "delete_entries": ["../../../etc"]}'
discarded "hostile delete list with an absolute path" two \
  '{"format": 1, "txid": "a", "command": "gc", "phase": "deleting", "entry": "", "from_generation": 2, "to_generation": 2, "delete_entries": ["/etc"]}'
discarded "hostile staging name" two \
  '{"format": 1, "txid": "a", "command": "install", "phase": "prepare", "staging": "../../../etc", "entry": "x", "from_generation": 2}'

# Forged journals whose names are valid: recovery must still never delete what is active
# or used by another generation.
fixture "forged: an undo that claims the active entry" two
journal "$R" entry="\"$E897\"" entry_created=true from_generation=2
recover_ok --allowed 2
expect_dir "$R/opt/cudnn/store/$E897"
fixture "forged: an undo that claims an entry another generation uses" two
journal "$R" entry="\"$E91\"" entry_created=true from_generation=2
recover_ok --allowed 2
expect_dir "$R/opt/cudnn/store/$E91"
fixture "forged: a deletion that lists the active generation and entry" two
journal "$R" phase='"deleting"' command='"gc"' entry='""' from_generation=2 to_generation=2 \
  delete_generations='[2]' delete_entries="[\"$E897\"]"
recover_ok --allowed 2
expect_dir "$R/opt/cudnn/store/$E897"
fixture "forged: a revert to a generation that does not exist" two
journal "$R" phase='"reverting"' from_generation=7 to_generation=2 entry="\"$E897\""
expect_exit 0 cudnnctl --root "$R" recover
expect_contains "$ERR" "does not match the store"
cr_check "$R" --allowed 2 --clean --loader --record="-1:journal-discarded"
cr_expect_verify "$R"

# Locks: the flock is the lock, the file's content only describes the last holder.
fixture "lock file left by a dead process" one
echo "pid 999999: cudnnctl install 9.2.0, since 2024-01-01T00:00:00Z" >"$R/var/lib/cudnnctl/lock"
expect_exit 0 ctl "$R" --lock-timeout 0 install 8.9.7
cr_check "$R" --allowed 2 --clean --loader
fixture "lock file with garbage content" one
head -c 4000 /dev/urandom >"$R/var/lib/cudnnctl/lock"
expect_exit 0 ctl "$R" --lock-timeout 0 use 9.1.0
fixture "lock file that is a symlink (refused, target untouched)" one
rm "$R/var/lib/cudnnctl/lock"
echo keep >"$E2E_TMP/lock-target"
ln -s "$E2E_TMP/lock-target" "$R/var/lib/cudnnctl/lock"
expect_exit 1 ctl "$R" install 8.9.7
expect_eq "$(cat "$E2E_TMP/lock-target")" keep "symlink target of the lock"
cr_check "$R" --allowed 1 --clean --loader

# History: a torn last record (power loss in the middle of an append) is skipped with a
# warning; the next record starts on a fresh line.
fixture "torn history record" one
printf '{"txid": "torn", "command": "insta' >>"$R/var/lib/cudnnctl/history.jsonl"
expect_exit 0 ctl "$R" install 8.9.7
expect_exit 0 cudnnctl --root "$R" history --json
expect_json 'd["data"]["history"][-1]["result"]' ok
expect_json 'len(d["warnings"])' 1
# F14 (issue 34): the active entry's metadata garbage, or the entry gone: status says what is
# there (not "none") and how to repair it; recover switches to an intact generation.
for how in garbage gone; do
  fixture "the active store entry: metadata $how" two
  E=$(basename "$(readlink -f "$R/opt/cudnn/current")")
  if [ "$how" = garbage ]; then
    printf '\x00garbage{' >"$R/opt/cudnn/store/$E/.cudnnctl-entry.json"
  else
    rm -rf "${R:?}/opt/cudnn/store/$E"
  fi
  expect_exit 0 cudnnctl --root "$R" status
  expect_contains "$OUT" "active:   damaged: generation 2 names the store entry $E, which is missing or damaged; the loader drop-in still names "
  expect_contains "$OUT" "; run \`cudnnctl recover\` (it switches to an intact generation)"
  expect_not_contains "$OUT" "active:   none"
  expect_exit 0 cudnnctl --root "$R" status --json
  expect_json 'd["active"]' null
  expect_json '"names the store entry" in d["data"]["damaged"]' true
  expect_exit 0 cudnnctl --root "$R" recover
  expect_exit 0 cudnnctl --root "$R" status --json
  expect_json 'd["data"]["damaged"]' null
  expect_json 'd["active"]["generation"]' 1
done
echo "fixtures: $N" >&2
