#!/usr/bin/env bash
# warden-controller end to end: slow backup sidecars cannot freeze the other Etcds. Three
# Etcds (as many as --workers) hibernate while their sidecars (backup-double) hold every
# /snapshot/full answer: their final snapshots stay in flight on the EtcdOpsTask executor's
# own workers. Meanwhile an unrelated Etcd without a backup store hibernates and wakes up,
# each within 2 s. Then the sidecars answer and the three finish: tasks Succeeded, Hibernated.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
held() { [ "$(curl -sf "$1/admin/held")" = 1 ]; }

ctl_stage
slow=(etcd-a etcd-b etcd-c)
declare -A url=()
for e in "${slow[@]}"; do
    druid_etcd shoot "$e"
    druid_double_for shoot "$e"
    url[$e]=$DRUID_DOUBLE_URL
    curl -sf -X POST "${url[$e]}/admin/hold" >/dev/null || ctl_fail "cannot hold $e's sidecar"
done
druid_etcd shoot etcd-events --no-store --replicas 1
ctl_start --workers 3 --ops-task-workers 3

for e in "${slow[@]}"; do
    kc -n shoot annotate etcd "$e" etcd-warden.io/hibernate=true >/dev/null
done
for e in "${slow[@]}"; do
    ksim_wait 30 held "${url[$e]}" || ctl_fail "the final snapshot of $e never reached its sidecar"
done
for e in "${slow[@]}"; do expect "$e waits for its final snapshot" FinalSnapshot "$(ctl_phase shoot "$e")"; done
ok "three final snapshots held in flight at the sidecars"

start=$(date +%s%N)
kc -n shoot annotate etcd etcd-events etcd-warden.io/hibernate=true >/dev/null
# Workers stuck behind the held calls would never get to it: the wait is the bound.
ctl_wait_phase shoot etcd-events Hibernated 60
echo "unrelated Etcd hibernated in $(ms_since "$start") ms while 3 snapshot calls were held"
expect "scaled to 0" "0" "$(jp shoot sts/etcd-events '{.spec.replicas}')"
start=$(date +%s%N)
kc -n shoot annotate etcd etcd-events etcd-warden.io/hibernate- >/dev/null
ctl_wait_phase shoot etcd-events "" 60
echo "unrelated Etcd woke up in $(ms_since "$start") ms while 3 snapshot calls were held"
expect "replicas back" "1" "$(jp shoot sts/etcd-events '{.spec.replicas}')"
for e in "${slow[@]}"; do
    held "${url[$e]}" || ctl_fail "$e's snapshot call is no longer in flight"
done
ok "the held calls are still in flight"

for e in "${slow[@]}"; do
    curl -sf -X POST "${url[$e]}/admin/release" >/dev/null || ctl_fail "cannot release $e's sidecar"
done
for e in "${slow[@]}"; do
    ctl_wait_phase shoot "$e" Hibernated 40
    expect "$e: its task Succeeded" "Succeeded" \
        "$(jp shoot etcdopstasks "{.items[?(@.spec.etcdName==\"$e\")].status.state}")"
    expect "$e: one final snapshot" 1 "$(curl -sf "${url[$e]}/admin/requests" | grep -v '"skipped":true' | grep -c '"final":"true"')"
    expect "$e: scaled to 0" "0" "$(jp shoot sts/"$e" '{.spec.replicas}')"
done
ok "released: the three finished"
ctl_stop
echo "PASS"
