#!/usr/bin/env bash
# The rendered chart applied to kube-sim with kubectl: every object of every value
# set is accepted. With the default values, warden-webhook then runs with the
# rendered Deployment's own flags as its own service account: it provisions its
# certificate into the Secret the chart names, patches caBundle into the rendered
# webhook configurations, and kube-sim calls it through them (etcd-druid's
# component protection, the statefulsets/scale webhook, the mutating Etcd webhook).
# Every request it made (kube-sim's request log) must be allowed by the rendered
# RBAC and predicted by the scan of its code.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../lib/webhook.sh"
. "$here/../lib/chart.sh"

chart_tool
wh_init
ids=$WH_DIR/ids
chart_identities "$ids"
kubesim_start --token-file "$ids/tokens.csv" --service-alias "$(wh_alias)" -v
chart_kubeconfigs "$ids"

r=$WH_DIR/defaults.yaml
chart_render "$r" -f "$root/tests/chart/values/crds-all.yaml" -f "$root/tests/chart/values/monitoring.yaml"
kc create namespace "$CHART_NS" >/dev/null
kc apply -f "$root/tests/chart/thirdparty-crds.yaml" >/dev/null
ksim_wait 20 kc get certificates,issuers,servicemonitors,prometheusrules -A >/dev/null || wh_fail "stand-in CRDs not served"

# kubectl apply: every object created, then every object readable.
out=$(kc apply -f "$r" 2>&1) || wh_fail "kubectl apply of the rendered chart: $out"
echo "$out" | grep -qv ' created$' && { echo "$out"; wh_fail "an object was not created"; }
want=$(grep -c '^kind: ' "$r")
got=$(echo "$out" | grep -c ' created$')
[ "$want" = "$got" ] || wh_fail "$want objects rendered, $got created"
kc get -f "$r" -o name >/dev/null || wh_fail "rendered objects are not all readable"
echo "ok defaults: $got objects created"

# The webhook as the chart runs it.
chart_start_webhook "$r" "$ids" "$WH_PORT" "$WH_HEALTH_PORT" "$WH_LOG"
WH_PID=$CHART_WH_PID
ksim_on_exit _wh_cleanup
ksim_wait 30 curl -sf "http://127.0.0.1:$WH_HEALTH_PORT/readyz" || wh_fail "webhook not ready"
for k in validatingwebhookconfiguration mutatingwebhookconfiguration; do
    ksim_wait 20 sh -c "kubectl --kubeconfig '$KUBECONFIG' get $k etcd-warden -o jsonpath='{.webhooks[*].clientConfig.caBundle}' | grep -q ." ||
        wh_fail "caBundle never patched into $k etcd-warden"
done
kc -n "$CHART_NS" get secret warden-webhook-tls >/dev/null || wh_fail "no self-provisioned Secret"

wh_etcd shoot--a main
druid="$ids/etcd-druid.kubeconfig"
kubectl --kubeconfig "$druid" --cache-dir "$KSIM_DIR/kubectl-cache" -n shoot--a apply -f - >/dev/null <<Y
$(wh_statefulset main)
Y
out=$(kc -n shoot--a label sts main extra=1 2>&1 || true)
case "$out" in *'admission webhook "members.etcdcomponents.webhooks.etcd-warden.io" denied the request'*) ;;
*) wh_fail "a protected StatefulSet edit was not refused: $out" ;; esac
out=$(kc -n shoot--a scale sts main --replicas=1 2>&1 || true)
case "$out" in *'admission webhook "stsscale.etcdcomponents.webhooks.druid.gardener.cloud" denied the request'*) ;;
*) wh_fail "a scale of a protected StatefulSet was not refused: $out" ;; esac
kc create namespace shoot--b >/dev/null
wh_restored_etcd shoot--b main true '{store: {prefix: b}}'
wh_is_restoring shoot--b main || wh_fail "the mutating webhook did not mark a restored Etcd"
echo "ok webhook: self-provisioned TLS, protection, scale and mutation through the rendered configurations"
wh_stop

"$CHARTTOOL" audit "$r" --log "$KSIM_DIR/kube-sim.log" --src "$root" \
    --process "webhook=$CHART_NS/warden-webhook:webhook,common" || wh_fail "audit of the webhook's requests"

# Every other value set is accepted too (cluster objects are updated in place).
for v in tls-secret tls-certmanager tls-certmanager-issuer watch-namespace crds-none client-auth; do
    f=$WH_DIR/$v.yaml
    chart_render "$f" -f "$root/tests/chart/values/$v.yaml"
    grep -q 'shoot--dev--one' "$f" && kc create namespace shoot--dev--one >/dev/null 2>&1 || true
    out=$(kc apply -f "$f" 2>&1) || { echo "$out"; wh_fail "$v: kubectl apply failed"; }
    bad=$(echo "$out" | grep -Ev ' (created|configured|unchanged)$' || true)
    [ -z "$bad" ] || wh_fail "$v: $bad"
    kc get -f "$f" -o name >/dev/null || wh_fail "$v: objects not readable"
    echo "ok $v: $(echo "$out" | wc -l) objects accepted"
done

# tls.mode secret for real: a CA and serving certificate from certs/gen-certs.sh in the
# Secret the values name, its CA as tls.secret.caBundle; the webhook serves the files
# (the mount path overridden to where they are) and kube-sim verifies them with the
# rendered caBundle.
wh_certs
f=$WH_DIR/secret-real.yaml
chart_render "$f" --set tls.mode=secret --set tls.secret.name=warden-webhook-serving \
    --set "tls.secret.caBundle=$WH_CA_BUNDLE"
kc -n "$CHART_NS" create secret tls warden-webhook-serving --cert "$WH_DIR/certs/tls.crt" \
    --key "$WH_DIR/certs/tls.key" >/dev/null
kc apply -f "$f" >/dev/null || wh_fail "secret mode: kubectl apply"
[ "$(chart_get "$f" Deployment warden-webhook spec.template.spec.volumes.0.secret.secretName)" = '"warden-webhook-serving"' ] ||
    wh_fail "secret mode does not mount the Secret"
chart_start_webhook "$f" "$ids" "$WH_PORT" "$WH_HEALTH_PORT" "$WH_LOG" \
    --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
WH_PID=$CHART_WH_PID
ksim_wait 30 curl -sf "http://127.0.0.1:$WH_HEALTH_PORT/readyz" || wh_fail "webhook not ready (secret mode)"
out=$(kc -n shoot--a label sts main again=1 2>&1 || true)
case "$out" in *'denied the request: changes from service account kubernetes-admin are disallowed'*) ;;
*) wh_fail "secret mode: the protected edit was not refused through the rendered caBundle: $out" ;; esac
wh_stop
echo "ok secret mode: the mounted certificate verified with the rendered caBundle"
echo "PASS chart_apply"
