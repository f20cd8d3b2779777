#!/usr/bin/env bash
# warden-snapshot copy of one large full snapshot from S3 (s3rver) to ABS (Azurite), beside
# the nearest independent pair of clients available here, measured in the same run: curl
# GET from s3rver (curl's own SigV4) to a file, then curl PUT of that file to Azurite (Put
# Blob with an account SAS); as a ratio, and warden-snapshot's peak RSS (getrusage, the
# summary line's peakRssKiB).
#
#   bench/snapshot_copy_bench.sh [BUILD_DIR]     # default build/release, built if missing
#   BENCH_MB=256 bench/snapshot_copy_bench.sh    # another size (default 1024 MiB)
#
# It is not a test and asserts nothing; it prints the figures.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
mb=${BENCH_MB:-1024}
if [ ! -x "$build/controller/snapshot/warden-snapshot" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$build" --target warden-snapshot -j2 >/dev/null
fi
export WARDEN_SNAPSHOT=$build/controller/snapshot/warden-snapshot
"$root/tests/install-emulators.sh" "$root/build/npm"
. "$root/tests/lib/snapshot.sh"

snap_s3_start
snap_abs_start
src=bench/etcd-main/v2/Full-00000000-00001000-1700000000.gz
echo "== seeding a ${mb} MiB snapshot in s3rver"
snap_fixture "$SNAP_WORK/snap" "$((mb * 1024 * 1024))" "$src"
snap_s3 put "$src" "$SNAP_WORK/snap"
rm -f "$SNAP_WORK/snap"

# An account SAS for Azurite (blob service, object level, create + write), so plain curl
# can PUT the blob.
sas=$(python3 - "$SNAP_ABS_ACCOUNT" "$SNAP_ABS_KEY" <<'PY'
import base64, hashlib, hmac, sys, urllib.parse
acct, key = sys.argv[1], base64.b64decode(sys.argv[2])
f = dict(sv="2019-12-12", ss="b", srt="o", sp="cw", se="2099-01-01T00:00:00Z", spr="http")
sts = "\n".join([acct, f["sp"], f["ss"], f["srt"], "", f["se"], "", f["spr"], f["sv"], ""])
f["sig"] = base64.b64encode(hmac.new(key, sts.encode(), hashlib.sha256).digest()).decode()
print(urllib.parse.urlencode(f))
PY
)

now_s() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "== curl GET from s3rver + curl PUT to Azurite (reference)"
t0=$(now_s)
snap_s3 get "$src" >"$SNAP_WORK/got"
curl -sS --fail-with-body -H 'x-ms-blob-type: BlockBlob' -H 'x-ms-version: 2019-12-12' \
    -T "$SNAP_WORK/got" "$SNAP_ABS_URL/$SNAP_ABS_ACCOUNT/$SNAP_BUCKET/ref/v2/${src##*/}?$sas" \
    -o /dev/null
t_ref=$(elapsed "$t0" "$(now_s)")
cmp -s "$SNAP_WORK/got" <(snap_abs get "ref/v2/${src##*/}") || snap_fail "the reference copy differs"
rm -f "$SNAP_WORK/got"

echo "== warden-snapshot copy S3 -> ABS"
t0=$(now_s)
snap_run copy --from-storage-provider S3 --from-store-container "$SNAP_BUCKET" \
    --from-store-prefix bench/etcd-main --to-storage-provider ABS \
    --to-store-container "$SNAP_BUCKET" --to-store-prefix copy >"$SNAP_WORK/out" \
    2>"$SNAP_WORK/log" || { cat "$SNAP_WORK/log"; snap_fail "copy failed"; }
t_copy=$(elapsed "$t0" "$(now_s)")
rss=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["peakRssKiB"])' "$SNAP_WORK/out")

echo
echo "${mb} MiB snapshot, S3 (s3rver) -> ABS (Azurite), loopback, $(nproc)-core machine"
printf '  curl GET + curl PUT (reference)  %8.2f s\n' "$t_ref"
printf '  warden-snapshot copy             %8.2f s   %s x reference speed   peak RSS %5.1f MB\n' \
    "$t_copy" "$(div "$t_ref" "$t_copy")" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
echo "  target: RSS <= 32 MB"
