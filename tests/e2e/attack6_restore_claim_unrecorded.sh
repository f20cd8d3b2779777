#!/usr/bin/env bash
# An EtcdRestore's target stays claimed while its copy may be writing: until it is Completed,
# or Failed *before its copy Job was created* (status.jobName empty: "nothing was written").
# warden-controller creates the copy Job first and writes status.jobName and
# status.copyStartedAt after it, in a second request. When that status write fails (the API
# server answers 500 here, held by kube-sim's fault injection on etcdrestores/r/status; a 409
# from any concurrent edit does the same) and the next pass refuses the restore (an Etcd of
# the target name appeared meanwhile: shoot creates etcd-back on a prefix of its own), the
# restore is Failed without status.jobName: the webhook drops its claim, its deletion deletes
# nothing, and its copy Job (held: kube-sim runs no Pods until the script serves the Jobs) is
# never deleted. Namespace other creates an Etcd on the target restored--shoot: admitted. The
# copy Job then runs and writes shoot's full snapshot (its cluster's data, Secrets included)
# into other's prefix, whose sidecar restores it at its first start. A backup handed to another
# tenant. Wanted: the copy Job is recorded before it can write (or a Job of the restore's that
# exists keeps the claim and is stopped before the restore fails).
# Oracle: kubectl's answers, s3rver's listing, the Etcd kube-sim stores.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups

faults() { ksim_wait 10 curl -sfk -H "Authorization: Bearer $KSIM_TOKEN" -X POST "$KSIM_URL/kube-sim/faults" -d "$1" >/dev/null; }
creds() { # ns
    kc -n "$1" delete secret etcd-backup --ignore-not-found >/dev/null
    kc -n "$1" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}
has_job() { kc -n shoot get job r--restore >/dev/null 2>&1; }
rstatus() { jp shoot etcdrestore/r "{.status.$1}"; }
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

# from here every write of r's status fails
faults '{"errorRate":1.0,"match":"etcdrestores/r/status"}'
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
if ! ksim_wait 30 has_job; then
    faults '{"reset":true}'
    ok "no copy Job is made while r's copy cannot be recorded (phase '$(rstatus phase)')"
    ctl_stop
    echo "attack6_restore_claim_unrecorded: ok"
    exit 0
fi
args=$(jp shoot job/r--restore '{.spec.template.spec.containers[0].args}')
grep -q -- '--to-store-prefix=restored--shoot"' <<<"$args" || ctl_fail "the copy Job writes elsewhere: $args"
ok "r's copy Job r--restore (held) writes restored--shoot; r's status write fails: phase '$(rstatus phase)', jobName '$(rstatus jobName)'"

# an Etcd of the target's name, on a prefix of shoot's own: the restore is refused next pass
ctl_store_etcd shoot etcd-back S3 "$SNAP_BUCKET" shoot--etcd-back
faults '{"reset":true}'
failed() { [ "$(rstatus phase)" = Failed ]; }
ksim_wait 60 failed || ctl_fail "r not Failed: $(kc -n shoot get etcdrestore r -o jsonpath='{.status}')"
ok "r Failed: $(rstatus error | cut -c1-120); jobName '$(rstatus jobName)'; Job r--restore $(has_job && echo still there || echo gone)"

admitted() { out=$(ctl_store_etcd other etcd-x S3 "$SNAP_BUCKET" restored--shoot 2>&1); }
if ! ksim_wait 90 admitted; then
    ok "namespace other's Etcd on the target of r's copy Job is refused: ${out:0:240}"
    ctl_stop
    echo "attack6_restore_claim_unrecorded: ok"
    exit 0
fi
ok "namespace other's Etcd etcd-x admitted on restored--shoot (Job r--restore $(has_job && echo still there || echo gone))"
ctl_jobs_serve shoot
ran() { grep -q 'r--restore' "$SNAP_WORK/job_exec.log" 2>/dev/null || ! has_job; }
ksim_wait 60 ran || true
sleep 5 # a run that started ends (bounded: the listing below is the oracle)
left=$(listing restored--shoot)
stored=$(jp other etcd/etcd-x '{.spec.backup.store.prefix}')
if grep -qF "restored--shoot/v2/$snap" <<<"$left" && [ "$stored" = restored--shoot ]; then
    ctl_fail "HOLE: namespace other's Etcd etcd-x was admitted on restored--shoot while shoot's copy Job r--restore for it existed (r Failed without status.jobName: the status write after the Job's creation had failed); the Job then wrote shoot's full snapshot $snap into other's prefix (listing: $left)"
fi
ok "nothing of shoot's in other's prefix (listing: ${left:-empty}; r $(rstatus phase))"
ctl_stop
echo "attack6_restore_claim_unrecorded: ok"
