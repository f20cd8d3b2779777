#!/usr/bin/env bash
# A Local directory an Etcd leaves (it moves to another prefix, or it is deleted) stays its
# namespace's by a BackupEntry only etcd-warden writes, not only for the two minutes the
# admission Lease (common/pclaim) remembers the Etcd's claim. Issue 29: no backup is handed to
# another tenant. docs/backup-entries.md (Stores no BackupBucket owns): a Local store's
# directory gets an entry of no bucket, annotated with the hostPath, which stays until the
# operator deletes it; "another namespace's Etcd, EtcdBackup or EtcdRestore there is refused at
# admission, while the namespace's own Etcd of that name may be created on it again".
#   No BackupBucket. Namespace shoot, Secret etcd-backup at hostPath /var/lib/lb:
#   M. Etcd etcd-m at bkt/shoot--m/etcd moves to bkt/shoot--m/etcd2;
#   D. Etcd etcd-d at bkt/shoot--d/etcd is deleted.
#   After each, the claim Leases are deleted (as their records lapse after PCLAIM_TTL_S), and
#   namespace other (Secret at /var/lib/lb too) tries an Etcd and an EtcdRestore source on the
#   directory left behind.
# Control: shoot's own EtcdRestore from each directory left behind is admitted (the entry
# grants it), and shoot's Etcd etcd-d created again on its directory is admitted (reattached).
# Oracle: other's Etcd and EtcdRestore refused at admission. Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
etcd() { local_etcd "$1" "$2" bkt "$3" etcd-backup; } # ns name prefix
restore() { # ns name source-prefix
    kc apply --dry-run=server -f - <<EOF2
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $2, namespace: $1}
spec:
  source: {store: {provider: Local, container: bkt, prefix: $3, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-$2, store: {provider: Local, container: obkt, prefix: $1/$2, secretRef: {name: etcd-backup}}}
EOF2
}
# the entry keeping directory $1 (under /var/lib/lb/bkt) for shoot, once made
kept() {
    kc get backupentries -o json | jq -e --arg p "$1" '[.items[] | select(.spec.prefix == $p
        and .spec.etcd.namespace == "shoot" and .spec.bucketName == ""
        and .metadata.annotations["etcd-warden.io/local-host-path"] == "/var/lib/lb")] | length > 0' >/dev/null
}
forget_leases() {
    kc get leases -A -o json |
        jq -r '.items[] | select(.metadata.name | startswith("etcd-warden-claims-")) | "\(.metadata.namespace) \(.metadata.name)"' |
        while read -r ns name; do kc -n "$ns" delete lease "$name" >/dev/null; done
}

mkdir -p "$NODE/var/lib/lb/bkt" "$NODE/var/lib/lb/obkt"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
local_host_path shoot etcd-backup /var/lib/lb
local_host_path other etcd-backup /var/lib/lb
wh_register_backups
ctl_start

out=$(etcd shoot etcd-m shoot--m/etcd 2>&1) || ctl_fail "shoot/etcd-m refused: $out"
out=$(etcd shoot etcd-d shoot--d/etcd 2>&1) || ctl_fail "shoot/etcd-d refused: $out"
# (the mechanism; the oracle below is what counts)
ksim_wait 30 kept shoot--d/etcd && ok "live Local Etcds' directories have entries of no bucket" ||
    echo "note: no entry for shoot/etcd-d's directory"

out=$(etcd shoot etcd-m shoot--m/etcd2 2>&1) || ctl_fail "shoot's move of etcd-m refused: $out"
kc -n shoot delete etcd etcd-d --wait=false >/dev/null
ksim_wait 30 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get etcd etcd-d >/dev/null 2>&1" ||
    ctl_fail "etcd-d not deleted"
ksim_wait 10 kept shoot--m/etcd || echo "note: no entry keeps etcd-m's earlier directory"
ksim_wait 30 bash -c "kubectl --kubeconfig '$KUBECONFIG' get backupentries -o json | jq -e '[.items[] | select(.spec.prefix == \"shoot--d/etcd\" and .spec.etcdDeletedAt != null)] | length > 0' >/dev/null" ||
    echo "note: no released entry keeps etcd-d's directory"
forget_leases
wh_caught_up # the caches

holes=0
for c in M:shoot--m/etcd D:shoot--d/etcd; do
    case=${c%%:*} dir=${c#*:}
    if out=$(etcd other "etcd-x${case,,}" "$dir" 2>&1); then
        echo "HOLE: $case: other's Etcd admitted on shoot's directory /var/lib/lb/bkt/$dir, left behind: $out"
        holes=$((holes + 1))
    else echo "held: $case: other's Etcd refused: ${out:0:200}"; fi
    if out=$(restore other "r${case,,}" "$dir" 2>&1); then
        echo "HOLE: $case: other's EtcdRestore from shoot's directory /var/lib/lb/bkt/$dir admitted: $out"
        holes=$((holes + 1))
    else echo "held: $case: other's EtcdRestore refused: ${out:0:200}"; fi
    out=$(restore shoot "r${case,,}" "$dir" 2>&1) || ctl_fail "control: $case: shoot's own restore from its directory refused: $out"
    ok "control: $case: shoot's own restore from /var/lib/lb/bkt/$dir admitted"
done
out=$(etcd shoot etcd-d shoot--d/etcd 2>&1) || ctl_fail "control: shoot's etcd-d created again on its directory refused: $out"
ok "control: shoot's etcd-d created again on its directory"
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a Local directory left behind handed to another namespace"; exit 1; }
echo "attack10_local_dir_kept: ok"
