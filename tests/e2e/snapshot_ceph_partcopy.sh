#!/usr/bin/env bash
# warden-snapshot's server copy part by part (UploadPartCopy, used above 5 GiB) on Ceph's
# RADOS Gateway (tests/lib/ceph-rgw.sh), with a low --copy-part-threshold so a 12 MB
# snapshot goes through it in 5 MiB parts. radosgw checks SigV4 as specified (canonical
# headers sorted by name): the x-amz-copy-source / x-amz-copy-source-range pair must be
# signed in that order, which libcurl's own signer before 8.10.0 does not do.
#  1. An Object Lock bucket with a default retention: the copy is made server-side in
#     3 parts (its ETag "-3"), its bytes are the source's, it carries warden-snapshot's mark
#     and digest, and it took the bucket's default retention.
#  2. An unversioned bucket, the source itself a multipart object with a part size other
#     than the copy's: the copy's bytes are the source's.
#  3. A copy source whose name needs percent-encoding in x-amz-copy-source.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/ceph-rgw.sh"

rgw_start
rgw_aws_credentials
p=shoot--dev--main/etcd-main
ns='xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
MiB=$((1024 * 1024))

run() { # bucket, day, prefix: a server copy part by part; status in RC, log in run.log
    local b=$1 now=$((1700000000 + $2 * 86400))
    set +e
    WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability --storage-provider S3 \
        --store-container "$b" --store-prefix "$3" --store-endpoint-override "$RGW_URL" \
        --gc-from-timestamp 1700000001 --mode copy --copy-mode server \
        --copy-part-threshold $MiB --part-size $((5 * MiB)) 2>"$SNAP_WORK/run.log"
    RC=$?
    set -e
}
server_copied() { # copy key: the run succeeded and copied server-side
    [ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "the server copy failed"; }
    snap_has "\"msg\":\"copy verified\",\"copy\":\"$1\",\"mode\":\"server\"" "$SNAP_WORK/run.log" ||
        { cat "$SNAP_WORK/run.log"; snap_fail "no verified server copy $1"; }
}
head_of() { rgw_s3 -I "$RGW_URL/$1/$2" | tr -d '\r'; }

# ---- 1. Object Lock bucket with a default retention ----
rgw_s3 -X PUT "$RGW_URL/lockpc" -H 'x-amz-bucket-object-lock-enabled: true' -o /dev/null
body="<ObjectLockConfiguration $ns><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>"
rgw_s3 -X PUT "$RGW_URL/lockpc?object-lock=" -H "Content-MD5: $(printf '%s' "$body" | openssl md5 -binary | base64)" \
    --data-binary "$body" -o /dev/null
src=$SNAP_WORK/full
snap_fixture "$src" $((12 * MiB)) Full.gz
size=$(stat -c %s "$src")
[ "$size" -gt $((10 * MiB)) ] || snap_fail "the fixture is $size bytes, want three 5 MiB parts"
rgw_s3 -T "$src" "$RGW_URL/lockpc/$p/v2/Full-00000000-00002300-1700000000.gz" -o /dev/null
copy=$p/v2/Full-00000000-00002300-$((1700000000 + 86400)).gz
run lockpc 1 "$p"
snap_has 'SignatureDoesNotMatch' "$SNAP_WORK/run.log" && { cat "$SNAP_WORK/run.log"; snap_fail "UploadPartCopy refused: SignatureDoesNotMatch"; }
server_copied "$copy"
rgw_s3 "$RGW_URL/lockpc/$copy" | cmp -s - "$src" || snap_fail "the part-by-part copy differs from the source"
head_of lockpc "$copy" >"$SNAP_WORK/head"
grep -qi '^etag: "[0-9a-f]\{32\}-3"$' "$SNAP_WORK/head" || { cat "$SNAP_WORK/head"; snap_fail "the copy was not assembled from 3 parts"; }
grep -qi '^x-amz-meta-etcd-warden-copy: true$' "$SNAP_WORK/head" || snap_fail "the copy lacks warden-snapshot's mark"
grep -qi '^x-amz-meta-etcd-warden-sha256: [0-9a-f]\{64\}$' "$SNAP_WORK/head" || snap_fail "the copy lacks the verified digest"
grep -qi '^x-amz-object-lock-mode: GOVERNANCE$' "$SNAP_WORK/head" || { cat "$SNAP_WORK/head"; snap_fail "the copy did not take the bucket's default retention"; }
echo "Object Lock bucket: 12 MB copied server-side in 3 UploadPartCopy parts, bytes, mark and retention checked"

# ---- 2. unversioned bucket, the source a multipart object (6 MiB parts) ----
rgw_s3 -X PUT "$RGW_URL/plainpc" -o /dev/null
key=$p/v2/Full-00000000-00004100-1700000000.gz
snap_fixture "$src" $((11 * MiB)) Full.gz
split -b $((6 * MiB)) -d "$src" "$SNAP_WORK/part."
id=$(rgw_s3 -X POST "$RGW_URL/plainpc/$key?uploads=" | sed -n 's:.*<UploadId>\(.*\)</UploadId>.*:\1:p')
[ -n "$id" ] || snap_fail "CreateMultipartUpload gave no UploadId"
parts= n=0
for f in "$SNAP_WORK"/part.*; do
    n=$((n + 1))
    et=$(rgw_s3 -T "$f" -D - "$RGW_URL/plainpc/$key?partNumber=$n&uploadId=$id" -o /dev/null |
        tr -d '\r' | sed -n 's/^etag: //Ip')
    parts="$parts<Part><PartNumber>$n</PartNumber><ETag>$et</ETag></Part>"
done
rgw_s3 -X POST --data-binary "<CompleteMultipartUpload>$parts</CompleteMultipartUpload>" \
    "$RGW_URL/plainpc/$key?uploadId=$id" -o /dev/null
rgw_s3 "$RGW_URL/plainpc/$key" | cmp -s - "$src" || snap_fail "the multipart source differs"
copy=$p/v2/Full-00000000-00004100-$((1700000000 + 2 * 86400)).gz
run plainpc 2 "$p"
server_copied "$copy"
rgw_s3 "$RGW_URL/plainpc/$copy" | cmp -s - "$src" || snap_fail "the copy of the multipart source differs"
echo "unversioned bucket: a multipart source copied server-side part by part, bytes checked"

# ---- 3. a prefix that x-amz-copy-source carries percent-encoded ----
q='shoot--dev--main/etcd main+1'
snap_fixture "$src" $((6 * MiB)) Full.gz
rgw_s3 -T "$src" "$RGW_URL/plainpc/shoot--dev--main/etcd%20main%2B1/v2/Full-00000000-00000500-1700000000.gz" -o /dev/null
run plainpc 3 "$q"
server_copied "$q/v2/Full-00000000-00000500-$((1700000000 + 3 * 86400)).gz"
rgw_s3 "$RGW_URL/plainpc/shoot--dev--main/etcd%20main%2B1/v2/Full-00000000-00000500-$((1700000000 + 3 * 86400)).gz" |
    cmp -s - "$src" || snap_fail "the copy under an encoded prefix differs"
echo "encoded names: copied part by part, bytes checked"
