#!/usr/bin/env bash
# docs/backup-entries.md, T1/T2: "warden-webhook, when it admits an UPDATE that changes anything
# of an Etcd's spec.backup.store (no dry run), writes its time into the entries of the earlier
# and the new prefix that record this Etcd, as spec.etcdStoreChangedAt" -- whoever sends it.
# attack26_move_paused_back with the move away and back sent by a trusted reconciler (etcd-druid's
# service account, which warden-webhook lets through its component rules): warden-controller
# paused, etcd-a moved to shoot--away, the cluster on another seed writes into shoot--etcd-a,
# etcd-a moved back, the controller resumes. etcd-a is later deleted; past the grace period the
# entry's deletion must keep what the other seed wrote while etcd-a was away. Oracle: s3rver.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
kill -STOP "$CTL_PID" && stopped=$CTL_PID; ksim_on_exit "kill -CONT $CTL_PID 2>/dev/null || true"
echo "controller paused; entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-600)"
kc_druid -n shoot patch etcd etcd-a --type merge -p '{"spec":{"backup":{"store":{"prefix":"shoot--away"}}}}' >/dev/null ||
    { echo "held: the move away refused"; exit 0; }
echo "etcd-a moved to shoot--away (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')); entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.status.phase} {end}')"
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000501-00000600-1800000100.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys) while etcd-a was away"
sleep 1
out=$(kc_druid -n shoot patch etcd etcd-a --type merge -p "{\"spec\":{\"backup\":{\"store\":{\"prefix\":\"$P\"}}}}" 2>&1) ||
    { echo "held: the move back refused: $out"; exit 0; }
echo "etcd-a moved back (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')); entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-700)"
kill -CONT "$stopped"
sleep 8
echo "after the pause: entry $E phase $(ctl_entry_phase "$E"); spec $(rel_entry_field "$E" '{.spec}' | cut -c1-900); entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.status.phase} {end}')"
sleep 1
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
echo "entry $E PendingDeletion: spec $(rel_entry_field "$E" '{.spec}' | cut -c1-900)"
ksim_wait 90 ctl_entry_settled "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-500)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written into \"$P\" by the cluster on another seed while etcd-a was moved away (away and back by etcd-druid's service account while warden-controller was paused)"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack27_druid_move_back: ok"
