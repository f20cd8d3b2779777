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
TENANT_STORE=abs
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
kc -n etcd-warden create secret generic abs-bucket --from-literal=storageAccount="$SNAP_ABS_ACCOUNT" \
    --from-literal=storageKey="$SNAP_ABS_KEY" --from-literal=domain="127.0.0.1:$SNAP_ABS_PORT" \
    --from-literal=emulatorEnabled=true >/dev/null || ctl_fail "cannot create the bucket's Secret"
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
tenant_before
ctl_store_etcd tenant etcd-x ABS "$SNAP_BUCKET" "$TENANT_P"
tenant_run "its own storage account at the bucket's domain"
sleep 1
tenant_others_write
tenant_judge "its Secret names its own storage account: its sidecar wrote that account's container" attack22_abs_account
