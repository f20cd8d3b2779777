#!/usr/bin/env bash
# A StatefulSet created at 0 over running member pods that were hidden from its selector while
# it was created, against the webhook registered as the chart registers it. Issue 30: a
# StatefulSet of an Etcd never reaches fewer members (0 included) without a final snapshot,
# whoever asks, break glass aside. After an orphaning DELETE the member pods run on without a
# controller; a CREATE of the Etcd's StatefulSet at 0 replicas (or with fewer, or from a later
# ordinal) while they run is refused, because the StatefulSet controller adopts the orphans its
# selector matches and its name owns, and deletes those outside its ordinals. A pod's labels
# are the tenant's to change (no webhook sees a pod), and adoption happens whenever they match
# again, not only at the CREATE:
#   R1. protection disabled: alice orphan-deletes StatefulSet etcd-a (3 replicas), removes the
#       selector label app.kubernetes.io/part-of from pods etcd-a-0..2, creates the
#       StatefulSet at 0 replicas, then puts the label back on the pods.
#   R2. the same, the StatefulSet created at 1 replica (a partial scale-down of 3 members).
# Oracle: what kube-sim stores: StatefulSet etcd-X at fewer replicas than the stored pods of
# its name whose labels match its selector and that have no controller (the StatefulSet
# controller adopts them and deletes those outside its ordinals), the Etcd at 3, not being
# deleted, no hibernation asked. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

for e in etcd-a etcd-b etcd-c; do
    druid_etcd shoot $e
    wh_as alice annotate etcd $e druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        wh_fail "alice cannot disable protection of $e"
done
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
live() { # Etcd E live at 3 replicas, not being deleted, no hibernation asked
    [ "$(kc -n shoot get etcd "$1" -o jsonpath='{.spec.replicas}/{.metadata.deletionTimestamp}/{.metadata.annotations.etcd-warden\.io/hibernate}')" = 3// ]
}
# "<replicas> <pods>": StatefulSet E's spec.replicas and the number of stored pods E-<n> its
# selector matches that have no controller (the orphans it adopts)
adoptable() {
    local sts
    sts=$(kc -n shoot get statefulset "$1" -o json 2>/dev/null) || { echo "none 0"; return; }
    kc -n shoot get pods -o json | jq -r --argjson s "$sts" --arg e "$1" '
        ($s.spec.selector.matchLabels) as $sel |
        [.items[] | select(.metadata.name | test("^" + $e + "-[0-9]+$")) |
         select(.metadata.deletionTimestamp == null) |
         select([.metadata.ownerReferences[]? | select(.controller == true)] | length == 0) |
         select(.metadata.labels as $l | $sel | to_entries | all(.value == $l[.key]))] |
        "\($s.spec.replicas) \(length)"'
}
recreate() { # E REPLICAS [HOOK]: the orphaning delete, HOOK E (the pods hidden), the CREATE
    local obj out
    obj=$(kc -n shoot get statefulset "$1" -o json | jq -c --argjson r "$2" 'del(.status, .metadata.uid,
        .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.generation,
        .metadata.managedFields) | .spec.replicas = $r') || wh_fail "cannot read StatefulSet $1"
    wh_await_admitted 10 "alice's orphaning delete of StatefulSet $1 refused" \
        wh_as alice delete statefulset "$1" --cascade=orphan
    wh_as alice delete statefulset "$1" --cascade=orphan --wait=false >/dev/null 2>&1 ||
        wh_fail "alice's orphaning delete of StatefulSet $1 refused"
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get statefulset $1 >/dev/null 2>&1" ||
        wh_fail "StatefulSet $1 is still stored"
    kc -n shoot get pod "$1-0" >/dev/null 2>&1 || wh_fail "the pods of $1 did not survive the orphaning delete"
    wh_caught_up # the caches see it gone
    [ -z "${3:-}" ] || "$3" "$1"
    wh_as alice create -f - <<<"$obj" 2>&1
}

# ---- control: the CREATE at 0 with the pods showing is refused (the earlier fix)
out=$(recreate etcd-c 0)
[ "$(adoptable etcd-c)" = "none 0" ] || wh_fail "control: StatefulSet etcd-c created at 0 over its running pods: $out"
echo "ok: control: a CREATE at 0 over the running orphans is refused"

hide() { wh_as alice label pod "$1-0" "$1-1" "$1-2" app.kubernetes.io/part-of- >/dev/null || wh_fail "alice cannot relabel the pods of $1"; }
show() { wh_as alice label pod "$1-0" "$1-1" "$1-2" app.kubernetes.io/part-of="$1" >/dev/null || wh_fail "alice cannot relabel the pods of $1"; }

# ---- R1: created at 0 while the pods are hidden
out=$(recreate etcd-a 0 hide)
sleep 1
show etcd-a
got=$(adoptable etcd-a)
if [ "${got%% *}" = 0 ] && [ "${got#* }" -gt 0 ] && live etcd-a; then
    hole "R1: alice (protection disabled) created StatefulSet etcd-a at 0 replicas while its orphaned members' pods were relabelled, then relabelled them back: ${got#* } running members it adopts and deletes (Etcd at 3, no snapshot, no break glass)"
else held "R1: stored \"$got\": $(tr '\n' ' ' <<<"$out" | head -c 300)"; fi

# ---- R2: created at 1 while the pods are hidden
out=$(recreate etcd-b 1 hide)
sleep 1
show etcd-b
got=$(adoptable etcd-b)
if [ "${got%% *}" = 1 ] && [ "${got#* }" -gt 1 ] && live etcd-b; then
    hole "R2: alice (protection disabled) created StatefulSet etcd-b at 1 replica while its orphaned members' pods were relabelled, then relabelled them back: it adopts ${got#* } running members and deletes all but member 0 (a partial scale-down, no quorum, no break glass)"
else held "R2: stored \"$got\": $(tr '\n' ' ' <<<"$out" | head -c 300)"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): running members adopted and deleted by a StatefulSet created over them"; exit 1; }
echo "attack6_relabel_adopt: ok"
