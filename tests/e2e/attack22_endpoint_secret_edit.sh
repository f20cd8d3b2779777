#!/usr/bin/env bash
# "An Etcd whose sidecar writes another service never gets an entry in the bucket"
# (docs/backup-entries.md, "Who may claim a prefix"): the Etcd's backup Secret is read "when the
# entry would be made"; the tenant edits its Secret whenever it likes, and no Etcd request
# shows the edit. A tenant creates an Etcd on the operator's container, on the prefix of a
# cluster that lives on another seed, its Secret naming the operator's endpoint: it gets an
# entry, its member runs. Then it points its Secret at its own service (and its members,
# restarted, write there). Meanwhile the other seed's cluster backs up into that prefix of the
# operator's store. The tenant deletes its Etcd; past the grace period the entry's Job deletes
# what the other seed wrote while the tenant's Secret named another service.
# Oracle: s3rver's (the operator's store) listing before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
# first the operator's endpoint
kc -n tenant create secret generic etcd-backup --from-literal=accessKeyID=AKIATENANT \
    --from-literal=secretAccessKey=TENANT --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null ||
    ctl_fail "cannot create the tenant's Secret"
ctl_s3_bucket 10s
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
tenant_run "Secret naming the operator's endpoint"
ep=$(printf %s http://minio.tenant.example:9000 | base64 -w0)
kc -n tenant patch secret etcd-backup --type merge -p "{\"data\":{\"endpoint\":\"$ep\"}}" >/dev/null ||
    ctl_fail "cannot edit the tenant's Secret"
kc -n tenant delete pod etcd-x-0 --grace-period=0 >/dev/null 2>&1
ctl_members tenant etcd-x
echo "tenant's Secret now names http://minio.tenant.example:9000; its member restarted"
sleep 2
tenant_others_write
tenant_judge "its Secret named the tenant's own service from before they were written until the end" attack22_endpoint_secret_edit
