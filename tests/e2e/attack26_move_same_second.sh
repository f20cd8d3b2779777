#!/usr/bin/env bash
# docs/backup-entries.md, T1: "An entry reattached (... an Etcd that moved away and back ...) gets
# spec.reattachedAt, and T1 is no earlier: between its release and the reattachment the prefix had
# no owner here ... so it stays"; object times have seconds, T1 and T2 too ([T1, T2] inclusive).
# A move away and back within one second, warden-controller running normally: shoot moves etcd-a
# from shoot--etcd-a to shoot--away, the cluster on another seed writes into shoot--etcd-a at once,
# and shoot moves etcd-a back, all within the same second. etcd-a is later deleted; past the grace
# period the entry's deletion must keep what the other seed wrote while etcd-a was away.
# Oracle: s3rver's listing of shoot--etcd-a.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
sleep 2
# start just after a second turns
while [ "$(date +%N | cut -c1-2)" -gt 10 ]; do sleep 0.01; done
t0=$(date -u +%T.%N)
kc -n shoot patch etcd etcd-a --type merge -p '{"spec":{"backup":{"store":{"prefix":"shoot--away"}}}}' >/dev/null ||
    { echo "held: the move away refused"; exit 0; }
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
out=$(kc -n shoot patch etcd etcd-a --type merge -p "{\"spec\":{\"backup\":{\"store\":{\"prefix\":\"$P\"}}}}" 2>&1) ||
    { echo "held: the move back refused: $out"; exit 0; }
t1=$(date -u +%T.%N)
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "away at $t0, the other seed wrote $(echo $x_keys), back by $t1"
sleep 8
echo "entry $E phase $(ctl_entry_phase "$E"); spec $(rel_entry_field "$E" '{.spec}' | cut -c1-900); entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.status.phase} {end}')"
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
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written into \"$P\" by the cluster on another seed while etcd-a was moved away (away and back within one second, warden-controller running)"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack26_move_same_second: ok"
