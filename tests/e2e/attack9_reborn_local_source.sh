#!/usr/bin/env bash
# A namespace deleted and created again reads the earlier namespace's Local backups. Issue 29:
# a restore reads only backups its namespace owns, and a namespace created again is another
# owner (common/pborn: warden-webhook refuses an Etcd reattaching to such an entry). warden-webhook admits an
# EtcdRestore's Local source when a claim of the restore's namespace holds the directory, a
# BackupEntry of one of its Etcds included (docs/backup-entries.md, "Local stores"); an entry
# outlives its namespace (its bucket's grace period) and names it only by name.
#   1. BackupBucket local (Local, container bkt, hostPath /var/lib/lb, grace 1h) selecting
#      namespaces labelled etcd-warden.io/backups=local. Namespace shoot (labelled): Etcd
#      etcd-a, Local bkt/shoot--a/etcd; warden-controller makes its BackupEntry.
#   2. The label is taken off shoot and etcd-a deleted: the entry is PendingDeletion, and it is
#      shoot's only claim on /var/lib/lb/bkt/shoot--a/etcd.
#   3. Namespace shoot is deleted; someone allowed to create namespaces creates shoot again
#      (not labelled) and applies EtcdRestore r: source Local bkt/shoot--a/etcd, its own Secret
#      src at /var/lib/lb.
# Control: step 2's shoot (the namespace the entry was made for) has its EtcdRestore r0 from
# the same directory admitted, on the entry alone.
# Wanted: r refused at admission (an entry made before the namespace was created grants it
# nothing), the message naming no earlier owner. Oracle: the admission answer.
# Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

restore() { # ns name
    kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $2, namespace: $1}
spec:
  source: {store: {provider: Local, container: bkt, prefix: shoot--a/etcd, secretRef: {name: src}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-$2, store: {provider: Local, container: obkt, prefix: $1/$2, secretRef: {name: src}}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
kc create namespace shoot >/dev/null
kc label namespace shoot etcd-warden.io/backups=local >/dev/null
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket local"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: local}
spec:
  provider: Local
  container: bkt
  secretRef: {namespace: etcd-warden, name: local-bucket}
  deletionGracePeriod: 1h
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: local}}
EOF
local_host_path shoot etcd-backup /var/lib/lb
local_host_path shoot src /var/lib/lb
wh_register_backups
ctl_store_etcd shoot etcd-a Local bkt shoot--a/etcd
ctl_members shoot etcd-a
ctl_start
ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for shoot/etcd-a"
e_a=$(ctl_entry_of shoot etcd-a)
kc label namespace shoot etcd-warden.io/backups- >/dev/null
kc -n shoot delete etcd etcd-a >/dev/null
ksim_wait 20 ctl_entry_phase_is "$e_a" PendingDeletion || ctl_fail "$e_a: $(ctl_entry_phase "$e_a")"
ctl_stop # the entry stays PendingDeletion (1h grace); nothing else acts
ok "shoot/etcd-a deleted, its BackupEntry $e_a PendingDeletion"
wh_caught_up # the caches

out=$(restore shoot r0) || ctl_fail "shoot's restore from its own entry's directory refused: $out"
ok "control: shoot's EtcdRestore r0 from /var/lib/lb/bkt/shoot--a/etcd admitted on its entry $e_a"

kc delete namespace shoot --wait=false >/dev/null
ksim_wait 30 ksim_gone namespace shoot || ctl_fail "namespace shoot stays"
sleep 1.1 # creation times have seconds: the new namespace is created after the entry, visibly
kc create namespace shoot >/dev/null
local_host_path shoot src /var/lib/lb
kc get backupentry "$e_a" >/dev/null || ctl_fail "entry $e_a went with the namespace"
wh_caught_up # the caches
if out=$(restore shoot r); then
    ctl_fail "HOLE: EtcdRestore r of namespace shoot, created again after BackupEntry $e_a was made for the earlier shoot's etcd-a, admitted from Local /var/lib/lb/bkt/shoot--a/etcd: the earlier namespace's backups handed to the new owner"
fi
grep -q "namespace shoot does not own the Local directory \"/var/lib/lb/bkt/shoot--a/etcd\"" <<<"$out" ||
    ctl_fail "r's refusal: $out"
! grep -qE "etcd-a|$e_a" <<<"$out" || ctl_fail "the refusal names the earlier owner's claim: $out"
ok "the re-created shoot's restore refused: ${out:0:240}"
echo "attack9_reborn_local_source: ok"
