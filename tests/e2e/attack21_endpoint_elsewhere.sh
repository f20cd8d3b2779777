#!/usr/bin/env bash
# "A claim needs the bucket owner's authority and evidence of a writer, and a deletion deletes
# only what its owner wrote" (docs/backup-entries.md, "Who may claim a prefix"); "an Etcd gets
# an entry only when spec.backup.store.secretRef names a Secret that exists in its namespace";
# stores compare by provider and container, "the endpoint is not compared". A tenant (namespace
# edit rights, no credentials for the operator's bucket) creates an Etcd on the operator's
# container, on the prefix of a cluster that lives on another seed (unclaimed here), with a
# Secret whose endpoint is the tenant's own object store. Its member runs; its sidecar writes
# into the tenant's store. Meanwhile the other seed's cluster goes on backing up into that
# prefix of the operator's bucket. The tenant deletes its Etcd; past the grace period the
# entry's Job, with the operator's credentials, deletes the other seed's snapshots written
# while the tenant's Etcd existed. Oracle: s3rver's (the operator's store) listing before and
# after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
# the tenant's own store: not the operator's s3rver
kc -n tenant create secret generic etcd-backup --from-literal=accessKeyID=TENANT \
    --from-literal=secretAccessKey=TENANT --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint=http://minio.tenant.example:9000 >/dev/null ||
    ctl_fail "cannot create the tenant's Secret"
ctl_s3_bucket 10s
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
tenant_run "its Secret's endpoint"
sleep 1
tenant_others_write
tenant_judge "whose Secret opens another store: it never wrote the operator's bucket" attack21_endpoint_elsewhere
