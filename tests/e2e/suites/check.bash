# SPDX-License-Identifier: Apache-2.0
# `cudnnctl check` (docs/FLEET.md "Health checks"): one line on stdout, exit 0 healthy or 8
# with "cudnnctl: <reason>"; --expect VERSION|GEN; --prometheus and --nfd files written
# atomically, also when unhealthy; nothing written under the root; works without root.
# (The fake-GPU smoke path and the NHC/Slurm wrappers run on booted nodes: fleet.bash.)
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
M=$(std_mirror)
start_nginx "$M"

TEST "nothing active: exit 8, one line with the reason, nothing created"
R=$(new_root)
tree_snapshot "$R" >"$E2E_TMP/r.before"
expect_exit 8 cudnnctl --root "$R" check
expect_eq "$(cat "$OUT")" "cudnnctl: no cuDNN generation is active under $R/opt/cudnn" "stdout"
expect_eq "$(wc -l <"$OUT")" 1 "lines on stdout"
expect_contains "$ERR" "cudnnctl: error: no cuDNN generation is active"
tree_snapshot "$R" >"$E2E_TMP/r.after"
cmp "$E2E_TMP/r.before" "$E2E_TMP/r.after" || fail "check wrote under the root"
expect_exit 8 cudnnctl --root "$R" --json check
expect_json 'd["data"]["healthy"]' false
expect_json 'd["error"]["code"]' problems

TEST "healthy: exit 0, one line; --json says why"
expect_exit 0 cudnnctl --root "$R" --mirror "$MIRROR_URL" --cuda 12 -q install 9.1.0
expect_exit 0 cudnnctl --root "$R" --mirror "$MIRROR_URL" --cuda 12 -q install 9.27.0
tree_snapshot "$R" >"$E2E_TMP/r.before"
expect_exit 0 cudnnctl --root "$R" check
expect_eq "$(cat "$OUT")" "ok: cuDNN 9.27.0.42 (CUDA 12, linux-x86_64), generation 2, slot primary" "stdout"
[ ! -s "$ERR" ] || fail "check printed on stderr: $(cat "$ERR")"
expect_exit 0 cudnnctl --root "$R" --json check
expect_json 'd["ok"]' true
expect_json 'd["data"]["healthy"]' true
expect_json 'd["data"]["slot"]' primary
expect_json 'd["data"]["files_ok"]' true
expect_json 'd["active"]["generation"]' 2
expect_exit 0 cudnnctl --root "$R" -q check
[ ! -s "$OUT" ] || fail "-q check printed: $(cat "$OUT")"
# Read-only: as nobody, and nothing written under the root.
expect_exit 0 as_nobody "$CUDNNCTL" --root "$R" check
tree_snapshot "$R" >"$E2E_TMP/r.after"
cmp "$E2E_TMP/r.before" "$E2E_TMP/r.after" || fail "check wrote under the root"

TEST "--expect: a release label, a version prefix or a generation"
for e in 9.27.0 9.27 9.27.0.42 2; do expect_exit 0 cudnnctl --root "$R" check --expect "$e"; done
expect_exit 8 cudnnctl --root "$R" check --expect 9.1.0
expect_eq "$(cat "$OUT")" "cudnnctl: active is 9.27.0.42 (generation 2), expected 9.1.0" "stdout"
expect_exit 8 cudnnctl --root "$R" check --expect 1
expect_eq "$(cat "$OUT")" "cudnnctl: active is 9.27.0.42 (generation 2), expected 1" "stdout"
expect_exit 0 cudnnctl --root "$R" -q rollback
expect_exit 0 cudnnctl --root "$R" check --expect 1
expect_exit 0 cudnnctl --root "$R" check --expect 9.1.0
expect_exit 0 cudnnctl --root "$R" -q use 9.27.0
expect_exit 0 cudnnctl --root "$R" check --expect 3

TEST "a damaged store entry, a missing drop-in, an interrupted transaction: exit 8 naming it"
cudnnctl --root "$R" --json status >"$E2E_TMP/s.json"
A=$(json_get 'd["active"]["path"]' "$E2E_TMP/s.json")
E=$(basename "$A")
lib=$(cd "$A/lib" && ls libcudnn_ops.so.9.*.*)
chmod 0700 "$A/lib/$lib"
expect_exit 8 cudnnctl --root "$R" check
expect_eq "$(cat "$OUT")" "cudnnctl: $E: lib/$lib has mode 0700, recorded 0755" "stdout"
chmod 0755 "$A/lib/$lib"
cp -p "$A/lib/$lib" "$E2E_TMP/lib.orig"
echo x >>"$A/lib/$lib"
expect_exit 8 cudnnctl --root "$R" check
case $(cat "$OUT") in "cudnnctl: $E: lib/$lib has "*" bytes, recorded "*) ;; *) fail "stdout: $(cat "$OUT")" ;; esac
cp -p "$E2E_TMP/lib.orig" "$A/lib/$lib"
mv "$A/lib/libcudnn.so" "$E2E_TMP/link"
touch "$A/include/extra.h"
expect_exit 8 cudnnctl --root "$R" check
expect_eq "$(cat "$OUT")" "cudnnctl: $E: lib/libcudnn.so is missing (+1 more problem(s))" "stdout"
expect_exit 8 cudnnctl --root "$R" --json check
expect_json 'd["data"]["problems"]' "[\"$E: lib/libcudnn.so is missing\", \"$E: include/extra.h is not part of the installed build\"]"
mv "$E2E_TMP/link" "$A/lib/libcudnn.so"
rm "$A/include/extra.h"
expect_exit 0 cudnnctl --root "$R" check
mv "$R/etc/ld.so.conf.d/00-cudnnctl.conf" "$E2E_TMP/dropin"
expect_exit 8 cudnnctl --root "$R" check
expect_eq "$(cat "$OUT")" "cudnnctl: the loader drop-in /etc/ld.so.conf.d/00-cudnnctl.conf is missing" "stdout"
mv "$E2E_TMP/dropin" "$R/etc/ld.so.conf.d/00-cudnnctl.conf"
R2=$(new_root)
expect_exit 0 cudnnctl --root "$R2" --mirror "$MIRROR_URL" --cuda 12 -q install 9.1.0
expect_exit 86 env CUDNNCTL_TEST_CRASH_AT=after-switch "$CUDNNCTL" --root "$R2" --mirror "$MIRROR_URL" --cuda 12 -q install 9.27.0
expect_exit 8 cudnnctl --root "$R2" check
expect_eq "$(cat "$OUT")" "cudnnctl: a transaction is in progress or was interrupted (\`cudnnctl recover\` finishes or undoes it) (+1 more problem(s))" "stdout"
# (the other: the drop-in still names the build before the switch)
expect_exit 8 cudnnctl --root "$R2" --json check
expect_json 'd["data"]["problems"][1].startswith("the loader drop-in names ")' true
expect_exit 0 cudnnctl --root "$R2" -q recover
expect_exit 0 cudnnctl --root "$R2" check

TEST "--prometheus and --nfd: written atomically, healthy or not; a smoke result is carried over"
P=$E2E_TMP/textfile/cudnnctl.prom
N=$E2E_TMP/features.d/cudnn
expect_exit 0 cudnnctl --root "$R" check --prometheus "$P" --nfd "$N"
expect_contains "$P" 'cudnnctl_info{version="9.27.0.42",cuda="12",generation="3",slot="primary"} 1'
expect_contains "$P" 'cudnnctl_healthy 1'
expect_contains "$P" 'cudnnctl_verify_ok 1'
switch=$(sed -n 's/^cudnnctl_last_switch_timestamp_seconds //p' "$P")
expect_eq "${switch%.*}" "$(stat -c %Y "$R/opt/cudnn/current")" "last switch time (mtime of current)"
expect_eq "$(stat -c %a "$P")" 644 "mode of the textfile"
for l in cudnn.version=9.27.0.42 cudnn.major=9 cudnn.cuda=12 cudnn.smoke=unknown cudnn.healthy=true; do
  grep -qx "$l" "$N" || fail "$N lacks $l: $(cat "$N")"
done
expect_eq "$(ls -a "$(dirname "$P")" | grep -c tmp)" 0 "temporary files beside the textfile"
# A previous smoke result for this generation is kept; one for another is not.
printf 'cudnnctl_info{version="9.27.0.42",cuda="12",generation="3",slot="primary"} 1\ncudnnctl_smoke_result{status="passed"} 1\ncudnnctl_smoke_seconds 0.250\ncudnnctl_smoke_timestamp_seconds 1700000000.000\n' >"$P"
expect_exit 0 cudnnctl --root "$R" check --prometheus "$P" --nfd "$N"
expect_contains "$P" 'cudnnctl_smoke_result{status="passed"} 1'
expect_contains "$P" 'cudnnctl_smoke_seconds 0.250'
expect_contains "$N" 'cudnn.smoke=passed'
expect_exit 0 cudnnctl --root "$R" -q rollback
expect_exit 8 cudnnctl --root "$R" check --expect 3 --prometheus "$P" --nfd "$N"
expect_contains "$P" 'cudnnctl_info{version="9.1.0.70",cuda="12",generation="1",slot="primary"} 1'
expect_contains "$P" 'cudnnctl_healthy 0'
expect_not_contains "$P" 'cudnnctl_smoke_result'
expect_contains "$N" 'cudnn.healthy=false'
expect_contains "$N" 'cudnn.smoke=unknown'
# A target that cannot be written is exit 1 (environment).
expect_exit 1 cudnnctl --root "$R" check --prometheus /proc/cudnnctl.prom

TEST "--smoke without a GPU: skipped, still healthy"
expect_exit 0 cudnnctl --root "$R" check --smoke --nfd "$N"
case $(cat "$OUT") in "ok: cuDNN 9.1.0.70 "*", smoke skipped in "*) ;; *) fail "stdout: $(cat "$OUT")" ;; esac
expect_contains "$N" 'cudnn.smoke=skipped'
