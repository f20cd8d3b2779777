#!/usr/bin/env bash
# A container name with a "/" is admitted as a store of its own, but it is not one: the S3
# client of warden-snapshot (path style: <endpoint>/<bucket>/<key>, the bucket not escaped)
# and etcd-backup-restore's Swift client (gophercloud ServiceURL joins container and object
# with "/", unescaped) address bucket "b", key "t/..." for container "b/t". Namespace evil,
# which BackupBucket shared's namespaceSelector does not select, asks for an EtcdBackup of its
# own Etcd into {container: "<bucket>/team2", prefix: etcd-main}: refused with the container
# spelled as the bucket and the prefix "team2/etcd-main" (not selected), admitted this way
# (store "Object|<bucket>/team2|", which no BackupBucket owns and no claim overlaps). The copy
# Job then writes evil's full snapshot to team2/etcd-main/v2/ in the operator's bucket: the
# live prefix of team2's Etcd, whose next restore takes that newer full snapshot and brings
# up evil's data. Wanted: a container no provider accepts as a bucket name refused at
# admission (fail closed; etcd-druid 5b90b4a7, #1390, now allows an Etcd's container only as
# ^[a-zA-Z0-9][a-zA-Z0-9._-]{1,61}[a-zA-Z0-9]$), or the store keyed as the client addresses it.
# An EtcdBackupSchedule's destination and an EtcdRestore's target take such a container too.
# Oracle: s3rver's listing of the bucket.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

NS=evil
backup() { # name container prefix
    kc apply -f - <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1, namespace: $NS}
spec:
  etcdName: etcd-main
  destination: {provider: S3, container: "$2", prefix: "$3", secretRef: {name: etcd-backup}}
EOF
}
status() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
task_state_is() { [ "$(jp "$NS" "etcdopstask/$1" '{.status.state}' 2>/dev/null)" = "$2" ]; }
has_job() { kc -n "$NS" get job "$1" >/dev/null 2>&1; }
creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}

snap_s3_start
snap_s3_bucket evil-bucket
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p '{"spec":{"backup":{"store":{"container":"evil-bucket","prefix":"evil/etcd-main"}}}}' >/dev/null
creds "$NS"
kc create namespace team2 >/dev/null
kc label namespace team2 etcd-warden.io/backups=shared >/dev/null
creds team2
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
druid_double_for "$NS" etcd-main
ctl_start
ctl_store_etcd team2 etcd-main S3 "$SNAP_BUCKET" team2/etcd-main || ctl_fail "team2's Etcd refused"
# team2's own backups, as its sidecar wrote them
snap_fixture "$SNAP_WORK/t2" 4096 Full-00000000-00000100-1700000000.gz
snap_s3 put team2/etcd-main/v2/Full-00000000-00000100-1700000000.gz "$SNAP_WORK/t2"

if out=$(backup ref "$SNAP_BUCKET" team2/etcd-main 2>&1); then
    ctl_fail "the reference, evil's copy into team2/etcd-main of the bucket, admitted: $out"
fi
grep -q -e 'namespace evil is not selected' -e 'is not namespace evil'"'"'s' <<<"$out" || ctl_fail "reference refused for another reason: $out"
ok "evil's copy into the bucket, container spelled as it is, is refused"

if ! out=$(backup b "$SNAP_BUCKET/team2" etcd-main 2>&1); then
    ok "a container with a \"/\" is refused: ${out:0:240}"
    ctl_stop
    echo "attack4_container_slash: ok"
    exit 0
fi
echo "admitted: $out"
ksim_wait 30 task_state_is b Succeeded ||
    ctl_fail "task b: $(kc -n "$NS" get etcdopstask b -o jsonpath='{.status}' 2>&1); backup: $(status b phase) $(status b error)"
snap=$(jp "$NS" etcdopstask/b '{.status.lastOperation.description}' | sed -n 's/^full snapshot \(Full-[^ ]*\) taken.*/\1/p')
[ -n "$snap" ] || ctl_fail "no snapshot name in task b"
ksim_wait 30 has_job b--copy || ctl_fail "no copy Job: $(status b phase) $(status b error)"
snap_fixture "$SNAP_WORK/evil" 4096 "$snap"
SNAP_BUCKET=evil-bucket snap_s3 put "evil/etcd-main/v2/$snap" "$SNAP_WORK/evil"
ctl_jobs_serve "$NS"
done_() { [ "$(status b phase)" = Completed ] || [ "$(status b phase)" = Failed ]; }
ksim_wait 60 done_ || true
listing=$(snap_s3 ls team2/etcd-main/ | tr "\n" " ")
echo "team2/etcd-main/ holds: $listing (backup b: $(status b phase) $(status b error))"
if grep -qF "team2/etcd-main/v2/$snap" <<<"$listing"; then
    ctl_fail "HOLE: namespace evil (not selected by BackupBucket shared) wrote its snapshot $snap into team2/etcd-main/v2/ of bucket $SNAP_BUCKET, the live prefix of team2/etcd-main, through an EtcdBackup destination container \"$SNAP_BUCKET/team2\": team2's next restore takes evil's newer full snapshot"
fi
ok "nothing of evil's in team2's prefix"
ctl_stop
echo "attack4_container_slash: ok"
