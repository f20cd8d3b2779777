#!/usr/bin/env bash
# warden-snapshot delete-snapshots on a store that really enforces WORM: Ceph's RADOS Gateway
# (tests/lib/ceph-rgw.sh), an Object Lock bucket. Under prefix shoot--a one snapshot is
# locked for a few seconds (COMPLIANCE retention), another is not; shoot--b/ beside it is
# never touched. The first run deletes every version of the unlocked one, leaves the locked
# one, exits 0 and names its retain-until as earliestDeletable on its last line; once that
# time has passed, the second run deletes it and nothing is left under the prefix, versions
# and delete markers included.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/ceph-rgw.sh"

rgw_start
rgw_aws_credentials
ns='xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
md5b64() { printf '%s' "$1" | openssl md5 -binary | base64; }
locked=shoot--a/v2/Full-00000000-00002300-1700000000.gz
free=shoot--a/v2/Incr-00002301-00002400-1700000100.gz
beside=shoot--b/v2/Full-00000000-00000100-1700000000.gz

rgw_s3 -X PUT "$RGW_URL/entries" -H 'x-amz-bucket-object-lock-enabled: true' -o /dev/null
snap_fixture "$SNAP_WORK/obj" 20000 Full.gz
for k in "$locked" "$free" "$free" "$beside"; do # the free key twice: two versions
    rgw_s3 -T "$SNAP_WORK/obj" "$RGW_URL/entries/$k" -o /dev/null
done
until=$(date -u -d "@$(($(date +%s) + 12))" +%Y-%m-%dT%H:%M:%SZ)
body="<Retention $ns><Mode>COMPLIANCE</Mode><RetainUntilDate>$until</RetainUntilDate></Retention>"
rgw_s3 -X PUT "$RGW_URL/entries/$locked?retention=" -H "Content-MD5: $(md5b64 "$body")" \
    --data-binary "$body" -o /dev/null
versions() { rgw_s3 "$RGW_URL/entries?prefix=${1%/}%2F&versions=" | grep -oE '<(VersionId|Key)>[^<]*' | grep -c '<Key>' || true; }

run() { # status in RC, last stdout line in LAST
    set +e
    snap_run delete-snapshots --storage-provider S3 --store-container entries \
        --store-prefix shoot--a --store-endpoint-override "$RGW_URL" >"$SNAP_WORK/out" 2>"$SNAP_WORK/err"
    RC=$?
    set -e
    LAST=$(tail -1 "$SNAP_WORK/out")
}
field() { printf '%s' "$LAST" | python3 -c "import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print('null' if v is None else v)" "$1"; }

run
[ $RC -eq 0 ] || { cat "$SNAP_WORK/err"; snap_fail "only locked objects left, yet exit $RC"; }
[ "$(field locked)" = 1 ] || snap_fail "locked: $LAST"
[ "$(field remaining)" = 1 ] || snap_fail "remaining: $LAST"
[ "$(field earliestDeletable)" = "$until" ] || snap_fail "earliestDeletable is not the retain-until $until: $LAST"
[ "$(versions shoot--a/)" -eq 1 ] || snap_fail "under the prefix: $(versions shoot--a/) versions, want the locked one"
[ "$(versions shoot--b/)" -eq 1 ] || snap_fail "the neighbour prefix was touched"
echo "first run: $LAST"

# wait out the retention (bounded), then the locked one goes too
deadline=$(($(date -u -d "$until" +%s) + 30))
while :; do
    run
    [ "$(field remaining)" = 0 ] && break
    [ "$(date +%s)" -lt "$deadline" ] || snap_fail "still locked after its retain-until: $LAST"
    sleep 1
done
[ $RC -eq 0 ] || snap_fail "the last run exited $RC"
[ "$(versions shoot--a/)" -eq 0 ] || snap_fail "versions left under the prefix: $(versions shoot--a/)"
[ "$(versions shoot--b/)" -eq 1 ] || snap_fail "the neighbour prefix was touched"
echo "after the retention: $LAST"
echo PASS
