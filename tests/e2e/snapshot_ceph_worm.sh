#!/usr/bin/env bash
# warden-snapshot on a store that really enforces WORM: Ceph's RADOS Gateway
# (tests/lib/ceph-rgw.sh), reached through --store-endpoint-override.
#  1. An Object Lock bucket, simulated days of extension: each copy is locked a few
#     seconds (PutObjectRetention, the real refusal); an earlier copy still locked is
#     refused (403 "forbidden by object lock"), kept, and the run succeeds; once its
#     retention has passed the next run deletes it by version (no version or delete
#     marker left); `list` shows the real retain-until dates.
#     A newer full under a delete marker but not tagged is listed and extended, as
#     etcd-backup-restore's versioned listing keeps it for restore.
#  2. A bucket with a default retention: a copy damaged on the way (stream mode, the
#     source's bytes flipped by a fault proxy) fails the run, cannot be deleted (locked),
#     and is excluded as etcd-backup-restore reads it (its version tagged
#     x-etcd-snapshot-exclude=true, a delete marker on top); the next run copies the
#     sidecar's snapshot, never the bad copy.
#  3. An unversioned bucket: the streamed copy is create-only (PutObject with
#     If-None-Match: *, which radosgw honours there) even when the HEAD before it says the
#     name is free. (radosgw 16 ignores If-None-Match on CopyObject: see docs/warden-snapshot.md.)
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/ceph-rgw.sh"

rgw_start
rgw_aws_credentials
p=shoot--dev--main/etcd-main
final=$SNAP_WORK/final
snap_fixture "$final" $((3 * 1024 * 1024)) Full.gz

ns='xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
mkbucket() { # name, then lock|none
    if [ "$2" = lock ]; then
        rgw_s3 -X PUT "$RGW_URL/$1" -H 'x-amz-bucket-object-lock-enabled: true' -o /dev/null
    else
        rgw_s3 -X PUT "$RGW_URL/$1" -o /dev/null
    fi
}
version_of() { rgw_s3 -I "$RGW_URL/$1/$2" | tr -d '\r' | sed -n 's/^x-amz-version-id: //Ip'; }
lock_for() { # bucket, key, seconds: GOVERNANCE retention of the current version
    local until body md5
    until=$(date -u -d "@$(($(date +%s) + $3))" +%Y-%m-%dT%H:%M:%SZ)
    body="<Retention $ns><Mode>GOVERNANCE</Mode><RetainUntilDate>$until</RetainUntilDate></Retention>"
    md5=$(printf '%s' "$body" | openssl md5 -binary | base64)
    rgw_s3 -X PUT "$RGW_URL/$1/$2?retention=&versionId=$(version_of "$1" "$2")" \
        -H "Content-MD5: $md5" --data-binary "$body" -o /dev/null
    echo "$until"
}
versions_of() { # bucket, key: "version <id>" / "marker <id>" lines for exactly that key
    # the query sorted and encoded as curl's SigV4 signs it
    rgw_s3 "$RGW_URL/$1?prefix=$(python3 -c 'import sys, urllib.parse as u; print(u.quote(sys.argv[1], safe=""))' "$2")&versions=" |
        python3 -c '
import sys, xml.etree.ElementTree as E
key = sys.argv[1]
for el in E.parse(sys.stdin).getroot():
    tag = el.tag.split("}")[-1]
    if tag in ("Version", "DeleteMarker") and el.findtext("{*}Key") == key:
        print("version" if tag == "Version" else "marker", el.findtext("{*}VersionId"))' "$2"
}
run() { # bucket, day, extra flags; status in RC, log in run.log
    local b=$1 now=$((1700000000 + $2 * 86400)); shift 2
    set +e
    WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability --storage-provider S3 \
        --store-container "$b" --store-prefix "$p" --store-endpoint-override "$RGW_URL" \
        --gc-from-timestamp 1700000001 "$@" 2>"$SNAP_WORK/run.log"
    RC=$?
    set -e
}
copy_key() { echo "$p/v2/Full-00000000-00002300-$((1700000000 + $1 * 86400)).gz.final"; }

# ---- 1. Object Lock: extension over days, refusals while locked, collection after ----
mkbucket worm lock
orig=$p/v2/Full-00000000-00002300-1700000000.gz.final
rgw_s3 -T "$final" "$RGW_URL/worm/$orig" -o /dev/null
orig_until=$(lock_for worm "$orig" 3600)
run worm 1
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "day 1 failed"; }
rgw_s3 "$RGW_URL/worm/$(copy_key 1)" | cmp -s - "$final" || snap_fail "day 1 copy differs"
until1=$(lock_for worm "$(copy_key 1)" 6)
run worm 2
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "day 2 failed (a locked copy must not fail the run)"; }
snap_has '"stillImmutable":"1"' "$SNAP_WORK/run.log" || { cat "$SNAP_WORK/run.log"; snap_fail "the locked day-1 copy was not refused"; }
snap_has 'forbidden by object lock\|retained until' "$SNAP_WORK/run.log" || snap_fail "the refusal is not Object Lock's"
[ "$(versions_of worm "$(copy_key 1)" | grep -c '^version')" -eq 1 ] || snap_fail "the locked day-1 copy is gone"
lock_for worm "$(copy_key 2)" 3600 >/dev/null
# list: the retain-until dates the store holds
snap_run list --storage-provider S3 --store-container worm --store-prefix "$p" \
    --store-endpoint-override "$RGW_URL" >"$SNAP_WORK/list.out"
grep -q "^$orig .* immutable-until=$orig_until " "$SNAP_WORK/list.out" ||
    { cat "$SNAP_WORK/list.out"; snap_fail "list does not show the original's retain-until $orig_until"; }
grep -q "^$(copy_key 1) .* immutable-until=$until1 " "$SNAP_WORK/list.out" ||
    { cat "$SNAP_WORK/list.out"; snap_fail "list does not show day 1's retain-until $until1"; }
# once day 1's retention has passed (bounded wait on the clock), day 3 deletes it by version
end=$((SECONDS + 30))
while [ "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \< "$until1" ] || [ "$(date -u +%Y-%m-%dT%H:%M:%SZ)" = "$until1" ]; do
    [ $SECONDS -lt $end ] || snap_fail "the clock did not pass $until1"
    sleep 0.2
done
run worm 3
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "day 3 failed"; }
snap_has '"deleted":"1"' "$SNAP_WORK/run.log" || { cat "$SNAP_WORK/run.log"; snap_fail "the expired day-1 copy was not collected"; }
[ -z "$(versions_of worm "$(copy_key 1)")" ] || { versions_of worm "$(copy_key 1)"; snap_fail "day 1's copy left a version or a delete marker"; }
[ "$(versions_of worm "$orig" | grep -c '^version')" -eq 1 ] || snap_fail "the sidecar's snapshot was touched"
[ "$(versions_of worm "$(copy_key 2)" | grep -c '^version')" -eq 1 ] || snap_fail "the locked day-2 copy was deleted"
echo "Object Lock: locked copies refused and kept, collected by version once deletable, list shows retain-until"

# A newer full under a delete marker, not tagged: etcd-backup-restore's versioned listing
# keeps it (oldest version) and its restore takes it, so it is the one extended.
marked=$p/v2/Full-00000000-00002500-1700200000.gz
snap_fixture "$SNAP_WORK/marked" 70000 "$marked"
rgw_s3 -T "$SNAP_WORK/marked" "$RGW_URL/worm/$marked" -o /dev/null
rgw_s3 -X DELETE "$RGW_URL/worm/$marked" -o /dev/null
run worm 4
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "day 4 failed"; }
snap_has "\"source\":\"$marked\"" "$SNAP_WORK/run.log" ||
    { cat "$SNAP_WORK/run.log"; snap_fail "the delete-marked, untagged full (restored upstream) was not the source"; }
rgw_s3 "$RGW_URL/worm/$p/v2/Full-00000000-00002500-$((1700000000 + 4 * 86400)).gz" | cmp -s - "$SNAP_WORK/marked" ||
    snap_fail "the copy of the delete-marked full differs"
echo "versioned listing as upstream: an untagged delete-marked full is kept and extended"

# ---- 2. default retention: a damaged copy is excluded, never chosen ----
mkbucket wormd lock
body="<ObjectLockConfiguration $ns><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>"
rgw_s3 -X PUT "$RGW_URL/wormd?object-lock=" -H "Content-MD5: $(printf '%s' "$body" | openssl md5 -binary | base64)" \
    --data-binary "$body" -o /dev/null
rgw_s3 -T "$final" "$RGW_URL/wormd/$orig" -o /dev/null
proxy_start "$RGW_URL" --corrupt "GET:/wormd/$orig"
# --skip-hash-check: the SHA-256 check would refuse the damaged read before copying; this is
# the copy's own content check
set +e
WARDEN_SNAPSHOT_NOW=$((1700000000 + 86400)) snap_run extend-snapshot-immutability --storage-provider S3 \
    --store-container wormd --store-prefix "$p" --store-endpoint-override "$PROXY_URL" \
    --gc-from-timestamp 1700000001 --copy-mode stream --skip-hash-check 2>"$SNAP_WORK/run.log"
RC=$?
set -e
proxy_stop
[ $RC -ne 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "a damaged copy passed"; }
one_error_line "MD5"
snap_has 'marking it excluded' "$SNAP_WORK/run.log" || { cat "$SNAP_WORK/run.log"; snap_fail "the locked bad copy was not excluded"; }
bad=$(copy_key 1)
versions_of wormd "$bad" >"$SNAP_WORK/bad.versions"
grep -q '^marker' "$SNAP_WORK/bad.versions" || snap_fail "no delete marker on the bad copy"
vid=$(sed -n 's/^version //p' "$SNAP_WORK/bad.versions")
rgw_s3 "$RGW_URL/wormd/$bad?tagging=&versionId=$vid" | snap_has '<Key>x-etcd-snapshot-exclude</Key><Value>true</Value>' ||
    snap_fail "the bad copy's version is not tagged x-etcd-snapshot-exclude=true"
snap_run list --storage-provider S3 --store-container wormd --store-prefix "$p" \
    --store-endpoint-override "$RGW_URL" | snap_has "^$bad .* exclude=true " || snap_fail "list does not mark the bad copy"
run wormd 2
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "the run after the bad copy failed"; }
snap_has "\"source\":\"$orig\"" "$SNAP_WORK/run.log" || { cat "$SNAP_WORK/run.log"; snap_fail "the source is not the sidecar's snapshot"; }
rgw_s3 "$RGW_URL/wormd/$(copy_key 2)" | cmp -s - "$final" || snap_fail "the good copy differs"
echo "default retention: a damaged copy is excluded (tag + delete marker), never chosen"

# ---- 3. unversioned bucket: the streamed copy is create-only ----
mkbucket plain none
rgw_s3 -T "$final" "$RGW_URL/plain/$orig" -o /dev/null
echo "someone else's object" >"$SNAP_WORK/other"
rgw_s3 -T "$SNAP_WORK/other" "$RGW_URL/plain/$(copy_key 1)" -o /dev/null
# the HEAD before the copy is told the name is free: only the copy's own condition protects it
proxy_start "$RGW_URL" --rule "HEAD:/plain/$(copy_key 1):404:NoSuchKey:1"
set +e
WARDEN_SNAPSHOT_NOW=$((1700000000 + 86400)) snap_run extend-snapshot-immutability --storage-provider S3 \
    --store-container plain --store-prefix "$p" --store-endpoint-override "$PROXY_URL" \
    --gc-from-timestamp 1700000001 --copy-mode stream 2>"$SNAP_WORK/run.log"
RC=$?
set -e
proxy_stop
[ $RC -ne 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "the copy replaced an existing object"; }
rgw_s3 "$RGW_URL/plain/$(copy_key 1)" | cmp -s - "$SNAP_WORK/other" || snap_fail "an existing object was overwritten"
one_error_line "PreconditionFailed"
echo "unversioned bucket: PutObject with If-None-Match refused to overwrite"
echo "snapshot_ceph_worm: ok"
