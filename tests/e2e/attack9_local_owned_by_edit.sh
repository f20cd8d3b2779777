#!/usr/bin/env bash
# A namespace becomes "owner" of another namespace's Local directory at admission by editing its
# own Etcd's Secret. Issue 29: a restore reads only backups its namespace owns. warden-webhook
# admits an EtcdRestore's Local source when a claim of the restore's namespace holds the
# directory (docs/backup-entries.md, "Local stores"), and an Etcd's directory is placed by its
# backup Secret as it reads now: a Secret its namespace edits at will, after the Etcd was
# admitted elsewhere.
#   1. Namespace shoot: Etcd etcd-a, Local, container bkt, prefix shoot--a/etcd, hostPath
#      /var/lib/lb; its sidecar wrote a full snapshot to /var/lib/lb/bkt/shoot--a/etcd. No
#      BackupBucket.
#   2. Namespace other: Etcd etcd-o, Local, container bkt, prefix shoot--a/etcd, its Secret
#      etcd-backup at /var/lib/evil (admitted: /var/lib/evil/bkt/shoot--a/etcd is nobody's).
#   3. other edits etcd-backup's hostPath to /var/lib/lb and applies EtcdRestore r: source Local
#      bkt/shoot--a/etcd, Secret etcd-backup (now /var/lib/lb), target /var/lib/evil.
# Control: shoot's own EtcdRestore r0 from its own directory (its Etcd there, no other claim) is
# admitted; so is other's restore from its own directory before the edit.
# Wanted: r refused at admission (an Etcd of the namespace counts only when no claim of another
# namespace overlaps the directory: warden-controller's rule, controller/backups/bkown), the
# message naming no other namespace. Oracle: the admission answer.
# Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

restore() { # ns name target-prefix
    kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $2, namespace: $1}
spec:
  source: {store: {provider: Local, container: bkt, prefix: shoot--a/etcd, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-$2, store: {provider: Local, container: obkt, prefix: $3, secretRef: {name: etcd-backup}}}
EOF
}

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
kc create namespace shoot >/dev/null
kc create namespace other >/dev/null
local_host_path shoot etcd-backup /var/lib/lb
local_host_path other etcd-backup /var/lib/evil
wh_register_backups
ctl_store_etcd shoot etcd-a Local bkt shoot--a/etcd
out=$(ctl_store_etcd other etcd-o Local bkt shoot--a/etcd 2>&1) ||
    ctl_fail "other/etcd-o at /var/lib/evil/bkt/shoot--a/etcd refused: $out"
wh_caught_up # the caches

out=$(restore shoot r0 shoot/restored) || ctl_fail "shoot's restore from its own directory refused: $out"
ok "control: shoot's EtcdRestore r0 from its Etcd's /var/lib/lb/bkt/shoot--a/etcd admitted"
out=$(restore other r1 other/restored1) ||
    ctl_fail "other's restore from its own /var/lib/evil/bkt/shoot--a/etcd refused: $out"
ok "control: other's EtcdRestore r1 from its Etcd's /var/lib/evil/bkt/shoot--a/etcd admitted"

local_host_path other etcd-backup /var/lib/lb # etcd-o's Secret moved onto shoot's directory
if out=$(restore other r other/restored); then
    ctl_fail "HOLE: namespace other's EtcdRestore r from Local /var/lib/lb/bkt/shoot--a/etcd (shoot's etcd-a) admitted: other counted as owner through its Etcd etcd-o, whose Secret it edited onto that directory"
fi
grep -q "namespace other does not own the Local directory \"/var/lib/lb/bkt/shoot--a/etcd\"" <<<"$out" ||
    ctl_fail "r's refusal: $out"
! grep -qE "namespace shoot|shoot/|etcd-a" <<<"$out" || ctl_fail "the refusal names the other namespace: $out"
ok "other's restore from the edited Secret refused: ${out:0:240}"
echo "attack9_local_owned_by_edit: ok"
