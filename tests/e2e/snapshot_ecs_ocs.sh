#!/usr/bin/env bash
# warden-snapshot on the generic S3 stores against s3rver: OCS (`openshift`) with its
# credentials as etcd-backup-restore reads them (a directory, then a JSON file; an
# endpoint without a scheme and disableSSL=true means http://) and ECS (`dell`) from its
# environment variables (region US-Standard). Both are path-style: s3rver is reached at
# 127.0.0.1, where a virtual-hosted bucket name could not resolve. list against a seeded
# history, extend over simulated days in server and stream mode.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"

snap_s3_start
unset AWS_APPLICATION_CREDENTIALS AWS_APPLICATION_CREDENTIALS_JSON AWS_ACCESS_KEY_ID \
    AWS_SECRET_ACCESS_KEY AWS_REGION OPENSHIFT_APPLICATION_CREDENTIALS_JSON OCS_ENDPOINT
s3_put() { snap_s3 put "$1" "$2"; }
s3_get() { snap_s3 get "$1"; }
s3_ls() { snap_s3 ls "$1"; }
STORE_GET=s3_get STORE_LS=s3_ls
snap_history s3_put

# OCS: the credential directory.
d=$SNAP_WORK/ocs
mkdir -p "$d"
printf 'S3RVER' >"$d/accessKeyID"
printf 'S3RVER' >"$d/secretAccessKey"
printf 'us-east-1' >"$d/region"
printf '127.0.0.1:%s' "$SNAP_S3_PORT" >"$d/endpoint"
printf 'true\n' >"$d/disableSSL"
export OPENSHIFT_APPLICATION_CREDENTIALS=$d
flags=(--storage-provider openshift --store-container "$SNAP_BUCKET")
snap_check_list "${flags[@]}"
SNAP_MODES="server stream" SNAP_EXTRA_FLAGS="--part-size 5242880" snap_days "${flags[@]}"

# OCS: the JSON file wins over the directory (made unusable here).
printf 'https://127.0.0.1:1' >"$d/endpoint"
cat >"$SNAP_WORK/ocs.json" <<JSON
{"endpoint":"http://127.0.0.1:$SNAP_S3_PORT","region":"us-east-1","accessKeyID":"S3RVER",
 "secretAccessKey":"S3RVER","disableSSL":false,"insecureSkipVerify":false}
JSON
OPENSHIFT_APPLICATION_CREDENTIALS_JSON=$SNAP_WORK/ocs.json \
    snap_run list --storage-provider OCS --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX" |
    snap_has "^$SNAP_FINAL " || snap_fail "OCS JSON credentials not used"
# A missing field is refused with one clear line naming it.
rm "$d/region"
if snap_run list "${flags[@]}" --store-prefix "$SNAP_PREFIX" 2>"$SNAP_WORK/ocs.log"; then
    snap_fail "OCS credentials without region accepted"
fi
grep '"level":"error"' "$SNAP_WORK/ocs.log" | snap_has 'region' || { cat "$SNAP_WORK/ocs.log"; snap_fail "unclear OCS refusal"; }
unset OPENSHIFT_APPLICATION_CREDENTIALS

# ECS: environment variables only; an endpoint without a scheme, SSL disabled.
export ECS_ENDPOINT=127.0.0.1:$SNAP_S3_PORT ECS_ACCESS_KEY_ID=S3RVER ECS_SECRET_ACCESS_KEY=S3RVER ECS_DISABLE_SSL=true
flags=(--storage-provider ECS --store-container "$SNAP_BUCKET")
snap_run list "${flags[@]}" --store-prefix "$SNAP_PREFIX" | snap_has "^$SNAP_FINAL " || snap_fail "ECS list"
now=$((1700000000 + 3 * SNAP_DAY))
WARDEN_SNAPSHOT_NOW=$now snap_run extend-snapshot-immutability --storage-provider dell \
    --store-container "$SNAP_BUCKET" --store-prefix "$SNAP_PREFIX" --gc-from-timestamp "$SNAP_GC_FROM" \
    --copy-mode stream 2>"$SNAP_WORK/ecs.log" || { cat "$SNAP_WORK/ecs.log"; snap_fail "ECS extend failed"; }
snap_check_day "$now" "$((1700000000 + 2 * SNAP_DAY))"
unset ECS_SECRET_ACCESS_KEY
if snap_run list "${flags[@]}" --store-prefix "$SNAP_PREFIX" 2>"$SNAP_WORK/ecs.log"; then
    snap_fail "ECS without a secret key accepted"
fi
grep '"level":"error"' "$SNAP_WORK/ecs.log" | snap_has 'ECS_SECRET_ACCESS_KEY is not set' || { cat "$SNAP_WORK/ecs.log"; snap_fail "unclear ECS refusal"; }
echo "snapshot_ecs_ocs: ok"
