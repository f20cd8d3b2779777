#!/usr/bin/env bash
# Which create-only condition Ceph's RADOS Gateway 16 (Debian 12's, tests/lib/ceph-rgw.sh)
# honours, exactly as docs/warden-snapshot.md states it; warden-snapshot sends If-None-Match: * on
# every write that creates a snapshot, and this is where only its HEAD guards the name.
#  1. Unversioned bucket: PutObject with If-None-Match: * onto an existing name is refused
#     (412) and the object kept; CopyObject and CompleteMultipartUpload with it overwrite.
#  2. Versioned bucket and Object Lock bucket (always versioned): PutObject, CopyObject and
#     CompleteMultipartUpload with If-None-Match: * all succeed, but as a new version: the
#     earlier one is still there, by version, with its bytes (and its lock).
# Should a later radosgw honour a condition it ignores here, this test fails: the Ceph
# caveat of docs/warden-snapshot.md is then to be corrected with it.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/ceph-rgw.sh"

rgw_start
ns='xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
echo first >"$SNAP_WORK/first"
echo second >"$SNAP_WORK/second"
echo other >"$SNAP_WORK/other"

status() { # curl args...: the HTTP status only
    rgw_s3 -o /dev/null -w '%{http_code}' "$@" 2>/dev/null || true
}
put_inm() { status -T "$SNAP_WORK/second" -H 'If-None-Match: *' "$RGW_URL/$1/$2"; }
copy_inm() { status -X PUT -H "x-amz-copy-source: /$1/src" -H 'If-None-Match: *' "$RGW_URL/$1/$2"; }
complete_inm() { # bucket, key: a one-part multipart upload of "second", completed with the condition
    local id et
    id=$(rgw_s3 -X POST "$RGW_URL/$1/$2?uploads=" | sed -n 's:.*<UploadId>\(.*\)</UploadId>.*:\1:p')
    et=$(rgw_s3 -T "$SNAP_WORK/second" -D - -o /dev/null "$RGW_URL/$1/$2?partNumber=1&uploadId=$id" |
        tr -d '\r' | sed -n 's/^etag: //Ip')
    status -X POST -H 'If-None-Match: *' "$RGW_URL/$1/$2?uploadId=$id" \
        --data-binary "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>$et</ETag></Part></CompleteMultipartUpload>"
}
body_is() { # bucket, key, file
    rgw_s3 "$RGW_URL/$1/$2" | cmp -s - "$3"
}
versions() { # bucket, key: version ids, oldest last
    rgw_s3 "$RGW_URL/$1?prefix=$2&versions=" |
        python3 -c '
import sys, xml.etree.ElementTree as E
for v in E.parse(sys.stdin).getroot().iter("{http://s3.amazonaws.com/doc/2006-03-01/}Version"):
    if v.findtext("{*}Key") == sys.argv[1]:
        print(v.findtext("{*}VersionId"))' "$2"
}

# ---- 1. unversioned ----
rgw_s3 -X PUT "$RGW_URL/plain" -o /dev/null
rgw_s3 -T "$SNAP_WORK/other" "$RGW_URL/plain/src" -o /dev/null
for k in put copy complete; do rgw_s3 -T "$SNAP_WORK/first" "$RGW_URL/plain/$k" -o /dev/null; done
[ "$(put_inm plain put)" = 412 ] || snap_fail "unversioned PutObject: If-None-Match: * not honoured"
body_is plain put "$SNAP_WORK/first" || snap_fail "unversioned PutObject: the existing object changed"
[ "$(put_inm plain put-new)" = 200 ] || snap_fail "unversioned PutObject of a free name refused"
[ "$(copy_inm plain copy)" = 200 ] || snap_fail "unversioned CopyObject: If-None-Match: * now honoured (update docs/warden-snapshot.md)"
body_is plain copy "$SNAP_WORK/other" || snap_fail "unversioned CopyObject did not overwrite"
[ "$(complete_inm plain complete)" = 200 ] || snap_fail "unversioned CompleteMultipartUpload: If-None-Match: * now honoured (update docs/warden-snapshot.md)"
body_is plain complete "$SNAP_WORK/second" || snap_fail "unversioned CompleteMultipartUpload did not overwrite"
echo "unversioned: If-None-Match: * honoured by PutObject only; CopyObject and CompleteMultipartUpload overwrite"

# ---- 2. versioned, and Object Lock ----
rgw_s3 -X PUT "$RGW_URL/ver" -o /dev/null
rgw_s3 -X PUT "$RGW_URL/ver?versioning=" -o /dev/null \
    --data-binary "<VersioningConfiguration $ns><Status>Enabled</Status></VersioningConfiguration>"
rgw_s3 -X PUT "$RGW_URL/lock" -H 'x-amz-bucket-object-lock-enabled: true' -o /dev/null
for b in ver lock; do
    rgw_s3 -T "$SNAP_WORK/other" "$RGW_URL/$b/src" -o /dev/null
    for k in put copy complete; do rgw_s3 -T "$SNAP_WORK/first" "$RGW_URL/$b/$k" -o /dev/null; done
    [ "$(put_inm $b put)" = 200 ] || snap_fail "$b PutObject: If-None-Match: * now honoured (update docs/warden-snapshot.md)"
    [ "$(copy_inm $b copy)" = 200 ] || snap_fail "$b CopyObject: If-None-Match: * now honoured (update docs/warden-snapshot.md)"
    [ "$(complete_inm $b complete)" = 200 ] || snap_fail "$b CompleteMultipartUpload: If-None-Match: * now honoured (update docs/warden-snapshot.md)"
    for k in put copy complete; do
        mapfile -t v < <(versions $b $k)
        [ ${#v[@]} -eq 2 ] || snap_fail "$b/$k: ${#v[@]} versions, want the new one and the earlier one"
        rgw_s3 "$RGW_URL/$b/$k?versionId=${v[1]}" | cmp -s - "$SNAP_WORK/first" ||
            snap_fail "$b/$k: the earlier version's bytes changed"
    done
done
echo "versioned and Object Lock: If-None-Match: * ignored by PutObject, CopyObject and CompleteMultipartUpload; the earlier version is kept"
