#!/usr/bin/env bash
# docs/backup-entries.md, "The credentials held the whole time": the comparison is made again
# "when the entry is released"; "An Etcd deleted together with its Secret ... keeps what it wrote
# after the last comparison". tenant's etcd-x holds the bucket's credentials and gets an entry;
# then tenant points its Secret at its own service (Secrets are not watched), the other seed's
# cluster writes on into the operator's store, and tenant deletes the Secret first and the Etcd
# right after (as a namespace deletion would): with no Secret left to compare at the release,
# the entry's deletion must still keep what was written after the last comparison that held.
# Oracle: s3rver's listing of the prefix before and after.
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
sleep 1
tenant_others_write
kc -n tenant delete secret etcd-backup >/dev/null || ctl_fail "cannot delete the tenant's Secret"
echo "tenant's Secret deleted before its Etcd"
tenant_judge "its Secret named the tenant's own service when they were written, then was deleted" attack25_secret_gone_first
