#!/usr/bin/env bash
# S3 web identity from the Etcd to the immutability CronJob's run, driven with kubectl:
# the store Secret holds roleARN + token (no keys, as Gardener's workload identity writes
# it); the controller's CronJob mounts it as etcd-druid mounts it for its sidecar, and the
# CronJob run by cronjob_exec (the kubelet's part) gets temporary keys from the STS
# stand-in and copies the snapshot through its S3 gate (tests/lib/sts.sh). An Etcd
# without secretRef (ambient credentials, etcd-druid #1371) gets a CronJob with no volume
# that runs as the Etcd's ServiceAccount without its API token; an ABS one without a
# Secret gets no CronJob but Ready False/InvalidEtcd naming secretRef.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/sts.sh"
. "$(dirname "$0")/../lib/controller.sh"
# kubesim.sh's EXIT trap is the one left: it runs snapshot.sh's clean-ups (emulators, work dir).
ksim_on_exit snap_cleanups

role=arn:aws:iam::123456789012:role/shoot--dev--main-etcd-backup
prefix=shoot--etcd-wi
snap_s3_start
unset AWS_APPLICATION_CREDENTIALS
full=$SNAP_WORK/full.gz
snap_fixture "$full" 4096 # an etcd snapshot stand-in: extend verifies it
snap_s3 put "$prefix/v2/Full-00000000-00000100-1700000000.gz" "$full"
printf 'eyJhbGciOiJSUzI1NiJ9.projected.sig' >"$SNAP_WORK/token"
sts_start "$SNAP_WORK/token" --role-arn "$role"


ctl_stage
for e in etcd-wi etcd-ambient etcd-abs; do druid_etcd shoot "$e"; done
ctl_store etcd-wi "{\"container\":\"$SNAP_BUCKET\",\"secretRef\":{\"name\":\"etcd-backup-wi\"}}"
ctl_store etcd-ambient '{"secretRef":null}'
ctl_store etcd-abs '{"provider":"azure","secretRef":null}'
kc -n shoot create secret generic etcd-backup-wi --from-literal=roleARN="$role" \
    --from-file=token="$SNAP_WORK/token" --from-literal=region=us-east-1 \
    --from-literal=endpoint="$GATE_URL" --from-literal=s3ForcePathStyle=true >/dev/null
ctl_start
ctl_imt_tasks etcd-wi etcd-ambient etcd-abs

# ---- web identity in the Secret: mounted as for the sidecar, the run goes through STS ----
ksim_wait 20 kc -n shoot get cronjob etcd-wi-extend-immutability >/dev/null ||
    ctl_fail "no CronJob for etcd-wi: $(ctl_imt_condition etcd-wi-extend-immutability)"
pod() { jp shoot "cronjob/$1" "{.spec.jobTemplate.spec.template.spec$2}"; }
expect "Secret volume" "etcd-backup-wi" "$(pod etcd-wi-extend-immutability '.volumes[0].secret.secretName')"
expect "Secret mount" "/var/etcd-backup" "$(pod etcd-wi-extend-immutability '.containers[0].volumeMounts[0].mountPath')"
expect "credentials variable" "/var/etcd-backup" \
    "$(pod etcd-wi-extend-immutability '.containers[0].env[?(@.name=="AWS_APPLICATION_CREDENTIALS")].value')"
expect "no account with a Secret" "" "$(pod etcd-wi-extend-immutability '.serviceAccountName')"
kc -n shoot get cronjob etcd-wi-extend-immutability -o json >"$SNAP_WORK/cj.json"
mkdir -p "$SNAP_WORK/secrets"
kc -n shoot get secret etcd-backup-wi -o json >"$SNAP_WORK/secrets/etcd-backup-wi.json"
day1=1700086400
WARDEN_SNAPSHOT_NOW=$day1 cronjob_exec "$SNAP_WORK/cj.json" "$SNAP_WORK/secrets" 2>"$SNAP_WORK/cj.log" ||
    { cat "$SNAP_WORK/cj.log" "$STS_LOG"; ctl_fail "the CronJob's run with web identity failed"; }
snap_s3 get "$prefix/v2/Full-00000000-00000100-$day1.gz" | cmp -s - "$full" ||
    ctl_fail "the CronJob did not copy the snapshot"
[ "$(sts_count 'e["api"]=="sts" and e["ok"]')" -eq 1 ] || { cat "$STS_LOG"; ctl_fail "want one STS call"; }
[ "$(sts_count 'e["api"]=="s3" and e["ok"]')" -ge 3 ] || { cat "$STS_LOG"; ctl_fail "S3 not reached through the gate"; }
[ "$(sts_count 'e["api"]=="s3" and not e["ok"]')" -eq 0 ] || { cat "$STS_LOG"; ctl_fail "the S3 gate refused a request"; }
ok "web identity Secret: mounted as for the sidecar; the run got STS keys and copied"

# ---- no secretRef: no volume, the Etcd's ServiceAccount, no API token ----
ksim_wait 20 kc -n shoot get cronjob etcd-ambient-extend-immutability >/dev/null ||
    ctl_fail "no CronJob for etcd-ambient: $(ctl_imt_condition etcd-ambient-extend-immutability)"
expect "ambient: account" "etcd-ambient" "$(pod etcd-ambient-extend-immutability '.serviceAccountName')"
expect "ambient: API token" "false" "$(pod etcd-ambient-extend-immutability '.automountServiceAccountToken')"
expect "ambient: volumes" "" "$(pod etcd-ambient-extend-immutability '.volumes')"
ok "no secretRef: the CronJob runs as the Etcd's ServiceAccount, nothing mounted"

# ---- ABS without a Secret: refused up front ----
ksim_wait 20 ctl_imt_condition_is etcd-abs-extend-immutability False/InvalidEtcd ||
    ctl_fail "ABS task: condition $(ctl_imt_condition etcd-abs-extend-immutability)"
msg=$(jp shoot extendfullsnapshotimmutabilitytask/etcd-abs-extend-immutability '{.status.conditions[?(@.type=="Ready")].message}')
grep -q 'secretRef: required for ABS' <<<"$msg" || ctl_fail "ABS condition message: $msg"
if kc -n shoot get cronjob etcd-abs-extend-immutability >/dev/null 2>&1; then ctl_fail "a CronJob for ABS without a Secret"; fi
ok "ABS without a Secret: Ready False/InvalidEtcd, no CronJob"
echo "controller_imt_web_identity: ok"
