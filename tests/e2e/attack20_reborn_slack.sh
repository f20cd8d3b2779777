#!/usr/bin/env bash
# A namespace deleted and created again is another owner (docs/backup-entries.md): an Etcd of
# the new namespace on the old cluster's prefix is refused by warden-webhook, and one the
# webhook did not judge (created while it was down, failurePolicy Ignore) is not reattached by
# warden-controller: "the entry stays its predecessor's, pending, its deletion held back while
# the new Etcd's prefix overlaps it". The new namespace's cluster has its own Secret and writes
# its first snapshots there within 60 s of the old Etcd's deletion, inside the old entry's
# deletion window ("--written-before 60 s after spec.etcdLastAliveAt"). Once the new cluster
# moves to another prefix, the old entry's Job deletes the new owner's snapshots with the old
# owner's: a deletion on behalf of one owner of objects another owner wrote.
# Oracle: s3rver's listing of the prefix before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P

rel_stage "shoot" 15s
ctl_start
rel_written
E=$REL_E
old_uid=$(rel_entry_field "$E" '{.spec.etcd.uid}')

# etcd-a, its members and its namespace go
rel_release
kc delete namespace shoot --wait=false >/dev/null || ctl_fail "cannot delete namespace shoot"
ksim_wait 30 ksim_gone namespace shoot || ctl_fail "namespace shoot stays"

# warden-webhook down, failurePolicy Ignore; a new owner makes namespace shoot and its cluster
rel_policy Ignore
wh_stop
ctl_namespace shoot
out=$(kc apply -f - 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-a, namespace: shoot}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: aws, container: $SNAP_BUCKET, prefix: "$P", secretRef: {name: etcd-backup}}}
EOF
) || { echo "held: the new namespace's etcd-a refused with the webhook down: $out"; ctl_stop; exit 0; }
# shellcheck disable=SC2046
wh_start $(druid_webhook_flags) ${CTL_WEBHOOK_FLAGS:-} --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
rel_policy Fail
new_uid=$(kc -n shoot get etcd etcd-a -o jsonpath='{.metadata.uid}')
not_authorised() { ctl_events shoot etcd-a | grep -q NotAuthorised; }
ksim_wait 20 not_authorised || echo "no NotAuthorised event on the new etcd-a"
echo "the new namespace's etcd-a (uid $new_uid), events: $(ctl_events shoot etcd-a | tail -2 | tr '\n' '|')"
[ "$(rel_entry_field "$E" '{.spec.etcd.uid}')" = "$old_uid" ] || {
    echo "HOLE: the new namespace's etcd-a took over the old namespace's entry $E"; ctl_stop; exit 1; }
# its sidecar's first snapshots (written after the predecessor was gone, inside its window)
snap_s3 put "$P/v2/Full-00000101-00000200-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000201-00000300-1800000100.gz" "$SNAP_WORK/obj"
new_keys=$(snap_s3 ls "$P/v2/" | grep -- '-1800000' | sort)
echo "written by the new namespace's etcd-a: $(echo $new_keys)"
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
    echo "HOLE: the deletion of Etcd shoot/etcd-a's (uid $old_uid) entry deleted $(echo $lost) written by the new namespace's etcd-a (uid $new_uid, not reattached, another owner) within 60 s of its deletion"
    exit 1
fi
echo "held: the new etcd-a's snapshots stay"
echo "attack20_reborn_slack: ok"
