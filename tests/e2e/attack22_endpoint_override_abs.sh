#!/usr/bin/env bash
# "An Etcd whose sidecar writes another service never gets an entry in the bucket"
# (docs/backup-entries.md, "Who may claim a prefix"): the endpoints compared are those of "the
# object stores whose client takes its endpoint from the Secret (S3, ECS and OCS ...; Swift
# ...; OSS ...; GCS ...)": ABS is not among them, yet "ABS ... take[s] the Secret's when there
# is no override", so an ABS sidecar writes to spec.backup.store.endpointOverride. A tenant
# creates an ABS Etcd on the operator's container (one store whatever the provider), on the
# prefix of a cluster that lives on another seed, its endpointOverride naming its own service.
# Its member runs, writing there. Meanwhile the other seed's cluster backs up into that prefix
# of the operator's store. The tenant deletes its Etcd; past the grace period the entry's Job
# deletes what the other seed wrote meanwhile.
# Oracle: s3rver's (the operator's store) listing before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
# the tenant's Azure keys; its endpointOverride names its own service (an Azurite of its own)
kc -n tenant create secret generic etcd-backup --from-literal=storageAccount=tenant \
    --from-literal=storageKey=VEVOQU5U >/dev/null ||
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
  backup: {port: 8080, store: {provider: ABS, container: $SNAP_BUCKET, prefix: "$TENANT_P", endpointOverride: "http://azurite.tenant.example:10000", secretRef: {name: etcd-backup}}}
EOF
tenant_run "provider ABS, endpointOverride http://azurite.tenant.example:10000"
sleep 1
tenant_others_write
tenant_judge "an ABS Etcd whose endpointOverride names its own service, where its sidecar writes" attack22_endpoint_override_abs
