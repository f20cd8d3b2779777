#!/usr/bin/env bash
# The credentials rule holds for the whole deletion window, not only when the entry is made
# (controller/entries/bkeheld.h). A tenant's Etcd on the prefix of a cluster that lives on
# another seed, its Secret a copy of the bucket's: it gets an entry, its member runs. Then the
# tenant points its Secret at its own service (no Etcd request shows it; Secrets are not
# watched), the other seed's cluster writes on into the operator's store, and the tenant deletes
# its Etcd: past the grace period the entry's Job must not delete what the other seed wrote
# after the Secret stopped holding the bucket's credentials.
# Oracle: s3rver's (the operator's store) listing before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
tenant_holding
ctl_s3_bucket 10s
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
tenant_run "its Secret a copy of the bucket's"
ep=$(printf %s "$TENANT_SERVICE" | base64 -w0)
kc -n tenant patch secret etcd-backup --type merge -p "{\"data\":{\"endpoint\":\"$ep\"}}" >/dev/null ||
    ctl_fail "cannot edit the tenant's Secret"
echo "tenant's Secret now names $TENANT_SERVICE"
sleep 1 # object times have seconds: written after the edit
tenant_others_write
tenant_judge "its Secret named the tenant's own service when they were written" attack24_secret_content_edit
