#!/bin/bash
# Resources: disk full during extraction (a small tmpfs in a private mount namespace, and
# RLIMIT_FSIZE), a read-only store/prefix/state (read-only bind mounts: as root, chmod does
# not stop writes), prefixes others can write (refused: a root tool must not act on paths
# others can swap), permission denied for a non-root user, 16 concurrent commands, stale
# and live locks. docs/RELIABILITY.md.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl
cr_templates
source "$E2E_DIR/redteam_lib.bash" # N, E91, HAVE_NS (unshare -m works), in_ns, ns_tmpfs
[ "$(id -u)" -eq 0 ] || HAVE_NS=0

# A release that inflates a lot: 8 libraries with 400 KB of zero padding each (~3.3 MB
# extracted from a ~25 KB archive). The free-space check before extraction (2 x archive)
# passes, the disk fills up in the middle of extraction.
FAT=$E2E_TMP/fatmirror
mkrelease --mirror "$FAT" --label 9.31.0 --version 9.31.0.1 --cuda 12 --platform linux-x86_64 \
  --pad 400000 >/dev/null
fat() { # ROOT ARGS...: install 9.31.0 from the fat mirror
  local r=$1
  shift
  cudnnctl --root "$r" --mirror "file://$FAT" --cuda 12 --platform linux-x86_64 "$@" install 9.31.0
}
export CUDNNCTL FAT CR_MIRROR CRASH_CHECK

# ---- disk full ------------------------------------------------------------------------------
if [ "$HAVE_NS" = 1 ]; then
  TEST "disk full during extraction (1 MiB tmpfs as the prefix): exit 1, nothing activated, staging removed; with space, it installs"
  R=$(cr_copy one diskfull)
  snap=$E2E_TMP/snap.diskfull
  # the prefix moves onto a 1 MiB tmpfs (its current content copied in), inside the namespace
  export R
  in_ns '
    ns_tmpfs "$R/opt/cudnn" 1m
    rc=0
    "$CUDNNCTL" --root "$R" --mirror "file://$FAT" --cuda 12 --platform linux-x86_64 install 9.31.0 \
      >"$R/.out1" 2>"$R/.err1" || rc=$?
    echo "$rc" >"$R/.rc1"
    python3 "$CRASH_CHECK" "$R" --allowed 1 --clean --loader >"$R/.check1" 2>&1 || echo FAIL >>"$R/.check1"
    ls -A "$R/opt/cudnn/store" >"$R/.store1"
    mount -o remount,size=64m "$R/opt/cudnn"
    rc=0
    "$CUDNNCTL" --root "$R" --mirror "file://$FAT" --cuda 12 --platform linux-x86_64 install 9.31.0 \
      >"$R/.out2" 2>"$R/.err2" || rc=$?
    echo "$rc" >"$R/.rc2"
    python3 "$CRASH_CHECK" "$R" --allowed 2 --clean --loader >"$R/.check2" 2>&1 || echo FAIL >>"$R/.check2"
  '
  expect_eq "$(cat "$R/.rc1")" 1 "exit status with the disk full"
  grep -q "No space left on device" "$R/.err1" || fail "no ENOSPC message: $(cat "$R/.err1")"
  [ "$(grep -c '^cudnnctl: error: ' "$R/.err1")" = 1 ] || fail "error lines: $(cat "$R/.err1")"
  ! grep -q FAIL "$R/.check1" || fail "invariant after disk full: $(cat "$R/.check1")"
  expect_eq "$(cat "$R/.store1")" "$E91" "store after disk full (no staging, no half entry)"
  expect_eq "$(cat "$R/.rc2")" 0 "exit status with space: $(cat "$R/.err2")"
  ! grep -q FAIL "$R/.check2" || fail "invariant after the retry: $(cat "$R/.check2")"
  cr_check "$R" --history-count 3 --record="-2:failed:install:1" --record="-1:ok:install:1:2"
  N=$((N + 1))
fi

TEST "file size limit (RLIMIT_FSIZE 100 KiB, SIGXFSZ ignored by cudnnctl): exit 1, nothing changed; without it, it installs"
R=$(cr_copy one fsize)
snap=$E2E_TMP/snap.fsize
cr_state_snapshot "$R" >"$snap"
expect_exit 1 bash -c 'ulimit -f 100; exec "$0" --root "$1" --mirror "file://$2" --cuda 12 --platform linux-x86_64 install 9.31.0' \
  "$CUDNNCTL" "$R" "$FAT"
grep -qi "too large" "$ERR" || fail "no EFBIG message"
cr_expect_same_state "$R" "$snap"
cr_check "$R" --allowed 1 --clean --loader --record="-1:failed:install:1"
expect_exit 0 fat "$R"
cr_check "$R" --allowed 2 --clean --loader
cr_expect_verify "$R"
N=$((N + 1))

# ---- read-only filesystems (bind mounts remounted read-only) --------------------------------
# ro_case NAME TEMPLATE DIR WANT CMD...: DIR (under the root) is read-only for CMD
ro_case() {
  local name=$1 tpl=$2 dir=$3 want=$4
  shift 4
  TEST "read-only $dir: $name"
  R=$(cr_copy "$tpl" "ro.$N")
  snap=$E2E_TMP/snap.ro.$N
  cr_state_snapshot "$R" >"$snap"
  export R RO_DIR=$R/$dir
  printf '%q ' "$@" >"$E2E_TMP/ro.cmd"
  RO_CMD=$(cat "$E2E_TMP/ro.cmd")
  export RO_CMD
  in_ns '
    mount --bind "$RO_DIR" "$RO_DIR"
    mount -o remount,bind,ro "$RO_DIR"
    rc=0
    eval "\"\$CUDNNCTL\" --root \"\$R\" --mirror file://\$CR_MIRROR --cuda 12 $RO_CMD" >"$R/../ro.out" 2>"$R/../ro.err" || rc=$?
    echo $rc >"$R/../ro.rc"
  '
  expect_eq "$(cat "$R/../ro.rc")" "$want" "exit status ($(cat "$R/../ro.err"))"
  grep -q "Read-only file system" "$R/../ro.err" || fail "no EROFS message: $(cat "$R/../ro.err")"
  N=$((N + 1))
}
if [ "$HAVE_NS" = 1 ]; then
  ro_case "install" one opt/cudnn/store 1 install 8.9.7
  cr_expect_same_state "$R" "$snap"
  cr_check "$R" --allowed 1 --clean --loader --record="-1:failed:install:1"
  expect_exit 0 ctl "$R" install 8.9.7
  cr_check "$R" --allowed 2 --clean --loader
  ro_case "use (needs generations/)" two opt/cudnn 1 use 9.1.0
  cr_expect_same_state "$R" "$snap"
  cr_check "$R" --allowed 2 --clean --loader --record="-1:failed:use:2"
  ro_case "rollback" two opt/cudnn 1 rollback
  cr_expect_same_state "$R" "$snap"
  cr_check "$R" --allowed 2 --clean --loader --record="-1:failed:rollback:2"
  ro_case "install with a read-only state directory" one var/lib/cudnnctl 1 install 8.9.7
  cr_expect_same_state "$R" "$snap"
  cr_check "$R" --allowed 1 --clean --loader
  ro_case "install with a read-only loader directory (after the switch: rolled back)" one etc/ld.so.conf.d 5 install 8.9.7
  cr_check "$R" --allowed 1 --clean --loader --record="-1:rolled-back:install:1"
  ro_case "remove (a deletion: finished by the next command)" two opt/cudnn/store 1 remove 9.1.0
  cr_check "$R" --allowed 2 --loader
  expect_file "$R/var/lib/cudnnctl/journal.json"
  expect_exit 0 cudnnctl --root "$R" recover
  cr_check "$R" --allowed 2 --clean --loader --record="-1:completed-by-recover:remove:2:2"
  expect_no_file "$R/opt/cudnn/store/$E91"
else
  echo "    (no private mount namespace: disk-full tmpfs and read-only mounts left out)" >&2
fi

# ---- ownership: prefixes other users can write --------------------------------------------
# owned_case NAME WANT SETUP: SETUP (bash, with $R) changes owners/modes under a fresh root
owned_case() {
  local name=$1 want=$2
  TEST "ownership: $name"
  R=$(cr_copy one own.$N)
  (eval "$3")
  tree_snapshot "$R" | grep -v ' ->' >"$E2E_TMP/own.before"
  if [ "$want" = 0 ]; then
    expect_exit 0 ctl "$R" install 8.9.7
    cr_check "$R" --allowed 2 --clean --loader
  else
    expect_exit 1 ctl "$R" install 8.9.7
    grep -qE "owned by another user|writable by other users" "$ERR" || fail "no ownership message"
    tree_snapshot "$R" | grep -v ' ->' >"$E2E_TMP/own.after"
    diff "$E2E_TMP/own.before" "$E2E_TMP/own.after" || fail "a refused command changed the root"
  fi
  N=$((N + 1))
}
if [ "$(id -u)" -eq 0 ]; then
  owned_case "ancestor of the prefix mode 0777 (not sticky): refused" 1 'chmod 0777 "$R/opt"'
  owned_case "prefix mode 0777: refused" 1 'chmod 0777 "$R/opt/cudnn"'
  owned_case "prefix group-writable by a non-root group: refused" 1 'chgrp nogroup "$R/opt/cudnn"; chmod 0775 "$R/opt/cudnn"'
  owned_case "prefix owned by another user: refused" 1 'chown nobody "$R/opt/cudnn"'
  owned_case "ancestor owned by another user: refused" 1 'chown nobody "$R/opt"'
  owned_case "state directory writable by others: refused" 1 'chmod 0777 "$R/var/lib"'
  owned_case "cache directory owned by another user: refused" 1 'chown nobody "$R/var/cache/cudnnctl"'
  owned_case "sticky world-writable ancestor owned by another user: refused" 1 'chown nobody "$R/opt"; chmod 1777 "$R/opt"'
  owned_case "sticky world-writable root-owned ancestor (like /tmp): accepted" 0 'chmod 1777 "$R/opt"'
  owned_case "group-writable by root's group: accepted" 0 'chgrp root "$R/opt/cudnn"; chmod 0775 "$R/opt/cudnn"'

  TEST "permissions: an unprivileged user cannot change a root-owned install, and reads it fine"
  R=$(cr_copy two nobody)
  cr_state_snapshot "$R" >"$E2E_TMP/nobody.snap"
  expect_exit 1 as_nobody "$CUDNNCTL" --root "$R" use 9.1.0
  grep -q "Permission denied" "$ERR" || fail "no EACCES message"
  expect_exit 1 as_nobody "$CUDNNCTL" --root "$R" --mirror "file://$CR_MIRROR" --cuda 12 install 9.27.0
  expect_exit 1 as_nobody "$CUDNNCTL" --root "$R" rollback
  cr_expect_same_state "$R" "$E2E_TMP/nobody.snap"
  expect_exit 0 as_nobody "$CUDNNCTL" --root "$R" status
  expect_exit 0 as_nobody "$CUDNNCTL" --root "$R" history
  expect_exit 0 as_nobody "$CUDNNCTL" --root "$R" verify
  cr_check "$R" --allowed 2 --clean --loader
  N=$((N + 1))
fi

# ---- concurrency ------------------------------------------------------------------------------
# sixteen ROOT LOCK_TIMEOUT: 16 mutating commands at once; prints their exit codes
CMDS=("use 9.1.0" "use 8.9.7" "install 9.27.0" "install 8.9.6.50" "rollback" "use 9.27.0"
  "install 9.1.0" "use 8.9.7" "use 9.1.0" "install 8.9.6.50" "use 9.27.0" "rollback"
  "install 8.9.7" "use 9.1.0" "install 9.27.0" "use 8.9.7")
sixteen() {
  local r=$1 t=$2 i pids=()
  for i in "${!CMDS[@]}"; do
    # shellcheck disable=SC2086
    ctl "$r" --json --lock-timeout "$t" ${CMDS[$i]} >"$E2E_TMP/c.$i.out" 2>"$E2E_TMP/c.$i.err" &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    echo "$rc" >"$E2E_TMP/c.$i.rc"
  done
}
# serial_check ROOT HIST0 BUSY_OK: every command's outcome is accounted for, and history is
# one serial chain (each record starts where the previous one ended)
serial_check() {
  python3 - "$1" "$2" "$3" "$E2E_TMP" "${#CMDS[@]}" <<'PYEOF' || fail "concurrent runs: see above"
import json, os, sys
root, h0, busy_ok, tmp, n = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4], int(sys.argv[5])
changed = busy = noop = 0
for i in range(n):
    rc = int(open("%s/c.%d.rc" % (tmp, i)).read())
    d = json.load(open("%s/c.%d.out" % (tmp, i)))
    if rc == 0:
        assert d["ok"], d
        changed += d["changed"]
        noop += not d["changed"]
    elif rc == 6 and busy_ok:
        assert d["error"]["code"] == "busy" and "holds" in d["error"]["message"], d
        busy += 1
    elif rc == 2 and d["command"] == "rollback":
        noop += 1  # nothing to roll back to at that moment: refused, changes nothing
    else:
        sys.exit("command %d exited %d: %s" % (i, rc, d.get("error")))
recs = [json.loads(l) for l in open(os.path.join(root, "var/lib/cudnnctl/history.jsonl")) if l.strip()][h0:]
g = lambda x: None if not isinstance(x, dict) else x.get("generation")
assert len(recs) == changed, "history has %d new records, %d commands changed something" % (len(recs), changed)
for a, b in zip(recs, recs[1:]):
    assert g(b["from"]) == g(a["to"]), "not serial: %s then %s" % (a, b)
assert all(r["result"] == "ok" for r in recs), [r["result"] for r in recs]
cur = os.readlink(os.path.join(root, "opt/cudnn/current"))
assert not recs or cur == "generations/%d" % g(recs[-1]["to"]), (cur, recs[-1]["to"])
print("16 concurrent: %d changed, %d no-op, %d busy" % (changed, noop, busy), file=sys.stderr)
PYEOF
}
TEST "16 concurrent installs/uses/rollbacks: serialised by the lock, none lost, one consistent end state"
R=$(cr_copy three conc)
H0=$(cr_hist_count "$R")
sixteen "$R" 300
serial_check "$R" "$H0" 0
cr_check "$R" --clean --loader
cr_expect_verify "$R"
N=$((N + 1))
TEST "16 concurrent with --lock-timeout 0: each done or busy (exit 6), none lost"
H0=$(cr_hist_count "$R")
sixteen "$R" 0
serial_check "$R" "$H0" 1
cr_check "$R" --clean --loader
N=$((N + 1))

TEST "F13 (issue 34): an install of a stored build that a remove takes away before the install's lock downloads it again (exit 0)"
R=$(cr_copy three f13)
F13=$E2E_TMP/f13.fifo
mkfifo "$F13"
exec 8<>"$F13"
CUDNNCTL_TEST_PAUSE_AT=before-lock:$F13 "$CUDNNCTL" --root "$R" --mirror "file://$CR_MIRROR" \
  --cuda 12 install 8.9.7 >"$E2E_TMP/f13.out" 2>"$E2E_TMP/f13.err" 8>&- &
F13_PID=$!
_CR_FS_PIDS+=("$F13_PID")
for i in $(seq 600); do
  [ -e "$F13.reached" ] && break
  sleep 0.05
done
[ -e "$F13.reached" ] || fail "the install never reached its lock: $(cat "$E2E_TMP/f13.err")"
expect_exit 0 ctl "$R" remove 8.9.7 # between the install's look at the store and its lock
[ -z "$(ls -d "$R"/opt/cudnn/store/8.9.7* 2>/dev/null)" ] || fail "remove left 8.9.7 in the store"
echo go >&8
rc=0
wait "$F13_PID" || rc=$?
exec 8>&-
expect_eq "$rc" 0 "the install's exit status ($(cat "$E2E_TMP/f13.err"))"
expect_contains "$E2E_TMP/f13.err" "was removed meanwhile (by a gc or remove); installing it again"
case "$(readlink -f "$R/opt/cudnn/current")" in
*/store/8.9.7.*) ;;
*) fail "8.9.7 is not active: $(readlink -f "$R/opt/cudnn/current")" ;;
esac
cr_check "$R" --clean --loader
N=$((N + 1))

# ---- locks --------------------------------------------------------------------------------------
TEST "a lock held by a live process: exit 6 naming it; --lock-timeout 2 waits, then exit 6"
R=$(cr_copy one lock)
coproc HOLDER { flock "$R/var/lib/cudnnctl/lock" bash -c 'echo locked; read -r _'; }
holder_pid=$HOLDER_PID # bash unsets HOLDER_PID once the coprocess has ended
read -r line <&"${HOLDER[0]}"
expect_eq "$line" locked "holder started"
expect_exit 6 ctl "$R" --lock-timeout 0 install 8.9.7
grep -qE "busy: pid [0-9]+ \(flock " "$ERR" || fail "the holder is not named: $(cat "$ERR")"
t0=$(date +%s%N)
expect_exit 6 ctl "$R" --lock-timeout 2 --json install 8.9.7
dt=$((($(date +%s%N) - t0) / 1000000))
[ "$dt" -ge 2000 ] || fail "--lock-timeout 2 gave up after $dt ms"
expect_json 'd["error"]["code"]' busy
cr_check "$R" --allowed 1 --clean --loader --history-count 1
echo done >&"${HOLDER[1]}"
wait "$holder_pid" 2>/dev/null || true
expect_exit 0 ctl "$R" --lock-timeout 0 install 8.9.7
N=$((N + 1))

TEST "a lock whose holder was killed (kill -9 while paused between the steps): the next command proceeds"
R=$(cr_copy one deadholder)
FIFO=$E2E_TMP/pause.fifo
mkfifo "$FIFO"
CUDNNCTL_TEST_PAUSE_AT=before-switch:$FIFO "$CUDNNCTL" --root "$R" --mirror "file://$CR_MIRROR" \
  --cuda 12 install 8.9.7 >/dev/null 2>&1 &
VICTIM=$!
_CR_FS_PIDS+=("$VICTIM") # killed at exit if the test fails before it does
for i in $(seq 200); do
  grep -q "pid $VICTIM:" "$R/var/lib/cudnnctl/lock" 2>/dev/null && [ -f "$R/var/lib/cudnnctl/journal.json" ] && break
  sleep 0.05
done
grep -q "pid $VICTIM:" "$R/var/lib/cudnnctl/lock" || fail "the paused install did not take the lock"
expect_exit 6 ctl "$R" --lock-timeout 0 use 9.1.0
expect_contains "$ERR" "pid $VICTIM:"
kill -9 "$VICTIM"
wait "$VICTIM" 2>/dev/null || true
expect_exit 0 ctl "$R" --lock-timeout 0 install 8.9.7
expect_contains "$ERR" "undid interrupted"
cr_check "$R" --clean --loader --record="-2:undone-by-recover:install:1" --record="-1:ok:install:1"
N=$((N + 1))
TEST "an install paused between extraction and the switch: status sees the old state, gc and a second install are busy, the install then completes"
R=$(cr_copy one paused)
FIFO2=$E2E_TMP/pause2.fifo
mkfifo "$FIFO2"
CUDNNCTL_TEST_PAUSE_AT=after-store-commit:$FIFO2 "$CUDNNCTL" --root "$R" --mirror "file://$CR_MIRROR" \
  --cuda 12 install 8.9.7 >"$E2E_TMP/paused.out" 2>"$E2E_TMP/paused.err" &
PAUSED=$!
_CR_FS_PIDS+=("$PAUSED")
for i in $(seq 200); do
  [ -d "$R/opt/cudnn/store/8.9.7.29-cuda12-linux-x86_64" ] && break
  sleep 0.05
done
[ -d "$R/opt/cudnn/store/8.9.7.29-cuda12-linux-x86_64" ] || fail "the paused install did not commit its store entry"
expect_exit 0 cudnnctl --root "$R" status --json
expect_json 'd["active"]["generation"]' 1
expect_exit 6 ctl "$R" --lock-timeout 0 gc --keep 1
expect_exit 6 ctl "$R" --lock-timeout 0 install 9.27.0
cr_check "$R" --allowed 1
echo go >"$FIFO2"
rc=0
wait "$PAUSED" || rc=$?
expect_eq "$rc" 0 "the paused install ($(cat "$E2E_TMP/paused.err"))"
cr_check "$R" --allowed 2 --clean --loader --history-count 2 --record="-1:ok:install:1:2"
N=$((N + 1))
echo "resource cases: $N" >&2
