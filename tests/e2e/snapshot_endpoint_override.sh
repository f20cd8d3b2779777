#!/usr/bin/env bash
# --store-endpoint-override, as etcd-druid passes spec.backup.store.endpointOverride to
# etcd-backup-restore: it wins over the Secret's endpoint (S3, s3rver) and domain (ABS,
# Azurite), which here point at a dead port. On ABS, through a fault proxy reached by the
# override: 409 BlobImmutableDueToPolicy on delete is immutability (logged, the run
# succeeds), 403 AuthorizationPermissionMismatch is a permission error (the run fails).
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

dead=http://127.0.0.1:9 # discard port: nothing listens

# ---- S3 ----
snap_s3_start
full=$SNAP_WORK/full.gz
snap_fixture "$full" 4096
snap_s3 put "$SNAP_PREFIX/v2/Full-00000000-00000100-1700000000.gz" "$full"
printf '%s' "$dead" >"$AWS_APPLICATION_CREDENTIALS/endpoint"
s3=(--storage-provider S3 --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX")
if snap_run list "${s3[@]}" >/dev/null 2>&1; then
    snap_fail "the dead endpoint of the Secret was not used without the override"
fi
snap_run list "${s3[@]}" --store-endpoint-override "$SNAP_S3_URL" >"$SNAP_WORK/s3.list" 2>"$SNAP_WORK/s3.log" ||
    { cat "$SNAP_WORK/s3.log"; snap_fail "S3 list with --store-endpoint-override failed"; }
snap_has "Full-00000000-00000100-1700000000.gz kind=Full" "$SNAP_WORK/s3.list" || snap_fail "S3: not listed"
WARDEN_SNAPSHOT_NOW=1700086400 snap_run extend-snapshot-immutability "${s3[@]}" \
    --store-endpoint-override "$SNAP_S3_URL/" --gc-from-timestamp 1700000000 2>"$SNAP_WORK/s3x.log" ||
    { cat "$SNAP_WORK/s3x.log"; snap_fail "S3 extend with --store-endpoint-override failed"; }
snap_s3 get "$SNAP_PREFIX/v2/Full-00000000-00000100-1700086400.gz" | cmp -s - "$full" ||
    snap_fail "S3: no copy through the override"
echo "S3: the override wins over the Secret's endpoint"

# ---- ABS ----
snap_abs_start
snap_abs put "$SNAP_PREFIX/v2/Full-00000000-00000100-1700000000.gz" "$full"
printf '127.0.0.1:9' >"$AZURE_APPLICATION_CREDENTIALS/domain"
abs=(--storage-provider ABS --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX")
if snap_run list "${abs[@]}" >/dev/null 2>&1; then
    snap_fail "the dead domain of the Secret was not used without the override"
fi
snap_run list "${abs[@]}" --store-endpoint-override "$SNAP_ABS_URL/$SNAP_ABS_ACCOUNT" \
    >"$SNAP_WORK/abs.list" 2>"$SNAP_WORK/abs.log" ||
    { cat "$SNAP_WORK/abs.log"; snap_fail "ABS list with --store-endpoint-override failed"; }
snap_has "Full-00000000-00000100-1700000000.gz kind=Full" "$SNAP_WORK/abs.list" || snap_fail "ABS: not listed"

abs_day() { # day, then the proxy's rules; status in RC
    local now=$((1700000000 + $1 * 86400)); shift
    proxy_start "$SNAP_ABS_URL" "$@"
    set +e
    WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability "${abs[@]}" \
        --store-endpoint-override "$PROXY_URL/$SNAP_ABS_ACCOUNT" --gc-from-timestamp 1700000000 \
        2>"$SNAP_WORK/run.log"
    RC=$?
    set -e
    proxy_stop
}
abs_day 1
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "ABS extend through the override failed"; }
snap_abs get "$SNAP_PREFIX/v2/Full-00000000-00000100-1700086400.gz" | cmp -s - "$full" ||
    snap_fail "ABS: no copy through the override"
abs_day 2 --rule 'DELETE:*:409:BlobImmutableDueToPolicy:inf:This operation is not permitted as the blob is immutable due to a policy.'
[ $RC -eq 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "an immutable blob failed the run"; }
snap_has '"stillImmutable":"1"' "$SNAP_WORK/run.log" || { cat "$SNAP_WORK/run.log"; snap_fail "409 immutability not counted"; }
abs_day 3 --rule 'DELETE:*:403:AuthorizationPermissionMismatch:inf:This request is not authorized to perform this operation using this permission.'
[ $RC -ne 0 ] || { cat "$SNAP_WORK/run.log"; snap_fail "a permission error passed as immutability"; }
one_error_line "AuthorizationPermissionMismatch"
if grep -q 'still immutable' "$SNAP_WORK/run.log"; then snap_fail "403 logged as immutable"; fi
echo "ABS: the override wins over the Secret's domain; 409 immutable vs 403 permission"
echo "snapshot_endpoint_override: ok"
