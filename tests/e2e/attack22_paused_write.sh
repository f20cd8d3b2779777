#!/usr/bin/env bash
# T2 of a deletion, "the Etcd gone" (docs/backup-entries.md, "Nothing deleted without
# provenance"): spec.etcdLastAliveAt "and no later": any cluster that came onto the prefix
# after it keeps what it wrote, "whether or not warden-controller saw it (... one that came and
# went while the controller was paused or down)". etcdLastAliveAt is, when the replica "saw the
# Etcd alive itself and has watched it since, the time it saw it gone". Here the replica is
# paused (SIGSTOP, a starved process) for 8 s (less than its Lease) from just before
# shoot/etcd-a is deleted; 3 s after the deletion, while it is paused, the cluster (now on
# another seed) writes on into the prefix. The controller reads the deletion when it resumes.
# Past the grace period the entry's Job must keep what was written after etcd-a was gone.
# Oracle: s3rver's listing of the prefix.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
stopped=""
cont() { [ -z "$stopped" ] || kill -CONT "$stopped" 2>/dev/null; stopped=""; }
ksim_on_exit cont

rel_stage shoot 10s
wh_register_backups
ctl_start
rel_written
E=$REL_E

kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
sleep 2
kill -STOP "$CTL_PID" && stopped=$CTL_PID
kc -n shoot delete etcd etcd-a >/dev/null || { cont; ctl_fail "cannot delete etcd-a"; }
t0=$(date +%s)
echo "etcd-a deleted at $(date -u -d @$t0 +%H:%M:%S) while the controller is paused"
while [ $(date +%s) -lt $((t0 + 3)) ]; do sleep 0.2; done
snap_s3 put "$P/v2/Full-00000000-00000300-1800000000.gz" "$SNAP_WORK/obj"
later=$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)
echo "written on from the other seed at $(date -u +%H:%M:%S) (deletion + $(($(date +%s) - t0)) s), controller paused: $(echo $later)"
while [ $(date +%s) -lt $((t0 + 8)) ]; do sleep 0.2; done
cont
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
echo "entry $E: etcdLastAliveAt $(rel_entry_field "$E" '{.spec.etcdLastAliveAt}'), etcdDeletedAt $(rel_entry_field "$E" '{.spec.etcdDeletedAt}'), etcdSeenAt $(rel_entry_field "$E" '{.spec.etcdSeenAt}')"

ksim_wait 40 ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$later") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written into $P 3 s after etcd-a was deleted, while the controller was paused (it took the time it read the deletion for the Etcd's last time alive)"
    exit 1
fi
echo "held: what was written after etcd-a's deletion stays"
echo "attack22_paused_write: ok"
