#!/usr/bin/env bash
# The restoring label removed together with a change of the Etcd's finalizers or owner
# references ends the restore, on kube-sim with warden-webhook (registered as the chart
# registers it) and warden-controller running.
# docs/status-backup-and-restore.md: "Removing the restoring label by hand, alone ..., ends the
# restore where it stands. A write that removes it together with other changes does not ...
# The mutating webhook puts the label back (kubectl prints a warning)"; docs/toggles.md
# (etcd-warden.io/restoring): "removed together with other changes ... it is put back with a
# warning, or refused".
#   M1 alice: JSON patch removing the label and adding a finalizer;
#   M2 alice: JSON patch removing the label and adding an owner reference;
#   M3 kubectl replace of the Etcd as an older export has it (etcd-druid's finalizer, no
#      restoring label: an unconditional PUT of a whole object, as a tool re-applying it does);
#   M4 two requests: a finalizer added alone, then the label and the finalizer removed together;
#   M5 alice: JSON patch removing the label and setting metadata.generateName;
#   V1 M1 again with the mutating webhook registered for Etcd CREATE only, where "the
#      validating one refuses such a write" (control: gardenlet's merge patch is refused there).
# Oracle: what kube-sim stores (the label, the finalizers/owner references the write carried)
# and the controller (restore-progress removed, event RestoreEndedByHand).
# Control: the same label removal with an annotation added (T1 of attack18_restoring_alone.sh)
# keeps the restore going, with the warning.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
ctl_start
. "$(dirname "$0")/../lib/restoring.sh"
restoring_ns r18


stored() { kc -n $NS get etcd "$1" -o json | jq -c '{finalizers: .metadata.finalizers, ownerReferences: [.metadata.ownerReferences[]?.name]}'; }
# M1
new_name; restoring_etcd $e
out=$(A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/labels/etcd-warden.io~1restoring"},
    {"op":"add","path":"/metadata/finalizers","value":["example.com/x"]}]' 2>&1)
judge "M1 alice: the label removed with a finalizer added (stored: $(stored $e))" $e "$out"
A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
# M2
new_name; restoring_etcd $e
cmuid=$(A create configmap owner-$e -o jsonpath='{.metadata.uid}' 2>/dev/null)
out=$(A patch etcd $e --type json -p "[{\"op\":\"remove\",\"path\":\"/metadata/labels/etcd-warden.io~1restoring\"},
    {\"op\":\"add\",\"path\":\"/metadata/ownerReferences\",\"value\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"owner-$e\",\"uid\":\"$cmuid\"}]}]" 2>&1)
judge "M2 alice: the label removed with an owner reference added (stored: $(stored $e))" $e "$out"
# M3
new_name; restoring_etcd $e
kc -n $NS get etcd $e -o json | jq 'del(.metadata.labels["etcd-warden.io/restoring"]) | del(.metadata.resourceVersion) |
    .metadata.finalizers = ["druid.gardener.cloud/etcd-druid"]' >"$CTL_DIR/m3.json"
out=$(A replace -f "$CTL_DIR/m3.json" 2>&1)
judge "M3 alice: kubectl replace of an export with etcd-druid's finalizer, without the label (stored: $(stored $e))" $e "$out"
A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
# M4
new_name; restoring_etcd $e
out=$(A patch etcd $e --type json -p '[{"op":"add","path":"/metadata/finalizers","value":["example.com/x"]}]' 2>&1)
out="$out | then: $(A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/labels/etcd-warden.io~1restoring"},
    {"op":"remove","path":"/metadata/finalizers"}]' 2>&1)"
judge "M4 alice: a finalizer added alone, then removed with the label (stored: $(stored $e))" $e "$out"
# M5
new_name; restoring_etcd $e
out=$(A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/labels/etcd-warden.io~1restoring"},
    {"op":"add","path":"/metadata/generateName","value":"x-"}]' 2>&1)
judge "M5 alice: the label removed with metadata.generateName set (stored: $(jp $NS etcd/$e '{.metadata.generateName}'))" $e "$out"

# control: an annotation beside the removal keeps the restore going
new_name; restoring_etcd $e
out=$(A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/labels/etcd-warden.io~1restoring"},
    {"op":"add","path":"/metadata/annotations/team","value":"x"}]' 2>&1)
sleep 1.5
labelled $e && has_progress $e && ! ended_event $e && grep -q 'kept: it was removed together with other changes' <<<"$out" ||
    ctl_fail "control: the label removed with an annotation added ended the restore: $out"
echo "ok: control: the label removed with an annotation added: put back with a warning, the restore goes on"

# ---- the mutating webhook registered for Etcd CREATE only
kc patch mutatingwebhookconfiguration etcd-warden --type json \
    -p '[{"op":"test","path":"/webhooks/0/rules/0/resources","value":["etcds"]},{"op":"replace","path":"/webhooks/0/rules/0/operations","value":["CREATE"]}]' >/dev/null ||
    ctl_fail "cannot register the mutating webhook for Etcd CREATE only"
new_name; restoring_etcd $e
refused() {
    G patch etcd $e --type merge -p "{\"metadata\":{\"labels\":{\"etcd-warden.io/restoring\":null},
        \"annotations\":{\"gardener.cloud/timestamp\":\"$(ts)\"}}}" >"$CTL_DIR/v0.out" 2>&1 && return 1
    grep -q 'removed together with other changes' "$CTL_DIR/v0.out"
}
ksim_wait 10 refused || ctl_fail "control: V0: without the mutating webhook on UPDATE gardenlet's merge patch was not refused: $(cat "$CTL_DIR/v0.out")"
labelled $e || ctl_fail "control: V0: the restore of $e ended"
echo "ok: control: V0: without the mutating webhook on UPDATE, gardenlet's merge patch is refused: $(tail -1 "$CTL_DIR/v0.out" | head -c 160)"
out=$(A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/labels/etcd-warden.io~1restoring"},
    {"op":"add","path":"/metadata/finalizers","value":["example.com/x"]}]' 2>&1)
judge "V1 alice, the mutating webhook on CREATE only: the label removed with a finalizer added (stored: $(stored $e))" $e "$out"
A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1
ctl_stop
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s): a restore ended by a write that removed the restoring label together with changes of finalizers, owner references or generateName"
    exit 1
fi
echo "attack18_restoring_meta: ok"
