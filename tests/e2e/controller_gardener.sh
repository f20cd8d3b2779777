#!/usr/bin/env bash
# warden-controller end to end on Gardener's path: hibernation by spec.replicas: 0 with
# gardener.cloud/operation: reconcile (no hibernate annotation), beside the druid actor of
# tests/lib/druid.sh (etcd-druid v0.38's spec reconcile gate, pre-sync snapshot and
# StatefulSet sync), once with etcd-warden's EtcdOpsTask executor and once with etcd-druid's
# (the actor's, with its one-unfinished-task rejection). Immutability through the
# annotation. Each run: traffic cut, one Succeeded full snapshot before the StatefulSet
# reaches 0, no Rejected task, the immutability task, etcd-druid reconciled the change itself
# (Gardener's waiter: no lastErrors, observedGeneration == generation, the operation
# annotation gone); wake-up by spec.replicas: 3 restores everything. With a failing sidecar:
# etcd-druid alone runs its three pre-sync attempts and its scale-down is refused by the
# webhook's guard (the denial in its status.lastErrors) until the break-glass annotation;
# with warden-controller, phase Failed and nothing scaled until break glass. Two Etcds of one
# namespace at once, and a second hibernation within the hour, each with its own snapshot.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"

# etcd-druid's own Etcd and EtcdOpsTask CRDs where CI has them (DRUID_CRD_DIR), as a real
# cluster serves them: unknown fields pruned, no immutability field
if [ -n "${DRUID_CRD_DIR:-}" ]; then
    export DRUID_REAL_CRDS=1
    echo "etcd-druid's CRDs from $DRUID_CRD_DIR"
else
    echo "etcd-druid's CRDs: DRUID_CRD_DIR unset, the chart's copy"
fi
ctl_stage

# Gardener's waiter (pkg/component/etcd/etcd/waiter.go CheckEtcdObject): etcd-druid has
# reconciled the current generation and removed the operation annotation, without errors.
druid_done() {
    ctl_get "/apis/druid.gardener.cloud/v1alpha1/namespaces/$1/etcds/$2" | jq -e '
        .metadata.generation == .status.observedGeneration and
        ((.metadata.annotations // {})["gardener.cloud/operation"] == null) and
        ((.status.lastErrors // []) | length == 0)' >/dev/null
}

# One Gardener hibernation and wake-up of Etcd NAME in namespace NS.
#   cycle NS NAME EXECUTOR_LABEL
cycle() {
    local ns=$1 n=$2 who=$3 ports_before tasks cut counted final finals0 pf
    ports_before=$(jp "$ns" "svc/$n-client" '{.spec.ports}')
    finals0=$(druid_double_requests | grep -v '"skipped":true' | grep -c '"final":"true"' || true)
    pf=$(mktemp "$CTL_DIR/phases-$ns.XXXXXX")
    ctl_watch_phases "$ns" "$n" "$pf"
    # kube-apiserver is at 0 already (no writer); Gardener's two changes
    # (retried: kube-sim answers a merge patch racing another write with 409, where
    # kube-apiserver retries it itself)
    ksim_wait 10 kc -n "$ns" patch etcd "$n" --type merge -p '{"spec":{"replicas":0}}' >/dev/null
    ksim_wait 10 kc -n "$ns" annotate --overwrite etcd "$n" gardener.cloud/operation=reconcile >/dev/null
    ctl_wait_phase "$ns" "$n" Hibernated 60
    ksim_wait 30 druid_done "$ns" "$n" ||
        ctl_fail "$who: etcd-druid did not finish: $(jp "$ns" "etcd/$n" '{.metadata.generation} {.status.observedGeneration} {.metadata.annotations} {.status.lastErrors}'); actor: $(tail -5 "$DRUID_ACTOR_LOG" 2>&1)"
    ok "$who: etcd-druid reconciled spec.replicas: 0 (Gardener's waiter is satisfied)"
    expect "$who: phases" "- CuttingTraffic FinalSnapshot ScalingDown Hibernated" \
        "$(ctl_phases "$pf")"
    expect "$who: scaled to 0" "0 0" "$(jp "$ns" "sts/$n" '{.spec.replicas} {.status.replicas}')"
    tasks=$(jp "$ns" etcdopstasks '{range .items[*]}{.metadata.name} {.spec.config.onDemandSnapshot.type} {.status.state}{"\n"}{end}')
    grep -q Rejected <<<"$tasks" && ctl_fail "$who: a Rejected task: $tasks"
    ok "$who: no Rejected task"
    # the snapshot of this cycle: a full one that Succeeded and was created after the second
    # of the cut (etcd-warden's final one, or etcd-druid's pre-sync one had it raced the cut)
    cut=$(jp "$ns" "etcd/$n" '{.metadata.annotations.etcd-warden\.io/traffic-cut-at}')
    [ -n "$cut" ] || ctl_fail "$who: no traffic-cut-at annotation"
    counted=$(ctl_get "/apis/druid.gardener.cloud/v1alpha1/namespaces/$ns/etcdopstasks" |
        jq --arg c "$cut" '[.items[] | select(.spec.etcdName == "etcd-main" and
            .spec.config.onDemandSnapshot.type == "full" and .status.state == "Succeeded" and
            .metadata.creationTimestamp > $c)] | length')
    [ "$counted" -ge 1 ] || ctl_fail "$who: no Succeeded snapshot after the cut ($cut): $tasks"
    ok "$who: a Succeeded full snapshot after the traffic cut, before the scale-down"
    final=$(ctl_get "/apis/druid.gardener.cloud/v1alpha1/namespaces/$ns/etcdopstasks" |
        jq -r '[.items[] | select(.metadata.name | startswith("etcd-main-final-snapshot-"))
            | .spec.config.onDemandSnapshot.isFinal] | unique | join(",")')
    expect "$who: etcd-warden's snapshots are final" true "$final"
    [ "$(druid_double_requests | grep -v '"skipped":true' | grep -c '"final":"true"')" -le $((finals0 + 1)) ] ||
        ctl_fail "$who: more than one final snapshot: $(druid_double_requests)"
    ok "$who: at most one final snapshot request reached the sidecar"
    grep -q '"name":"client"' <<<"$(jp "$ns" "svc/$n-client" '{.metadata.annotations.etcd-warden\.io/removed-ports}')" ||
        ctl_fail "$who: the traffic was never cut"
    ok "$who: traffic cut (ports remembered)"
    expect "$who: immutability task" "$n-extend-immutability" \
        "$(jp "$ns" extendfullsnapshotimmutabilitytasks '{.items[*].metadata.name}')"
    expect "$who: etcd-druid not left suspended" "" \
        "$(jp "$ns" "etcd/$n" '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')"

    # ---- wake-up: spec.replicas: 3 with the operation annotation
    ksim_wait 10 kc -n "$ns" patch etcd "$n" --type merge \
        -p '{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}},"spec":{"replicas":3}}' >/dev/null
    ctl_wait_phase "$ns" "$n" "" 60
    ksim_wait 30 druid_done "$ns" "$n" || ctl_fail "$who: etcd-druid did not finish the wake-up"
    ok "$who: etcd-druid reconciled spec.replicas: 3"
    expect "$who: replicas back" "3" "$(jp "$ns" "sts/$n" '{.spec.replicas}')"
    expect "$who: ports back" "$ports_before" "$(jp "$ns" "svc/$n-client" '{.spec.ports}')"
    expect "$who: cut time gone" "" \
        "$(jp "$ns" "etcd/$n" '{.metadata.annotations.etcd-warden\.io/traffic-cut-at}')"
    imt_gone() { [ -z "$(jp "$ns" extendfullsnapshotimmutabilitytasks '{.items[*].metadata.name}')" ]; }
    ksim_wait 10 imt_gone || ctl_fail "$who: immutability task left"
    ok "$who: immutability task gone"
}

# ---- 1. etcd-warden's executor
druid_etcd g1 etcd-main
ksim_wait 10 kc -n g1 annotate etcd etcd-main etcd-warden.io/immutability-retention-type=bucket >/dev/null
druid_double_for g1 etcd-main
druid_actor_start g1
ctl_start --ops-task-executor=true
cycle g1 etcd-main "warden's executor"
ctl_stop
druid_actor_stop
druid_double_stop

# ---- 2. etcd-druid's executor
druid_etcd g2 etcd-main
ksim_wait 10 kc -n g2 annotate etcd etcd-main etcd-warden.io/immutability-retention-type=bucket >/dev/null
druid_double_for g2 etcd-main
DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-2.log
druid_actor_start g2 --executor
ctl_start --ops-task-executor=false
cycle g2 etcd-main "druid's executor"
# hibernate again within the hour (etcd-druid's tasks live 3600 s): a fresh snapshot again
# the next cut falls in a later second than the first cycle's tasks (second resolution)
last=$(date -u +%s)
later() { [ "$(date -u +%s)" -gt "$last" ]; }
ksim_wait 5 later || ctl_fail "the clock did not move"
cycle g2 etcd-main "druid's executor, again within the hour"
grep -q 'etcd-main-final-snapshot-1: Succeeded' "$DRUID_ACTOR_LOG" ||
    ctl_fail "etcd-druid's executor did not run the final snapshot: $(cat "$DRUID_ACTOR_LOG")"
ok "etcd-druid's executor ran etcd-warden's final snapshot"
ctl_stop
druid_actor_stop
druid_double_stop

# ---- 3. the sidecar fails and etcd-druid is on its own (no warden-controller): its three
# pre-sync attempts fail, it scales down anyway and the webhook's guard refuses it
druid_etcd g3 etcd-main
druid_double_for g3 etcd-main
druid_double_admin 'reply?code=500'
DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-3.log
druid_actor_start g3 --executor
ksim_wait 10 kc -n g3 patch etcd etcd-main --type merge \
    -p '{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}},"spec":{"replicas":0}}' >/dev/null
refused() { grep -q 'StatefulSet sync refused (403)' "$DRUID_ACTOR_LOG"; }
ksim_wait 60 refused || ctl_fail "etcd-druid's scale-down was not refused: $(cat "$DRUID_ACTOR_LOG")"
expect "etcd-druid's three pre-sync attempts failed" "Failed Failed Failed" \
    "$(jp g3 etcdopstasks '{.items[*].status.state}')"
expect "the StatefulSet stays above 0" 3 "$(jp g3 sts/etcd-main '{.spec.replicas}')"
# the actor logs the refusal before it writes the Etcd's status: wait for the status
druid_errors() { jp g3 etcd/etcd-main '{.status.lastErrors[*].description}'; }
denial_recorded() {
    local errs
    errs=$(druid_errors)
    grep -q 'denied the request' <<<"$errs" && grep -q 'allow-scale-down-without-snapshot' <<<"$errs"
}
ksim_wait 10 denial_recorded ||
    ctl_fail "the denial is not in etcd-druid's errors: $(druid_errors)"
ok "the denial is in etcd-druid's status.lastErrors (Gardener sees a retriable error)"
ksim_wait 10 kc -n g3 annotate etcd etcd-main \
    "etcd-warden.io/allow-scale-down-without-snapshot=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ) backups-lost" >/dev/null
ksim_wait 30 druid_done g3 etcd-main || ctl_fail "break glass: etcd-druid did not finish"
expect "break glass: etcd-druid scaled to 0" 0 "$(jp g3 sts/etcd-main '{.spec.replicas}')"
ev() { ctl_events g3 etcd-main | grep -q '^Warning ScaleDownWithoutSnapshot'; }
ksim_wait 10 ev || ctl_fail "no ScaleDownWithoutSnapshot event: $(ctl_events g3 etcd-main)"
ok "break glass is evented"
druid_actor_stop
druid_double_stop

# ---- 4. the sidecar fails with warden-controller running: phase Failed, nothing scaled,
# etcd-druid held; break glass: warden-controller scales down and hands back to etcd-druid
druid_etcd g4 etcd-main
druid_double_for g4 etcd-main
druid_double_admin 'reply?code=500'
DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-4.log
druid_actor_start g4 --executor
ctl_start --ops-task-executor=false --snapshot-retries=2
ksim_wait 10 kc -n g4 patch etcd etcd-main --type merge \
    -p '{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}},"spec":{"replicas":0}}' >/dev/null
ctl_wait_phase g4 etcd-main Failed 60
expect "Failed: the StatefulSet stays above 0" 3 "$(jp g4 sts/etcd-main '{.spec.replicas}')"
jp g4 etcdopstasks '{.items[*].status.state}' | grep -q Rejected &&
    ctl_fail "a Rejected task: $(jp g4 etcdopstasks '{.items[*].metadata.name}')"
ok "no Rejected task"
ksim_wait 10 kc -n g4 annotate etcd etcd-main \
    "etcd-warden.io/allow-scale-down-without-snapshot=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ) backups-lost" >/dev/null
ctl_wait_phase g4 etcd-main Hibernated 60
ksim_wait 30 druid_done g4 etcd-main || ctl_fail "break glass: etcd-druid did not finish"
expect "break glass: scaled to 0" 0 "$(jp g4 sts/etcd-main '{.spec.replicas}')"
ctl_events g4 etcd-main | grep -q '^Warning ScaleDownWithoutSnapshot' ||
    ctl_fail "no ScaleDownWithoutSnapshot event: $(ctl_events g4 etcd-main)"
ok "break glass: warden-controller scaled down, evented, and etcd-druid reconciled"
ctl_stop
druid_actor_stop
druid_double_stop

# ---- 5. two Etcds of one namespace hibernate at once (etcd-druid's pre-sync task names
# carry no Etcd name): each scale-down waits for a snapshot of its own Etcd
druid_etcd g5 etcd-main
druid_etcd g5 etcd-events
druid_double_for g5 etcd-main
druid_double_for g5 etcd-events
DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-5.log
druid_actor_start g5 --executor
ctl_start --ops-task-executor=false
for e in etcd-main etcd-events; do
    ksim_wait 10 kc -n g5 patch etcd "$e" --type merge \
        -p '{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}},"spec":{"replicas":0}}' >/dev/null
done
for e in etcd-main etcd-events; do
    ctl_wait_phase g5 "$e" Hibernated 60
    ksim_wait 30 druid_done g5 "$e" || ctl_fail "$e: etcd-druid did not finish"
    cut=$(jp g5 "etcd/$e" '{.metadata.annotations.etcd-warden\.io/traffic-cut-at}')
    own=$(ctl_get /apis/druid.gardener.cloud/v1alpha1/namespaces/g5/etcdopstasks |
        jq --arg c "$cut" --arg e "$e" '[.items[] | select(.spec.etcdName == $e and
            .spec.config.onDemandSnapshot.type == "full" and .status.state == "Succeeded" and
            .metadata.creationTimestamp > $c)] | length')
    [ "$own" -ge 1 ] || ctl_fail "$e: no snapshot of its own after its cut"
    expect "$e: scaled to 0 after a snapshot of its own" 0 "$(jp g5 "sts/$e" '{.spec.replicas}')"
done
jp g5 etcdopstasks '{.items[*].status.state}' | grep -q Rejected &&
    ctl_fail "a Rejected task: $(jp g5 etcdopstasks '{.items[*].metadata.name}')"
ok "two Etcds of one namespace: no Rejected task"
ctl_stop
echo "PASS"
