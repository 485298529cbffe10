# The human interface, part two (issue 19, observations 5, 9, 10, 11): `use --require-gpu`
# refuses before the switch (exit 7); `gc --dry-run` names what it deletes with sizes;
# `rollback --undo` undoes a rollback; `purge` leaves the root byte for byte as it was before
# cudnnctl (adopted originals back), also after a crash mid-way; the cache policy
# (`--no-cache`, `keep_cache`, sizes in list/status, the Dockerfile recipe of the README);
# `env` extras; `list --available`. Everything under temporary roots, mirrors on file://.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl
cr_templates
REPO=$(cd "$E2E_DIR/../.." && pwd)

TEST "obs 9: use VERSION --require-gpu without a usable GPU: exit 7 before the switch"
R=$(cr_copy two obs9)
cr_state_snapshot "$R" >"$E2E_TMP/obs9.before"
expect_exit 7 ctl "$R" --json use 9.1.0 --require-gpu
expect_json 'd["error"]["code"]' requirement
expect_error "--require-gpu: no"
expect_error "(install where a usable GPU is visible, or drop --require-gpu)"
expect_json 'd["active"]["generation"]' 2
expect_eq "$(cr_current "$R")" 2 "active generation"
[ ! -e "$R/opt/cudnn/generations/3" ] || fail "a generation was created for the refused use"
cr_state_snapshot "$R" >"$E2E_TMP/obs9.after"
diff "$E2E_TMP/obs9.before" "$E2E_TMP/obs9.after" >/dev/null || fail "the refused use changed the state: $(diff "$E2E_TMP/obs9.before" "$E2E_TMP/obs9.after")"
if grep -q '"command": *"use' "$R/var/lib/cudnnctl/history.jsonl" 2>/dev/null; then
  grep '"use' "$R/var/lib/cudnnctl/history.jsonl" | grep -q '"rolled-back"' && fail "use switched and rolled back"
fi
expect_exit 7 ctl "$R" --dry-run --json use 9.1.0 --require-gpu
expect_json 'd["error"]["code"]' requirement
expect_exit 2 ctl "$R" --json use 9.1.0 --require-gpu --no-smoke
expect_error "--require-gpu asks for the GPU smoke test, which --no-smoke turns off"
# Without --require-gpu the same switch goes ahead (the smoke test is skipped, a warning).
expect_exit 0 ctl "$R" --json use 9.1.0
expect_eq "$(cr_current "$R")" 3 "active generation after a plain use"

TEST "obs 10: gc --keep 1 --dry-run names each generation and entry with its size and the total"
R=$(cr_copy three obs10)
tree_snapshot "$R" >"$E2E_TMP/obs10.before"
expect_exit 0 ctl "$R" --json --dry-run gc --keep 1 --cache
expect_json 'd["data"]["deleted_generations"]' '[1, 2]'
expect_json 'sorted(d["data"]["deleted_entries"])' '["8.9.7.29-cuda12-linux-x86_64", "9.1.0.70-cuda12-linux-x86_64"]'
# The sizes are the entries' real file sizes (what deleting them frees), and the cache's.
want=$(python3 - "$R" <<'PY'
import os, sys
root = sys.argv[1]
total = 0
for e in ("8.9.7.29-cuda12-linux-x86_64", "9.1.0.70-cuda12-linux-x86_64"):
    d = os.path.join(root, "opt/cudnn/store", e)
    for base, dirs, files in os.walk(d):
        for f in files:
            p = os.path.join(base, f)
            if f != ".cudnnctl-entry.json" and os.path.isfile(p) and not os.path.islink(p):
                total += os.lstat(p).st_size
c = os.path.join(root, "var/cache/cudnnctl")
for f in os.listdir(c):
    total += os.lstat(os.path.join(c, f)).st_size
print(total)
PY
)
expect_json 'd["data"]["freed_bytes"]' "$want"
expect_json 'sum(d["data"]["entry_bytes"].values()) + sum(d["data"]["cache_bytes"].values())' "$want"
expect_exit 0 ctl "$R" --dry-run gc --keep 1
expect_contains "$OUT" "would delete generation 1 (9.1.0.70-cuda12-linux-x86_64)"
expect_contains "$OUT" "would delete generation 2 (8.9.7.29-cuda12-linux-x86_64)"
grep -qE '^would delete store entry 9\.1\.0\.70-cuda12-linux-x86_64 \([0-9.]+ [KMG]?i?B\)$' "$OUT" ||
  fail "the entry line lacks its size: $(cat "$OUT")"
expect_contains "$OUT" "freeing "
expect_eq "$(tree_snapshot "$R")" "$(cat "$E2E_TMP/obs10.before")" "the root after gc --dry-run"

TEST "obs 10: rollback --to 1, then rollback --undo returns to 3; --undo again toggles"
expect_exit 0 ctl "$R" rollback --to 1
expect_contains "$OUT" "(\`cudnnctl rollback --undo\` switches back to generation 3)"
expect_eq "$(cr_current "$R")" 1
expect_exit 2 ctl "$R" --json rollback # the parent of 1: nothing (as before)
expect_json 'd["error"]["code"]' nothing_to_roll_back
expect_exit 0 ctl "$R" --json --dry-run rollback --undo
expect_json 'd["changed"]' true
expect_eq "$(cr_current "$R")" 1 "after --dry-run"
expect_exit 0 ctl "$R" --json rollback --undo
expect_json 'd["active"]["generation"]' 3
expect_json 'd["previous"]["generation"]' 1
expect_eq "$(cr_current "$R")" 3
expect_exit 0 ctl "$R" rollback --undo
expect_eq "$(cr_current "$R")" 1 "a second --undo undoes the first"
cr_check "$R" --loader

TEST "obs 10: rollback --undo with nothing to undo, and with --to: exit 2, nothing changed"
R=$(cr_copy one obs10b)
cr_state_snapshot "$R" >"$E2E_TMP/obs10b.before"
expect_exit 2 ctl "$R" --json rollback --undo
expect_json 'd["error"]["code"]' nothing_to_roll_back
expect_error "nothing to undo: the history records no switch to generation 1 from another generation"
expect_exit 2 ctl "$R" --json rollback --undo --to 1
expect_json 'd["error"]["code"]' usage
expect_exit 2 ctl "$(cr_copy empty obs10c)" --json rollback --undo
expect_json 'd["error"]["code"]' nothing_to_roll_back
cr_state_snapshot "$R" >"$E2E_TMP/obs10b.after"
diff -q "$E2E_TMP/obs10b.before" "$E2E_TMP/obs10b.after" >/dev/null || fail "a refused --undo changed the state"
# The generation to go back to was deleted meanwhile: no_such_generation.
R=$(cr_copy three obs10d)
expect_exit 0 ctl "$R" rollback --to 1
expect_exit 0 ctl "$R" gc --keep 1 # deletes 2 and 3
expect_exit 2 ctl "$R" --json rollback --undo
expect_json 'd["error"]["code"]' no_such_generation
expect_error "was deleted (by gc or remove)"

# ---- obs 11: purge ---------------------------------------------------------------------------

# machine_root: a root laid out like this machine before cudnnctl: /usr/local/cuda ->
# /usr/local/cuda-13.0 with lib64 -> lib, NVIDIA's cuDNN 9.19 copied in by hand (the real
# headers, the real libcudnn.so.9 and the real links; the large sub-libraries cut to their
# first 64 KiB to keep the test fast), the CUDA 13 runtime header, a non-cuDNN library, the
# operator's pins, the loader cache, and the empty /opt, /var/lib, /var/cache of any machine.
machine_root() {
  local r c=/usr/local/cuda-13.0 f
  r=$(new_root)
  mkdir -p "$r/opt" "$r/var/lib" "$r/var/cache" "$r$c/include" "$r$c/lib"
  ln -s lib "$r$c/lib64"
  ln -s "$c" "$r/usr/local/cuda"
  cp -p "$c"/include/cudnn*.h "$c/include/cuda_runtime_api.h" "$r$c/include/"
  for f in "$c"/lib/libcudnn*; do
    if [ -L "$f" ]; then
      cp -P "$f" "$r$c/lib/"
    elif [ "$(basename "$f")" = libcudnn.so.9 ]; then
      cp -p "$f" "$r$c/lib/"
    else
      head -c 65536 "$f" >"$r$c/lib/$(basename "$f")"
      touch -r "$f" "$r$c/lib/$(basename "$f")"
    fi
  done
  printf 'not cuDNN\n' >"$r$c/lib/libcudart.so.13.0.48"
  ln -s libcudart.so.13.0.48 "$r$c/lib/libcudart.so.13"
  cr_pin "$r"
  ldconfig -r "$r" 2>/dev/null || true
  echo "$r"
}
[ -e /usr/local/cuda-13.0/lib/libcudnn.so.9 ] || skip "the machine's cuDNN 9.19 (/usr/local/cuda-13.0/lib) is not there"
M13=(--mirror "file://$CR_MIRROR")

TEST "obs 11: purge after adopt + install: --dry-run lists it, --yes leaves the root as before, byte for byte"
R=$(machine_root)
tree_snapshot "$R" >"$E2E_TMP/machine.before"
expect_exit 0 cudnnctl --root "$R" "${M13[@]}" --json install 9.27.0 --no-smoke
expect_json 'd["data"]["adopted"]["version"][:4]' "9.19"
expect_json 'd["active"]["version"]' 9.27.0.42
expect_exit 0 cudnnctl --root "$R" rollback # to the adopted 9.19
expect_exit 0 cudnnctl --root "$R" rollback --undo
[ -L "$R/usr/local/cuda-13.0/lib/libcudnn.so.9" ] || fail "install did not link the CUDA home"
[ -e "$R/etc/ld.so.conf.d/00-cudnnctl.conf" ] || fail "no loader drop-in"
tree_snapshot "$R" >"$E2E_TMP/machine.installed"
# --dry-run: lists every path, writes nothing.
expect_exit 0 cudnnctl --root "$R" --json --dry-run purge
expect_json 'd["changed"]' true
expect_json 'd["data"]["originals_put_back"] > 20' true
paths=$(json_get '" ".join(i["path"] for i in d["data"]["removed"])')
for p in /etc/ld.so.conf.d/00-cudnnctl.conf /opt/cudnn/lib/pkgconfig/cudnn.pc /opt/cudnn/current \
  /opt/cudnn/generations /opt/cudnn/store/9.27.0.42-cuda13-linux-x86_64 /opt/cudnn/store \
  /var/cache/cudnnctl /var/lib/cudnnctl; do
  [[ " $paths " == *" $p "* ]] || fail "purge --dry-run does not list $p: $paths"
done
expect_json 'any(k.startswith("/etc/cudnnctl:") for k in d["data"]["kept"])' true
expect_json 'd["data"]["bytes"] == sum(i["bytes"] for i in d["data"]["removed"])' true
expect_exit 0 cudnnctl --root "$R" --dry-run purge
expect_contains "$OUT" "would put back "
expect_contains "$OUT" "adopted original(s) into /usr/local/cuda and deactivate cudnnctl"
expect_contains "$OUT" "would remove /var/cache/cudnnctl  (download cache, "
expect_contains "$OUT" "kept /etc/cudnnctl: the configuration"
expect_contains "$OUT" "run \`cudnnctl purge --yes\` to do it"
expect_eq "$(tree_snapshot "$R")" "$(cat "$E2E_TMP/machine.installed")" "the root after purge --dry-run"
# Without --yes: refused, one line, nothing changed.
expect_exit 2 cudnnctl --root "$R" --json purge
expect_json 'd["error"]["code"]' confirmation_required
expect_json 'd["changed"]' false
expect_json 'd["error"]["exit_code"]' 2
expect_error "\`cudnnctl purge --dry-run\` lists it, \`cudnnctl purge --yes\` does it"
expect_exit 2 cudnnctl --root "$R" purge
expect_eq "$(wc -l <"$ERR")" 1 "lines on stderr"
expect_eq "$(cat "$OUT")" "" "stdout of the refused purge"
expect_eq "$(tree_snapshot "$R")" "$(cat "$E2E_TMP/machine.installed")" "the root after the refused purge"
# --yes: the machine as it was.
expect_exit 0 cudnnctl --root "$R" --json purge --yes
expect_json 'd["changed"]' true
expect_json 'd["active"]' null
tree_snapshot "$R" >"$E2E_TMP/machine.after"
diff "$E2E_TMP/machine.before" "$E2E_TMP/machine.after" >"$E2E_TMP/machine.diff" ||
  fail "purge left the root different from before cudnnctl: $(head -40 "$E2E_TMP/machine.diff")"
ldconfig -r "$R" -p | grep -q /opt/cudnn && fail "the loader cache still names /opt/cudnn"
# Again: nothing to purge, no change, nothing created.
expect_exit 0 cudnnctl --root "$R" --json purge --yes
expect_json 'd["changed"]' false
expect_exit 0 cudnnctl --root "$R" purge
expect_contains "$OUT" "nothing to purge: cudnnctl has written nothing under $R"
expect_eq "$(tree_snapshot "$R")" "$(cat "$E2E_TMP/machine.before")" "the root after a second purge"

TEST "obs 11: purge killed mid-way (deactivation, store deletion, state deletion): run again, same end"
for step in mid-release after-deactivate mid-purge mid-purge-state; do
  R=$(machine_root)
  tree_snapshot "$R" >"$E2E_TMP/crash.before"
  expect_exit 0 cudnnctl --root "$R" "${M13[@]}" install 9.27.0 --no-smoke
  expect_exit 86 env CUDNNCTL_TEST_CRASH_AT=$step "$CUDNNCTL" --root "$R" purge --yes
  expect_exit 0 cudnnctl --root "$R" purge --yes
  tree_snapshot "$R" >"$E2E_TMP/crash.after"
  diff "$E2E_TMP/crash.before" "$E2E_TMP/crash.after" >"$E2E_TMP/crash.diff" ||
    fail "crash at $step, then purge: the root differs from before cudnnctl: $(head -30 "$E2E_TMP/crash.diff")"
done

TEST "obs 11: purge of a root where cudnnctl installed without adopting; a file of someone else's in the prefix is kept"
R=$(cr_copy two purge2)
mkdir -p "$R/opt" "$R/var/lib" "$R/var/cache"
echo mine >"$R/opt/cudnn/NOTES.txt"
expect_exit 0 ctl "$R" --json purge --yes
expect_json 'any(k.startswith("/opt/cudnn/NOTES.txt:") for k in d["data"]["kept"])' true
# (var/cache/ldconfig is ldconfig's own, there on every Debian machine: the root had none.)
expect_eq "$(cd "$R" && find opt var etc/ld.so.conf.d -path var/cache/ldconfig -prune -o -print | sort | tr '\n' ' ')" \
  "etc/ld.so.conf.d opt opt/cudnn opt/cudnn/NOTES.txt var var/cache var/lib " "what is left"

TEST "issue 34 F12: purge keeps and names the user's backup exports and others' files in backups/"
R=$(cr_copy two purge3)
expect_exit 0 ctl "$R" --json backup
EXPORT=$(json_get 'd["data"]["backup"]')
EXPORT=${EXPORT#"$R"}
expect_file "$R$EXPORT"
echo notes >"$R/var/lib/cudnnctl/backups/README.mine"
expect_exit 0 ctl "$R" --json --dry-run purge
expect_json "any(k.startswith('$EXPORT:') for k in d['data']['kept'])" true
expect_exit 0 ctl "$R" --json purge --yes
expect_json "any(k.startswith('$EXPORT:') and 'cudnnctl backup' in k for k in d['data']['kept'])" true
expect_json "any(k.startswith('/var/lib/cudnnctl/backups/README.mine:') for k in d['data']['kept'])" true
expect_file "$R$EXPORT"
expect_file "$R$EXPORT.sha256"
expect_file "$R/var/lib/cudnnctl/backups/README.mine"
expect_eq "$(ls -A "$R/var/lib/cudnnctl" | tr '\n' ' ')" "backups " "what is left of the state directory"
expect_no_file "$R/opt/cudnn/store"
# The export still restores after the purge.
expect_exit 0 ctl "$R" restore "$R$EXPORT"

TEST "issue 34 F12: purge keeps and names others' files in store/, generations/ and the download cache"
R=$(cr_copy two purge4)
echo a >"$R/opt/cudnn/store/site-notes.txt"
mkdir -p "$R/opt/cudnn/store/9.1.0-local-copy/lib" # a directory without cudnnctl's metadata
echo b >"$R/opt/cudnn/generations/README"
mkdir -p "$R/var/cache/cudnnctl"
echo c >"$R/var/cache/cudnnctl/mirror-list.txt"
expect_exit 0 ctl "$R" --json --dry-run purge
for k in /opt/cudnn/store/site-notes.txt /opt/cudnn/store/9.1.0-local-copy /opt/cudnn/generations/README /var/cache/cudnnctl/mirror-list.txt; do
  expect_json "any(k.startswith('$k: not written by cudnnctl') for k in d['data']['kept'])" true
done
expect_exit 0 ctl "$R" --json purge --yes
expect_json "sum(1 for k in d['data']['kept'] if ': not written by cudnnctl: kept' in k)" 4
expect_eq "$(cd "$R/opt/cudnn" && find store generations | sort | tr '\n' ' ')" \
  "generations generations/README store store/9.1.0-local-copy store/9.1.0-local-copy/lib store/site-notes.txt " "what is left of the prefix"
expect_eq "$(ls -A "$R/var/cache/cudnnctl" | tr '\n' ' ')" "mirror-list.txt " "what is left of the cache"
expect_no_file "$R/opt/cudnn/current"
expect_no_file "$R/etc/ld.so.conf.d/00-cudnnctl.conf"
# and the next install works beside them
expect_exit 0 ctl "$R" install 9.1.0 --no-smoke
expect_file "$R/opt/cudnn/store/site-notes.txt"

# ---- obs 5: the cache policy ---------------------------------------------------------------

# cache_files ROOT: the files in ROOT's download cache, one a line ("" when none).
cache_files() { ls -A "$1/var/cache/cudnnctl" 2>/dev/null || true; }

TEST "obs 5: install keeps the archive by default and says how much; list and status show sizes"
R=$(cr_copy empty cache1)
expect_exit 0 ctl "$R" --json install 9.1.0 --no-smoke
size=$(json_get 'd["data"]["archive"]["size"]')
expect_json 'd["data"]["cache"]["bytes"]' "$size"
expect_json 'd["data"]["cache"]["kept"]' true
expect_eq "$(cache_files "$R" | wc -l)" 1 "cached files"
expect_exit 0 ctl "$R" install 8.9.7 --no-smoke
expect_contains "$OUT" ", download cache "
expect_contains "$OUT" " in $R/var/cache/cudnnctl (\`cudnnctl gc --cache\` empties it)"
expect_exit 0 ctl "$R" --json list
entry_bytes=$(python3 - "$R/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64" <<'PY'
import os, sys
t = 0
for b, ds, fs in os.walk(sys.argv[1]):
    for f in fs:
        p = os.path.join(b, f)
        if f != ".cudnnctl-entry.json" and not os.path.islink(p):
            t += os.lstat(p).st_size
print(t)
PY
)
expect_json '[e["bytes"] for e in d["data"]["installed"] if e["version"] == "9.1.0.70"][0]' "$entry_bytes"
cached=$(du -b --apparent-size -c "$R"/var/cache/cudnnctl/* | tail -1 | cut -f1)
expect_json 'd["data"]["cache"]["bytes"]' "$cached"
expect_json 'd["data"]["cache"]["files"]' 2
expect_exit 0 ctl "$R" list
grep -qE '^\* .*  +[0-9.]+ [KMG]?i?B  generations: ' "$OUT" || fail "list shows no size: $(cat "$OUT")"
expect_contains "$OUT" "cache:    "
expect_exit 0 ctl "$R" --json status
expect_json 'd["data"]["cache"]["bytes"]' "$cached"
expect_json 'd["data"]["store_bytes"] > 0' true
expect_exit 0 ctl "$R" status
expect_contains "$OUT" "cache:    "
expect_contains "$OUT" " in $R/var/cache/cudnnctl (2 file(s); \`cudnnctl gc --cache\` empties it)"

TEST "obs 5: install --no-cache and config keep_cache = false leave nothing in the cache"
R=$(cr_copy empty cache2)
expect_exit 0 ctl "$R" --json install 9.1.0 --no-smoke --no-cache
expect_json 'd["data"]["cache"]' '{"bytes": 0, "kept": false}'
expect_eq "$(cache_files "$R")" "" "the cache after --no-cache"
expect_exit 0 ctl "$R" install 8.9.7 --no-smoke --no-cache
expect_contains "$OUT" "download cache: this archive not kept (--no-cache or config keep_cache = false)"
cr_check "$R" --loader
R=$(cr_copy empty cache3)
printf 'keep_cache = false\n' >"$R/etc/cudnnctl/config.toml"
expect_exit 0 ctl "$R" --json install 8.9.7 --no-smoke
expect_json 'd["data"]["cache"]["kept"]' false
expect_eq "$(cache_files "$R")" "" "the cache after keep_cache = false"
printf 'keep_cache = "no"\n' >"$R/etc/cudnnctl/config.toml"
expect_exit 2 ctl "$R" --json status
expect_error "keep_cache"
# A failed install (after the download) under --no-cache leaves nothing either; without it
# the verified archive stays (what a retry reuses).
R=$(cr_copy empty cache4)
expect_exit 1 env CUDNNCTL_TEST_FAIL_AT=after-extract "$CUDNNCTL" --root "$R" --mirror "file://$CR_MIRROR" \
  --cuda 12 install 9.1.0 --no-smoke --no-cache
expect_eq "$(cache_files "$R")" "" "the cache after a failed --no-cache install"
expect_exit 1 env CUDNNCTL_TEST_FAIL_AT=after-extract "$CUDNNCTL" --root "$R" --mirror "file://$CR_MIRROR" \
  --cuda 12 install 9.1.0 --no-smoke
expect_eq "$(cache_files "$R" | wc -l)" 1 "cached files after a failed install without --no-cache"

TEST "obs 5: the README's Dockerfile recipe, run against a --root: nothing left in the cache"
recipe=$(sed -n '/<!-- dockerfile-recipe -->/,/<!-- \/dockerfile-recipe -->/p' "$REPO/README.md")
[ -n "$recipe" ] || fail "README.md has no dockerfile-recipe block"
grep -q '^RUN .*cudnnctl .*install .*--no-cache' <<<"$recipe" || fail "the recipe has no RUN ... install --no-cache: $recipe"
# The cudnnctl commands of the RUN line, with the test's root, mirror and CUDA major.
cmds=$(grep '^RUN ' <<<"$recipe" | sed 's/^RUN //' | tr '&' '\n' | sed 's/^ *//; s/ *$//' | grep '^cudnnctl ')
[ -n "$cmds" ] || fail "no cudnnctl command in the RUN line"
R=$(cr_copy empty docker)
while read -r line; do
  read -ra words <<<"${line#cudnnctl }"
  expect_exit 0 cudnnctl --root "$R" --mirror "file://$CR_MIRROR" "${words[@]}"
done <<<"$cmds"
expect_eq "$(cache_files "$R")" "" "the cache after the recipe"
expect_exit 0 cudnnctl --root "$R" env --shell dockerfile
# The image's paths, not this host's --root; first the RUN line that installs the same build
# (issue 37, item 8).
expect_eq "$(grep '^ENV ' "$OUT")" "$(grep '^ENV ' <<<"$recipe")" "the recipe's ENV lines against env --shell dockerfile"
expect_eq "$(head -n 1 "$OUT")" "RUN cudnnctl --cuda 12 install 9.1.0.70 --no-smoke --no-cache" "env --shell dockerfile's RUN line"
expect_eq "$(grep -c "$R" "$OUT")" 0 "lines naming the host's --root in env --shell dockerfile"

# ---- env extras, list --available ----------------------------------------------------------

TEST "env: the frameworks' variables; no headers: a warning; --ld-library-path warns about pip torch"
R=$(cr_copy one envx)
expect_exit 0 ctl "$R" --json env
expect_json 'd["data"]["CUDNN_ROOT"]' "$R/opt/cudnn/current"
expect_json 'd["data"]["CUDNN_LIB_DIR"]' "$R/opt/cudnn/current/lib"
expect_json 'd["data"]["CUDNN_INSTALL_PATH"]' "$R/opt/cudnn/current"
expect_json 'd["data"]["TF_CUDNN_VERSION"]' 9
expect_json 'd["warnings"]' '[]'
expect_exit 0 ctl "$R" --json env --ld-library-path
expect_json 'any("cuDNN version incompatibility" in w and "pip" in w for w in d["warnings"])' true
expect_exit 0 ctl "$R" env --ld-library-path
expect_contains "$ERR" "cuDNN version incompatibility"
expect_exit 0 ctl "$R" install 8.9.7 --components runtime --no-smoke
expect_exit 0 ctl "$R" --json env
expect_json 'd["data"]["CUDNN_INCLUDE_DIR"]' "$R/opt/cudnn/current/include"
expect_json 'any("has no headers" in w and "--components runtime,headers" in w for w in d["warnings"])' true
expect_exit 2 ctl "$R" env --shell csh

TEST "list --available is search; list PATTERN without it: exit 2"
R=$(cr_copy one avail)
expect_exit 0 ctl "$R" search 9
cp "$OUT" "$E2E_TMP/search.out"
expect_exit 0 ctl "$R" list --available 9
expect_eq "$(cat "$OUT")" "$(cat "$E2E_TMP/search.out")" "list --available 9 against search 9"
expect_exit 0 ctl "$R" --json list --available
expect_json 'len(d["data"]["releases"]) > 3' true
expect_exit 2 ctl "$R" --json list 9
expect_json 'd["error"]["code"]' usage
expect_error "list takes PATTERN only with --available"

# ---- completion and the man page -----------------------------------------------------------

BIN_DIR=$(dirname "$CUDNNCTL")
# bcomp LINE: what bash (with bash-completion loaded when installed) completes LINE to, one
# word a line, driving _cudnnctl as `complete -F` does.
bcomp() {
  PATH="$BIN_DIR:$PATH" bash --norc --noprofile -c '
    [ -f /usr/share/bash-completion/bash_completion ] && . /usr/share/bash-completion/bash_completion
    . <(cudnnctl completion bash)
    complete -p cudnnctl >/dev/null || exit 9
    COMP_LINE=$1
    COMP_POINT=${#COMP_LINE}
    read -ra COMP_WORDS <<<"$COMP_LINE"
    [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    _cudnnctl cudnnctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}"' _ "$1"
}

TEST "completion bash: commands, options, installed versions, known releases, option values"
[ -f /usr/share/bash-completion/bash_completion ] || _e2e_say "    (bash-completion is not installed: the script's own fallback is tested)"
R=$(cr_copy two comp)
expect_exit 0 cudnnctl completion bash
expect_contains "$OUT" "complete -o default -F _cudnnctl cudnnctl"
expect_exit 0 bash -n "$OUT"
got=$(bcomp "cudnnctl ins") && expect_eq "$got" "install" "cudnnctl ins"
got=$(bcomp "cudnnctl pu") && expect_eq "$got" "purge"
got=$(bcomp "cudnnctl --root $R use ")
expect_eq "$(sort <<<"$got" | tr '\n' ' ')" "8.9.7 8.9.7.29 9.1.0 9.1.0.70 " "use: the installed versions"
got=$(bcomp "cudnnctl install 9.2")
grep -qx 9.2.0 <<<"$got" || fail "install 9.2: no 9.2.0 in: $got"
got=$(bcomp "cudnnctl install l") && expect_eq "$got" "latest"
got=$(bcomp "cudnnctl install --no-")
expect_eq "$(sort <<<"$got" | tr '\n' ' ')" "--no-cache --no-smoke " "install --no-"
got=$(bcomp "cudnnctl --root $R install --arc") && expect_eq "$got" "--archive"
got=$(bcomp "cudnnctl env --shell ")
expect_eq "$(tr '\n' ' ' <<<"$got")" "sh fish dockerfile " "env --shell"
got=$(bcomp "cudnnctl --cuda ")
grep -qx 12 <<<"$got" && grep -qx 13 <<<"$got" || fail "--cuda: $got"
got=$(bcomp "cudnnctl --js") && expect_eq "$got" "--json"
# Only the platforms install accepts; rollback --to takes a generation, not a file (issue 37).
got=$(bcomp "cudnnctl --platform ")
expect_eq "$(sort <<<"$got" | tr '\n' ' ')" "linux-aarch64 linux-sbsa linux-x86_64 " "--platform"
got=$(cd "$E2E_TMP" && bcomp "cudnnctl rollback --to ") && expect_eq "$got" "" "rollback --to"
grep -A30 '^    rollback)' "$OUT" | grep -m1 -- '--to)' | grep -q 'compgen -f' && fail "rollback --to completes file names"
got=$(bcomp "cudnnctl rollback --un") && expect_eq "$got" "--undo"
got=$(bcomp "cudnnctl rollback --u") && expect_eq "$got" "$(printf -- "--undo\n--user")" # the global --user too
got=$(bcomp "cudnnctl help ro") && expect_eq "$got" "rollback"
got=$(bcomp "cudnnctl completion ") && expect_eq "$(tr '\n' ' ' <<<"$got")" "bash zsh fish " "completion"
# Every visible command is offered (the same list as `cudnnctl help` prints).
got=$(bcomp "cudnnctl ")
for c in install use rollback list status history verify smoke remove gc purge adopt env search completion; do
  grep -qx "$c" <<<"$got" || fail "command $c is not completed: $got"
done
grep -qx debug-sha256 <<<"$got" && fail "the hidden debug-sha256 is completed"
expect_exit 0 cudnnctl --root "$R" completion --list installed
expect_eq "$(sort "$OUT" | tr '\n' ' ')" "8.9.7 8.9.7.29 9.1.0 9.1.0.70 "
expect_exit 2 cudnnctl completion
expect_exit 2 cudnnctl completion tcsh

TEST "completion zsh and fish: valid scripts (zsh -n, fish -n); fish completes for real"
for sh in zsh fish; do
  expect_exit 0 cudnnctl completion $sh
  cp "$OUT" "$E2E_TMP/comp.$sh"
  command -v $sh >/dev/null || fail "$sh is not installed (scripts/install-deps installs it)"
  expect_exit 0 $sh -n "$E2E_TMP/comp.$sh"
done
expect_contains "$E2E_TMP/comp.zsh" "#compdef cudnnctl"
{
  got=$(PATH="$BIN_DIR:$PATH" fish --no-config -c "source $E2E_TMP/comp.fish; complete -C 'cudnnctl ins'" | cut -f1)
  expect_eq "$got" install "fish: cudnnctl ins"
  got=$(PATH="$BIN_DIR:$PATH" fish --no-config -c "source $E2E_TMP/comp.fish; complete -C 'cudnnctl install --no-'" | cut -f1 | sort | tr '\n' ' ')
  expect_eq "$got" "--no-cache --no-smoke " "fish: install --no-"
  got=$(PATH="$BIN_DIR:$PATH" fish --no-config -c "source $E2E_TMP/comp.fish; complete -C 'cudnnctl env --shell '" | cut -f1 | sort | tr '\n' ' ')
  expect_eq "$got" "dockerfile fish sh " "fish: env --shell"
}

TEST "man page: generated from the options, every command and option on it, valid roff"
expect_exit 0 cudnnctl completion man
cp "$OUT" "$E2E_TMP/cudnnctl.1"
expect_contains "$OUT" '.TH CUDNNCTL 1'
for c in install use rollback purge gc env search completion; do
  grep -q "^\.SS \"$c" "$E2E_TMP/cudnnctl.1" || fail "the man page lacks the command $c"
done
# Every option install --help lists is on the page (roff writes - as \-).
expect_exit 0 cudnnctl install --help
for o in $(grep -oE '^  +--[a-z-]+' "$OUT" | tr -d ' ' | sort -u); do
  grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$E2E_TMP/cudnnctl.1" || fail "the man page lacks $o"
done
command -v groff >/dev/null || fail "groff is not installed (scripts/install-deps installs groff-base)"
{
  run groff -man -Tascii -ww -z "$E2E_TMP/cudnnctl.1"
  [ "$RC" -eq 0 ] && [ ! -s "$ERR" ] || fail "groff warns about the page: $(cat "$ERR")"
  expect_exit 0 sh -c "groff -man -Tascii '$E2E_TMP/cudnnctl.1' | col -b"
  expect_contains "$OUT" "--undo"
  expect_contains "$OUT" "purge"
}

TEST "cmake --install puts the completions and cudnnctl.1 where the shells and man look"
[ -n "${CUDNNCTL_BUILD_DIR:-}" ] || skip "CUDNNCTL_BUILD_DIR is not set"
D=$E2E_TMP/destdir
expect_exit 0 env DESTDIR="$D" cmake --install "$CUDNNCTL_BUILD_DIR" --prefix /usr
for f in usr/share/bash-completion/completions/cudnnctl usr/share/zsh/vendor-completions/_cudnnctl \
  usr/share/fish/vendor_completions.d/cudnnctl.fish usr/share/man/man1/cudnnctl.1.gz; do
  expect_file "$D/$f"
done
expect_eq "$(gzip -dc "$D/usr/share/man/man1/cudnnctl.1.gz")" "$(cat "$E2E_TMP/cudnnctl.1")" "the installed page"
expect_exit 0 cudnnctl completion bash
cmp -s "$OUT" "$D/usr/share/bash-completion/completions/cudnnctl" || fail "the installed bash completion is not what the binary prints"
