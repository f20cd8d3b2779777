#!/usr/bin/env bash
# docs/backup-entries.md, T2: "a cluster that moved to another seed (Gardener's control plane
# migration) and writes on into the same prefix keeps what it wrote during the grace period".
# shoot/etcd-a (the bucket's credentials) writes its prefix and is deleted: its entry is
# PendingDeletion. During the grace period the cluster, now on another seed, writes on into the
# prefix (etcd-warden cannot see it). Within the grace period shoot re-creates etcd-a with the
# same name and store: it reattaches (docs: "the pending deletion cancelled ... its snapshots are
# where it left them"). Later etcd-a is deleted again and the grace period passes: the entry's
# deletion must keep what the other seed wrote while etcd-a did not exist.
# Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
rel_release
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000501-00000600-1800000100.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys) while etcd-a did not exist"
sleep 1
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" "$P"
ctl_members shoot etcd-a
ksim_wait 20 ctl_entry_phase_is "$E" Active || { echo "held: etcd-a not reattached: $(ctl_entry_phase "$E"); $(ctl_events shoot etcd-a | tail -2 | tr '\n' '|')"; ctl_jobs_stop; ctl_stop; exit 0; }
echo "etcd-a reattached: $E Active; spec $(kc get backupentry "$E" -o jsonpath='{.spec}' | cut -c1-600)"
sleep 3
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
echo "entry $E PendingDeletion again: spec $(kc get backupentry "$E" -o jsonpath='{.spec}' | cut -c1-700)"
ksim_wait 90 ksim_gone backupentry "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-500)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's reattached entry deleted $(echo $lost), written into \"$P\" by the cluster on another seed while etcd-a did not exist (between its first deletion and its re-creation)"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack25_reattach_migrated: ok"
