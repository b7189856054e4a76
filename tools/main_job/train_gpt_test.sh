#!/usr/bin/env bash
# train_gpt on gpt_training_test's 6-step data: coil's losses beside torch's, the saved bytes.
set -uo pipefail
out=$(tools/main_job/train_gpt "$1" 2>&1); status=$?
echo "$out"
fails=0
[ "$status" -eq 0 ] || { echo "FAIL status $status"; fails=1; }
[ "$(grep -cE '^ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.e+-]+$' <<<"$out")" -eq 6 ] ||
  { echo "FAIL: want 6 step rows"; fails=1; }
grep -qE 'activations kept for the backward: saved [0-9]+ values, [0-9]+ bytes \(save-everything: [0-9]+\)' <<<"$out" ||
  { echo "FAIL: no saved-activations line"; fails=1; }
out=$(tools/main_job/train_gpt /nonexistent 2>&1); status=$?
[ "$status" -eq 1 ] && grep -q 'cannot read /nonexistent' <<<"$out" || { echo "FAIL bad path: $out"; fails=1; }
[ "$fails" -eq 0 ]
