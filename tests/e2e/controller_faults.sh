#!/usr/bin/env bash
# warden-controller end to end (issue 7, test 8): kube-sim's fault injection while three
# Etcds hibernate and wake up: 5 % of API requests answered 500, 5 % 429 with
# Retry-After, 20 ms latency, watches cut after 1.5 s, every open watch cut now and then,
# and the watch history expired (410 Gone: relist) twice. Every flow still converges, with
# the ports restored exactly and a successful final snapshot before each scale-down. The
# controller runs without leader election here (a 429 with Retry-After: 1 on the Lease
# renewal would exceed its short renew deadline; leader election has its own test).
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

faults() { ksim_wait 10 curl -sfk -H "Authorization: Bearer $KSIM_TOKEN" -X POST "$KSIM_URL/kube-sim/faults" -d "$1" >/dev/null; }
# kubectl and reads retried through the injected errors
retry() { ksim_wait 20 "$@" >/dev/null || ctl_fail "gave up: $*"; }
get() {
    local i out
    for ((i = 0; i < 100; i++)); do
        out=$("$@" 2>/dev/null) && { echo "$out"; return 0; }
        sleep 0.2
    done
    ctl_fail "gave up: $*"
}
jp() { get kc -n "$1" get $2 -o jsonpath="$3"; }
phase_is() { # ns name phase
    local p
    p=$(ctl_get "/apis/druid.gardener.cloud/v1alpha1/namespaces/$1/etcds/$2") || return 1
    p=$(grep -o '"etcd-warden.io/hibernation-phase":"[^"]*"' <<<"$p" | cut -d'"' -f4 || true)
    [ "$p" = "$3" ]
}
all_phase() { # phase
    local e
    for e in etcd-a etcd-b etcd-c; do phase_is shoot "$e" "$1" || return 1; done
}

ctl_stage
druid_etcd shoot etcd-a --bucket
druid_double_for shoot etcd-a
double_a=$DRUID_DOUBLE_URL
druid_etcd shoot etcd-b
druid_double_for shoot etcd-b
double_b=$DRUID_DOUBLE_URL
druid_etcd shoot etcd-c --no-store --replicas 1
declare -A ports
for e in etcd-a etcd-b etcd-c; do ports[$e]=$(jp shoot "svc/$e-client" '{.spec.ports}'); done

faults '{"errorRate":0.05,"throttleRate":0.05,"latencyMs":20,"watchMaxMs":1500}'
ok "faults on: 500 5 %, 429 5 %, 20 ms, watches end after 1.5 s"
ctl_start --leader-elect=false

for e in etcd-a etcd-b etcd-c; do retry kc -n shoot annotate etcd "$e" etcd-warden.io/hibernate=true; done
sleep 1
faults '{"cutWatches":true}'
sleep 1
faults '{"expireHistory":true}'
sleep 1
faults '{"cutWatches":true}'
state() { # what each Etcd shows, for failure messages
    local e
    for e in etcd-a etcd-b etcd-c; do
        echo "$e: $(ctl_get "/apis/druid.gardener.cloud/v1alpha1/namespaces/shoot/etcds/$e" | grep -o '"etcd-warden.io/hibernation-phase":"[^"]*"')"
    done
    kc -n shoot get etcdopstasks 2>&1
}
ksim_wait 60 all_phase Hibernated || ctl_fail "not all Hibernated under faults: $(state)"
ok "all three hibernated under faults"
for e in etcd-a etcd-b etcd-c; do
    expect "$e scaled to 0" 0 "$(jp shoot "sts/$e" '{.spec.replicas}')"
    expect "$e ports cut" backuprestore "$(jp shoot "svc/$e-client" '{.spec.ports[*].name}')"
done
for d in "$double_a" "$double_b"; do
    [ "$(curl -sf "$d/admin/requests" | grep '"final":"true"' | grep -c '"code":200')" -ge 1 ] ||
        ctl_fail "no successful final snapshot at $d"
done
ok "a successful final snapshot for each Etcd with a store"
retry kc -n shoot get cronjob etcd-a-extend-immutability

for e in etcd-a etcd-b etcd-c; do retry kc -n shoot annotate etcd "$e" etcd-warden.io/hibernate-; done
sleep 1
faults '{"expireHistory":true,"cutWatches":true}'
ksim_wait 60 all_phase "" || ctl_fail "not all awake under faults: $(state)"
ok "all three woke up under faults"
faults '{"reset":true}'
for e in etcd-a etcd-b etcd-c; do
    expect "$e ports restored exactly" "${ports[$e]}" "$(jp shoot "svc/$e-client" '{.spec.ports}')"
done
expect "replicas back" "3 3 1" \
    "$(jp shoot sts/etcd-a '{.spec.replicas}') $(jp shoot sts/etcd-b '{.spec.replicas}') $(jp shoot sts/etcd-c '{.spec.replicas}')"
imt_gone() { [ -z "$(kc -n shoot get extendfullsnapshotimmutabilitytasks,cronjobs -o name)" ]; }
ksim_wait 20 imt_gone || ctl_fail "immutability task or CronJob left"
ok "immutability task and CronJob gone"
errs=$(ctl_metrics | awk '/^(controller_runtime_reconcile_errors_total|workqueue_retries_total)\{/ { s += $2 } END { print s + 0 }')
[ "$errs" -gt 0 ] || ctl_fail "the controller saw no error: were the faults injected?"
ok "the controller met $errs errors and retries on the way"
ctl_stop
echo "PASS"
