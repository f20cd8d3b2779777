#!/usr/bin/env bash
# The cost curve of warden-controller: bench/controller_bench.sh at several sizes, its figures
# in one table (bench/controller_curve.dat) and a plot (bench/controller_curve.png, gnuplot).
#
#   bench/controller_curve.sh [BUILD_DIR]            # sizes from BENCH_SIZES (1000 3000 10000)
#   CURVE_FROM=DIR bench/controller_curve.sh         # only table and plot, from DIR/curve-<n>.txt
#   CURVE_BEFORE=DIR ...                             # an earlier build's curve-<n>.txt too:
#                                                    # controller_curve_before.dat, RSS plotted
#
# Each size's output is kept as DIR/curve-<n>.txt (DIR: CURVE_DIR, default a new temporary
# directory). Not a test: it asserts nothing.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
sizes=${BENCH_SIZES:-1000 3000 10000}
dir=${CURVE_FROM:-${CURVE_DIR:-$(mktemp -d /tmp/controller-curve.XXXXXX)}}

if [ -z "${CURVE_FROM:-}" ]; then
    for n in $sizes; do
        echo "== $n Etcds"
        # a size whose bench fails (e.g. kube-sim not stopping at the end) does not end the curve
        BENCH_ETCDS=$n "$src/bench/controller_bench.sh" "$@" | tee "$dir/curve-$n.txt" ||
            echo "== the bench at $n Etcds exited with an error"
    done
fi

# The figure after a line's label (the first number after it), "-" when the line is missing.
fig() { # file, pattern, field after the match (1: first number)
    awk -v p="$2" -v k="${3:-1}" 'index($0, p) {
        s = substr($0, index($0, p) + length(p)); n = 0
        while (match(s, /[0-9]+(\.[0-9]+)?/)) {
            if (++n == k) { print substr(s, RSTART, RLENGTH); exit }
            s = substr(s, RSTART + RLENGTH)
        }
    }' "$1"
}
table() { # dir of curve-<n>.txt -> the table on stdout
    echo "# etcds rss_idle rss_loaded rss_restarted first_reconcile_s list_ref_s sync_s sync_x" \
        "patch_ref_ms cut_ms cut_x scale_ms scale_x repair_x ctl_idle_cpu ksim_idle_cpu"
    for n in $sizes; do
        f=$1/curve-$n.txt
        [ -f "$f" ] || continue
        printf '%s' "$n"
        for v in "$(fig "$f" "RSS idle")" "$(fig "$f" "RSS loaded (running")" \
            "$(fig "$f" "RSS loaded (restarted")" "$(fig "$f" "Etcds done")" \
            "$(fig "$f" "one connection)")" "$(fig "$f" "cached objects" 1)" \
            "$(fig "$f" "cached objects" 2)" "$(fig "$f" "median of 5)")" \
            "$(fig "$f" "ports cut        median")" "$(fig "$f" "ports cut        median" 4)" \
            "$(fig "$f" "scale request          median")" \
            "$(fig "$f" "scale request          median" 3)" \
            "$(fig "$f" "repairs after a start" 4)" "$(fig "$f" "cached: controller")" \
            "$(fig "$f" "%, kube-sim")"; do
            printf ' %s' "${v:--}"
        done
        echo
    done
}
dat=$src/bench/controller_curve.dat
table "$dir" >"$dat"
# CURVE_BEFORE=DIR: the curve-<n>.txt of an earlier build, plotted beside (RSS)
before=$src/bench/controller_curve_before.dat
[ -z "${CURVE_BEFORE:-}" ] || table "$CURVE_BEFORE" >"$before"
cat "$dat"
command -v gnuplot >/dev/null || {
    echo "== installing gnuplot (Debian's gnuplot-nox)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q gnuplot-nox >/dev/null
}
[ -f "$before" ] || before=
gnuplot -e "dat='$dat'; before='$before'; out='$src/bench/controller_curve.png'" \
    "$src/bench/controller_curve.gp"
echo "plot: $src/bench/controller_curve.png"
