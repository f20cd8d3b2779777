#!/usr/bin/env bash
# docs/backup-entries.md, "The credentials held the whole time": the rule is compared again "at
# once when the Etcd's metadata.generation is not the one last compared (an edit of its
# secretRef, endpointOverride or provider is seen through the watch)"; the first comparison that
# does not hold writes spec.credentialsLostAt, and T2 is never later; "what was written between a
# loss and a later match cannot be shown to be the Etcd's". The Known gaps name only a Secret's
# *contents* edited and edited back (Secrets are not watched), not a secretRef edit.
# shoot/etcd-a (the bucket's credentials) runs; warden-controller is paused for a few seconds
# (SIGSTOP, a starved process, its watch unbroken); shoot points etcd-a's secretRef at its own
# Secret (its own keys and service: its sidecar writes there), the cluster on another seed writes
# into the operator's prefix, and shoot points the secretRef back. The controller resumes;
# etcd-a is later deleted: past the grace period the entry's deletion must keep what the other
# seed wrote while etcd-a's Secret was not the bucket's. Oracle: s3rver's listing.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
kc -n shoot create secret generic own --from-literal=accessKeyID=AKIATENANT \
    --from-literal=secretAccessKey=TENANT --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint=http://minio.shoot.example:9000 >/dev/null ||
    ctl_fail "cannot create Secret shoot/own"
ctl_start
rel_written
E=$REL_E
sleep 1
kill -STOP "$CTL_PID" && stopped=$CTL_PID
ksim_on_exit "kill -CONT $stopped 2>/dev/null || true"
echo "controller paused; entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-600)"
kc -n shoot patch etcd etcd-a --type merge -p '{"spec":{"backup":{"store":{"secretRef":{"name":"own"}}}}}' >/dev/null ||
    { kill -CONT "$stopped"; echo "held: the secretRef edit refused"; exit 0; }
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000501-00000600-1800000100.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys) while etcd-a's secretRef named shoot/own"
sleep 1
out=$(kc -n shoot patch etcd etcd-a --type merge -p '{"spec":{"backup":{"store":{"secretRef":{"name":"etcd-backup"}}}}}' 2>&1) ||
    { kill -CONT "$stopped"; echo "held: the secretRef revert refused: $out"; exit 0; }
echo "secretRef back (generation $(jp shoot etcd/etcd-a '{.metadata.generation}'))"
kill -CONT "$stopped"
sleep 6
echo "after the pause: entry $E phase $(ctl_entry_phase "$E"); spec $(rel_entry_field "$E" '{.spec}' | cut -c1-900)"
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
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written into \"$P\" by the cluster on another seed while etcd-a's secretRef named the tenant's own Secret (edited and reverted while warden-controller was paused)"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack26_secretref_paused_revert: ok"
