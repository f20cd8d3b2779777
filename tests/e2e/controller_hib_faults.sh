#!/usr/bin/env bash
# warden-controller end to end: one hibernation and one wake-up while kube-sim answers 15 % of
# the requests on the Etcd's namespace with 500 and 10 % with 429 (Retry-After: 1), and cuts
# every watch within 3 s. The hibernation reaches Hibernated within 60 s (with a successful
# final snapshot before the scale-down), the wake-up ends within 60 s, and no reconcile of
# the Etcd makes more than 8 API requests (warden_reconcile_api_requests). The figures are
# printed: seconds to Hibernated and to awake, reconciles, requests, the busiest reconcile.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

LIMIT=${HIB_FAULTS_SECONDS:-60}

faults() { ksim_wait 10 curl -sfk -H "Authorization: Bearer $KSIM_TOKEN" -X POST "$KSIM_URL/kube-sim/faults" -d "$1" >/dev/null; }
retry() { ksim_wait 20 "$@" >/dev/null || ctl_fail "gave up: $*"; }
phase_is() { # phase (read as the admin, outside the faulted paths' retries)
    local p
    p=$(ctl_get /apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds/etcd-a) || return 1
    p=$(grep -o '"etcd-warden.io/hibernation-phase":"[^"]*"' <<<"$p" | cut -d'"' -f4 || true)
    [ "$p" = "$1" ]
}
# The etcd controller's warden_reconcile_api_requests: "count busiest sum", busiest being the
# smallest bucket bound that holds every reconcile.
requests() {
    ctl_metrics | awk '
        /^warden_reconcile_api_requests_bucket\{controller="etcd",/ {
            match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5)
            b[le] = $2; order[++n] = le }
        /^warden_reconcile_api_requests_count\{controller="etcd"\}/ { count = $2 }
        /^warden_reconcile_api_requests_sum\{controller="etcd"\}/ { sum = $2 }
        END { busiest = "+Inf"
              for (i = 1; i <= n; i++) if (b[order[i]] == count) { busiest = order[i]; break }
              print count + 0, busiest, sum + 0 }'
}
state() {
    echo "phase: $(ctl_get /apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds/etcd-a | grep -o '"etcd-warden.io/hibernation-phase":"[^"]*"')"
    echo "requests: $(requests)"
    kc -n shoot get etcdopstasks 2>&1 || true
}

ctl_stage
druid_etcd shoot etcd-a --bucket
druid_double_for shoot etcd-a
double=$DRUID_DOUBLE_URL
ports=$(kc -n shoot get svc etcd-a-client -o jsonpath='{.spec.ports}')
ctl_start --leader-elect=false
read -r n0 _ sum0 <<<"$(requests)"

faults '{"errorRate":0.15,"throttleRate":0.10,"match":"/namespaces/shoot/","watchMaxMs":3000}'
ok "faults on the namespace shoot: 500 15 %, 429 10 %, watches cut within 3 s"
t0=$SECONDS
retry kc -n shoot annotate etcd etcd-a etcd-warden.io/hibernate=true
ksim_wait "$LIMIT" phase_is Hibernated || ctl_fail "not Hibernated within ${LIMIT}s under faults: $(state)"
down=$((SECONDS - t0))
ok "Hibernated in ${down}s under faults (limit ${LIMIT}s)"
read -r n1 busiest1 sum1 <<<"$(requests)"

faults '{"errorRate":0,"throttleRate":0}'
expect "scaled to 0" 0 "$(kc -n shoot get sts etcd-a -o jsonpath='{.spec.replicas}')"
[ "$(curl -sf "$double/admin/requests" | grep '"final":"true"' | grep -c '"code":200')" -ge 1 ] ||
    ctl_fail "no successful final snapshot"
ok "a successful final snapshot before the scale-down"
faults '{"errorRate":0.15,"throttleRate":0.10}'

t0=$SECONDS
retry kc -n shoot annotate etcd etcd-a etcd-warden.io/hibernate-
ksim_wait "$LIMIT" phase_is "" || ctl_fail "not awake within ${LIMIT}s under faults: $(state)"
up=$((SECONDS - t0))
ok "awake in ${up}s under faults (limit ${LIMIT}s)"
read -r n2 busiest2 sum2 <<<"$(requests)"
faults '{"reset":true}'
expect "ports restored exactly" "$ports" "$(kc -n shoot get svc etcd-a-client -o jsonpath='{.spec.ports}')"
expect "replicas back" 3 "$(kc -n shoot get sts etcd-a -o jsonpath='{.spec.replicas}')"

echo "figures: to Hibernated ${down}s, $((n1 - n0)) reconciles, $((sum1 - sum0)) API requests," \
    "the busiest at most $busiest1; awake ${up}s, $((n2 - n1)) reconciles," \
    "$((sum2 - sum1)) API requests, the busiest at most $busiest2"
for b in "$busiest1" "$busiest2"; do
    case $b in
    0 | 1 | 2 | 4 | 8) ;;
    *) ctl_fail "a reconcile of the Etcd made more than 8 API requests (bucket $b)" ;;
    esac
done
ok "no reconcile of the Etcd made more than 8 API requests"
errs=$(ctl_metrics | awk '/^(controller_runtime_reconcile_errors_total|workqueue_retries_total)\{/ { s += $2 } END { print s + 0 }')
[ "$errs" -gt 0 ] || ctl_fail "the controller met no error: were the faults injected?"
ok "the controller met $errs errors and retries on the way"
ctl_stop
echo "PASS"
