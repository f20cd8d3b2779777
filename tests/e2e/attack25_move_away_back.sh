#!/usr/bin/env bash
# docs/backup-entries.md: "An Etcd that moves to another prefix leaves its old entry pending"; a
# deletion deletes "only the ones written while the entry's Etcd claimed the prefix". tenant's
# etcd-x (a copy of the bucket's Secret, so it holds the credentials the whole time) runs on
# $TENANT_P, the prefix of a cluster that lives on another seed. tenant moves etcd-x to
# ${TENANT_P%/*}/away; while it is away the other seed's cluster writes into $TENANT_P; within the
# grace period tenant moves etcd-x back (its old entry reattached). Then etcd-x is deleted: the
# entry's deletion must keep what the other seed wrote while etcd-x claimed another prefix.
# Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/tenant.sh"

tenant_stage
tenant_holding
ctl_s3_bucket 30s
tenant_before
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
tenant_run "its Secret a copy of the bucket's"
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "${TENANT_P%/*}/away"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E not pending after the move: $(ctl_entry_phase "$E")"
echo "moved away: $E $(ctl_entry_phase "$E"); spec $(kc get backupentry "$E" -o jsonpath='{.spec}' | cut -c1-500)"
sleep 1
tenant_others_write
sleep 1
ctl_store_etcd tenant etcd-x aws "$SNAP_BUCKET" "$TENANT_P"
ksim_wait 20 ctl_entry_phase_is "$E" Active || { echo "held: $E not reattached: $(ctl_entry_phase "$E") $(ctl_events tenant etcd-x | tail -2 | tr '\n' '|')"; ctl_jobs_stop; ctl_stop; exit 0; }
echo "moved back: $E $(ctl_entry_phase "$E"); spec $(kc get backupentry "$E" -o jsonpath='{.spec}' | cut -c1-600)"
sleep 2
tenant_judge "they were written while etcd-x claimed ${TENANT_P%/*}/away" attack25_move_away_back
