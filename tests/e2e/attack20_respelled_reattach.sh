#!/usr/bin/env bash
# An Etcd deleted and created again within its bucket's grace period, in the same namespace,
# with the same name and the same store spelled another way (docs/backup-entries.md: "aws, S3
# and s3 are the same provider"; the prefix canonical as
# path.Clean makes it: "./P/", "P//", "/P"), reattaches to its entry: the uid is updated and
# nothing of the prefix is deleted past the grace period while it lives. Each spelling in
# turn: created again, its sidecar writes, deleted again. Oracle: s3rver's listing of the
# prefix while the re-created Etcd lives, past the grace period.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--etcd-a
holes=0
etcd_store() { # STORE (YAML flow map without container and secretRef)
    kc apply -f - 2>&1 <<EOT
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-a, namespace: shoot}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {container: $SNAP_BUCKET, secretRef: {name: etcd-backup}, $1}}
EOT
}
entry_uid() { kc get backupentry "$E" -o jsonpath='{.spec.etcd.uid}' 2>/dev/null; }
gone() { # etcd-a and its members
    kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
    kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
    kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
    ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
}
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
ctl_s3_bucket_secret
ctl_namespace shoot
ctl_s3_bucket 6s
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" $P
ctl_members shoot etcd-a
ctl_jobs_serve etcd-warden
ctl_start
ksim_wait 20 ctl_has_entry shoot etcd-a || ctl_fail "no entry for etcd-a"
ctl_members_seen shoot etcd-a
E=$(ctl_entry_of shoot etcd-a)
sleep 1
n=0
snap_s3 put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
# the last spelling's sidecar may write another service (an endpointOverride that is not the
# one the bucket's deletions use): it is not reattached (NotAuthorised), and the entry, pending,
# deletes nothing while its prefix is claimed
for spelling in "reattach|provider: S3, prefix: ./$P/" \
    "reattach|provider: s3, prefix: $P//, endpointOverride: $SNAP_S3_URL" \
    "refuse|provider: stackit, prefix: /$P, endpointOverride: http://elsewhere.example:9000/"; do
    expect=${spelling%%|*} spelling=${spelling#*|}
    gone
    out=$(etcd_store "$spelling") || ctl_fail "etcd-a ($spelling) refused: $out"
    uid=$(kc -n shoot get etcd etcd-a -o jsonpath='{.metadata.uid}')
    reattached() { [ "$(entry_uid)" = "$uid" ]; }
    refused() { ctl_events shoot etcd-a | grep -q "NotAuthorised: .*endpointOverride"; }
    if [ "$expect" = reattach ] && ! ksim_wait 30 reattached; then
        echo "HOLE: etcd-a created again as {$spelling} not reattached to $E: $(ctl_events shoot etcd-a | tail -2 | tr '\n' '|')"
        holes=$((holes + 1))
    elif [ "$expect" = refuse ] && { ! ksim_wait 30 refused || reattached; }; then
        ctl_fail "etcd-a {$spelling}: no NotAuthorised event, or reattached: $(ctl_events shoot etcd-a | tail -2 | tr '\n' '|')"
    fi
    ctl_members shoot etcd-a
    n=$((n + 1))
    snap_s3 put "$P/v2/Full-00000000-0000010$n-180000000$n.gz" "$SNAP_WORK/obj"
    keys=$(snap_s3 ls "$P/" | sort)
    sleep 10 # past the grace period
    if [ "$(snap_s3 ls "$P/" | sort)" != "$keys" ] || [ -z "$(kc get backupentry "$E" -o name 2>/dev/null)" ]; then
        echo "HOLE: with etcd-a {$spelling} alive, $E $(ctl_entry_phase "$E"), left: $(snap_s3 ls "$P/" | tr '\n' ' ')"
        holes=$((holes + 1))
    else echo "held: {$spelling}: $([ "$expect" = reattach ] && echo reattached || echo "not reattached, NotAuthorised") ($(ctl_entry_phase "$E")), $(echo "$keys" | wc -l) snapshots kept past the grace period"; fi
done
ctl_stop
[ "$holes" = 0 ] || exit 1
echo "attack20_respelled_reattach: ok"
