#!/usr/bin/env bash
# The restoring label removed together with other changes, on every path of an UPDATE, on
# kube-sim with warden-webhook (registered as the chart registers it) and warden-controller
# running. Each attack meets its own restoring Etcd (re-created from a backup, waiting for its
# status backup, with gardenlet's labels {role, gardener.cloud/role} and annotations).
# docs/status-backup-and-restore.md: "Removing the restoring label by hand, alone ..., ends the
# restore where it stands. A write that removes it together with other changes does not ...
# The mutating webhook puts the label back (kubectl prints a warning) ... warden-controller is
# not bound by this." docs/toggles.md (etcd-warden.io/restoring): the same.
#   G1 gardenlet's merge patch (labels written whole, only the restoring label differing; a new
#      gardener.cloud/timestamp); G2 the same carrying the same spec; G3 the same with
#      `labels: null` semantics replaced by a JSON patch replacing /metadata/labels and the
#      timestamp; T1 alice: JSON patch remove + add an annotation; T2 alice: merge patch (kubectl
#      edit's shape) removing the label and changing another; T3 alice: PUT (kubectl replace) of
#      the stored object without the label and with another annotation; T4 alice: server-side
#      apply --force-conflicts as the manager owning the labels (finalizers and owner references
#      beside the removal: attack18_restoring_meta.sh); T7 alice: JSON patch `move` of the
#      label onto another key; T8 alice: the label's value changed alone, then gardenlet's merge
#      patch; T9 client-side kubectl apply of the creating manifest (which carried the label)
#      without it and with a new annotation; D1 etcd-druid: merge patch removing the label and
#      gardener.cloud/operation (as druid clears it after a reconcile).
# Oracle: what kube-sim stores (the label), and the controller (restore-progress kept, no
# RestoreEndedByHand event).
# Controls: kubectl label etcd NAME etcd-warden.io/restoring- alone ends the restore (event
# RestoreEndedByHand, progress lifted); gardenlet's and etcd-druid's ordinary writes of a
# restoring Etcd (same labels, new timestamp; finalizer; operation annotation cleared; its
# finalizer removed while it is deleted with the allow-delete label) and of a
# live Etcd are admitted.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
ctl_start
. "$(dirname "$0")/../lib/restoring.sh"
restoring_ns r18
GLABELS='{"role":"main","gardener.cloud/role":"controlplane"}'

# G1 gardenlet's reconcile: GetAndCreateOrMergePatch, labels written whole (equal to the stored
# ones but for the restoring label), a new timestamp, operation=reconcile
new_name; restoring_etcd $e
out=$(G patch etcd $e --type merge -p "{\"metadata\":{\"labels\":{\"etcd-warden.io/restoring\":null},
    \"annotations\":{\"gardener.cloud/timestamp\":\"$(ts)\"}}}" 2>&1)
judge "G1 gardenlet's merge patch (labels whole, new timestamp)" $e "$out"
# G2 the same, carrying the stored spec (a no-op for the spec)
new_name; restoring_etcd $e
spec=$(jp $NS etcd/$e '{.spec}')
out=$(G patch etcd $e --type merge -p "{\"metadata\":{\"labels\":{\"etcd-warden.io/restoring\":null},
    \"annotations\":{\"gardener.cloud/timestamp\":\"$(ts)\",\"gardener.cloud/operation\":\"reconcile\"}},\"spec\":$spec}" 2>&1)
judge "G2 gardenlet's merge patch with the same spec" $e "$out"
# G3 JSON patch replacing the labels whole and the timestamp
new_name; restoring_etcd $e
out=$(G patch etcd $e --type json -p "[{\"op\":\"replace\",\"path\":\"/metadata/labels\",\"value\":$GLABELS},
    {\"op\":\"replace\",\"path\":\"/metadata/annotations/gardener.cloud~1timestamp\",\"value\":\"$(ts)\"}]" 2>&1)
judge "G3 JSON patch replacing /metadata/labels and the timestamp" $e "$out"
# T1 alice: JSON patch remove + add an annotation
new_name; restoring_etcd $e
out=$(A patch etcd $e --type json -p '[{"op":"remove","path":"/metadata/labels/etcd-warden.io~1restoring"},
    {"op":"add","path":"/metadata/annotations/team","value":"x"}]' 2>&1)
judge "T1 alice: JSON patch remove + an annotation" $e "$out"
# T2 alice: kubectl edit's shape (merge patch of the diff): the label removed, another changed
new_name; restoring_etcd $e
out=$(A patch etcd $e --type merge -p '{"metadata":{"labels":{"etcd-warden.io/restoring":null,"role":"events"}}}' 2>&1)
judge "T2 alice: merge patch (kubectl edit) removing it and changing role" $e "$out"
# T3 alice: kubectl replace of the stored object without the label, with another annotation
new_name; restoring_etcd $e
kc -n $NS get etcd $e -o json | jq 'del(.metadata.labels["etcd-warden.io/restoring"]) |
    .metadata.annotations.team = "x"' >"$CTL_DIR/t3.json"
out=$(A replace -f "$CTL_DIR/t3.json" 2>&1)
judge "T3 alice: kubectl replace without the label, with an annotation" $e "$out"
# T4 server-side apply of gardenlet's labels with a new annotation, as the labels' manager
new_name; restoring_etcd $e
mgr=$(kc -n $NS get etcd $e -o json --show-managed-fields | jq -r '[.metadata.managedFields[]? |
    select(.fieldsV1["f:metadata"]["f:labels"]? != null) | .manager][0] // "kubectl-client-side-apply"')
jq -n --arg ns $NS --arg n $e --argjson l "$GLABELS" '{apiVersion:"druid.gardener.cloud/v1alpha1",kind:"Etcd",
    metadata:{name:$n,namespace:$ns,labels:$l,annotations:{team:"x"}}}' >"$CTL_DIR/t4.json"
out=$(A apply --server-side --force-conflicts --field-manager="$mgr" -f "$CTL_DIR/t4.json" 2>&1)
judge "T4 alice: server-side apply as manager $mgr" $e "$out"
# T7 alice: JSON patch move of the label onto another key
new_name; restoring_etcd $e
out=$(A patch etcd $e --type json -p '[{"op":"move","from":"/metadata/labels/etcd-warden.io~1restoring","path":"/metadata/labels/x"}]' 2>&1)
judge "T7 alice: JSON patch move of the label" $e "$out"
# T8 two requests: the value changed alone, then gardenlet's merge patch
new_name; restoring_etcd $e
out=$(A label --overwrite etcd $e etcd-warden.io/restoring=done 2>&1)
out="$out | then: $(G patch etcd $e --type merge -p "{\"metadata\":{\"labels\":{\"etcd-warden.io/restoring\":null},
    \"annotations\":{\"gardener.cloud/timestamp\":\"$(ts)\"}}}" 2>&1)"
sleep 1.5
v=$(kc -n $NS get etcd $e -o json | jq -r '.metadata.labels["etcd-warden.io/restoring"] // "(absent)"')
judge "T8 value changed to 'done' (stored: '$v'), then gardenlet's merge patch" $e "$out"
# T9 client-side kubectl apply of the creating manifest without the label, with an annotation
new_name; restoring_etcd $e with-label
kc -n $NS get etcd $e -o json | jq -r '.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] // ""' |
    grep -q 'etcd-warden.io/restoring' || echo "note: T9: the label is not in last-applied"
jq -n --arg ns $NS --arg n $e --argjson l "$GLABELS" '{apiVersion:"druid.gardener.cloud/v1alpha1",kind:"Etcd",
    metadata:{name:$n,namespace:$ns,labels:$l,annotations:{"etcd-warden.io/status-backup-exists":"true",
    "gardener.cloud/operation":"reconcile","gardener.cloud/timestamp":"2026-11-30T20:00:00.000000001Z",team:"x"}},
    spec:{replicas:3,labels:{app:"etcd"},etcd:{},backup:{store:{prefix:($ns+"--"+$n),container:"bkt",provider:"S3"}}}}' >"$CTL_DIR/t9.json"
out=$(kc apply -f "$CTL_DIR/t9.json" 2>&1)
judge "T9 kubectl apply (client-side) without the label, with an annotation" $e "$out"
# D1 etcd-druid: merge patch removing the label with gardener.cloud/operation
new_name; restoring_etcd $e
out=$(D patch etcd $e --type merge -p '{"metadata":{"labels":{"etcd-warden.io/restoring":null},"annotations":{"gardener.cloud/operation":null}}}' 2>&1)
judge "D1 etcd-druid: merge patch removing it with gardener.cloud/operation" $e "$out"

# ---- controls
bad=0
ctl_ok() { echo "ok: control: $*"; }
ctl_bad() { echo "FAIL: control: $*"; bad=$((bad + 1)); }
# gardenlet's and etcd-druid's ordinary writes of a restoring Etcd
new_name; restoring_etcd $e
out=$(G patch etcd $e --type merge -p "{\"metadata\":{\"labels\":$GLABELS,\"annotations\":{\"gardener.cloud/timestamp\":\"$(ts)\"}}}" 2>&1) &&
    ctl_ok "gardenlet's merge patch without a label change of a restoring Etcd admitted" ||
    ctl_bad "gardenlet's ordinary merge patch of a restoring Etcd refused: $out"
out=$(D patch etcd $e --type merge -p '{"metadata":{"finalizers":["druid.gardener.cloud/etcd-druid"]}}' 2>&1) &&
    ctl_ok "etcd-druid's finalizer patch of a restoring Etcd admitted" ||
    ctl_bad "etcd-druid's finalizer patch of a restoring Etcd refused: $out"
out=$(D patch etcd $e --type merge -p '{"metadata":{"annotations":{"gardener.cloud/operation":null}}}' 2>&1) &&
    ctl_ok "etcd-druid clearing gardener.cloud/operation on a restoring Etcd admitted" ||
    ctl_bad "etcd-druid clearing gardener.cloud/operation on a restoring Etcd refused: $out"
wh_is_restoring $NS $e || ctl_bad "ordinary writes ended the restore of $e"
# a restoring Etcd deleted with the allow-delete label: etcd-druid's finalizer removal goes through
e_del=$e-del
kc apply -f - >/dev/null <<EOF2
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $e_del, namespace: $NS, labels: {role: main}, annotations: {etcd-warden.io/status-backup-exists: "true"}}
spec: {replicas: 1, labels: {app: etcd}, etcd: {}, backup: {store: {prefix: $NS--$e_del, container: bkt, provider: S3}}}
EOF2
ksim_wait 10 wh_is_restoring $NS $e_del || ctl_bad "$e_del is not restoring"
D patch etcd $e_del --type merge -p '{"metadata":{"finalizers":["druid.gardener.cloud/etcd-druid"]}}' >/dev/null 2>&1
A label etcd $e_del etcd-warden.io/allow-delete-while-restoring= >/dev/null 2>&1
A delete etcd $e_del --wait=false >/dev/null 2>&1 || ctl_bad "a restoring Etcd with the allow-delete label could not be deleted"
out=$(D patch etcd $e_del --type merge -p '{"metadata":{"finalizers":null}}' 2>&1) &&
    ksim_wait 10 ksim_gone -n $NS etcd $e_del &&
    ctl_ok "etcd-druid's finalizer removal of a restoring Etcd being deleted admitted; it is gone" ||
    ctl_bad "etcd-druid's finalizer removal of a deleting restoring Etcd: $out"
# the by-hand end, alone
out=$(A label etcd $e etcd-warden.io/restoring- 2>&1) || ctl_bad "the by-hand end refused: $out"
ksim_wait 20 ended_event $e && ctl_ok "kubectl label etcd $e etcd-warden.io/restoring- ended the restore: $(ctl_events $NS $e | grep RestoreEndedByHand | head -1 | head -c 160)" ||
    ctl_bad "no RestoreEndedByHand after the by-hand end: $(ctl_events $NS $e)"
ksim_wait 20 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n $NS get etcd $e -o jsonpath='{.metadata.annotations}' | grep -q restore-progress" ||
    ctl_bad "restore-progress left after the by-hand end"
# gardenlet's and etcd-druid's writes of the now live Etcd
out=$(G patch etcd $e --type merge -p "{\"metadata\":{\"labels\":$GLABELS,\"annotations\":{\"gardener.cloud/operation\":\"reconcile\",\"gardener.cloud/timestamp\":\"$(ts)\"}},\"spec\":{\"replicas\":3}}" 2>&1) &&
    ctl_ok "gardenlet's merge patch of a live Etcd admitted" || ctl_bad "gardenlet's merge patch of a live Etcd refused: $out"
out=$(D patch etcd $e --type merge -p '{"metadata":{"annotations":{"gardener.cloud/operation":null}}}' 2>&1) &&
    ctl_ok "etcd-druid's annotation patch of a live Etcd admitted" || ctl_bad "etcd-druid's patch of a live Etcd refused: $out"
ctl_stop
[ "$bad" = 0 ] || ctl_fail "$bad control(s) failed"
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s): a restore ended by a write that removed the restoring label together with other changes"
    exit 1
fi
echo "attack18_restoring_alone: ok"
