#!/usr/bin/env bash
# The immutability task's CronJob carries the Etcd's store as etcd-druid gives it to its
# backup sidecar, driven with kubectl: spec.backup.store.endpointOverride becomes
# --store-endpoint-override; a Local store is the host directory named by the store
# Secret's hostPath key + "/<container>" (type Directory) at /home/nonroot/<container>
# with HOME=/home/nonroot; a provider warden-snapshot cannot open (OSS here) gets no
# CronJob but the task's Ready condition False/UnsupportedProvider and a Warning event.
# A CronJob runs only for a live Etcd's store: deleting the Etcd deletes it, well before the
# task's 30 s retry (the task, which warden-controller made the Etcd's, goes with it; a task
# kept without its Etcd stops its CronJob itself: test_imt).
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

unsupported_event() {
    ctl_events shoot etcd-oss-extend-immutability | grep -q '^Warning UnsupportedProvider: '
}

ctl_stage
for e in etcd-oss etcd-local etcd-minio; do druid_etcd shoot "$e"; done
ctl_store etcd-oss '{"provider":"alicloud"}'
ctl_store etcd-local '{"provider":"Local","container":"bkt","secretRef":{"name":"local-backup"}}'
ctl_store etcd-minio '{"endpointOverride":"http://minio.store:9000"}'
kc -n shoot create secret generic local-backup --from-literal=hostPath=/var/buckets/ >/dev/null
ctl_start
ctl_imt_tasks etcd-oss etcd-local etcd-minio

# OSS: refused up front
ksim_wait 20 ctl_imt_condition_is etcd-oss-extend-immutability False/UnsupportedProvider ||
    ctl_fail "OSS task: condition $(ctl_imt_condition etcd-oss-extend-immutability)"
ok "OSS task: Ready False/UnsupportedProvider"
table=$(kc -n shoot get extendfullsnapshotimmutabilitytask etcd-oss-extend-immutability)
head -1 <<<"$table" | grep -q 'ETCD *SCHEDULE *LAST RUN *IMMUTABLE UNTIL *READY *REASON *AGE' ||
    ctl_fail "kubectl get columns: $table"
grep -q '^etcd-oss-extend-immutability *etcd-oss .* False *UnsupportedProvider ' <<<"$table" ||
    ctl_fail "kubectl get row: $table"
ok "kubectl get extendfullsnapshotimmutabilitytask shows Ready and its reason"
msg=$(jp shoot extendfullsnapshotimmutabilitytask/etcd-oss-extend-immutability '{.status.conditions[?(@.type=="Ready")].message}')
grep -q 'alicloud (OSS) is not supported' <<<"$msg" || ctl_fail "OSS condition message: $msg"
ksim_wait 15 unsupported_event ||
    ctl_fail "no UnsupportedProvider event: $(ctl_events shoot etcd-oss-extend-immutability)"
ok "OSS task: Warning UnsupportedProvider event"
if kc -n shoot get cronjob etcd-oss-extend-immutability >/dev/null 2>&1; then
    ctl_fail "a CronJob for OSS"
fi

# Local: the host directory from the Secret, HOME
ksim_wait 20 kc -n shoot get cronjob etcd-local-extend-immutability >/dev/null ||
    ctl_fail "no CronJob for Local: $(ctl_imt_condition etcd-local-extend-immutability)"
pod() { jp shoot cronjob/etcd-local-extend-immutability "{.spec.jobTemplate.spec.template.spec$1}"; }
expect "Local hostPath from the Secret" "/var/buckets/bkt Directory" \
    "$(pod '.volumes[0].hostPath.path} {.spec.jobTemplate.spec.template.spec.volumes[0].hostPath.type')"
expect "Local mount" "/home/nonroot/bkt" "$(pod '.containers[0].volumeMounts[0].mountPath')"
expect "HOME" "/home/nonroot" "$(pod '.containers[0].env[?(@.name=="HOME")].value')"
expect "Local args" "--storage-provider=Local --store-container=bkt" \
    "$(pod '.containers[0].args[1]} {.spec.jobTemplate.spec.template.spec.containers[0].args[2]')"

# S3 with an endpoint override
ksim_wait 20 kc -n shoot get cronjob etcd-minio-extend-immutability >/dev/null ||
    ctl_fail "no CronJob for the S3 store: $(ctl_imt_condition etcd-minio-extend-immutability)"
args=$(jp shoot cronjob/etcd-minio-extend-immutability '{.spec.jobTemplate.spec.template.spec.containers[0].args[*]}')
grep -q -- '--store-endpoint-override=http://minio.store:9000' <<<"$args" ||
    ctl_fail "no endpoint override in the CronJob's args: $args"
ok "endpoint override passed: $args"

# the Etcd deleted: its task's CronJob goes
kc -n shoot delete etcd etcd-minio --wait=false >/dev/null
cronjob_gone() { ! kc -n shoot get cronjob etcd-minio-extend-immutability >/dev/null 2>&1; }
ksim_wait 20 cronjob_gone ||
    ctl_fail "the CronJob of a deleted Etcd still runs: $(ctl_imt_condition etcd-minio-extend-immutability)"
ok "Etcd deleted: its CronJob deleted"
ctl_stop
echo "controller_imt_stores: ok"
