#!/bin/bash
# Randomized kill -9 loop (ostree tests/inst/src/destructive.rs style): start a mutating
# command, kill -9 it at a random instant in [0, 1.1 x its measured duration], then assert
# "old or new, never a mix, nothing lost" (tests/e2e/crash_check.py) right away and after
# the next command (`cudnnctl recover`).
#
#   bench/crash_loop.sh [TRIALS]        (default 300)
#
# Environment: CUDNNCTL (default build/bin/cudnnctl), CRASH_LOOP_SEED (default: the time;
# printed, so a failing run can be replayed), CRASH_LOOP_PAD (bytes of incompressible
# padding per big library, default 12000000: a ~16 MB archive whose install takes about
# a second), CRASH_LOOP_COMMANDS (default "install use rollback gc adopt restore mirror repack alongside slotback slotoff"),
# E2E_KEEP=1 keeps the work directory. adopt takes over a hand-made copy of the 9.1.0 release in
# the root's /usr/local/cuda (every original must still read as its bytes, through a link or
# as itself); restore imports a backup of 9.27.0 (made in another root); mirror copies 9.1.0 into a directory
# outside the root (everything it serves must be complete: byte for byte the source's); repack
# runs `mirror 9.1.0 --repack zstd` over a mirrored copy (every pinned sidecar must name a
# complete .tar.zst: size and sha256; a host installs from what the kill left, the repack or
# NVIDIA's xz, and from the repack once a second run finished it); alongside installs 9.27.0
# --alongside into a new slot 9-cuda12 beside the primary 8.9.7 and slotback runs `rollback
# --slot 9-cuda12` (4 -> 3) and slotoff `use --none --slot 9-cuda12` (4 -> none): `current` must
# stay, the slot pointer be old or new
# (tests/e2e/crash_check.py --slot). Prints one line per trial and a summary table; exit 1 on any violation
# (the trial's root is kept). Results of the long runs: docs/RELIABILITY.md.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CUDNNCTL=${CUDNNCTL:-$here/../build/bin/cudnnctl}
export CUDNNCTL
source "$here/../tests/e2e/lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl

TRIALS=${1:-300}
SEED=${CRASH_LOOP_SEED:-$(date +%s)}
PAD=${CRASH_LOOP_PAD:-12000000}
COMMANDS=(${CRASH_LOOP_COMMANDS:-install use rollback gc adopt restore mirror repack alongside slotback slotoff})
RANDOM=$SEED
echo "crash_loop: $TRIALS trials, seed $SEED, padding $PAD bytes, commands ${COMMANDS[*]}" >&2

# --- fixtures: three big releases, and template roots -------------------------------------
M=$E2E_TMP/mirror
big() { # LABEL VERSION: a release whose libraries carry PAD bytes of random padding
  mkrelease --mirror "$M" --label "$1" --version "$2" --cuda 12 --platform linux-x86_64 \
    --pad "libcudnn_engines_precompiled=$PAD" --pad "libcudnn_ops=$((PAD / 3))" --pad-random \
    --xz-preset 0 >/dev/null
}
big 9.1.0 9.1.0.70
big 8.9.7 8.9.7.29
big 9.27.0 9.27.0.42
CR_MIRROR=$M
T=$E2E_TMP/tpl
mkdir -p "$T"
r=$(new_root)
mv "$r" "$T/base"
c() { local r=$1; shift; cudnnctl --root "$r" --mirror "file://$M" --cuda 12 --platform linux-x86_64 "$@"; }
c "$T/base" install 9.1.0 >/dev/null 2>&1 || fail "setup: install 9.1.0"
c "$T/base" install 8.9.7 >/dev/null 2>&1 || fail "setup: install 8.9.7"
cp -a "$T/base" "$T/gc"
c "$T/gc" install 9.27.0 >/dev/null 2>&1 || fail "setup: install 9.27.0"
# slots: 8.9.7 primary (generation 2), slot 9-cuda12 with generations 3 (9.1.0) and 4 (9.27.0)
cp -a "$T/base" "$T/slots"
c "$T/slots" use 9.1.0 --alongside --no-smoke >/dev/null 2>&1 || fail "setup: use 9.1.0 --alongside"
c "$T/slots" install 9.27.0 --alongside --no-smoke >/dev/null 2>&1 ||
  fail "setup: install 9.27.0 --alongside"
rm -f "$T/base/var/cache/cudnnctl/"*   # install 9.27.0 downloads (then verifies, extracts)
c "$T/base" mirror 9.1.0 --to "$T/site.tpl" >/dev/null 2>&1 || fail "setup: mirror 9.1.0"
# restore's backup: gc's active 9.27.0, which base does not hold, so that restore imports it
# (a backup of a build the store still holds switches to that entry instead)
c "$T/gc" backup --output "$T/gen3.tar.zst" >/dev/null 2>&1 || fail "setup: backup"
# adopt: an empty root whose CUDA home holds a hand-made 9.1.0 (cp -P, as NVIDIA says)
r=$(new_root)
mv "$r" "$T/adopt"
mkdir -p "$T/rel" "$T/adopt/usr/local/cuda/include" "$T/adopt/usr/local/cuda/lib64"
tar -xf "$M"/cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz -C "$T/rel" \
  --strip-components=1
cp -P "$T/rel"/include/cudnn*.h "$T/adopt/usr/local/cuda/include/"
cp -P "$T/rel"/lib/libcudnn* "$T/adopt/usr/local/cuda/lib64/"
echo '#define CUDART_VERSION 12040' >"$T/adopt/usr/local/cuda/include/cuda_runtime_api.h"
(cd "$T/adopt/usr/local/cuda" && sha256sum include/cudnn*.h lib64/libcudnn*) >"$T/adopt.sums"
# per command: template, arguments, old generation, new generation
declare -A TPL=([install]=base [use]=base [rollback]=base [gc]=gc [adopt]=adopt [restore]=base [mirror]=base
  [repack]=base [alongside]=base [slotback]=slots [slotoff]=slots)
declare -A ARGS=([install]="install 9.27.0" [use]="use 9.1.0" [rollback]="rollback" [gc]="gc --keep 1"
  [adopt]="adopt" [restore]="restore $T/gen3.tar.zst" [mirror]="mirror 9.1.0 --to $E2E_TMP/w.mirror"
  [repack]="mirror 9.1.0 --to $E2E_TMP/w.mirror --repack zstd"
  [alongside]="install 9.27.0 --alongside" [slotback]="rollback --slot 9-cuda12"
  [slotoff]="use --none --slot 9-cuda12")
declare -A OLD=([install]=2 [use]=2 [rollback]=2 [gc]=3 [adopt]=none [restore]=2 [mirror]=2
  [repack]=2 [alongside]=2 [slotback]=2 [slotoff]=2)
declare -A NEW=([install]=3 [use]=3 [rollback]=1 [gc]=3 [adopt]=1 [restore]=3 [mirror]=2
  [repack]=2 [alongside]=2 [slotback]=2 [slotoff]=2)
# slot switches: `current` stays (OLD = NEW above); the slot pointer is old or new
declare -A SLOT=([alongside]=9-cuda12 [slotback]=9-cuda12 [slotoff]=9-cuda12)
declare -A SOLD=([alongside]=none [slotback]=4 [slotoff]=4)
declare -A SNEW=([alongside]=3 [slotback]=3 [slotoff]=none)
MIRRORED=(redistrib_9.1.0.json cudnn/linux-x86_64/cudnn-linux-x86_64-9.1.0.70_cuda12-archive.tar.xz)
# mirror_check DIR: every file DIR serves (outside its work directory .cudnnctl) is complete:
# byte for byte the source's, or the pins list naming the source's manifest digest
mirror_check() {
  local d=$1 f
  [ -d "$d" ] || return 0
  while IFS= read -r f; do
    case $f in
    cudnnctl-pins.sha256)
      grep -v '^#' "$d/$f" | grep -v ' cudnnctl-repack/' | while read -r sum name; do
        [ "$sum  $name" = "$(cd "$M" && sha256sum "$name")" ] || fail "mirror pins: $sum $name"
      done ;;
    *.tar.zst | cudnnctl-repack/*) ;; # repack_check
    *) cmp -s "$M/$f" "$d/$f" || fail "mirror serves an incomplete or foreign $f" ;;
    esac
  done < <(cd "$d" && find . -type f ! -path './.cudnnctl/*' | sed 's|^\./||')
}
# repack_check DIR: every sidecar the pins file names is there with that sha256, and names a
# .tar.zst that is complete (its size and sha256). Prints how many repacks are pinned.
repack_check() {
  python3 - "$1" <<'PYEOF' || fail "a pinned sidecar names a missing or incomplete repack"
import hashlib, json, os, sys
d = sys.argv[1]; n = 0
pins = os.path.join(d, "cudnnctl-pins.sha256")
for line in (open(pins) if os.path.exists(pins) else []):
    if line.startswith("#") or "cudnnctl-repack/" not in line:
        continue
    sha, name = line.split()
    raw = open(os.path.join(d, name), "rb").read()
    assert hashlib.sha256(raw).hexdigest() == sha, ("sidecar differs from its pin", name)
    s = json.loads(raw)
    z = os.path.join(d, s["repack"]["relative_path"])
    assert os.path.getsize(z) == s["repack"]["size"], ("size", z)
    assert hashlib.sha256(open(z, "rb").read()).hexdigest() == s["repack"]["sha256"], ("sha256", z)
    n += 1
print(n)
PYEOF
}
# site_install DIR: a fresh host trusting DIR's pins installs 9.1.0 from it; prints the form.
site_install() {
  local h
  h=$(new_root)
  mkdir -p "$h/etc/cudnnctl/pins.d"
  [ ! -f "$1/cudnnctl-pins.sha256" ] || cp "$1/cudnnctl-pins.sha256" "$h/etc/cudnnctl/pins.d/site.sha256"
  cudnnctl --root "$h" --mirror "file://$1" --cuda 12 --platform linux-x86_64 --json \
    install 9.1.0 --no-smoke >"$E2E_TMP/site.out" 2>"$E2E_TMP/site.err" ||
    fail "a host could not install from the mirror a killed repack left: $(tail -3 "$E2E_TMP/site.err")"
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"]["archive"]["form"])' "$E2E_TMP/site.out"
  rm -rf "$h"
}
# adopt_check ROOT: every adopted original still reads as its bytes (itself, or a link into
# the store)
adopt_check() {
  (cd "$1/usr/local/cuda" && sha256sum --quiet -c "$T/adopt.sums") >/dev/null 2>&1 ||
    fail "an original in the CUDA home no longer reads as its bytes: $(cd "$1/usr/local/cuda" && sha256sum --quiet -c "$T/adopt.sums" 2>&1 | head -3)"
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
W=$E2E_TMP/w
# baseline: the median of 3 uninterrupted runs of each command
declare -A BASE
for cmd in "${COMMANDS[@]}"; do
  times=()
  for i in 1 2 3; do
    rm -rf "$W" "$W.mirror"
    cp -a "$T/${TPL[$cmd]}" "$W"
    [ "$cmd" != repack ] || cp -a "$T/site.tpl" "$W.mirror"
    t0=$(now_ms)
    # shellcheck disable=SC2086
    c "$W" ${ARGS[$cmd]} >/dev/null 2>&1 || fail "baseline: $cmd failed"
    times+=($(($(now_ms) - t0)))
  done
  BASE[$cmd]=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
  echo "baseline $cmd: ${BASE[$cmd]} ms (${times[*]})" >&2
done

declare -A N_T N_OLD N_NEW N_DONE N_BAD
for cmd in "${COMMANDS[@]}"; do N_T[$cmd]=0 N_OLD[$cmd]=0 N_NEW[$cmd]=0 N_DONE[$cmd]=0 N_BAD[$cmd]=0; done
PHASES=$E2E_TMP/phases
: >"$PHASES"
for trial in $(seq "$TRIALS"); do
  cmd=${COMMANDS[$((RANDOM % ${#COMMANDS[@]}))]}
  old=${OLD[$cmd]} new=${NEW[$cmd]}
  delay=$((BASE[$cmd] * (RANDOM % 1101) / 1000)) # ms, uniform in [0, 1.1 x baseline]
  rm -rf "$W" "$W.mirror"
  cp -a "$T/${TPL[$cmd]}" "$W"
  [ "$cmd" != repack ] || cp -a "$T/site.tpl" "$W.mirror"
  h0=$(cr_hist_count "$W")
  TEST "trial $trial: kill -9 $cmd after $delay ms"
  # shellcheck disable=SC2086
  "$CUDNNCTL" --root "$W" --mirror "file://$M" --cuda 12 --platform linux-x86_64 ${ARGS[$cmd]} \
    >"$E2E_TMP/t.out" 2>"$E2E_TMP/t.err" &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
  if kill -9 "$pid" 2>/dev/null; then how=killed; else how=finished; fi
  rc=0
  wait "$pid" 2>/dev/null || rc=$?
  [ "$how" = finished ] || [ "$rc" = 137 ] || how=finished # it had exited just before
  phase=-
  if [ -f "$W/var/lib/cudnnctl/journal.json" ]; then
    phase=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("phase"))' \
      "$W/var/lib/cudnnctl/journal.json" 2>/dev/null || echo torn)
  fi
  if [ "$cmd" = repack ]; then
    # right away: the xz is untouched, no pinned sidecar names a half-written repack, and a
    # host installs from what is there (the repack when pinned, else NVIDIA's xz)
    mirror_check "$W.mirror"
    pinned=$(repack_check "$W.mirror")
    form=$(site_install "$W.mirror")
    [ "$pinned" = 0 ] || [ "$form" = repack ] || fail "a pinned repack was not used ($form)"
    ended=old
    [ "$pinned" = 0 ] || ended=new
    # the next run finishes the repack; hosts then use it
    # shellcheck disable=SC2086
    expect_exit 0 c "$W" ${ARGS[$cmd]}
    mirror_check "$W.mirror"
    expect_eq "$(repack_check "$W.mirror")" 1 "pinned repacks after the second run"
    expect_eq "$(site_install "$W.mirror")" repack "the form installed after the second run"
    [ -z "$(find "$W.mirror" -name '*.tmp.*' -o -name 'repack.tmp.*' | grep -v '/.cudnnctl/tmp/')" ] ||
      fail "temporaries served"
    N_T[$cmd]=$((N_T[$cmd] + 1))
    [ "$how" = finished ] && N_DONE[$cmd]=$((N_DONE[$cmd] + 1))
    if [ "$ended" = new ]; then N_NEW[$cmd]=$((N_NEW[$cmd] + 1)); else N_OLD[$cmd]=$((N_OLD[$cmd] + 1)); fi
    echo "$cmd -" >>"$PHASES"
    printf 'trial %d: %-8s %-8s at %5d ms: %s repack pinned, a host installed %s\n' "$trial" "$cmd" \
      "$how" "$delay" "$pinned" "$form" >&2
    continue
  fi
  if [ "$cmd" = mirror ]; then
    # writes only under --to: what it serves is complete right away, and the next run
    # finishes the copy
    mirror_check "$W.mirror"
    ended=old
    [ -f "$W.mirror/${MIRRORED[1]}" ] && ended=new
    # shellcheck disable=SC2086
    expect_exit 0 c "$W" ${ARGS[$cmd]}
    for f in "${MIRRORED[@]}"; do cmp -s "$M/$f" "$W.mirror/$f" || fail "mirror again: $f"; done
    mirror_check "$W.mirror"
    [ -z "$(find "$W.mirror" -name '*.tmp.*' ! -path '*/.cudnnctl/*')" ] || fail "temporaries served"
    N_T[$cmd]=$((N_T[$cmd] + 1))
    [ "$how" = finished ] && N_DONE[$cmd]=$((N_DONE[$cmd] + 1))
    if [ "$ended" = new ]; then N_NEW[$cmd]=$((N_NEW[$cmd] + 1)); else N_OLD[$cmd]=$((N_OLD[$cmd] + 1)); fi
    echo "$cmd -" >>"$PHASES"
    printf 'trial %d: %-8s %-8s at %5d ms: the archive was %s\n' "$trial" "$cmd" "$how" "$delay" \
      "$([ "$ended" = new ] && echo "complete" || echo "not served yet")" >&2
    continue
  fi
  # right away: old or new, every published entry complete, status readable
  slot_args=()
  [ -z "${SLOT[$cmd]:-}" ] || slot_args=(--slot "${SLOT[$cmd]}" --slot-allowed "${SOLD[$cmd]},${SNEW[$cmd]}")
  cr_check "$W" --allowed "$old,$new" "${slot_args[@]}"
  [ "$cmd" != adopt ] || adopt_check "$W"
  seen=$CR_STATE
  slot_seen=$(readlink "$W/opt/cudnn/slots/${SLOT[$cmd]:-none}" || echo none)
  expect_exit 0 cudnnctl --root "$W" status
  # the next mutating command
  expect_exit 0 cudnnctl --root "$W" recover
  cr_check "$W" --allowed "$old,$new" --clean --loader "${slot_args[@]}"
  after=$CR_STATE
  [ "$cmd" != adopt ] || adopt_check "$W"
  [ "$after" = "$seen" ] || fail "recover moved current from $seen to $after"
  if [ -n "${SLOT[$cmd]:-}" ]; then
    # a slot switch: the history and the counts below speak of the slot's pointer
    slot_after=$(readlink "$W/opt/cudnn/slots/${SLOT[$cmd]}" || echo none)
    [ "$slot_after" = "$slot_seen" ] || fail "recover moved slot ${SLOT[$cmd]} from $slot_seen to $slot_after"
    old=${SOLD[$cmd]} new=${SNEW[$cmd]}
    after=${slot_after#../generations/}
    seen="$seen, slot ${SLOT[$cmd]} ${slot_seen#../generations/}"
  fi
  [ "$CR_STATE" = none ] || expect_exit 0 cudnnctl --root "$W" verify
  # history: at most one record for the trial's command, telling where it ended
  python3 - "$W/var/lib/cudnnctl/history.jsonl" "$h0" "${ARGS[$cmd]}" "$old" "$new" "$after" <<'PYEOF' ||
import json, os, sys
path, h0, cmd, old, new, after = sys.argv[1:]
# adopt starts from a root with no history yet: killed before its first record, none exists
recs = [json.loads(l) for l in open(path) if l.strip()][int(h0):] if os.path.exists(path) else []
g = lambda x: "none" if not isinstance(x, dict) else str(x.get("generation"))
assert len(recs) <= 1, "%d records for one command" % len(recs)
if recs:
    r = recs[0]
    assert r["command"] == cmd.split()[0], r
    assert g(r["from"]) == old, ("from", g(r["from"]))
    if old != new:
        want = {"ok", "completed-by-recover"} if after == new else {"undone-by-recover", "failed"}
        assert r["result"] in want, (r["result"], after)
    else:
        assert r["result"] in ("ok", "completed-by-recover"), r["result"]
elif old != new:
    assert after == old, "switched without a history record"
PYEOF
    fail "history does not tell the truth"
  # gc never moves current: "old" is nothing deleted, "new" is everything it planned
  # deleted (generations 1 and 2 with their entries); anything in between is a violation
  ended=$after
  if [ "$cmd" = gc ]; then
    gens=$(ls "$W/opt/cudnn/generations" | grep -vc json || true)
    entries=$(ls "$W/opt/cudnn/store" | wc -l)
    case "$gens/$entries" in
    3/3) ended=old ;;
    1/1) ended=new ;;
    *) fail "gc left $gens generations and $entries entries (neither before nor after)" ;;
    esac
  fi
  N_T[$cmd]=$((N_T[$cmd] + 1))
  [ "$how" = finished ] && N_DONE[$cmd]=$((N_DONE[$cmd] + 1))
  if [ "$ended" = new ] || { [ "$old" != "$new" ] && [ "$after" = "$new" ]; }; then
    N_NEW[$cmd]=$((N_NEW[$cmd] + 1))
  else
    N_OLD[$cmd]=$((N_OLD[$cmd] + 1))
  fi
  echo "$cmd $phase" >>"$PHASES"
  printf 'trial %d: %-8s %-8s at %5d ms (journal phase %s): current %s -> %s after recover%s\n' \
    "$trial" "$cmd" "$how" "$delay" "$phase" "$seen" "$after" "$([ "$cmd" != gc ] || echo " (deletion: $ended)")" >&2
done

echo >&2
echo "| command | trials | killed mid-run | finished before the kill | ended old | ended new | violations |" >&2
echo "| --- | --- | --- | --- | --- | --- | --- |" >&2
for cmd in "${COMMANDS[@]}"; do
  echo "| $cmd | ${N_T[$cmd]} | $((N_T[$cmd] - N_DONE[$cmd])) | ${N_DONE[$cmd]} | ${N_OLD[$cmd]} | ${N_NEW[$cmd]} | 0 |" >&2
done
echo "journal phases seen at the kill (command phase count):" >&2
sort "$PHASES" | uniq -c | sort -k2,3 | sed 's/^/  /' >&2
echo "crash_loop: $TRIALS trials, seed $SEED: all ended old or new with nothing lost" >&2
