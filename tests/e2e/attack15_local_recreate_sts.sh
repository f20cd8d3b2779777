#!/usr/bin/env bash
# etcd-druid's StatefulSet of a Local Etcd created again within its entry's grace period, while
# warden-controller is down (an upgrade, a node drain), on kube-sim with warden-webhook
# (--backup-entries --local-volume-guard, the StatefulSets routed to it as ctl_stage registers
# etcd-druid's webhooks). This round's item 5 ("wrongly refuse ... etcd-druid").
# docs/backup-entries.md: "An Etcd created again with the same namespace, name and store within
# that period reattaches to its entry ... its snapshots are where it left them";
# docs/protection.md (A Local backup directory ...): a StatefulSet's local-backup directory must
# not overlap "another claim: another Etcd ..., a BackupEntry of another Etcd (or of this one
# being deleted)".
#   D1. Local bucket local (container bkt, hostPath /var/lib/lb, prefixScope Bucket) selecting
#       shoot. Etcd shoot/etcd-a at bkt/shoot/etcd-a gets its entry (warden-controller running),
#       then warden-controller stops. The Etcd is deleted and applied again (same namespace,
#       name, store); etcd-druid creates its StatefulSet (local-backup /var/lib/lb/bkt).
#   D0. control: Etcd shoot/etcd-b, never deleted, and its StatefulSet: admitted.
# Oracle: what kube-sim stores: the re-created Etcd's StatefulSet (etcd-druid's CREATE admitted
# or not) while its only overlapping claim is its own entry.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

help=$("$(_wh_binary)" --help 2>&1 || true)
guard=""
case $help in *--local-volume-guard*) guard=--local-volume-guard ;; esac
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups $guard" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
kc create namespace shoot >/dev/null
kc label namespace shoot etcd-warden.io/backups=local >/dev/null
local_host_path shoot etcd-backup /var/lib/lb
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket local"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: local}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: local-bucket}
  deletionGracePeriod: 1h
  prefixScope: Bucket
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: local}}
EOF
wh_register_backups
part_known() { ! local_etcd other probe bkt x/probe etcd-backup --dry-run=server >/dev/null 2>&1; } # namespace other is not selected
ksim_wait 30 part_known || ctl_fail "the webhook's caches never held BackupBucket local"
sts() { # name: etcd-druid's StatefulSet of Local Etcd shoot/NAME
    kc_druid -n shoot create -f - <<EOF
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: $1
  labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $1}
spec:
  replicas: 1
  serviceName: $1-peer
  selector: {matchLabels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $1}}
  template:
    metadata: {labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: $1}}
    spec:
      containers:
      - {name: etcd, image: etcd-wrapper, volumeMounts: [{name: $1, mountPath: /var/etcd/data}]}
      - name: backup-restore
        image: etcdbrctl
        args: [server, --server-port=8080, --storage-provider=Local, --store-prefix=shoot/$1]
        env: [{name: STORAGE_CONTAINER, value: bkt}]
        volumeMounts: [{name: $1, mountPath: /var/etcd/data}, {name: etcd-config-file, mountPath: /var/etcd/config/}, {name: local-backup, mountPath: /home/nonroot/bkt}]
      volumes:
      - {name: etcd-config-file, configMap: {name: $1-config, defaultMode: 420, items: [{key: etcd.conf.yaml, path: etcd.conf.yaml}]}}
      - {name: local-backup, hostPath: {path: /var/lib/lb/bkt, type: DirectoryOrCreate}}
  volumeClaimTemplates:
  - metadata: {name: $1}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
EOF
}
for e in etcd-a etcd-b; do
    out=$(local_etcd shoot $e bkt shoot/$e etcd-backup 2>&1) || ctl_fail "shoot/$e refused: $out"
done
wh_caught_up
for e in etcd-a etcd-b; do
    out=$(sts $e 2>&1) || ctl_fail "control: etcd-druid's first StatefulSet of shoot/$e refused: $out"
done
ok "control: etcd-druid's StatefulSets of shoot/etcd-a and shoot/etcd-b admitted"
ctl_start
ksim_wait 30 ctl_has_entry shoot etcd-a || ctl_fail "no BackupEntry for shoot/etcd-a"
ksim_wait 30 ctl_has_entry shoot etcd-b || ctl_fail "no BackupEntry for shoot/etcd-b"
ENTRY=$(ctl_entry_of shoot etcd-a)
ctl_stop
echo "entry $ENTRY of shoot/etcd-a made; warden-controller stopped"

kc -n shoot delete etcd etcd-a --wait=false >/dev/null || ctl_fail "cannot delete shoot/etcd-a"
ksim_wait 30 ksim_gone -n shoot etcd etcd-a || ctl_fail "shoot/etcd-a not gone"
ksim_wait 30 ksim_gone -n shoot sts etcd-a || ctl_fail "the garbage collector left the StatefulSet of etcd-a"
wh_caught_up
out=$(local_etcd shoot etcd-a bkt shoot/etcd-a etcd-backup 2>&1) || ctl_fail "D1: the re-created shoot/etcd-a refused: $out"
echo "D1: shoot/etcd-a applied again: $(tr '\n' ' ' <<<"$out" | head -c 200); entry $ENTRY: $(kc get backupentry "$ENTRY" -o jsonpath='{.status.phase} uid {.spec.etcd.uid}')"
wh_caught_up
WH_AS_NS=shoot wh_as alice annotate etcd etcd-b druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection of etcd-b"
wh_caught_up
kc_as gc-token -n shoot delete sts etcd-b --cascade=orphan >/dev/null || ctl_fail "cannot delete the StatefulSet of etcd-b"
out0=$(sts etcd-b 2>&1) || ctl_fail "control: D0: etcd-druid's StatefulSet of shoot/etcd-b created again refused: $out0"
ok "control: D0: etcd-druid's StatefulSet of live shoot/etcd-b (its own entry) admitted"
if ! out=$(sts etcd-a 2>&1); then
    # the API server may still answer at once once its own entry is recognised: retry a few times
    # (etcd-druid requeues) before calling it a refusal
    ksim_wait 20 sts etcd-a >/dev/null 2>&1 ||
    { echo "HOLE: D1: etcd-druid's StatefulSet of shoot/etcd-a, re-created within its entry's grace period onto its own directory (its only overlapping claim its own entry $ENTRY), refused while warden-controller is down: $(tr '\n' ' ' <<<"$out" | head -c 500)"
      echo "FAIL: 1 hole(s): a re-created Local Etcd cannot start while warden-controller is down"
      exit 1; }
fi
echo "held: D1: etcd-druid's StatefulSet of the re-created shoot/etcd-a admitted"
echo "attack15_local_recreate_sts: ok"
