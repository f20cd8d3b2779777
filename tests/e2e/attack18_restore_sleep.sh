#!/usr/bin/env bash
# The scale-down guard around a restore, on kube-sim with warden-webhook, warden-controller,
# the druid actor and a backup-double per Etcd. Each Etcd is re-created from a backup
# (status-backup-exists, so restoring and suspended, waiting for its status backup) with its
# components and members back and running, clients writing. Ground truth only: the double
# records every acknowledged write and every snapshot's last revision; whenever a StatefulSet
# is seen at 0, every write acknowledged before must be in the store.
# docs/hibernation.md (The scale-down guard): "etcd-druid's scale to 0 after its pre-sync
# snapshot, or a person's, is refused" without a full snapshot taken for this hibernation;
# docs/toggles.md (etcd-warden.io/restoring): the label "would stop the Etcd's live steps,
# hibernation ... among them"; docs/status-backup-and-restore.md: the restore ended by hand
# lifts "the suspension it added (a hibernation's or an operator's stays)".
#   s1  a restoring Etcd asked to hibernate (hibernate=true), the sidecar broken: a namespace
#       editor with component protection disabled scales its StatefulSet to 0, etcd-druid
#       scales it to 0 and deletes it; then the restore is ended by hand: hibernation runs and
#       must not reach 0 without a snapshot holding the writes;
#   s2  a restored Etcd whose spec.replicas is 0 (Gardener had hibernated it, its StatefulSet
#       came back at 3 replicas), gardener.cloud/operation: reconcile, the sidecar broken: the
#       restore ended by hand lifts the suspension; etcd-druid's pre-sync fails three times and
#       it scales to 0 — which must be refused;
#   s3  control: the same as s2 with the sidecar working: it reaches 0 with every write stored;
#   s4  gardenlet's reconcile merge patch (labels whole, timestamp, operation, spec.replicas: 0)
#       during FinalSnapshot of a restored Etcd ended by hand (final snapshot held): nothing at
#       0 before the release, and after it every write stored.
#   s5  a restored Etcd at spec.replicas 0 (StatefulSet back at 3), the sidecar broken, its
#       suspension removed mid-restore (`kubectl druid reconciliation resume` removes the
#       annotation): etcd-druid's pre-sync fails three times and it scales to 0 — which must be
#       refused.
# ATTACK_CASES="s2 s3" runs only those.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/restoring.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
ctl_start
holes=0
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
replicas() { jp "$1" "sts/$2" '{.spec.replicas}' 2>/dev/null || echo gone; }
write() { curl -sf -X POST "$1/admin/write?n=$2" >/dev/null; }
broken() { curl -sf -X POST "$1/admin/reply?code=500&count=0" >/dev/null; }
# At 0 (or gone) with writes missing: HOLE. Returns 0 when at 0/gone, 1 when it stayed up for SECONDS.
#   watch_zero URL NS SECONDS WHAT
watch_zero() {
    local url=$1 ns=$2 deadline=$((SECONDS + $3)) w s r
    while :; do
        w=$(last_write "$url")
        r=$(replicas "$ns" etcd-main)
        if [ "$r" = 0 ] || [ "$r" = gone ]; then
            s=$(stored_rev "$url")
            if [ "${s:-0}" -lt "${w:-0}" ]; then
                echo "HOLE: $4: StatefulSet $ns/etcd-main $([ "$r" = 0 ] && echo "reached 0" || echo "was deleted") with write ${w:-0} acknowledged and the store holding revision ${s:-none}"
                holes=$((holes + 1))
            else
                echo "ok: $4: at 0 the store holds every write (last ${w:-none}, stored ${s:-none})"
            fi
            return 0
        fi
        [ $SECONDS -lt $deadline ] || return 1
        sleep 0.1
    done
}
# A restored Etcd NS/etcd-main (spec.replicas SPEC), its components and members back at 3.
restored() {
    restoring_recreate "$1" "$2" 3 false
    druid_pods "$1" etcd-main 3
    druid_double_for "$1" etcd-main
    URL=$DRUID_DOUBLE_URL
    restoring_progress "$1"
}
end_by_hand() {
    local out
    out=$(WH_AS_NS=$1 wh_as alice label etcd etcd-main etcd-warden.io/restoring- 2>&1) ||
        ctl_fail "$1: the restore could not be ended by hand: $out"
    ksim_wait 20 bash -c "kubectl --kubeconfig '$KUBECONFIG' -n $1 get events.events.k8s.io -o jsonpath='{.items[*].reason}' | grep -q RestoreEndedByHand" ||
        ctl_fail "$1: no RestoreEndedByHand"
    echo "ok: $1: the restore ended by hand"
    druid_status "$1" etcd-main 3 # etcd-druid's status reconcile: Ready, 3 members
}
want() { [ -z "${ATTACK_CASES:-}" ] || [[ " $ATTACK_CASES " == *" $1 "* ]]; }

# ---- s1
if want s1; then
    restored s1 3
    U=$URL
    write "$U" 3
    broken "$U"
    WH_AS_NS=s1 wh_as alice annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null ||
        ctl_fail "s1: hibernate=true refused on a restoring Etcd"
    sleep 2
    echo "s1: phase while restoring: '$(ctl_phase s1 etcd-main)'"
    write "$U" 2
    WH_AS_NS=s1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null 2>&1
    out=$(WH_AS_NS=s1 wh_as alice scale sts etcd-main --replicas=0 2>&1 | tail -1)
    watch_zero "$U" s1 1 "s1 alice's scale to 0 of a restoring Etcd" || echo "held: s1 alice's scale to 0: ${out:0:200}"
    [ "$(replicas s1 etcd-main)" = 0 ] && kc -n s1 scale sts etcd-main --replicas=3 >/dev/null 2>&1
    out=$(kc_druid -n s1 scale sts etcd-main --replicas=0 2>&1 | tail -1)
    watch_zero "$U" s1 1 "s1 etcd-druid's scale to 0 of a restoring Etcd" || echo "held: s1 etcd-druid's scale to 0: ${out:0:200}"
    [ "$(replicas s1 etcd-main)" = 0 ] && kc -n s1 scale sts etcd-main --replicas=3 >/dev/null 2>&1
    out=$(kc_druid -n s1 delete sts etcd-main --wait=false 2>&1 | tail -1)
    watch_zero "$U" s1 1 "s1 etcd-druid's delete of a restoring Etcd's StatefulSet" || echo "held: s1 etcd-druid's delete: ${out:0:200}"
    kc -n s1 annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection- >/dev/null 2>&1
    if [ "$(replicas s1 etcd-main)" = 3 ]; then
        end_by_hand s1
        watch_zero "$U" s1 20 "s1 hibernation after the restore ended, sidecar broken" ||
            echo "held: s1: the restore ended by hand, hibernate=true, sidecar broken: stays up (phase $(ctl_phase s1 etcd-main))"
    fi
fi

# ---- s2 / s3: a restored Etcd at spec.replicas 0, etcd-druid's three strikes
s2s3() { # ns, broken?
    local ns=$1
    restored "$ns" 0
    local U=$URL
    DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-$ns.log druid_actor_start "$ns" --executor
    write "$U" 4
    [ "$2" = broken ] && broken "$U"
    sleep 2
    [ "$(replicas "$ns" etcd-main)" = 3 ] || echo "note: $ns: replicas $(replicas "$ns" etcd-main) while restoring"
    end_by_hand "$ns"
    if [ "$2" = broken ]; then
        watch_zero "$U" "$ns" 25 "s2 restore ended on spec.replicas 0, etcd-druid's pre-sync failing" ||
            echo "held: s2: stays at $(replicas "$ns" etcd-main) (phase $(ctl_phase "$ns" etcd-main); druid: $(tail -1 "$CTL_DIR/druid-actor-$ns.log" 2>/dev/null | head -c 160))"
    else
        watch_zero "$U" "$ns" 60 "s3 control: restore ended on spec.replicas 0" ||
            ctl_fail "s3 control: not at 0 after 60s (phase $(ctl_phase "$ns" etcd-main); druid: $(tail -3 "$CTL_DIR/druid-actor-$ns.log" 2>/dev/null))"
    fi
    druid_actor_stop
    # shellcheck disable=SC2034 # read by the exit handler (druid_actor_stop)
    DRUID_ACTOR_PID=""
}
want s2 && s2s3 s2 broken
want s3 && s2s3 s3 ok

# ---- s4: gardenlet's merge patch during FinalSnapshot
if want s4; then
    restored s4 3
    U=$URL
    write "$U" 3
    end_by_hand s4
    write "$U" 2
    curl -sf -X POST "$U/admin/hold" >/dev/null
    kc -n s4 annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
    ctl_wait_phase s4 etcd-main FinalSnapshot 30
    ksim_wait 30 bash -c "[ \"\$(curl -sf '$U/admin/held')\" = 1 ]" || ctl_fail "s4: the final snapshot was not requested"
    out=$(kc -n s4 patch etcd etcd-main --type merge -p "{\"metadata\":{\"labels\":{\"app\":null,\"role\":\"main\",\"gardener.cloud/role\":\"controlplane\"},
        \"annotations\":{\"gardener.cloud/operation\":\"reconcile\",\"gardener.cloud/timestamp\":\"$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)\"}},\"spec\":{\"replicas\":0}}" 2>&1 | tail -1)
    echo "s4: gardenlet's merge patch during FinalSnapshot: ${out:0:200}"
    watch_zero "$U" s4 5 "s4 gardenlet's merge patch during FinalSnapshot (snapshot held)" ||
        echo "held: s4: nothing at 0 while the final snapshot is held (phase $(ctl_phase s4 etcd-main))"
    curl -sf -X POST "$U/admin/release" >/dev/null
    watch_zero "$U" s4 60 "s4 after the release" || ctl_fail "s4 control: not hibernated after the release (phase $(ctl_phase s4 etcd-main))"
fi
# ---- s5: the suspension removed mid-restore, etcd-druid's three strikes
if want s5; then
    restored s5 0
    U=$URL
    DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-s5.log druid_actor_start s5 --executor
    write "$U" 4
    broken "$U"
    out=$(WH_AS_NS=s5 wh_as alice annotate etcd etcd-main druid.gardener.cloud/suspend-etcd-spec-reconcile- 2>&1 | tail -1)
    echo "s5: the suspension removed mid-restore: ${out:0:200}"
    watch_zero "$U" s5 25 "s5 suspension removed mid-restore, etcd-druid's pre-sync failing" ||
        echo "held: s5: stays at $(replicas s5 etcd-main) (suspension now '$(jp s5 etcd/etcd-main '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')'; druid: $(tail -1 "$CTL_DIR/druid-actor-s5.log" 2>/dev/null | head -c 200))"
    druid_actor_stop
    # shellcheck disable=SC2034 # read by the exit handler (druid_actor_stop)
    DRUID_ACTOR_PID=""
fi
ctl_stop
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s): a StatefulSet reached 0 around a restore with acknowledged writes missing from the store"
    exit 1
fi
echo "attack18_restore_sleep: ok"
