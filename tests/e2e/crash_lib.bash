# Helpers for the reliability suites (crash, failat, statefix, resources...). Source after
# lib.bash:
#   source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
#   source "$E2E_DIR/crash_lib.bash"
# The invariant itself lives in crash_check.py (reads the on-disk layout on its own, so a
# bug in cudnnctl's readers cannot hide a bug in its writers). docs/RELIABILITY.md.

[ -z "${_E2E_CRASH_LIB_LOADED:-}" ] || return 0
_E2E_CRASH_LIB_LOADED=1

CRASH_CHECK=$E2E_DIR/crash_check.py
CR_MIRROR=""
CR_TPL=$E2E_TMP/tpl

# cr_mirror: the standard mirror (built once per suite); sets CR_MIRROR.
cr_mirror() {
  [ -n "$CR_MIRROR" ] || CR_MIRROR=$(std_mirror)
}

# cr_pin ROOT: pin the standard mirror's manifests under ROOT (no "not pinned" warnings).
cr_pin() {
  mkdir -p "$1/etc/cudnnctl/pins.d"
  cp "$CR_MIRROR/SHA256SUMS" "$1/etc/cudnnctl/pins.d/test-mirror.sha256"
}

# ctl ROOT ARGS...: cudnnctl on ROOT with the standard file:// mirror and CUDA 12.
ctl() {
  local r=$1
  shift
  cudnnctl --root "$r" --mirror "file://$CR_MIRROR" --cuda 12 "$@"
}

# cr_templates: build the template roots once per suite, under $CR_TPL:
#   empty  nothing installed
#   one    9.1.0 active as generation 1
#   two    9.1.0 = gen 1, 8.9.7 = gen 2 (active)
#   three  9.1.0 = gen 1, 8.9.7 = gen 2, 9.27.0 = gen 3 (active)
cr_templates() {
  cr_mirror
  [ -d "$CR_TPL/three" ] && return 0
  mkdir -p "$CR_TPL"
  local r
  r=$(new_root)
  cr_pin "$r"
  mv "$r" "$CR_TPL/empty"
  cp -a "$CR_TPL/empty" "$CR_TPL/one"
  _cr_ok ctl "$CR_TPL/one" install 9.1.0
  cp -a "$CR_TPL/one" "$CR_TPL/two"
  _cr_ok ctl "$CR_TPL/two" install 8.9.7
  cp -a "$CR_TPL/two" "$CR_TPL/three"
  _cr_ok ctl "$CR_TPL/three" install 9.27.0
  for r in empty one two three; do
    cr_check "$CR_TPL/$r" --clean --loader
  done
}
_cr_ok() {
  run "$@"
  [ "$RC" -eq 0 ] || fail "template setup failed: $*"
}

# cr_copy TEMPLATE NAME: a fresh copy of a template root; prints its path.
cr_copy() {
  local d=$E2E_TMP/case.$2
  rm -rf "$d"
  cp -a "$CR_TPL/$1" "$d"
  echo "$d"
}

# cr_current ROOT: the active generation number, or "none".
cr_current() {
  local t
  t=$(readlink "$1/opt/cudnn/current" 2>/dev/null) || { echo none; return 0; }
  echo "${t#generations/}"
}

# cr_hist_count ROOT: number of history records.
cr_hist_count() {
  local f=$1/var/lib/cudnnctl/history.jsonl
  if [ -f "$f" ]; then grep -c . "$f" || true; else echo 0; fi
}

# cr_check ROOT [crash_check.py options]: assert the invariant; sets CR_STATE to the active
# generation (or "none").
cr_check() {
  local out rc=0
  out=$(python3 "$CRASH_CHECK" "$@" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "invariant violated on $1 ($*):
$out"
  fi
  CR_STATE=${out##*current=}
}

# cr_state_snapshot ROOT > FILE: what a failed command must leave exactly as it was: the
# prefix, the loader drop-in directory, the state directory, pins/config. What may change:
# history.jsonl (the failure is recorded) and the lock file (created, holder line), and
# the directories themselves may be created on a first run (the state directory, the
# prefix with its empty store/ and generations/): the skeleton, never a file in it.
cr_state_snapshot() {
  python3 - "$1" <<'PYEOF'
import hashlib, os, re, stat, sys
root = sys.argv[1]
skip = re.compile(r"^(history\.jsonl|lock) |^(\.|store|generations) d ")
def line(rel, p):
    st = os.lstat(p)
    m = st.st_mode
    kind = ("d" if stat.S_ISDIR(m) else "l" if stat.S_ISLNK(m) else "f" if stat.S_ISREG(m) else "o")
    extra, size = "-", "-"
    if kind == "f":
        extra, size = hashlib.sha256(open(p, "rb").read()).hexdigest(), str(st.st_size)
    elif kind == "l":
        extra = "->" + os.readlink(p)
    return "%s %s %04o %d:%d %s %s" % (rel, kind, stat.S_IMODE(m), st.st_uid, st.st_gid, size, extra)
for d in ("opt/cudnn", "etc/ld.so.conf.d", "etc/cudnnctl", "var/lib/cudnnctl"):
    print("== " + d)
    top = os.path.join(root, d)
    if not os.path.isdir(top):
        continue
    rows = [line(".", top)]
    for base, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(base, n)
            rows.append(line(os.path.relpath(p, top), p))
    for r in sorted(rows):
        if not skip.search(r):
            print(r)
PYEOF
}

# cr_expect_same_state ROOT BEFORE_FILE: the state snapshot equals BEFORE_FILE.
cr_expect_same_state() {
  cr_state_snapshot "$1" >"$2.after"
  cmp -s "$2" "$2.after" || fail "the system changed:
$(diff "$2" "$2.after" | head -40)"
}

# cr_expect_status_readable ROOT: `status` and `status --json` work (exit 0, ok true) on an
# interrupted state, and create nothing.
cr_expect_status_readable() {
  local r=$1 before
  before=$(find "$r" -printf '%P %y\n' | LC_ALL=C sort | md5sum)
  expect_exit 0 cudnnctl --root "$r" status --json
  expect_contains "$OUT" '"ok": true'
  expect_exit 0 cudnnctl --root "$r" status
  expect_eq "$(find "$r" -printf '%P %y\n' | LC_ALL=C sort | md5sum)" "$before" \
    "status (read-only) created or removed something"
}

# cr_expect_verify ROOT: `cudnnctl verify` passes when a generation is active.
cr_expect_verify() {
  [ "$(cr_current "$1")" = none ] && return 0
  expect_exit 0 cudnnctl --root "$1" verify
}

# crash_case ID TEMPLATE STEP OLD NEW RESULT_OLD RESULT_NEW NEXT CMD...
#   Run `cudnnctl --root R CMD...` (through ctl) on a copy of TEMPLATE with
#   CUDNNCTL_TEST_CRASH_AT=STEP: it must _exit(86) at STEP. Then:
#   - at once: current is OLD or NEW, every published entry complete, `status` readable,
#     `verify` passes;
#   - NEXT: "recover" runs `cudnnctl recover`; "rerun" runs CMD again (it recovers first);
#   - after NEXT: the full invariant (clean, loader, verify), and history holds one record
#     for the interrupted command: RESULT_OLD if it ended at OLD, RESULT_NEW at NEW ("-" when
#     that state is not allowed), from OLD (to NEW where a generation was made);
#   - for "rerun": the state is NEW at the end, with the rerun's own record when it had
#     work left.
#   Extra environment for the crashing command: $CR_ENV (e.g. CUDNNCTL_TEST_FAIL_AT=...).
#   Sets CR_SEEN to the state seen right after the crash.
crash_case() {
  local id=$1 tpl=$2 step=$3 old=$4 new=$5 res_old=$6 res_new=$7 next=$8
  shift 8
  local r allowed hist0 hist1 expect_res cmdname
  TEST "crash $id at $step"
  r=$(cr_copy "$tpl" "$id.$step")
  cmdname=$1
  allowed=$old
  [ "$res_old" = - ] && allowed=""
  if [ "$res_new" != - ]; then allowed=${allowed:+$allowed,}$new; fi
  hist0=$(cr_hist_count "$r")
  # shellcheck disable=SC2086
  expect_exit 86 env ${CR_ENV:-} CUDNNCTL_TEST_CRASH_AT="$step" "$CUDNNCTL" --root "$r" \
    --mirror "file://$CR_MIRROR" --cuda 12 "$@"
  expect_contains "$ERR" "test hook: crashing at $step"
  cr_check "$r" --allowed "$allowed"
  CR_SEEN=$CR_STATE
  cr_expect_status_readable "$r"
  cr_expect_verify "$r"
  local hist_args=()
  if [ "$next" = recover ]; then
    [ "$CR_SEEN" = "$old" ] && expect_res=$res_old || expect_res=$res_new
    [ "$old" != "$new" ] || expect_res=$res_new
    hist_args=(--allowed "$allowed" --history-count $((hist0 + 1))
      --record="-1:$expect_res:$cmdname:$old:$([ "$CR_SEEN" = "$new" ] && echo "$new" || echo "none|$new")")
    expect_exit 0 cudnnctl --root "$r" recover
  elif [ "$next" = rerun ]; then
    # the interrupted command's record, then the rerun's own record when recovery had
    # undone the work (none when recovery finished it: the rerun is then a no-op)
    if [ "$CR_SEEN" = "$old" ] && [ "$old" != "$new" ]; then
      hist_args=(--history-count $((hist0 + 2)) --record="-2:$res_old:$cmdname:$old"
        --record="-1:ok:$cmdname:$old")
    else
      hist_args=(--allowed "$new" --history-count $((hist0 + 1)) --record="-1:$res_new:$cmdname:$old:$new")
    fi
    expect_exit 0 ctl "$r" "$@"
  else
    fail "crash_case: bad NEXT $next"
  fi
  cr_check "$r" --clean --loader "${hist_args[@]}"
  [ "$CR_STATE" != "$old" ] || [ "$old" = "$new" ] || [ "$next" = recover ] ||
    fail "the rerun did not reach the new state"
  cr_expect_verify "$r"
  CR_ROOT=$r
}

# ---- fault server (tests/fixtures/faultserver.py) ------------------------------------------
_CR_FS_PIDS=()
_cr_stop_servers() {
  local p
  for p in "${_CR_FS_PIDS[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  _CR_FS_PIDS=()
  if declare -F stop_tls_nginx >/dev/null; then stop_tls_nginx; fi
}
# lib.bash owns the EXIT trap: stop our servers first, then hand it the original status.
trap '_cr_rc=$?; set +eE; trap - ERR; _cr_stop_servers; (exit $_cr_rc); _e2e_on_exit' EXIT

# start_faultserver DIR: serve DIR with faultserver.py on 127.0.0.1; sets FS_URL
# (http://127.0.0.1:PORT), FS_LOG (the request log), FS_PID. Call directly, not in $(...).
start_faultserver() {
  local d i
  d=$(mktemp -d "$E2E_TMP/fs.XXXXXX")
  python3 "$E2E_FIXTURES/faultserver.py" --root "$1" --port-file "$d/port" --log "$d/log" \
    </dev/null >"$d/out" 2>&1 &
  FS_PID=$!
  _CR_FS_PIDS+=("$FS_PID")
  for i in $(seq 200); do
    [ -s "$d/port" ] && break
    kill -0 "$FS_PID" 2>/dev/null || fail "faultserver did not start: $(cat "$d/out")"
    sleep 0.05
  done
  [ -s "$d/port" ] || fail "faultserver did not write its port"
  FS_URL=http://127.0.0.1:$(cat "$d/port")
  FS_LOG=$d/log
}

# fs_log_has REGEX: the fault server's log has a matching line (polled for up to 2 s, since
# the server writes a line when the response ends).
fs_log_has() {
  local i
  for i in $(seq 40); do
    grep -qE -- "$1" "$FS_LOG" 2>/dev/null && return 0
    sleep 0.05
  done
  fail "the server log has no line matching '$1':
$(cut -c1-200 "$FS_LOG")"
}

# cr_root_diff BEFORE AFTER ALLOWED_REGEX: BEFORE and AFTER are tree_snapshot outputs of
# the same root; every line that differs must be a line of AFTER (something new) whose
# path matches ALLOWED_REGEX (an ERE over "PATH TYPE"); nothing may change or disappear.
cr_root_diff() {
  local extra missing
  missing=$(LC_ALL=C comm -23 <(LC_ALL=C sort "$1") <(LC_ALL=C sort "$2"))
  [ -z "$missing" ] || fail "changed or removed under the root:
$missing"
  extra=$(LC_ALL=C comm -13 <(LC_ALL=C sort "$1") <(LC_ALL=C sort "$2") |
    awk '{print $1 " " $2}' | grep -Ev -- "$3" || true)
  [ -z "$extra" ] || fail "created under the root, and not allowed:
$extra"
}
