# SPDX-License-Identifier: Apache-2.0
# The Ansible module and role, driven by Debian's ansible-playbook: the example playbook
# (scripts/ansible/playbook.yml) against 8 inventory hosts, all ansible_connection=local, each
# with its own cudnn_root, served by one loopback nginx mirror; host h8's mirror serves a
# 9.27.0 archive with one byte flipped. Check mode, diff mode, idempotence (Molecule's rule:
# a second run has changed=0), version change, rollback, absent, and the CLI's errors.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
command -v ansible-playbook >/dev/null || skip "ansible-playbook is not installed"

REPO=$(cd "$E2E_DIR/../.." && pwd)
ANS=$REPO/scripts/ansible
HOSTS="h1 h2 h3 h4 h5 h6 h7 h8"
GOOD_HOSTS="h1 h2 h3 h4 h5 h6 h7"
A927=cudnn/linux-x86_64/cudnn-linux-x86_64-9.27.0.42_cuda12-archive.tar.xz

# Nothing may be written outside $E2E_TMP: Ansible's home, temp dirs and config live there.
export HOME=$E2E_TMP/home
export ANSIBLE_CONFIG=$E2E_TMP/ansible.cfg
export ANSIBLE_LOCAL_TEMP=$E2E_TMP/ansible-local
export ANSIBLE_REMOTE_TEMP=$E2E_TMP/ansible-remote
export ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3
export ANSIBLE_FORKS=8 ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=false ANSIBLE_PIPELINING=true
export ANSIBLE_DEPRECATION_WARNINGS=false ANSIBLE_SYSTEM_WARNINGS=false
mkdir -p "$HOME"
cd "$E2E_TMP" # so that no ansible.cfg in the caller's working directory counts
printf '[defaults]\nforks = 8\ngathering = explicit\nretry_files_enabled = false\n' >"$ANSIBLE_CONFIG"
REAL_HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
touch "$E2E_TMP/start-marker"
tree_snapshot "$ANS" >"$E2E_TMP/ans.before"

# Results: every run prints one JSON document through the suite's own stdout callback
# (tests/e2e/ansible/callback_plugins/results_json.py, the shape of ansible.posix.json), so the
# same assertions hold with only ansible-core and with Debian's `ansible` collections.
# (`ansible-doc -t callback NAME` exits 0 for a plugin that does not exist: it is no test.)
export ANSIBLE_CALLBACK_PLUGINS=$E2E_DIR/ansible/callback_plugins
ansible-doc -t callback -l 2>/dev/null | grep -qE '^(ansible\.legacy\.)?results_json ' ||
  fail "ansible-doc does not list the suite's results_json callback (ANSIBLE_CALLBACK_PLUGINS=$ANSIBLE_CALLBACK_PLUGINS)"

M=$(std_mirror)
start_nginx "$M"
GOOD=$MIRROR_URL/
BADM=$E2E_TMP/bad-mirror
cp -a "$M" "$BADM"
flip_byte "$BADM/$A927" 300
cmp -s "$M/$A927" "$BADM/$A927" && fail "flipping a byte changed nothing"
start_nginx "$BADM"
BAD=$MIRROR_URL/

cp "$M/SHA256SUMS" "$E2E_TMP/site-mirror.sha256"
declare -A ROOT
INV=$E2E_TMP/inventory.ini
{
  echo "[gpu]"
  for h in $HOSTS; do
    ROOT[$h]=$(new_root)
    extra=""
    [ "$h" != h8 ] || extra=" cudnn_mirrors=$BAD"
    echo "$h cudnn_root=${ROOT[$h]}$extra"
  done
  cat <<EOF

[gpu:vars]
ansible_connection=local
ansible_become=false
ansible_python_interpreter=/usr/bin/python3
cudnnctl_path=$CUDNNCTL
cudnn_version=9.1.0
cudnn_cuda=12
cudnn_mirrors=$GOOD
cudnn_pins_src=$E2E_TMP/site-mirror.sha256
cudnn_require_pin=true
cudnn_keep_generations=3
EOF
} >"$INV"

# play ARGS...: ansible-playbook -i $INV playbook.yml ARGS; output in $OUT/$ERR, status in $RC.
play() {
  run env ANSIBLE_STDOUT_CALLBACK=results_json ansible-playbook -i "$INV" "$ANS/playbook.yml" "$@"
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT" ||
    fail "ansible-playbook did not print the results_json document: $(head -c 400 "$OUT")"
}

# stat_of HOST FIELD: the play's stats for HOST (changed, failures, ok, ...).
stat_of() { json_get "d[\"stats\"][\"$1\"][\"$2\"]"; }

# expect_stats FIELD VALUE HOST...: e.g. expect_stats changed 0 $HOSTS
expect_stats() {
  local field=$1 want=$2 h got
  shift 2
  for h in "$@"; do
    got=$(stat_of "$h" "$field")
    [ "$got" == "$want" ] || fail "$h: $field=$got, expected $want"
  done
}

# module_result RESULT-EXPR HOST: a value of the cudnnctl task's result for HOST.
module_result() {
  json_get "[t for t in d[\"plays\"][0][\"tasks\"] if t[\"task\"][\"name\"].split(\" : \")[-1].startswith(\"cuDNN \")][0][\"hosts\"][\"$2\"]$1"
}
expect_module() { # expect_module EXPR VALUE HOST...
  local expr=$1 want=$2 h got
  shift 2
  for h in "$@"; do
    got=$(module_result "$expr" "$h")
    [ "$got" == "$want" ] || fail "$h: module result$expr = '$got', expected '$want'"
  done
}

active_version() { # active_version HOST: the version cudnnctl status reports under its root
  "$CUDNNCTL" --root "${ROOT[$1]}" --json status >"$E2E_TMP/status.json" || true
  json_get 'd["active"]["version"] if d["active"] else "none"' "$E2E_TMP/status.json"
}
expect_active() { # expect_active VERSION HOST...
  local want=$1 h
  shift
  for h in "$@"; do expect_eq "$(active_version "$h")" "$want" "active version on $h"; done
}

snapshot_roots() { # snapshot_roots TAG
  for h in $HOSTS; do tree_snapshot "${ROOT[$h]}" >"$E2E_TMP/snap.$h.$1"; done
}

TEST "ansible-doc renders the module; DOCUMENTATION matches the argument_spec"
expect_exit 0 ansible-doc -M "$ANS/library" cudnnctl
for s in "OPTIONS" "state" "rolled_back" "keep_generations" "ATTRIBUTES" "check_mode" "EXAMPLES" "RETURN VALUES" "rollback_available"; do
  expect_contains "$OUT" "$s"
done
expect_exit 0 python3 - "$ANS/library/cudnnctl.py" <<'EOF'
import ast, sys, yaml
tree = ast.parse(open(sys.argv[1]).read())
docs = {n.targets[0].id: yaml.safe_load(n.value.value) for n in tree.body
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
        and n.targets[0].id in ("DOCUMENTATION", "EXAMPLES", "RETURN")}
assert set(docs) == {"DOCUMENTATION", "EXAMPLES", "RETURN"}, docs.keys()
spec = None
for node in ast.walk(tree):
    if isinstance(node, ast.keyword) and node.arg == "argument_spec":
        spec = {k.arg: {kw.arg: ast.literal_eval(kw.value) for kw in k.value.keywords}
                for k in node.value.keywords}
opts = docs["DOCUMENTATION"]["options"]
bad = sorted(set(spec) ^ set(opts))
for name, s in spec.items():
    d = opts.get(name, {})
    for key in ("type", "choices", "elements"):
        if s.get(key) != d.get(key):
            bad.append("%s.%s: spec %r, doc %r" % (name, key, s.get(key), d.get(key)))
    if s.get("default") != d.get("default"):
        bad.append("%s.default: spec %r, doc %r" % (name, s.get("default"), d.get("default")))
for r in ("changed", "version", "previous_version", "generation", "previous_generation",
          "actions", "rollback_available"):
    if r not in docs["RETURN"]:
        bad.append("RETURN lacks " + r)
if docs["DOCUMENTATION"]["attributes"]["check_mode"]["support"] != "full":
    bad.append("check_mode support is not full")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF

TEST "--syntax-check (and a broken playbook fails it)"
expect_exit 0 ansible-playbook -i "$INV" "$ANS/playbook.yml" --syntax-check
sed 's/^  roles:/  roles\n    oops: [/' "$ANS/playbook.yml" >"$E2E_TMP/broken.yml"
expect_exit '!0' env ANSIBLE_ROLES_PATH="$ANS/roles" ansible-playbook -i "$INV" "$E2E_TMP/broken.yml" --syntax-check

TEST "--check --diff on clean roots: changes reported on every host, nothing written"
snapshot_roots before
play --check --diff
[ "$RC" -eq 0 ] || fail "ansible-playbook --check exited $RC"
expect_stats failures 0 $HOSTS
for h in $HOSTS; do [ "$(stat_of $h changed)" -ge 1 ] || fail "$h: --check reported no change"; done
expect_module '["changed"]' true $HOSTS
expect_module '["version"]' 9.1.0.70 $HOSTS
expect_module '["generation"]' null $HOSTS
expect_module '["diff"]["before"]' 'none' h1
expect_module '["diff"]["after"]' 'version 9.1.0.70 (new generation)' h1
snapshot_roots after
for h in $HOSTS; do
  cmp "$E2E_TMP/snap.$h.before" "$E2E_TMP/snap.$h.after" ||
    fail "--check changed ${ROOT[$h]}: $(diff "$E2E_TMP/snap.$h.before" "$E2E_TMP/snap.$h.after" | head)"
done
expect_active none $HOSTS

TEST "apply: changed on every host, 9.1.0 active everywhere"
play --diff
[ "$RC" -eq 0 ] || fail "ansible-playbook exited $RC"
expect_stats failures 0 $HOSTS
expect_module '["changed"]' true $HOSTS
expect_module '["generation"]' 1 $HOSTS
expect_module '["previous_version"]' null h1
expect_module '["rollback_available"]' false h1
expect_active 9.1.0.70 $HOSTS
for h in $HOSTS; do expect_file "${ROOT[$h]}/etc/cudnnctl/pins.d/site-mirror.sha256"; done

TEST "apply again: changed=0 on every host (idempotent)"
play
[ "$RC" -eq 0 ] || fail "ansible-playbook exited $RC"
expect_stats changed 0 $HOSTS
expect_stats failures 0 $HOSTS
expect_module '["version"]' 9.1.0.70 $HOSTS
expect_module '["generation"]' 1 $HOSTS
expect_module '["previous_version"]' 9.1.0.70 h1

TEST "change the version: changed on 7 hosts; h8's corrupted archive fails with the CLI's message"
snapshot_roots before
play --diff -e cudnn_version=9.27.0
expect_eq "$RC" 2 "ansible-playbook exit status with one failed host"
expect_stats failures 0 $GOOD_HOSTS
expect_stats failures 1 h8
expect_module '["changed"]' true $GOOD_HOSTS
expect_module '["version"]' 9.27.0.42 $GOOD_HOSTS
expect_module '["previous_version"]' 9.1.0.70 $GOOD_HOSTS
expect_module '["rollback_version"]' 9.1.0.70 h1
expect_module '["generation"]' 2 h1
expect_module '["rc"]' 4 h8
expect_module '["error_code"]' integrity h8
msg=$(module_result '["msg"]' h8)
case $msg in *"sha256 mismatch for $(basename "$A927")"*) ;; *) fail "h8: msg does not name the sha256 mismatch: $msg" ;; esac
# Exactly the CLI's own message for the same failure (on a scratch root).
expect_exit 4 "$CUDNNCTL" --root "$(new_root)" --mirror "$BAD" --cuda 12 --json install 9.27.0
expect_eq "$msg" "$(json_get 'd["error"]["message"]')" "h8's msg vs the CLI's error.message"
expect_active 9.27.0.42 $GOOD_HOSTS
expect_active 9.1.0.70 h8
# h8's root is unchanged: the failed install leaves only its history line and the lock
# file's holder text (both state logs, not installed state).
grep -v -E '^var/lib/cudnnctl/(lock|history\.jsonl) ' "$E2E_TMP/snap.h8.before" >"$E2E_TMP/h8.a"
tree_snapshot "${ROOT[h8]}" | grep -v -E '^var/lib/cudnnctl/(lock|history\.jsonl) ' >"$E2E_TMP/h8.b"
cmp "$E2E_TMP/h8.a" "$E2E_TMP/h8.b" || fail "h8's root changed: $(diff "$E2E_TMP/h8.a" "$E2E_TMP/h8.b" | head)"
expect_exit 0 "$CUDNNCTL" --root "${ROOT[h8]}" --json history
expect_json 'd["data"]["history"][-1]["result"]' failed

TEST "state rolled_back: the previous version is active again; again: changed=0"
play --diff -e cudnn_version=9.27.0 -e cudnn_state=rolled_back
[ "$RC" -eq 0 ] || fail "ansible-playbook exited $RC"
expect_stats failures 0 $HOSTS
expect_module '["changed"]' true $GOOD_HOSTS
expect_module '["changed"]' false h8 # 9.27.0 is not active there: nothing to do
expect_module '["version"]' 9.1.0.70 $HOSTS
expect_module '["previous_version"]' 9.27.0.42 h1
expect_module '["diff"]["after"]' 'version 9.1.0.70 (generation 1)' h1
expect_active 9.1.0.70 $HOSTS
play -e cudnn_version=9.27.0 -e cudnn_state=rolled_back
[ "$RC" -eq 0 ] || fail "ansible-playbook exited $RC"
expect_stats changed 0 $HOSTS

TEST "state absent: an old version is removed; the active one fails with the CLI's message"
play --diff -e cudnn_version=9.27.0 -e cudnn_state=absent --limit h1,h2,h8
[ "$RC" -eq 0 ] || fail "ansible-playbook exited $RC"
expect_module '["changed"]' true h1 h2
expect_module '["changed"]' false h8
expect_exit 0 "$CUDNNCTL" --root "${ROOT[h1]}" --json list
expect_json '[e["version"] for e in d["data"]["installed"]]' '["9.1.0.70"]'
play -e cudnn_version=9.1.0 -e cudnn_state=absent --limit h1
expect_eq "$RC" 2 "ansible-playbook exit status"
expect_stats failures 1 h1
expect_module '["rc"]' 2 h1
msg=$(module_result '["msg"]' h1)
case $msg in *"is the active version"*) ;; *) fail "h1: msg is not the CLI's: $msg" ;; esac
expect_active 9.1.0.70 h1

TEST "state query: facts only"
play -e cudnn_state=query --limit h1 --check
[ "$RC" -eq 0 ] || fail "ansible-playbook exited $RC"
expect_stats changed 0 h1
expect_module '["version"]' 9.1.0.70 h1
expect_module '["installed"][0]["version"]' 9.1.0.70 h1

TEST "keep_generations runs gc --keep N after an install"
play -e cudnn_version=9.27.0 -e cudnn_keep_generations=1 --limit h1
[ "$RC" -eq 0 ] || fail "ansible-playbook exited $RC"
expect_module '["changed"]' true h1
case $(module_result '["actions"]' h1) in *'"deleted generation 1"'*) ;; *) fail "h1: gc did not run: $(module_result '["actions"]' h1)" ;; esac
expect_module '["rollback_available"]' false h1
expect_exit 0 "$CUDNNCTL" --root "${ROOT[h1]}" --json list
expect_json '[e["version"] for e in d["data"]["installed"]]' '["9.27.0.42"]'
expect_json '[g["generation"] for g in d["data"]["generations"]]' '[3]'

TEST "a missing cudnnctl fails at once with a clear message"
play -e cudnnctl_path=/nonexistent/cudnnctl --limit h1
expect_eq "$RC" 2 "ansible-playbook exit status"
expect_stats failures 1 h1
expect_module '["msg"]' "/nonexistent/cudnnctl is not an executable: install cudnnctl first, or set cudnnctl_path" h1

TEST "a signed recall list: the module fails with rc 7 and reports the recall; force installs it"
command -v openssl >/dev/null || fail "the openssl CLI is needed to sign the recall list"
{
  recall_keys site
  RR=${ROOT[h3]}
  mkdir -p "$RR/etc/cudnnctl/keys.d" "$RR/etc/cudnnctl/recalls.d"
  cp "$KEYS/site.pem" "$RR/etc/cudnnctl/keys.d/"
  printf '{"schema": 1, "recalls": [{"version": "9.27.0.42", "reason": "bad build (test)", "url": "https://example.invalid/r"}]}\n' \
    >"$RR/etc/cudnnctl/recalls.d/site.json"
  sign site "$RR/etc/cudnnctl/recalls.d/site.json"
  before=$(active_version h3)
  play -e cudnn_version=9.27.0 --limit h3
  expect_eq "$RC" 2 "ansible-playbook exit status"
  expect_stats failures 1 h3
  expect_module '["rc"]' 7 h3
  expect_module '["error_code"]' requirement h3
  expect_module '["recalled"]["reason"]' "bad build (test)" h3
  expect_module '["recalled"]["list"]' /etc/cudnnctl/recalls.d/site.json h3
  msg=$(module_result '["msg"]' h3)
  case $msg in *"cuDNN 9.27.0.42 (CUDA 12) is recalled: bad build (test) (https://example.invalid/r)"*) ;;
  *) fail "h3: msg does not name the recall: $msg" ;; esac
  expect_active "$before" h3
  # The role's cudnn_force (the module's force option): installed, the recall still reported.
  play -e cudnn_version=9.27.0 -e cudnn_force=true --limit h3
  [ "$RC" -eq 0 ] || fail "ansible-playbook -e cudnn_force=true exited $RC"
  expect_module '["changed"]' true h3
  expect_module '["recalled"]["reason"]' "bad build (test)" h3
  expect_active 9.27.0.42 h3
}

TEST "the framework gate: the module fails with rc 7 and the gate's message, check mode predicts it, force switches"
command -v gcc >/dev/null || fail "gcc is needed to build the fake torch"
{
  RR=${ROOT[h5]}
  SITE=/opt/torch/.venv/lib/python3.12/site-packages
  DOCTOR_STUB_CACHE=$E2E_TMP/stubs python3 "$E2E_FIXTURES/doctor/mkroot.py" torch "$RR" $SITE 2.11.0 \
    --pin nvidia-cudnn-cu12==9.19.0.56
  # 9.27.0 active (torch accepts it), then 9.1.0 asked for (torch was built for 9.19).
  play -e cudnn_version=9.27.0 --limit h5
  [ "$RC" -eq 0 ] || fail "ansible-playbook -e cudnn_version=9.27.0 exited $RC"
  expect_active 9.27.0.42 h5
  tree_snapshot "$RR" >"$E2E_TMP/h5.before"
  play --check -e cudnn_version=9.1.0 --limit h5
  expect_eq "$RC" 2 "ansible-playbook --check exit status"
  expect_module '["rc"]' 7 h5
  expect_module '["error_code"]' framework_incompatible h5
  play -e cudnn_version=9.1.0 --limit h5
  expect_eq "$RC" 2 "ansible-playbook exit status"
  expect_stats failures 1 h5
  expect_module '["rc"]' 7 h5
  expect_module '["error_code"]' framework_incompatible h5
  expect_module '["frameworks"][0]["verdict"]' breaks h5
  expect_module '["frameworks"][0]["built_for"]' 9.19.0.56 h5
  msg=$(module_result '["msg"]' h5)
  case $msg in *"would break 1 framework"*"torch 2.11.0 at $SITE was built for cuDNN 9.19.0.56"*"--force"*) ;;
  *) fail "h5: msg is not the gate's: $msg" ;; esac
  tree_snapshot "$RR" >"$E2E_TMP/h5.after"
  cmp -s "$E2E_TMP/h5.before" "$E2E_TMP/h5.after" || fail "h5: a refused task changed the root"
  play -e cudnn_version=9.1.0 -e cudnn_force=true --limit h5
  [ "$RC" -eq 0 ] || fail "ansible-playbook -e cudnn_force=true exited $RC"
  expect_module '["changed"]' true h5
  expect_active 9.1.0.70 h5
}

TEST "nothing was written outside the test's temporary directory"
tree_snapshot "$ANS" >"$E2E_TMP/ans.after"
cmp "$E2E_TMP/ans.before" "$E2E_TMP/ans.after" || fail "scripts/ansible changed: $(diff "$E2E_TMP/ans.before" "$E2E_TMP/ans.after" | head)"
if [ -d "$REAL_HOME/.ansible" ]; then
  expect_eq "$(find "$REAL_HOME/.ansible" -newer "$E2E_TMP/start-marker" | head -3)" "" "files written under $REAL_HOME/.ansible"
fi
