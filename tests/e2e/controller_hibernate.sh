#!/usr/bin/env bash
# warden-controller end to end (issue 7, tests 1 and 2): hibernation with a backup store
# and bucket immutability, then wake-up; hibernation of an Etcd without a store, whose
# operator-set suspension of etcd-druid outlives the wake-up. kube-sim
# with warden-webhook registered, etcd-druid's components made by tests/lib/druid.sh,
# backup-double answering on the client Service's clusterIP; the user acts with kubectl.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

ctl_stage
druid_etcd shoot etcd-main --bucket --schedule "15 */6 * * *"
druid_double_for shoot etcd-main
double_main=$DRUID_DOUBLE_URL
druid_etcd shoot etcd-events --no-store --replicas 1
ctl_start

ports_before=$(jp shoot svc/etcd-main-client '{.spec.ports}')
ctl_watch_phases shoot etcd-main "$CTL_DIR/phases-main"
ctl_watch_phases shoot etcd-events "$CTL_DIR/phases-events"
kc -n shoot get etcdopstasks -w -o name >"$CTL_DIR/tasks-events" 2>&1 &
ksim_on_exit "kill $! 2>/dev/null || true"

# ---- 1. hibernate with a backup store
# an operator froze etcd-druid on etcd-events before: the controller must leave that alone
kc -n shoot annotate etcd etcd-events druid.gardener.cloud/suspend-etcd-spec-reconcile=operator-maintenance >/dev/null
kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
kc -n shoot annotate etcd etcd-events etcd-warden.io/hibernate=true >/dev/null
kc -n shoot wait etcd/etcd-main --timeout="$(ksim_secs 40)s" \
    --for=jsonpath='{.metadata.annotations.etcd-warden\.io/hibernation-phase}'=Hibernated >/dev/null ||
    ctl_fail "etcd-main did not reach Hibernated (phases: $(ctl_phases "$CTL_DIR/phases-main"))"
ctl_await_phases "$CTL_DIR/phases-main" "- CuttingTraffic FinalSnapshot ScalingDown Hibernated"
expect "phases in order" "- CuttingTraffic FinalSnapshot ScalingDown Hibernated" \
    "$(ctl_phases "$CTL_DIR/phases-main")"
expect "suspend annotation" "true" \
    "$(jp shoot etcd/etcd-main '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')"
expect "client and server ports gone, backup port kept" "backuprestore:8080" \
    "$(jp shoot svc/etcd-main-client '{range .spec.ports[*]}{.name}:{.port}{end}')"
removed=$(jp shoot svc/etcd-main-client '{.metadata.annotations.etcd-warden\.io/removed-ports}')
grep -q '"name":"client"' <<<"$removed" && grep -q '"name":"server"' <<<"$removed" ||
    ctl_fail "removed ports not remembered: $removed"
ok "removed ports remembered on the Service"

tasks=$(jp shoot etcdopstasks '{range .items[?(@.spec.etcdName=="etcd-main")]}{.metadata.name} {.spec.config.onDemandSnapshot.type} {.spec.config.onDemandSnapshot.isFinal} {.status.state}{"\n"}{end}')
expect "one final full snapshot task, Succeeded" "full true Succeeded" "$(cut -d' ' -f2- <<<"$tasks")"
reqs=$(curl -sf "$double_main/admin/requests")
expect "the sidecar took one final snapshot (the revision check after it took none)" 1 \
    "$(grep -v '"skipped":true' <<<"$reqs" | grep -c '"final":"true"')"
grep -q '"path":"/snapshot/full","query":{"final":"true"},"code":200' <<<"$reqs" ||
    ctl_fail "not a successful POST /snapshot/full?final=true: $reqs"
# The revision check no longer sleeps a second: it reads the quiet second from the sidecar's
# times. Its last question must still come a second or more after the final snapshot was
# stamped (both on the double's clock: the snapshot's createdOn, with microseconds in the
# sidecar's own answer, and the time the double logged the check's last request).
snap=$(curl -sf -X POST "$double_main/snapshot/full?final=true") || ctl_fail "asking the double failed"
created=$(jq -r .createdOn <<<"$snap")
last=$(grep '"skipped":true' <<<"$reqs" | grep '"final":"true"' | tail -1 | jq -r .time)
[ -n "$last" ] && [ "$last" != null ] || ctl_fail "no revision check among the sidecar's requests: $reqs"
quiet=$(awk -v a="$(date -u -d "$created" +%s.%N)" -v b="$(date -u -d "$last" +%s.%N)" \
    'BEGIN { printf "%.6f", b - a }')
awk -v q="$quiet" 'BEGIN { exit !(q >= 1.0) }' ||
    ctl_fail "the revision check's last question came ${quiet}s after the final snapshot ($created, $last)"
ok "the revision check's last question came ${quiet}s after the final snapshot was stamped"
expect "scaled to 0 (spec, status)" "0 0" "$(jp shoot sts/etcd-main '{.spec.replicas} {.status.replicas}')"

imt=$(jp shoot extendfullsnapshotimmutabilitytasks '{range .items[*]}{.metadata.name} {.spec.etcdName} {.spec.config.schedule}{"\n"}{end}')
expect "immutability task with the full-snapshot schedule" \
    "etcd-main-extend-immutability etcd-main 15 */6 * * *" "$imt"
task_created=$(jp shoot extendfullsnapshotimmutabilitytask/etcd-main-extend-immutability '{.metadata.creationTimestamp}')
ksim_wait 15 kc -n shoot get cronjob etcd-main-extend-immutability >/dev/null ||
    ctl_fail "no CronJob for the immutability task"
cj() { jp shoot cronjob/etcd-main-extend-immutability "$1"; }
expect "CronJob schedule" "15 */6 * * *" "$(cj '{.spec.schedule}')"
expect "CronJob owned by the task" "ExtendFullSnapshotImmutabilityTask/etcd-main-extend-immutability true" \
    "$(cj '{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.metadata.ownerReferences[0].controller}')"
expect "CronJob command" "warden-snapshot extend-snapshot-immutability" \
    "$(cj '{.spec.jobTemplate.spec.template.spec.containers[0].command[*]}')"
# the default image is the controller's, tagged with the chart's appVersion
app_version=$(sed -n 's/^appVersion: *"\{0,1\}\([^" ]*\)"\{0,1\} *$/\1/p' "$(dirname "$0")/../../charts/etcd-warden/Chart.yaml")
expect "CronJob image" "etcd-warden/controller:$app_version" \
    "$(cj '{.spec.jobTemplate.spec.template.spec.containers[0].image}')"
expect "CronJob args" \
    "--gc-from-timestamp=$(date -u -d "$task_created" +%s) --storage-provider=S3 --store-container=etcd-bucket --store-prefix=shoot--etcd-main" \
    "$(cj '{.spec.jobTemplate.spec.template.spec.containers[0].args[*]}')"
expect "store Secret mounted" "etcd-backup" \
    "$(cj '{.spec.jobTemplate.spec.template.spec.volumes[?(@.secret)].secret.secretName}')"
env=$(cj '{range .spec.jobTemplate.spec.template.spec.containers[0].env[*]}{.name}={.value} {end}')
grep -q 'AWS_APPLICATION_CREDENTIALS=/var/etcd-backup' <<<"$env" &&
    grep -q 'STORAGE_CONTAINER=etcd-bucket' <<<"$env" || ctl_fail "CronJob environment: $env"
ok "CronJob environment as etcd-druid's backup sidecar"
ctl_events shoot etcd-main | grep -q 'Hibernated' || ctl_fail "no Hibernated event: $(ctl_events shoot etcd-main)"
ok "Hibernated event"

# ---- 2. hibernate without a store: no task, scaled to 0
kc -n shoot wait etcd/etcd-events --timeout="$(ksim_secs 20)s" \
    --for=jsonpath='{.metadata.annotations.etcd-warden\.io/hibernation-phase}'=Hibernated >/dev/null ||
    ctl_fail "etcd-events did not reach Hibernated (phases: $(ctl_phases "$CTL_DIR/phases-events"))"
expect "no store: scaled to 0" "0 0" "$(jp shoot sts/etcd-events '{.spec.replicas} {.status.replicas}')"
grep -q 'etcd-events' "$CTL_DIR/tasks-events" && ctl_fail "a task was created for etcd-events"
grep -q 'FinalSnapshot' "$CTL_DIR/phases-events" && ctl_fail "no store, yet phase FinalSnapshot"
ctl_await_phases "$CTL_DIR/phases-events" "- CuttingTraffic ScalingDown Hibernated"
expect "no store: phases" "- CuttingTraffic ScalingDown Hibernated" "$(ctl_phases "$CTL_DIR/phases-events")"
expect "no store: no immutability task" "" \
    "$(jp shoot extendfullsnapshotimmutabilitytasks '{.items[?(@.spec.etcdName=="etcd-events")].metadata.name}')"

# ---- wake-up: replicas and exactly the ports that were there
: >"$CTL_DIR/phases-main.wake"
ctl_watch_phases shoot etcd-main "$CTL_DIR/phases-main.wake"
kc -n shoot annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null
kc -n shoot annotate etcd etcd-events --overwrite etcd-warden.io/hibernate=false >/dev/null
ctl_wait_phase shoot etcd-main "" 30
ctl_wait_phase shoot etcd-events "" 30
ctl_await_phases "$CTL_DIR/phases-main.wake" "Hibernated WakingUp -"
expect "wake-up phases" "Hibernated WakingUp -" "$(ctl_phases "$CTL_DIR/phases-main.wake")"
expect "replicas back" "3" "$(jp shoot sts/etcd-main '{.spec.replicas}')"
sts_back() { [ "$(jp shoot sts/etcd-main '{.status.replicas}')" = 3 ]; }
ksim_wait 10 sts_back || ctl_fail "status.replicas not back"
expect "ports restored byte for byte" "$ports_before" "$(jp shoot svc/etcd-main-client '{.spec.ports}')"
expect "removed-ports annotation gone" "" \
    "$(jp shoot svc/etcd-main-client '{.metadata.annotations.etcd-warden\.io/removed-ports}')"
expect "suspend annotation gone" "" \
    "$(jp shoot etcd/etcd-main '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')"
imt_gone() { [ -z "$(jp shoot extendfullsnapshotimmutabilitytasks,cronjobs '{.items[*].metadata.name}')" ]; }
ksim_wait 10 imt_gone ||
    ctl_fail "immutability task or CronJob left: $(kc -n shoot get extendfullsnapshotimmutabilitytasks,cronjobs -o name)"
ok "immutability task and its CronJob gone"
expect "etcd-events replicas back" "1" "$(jp shoot sts/etcd-events '{.spec.replicas}')"
expect "etcd-events ports back" "client server backuprestore" \
    "$(jp shoot svc/etcd-events-client '{.spec.ports[*].name}')"
expect "etcd-events: the operator's suspension kept" "operator-maintenance" \
    "$(jp shoot etcd/etcd-events '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')"
expect "the sidecar saw no other final snapshot" 1 \
    "$(curl -sf "$double_main/admin/requests" | grep -v '"skipped":true' | grep -c '"final":"true"')"
ctl_stop
echo "PASS"
