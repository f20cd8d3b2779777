#!/usr/bin/env bash
# An EtcdRestore's target is claimed from admission by a record in its store's claim Lease,
# "one record per restore": a newer admitted request for the same namespace and name replaces
# it. Namespace shoot restores its etcd-main into restored--shoot: EtcdRestore r, its copy Job
# r--restore made (its arguments name restored--shoot) and held (kube-sim runs no Pods until
# the script serves the Jobs). Someone in shoot then runs `kubectl create` of an EtcdRestore of
# the same name r with another target, restored2--shoot (an edited file created again): the
# webhook admits it and records restored2--shoot in place of restored--shoot; the API server
# then answers AlreadyExists, and r, unchanged, still copies into restored--shoot. Namespace
# other then creates an Etcd on restored--shoot: admitted. The copy runs and writes shoot's
# full snapshot (its cluster's data, Secrets included) under other's Etcd, whose sidecar
# restores it at its first start. A backup handed to another tenant. Wanted: a request that
# is not stored never releases the claim of the object that is (the record of the stored
# restore kept until the restore no longer claims its target).
# Oracle: kubectl's answers, the Job's arguments, s3rver's listing, the Etcd kube-sim stores.
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
restore() { # verb target-prefix
    kc "$1" -f - <<EOF
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
  target: {etcdName: etcd-back, store: {provider: S3, container: $SNAP_BUCKET, prefix: $2, secretRef: {name: etcd-backup}}}
EOF
}
job_args() { kc -n shoot get job r--restore -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
has_job() { [ -n "$(job_args)" ]; }
phase() { jp shoot etcdrestore/r '{.status.phase}'; }
listing() { snap_s3 ls "$1/" | sort | tr '\n' ' '; }

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_namespace shoot other
creds shoot
creds other
wh_register_backups
ctl_start
snap=Full-00000000-00000100-1700000000.gz
snap_fixture "$SNAP_WORK/full" 4096 "$snap"
snap_s3 put "shoot--etcd-main/v2/$snap" "$SNAP_WORK/full"

restore apply restored--shoot >/dev/null || ctl_fail "the restore refused"
ksim_wait 30 has_job || ctl_fail "no copy Job: $(kc -n shoot get etcdrestore r -o jsonpath='{.status}')"
grep -q -- '--to-store-prefix=restored--shoot"' <<<"$(job_args)" || ctl_fail "the copy Job writes elsewhere: $(job_args)"
ok "the copy Job r--restore (held) writes restored--shoot"
if out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" restored--shoot 2>&1); then
    ctl_fail "the reference case: another namespace's Etcd admitted on the target of a copy in flight: $out"
fi
ok "reference: other's Etcd on restored--shoot is refused while the copy is in flight"

out=$(restore create restored2--shoot 2>&1) || true
ok "kubectl create of r again with target restored2--shoot: ${out:0:200}"
expect "r unchanged: its target" restored--shoot "$(jp shoot etcdrestore/r '{.spec.target.store.prefix}')"

admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" restored--shoot 2>&1); }
if ! ksim_wait 60 admitted; then
    ok "the target stays claimed while its copy is in flight: ${out:0:200}"
    ctl_stop
    echo "attack6_restore_record_replaced: ok"
    exit 0
fi
ok "namespace other's Etcd etcd-x admitted on restored--shoot while the copy Job r--restore is in flight"
ctl_jobs_serve shoot
over() { case $(phase) in Completed | Failed) true ;; *) false ;; esac; }
ksim_wait 90 over || true
left=$(listing restored--shoot)
stored=$(jp other etcd/etcd-x '{.spec.backup.store.prefix}')
if grep -qF "restored--shoot/v2/$snap" <<<"$left" && [ "$stored" = restored--shoot ]; then
    ctl_fail "HOLE: namespace other's Etcd etcd-x admitted on restored--shoot after a CREATE of shoot's EtcdRestore r (AlreadyExists, target restored2--shoot) replaced r's claim record while r's copy Job writing restored--shoot was in flight; the copy then wrote shoot's full snapshot there, under other's Etcd (listing: $left; restore $(phase): $(jp shoot etcdrestore/r '{.status.error}' | cut -c1-160))"
fi
ctl_fail "HOLE: namespace other's Etcd etcd-x admitted on restored--shoot while the copy Job r--restore writing it was in flight (r's claim record replaced by a CREATE that was not stored); listing after the copy: ${left:-empty}, restore $(phase)"
