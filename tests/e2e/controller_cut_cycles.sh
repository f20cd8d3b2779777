#!/usr/bin/env bash
# A cut belongs to one sleep, and the final snapshot holds the last write (issue 30, items
# 1-3, 5 and 6), end to end on kube-sim with warden-webhook, warden-controller, the druid
# actor and a backup-double per Etcd. Judged by ground truth only: the double records every
# acknowledged write (its revision) and every snapshot (its last revision); whenever a
# StatefulSet is seen at 0, every write acknowledged before must be in the store.
#   a1  warden-controller down while etcd-druid scales a Hibernated Etcd up and clients write:
#       on start the controller voids the cut (Warning AwakeAgain) and hibernates again with
#       a new snapshot;
#   a2  the issue's sequence: hibernated by spec.replicas: 0, then hibernate=true, Gardener
#       wakes, clients write, the sidecar breaks, Gardener hibernates again: etcd-druid's
#       pre-sync fallback must not reach 0 on the old cut;
#   b1  a forged traffic-cut-at=2000-01-01 during FinalSnapshot (the final snapshot held, a
#       user's older snapshot task Succeeded): refused at admission, or voided by the
#       controller; never a scale-down on the older snapshot;
#   c1  ports re-opened during FinalSnapshot, the controller down meanwhile, etcd-druid's
#       executor finishing the task requested before: the re-cut is a new time, only a
#       snapshot requested after it counts;
#   d1  a writer on an established connection keeps writing after the cut: the controller
#       compares etcd's revision with the final snapshot's through the sidecar, Failed with a
#       Warning FinalSnapshotBehind while it moves, scales down once it holds;
#   e1  break glass allows one scale-down, is removed after it, and the events say "without a
#       final snapshot"; the next hibernation with the sidecar still broken stays up;
#   e2  break glass while etcd moves on after the final snapshot (FinalSnapshotBehind): the
#       events say a snapshot was taken but not checked (ScaleDownSnapshotUnverified), never
#       "without a snapshot" nor "final full snapshot taken";
#   f1  hibernated by annotation, then spec.replicas: 0, then the annotation removed: the
#       suspension is lifted (Gardener's waiter completes); a suspension removed by
#       `kubectl druid reconciliation resume` is set again with a Warning.
# CUT_CASES="a1 c1" runs only those.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
ETCDS=/apis/druid.gardener.cloud/v1alpha1/namespaces

# Ground truth of the double at URL: the last acknowledged write, the highest revision a
# successful snapshot holds (0: none).
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
replicas() { jp "$1" "sts/$2" '{.spec.replicas}'; }
write() { curl -sf -X POST "$1/admin/write?n=$2"; }

# Poll (SECONDS) until StatefulSet NS/NAME is at 0: then every write acknowledged before must be
# in the store, else FAIL. Returns 1 when it did not reach 0 in time.
#   at_zero_holds URL NS NAME SECONDS WHAT
at_zero_holds() {
    local url=$1 ns=$2 n=$3 deadline=$((SECONDS + $4)) w s r
    while :; do
        w=$(last_write "$url")
        r=$(replicas "$ns" "$n")
        if [ "$r" = 0 ]; then
            s=$(stored_rev "$url")
            [ "${s:-0}" -ge "${w:-0}" ] ||
                ctl_fail "$5: StatefulSet $ns/$n reached 0 with write ${w:-0} acknowledged and the store holding revision ${s:-none}"
            ok "$5: at 0 the store holds every write (last ${w:-none}, stored ${s:-none})"
            return 0
        fi
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.1
    done
}
# etcd-druid reconciled the Etcd's generation (Gardener's waiter)
reconciled() {
    ctl_get "$ETCDS/$1/etcds/etcd-main" | jq -e '.metadata.generation == .status.observedGeneration and
        ((.metadata.annotations // {})["gardener.cloud/operation"] == null)' >/dev/null
}
has_event() { ctl_events "$1" "$2" | grep -q "$3"; }
hold() { curl -sf -X POST "$1/admin/hold" >/dev/null; }
release() { curl -sf -X POST "$1/admin/release" >/dev/null; }
held_is() { [ "$(curl -sf "$1/admin/held")" = "$2" ]; }

# ---- a1: warden-controller down while the Etcd is woken
case_a1() {
    druid_etcd a1 etcd-main
    druid_double_for a1 etcd-main
    A=$DRUID_DOUBLE_URL
    ctl_start
    write "$A" 3 >/dev/null
    kc -n a1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
    ctl_wait_phase a1 etcd-main Hibernated 60
    at_zero_holds "$A" a1 etcd-main 5 "a1 first sleep" || ctl_fail "a1: not at 0"
    ctl_stop
    kc_druid -n a1 scale sts etcd-main --replicas=3 >/dev/null
    ksim_wait 10 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n a1 get sts etcd-main -o jsonpath='{.status.replicas}')\" = 3 ]" ||
        ctl_fail "a1: the StatefulSet did not come up"
    write "$A" 5 >/dev/null
    ctl_start
    ksim_wait 30 has_event a1 etcd-main "Warning AwakeAgain" ||
        ctl_fail "a1: no Warning AwakeAgain after a scale-up while Hibernated: $(ctl_events a1 etcd-main | tail -5)"
    ok "a1: the scale-up voided the cut (Warning AwakeAgain)"
    at_zero_holds "$A" a1 etcd-main 60 "a1 woken while warden-controller was down" ||
        ctl_fail "a1: not hibernated again"
    ctl_stop
}

# ---- a2: the issue's sequence: hibernated by spec.replicas: 0, then hibernate=true, Gardener
# wakes (spec.replicas: 3), clients write if etcd-druid brought it up, the sidecar breaks and
# Gardener hibernates again: etcd-druid's pre-sync fails three times and it scales to 0
case_a2() {
    ctl_start
    druid_etcd a2 etcd-main
    druid_double_for a2 etcd-main
    local url=$DRUID_DOUBLE_URL
    DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-a2.log druid_actor_start a2
    gardener() {
        ksim_wait 10 kc -n a2 patch etcd etcd-main --type merge \
            -p "{\"metadata\":{\"annotations\":{\"gardener.cloud/operation\":\"reconcile\"}},\"spec\":{\"replicas\":$1}}" >/dev/null
    }
    gardener 0
    ctl_wait_phase a2 etcd-main Hibernated 60
    ksim_wait 30 reconciled a2 || ctl_fail "a2: etcd-druid did not reconcile spec.replicas: 0"
    kc -n a2 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
    gardener 3
    sleep 3 # etcd-druid's turn
    if [ "$(replicas a2 etcd-main)" != 0 ]; then
        write "$url" 5 >/dev/null
        ok "a2: etcd-druid woke the Etcd; clients wrote"
    else
        ok "a2: the Etcd stays hibernated (hibernate=true holds etcd-druid suspended)"
    fi
    curl -sf -X POST "$url/admin/reply?code=500&count=0" >/dev/null
    gardener 0
    at_zero_holds "$url" a2 etcd-main 20 "a2 Gardener hibernates again with the sidecar broken" ||
        ok "a2: the StatefulSet stays up while no snapshot holds the writes"
    druid_actor_stop
    ctl_stop
}

# ---- b1: a forged cut during FinalSnapshot
case_b1() {
    ctl_start
    druid_etcd b1 etcd-main
    druid_double_for b1 etcd-main
    B=$DRUID_DOUBLE_URL
    write "$B" 3 >/dev/null
    kc -n b1 create -f - >/dev/null <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: EtcdOpsTask
metadata: {name: user-snapshot, namespace: b1}
spec: {etcdName: etcd-main, config: {onDemandSnapshot: {type: full}}}
EOF
    ksim_wait 30 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n b1 get etcdopstask user-snapshot -o jsonpath='{.status.state}')\" = Succeeded ]" ||
        ctl_fail "b1: the user's snapshot did not succeed"
    write "$B" 5 >/dev/null
    hold "$B"
    kc -n b1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
    ctl_wait_phase b1 etcd-main FinalSnapshot 30
    ksim_wait 30 held_is "$B" 1 || ctl_fail "b1: the final snapshot was not requested"
    if kc -n b1 annotate --overwrite etcd etcd-main etcd-warden.io/traffic-cut-at=2000-01-01T00:00:00Z \
        >"$CTL_DIR/b1.forge" 2>&1; then
        ! at_zero_holds "$B" b1 etcd-main 5 "b1 forged cut" ||
            ctl_fail "b1: scaled to 0 while the final snapshot is held"
        ok "b1: no scale-down while the final snapshot is held"
        ksim_wait 15 has_event b1 etcd-main "Warning TrafficCutVoided" ||
            ctl_fail "b1: the forged cut was not voided: $(ctl_events b1 etcd-main | tail -5)"
        ok "b1: the forged cut was voided (Warning TrafficCutVoided)"
    else
        ok "b1: the forged cut was refused: $(tail -1 "$CTL_DIR/b1.forge")"
    fi
    release "$B"
    at_zero_holds "$B" b1 etcd-main 60 "b1 after the release" || ctl_fail "b1: not hibernated"
    ctl_stop
}

# ---- c1: a re-cut is a new cut time (etcd-druid's executor)
case_c1() {
    druid_etcd c1 etcd-main
    druid_double_for c1 etcd-main
    C=$DRUID_DOUBLE_URL
    DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-c1.log druid_actor_start c1 --executor
    ctl_start --ops-task-executor=false
    ports=$(kc -n c1 get svc etcd-main-client -o json | jq -c .spec.ports)
    write "$C" 3 >/dev/null
    hold "$C"
    kc -n c1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
    ctl_wait_phase c1 etcd-main FinalSnapshot 30
    ksim_wait 30 held_is "$C" 1 || ctl_fail "c1: the final snapshot was not requested"
    ctl_stop
    release "$C"
    ksim_wait 30 bash -c "kubectl --kubeconfig '$KUBECONFIG' -n c1 get etcdopstasks -o jsonpath='{.items[*].status.state}' | grep -q Succeeded" ||
        ctl_fail "c1: the task did not succeed"
    # etcd-druid restores the Service (an un-suspend, a reconcile): clients write again
    kc_druid -n c1 patch svc etcd-main-client --type merge -p "{\"spec\":{\"ports\":$ports}}" >/dev/null
    write "$C" 5 >/dev/null
    ctl_start --ops-task-executor=false
    at_zero_holds "$C" c1 etcd-main 90 "c1 re-cut" || ctl_fail "c1: not hibernated"
    has_event c1 etcd-main "Warning TrafficCutVoided" ||
        ctl_fail "c1: the re-cut kept the old cut: $(ctl_events c1 etcd-main | tail -5)"
    ok "c1: the ports open again voided the old cut time"
    druid_actor_stop
    ctl_stop
}

# ---- d1: a writer on an established connection
case_d1() {
    ctl_start --snapshot-retries 1
    druid_etcd d1 etcd-main
    druid_double_for d1 etcd-main
    D=$DRUID_DOUBLE_URL
    curl -sf -X POST "$D/admin/delay?ms=300" >/dev/null
    curl -sf -X POST "$D/admin/writer?ms=20" >/dev/null
    kc -n d1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
    deadline=$((SECONDS + 60))
    until has_event d1 etcd-main "Warning FinalSnapshotBehind"; do
        ! at_zero_holds "$D" d1 etcd-main 0 "d1 while writing" ||
            ctl_fail "d1: scaled to 0 while a writer still writes"
        [ $SECONDS -lt $deadline ] || ctl_fail "d1: no Warning FinalSnapshotBehind: $(ctl_events d1 etcd-main | tail -5)"
        sleep 0.2
    done
    ok "d1: etcd moved on after the final snapshot: Warning FinalSnapshotBehind, still up"
    expect "d1: phase Failed while etcd moves on" Failed "$(ctl_phase d1 etcd-main)"
    curl -sf -X POST "$D/admin/writer?ms=0" >/dev/null
    at_zero_holds "$D" d1 etcd-main 90 "d1 writer stopped" || ctl_fail "d1: not hibernated"
    ctl_stop
}

# ---- e1: break glass once
case_e1() {
    ctl_start --snapshot-retries 1
    druid_etcd e1 etcd-main
    druid_double_for e1 etcd-main
    E=$DRUID_DOUBLE_URL
    curl -sf -X POST "$E/admin/reply?code=500&count=0" >/dev/null
    kc -n e1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
    ctl_wait_phase e1 etcd-main Failed 60
    kc -n e1 annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ) sidecar broken in e2e" >/dev/null
    ctl_wait_phase e1 etcd-main Hibernated 60
    ksim_wait 15 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n e1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/allow-scale-down-without-snapshot}')\" ]" ||
        ctl_fail "e1: the break-glass annotation was not removed after its scale-down"
    ok "e1: break glass removed after the scale-down it allowed"
    ev=$(ctl_events e1 etcd-main)
    grep -q "Normal Hibernated: .*without a final snapshot" <<<"$ev" || ctl_fail "e1: Hibernated event: $ev"
    grep -q "Warning ScaleDownWithoutSnapshot: scaled to 0 without a final snapshot ([0-9]* attempts* failed)" <<<"$ev" ||
        ctl_fail "e1: ScaleDownWithoutSnapshot event: $ev"
    grep -q "final full snapshot taken" <<<"$ev" && ctl_fail "e1: an event claims a snapshot: $ev"
    ok "e1: the events say the scale-down had no final snapshot, with the attempts"
    kc -n e1 annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null
    ctl_wait_phase e1 etcd-main "" 60
    write "$E" 4 >/dev/null
    kc -n e1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
    ctl_wait_phase e1 etcd-main Failed 60
    ! at_zero_holds "$E" e1 etcd-main 4 "e1 second sleep" || ctl_fail "e1: scaled down again without a snapshot"
    ok "e1: the next hibernation with the sidecar still broken stays up"
    ctl_stop
}

# ---- f1: the signal switches from the annotation to spec.replicas; druidctl resume
case_f1() {
    ctl_start
    druid_etcd f1 etcd-main
    druid_double_for f1 etcd-main
    F=$DRUID_DOUBLE_URL
    DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-f1.log druid_actor_start f1
    druid_done() {
        ctl_get "$ETCDS/f1/etcds/etcd-main" | jq -e '.metadata.generation == .status.observedGeneration and
            ((.metadata.annotations // {})["gardener.cloud/operation"] == null) and
            ((.metadata.annotations // {})["druid.gardener.cloud/suspend-etcd-spec-reconcile"] == null)' >/dev/null
}
kc -n f1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase f1 etcd-main Hibernated 60
ksim_wait 10 kc -n f1 patch etcd etcd-main --type merge \
    -p '{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}},"spec":{"replicas":0}}' >/dev/null
kc -n f1 annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null
ksim_wait 30 druid_done || ctl_fail "f1: etcd-druid left suspended: $(jp f1 etcd/etcd-main '{.metadata.annotations}')"
ok "f1: the suspension lifted once the signal is spec.replicas: 0 (etcd-druid reconciled it)"
expect "f1: still hibernated" "Hibernated 0" "$(ctl_phase f1 etcd-main) $(replicas f1 etcd-main)"
# wake up, hibernate by annotation again, then `kubectl druid reconciliation resume`
ksim_wait 10 kc -n f1 patch etcd etcd-main --type merge \
    -p '{"metadata":{"annotations":{"gardener.cloud/operation":"reconcile"}},"spec":{"replicas":3}}' >/dev/null
ctl_wait_phase f1 etcd-main "" 60
write "$F" 3 >/dev/null
kc -n f1 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
ctl_wait_phase f1 etcd-main Hibernated 60
kc -n f1 annotate etcd etcd-main druid.gardener.cloud/suspend-etcd-spec-reconcile- >/dev/null
ksim_wait 30 has_event f1 etcd-main "Warning SuspensionReasserted" ||
    ctl_fail "f1: the suspension was not set again: $(ctl_events f1 etcd-main | tail -5)"
ok "f1: a suspension removed by someone else is set again (Warning SuspensionReasserted)"
ctl_wait_phase f1 etcd-main Hibernated 60
at_zero_holds "$F" f1 etcd-main 60 "f1 after the resume" || ctl_fail "f1: not at 0"
druid_actor_stop
ctl_stop
}

# ---- e2: break glass on a snapshot that did not pass the revision check
case_e2() {
    ctl_start --snapshot-retries 1
    druid_etcd e2 etcd-main
    druid_double_for e2 etcd-main
    E=$DRUID_DOUBLE_URL
    curl -sf -X POST "$E/admin/delay?ms=300" >/dev/null
    curl -sf -X POST "$E/admin/writer?ms=20" >/dev/null
    kc -n e2 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
    deadline=$((SECONDS + 60))
    until has_event e2 etcd-main "Warning FinalSnapshotBehind"; do
        [ $SECONDS -lt $deadline ] || ctl_fail "e2: no Warning FinalSnapshotBehind: $(ctl_events e2 etcd-main | tail -5)"
        sleep 0.2
    done
    kc -n e2 annotate etcd etcd-main "etcd-warden.io/allow-scale-down-without-snapshot=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ) writers cannot be stopped" >/dev/null
    ctl_wait_phase e2 etcd-main Hibernated 60
    curl -sf -X POST "$E/admin/writer?ms=0" >/dev/null
    ev=$(ctl_events e2 etcd-main)
    holes=0
    if grep -q "ScaleDownWithoutSnapshot" <<<"$ev"; then
        echo "HOLE: e2: a full snapshot was taken after the cut, and an event says the scale-down had none: $(grep ScaleDownWithoutSnapshot <<<"$ev" | head -2 | tr '\n' ' ')"
        holes=$((holes + 1))
    fi
    if grep -q "final full snapshot taken" <<<"$ev"; then
        echo "HOLE: e2: the snapshot never passed the revision check, and an event says \"final full snapshot taken\": $(grep 'final full snapshot taken' <<<"$ev" | head -1)"
        holes=$((holes + 1))
    fi
    if [ $holes -gt 0 ]; then
        echo "FAIL: $holes hole(s): the events of a break-glass scale-down on an unchecked snapshot"
        exit 1
    fi
    grep -q "^Warning ScaleDownSnapshotUnverified: scaling down on .* not confirmed to hold etcd's last revision" <<<"$ev" ||
        ctl_fail "e2: no ScaleDownSnapshotUnverified of warden-controller: $ev"
    grep -q "^Warning ScaleDownSnapshotUnverified: .* scaled StatefulSet etcd-main to 0 with a full snapshot taken after the traffic cut but not checked" <<<"$ev" ||
        ctl_fail "e2: no ScaleDownSnapshotUnverified of warden-webhook: $ev"
    grep -q "^Normal Hibernated: .*a full snapshot taken after the cut, not checked against etcd's last revision" <<<"$ev" ||
        ctl_fail "e2: Hibernated event: $ev"
    ok "e2: break glass on an unchecked snapshot: ScaleDownSnapshotUnverified, Hibernated says not checked"
    ctl_stop
}

for c in ${CUT_CASES:-a1 a2 b1 c1 d1 e1 e2 f1}; do
    "case_$c"
done
echo PASS
