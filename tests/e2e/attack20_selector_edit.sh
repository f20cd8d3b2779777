#!/usr/bin/env bash
# A BackupBucket's namespaceSelector edited while entries exist (docs/backup-entries.md: "An
# entry whose namespace still exists but is no longer selected is not deleted"). shoot/etcd-a
# has an entry and snapshots; the owner stops selecting namespace shoot (the label removed,
# then the selector changed to another label); etcd-a is deleted and the grace period passes:
# its snapshots must stay while shoot is not selected, and no other namespace may claim the
# prefix meanwhile (the entry still holds it), respelled or not. Selected again, the deletion
# goes on as the grace period says. Oracle: s3rver's listing.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--etcd-a
bucket() { # SELECTOR-VALUE
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply BackupBucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: s3}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: s3-bucket}
  deletionGracePeriod: 3s
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: $1}}
EOF
}
etcd() { # NS NAME PROVIDER PREFIX
    kc apply -f - 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: $3, container: $SNAP_BUCKET, prefix: "$4", secretRef: {name: etcd-backup}}}
EOF
}
holes=0
refused() { # NS NAME PROVIDER PREFIX
    local out
    if out=$(etcd "$@"); then
        echo "HOLE: $1/$2 $3 \"$4\" admitted on the prefix of an entry kept for namespace shoot"
        kc -n "$1" delete etcd "$2" >/dev/null 2>&1
        holes=$((holes + 1))
    else echo "held: $1/$2 $3 \"$4\" refused: $(echo "$out" | tail -1 | sed 's/.*denied the request: //' | cut -c1-150)"; fi
}
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot other
kc label namespace shoot etcd-warden.io/backups=s3 >/dev/null
kc label namespace other etcd-warden.io/backups=s3 >/dev/null
bucket s3
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" $P
ctl_members shoot etcd-a
ctl_jobs_serve etcd-warden
ctl_start
ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for etcd-a"
ctl_members_seen shoot etcd-a
E=$(ctl_entry_of shoot etcd-a)
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000101-00000200-1700000100.gz" "$SNAP_WORK/obj"
a_keys=$(snap_s3 ls "$P/" | sort)

# the owner stops selecting shoot: first the label, then the selector itself
kc label namespace shoot etcd-warden.io/backups- >/dev/null
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
sleep 8
kc label namespace other etcd-warden.io/backups=s4 --overwrite >/dev/null
bucket s4
sleep 8
if [ "$(snap_s3 ls "$P/" | sort)" != "$a_keys" ]; then
    echo "HOLE: etcd-a's snapshots deleted while namespace shoot is not selected: left $(snap_s3 ls "$P/" | tr '\n' ' ')"
    holes=$((holes + 1))
else
    echo "held: past the grace period, shoot not selected: $E $(ctl_entry_phase "$E"), snapshots kept ($(kc get backupentry "$E" -o jsonpath='{.status.conditions[0].message}' | cut -c1-160))"
fi
refused other etcd-x aws "$P"
refused other etcd-x S3 "./$P/x"
refused other etcd-x aws "shoot--etcd-"
refused shoot etcd-b aws "$P/b"

# selected again: the deletion goes on
kc label namespace shoot etcd-warden.io/backups=s4 >/dev/null
ksim_wait 60 ksim_gone backupentry "$E" || echo "entry $E stays once shoot is selected again: $(kc get backupentry "$E" -o jsonpath='{.status.phase} {.status.message}' | cut -c1-200)"
echo "once selected again: left under $P: $(snap_s3 ls "$P/" | tr '\n' ' ')"
ctl_stop
[ "$holes" = 0 ] || exit 1
echo "attack20_selector_edit: ok"
