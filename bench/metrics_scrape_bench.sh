#!/usr/bin/env bash
# The scrape cost of common/metrics before and after a change, in the same run:
# bench/metrics_scrape_bench.c is linked once with common/metrics.c at BASE and
# once with the work tree's, both against build/debug's libcommon.a (-O2 for the
# two metrics.c and the driver), then run alternately ROUNDS times at each size.
# Prints ms per scrape (median of the rounds) and the ratio before/after.
#
# Usage: bench/metrics_scrape_bench.sh [BASE (default HEAD~1)] [SIZES (default "3000 10000")] [ROUNDS (default 3)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-HEAD~1}
sizes=${2:-"3000 10000"}
rounds=${3:-3}
lib=$root/build/debug/common/libcommon.a
[ -f "$lib" ] || { echo "build build/debug first ($lib missing)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" show "$base:common/metrics.c" > "$tmp/metrics_old.c"
build() { # out metrics.c
    cc -O2 -std=c11 -D_GNU_SOURCE -I"$root" -I"$root/common/third_party" -o "$1" \
        "$root/bench/metrics_scrape_bench.c" "$2" "$lib" -lcjson -lm -lpthread
}
# The old metrics.c must compile against the work tree's header: the structs are private.
build "$tmp/before" "$tmp/metrics_old.c"
build "$tmp/after" "$root/common/metrics.c"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for n in $sizes; do
    scrapes=$(( n >= 10000 ? 3 : 10 ))
    : > "$tmp/b"; : > "$tmp/a"
    for _ in $(seq "$rounds"); do
        "$tmp/before" "$n" "$scrapes" >> "$tmp/b"
        "$tmp/after" "$n" "$scrapes" >> "$tmp/a"
    done
    b=$(median < "$tmp/b"); a=$(median < "$tmp/a")
    awk -v n="$n" -v b="$b" -v a="$a" \
        'BEGIN { printf "%6d Etcds: before %9.2f ms/scrape, after %7.2f ms/scrape, ratio %.1fx\n", n, b, a, b / a }'
done
