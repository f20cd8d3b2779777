#!/usr/bin/env bash
# The 60 s after a deleted Etcd was last known alive ("its members' last uploads") are in its
# entry's deletion window. An Etcd of the same namespace and name created again within those
# 60 s that is NOT reattached (docs/backup-entries.md: "without credentials ... it is not
# reattached to its predecessor's entry"; an Etcd without secretRef, whose sidecar writes with
# the credentials the pod already has: web identity, an instance profile) writes its first
# snapshots into the prefix inside that window. The entry stays its predecessor's, "its
# deletion held back while the new Etcd's prefix overlaps it". Then the new Etcd moves to
# another prefix (or is deleted): the predecessor's entry is deleted, and its Job deletes what
# was written in its window, the new cluster's first snapshots included, although that cluster
# never had an entry and never authorised a deletion (provenance: "a deletion Job deletes only
# what the deleted Etcd wrote").
# Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--etcd-a
etcd_nosecret() { # NAME PREFIX: an Etcd with no secretRef
    kc apply -f - 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $1, namespace: shoot}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: aws, container: $SNAP_BUCKET, prefix: "$2"}}
EOF
}
entry_field() { kc get backupentry "$1" -o jsonpath="$2" 2>/dev/null; }

CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot
ctl_s3_bucket 15s
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" $P
ctl_members shoot etcd-a
ctl_jobs_serve etcd-warden
ctl_start
ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for etcd-a"
ctl_members_seen shoot etcd-a
E=$(ctl_entry_of shoot etcd-a)
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
old_uid=$(entry_field "$E" '{.spec.etcd.uid}')

# etcd-a and its members go
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
echo "entry $E: PendingDeletion, etcdLastAliveAt $(entry_field "$E" '{.spec.etcdLastAliveAt}')"

# within the 60 s: etcd-a again, with no secretRef
out=$(etcd_nosecret etcd-a $P) || { echo "held: etcd-a without secretRef refused at admission: $out"; ctl_stop; exit 0; }
sleep 3
new_uid=$(kc -n shoot get etcd etcd-a -o jsonpath='{.metadata.uid}')
echo "etcd-a created again without secretRef (uid $new_uid), events: $(ctl_events shoot etcd-a | tail -2 | tr '\n' '|')"
[ "$(entry_field "$E" '{.spec.etcd.uid}')" = "$old_uid" ] || {
    echo "held: the new etcd-a was reattached (the entry is now its own)"; ctl_stop; exit 0; }
# its sidecar's first snapshots (written after the predecessor was gone, inside its window)
snap_s3 put "$P/v2/Full-00000101-00000200-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000201-00000300-1800000100.gz" "$SNAP_WORK/obj"
new_keys=$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)
echo "written by the new etcd-a: $(echo $new_keys)"
sleep 20 # past the grace period: held while the new etcd-a claims the prefix
[ -n "$(kc get backupentry "$E" -o name 2>/dev/null)" ] || ctl_fail "$E went while the new etcd-a claims its prefix"
expect "the new etcd-a's snapshots while it is on the prefix" "$new_keys" "$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)"
echo "held: the predecessor's deletion waits while the new etcd-a is on the prefix"

# the new etcd-a moves to another prefix
kc -n shoot patch etcd etcd-a --type merge -p '{"spec":{"backup":{"store":{"prefix":"moved/etcd-a"}}}}' >/dev/null ||
    ctl_fail "cannot move the new etcd-a"
ksim_wait 60 ksim_gone backupentry "$E" || echo "entry $E stays: $(entry_field "$E" '{.status.phase} {.status.message}')"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_stop
lost=$(comm -23 <(echo "$new_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of Etcd shoot/etcd-a's (uid $old_uid) entry deleted $(echo $lost) written by the Etcd created again (uid $new_uid, not reattached, no entry) within 60 s of its deletion"
    exit 1
fi
echo "held: the new etcd-a's snapshots stay"
echo "attack20_reattach_slack: ok"
