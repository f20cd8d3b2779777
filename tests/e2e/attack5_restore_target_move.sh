#!/usr/bin/env bash
# An EtcdRestore's target is claimed from admission (a record in its store's claim Lease) while
# its copy may be writing; an UPDATE that moves the target is judged as a new claim. Namespace
# shoot restores its etcd-main into restored--shoot; the copy Job r--restore is made (its
# arguments name restored--shoot) and is held (kube-sim runs no Pods until the script serves
# the Jobs). shoot then UPDATEs the restore's spec.target.store.prefix to restored2--shoot:
# admitted, and the record of restored--shoot goes with it (one record per restore). Namespace
# other then creates an Etcd on restored--shoot, the prefix the copy in flight is writing:
# admitted. The copy then runs and writes shoot's full snapshot (its cluster's data, Secrets
# included) into restored--shoot, under other's Etcd, whose sidecar restores it at its first
# start. A backup handed to another tenant. Wanted: a target does not move while its copy may be
# writing (the UPDATE refused), or the old target stays claimed until that copy is over.
# Oracle: kubectl's answers, the Job's arguments, s3rver's listing.
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
etcd() { # ns name prefix
    kc apply -f - <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: $SNAP_BUCKET, prefix: "$3", secretRef: {name: etcd-backup}}}
EOF
}
job_args() { kc -n shoot get job r--restore -o jsonpath='{.spec.template.spec.containers[0].args}' 2>/dev/null; }
has_job() { [ -n "$(job_args)" ]; }
phase() { jp shoot etcdrestore/r '{.status.phase}'; }

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
grep -q -- '--to-store-prefix=restored--shoot"' <<<"$(job_args)" || ctl_fail "the copy Job writes elsewhere: $(job_args)"
ok "the copy Job r--restore (held) writes restored--shoot"
if out=$(etcd other etcd-x restored--shoot 2>&1); then
    ctl_fail "the reference case: another namespace's Etcd admitted on the target of a copy in flight: $out"
fi
ok "reference: other's Etcd on restored--shoot is refused while the copy is in flight"

# the restore's target moved while its copy runs
if ! out=$(kc -n shoot patch etcdrestore r --type merge \
    -p '{"spec":{"target":{"store":{"prefix":"restored2--shoot"}}}}' 2>&1); then
    ok "moving the target of a restore whose copy is in flight is refused: ${out:0:240}"
    ctl_stop
    echo "attack5_restore_target_move: ok"
    exit 0
fi
ok "the UPDATE moving the target to restored2--shoot was admitted"
if ! grep -q -- '--to-store-prefix=restored--shoot"' <<<"$(job_args)"; then
    ok "the copy into the old target is no longer in flight (Job: $(job_args | cut -c1-120); phase $(phase))"
    ctl_stop
    echo "attack5_restore_target_move: ok"
    exit 0
fi
admitted() { out=$(etcd other etcd-x restored--shoot 2>&1); }
if ksim_wait 20 admitted; then
    # the copy, held so far, now runs: where does shoot's snapshot land?
    ctl_jobs_serve shoot
    over() { case $(phase) in Completed | Failed) true ;; *) false ;; esac; }
    ksim_wait 90 over || true
    left=$(snap_s3 ls restored--shoot/ | tr '\n' ' ')
    stored=$(jp other etcd/etcd-x '{.spec.backup.store.prefix}')
    if grep -qF "restored--shoot/v2/$snap" <<<"$left" && [ "$stored" = restored--shoot ]; then
        ctl_fail "HOLE: namespace other's Etcd etcd-x admitted on restored--shoot after shoot moved its EtcdRestore r's target away while the copy Job r--restore writing restored--shoot was in flight; the copy then wrote shoot's full snapshot there, under other's Etcd (listing: $left; restore $(phase): $(jp shoot etcdrestore/r '{.status.error}' | cut -c1-160); the restored Etcd shoot/etcd-back on: $(jp shoot etcd/etcd-back '{.spec.backup.store.prefix}' 2>&1), which holds: $(snap_s3 ls restored2--shoot/ | tr '\n' ' '))"
    fi
    ctl_fail "HOLE: namespace other's Etcd etcd-x admitted on restored--shoot while the copy Job r--restore writing it was in flight (its target moved by an UPDATE); listing after the copy: ${left:-empty}, restore $(phase)"
fi
out=$(etcd other etcd-x restored--shoot 2>&1) || true
ok "the old target stays claimed while its copy is in flight: ${out:0:200}"
ctl_stop
echo "attack5_restore_target_move: ok"
