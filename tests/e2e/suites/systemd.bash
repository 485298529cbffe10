# SPDX-License-Identifier: Apache-2.0
# The systemd units as `cmake --install` stages them: systemd-analyze verify and security
# (offline, against the staged tree), the checks verify does not make (check_units.py), and
# the boot-time rollback script against a real root. docs/FLEET.md records the scores.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed"
[ -n "${CUDNNCTL_BUILD_DIR:-}" ] || skip "CUDNNCTL_BUILD_DIR is not set (the build to install from)"

REPO=$(cd "$E2E_DIR/../.." && pwd)
STAGE=$E2E_TMP/stage
UNITS=$STAGE/usr/lib/systemd/system
SERVICES="cudnnctl-verify.service cudnnctl-rollback.service cudnnctl-doctor.service"
# Thresholds (exposure x 10) for `systemd-analyze security --threshold`: docs/FLEET.md.
declare -A THRESHOLD=([cudnnctl-verify.service]=20 [cudnnctl-rollback.service]=20 [cudnnctl-doctor.service]=20)

analyze_verify() { systemd-analyze verify --recursive-errors=no --man=no --root="$1" "${@:2}"; }

TEST "cmake --install --prefix /usr stages the units naming /usr/bin/cudnnctl"
expect_exit 0 env DESTDIR="$STAGE" cmake --install "$CUDNNCTL_BUILD_DIR" --prefix /usr
for f in $SERVICES cudnnctl-doctor.timer; do expect_file "$UNITS/$f"; done
[ -x "$STAGE/usr/bin/cudnnctl" ] || fail "no /usr/bin/cudnnctl in the stage"
[ -x "$STAGE/usr/libexec/cudnnctl/rollback-on-failure" ] || fail "no rollback-on-failure script"
expect_file "$STAGE/usr/share/cudnnctl/default.example"
expect_contains "$UNITS/cudnnctl-verify.service" "ExecStart=/usr/bin/cudnnctl verify --smoke"
expect_contains "$UNITS/cudnnctl-doctor.service" "ExecStart=/usr/bin/cudnnctl doctor --quiet"
expect_contains "$UNITS/cudnnctl-rollback.service" "ExecStart=/usr/libexec/cudnnctl/rollback-on-failure"
expect_contains "$STAGE/usr/libexec/cudnnctl/rollback-on-failure" 'cudnnctl=${CUDNNCTL:-/usr/bin/cudnnctl}'
# -I: the helper binary (also in libexec/cudnnctl) may hold such bytes.
if grep -rnI '@[A-Z_]*@' "$UNITS" "$STAGE/usr/libexec/cudnnctl"; then fail "unsubstituted @VAR@ left"; fi

TEST "systemd-analyze verify --recursive-errors=no --man=no --root=<stage>: clean"
for u in $SERVICES cudnnctl-doctor.timer; do
  expect_exit 0 analyze_verify "$STAGE" "$u"
  [ ! -s "$ERR" ] || fail "systemd-analyze verify $u printed: $(cat "$ERR")"
done

TEST "systemd-analyze verify fails on a typo and on a missing binary (the check can fail)"
BAD=$E2E_TMP/bad-stage
cp -a "$STAGE" "$BAD"
sed -i 's/^RemainAfterExit=yes/RemainAfterExitt=yes/' "$BAD/usr/lib/systemd/system/cudnnctl-verify.service"
expect_exit '!0' analyze_verify "$BAD" cudnnctl-verify.service
expect_contains "$ERR" "Unknown key 'RemainAfterExitt'"
rm "$BAD/usr/bin/cudnnctl"
expect_exit '!0' analyze_verify "$BAD" cudnnctl-doctor.service
expect_contains "$ERR" "is not executable"

TEST "systemd-analyze security --offline: exposure at or under the recorded thresholds"
for u in $SERVICES; do
  t=${THRESHOLD[$u]}
  expect_exit 0 systemd-analyze security --offline=true --root="$STAGE" --threshold="$t" "$u"
  score=$(sed -n "s/^→ Overall exposure level for $u: \([0-9.]*\) .*/\1/p" "$OUT")
  [ -n "$score" ] || fail "no exposure level for $u"
  # docs/FLEET.md records each unit's score: keep it true.
  recorded=$(sed -n "s/^| \`$u\` | \([0-9.]*\) .*/\1/p" "$REPO/docs/FLEET.md")
  expect_eq "$score" "$recorded" "exposure of $u (measured vs docs/FLEET.md)"
  # One tenth under the measured score must fail: the gate measures something.
  below=$(python3 -c "print(round(float('$score') * 10) - 1)")
  expect_exit '!0' systemd-analyze security --offline=true --root="$STAGE" --threshold="$below" "$u"
  _e2e_say "    $u: exposure $score (threshold $t)"
done

TEST "repo checks: the timer's service has no RemainAfterExit, GPU-safe sandbox"
expect_exit 0 python3 "$REPO/tests/systemd/check_units.py" "$UNITS"
expect_exit 0 python3 "$REPO/tests/systemd/check_units.py" "$REPO/systemd"
check_broken() { # check_broken SED-EXPR UNIT MESSAGE: the checker must catch it
  rm -rf "$E2E_TMP/broken" && cp -a "$UNITS" "$E2E_TMP/broken"
  sed -i "$1" "$E2E_TMP/broken/$2"
  cmp -s "$UNITS/$2" "$E2E_TMP/broken/$2" && fail "check_broken: '$1' changed nothing in $2"
  expect_exit 1 python3 "$REPO/tests/systemd/check_units.py" "$E2E_TMP/broken"
  expect_contains "$OUT" "$3"
}
check_broken 's/^Type=oneshot/Type=oneshot\nRemainAfterExit=yes/' cudnnctl-doctor.service \
  "which has RemainAfterExit=yes: the timer would start it only once"
check_broken 's/^Wants=nvidia-persistenced.service/Requires=nvidia-persistenced.service/' \
  cudnnctl-verify.service "Requires=nvidia-persistenced.service"
check_broken 's/^DevicePolicy=closed/PrivateDevices=yes/' cudnnctl-verify.service "PrivateDevices=yes hides"
check_broken 's/^LockPersonality=yes/MemoryDenyWriteExecute=yes/' cudnnctl-doctor.service "MemoryDenyWriteExecute"
check_broken 's/^ProtectSystem=strict/ProtectSystem=strict\nReadWritePaths=\/opt\/cudnn/' \
  cudnnctl-doctor.service "read-only unit has ReadWritePaths"
check_broken 's/^RestrictAddressFamilies=AF_UNIX/RestrictAddressFamilies=AF_UNIX AF_INET/' \
  cudnnctl-verify.service "RestrictAddressFamilies=AF_UNIX missing"

TEST "why the rollback unit may write /etc: ldconfig cannot update the cache with only the file writable"
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
  L=$(new_root)
  ldconfig -r "$L"
  expect_file "$L/etc/ld.so.cache"
  expect_exit '!0' unshare -m sh -c "mount --bind '$L/etc' '$L/etc' && mount -o remount,bind,ro '$L/etc' &&
    mount --bind '$L/etc/ld.so.cache' '$L/etc/ld.so.cache' && exec ldconfig -r '$L'"
  expect_contains "$ERR" "ld.so.cache~"
else
  _e2e_say "    (skipped: needs root and unshare -m)"
fi

TEST "rollback-on-failure: off by default, rolls back only when verify finds problems"
M=$(std_mirror)
start_nginx "$M"
R=$(new_root)
expect_exit 0 cudnnctl --root "$R" --mirror "$MIRROR_URL" --cuda 12 --json install 9.1.0
expect_exit 0 cudnnctl --root "$R" --mirror "$MIRROR_URL" --cuda 12 --json install 9.27.0
expect_json 'd["active"]["version"]' 9.27.0.42
SCRIPT=$STAGE/usr/libexec/cudnnctl/rollback-on-failure
rollback_script() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin CUDNNCTL="$CUDNNCTL" CUDNNCTL_OPTS="--root $R" "$@" sh "$SCRIPT"; }
expect_exit 0 rollback_script CUDNNCTL_VERIFY_ROLLBACK=1
expect_contains "$OUT" "verify passes now; no rollback"
# Damage the active generation: verify exits 8.
expect_exit 0 cudnnctl --root "$R" --json status
active_dir=$(json_get 'd["active"]["path"]')
echo "/* damaged */" >>"$active_dir/include/cudnn.h"
expect_exit 8 cudnnctl --root "$R" verify
tree_snapshot "$R" >"$E2E_TMP/r.before"
expect_exit 0 rollback_script
expect_contains "$OUT" "automatic rollback is off"
expect_exit 0 rollback_script CUDNNCTL_VERIFY_ROLLBACK=0
tree_snapshot "$R" >"$E2E_TMP/r.after"
cmp "$E2E_TMP/r.before" "$E2E_TMP/r.after" || fail "the script changed the root with rollback off"
expect_exit 0 rollback_script CUDNNCTL_VERIFY_ROLLBACK=1
expect_contains "$OUT" "rolled back; the now active generation passes verify"
expect_exit 0 cudnnctl --root "$R" --json status
expect_json 'd["active"]["version"]' 9.1.0.70
# Nothing active: verify exits 2 (not a problem of the installed cuDNN): no rollback.
R2=$(new_root)
expect_exit 2 env CUDNNCTL="$CUDNNCTL" CUDNNCTL_OPTS="--root $R2" CUDNNCTL_VERIFY_ROLLBACK=1 sh "$SCRIPT"
expect_contains "$OUT" "verify failed with exit 2"
expect_no_file "$R2/opt"

TEST "the rollback unit's ReadWritePaths= suffice for a rollback that relinks the CUDA home"
# ProtectSystem=strict reproduced with mounts: the whole root read-only, then each path of the
# unit's ReadWritePaths= (inside the root) bound writable again. The rollback must rewrite the
# CUDA-home links in /usr/local/cuda, the drop-in and the ld.so cache in /etc, and the store.
# Run once without /usr/local in the list: the rollback still happens, but the CUDA home's
# links keep naming the damaged build (a warning says so), which is why the unit has it.
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
  source "$E2E_FIXTURES/adopt/handmade.bash"
  rw_paths=$(sed -n 's/^ReadWritePaths=//p' "$UNITS/cudnnctl-rollback.service")
  [ -n "$rw_paths" ] || fail "no ReadWritePaths= in the rollback unit"
  # sandboxed_rollback ROOT PATHS...: rollback-on-failure with only PATHS writable under ROOT.
  sandboxed_rollback() {
    local r=$1 mounts p
    shift
    mounts="mount --bind '$r' '$r' && mount -o remount,bind,ro '$r'"
    for p in "$@"; do
      case $p in -*) p=${p#-}; [ -e "$r$p" ] || continue ;; esac
      [ -e "$r$p" ] || { echo "missing $p" >&2; return 99; }
      mounts="$mounts && mount --bind '$r$p' '$r$p' && mount -o remount,bind,rw '$r$p'"
    done
    unshare -m sh -c "$mounts && exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
      CUDNNCTL='$CUDNNCTL' CUDNNCTL_OPTS='--root $r' CUDNNCTL_VERIFY_ROLLBACK=1 sh '$SCRIPT'"
  }
  home_root() {
    local r
    r=$(new_root)
    cuda_home_plain "$r"
    cudnnctl --root "$r" --mirror "$MIRROR_URL" --cuda 12 -q install 9.1.0 >/dev/null &&
      cudnnctl --root "$r" --mirror "$MIRROR_URL" --cuda 12 -q install 9.27.0 >/dev/null ||
      fail "setting up $r"
    [[ $(readlink "$r/usr/local/cuda/lib64/libcudnn.so.9") == */store/9.27.0.42-*/lib/libcudnn.so.9 ]] ||
      fail "fixture: the CUDA home does not link the active 9.27.0"
    echo "/* damaged */" >>"$r/usr/local/cuda/include/cudnn.h"
    echo "$r"
  }
  # shellcheck disable=SC2086 # the unit's list is space-separated
  R3=$(home_root)
  expect_exit 0 sandboxed_rollback "$R3" $rw_paths
  expect_contains "$OUT" "rolled back; the now active generation passes verify"
  [[ $(readlink "$R3/usr/local/cuda/lib64/libcudnn.so.9") == */store/9.1.0.70-*/lib/libcudnn.so.9 ]] ||
    fail "the CUDA home does not link 9.1.0 after the sandboxed rollback"
  expect_exit 0 cudnnctl --root "$R3" --json status
  expect_json 'd["active"]["version"]' 9.1.0.70
  R4=$(home_root)
  # shellcheck disable=SC2086
  expect_exit 0 sandboxed_rollback "$R4" $(printf '%s\n' $rw_paths | grep -vx -- '-\?/usr/local')
  expect_contains "$ERR" "cannot update the CUDA-home links in /usr/local/cuda/lib64 (Read-only file system)"
  [[ $(readlink "$R4/usr/local/cuda/lib64/libcudnn.so.9") == */store/9.27.0.42-*/lib/libcudnn.so.9 ]] ||
    fail "without /usr/local writable the links were expected to stay stale"
else
  _e2e_say "    (skipped: needs root and unshare -m)"
fi
