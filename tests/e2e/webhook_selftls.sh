#!/usr/bin/env bash
# warden-webhook with --self-provision-tls on kube-sim: the CA and serving
# certificate are generated into a Secret, caBundle is patched into the
# webhook configurations (which kube-sim then trusts: the Etcd webhooks answer
# through kubectl), and a restarted webhook reuses the stored pair.
set -euo pipefail
src=${WARDEN_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${WARDEN_BINARY_DIR:-$src/build/debug}
ksim=${KUBE_SIM:-$bin/tests/kube-sim/kube-sim}
wh=${WARDEN_WEBHOOK:-$bin/webhook/warden-webhook}
for b in "$ksim" "$wh"; do
    [ -x "$b" ] || { echo "FAIL: $b is not built"; exit 1; }
done

work=$(mktemp -d)
pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*"
    echo "--- webhook log (last 20 lines)"; tail -20 "$work/webhook.log" || true
    exit 1
}
eventually() {
    local limit=$1 start=$SECONDS
    shift
    until "$@" >/dev/null 2>&1; do
        [ $((SECONDS - start)) -lt "$limit" ] || return 1
        sleep 0.1
    done
}
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 12000)) # below the ephemeral range
        (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}

wport=$(free_port)
"$ksim" --data-dir "$work/ksim" --service-alias "warden-webhook.etcd-warden=127.0.0.1:$wport" \
    >"$work/ksim.log" 2>&1 &
pids+=($!)
eventually 20 test -s "$work/ksim/admin.kubeconfig" || fail "kube-sim did not start"
export KUBECONFIG=$work/ksim/admin.kubeconfig
eventually 20 kubectl get --raw /version || fail "kube-sim does not answer"
kubectl apply -f "$src/charts/etcd-warden/crds/druid.gardener.cloud_etcds.yaml" >/dev/null
eventually 20 kubectl get etcds -A || fail "the Etcd CRD is not served"

# Webhook configurations without a caBundle: the webhook fills it in.
kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: etcd-warden}
---
apiVersion: v1
kind: Namespace
metadata: {name: shoot}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: etcd-warden}
webhooks:
- name: etcd.webhooks.etcd-warden.io
  admissionReviewVersions: [v1]
  clientConfig:
    service: {name: warden-webhook, namespace: etcd-warden, path: /webhooks/etcd, port: 443}
  failurePolicy: Fail
  sideEffects: None
  rules:
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [UPDATE, DELETE], resources: [etcds]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: etcd-warden}
webhooks:
- name: etcd-mutate.webhooks.etcd-warden.io
  admissionReviewVersions: [v1]
  clientConfig:
    service: {name: warden-webhook, namespace: etcd-warden, path: /webhooks/etcd-mutate, port: 443}
  failurePolicy: Fail
  sideEffects: None
  rules:
  - {apiGroups: [druid.gardener.cloud], apiVersions: [v1alpha1], operations: [CREATE], resources: [etcds]}
EOF

hport=$(free_port)
start_webhook() {
    "$wh" --kubeconfig "$KUBECONFIG" \
        --reconciler-service-account system:serviceaccount:etcd-druid:etcd-druid \
        --self-provision-tls --tls-namespace etcd-warden --tls-secret-name warden-webhook-tls \
        --tls-service-name warden-webhook --validating-webhook-configuration etcd-warden \
        --mutating-webhook-configuration etcd-warden --webhook-server-port "$wport" \
        --webhook-server-bind-address 127.0.0.1 --metrics-bind-address 0 \
        --health-probe-bind-address "127.0.0.1:$hport" >>"$work/webhook.log" 2>&1 &
    whpid=$!
    pids+=($whpid)
    eventually 30 curl -sf "http://127.0.0.1:$hport/readyz" || fail "the webhook never became ready"
}
start_webhook

secret() { kubectl -n etcd-warden get secret warden-webhook-tls -o jsonpath="{.data.$1}"; }
ca=$(secret 'ca\.crt')
crt=$(secret 'tls\.crt')
[ -n "$ca" ] && [ -n "$crt" ] && [ -n "$(secret 'tls\.key')" ] && [ -n "$(secret 'ca\.key')" ] ||
    fail "the Secret does not hold ca.crt, ca.key, tls.crt and tls.key"
echo "$crt" | base64 -d >"$work/tls.crt"
echo "$ca" | base64 -d >"$work/ca.crt"
openssl verify -CAfile "$work/ca.crt" "$work/tls.crt" | grep -q ': OK' || fail "tls.crt does not chain to ca.crt"
openssl x509 -in "$work/tls.crt" -noout -ext subjectAltName | grep -q 'DNS:warden-webhook.etcd-warden.svc' ||
    fail "the serving certificate does not name the Service"
for kind in validatingwebhookconfiguration mutatingwebhookconfiguration; do
    got=$(kubectl get "$kind" etcd-warden -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
    [ "$got" = "$ca" ] || fail "caBundle of the $kind is not the Secret's ca.crt"
done
echo "ok: Secret generated, caBundle patched into both configurations"

# kube-sim now calls the webhooks over TLS with that caBundle.
kubectl apply -f - >/dev/null <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata:
  name: etcd-restored
  namespace: shoot
  annotations: {etcd-warden.io/status-backup-exists: "true"}
spec: {replicas: 1, labels: {app: etcd}, etcd: {}, backup: {}}
EOF
kubectl -n shoot get etcd etcd-restored -o jsonpath='{.metadata.labels}' |
    grep -q '"etcd-warden.io/restoring":""' || fail "the mutating webhook was not called"
if out=$(kubectl -n shoot delete etcd etcd-restored 2>&1); then fail "delete allowed: $out"; fi
grep -qF 'delete not allowed while etcd-warden.io/restoring label exists' <<<"$out" ||
    fail "unexpected answer: $out"
echo "ok: the API server trusts the self-provisioned certificate"

# A restart reuses the stored pair: the Secret is not rewritten.
rv=$(kubectl -n etcd-warden get secret warden-webhook-tls -o jsonpath='{.metadata.resourceVersion}')
kill -TERM "$whpid"
wait "$whpid" || fail "warden-webhook exited with an error on SIGTERM"
start_webhook
[ "$(secret 'tls\.crt')" = "$crt" ] || fail "the restarted webhook replaced the certificate"
[ "$(kubectl -n etcd-warden get secret warden-webhook-tls -o jsonpath='{.metadata.resourceVersion}')" = "$rv" ] ||
    fail "the restarted webhook rewrote the Secret"
if kubectl -n shoot delete etcd etcd-restored >/dev/null 2>&1; then fail "delete allowed after restart"; fi
echo "ok: a restarted webhook serves the stored pair"
kill -TERM "$whpid"
wait "$whpid" || fail "warden-webhook exited with an error on SIGTERM"
if grep -qE 'Sanitizer|runtime error' "$work/webhook.log"; then
    grep -vE '^\{' "$work/webhook.log"
    fail "sanitizer report from warden-webhook"
fi
echo "webhook_selftls: all checks passed"
