#!/usr/bin/env bash
# The fuzzing part of the test gate: no random seed, so a commit passes or
# fails the same way every time (as far as the code under test does the same
# for the same input). Builds the libFuzzer targets (clang), then
# for every target (or the ones named):
#   1. runs each committed input once: tests/fuzz/corpus/<name>/ and every
#      input that ever crashed it, tests/fuzz/regress/<name>/;
#   2. fuzzes from those inputs with a fixed seed for a fixed number of
#      executions (FUZZ_SEED, default 1; FUZZ_RUNS, default 100000), without
#      libFuzzer's comparison tracing (-use_cmp=0): the values it records hold
#      addresses, which differ from one run to the next and would steer the
#      same seed elsewhere each time.
# A crash, leak or timeout fails the gate with the input libFuzzer saved.
# Random, open-ended fuzzing is tests/fuzz/campaign.sh.
#
#   tests/fuzz/gate.sh [TARGET...]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
seed=${FUZZ_SEED:-1}
runs=${FUZZ_RUNS:-100000}
targets=$(fuzz_targets "$@")
fuzz_build_all
logs=$fuzz_build/gate
rm -rf "$logs"
mkdir -p "$logs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
total=0
for name in $targets; do
    bin=$(fuzz_bin "$name")
    mapfile -t inputs < <(fuzz_inputs "$name")
    if [ ${#inputs[@]} -eq 0 ]; then
        echo "fuzz $name: no corpus (tests/fuzz/corpus/$name/ is empty)"
        failed=1
        continue
    fi
    log=$logs/$name.log
    if ! "$bin" -rss_limit_mb=2048 -timeout=60 "${inputs[@]}" >"$log" 2>&1; then
        tail -40 "$log"
        echo "fuzz $name: a committed input fails (log: $log)"
        failed=1
        continue
    fi
    rm -rf "$work/$name"
    fuzz_seed_dir "$name" "$work/$name/corpus"
    if ! "$bin" -seed="$seed" -runs="$runs" -use_cmp=0 -rss_limit_mb=2048 -timeout=60 -print_final_stats=1 \
        -artifact_prefix="$logs/$name-" "$work/$name/corpus" >>"$log" 2>&1; then
        tail -40 "$log"
        echo "fuzz $name: crash with -seed=$seed (input saved as $logs/$name-*; log: $log)"
        failed=1
        continue
    fi
    execs=$(fuzz_execs "$log")
    total=$((total + execs))
    echo "fuzz $name: ${#inputs[@]} committed inputs pass, $execs executions (seed $seed), no crash"
done
[ $failed -eq 0 ] || exit 1
echo "fuzz: every target ($(echo "$targets" | wc -w)) passes, $total executions in all"
