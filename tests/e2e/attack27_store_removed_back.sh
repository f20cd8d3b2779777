#!/usr/bin/env bash
# docs/backup-entries.md, T1/T2: "warden-webhook, when it admits an UPDATE that changes anything
# of an Etcd's spec.backup.store (no dry run), writes its time into the entries of the earlier
# and the new prefix that record this Etcd, as spec.etcdStoreChangedAt"; "Nor is T2 later than
# spec.etcdStoreChangedAt". A store *removed* is a change of spec.backup.store too: etcd-druid
# renders an Etcd without a store with a sidecar that writes nothing, so the prefix has no
# writer of this Etcd meanwhile.
# warden-controller is paused (SIGSTOP, as a starved process); shoot removes etcd-a's
# spec.backup.store (a JSON patch), the cluster on another seed writes into shoot--etcd-a, and
# shoot puts the store back. The controller resumes and finds the same Etcd on its entry's
# prefix. etcd-a is later deleted; past the grace period the entry's deletion must keep what the
# other seed wrote while etcd-a had no store. Oracle: s3rver's listing of shoot--etcd-a.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
kill -STOP "$CTL_PID" && stopped=$CTL_PID; ksim_on_exit "kill -CONT $CTL_PID 2>/dev/null || true"
echo "controller paused; entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-600)"
out=$(kc -n shoot patch etcd etcd-a --type json -p '[{"op":"remove","path":"/spec/backup/store"}]' 2>&1) ||
    { kill -CONT "$stopped"; echo "held: the store removal refused: $out"; exit 0; }
echo "etcd-a without a store (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')); entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.status.phase} {end}')"
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000501-00000600-1800000100.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys) while etcd-a had no store"
sleep 1
out=$(kc -n shoot patch etcd etcd-a --type merge -p "{\"spec\":{\"backup\":{\"store\":{\"provider\":\"aws\",\"container\":\"$SNAP_BUCKET\",\"prefix\":\"$P\",\"secretRef\":{\"name\":\"etcd-backup\"}}}}}" 2>&1) ||
    { kill -CONT "$stopped"; echo "held: the store put back refused: $out"; exit 0; }
echo "etcd-a store back (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')); entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-700)"
kill -CONT "$stopped"
sleep 8
echo "after the pause: entry $E phase $(ctl_entry_phase "$E"); spec $(rel_entry_field "$E" '{.spec}' | cut -c1-900); entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.status.phase} {end}')"
sleep 1
rel_judge "$x_keys" "by the cluster on another seed while etcd-a had no store (removed and put back while warden-controller was paused)"
echo "attack27_store_removed_back: ok"
