#!/usr/bin/env bash
# The scale-down guard skipped by a review padded past warden-webhook's parse budget, with the
# chart's webhook.failurePolicy Ignore, on kube-sim with warden-webhook and backup-double.
# Issue 30: no StatefulSet of an Etcd reaches 0 while a write acknowledged before it is missing
# from the final snapshot, whoever asks. docs/troubleshooting.md: "With `Ignore` those changes
# go through unchecked while the webhook is down" - and only then. But a review whose parsed
# tree would take more than the parse budget (4 MiB) is answered with an error, not a decision
# ("the review is too large to decide"), and the API server applies failurePolicy to an error
# as to a webhook that is down: Ignore admits it. The padding is the tenant's to write: labels
# on the Etcd's StatefulSet (a namespace editor with component protection disabled; labels are
# not guarded but for managed-by and part-of), which every later UPDATE carries twice (object
# and oldObject). The webhook is up all along.
#   I1. Etcd etcd-main (backup store, 3 replicas, writes acknowledged, no snapshot). The
#       chart's webhooks registered with failurePolicy Ignore. alice (namespace edit rights)
#       disables protection, labels StatefulSet etcd-main with 50000 short labels (admitted:
#       a label change), then patches spec.replicas to 0.
#   I2. the same for a running member's claim: alice labels PVC etcd-main-etcd-main-0 with
#       60000 short labels (a label change, admitted), then deletes it.
#   I0. control: before the padding alice's scale to 0 (patch and kubectl scale) is refused
#       by the guard, failurePolicy Ignore or not.
# Oracle: ground truth: StatefulSet etcd-main stored at 0 replicas (I1), or member claim
# etcd-main-etcd-main-0 gone (I2), while backup-double's last acknowledged write is above the
# highest revision a snapshot in its store holds.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
replicas() { kc -n i1 get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }

# the chart's failurePolicy Ignore (webhook.failurePolicy), on every entry
for vwc in $(kc get validatingwebhookconfigurations -o jsonpath='{.items[*].metadata.name}'); do
    n=$(kc get validatingwebhookconfiguration "$vwc" -o json | jq '.webhooks | length')
    p=$(jq -cn --argjson n "$n" '[range($n) | {op: "replace", path: "/webhooks/\(.)/failurePolicy", value: "Ignore"}]')
    kc patch validatingwebhookconfiguration "$vwc" --type json -p "$p" >/dev/null || ctl_fail "cannot set failurePolicy Ignore on $vwc"
done
kc get validatingwebhookconfigurations -o json | jq -e '[.items[].webhooks[].failurePolicy] | all(. == "Ignore")' >/dev/null ||
    ctl_fail "not every webhook has failurePolicy Ignore"
echo "the webhooks are registered with failurePolicy Ignore"

druid_etcd i1 etcd-main
druid_double_for i1 etcd-main
URL=$DRUID_DOUBLE_URL
curl -sf -X POST "$URL/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" \
    "metadata: {name: etcd-main-etcd-main-0, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
    "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}" | kc -n i1 create -f - >/dev/null ||
    ctl_fail "cannot create the member claim"
claim_gone() {
    local ts
    ts=$(kc -n i1 get pvc etcd-main-etcd-main-0 -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
WH_AS_NS=i1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection"
wh_caught_up # the webhook's caches
[ "$(replicas)" = 3 ] || ctl_fail "StatefulSet etcd-main is not at 3"

out=$(WH_AS_NS=i1 wh_as alice patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}' 2>&1)
[ "$(replicas)" = 3 ] || ctl_fail "control: alice's scale to 0 admitted without padding: $out"
echo "ok: control: alice's patch to 0 refused: $(tr '\n' ' ' <<<"$out" | head -c 200)"
out=$(WH_AS_NS=i1 wh_as alice scale statefulset etcd-main --replicas=0 2>&1)
[ "$(replicas)" = 3 ] || ctl_fail "control: alice's kubectl scale to 0 admitted: $out"
echo "ok: control: alice's kubectl scale to 0 refused: $(tr '\n' ' ' <<<"$out" | head -c 200)"

out=$(WH_AS_NS=i1 wh_as alice delete pvc etcd-main-etcd-main-0 --wait=false 2>&1)
! claim_gone || ctl_fail "control: alice deleted the running member's claim without padding: $out"
echo "ok: control: alice's delete of the running member's claim refused: $(tr '\n' ' ' <<<"$out" | head -c 200)"

python3 -c 'import json; print(json.dumps({"metadata": {"labels": {f"p{i:05d}": "" for i in range(50000)}}}))' \
    >"$CTL_DIR/labels.json" || ctl_fail "cannot write the labels"
out=$(WH_AS_NS=i1 wh_as alice patch statefulset etcd-main --type merge --patch-file "$CTL_DIR/labels.json" 2>&1) ||
    ctl_fail "alice cannot label her StatefulSet: $(head -c 300 <<<"$out")"
echo "I1: alice labelled StatefulSet etcd-main with $(kc -n i1 get statefulset etcd-main -o json | jq '.metadata.labels | length') labels"
out=$(WH_AS_NS=i1 wh_as alice patch statefulset etcd-main --type merge -p '{"spec":{"replicas":0}}' 2>&1)
echo "I1: alice's patch to 0: $(tr '\n' ' ' <<<"$out" | head -c 200)"
grep -F "parse budget" "$WH_LOG" | tail -1 | cut -c1-250

python3 -c 'import json; print(json.dumps({"metadata": {"labels": {f"q{i:05d}": "" for i in range(60000)}}}))' \
    >"$CTL_DIR/pvc-labels.json" || ctl_fail "cannot write the claim's labels"
if out=$(WH_AS_NS=i1 wh_as alice patch pvc etcd-main-etcd-main-0 --type merge --patch-file "$CTL_DIR/pvc-labels.json" 2>&1); then
    echo "I2: alice labelled the claim with 60000 labels"
else # refused, not errored: failurePolicy Ignore does not let it through
    grep -qF "parse budget" <<<"$out" || ctl_fail "alice's labels on the claim refused for another reason: $(head -c 300 <<<"$out")"
    echo "I2: alice's 60000 labels on the claim refused: $(head -c 200 <<<"$out")"
fi
out=$(WH_AS_NS=i1 wh_as alice delete pvc etcd-main-etcd-main-0 --wait=false 2>&1)
echo "I2: alice's delete of the padded claim: $(tr '\n' ' ' <<<"$out" | head -c 200)"

holes=0
w=$(last_write "$URL") s=$(stored_rev "$URL")
if [ "$(replicas)" = 0 ] && [ "${s:-0}" -lt "${w:-0}" ]; then
    echo "HOLE: I1: StatefulSet i1/etcd-main at 0 replicas with write ${w} acknowledged and the store holding revision ${s:-none}: warden-webhook, up and running, answered the padded review with an error and failurePolicy Ignore admitted the scale-down"
    holes=$((holes + 1))
else echo "held: I1: StatefulSet at $(replicas), last write ${w:-none}, stored ${s:-none}"; fi
if claim_gone && [ "${s:-0}" -lt "${w:-0}" ]; then
    echo "HOLE: I2: member claim i1/etcd-main-etcd-main-0 deleted with write ${w} acknowledged and the store holding revision ${s:-none}: the padded DELETE review was answered with an error and failurePolicy Ignore admitted it"
    holes=$((holes + 1))
else echo "held: I2: the claim stays"; fi
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): the guard skipped by padding a review past the parse budget"; exit 1; }
echo "attack12_budget_ignore: ok"
