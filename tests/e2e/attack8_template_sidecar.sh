#!/usr/bin/env bash
# The final snapshot and etcd's revision asked of a process a tenant put in the member pods, on
# kube-sim with warden-webhook, warden-controller and two backup-doubles. Issue 30: the
# controller asks the members' own sidecars, never something a tenant can redirect, and a
# StatefulSet reaches 0 only with a final snapshot that holds its last write.
# docs/hibernation.md (How the sidecar is reached): warden-controller connects to each member's
# pod IP "on the port the StatefulSet's pod template declares for the sidecar (container
# backup-restore, port server)", and a pod is a member when its containers etcd and
# backup-restore carry the template's image, command and args. Both are read from the pod
# template, which a namespace editor with component protection disabled may change: the
# webhook judges only its claim mounts (docs/protection.md).
#   T1. alice (namespace edit rights) disables protection of Etcd etcd-main and patches its
#       StatefulSet: a container "tools" of hers is added to the pod template and the
#       backup-restore container's port "server" now declares the port "tools" listens on.
#       The members roll onto the template (the StatefulSet controller's pods: owned by the
#       StatefulSet, the template's containers, the member claims, Running). etcd
#       acknowledges 3 writes. Then the Etcd is hibernated (etcd-warden.io/hibernate=true):
#       the final snapshot task and the revision check are answered by "tools" (a second
#       backup-double on the pod IP, on the declared port: it snapshots nothing of etcd), and
#       warden-controller scales the StatefulSet to 0.
#   T0. control: the same Etcd untouched hibernates with its sidecar's final snapshot.
# Oracle: what kube-sim stores and the genuine sidecar's double records: StatefulSet etcd-main
# at 0 replicas while a write the genuine double acknowledged is in no snapshot it stored.
# Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"

ctl_stage
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
replicas() { kc -n "$1" get statefulset etcd-main -o jsonpath='{.spec.replicas}'; }

declare -A URL
for ns in t0 t1; do
    druid_etcd $ns etcd-main
    for i in 0 1 2; do # the member claims, as the StatefulSet controller creates them
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims of $ns"
    druid_double_for $ns etcd-main
    URL[$ns]=$DRUID_DOUBLE_URL
done

# ---- T1: alice's container answers on the port the template declares for the sidecar
WH_AS_NS=t1 wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
    ctl_fail "alice cannot disable protection of t1"
wh_caught_up # the webhook's caches
ip=$(kc -n t1 get service etcd-main-client -o jsonpath='{.spec.clusterIP}')
fake=$(wh_free_port)
br=$(kc -n t1 get statefulset etcd-main -o json | jq '[.spec.template.spec.containers[].name] | index("backup-restore")')
out=$(WH_AS_NS=t1 wh_as alice patch statefulset etcd-main --type json -p "[
    {\"op\":\"add\",\"path\":\"/spec/template/spec/containers/-\",\"value\":{\"name\":\"tools\",\"image\":\"docker.io/library/busybox:1.36\",\"args\":[\"sh\",\"-c\",\"serve-snapshots --port $fake\"]}},
    {\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/$br/ports/0/containerPort\",\"value\":$fake}]" 2>&1) ||
    ctl_fail "T1: alice cannot change the pod template of t1/etcd-main: $out"
echo "T1: alice's pod template: container tools added, backup-restore's port server declared as $fake"
# the rolling update, as the StatefulSet controller does it: each member re-created on the template
kc -n t1 delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "T1: cannot delete the pods"
ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n t1 get pods -o name | grep -q '^pod/etcd-main-'" ||
    ctl_fail "T1: the old pods of t1/etcd-main are still stored"
druid_pods t1 etcd-main 3
druid_double_start "$ip" "$fake" || ctl_fail "T1: cannot start alice's process on $ip:$fake"
FAKE_URL=$DRUID_DOUBLE_URL

for ns in t0 t1; do
    curl -sf -X POST "${URL[$ns]}/admin/write?n=3" >/dev/null || ctl_fail "$ns: the double takes no writes"
done
ctl_start
for ns in t0 t1; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
done
ctl_wait_phase t0 etcd-main Hibernated 60
w=$(last_write "${URL[t0]}") s=$(stored_rev "${URL[t0]}")
if [ "$(replicas t0)" != 0 ] || [ "${s:-0}" -lt "${w:-1}" ]; then
    ctl_fail "control: t0 Hibernated with StatefulSet at $(replicas t0), write $w acknowledged and the store at ${s:-nothing}"
fi
echo "ok: control: t0 hibernated on its sidecar's final snapshot (revision $s)"

deadline=$((SECONDS + 60))
while [ "$(replicas t1)" != 0 ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
holes=0
w=$(last_write "${URL[t1]}") s=$(stored_rev "${URL[t1]}")
if [ "$(replicas t1)" = 0 ] && [ "$w" -gt "${s:-0}" ]; then
    echo "HOLE: T1: StatefulSet t1/etcd-main scaled to 0 (phase $(ctl_phase t1 etcd-main)) while writes up to revision $w were acknowledged and the genuine sidecar stored ${s:-no snapshot}: the final snapshot and the revision check were answered by alice's container (its requests: $(curl -sf "$FAKE_URL/admin/requests" | wc -l))"
    holes=$((holes + 1))
else
    echo "held: T1: StatefulSet at $(replicas t1), phase $(ctl_phase t1 etcd-main), store at ${s:-nothing} of $w; events: $(ctl_events t1 etcd-main | tail -3 | tr '\n' ' ' | head -c 400)"
fi
ctl_stop

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): the final snapshot asked of a tenant's process in the member pods"; exit 1; }
echo "attack8_template_sidecar: ok"
