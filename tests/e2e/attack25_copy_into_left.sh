#!/usr/bin/env bash
# docs/backups-and-restores.md, Retain: "An entry of the name that is already the namespace's and
# Etcd's (an earlier retained copy in the same prefix) is widened to cover this copy's window";
# docs/backup-entries.md: an Etcd that moves "leaves its old entry pending", its window ending
# when it left. shoot/etcd-main (the bucket's credentials, members seen) moves from
# shoot--etcd-main to moved/etcd-main; another seed's cluster writes on into shoot--etcd-main.
# shoot then copies etcd-main (Retain EtcdBackup b) into shoot--etcd-main, its own earlier
# prefix, and deletes b: the copy is handed to the entry of that name, which is the namespace's
# and the Etcd's. Past the grace period that entry must keep what the other seed wrote between
# the move and the copy. Oracle: s3rver's listing of shoot--etcd-main.
set -euo pipefail
. "$(dirname "$0")/../lib/retained.sh"
D=shoot--etcd-main
ret_stage
ksim_wait 20 ctl_has_entry "$NS" etcd-main || ctl_fail "no entry for etcd-main"
ctl_members_seen "$NS" etcd-main
e=$(ret_entry_of "$D")
ok "entry $e"
sleep 1
kc -n "$NS" patch etcd etcd-main --type merge -p '{"spec":{"backup":{"store":{"prefix":"moved/etcd-main"}}}}' >/dev/null || ctl_fail "cannot move etcd-main"
ksim_wait 20 ctl_entry_phase_is "$e" PendingDeletion || ctl_fail "$e not pending after the move"
ok "moved: $e $(kc get backupentry "$e" -o jsonpath='{.spec}' | cut -c1-500)"
sleep 1
theirs=$D/v2/Full-00000000-00000500-1800000000.gz
snap_fixture "$SNAP_WORK/theirs" 4096 Full.gz
snap_s3 put "$theirs" "$SNAP_WORK/theirs"
ok "the other seed wrote $theirs after the move"
sleep 1
if ! out=$(kc apply -f - 2>&1 <<EOF2
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Retain
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $D, secretRef: {name: etcd-backup}}
EOF2
); then echo "held: b's destination $D refused: $out"; ctl_stop; exit 0; fi
if ! ksim_wait 60 ret_has_job b; then
    echo "held: no copy Job of b: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}' | cut -c1-400)"; ctl_stop; exit 0
fi
snap=$(tr ',' '\n' <<<"$(ret_job_args b)" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
snap_s3 put "moved/etcd-main/v2/$snap" "$SNAP_WORK/snap"
ctl_jobs_serve "$NS"
ksim_wait 60 ret_over b || ctl_fail "b did not end"
[ "$(ret_bstatus b phase)" = Completed ] || { echo "held: b $(ret_bstatus b phase): $(ret_bstatus b error)"; ctl_stop; exit 0; }
ok "b Completed: key $(ret_bstatus b destinationKey)"
kc -n "$NS" delete etcdbackup b --timeout=60s >/dev/null || ctl_fail "b not deleted"
ok "after b: $(ret_entry_of $D): $(kc get backupentry "$(ret_entry_of $D)" -o jsonpath='{.spec}' | cut -c1-600); events of b $(ctl_events "$NS" b | tail -2 | tr '\n' '|')"
# etcd-main goes with its members (nothing writes the old prefix any more)
kc -n "$NS" delete etcd etcd-main --wait=false >/dev/null || ctl_fail "cannot delete etcd-main"
kc_druid -n "$NS" delete statefulset etcd-main --ignore-not-found >/dev/null 2>&1 || true
kc_druid -n "$NS" delete pod -l app.kubernetes.io/part-of=etcd-main --grace-period=0 >/dev/null 2>&1 || true
sleep 2
ok "etcd-main deleted: $(kc -n "$NS" get etcd,statefulset,pods -o name 2>&1 | tr '\n' ' ')"
ctl_s3_bucket 2s
e2=$(ret_entry_of $D)
ksim_wait 90 ksim_gone backupentry "$e2" || echo "entry $e2 stays: $(kc get backupentry "$e2" -o jsonpath='{.status}' | cut -c1-300)"
echo "events of $e2: $(ctl_events default "$e2" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(ret_listing $D)
echo "left under $D: $(echo $left)"
ctl_stop
if ! grep -qF "$theirs" <<<"$left"; then
    echo "HOLE: the entry of $D (etcd-main's earlier prefix, widened by the retained copy b) deleted $theirs, written by another seed's cluster after etcd-main moved away and before b's copy (left: ${left:-nothing})"
    exit 1
fi
echo "held: $theirs stays"
echo "attack25_copy_into_left: ok"
