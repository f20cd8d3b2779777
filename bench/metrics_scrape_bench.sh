#!/usr/bin/env bash
# The scrape cost of common/metrics before and after a change, in the same run:
# bench/metrics_scrape_bench.c is linked once with common/metrics at BASE and
# once with the work tree's, both against build/debug's libcommon.a (-O2 for the
# two modules and the driver), then run alternately ROUNDS times at each size.
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
# The module at a revision: metrics.h, metrics.c and, where the revision has them,
# metrics_render.c and metrics_int.h, compiled against that revision's own headers.
module() { # REV (or "" for the work tree) DIR
    mkdir -p "$2/common"
    for f in metrics.h metrics_int.h metrics.c metrics_render.c; do
        if [ -z "$1" ]; then
            [ ! -f "$root/common/$f" ] || cp "$root/common/$f" "$2/common/$f"
        else
            git -C "$root" show "$1:common/$f" > "$2/common/$f" 2>/dev/null || rm -f "$2/common/$f"
        fi
    done
}
build() { # out DIR
    cc -O2 -std=c11 -D_GNU_SOURCE -I"$2" -I"$root" -I"$root/common/third_party" -o "$1" \
        "$root/bench/metrics_scrape_bench.c" "$2"/common/metrics*.c "$lib" -lcjson -lm -lpthread
}
module "$base" "$tmp/old"
module "" "$tmp/new"
build "$tmp/before" "$tmp/old"
build "$tmp/after" "$tmp/new"
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
