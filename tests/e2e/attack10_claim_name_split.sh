#!/usr/bin/env bash
# A live Etcd's member claim deleted on the strength of another Etcd whose name is a suffix of
# it, against the webhook registered as the chart registers it (issue 30).
# docs/protection.md ("A live Etcd's claims go with the Etcd or its sleep"): "A claim of Etcd E
# is a PVC of E's namespace named <template>-<E>-<n> (... any template is read ...). Its DELETE,
# by anyone (...), is refused while E is live (no deletionTimestamp) and n is in its member
# range". A claim name splits more than one way: etcd-main-etcd-main-<n> is the claim of Etcd
# etcd-main (template etcd-main) and also has the shape of a claim of an Etcd main (template
# etcd-main-etcd). Whether the claim may go must be decided by the Etcd whose claim it is: any
# Etcd it may belong to that is live with n in its range must hold it.
# The scene is the one the rule exists for: etcd-druid deletes StatefulSet etcd-main with its
# pods orphaned (as before it re-creates one whose immutable fields changed), the pods are gone
# (pods are not routed to the webhook): the claims are held by no StatefulSet and mounted by no
# pod, and only the Etcd rule holds them. alice is a tenant with edit rights.
#   N1. Etcd main (1 member, live) beside etcd-main (3 members, live): alice deletes
#       etcd-main-etcd-main-2, in etcd-main's range, outside main's.
#   N2. Etcd main being deleted (a finalizer keeps it) beside live etcd-main: alice deletes
#       etcd-main-etcd-main-1 (outside StatefulSet main's ordinals [0, 1)).
#   N3. break glass set on Etcd main (alice's, a fresh value) beside live etcd-main, which has
#       none: alice deletes etcd-main-etcd-main-1.
# alice disabled component protection on both Etcds (the rule holds for "a tenant of an Etcd
# with protection disabled").
# Oracle: what kube-sim stores: a claim etcd-main-etcd-main-<n> of live Etcd etcd-main (no
# deletionTimestamp, 3 replicas, n < 3, no break glass on it) deleted. Its member would start
# again on a new, empty volume. Fails (HOLE) while the hole exists.
# Control: N0, the same scene without an Etcd main: every claim of etcd-main is refused (in
# range, and past it: etcd-main-etcd-main-5), and the claim of an Etcd that does not exist goes.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

claims() { # NS ORDINAL...: the member claims of etcd-main, as the StatefulSet controller makes them
    local ns=$1 i
    shift
    for i in "$@"; do
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n "$ns" create -f - >/dev/null || wh_fail "cannot create the member claims of $ns"
}
orphan() { # NS: etcd-druid deletes StatefulSet etcd-main with its pods orphaned, the pods go
    local ns=$1
    out=$(kc_druid -n "$ns" delete statefulset etcd-main --cascade=orphan --wait=false 2>&1) ||
        wh_fail "$ns: etcd-druid's orphaning delete of StatefulSet etcd-main refused: $out"
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n $ns get statefulset etcd-main >/dev/null 2>&1" ||
        wh_fail "$ns: StatefulSet etcd-main is still stored"
    kc -n "$ns" delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null 2>&1 ||
        wh_fail "$ns: cannot delete the pods of etcd-main"
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n $ns get pods -o name | grep -q '^pod/etcd-main-'" ||
        wh_fail "$ns: the pods of etcd-main are still stored"
}
gone() { # NS PVC: deleted or being deleted
    local ts
    ts=$(kc -n "$1" get pvc "$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
live3() { # NS: etcd-main live, 3 replicas, no break glass
    [ -z "$(kc -n "$1" get etcd etcd-main -o jsonpath='{.metadata.deletionTimestamp}')" ] &&
        [ "$(kc -n "$1" get etcd etcd-main -o jsonpath='{.spec.replicas}')" = 3 ] &&
        [ -z "$(kc -n "$1" get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/allow-scale-down-without-snapshot}')" ]
}

for ns in n0 n1 n2 n3; do druid_etcd $ns etcd-main; done
druid_etcd n1 main --replicas 1
druid_etcd n2 main --replicas 1
druid_etcd n3 main --replicas 1
for ns in n0 n1 n2 n3; do claims $ns 0 1 2 5; done
for ns in n0 n1 n2 n3; do
    for e in etcd-main main; do
        [ $ns = n0 ] && [ $e = main ] && continue
        WH_AS_NS=$ns wh_as alice annotate etcd $e druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
            wh_fail "alice cannot disable protection of $ns/$e"
    done
done
kc -n n2 patch etcd main --type merge -p '{"metadata":{"finalizers":["example.com/keep"]}}' >/dev/null ||
    wh_fail "cannot put a finalizer on n2/main"
for ns in n0 n1 n2 n3; do orphan $ns; done
out=$(WH_AS_NS=n2 wh_as alice delete etcd main --wait=false 2>&1) || wh_fail "N2: alice cannot delete Etcd n2/main: $out"
[ -n "$(kc -n n2 get etcd main -o jsonpath='{.metadata.deletionTimestamp}')" ] || wh_fail "N2: n2/main is not being deleted"
out=$(WH_AS_NS=n3 wh_as alice annotate etcd main \
    etcd-warden.io/allow-scale-down-without-snapshot="$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ) main volume broken" 2>&1) ||
    wh_fail "N3: alice cannot set break glass on n3/main: $out"
wh_caught_up # the caches see the objects

# ---- control: without an Etcd main
for i in 0 1 2; do
    out=$(WH_AS_NS=n0 wh_as alice delete pvc etcd-main-etcd-main-$i --wait=false 2>&1)
    ! gone n0 etcd-main-etcd-main-$i || wh_fail "control: claim n0/etcd-main-etcd-main-$i of live etcd-main deleted: $out"
    grep -qF "of Etcd etcd-main, which is not being deleted" <<<"$out" ||
        wh_fail "control: claim n0/etcd-main-etcd-main-$i refused by another rule than the live Etcd's claims: $out"
done
echo "ok: control: the claims of live Etcd etcd-main in its range are refused"
out=$(WH_AS_NS=n0 wh_as alice delete pvc etcd-main-etcd-main-5 --wait=false 2>&1)
! gone n0 etcd-main-etcd-main-5 || wh_fail "control: the claim of a member past the range (n0/etcd-main-etcd-main-5) deleted: $out"
grep -qF "of Etcd etcd-main, which is not being deleted" <<<"$out" ||
    wh_fail "control: claim n0/etcd-main-etcd-main-5 refused by another rule than the live Etcd's claims: $out"
echo "ok: control: the claim of a member past the range is held too (every ordinal of a live Etcd's claim)"
printf '%s\n' "apiVersion: v1" "kind: PersistentVolumeClaim" "metadata: {name: etcd-gone-etcd-gone-0}" \
    "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}" | kc -n n0 create -f - >/dev/null ||
    wh_fail "cannot create claim n0/etcd-gone-etcd-gone-0"
out=$(WH_AS_NS=n0 wh_as alice delete pvc etcd-gone-etcd-gone-0 --wait=false 2>&1) ||
    wh_fail "control: the claim of an Etcd that does not exist (n0/etcd-gone-etcd-gone-0) refused: $out"
echo "ok: control: the claim of an Etcd that does not exist goes"

holes=0
judge() { # CASE NS ORDINAL WHAT
    local out
    out=$(WH_AS_NS=$2 wh_as alice delete pvc etcd-main-etcd-main-$3 --wait=false 2>&1)
    live3 "$2" || wh_fail "$1: Etcd $2/etcd-main is not live with 3 members and no break glass"
    if gone "$2" etcd-main-etcd-main-$3; then
        echo "HOLE: $1: claim $2/etcd-main-etcd-main-$3 of live Etcd etcd-main (3 members, no break glass) deleted by alice: $4; its member would start again on a new, empty volume"
        holes=$((holes + 1))
    else echo "held: $1: $(tr '\n' ' ' <<<"$out" | head -c 300)"; fi
}
judge N1 n1 2 "Etcd main (1 member) is live beside it, and ordinal 2 is outside main's range"
judge N2 n2 1 "Etcd main is being deleted beside it"
judge N3 n3 1 "break glass was set on Etcd main, not on etcd-main"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a live Etcd's claim freed by another Etcd whose name ends its name"; exit 1; }
echo "attack10_claim_name_split: ok"
