#!/usr/bin/env bash
# docs/backup-entries.md, T1/T2: at a reattachment "warden-controller appends its window as it
# stood then (T1 to the T2 of that moment ...) to spec.earlierWindows, and the deletion Job
# deletes what lies in any of the windows"; T2: "An object written into the prefix after it
# [etcdLastAliveAt] cannot be shown to be the deleted Etcd's, so it stays: a cluster that moved
# to another seed ... keeps what it wrote during the grace period".
# docs/backups-and-restores.md, Retain: a copy whose result was never read gets an entry whose
# "window ends at the later of the failure and the copy Job's deadline (status.copyStartedAt +
# 2 hours)" -- a window end in the future. Scenario: shoot's Retain EtcdBackup b of etcd-main
# into copies--u; its copy Job is deleted before its result is read (b Failed, no
# copyReported); b deleted: the copy's entry, window [copyStartedAt, +2h]. shoot deletes
# etcd-main and creates it again on copies--u (reattaches: the copy's window goes to
# spec.earlierWindows "as it stood then"), its member writes; etcd-main is deleted for good.
# Then the cluster on another seed (Gardener's control plane migration) writes into copies--u,
# long before copyStartedAt + 2h. Past the grace period the entry's deletion must keep that
# object (written after etcd-main was last alive). Oracle: s3rver's listing of copies--u.
set -euo pipefail
. "$(dirname "$0")/../lib/retained.sh"
D=copies--u
ret_stage

kc apply -f - >/dev/null <<EOF || ctl_fail "EtcdBackup b refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Retain
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $D, secretRef: {name: etcd-backup}}
EOF
ksim_wait 60 ret_has_job b || ctl_fail "no copy Job of b: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
kc -n "$NS" delete job b--copy --wait=true --timeout=30s >/dev/null || ctl_fail "cannot delete b's copy Job"
ksim_wait 60 ret_over b || ctl_fail "b did not end: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
ok "b $(ret_bstatus b phase): copyStartedAt $(ret_bstatus b copyStartedAt) copyReported '$(ret_bstatus b copyReported)' status $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}' | cut -c1-400)"
kc -n "$NS" delete etcdbackup b --timeout=60s >/dev/null || ctl_fail "b not deleted"
e=$(ret_entry_of $D)
if [ -z "$e" ]; then echo "held: no entry keeps b's unread copy (nothing to delete)"; ctl_stop; exit 0; fi
ok "entry $e: $(kc get backupentry "$e" -o jsonpath='{.status.phase} {.spec}' | cut -c1-600)"

kc -n "$NS" delete etcd etcd-main --timeout=60s >/dev/null || ctl_fail "cannot delete etcd-main"
kc_druid -n "$NS" delete statefulset etcd-main --ignore-not-found >/dev/null 2>&1 || true
kc_druid -n "$NS" delete pod -l app.kubernetes.io/part-of=etcd-main --grace-period=0 >/dev/null 2>&1 || true
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
if ! ksim_wait 150 mk; then
    echo "held: etcd-main cannot be created on $D: $(cat "$SNAP_WORK/mk.err")"; ctl_stop; exit 0
fi
ctl_members "$NS" etcd-main
reat() { [ "$(kc get backupentry "$e" -o jsonpath='{.status.phase}')" = Active ]; }
if ! ksim_wait 30 reat; then
    echo "held: etcd-main on $D not reattached to $e: $(kc get backupentry "$e" -o jsonpath='{.status.phase}'); $(ctl_events "$NS" etcd-main | tail -2 | tr '\n' '|')"
    ctl_stop; exit 0
fi
ksim_wait 30 _ctl_members_seen "$NS" etcd-main || true
ok "etcd-main reattached to $e: $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-900)"
sleep 1
own=$D/v2/Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/own" 4096 Full.gz
snap_s3 put "$own" "$SNAP_WORK/own"
sleep 1
kc -n "$NS" delete pod etcd-main-0 --grace-period=0 >/dev/null 2>&1 || true
kc -n "$NS" delete statefulset etcd-main >/dev/null 2>&1 || true
kc -n "$NS" delete etcd etcd-main >/dev/null || ctl_fail "cannot delete etcd-main again"
pend() { [ "$(kc get backupentry "$e" -o jsonpath='{.status.phase}')" = PendingDeletion ]; }
ksim_wait 20 pend || ctl_fail "$e not pending"
ok "entry $e pending: $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-900)"
sleep 2
theirs=$D/v2/Full-00000000-00000500-1800000000.gz
snap_fixture "$SNAP_WORK/theirs" 4096 Full.gz
snap_s3 put "$theirs" "$SNAP_WORK/theirs"
ok "the other seed wrote $theirs after etcd-main was deleted for good"
ctl_s3_bucket 5s
ctl_jobs_serve etcd-warden
ksim_wait 90 ksim_gone backupentry "$e" || echo "entry $e stays: $(kc get backupentry "$e" -o jsonpath='{.status}' | cut -c1-300)"
echo "events of $e: $(ctl_events default "$e" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(ret_listing $D)
echo "left under $D: $(echo $left)"
ctl_jobs_stop
ctl_stop
if ! grep -qF "$theirs" <<<"$left"; then
    echo "HOLE: the entry $e (b's unread retained copy, reattached by etcd-main) deleted $theirs, written into $D by the cluster on another seed after etcd-main was deleted for good (left: ${left:-nothing})"
    exit 1
fi
echo "held: $theirs stays"
echo "attack28_unread_copy_reattach: ok"
