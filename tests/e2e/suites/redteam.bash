#!/bin/bash
# Issue 14 (an attack on the landed build): the breaks whose fixes live outside the
# transaction protocol, each a regression test that failed on main at 35418fa. The protocol
# breaks (B1, B3, B4, B6, B11, B12 and B20's shared state) are tests/e2e/suites/protocol.bash.
# Permission cases drop privileges to nobody; disk-full cases use small tmpfs mounts inside
# `unshare -m`; nothing is written outside the temporary roots. docs/RELIABILITY.md.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
source "$E2E_DIR/redteam_lib.bash"
rt_start "other owners (chown, setpriv) and private mounts"
REL=cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz

# ---- archives whose bytes match the manifest (B5, B7, B17) ----------------------------------
# variant NAME ADDMEMBERS-ARGS...: a mirror with 9.1.0 for CUDA 12 whose archive carries extra
# members (tests/fixtures/addmembers.py), the manifest fixed to match; prints its directory
VBASE=$E2E_TMP/vbase
mkrelease --mirror "$VBASE" --label 9.1.0 --version 9.1.0.70 --cuda 12 --platform linux-x86_64 \
  >/dev/null
variant() {
  local d=$E2E_TMP/variants/$1
  shift
  rm -rf "$d"
  mkdir -p "$(dirname "$d")"
  cp -a "$VBASE" "$d"
  python3 "$E2E_FIXTURES/addmembers.py" "$d/redistrib_9.1.0.json" "$REL" "$@" >"$d.json"
  echo "$d"
}
vinstall() { # ROOT MIRROR ARGS...
  local r=$1 m=$2
  shift 2
  cudnnctl --root "$r" --mirror "file://$m" --cuda 12 --platform linux-x86_64 "$@" install 9.1.0
}
# refused_archive NAME MIRROR REASON: exit 4 naming REASON, one error line, the root unchanged
# but for the lock, a "failed" history record and the verified archive in the cache
refused_archive() {
  local name=$1 m=$2 reason=$3 r sha
  TEST "$name"
  r=$(new_root)
  sha=$(json_get 'd["sha256"]' "$m.json")
  tree_snapshot "$r" >"$E2E_TMP/arch.before"
  bounded 120 --root "$r" --mirror "file://$m" --cuda 12 --platform linux-x86_64 install 9.1.0
  [ "$RC" -eq 4 ] || fail "expected exit 4, got $RC"
  one_error_line
  expect_contains "$ERR" "$reason"
  tree_snapshot "$r" >"$E2E_TMP/arch.after"
  cr_root_diff "$E2E_TMP/arch.before" "$E2E_TMP/arch.after" \
    "^(var|var/lib|var/lib/cudnnctl|var/cache|var/cache/cudnnctl|opt|opt/cudnn|opt/cudnn/store) d\$|^var/lib/cudnnctl/(lock|history\\.jsonl) f\$|^var/cache/cudnnctl/$sha\\.tar\\.xz f\$"
  cr_check "$r" --allowed none --clean --history-count 1 --record="-1:failed:install:none"
  python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' \
    "$r/var/lib/cudnnctl/history.jsonl" || fail "history is not valid JSON"
}

c_b5() {
  refused_archive "B5: a member name that is not UTF-8: exit 4, nothing left" \
    "$(variant utf8 --file $'lib/libcudnn_\xff\xfe.txt')" "not valid UTF-8"
  expect_contains "$ERR" 'libcudnn_\xff\xfe.txt'
}
rt_case b5 c_b5
c_b7_reserved() {
  refused_archive "B7: a member named .cudnnctl-entry.json: exit 4" \
    "$(variant reserved --file .cudnnctl-entry.json)" "reserved for cudnnctl"
}
rt_case b7-reserved c_b7_reserved
c_b7_deep() {
  refused_archive "B7: a 2000-level path: exit 4" "$(variant deep --deep 2000)" "directories deep"
}
rt_case b7-deep c_b7_deep
c_b17() {
  refused_archive "B17: 5000 empty files in a 13 KB archive: exit 4 (the entry cap follows the size)" \
    "$(variant many --many 5000)" "entries (the limit for an archive of its size)"
}
rt_case b17 c_b17

c_b7_implicit() {
  TEST "B7: files whose directories have no tar entry install, and verify passes at once"
  V=$(variant implicit --implicit share/doc/README.txt --implicit lib/extra/x/y.txt)
  R=$(new_root)
  expect_exit 0 vinstall "$R" "$V"
  expect_exit 0 cudnnctl --root "$R" verify
  cr_check "$R" --allowed 1 --clean --loader
  expect_file "$R/opt/cudnn/current/share/doc/README.txt"
}
rt_case b7-implicit c_b7_implicit

# ---- B18: a manifest that trickles ---------------------------------------------------------
TM=$E2E_TMP/trickle
cp -a "$VBASE" "$TM"
python3 - "$TM/redistrib_9.1.0.json" <<'EOF2'
import sys
p = sys.argv[1]
data = open(p, "rb").read()
open(p, "wb").write(data + b" " * 300000)  # still valid JSON; about 200 s at 1.5 KB/s
EOF2
start_faultserver "$E2E_TMP"
c_b18() {
  TEST "B18: a mirror that trickles the manifest at 1.5 KB/s is given up at the deadline: exit 3"
  R=$(new_root)
  cr_state_snapshot "$R" >"$E2E_TMP/snap.b18"
  local t0=$SECONDS
  run env CUDNNCTL_TEST_MANIFEST_DEADLINE=3 timeout -k 2 40 "$CUDNNCTL" --root "$R" \
    --mirror "$FS_URL/fault/trickle=1500/trickle/" --cuda 12 --platform linux-x86_64 install 9.1.0
  [ "$RC" -ne 124 ] || fail "install still waiting for the manifest after 40 s"
  expect_eq "$RC" 3 "exit status"
  [ $((SECONDS - t0)) -le 20 ] || fail "took $((SECONDS - t0)) s with a 3 s deadline"
  one_error_line
  expect_contains "$ERR" "no complete answer within 3 s"
  cr_expect_same_state "$R" "$E2E_TMP/snap.b18"
}
rt_case b18 c_b18

# ---- B13: FIFOs at the state files ---------------------------------------------------------
c_b13_journal() {
  TEST "B13: a FIFO at the journal path: status and recover answer at once; recover clears it"
  R=$(cr_copy one b13j)
  mkfifo "$R/var/lib/cudnnctl/journal.json"
  bounded 20 --root "$R" status
  expect_eq "$RC" 0 "status"
  expect_contains "$ERR" "journal.json is a FIFO, not a regular file"
  bounded 20 --root "$R" recover
  expect_eq "$RC" 0 "recover"
  expect_no_file "$R/var/lib/cudnnctl/journal.json"
  cr_check "$R" --allowed 1 --clean --loader --record="-1:journal-discarded:recover"
  bounded 60 --root "$R" --mirror "file://$CR_MIRROR" --cuda 12 install 8.9.7
  expect_eq "$RC" 0 "install after recover"
}
rt_case b13-journal c_b13_journal

c_b13_journal_install() {
  TEST "B13: a FIFO at the journal path: install (which holds the lock) does not hang"
  R=$(cr_copy one b13i)
  mkfifo "$R/var/lib/cudnnctl/journal.json"
  bounded 60 --root "$R" --mirror "file://$CR_MIRROR" --cuda 12 install 8.9.7
  expect_eq "$RC" 0 "install"
  cr_check "$R" --allowed 2 --clean --loader
}
rt_case b13-journal-install c_b13_journal_install

c_b13_history() {
  TEST "B13: a FIFO at the history path: history, status and install answer at once (exit 1 naming it)"
  R=$(cr_copy one b13h)
  rm "$R/var/lib/cudnnctl/history.jsonl"
  mkfifo "$R/var/lib/cudnnctl/history.jsonl"
  cr_state_snapshot "$R" >"$E2E_TMP/snap.b13h"
  bounded 20 --root "$R" history
  expect_eq "$RC" 1 "history"
  one_error_line
  expect_contains "$ERR" "history.jsonl is a FIFO, not a regular file"
  bounded 20 --root "$R" status
  expect_eq "$RC" 0 "status"
  bounded 60 --root "$R" --mirror "file://$CR_MIRROR" --cuda 12 install 8.9.7
  expect_eq "$RC" 1 "install"
  expect_contains "$ERR" "history.jsonl is a FIFO"
  expect_eq "$(cr_current "$R")" 1 "active generation"
  cr_expect_same_state "$R" "$E2E_TMP/snap.b13h"
  rm "$R/var/lib/cudnnctl/history.jsonl"
  expect_exit 0 cudnnctl --root "$R" recover
  cr_check "$R" --allowed 1 --clean --loader
}
rt_case b13-history c_b13_history

# ---- B14: backup without its sha256 list ---------------------------------------------------
c_b14_restore() {
  TEST "B14: restore refuses a backup without FILE.sha256 (exit 4, nothing changed)"
  R=$(cr_copy two b14)
  mkdir -p "$E2E_TMP/b14"
  expect_exit 0 cudnnctl --root "$R" backup --output "$E2E_TMP/b14/full.tar.zst"
  expect_file "$E2E_TMP/b14/full.tar.zst.sha256"
  cp "$E2E_TMP/b14/full.tar.zst" "$E2E_TMP/b14/lonely.tar.zst"
  R2=$(cr_copy one b14r)
  cr_state_snapshot "$R2" >"$E2E_TMP/snap.b14"
  expect_exit 4 cudnnctl --root "$R2" restore "$E2E_TMP/b14/lonely.tar.zst"
  one_error_line
  expect_contains "$ERR" "lonely.tar.zst.sha256"
  cr_expect_same_state "$R2" "$E2E_TMP/snap.b14"
  expect_exit 0 cudnnctl --root "$R2" restore "$E2E_TMP/b14/full.tar.zst"
}
rt_case b14-restore c_b14_restore

c_b14_disk() {
  TEST "B14: backup onto a disk that fills up: never FILE without FILE.sha256"
  if [ "$HAVE_NS" != 1 ]; then
    echo "    (no private mount namespace: left out)" >&2
    return 0
  fi
  R=$(cr_copy two b14d)
  mkdir -p "$E2E_TMP/b14d"
  expect_exit 0 cudnnctl --root "$R" backup --output "$E2E_TMP/b14d/probe.tar.zst"
  export R T=$(stat -c %s "$E2E_TMP/b14d/probe.tar.zst") B14=$E2E_TMP/b14d/mnt
  mkdir -p "$B14"
  : >"$E2E_TMP/b14d/runs"
  in_ns '
    mount -t tmpfs -o size=2m,mode=0755 tmpfs "$B14"
    pages=$(( (T + 4095) / 4096 ))
    for k in $((pages - 1)) $pages $((pages + 1)) $((pages + 2)); do
      avail=$(( $(stat -f -c "%a * %S" "$B14") ))
      head -c $((avail - k * 4096)) /dev/zero >"$B14/filler"
      rc=0
      "$CUDNNCTL" --root "$R" backup --output "$B14/k$k.tar.zst" >/dev/null 2>"$B14/../err.$k" || rc=$?
      left=$(cd "$B14" && ls -A | { grep -v "^filler$" || true; } | tr "\n" " ")
      echo "$k $rc $left" >>"$B14/../runs"
      rm -f "$B14"/k* "$B14"/.k* "$B14/filler"
    done
  '
  sed 's/^/    /' "$E2E_TMP/b14d/runs" >&2
  local sidecar_failed=0 k rc files
  while read -r k rc files; do
    if [ "$rc" != 0 ]; then
      [ -z "$files" ] || fail "failed backup (free $k pages) left: $files"
      grep -q "No space left on device" "$E2E_TMP/b14d/err.$k" ||
        fail "no ENOSPC message: $(cat "$E2E_TMP/b14d/err.$k")"
      ! grep -q '\.sha256' "$E2E_TMP/b14d/err.$k" || sidecar_failed=1
    else
      [ "$files" = "k$k.tar.zst k$k.tar.zst.sha256" ] || fail "backup ok, but it left: $files"
    fi
  done <"$E2E_TMP/b14d/runs"
  expect_eq "$sidecar_failed" 1 "a run where only the sha256 list did not fit"
}
rt_case b14-disk c_b14_disk

# ---- B2: configuration others can write -------------------------------------------------------
EVIL=$E2E_TMP/evil
mkrelease --mirror "$EVIL" --label 9.14.0 --version 9.14.0.64 --cuda 12 --platform linux-x86_64 \
  >/dev/null
chmod -R a+rX "$EVIL"
c_b2_dirs() {
  TEST "B2: world-writable /etc/cudnnctl and pins.d: nobody's config and pin are refused (exit 1 naming path and owner)"
  R=$(cr_copy empty b2)
  chmod 0777 "$R/etc/cudnnctl" "$R/etc/cudnnctl/pins.d"
  as_nobody sh -c "printf 'mirrors = [\"file://%s\"]\nrequire_pin = true\n' '$EVIL' >'$R/etc/cudnnctl/config.toml'"
  as_nobody sh -c "cd '$EVIL' && sha256sum redistrib_9.14.0.json >'$R/etc/cudnnctl/pins.d/evil.sha256'"
  cr_state_snapshot "$R" >"$E2E_TMP/snap.b2"
  expect_exit 1 cudnnctl --root "$R" --cuda 12 --platform linux-x86_64 install 9.14.0
  one_error_line
  expect_contains "$ERR" "$R/etc/cudnnctl is writable by other users (mode 0777"
  expect_no_file "$R/opt/cudnn/current"
  cr_expect_same_state "$R" "$E2E_TMP/snap.b2"
}
rt_case b2-dirs c_b2_dirs

c_b2_config() {
  TEST "B2: a config owned by another user in root's directory: refused for every command"
  R=$(cr_copy one b2o)
  printf 'require_pin = true\n' >"$R/etc/cudnnctl/config.toml"
  chown nobody "$R/etc/cudnnctl/config.toml"
  expect_exit 1 cudnnctl --root "$R" status
  one_error_line
  expect_contains "$ERR" "config.toml is owned by another user (nobody"
  chown root "$R/etc/cudnnctl/config.toml"
  chmod 0666 "$R/etc/cudnnctl/config.toml"
  expect_exit 1 cudnnctl --root "$R" status
  expect_contains "$ERR" "config.toml is writable by other users (mode 0666"
  chmod 0644 "$R/etc/cudnnctl/config.toml"
  expect_exit 0 cudnnctl --root "$R" status
}
rt_case b2-config c_b2_config

c_b2_pin() {
  TEST "B2: a pin file another user can write: install refused"
  R=$(cr_copy one b2p)
  chmod 0666 "$R/etc/cudnnctl/pins.d/test-mirror.sha256"
  expect_exit 1 ctl "$R" install 8.9.7
  expect_contains "$ERR" "test-mirror.sha256 is writable by other users"
  expect_eq "$(cr_current "$R")" 1 "active generation"
}
rt_case b2-pin c_b2_pin

# ---- B8, B10: ownership inside the prefix, symlinks on the way ----------------------------
c_b8() {
  TEST "B8: store/ or generations/ writable by others: refused (exit 1), nothing changed"
  for d in store generations; do
    R=$(cr_copy one "b8.$d")
    chmod 0777 "$R/opt/cudnn/$d"
    cr_state_snapshot "$R" >"$E2E_TMP/snap.b8"
    expect_exit 1 ctl "$R" install 8.9.7
    one_error_line
    expect_contains "$ERR" "$R/opt/cudnn/$d is writable by other users (mode 0777"
    cr_expect_same_state "$R" "$E2E_TMP/snap.b8"
  done
  R=$(cr_copy two b8.entry)
  chown nobody "$R/opt/cudnn/store/$E91"
  expect_exit 1 ctl "$R" use 9.1.0
  expect_contains "$ERR" "store/$E91 is owned by another user (nobody"
}
rt_case b8 c_b8

c_b10_root() {
  TEST "B10: a symlinked --root is not refused"
  R=$(cr_copy one b10r)
  ln -s "$R" "$E2E_TMP/b10-alias"
  expect_exit 0 ctl "$E2E_TMP/b10-alias" install 8.9.7
  cr_check "$R" --allowed 2 --clean --loader
}
rt_case b10-root c_b10_root

c_b10_prefix() {
  TEST "B10: a root-owned symlink on the prefix's way (opt -> data/opt) is judged by its target"
  R=$(cr_copy one b10p)
  mkdir -p "$R/data"
  mv "$R/opt" "$R/data/opt"
  ln -s data/opt "$R/opt"
  expect_exit 0 ctl "$R" install 8.9.7
  cr_check "$R" --allowed 2 --clean --loader
  chmod 0777 "$R/data/opt"
  expect_exit 1 ctl "$R" use 9.1.0
  one_error_line
  expect_contains "$ERR" "$R/data/opt (reached through the symlink $R/opt -> data/opt) is writable by other users (mode 0777"
}
rt_case b10-prefix c_b10_prefix

# ---- B19: an absolute symlink at <root>/etc ------------------------------------------------
c_b19() {
  TEST "B19: <root>/etc -> an absolute path: the drop-in is written inside the root, never outside"
  R=$(cr_copy one b19)
  OUTSIDE=$E2E_TMP/outside
  mkdir -p "$OUTSIDE" "$R$OUTSIDE"
  cp -a "$R/etc" "$OUTSIDE/etc"      # what the host (or another image) has there
  cp -a "$R/etc" "$R$OUTSIDE/etc"    # what the image itself sees at that path
  rm -rf "$R/etc"
  ln -s "$OUTSIDE/etc" "$R/etc"
  tree_snapshot "$OUTSIDE" >"$E2E_TMP/outside.before"
  # The configuration directory is a file cudnnctl trusts: where the host path and the path
  # inside the root lead to different directories, it is refused before anything is written
  # (issue 34, F5), and nothing changes inside the root or outside it.
  if [ -d "$R$OUTSIDE/etc/cudnnctl" ]; then
    tree_snapshot "$R" >"$E2E_TMP/root.before"
    expect_exit 1 "$CUDNNCTL" --root "$R" --mirror "file://$CR_MIRROR" --cuda 12 install 8.9.7
    expect_contains "$ERR" "refusing to use the configuration directory $R/etc/cudnnctl: on this host it leads to $OUTSIDE/etc/cudnnctl"
    tree_snapshot "$R" >"$E2E_TMP/root.after"
    cmp -s "$E2E_TMP/root.before" "$E2E_TMP/root.after" || fail "the refused install changed the root"
    cmp -s "$E2E_TMP/outside.before" "$(tree_snapshot "$OUTSIDE" >"$E2E_TMP/outside.mid"; echo "$E2E_TMP/outside.mid")" ||
      fail "the refused install wrote outside the root"
    # Without a configuration directory there is nothing to disagree on: the root's own paths.
    rm -rf "$R$OUTSIDE/etc/cudnnctl" "$OUTSIDE/etc/cudnnctl"
    tree_snapshot "$OUTSIDE" >"$E2E_TMP/outside.before"
  fi
  expect_exit 86 env CUDNNCTL_TEST_CRASH_AT=mid-integration "$CUDNNCTL" --root "$R" \
    --mirror "file://$CR_MIRROR" --cuda 12 install 8.9.7
  tree_snapshot "$OUTSIDE" >"$E2E_TMP/outside.after"
  cmp -s "$E2E_TMP/outside.before" "$E2E_TMP/outside.after" ||
    fail "written outside the root: $(diff "$E2E_TMP/outside.before" "$E2E_TMP/outside.after")"
  expect_contains "$R$OUTSIDE/etc/ld.so.conf.d/00-cudnnctl.conf" "/opt/cudnn/store/$E897/lib"
  expect_exit 0 cudnnctl --root "$R" recover
  expect_exit 0 ctl "$R" use 9.1.0
  tree_snapshot "$OUTSIDE" >"$E2E_TMP/outside.after"
  cmp -s "$E2E_TMP/outside.before" "$E2E_TMP/outside.after" || fail "written outside the root"
  expect_contains "$R$OUTSIDE/etc/ld.so.conf.d/00-cudnnctl.conf" "/opt/cudnn/store/$E91/lib"
  ldconfig -r "$R" -p | grep -q "libcudnn.so.9 .*/opt/cudnn/store/$E91/lib/" ||
    fail "the root's loader does not resolve libcudnn.so.9 into the active entry"
}
rt_case b19 c_b19

# ---- B20, B21: placement of --prefix, --root that is not a directory -------------------------
c_b20() {
  TEST "B20: a --prefix inside another prefix's store, its entry, or cudnnctl's own directories: exit 2"
  R=$(cr_copy one b20)
  for p in "/opt/cudnn/store/$E91/nested" /opt/cudnn/store/x /opt/cudnn/generations/p \
    /var/lib/cudnnctl/p /var/cache/cudnnctl /etc/cudnnctl/p /var /; do
    tree_snapshot "$R" >"$E2E_TMP/b20.before"
    expect_exit 2 ctl "$R" --prefix "$p" install 8.9.7
    one_error_line
    expect_contains "$ERR" "--prefix $p "
    tree_snapshot "$R" >"$E2E_TMP/b20.after"
    cmp -s "$E2E_TMP/b20.before" "$E2E_TMP/b20.after" || fail "--prefix $p changed the root"
  done
  # A prefix of its own passes placement, and is refused because /opt/cudnn's build holds the
  # loader drop-in (issue 34, F15; protocol.bash c_f15)
  expect_exit 2 ctl "$R" --prefix /opt/other install 8.9.7
  expect_contains "$ERR" "names a build of the prefix /opt/cudnn, not of /opt/other"
}
rt_case b20 c_b20

c_b21_root() {
  TEST "B21: --root naming a file or nothing: exit 2 saying so"
  touch "$E2E_TMP/a-file"
  expect_exit 2 cudnnctl --root "$E2E_TMP/a-file" status
  one_error_line
  expect_contains "$ERR" "--root $E2E_TMP/a-file is not a directory"
  expect_exit 2 cudnnctl --root "$E2E_TMP/a-file" --mirror "file://$CR_MIRROR" --cuda 12 install 9.1.0
  expect_contains "$ERR" "is not a directory"
  expect_exit 2 cudnnctl --root "$E2E_TMP/no-such-root" status
  expect_contains "$ERR" "--root $E2E_TMP/no-such-root does not exist"
  expect_exit 2 cudnnctl --root "$E2E_TMP/a-file" --json status
  expect_json 'd["error"]["code"]' usage
}
rt_case b21-root c_b21_root

c_b21_adopt() {
  TEST "B21: adopt's refusal for lack of space states the margin it requires"
  if [ "$HAVE_NS" != 1 ]; then
    echo "    (no private mount namespace: left out)" >&2
    return 0
  fi
  R=$(new_root)
  mkdir -p "$R/usr/local/cuda/include" "$R/usr/local/cuda/lib64" "$R/opt/cudnn/store" \
    "$R/var/lib/cudnnctl/backups"
  echo '#define CUDART_VERSION 12040' >"$R/usr/local/cuda/include/cuda_runtime_api.h"
  tar -xf "$(ls "$CR_MIRROR"/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz)" \
    -C "$E2E_TMP" --one-top-level=b21rel --strip-components=1
  cp -P "$E2E_TMP"/b21rel/include/cudnn*.h "$R/usr/local/cuda/include/"
  cp -P "$E2E_TMP"/b21rel/lib/libcudnn*.so* "$R/usr/local/cuda/lib64/"
  export R
  in_ns '
    ns_tmpfs "$R" 16m
    rc=0
    "$CUDNNCTL" --root "$R" adopt >"$R.out" 2>"$R.err" || rc=$?
    echo $rc >"$R.rc"
  '
  expect_eq "$(cat "$R.rc")" 1 "adopt on a 16 MiB filesystem ($(cat "$R.err"))"
  grep -q "not enough free space to adopt" "$R.err" || fail "no space message: $(cat "$R.err")"
  grep -q "margin of 64.0 MiB" "$R.err" || fail "the message omits the 64 MiB margin: $(cat "$R.err")"
}
rt_case b21-adopt c_b21_adopt

# ---- B9, B16: mirror --to a directory others can write; temporaries it leaves ---------------
mirror_to() { # DIR ARGS...
  local d=$1
  shift
  cudnnctl --root "$EMPTY" --mirror "file://$CR_MIRROR" --cuda 12 --platform linux-x86_64 "$@" \
    mirror 9.1.0 --to "$d"
}
EMPTY=$(cr_copy empty mirror-root)
c_b9_symlink() {
  TEST "B9: mirror --to a 1777 directory: a symlink another user planted there is refused, never followed"
  PUB=$E2E_TMP/pub
  VICTIM=$E2E_TMP/victim
  mkdir -p "$VICTIM"
  mkdir -m 1777 "$PUB"
  as_nobody ln -s "$VICTIM" "$PUB/cudnn"
  expect_exit 1 mirror_to "$PUB"
  one_error_line
  expect_contains "$ERR" "$PUB/cudnn is a symlink owned by another user (nobody"
  expect_eq "$(ls -A "$VICTIM")" "" "the victim directory"
  expect_no_file "$PUB/redistrib_9.1.0.json"
}
rt_case b9-symlink c_b9_symlink

c_b9_workdir() {
  TEST "B9: mirror --to a 1777 directory: a work directory another user made is refused"
  PUB2=$E2E_TMP/pub2
  mkdir -m 1777 "$PUB2"
  as_nobody mkdir -m 0777 "$PUB2/.cudnnctl"
  expect_exit 1 mirror_to "$PUB2"
  expect_contains "$ERR" "$PUB2/.cudnnctl is owned by another user (nobody"
  expect_eq "$(ls -A "$PUB2/.cudnnctl")" "" "nobody's work directory"
  rm -rf "$PUB2/.cudnnctl"
  expect_exit 0 mirror_to "$PUB2"
  expect_file "$PUB2/redistrib_9.1.0.json"
  expect_eq "$(stat -c '%U %a' "$PUB2/cudnn" "$PUB2/.cudnnctl" | sort -u)" "root 755" \
    "owner and mode of the directories mirror made"
}
rt_case b9-workdir c_b9_workdir

c_b16_sweep() {
  TEST "B16: temporaries a killed mirror left beside the manifests are swept by the next mirror"
  D=$E2E_TMP/served
  expect_exit 0 mirror_to "$D"
  echo partial >"$D/.redistrib_9.1.0.json.tmp.0123456789ab"
  echo partial >"$D/.cudnnctl-pins.sha256.tmp.ba9876543210"
  expect_exit 0 mirror_to "$D"
  expect_no_file "$D/.redistrib_9.1.0.json.tmp.0123456789ab"
  expect_no_file "$D/.cudnnctl-pins.sha256.tmp.ba9876543210"
}
rt_case b16-sweep c_b16_sweep

c_b16_crash() {
  TEST "B16: a mirror killed while publishing a manifest leaves nothing the web server offers"
  D=$E2E_TMP/served2
  expect_exit 86 env CUDNNCTL_TEST_CRASH_AT=mirror-before-publish "$CUDNNCTL" --root "$EMPTY" \
    --mirror "file://$CR_MIRROR" --cuda 12 --platform linux-x86_64 mirror 9.1.0 --to "$D"
  left=$(find "$D" -path "$D/.cudnnctl" -prune -o -name '*.tmp.*' -print)
  [ -z "$left" ] || fail "served directory holds temporaries: $left"
  expect_no_file "$D/redistrib_9.1.0.json"
  expect_exit 0 mirror_to "$D"
  expect_file "$D/redistrib_9.1.0.json"
  expect_eq "$(ls -A "$D/.cudnnctl/tmp")" "" "work temporaries after the next mirror"
}
rt_case b16-crash c_b16_crash

# ---- B15: signals ----------------------------------------------------------------------------
# paused_install ROOT FIFO: an install paused before the switch (journal written, lock held);
# sets PID
paused_install() {
  env --default-signal=INT,TERM,HUP CUDNNCTL_TEST_PAUSE_AT="before-switch:$2" "$CUDNNCTL" \
    --root "$1" --mirror "file://$CR_MIRROR" --cuda 12 install 8.9.7 >"$E2E_TMP/sig.out" \
    2>"$E2E_TMP/sig.err" &
  PID=$!
  _CR_FS_PIDS+=("$PID")
  local i
  for i in $(seq 200); do
    grep -q "pid $PID:" "$1/var/lib/cudnnctl/lock" 2>/dev/null &&
      [ -f "$1/var/lib/cudnnctl/journal.json" ] && return 0
    sleep 0.05
  done
  fail "the paused install did not reach the pause"
}
# wait_signaled PID WANT_RC: the process ends within 10 s with WANT_RC
wait_signaled() {
  local i rc=0
  for i in $(seq 100); do
    kill -0 "$1" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$1" 2>/dev/null; then
    kill -9 "$1"
    wait "$1" 2>/dev/null || true
    fail "the signal did not end the command"
  fi
  wait "$1" || rc=$?
  expect_eq "$rc" "$2" "exit status"
}
c_b15_signal() {
  local sig=$1 want
  TEST "B15: SIG$sig in the middle of install: one line says what is left and that the next command finishes it"
  R=$(cr_copy one "b15.$sig")
  mkfifo "$E2E_TMP/b15.$sig.fifo"
  paused_install "$R" "$E2E_TMP/b15.$sig.fifo"
  kill -"$sig" "$PID"
  case $sig in TERM) want=143 ;; INT) want=130 ;; HUP) want=129 ;; esac
  wait_signaled "$PID" "$want"
  expect_eq "$(grep -c '^cudnnctl: interrupted' "$E2E_TMP/sig.err")" 1 \
    "interruption lines on stderr: $(cat "$E2E_TMP/sig.err")"
  grep -q "^cudnnctl: interrupted by SIG$sig; a transaction is unfinished ($R/var/lib/cudnnctl/journal.json): cuDNN is at the old or the new generation, never a mix, and the next mutating cudnnctl command (or \`cudnnctl recover\`) finishes or undoes it\$" \
    "$E2E_TMP/sig.err" || fail "message: $(cat "$E2E_TMP/sig.err")"
  cr_check "$R" --allowed 1
  expect_exit 0 cudnnctl --root "$R" recover
  cr_check "$R" --allowed 1 --clean --loader --record="-1:undone-by-recover:install:1"
}
c_b15_term() { c_b15_signal TERM; }
c_b15_int() { c_b15_signal INT; }
c_b15_hup() { c_b15_signal HUP; }
rt_case b15-term c_b15_term
rt_case b15-int c_b15_int
rt_case b15-hup c_b15_hup

c_b15_none() {
  TEST "B15: SIGINT before any transaction (a slow manifest): one line says nothing was in progress"
  R=$(cr_copy empty b15.none)
  cr_state_snapshot "$R" >"$E2E_TMP/snap.b15"
  env --default-signal=INT "$CUDNNCTL" --root "$R" --mirror "$FS_URL/fault/trickle=1500/trickle/" \
    --cuda 12 --platform linux-x86_64 install 9.1.0 >"$E2E_TMP/sig.out" 2>"$E2E_TMP/sig.err" &
  PID=$!
  _CR_FS_PIDS+=("$PID")
  sleep 1.5
  kill -INT "$PID"
  wait_signaled "$PID" 130
  grep -q "^cudnnctl: interrupted by SIGINT; no transaction was in progress: the installed and active cuDNN are as they were\$" \
    "$E2E_TMP/sig.err" || fail "message: $(cat "$E2E_TMP/sig.err")"
  cr_expect_same_state "$R" "$E2E_TMP/snap.b15"
}
rt_case b15-none c_b15_none

c_b15_early() {
  TEST "F16: SIGINT and SIGHUP in a command's first instant (before its options are read): the one line, the signal's status"
  local sig code fifo
  for sig in INT HUP; do
    code=$([ "$sig" = INT ] && echo 130 || echo 129)
    R=$(cr_copy empty "b15.early.$sig")
    cr_state_snapshot "$R" >"$E2E_TMP/snap.b15e"
    fifo=$E2E_TMP/early.$sig.fifo
    mkfifo "$fifo"
    exec 8<>"$fifo"
    env --default-signal=INT,HUP CUDNNCTL_TEST_PAUSE_AT="startup:$fifo" "$CUDNNCTL" --root "$R" \
      --mirror "file://$CR_MIRROR" --cuda 12 install 9.1.0 >"$E2E_TMP/sig.out" 2>"$E2E_TMP/sig.err" 8>&- &
    PID=$!
    for _ in $(seq 200); do [ -e "$fifo.reached" ] && break; sleep 0.05; done
    [ -e "$fifo.reached" ] || fail "the command never reached its first instant: $(cat "$E2E_TMP/sig.err")"
    kill -"$sig" "$PID"
    wait_signaled "$PID" "$code"
    exec 8>&-
    rm -f "$fifo" "$fifo.reached"
    grep -q "^cudnnctl: interrupted by SIG$sig; no transaction was in progress: the installed and active cuDNN are as they were\$" \
      "$E2E_TMP/sig.err" || fail "SIG$sig in the first instant: $(cat "$E2E_TMP/sig.err")"
    cr_expect_same_state "$R" "$E2E_TMP/snap.b15e"
  done
}
rt_case b15-early c_b15_early

echo "red-team cases: $N" >&2
