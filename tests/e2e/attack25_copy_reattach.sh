#!/usr/bin/env bash
# docs/backups-and-restores.md, Retain: the retained copy's entry has "the copy's write window"
# and "the namespace's own Etcd of that name may be created on it (it reattaches, and restores
# its own data)"; docs/backup-entries.md, T2: what another cluster writes into a prefix while
# the entry's Etcd is gone "stays". shoot copies etcd-main (Retain EtcdBackup b) into copies--r
# with the bucket's Secret; b is deleted (the copy handed to an entry). Another seed's cluster
# writes into copies--r. shoot deletes etcd-main and creates it again on copies--r (reattaching
# to the copy's entry, as documented), then deletes it for good. Past the grace period the
# entry must keep what the other seed wrote between the copy's end and the re-creation.
# Oracle: s3rver's listing of copies--r.
set -euo pipefail
. "$(dirname "$0")/../lib/retained.sh"
D=copies--r
ret_stage

ret_backup b "$D"
kc -n "$NS" delete etcdbackup b --timeout=60s >/dev/null || ctl_fail "b not deleted"
e=$(ret_entry_of $D)
[ -n "$e" ] || ctl_fail "no entry keeps b's retained copy"
ok "entry $e: $(kc get backupentry "$e" -o jsonpath='{.status.phase} {.spec}' | cut -c1-500)"
sleep 2
theirs=$D/v2/Full-00000000-00000500-1800000000.gz
snap_fixture "$SNAP_WORK/theirs" 4096 Full.gz
snap_s3 put "$theirs" "$SNAP_WORK/theirs"
ok "the other seed wrote $theirs after b's copy was retained"
sleep 1

kc -n "$NS" delete etcd etcd-main --timeout=60s >/dev/null || ctl_fail "cannot delete etcd-main"
kc_druid -n "$NS" delete statefulset etcd-main --ignore-not-found >/dev/null 2>&1 || true
kc_druid -n "$NS" delete pod -l app.kubernetes.io/part-of=etcd-main --grace-period=0 >/dev/null 2>&1 || true
ok "etcd-main deleted; pods left: $(kc -n "$NS" get pods -o name | tr '\n' ' ')"
mk() { kc apply -f - >/dev/null 2>"$SNAP_WORK/mk.err" <<EOF2
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-main, namespace: $NS}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: aws, container: $SNAP_BUCKET, prefix: "$D", secretRef: {name: etcd-backup}}}
EOF2
}
# the copy's claim record counts for 120 s after b's copy began
if ! ksim_wait 60 mk; then
    echo "held: etcd-main cannot be created on $D: $(cat "$SNAP_WORK/mk.err")"; ctl_stop; exit 0
fi
ctl_members "$NS" etcd-main
reat() { [ "$(kc get backupentry "$e" -o jsonpath='{.status.phase}')" = Active ]; }
if ! ksim_wait 20 reat; then
    echo "held: etcd-main on $D not reattached to $e: $(kc get backupentry "$e" -o jsonpath='{.status.phase}'); $(ctl_events "$NS" etcd-main | tail -2 | tr '\n' '|')"
    ctl_stop; exit 0
fi
ok "etcd-main reattached to $e: $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-600)"
sleep 3
kc -n "$NS" delete pod etcd-main-0 --grace-period=0 >/dev/null 2>&1 || true
kc -n "$NS" delete statefulset etcd-main >/dev/null 2>&1 || true
kc -n "$NS" delete etcd etcd-main >/dev/null || ctl_fail "cannot delete etcd-main again"
pend() { [ "$(kc get backupentry "$e" -o jsonpath='{.status.phase}')" = PendingDeletion ]; }
ksim_wait 20 pend || ctl_fail "$e not pending"
ok "entry $e pending: $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-700)"
ctl_s3_bucket 2s
ksim_wait 90 ksim_gone backupentry "$e" || echo "entry $e stays: $(kc get backupentry "$e" -o jsonpath='{.status}' | cut -c1-300)"
echo "events of $e: $(ctl_events default "$e" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(ret_listing $D)
echo "left under $D: $(echo $left)"
ctl_stop
if ! grep -qF "$theirs" <<<"$left"; then
    echo "HOLE: the entry of shoot's retained copy b, reattached by etcd-main created again on $D, deleted $theirs, written by another seed's cluster after the copy and before the re-creation (left: ${left:-nothing})"
    exit 1
fi
echo "held: $theirs stays"
echo "attack25_copy_reattach: ok"
