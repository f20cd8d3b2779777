#!/usr/bin/env bash
# warden-snapshot against s3rver (an S3 emulator from npm, an unversioned bucket): list
# against a seeded history, extend over simulated days in
# server mode, stream mode and server mode above a tiny multipart-copy
# threshold (s3rver has no UploadPartCopy: the fallback to streaming is
# checked), multipart uploads, never overwriting, credentials as a JSON file; an
# x-etcd-snapshot-exclude=true tag is ignored on an unversioned bucket, as
# etcd-backup-restore ignores it there (its restore would use that snapshot).
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

snap_s3_start
s3_put() { snap_s3 put "$1" "$2"; }
s3_get() { snap_s3 get "$1"; }
s3_ls() { snap_s3 ls "$1"; }
s3_tag() { snap_s3 tag "$1" "$2"; }
STORE_GET=s3_get STORE_LS=s3_ls STORE_TAG=s3_tag
flags=(--storage-provider S3 --store-container "$SNAP_BUCKET")

SNAP_FINAL_SIZE=$((12 * 1024 * 1024)) snap_history s3_put
snap_check_list "${flags[@]}"
# 5 MiB parts: the 12 MiB snapshot goes as a 3-part multipart upload in stream mode.
SNAP_EXTRA_FLAGS="--part-size 5242880" snap_days "${flags[@]}"

# Server mode above the multipart-copy threshold: UploadPartCopy, or streaming when
# the store does not implement it (s3rver), with the copy still verified.
now=$((1700000000 + 4 * SNAP_DAY))
WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability "${flags[@]}" \
    --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" --copy-mode server \
    --copy-part-threshold 1048576 --part-size 5242880 2>"$SNAP_WORK/mpc.log" ||
    { cat "$SNAP_WORK/mpc.log"; snap_fail "multipart copy run failed"; }
grep -q 'UploadPartCopy' "$SNAP_WORK/mpc.log" || snap_fail "UploadPartCopy was not tried"
snap_check_day "$now" $((now - SNAP_DAY))
echo "multipart copy path: tried, fell back to streaming, verified"

# Credentials as a JSON file (AWS_APPLICATION_CREDENTIALS_JSON wins over the directory).
cat >"$SNAP_WORK/aws.json" <<JSON
{"accessKeyID":"S3RVER","secretAccessKey":"S3RVER","region":"us-east-1",
 "endpoint":"$SNAP_S3_URL","s3ForcePathStyle":true}
JSON
AWS_APPLICATION_CREDENTIALS=/nonexistent AWS_APPLICATION_CREDENTIALS_JSON=$SNAP_WORK/aws.json \
    snap_run list "${flags[@]}" --store-prefix "$SNAP_PREFIX" | snap_has "^$SNAP_FINAL " ||
    snap_fail "JSON credentials not used"

# Never overwrite: the target name is taken by an (excluded) object.
later=$((now + SNAP_DAY))
taken=$SNAP_PREFIX/v2/Full-00000000-00002300-$later.gz.final
echo "someone else's object" >"$SNAP_WORK/taken"
snap_s3 put "$taken" "$SNAP_WORK/taken"
snap_s3 tag "$taken" x-etcd-snapshot-exclude=true
if WARDEN_SNAPSHOT_NOW=$later snap_run extend-snapshot-immutability "${flags[@]}" \
    --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" 2>"$SNAP_WORK/taken.log"; then
    snap_fail "extend wrote over an existing object"
fi
grep '"level":"error"' "$SNAP_WORK/taken.log" | snap_has "already exists; not overwriting" ||
    { cat "$SNAP_WORK/taken.log"; snap_fail "no clear 'already exists' error"; }
snap_s3 get "$taken" | cmp -s - "$SNAP_WORK/taken" || snap_fail "the existing object was changed"

# Unversioned bucket: etcd-backup-restore lists with ListObjectsV2 and never reads tags, so a
# tagged full at a higher revision is what its restore takes: listed exclude=false, copied.
tagged=$SNAP_PREFIX/v2/Full-00000000-00002400-1700003000.gz
snap_fixture "$SNAP_WORK/tagged" 5000 "$tagged"
snap_s3 put "$tagged" "$SNAP_WORK/tagged"
snap_s3 tag "$tagged" x-etcd-snapshot-exclude=true
snap_run list "${flags[@]}" --store-prefix "$SNAP_PREFIX" | snap_has "^$tagged .* exclude=false " ||
    snap_fail "a tag on an unversioned bucket was honoured (upstream ignores it)"
now=$((later + SNAP_DAY))
WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability "${flags[@]}" \
    --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" 2>"$SNAP_WORK/tag.log" ||
    { cat "$SNAP_WORK/tag.log"; snap_fail "extend failed"; }
snap_s3 get "$SNAP_PREFIX/v2/Full-00000000-00002400-$now.gz" | cmp -s - "$SNAP_WORK/tagged" ||
    snap_fail "the snapshot upstream would restore was not the one extended"
echo "unversioned bucket: exclude tags ignored as upstream ignores them"
echo "snapshot_s3: ok"
