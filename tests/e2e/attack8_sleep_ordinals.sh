#!/usr/bin/env bash
# A hibernated Etcd's StatefulSet moved to later ordinals, woken, written to, then the claims of
# its running members freed, on kube-sim with warden-webhook, warden-controller and
# backup-double. Issue 30: a member's volume goes only with a final snapshot that holds its
# last write. docs/protection.md decides a live Etcd's claims from the Etcd: "a claim of Etcd E
# is a PVC of E's namespace named <template>-<E>-<n> ... Its DELETE ... is refused while E is
# live and n is in its member range ([0, spec.replicas) ...)". The members are the
# StatefulSet's ordinals [spec.ordinals.start, start + replicas), and a StatefulSet at 0
# replicas has no member an ordinals move could take out, so a namespace editor with
# protection disabled may move it while the Etcd sleeps: the wake's members are then 3..5.
#   S1. Etcd etcd-main hibernated by warden-controller (final snapshot, StatefulSet at 0).
#       alice (namespace edit rights, protection disabled) sets the StatefulSet's
#       spec.ordinals.start to 3. The Etcd is woken (etcd-warden.io/hibernate removed):
#       warden-controller scales the StatefulSet to 3, its members 3..5 start on claims
#       etcd-main-etcd-main-3..5 (restored from the final snapshot) and etcd acknowledges 3
#       more writes (warden-controller runs throughout). alice deletes the StatefulSet with its
#       pods orphaned, deletes the pods and deletes claims etcd-main-etcd-main-3..5.
# Oracle: what kube-sim stores and the double records: a claim of a member that ran after the
# wake deleted while the double acknowledged a write that no snapshot it stored holds (the
# Etcd live at spec.replicas 3, not being deleted, not hibernating). Fails (HOLE) while the
# hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
gone() { # NS PVC: deleted or being deleted
    local ts
    ts=$(kc -n "$1" get pvc "$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
claims() { # NS FROM TO: the member claims FROM..TO, as the StatefulSet controller creates them
    local i
    for ((i = $2; i <= $3; i++)); do
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n "$1" create -f - >/dev/null || ctl_fail "cannot create the member claims $2..$3 of $1"
}
pods() { # NS FROM TO: members FROM..TO of StatefulSet etcd-main as the StatefulSet controller makes them (druid_pods)
    local ip i
    kc -n "$1" get statefulset etcd-main -o json | jq -c --argjson a "$2" --argjson b "$3" '
        . as $s | range($a; $b + 1) as $i | {apiVersion: "v1", kind: "Pod",
          metadata: {name: "\($s.metadata.name)-\($i)", labels: $s.spec.template.metadata.labels,
            ownerReferences: [{apiVersion: "apps/v1", kind: "StatefulSet", name: $s.metadata.name,
              uid: $s.metadata.uid, controller: true, blockOwnerDeletion: true}]},
          spec: ($s.spec.template.spec + {volumes: (($s.spec.template.spec.volumes // []) +
            [$s.spec.volumeClaimTemplates[]?.metadata.name |
             {name: ., persistentVolumeClaim: {claimName: "\(.)-\($s.metadata.name)-\($i)"}}])})}' |
        kc -n "$1" create -f - >/dev/null || ctl_fail "cannot create pods $2..$3 of $1/etcd-main"
    ip=$(kc -n "$1" get service etcd-main-client -o jsonpath='{.spec.clusterIP}')
    for ((i = $2; i <= $3; i++)); do
        kc -n "$1" patch pod "etcd-main-$i" --subresource=status --type merge \
            -p "{\"status\":{\"phase\":\"Running\",\"podIP\":\"$ip\",\"podIPs\":[{\"ip\":\"$ip\"}]}}" \
            >/dev/null || ctl_fail "cannot set the status of pod $1/etcd-main-$i"
    done
}

ns=s1
druid_etcd $ns etcd-main
claims $ns 0 2
druid_double_for $ns etcd-main
URL=$DRUID_DOUBLE_URL
curl -sf -X POST "$URL/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
ctl_start
kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
ctl_wait_phase $ns etcd-main Hibernated 60
[ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "Hibernated, StatefulSet not at 0"
kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "cannot delete the pods"
echo "S1: hibernated, the final snapshot at revision $(stored_rev "$URL") (last write $(last_write "$URL"))"

WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection"
wh_caught_up # the webhook's caches
out=$(WH_AS_NS=$ns wh_as alice patch statefulset etcd-main --type merge -p '{"spec":{"ordinals":{"start":3}}}' 2>&1)
got=$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.ordinals.start}')
if [ "$got" != 3 ]; then
    echo "held: S1: the ordinals move of the sleeping StatefulSet refused: $(tr '\n' ' ' <<<"$out" | head -c 400)"
    ctl_stop
    echo "attack8_sleep_ordinals: ok"
    exit 0
fi
echo "S1: alice moved the sleeping StatefulSet to ordinals from 3"
kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate- >/dev/null || ctl_fail "cannot wake $ns"
ksim_wait 60 bash -c "[ \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')\" = 3 ]" ||
    ctl_fail "the wake did not scale the StatefulSet to 3 (phase $(ctl_phase $ns etcd-main))"
claims $ns 3 5
pods $ns 3 5
ksim_wait 60 bash -c "[ -z \"\$(kubectl --kubeconfig '$KUBECONFIG' -n $ns get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/hibernation-phase}')\" ]" ||
    ctl_fail "the wake did not end (phase $(ctl_phase $ns etcd-main))"
curl -sf -X POST "$URL/admin/write?n=3" >/dev/null || ctl_fail "the double takes no writes"
w=$(last_write "$URL") s=$(stored_rev "$URL")
echo "S1: woken on members 3..5, writes up to revision $w acknowledged, the store at $s"

WH_AS_NS=$ns wh_as alice delete statefulset etcd-main --cascade=orphan --wait=false >/dev/null 2>&1 ||
    ctl_fail "the orphaning delete refused"
ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n $ns get statefulset etcd-main >/dev/null 2>&1" ||
    ctl_fail "StatefulSet etcd-main is still stored"
WH_AS_NS=$ns wh_as alice delete pod etcd-main-3 etcd-main-4 etcd-main-5 --wait=false >/dev/null 2>&1 ||
    ctl_fail "alice cannot delete the pods"
ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n $ns get pods -o name | grep -q '^pod/etcd-main-'" ||
    ctl_fail "the pods are still stored"
wh_caught_up # the webhook's caches
out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-3 etcd-main-etcd-main-4 etcd-main-etcd-main-5 --wait=false 2>&1)
n=0
for i in 3 4 5; do gone $ns etcd-main-etcd-main-$i && n=$((n + 1)); done
live=$(kc -n $ns get etcd etcd-main -o jsonpath='{.spec.replicas}/{.metadata.deletionTimestamp}/{.metadata.annotations.etcd-warden\.io/hibernate}')
[ "$live" = 3// ] || ctl_fail "Etcd etcd-main is not live at 3 replicas: $live"
holes=0
if [ "$n" -gt 0 ] && [ "$w" -gt "${s:-0}" ]; then
    echo "HOLE: S1: $n claim(s) of members 3..5 (run since the wake) of live Etcd $ns/etcd-main deleted while writes up to revision $w were acknowledged and no stored snapshot holds more than revision $s"
    holes=$((holes + 1))
else echo "held: S1: $n claim(s) gone: $(tr '\n' ' ' <<<"$out" | head -c 400)"; fi

ctl_stop
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): claims of members past the Etcd's spec.replicas freed"; exit 1; }
echo "attack8_sleep_ordinals: ok"
