#!/usr/bin/env bash
# An Etcd's StatefulSet re-created (after an orphaning delete) with a pod template whose etcd
# container no longer mounts the members' claim, on kube-sim with warden-webhook and
# warden-controller's registration. Issue 30: "every path to zero is judged", member data not
# lost. docs/protection.md ("A running member's PVC is not deleted"): "A member's claim also
# stays mounted: an UPDATE of the StatefulSet (running or hibernated) after which a container of
# its pod template no longer mounts a volume of its volumeClaimTemplates as it did ... is refused
# for everyone, etcd-druid and an Etcd with component protection disabled included: an emptyDir
# put at /var/etcd/data ... Each member would (re)start without the data on its claim (the
# rolling update, or the next wake), as if the claim were deleted." docs/hibernation.md: "An
# orphaning DELETE (kubectl delete --cascade=orphan, what etcd-druid does to re-create a
# StatefulSet whose immutable fields changed) leaves the pods running and is not guarded; but
# the CREATE that follows adopts the pods of its name": the CREATE that follows is judged for
# its ordinals, its replicas and planted claims, not for the template it rolls the adopted
# members onto.
#   U1. Etcd u1/etcd-main (3 members running on their claims), component protection disabled
#       by alice (namespace edit rights, self-service). Her UPDATE putting an emptyDir at
#       /var/etcd/data is refused (the rule). She deletes the StatefulSet with
#       --cascade=orphan (the members keep running) and creates it again, the same but for
#       that emptyDir.
#   U2. the same in u2, the StatefulSet created again with its claim template renamed (data):
#       container etcd mounts the claim volume data at /var/etcd/data, so a claim is mounted
#       there, but the members' claims become data-etcd-main-<n>, new and empty.
#   U0. control: u0/etcd-main, the same orphaning delete and the StatefulSet created again
#       unchanged (etcd-druid's re-creation): admitted.
# Oracle: what kube-sim stores: StatefulSet u1/etcd-main, whose pods of the running members are
# adopted and rolled onto its template, with container etcd mounting no claim volume at
# /var/etcd/data while the members' claims hold the data.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage

saved() { # NS: the StatefulSet as a manifest to create again
    kc -n "$1" get statefulset etcd-main -o json | jq 'del(.metadata.uid, .metadata.resourceVersion,
        .metadata.creationTimestamp, .metadata.generation, .metadata.managedFields, .status)'
}
emptydir() { # the template with an emptyDir at /var/etcd/data for container etcd
    jq '.spec.template.spec.volumes += [{name: "scratch", emptyDir: {}}]
        | .spec.template.spec.containers |= map(if .name == "etcd"
            then .volumeMounts = [{name: "scratch", mountPath: "/var/etcd/data"}] else . end)'
}
renamed() { # the claim template renamed data, mounted where the old one was
    jq '.spec.volumeClaimTemplates[0].metadata.name = "data"
        | .spec.template.spec.containers |= map(.volumeMounts |= map(if .name == "etcd-main" then .name = "data" else . end))'
}
old_claims_mounted() { # NS: container etcd mounts the template etcd-main (the members' claims)
    kc -n "$1" get statefulset etcd-main -o json | jq -e '[.spec.volumeClaimTemplates[].metadata.name] | index("etcd-main")' >/dev/null
}
claim_mounted() { # NS: container etcd mounts a claim volume at /var/etcd/data
    kc -n "$1" get statefulset etcd-main -o json | jq -e '([.spec.volumeClaimTemplates[].metadata.name]) as $t
        | [.spec.template.spec.containers[] | select(.name == "etcd") | .volumeMounts[]?
           | select(.mountPath == "/var/etcd/data" and (.name as $n | $t | index($n)))] | length > 0' >/dev/null
}

for ns in u0 u1 u2; do
    druid_etcd $ns etcd-main
    for i in 0 1 2; do
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims of $ns"
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
    saved $ns >"$CTL_DIR/$ns-sts.json"
done
wh_caught_up

# the rule, on an UPDATE
emptydir <"$CTL_DIR/u1-sts.json" | jq --arg rv "$(kc -n u1 get statefulset etcd-main -o jsonpath='{.metadata.resourceVersion}')" \
    '.metadata.resourceVersion = $rv' >"$CTL_DIR/u1-update.json"
out=$(WH_AS_NS=u1 wh_as alice replace -f "$CTL_DIR/u1-update.json" 2>&1) &&
    ctl_fail "U1: the UPDATE putting an emptyDir at /var/etcd/data was admitted: $out"
echo "ok: U1: the UPDATE unmounting the claim is refused: $(tr '\n' ' ' <<<"$out" | head -c 240)"
claim_mounted u1 || ctl_fail "U1: the template changed although refused"

holes=0
for ns in u0 u1 u2; do
    out=$(WH_AS_NS=$ns wh_as alice delete statefulset etcd-main --cascade=orphan 2>&1) ||
        ctl_fail "$ns: alice's orphaning delete refused: $out"
    ksim_wait 10 ksim_gone -n $ns statefulset etcd-main || ctl_fail "$ns: the StatefulSet was not deleted"
    [ "$(kc -n $ns get pods -o name | wc -l)" = 3 ] || ctl_fail "$ns: the members did not keep running: $(kc -n $ns get pods -o name | tr '\n' ' ')"
done
wh_caught_up
out=$(WH_AS_NS=u0 wh_as alice create -f "$CTL_DIR/u0-sts.json" 2>&1) ||
    ctl_fail "control: U0: the StatefulSet created again unchanged (etcd-druid's re-creation) refused: $out"
echo "ok: control: U0: the StatefulSet created again as it was"
emptydir <"$CTL_DIR/u1-sts.json" >"$CTL_DIR/u1-create.json"
out=$(WH_AS_NS=u1 wh_as alice create -f "$CTL_DIR/u1-create.json" 2>&1)
if [ -n "$(kc -n u1 get statefulset etcd-main -o name 2>/dev/null)" ] && ! claim_mounted u1; then
    echo "HOLE: U1: StatefulSet u1/etcd-main created again over its 3 running members ($(kc -n u1 get pods -o name | tr '\n' ' ')) with container etcd mounting an emptyDir at /var/etcd/data instead of the members' claims: the adopted members roll onto it and restart without the data on their claims, what the UPDATE rule refuses"
    holes=$((holes + 1))
else echo "held: U1: $(tr '\n' ' ' <<<"$out" | head -c 400)"; fi
renamed <"$CTL_DIR/u2-sts.json" >"$CTL_DIR/u2-create.json"
out=$(WH_AS_NS=u2 wh_as alice create -f "$CTL_DIR/u2-create.json" 2>&1)
if [ -n "$(kc -n u2 get statefulset etcd-main -o name 2>/dev/null)" ] && ! old_claims_mounted u2; then
    echo "HOLE: U2: StatefulSet u2/etcd-main created again over its 3 running members with its claim template renamed data: the adopted members roll onto new, empty claims data-etcd-main-<n> while etcd-main-etcd-main-<n> hold the data"
    holes=$((holes + 1))
else echo "held: U2: $(tr '\n' ' ' <<<"$out" | head -c 400)"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a StatefulSet re-created with the members' claim unmounted"; exit 1; }
echo "attack14_recreate_unmount: ok"
