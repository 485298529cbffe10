#!/bin/bash
# Crash campaign: every fault hook of every mutating command, crashed there with
# CUDNNCTL_TEST_CRASH_AT (the process _exit()s like kill -9), then the next command.
# Asserts "old or new, never a mix, nothing lost" (crash_check.py). docs/RELIABILITY.md.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl
cr_templates

PRE_SWITCH="after-download mid-extract after-extract after-staging after-store-commit
            after-generation before-switch"
POST_SWITCH="after-switch mid-integration after-integration post-switch-check before-commit"
U=undone-by-recover
C=completed-by-recover
N=0

# install into an empty prefix (old: no current at all), then `recover`
for s in $PRE_SWITCH; do crash_case install-first empty "$s" none 1 $U - recover install 9.1.0; N=$((N + 1)); done
for s in $POST_SWITCH; do crash_case install-first empty "$s" none 1 - $C recover install 9.1.0; N=$((N + 1)); done
# install over an existing generation, then the same install again (it recovers first)
for s in $PRE_SWITCH; do crash_case install-over one "$s" 1 2 $U - rerun install 8.9.7; N=$((N + 1)); done
for s in $POST_SWITCH; do crash_case install-over one "$s" 1 2 - $C rerun install 8.9.7; N=$((N + 1)); done
# install over an existing generation, then `recover`
for s in $PRE_SWITCH; do crash_case install-over-r one "$s" 1 2 $U - recover install 8.9.7; N=$((N + 1)); done
for s in $POST_SWITCH; do crash_case install-over-r one "$s" 1 2 - $C recover install 8.9.7; N=$((N + 1)); done
# after the history record (the commit record), before the journal is removed: recovery
# removes the journal and writes no second record
crash_case install-over-r one after-history 1 2 - ok recover install 8.9.7; N=$((N + 1))
crash_case rollback two after-history 2 1 - ok recover rollback; N=$((N + 1))
crash_case gc three after-history 3 3 - ok recover gc --keep 1; N=$((N + 1))
# use: a new generation for an installed entry
for s in after-generation before-switch; do crash_case use two "$s" 2 3 $U - recover use 9.1.0; N=$((N + 1)); done
for s in $POST_SWITCH; do crash_case use two "$s" 2 3 - $C recover use 9.1.0; N=$((N + 1)); done
# rollback: a switch to an existing generation (no checks after it)
crash_case rollback two before-switch 2 1 $U - recover rollback; N=$((N + 1))
for s in after-switch mid-integration after-integration before-commit; do
  crash_case rollback two "$s" 2 1 - $C recover rollback; N=$((N + 1))
done
# remove and gc: journaled deletions, finished by recovery (current never moves)
for s in mid-remove mid-gc before-commit; do
  crash_case remove two "$s" 2 2 - $C recover remove 9.1.0; N=$((N + 1))
  [ ! -e "$CR_ROOT/opt/cudnn/store/9.1.0.70-cuda12-linux-x86_64" ] || fail "remove was not finished"
  crash_case gc three "$s" 3 3 - $C recover gc --keep 1; N=$((N + 1))
  expect_eq "$(ls "$CR_ROOT/opt/cudnn/generations" | tr '\n' ' ')" "3 3.json " "generations after gc"
done
# the revert path: a post-switch check fails, and the revert itself is interrupted
for s in mid-rollback mid-gc before-commit; do
  CR_ENV=CUDNNCTL_TEST_FAIL_AT=post-switch-check crash_case revert one "$s" 1 2 rolled-back rolled-back recover install 8.9.7
  N=$((N + 1))
done

# restore (issue 34: every step of restore, as of install): a backup of two's generation 2
# (8.9.7) restored into one (9.1.0 active), crashed at each step of the import and the switch
BR=$(cr_copy two backup-src)
expect_exit 0 cudnnctl --root "$BR" backup --output "$E2E_TMP/gen2.tar.zst"
for s in after-staging after-store-commit after-generation before-switch; do
  crash_case restore one "$s" 1 2 $U - recover restore "$E2E_TMP/gen2.tar.zst"; N=$((N + 1))
done
for s in $POST_SWITCH; do
  crash_case restore one "$s" 1 2 - $C recover restore "$E2E_TMP/gen2.tar.zst"; N=$((N + 1))
done

# adopt and adopt --undo (issue 34: every step): a hand-made 9.1.0 in /usr/local/cuda, crashed
# at each step; every original reads its bytes right after the crash and after `recover`, the
# root is clean, and the same command then goes through; after --undo the CUDA home is again
# exactly as the hand copy left it.
source "$E2E_FIXTURES/adopt/handmade.bash"
R9=$(release_dir 9.1.0 12)
for s in after-adopt-backup after-adopt-records after-staging after-store-commit after-generation \
  before-switch after-switch mid-integration after-integration before-commit after-history; do
  TEST "crash adopt at $s: the originals survive, recover leaves a clean root, adopt then goes through"
  r=$(small_root)
  expect_exit 86 env CUDNNCTL_TEST_CRASH_AT="$s" "$CUDNNCTL" --root "$r" adopt
  expect_contains "$ERR" "test hook: crashing at $s"
  expect_originals "$r" "right after adopt crashed at $s"
  cr_expect_status_readable "$r"
  expect_recovered_then_adopted "$r"
  N=$((N + 1))
done
for s in mid-release mid-integration before-commit after-history; do
  TEST "crash adopt --undo at $s: recover leaves adopted or undone, never a mix; the hand copy comes back exactly"
  r=$(small_root)
  tree_snapshot "$r/usr/local/cuda" >"$E2E_TMP/undo.before"
  expect_exit 0 cudnnctl --root "$r" adopt
  expect_exit 86 env CUDNNCTL_TEST_CRASH_AT="$s" "$CUDNNCTL" --root "$r" adopt --undo
  expect_contains "$ERR" "test hook: crashing at $s"
  expect_originals "$r" "right after adopt --undo crashed at $s"
  expect_exit 0 cudnnctl --root "$r" recover
  expect_originals "$r" "after recover"
  cr_check "$r" --clean --loader
  if [ -L "$r/opt/cudnn/current" ]; then # recover undid the --undo: adopted still
    expect_exit 0 cudnnctl --root "$r" adopt --undo
  else # recover finished it
    expect_exit 2 cudnnctl --root "$r" adopt --undo
    expect_contains "$ERR" "nothing to undo"
  fi
  diff "$E2E_TMP/undo.before" <(tree_snapshot "$r/usr/local/cuda") >/dev/null ||
    fail "--undo after a crash at $s: the CUDA home differs from the hand copy"
  expect_no_file "$r/opt/cudnn/current"
  N=$((N + 1))
done

# recovery interrupted: crash the command, then crash `recover` itself, then recover again
recover_twice() { # ID TEMPLATE STEP1 STEP2 OLD NEW WANT_STATE RESULT CMD...
  local id=$1 tpl=$2 s1=$3 s2=$4 old=$5 new=$6 want=$7 res=$8 r h0
  shift 8
  TEST "crash $id at $s1, then recover crashed at $s2"
  r=$(cr_copy "$tpl" "rec.$id.$s1.$s2")
  h0=$(cr_hist_count "$r")
  # shellcheck disable=SC2086
  expect_exit 86 env ${CR_ENV:-} CUDNNCTL_TEST_CRASH_AT="$s1" "$CUDNNCTL" --root "$r" --mirror "file://$CR_MIRROR" --cuda 12 "$@"
  expect_exit 86 env CUDNNCTL_TEST_CRASH_AT="$s2" "$CUDNNCTL" --root "$r" recover
  expect_contains "$ERR" "crashing at $s2"
  cr_check "$r" --allowed "$old,$new"
  cr_expect_status_readable "$r"
  expect_exit 0 cudnnctl --root "$r" recover
  cr_check "$r" --allowed "$want" --clean --loader --history-count $((h0 + 1)) --last "$res" --last-from "$old"
  cr_expect_verify "$r"
  N=$((N + 1))
}
recover_twice fwd one after-switch mid-integration 1 2 2 $C install 8.9.7
recover_twice fwd one after-switch before-commit 1 2 2 $C install 8.9.7
recover_twice undo one after-store-commit mid-gc 1 2 1 $U install 8.9.7
recover_twice undo one after-generation mid-integration 1 2 1 $U install 8.9.7
recover_twice undo one before-switch before-commit 1 2 1 $U install 8.9.7
recover_twice gc three mid-gc mid-gc 3 3 3 $C gc --keep 1
recover_twice gc three mid-remove before-commit 3 3 3 $C gc --keep 1
CR_ENV=CUDNNCTL_TEST_FAIL_AT=post-switch-check recover_twice revert one mid-rollback mid-integration 1 2 1 rolled-back install 8.9.7
echo "crash cases: $N" >&2
