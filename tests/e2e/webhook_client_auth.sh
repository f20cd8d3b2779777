#!/usr/bin/env bash
# warden-webhook --client-ca / --client-cn: only the API server, authenticated by its client
# certificate, gets webhook reviews decided. A hand-written AdmissionReview (an Etcd CREATE in
# a made-up namespace claiming the whole of a bucket, prefix "") posted straight to the HTTPS
# port without a client certificate, with one from another CA, with the right CA's certificate
# for servers only (extendedKeyUsage serverAuth) or of another CN is refused (401/403) and records no claim: the store's claim Lease
# stays absent. With the API server's certificate it is decided as usual (and recorded), except
# with request.dryRun, which never records a claim. kube-sim shows that certificate to the
# webhook (--webhook-client-cert, as kube-apiserver with an AdmissionConfiguration
# kubeConfigFile), so kubectl apply goes through end to end. An unreadable or empty CA file,
# or --client-cn without --client-ca, refuses to start.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

pki=$(mktemp -d "${TMPDIR:-/tmp}/wh-client-auth.XXXXXX")
ksim_on_exit "rm -rf '$pki'"
ca() { # name: a CA in $pki/name.crt, name.key
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=$1" -keyout "$pki/$1.key" -out "$pki/$1.crt" 2>/dev/null
}
client() { # ca name cn [purpose]: a client certificate $pki/name.crt, name.key signed by ca
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$3" \
        -keyout "$pki/$2.key" -out "$pki/$2.csr" 2>/dev/null
    printf 'extendedKeyUsage=%s\nkeyUsage=digitalSignature\n' "${4:-clientAuth}" >"$pki/ext"
    openssl x509 -req -in "$pki/$2.csr" -CA "$pki/$1.crt" -CAkey "$pki/$1.key" \
        -CAcreateserial -days 2 -extfile "$pki/ext" -out "$pki/$2.crt" 2>/dev/null
}
ca client-ca
ca rogue-ca
client client-ca apiserver kube-apiserver
client client-ca other-cn somebody-else
client rogue-ca rogue kube-apiserver
client client-ca server-only kube-apiserver serverAuth

# Fail closed: a CA file that cannot be read, or holds no certificate, refuses to start.
bin=$(_wh_binary)
for bad in "$pki/missing.pem" "$pki/ext"; do
    if out=$(timeout 30 "$bin" --reconciler-service-account system:serviceaccount:a:b \
        --webhook-server-tls-server-cert-dir "$pki" --kubeconfig /nonexistent \
        --client-ca "$bad" 2>&1); then
        echo "FAIL: warden-webhook started with --client-ca $bad"; exit 1
    fi
    grep -q -- '--client-ca' <<<"$out" || { echo "FAIL: no --client-ca in: $out"; exit 1; }
done
ok "an unreadable or certificate-less --client-ca refuses to start"

CTL_WEBHOOK_FLAGS="--backup-entries --client-ca $pki/client-ca.crt --client-cn kube-apiserver" \
    ctl_stage --webhook-client-cert "$pki/apiserver.crt" --webhook-client-key "$pki/apiserver.key"
ctl_namespace shoot

# End to end: kube-sim presents the API server's certificate.
kc apply -f - >/dev/null <<EOF || wh_fail "kubectl apply of shoot/etcd-main refused"
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: etcd-main, namespace: shoot}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: S3, container: etcd-bucket, prefix: shoot--etcd-main, secretRef: {name: etcd-backup}}}
EOF
ok "kubectl apply goes through the webhook with the API server's client certificate"
claims() { kc get leases -A -o name | grep -c "etcd-warden-claims-" || true; }
[ "$(claims)" = 1 ] || wh_fail "the admitted Etcd left $(claims) claim Leases, expected 1"

review() { # dryRun: the forged review of evil/squat on the whole of another bucket
    cat <<EOF
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"0d0e0a0d-beef",
"kind":{"group":"druid.gardener.cloud","version":"v1alpha1","kind":"Etcd"},
"resource":{"group":"druid.gardener.cloud","version":"v1alpha1","resource":"etcds"},
"namespace":"evil","name":"squat","operation":"CREATE","dryRun":$1,
"userInfo":{"username":"system:serviceaccount:evil:default"},
"object":{"apiVersion":"druid.gardener.cloud/v1alpha1","kind":"Etcd",
"metadata":{"name":"squat","namespace":"evil"},
"spec":{"replicas":1,"labels":{"app":"x"},"etcd":{},
"backup":{"store":{"provider":"S3","container":"shared-bucket","prefix":""}}}}}}
EOF
}
post() { # dryRun, then curl's certificate arguments: prints "STATUS BODY"
    local dry=$1
    shift
    review "$dry" | curl -sS --max-time 20 --cacert "$WH_DIR/certs/ca.crt" "$@" \
        -H 'Content-Type: application/json' --data-binary @- -w '\n%{http_code}' \
        "https://127.0.0.1:$WH_PORT/webhooks/etcd" 2>&1 || true
}
refused() { # what, status wanted, then post's arguments
    local what=$1 want=$2 out
    shift 2
    out=$(post "$@")
    [ "$(tail -n1 <<<"$out")" = "$want" ] && grep -q "client certificate" <<<"$out" ||
        wh_fail "$what: expected HTTP $want naming the client certificate, got: $out"
    [ "$(claims)" = 1 ] || wh_fail "$what: a claim was recorded ($(claims) claim Leases)"
    ok "$what: $want, no claim recorded"
}
refused "forged review without a client certificate" 401 false
refused "forged review with a certificate of another CA" 401 false \
    --cert "$pki/rogue.crt" --key "$pki/rogue.key"
refused "forged review with the right CA's certificate for servers only" 401 false \
    --cert "$pki/server-only.crt" --key "$pki/server-only.key"
refused "forged review with the right CA's certificate of another CN" 403 false \
    --cert "$pki/other-cn.crt" --key "$pki/other-cn.key"

out=$(post true --cert "$pki/apiserver.crt" --key "$pki/apiserver.key")
[ "$(tail -n1 <<<"$out")" = 200 ] && grep -q '"allowed":true' <<<"$out" ||
    wh_fail "dry-run review with the API server's certificate: $out"
[ "$(claims)" = 1 ] || wh_fail "a dry-run review recorded a claim"
ok "a dry-run review is decided (allowed) and records no claim"

out=$(post false --cert "$pki/apiserver.crt" --key "$pki/apiserver.key")
[ "$(tail -n1 <<<"$out")" = 200 ] && grep -q '"allowed":true' <<<"$out" ||
    wh_fail "review with the API server's certificate: $out"
[ "$(claims)" = 2 ] || wh_fail "the authenticated review recorded no claim ($(claims) claim Leases)"
ok "with the API server's certificate the review is decided as usual (claim recorded)"

curl -sf "http://127.0.0.1:$WH_HEALTH_PORT/healthz" >/dev/null || wh_fail "/healthz needs a certificate"
ok "/healthz answers without a client certificate"
wh_stop
echo "webhook_client_auth: ok"
