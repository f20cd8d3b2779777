#!/usr/bin/env bash
# A Local directory an Etcd leaves while warden-controller is not running (an upgrade, a node
# drain) is handed to another namespace. Issue 29: no backup is handed to another tenant.
# docs/backup-entries.md (Stores no BackupBucket owns): "An Etcd whose Secret now places it in
# another directory has moved away from the entry's (its entry turns PendingDeletion and
# stays; the new directory gets its own). When the Etcd is deleted (or moves away), the entry
# ... stays ... the prefix, with the snapshots the sidecar left there (the cluster's data,
# Secrets included), stays claimed for the Etcd's namespace: another namespace's Etcd,
# EtcdBackup or EtcdRestore there is refused at admission". The doc closes the controller-down
# window for a move by an Etcd UPDATE ("When warden-controller has not made the old prefix's
# entry (it was not running between the Etcd's creation and its move: an upgrade, a node
# drain), warden-webhook makes it when it admits the move"); a Local Etcd moves just as well
# by an edit of its Secret's hostPath (no Etcd UPDATE), and is deleted without one.
#   No BackupBucket. Namespaces shoot and other, Secrets at hostPath /var/lib/lb.
#   warden-controller not running:
#   S. shoot's Etcd etcd-s (Secret etcd-backup-s at /var/lib/lb) at bkt/shoot--s/etcd; its
#      sidecar wrote there. shoot edits etcd-backup-s's hostPath to /var/lib/lb2: etcd-s now
#      writes to /var/lib/lb2/bkt/shoot--s/etcd, /var/lib/lb/bkt/shoot--s/etcd keeps its data.
#   D. shoot's Etcd etcd-d at bkt/shoot--d/etcd is deleted.
#   warden-controller starts; the claim Leases are deleted (as their records lapse after
#   PCLAIM_TTL_S); namespace other tries an Etcd and an EtcdRestore source on each directory
#   left behind.
# Control: C. with warden-controller running, shoot's Etcd etcd-c (Secret etcd-backup-c) has
# its Secret edited the same way: its old directory is kept (other's Etcd and EtcdRestore
# there refused); other's Etcd on shoot's live directories (S, before the edit) is refused.
# Oracle: admission of other's Etcd and EtcdRestore. Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

NODE=$SNAP_WORK/node
export CRONJOB_EXEC_HOST_ROOT=$NODE
etcd() { local_etcd "$1" "$2" bkt "$3" "${4:-etcd-backup}" ${5:+"$5"}; } # ns name prefix secret [kubectl flag]
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
# an entry of no bucket for shoot's directory /var/lib/lb/bkt/$1 exists
kept() {
    kc get backupentries -o json | jq -e --arg p "$1" '[.items[] | select(.spec.prefix == $p
        and .spec.etcd.namespace == "shoot" and .spec.bucketName == ""
        and .metadata.annotations["etcd-warden.io/local-host-path"] == "/var/lib/lb")] | length > 0' >/dev/null
}
# an entry of no bucket for shoot's directory /var/lib/lb2/bkt/$1 exists
moved() {
    kc get backupentries -o json | jq -e --arg p "$1" '[.items[] | select(.spec.prefix == $p
        and .spec.etcd.namespace == "shoot"
        and .metadata.annotations["etcd-warden.io/local-host-path"] == "/var/lib/lb2")] | length > 0' >/dev/null
}
forget_leases() {
    kc get leases -A -o json |
        jq -r '.items[] | select(.metadata.name | startswith("etcd-warden-claims-")) | "\(.metadata.namespace) \(.metadata.name)"' |
        while read -r ns name; do kc -n "$ns" delete lease "$name" >/dev/null; done
}
# other's Etcd (a dry run) on shoot's directory bkt/$1 refused
other_refused() { ! etcd other probe "$1" etcd-backup --dry-run=server >/dev/null 2>&1; }
# other's Etcds and restores (dry runs) on each directory shoot left refused
held() {
    local d
    for d in shoot--c/etcd shoot--s/etcd shoot--d/etcd; do
        other_refused "$d" || return 1
        ! restore other probe "$d" >/dev/null 2>&1 || return 1
    done
}
entries() { kc get backupentries -o json | jq -c '[.items[] | {n: .metadata.name, p: .spec.prefix, e: .spec.etcd.name, h: .metadata.annotations["etcd-warden.io/local-host-path"], d: .spec.etcdDeletedAt}]'; }

mkdir -p "$NODE/var/lib/lb/bkt" "$NODE/var/lib/lb2/bkt" "$NODE/var/lib/lb/obkt"
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
local_host_path shoot etcd-backup /var/lib/lb
local_host_path shoot etcd-backup-s /var/lib/lb
local_host_path shoot etcd-backup-c /var/lib/lb
local_host_path other etcd-backup /var/lib/lb
wh_register_backups

# warden-controller is not running (an upgrade, a node drain)
out=$(etcd shoot etcd-s shoot--s/etcd etcd-backup-s 2>&1) || ctl_fail "shoot/etcd-s refused: $out"
out=$(etcd shoot etcd-d shoot--d/etcd 2>&1) || ctl_fail "shoot/etcd-d refused: $out"
mkdir -p "$NODE/var/lib/lb/bkt/shoot--s/etcd/v2" "$NODE/var/lib/lb/bkt/shoot--d/etcd/v2"
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
snap=Full-00000000-00000100-$(($(date +%s) - 60)).gz
cp "$SNAP_WORK/full" "$NODE/var/lib/lb/bkt/shoot--s/etcd/v2/$snap" # etcd-s's sidecar
cp "$SNAP_WORK/full" "$NODE/var/lib/lb/bkt/shoot--d/etcd/v2/$snap" # etcd-d's sidecar
ksim_wait 30 other_refused shoot--s/etcd || true # the webhook's caches hold etcd-s
if out=$(etcd other etcd-live shoot--s/etcd 2>&1); then
    ctl_fail "control: other's Etcd on shoot's live directory admitted: $out"
fi
ok "control: other's Etcd on shoot's live directory /var/lib/lb/bkt/shoot--s/etcd refused: ${out:0:160}"
local_host_path shoot etcd-backup-s /var/lib/lb2 # etcd-s now writes to /var/lib/lb2/bkt/shoot--s/etcd
kc -n shoot delete etcd etcd-d --wait=false >/dev/null
ksim_wait 30 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get etcd etcd-d >/dev/null 2>&1" ||
    ctl_fail "etcd-d not deleted"

ctl_start
# the control: with warden-controller running, the same Secret edit
out=$(etcd shoot etcd-c shoot--c/etcd etcd-backup-c 2>&1) || ctl_fail "shoot/etcd-c refused: $out"
ksim_wait 60 kept shoot--c/etcd || ctl_fail "control: no entry for etcd-c's directory: $(entries)"
local_host_path shoot etcd-backup-c /var/lib/lb2
ksim_wait 150 moved shoot--c/etcd || echo "note: no entry for etcd-c's new directory: $(entries)"
ksim_wait 90 moved shoot--s/etcd || echo "note: no entry for etcd-s's directory: $(entries)"
ok "entries: $(entries)"
forget_leases
ksim_wait 30 held || true # the webhook's caches follow; a hole is still there at the deadline

holes=0
for c in C:shoot--c/etcd S:shoot--s/etcd D:shoot--d/etcd; do
    case=${c%%:*} dir=${c#*:}
    if out=$(etcd other "etcd-x${case,,}" "$dir" 2>&1); then
        echo "HOLE: $case: other's Etcd admitted on shoot's directory /var/lib/lb/bkt/$dir, left while warden-controller was down (its sidecar restores shoot's snapshot $snap at its first start): $out"
        holes=$((holes + 1))
    else echo "held: $case: other's Etcd refused: ${out:0:200}"; fi
    if out=$(restore other "r${case,,}" "$dir" 2>&1); then
        echo "HOLE: $case: other's EtcdRestore from shoot's directory /var/lib/lb/bkt/$dir admitted: $out"
        holes=$((holes + 1))
    else echo "held: $case: other's EtcdRestore refused: ${out:0:200}"; fi
    if out=$(restore shoot "r${case,,}" "$dir" 2>&1); then
        ok "shoot's own restore from /var/lib/lb/bkt/$dir admitted"
    else echo "note: $case: shoot's own restore from its old directory refused: ${out:0:200}"; fi
done
ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a Local directory left while warden-controller was down handed to another namespace"; exit 1; }
echo "attack11_local_unseen_leave: ok"
