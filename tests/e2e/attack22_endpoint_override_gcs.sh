#!/usr/bin/env bash
# "An Etcd whose sidecar writes another service never gets an entry in the bucket"
# (docs/backup-entries.md, "Who may claim a prefix"): the Etcd's endpoint is read from "its
# backup Secret (else its spec.backup.store.endpointOverride)", GCS's key storageAPIEndpoint;
# but "ABS and GCS take the Secret's when there is no override" (docs/backup-entries.md, "One
# prefix, one cluster"): with an override, a GCS sidecar writes to the override. A tenant
# creates a GCS Etcd on the operator's container, on the prefix of a cluster that lives on
# another seed, its Secret's storageAPIEndpoint spelling the operator's endpoint and its
# endpointOverride its own service. Its member runs, writing its own service. Meanwhile the
# other seed's cluster backs up into that prefix of the operator's store. The tenant deletes
# its Etcd; past the grace period the entry's Job deletes what the other seed wrote meanwhile.
# Oracle: s3rver's (the operator's store) listing before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--proj--victim--0c5a/etcd-main
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
wh_register_backups
ctl_s3_bucket_secret
kc create namespace tenant >/dev/null || ctl_fail "cannot create namespace tenant"
# the tenant's Secret names the operator's endpoint; its endpointOverride names its own service
kc -n tenant create secret generic etcd-backup --from-literal=serviceaccount.json='{"type":"service_account"}' \
    --from-literal=storageAPIEndpoint="$SNAP_S3_URL" >/dev/null ||
    ctl_fail "cannot create the tenant's Secret"
ctl_s3_bucket 10s
snap_s3 put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
sleep 1
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply Etcd tenant/etcd-x"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-x, namespace: tenant}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: gcp, container: $SNAP_BUCKET, prefix: "$P", endpointOverride: "https://storage.tenant.example/storage/v1/", secretRef: {name: etcd-backup}}}
EOF
ctl_members tenant etcd-x
ctl_jobs_serve etcd-warden
ctl_start
if ! ksim_wait 10 ctl_has_entry tenant etcd-x; then
    echo "held: tenant/etcd-x gets no entry in the operator's bucket: $(ctl_events tenant etcd-x | tail -2 | tr '\n' '|')"
    ctl_jobs_stop; ctl_stop; exit 0
fi
ctl_members_seen tenant etcd-x
E=$(ctl_entry_of tenant etcd-x)
echo "entry $E for tenant/etcd-x (provider gcp, endpointOverride https://storage.tenant.example/storage/v1/): store $(kc get backupentry "$E" -o jsonpath='{.spec.store}')"
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000200-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000201-00000300-1800000100.gz" "$SNAP_WORK/obj"
victim_keys=$(snap_s3 ls "$P/" | sort)
echo "the other seed's snapshots in the operator's store: $(echo $victim_keys)"

kc -n tenant delete pod etcd-x-0 --grace-period=0 >/dev/null 2>&1
kc -n tenant delete statefulset etcd-x >/dev/null 2>&1
kc -n tenant delete etcd etcd-x >/dev/null || ctl_fail "cannot delete etcd-x"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
ksim_wait 40 ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(kc get backupentry "$E" -o jsonpath='{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_s3 ls "$P/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$victim_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the entry of tenant/etcd-x (a GCS Etcd whose endpointOverride names its own service, where its sidecar writes; only its Secret spells the operator's endpoint) deleted $(echo $lost) from the operator's store, another seed's cluster's snapshots"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack22_endpoint_override_gcs: ok"
