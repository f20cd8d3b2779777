#!/usr/bin/env bash
# A tenant's Local Etcd in its own part of a BackupBucket partitioned by namespace gets no
# BackupEntry ("NotAuthorised"), on kube-sim with warden-webhook and warden-controller. This
# round's item 5 ("wrongly refuse a legitimate user").
# docs/backup-entries.md: "a BackupEntry is kept by warden-controller for every Etcd whose store
# is a bucket's"; (Prefixes partitioned by namespace) "with the bucket at /var/lib/lb/bkt,
# /var/lib/lb/bkt/shoot/etcd-a and /var/lib/lb/bkt/shoot--a1/etcd are namespace shoot's"; "The
# rule is one piece of code (common/lowner) for both processes"; (Local stores) the Local claim is
# "path.Clean(hostPath + "/" + container + "/" + prefix)", hostPath "the key hostPath of the
# Etcd's backup Secret ..., or /etc/gardener/local-backupbuckets when the Etcd names no Secret or
# the Secret has no such key".
#   BackupBucket local (Local, container bkt, its Secret's hostPath /var/lib/lb, prefixScope
#   Namespace) and BackupBucket flat (Local, container bkt2, the same hostPath, prefixScope
#   Bucket), both selecting namespace shoot, whose Secret etcd-backup says hostPath /var/lib/lb.
#   P1. Etcd shoot/etcd-a at bkt, prefix shoot/etcd-a: directory /var/lib/lb/bkt/shoot/etcd-a,
#       shoot's part (warden-webhook admits it as such).
#   P0. control: Etcd shoot/etcd-c at bkt2, prefix shoot/etcd-c (not partitioned): its entry.
# Oracle: what kube-sim stores: the BackupEntries warden-controller made (and its events).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc -n etcd-warden create secret generic local-bucket --from-literal=hostPath=/var/lib/lb >/dev/null
kc create namespace shoot >/dev/null
kc label namespace shoot etcd-warden.io/backups=local >/dev/null
local_host_path shoot etcd-backup /var/lib/lb
for b in "local bkt Namespace" "flat bkt2 Bucket"; do
    read -r name cont scope <<<"$b"
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket $name"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: $name}
spec:
  provider: Local
  container: $cont
  secretRef: {namespace: etcd-warden, name: local-bucket}
  deletionGracePeriod: 1h
  prefixScope: $scope
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: local}}
EOF
done
wh_register_backups
part_known() { ! local_etcd shoot probe bkt other/probe etcd-backup --dry-run=server >/dev/null 2>&1; }
ksim_wait 30 part_known || ctl_fail "the webhook's caches never held BackupBucket local"
ctl_start
out=$(local_etcd shoot etcd-a bkt shoot/etcd-a etcd-backup 2>&1) || ctl_fail "P1: shoot/etcd-a in shoot's part refused: $out"
out=$(local_etcd shoot etcd-c bkt2 shoot/etcd-c etcd-backup 2>&1) || ctl_fail "P0: shoot/etcd-c refused: $out"
entry_of() { # Etcd name: its entry of bucket B
    kc get backupentries -o json | jq -r --arg e "$1" --arg b "$2" '.items[] | select(.spec.etcd.namespace == "shoot"
        and .spec.etcd.name == $e and .spec.bucketName == $b) | .metadata.name'
}
has_entry() { [ -n "$(entry_of "$1" "$2")" ]; }
ksim_wait 30 has_entry etcd-c flat || ctl_fail "control: P0: no BackupEntry of bucket flat for shoot/etcd-c: $(kc get backupentries -o name | tr '\n' ' ')"
echo "ok: control: P0: shoot/etcd-c (not partitioned) has entry $(entry_of etcd-c flat)"
ksim_wait 20 has_entry etcd-a local
if ! has_entry etcd-a local; then
    ev=$(ctl_events shoot etcd-a | grep NotAuthorised | head -1)
    echo "HOLE: P1: shoot/etcd-a, directory /var/lib/lb/bkt/shoot/etcd-a in namespace shoot's part of BackupBucket local (admitted there by warden-webhook), gets no BackupEntry from warden-controller: ${ev:-no event} (entries: $(kc get backupentries -o name | tr '\n' ' '))"
    echo "FAIL: 1 hole(s): warden-controller refuses a Local Etcd in its own namespace's part of a partitioned bucket its BackupEntry (also with every hostPath at the default)"
    exit 1
fi
echo "held: P1: shoot/etcd-a has entry $(entry_of etcd-a local)"
echo "attack15_local_part_entry: ok"
