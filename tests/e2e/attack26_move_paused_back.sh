#!/usr/bin/env bash
# docs/backup-entries.md, T1: "An entry reattached (... an Etcd that moved away and back ...)
# gets spec.reattachedAt, and T1 is no earlier: between its release and the reattachment the
# prefix had no owner here, and whatever was written then may be another writer's ... so it
# stays"; "An Etcd that moves to another prefix leaves its old entry pending".
# A move away and back the controller does not see: warden-controller is paused (SIGSTOP, as a
# starved process; its watch unbroken, shorter than its Lease) for a few seconds;
# shoot moves etcd-a from shoot--etcd-a to shoot--away (warden-webhook admits it); the cluster
# on another seed writes into shoot--etcd-a; shoot moves etcd-a back. The controller resumes and
# finds the same Etcd (same uid) on its entry's prefix. etcd-a is later deleted; past the grace
# period the entry's deletion must keep what the other seed wrote while etcd-a was away.
# Oracle: s3rver's listing of shoot--etcd-a.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
kill -STOP "$CTL_PID" && stopped=$CTL_PID; ksim_on_exit "kill -CONT $CTL_PID 2>/dev/null || true"
echo "controller paused; entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-600)"
kc -n shoot patch etcd etcd-a --type merge -p '{"spec":{"backup":{"store":{"prefix":"shoot--away"}}}}' >/dev/null ||
    { echo "held: the move away refused"; exit 0; }
echo "etcd-a moved to shoot--away (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')); entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.status.phase} {end}')"
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000501-00000600-1800000100.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys) while etcd-a was away"
sleep 1
out=$(kc -n shoot patch etcd etcd-a --type merge -p "{\"spec\":{\"backup\":{\"store\":{\"prefix\":\"$P\"}}}}" 2>&1) ||
    { echo "held: the move back refused: $out"; exit 0; }
echo "etcd-a moved back (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')); entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-700)"
kill -CONT "$stopped"
sleep 8
echo "after the pause: entry $E phase $(ctl_entry_phase "$E"); spec $(rel_entry_field "$E" '{.spec}' | cut -c1-900); entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.status.phase} {end}')"
sleep 1
rel_judge "$x_keys" "by the cluster on another seed while etcd-a was moved away (away and back while warden-controller was paused)" "$REL_OWN"
echo "attack26_move_paused_back: ok"
