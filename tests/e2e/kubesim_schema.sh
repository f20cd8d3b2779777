#!/usr/bin/env bash
# kube-sim defaults and validates custom resources by their CRD's schema as
# kube-apiserver does, seen through kubectl with the project's CRDs (charts/):
# an EtcdBackup with `deletionPolicy: Keep` is refused with kube-apiserver's
# message and not stored; without deletionPolicy it is stored with the default
# Delete, which `kubectl get -o yaml` shows; an update that breaks a bound is
# refused; EtcdBackupSchedule's history limits are defaulted. With etcd-druid's
# own CRD (DRUID_CRD_DIR, that part skipped when unset) a quantity that does
# not match its pattern is refused. `kubectl apply -f` of a `kind: List`
# creates its items, and `kubectl get events` shows a series' last time as
# LAST SEEN.
set -euo pipefail
. "$(dirname "$0")/../lib/kubesim.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/kubesim-schema.XXXXXX")
ksim_on_exit "rm -rf '$work'"
ok() { echo "ok: $*"; }
expect() { # what, wanted substring, output
    case "$3" in *"$2"*) ok "$1" ;; *) ksim_fail "$1: wanted '$2' in: $3" ;; esac
}

kubesim_start
kc apply -f "$src/charts/etcd-warden/crds/" >/dev/null
ksim_wait 20 kc get etcdbackups >/dev/null || ksim_fail "the EtcdBackup CRD is not served"

backup() { # name, extra spec line
    cat <<Y
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: $1}
spec:
  etcdName: main
  destination: {provider: S3, container: bucket, prefix: copies, secretRef: {name: dest}}
  $2
Y
}

backup keep "deletionPolicy: Keep" >"$work/keep.yaml"
out=$(kc apply -f "$work/keep.yaml" 2>&1) && ksim_fail "deletionPolicy Keep was accepted: $out"
expect "Keep refused" 'The EtcdBackup "keep" is invalid: spec.deletionPolicy: Unsupported value: "Keep": supported values: "Delete", "Retain"' "$out"
out=$(kc get etcdbackup keep 2>&1 || true)
expect "nothing stored" 'etcdbackups.etcd-warden.io "keep" not found' "$out"

backup dflt "" >"$work/default.yaml"
kc apply -f "$work/default.yaml" >/dev/null
out=$(kc get etcdbackup dflt -o yaml)
expect "default visible in get -o yaml" "deletionPolicy: Delete" "$out"
out=$(kc patch etcdbackup dflt --type=merge -p '{"spec":{"etcdName":""}}' 2>&1) \
    && ksim_fail "an empty etcdName was accepted: $out"
expect "update refused" 'spec.etcdName: Invalid value: "": spec.etcdName in body should be at least 1 chars long' "$out"

cat >"$work/schedule.yaml" <<'Y'
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackupSchedule
metadata: {name: nightly}
spec:
  schedule: "0 2 * * *"
  backupTemplate:
    etcdName: main
    destination: {provider: S3, container: bucket, prefix: copies, secretRef: {name: dest}}
Y
out=$(kc apply -f "$work/schedule.yaml" 2>&1) || ksim_fail "EtcdBackupSchedule: $out"
out=$(kc get etcdbackupschedule nightly -o jsonpath='{.spec.successfulBackupsHistoryLimit} {.spec.failedBackupsHistoryLimit}')
[ "$out" = "3 1" ] || ksim_fail "history limits not defaulted: '$out'"
ok "EtcdBackupSchedule defaults"
out=$(kc patch etcdbackupschedule nightly --type=merge -p '{"spec":{"failedBackupsHistoryLimit":-1}}' 2>&1) \
    && ksim_fail "a negative history limit was accepted: $out"
expect "minimum" 'spec.failedBackupsHistoryLimit: Invalid value: -1: spec.failedBackupsHistoryLimit in body should be greater than or equal to 0' "$out"

if [ -n "${DRUID_CRD_DIR:-}" ]; then
    kc apply -f "$DRUID_CRD_DIR/druid.gardener.cloud_etcds_without_cel.yaml" >/dev/null
    ksim_wait 20 kc get etcds >/dev/null || ksim_fail "etcd-druid's Etcd CRD is not served"
    cat >"$work/etcd.yaml" <<'Y'
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: quota}
spec:
  replicas: 3
  labels: {app: etcd}
  etcd: {quota: 8 GB}
  backup: {}
Y
    out=$(kc apply -f "$work/etcd.yaml" 2>&1) && ksim_fail "quota '8 GB' was accepted: $out"
    expect "druid's quantity pattern" 'spec.etcd.quota: Invalid value: "8 GB": spec.etcd.quota in body should match' "$out"
    sed -i 's/8 GB/8Gi/' "$work/etcd.yaml"
    out=$(kc apply -f "$work/etcd.yaml" 2>&1) || ksim_fail "quota 8Gi refused: $out"
    ok "druid's Etcd with quota 8Gi stored"
else
    echo "skip: DRUID_CRD_DIR is not set (etcd-druid's CRD part)"
fi

cat >"$work/list.yaml" <<'Y'
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: one}
  data: {a: "1"}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: two}
Y
out=$(kc apply -f "$work/list.yaml" 2>&1) || ksim_fail "kubectl apply of a List: $out"
expect "List applied" "configmap/two created" "$out"
[ "$(kc get configmap one -o jsonpath='{.data.a}')" = 1 ] || ksim_fail "List item one not stored"
out=$(kc apply -f "$work/list.yaml" 2>&1) || ksim_fail "kubectl apply of a List again: $out"
expect "List applied again" "configmap/one unchanged" "$out"

first=$(date -u -d '-3 hours' +%Y-%m-%dT%H:%M:%S.000000Z)
last=$(date -u -d '-30 minutes' +%Y-%m-%dT%H:%M:%S.000000Z)
cat >"$work/event.json" <<Y
{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"},
 "eventTime":"$first","reportingController":"etcd-warden","reportingInstance":"i",
 "action":"Backup","reason":"Copied","type":"Normal","note":"copied",
 "regarding":{"kind":"EtcdBackup","name":"dflt","namespace":"default"},
 "series":{"count":4,"lastObservedTime":"$last"}}
Y
kc create -f "$work/event.json" >/dev/null
out=$(kc get events)
echo "$out" | grep -Eq '^30m +Normal +Copied +etcdbackup/dflt' \
    || ksim_fail "LAST SEEN is not the series' last time: $out"
ok "LAST SEEN of a series"
echo "kubesim_schema: ok"
