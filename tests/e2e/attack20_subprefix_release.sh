#!/usr/bin/env bash
# Two clusters that already overlapped when etcd-warden was installed (docs/backup-entries.md:
# "Etcds that already shared or overlapped a prefix when etcd-warden was installed keep
# working"): shoot/etcd-a on "shoot--proj--a" and other/etcd-l on "shoot--proj--a/etcd-events",
# an entry each, both flagged. etcd-l is deleted; its entry waits (etcd-a overlaps it). The
# operator keeps etcd-l's backups: "kubectl delete backupentry releases the prefix: the backups
# that are left stay". Then etcd-a is deleted, and its entry's Job runs delete-snapshots on
# "shoot--proj--a". The sidecar of that prefix writes only "shoot--proj--a/v2/..."; the objects
# under "shoot--proj--a/etcd-events/v2/..." are etcd-l's ("a deletion Job deletes only what the
# deleted Etcd wrote"; "an object of another prefix that the sidecar's listing returns with it
# is never deleted").
# Oracle: s3rver's listing before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

PA=shoot--proj--a
PL=shoot--proj--a/etcd-events
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot other
ctl_s3_bucket 2s
# before etcd-warden judged Etcds: the two clusters as they were
kc delete validatingwebhookconfiguration etcd-warden >/dev/null || ctl_fail "cannot remove the Etcd webhook"
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" $PA
ctl_store_etcd other etcd-l aws "$SNAP_BUCKET" $PL
wh_register_etcd
ctl_members shoot etcd-a
ctl_members other etcd-l
ctl_jobs_serve etcd-warden
ctl_start
for e in shoot/etcd-a other/etcd-l; do
    ksim_wait 20 ctl_has_entry "${e%/*}" "${e#*/}" || ctl_fail "no entry for $e"
    ctl_members_seen "${e%/*}" "${e#*/}"
done
EA=$(ctl_entry_of shoot etcd-a) EL=$(ctl_entry_of other etcd-l)
sleep 1
snap_s3 put "$PA/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$PL/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$PL/v2/Incr-00000101-00000200-1700000100.gz" "$SNAP_WORK/obj"
l_keys=$(snap_s3 ls "$PL/" | sort)
echo "etcd-l's snapshots: $(echo $l_keys)"

# etcd-l goes; its entry waits for etcd-a
kc -n other delete pod etcd-l-0 --grace-period=0 >/dev/null 2>&1
kc -n other delete statefulset etcd-l >/dev/null 2>&1
kc -n other delete etcd etcd-l >/dev/null || ctl_fail "cannot delete etcd-l"
ksim_wait 20 ctl_entry_phase_is "$EL" PendingDeletion || ctl_fail "$EL: $(ctl_entry_phase "$EL")"
sleep 5
expect "etcd-l's snapshots while etcd-a overlaps them" "$l_keys" "$(snap_s3 ls "$PL/" | sort)"
# the operator keeps them
kc delete backupentry "$EL" --timeout=30s >/dev/null || ctl_fail "cannot delete $EL"
ksim_wait 30 ksim_gone backupentry "$EL" || ctl_fail "$EL stays"
expect "etcd-l's snapshots once its entry is released" "$l_keys" "$(snap_s3 ls "$PL/" | sort)"
echo "held: etcd-l's entry released by the operator, its snapshots stay"

# etcd-a goes; its entry is deleted with its backups
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 90 ksim_gone backupentry "$EA" || echo "entry $EA stays: $(kc get backupentry "$EA" -o jsonpath='{.status.phase} {.status.message}')"
echo "events of $EA: $(ctl_events default "$EA" | tail -3 | tr '\n' '|' | cut -c1-400)"
left=$(snap_s3 ls "$PL/" | sort)
echo "left under $PA: $(snap_s3 ls "$PA" | tr '\n' ' ')"
ctl_stop
lost=$(comm -23 <(echo "$l_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry (prefix $PA) deleted other/etcd-l's $(echo $lost), which etcd-a's sidecar never writes and the operator kept"
    exit 1
fi
echo "held: other/etcd-l's snapshots stay"
echo "attack20_subprefix_release: ok"
