#!/usr/bin/env bash
# One namespace's restore stops every other namespace's backups in the store (issue 29 item 4,
# "anyone may claim", on another path). warden-controller takes an in-flight EtcdRestore whose
# spec.target.store names no provider (the documented default: the template's store) as
# claiming its whole container, although warden-webhook resolved and recorded its target at
# admission. Namespace other applies EtcdRestore r2 into other--restored, its target without a
# provider (its template's store is S3): admitted, in flight (no Job of other runs: its copy is
# held; a copy may run for the Job's 2 h deadline, a restore waits for its source backup
# without bound). Namespace shoot then takes EtcdBackup b of its etcd-main into copies--shoot,
# a prefix nothing else claims: admitted at kubectl apply, and then failed by the controller
# ("overlaps a prefix claimed from another namespace"): no copy is made. The same stops every
# namespace's schedules, restores and BackupEntry deletions in that container while r2 lasts.
# Wanted: a restore's target is the store and prefix warden-webhook admitted (its record in the
# claim Lease), so it stands in the way of overlapping prefixes only.
# Oracle: s3rver's listing (no copy written) and b's phase.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
NS=shoot
P=copies--shoot

creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
bstatus() { jp "$NS" etcdbackup/b "{.status.$1}"; }
job_args() { kc -n "$NS" get job b--copy -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
has_job() { [ -n "$(job_args)" ]; }
over() { p=$(bstatus phase); [ "$p" = Completed ] || [ "$p" = Failed ]; }
listing() { snap_s3 ls "$P/" | sort | tr '\n' ' '; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc create namespace other >/dev/null
creds "$NS"
creds other
druid_double_for "$NS" etcd-main
wh_register_backups
ctl_start
snap_fixture "$SNAP_WORK/src" 4096 Full.gz
snap_s3 put "other--src/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/src"

kc apply -f - >/dev/null <<EOF || ctl_fail "r2 refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r2, namespace: other}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: other--src, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: other--restored, secretRef: {name: etcd-backup}}}
  target: {etcdName: etcd-o, store: {container: $SNAP_BUCKET, prefix: other--restored, secretRef: {name: etcd-backup}}}
EOF
copying() { kc -n other get job r2--restore >/dev/null 2>&1 && [ "$(jp other etcdrestore/r2 '{.status.phase}')" = Copying ]; }
ksim_wait 30 copying || ctl_fail "r2 not copying: $(kc -n other get etcdrestore r2 -o jsonpath='{.status}')"
ok "other's EtcdRestore r2 (target other--restored, no provider of its own) in flight"

out=$(kc apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b, namespace: $NS}
spec:
  etcdName: etcd-main
  destination: {provider: S3, container: $SNAP_BUCKET, prefix: $P, secretRef: {name: etcd-backup}}
EOF
) || ctl_fail "HOLE: shoot's EtcdBackup b into $P (overlapping nothing) refused at admission while other's restore r2 is in flight: $out"
ok "shoot's EtcdBackup b into $P admitted"
put_source() { # the Etcd's sidecar wrote the snapshot the copy Job copies
    has_job || return 1
    snap=$(tr ',' '\n' <<<"$(job_args)" | tr -d '"[]' | sed -n 's/^--snapshot=//p')
    snap_fixture "$SNAP_WORK/snap" 4096 "$snap"
    snap_s3 put "$(jp "$NS" etcd/etcd-main '{.spec.backup.store.prefix}')/v2/$snap" "$SNAP_WORK/snap"
}
job_or_over() { has_job || over; }
ksim_wait 60 job_or_over || ctl_fail "b: neither a copy Job nor an end: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
if has_job; then put_source; fi
ctl_jobs_serve "$NS"
ksim_wait 90 over || ctl_fail "b did not end: $(kc -n "$NS" get etcdbackup b -o jsonpath='{.status}')"
if [ "$(bstatus phase)" = Failed ]; then
    ctl_fail "HOLE: shoot's EtcdBackup b into $P (overlapping no claim) Failed while other's EtcdRestore r2 (target other--restored, no provider of its own) is in flight: \"$(bstatus error)\"; no copy written (listing: $(listing)); every namespace's copies, restores and deletions in $SNAP_BUCKET stop the same way while r2 lasts"
fi
ok "b Completed while r2 is in flight: $(listing)"
ctl_stop
echo "attack7_providerless_block: ok"
