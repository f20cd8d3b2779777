#!/usr/bin/env bash
# warden-controller end to end: waking up during FinalSnapshot abandons the sidecar call of
# that cycle's task. With one executor worker, etcd-a's final snapshot is held at its sidecar
# (backup-double) when etcd-a is woken up: its task is deleted, the call in flight is
# abandoned (the worker is free again, nothing is written to the deleted task) and etcd-b's
# final snapshot, whose sidecar answers, goes through while etcd-a's answer is still held.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
held() { [ "$(curl -sf "$1/admin/held")" = "$2" ]; }

ctl_stage
druid_etcd shoot etcd-a
druid_double_for shoot etcd-a
url_a=$DRUID_DOUBLE_URL
curl -sf -X POST "$url_a/admin/hold" >/dev/null || ctl_fail "cannot hold etcd-a's sidecar"
druid_etcd shoot etcd-b
druid_double_for shoot etcd-b
ctl_start --ops-task-workers 1

kc -n shoot annotate etcd etcd-a etcd-warden.io/hibernate=true >/dev/null
ksim_wait 30 held "$url_a" 1 || ctl_fail "etcd-a's final snapshot never reached its sidecar"
expect "etcd-a waits for its final snapshot" FinalSnapshot "$(ctl_phase shoot etcd-a)"
ok "etcd-a's final snapshot is held in flight on the only executor worker"

kc -n shoot annotate etcd etcd-a etcd-warden.io/hibernate- >/dev/null
ctl_wait_phase shoot etcd-a "" 30
no_task() { [ -z "$(jp shoot etcdopstasks "{.items[?(@.spec.etcdName==\"etcd-a\")].metadata.name}")" ]; }
ksim_wait 30 no_task || ctl_fail "etcd-a's task of the abandoned cycle is still there"
ksim_wait 10 grep -q "sidecar call abandoned" "$CTL_LOG" ||
    ctl_fail "the held call of etcd-a was not abandoned"
ok "woken up: the cycle's task deleted and its sidecar call abandoned"

kc -n shoot annotate etcd etcd-b etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase shoot etcd-b Hibernated 30
expect "etcd-b: its task Succeeded" "Succeeded" \
    "$(jp shoot etcdopstasks "{.items[?(@.spec.etcdName==\"etcd-b\")].status.state}")"
expect "etcd-a: still awake" "3" "$(jp shoot sts/etcd-a '{.spec.replicas}')"
ok "etcd-b hibernated on the freed worker"
curl -sf -X POST "$url_a/admin/release" >/dev/null || true
ctl_stop
echo "PASS"
