#!/usr/bin/env bash
# warden-webhook with --self-provision-tls on kube-sim: the CA and serving
# certificate are generated into a Secret, caBundle is patched into the
# webhook configurations (which kube-sim then trusts: the Etcd webhooks answer
# through kubectl), and a restarted webhook reuses the stored pair.
set -euo pipefail
. "$(dirname "$0")/../lib/webhook.sh"

wh_init
kubesim_start --service-alias "$(wh_alias)"
wh_etcd_crd
kc apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: etcd-warden}
---
apiVersion: v1
kind: Namespace
metadata: {name: shoot}
EOF
# Webhook configurations without a caBundle (WH_CA_BUNDLE is empty): the webhook fills it in.
wh_register_etcd

start_webhook() {
    wh_start --reconciler-service-account system:serviceaccount:etcd-druid:etcd-druid \
        --self-provision-tls --tls-namespace etcd-warden --tls-secret-name warden-webhook-tls \
        --tls-service-name warden-webhook --validating-webhook-configuration etcd-warden \
        --mutating-webhook-configuration etcd-warden
}
start_webhook

secret() { kc -n etcd-warden get secret warden-webhook-tls -o jsonpath="{.data.$1}"; }
ca=$(secret 'ca\.crt')
crt=$(secret 'tls\.crt')
[ -n "$ca" ] && [ -n "$crt" ] && [ -n "$(secret 'tls\.key')" ] && [ -n "$(secret 'ca\.key')" ] ||
    wh_fail "the Secret does not hold ca.crt, ca.key, tls.crt and tls.key"
echo "$crt" | base64 -d >"$WH_DIR/tls.crt"
echo "$ca" | base64 -d >"$WH_DIR/ca.crt"
openssl verify -CAfile "$WH_DIR/ca.crt" "$WH_DIR/tls.crt" | grep -q ': OK' ||
    wh_fail "tls.crt does not chain to ca.crt"
openssl x509 -in "$WH_DIR/tls.crt" -noout -ext subjectAltName |
    grep -q 'DNS:warden-webhook.etcd-warden.svc' || wh_fail "the serving certificate does not name the Service"
for kind in validatingwebhookconfiguration mutatingwebhookconfiguration; do
    got=$(kc get "$kind" etcd-warden -o jsonpath='{.webhooks[0].clientConfig.caBundle}')
    [ "$got" = "$ca" ] || wh_fail "caBundle of the $kind is not the Secret's ca.crt"
done
echo "ok: Secret generated, caBundle patched into both configurations"

# kube-sim now calls the webhooks over TLS with that caBundle.
wh_restored_etcd shoot etcd-restored true '{}'
wh_is_restoring shoot etcd-restored || wh_fail "the mutating webhook was not called"
if out=$(kc -n shoot delete etcd etcd-restored 2>&1); then wh_fail "delete allowed: $out"; fi
grep -qF 'delete not allowed while etcd-warden.io/restoring label exists' <<<"$out" ||
    wh_fail "unexpected answer: $out"
echo "ok: the API server trusts the self-provisioned certificate"

# A restart reuses the stored pair: the Secret is not rewritten.
rv=$(kc -n etcd-warden get secret warden-webhook-tls -o jsonpath='{.metadata.resourceVersion}')
wh_stop
start_webhook
[ "$(secret 'tls\.crt')" = "$crt" ] || wh_fail "the restarted webhook replaced the certificate"
[ "$(kc -n etcd-warden get secret warden-webhook-tls -o jsonpath='{.metadata.resourceVersion}')" = "$rv" ] ||
    wh_fail "the restarted webhook rewrote the Secret"
if kc -n shoot delete etcd etcd-restored >/dev/null 2>&1; then wh_fail "delete allowed after restart"; fi
echo "ok: a restarted webhook serves the stored pair"
wh_stop
echo "webhook_selftls: all checks passed"
