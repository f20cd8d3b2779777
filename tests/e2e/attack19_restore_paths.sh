#!/usr/bin/env bash
# Ways around the two restore rules of issue 30, on kube-sim with warden-webhook (registered as
# the chart registers it), warden-controller and the druid actor.
# docs/status-backup-and-restore.md: "Removing the restoring label by hand, alone (`kubectl label
# etcd NAME etcd-warden.io/restoring-`), ends the restore where it stands. A write that removes it
# together with other changes does not ... While the restore goes on, its suspension is held:
# removed by anyone ..., it is set again at the next pass, with a Warning SuspensionReasserted";
# docs/toggles.md: `druid.gardener.cloud/suspend-etcd-spec-reconcile` "set by the controller while
# hibernated or restoring, so etcd-druid does not undo its work".
#   P1 server-side apply: the Etcd created by `kubectl apply --server-side` (field manager
#      gardenlet, the webhook adding the label in that request), then the same manifest applied
#      again, unchanged, by the same manager: a write nobody meant as a removal;
#   P2 alice: `kubectl label --dry-run=server` removing the label alone;
#   P3 alice: the label and the suspension removed in one JSON patch;
#   P4 alice: the suspension set to "false" (the druid actor, as etcd-druid, reads its presence);
#   P5 etcd-druid's and gardenlet's ordinary writes of a restoring Etcd (its finalizer; the
#      operation annotation cleared; gardenlet's merge patch of its labels and timestamp) must be
#      admitted (false refusals);
#   P6 the label removed alone through the status subresource (etcd-druid, alice);
#   P8 a restoring Etcd being deleted (allow-delete, a finalizer holding it): the label removed
#      with an annotation is still put back;
#   P7 the mutating webhook registered for Etcd CREATE only: P3 refused; the suspension alone
#      removed is set again.
# Oracle: what kube-sim stores (the label, restore-progress, the suspension), events
# (RestoreEndedByHand, SuspensionReasserted), the druid actor's scaling.
# Control: `kubectl label etcd NAME etcd-warden.io/restoring-` alone ends the restore.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
ctl_start
. "$(dirname "$0")/../lib/restoring.sh"
restoring_ns r19
susp() { jp $NS "etcd/$1" '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}'; }

# control: the label removed alone ends the restore
new_name; restoring_etcd $e
A label etcd $e etcd-warden.io/restoring- >/dev/null 2>&1 || ctl_fail "control: the label removed alone was refused"
ksim_wait 10 ended_event $e || ctl_fail "control: the label removed alone did not end the restore"
echo "ok: control: the label removed alone ends the restore ($(ctl_events $NS $e | grep RestoreEndedByHand | head -1 | head -c 120))"

# P1 server-side apply, created and re-applied unchanged by the same manager
new_name
restoring_manifest $e >"$CTL_DIR/p1.yaml"
G apply --server-side --field-manager=gardenlet -f "$CTL_DIR/p1.yaml" >/dev/null 2>&1 || ctl_fail "P1: server-side create refused"
ksim_wait 10 wh_is_restoring $NS $e || ctl_fail "P1: $e is not restoring"
ksim_wait 20 has_progress $e || ctl_fail "P1: no restore progress"
mgr=$(kc -n $NS get etcd $e -o json --show-managed-fields | jq -c '[.metadata.managedFields[]? |
    select(.fieldsV1["f:metadata"]["f:labels"]["f:etcd-warden.io/restoring"]? != null) | .manager]')
out=$(G apply --server-side --field-manager=gardenlet -f "$CTL_DIR/p1.yaml" 2>&1)
judge "P1 gardenlet: the creating manifest applied again server-side, unchanged (label's managers: $mgr)" $e "$out"

# P2 dry run
new_name; restoring_etcd $e
out=$(A label --dry-run=server etcd $e etcd-warden.io/restoring- 2>&1)
judge "P2 alice: kubectl label --dry-run=server removing the label alone" $e "$out"

# P3 the label and the suspension removed in one write
new_name; restoring_etcd $e
out=$(A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/labels/etcd-warden.io~1restoring"},
    {"op":"remove","path":"/metadata/annotations/druid.gardener.cloud~1suspend-etcd-spec-reconcile"}]' 2>&1)
judge "P3 alice: the label and the suspension removed in one JSON patch" $e "$out"
ksim_wait 10 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $NS get etcd $e -o jsonpath='{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')\" = true ]"
if [ "$(susp $e)" != true ]; then
    echo "HOLE: P3: the suspension of restoring $NS/$e not set again 10 s after (value '$(susp $e)')"
    holes=$((holes + 1))
else
    echo "held: P3: the suspension set again: $(ctl_events $NS $e | grep -i SuspensionReasserted | head -1 | head -c 120)"
fi

# P4 the suspension set to "false"; the druid actor (etcd-druid reads the annotation's presence)
P=p4
restoring_sleeper $P
out=$(WH_AS_NS=$P wh_as alice annotate --overwrite etcd etcd-main druid.gardener.cloud/suspend-etcd-spec-reconcile=false 2>&1 | tail -1)
DRUID_ACTOR_LOG=$CTL_DIR/druid-actor-p4.log druid_actor_start $P
sleep 3
r=$(jp $P sts/etcd-main '{.spec.replicas}')
v=$(jp $P etcd/etcd-main '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')
druid_actor_stop
# shellcheck disable=SC2034 # read by the exit handler (druid_actor_stop)
DRUID_ACTOR_PID=""
if [ "$r" != 0 ]; then
    echo "HOLE: P4: the suspension set to '$v' by alice (${out:0:120}): etcd-druid scaled the restoring StatefulSet 0 -> $r"
    holes=$((holes + 1))
else
    echo "held: P4: the suspension set to 'false' by alice (${out:0:120}); stored '$v'; the druid actor left the StatefulSet at 0"
fi

# P5 ordinary writes of a restoring Etcd
new_name; restoring_etcd $e
refused=""
D patch etcd $e --type merge -p '{"metadata":{"finalizers":["druid.gardener.cloud/etcd-druid"]}}' >"$CTL_DIR/p5a" 2>&1 || refused="$refused; etcd-druid's finalizer: $(head -c 160 "$CTL_DIR/p5a")"
D patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/annotations/gardener.cloud~1operation"}]' >"$CTL_DIR/p5b" 2>&1 || refused="$refused; etcd-druid clearing the operation: $(head -c 160 "$CTL_DIR/p5b")"
G patch etcd $e --type merge -p "{\"metadata\":{\"labels\":{\"role\":\"main\",\"gardener.cloud/role\":\"controlplane\"},
    \"annotations\":{\"gardener.cloud/operation\":\"reconcile\",\"gardener.cloud/timestamp\":\"$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)\"}}}" >"$CTL_DIR/p5c" 2>&1 || refused="$refused; gardenlet's reconcile: $(head -c 160 "$CTL_DIR/p5c")"
D patch etcd $e --subresource status --type merge -p '{"status":{"observedGeneration":1}}' >"$CTL_DIR/p5d" 2>&1 || refused="$refused; etcd-druid's status: $(head -c 160 "$CTL_DIR/p5d")"
if [ -n "$refused" ]; then
    echo "HOLE: P5: ordinary writes of restoring $NS/$e refused: ${refused#; }"
    holes=$((holes + 1))
else
    judge "P5 etcd-druid's finalizer, its operation annotation cleared, gardenlet's reconcile patch, druid's status: admitted" $e ""
fi
D patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1

# P6 the label removed alone through the status subresource, with a status change (kubectl
# patch --subresource status), by etcd-druid and by alice
new_name; restoring_etcd $e
out=$(D patch etcd $e --subresource status --type json -p '[{"op":"remove","path":"/metadata/labels/etcd-warden.io~1restoring"}]' 2>&1)
judge "P6a etcd-druid: the label removed through /status" $e "$out"
out=$(A patch etcd $e --subresource status --type merge -p '{"metadata":{"labels":{"etcd-warden.io/restoring":null}},"status":{"observedGeneration":7}}' 2>&1)
judge "P6b alice: the label removed through /status with a status change" $e "$out"

# P8 a restoring Etcd being deleted (allow-delete label, held by alice's finalizer): the label
# removed with an annotation must still be put back
new_name; restoring_etcd $e
A patch etcd $e --type json -p '[{"op":"add","path":"/metadata/finalizers","value":["example.com/x"]}]' >/dev/null 2>&1 || ctl_fail "P8: finalizer refused"
A label etcd $e etcd-warden.io/allow-delete-while-restoring= >/dev/null 2>&1 || ctl_fail "P8: allow-delete refused"
A delete etcd $e --wait=false >/dev/null 2>&1 || ctl_fail "P8: delete refused"
[ -n "$(jp $NS etcd/$e '{.metadata.deletionTimestamp}')" ] || ctl_fail "P8: no deletionTimestamp"
out=$(A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/labels/etcd-warden.io~1restoring"},
    {"op":"add","path":"/metadata/annotations/team","value":"x"}]' 2>&1)
sleep 1.5
if labelled $e; then
    echo "held: P8 alice: a terminating restoring Etcd, the label removed with an annotation: $(tr '\n' ' ' <<<"$out" | head -c 160)"
else
    echo "HOLE: P8 alice: a terminating restoring Etcd lost its restoring label removed with an annotation: $(tr '\n' ' ' <<<"$out" | head -c 200)"
    holes=$((holes + 1))
fi
A annotate etcd $e druid.gardener.cloud/suspend-etcd-spec-reconcile- >/dev/null 2>&1
sleep 3
echo "note: P8: a terminating restoring Etcd's suspension removed by alice: 3 s later '$(susp $e)' (events: $(ctl_events $NS $e | grep -c SuspensionReasserted) SuspensionReasserted)"
A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1

# P7 the mutating webhook registered for Etcd CREATE only: the label and the suspension removed
# in one write must be refused; the suspension removed alone is set again
kc patch mutatingwebhookconfiguration etcd-warden --type json \
    -p '[{"op":"test","path":"/webhooks/0/rules/0/resources","value":["etcds"]},{"op":"replace","path":"/webhooks/0/rules/0/operations","value":["CREATE"]}]' >/dev/null ||
    ctl_fail "cannot register the mutating webhook for Etcd CREATE only"
new_name; restoring_etcd $e
both() {
    A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/labels/etcd-warden.io~1restoring"},
        {"op":"remove","path":"/metadata/annotations/druid.gardener.cloud~1suspend-etcd-spec-reconcile"}]' >"$CTL_DIR/p7.out" 2>&1 && return 1
    grep -q -e 'removed together with other changes' -e 'suspend-etcd-spec-reconcile\] is held while' "$CTL_DIR/p7.out"
}
if ! ksim_wait 10 both; then
    echo "HOLE: P7: with the mutating webhook on CREATE only, the label and the suspension removed in one write were not refused: $(tail -1 "$CTL_DIR/p7.out" | head -c 200)"
    holes=$((holes + 1))
fi
judge "P7a alice, mutating webhook on CREATE only: the label and the suspension removed in one write ($(tail -1 "$CTL_DIR/p7.out" | head -c 120))" $e ""
[ "$(susp $e)" = true ] || { echo "HOLE: P7a: the suspension is gone (refused write half-applied?)"; holes=$((holes + 1)); }
A annotate etcd $e druid.gardener.cloud/suspend-etcd-spec-reconcile- >/dev/null 2>&1
ksim_wait 10 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $NS get etcd $e -o jsonpath='{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')\" = true ]"
if [ "$(susp $e)" != true ]; then
    echo "HOLE: P7b: mutating webhook on CREATE only: the suspension removed alone was not set again"
    holes=$((holes + 1))
else
    echo "held: P7b: mutating webhook on CREATE only: the suspension removed alone was set again"
fi
ctl_stop
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s) around the restore rules"
    exit 1
fi
echo "attack19_restore_paths: ok"
