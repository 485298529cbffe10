#!/bin/bash
# Injected failures: every fault hook of every mutating command fails once
# (CUDNNCTL_TEST_FAIL_AT). The command must exit with the contract's code and leave the
# system as it was (before the switch: exit 1, "failed"; after it: exit 5, "rolled-back"),
# with no journal, nothing of the failed command left, and a history record saying so.
# Deletions (remove, gc) cannot be undone: they keep their journal and the next command
# finishes them. docs/RELIABILITY.md.
source "$(dirname "${BASH_SOURCE[0]}")/../lib.bash"
source "$E2E_DIR/crash_lib.bash"
require_cudnnctl
cr_templates

N=0
# fail_case ID TEMPLATE STEP OLD WANT_EXIT RESULT CMD...
fail_case() {
  local id=$1 tpl=$2 step=$3 old=$4 want=$5 res=$6 r h0 snap
  shift 6
  TEST "fail $id at $step"
  r=$(cr_copy "$tpl" "f.$id.$step")
  snap=$E2E_TMP/snap.$id.$step
  cr_state_snapshot "$r" >"$snap"
  h0=$(cr_hist_count "$r")
  expect_exit "$want" env CUDNNCTL_TEST_FAIL_AT="$step" "$CUDNNCTL" --root "$r" \
    --mirror "file://$CR_MIRROR" --cuda 12 "$@"
  expect_contains "$ERR" "injected failure at $step"
  expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines on stderr"
  cr_expect_same_state "$r" "$snap"
  cr_check "$r" --allowed "$old" --clean --loader --history-count $((h0 + 1)) \
    --record="-1:$res:$1:$old"
  cr_expect_verify "$r"
  N=$((N + 1))
}

PRE="after-download mid-extract after-extract after-staging after-store-commit after-generation before-switch"
POST="after-switch mid-integration after-integration post-switch-check before-commit"
for s in $PRE; do fail_case install-first empty "$s" none 1 failed install 9.1.0; done
for s in $POST; do fail_case install-first empty "$s" none 5 rolled-back install 9.1.0; done
for s in $PRE; do fail_case install-over one "$s" 1 1 failed install 8.9.7; done
for s in $POST; do fail_case install-over one "$s" 1 5 rolled-back install 8.9.7; done
for s in after-generation before-switch; do fail_case use two "$s" 2 1 failed use 9.1.0; done
for s in $POST; do fail_case use two "$s" 2 5 rolled-back use 9.1.0; done
fail_case rollback two before-switch 2 1 failed rollback
for s in after-switch mid-integration after-integration before-commit; do
  fail_case rollback two "$s" 2 5 rolled-back rollback
done
# the revert itself fails: exit 1, the journal (phase reverting) is kept and names the way
# out; `recover` finishes the revert
TEST "fail install at post-switch-check, then the revert fails at mid-rollback"
r=$(cr_copy one f.revert-fails)
h0=$(cr_hist_count "$r")
expect_exit 1 env CUDNNCTL_TEST_FAIL_AT=post-switch-check,mid-rollback "$CUDNNCTL" --root "$r" \
  --mirror "file://$CR_MIRROR" --cuda 12 install 8.9.7
expect_contains "$ERR" "run \`cudnnctl recover\`"
expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines on stderr"
cr_check "$r" --allowed 1,2
expect_exit 0 cudnnctl --root "$r" recover
cr_check "$r" --allowed 1 --clean --loader --history-count $((h0 + 1)) --record="-1:rolled-back:install:1"
cr_expect_verify "$r"
N=$((N + 1))

# after the history record (the commit record): the command succeeded; only the journal
# could not be removed. Exit 0 with a warning; the next command removes the journal and
# writes no second record.
TEST "fail install at after-history: committed, journal removed by the next command"
r=$(cr_copy one f.after-history)
h0=$(cr_hist_count "$r")
expect_exit 0 env CUDNNCTL_TEST_FAIL_AT=after-history "$CUDNNCTL" --root "$r" \
  --mirror "file://$CR_MIRROR" --cuda 12 install 8.9.7
expect_contains "$ERR" "journal could not be removed"
expect_file "$r/var/lib/cudnnctl/journal.json"
cr_check "$r" --allowed 2 --loader --history-count $((h0 + 1)) --record="-1:ok:install:1:2"
expect_exit 0 cudnnctl --root "$r" recover
expect_contains "$OUT" "had completed"
cr_check "$r" --allowed 2 --clean --loader --history-count $((h0 + 1)) --record="-1:ok:install:1:2"
N=$((N + 1))

# deletions: exit 1, the journal (phase deleting) stays, `recover` finishes the deletion
del_case() { # ID TEMPLATE STEP CUR GONE_ENTRY CMD...
  local id=$1 tpl=$2 step=$3 cur=$4 gone=$5 r h0
  shift 5
  TEST "fail $id at $step: the next command finishes the deletion"
  r=$(cr_copy "$tpl" "d.$id.$step")
  h0=$(cr_hist_count "$r")
  expect_exit 1 env CUDNNCTL_TEST_FAIL_AT="$step" "$CUDNNCTL" --root "$r" "$@"
  expect_eq "$(grep -c '^cudnnctl: error: ' "$ERR")" 1 "error lines on stderr"
  expect_file "$r/var/lib/cudnnctl/journal.json"
  cr_check "$r" --allowed "$cur" --loader
  cr_expect_verify "$r"
  expect_exit 0 cudnnctl --root "$r" recover
  cr_check "$r" --allowed "$cur" --clean --loader --history-count $((h0 + 1)) \
    --record="-1:completed-by-recover:$1:$cur:$cur"
  expect_no_file "$r/opt/cudnn/store/$gone"
  N=$((N + 1))
}
for s in mid-remove mid-gc before-commit; do
  del_case remove two "$s" 2 9.1.0.70-cuda12-linux-x86_64 remove 9.1.0
  del_case gc three "$s" 3 8.9.7.29-cuda12-linux-x86_64 gc --keep 1
done
echo "failure cases: $N" >&2
