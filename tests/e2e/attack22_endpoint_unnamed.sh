#!/usr/bin/env bash
# "An Etcd whose sidecar writes another service never gets an entry in the bucket"
# (docs/backup-entries.md, "Who may claim a prefix"): "when either names none, both are taken
# for one service". A tenant's S3 Secret that names no endpoint sends its sidecar to AWS's
# default endpoint, not to the operator's store (the bucket's Secret names its own endpoint,
# an S3-compatible service). The tenant creates an Etcd on the operator's container, on the
# prefix of a cluster that lives on another seed, with such a Secret (its own AWS keys). Its
# member runs, writing to AWS. Meanwhile the other seed's cluster backs up into that prefix of
# the operator's store. The tenant deletes its Etcd; past the grace period the entry's Job,
# with the operator's credentials, deletes what the other seed wrote meanwhile.
# Oracle: s3rver's (the operator's store) listing before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
# the tenant's own AWS keys, no endpoint: the sidecar goes to AWS, not to the operator's store
kc -n tenant create secret generic etcd-backup --from-literal=accessKeyID=AKIATENANT \
    --from-literal=secretAccessKey=TENANT --from-literal=region=eu-west-1 >/dev/null ||
    ctl_fail "cannot create the tenant's Secret"
ctl_s3_bucket 10s
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
tenant_run "Secret without endpoint"
sleep 1
tenant_others_write
tenant_judge "its S3 Secret names no endpoint: its sidecar wrote AWS, not the operator's store at $SNAP_S3_URL" attack22_endpoint_unnamed
