# slots (issue 16 part B): several active cuDNN at once, one per (cuDNN major, CUDA major).
# Under temporary roots with the standard mirror: install 9.27.0 (CUDA 13), install 8.9.7
# (CUDA 12) --alongside; the real `ldconfig -r` must resolve libcudnn.so.8 and libcudnn.so.9
# into their own store entries; rollback of one slot leaves the other byte-identical; gc keeps
# N per slot; remove refuses what any slot has active; status/list --json list every slot.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
require_cudnnctl
source "$E2E_DIR/slots_lib.bash"
E86=8.9.6.50-cuda12-linux-x86_64
provider() { ldconfig -r "$R" -p | awk -v s="$1" '$1 == s && /x86-64/ { print $NF; exit }'; }
expect_provider() { expect_eq "$(provider "$1")" "/opt/cudnn/store/$2/lib/$1" "ld.so cache entry for $1"; }
snap() { tree_snapshot "$R/opt/cudnn/store/$1"; readlink "$R/opt/cudnn/slots/$2" 2>/dev/null || readlink "$R/opt/cudnn/current"; }

TEST "a state of the previous version (one slot) loads unchanged: status, list, no data.slots extras"
expect_exit 0 c --cuda 13 install 9.27.0 --no-smoke --json
expect_json 'd["active"]["generation"]' 1
expect_no_file "$R/opt/cudnn/slots"
# What the previous version wrote: generation metadata without "slot".
python3 - "$R/opt/cudnn/generations/1.json" <<'PY'
import json, sys
p = sys.argv[1]; d = json.load(open(p)); d.pop("slot", None); open(p, "w").write(json.dumps(d))
PY
expect_exit 0 c status --json
expect_json 'd["active"]["version"]' 9.27.0.42
expect_json 'd["data"]["slots"]' "[{\"cuda\": 13, \"generation\": 1, \"path\": \"$R/opt/cudnn/store/$E9\", \"platform\": \"linux-x86_64\", \"primary\": true, \"slot\": \"9-cuda13\", \"version\": \"9.27.0.42\"}]"
expect_exit 0 c list --json
expect_json '[g["slot"] for g in d["data"]["generations"]]' '["9-cuda13"]'

TEST "install 8.9.7 --alongside: its own slot, the primary slot kept"
expect_exit 0 c --cuda 12 install 8.9.7 --alongside --no-smoke --json
expect_json 'd["changed"]' true
expect_json 'd["active"]["version"]' 9.27.0.42
expect_json 'd["active"]["generation"]' 1
expect_json 'd["data"]["slot"]' 8-cuda12
expect_symlink "$R/opt/cudnn/current" generations/1
expect_symlink "$R/opt/cudnn/slots/8-cuda12" ../generations/2
expect_exit 0 python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["slot"] == "8-cuda12"' "$R/opt/cudnn/generations/2.json"
expect_exit 0 c status --json
expect_json '[(s["slot"], s["version"], s["generation"], s["primary"]) for s in d["data"]["slots"]]' '[["9-cuda13", "9.27.0.42", 1, true], ["8-cuda12", "8.9.7.29", 2, false]]'
expect_json 'd["active"]["version"]' 9.27.0.42
expect_exit 0 c status
expect_contains "$OUT" "slots:    9-cuda13 (primary): cuDNN 9.27.0.42, generation 1; 8-cuda12: cuDNN 8.9.7.29, generation 2"

TEST "the loader: ldconfig -r resolves each SONAME into its own slot's entry"
expect_contains "$R/etc/ld.so.conf.d/00-cudnnctl.conf" "/opt/cudnn/store/$E9/lib"
expect_contains "$R/etc/ld.so.conf.d/00-cudnnctl.conf" "/opt/cudnn/store/$E8/lib"
expect_provider libcudnn.so.9 "$E9"
expect_provider libcudnn.so.8 "$E8"
expect_provider libcudnn_ops_infer.so.8 "$E8"
expect_provider libcudnn_graph.so.9 "$E9"
expect_exit 0 c status --json
expect_json 'd["data"]["loader_dropin"]' "/opt/cudnn/store/$E9/lib"

TEST "CUDA-home links: unversioned names from the highest major, versioned 8.x names too"
L=$R/usr/local/cuda/lib64
expect_symlink "$L/libcudnn.so" "../../../../opt/cudnn/store/$E9/lib/libcudnn.so"
expect_eq "$(readlink "$L/libcudnn.so.9")" "../../../../opt/cudnn/store/$E9/lib/libcudnn.so.9"
expect_eq "$(readlink -f "$L/libcudnn.so.8")" "$(readlink -f "$R/opt/cudnn/store/$E8/lib/libcudnn.so.8")"
expect_eq "$(readlink -f "$R/usr/local/cuda/include/cudnn_version.h")" "$R/opt/cudnn/store/$E9/include/cudnn_version.h"
[ ! -e "$L/libcudnn_ops_infer.so" ] || fail "the unversioned 8.x dev link must not be linked"
expect_file "$L/libcudnn_ops_infer.so.8"

TEST "a plain install into a slot active alongside is refused (exit 2), nothing changed"
snap "$E8" 8-cuda12 >"$E2E_TMP/s8.before"
snap_tree "$R/opt/cudnn" prefix
expect_exit 2 c --cuda 12 install 8.9.6.50 --no-smoke --json
expect_error "belongs to slot 8-cuda12"
expect_error "--alongside"
expect_same_tree "$R/opt/cudnn" prefix "the refused install changed the prefix"
snap "$E8" 8-cuda12 >"$E2E_TMP/s8.after"
cmp -s "$E2E_TMP/s8.before" "$E2E_TMP/s8.after" || fail "the refused install changed slot 8-cuda12"

TEST "--alongside into the primary slot replaces its version (a warning says so)"
expect_exit 0 c --cuda 13 install 9.27.0 --alongside --no-smoke --json
expect_json 'd["changed"]' false

TEST "a second version in slot 8: install 8.9.6.50 --alongside, then rollback --slot 8-cuda12"
tree_snapshot "$R/opt/cudnn/store/$E9" >"$E2E_TMP/s9.before"
expect_exit 0 c --cuda 12 install 8.9.6.50 --alongside --no-smoke --json
expect_symlink "$R/opt/cudnn/slots/8-cuda12" ../generations/3
expect_provider libcudnn.so.8 "$E86"
expect_provider libcudnn.so.9 "$E9"
expect_exit 0 python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["parent"] == 2' "$R/opt/cudnn/generations/3.json"
expect_exit 0 c rollback --slot 8-cuda12 --json
expect_json 'd["data"]["slot"]' 8-cuda12
expect_json 'd["active"]["generation"]' 1
expect_symlink "$R/opt/cudnn/slots/8-cuda12" ../generations/2
expect_symlink "$R/opt/cudnn/current" generations/1
expect_provider libcudnn.so.8 "$E8"
expect_provider libcudnn.so.9 "$E9"
tree_snapshot "$R/opt/cudnn/store/$E9" >"$E2E_TMP/s9.after"
cmp -s "$E2E_TMP/s9.before" "$E2E_TMP/s9.after" || fail "slot 9-cuda13's entry changed"
expect_exit 2 c use 8.9.6.50 --json
expect_error "belongs to slot 8-cuda12 (8.9.7.29, generation 2)"
expect_symlink "$R/opt/cudnn/slots/8-cuda12" ../generations/2

TEST "rollback of the primary slot leaves slot 8 byte-identical"
expect_exit 0 c --cuda 12 install 9.1.0 --no-smoke --json
expect_json 'd["active"]["version"]' 9.1.0.70
expect_provider libcudnn.so.9 "$E91"
snap "$E8" 8-cuda12 >"$E2E_TMP/s8.before"
expect_exit 0 c rollback
expect_contains "$OUT" "unchanged alongside: 8-cuda12"
expect_provider libcudnn.so.9 "$E9"
expect_provider libcudnn.so.8 "$E8"
snap "$E8" 8-cuda12 >"$E2E_TMP/s8.after"
cmp -s "$E2E_TMP/s8.before" "$E2E_TMP/s8.after" || fail "slot 8-cuda12 changed"

TEST "rollback --slot: bad names and slots that are not active are exit 2, nothing changed"
snap_tree "$R/opt/cudnn" prefix
expect_exit 2 c rollback --slot bogus --json
expect_error "not a slot name"
expect_exit 2 c rollback --slot 7-cuda11 --json
expect_error "no such active slot"
expect_exit 2 c rollback --slot 8-cuda12 --to 4 --json
expect_error "does not exist in slot 8-cuda12"
expect_same_tree "$R/opt/cudnn" prefix "a refused rollback changed the prefix"

TEST "remove refuses a version active in a non-primary slot (exit 2)"
expect_exit 2 c remove 8.9.7 --json
expect_error "is active in slot 8-cuda12"
expect_exit 0 c remove 8.9.6.50 --json
expect_no_file "$R/opt/cudnn/store/$E86"

TEST "gc --keep 1 keeps one generation per slot"
expect_exit 0 c gc --keep 1 --json
expect_exit 0 c list --json
expect_json 'sorted(g["generation"] for g in d["data"]["generations"])' '[1, 2]'
expect_json 'sorted(e["entry"] for e in d["data"]["installed"])' "[\"$E8\", \"$E9\"]"
expect_provider libcudnn.so.8 "$E8"
expect_provider libcudnn.so.9 "$E9"

TEST "history records the slot"
expect_exit 0 c history --json
expect_json '[(h.get("slot"), h.get("primary")) for h in d["data"]["history"] if h["command"] in ("install", "rollback")][:3]' '[["9-cuda13", true], ["8-cuda12", false], ["8-cuda12", false]]'

TEST "check --prometheus: one cudnnctl_info line per slot"
expect_exit 0 c check --prometheus "$E2E_TMP/slots.prom"
expect_contains "$E2E_TMP/slots.prom" "cudnnctl_info{version=\"9.27.0.42\",cuda=\"13\",generation=\"1\",slot=\"primary\"} 1"
expect_contains "$E2E_TMP/slots.prom" "cudnnctl_info{version=\"8.9.7.29\",cuda=\"12\",generation=\"2\",slot=\"8-cuda12\"} 1"

TEST "two slots of one cuDNN major: the primary keeps libcudnn.so.9, the other's loader check is skipped"
expect_exit 0 c --cuda 12 install 9.1.0 --alongside --no-smoke --json
expect_json 'd["data"]["slot"]' 9-cuda12
expect_check loader skipped
expect_json '[c["message"] for c in d["data"]["checks"] if c["name"] == "loader"][0].startswith("loader check skipped: libcudnn.so.9 stays with another slot")' true
expect_provider libcudnn.so.9 "$E9"
expect_provider libcudnn.so.8 "$E8"
expect_exit 0 c status --json
expect_json '[s["slot"] for s in d["data"]["slots"]]' '["9-cuda13", "8-cuda12", "9-cuda12"]'
expect_eq "$(grep -vc '^#' "$R/etc/ld.so.conf.d/00-cudnnctl.conf")" 2 "drop-in lines (one per major)"
expect_exit 2 c rollback --slot 9-cuda12 --json
expect_error "is the oldest there is in slot 9-cuda12"

TEST "--alongside with nothing active is a plain install (a warning says so)"
R2=$(new_root)
expect_exit 0 cudnnctl --root "$R2" --mirror "file://$M" --cuda 12 install 8.9.7 --alongside --no-smoke --json
expect_json 'any("nothing is active yet" in w for w in d["warnings"])' true
expect_symlink "$R2/opt/cudnn/current" generations/1
expect_no_file "$R2/opt/cudnn/slots"
