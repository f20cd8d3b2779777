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
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
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

rel_stage "shoot" 15s
ctl_start
rel_written
E=$REL_E
old_uid=$(rel_entry_field "$E" '{.spec.etcd.uid}')

# etcd-a and its members go
rel_release

# within the 60 s: etcd-a again, with no secretRef
out=$(etcd_nosecret etcd-a $P) || { echo "held: etcd-a without secretRef refused at admission: $out"; ctl_stop; exit 0; }
sleep 3
new_uid=$(kc -n shoot get etcd etcd-a -o jsonpath='{.metadata.uid}')
echo "etcd-a created again without secretRef (uid $new_uid), events: $(ctl_events shoot etcd-a | tail -2 | tr '\n' '|')"
[ "$(rel_entry_field "$E" '{.spec.etcd.uid}')" = "$old_uid" ] || {
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
ksim_wait 60 ksim_gone backupentry "$E" || echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}')"
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
