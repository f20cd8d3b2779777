#!/usr/bin/env bash
# Copies are verified against the original's content, never by size alone, and a failed
# copy never stays visible to a restore:
#  - Local: a 0-byte newest copy of the final snapshot (written by warden-snapshot: it
#    carries the mark) is not chosen as the source; the new copy has the sidecar's bytes
#    and the bad copy is collected; the sidecar's own later snapshot of the same revision
#    (no mark: a wake-up snapshot) is never collected, whatever its time;
#  - S3 (s3rver behind a fault proxy that makes every answer say SSE-KMS, with ETags that
#    are no MD5s, as AWS documents): good copies are kept in server and stream mode (the
#    content is read back instead of trusting the ETag), and the day before's copy is
#    collected while an unmarked snapshot of the same revision is kept;
#  - S3: the server-side copy is create-only (If-None-Match: *), also when the HEAD
#    before it was wrong;
#  - ABS (Azurite behind a fault proxy): a Copy Blob that ends "failed" fails the run and
#    the destination blob is deleted.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

# ---- Local: the 0-byte newest copy ----
store=$SNAP_WORK/store
p=shoot--dev--main/etcd-main
mkdir -p "$store/$p/v2"
orig=$store/$p/v2/Full-00000000-00000100-1700000000.gz.final
snap_fixture "$orig" 100000
: >"$store/$p/v2/Full-00000000-00000100-1700086400.gz.final" # a copy that went wrong
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.etcd-warden-copy", b"true")' \
    "$store/$p/v2/Full-00000000-00000100-1700086400.gz.final"
wake=$store/$p/v2/Full-00000000-00000100-1700090000.gz # the sidecar's, after wake-up
snap_fixture "$wake" 1000
WARDEN_SNAPSHOT_NOW=1700172800 snap_run extend-snapshot-immutability --storage-provider Local \
    --store-container "$store" --store-prefix "$p" --gc-from-timestamp 1700000000 2>"$SNAP_WORK/l.log" ||
    { cat "$SNAP_WORK/l.log"; snap_fail "Local extend failed"; }
cmp -s "$orig" "$store/$p/v2/Full-00000000-00000100-1700172800.gz.final" ||
    { cat "$SNAP_WORK/l.log"; snap_fail "the new copy is not the sidecar's snapshot (a 0-byte copy was the source?)"; }
[ -e "$orig" ] || snap_fail "the original was collected"
[ ! -e "$store/$p/v2/Full-00000000-00000100-1700086400.gz.final" ] || snap_fail "the 0-byte copy was kept"
[ -e "$wake" ] || snap_fail "the sidecar's wake-up snapshot was collected"
snap_has 'not written by warden-snapshot, kept' "$SNAP_WORK/l.log" || snap_fail "no log line for the kept snapshot"
echo "Local: a 0-byte copy is never the source; the new copy has the original's bytes; the sidecar's snapshots are kept"

# ---- S3 under SSE-KMS: ETags are no MD5s ----
snap_s3_start
snap_fixture "$SNAP_WORK/final" $((3 * 1024 * 1024)) Full.gz
snap_s3 put "$p/v2/Full-00000000-00000200-1700000000.gz" "$SNAP_WORK/final"
snap_fixture "$SNAP_WORK/sidecar" 2048 Full.gz
snap_s3 put "$p/v2/Full-00000000-00000200-1700000500.gz" "$SNAP_WORK/sidecar" # the sidecar's, unmarked
fake='"0123456789abcdef0123456789abcdef"'
proxy_start "$SNAP_S3_URL" --set-header '*:*:x-amz-server-side-encryption:aws:kms' \
    --set-header "HEAD:*:ETag:$fake" --set-header "PUT:*:ETag:$fake"
s3_via "$PROXY_URL"
day=1
for mode in server stream; do
    now=$((1700000000 + day * 86400))
    WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability --storage-provider S3 \
        --store-container "$SNAP_BUCKET" --store-prefix "$p" --gc-from-timestamp 1700000000 \
        --copy-mode $mode 2>"$SNAP_WORK/kms.log" ||
        { cat "$SNAP_WORK/kms.log"; snap_fail "S3 $mode copy under SSE-KMS failed (ETag taken as MD5?)"; }
    snap_s3 get "$p/v2/Full-00000000-00000200-$now.gz" | cmp -s - "$SNAP_WORK/final" ||
        snap_fail "S3 $mode copy under SSE-KMS missing or different"
    day=$((day + 1))
done
grep -q 'aws:kms' "$SNAP_WORK/proxy.log" || snap_fail "the proxy did not rewrite the answers"
snap_s3 get "$p/v2/Full-00000000-00000200-1700000500.gz" >/dev/null || snap_fail "S3: the sidecar's snapshot was collected"
if snap_s3 get "$p/v2/Full-00000000-00000200-1700086400.gz" >/dev/null 2>&1; then
    snap_fail "S3: day 1's copy was not collected"
fi
proxy_stop
s3_via "$SNAP_S3_URL"
echo "S3 SSE-KMS: non-MD5 ETags not trusted, copies verified by content"

# ---- S3: CopyObject is create-only (If-None-Match: *, as AWS honours it) ----
# The HEAD before the copy is told the name is free; the proxy honours If-None-Match as
# AWS does (s3rver ignores it), so only the copy's own condition protects the object.
now=$((1700000000 + 5 * 86400))
taken=$p/v2/Full-00000000-00000200-$now.gz
echo "someone else's object" >"$SNAP_WORK/other"
snap_s3 put "$taken" "$SNAP_WORK/other"
snap_s3 tag "$taken" x-etcd-snapshot-exclude=true # someone else's, never a source
proxy_start "$SNAP_S3_URL" --if-none-match S3RVER:S3RVER --rule "HEAD:/$taken:404:NoSuchKey:1"
s3_via "$PROXY_URL"
if WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability --storage-provider S3 \
    --store-container "$SNAP_BUCKET" --store-prefix "$p" --gc-from-timestamp 1700000000 \
    --copy-mode server 2>"$SNAP_WORK/cond.log"; then
    snap_fail "CopyObject replaced an existing object"
fi
proxy_stop
s3_via "$SNAP_S3_URL"
snap_s3 get "$taken" | cmp -s - "$SNAP_WORK/other" || snap_fail "an existing object was overwritten"
grep '"level":"error"' "$SNAP_WORK/cond.log" | snap_has 'PreconditionFailed' ||
    { cat "$SNAP_WORK/cond.log"; snap_fail "no clear error for the refused copy"; }
echo "S3: CopyObject carries If-None-Match and never overwrites"

# ---- ABS: a Copy Blob that ends failed ----
snap_abs_start
snap_abs put "$p/v2/Full-00000000-00000300-1700000000.gz" "$SNAP_WORK/final"
now=1700086400
proxy_start "$SNAP_ABS_URL" --set-header "*:-$now.gz:x-ms-copy-status:failed"
printf '%s' "${PROXY_URL#http://}" >"$AZURE_APPLICATION_CREDENTIALS/domain"
if WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability --storage-provider ABS \
    --store-container "$SNAP_BUCKET" --store-prefix "$p" --gc-from-timestamp 1700000000 \
    --copy-mode server 2>"$SNAP_WORK/abs.log"; then
    snap_fail "a failed Copy Blob passed"
fi
proxy_stop
grep '"level":"error"' "$SNAP_WORK/abs.log" | snap_has 'status failed' ||
    { cat "$SNAP_WORK/abs.log"; snap_fail "no clear error for the failed copy"; }
if snap_abs ls "$p/" | snap_has -- "-$now.gz"; then
    snap_fail "the failed copy's blob is still visible to a restore"
fi
echo "ABS: a failed Copy Blob is deleted"
echo "snapshot_verify: ok"
