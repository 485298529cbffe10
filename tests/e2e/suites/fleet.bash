# SPDX-License-Identifier: Apache-2.0
# A real fleet (issue 18, docs/FLEET.md): $FLEET_NODE_COUNT (8) Debian 12 hosts booted with
# systemd-nspawn, their own systemd as PID 1, sshd on 127.0.0.1 ports (tests/fleet/). Ansible
# drives them over SSH with the role: cudnnctl from the portable release (scripts/release: its
# .deb on most nodes, its tarball's install.sh on the last; issue 33), config, site pins,
# units, then cuDNN from a loopback nginx mirror, through the canary play
# (scripts/ansible/canary.yml: serial [1, "25%", "100%"], max_fail_percentage 0). The fake
# GPU (tests/fakegpu) makes the smoke test real: a release whose kernels compute wrong is
# rolled back on the canary and reaches no other node. Then reboots through the verify gate,
# a tampered library rolled back at boot by cudnnctl-rollback.service, and the health checks
# (cudnnctl check, node-exporter and NFD files, the NHC check, a real Slurm prolog).
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
[ -n "${CUDNNCTL_BUILD_DIR:-}" ] || skip "CUDNNCTL_BUILD_DIR is not set (its dist/: the release)"
command -v ansible-playbook >/dev/null || skip "ansible-playbook is not installed"
source "$E2E_DIR/../fleet/fleet.bash"
fleet_requirements

REPO=$(cd "$E2E_DIR/../.." && pwd)
ANS=$REPO/scripts/ansible
# The release's artifacts: $CUDNNCTL_BUILD_DIR/dist (the release suite), made here if missing.
DIST=$CUDNNCTL_BUILD_DIR/dist
VERSION=$(sed -n 's/^project(cudnnctl VERSION \([0-9.]*\).*/\1/p' "$REPO/CMakeLists.txt")
if [ ! -f "$DIST/cudnnctl_${VERSION}-1_amd64.deb" ] || [ ! -f "$DIST/cudnnctl-$VERSION-linux-x86_64.tar.gz" ]; then
  command -v debootstrap >/dev/null || skip "no release in $DIST and debootstrap is not installed (scripts/install-deps)"
fi
N=${FLEET_NODE_COUNT:-8}
[ "$N" -ge 8 ] || fail "the fleet has at least 8 nodes (FLEET_NODE_COUNT=$N)"
RESULTS=$REPO/tests/fleet/results.py
# The fleet is stopped before lib.bash's EXIT trap removes $E2E_TMP; if anything is left
# behind the suite fails and keeps the directory.
trap '_rc=$?; set +eE; trap - ERR; fleet_stop || { [ "$_rc" -ne 0 ] || _rc=1; }; (exit "$_rc"); _e2e_on_exit' EXIT

T0=$SECONDS
NUMBERS=$E2E_TMP/numbers
: >"$NUMBERS"
note() { echo "$*" >>"$NUMBERS"; _e2e_say "    $*"; }
lap() { note "$(printf '%-52s %4ss (at %ss)' "$1" $((SECONDS - LAP)) $((SECONDS - T0)))"; LAP=$SECONDS; }
LAP=$SECONDS

TEST "the portable release's .deb and tarball (scripts/release, cached), with their .sha256"
if [ ! -f "$DIST/cudnnctl_${VERSION}-1_amd64.deb" ] || [ ! -f "$DIST/cudnnctl-$VERSION-linux-x86_64.tar.gz" ]; then
  expect_exit 0 env CUDNNCTL_RELEASE_DIR="$CUDNNCTL_BUILD_DIR/release" bash "$REPO/scripts/release" --out "$DIST"
fi
# Copied with their .sha256 (which the role checks on the controller): a release built beside
# this suite cannot change them under it.
PKG=$E2E_TMP/pkg
mkdir -p "$PKG"
for f in "cudnnctl_${VERSION}-1_amd64.deb" "cudnnctl-$VERSION-linux-x86_64.tar.gz"; do
  cp "$DIST/$f" "$DIST/$f.sha256" "$PKG/"
  expect_exit 0 bash -c "cd '$PKG' && sha256sum -c '$f.sha256'"
done
DEB=$PKG/cudnnctl_${VERSION}-1_amd64.deb
TGZ=$PKG/cudnnctl-$VERSION-linux-x86_64.tar.gz
expect_exit 0 dpkg-deb -c "$DEB"
for p in ./usr/bin/cudnnctl ./usr/libexec/cudnnctl/cudnnctl-smoke ./lib/systemd/system/cudnnctl-verify.service; do
  grep -q " $p\$" "$OUT" || fail "the package lacks $p"
done
expect_exit 0 dpkg-deb -f "$DEB" Depends
expect_eq "$(cat "$OUT")" "libc6 (>= 2.31)" "the .deb's dependencies"
expect_exit 0 tar -tzf "$TGZ"
for p in install.sh payload/usr/local/bin/cudnnctl payload/usr/local/lib/systemd/system/cudnnctl-verify.service; do
  grep -qx "cudnnctl-$VERSION-linux-x86_64/$p" "$OUT" || fail "the tarball lacks $p"
done
lap "release artifacts (scripts/release)"

TEST "fixtures: a loopback mirror of releases with fake-GPU shims; the fake GPU"
F=$E2E_TMP/fakegpu
M=$E2E_TMP/mirror
mkdir -p "$F" "$M"
cc -shared -fPIC -o "$F/libcuda.so.1" -Wl,-soname,libcuda.so.1 "$E2E_DIR/../fakegpu/fake_cuda.c"
# release LABEL VERSION FAKE_VERSION [-DFAKE_WRONG]: a release whose shim computes on the fake GPU.
release() {
  cc -shared -fPIC -o "$F/$1.so" -Wl,-soname,libcudnn.so.9 -DFAKE_VERSION="$3" ${4:-} "$E2E_DIR/../fakegpu/fake_cudnn.c"
  mkrelease --mirror "$M" --label "$1" --version "$2" --cuda 12 --platform linux-x86_64 --no-static >/dev/null
  python3 "$E2E_FIXTURES/swap_shim.py" "$M" "$1" "$F/$1.so"
}
release 9.16.0 9.16.0.29 91600
release 9.18.0 9.18.0.41 91800
release 9.17.0 9.17.0.29 91700 -DFAKE_WRONG # its kernels give a wrong result: the smoke test fails
(cd "$M" && sha256sum redistrib_*.json) >"$E2E_TMP/fleet-mirror.sha256"
start_nginx "$M"
lap "fixtures"

TEST "boot $N nodes: systemd as PID 1 in each, sshd on its own 127.0.0.1 port"
fleet_base
lap "base root (debootstrap, cached)"
FLEET_FAKEGPU_LIB=$F/libcuda.so.1 fleet_start "$N"
lap "$N nodes booted"
for h in "${FLEET_NODES[@]}"; do
  expect_eq "$(fleet_read "$h" cat /proc/1/comm)" systemd "PID 1 of $h"
  expect_eq "$(fleet_read "$h" hostname)" "$h" "hostname of $h"
done
ids=$(for h in "${FLEET_NODES[@]}"; do fleet_read "$h" cat /etc/machine-id; done | sort -u | wc -l)
expect_eq "$ids" "$N" "distinct machine IDs"

# Ansible: over SSH with the keys made above; everything it writes stays in $E2E_TMP.
export HOME=$E2E_TMP/home
export ANSIBLE_CONFIG=$E2E_TMP/ansible.cfg ANSIBLE_LOCAL_TEMP=$E2E_TMP/ansible-local
export ANSIBLE_FORKS=8 ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=false ANSIBLE_PIPELINING=true
export ANSIBLE_DEPRECATION_WARNINGS=false ANSIBLE_SYSTEM_WARNINGS=false ANSIBLE_HOST_KEY_CHECKING=true
export ANSIBLE_TIMEOUT=30 ANSIBLE_CALLBACK_PLUGINS=$E2E_DIR/ansible/callback_plugins
mkdir -p "$HOME"
cd "$E2E_TMP"
# retries: Ansible tries a task's connection again when ssh itself fails (exit 255: on a loaded
# 2-core machine a node's sshd can be slow to answer); the tasks are idempotent.
printf '[defaults]\nforks = 8\ngathering = explicit\nretry_files_enabled = false\n[ssh_connection]\nretries = 3\n' >"$ANSIBLE_CONFIG"
INV=$E2E_TMP/inventory.ini
fleet_inventory "$INV" \
  "cudnnctl_package_src=$DEB" "cudnnctl_manage_config=true" "cudnn_mirrors=$MIRROR_URL/" \
  "cudnn_cuda=12" "cudnn_pins_src=$E2E_TMP/fleet-mirror.sha256" "cudnn_require_pin=true" \
  "cudnn_require_gpu=true" "cudnn_keep_generations=3" "cudnn_verify_service=true" \
  "cudnn_doctor_timer=true" "cudnn_verify_rollback=true"
# Beside the inventory: n7 names the .deb by the role's older variable (cudnnctl_deb_src, which
# playbooks use); the last node installs the tarball (install.sh --prefix /usr/local) and runs
# /usr/local/bin/cudnnctl without setting cudnnctl_path.
TARNODE=${FLEET_NODES[$((N - 1))]}
mkdir -p "$E2E_TMP/host_vars"
printf 'cudnnctl_package_src: null\ncudnnctl_deb_src: "%s"\n' "$DEB" >"$E2E_TMP/host_vars/n7.yml"
printf 'cudnnctl_package_src: "%s"\n' "$TGZ" >"$E2E_TMP/host_vars/$TARNODE.yml"

# play NAME ARGS...: the canary play; the results_json document is kept as $E2E_TMP/NAME.json.
play() {
  local name=$1
  shift
  run env ANSIBLE_STDOUT_CALLBACK=results_json ansible-playbook -i "$INV" "$ANS/canary.yml" "$@"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT" ||
    fail "ansible-playbook did not print the results_json document: $(head -c 600 "$OUT"; head -c 600 "$ERR")"
  cp "$OUT" "$E2E_TMP/$name.json"
  python3 "$RESULTS" summary "$OUT" >"$E2E_TMP/$name.summary"
}
sum_get() { json_get "$2" "$E2E_TMP/$1.summary"; } # sum_get RUN EXPR
changed_counts() {                                  # changed_counts RUN: "n1=5 n2=5 ..."
  json_get '" ".join("%s=%d" % (h, d["stats"][h]["changed"]) for h in sorted(d["stats"], key=lambda h: (len(h), h)))' "$E2E_TMP/$1.summary"
}
all_nodes_json=$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "${FLEET_NODES[@]}")
# The serial batches for 8 nodes: 1, then 25% (2), then the rest.
WAVES=$(python3 -c 'import json,sys; n=sys.argv[1:]; print(json.dumps([n[:1], n[1:3], n[3:]]))' "${FLEET_NODES[@]}")

active_on() { # active_on NODE: the active version there
  fleet_read "$1" cudnnctl --json status >"$E2E_TMP/status.json" || true
  json_get 'd["active"]["version"] if d["active"] else "none"' "$E2E_TMP/status.json"
}
lap "checks of the booted nodes"

# task_result RUN HOST TASK EXPR: EXPR of HOST's result of the role's task named TASK... in RUN
# (in the play of HOST's serial batch).
task_result() {
  json_get "[t['hosts']['$2'] for p in d['plays'] for t in p['tasks'] if t['task']['name'].split(' : ')[-1].startswith('$3') and '$2' in t['hosts']][0]$4" "$E2E_TMP/$1.json"
}

TEST "a package that does not match its .sha256 is refused on the controller: nothing reaches the host"
mkdir -p "$E2E_TMP/badsum"
cp "$DEB" "$DEB.sha256" "$E2E_TMP/badsum/"
printf 'x' >>"$E2E_TMP/badsum/$(basename "$DEB")"
play badsum -e cudnn_version=9.16.0 -e "cudnnctl_package_src=$E2E_TMP/badsum/$(basename "$DEB")" --limit n1
expect_eq "$RC" 2 "ansible-playbook exit status for a damaged package"
expect_eq "$(sum_get badsum 'd["stats"]["n1"]["failures"]')" 1 "failures on n1"
expect_eq "$(sum_get badsum 'd["stats"]["n1"]["changed"]')" 0 "changes on n1"
msg=$(task_result badsum n1 "cudnnctl package matches its .sha256" '["msg"]')
case $msg in *"$(basename "$DEB") has sha256 "*", but "*".sha256 says $(cut -d' ' -f1 "$DEB.sha256"): "*"nothing was installed") ;; *) fail "n1: msg: $msg" ;; esac
[ ! -e "$(fleet_root n1)/var/cache/cudnnctl-package" ] || fail "the damaged package reached n1"
[ ! -e "$(fleet_root n1)/usr/bin/cudnnctl" ] || fail "n1 has a cudnnctl before the rollout"
lap "damaged package refused"

TEST "rollout of 9.16.0: package, config, pins, units and cuDNN, wave by wave"
play first --diff -e cudnn_version=9.16.0
[ "$RC" -eq 0 ] || fail "ansible-playbook exited $RC: $(tail -c 1500 "$ERR")"
expect_eq "$(sum_get first 'd["batches"]')" "$WAVES" "serial batches"
for h in "${FLEET_NODES[@]}"; do
  [ "$(sum_get first "d['stats']['$h']['failures']")" -eq 0 ] || fail "$h failed"
  expect_eq "$(active_on "$h")" 9.16.0.29 "active version on $h"
done
note "first rollout changed: $(changed_counts first)"
fleet_read n1 dpkg-query -W -f='\${Version}' cudnnctl >"$E2E_TMP/v" && expect_eq "$(cat "$E2E_TMP/v")" 0.1.0-1 "package version"
expect_exit 0 fleet_read n7 dpkg-query -W -f='\${Version}' cudnnctl
expect_eq "$(cat "$OUT")" 0.1.0-1 "package version on n7 (cudnnctl_deb_src)"
# The tarball's node: no package; /usr/local/bin/cudnnctl, its units in /usr/local/lib/systemd/system.
expect_eq "$(task_result first "$TARNODE" "cudnnctl installed from the tarball" '.get("changed")')" true "install.sh ran on $TARNODE"
expect_exit 1 fleet_read "$TARNODE" dpkg-query -W cudnnctl
expect_exit 1 fleet_read "$TARNODE" test -e /usr/bin/cudnnctl
expect_exit 0 fleet_read "$TARNODE" /usr/local/bin/cudnnctl --version
expect_contains "$OUT" "cudnnctl $VERSION (commit "
expect_exit 0 fleet_read "$TARNODE" systemctl is-enabled cudnnctl-verify.service cudnnctl-doctor.timer
expect_exit 0 fleet_read "$TARNODE" systemctl show -p FragmentPath --value cudnnctl-verify.service
expect_eq "$(cat "$OUT")" /usr/local/lib/systemd/system/cudnnctl-verify.service "cudnnctl-verify.service on $TARNODE"
expect_eq "$(task_result first "$TARNODE" "cuDNN " '["invocation"]["module_args"]["cudnnctl_path"]')" /usr/local/bin/cudnnctl "cudnnctl_path of the module on $TARNODE"
expect_eq "$(task_result first n1 "cuDNN " '["invocation"]["module_args"]["cudnnctl_path"]')" /usr/bin/cudnnctl "cudnnctl_path of the module on n1"
expect_contains "$(fleet_root n1)/etc/cudnnctl/config.toml" "mirrors = [\"$MIRROR_URL/\"]"
expect_file "$(fleet_root n1)/etc/cudnnctl/pins.d/fleet-mirror.sha256"
expect_exit 0 fleet_read n1 systemctl is-enabled cudnnctl-verify.service cudnnctl-doctor.timer
lap "rollout 9.16.0 to $N nodes"

TEST "the same run again: changed=0 on every node"
play again -e cudnn_version=9.16.0
[ "$RC" -eq 0 ] || fail "ansible-playbook exited $RC"
expect_eq "$(changed_counts again)" "$(python3 -c 'import sys; print(" ".join(h + "=0" for h in sys.argv[1:]))' "${FLEET_NODES[@]}")" "changed counts of the second run"
expect_eq "$(task_result again "$TARNODE" "cudnnctl installed from the tarball" '.get("skipped")')" true "install.sh on $TARNODE, the same version installed"
note "second run changed: $(changed_counts again)"
lap "second run (idempotence)"

# tree_of NODE: the node's cudnnctl state as the host sees it (prefix, state dir, config).
tree_of() {
  local r
  r=$(fleet_root "$1")
  { tree_snapshot "$r/opt/cudnn"; tree_snapshot "$r/var/lib/cudnnctl"; tree_snapshot "$r/etc/cudnnctl"; } 2>&1
}

TEST "--check --diff for 9.18.0 writes nothing and predicts exactly what the apply does"
for h in "${FLEET_NODES[@]}"; do tree_of "$h" >"$E2E_TMP/tree.$h.before"; done
play check --check --diff -e cudnn_version=9.18.0
[ "$RC" -eq 0 ] || fail "ansible-playbook --check exited $RC"
for h in "${FLEET_NODES[@]}"; do
  tree_of "$h" >"$E2E_TMP/tree.$h.after"
  cmp -s "$E2E_TMP/tree.$h.before" "$E2E_TMP/tree.$h.after" ||
    fail "--check changed $h: $(diff "$E2E_TMP/tree.$h.before" "$E2E_TMP/tree.$h.after" | head -5)"
done
lap "check run for 9.18.0"
play apply --diff -e cudnn_version=9.18.0
[ "$RC" -eq 0 ] || fail "ansible-playbook exited $RC: $(tail -c 1500 "$ERR")"
expect_exit 0 python3 "$RESULTS" same-plan "$E2E_TMP/check.json" "$E2E_TMP/apply.json"
for h in "${FLEET_NODES[@]}"; do expect_eq "$(active_on "$h")" 9.18.0.41 "active version on $h"; done
note "check run predicted: $(changed_counts check)"
note "apply run changed:   $(changed_counts apply)"
lap "rollout 9.18.0 to $N nodes"

TEST "a release that fails its smoke test on the canary is rolled back there and reaches no other node"
for h in "${FLEET_NODES[@]}"; do tree_of "$h" >"$E2E_TMP/tree.$h.before"; done
play bad -e cudnn_version=9.17.0
expect_eq "$RC" 2 "ansible-playbook exit status when the canary fails"
expect_eq "$(sum_get bad 'd["batches"]')" '[["n1"]]' "batches that ran"
expect_eq "$(sum_get bad 'sorted(d["stats"])')" '["n1"]' "hosts Ansible touched"
expect_eq "$(sum_get bad 'd["stats"]["n1"]["failures"]')" 1 "failures on the canary"
cudnn_task='[t for p in d["plays"] for t in p["tasks"] if t["task"]["name"].split(" : ")[-1].startswith("cuDNN ")][0]["hosts"]["n1"]'
expect_json "$cudnn_task[\"rc\"]" 5 "$E2E_TMP/bad.json"
msg=$(json_get "$cudnn_task[\"msg\"]" "$E2E_TMP/bad.json")
case $msg in *"smoke test failed"*"wrong result"*"rolled back to generation 2"*) ;; *) fail "canary: msg: $msg" ;; esac
expect_eq "$(active_on n1)" 9.18.0.41 "active version on the canary after the automatic rollback"
fleet_read n1 cudnnctl --json history >"$E2E_TMP/h.json"
expect_json 'd["data"]["history"][-1]["result"]' rolled-back "$E2E_TMP/h.json"
for h in "${FLEET_NODES[@]:1}"; do
  tree_of "$h" >"$E2E_TMP/tree.$h.after"
  cmp -s "$E2E_TMP/tree.$h.before" "$E2E_TMP/tree.$h.after" ||
    fail "$h was touched: $(diff "$E2E_TMP/tree.$h.before" "$E2E_TMP/tree.$h.after" | head -5)"
  expect_eq "$(active_on "$h")" 9.18.0.41 "active version on $h"
done
note "bad release: batches $(sum_get bad 'd["batches"]'), changed: $(changed_counts bad), failed: n1 (rc 5)"
lap "bad release stopped at the canary"

# unit_state NODE UNIT: "ActiveState/SubState/Result".
unit_state() {
  fleet_read "$1" "for p in ActiveState SubState Result; do systemctl show -p \$p --value $2; done" | paste -sd/
}
# wait_unit_settled NODE: until the node's job queue is empty (after boot, OnFailure= units).
wait_unit_settled() {
  local i
  for i in $(seq 60); do
    [ -z "$(fleet_read "$1" systemctl list-jobs --no-legend)" ] && return 0
    sleep 1
  done
  fail "$1: jobs still queued after 60 s: $(fleet_read "$1" systemctl list-jobs --no-legend)"
}

TEST "reboot (systemctl reboot) and a container restart run cudnnctl-verify.service at boot: it passes"
b0=$(fleet_boot_id n2)
fleet_reboot n2
expect_ne "$(fleet_boot_id n2)" "$b0" "boot ID of n2 after the reboot"
fleet_restart n3
lap "reboot of n2, restart of n3"
for h in n2 n3; do
  wait_unit_settled "$h"
  expect_eq "$(unit_state "$h" cudnnctl-verify.service)" active/exited/success "cudnnctl-verify on $h"
  expect_exit 0 fleet_read "$h" systemctl status --no-pager cudnnctl-verify.service
  expect_contains "$OUT" "active (exited)"
  expect_exit 0 fleet_read "$h" journalctl -b --no-pager -o cat -u cudnnctl-verify.service
  expect_contains "$OUT" "ok: "
  expect_contains "$OUT" "recorded files and links of 9.18.0.41-cuda12-linux-x86_64 match"
  expect_contains "$OUT" "smoke test: GPU 0"
  expect_contains "$OUT" "passed"
  cp "$OUT" "$E2E_TMP/journal-verify-$h.txt"
done
expect_exit 0 fleet_read n2 systemctl list-timers --all --no-pager
expect_contains "$OUT" "cudnnctl-doctor.timer"
expect_contains "$OUT" "cudnnctl-doctor.service"
cp "$OUT" "$E2E_TMP/list-timers.txt"

TEST "a library tampered with on disk fails the boot check; cudnnctl-rollback.service restores the previous generation"
fleet_read n4 cudnnctl --json status >"$E2E_TMP/s.json"
lib=$(json_get 'd["active"]["path"]' "$E2E_TMP/s.json")/lib/libcudnn_ops.so.9.18.0
# One byte changed, the size kept: only the recorded sha256 can tell.
expect_exit 0 fleet_ssh n4 "printf '\\377' | dd of=$lib bs=1 seek=200 conv=notrunc status=none"
fleet_reboot n4
lap "reboot of n4 with a tampered library"
wait_unit_settled n4
expect_eq "$(unit_state n4 cudnnctl-verify.service)" failed/failed/exit-code "cudnnctl-verify on n4"
expect_eq "$(unit_state n4 cudnnctl-rollback.service)" inactive/dead/success "cudnnctl-rollback on n4"
expect_exit 0 fleet_read n4 journalctl -b --no-pager -o cat -u cudnnctl-verify.service
expect_contains "$OUT" "problem: lib/libcudnn_ops.so.9.18.0: sha256"
cp "$OUT" "$E2E_TMP/journal-verify-n4.txt"
expect_exit 0 fleet_read n4 journalctl -b --no-pager -o cat -u cudnnctl-rollback.service
expect_contains "$OUT" "rolling back to the previous generation"
expect_contains "$OUT" "rolled back; the now active generation passes verify"
cp "$OUT" "$E2E_TMP/journal-rollback-n4.txt"
# What systemd itself said about the units this boot (sandbox set-up included).
fleet_read n4 journalctl -b --no-pager -o short-monotonic _PID=1 | grep -i cudnnctl >"$E2E_TMP/sandbox-n4.txt" || true
expect_eq "$(active_on n4)" 9.16.0.29 "active version on n4 after the boot-time rollback"
expect_exit 8 fleet_read n4 cudnnctl check --expect 9.18.0
expect_eq "$(cat "$OUT")" "cudnnctl: active is 9.16.0.29 (generation 1), expected 9.18.0" "check on n4"
expect_exit 0 fleet_read n4 cudnnctl check --expect 9.16.0
# The gate runs again at the next boot and passes on the generation now active.
fleet_reboot n4
wait_unit_settled n4
expect_eq "$(unit_state n4 cudnnctl-verify.service)" active/exited/success "cudnnctl-verify on n4, next boot"
lap "boot-time rollback on n4, and the boot after"

TEST "health checks on the nodes: cudnnctl check, node-exporter textfile, NFD feature file"
expect_exit 0 fleet_read n5 cudnnctl check
expect_eq "$(cat "$OUT")" "ok: cuDNN 9.18.0.41 (CUDA 12, linux-x86_64), generation 2, slot primary" "check on n5"
expect_exit 0 fleet_read n5 cudnnctl check --expect 9.18.0
expect_exit 0 fleet_read n5 cudnnctl check --expect 2
expect_exit 8 fleet_read n5 cudnnctl check --expect 1
expect_eq "$(cat "$OUT")" "cudnnctl: active is 9.18.0.41 (generation 2), expected 1" "check --expect 1"
PROM=/var/lib/prometheus/node-exporter/cudnnctl.prom
FEAT=/etc/kubernetes/node-feature-discovery/features.d/cudnn
expect_exit 0 fleet_read n5 cudnnctl check --smoke --prometheus $PROM --nfd $FEAT
case $(cat "$OUT") in "ok: cuDNN 9.18.0.41 (CUDA 12, linux-x86_64), generation 2, slot primary, smoke passed in "*) ;; *) fail "check --smoke: $(cat "$OUT")" ;; esac
r5=$(fleet_root n5)
expect_contains "$r5$PROM" 'cudnnctl_info{version="9.18.0.41",cuda="12",generation="2",slot="primary"} 1'
expect_contains "$r5$PROM" 'cudnnctl_healthy 1'
expect_contains "$r5$PROM" 'cudnnctl_verify_ok 1'
expect_contains "$r5$PROM" 'cudnnctl_smoke_result{status="passed"} 1'
grep -q '^cudnnctl_last_switch_timestamp_seconds [0-9]' "$r5$PROM" || fail "no last switch time in $PROM"
grep -q '^cudnnctl_smoke_seconds [0-9]' "$r5$PROM" || fail "no smoke seconds in $PROM"
for l in cudnn.version=9.18.0.41 cudnn.major=9 cudnn.cuda=12 cudnn.smoke=passed cudnn.healthy=true; do
  grep -qx "$l" "$r5$FEAT" || fail "$FEAT lacks $l: $(cat "$r5$FEAT")"
done
cp "$r5$PROM" "$E2E_TMP/cudnnctl.prom"
cp "$r5$FEAT" "$E2E_TMP/nfd-features"

TEST "the NHC check (scripts/health/cudnnctl.nhc) on a node: passes, then names a damaged library"
install -D -m 0644 "$REPO/scripts/health/cudnnctl.nhc" "$r5/etc/nhc/scripts/cudnnctl.nhc"
install -D -m 0755 "$REPO/tests/fleet/nhc-driver" "$r5/usr/local/sbin/nhc-driver"
printf '* || check_cudnnctl\n* || check_cudnnctl --expect 9.18.0\n' >"$r5/etc/nhc/nhc.conf"
expect_exit 0 fleet_read n5 nhc-driver
fleet_read n5 cudnnctl --json status >"$E2E_TMP/s.json"
e5=$(json_get 'd["active"]["path"]' "$E2E_TMP/s.json")
expect_exit 0 fleet_read n5 chmod 0600 "$e5/lib/libcudnn_cnn.so.9.18.0"
expect_exit 1 fleet_read n5 nhc-driver
expect_contains "$OUT" "ERROR: nhc: Health check failed: cudnnctl: 9.18.0.41-cuda12-linux-x86_64: lib/libcudnn_cnn.so.9.18.0 has mode 0600, recorded 0755"
cp "$OUT" "$E2E_TMP/nhc-failed.txt"
expect_exit 0 fleet_read n5 chmod 0755 "$e5/lib/libcudnn_cnn.so.9.18.0"
expect_exit 0 fleet_read n5 nhc-driver

TEST "the Slurm prolog (scripts/health/slurm-prolog) under a real slurmd: a job runs; a failing node is drained with cudnnctl's reason"
S=n6
rs=$(fleet_root $S)
install -D -m 0755 "$REPO/scripts/health/slurm-prolog" "$rs/usr/local/sbin/cudnnctl-slurm-prolog"
ctld_port=$(_fleet_free_port)
slurmd_port=$(_fleet_free_port)
cat >"$rs/etc/slurm/slurm.conf" <<EOF
ClusterName=fleet
SlurmUser=slurm
SlurmctldHost=$S(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
Prolog=/usr/local/sbin/cudnnctl-slurm-prolog
PrologFlags=Alloc
ReturnToService=2
NodeName=$S NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN
PartitionName=gpu Nodes=$S Default=YES MaxTime=10 State=UP
EOF
expect_exit 0 fleet_ssh $S "install -d -o slurm -g slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm &&
  dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none && chown munge:munge /etc/munge/munge.key &&
  chmod 0400 /etc/munge/munge.key && rm -f /etc/systemd/system/munge.service /etc/systemd/system/slurmd.service /etc/systemd/system/slurmctld.service &&
  systemctl daemon-reload && systemctl start munge slurmctld slurmd"
slurm_ready() {
  local i
  for i in $(seq 60); do
    fleet_read $S sinfo -h -n $S -o %t >"$E2E_TMP/sinfo" 2>/dev/null || true
    case $(cat "$E2E_TMP/sinfo") in idle*) return 0 ;; esac
    sleep 1
  done
  fail "slurm on $S did not come up: $(cat "$E2E_TMP/sinfo"; fleet_read $S tail -5 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log)"
}
slurm_ready
expect_exit 0 fleet_ssh $S timeout 60 srun -N1 -t 1 cat /etc/hostname
expect_eq "$(cat "$OUT")" "$S" "output of the Slurm job"
# The node's cuDNN now fails its smoke test: the fake GPU's kernels crash.
printf 'devices=1\ncrash=0\n' >"$rs/etc/cudnnctl-fake-cuda.conf"
expect_exit '!0' fleet_ssh $S timeout 60 srun -N1 -t 1 true
expect_contains "$ERR" "Prolog"
cp "$ERR" "$E2E_TMP/srun-failed.txt"
expect_exit 0 fleet_read $S "sinfo -h -n $S -o '%t|%E'"
case $(cat "$OUT") in drain*"|cudnnctl: smoke test failed: "*) ;; *) fail "the node is not drained with cudnnctl's reason: $(cat "$OUT")" ;; esac
cp "$OUT" "$E2E_TMP/sinfo-drained.txt"
fleet_read $S grep -h -e 'prolog failed' -e 'reason set to' /var/log/slurm/slurmd.log /var/log/slurm/slurmctld.log >>"$E2E_TMP/sinfo-drained.txt" || true
printf 'devices=1\n' >"$rs/etc/cudnnctl-fake-cuda.conf"
expect_exit 0 fleet_ssh $S systemctl stop slurmd slurmctld munge
lap "health checks (check, files, NHC, Slurm)"

TEST "the doctor timer is listed on every node"
for h in "${FLEET_NODES[@]}"; do
  expect_exit 0 fleet_read "$h" systemctl list-timers --no-pager cudnnctl-doctor.timer
  expect_contains "$OUT" "cudnnctl-doctor.timer"
done

TEST "teardown: every container stopped, every mount gone"
nspawn_pids=$(cat "$FLEET_DIR"/nodes/*/nspawn.pid)
expect_exit 0 fleet_stop
for p in $nspawn_pids; do ! kill -0 "$p" 2>/dev/null || fail "systemd-nspawn $p still runs"; done
expect_eq "$(awk -v t="$E2E_TMP/" 'index($2, t) == 1' /proc/self/mounts)" "" "mounts left under $E2E_TMP"
lap "teardown"
note "teardown: $(paste -sd';' "$FLEET_DIR/down.log" | sed 's/;/; /g')"
note "total wall time: $((SECONDS - T0))s for $N nodes"
if [ -n "${FLEET_REPORT:-}" ]; then
  cp "$NUMBERS" "$FLEET_REPORT"
  cp "$E2E_TMP"/{journal-verify-n4.txt,journal-rollback-n4.txt,journal-verify-n2.txt,cudnnctl.prom,nfd-features,nhc-failed.txt,sinfo-drained.txt,srun-failed.txt,list-timers.txt,bad.json,sandbox-n4.txt} "$(dirname "$FLEET_REPORT")/" 2>/dev/null || true
fi
