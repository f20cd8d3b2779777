#!/usr/bin/env bash
# "An Etcd whose sidecar writes another service never gets an entry in the bucket"
# (docs/backup-entries.md, "Who may claim a prefix"): the endpoints compare, and one endpoint is
# taken for one store. An Azure Blob container belongs to a storage account: two accounts at
# one endpoint (the same domain; Azure's default one for every account) hold two different
# containers of one name. The operator's ABS bucket is its account's container; a tenant
# creates an ABS Etcd on that container name, on the prefix of a cluster that lives on another
# seed, with a Secret naming the same domain and its own storage account (its own key). Its
# member runs, writing its own account's container. Meanwhile the other seed's cluster backs
# up into that prefix of the operator's container. The tenant deletes its Etcd; past the grace
# period the entry's Job, with the operator's account key, deletes what the other seed wrote.
# Oracle: Azurite's listing of the operator's account's container before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--proj--victim--0c5a/etcd-main
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_abs_start
ctl_stage
wh_register_backups
kc -n etcd-warden create secret generic abs-bucket --from-literal=storageAccount="$SNAP_ABS_ACCOUNT" \
    --from-literal=storageKey="$SNAP_ABS_KEY" --from-literal=domain="127.0.0.1:$SNAP_ABS_PORT" \
    --from-literal=emulatorEnabled=true >/dev/null || ctl_fail "cannot create the bucket's Secret"
kc create namespace tenant >/dev/null || ctl_fail "cannot create namespace tenant"
# the tenant's own storage account at the same domain
kc -n tenant create secret generic etcd-backup --from-literal=storageAccount=tenantaccount \
    --from-literal=storageKey=VEVOQU5US0VZ --from-literal=domain="127.0.0.1:$SNAP_ABS_PORT" \
    --from-literal=emulatorEnabled=true >/dev/null ||
    ctl_fail "cannot create the tenant's Secret"
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: abs}
spec:
  provider: ABS
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: abs-bucket}
  deletionGracePeriod: 10s
EOF
snap_abs put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
sleep 1
ctl_store_etcd tenant etcd-x ABS "$SNAP_BUCKET" "$P"
ctl_members tenant etcd-x
ctl_jobs_serve etcd-warden
ctl_start
if ! ksim_wait 10 ctl_has_entry tenant etcd-x; then
    echo "held: tenant/etcd-x gets no entry in the operator's bucket: $(ctl_events tenant etcd-x | tail -2 | tr '\n' '|')"
    ctl_jobs_stop; ctl_stop; exit 0
fi
ctl_members_seen tenant etcd-x
E=$(ctl_entry_of tenant etcd-x)
echo "entry $E for tenant/etcd-x (its own storage account at the bucket's domain): store $(kc get backupentry "$E" -o jsonpath='{.spec.store}')"
sleep 1
snap_abs put "$P/v2/Full-00000000-00000200-1800000000.gz" "$SNAP_WORK/obj"
snap_abs put "$P/v2/Incr-00000201-00000300-1800000100.gz" "$SNAP_WORK/obj"
victim_keys=$(snap_abs ls "$P/" | sort)
echo "the other seed's snapshots in the operator's container: $(echo $victim_keys)"

kc -n tenant delete pod etcd-x-0 --grace-period=0 >/dev/null 2>&1
kc -n tenant delete statefulset etcd-x >/dev/null 2>&1
kc -n tenant delete etcd etcd-x >/dev/null || ctl_fail "cannot delete etcd-x"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
ksim_wait 40 ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(kc get backupentry "$E" -o jsonpath='{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_abs ls "$P/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$victim_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the entry of tenant/etcd-x (its Secret names its own storage account: its sidecar wrote that account's container) deleted $(echo $lost) from the operator's container, another seed's cluster's snapshots"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack22_abs_account: ok"
