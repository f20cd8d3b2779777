#!/usr/bin/env bash
# docs/backup-entries.md, T2: "else spec.etcdDeleteAdmittedAt, the time warden-webhook admitted
# the Etcd's DELETE, which it writes into the entry of the Etcd's claim before it answers";
# at a reattachment the window is appended to spec.earlierWindows "for an Etcd of another uid
# whose going it did not see, ending when it was last known alive"; "An object written into the
# prefix after it cannot be shown to be the deleted Etcd's, so it stays".
# Scenario: shoot/etcd-a (uid1) writes, members seen. warden-controller is paused (SIGSTOP, as
# a starved replica). etcd-a is deleted (the webhook records the DELETE on the entry, t1). The
# cluster on another seed writes into the prefix. shoot creates etcd-a again (uid2) and deletes
# it again at once (t3: does the webhook overwrite uid1's etcdDeleteAdmittedAt?), then creates it
# a third time (uid3). The controller resumes, finds uid3 on the entry of uid1 and reattaches:
# uid1's window must end at t1, not t3. etcd-a is deleted for good; past the grace period the
# other seed's object must stay. Oracle: s3rver's listing of the prefix.
set -uo pipefail
export CTL_LEASE=120s CTL_RENEW=90s # a pause of seconds keeps the lease
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
sleep 1
kill -STOP "$CTL_PID" && stopped=$CTL_PID; ksim_on_exit "kill -CONT $CTL_PID 2>/dev/null || true"
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || { kill -CONT "$stopped"; ctl_fail "cannot delete etcd-a"; }
echo "uid1 deleted: entry etcdDeleteAdmittedAt '$(rel_entry_field "$E" '{.spec.etcdDeleteAdmittedAt}')'"
sleep 2
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys)"
sleep 2
out=$(ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" "$P" 2>&1) || echo "uid2 refused: $out"
echo "uid2 $(jp shoot etcd/etcd-a '{.metadata.uid}' 2>&1)"
sleep 2
kc -n shoot delete etcd etcd-a >/dev/null 2>&1 || echo "uid2 not deleted"
echo "uid2 deleted: entry etcdDeleteAdmittedAt '$(rel_entry_field "$E" '{.spec.etcdDeleteAdmittedAt}')'"
sleep 2
out=$(ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" "$P" 2>&1) || echo "uid3 refused: $out"
echo "uid3 $(jp shoot etcd/etcd-a '{.metadata.uid}' 2>&1); entry spec $(rel_entry_field "$E" '{.spec}' | cut -c1-700)"
kill -CONT "$stopped"
if jp shoot etcd/etcd-a '{.metadata.uid}' >/dev/null 2>&1; then
    ctl_members shoot etcd-a
    reattached() { ctl_entry_phase_is "$E" Active && [ "$(rel_entry_field "$E" '{.spec.etcd.uid}')" = "$(jp shoot etcd/etcd-a '{.metadata.uid}')" ]; }
    ksim_wait 30 reattached || echo "etcd-a not reattached: $(ctl_entry_phase "$E"); events: $(ctl_events shoot etcd-a | tail -2 | tr '\n' '|')"
    sleep 3
    echo "entry $E after the pause: $(rel_entry_field "$E" '{.spec}' | cut -c1-900)"
    rel_judge "$x_keys" "by the cluster on another seed after etcd-a (uid1) was deleted (etcd-a created and deleted again while warden-controller was paused)"
else
    ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
    echo "entry $E: spec $(rel_entry_field "$E" '{.spec}' | cut -c1-900)"
    ksim_wait 90 ctl_entry_settled "$E" || true
    left=$(snap_s3 ls "$P/v2/" | sort)
    echo "left under $P: $(echo $left)"
    ctl_jobs_stop; ctl_stop
    lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
    [ -z "$lost" ] || { echo "HOLE: deleted $lost"; exit 1; }
    echo "held: the other writer's snapshots stay"
fi
echo "attack28_reborn_twice_paused: ok"
