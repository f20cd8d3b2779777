#!/usr/bin/env bash
# warden-snapshot extend-snapshot-immutability on Ceph's RADOS Gateway (tests/lib/ceph-rgw.sh,
# an Object Lock bucket, as a WORM store is used): extend-in-place vs server-side copy vs
# stream copy of the same snapshot in the same run (times, ratios) and warden-snapshot's peak
# RSS in each mode (getrusage, from its success line), against the 32 MB bound. The modes are
# compared with --skip-hash-check (what each moves); then the default, which first reads the
# snapshot to check its SHA-256, in place and server-side, for what verification adds.
#
#   bench/snapshot_ceph_bench.sh [BUILD_DIR]    # default build/release, built if missing
#   BENCH_MB=64 bench/snapshot_ceph_bench.sh    # another size (default 256 MiB)
#
# It is not a test and asserts nothing; it prints the figures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
mb=${BENCH_MB:-256}
if [ ! -x "$build/controller/snapshot/warden-snapshot" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$build" --target warden-snapshot -j2 >/dev/null
fi
export WARDEN_SNAPSHOT=$build/controller/snapshot/warden-snapshot
. "$root/tests/lib/snapshot.sh"
. "$root/tests/lib/ceph-rgw.sh"
# the source, two copies, headroom: memstore holds about twice the data
export RGW_MEMSTORE_BYTES=$(((mb * 8 + 512) * 1024 * 1024))
rgw_start
rgw_aws_credentials
rgw_s3 -X PUT "$RGW_URL/bench" -H 'x-amz-bucket-object-lock-enabled: true' -o /dev/null
prefix=bench/etcd-main
echo "== seeding a ${mb} MiB snapshot"
snap_fixture "$SNAP_WORK/snap" "$((mb * 1024 * 1024))" Full.gz
rgw_s3 --max-time 600 -T "$SNAP_WORK/snap" \
    "$RGW_URL/bench/$prefix/v2/Full-00000000-00001000-1700000000.gz.final" -o /dev/null
rm -f "$SNAP_WORK/snap"

now_s() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
run_mode() { # label day flags... -> "seconds rss_kb"
    local label=$1 day=$2 t0 t1; shift 2
    t0=$(now_s)
    WARDEN_SNAPSHOT_NOW=$((1700000000 + day * 86400)) \
        "$WARDEN_SNAPSHOT" extend-snapshot-immutability --storage-provider S3 \
        --store-container bench --store-prefix "$prefix" --store-endpoint-override "$RGW_URL" \
        --gc-from-timestamp 1700000500 "$@" 2>"$SNAP_WORK/$label.log" ||
        { cat "$SNAP_WORK/$label.log" >&2; exit 1; }
    t1=$(now_s)
    echo "$(elapsed "$t0" "$t1") $(sed -n 's/.*"peakRssKiB":"\([0-9]*\)".*/\1/p' "$SNAP_WORK/$label.log")"
}
echo "== warden-snapshot --mode extend-in-place"
read -r t_inplace rss_inplace < <(run_mode inplace 1 --mode extend-in-place --retention-days 1 \
    --skip-hash-check)
echo "== warden-snapshot --copy-mode server"
read -r t_server rss_server < <(run_mode server 2 --copy-mode server --skip-hash-check)
echo "== warden-snapshot --copy-mode stream"
read -r t_stream rss_stream < <(run_mode stream 3 --copy-mode stream --skip-hash-check)
echo "== verified (the default): extend-in-place, then --copy-mode server"
read -r t_vinplace rss_vinplace < <(run_mode vinplace 4 --mode extend-in-place --retention-days 2)
read -r t_vserver rss_vserver < <(run_mode vserver 5 --copy-mode server)

printf '\n%s MiB snapshot, Ceph RGW (memstore) on loopback, Object Lock bucket\n' "$mb"
printf '  extend-in-place         %8.2f s   %6.2f x stream speed   peak RSS %5.1f MB\n' \
    "$t_inplace" "$(div "$t_stream" "$t_inplace")" "$(div "$rss_inplace" 1024)"
printf '  warden-snapshot server  %8.2f s   %6.2f x stream speed   peak RSS %5.1f MB\n' \
    "$t_server" "$(div "$t_stream" "$t_server")" "$(div "$rss_server" 1024)"
printf '  warden-snapshot stream  %8.2f s                          peak RSS %5.1f MB\n' \
    "$t_stream" "$(div "$rss_stream" 1024)"
printf '  verified extend-in-place%8.2f s   %6.2f x stream speed   peak RSS %5.1f MB\n' \
    "$t_vinplace" "$(div "$t_stream" "$t_vinplace")" "$(div "$rss_vinplace" 1024)"
printf '  verified server         %8.2f s   %6.2f x stream speed   peak RSS %5.1f MB\n' \
    "$t_vserver" "$(div "$t_stream" "$t_vserver")" "$(div "$rss_vserver" 1024)"
printf '  bound: RSS <= 32 MB in every mode\n'
