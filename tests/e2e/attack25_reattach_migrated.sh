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
rel_judge "$x_keys" "by the cluster on another seed while etcd-a did not exist (between its first deletion and its re-creation)"
echo "attack25_reattach_migrated: ok"
