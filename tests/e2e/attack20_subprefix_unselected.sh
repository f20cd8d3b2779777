#!/usr/bin/env bash
# Two clusters that already overlapped when etcd-warden was installed, on a bucket whose
# namespaceSelector selects only one of their namespaces (docs/backup-entries.md: "An Etcd
# admitted before the bucket's selector (or before this release) keeps working and still
# counts in the one-prefix-one-cluster rule; it gets no entry"): shoot/etcd-a on
# "shoot--proj--a" (namespace selected, an entry) and other/etcd-l on
# "shoot--proj--a/etcd-events" (namespace not selected: no entry, "nothing of the operator's is
# ever deleted on its behalf"). etcd-l is deleted; its backups have no entry and stay. Then
# etcd-a is deleted, and its entry's Job runs delete-snapshots on "shoot--proj--a" with the
# bucket's credentials. The sidecar of that prefix writes only "shoot--proj--a/v2/...": the
# objects under "shoot--proj--a/etcd-events/v2/..." are the unselected namespace's cluster's
# ("a deletion Job deletes only what the deleted Etcd wrote").
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
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: s3}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: s3-bucket}
  deletionGracePeriod: 2s
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: s3}}
EOF
kc label namespace shoot etcd-warden.io/backups=s3 >/dev/null
# before etcd-warden judged Etcds: the two clusters as they were
kc delete validatingwebhookconfiguration etcd-warden >/dev/null || ctl_fail "cannot remove the Etcd webhook"
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" $PA
ctl_store_etcd other etcd-l aws "$SNAP_BUCKET" $PL
wh_register_etcd
ctl_members shoot etcd-a
ctl_members other etcd-l
ctl_jobs_serve etcd-warden
ctl_start
ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for shoot/etcd-a"
ctl_members_seen shoot etcd-a
EA=$(ctl_entry_of shoot etcd-a)
not_authorised() { ctl_events other etcd-l | grep -q NotAuthorised; }
ksim_wait 30 not_authorised || ctl_fail "no NotAuthorised event on other/etcd-l: $(ctl_events other etcd-l)"
ctl_has_entry other etcd-l && ctl_fail "other/etcd-l, of a namespace the bucket does not select, has an entry"
echo "other/etcd-l: $(ctl_events other etcd-l | grep NotAuthorised | head -1 | cut -c1-200)"
sleep 1
snap_s3 put "$PA/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$PL/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$PL/v2/Incr-00000101-00000200-1700000100.gz" "$SNAP_WORK/obj"
l_keys=$(snap_s3 ls "$PL/" | sort)
echo "etcd-l's snapshots: $(echo $l_keys)"

# etcd-l goes; it has no entry, its snapshots stay
kc -n other delete pod etcd-l-0 --grace-period=0 >/dev/null 2>&1
kc -n other delete statefulset etcd-l >/dev/null 2>&1
kc -n other delete etcd etcd-l >/dev/null || ctl_fail "cannot delete etcd-l"
sleep 5
expect "etcd-l's snapshots once it is deleted" "$l_keys" "$(snap_s3 ls "$PL/" | sort)"
echo "held: etcd-l deleted, its snapshots stay"

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
    echo "HOLE: the deletion of shoot/etcd-a's entry (prefix $PA) deleted other/etcd-l's $(echo $lost), written by a cluster of a namespace the bucket does not select, which etcd-a's sidecar never writes"
    exit 1
fi
echo "held: other/etcd-l's snapshots stay"
echo "attack20_subprefix_unselected: ok"
