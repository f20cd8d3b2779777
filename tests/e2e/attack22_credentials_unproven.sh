#!/usr/bin/env bash
# "A claim needs the bucket owner's authority and evidence of a writer" (docs/backup-entries.md,
# "Who may claim a prefix"): "an Etcd gets an entry only when spec.backup.store.secretRef names
# a Secret that exists in its namespace", and since this release only when that Secret names the
# bucket's endpoint. Neither shows that the Secret opens the bucket. A tenant (selected, with no
# access to the operator's store) creates an Etcd on the operator's container, on the prefix of
# a cluster that lives on another seed, with a Secret naming the operator's endpoint and keys
# of its own invention: its sidecar's uploads are refused, it writes nothing. Its member runs.
# Meanwhile the other seed's cluster backs up into that prefix. The tenant deletes its Etcd;
# past the grace period the entry's Job, with the operator's credentials, deletes what the other
# seed wrote meanwhile. Oracle: s3rver's (the operator's store) listing before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
# the operator's endpoint, keys the store does not know
kc -n tenant create secret generic etcd-backup --from-literal=accessKeyID=AKIAINVENTED \
    --from-literal=secretAccessKey=INVENTED --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null ||
    ctl_fail "cannot create the tenant's Secret"
ctl_s3_bucket 10s
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
tenant_run "the operator's endpoint, invented keys"
sleep 1
tenant_others_write
tenant_judge "its Secret's keys open nothing in the operator's store: its sidecar wrote nothing there" attack22_credentials_unproven
