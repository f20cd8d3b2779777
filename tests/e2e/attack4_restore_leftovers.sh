#!/usr/bin/env bash
# A restore that fails at Creating keeps the snapshots it copied into its target prefix (the
# docs: nothing deleted on a guess) and, once Failed, nothing claims that prefix any more:
# no Etcd, no BackupEntry, the claim Lease's record of the restore ended. Namespace shoot
# restores its etcd-main (the source's full snapshot: its cluster's data, Secrets included)
# into restored--shoot; while the copy runs, an Etcd of the target's name appears in shoot, so
# the restore fails at Creating with the copy left in the store. Namespace other then creates
# an Etcd on restored--shoot: admitted, and its sidecar's first start restores the newest full
# snapshot there, shoot's data. A backup handed to another tenant. Wanted: the leftover copy
# keeps the prefix claimed (for shoot only) until it is gone, or the restore's own namespace is
# the only one admitted there. Oracle: s3rver's listing and kubectl's answer.
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
phase() { jp shoot etcdrestore/r '{.status.phase}'; }
has_job() { kc -n shoot get job r--restore >/dev/null 2>&1; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot other
creds shoot
creds other
kc apply -f - >/dev/null <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: etcd-warden-backups}
webhooks:
$(wh_webhook backups.webhooks.etcd-warden.io /webhooks/backups)
  rules:
  - {apiGroups: [etcd-warden.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [etcdbackups, etcdbackupschedules, etcdrestores], scope: Namespaced}
EOF
ctl_start
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/full"

kc apply -f - >/dev/null <<EOF || ctl_fail "the restore refused"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: r, namespace: shoot}
spec:
  source: {store: {provider: S3, container: $SNAP_BUCKET, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}}
  etcdTemplate:
    replicas: 1
    labels: {app: etcd-statefulset}
    etcd: {clientPort: 2379, serverPort: 2380}
    backup: {port: 8080}
  target: {etcdName: etcd-back, store: {provider: S3, container: $SNAP_BUCKET, prefix: restored--shoot, secretRef: {name: etcd-backup}}}
EOF
ksim_wait 30 has_job || ctl_fail "no copy Job: $(kc -n shoot get etcdrestore r -o jsonpath='{.status}')"
# while the copy is held: an Etcd of the target's name, elsewhere
ctl_store_etcd shoot etcd-back S3 "$SNAP_BUCKET" shoot--etcd-back
ctl_jobs_serve shoot
failed() { [ "$(phase)" = Failed ]; }
ksim_wait 90 failed || ctl_fail "the restore did not fail at Creating: $(kc -n shoot get etcdrestore r -o jsonpath='{.status}'); $(tail -3 "$SNAP_WORK/job_exec.log")"
ok "the restore failed: $(jp shoot etcdrestore/r '{.status.error}' | cut -c1-160)"
left=$(snap_s3 ls restored--shoot/ | tr '\n' ' ')
grep -qF "restored--shoot/v2/$snap" <<<"$left" || ctl_fail "no copy left in the target: $left"
ok "the copy of shoot's snapshot stays in restored--shoot: $left"

# the restore's record in the claim Lease is dropped once it is 30 s old and the restore
# Failed (docs): try for two minutes
admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" restored--shoot 2>&1); }
if ksim_wait 40 admitted; then
    ctl_fail "HOLE: namespace other's Etcd admitted on restored--shoot, which holds shoot's restored full snapshot $snap (left by shoot's Failed EtcdRestore r): its sidecar restores shoot's data"
fi
out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" restored--shoot 2>&1) || true
ok "another namespace's Etcd on the leftover copy stays refused: ${out:0:200}"
ctl_stop
echo "attack4_restore_leftovers: ok"
