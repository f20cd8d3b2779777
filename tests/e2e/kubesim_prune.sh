#!/usr/bin/env bash
# kube-sim prunes like kube-apiserver, shown with etcd-druid's real Etcd CRD (the one
# without CEL rules: kube-sim does not evaluate x-kubernetes-validations), read from the
# folder named by DRUID_CRD_DIR (skipped when it is unset): DEP-06's
# spec.backup.store.immutability, which etcd-druid's CRD does not declare, is refused by
# `kubectl apply --validate=strict`, dropped with a warning by --validate=warn and by
# kubectl patch, silently by --validate=false, while the annotation
# etcd-warden.io/immutability-retention-type: bucket is stored as written.
set -euo pipefail
. "$(dirname "$0")/../lib/kubesim.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
if [ -z "${DRUID_CRD_DIR:-}" ]; then
    echo "SKIP: DRUID_CRD_DIR is not set (the folder of etcd-druid's CRDs)"
    exit 77
fi
crd=$DRUID_CRD_DIR/druid.gardener.cloud_etcds_without_cel.yaml
[ -f "$crd" ] || ksim_fail "$crd does not exist"
ok() { echo "ok: $*"; }

kubesim_start
kc apply -f "$crd" >/dev/null
ksim_wait 20 kc get etcds -A >/dev/null || ksim_fail "etcd-druid's Etcd CRD is not served"
kc create namespace shoot >/dev/null
manifest=$(mktemp "${TMPDIR:-/tmp}/etcd.XXXXXX")
ksim_on_exit "rm -f '$manifest'"
cat >"$manifest" <<'YAML'
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-main
  namespace: shoot
  annotations:
    etcd-warden.io/immutability-retention-type: bucket
spec:
  replicas: 3
  labels: {app: etcd-statefulset, role: main}
  etcd: {clientPort: 2379, serverPort: 2380, quota: 8Gi}
  backup:
    port: 8080
    fullSnapshotSchedule: "0 */24 * * *"
    store:
      container: etcd-bucket
      prefix: shoot--etcd-main
      provider: S3
      secretRef: {name: etcd-backup}
      immutability: {retentionType: bucket}
YAML

# Strict: refused, nothing stored.
if out=$(kc apply --validate=strict -f "$manifest" 2>&1); then
    ksim_fail "--validate=strict accepted an undeclared field: $out"
fi
want='Error from server (BadRequest): error when creating "'"$manifest"'": Etcd in version "v1alpha1" cannot be handled as a Etcd: strict decoding error: unknown field "spec.backup.store.immutability"'
grep -qF -- "$want" <<<"$out" || ksim_fail "--validate=strict: expected \"$want\" in: $out"
ok "kubectl apply --validate=strict: $(head -1 <<<"$out")"
if kc -n shoot get etcd etcd-main >/dev/null 2>&1; then ksim_fail "the refused Etcd was stored"; fi
ok "nothing stored"

# Warn: stored without the field, with a warning.
out=$(kc apply --validate=warn -f "$manifest" 2>&1) || ksim_fail "--validate=warn: $out"
grep -qF 'Warning: unknown field "spec.backup.store.immutability"' <<<"$out" ||
    ksim_fail "--validate=warn: no warning in: $out"
ok "kubectl apply --validate=warn warns: $(grep Warning <<<"$out")"
store=$(kc -n shoot get etcd etcd-main -o jsonpath='{.spec.backup.store}')
case $store in
*immutability*) ksim_fail "the field was stored: $store" ;;
*shoot--etcd-main*) ok "spec.backup.store pruned to $store" ;;
*) ksim_fail "spec.backup.store lost declared fields: $store" ;;
esac
ann=$(kc -n shoot get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/immutability-retention-type}')
[ "$ann" = bucket ] || ksim_fail "the annotation was not stored: '$ann'"
ok "the annotation etcd-warden.io/immutability-retention-type=bucket is stored"

# kubectl patch sends no fieldValidation: the server's default, Warn.
out=$(kc -n shoot patch etcd etcd-main --type merge \
    -p '{"spec":{"backup":{"store":{"immutability":{"retentionType":"bucket"}}}}}' 2>&1) ||
    ksim_fail "patch: $out"
grep -qF 'Warning: unknown field "spec.backup.store.immutability"' <<<"$out" ||
    ksim_fail "patch: no warning in: $out"
store=$(kc -n shoot get etcd etcd-main -o jsonpath='{.spec.backup.store}')
case $store in *immutability*) ksim_fail "the patched field was stored: $store" ;; esac
ok "a merge patch of the field is pruned, with a warning"
# Ignore: pruned in silence.
out=$(kc apply --validate=false -f "$manifest" 2>&1) || ksim_fail "--validate=false: $out"
if grep -q Warning <<<"$out"; then ksim_fail "--validate=false warned: $out"; fi
store=$(kc -n shoot get etcd etcd-main -o jsonpath='{.spec.backup.store}')
case $store in *immutability*) ksim_fail "the field was stored: $store" ;; esac
ok "kubectl apply --validate=false prunes in silence"
kc -n shoot patch etcd etcd-main --subresource=status --type merge \
    -p '{"status":{"ready":true,"madeUp":1}}' >/dev/null 2>&1 || ksim_fail "status patch failed"
st=$(kc -n shoot get etcd etcd-main -o jsonpath='{.status}')
case $st in *madeUp*) ksim_fail "status kept an undeclared field: $st" ;; *'"ready":true'*) ;; *) ksim_fail "status: $st" ;; esac
ok "status is pruned too: $st"
echo PASS
