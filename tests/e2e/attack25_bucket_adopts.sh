#!/usr/bin/env bash
# docs/backup-entries.md, "Stores no BackupBucket owns": an Etcd whose store no bucket owns gets
# an entry without a bucket ("It needs credentials as every entry (its secretRef names a Secret
# of its namespace)"); "A BackupBucket made later for the store adopts the entry of a live Etcd
# (event Adopted; from then on it is the bucket's, with its grace period and its deletion
# rules)". The credentials rule: "An Etcd gets an entry in a bucket only when its credentials
# are the bucket's". tenant's etcd-x names the operator's container but its Secret is the
# tenant's own (its own keys and service): its sidecar never writes the operator's store. It
# gets a bucketless entry, its member runs; another seed's cluster writes into the prefix of the
# operator's store; then the operator creates the BackupBucket for the container. etcd-x is
# deleted: past the grace period, with the operator's credentials, nothing of the other seed's
# may go. Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
tenant_own_secret etcd-backup
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
ctl_members tenant etcd-x
ctl_jobs_serve etcd-warden
ctl_start
if ! ksim_wait 20 ctl_has_entry tenant etcd-x; then
    echo "held: no bucketless entry for etcd-x: $(ctl_events tenant etcd-x | tail -2 | tr '\n' '|')"; ctl_jobs_stop; ctl_stop; exit 0
fi
E=$(ctl_entry_of tenant etcd-x)
sleep 6
echo "bucketless entry $E: $(kc get backupentry "$E" -o jsonpath='{.spec}' | cut -c1-600)"
sleep 1
tenant_others_write
sleep 1
ctl_s3_bucket 10s
adopted() { [ "$(kc get backupentry "$E" -o jsonpath='{.spec.bucketName}')" = s3 ]; }
if ksim_wait 20 adopted; then
    echo "adopted: $(kc get backupentry "$E" -o jsonpath='{.spec}' | cut -c1-700)"
else
    echo "not adopted: $(kc get backupentry "$E" -o jsonpath='{.spec}' | cut -c1-400)"
fi
echo "events of etcd-x: $(ctl_events tenant etcd-x | tail -3 | tr '\n' '|' | cut -c1-500)"
tenant_judge "its Secret, the tenant's own, never opened the operator's store" attack25_bucket_adopts
