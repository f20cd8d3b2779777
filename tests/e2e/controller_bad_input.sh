#!/usr/bin/env bash
# warden-controller end to end (issue 7, test 9): bad input gets a clear event or condition,
# no crash, and nothing is deleted: an Etcd with an unsupported immutability retention type
# (refused at admission; one set before the webhook was registered still reaches the
# controller), an EtcdOpsTask and an ExtendFullSnapshotImmutabilityTask for an Etcd that does
# not exist, a client Service without the expected ports, a schedule that is not a cron
# expression (in the Etcd and in a task).
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
components() { kc -n shoot get sa,role,rolebinding,svc,cm,pdb,sts,lease -o name -l "app.kubernetes.io/part-of=$1" | wc -l; }
event_about() { # object, pattern: wait for a matching event (60 s at most)
    local deadline=$((SECONDS + 60))
    while [ $SECONDS -lt $deadline ]; do
        ctl_events shoot "$1" | grep -qE "$2" && { ok "$1: $(ctl_events shoot "$1" | grep -E "$2" | head -1)"; return 0; }
        sleep 0.1
    done
    ctl_fail "$1: no event matching /$2/: $(ctl_events shoot "$1")"
}
condition() { # task: reason of its Ready condition
    jp shoot "extendfullsnapshotimmutabilitytask/$1" '{.status.conditions[?(@.type=="Ready")].status}/{.status.conditions[?(@.type=="Ready")].reason}'
}

ctl_stage
druid_etcd shoot etcd-imm --bucket
# An unsupported retention type is refused when it is typed, with the rule's message.
retention=etcd-warden.io/immutability-retention-type
if out=$(kc -n shoot annotate --overwrite etcd etcd-imm "$retention=object" 2>&1); then
    ctl_fail "kubectl annotate of the retention type \"object\" was accepted"
fi
grep -q 'metadata.annotations\[etcd-warden.io/immutability-retention-type\]: unsupported value "object"' <<<"$out" ||
    ctl_fail "the refusal of \"object\": $out"
expect "etcd-imm: retention type unchanged after the refusal" bucket \
    "$(jp shoot etcd/etcd-imm '{.metadata.annotations.etcd-warden\.io/immutability-retention-type}')"
ok "a retention type that is not \"bucket\": refused by kubectl annotate"
# The controller still meets such a value on an Etcd annotated before etcd-warden's webhook
# was registered: set it while the Etcd webhook is not registered, then register it again.
kc delete validatingwebhookconfiguration etcd-warden >/dev/null
kc -n shoot annotate --overwrite etcd etcd-imm "$retention=object" >/dev/null
wh_register_etcd
druid_double_for shoot etcd-imm
druid_etcd shoot etcd-ports
kc_druid -n shoot patch svc etcd-ports-client --type merge \
    -p '{"spec":{"ports":[{"name":"client","port":2379,"protocol":"TCP","targetPort":2379},{"name":"server","port":2380,"protocol":"TCP","targetPort":2380}]}}' >/dev/null
druid_etcd shoot etcd-cron --bucket --schedule "every day at noon"
druid_double_for shoot etcd-cron
druid_etcd shoot etcd-ok
ctl_start
before=""
for e in etcd-imm etcd-ports etcd-cron etcd-ok; do before="$before $(components "$e")"; done
ports_ports=$(jp shoot svc/etcd-ports-client '{.spec.ports}')

for e in etcd-imm etcd-ports etcd-cron; do
    kc -n shoot annotate etcd "$e" etcd-warden.io/hibernate=true >/dev/null
done
kc -n shoot apply -f - >/dev/null <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: EtcdOpsTask
metadata: {name: snapshot-ghost}
spec:
  etcdName: ghost
  config: {onDemandSnapshot: {type: full}}
---
apiVersion: etcd-warden.io/v1alpha1
kind: ExtendFullSnapshotImmutabilityTask
metadata: {name: ghost-extend-immutability}
spec: {etcdName: ghost, config: {schedule: "0 0 * * *"}}
---
apiVersion: etcd-warden.io/v1alpha1
kind: ExtendFullSnapshotImmutabilityTask
metadata: {name: ok-bad-schedule}
spec: {etcdName: etcd-ok, config: {schedule: "30-10 * * * *"}}
EOF
# A schedule that is no cron expression is refused when it is typed, with the rule's message.
if out=$(kc -n shoot apply -f - 2>&1 <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: ExtendFullSnapshotImmutabilityTask
metadata: {name: typo-schedule}
spec: {etcdName: etcd-ok, config: {schedule: "bogus"}}
EOF
); then
    ctl_fail "kubectl apply of the schedule \"bogus\" was accepted"
fi
grep -q 'spec.config.schedule: Invalid value: "string": must be a 5-field cron expression' <<<"$out" ||
    ctl_fail "the refusal of \"bogus\": $out"
ok "a schedule that is no cron expression: refused by kubectl apply"

# malformed immutability block
event_about etcd-imm '^Warning InvalidImmutability: .*etcd-warden\.io/immutability-retention-type'
# client Service without the expected ports
event_about etcd-ports '^Warning ClientServicePorts'
expect "etcd-ports: Service untouched" "$ports_ports" "$(jp shoot svc/etcd-ports-client '{.spec.ports}')"
expect "etcd-ports: not scaled" "3" "$(jp shoot sts/etcd-ports '{.spec.replicas}')"
# a schedule that is not a cron expression
event_about etcd-cron 'Warning [A-Za-z]+: .*(fullSnapshotSchedule|cron)'
# an EtcdOpsTask for an Etcd that does not exist
rejected() { [ "$(jp shoot etcdopstask/snapshot-ghost '{.status.state}')" = Rejected ]; }
ksim_wait 20 rejected || ctl_fail "task for a missing Etcd: $(kc -n shoot get etcdopstask snapshot-ghost -o yaml)"
expect "ops task for a missing Etcd: ERR_GET_ETCD" "ERR_GET_ETCD" \
    "$(jp shoot etcdopstask/snapshot-ghost '{.status.lastErrors[0].code}')"
event_about snapshot-ghost '^Warning TaskRejected'
# immutability tasks: missing Etcd, bad schedule -> a condition, no CronJob
cond_is() { [ "$(condition "$1")" = "$2" ]; }
ksim_wait 20 cond_is ghost-extend-immutability False/EtcdNotFound ||
    ctl_fail "immutability task for a missing Etcd: condition $(condition ghost-extend-immutability)"
ok "immutability task for a missing Etcd: Ready False/EtcdNotFound"
ksim_wait 20 cond_is ok-bad-schedule False/InvalidSchedule ||
    ctl_fail "immutability task with a bad schedule: condition $(condition ok-bad-schedule)"
ok "immutability task with a bad schedule: Ready False/InvalidSchedule"
event_about ok-bad-schedule '^Warning'
expect "no CronJob for the bad tasks" "" "$(jp shoot cronjobs '{.items[*].metadata.name}')"

# nothing deleted, no crash
sleep 1
after=""
for e in etcd-imm etcd-ports etcd-cron etcd-ok; do after="$after $(components "$e")"; done
expect "every component still there (counts per Etcd)" "$before" "$after"
expect "every Etcd still there" "etcd-cron etcd-imm etcd-ok etcd-ports" "$(jp shoot etcds '{.items[*].metadata.name}')"
expect "the tasks are still there" "ghost-extend-immutability ok-bad-schedule" \
    "$(jp shoot extendfullsnapshotimmutabilitytasks '{.items[*].metadata.name}')"
kill -0 "$CTL_PID" 2>/dev/null || ctl_fail "the controller died"
curl -sf "http://127.0.0.1:$CTL_HEALTH_PORT/healthz" >/dev/null || ctl_fail "the controller is not healthy"
ok "the controller is alive and healthy"

# and good input still works next to it
kc -n shoot annotate etcd etcd-ok etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase shoot etcd-ok FinalSnapshot 20
ok "etcd-ok goes on hibernating beside the bad ones"
ctl_stop
echo "PASS"
