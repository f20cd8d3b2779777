#!/usr/bin/env bash
# A tenant who may edit Etcds (and not read Secrets) points its Etcd's secretRef at a Secret of
# its own once the entry is made: from then on its sidecar writes the tenant's service, and what
# lands under the prefix in the operator's store is another seed's cluster's. warden-controller
# compares the credentials again for the Etcd's new generation (controller/entries/bkeheld.h):
# the entry's deletion window ends at the last comparison that held, and the Etcd gets a Warning
# event NotAuthorised. Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
tenant_holding
tenant_own_secret etcd-own
ctl_s3_bucket 10s
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
tenant_run "its Secret a copy of the bucket's"
kc -n tenant patch etcd etcd-x --type merge \
    -p '{"spec":{"backup":{"store":{"secretRef":{"name":"etcd-own"}}}}}' >/dev/null ||
    ctl_fail "cannot edit etcd-x's secretRef"
lost() { [ -n "$(kc get backupentry "$E" -o jsonpath='{.spec.credentialsLostAt}')" ]; }
ksim_wait 20 lost || ctl_fail "$E: no credentialsLostAt after the secretRef edit: $(kc get backupentry "$E" -o jsonpath='{.spec}')"
ctl_events tenant etcd-x | grep -q '^Warning NotAuthorised: ' ||
    ctl_fail "no NotAuthorised event on tenant/etcd-x: $(ctl_events tenant etcd-x | tail -3)"
echo "etcd-x's secretRef now names etcd-own: $(kc get backupentry "$E" -o jsonpath='{.spec.credentialsLostAt}')"
sleep 1 # object times have seconds: written after the edit
tenant_others_write
tenant_judge "its secretRef named the tenant's own Secret when they were written" attack24_secretref_edit
