#!/usr/bin/env bash
# An EtcdBackup with deletionPolicy Retain leaves its copy when it is deleted
# (docs/backups-and-restores.md), and its claim (status.destination) goes with the object. The
# copy is a full snapshot of the cluster (its data, Secrets included) in etcd-backup-restore's
# layout, the newest full snapshot of that prefix. Namespace shoot takes EtcdBackup b of its
# etcd-main into copies--r (Retain), then deletes b: the copy stays, unclaimed. Namespace other
# then applies an Etcd on copies--r: admitted, and its sidecar's first start restores shoot's
# data from the copy. A backup handed to another tenant (the same class as a failed restore's
# leftovers, attack4_restore_leftovers, on another path). Wanted: a retained copy keeps its
# prefix claimed for its namespace while it is there, or another namespace's claim of a prefix
# holding snapshots is refused. Oracle: s3rver's listing and kubectl's answer.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
NS=shoot
P=copies--r

status() { jp "$NS" etcdbackup/b "{.status.$1}"; }
job_args() { kc -n "$NS" get job b--copy -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
has_job() { [ -n "$(job_args)" ]; }
phase_is() { [ "$(status phase)" = "$1" ]; }
gone() { ! kc -n "$NS" get etcdbackup b >/dev/null 2>&1; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc create namespace other >/dev/null
for n in "$NS" other; do
    kc -n "$n" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
done
druid_double_for "$NS" etcd-main
wh_register_backups
ctl_start

kc apply -f - >/dev/null <<EOF || ctl_fail "EtcdBackup b refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: $NS}
spec:
  etcdName: etcd-main
  deletionPolicy: Retain
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $P, secretRef: {name: etcd-backup}}
EOF
ksim_wait 30 has_job || ctl_fail "no copy Job: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
snap=$(tr ',' '\n' <<<"$(job_args)" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
snap_s3 put "$(jp "$NS" etcd/etcd-main '{.spec.backup.store.prefix}')/v2/$snap" "$SNAP_WORK/snap"
ctl_jobs_serve "$NS"
ksim_wait 60 phase_is Completed || ctl_fail "b: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
if out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" "$P" 2>&1); then
    ctl_fail "the reference case: other's Etcd admitted on b's written copy: $out"
fi
ok "reference: other's Etcd on $P is refused while b exists"

kc -n "$NS" delete etcdbackup b --timeout=60s >/dev/null || ctl_fail "b not deleted"
left=$(snap_s3 ls "$P/" | tr '\n' ' ')
grep -qF "$P/v2/$snap" <<<"$left" || ctl_fail "the retained copy is gone: ${left:-nothing}"
ok "b deleted, its copy retained: $left"
admitted() { kc apply -f - >/dev/null 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-x, namespace: other}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: $P, secretRef: {name: etcd-backup}}}
EOF
}
if ksim_wait 20 admitted; then
    ctl_fail "HOLE: namespace other's Etcd etcd-x admitted on $P, which holds shoot's retained copy $snap (the newest full snapshot there: its sidecar restores shoot's data)"
fi
ok "another namespace's Etcd on the retained copy stays refused"
ctl_stop
echo "attack5_retained_copy: ok"
