#!/usr/bin/env bash
# docs/backup-entries.md, T2: "spec.etcdDeleteAdmittedAt, the time warden-webhook admitted the
# Etcd's DELETE, which it writes into the entry of the Etcd's claim before it answers (the Etcd
# exists then and is deleted only after: an Etcd without a finalizer is gone at once, and a
# controller replica that is paused, starved of CPU or behind a long queue reads the deletion
# late ...; a DELETE that another webhook refuses after warden-webhook admitted it leaves the time
# there until warden-controller reads the Etcd alive from the API server after it, which only
# keeps more meanwhile)"; "So an Etcd deleted while warden-controller was down ... does not
# stretch the window over what a cluster that moved to another seed writes into the prefix".
# Another validating webhook (holdhook) holds shoot's DELETE of etcd-a (no finalizer) for a few
# seconds after warden-webhook admitted it and wrote the time: meanwhile the running controller
# reads etcd-a alive from the API server (it is: the DELETE is not stored yet) and may drop the
# time. Then the controller is paused (starved), the DELETE is stored, the cluster on another
# seed (Gardener's control plane migration) writes into shoot--etcd-a, and the controller
# resumes and releases the entry. Past the grace period the deletion must keep what the other
# seed wrote after etcd-a was gone. Oracle: s3rver's listing of shoot--etcd-a.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"
. "$(dirname "$0")/../lib/holdhook.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
HD=$SNAP_WORK/hold
holdhook_serve "$HD" "$(snap_free_port)" DELETE shoot 28 \
    "{apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [DELETE], resources: [etcds], scope: Namespaced}" \
    "$HD/release"
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
sleep 2
touch "$HD/armed"
kc -n shoot delete etcd etcd-a --wait=false >"$SNAP_WORK/delete.out" 2>&1 &
DEL=$!
ksim_wait 20 test -e "$HD/held" || ctl_fail "the DELETE was not held"
echo "DELETE held by the policy webhook; entry $E: deleteAdmitted $(rel_entry_field "$E" '{.spec.etcdDeleteAdmittedAt}')"
dropped() { [ -z "$(rel_entry_field "$E" '{.spec.etcdDeleteAdmittedAt}')" ]; }
if ksim_wait 8 dropped; then
    echo "the controller dropped the admitted time while the DELETE was held"
else
    echo "the admitted time stays while the DELETE is held"
fi
kill -STOP "$CTL_PID" && stopped=$CTL_PID; ksim_on_exit "kill -CONT $CTL_PID 2>/dev/null || true"
rm -f "$HD/armed"; touch "$HD/release"
wait $DEL || { kill -CONT "$stopped"; echo "held: the DELETE refused: $(cat "$SNAP_WORK/delete.out")"; exit 0; }
ksim_wait 10 ksim_gone -n shoot etcd etcd-a || echo "etcd-a still there"
echo "etcd-a deleted; entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-800)"
sleep 2
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000501-00000600-1800000100.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys) after etcd-a was gone"
sleep 2
kill -CONT "$stopped"
ksim_wait 30 ctl_entry_phase_is "$E" PendingDeletion || echo "entry $E: $(ctl_entry_phase "$E")"
echo "entry $E released: spec $(rel_entry_field "$E" '{.spec}' | cut -c1-900)"
ksim_wait 120 ctl_entry_settled "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-500)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written into \"$P\" by the cluster on another seed after etcd-a was deleted (admitted time dropped while another webhook held the DELETE)"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack27_held_delete_consumed: ok"
