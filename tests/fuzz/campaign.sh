#!/usr/bin/env bash
# The long fuzzing campaign, outside the test gate: every target (or the ones
# named) is fuzzed for SECONDS with a fresh random seed, starting from its
# committed inputs. What it finds goes into the repository, to be committed:
#   - an input that crashes, leaks or hangs a target is copied to
#     tests/fuzz/regress/<name>/, so that tests/fuzz/gate.sh replays it from
#     then on (fix the code, or the harness when its check was wrong, first);
#   - inputs that reach code the corpus did not are merged (minimised, by
#     libFuzzer's -merge=1) into tests/fuzz/corpus/<name>/.
# Exits 1 when any target crashed; the seed of each run is printed so that
# a crash can be replayed with -seed=N.
#
#   tests/fuzz/campaign.sh SECONDS [TARGET...]     e.g. tests/fuzz/campaign.sh 600 etcdspec
set -euo pipefail
. "$(dirname "$0")/lib.sh"
usage="usage: tests/fuzz/campaign.sh SECONDS [TARGET...]   (SECONDS per target)"
if [ $# -ge 1 ] && { [ "$1" = -h ] || [ "$1" = --help ]; }; then
    echo "$usage"
    exit 0
fi
if [ $# -lt 1 ]; then
    echo "campaign.sh: SECONDS missing" >&2
    echo "$usage" >&2
    exit 2
fi
seconds=$1
shift
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
    echo "campaign.sh: SECONDS must be a positive whole number, not \"$seconds\"" >&2
    echo "$usage" >&2
    exit 2
fi
targets=$(fuzz_targets "$@")
fuzz_build_all
logs=$fuzz_build/campaign
mkdir -p "$logs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
crashed=()
for name in $targets; do
    bin=$(fuzz_bin "$name")
    corpus=$fuzz_root/tests/fuzz/corpus/$name
    regress=$fuzz_root/tests/fuzz/regress/$name
    log=$logs/$name.log
    mkdir -p "$work/$name/art" "$corpus"
    fuzz_seed_dir "$name" "$work/$name/in"
    echo "== $name: ${seconds}s"
    if "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=60 -print_final_stats=1 \
        -artifact_prefix="$work/$name/art/" "$work/$name/in" >"$log" 2>&1; then
        before=$(find "$corpus" -type f | wc -l)
        "$bin" -merge=1 -rss_limit_mb=2048 -timeout=60 "$corpus" "$work/$name/in" \
            >>"$log" 2>&1
        after=$(find "$corpus" -type f | wc -l)
        echo "$name: $(fuzz_execs "$log") executions ($(grep -m1 -o 'Seed: [0-9]*' "$log")), no crash;" \
            "$((after - before)) new inputs in tests/fuzz/corpus/$name/"
        continue
    fi
    tail -30 "$log"
    mkdir -p "$regress"
    # libFuzzer's crash-<sha1> becomes <sha1>-crash (the repository ignores crash-* files)
    for f in "$work/$name/art"/*; do
        [ -f "$f" ] || continue
        base=$(basename "$f")
        known=$(find "$regress" -type f -exec cmp -s "$f" {} \; -print -quit)
        if [ -n "$known" ]; then
            echo "$name: the input is already tests/fuzz/regress/$name/$(basename "$known")"
            continue
        fi
        cp "$f" "$regress/${base#*-}-${base%%-*}"
        echo "$name: saved tests/fuzz/regress/$name/${base#*-}-${base%%-*}"
    done
    echo "$name: CRASH ($(grep -m1 -o 'Seed: [0-9]*' "$log"); log: $log)"
    crashed+=("$name")
done
echo "== to commit (new files per directory):"
git -C "$fuzz_root" status --porcelain --untracked-files=all -- tests/fuzz/corpus tests/fuzz/regress |
    awk '{ n = split($2, p, "/"); d = p[1]; for (i = 2; i < n; i++) d = d "/" p[i]; c[d]++ }
         END { for (d in c) printf "  %5d %s/\n", c[d], d }' | sort -k2
if [ ${#crashed[@]} -gt 0 ]; then
    echo "crashed: ${crashed[*]} (fix them, then tests/fuzz/gate.sh ${crashed[*]})"
    exit 1
fi
