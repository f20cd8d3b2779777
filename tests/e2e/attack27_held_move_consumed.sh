#!/usr/bin/env bash
# docs/backup-entries.md, T1/T2: "warden-webhook, when it admits an UPDATE that changes anything
# of an Etcd's spec.backup.store (no dry run), writes its time into the entries of the earlier
# and the new prefix that record this Etcd, as spec.etcdStoreChangedAt ... The deletion window
# ends no later (T2, below), and the next time warden-controller attaches the entry to the Etcd
# it removes the field and sets spec.reattachedAt"; "Nor is T2 later than
# spec.etcdStoreChangedAt: the Etcd's store changed then".
# The record is written at admission, before the API server stores the UPDATE. Another
# validating webhook (a policy webhook, holdhook) holds shoot's move of etcd-a from
# shoot--etcd-a to shoot--away for a few seconds after warden-webhook admitted it and wrote the
# record: meanwhile the running controller sees the entry changed and the Etcd still on its
# prefix, and may "attach" it, consuming the record. Then the controller is paused (starved),
# the move is stored, the cluster on another seed writes into shoot--etcd-a, and the controller
# resumes and releases the entry for the move. Past the grace period the entry's deletion must
# keep what the other seed wrote after etcd-a left. Oracle: s3rver's listing of shoot--etcd-a.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"
. "$(dirname "$0")/../lib/holdhook.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
HD=$SNAP_WORK/hold
holdhook_serve "$HD" "$(snap_free_port)" UPDATE shoot 28 \
    "{apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [UPDATE], resources: [etcds], scope: Namespaced}" \
    "$HD/release"
touch "$HD/armed"
echo "entry $E before the move: $(rel_entry_field "$E" '{.spec}' | cut -c1-700)"
kc -n shoot patch etcd etcd-a --type merge -p '{"spec":{"backup":{"store":{"prefix":"shoot--away"}}}}' >"$SNAP_WORK/patch.out" 2>&1 &
PATCH=$!
ksim_wait 20 test -e "$HD/held" || ctl_fail "the move was not held"
echo "move held by the policy webhook; entry $E: changed $(rel_entry_field "$E" '{.spec.etcdStoreChangedAt}') reattached $(rel_entry_field "$E" '{.spec.reattachedAt}')"
consumed() { [ -z "$(rel_entry_field "$E" '{.spec.etcdStoreChangedAt}')" ]; }
if ksim_wait 6 consumed; then
    echo "the controller consumed the record while the move was held: reattached $(rel_entry_field "$E" '{.spec.reattachedAt}')"
else
    echo "the record stays while the move is held"
fi
kill -STOP "$CTL_PID" && stopped=$CTL_PID; ksim_on_exit "kill -CONT $CTL_PID 2>/dev/null || true"
rm -f "$HD/armed"; touch "$HD/release"
wait $PATCH || { kill -CONT "$stopped"; echo "held: the move refused: $(cat "$SNAP_WORK/patch.out")"; exit 0; }
echo "etcd-a moved to $(jp shoot etcd/etcd-a '{.spec.backup.store.prefix}') (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')); entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-800)"
sleep 2
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000501-00000600-1800000100.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys) after etcd-a left"
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
    echo "HOLE: the deletion of shoot/etcd-a's earlier entry deleted $(echo $lost), written into \"$P\" by the cluster on another seed after etcd-a moved away (record consumed while another webhook held the move)"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack27_held_move_consumed: ok"
