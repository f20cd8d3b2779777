#!/usr/bin/env bash
# The operator rotates the bucket's Secret to other credentials; the tenant's Secret keeps the
# old ones, and its sidecar writes with them wherever they open, not with the bucket's. What lands
# under the prefix in the operator's store after the rotation is not shown to be the tenant's:
# the release compares the Secrets again (controller/entries/bkeheld.h) and the deletion window
# ends at the last comparison that held. Oracle: s3rver's listing before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
tenant_holding
ctl_s3_bucket 10s
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
tenant_run "its Secret a copy of the bucket's"
k=$(printf %s S3RVER-ROTATED | base64 -w0)
kc -n etcd-warden patch secret s3-bucket --type merge \
    -p "{\"data\":{\"accessKeyID\":\"$k\",\"secretAccessKey\":\"$k\"}}" >/dev/null ||
    ctl_fail "cannot rotate the bucket's Secret"
echo "the bucket's Secret rotated; the tenant's keeps the old keys"
sleep 1
tenant_others_write
tenant_judge "the bucket's credentials were rotated before they were written" attack24_bucket_secret_rotated
