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
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--etcd-a
ignore() { # POLICY: the failurePolicy of the Etcd webhooks
    local k
    for k in validatingwebhookconfiguration mutatingwebhookconfiguration; do
        kc patch $k etcd-warden --type json -p "[{\"op\":\"replace\",\"path\":\"/webhooks/0/failurePolicy\",\"value\":\"$1\"}]" >/dev/null ||
            ctl_fail "cannot set failurePolicy $1 on $k etcd-warden"
    done
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

# etcd-a, its members and its namespace go
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
echo "entry $E: PendingDeletion, etcdLastAliveAt $(entry_field "$E" '{.spec.etcdLastAliveAt}')"
kc delete namespace shoot --wait=false >/dev/null || ctl_fail "cannot delete namespace shoot"
ksim_wait 30 ksim_gone namespace shoot || ctl_fail "namespace shoot stays"

# warden-webhook down, failurePolicy Ignore; a new owner makes namespace shoot and its cluster
ignore Ignore
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
ignore Fail
new_uid=$(kc -n shoot get etcd etcd-a -o jsonpath='{.metadata.uid}')
not_authorised() { ctl_events shoot etcd-a | grep -q NotAuthorised; }
ksim_wait 20 not_authorised || echo "no NotAuthorised event on the new etcd-a"
echo "the new namespace's etcd-a (uid $new_uid), events: $(ctl_events shoot etcd-a | tail -2 | tr '\n' '|')"
[ "$(entry_field "$E" '{.spec.etcd.uid}')" = "$old_uid" ] || {
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
ksim_wait 60 ksim_gone backupentry "$E" || echo "entry $E stays: $(entry_field "$E" '{.status.phase} {.status.message}')"
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
