#!/usr/bin/env bash
# The final snapshot and the revision check answered by a tenant's pod that passes for a member,
# on kube-sim with warden-webhook, warden-controller and backup-double. Issue 30: the
# controller asks the members' own sidecars, never something a tenant can redirect, and the
# StatefulSet never reaches 0 without a final snapshot holding its last write. The fifth attack
# moved the sidecar calls off the client Service onto the member pods: "the pods named
# <etcd>-<n> whose controller owner is the StatefulSet (its uid), Running with a pod IP". A
# pod's name and owner references are written by whoever creates it: a tenant with namespace
# edit rights (component protection on) creates pod <etcd>-<n> with a controller reference to
# the StatefulSet's uid (readable by her), and the kubelet reports it Running with its own IP,
# where her stand-in answers on the template's sidecar port from a store of its own.
#   C0. control: the members' sidecars fail every snapshot, no other pod: the StatefulSet stays.
#   M1. the members' sidecars fail every snapshot (the bucket is broken: 500); alice's pod
#       etcd-main-3 (an ordinal past the StatefulSet's 3) answers; hibernate=true. (On a cluster
#       alice needs no broken bucket: a NetworkPolicy of hers, which namespace edit rights allow,
#       keeps warden-controller from the members' sidecar port and lets it reach her pod.)
#   M3. HTTPS sidecars (spec.backup.tls): alice creates a Secret with a CA of hers and names it
#       in the Etcd's spec.backup.tls.tlsCASecretRef (namespace edit rights; etcd-druid rolls
#       that into the pods, the members' certificates stay signed by the old CA); her pod
#       etcd-main-3 serves a certificate her CA signed for etcd-main-client.m3.svc; the members'
#       sidecars work; hibernate=true.
#   M2. alice deletes member pod etcd-main-0 (no webhook sees a pod; an eviction does the same)
#       and creates pod etcd-main-0 before the StatefulSet controller does, with the StatefulSet
#       as controller (the StatefulSet controller then takes it for member 0); the other
#       members' sidecars work; hibernate=true.
# Oracle: ground truth. The members' double records every acknowledged write and every snapshot
# it stored: the StatefulSet at 0 (what kube-sim stores) with a write acknowledged before the
# cut missing from the members' store is the loss. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage

last_write() { curl -sfk "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sfk "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
write() { curl -sfk -X POST "$1/admin/write?n=$2" >/dev/null; }
replicas() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }
# alice's pod NS/NAME, controlled by StatefulSet etcd-main, reported Running at IP by the kubelet
tenant_pod() {
    local uid
    uid=$(kc -n "$1" get statefulset etcd-main -o jsonpath='{.metadata.uid}')
    WH_AS_NS=$1 wh_as alice create -f - >/dev/null <<EOF || ctl_fail "alice cannot create pod $1/$2"
apiVersion: v1
kind: Pod
metadata:
  name: $2
  labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: etcd-main, uid: $uid, controller: true}]
spec: {containers: [{name: backup-restore, image: tenant/stand-in, ports: [{name: server, containerPort: 8080}]}]}
EOF
    kc -n "$1" patch pod "$2" --subresource=status --type merge \
        -p "{\"status\":{\"phase\":\"Running\",\"podIP\":\"$3\",\"podIPs\":[{\"ip\":\"$3\"}]}}" >/dev/null ||
        ctl_fail "the kubelet's status of pod $1/$2"
}

declare -A REAL FAKE FIP
k=250
root=$(cd "$(dirname "$0")/../.." && pwd)
for ns in c0 m1 m2 m3; do
    tls=()
    if [ $ns = m3 ]; then # HTTPS: the sidecars' certificate for etcd-main-client.m3.svc, its CA
        druid_etcd $ns etcd-main --tls
        for who in real alice; do
            "$root/certs/gen-certs.sh" -o "$CTL_DIR/$who-$ns" -n $ns -s etcd-main-client >/dev/null ||
                ctl_fail "cannot make $who's certificates"
        done
        kc -n $ns create secret generic etcd-main-ca --from-file=bundle.crt="$CTL_DIR/real-$ns/ca.crt" >/dev/null
        tls=(--tls-dir "$CTL_DIR/real-$ns")
    else
        druid_etcd $ns etcd-main
    fi
    druid_double_for $ns etcd-main "${tls[@]}"
    REAL[$ns]=$DRUID_DOUBLE_URL
    ip=$(kc -n $ns get service etcd-main-client -o jsonpath='{.spec.clusterIP}')
    port=$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.template.spec.containers[?(@.name=="backup-restore")].ports[?(@.name=="server")].containerPort}')
    [ -n "$port" ] || ctl_fail "no sidecar port in $ns/etcd-main's template"
    fip="${ip%.*}.$k" k=$((k - 1)) # the tenant pod's IP, off the Services' allocations
    [ $ns != m3 ] || tls=(--tls-dir "$CTL_DIR/alice-$ns")
    druid_double_start "$fip" "$port" "${tls[@]}" || ctl_fail "cannot start the tenant's stand-in on $fip:$port"
    FAKE[$ns]=$DRUID_DOUBLE_URL
    FIP[$ns]=$fip
    write "${REAL[$ns]}" 5
done
ctl_start
sleep 1

# control C0 and M1: the members' sidecars fail every snapshot; in M1 alice's pod etcd-main-3
for ns in c0 m1; do
    curl -sfk -X POST "${REAL[$ns]}/admin/reply?code=500&count=0" >/dev/null || ctl_fail "cannot break the sidecars of $ns"
done
tenant_pod m1 etcd-main-3 "${FIP[m1]}"
# M2: alice restarts member 0 and her pod takes its name
WH_AS_NS=m2 wh_as alice delete pod etcd-main-0 --wait=false >/dev/null || ctl_fail "alice cannot delete pod m2/etcd-main-0"
ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n m2 get pod etcd-main-0 >/dev/null 2>&1" ||
    ctl_fail "pod m2/etcd-main-0 is still stored"
tenant_pod m2 etcd-main-0 "${FIP[m2]}"
# M3: alice's CA in the Etcd's tlsCASecretRef, her pod etcd-main-3 with a certificate it signed
WH_AS_NS=m3 wh_as alice create secret generic alice-ca --from-file=bundle.crt="$CTL_DIR/alice-m3/ca.crt" >/dev/null ||
    ctl_fail "alice cannot create her CA Secret"
out=$(WH_AS_NS=m3 wh_as alice patch etcd etcd-main --type merge -p '{"spec":{"backup":{"tls":{"tlsCASecretRef":{"name":"alice-ca"}}}}}' 2>&1)
echo "M3: alice's patch of the Etcd's tlsCASecretRef: $out"
tenant_pod m3 etcd-main-3 "${FIP[m3]}"
for ns in c0 m1 m2 m3; do
    write "${REAL[$ns]}" 5
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null ||
        ctl_fail "alice cannot hibernate $ns/etcd-main"
done

holes=0
deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ]; do
    [ "$(replicas m1)" = 0 ] && [ "$(replicas m2)" = 0 ] && [ "$(replicas m3)" = 0 ] && break
    sleep 0.5
done
[ "$(replicas c0)" = 3 ] || ctl_fail "control: StatefulSet c0/etcd-main at $(replicas c0) with its sidecars failing and no other pod"
echo "ok: control: with the members' sidecars failing the StatefulSet stays at 3 (phase $(ctl_phase c0 etcd-main))"
for ns in m1 m2 m3; do
    case $ns in
    m1) what="the members' sidecars failing, alice's pod etcd-main-3 (controlled by the StatefulSet) answered" ;;
    m3) what="alice's CA named in the Etcd's spec.backup.tls.tlsCASecretRef, the members' certificates failed verification and her pod etcd-main-3 (controlled by the StatefulSet, a certificate her CA signed) answered" ;;
    m2) what="alice's pod etcd-main-0, created once she had deleted member 0's, answered" ;;
    esac
    w=$(last_write "${REAL[$ns]}")
    s=$(stored_rev "${REAL[$ns]}")
    asked=$(curl -sfk "${FAKE[$ns]}/admin/requests" | jq -r '"\(.method) \(.path)"' | sort | uniq -c |
        awk '{printf "%s%s %s %s", (NR > 1 ? ", " : ""), $1, $2, $3}')
    if [ "$(replicas $ns)" = 0 ] && [ "${s:-0}" -lt "${w:-0}" ]; then
        echo "HOLE: ${ns^^}: StatefulSet $ns/etcd-main reached 0 with write ${w:-0} acknowledged and the members' store holding ${s:-nothing}: $what (${asked:-none}); event: $(ctl_events $ns etcd-main | grep -E 'Hibernated:|ScaleDown' | tail -1)"
        holes=$((holes + 1))
    else
        echo "held: ${ns^^}: the StatefulSet at $(replicas $ns), the members' store at ${s:-nothing} of ${w:-0} (the stand-in asked: ${asked:-none}), phase $(ctl_phase $ns etcd-main)"
    fi
done
ctl_stop

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a StatefulSet at 0 without a final snapshot holding its last write"; exit 1; }
echo "attack6_member_pod: ok"
