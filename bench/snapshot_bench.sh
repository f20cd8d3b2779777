#!/usr/bin/env bash
# warden-snapshot extend-snapshot-immutability on a 1 GiB snapshot against s3rver,
# beside `s3cmd get` + `s3cmd put` of the same object (Debian's s3cmd, the
# reference, measured in the same run), as ratios; and warden-snapshot's peak RSS
# (getrusage, from its success log line). The modes are compared with --skip-hash-check (what
# each moves), then the default server copy, which first reads the snapshot to check its
# SHA-256.
#
#   bench/snapshot_bench.sh [BUILD_DIR]          # default build/release, built if missing
#   BENCH_MB=256 bench/snapshot_bench.sh         # another size
#
# Targets (issue 8): stream mode at least as fast as s3cmd get+put; server mode
# >= 10x faster than stream mode; RSS <= 32 MB. It is not a test and asserts
# nothing; it prints the figures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
mb=${BENCH_MB:-1024}
if [ ! -x "$build/controller/snapshot/warden-snapshot" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$build" --target warden-snapshot -j2 >/dev/null
fi
export WARDEN_SNAPSHOT=$build/controller/snapshot/warden-snapshot
command -v s3cmd >/dev/null || { echo "== installing s3cmd"; apt-get install -y -qq s3cmd >/dev/null; }
"$root/tests/install-emulators.sh" "$root/build/npm"
. "$root/tests/lib/snapshot.sh"

snap_s3_start
prefix=bench/etcd-main
src=$prefix/v2/Full-00000000-00001000-1700000000.gz.final
echo "== seeding a ${mb} MiB snapshot"
snap_fixture "$SNAP_WORK/snap" "$((mb * 1024 * 1024))" "$src"
snap_s3 put "$src" "$SNAP_WORK/snap"
rm -f "$SNAP_WORK/snap"

cat >"$SNAP_WORK/s3cfg" <<CFG
[default]
access_key = S3RVER
secret_key = S3RVER
host_base = 127.0.0.1:$SNAP_S3_PORT
host_bucket = 127.0.0.1:$SNAP_S3_PORT
use_https = False
signature_v2 = False
check_ssl_certificate = False
CFG

now_s() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

echo "== s3cmd get + put (reference)"
t0=$(now_s)
s3cmd -c "$SNAP_WORK/s3cfg" --no-progress get "s3://$SNAP_BUCKET/$src" "$SNAP_WORK/got" >/dev/null
s3cmd -c "$SNAP_WORK/s3cfg" --no-progress put "$SNAP_WORK/got" \
    "s3://$SNAP_BUCKET/$prefix/v2/Full-00000000-00001000-1700000001.gz.final" >/dev/null
t_ref=$(elapsed "$t0" "$(now_s)")
rm -f "$SNAP_WORK/got"
snap_s3 rm "$prefix/v2/Full-00000000-00001000-1700000001.gz.final" >/dev/null

run_mode() { # mode day [flags] -> "seconds rss_kb"
    local t0 t1 mode=$1 day=$2
    shift 2
    t0=$(now_s)
    WARDEN_SNAPSHOT_NOW=$((1700000000 + day * 86400)) \
        "$WARDEN_SNAPSHOT" extend-snapshot-immutability --storage-provider S3 \
        --store-container "$SNAP_BUCKET" --store-prefix "$prefix" \
        --gc-from-timestamp 1700000500 --copy-mode "$mode" "$@" 2>"$SNAP_WORK/$day.log" ||
        { cat "$SNAP_WORK/$day.log"; exit 1; }
    t1=$(now_s)
    echo "$(elapsed "$t0" "$t1") $(sed -n 's/.*"peakRssKiB":"\([0-9]*\)".*/\1/p' "$SNAP_WORK/$day.log")"
}
echo "== warden-snapshot --copy-mode stream"
read -r t_stream rss_stream < <(run_mode stream 1 --skip-hash-check)
echo "== warden-snapshot --copy-mode server"
read -r t_server rss_server < <(run_mode server 2 --skip-hash-check)
echo "== warden-snapshot --copy-mode server, verified (the default)"
read -r t_vserver rss_vserver < <(run_mode server 3)

printf '\n%s MiB snapshot, s3rver on loopback, 2-core machine\n' "$mb"
printf '  s3cmd get + put (reference)  %8.2f s\n' "$t_ref"
printf '  warden-snapshot stream       %8.2f s   %5.2f x s3cmd speed   peak RSS %5.1f MB\n' \
    "$t_stream" "$(div "$t_ref" "$t_stream")" "$(div "$rss_stream" 1024)"
printf '  warden-snapshot server       %8.2f s   %5.2f x stream speed  peak RSS %5.1f MB\n' \
    "$t_server" "$(div "$t_stream" "$t_server")" "$(div "$rss_server" 1024)"
printf '  warden-snapshot server, verified %4.2f s   %5.2f x stream speed  peak RSS %5.1f MB\n' \
    "$t_vserver" "$(div "$t_stream" "$t_vserver")" "$(div "$rss_vserver" 1024)"
printf '  targets: stream >= 1.00 x s3cmd, server >= 10 x stream, RSS <= 32 MB\n'
