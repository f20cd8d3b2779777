#!/usr/bin/env bash
# "An Etcd whose sidecar writes another service never gets an entry in the bucket"
# (docs/backup-entries.md, "Who may claim a prefix"): the Etcd's endpoint is read from "its
# backup Secret (else its spec.backup.store.endpointOverride)". docs/backup-entries.md ("One
# prefix, one cluster"): "etcd-backup-restore v0.28.4 has no --store-endpoint-override ...; from
# v0.41 the Secret's endpoint wins over endpointOverride for S3": in between (the members here
# run etcdbrctl v0.34.0) the override wins. A tenant creates an S3 Etcd on the operator's
# container, on the prefix of a cluster that lives on another seed, its Secret spelling the
# operator's endpoint and its endpointOverride its own service. Its member runs, writing its
# own service. Meanwhile the other seed's cluster backs up into that prefix of the operator's
# store. The tenant deletes its Etcd; past the grace period the entry's Job deletes what the
# other seed wrote meanwhile. Oracle: s3rver's (the operator's store) listing before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
# the tenant's Secret names the operator's endpoint; its endpointOverride names its own service
kc -n tenant create secret generic etcd-backup --from-literal=accessKeyID=AKIATENANT \
    --from-literal=secretAccessKey=TENANT --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null ||
    ctl_fail "cannot create the tenant's Secret"
ctl_s3_bucket 10s
tenant_before
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply Etcd tenant/etcd-x"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-x, namespace: tenant}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: aws, container: $SNAP_BUCKET, prefix: "$TENANT_P", endpointOverride: "http://minio.tenant.example:9000", secretRef: {name: etcd-backup}}}
EOF
tenant_run "provider aws, endpointOverride http://minio.tenant.example:9000"
sleep 1
tenant_others_write
tenant_judge "an S3 Etcd whose endpointOverride names its own service, where its v0.34 sidecar writes; only its Secret spells the operator's endpoint" attack22_endpoint_override_s3
