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
rel_judge "$x_keys" "by the cluster on another seed while etcd-a was moved away (away and back within one second, warden-controller running)" "$REL_OWN"
echo "attack26_move_same_second: ok"
