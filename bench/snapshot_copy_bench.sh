#!/usr/bin/env bash
# warden-snapshot copy of one large full snapshot between object stores (S3: s3rver, ABS:
# Azurite, Local: a directory), beside the nearest independent pair of clients available
# here, measured in the same run: a GET of the object from the source to a file (curl with
# its own SigV4 for S3, curl with an account SAS for ABS, cat for Local), then a PUT of that
# file to the destination (curl again: S3 PutObject, ABS Put Blob; cp for Local); as a
# ratio, and warden-snapshot's peak RSS (getrusage, the summary line's peakRssKiB).
#
#   bench/snapshot_copy_bench.sh [BUILD_DIR]     # default build/release, built if missing
#   BENCH_MB=256 bench/snapshot_copy_bench.sh    # another size (default 1024 MiB)
#   BENCH_DIRS="S3:ABS S3:S3 ABS:S3 Local:S3"    # the directions (default S3:ABS)
#   BENCH_BASELINE=/path/to/warden-snapshot      # another build measured in the same run
#
# It is not a test and asserts nothing; it prints the figures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
mb=${BENCH_MB:-1024}
dirs=${BENCH_DIRS:-S3:ABS}
baseline=${BENCH_BASELINE:-}
if [ ! -x "$build/controller/snapshot/warden-snapshot" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$build" --target warden-snapshot -j2 >/dev/null
fi
export WARDEN_SNAPSHOT=$build/controller/snapshot/warden-snapshot
"$root/tests/install-emulators.sh" "$root/build/npm"
. "$root/tests/lib/snapshot.sh"

snap_s3_start
snap_abs_start
LOCAL=$SNAP_WORK/local
name=Full-00000000-00001000-1700000000.gz
src=bench/etcd-main/v2/$name

# An account SAS for Azurite (blob service, object level, read + create + write), so plain
# curl can GET and PUT blobs.
sas=$(python3 - "$SNAP_ABS_ACCOUNT" "$SNAP_ABS_KEY" <<'PY'
import base64, hashlib, hmac, sys, urllib.parse
acct, key = sys.argv[1], base64.b64decode(sys.argv[2])
f = dict(sv="2019-12-12", ss="b", srt="o", sp="rcw", se="2099-01-01T00:00:00Z", spr="http")
sts = "\n".join([acct, f["sp"], f["ss"], f["srt"], "", f["se"], "", f["spr"], f["sv"], ""])
f["sig"] = base64.b64encode(hmac.new(key, sts.encode(), hashlib.sha256).digest()).decode()
print(urllib.parse.urlencode(f))
PY
)
abs_url() { echo "$SNAP_ABS_URL/$SNAP_ABS_ACCOUNT/$SNAP_BUCKET/$1?$sas"; }

ref_get() { # store key > stdout
    case $1 in
    S3) snap_s3 get "$2" ;;
    ABS) curl -sS --fail-with-body -H 'x-ms-version: 2019-12-12' "$(abs_url "$2")" ;;
    Local) cat "$LOCAL/$2" ;;
    esac
}
ref_put() { # store key file
    case $1 in
    S3) snap_s3 put "$2" "$3" ;;
    ABS) curl -sS --fail-with-body -H 'x-ms-blob-type: BlockBlob' -H 'x-ms-version: 2019-12-12' \
             -T "$3" "$(abs_url "$2")" -o /dev/null ;;
    Local) mkdir -p "$(dirname "$LOCAL/$2")" && cp "$3" "$LOCAL/$2" ;;
    esac
}
side() { # from|to store
    local c=$SNAP_BUCKET
    [ "$2" = Local ] && c=$LOCAL
    echo "--$1-storage-provider $2 --$1-store-container $c"
}

now_s() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "== seeding a ${mb} MiB snapshot in every source store of $dirs"
snap_fixture "$SNAP_WORK/snap" "$((mb * 1024 * 1024))" "$src"
for d in $dirs; do
    f=${d%%:*}
    [ -e "$SNAP_WORK/seeded-$f" ] && continue
    ref_put "$f" "$src" "$SNAP_WORK/snap" || snap_fail "seeding $f"
    : >"$SNAP_WORK/seeded-$f"
done
rm -f "$SNAP_WORK/snap"

# copy BINARY FROM TO PREFIX: seconds into T, peak RSS (MB) into RSS.
copy() {
    local t0
    t0=$(now_s)
    # shellcheck disable=SC2046
    "$1" copy $(side from "$2") --from-store-prefix bench/etcd-main $(side to "$3") \
        --to-store-prefix "$4" >"$SNAP_WORK/out" 2>"$SNAP_WORK/log" ||
        { cat "$SNAP_WORK/log"; snap_fail "copy $2 -> $3 failed"; }
    T=$(elapsed "$t0" "$(now_s)")
    RSS=$(python3 -c 'import json,sys; print("%.1f" % (json.loads(open(sys.argv[1]).read().splitlines()[-1])["peakRssKiB"] / 1024))' "$SNAP_WORK/out")
}

report=()
n=0
for d in $dirs; do
    f=${d%%:*} t=${d#*:} n=$((n + 1))
    echo "== $f -> $t: reference (GET to a file, then PUT)"
    t0=$(now_s)
    ref_get "$f" "$src" >"$SNAP_WORK/got"
    ref_put "$t" "ref$n/v2/$name" "$SNAP_WORK/got"
    t_ref=$(elapsed "$t0" "$(now_s)")
    rm -f "$SNAP_WORK/got"
    report+=("$(printf '%-6s -> %-6s reference (GET + PUT)     %8.2f s' "$f" "$t" "$t_ref")")
    if [ -n "$baseline" ]; then
        echo "== $f -> $t: baseline warden-snapshot copy"
        copy "$baseline" "$f" "$t" "base$n"
        report+=("$(printf '                 baseline copy           %8.2f s   %s x reference speed   peak RSS %5.1f MB' \
            "$T" "$(div "$t_ref" "$T")" "$RSS")")
    fi
    echo "== $f -> $t: warden-snapshot copy"
    copy "$WARDEN_SNAPSHOT" "$f" "$t" "copy$n"
    report+=("$(printf '                 warden-snapshot copy    %8.2f s   %s x reference speed   peak RSS %5.1f MB' \
        "$T" "$(div "$t_ref" "$T")" "$RSS")")
done

echo
echo "${mb} MiB snapshot, loopback, $(nproc)-core machine"
printf '  %s\n' "${report[@]}"
echo "  target: faster than the reference, RSS <= 32 MB"
