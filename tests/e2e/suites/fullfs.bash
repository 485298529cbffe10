#!/bin/bash
# A real full filesystem at every step of adopt (issue 34, F1): the root lives on a small
# tmpfs in a private mount namespace; the command is paused at a fault hook
# (CUDNNCTL_TEST_PAUSE_AT), the filesystem is filled to 0 bytes free, the command goes on.
# Whatever it exits with, every original hand-installed file must still read its original
# bytes at its path, then and after the space is freed and `cudnnctl recover` ran (which must
# succeed). docs/RELIABILITY.md "Full disk during adopt".
if [ -z "${_FULLFS_NS:-}" ] && [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
  exec unshare -m env _FULLFS_NS=1 bash --norc --noprofile "$0" "$@"
fi
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
source "$E2E_FIXTURES/adopt/handmade.bash"
require_cudnnctl
[ -n "${_FULLFS_NS:-}" ] || skip "needs root and a private mount namespace (unshare -m)"
mount --make-rprivate /
MOUNTS=()
_ff_umount() {
  local m
  for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap '_ff_rc=$?; _ff_umount; (exit $_ff_rc); _e2e_on_exit' EXIT

cr_mirror
R9=$(release_dir 9.1.0 12)
N=0

# onto_tmpfs DIR OPTS: DIR's content moved onto a tmpfs mounted there with OPTS (unmounted on
# exit). Not in $(...): it records the mount.
onto_tmpfs() {
  cp -a "$1" "$1.seed"
  mount -t tmpfs -o "$2,mode=0755" tmpfs "$1"
  MOUNTS+=("$1")
  cp -a "$1.seed/." "$1/"
  rm -rf "$1.seed"
}

# fill ROOT: fill ROOT's filesystem to 0 bytes free (big blocks, then small ones).
fill() {
  dd if=/dev/zero of="$1/.filler1" bs=1M status=none 2>/dev/null || true
  dd if=/dev/zero of="$1/.filler2" bs=4k status=none 2>/dev/null || true
  dd if=/dev/zero of="$1/.filler3" bs=512 status=none 2>/dev/null || true
}
unfill() { rm -f "$1"/.filler[123]; }

# paused_full ROOT STEP CMD...: run `cudnnctl --root ROOT CMD...` paused at STEP, fill the
# filesystem there, let it go on; sets RC, OUT, ERR. Fails when STEP is never reached.
paused_full() {
  local r=$1 step=$2 fifo pid i
  shift 2
  fifo=$E2E_TMP/fifo.$RANDOM
  mkfifo "$fifo"
  exec 7<>"$fifo"
  # fd 7 is not the child's: only <fifo>.reached says that it is at the step (an inherited fd
  # on the FIFO was taken for that, and the disk was filled before the step).
  CUDNNCTL_TEST_PAUSE_AT="$step:$fifo" "$CUDNNCTL" --root "$r" --mirror "file://$CR_MIRROR" \
    --cuda 12 "$@" >"$OUT" 2>"$ERR" 7>&- &
  pid=$!
  for i in $(seq 1200); do
    [ -e "$fifo.reached" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  [ -e "$fifo.reached" ] || { wait "$pid" || true; fail "$step was never reached: $(cat "$ERR")"; }
  "${FILL:-fill}" "$r"
  echo go >&7
  RC=0
  wait "$pid" || RC=$?
  exec 7>&-
  rm -f "$fifo" "$fifo.reached"
}

# full_case STEP CMD...: adopt (or CMD) on a full filesystem at STEP; the originals survive,
# the exit is 0 (done), 1 (nothing changed) or 5 (rolled back) with one error line, and
# `recover` with space restores a clean state with the originals in place.
full_case() {
  local step=$1 r
  shift
  TEST "full filesystem at $step of $*: the originals are never lost; recover works once space is freed"
  r=$(small_root)
  onto_tmpfs "$r" size=80m
  paused_full "$r" "$step" "$@"
  case $RC in
  0 | 1 | 5) ;;
  *) fail "exit $RC at $step on a full filesystem: $(cat "$ERR")" ;;
  esac
  [ "$RC" = 0 ] || expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines: $(cat "$ERR")"
  expect_originals "$r" "right after $* on a full filesystem at $step (exit $RC)"
  unfill "$r"
  expect_recovered_then_adopted "$r" # and with space, the adopt itself goes through
  N=$((N + 1))
}

for s in ${FULLFS_ADOPT_STEPS:-after-adopt-backup after-adopt-records after-staging after-store-commit after-generation before-switch after-switch mid-integration after-integration before-commit after-history}; do
  full_case "$s" adopt
done
# ---- F2: no free inode at a switch: all or nothing, and the message says which --------------
cr_templates
# fill_inodes ROOT: create empty files until the filesystem has no free inode left.
fill_inodes() {
  mkdir -p "$1/.inodes" 2>/dev/null || return 0
  local i=0
  while : 2>/dev/null >"$1/.inodes/$i"; do i=$((i + 1)); done
}

ino_case() { # STEP CMD...
  local step=$1 r h0
  shift
  TEST "no free inode at $step of $*: exit 0 (done), 1 (nothing activated) or 5 (rolled back), never a mix"
  r=$(cr_copy one "ino.$step")
  onto_tmpfs "$r" "size=64m,nr_inodes=3000"
  h0=$(cr_hist_count "$r")
  local FILL=fill_inodes
  paused_full "$r" "$step" "$@"
  local gen=1
  case $RC in
  0) gen=2 ;; # past the last step that needs an inode: done
  1) expect_contains "$ERR" "nothing was activated" ;;
  5) expect_contains "$ERR" "rolled back to generation 1" ;;
  *) fail "exit $RC with no free inode at $step: $(cat "$ERR")" ;;
  esac
  [ "$RC" = 0 ] || expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines: $(cat "$ERR")"
  # current and the drop-in name the same build while the inodes are gone
  cr_check "$r" --allowed $gen --loader
  rm -rf "$r/.inodes"
  expect_exit 0 cudnnctl --root "$r" recover
  cr_check "$r" --allowed $gen --clean --loader
  N=$((N + 1))
}
for s in ${FULLFS_INODE_STEPS:-after-staging after-store-commit after-generation before-switch after-switch mid-integration after-integration post-switch-check before-commit}; do
  ino_case "$s" install 8.9.7 --no-smoke
done

# ---- restore and purge on a full filesystem at each of their steps (issue 34) ---------------
BKF=$E2E_TMP/full-gen2.tar.zst # outside the small filesystems
expect_exit 0 cudnnctl --root "$(cr_copy two fullbk)" backup --output "$BKF"
restore_full() { # STEP: a backup of 8.9.7 restored over 9.1.0 (generation 1)
  local step=$1 r
  TEST "full filesystem at $step of restore: 9.1.0 or 8.9.7, never a mix; recover, then restore, once space is freed"
  r=$(cr_copy one "full-restore.$step")
  onto_tmpfs "$r" size=64m
  paused_full "$r" "$step" restore "$BKF"
  case $RC in
  0 | 1 | 5) ;;
  *) fail "exit $RC at $step on a full filesystem: $(cat "$ERR")" ;;
  esac
  [ "$RC" = 0 ] || expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines: $(cat "$ERR")"
  cr_check "$r" --allowed 1,2 --loader
  unfill "$r"
  expect_exit 0 cudnnctl --root "$r" recover
  cr_check "$r" --allowed 1,2 --clean --loader
  expect_exit 0 cudnnctl --root "$r" restore "$BKF"
  cr_check "$r" --allowed 2,3 --clean --loader
  expect_exit 0 cudnnctl --root "$r" verify
  N=$((N + 1))
}
for s in ${FULLFS_RESTORE_STEPS:-after-staging after-store-commit after-generation before-switch after-switch mid-integration after-integration post-switch-check before-commit}; do
  restore_full "$s"
done
purge_full() { # STEP: purge --yes of two generations on a full filesystem, then again
  local step=$1 r
  TEST "full filesystem at $step of purge: exit 0 or 1 with one line; run again once space is freed: nothing of cudnnctl left"
  r=$(cr_copy two "full-purge.$step")
  onto_tmpfs "$r" size=64m
  paused_full "$r" "$step" purge --yes
  case $RC in
  0 | 1) ;;
  *) fail "exit $RC at $step on a full filesystem: $(cat "$ERR")" ;;
  esac
  [ "$RC" = 0 ] || expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines: $(cat "$ERR")"
  unfill "$r"
  expect_exit 0 cudnnctl --root "$r" purge --yes
  for p in opt/cudnn/current opt/cudnn/store opt/cudnn/generations etc/ld.so.conf.d/00-cudnnctl.conf var/lib/cudnnctl/journal.json; do
    [ ! -e "$r/$p" ] && [ ! -L "$r/$p" ] || fail "purge at $step, then again: $p is still there"
  done
  expect_exit 0 cudnnctl --root "$r" status --json
  expect_json 'd["active"]' null
  N=$((N + 1))
}
for s in ${FULLFS_PURGE_STEPS:-mid-release after-deactivate mid-purge mid-purge-state}; do
  purge_full "$s"
done

TEST "install --dry-run on a disk without room: exit 1 with the numbers, as the install would end (issue 37, item 8)"
r=$(cr_copy one dryfull)
onto_tmpfs "$r" "size=8m"
fill "$r"
tree_snapshot "$r" >"$E2E_TMP/dryfull.before"
expect_exit 1 cudnnctl --root "$r" --mirror "file://$CR_MIRROR" --dry-run install 8.9.7
expect_eq "$(wc -l <"$ERR")" 1 "stderr lines: $(cat "$ERR")"
expect_contains "$ERR" "cudnnctl: error: not enough disk space: the install needs about "
grep -qE " in $r/opt/cudnn/store, $r/opt/cudnn/store has [0-9.]+ [KMG]?i?B free; free space there or choose another --prefix \(dry run: nothing was changed\)\$" "$ERR" ||
  fail "no numbers in the error: $(cat "$ERR")"
grep -q 'would install and activate' "$OUT" && fail "the plan still says it would install: $(cat "$OUT")"
cmp -s "$E2E_TMP/dryfull.before" <(tree_snapshot "$r") || fail "the dry run changed the root"
expect_exit 1 cudnnctl --root "$r" --mirror "file://$CR_MIRROR" --json --dry-run install 8.9.7
expect_json 'd["error"]["code"]' environment
unfill "$r"
expect_exit 0 cudnnctl --root "$r" --mirror "file://$CR_MIRROR" --dry-run install 8.9.7
expect_contains "$OUT" "would install and activate cuDNN 8.9.7"
N=$((N + 1))
echo "full-filesystem cases: $N" >&2
