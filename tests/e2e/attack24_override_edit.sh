#!/usr/bin/env bash
# A tenant who may edit Etcds sets its Etcd's endpointOverride to its own service once the entry
# is made (a sidecar before v0.41 takes it before the Secret's endpoint): the store's key has no
# endpoint, so the entry stays the Etcd's, but what lands under the prefix in the operator's
# store from then on is another seed's cluster's. The comparison made again for the new
# generation (controller/entries/bkeheld.h) ends the deletion window at the last that held.
# Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
tenant_holding
ctl_s3_bucket 10s
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
tenant_run "its Secret a copy of the bucket's"
kc -n tenant patch etcd etcd-x --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"endpointOverride\":\"$TENANT_SERVICE\"}}}}" >/dev/null ||
    ctl_fail "cannot edit etcd-x's endpointOverride"
lost() { [ -n "$(kc get backupentry "$E" -o jsonpath='{.spec.credentialsLostAt}')" ]; }
ksim_wait 20 lost || ctl_fail "$E: no credentialsLostAt after the endpointOverride edit: $(kc get backupentry "$E" -o jsonpath='{.spec}')"
echo "etcd-x's endpointOverride now $TENANT_SERVICE"
sleep 1
tenant_others_write
tenant_judge "its endpointOverride named the tenant's own service when they were written" attack24_override_edit
