#!/usr/bin/env bash
# The final snapshot and the revision check answered by a tenant's pod that passes the member
# rule, on kube-sim with warden-webhook, warden-controller and backup-double. Issue 30: the
# controller asks the members' own sidecars, never something a tenant can redirect, and the
# StatefulSet never reaches 0 without a final snapshot holding its last write. The sixth attack
# (attack6_member_pod M2: alice deletes member pod etcd-main-0 and creates her own in its place,
# controlled by the StatefulSet) was closed by comparing the pod with the template: "its
# containers etcd and backup-restore carry the image, command and args of the StatefulSet's pod
# template", its claim volume mounted where the template mounts it. Image, command and args are
# not all that makes a sidecar write to the Etcd's store from the Etcd's etcd: etcd-druid gives
# the sidecar its store container as an environment variable (STORAGE_CONTAINER,
# internal/utils/envvar.go) and reaches etcd through the pod's host alias <etcd>-local
# (--endpoints=http://<etcd>-local:<port>, internal/component/statefulset/builder.go), and the
# pod's env and hostAliases are the creator's to write. Her pod runs etcd-druid's own images
# with the template's command and args on member 0's claim, and so passes; it is member 0, the
# first asked:
#   E1. alice (namespace edit rights, protection on) deletes pod etcd-main-0 and creates pod
#       etcd-main-0 first, as the template makes it but with env STORAGE_CONTAINER=alice-bucket
#       (in place of the template's) on container backup-restore: the genuine sidecar takes the
#       final snapshot into her bucket; hibernate=true.
#   E2. the same with hostAliases etcd-main-local -> an etcd of hers (a frozen copy): the
#       genuine sidecar snapshots that etcd into the Etcd's store; hibernate=true.
#   E3. the same with the template's containers untouched and a third container of hers,
#       listening on the sidecar's port 8080 before the sidecar binds it (the sidecar then
#       restarts in a loop; the pod stays Running); hibernate=true.
#   C0. control: her pod in member 0's place with another sidecar image (the sixth attack's
#       case): nothing is asked and the StatefulSet stays up.
# In each, the stand-in at her pod's IP (backup-double, a store and an etcd revision of its own)
# plays what her pod's sidecar answers. Oracle: ground truth. The members' double records every
# acknowledged write and every snapshot it stored: the StatefulSet at 0 (what kube-sim stores)
# with a write acknowledged before the hibernation missing from the members' store is the
# loss. Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage

last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
write() { curl -sf -X POST "$1/admin/write?n=$2" >/dev/null; }
replicas() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }
# alice's pod NS/etcd-main-0 as the StatefulSet controller makes it (its template, member 0's
# claim, the StatefulSet as controller), changed by the jq filter EDIT, reported Running at IP
# by the kubelet
tenant_pod() {
    local ns=$1 ip=$2 edit=$3
    kc -n "$ns" get statefulset etcd-main -o json | jq -c '
        . as $s | {apiVersion: "v1", kind: "Pod",
          metadata: {name: "etcd-main-0", labels: $s.spec.template.metadata.labels,
            ownerReferences: [{apiVersion: "apps/v1", kind: "StatefulSet", name: $s.metadata.name,
              uid: $s.metadata.uid, controller: true, blockOwnerDeletion: true}]},
          spec: ($s.spec.template.spec + {volumes: (($s.spec.template.spec.volumes // []) +
            [$s.spec.volumeClaimTemplates[]?.metadata.name |
             {name: ., persistentVolumeClaim: {claimName: "\(.)-\($s.metadata.name)-0"}}])})}' |
        jq -c "$edit" >"$CTL_DIR/pod-$ns.json" || ctl_fail "cannot build alice's pod for $ns"
    WH_AS_NS=$ns wh_as alice delete pod etcd-main-0 --wait=false >/dev/null || ctl_fail "alice cannot delete pod $ns/etcd-main-0"
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n $ns get pod etcd-main-0 >/dev/null 2>&1" ||
        ctl_fail "pod $ns/etcd-main-0 is still stored"
    WH_AS_NS=$ns wh_as alice create -f "$CTL_DIR/pod-$ns.json" >/dev/null || ctl_fail "alice cannot create pod $ns/etcd-main-0"
    kc -n "$ns" patch pod etcd-main-0 --subresource=status --type merge \
        -p "{\"status\":{\"phase\":\"Running\",\"podIP\":\"$ip\",\"podIPs\":[{\"ip\":\"$ip\"}]}}" >/dev/null ||
        ctl_fail "the kubelet's status of pod $ns/etcd-main-0"
}
br='.spec.containers |= map(if .name == "backup-restore" then '
declare -A EDIT=(
    [c0]="$br"'.image = "tenant/stand-in" else . end)'
    [e1]="$br"'.env = ([(.env // [])[] | select(.name != "STORAGE_CONTAINER")] + [{name: "STORAGE_CONTAINER", value: "alice-bucket"}]) else . end)'
    [e2]='.spec.hostAliases = [{ip: "IP", hostnames: ["etcd-main-local"]}]'
    [e3]='.spec.containers += [{name: "metrics", image: "tenant/stand-in", ports: [{name: "server", containerPort: 8080}]}]'
)
declare -A CHECK=( # what the stored pod must show of alice's change
    [c0]='.spec.containers[] | select(.name == "backup-restore") | .image == "tenant/stand-in"'
    [e1]='.spec.containers[] | select(.name == "backup-restore") | [.env[] | select(.name == "STORAGE_CONTAINER")] | (length == 1 and .[0].value == "alice-bucket")'
    [e2]='.spec.hostAliases[0].hostnames[0] == "etcd-main-local"'
    [e3]='(.spec.containers | length) == 3'
)
declare -A REAL FAKE
k=250
for ns in c0 e1 e2 e3; do
    druid_etcd $ns etcd-main
    druid_double_for $ns etcd-main
    REAL[$ns]=$DRUID_DOUBLE_URL
    ip=$(kc -n $ns get service etcd-main-client -o jsonpath='{.spec.clusterIP}')
    port=$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.template.spec.containers[?(@.name=="backup-restore")].ports[?(@.name=="server")].containerPort}')
    [ -n "$port" ] || ctl_fail "no sidecar port in $ns/etcd-main's template"
    fip="${ip%.*}.$k" k=$((k - 1)) # the tenant pod's IP, off the Services' allocations
    druid_double_start "$fip" "$port" || ctl_fail "cannot start the tenant's stand-in on $fip:$port"
    FAKE[$ns]=$DRUID_DOUBLE_URL
    write "${REAL[$ns]}" 5
    tenant_pod $ns "$fip" "${EDIT[$ns]//IP/$fip}"
    kc -n $ns get pod etcd-main-0 -o json | jq -e "${CHECK[$ns]}" >/dev/null ||
        ctl_fail "$ns: the stored pod etcd-main-0 does not carry alice's change (${CHECK[$ns]})"
done
ctl_start
sleep 1
for ns in c0 e1 e2 e3; do
    write "${REAL[$ns]}" 5
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null ||
        ctl_fail "alice cannot hibernate $ns/etcd-main"
done

holes=0
deadline=$((SECONDS + 60))
while [ $SECONDS -lt $deadline ]; do
    [ "$(replicas e1)" = 0 ] && [ "$(replicas e2)" = 0 ] && [ "$(replicas e3)" = 0 ] && break
    sleep 0.5
done
[ "$(replicas c0)" = 3 ] || ctl_fail "control: StatefulSet c0/etcd-main at $(replicas c0) with alice's stand-in image in member 0's place"
echo "ok: control: alice's pod with another sidecar image in member 0's place: the StatefulSet stays at 3 (phase $(ctl_phase c0 etcd-main))"
for ns in e1 e2 e3; do
    case $ns in
    e1) what="alice's pod etcd-main-0 (the template's images, command and args, member 0's claim) with env STORAGE_CONTAINER=alice-bucket on its sidecar answered" ;;
    e2) what="alice's pod etcd-main-0 (the template's images, command and args, member 0's claim) with host alias etcd-main-local pointing at her etcd answered" ;;
    e3) what="alice's pod etcd-main-0 (the template's containers as they are, member 0's claim) with a third container of hers on the sidecar's port answered" ;;
    esac
    w=$(last_write "${REAL[$ns]}")
    s=$(stored_rev "${REAL[$ns]}")
    asked=$(curl -sf "${FAKE[$ns]}/admin/requests" | jq -r '"\(.method) \(.path)"' | sort | uniq -c |
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
echo "attack7_member_env: ok"
