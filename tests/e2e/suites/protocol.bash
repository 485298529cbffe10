#!/bin/bash
# Issue 14, the protocol breaks: B1, B3, B4, B6, B11, B12 and B20's shared state, each a
# regression test that failed on main at f8480f5 (the fixes live in txn/, store/view.cpp and
# ops/query.cpp). Permission cases drop privileges to nobody; disk-full cases use small tmpfs
# mounts inside `unshare -m`; nothing is written outside the temporary roots.
# docs/RELIABILITY.md. One case: RT_ONLY=b4-use bash tests/e2e/run protocol
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
source "$E2E_DIR/redteam_lib.bash"
rt_start "other owners, flock as another process, private mounts"

# ---- B1 ------------------------------------------------------------------------------------
c_b1() {
  TEST "B1: a prefix other users made writable while cudnnctl waited for the lock is refused under the lock"
  R=$(cr_copy empty b1)
  mkdir -p "$R/pub" "$R/var/lib/cudnnctl"
  chmod 1777 "$R/pub"
  coproc HOLDER { flock "$R/var/lib/cudnnctl/lock" bash -c 'echo locked; read -r _'; }
  read -r line <&"${HOLDER[0]}"
  expect_eq "$line" locked "holder started"
  ctl "$R" --prefix /pub/cudnn install 9.1.0 >"$E2E_TMP/b1.out" 2>"$E2E_TMP/b1.err" &
  PID=$!
  _CR_FS_PIDS+=("$PID")
  for i in $(seq 200); do # until it has the lock file open (waiting in flock)
    ls -l "/proc/$PID/fd" 2>/dev/null | grep -q "var/lib/cudnnctl/lock" && break
    sleep 0.05
  done
  as_nobody mkdir -m 0777 "$R/pub/cudnn" "$R/pub/cudnn/store"
  echo go >&"${HOLDER[1]}"
  rc=0
  wait "$PID" || rc=$?
  expect_eq "$rc" 1 "exit status ($(cat "$E2E_TMP/b1.err"))"
  grep -q "owned by another user (nobody" "$E2E_TMP/b1.err" || fail "no ownership message"
  expect_eq "$(ls -A "$R/pub/cudnn/store")" "" "nobody's store directory"
  expect_no_file "$R/etc/ld.so.conf.d/00-cudnnctl.conf"
}
rt_case b1 c_b1

# ---- B3 ------------------------------------------------------------------------------------
c_b3() {
  TEST "B3: a bare root (no etc/) after an interrupted first install: recover and install work"
  R=$E2E_TMP/bare
  mkdir -m 0755 "$R" # nothing in it: no etc/, no var/
  expect_exit 86 env CUDNNCTL_TEST_CRASH_AT=after-download "$CUDNNCTL" --root "$R" \
    --mirror "file://$CR_MIRROR" --cuda 12 install 9.1.0
  bounded 60 --root "$R" recover
  expect_eq "$RC" 0 "recover on a bare root ($(cat "$ERR"))"
  bounded 60 --root "$R" --mirror "file://$CR_MIRROR" --cuda 12 install 9.1.0
  expect_eq "$RC" 0 "install after recover ($(cat "$ERR"))"
}
rt_case b3 c_b3

# ---- B4 ------------------------------------------------------------------------------------
# After each run on a filesystem with FREE KiB left: the exit status and the message tell the
# truth about what `current` and the loader drop-in name, and they agree with each other.
b4_judge() { # ROOT RC ERRFILE OLD NEW
  python3 - "$@" <<'PYEOF'
import os, sys
root, rc, errf, old, new = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
err = open(errf).read()
pre = os.path.join(root, "opt/cudnn")
try:
    cur = os.readlink(os.path.join(pre, "current")).split("/")[-1]
except OSError:
    cur = "none"
def entry(g):
    try:
        return os.path.basename(os.readlink(os.path.join(pre, "generations", g)))
    except OSError:
        return None
try:
    dropin = open(os.path.join(root, "etc/ld.so.conf.d/00-cudnnctl.conf")).read()
except OSError:
    dropin = ""
e = entry(cur) if cur != "none" else None
consistent = (e is None and not dropin.strip()) or (e is not None and "/store/%s/lib" % e in dropin)
problems = []
if rc == 0 and cur != new:
    problems.append("exit 0 but current is %s, not %s" % (cur, new))
if rc == 5 and cur != old:
    problems.append("exit 5 (rolled back) but current is %s, not %s" % (cur, old))
if "nothing was activated" in err and cur != old:
    problems.append("says nothing was activated, but current is %s (was %s)" % (cur, old))
if not consistent and ("generation %s" % cur) not in err:
    problems.append("current names generation %s, the drop-in says %r, and the message does not "
                    "say which is active" % (cur, dropin.strip()))
if problems:
    print("FAIL rc=%d: %s | %s" % (rc, "; ".join(problems), err.strip().replace("\n", " / ")[:300]))
PYEOF
}
b4_case() { # TEMPLATE OLD NEW MAX_KIB CMD...
  local tpl=$1 old=$2 new=$3
  export B4_MAX=$4
  shift 4
  TEST "B4: $* on a filesystem that fills up after the switch: the exit status and message tell the truth"
  R=$(cr_copy "$tpl" "b4.$1")
  export R B4_OLD=$old B4_NEW=$new B4_CMD="$*" B4_RES=$E2E_TMP/b4.$1.res
  export -f b4_judge
  : >"$B4_RES"
  in_ns '
    cp -a "$R" "$R.tpl"
    for free in $(seq 0 4 "$B4_MAX"); do # tmpfs counts 4 KiB pages: the window is one page
      mount -t tmpfs -o size=4m,mode=0755 tmpfs "$R"
      cp -a "$R.tpl/." "$R/"
      avail=$(( $(stat -f -c "%a * %S" "$R") ))
      fill=$((avail - free * 1024))
      [ "$fill" -gt 0 ] && head -c "$fill" /dev/zero >"$R/filler" || true
      rc=0
      "$CUDNNCTL" --root "$R" --mirror "file://$CR_MIRROR" --cuda 12 $B4_CMD \
        >/dev/null 2>"$R.err" || rc=$?
      out=$(b4_judge "$R" "$rc" "$R.err" "$B4_OLD" "$B4_NEW")
      [ -z "$out" ] || echo "free ${free} KiB: $out" >>"$B4_RES"
      rm -f "$R/filler"
      rc=0
      "$CUDNNCTL" --root "$R" recover >/dev/null 2>"$R.err2" || rc=$?
      [ "$rc" = 0 ] || echo "free ${free} KiB: recover exit $rc: $(head -c 300 "$R.err2")" >>"$B4_RES"
      umount "$R"
    done
  '
  [ ! -s "$B4_RES" ] || fail "$(cat "$B4_RES")"
}
if [ "$HAVE_NS" = 1 ]; then
  # main at 35418fa: install 8.9.7 mixed at 212 KiB free, use at 8 KiB (issue: 176, 8, 4 KiB)
  rt_case b4-install b4_case one 1 2 320 install 8.9.7
  rt_case b4-use b4_case two 2 3 160 use 9.1.0
  rt_case b4-rollback b4_case two 2 1 160 rollback
fi

# ---- B6 ------------------------------------------------------------------------------------
c_b6_entry() {
  TEST "B6: the active entry deleted: verify exits 8 (the boot unit rolls back on 8), recover returns to a good generation"
  R=$(cr_copy two b6a)
  rm -rf "$R/opt/cudnn/store/$E897"
  expect_exit 8 cudnnctl --root "$R" verify
  expect_exit 0 cudnnctl --root "$R" status
  grep -q "generation 2" "$OUT" "$ERR" || fail "status does not name the broken active generation"
  expect_exit 0 cudnnctl --root "$R" recover
  expect_eq "$(cr_current "$R")" 1 "active generation after recover"
  expect_exit 0 cudnnctl --root "$R" verify
}
rt_case b6-entry c_b6_entry

c_b6_meta() {
  TEST "B6: the active entry's .cudnnctl-entry.json truncated: verify exits 8"
  R=$(cr_copy two b6b)
  : >"$R/opt/cudnn/store/$E897/.cudnnctl-entry.json"
  expect_exit 8 cudnnctl --root "$R" verify
  expect_contains "$OUT" "generation 2: its store entry $E897 is damaged"
  expect_exit 0 cudnnctl --root "$R" recover
  expect_eq "$(cr_current "$R")" 1 "active generation after recover"
  tail -n1 "$R/var/lib/cudnnctl/history.jsonl" >"$E2E_TMP/b6.last"
  expect_eq "$(json_get 'd["result"]' "$E2E_TMP/b6.last")" repaired-by-recover "history record"
  expect_exit 0 cudnnctl --root "$R" verify
}
rt_case b6-meta c_b6_meta

c_b6_current() {
  TEST "B6: current -> a missing generation: verify exits 8, recover returns to a good generation"
  R=$(cr_copy two b6c)
  ln -sfn generations/99 "$R/opt/cudnn/current"
  expect_exit 8 cudnnctl --root "$R" verify
  expect_exit 0 cudnnctl --root "$R" recover
  expect_contains "$OUT" "generation"
  case $(cr_current "$R") in 1 | 2) ;; *) fail "current after recover: $(cr_current "$R")" ;; esac
  expect_exit 0 cudnnctl --root "$R" verify
}
rt_case b6-current c_b6_current

# ---- B11 -----------------------------------------------------------------------------------
# A reader paused (tests/fixtures/stub/pause_readlink.c) after it listed the generations and
# before it reads `current`, while a `use` creates generation 3 and switches to it.
PAUSE_SO=$E2E_TMP/pause_readlink.so
${CC:-cc} -shared -fPIC -o "$PAUSE_SO" "$E2E_FIXTURES/stub/pause_readlink.c" -ldl
c_b11() {
  local cmd=$1
  TEST "B11: a lock-free \`$cmd\` that reads \`current\` just after a switch reports the old or the new state"
  R=$(cr_copy two "b11.$cmd")
  local mark=$E2E_TMP/b11.$cmd.mark go=$E2E_TMP/b11.$cmd.go
  LD_PRELOAD=$PAUSE_SO PAUSE_READLINK_SUFFIX=/opt/cudnn/current PAUSE_READLINK_MARK=$mark \
    PAUSE_READLINK_GO=$go "$CUDNNCTL" --root "$R" $cmd --json >"$E2E_TMP/b11.out" \
    2>"$E2E_TMP/b11.err" &
  local pid=$! i rc=0
  _CR_FS_PIDS+=("$pid")
  for i in $(seq 200); do
    [ -e "$mark" ] && break
    sleep 0.05
  done
  [ -e "$mark" ] || fail "the reader never read current"
  expect_exit 0 ctl "$R" use 9.1.0 # generation 3, active now
  touch "$go"
  wait "$pid" || rc=$?
  expect_eq "$rc" 0 "$cmd exit status ($(cat "$E2E_TMP/b11.err"))"
  expect_not_contains "$E2E_TMP/b11.err" "does not exist"
  case $(json_get 'd["active"]["generation"] if d["active"] else None' "$E2E_TMP/b11.out") in
  2 | 3) ;;
  *) fail "$cmd saw neither generation 2 nor 3 active: $(cat "$E2E_TMP/b11.out")" ;;
  esac
}
rt_case b11-status c_b11 status
rt_case b11-verify c_b11 verify

# ---- B12 -----------------------------------------------------------------------------------
c_b12() {
  local kind=$1
  TEST "B12: current is $([ $kind = etc ] && echo 'a link to /etc' || echo 'a directory'): recover repairs it instead of asking for itself"
  R=$(cr_copy two "b12.$kind")
  rm "$R/opt/cudnn/current"
  if [ "$kind" = etc ]; then ln -s /etc "$R/opt/cudnn/current"; else mkdir "$R/opt/cudnn/current"; fi
  bounded 30 --root "$R" status # one clear error that names the way out, which works
  expect_eq "$RC" 1 "status with a broken current"
  one_error_line
  expect_contains "$ERR" "run \`cudnnctl recover\` (it switches to an intact generation)"
  bounded 30 --root "$R" recover
  expect_eq "$RC" 0 "recover ($(cat "$ERR"))"
  expect_not_contains "$ERR" "run \`cudnnctl recover\`"
  case $(readlink "$R/opt/cudnn/current") in generations/1 | generations/2) ;;
  *) fail "current after recover: $(ls -ld "$R/opt/cudnn/current")" ;; esac
  expect_exit 0 cudnnctl --root "$R" status
}
rt_case b12-etc c_b12 etc
rt_case b12-dir c_b12 dir
c_b12_journal() {
  TEST "B12: current a link to /etc while an interrupted install's journal is pending: recover undoes the install, then repairs current"
  R=$(cr_copy two b12.journal)
  expect_exit 86 env CUDNNCTL_TEST_CRASH_AT=after-store-commit "$CUDNNCTL" --root "$R" \
    --mirror "file://$CR_MIRROR" --cuda 12 install 9.27.0
  ln -sfn /etc "$R/opt/cudnn/current"
  bounded 30 --root "$R" recover
  expect_eq "$RC" 0 "recover ($(cat "$ERR"))"
  expect_contains "$ERR" "moved it aside"
  expect_eq "$(readlink "$R/opt/cudnn/current")" generations/2 "current after recover"
  expect_eq "$(readlink "$R"/opt/cudnn/current.invalid-*)" /etc "the link set aside"
  rm "$R"/opt/cudnn/current.invalid-*
  cr_check "$R" --allowed 2 --clean --loader
  expect_eq "$(tail -n2 "$R/var/lib/cudnnctl/history.jsonl" | python3 -c 'import json,sys; print(" ".join(json.loads(l)["result"] for l in sys.stdin))')" \
    "undone-by-recover repaired-by-recover" "the last two history records"
}
rt_case b12-journal c_b12_journal

# ---- B20 (shared state) --------------------------------------------------------------------
c_b20_state() {
  TEST "B20: two prefixes on one root: /opt/b's commands refuse /opt/a's interrupted install (exit 2) and leave it to /opt/a"
  R=$(cr_copy empty b20)
  expect_exit 0 ctl "$R" --prefix /opt/b install 8.9.7
  # Two prefixes' state as a cudnnctl from before F15 left it: today /opt/a's install is refused
  # while /opt/b's build is in the loader drop-in (c_f15), so the drop-in is away meanwhile.
  mv "$R/etc/ld.so.conf.d/00-cudnnctl.conf" "$E2E_TMP/b20.dropin"
  expect_exit 86 env CUDNNCTL_TEST_CRASH_AT=after-store-commit "$CUDNNCTL" --root "$R" \
    --mirror "file://$CR_MIRROR" --cuda 12 --prefix /opt/a install 9.1.0
  mv "$E2E_TMP/b20.dropin" "$R/etc/ld.so.conf.d/00-cudnnctl.conf"
  expect_eq "$(json_get 'd["prefix"]' "$R/var/lib/cudnnctl/journal.json")" /opt/a "journal's prefix"
  cp "$R/var/lib/cudnnctl/journal.json" "$E2E_TMP/b20.journal"
  for cmd in recover "install 9.1.0" rollback; do
    # shellcheck disable=SC2086
    expect_exit 2 ctl "$R" --prefix /opt/b $cmd
    one_error_line
    expect_contains "$ERR" "of the prefix /opt/a is pending"
    expect_contains "$ERR" "cudnnctl --prefix /opt/a recover"
    cmp -s "$R/var/lib/cudnnctl/journal.json" "$E2E_TMP/b20.journal" ||
      fail "\`$cmd --prefix /opt/b\` changed /opt/a's journal"
  done
  expect_not_contains "$R/var/lib/cudnnctl/history.jsonl" "journal-discarded"
  expect_eq "$(readlink "$R/opt/b/current")" generations/1 "/opt/b's current"
  expect_exit 0 cudnnctl --root "$R" --prefix /opt/b status # read-only: a warning naming it
  expect_contains "$ERR" "cudnnctl --prefix /opt/a recover"
  expect_exit 0 cudnnctl --root "$R" --prefix /opt/a recover
  python3 "$CRASH_CHECK" "$R" --prefix /opt/a --allowed none --clean >/dev/null ||
    fail "/opt/a after its recover: $(python3 "$CRASH_CHECK" "$R" --prefix /opt/a --allowed none --clean 2>&1)"
  grep -q '"undone-by-recover"' "$R/var/lib/cudnnctl/history.jsonl" ||
    fail "no undone-by-recover record for /opt/a's install"
  expect_exit 0 ctl "$R" --prefix /opt/b recover
}
rt_case b20-state c_b20_state

# ---- F15 (issue 34): one root's loader drop-in serves one prefix ----------------------------
c_f15() {
  TEST "F15: while /opt/a's build is in the loader drop-in, every mutating command of /opt/b is refused (exit 2), nothing changes"
  R=$(cr_copy empty f15)
  expect_exit 0 ctl "$R" --prefix /opt/a install 9.1.0
  tree_snapshot "$R" >"$E2E_TMP/f15.before"
  for cmd in "install 8.9.7" "use 9.1.0" rollback gc "purge --yes" "use --none" "install --dry-run 8.9.7"; do
    # shellcheck disable=SC2086
    expect_exit 2 ctl "$R" --prefix /opt/b $cmd
    one_error_line
    expect_contains "$ERR" "/etc/ld.so.conf.d/00-cudnnctl.conf names a build of the prefix /opt/a, not of /opt/b"
    expect_contains "$ERR" "run the command with \`--prefix /opt/a\`, or release that prefix first (\`cudnnctl --prefix /opt/a purge\`)"
  done
  tree_snapshot "$R" >"$E2E_TMP/f15.after"
  cmp -s "$E2E_TMP/f15.before" "$E2E_TMP/f15.after" || fail "a refused /opt/b command changed the root"
  expect_no_file "$R/opt/b"
  expect_eq "$(grep -v '^#' "$R/etc/ld.so.conf.d/00-cudnnctl.conf")" "/opt/a/store/$E91/lib" "the drop-in"
  TEST "F15: status --prefix /opt/b says the loader serves /opt/a's build"
  expect_exit 0 cudnnctl --root "$R" --prefix /opt/b status
  expect_contains "$ERR" "names a build of the prefix /opt/a, not of /opt/b: one root's loader, state and history serve one prefix: programs load that build"
  TEST "F15: the prefix's own commands work; once /opt/a is purged, /opt/b takes the loader"
  expect_exit 0 ctl "$R" --prefix /opt/a install 8.9.7
  expect_exit 0 ctl "$R" --prefix /opt/a purge --yes
  expect_exit 0 ctl "$R" --prefix /opt/b install 8.9.7
  expect_eq "$(grep -v '^#' "$R/etc/ld.so.conf.d/00-cudnnctl.conf")" "/opt/b/store/$E897/lib" "the drop-in"
  TEST "F15: a stale drop-in (its prefix removed by hand) does not hold the loader"
  R=$(cr_copy empty f15b)
  expect_exit 0 ctl "$R" --prefix /opt/a install 9.1.0
  rm -rf "$R/opt/a"
  expect_exit 0 ctl "$R" --prefix /opt/b install 8.9.7
  expect_eq "$(grep -v '^#' "$R/etc/ld.so.conf.d/00-cudnnctl.conf")" "/opt/b/store/$E897/lib" "the drop-in"
}
rt_case f15 c_f15

echo "red-team protocol cases: $N" >&2
