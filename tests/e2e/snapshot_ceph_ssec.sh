#!/usr/bin/env bash
# SSE-C (sseCustomerKey in the credentials) on Ceph's RADOS Gateway (tests/lib/ceph-rgw.sh,
# which allows SSE-C over plain HTTP). Every SSE-C request carries
# x-amz-server-side-encryption-customer-key and ...-customer-key-MD5, which libcurl's
# signer before 8.10.0 signs in the wrong order; radosgw checks SigV4 as specified.
#  1. `copy` into an SSE-C bucket: a single PutObject with its body, the object encrypted
#     (a HEAD without the key is refused).
#  2. extend-snapshot-immutability there, part by part (UploadPartCopy with the copy
#     source's SSE-C headers), then whole (radosgw 16 answers CopyObject with SSE-C
#     501 NotImplemented: streamed, one PutObject).
#  3. `copy` back out of it (ranged GETs with the key): the bytes are the original's.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/ceph-rgw.sh"

rgw_start
rgw_aws_credentials
plain=$AWS_APPLICATION_CREDENTIALS
ssec=$SNAP_WORK/aws-ssec
mkdir -p "$ssec"
cp "$plain"/* "$ssec"/
printf '0123456789abcdef0123456789abcdef' >"$ssec/sseCustomerKey"
printf 'AES256' >"$ssec/sseCustomerAlgorithm"
p=shoot--dev--main/etcd-main
name=Full-00000000-00002300-1700000000.gz
src=$SNAP_WORK/full
snap_fixture "$src" $((3 * 1024 * 1024)) Full.gz
rgw_s3 -X PUT "$RGW_URL/plain" -o /dev/null
rgw_s3 -X PUT "$RGW_URL/enc" -o /dev/null
rgw_s3 -T "$src" "$RGW_URL/plain/$p/v2/$name" -o /dev/null

copy() { # from bucket, from creds, to bucket, to creds, to prefix, snapshot
    snap_run copy --from-storage-provider S3 --from-store-container "$1" --from-store-prefix "$p" \
        --from-store-endpoint-override "$RGW_URL" --from-credentials-dir "$2" \
        --to-storage-provider S3 --to-store-container "$3" --to-store-prefix "$5" \
        --to-store-endpoint-override "$RGW_URL" --to-credentials-dir "$4" --snapshot "$6" \
        >"$SNAP_WORK/copy.out" 2>"$SNAP_WORK/copy.log" ||
        { cat "$SNAP_WORK/copy.log"; snap_fail "copy $1 -> $3 failed"; }
}
extend() { # day, flags...
    local now=$((1700000000 + $1 * 86400)); shift
    AWS_APPLICATION_CREDENTIALS=$ssec WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability \
        --storage-provider S3 --store-container enc --store-prefix "$p" \
        --store-endpoint-override "$RGW_URL" --gc-from-timestamp 1700000001 "$@" \
        2>"$SNAP_WORK/run.log" || { cat "$SNAP_WORK/run.log"; snap_fail "extend (day $now) failed"; }
}

# ---- 1. into the SSE-C bucket: one PutObject ----
copy plain "$plain" enc "$ssec" "$p" "$name"
[ "$(rgw_s3 -I -o /dev/null -w '%{http_code}' "$RGW_URL/enc/$p/v2/$name" 2>/dev/null || true)" = 400 ] ||
    snap_fail "the object in the SSE-C bucket is readable without the key"
echo "SSE-C PutObject: written, encrypted"

# ---- 2. extend there: part by part, then whole ----
extend 1 --copy-part-threshold 1048576 --part-size 5242880
day1=Full-00000000-00002300-$((1700000000 + 86400)).gz
snap_has "\"msg\":\"copy verified\",\"copy\":\"$p/v2/$day1\",\"mode\":\"server\"" "$SNAP_WORK/run.log" ||
    { cat "$SNAP_WORK/run.log"; snap_fail "no server copy part by part under SSE-C"; }
copy enc "$ssec" plain "$plain" back1 "$day1"
rgw_s3 "$RGW_URL/plain/back1/v2/$day1" | cmp -s - "$src" || snap_fail "the SSE-C part-by-part copy differs"
extend 2
day2=Full-00000000-00002300-$((1700000000 + 2 * 86400)).gz
snap_has "\"msg\":\"copy verified\",\"copy\":\"$p/v2/$day2\"" "$SNAP_WORK/run.log" ||
    { cat "$SNAP_WORK/run.log"; snap_fail "no verified copy of day 2"; }

# ---- 3. back out: ranged GETs with the key ----
copy enc "$ssec" plain "$plain" back2 "$day2"
rgw_s3 "$RGW_URL/plain/back2/v2/$day2" | cmp -s - "$src" || snap_fail "the SSE-C copy read back differs"
echo "SSE-C: UploadPartCopy, streamed copy and reads signed as radosgw checks them, bytes checked"
