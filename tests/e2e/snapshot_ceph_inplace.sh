#!/usr/bin/env bash
# --mode extend-in-place on Ceph's RADOS Gateway (tests/lib/ceph-rgw.sh), an Object Lock
# bucket with a default COMPLIANCE retention: the retention of the snapshot a restore would
# take is extended where it lies (retain-until read back; no new object or version), never
# shortened (a shorter --retention-days leaves it; the store itself refuses a shorter date);
# --mode auto extends in place there and copies on a bucket without Object Lock (reading
# the snapshot once to verify it). A corrupt snapshot is not extended: the run fails naming
# it, its retain-until unchanged; --skip-hash-check extends it.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/ceph-rgw.sh"

rgw_start
rgw_aws_credentials
p=shoot--dev--main/etcd-main
key=$p/v2/Full-00000000-00002300-1700000000.gz.final
snap_fixture "$SNAP_WORK/final" 100000 "$key"
ns='xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
md5b64() { printf '%s' "$1" | openssl md5 -binary | base64; }

rgw_s3 -X PUT "$RGW_URL/inplace" -H 'x-amz-bucket-object-lock-enabled: true' -o /dev/null
body="<ObjectLockConfiguration $ns><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>"
rgw_s3 -X PUT "$RGW_URL/inplace?object-lock=" -H "Content-MD5: $(md5b64 "$body")" --data-binary "$body" -o /dev/null
rgw_s3 -T "$SNAP_WORK/final" "$RGW_URL/inplace/$key" -o /dev/null
until_of() { rgw_s3 "$RGW_URL/inplace/${1:-$key}?retention=" | sed -n 's/.*<RetainUntilDate>\([^<.]*\).*/\1/p'; }
versions() { rgw_s3 "$RGW_URL/inplace?prefix=shoot--dev--main%2F&versions=" | grep -o '<VersionId>' | wc -l; }
run() { # flags...; status in RC
    set +e
    WARDEN_SNAPSHOT_NOW=1700086400 snap_run extend-snapshot-immutability --storage-provider S3 \
        --store-prefix "$p" --store-endpoint-override "$RGW_URL" --gc-from-timestamp 1700000001 \
        "$@" 2>"$SNAP_WORK/run.log"
    RC=$?
    set -e
}
before=$(until_of)
[ -n "$before" ] || snap_fail "the bucket's default retention did not apply"
run --store-container inplace --mode extend-in-place --retention-days 2
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "extend-in-place failed"; }
after=$(until_of)
want=$(($(date +%s) + 2 * 86400))
got=$(date -u -d "$after" +%s)
[ $((want - got)) -le 120 ] && [ $((got - want)) -le 120 ] ||
    snap_fail "retain-until $after is not two days ahead (was $before)"
snap_has "\"retainUntil\":\"$after" "$SNAP_WORK/run.log" || { cat "$SNAP_WORK/run.log"; snap_fail "the success line does not give the new date"; }
[ "$(versions)" -eq 1 ] || snap_fail "extend-in-place wrote an object"
echo "extend-in-place: retain-until $before -> $after, no object written"

run --store-container inplace --mode extend-in-place --retention-days 1
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "a shorter period failed the run"; }
[ "$(until_of)" = "$after" ] || snap_fail "the retention was shortened to $(until_of)"
short=$(date -u -d "@$(($(date +%s) + 3600))" +%Y-%m-%dT%H:%M:%SZ)
body="<Retention $ns><Mode>COMPLIANCE</Mode><RetainUntilDate>$short</RetainUntilDate></Retention>"
if rgw_s3 -X PUT "$RGW_URL/inplace/$key?retention=" -H "Content-MD5: $(md5b64 "$body")" \
    --data-binary "$body" -o /dev/null 2>/dev/null; then
    snap_fail "the store accepted a shorter retention"
fi
echo "never shortened: a shorter period leaves it, the store refuses a shorter date"

run --store-container inplace --mode auto
[ $RC -eq 0 ] && snap_has 'extended in place' "$SNAP_WORK/run.log" || { cat "$SNAP_WORK/run.log"; snap_fail "auto did not extend in place on a locked bucket"; }
rgw_s3 -X PUT "$RGW_URL/plainb" -o /dev/null
rgw_s3 -T "$SNAP_WORK/final" "$RGW_URL/plainb/$key" -o /dev/null
run --store-container plainb --mode auto
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "auto on an unlocked bucket failed"; }
[ "$(grep -c '"snapshot verified"' "$SNAP_WORK/run.log")" -eq 1 ] ||
    { cat "$SNAP_WORK/run.log"; snap_fail "auto did not verify the snapshot exactly once"; }
rgw_s3 "$RGW_URL/plainb/$p/v2/Full-00000000-00002300-1700086400.gz.final" | cmp -s - "$SNAP_WORK/final" ||
    snap_fail "auto did not copy on a bucket without Object Lock"
echo "auto: in place with Object Lock, a copy without"

bad=$p/v2/Full-00000000-00002400-1700000500
snap_fixture "$SNAP_WORK/bad" 100000
printf 'X' | dd of="$SNAP_WORK/bad" bs=1 seek=5000 conv=notrunc status=none
rgw_s3 -T "$SNAP_WORK/bad" "$RGW_URL/inplace/$bad" -o /dev/null
bad_before=$(until_of "$bad")
run --store-container inplace --mode extend-in-place --retention-days 3
[ $RC -ne 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "a corrupt snapshot was extended"; }
[ "$(grep -c '"level":"error"' "$SNAP_WORK/run.log")" -eq 1 ] &&
    grep '"level":"error"' "$SNAP_WORK/run.log" | snap_has -F "snapshot $bad is corrupt" ||
    { cat "$SNAP_WORK/run.log"; snap_fail "not one error line naming the corrupt snapshot"; }
[ "$(until_of "$bad")" = "$bad_before" ] || snap_fail "the corrupt snapshot's retention changed"
run --store-container inplace --mode extend-in-place --retention-days 3 --skip-hash-check
[ $RC -eq 0 ] && [ "$(until_of "$bad")" != "$bad_before" ] ||
    { cat "$SNAP_WORK/run.log"; snap_fail "--skip-hash-check did not extend it"; }
echo "a corrupt snapshot is not extended in place (--skip-hash-check extends it)"
echo "snapshot_ceph_inplace: ok"
