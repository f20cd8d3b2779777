#!/usr/bin/env bash
# docs/backup-entries.md, T1: "For an Etcd an EtcdRestore created (spec.origin: Restore ...) ...
# T1 is spec.claimedAt, with or without a member"; but "An entry reattached (... an Etcd that moved
# away and back ...) gets spec.reattachedAt, and T1 is the second after it", and the link to the
# restore "holds only when ... the Etcd's spec never changed (metadata.generation 1)"; the
# webhook's spec.etcdStoreChangedAt ends the window at the move.
# Namespace shoot restores etcd-main into shoot--etcd-t (EtcdRestore r, Completed; Etcd
# shoot/etcd-t, its entry of origin Restore, T1 the copy's start). warden-controller is paused;
# shoot moves etcd-t to shoot--away, the cluster on another seed writes into shoot--etcd-t, shoot
# moves etcd-t back; the controller resumes. etcd-t is later deleted: past the grace period the
# entry's deletion must keep what the other seed wrote while etcd-t was away (the restore's copy
# may go). Oracle: s3rver's listing of shoot--etcd-t.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
rphase() { jp shoot etcdrestore/r '{.status.phase}'; }
field() { kc get backupentry "$1" -o jsonpath="$2" 2>/dev/null; }
T=shoot--etcd-t

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot
ctl_s3_bucket 30s
wh_register_backups
ctl_jobs_serve etcd-warden
ctl_jobs_serve shoot
ctl_start
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_fixture "$SNAP_WORK/obj" 1024 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/full"
kc apply -f - >/dev/null <<YAML || ctl_fail "the restore refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: shoot}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-t, store: {provider: S3, container: $SNAP_BUCKET, prefix: $T, secretRef: {name: etcd-backup}}}
YAML
completed() { [ "$(rphase)" = Completed ]; }
ksim_wait 90 completed || ctl_fail "r did not complete: $(kc -n shoot get etcdrestore r -o jsonpath='{.status}')"
ksim_wait 30 ctl_has_entry shoot etcd-t || ctl_fail "no entry for shoot/etcd-t"
E=$(ctl_entry_of shoot etcd-t)
ctl_members shoot etcd-t
sleep 3
echo "r Completed (copyStartedAt $(jp shoot etcdrestore/r '{.status.copyStartedAt}')); $T holds $(snap_s3 ls "$T/" | tr '\n' ' '); entry $E spec $(field "$E" '{.spec}' | cut -c1-700)"
kill -STOP "$CTL_PID" && stopped=$CTL_PID; ksim_on_exit "kill -CONT $CTL_PID 2>/dev/null || true"
out=$(kc -n shoot patch etcd etcd-t --type merge -p '{"spec":{"backup":{"store":{"prefix":"shoot--away"}}}}' 2>&1) ||
    { kill -CONT "$stopped"; echo "held: the move away refused: $out"; exit 0; }
sleep 1
snap_s3 put "$T/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$T/v2/Incr-00000501-00000600-1800000100.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$T/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys) while etcd-t was away"
sleep 1
out=$(kc -n shoot patch etcd etcd-t --type merge -p "{\"spec\":{\"backup\":{\"store\":{\"prefix\":\"$T\"}}}}" 2>&1) ||
    { kill -CONT "$stopped"; echo "held: the move back refused: $out"; exit 0; }
echo "etcd-t moved back (generation $(jp shoot etcd/etcd-t '{.metadata.generation}')); entry $E spec $(field "$E" '{.spec}' | cut -c1-700)"
kill -CONT "$stopped"
sleep 8
echo "after the pause: entry $E phase $(ctl_entry_phase "$E"); spec $(field "$E" '{.spec}' | cut -c1-900)"
kc -n shoot delete pod etcd-t-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-t >/dev/null 2>&1
kc -n shoot delete etcd etcd-t >/dev/null || ctl_fail "cannot delete etcd-t"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
echo "entry $E PendingDeletion: spec $(field "$E" '{.spec}' | cut -c1-900)"
ksim_wait 120 ctl_entry_settled "$E" ||
    echo "entry $E stays: $(field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-500)"
left=$(snap_s3 ls "$T/v2/" | sort)
echo "left under $T: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-t's entry (origin Restore) deleted $(echo $lost), written into \"$T\" by the cluster on another seed while etcd-t was moved away (away and back while warden-controller was paused)"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack27_restored_move_back: ok"
