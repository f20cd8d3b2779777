#!/usr/bin/env bash
# warden-snapshot verify of a big chain against the real `etcdbrctl restore` of the same
# chain, in one run: the chain is made by `etcdbrctl server` beside Debian's etcd (a full
# snapshot of BENCH_FULL_MB MiB of values, then BENCH_DELTAS delta snapshots, each a few
# small puts: the sidecar takes a delta whenever its events pass
# --delta-snapshot-memory-limit), uncompressed, in s3rver. Prints both wall times, the ratio,
# both peak RSS (/usr/bin/time), and whether verify's revision and key count are those of
# etcd started on the restored data.
#
#   bench/snapshot_verify_bench.sh [BUILD_DIR]        # default build/release, built if missing
#   BENCH_FULL_MB=256 BENCH_DELTAS=1000 bench/snapshot_verify_bench.sh
#
# Target (issue 31): 1 GiB full + 1,000 deltas, verify >= 3x faster than the restore, verify's
# RSS <= 64 MiB. s3rver pages ListObjectsV2 (warden-snapshot's listing; the sidecar lists
# with V1) past 1,000 objects with a DES-encrypted token, which tests/lib/snapshot.sh's
# snap_s3_start enables (Node's OpenSSL legacy provider). Needs $WARDEN_ETCDBRCTL and etcd.
# Not a test: it asserts nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
full_mb=${BENCH_FULL_MB:-1024}
deltas=${BENCH_DELTAS:-1000}
if [ ! -x "$build/controller/snapshot/warden-snapshot" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$build" --target warden-snapshot -j2 >/dev/null
fi
export WARDEN_SNAPSHOT=$build/controller/snapshot/warden-snapshot
"$root/tests/install-emulators.sh" "$root/build/npm" >/dev/null
. "$root/tests/lib/snapshot.sh"
snap_need_sidecar
export SNAP_BR_START_S=${SNAP_BR_START_S:-600} # the first full snapshot of a big database
snap_s3_start

# load PREFIX N SIZE [PAUSE]: N keys of SIZE random bytes under PREFIX through etcd's JSON
# gateway, one connection, PAUSE seconds between puts
load() {
    python3 - "$SNAP_ETCD_URL" "$@" <<'PY'
import base64, http.client, json, os, sys, time, urllib.parse
url, prefix, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pause = float(sys.argv[5]) if len(sys.argv) > 5 else 0
u = urllib.parse.urlparse(url)
c = http.client.HTTPConnection(u.hostname, u.port)
for i in range(n):
    body = json.dumps({"key": base64.b64encode(f"{prefix}{i:08d}".encode()).decode(),
                       "value": base64.b64encode(os.urandom(size)).decode()})
    c.request("POST", "/v3/kv/put", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    if r.status != 200:
        sys.exit(f"put {i}: HTTP {r.status}")
    time.sleep(pause)
PY
}
# objects of kind $1 ("Full-", "Incr-") under bench/v2, counted in s3rver's directory (a
# listing gives 1,000 keys at most)
count() { find "$SNAP_S3_DIR/$SNAP_BUCKET/bench/v2" -name "$1*._S3rver_object" | wc -l; }

peer=$(snap_free_port)
snap_etcd_start src "" "$peer"
echo "== loading ${full_mb} MiB into etcd"
load /registry/big/ $((full_mb * 10)) 102400
port=$(snap_free_port)
echo "== etcdbrctl server: full snapshot, then $deltas deltas"
t0=$SECONDS
snap_brctl_server src "$SNAP_ETCD_URL" "$peer" bench "$port" --compress-snapshots=false \
    --delta-snapshot-period 60s --delta-snapshot-memory-limit 1000
echo "   full snapshot in the store after $((SECONDS - t0)) s"
have=0
while [ "$have" -lt "$deltas" ]; do # 3 to 4 puts of 200 bytes pass the memory limit
    load "/registry/d$have/" $(((deltas - have) * 3)) 200 0.005
    sleep 2
    have=$(count Incr-)
done
rev=$(snap_etcd_rev "$SNAP_ETCD_URL")
deadline=$((SECONDS + 120))
until [ -n "$(find "$SNAP_S3_DIR/$SNAP_BUCKET/bench/v2" -name "Incr-*-$(printf %08d "$rev")-*._S3rver_object")" ]; do
    [ $SECONDS -lt $deadline ] || snap_fail "no delta up to revision $rev"
    sleep 0.5
done
snap_kill "$SNAP_BR_PID"
snap_kill "$SNAP_ETCD_PID"
echo "   $(count Full-) full, $(count Incr-) deltas, etcd at revision $rev"

d=$SNAP_WORK/restore
mkdir -p "$d"
rpeer=$(snap_free_port)
echo "== etcdbrctl restore"
t0=$(date +%s.%N)
(cd "$d" && /usr/bin/time -f '%M' -o "$d.rss" "$WARDEN_ETCDBRCTL" restore --storage-provider S3 \
    --store-container "$SNAP_BUCKET" --store-prefix bench --data-dir "$d/data" --name restored \
    --initial-cluster "restored=http://127.0.0.1:$rpeer" \
    --initial-advertise-peer-urls "http://127.0.0.1:$rpeer" --snapstore-temp-directory "$d") \
    >"$d.log" 2>&1 || { tail -20 "$d.log"; snap_fail "etcdbrctl restore failed"; }
t_restore=$(echo "$(date +%s.%N) - $t0" | bc)
echo "== warden-snapshot verify"
t0=$(date +%s.%N)
/usr/bin/time -f '%M' -o "$SNAP_WORK/v.rss" "$WARDEN_SNAPSHOT" verify --storage-provider S3 \
    --store-container "$SNAP_BUCKET" --store-prefix bench --json --tmp-dir "$SNAP_WORK" \
    >"$SNAP_WORK/v.json" || { cat "$SNAP_WORK/v.json"; snap_fail "verify failed"; }
t_verify=$(echo "$(date +%s.%N) - $t0" | bc)
full=$(cd "$SNAP_S3_DIR/$SNAP_BUCKET" && ls bench/v2/Full-*._S3rver_object | sort -t- -k3,3n | tail -1)
t0=$(date +%s.%N)
snap_s3 get "${full%._S3rver_object}" >/dev/null
t_get=$(echo "$(date +%s.%N) - $t0" | bc)
snap_etcd_start restored "$d/data" "$rpeer"
got_rev=$(snap_etcd_rev "$SNAP_ETCD_URL")
got_keys=$(snap_etcdctl "$SNAP_ETCD_URL" get "" --prefix --keys-only -w json |
    python3 -c 'import json,sys; print(json.load(sys.stdin).get("count", 0))')
read -r v_rev v_keys < <(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["revision"], j["keys"])' "$SNAP_WORK/v.json")
printf 'chain: %d MiB of values, %d objects (%d full, %d deltas in all), revision %d\n' "$full_mb" \
    "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["chain"]))' "$SNAP_WORK/v.json")" \
    "$(count Full-)" "$(count Incr-)" "$rev"
ls -l "$SNAP_S3_DIR/$SNAP_BUCKET/bench/v2/"Full-*._S3rver_object | awk '{print "full snapshot object: " $5 " bytes"}' | tail -1
printf 'curl GET of the full snapshot (what s3rver serves) %8.1f s\n' "$t_get"
printf 'etcdbrctl restore   %8.1f s   peak RSS %6d MiB\n' "$t_restore" $(($(cat "$d.rss") / 1024))
printf 'warden-snapshot verify %5.1f s   peak RSS %6d MiB   %.1fx faster\n' "$t_verify" \
    $(($(cat "$SNAP_WORK/v.rss") / 1024)) "$(echo "$t_restore / $t_verify" | bc -l)"
printf 'restored etcd: revision %s, %s keys; verify: revision %s, %s keys\n' "$got_rev" "$got_keys" "$v_rev" "$v_keys"
