#!/usr/bin/env bash
# A restore's source is checked at admission: spec.source.store is refused when the restore's
# namespace could not claim it (docs/backups-and-restores.md, "A restore's source is checked
# too"). BackupBucket shared owns the bucket with prefixScope Namespace; team2's Etcd backs up
# to team2/etcd (its full snapshot in the store, as its sidecar wrote it). Namespace team's
# restore from source.store team2/etcd is refused (the reference). team then applies a
# restore whose source is an EtcdBackup "later" that does not exist yet (the controller waits a
# minute for one applied with the restore; nothing to check at admission) and whose target is
# its own team/r, and UPDATEs the source to {store: team2/etcd}. Admitted: the controller's copy
# reads team2's prefix and writes team2's full snapshot (its cluster's data, Secrets included)
# into team/r, and team's new Etcd on it restores team2's data; while it is Pending or Copying
# the restore also holds back the deletion of team2's entry. A backup handed to another tenant.
# Wanted: an UPDATE of the source is checked as a CREATE's is (or the source is immutable).
# Oracle: kubectl's answers, the copy Job's arguments, s3rver's listing.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
restore() { # name source
    kc apply -f - <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $1, namespace: team}
spec:
  source: $2
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: $1-back, store: {provider: S3, container: $SNAP_BUCKET, prefix: team/$1, secretRef: {name: etcd-backup}}}
EOF
}
job_args() { kc -n team get job r--restore -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
phase() { jp team etcdrestore/r '{.status.phase}'; }
STORE="{provider: S3, container: $SNAP_BUCKET, prefix: team2/etcd, secretRef: {name: etcd-backup}}"

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace team team2
for n in team team2; do
    creds $n
    kc label namespace $n etcd-warden.io/backups=shared >/dev/null
done
ctl_backup_secret etcd-warden creds
kc apply -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: creds}
  deletionGracePeriod: 1h
  prefixScope: Namespace
  namespaceSelector: {matchLabels: {etcd-warden.io/backups: shared}}
EOF
wh_register_backups
ctl_start
ctl_store_etcd team2 etcd S3 "$SNAP_BUCKET" team2/etcd
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_s3 put "team2/etcd/v2/$snap" "$SNAP_WORK/full"

if out=$(restore direct "{store: $STORE}" 2>&1); then
    ctl_fail "the reference case, a restore from team2's prefix, admitted: $out"
fi
ok "reference: team's restore from team2/etcd is refused: ${out:0:160}"

out=$(restore r "{backupName: later}" 2>&1) || ctl_fail "the restore from a later EtcdBackup refused: $out"
ok "team's restore r (source: an EtcdBackup not applied yet) is admitted"
if ! out=$(kc -n team patch etcdrestore r --type merge \
    -p "{\"spec\":{\"source\":{\"backupName\":null,\"store\":{\"provider\":\"S3\",\"container\":\"$SNAP_BUCKET\",\"prefix\":\"team2/etcd\",\"secretRef\":{\"name\":\"etcd-backup\"}}}}}" 2>&1); then
    ok "the UPDATE of the source to team2/etcd is refused: ${out:0:240}"
    ctl_stop
    echo "attack5_restore_source_update: ok"
    exit 0
fi
ok "the UPDATE of r's source to team2/etcd was admitted"
ctl_jobs_serve team
over() { [ -n "$(job_args)" ] || case $(phase) in Completed | Failed) true ;; *) false ;; esac; }
ksim_wait 90 over || true
args=$(job_args)
done_() { case $(phase) in Completed | Failed) true ;; *) false ;; esac; }
ksim_wait 90 done_ || true
left=$(snap_s3 ls team/r/ | tr '\n' ' ')
if grep -qF "team/r/v2/$snap" <<<"$left"; then
    ctl_fail "HOLE: namespace team UPDATEd its EtcdRestore r's source to team2/etcd (namespace team2's part of BackupBucket shared, prefixScope Namespace; the same source is refused at CREATE); the copy wrote team2's full snapshot into team/r (listing: $left; restore $(phase), Etcd $(jp team etcd/r-back '{.spec.backup.store.prefix}' 2>/dev/null || echo none))"
fi
if grep -q -- '--from-store-prefix=team2/etcd' <<<"$args"; then
    ctl_fail "HOLE: namespace team UPDATEd its EtcdRestore r's source to team2/etcd (refused at CREATE) and the controller's copy Job reads it: $args (restore $(phase))"
fi
ok "the source moved by an UPDATE is not read (restore $(phase): $(jp team etcdrestore/r '{.status.error}' | cut -c1-160); listing: ${left:-empty})"
ctl_stop
echo "attack5_restore_source_update: ok"
