# SPDX-License-Identifier: Apache-2.0
# The Ansible collection cudnnctl.fleet (scripts/ansible/ansible_collections/cudnnctl/fleet,
# docs/FLEET.md "The Ansible collection"): `ansible-galaxy collection build` and install,
# `ansible-doc` of the module by its FQCN, the role by its FQCN driving the module from the
# collection (no library/ folder), the library/ and roles/ symlinks for playbooks that use
# them, and the ansible-test sanity tests that run offline.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
command -v ansible-galaxy >/dev/null || skip "ansible-galaxy is not installed"
REPO=$(cd "$E2E_DIR/../.." && pwd)
COLL=$REPO/scripts/ansible/ansible_collections/cudnnctl/fleet
export HOME=$E2E_TMP/home ANSIBLE_LOCAL_TEMP=$E2E_TMP/ansible-local ANSIBLE_REMOTE_TEMP=$E2E_TMP/ansible-remote
export ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=false ANSIBLE_DEPRECATION_WARNINGS=false
mkdir -p "$HOME"
cd "$E2E_TMP"

TEST "ansible-galaxy collection build and install"
expect_exit 0 ansible-galaxy collection build "$COLL" --output-path "$E2E_TMP/dist"
TAR=$E2E_TMP/dist/cudnnctl-fleet-0.1.0.tar.gz
expect_file "$TAR"
tar -tzf "$TAR" >"$E2E_TMP/contents"
for f in MANIFEST.json FILES.json README.md meta/runtime.yml plugins/modules/cudnnctl.py \
  roles/cudnn/tasks/main.yml roles/cudnn/tasks/package.yml roles/cudnn/templates/config.toml.j2; do
  grep -qx "$f" "$E2E_TMP/contents" || fail "the collection lacks $f"
done
if grep -q '^tests/output' "$E2E_TMP/contents"; then fail "ansible-test output was packed"; fi
expect_exit 0 ansible-galaxy collection install "$TAR" -p "$E2E_TMP/collections"
export ANSIBLE_COLLECTIONS_PATH=$E2E_TMP/collections
expect_exit 0 ansible-galaxy collection list cudnnctl.fleet
expect_contains "$OUT" "cudnnctl.fleet"
expect_contains "$OUT" "0.1.0"

TEST "ansible-doc cudnnctl.fleet.cudnnctl"
expect_exit 0 ansible-doc cudnnctl.fleet.cudnnctl
for s in OPTIONS rolled_back keep_generations check_mode "RETURN VALUES"; do expect_contains "$OUT" "$s"; done
expect_exit 0 ansible-doc -l cudnnctl.fleet
expect_contains "$OUT" "cudnnctl.fleet.cudnnctl"

TEST "the role by its FQCN, with the collection's module (no library/ folder)"
M=$(std_mirror)
start_nginx "$M"
R=$(new_root)
cat >"$E2E_TMP/play.yml" <<EOF
- hosts: localhost
  gather_facts: false
  roles:
    - role: cudnnctl.fleet.cudnn
      vars:
        cudnn_root: "$R"
        cudnn_version: "9.1.0"
        cudnn_cuda: 12
        cudnn_mirrors: ["$MIRROR_URL/"]
        cudnnctl_path: "$CUDNNCTL"
        cudnnctl_manage_config: true
EOF
expect_exit 0 env ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 ansible-playbook -i localhost, -c local "$E2E_TMP/play.yml"
expect_contains "$OUT" "changed=3"
expect_exit 0 "$CUDNNCTL" --root "$R" --json status
expect_json 'd["active"]["version"]' 9.1.0.70
expect_contains "$R/etc/cudnnctl/config.toml" "mirrors = [\"$MIRROR_URL/\"]"
expect_contains "$R/etc/cudnnctl/config.toml" "cuda = 12"
# cudnnctl itself reads the config the role wrote.
expect_exit 0 "$CUDNNCTL" --root "$R" --json install 9.1.0
expect_json 'd["changed"]' false
expect_exit 0 env ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 ansible-playbook -i localhost, -c local "$E2E_TMP/play.yml"
expect_contains "$OUT" "changed=0"

TEST "scripts/ansible/library/ and roles/ still work for playbooks beside them"
for l in "$REPO/scripts/ansible/library/cudnnctl.py" "$REPO/scripts/ansible/roles/cudnn" "$COLL/roles/cudnn/library/cudnnctl.py"; do
  [ -L "$l" ] && [ -e "$l" ] || fail "$l is not a working symlink"
done
expect_eq "$(readlink -f "$REPO/scripts/ansible/library/cudnnctl.py")" "$COLL/plugins/modules/cudnnctl.py" "library/cudnnctl.py"
unset ANSIBLE_COLLECTIONS_PATH
expect_exit 0 ansible-doc -M "$REPO/scripts/ansible/library" cudnnctl
expect_exit 0 ansible-playbook -i localhost, "$REPO/scripts/ansible/canary.yml" --syntax-check

TEST "ansible-test sanity: the tests that run offline"
# The others (ansible-doc, import, pep8, pylint, validate-modules, yamllint, ...) install
# their requirements into virtualenvs with pip from the network, which is not reachable
# here; ansible-doc runs above.
[ -n "$E2E_TMP" ] && [ -d "$E2E_TMP" ] || fail "no temporary directory"
S=$E2E_TMP/src/ansible_collections/cudnnctl/fleet
mkdir -p "$S"
cp -a "$COLL/." "$S/"
tests=(action-plugin-docs compile empty-init future-import-boilerplate ignores line-endings
  metaclass-boilerplate no-assert no-basestring no-dict-iteritems no-dict-iterkeys
  no-dict-itervalues no-get-exception no-illegal-filenames no-main-display no-smart-quotes
  no-unicode-literals replace-urlopen shebang symlinks use-argspec-type-path use-compat-six)
args=()
for t in "${tests[@]}"; do args+=(--test "$t"); done
PYV=$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
cd "$S"
expect_exit 0 ansible-test sanity --local --python "$PYV" "${args[@]}"
expect_not_contains "$OUT" "ERROR"
# The gate can fail: a broken symlink in the copy is found.
ln -s nowhere "$S/roles/cudnn/broken"
expect_exit '!0' ansible-test sanity --local --python "$PYV" --test symlinks
cat "$OUT" "$ERR" >"$E2E_TMP/sanity.txt"
expect_contains "$E2E_TMP/sanity.txt" "roles/cudnn/broken"
cd "$E2E_TMP"
