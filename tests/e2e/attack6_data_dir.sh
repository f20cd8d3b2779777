#!/usr/bin/env bash
# The members' data directory taken off their claims by a pod template the unmount rule does not
# see, against the webhook registered as the chart registers it. Issue 30: a member's volume is
# never deleted or detached while it runs, whoever asks, break glass aside; the guard binds a
# tenant of an Etcd with component protection disabled too. The fifth attack closed an UPDATE
# after which a container no longer mounts the claim at /var/etcd/data as it did. etcd-druid's
# etcd keeps its data in /var/etcd/data/new.etcd (--data-dir, etcd-druid's
# statefulset/builder.go and configmap/etcdconfig.go), and a StatefulSet re-created after an
# orphaning DELETE adopts the running pods and rolls them onto its own template:
#   D1. protection disabled: alice's JSON patch of StatefulSet etcd-a (3 replicas) keeps the
#       claim mounted at /var/etcd/data in both containers and adds an emptyDir mounted at
#       /var/etcd/data/new.etcd: etcd's data directory is the emptyDir, the claim's data
#       under it is out of sight (as the fifth attack's subPath swap).
#   D2. protection disabled: alice orphan-deletes StatefulSet etcd-b, then creates it again (3
#       replicas, ordinals from 0: it adopts pods etcd-b-0..2) with an emptyDir at
#       /var/etcd/data in both containers (the UPDATE the fifth attack closed, as a CREATE).
#   D3. protection disabled: alice orphan-deletes StatefulSet etcd-c, then creates it again
#       with its volumeClaimTemplate renamed "data" (mounted at /var/etcd/data): it adopts
#       pods etcd-c-0..2, which mount etcd-c-etcd-c-<n>, and rolls them onto new, empty claims
#       data-etcd-c-<n>.
# Each rolls every member onto an empty data directory: the members' data stays on claims
# nothing reads, and a restart of all of them comes back with what the store held (the writes
# since the last snapshot lost). Oracle: what kube-sim stores: the StatefulSet at 3 replicas
# whose etcd container would not find, at /var/etcd/data/new.etcd, the claim its running pods
# mount (the pods etcd-X-<n> as stored). Fails (HOLE) while the hole exists.
set -uo pipefail
. "$(dirname "$0")/../lib/druid.sh"
command -v kubectl >/dev/null || { echo "FAIL: kubectl is not installed"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is not installed"; exit 1; }

druid_stage
wh_start $(druid_webhook_flags) --webhook-server-tls-server-cert-dir "$WH_DIR/certs"
wh_register_guard || wh_fail "cannot register the webhooks"

mounts='[{"name":"%s","mountPath":"/var/etcd/data"}]'
# container backup-restore keeps etcd's configuration mounted as etcd-druid mounts it
brmounts='[{"name":"%s","mountPath":"/var/etcd/data"},{"name":"etcd-config-file","mountPath":"/var/etcd/config/"}]'
for e in etcd-a etcd-b etcd-c; do
    druid_etcd shoot $e
    m=$(printf "$mounts" $e) # the data mounts as etcd-druid builds them
    kc_druid -n shoot patch statefulset $e --type json -p "[
      {\"op\":\"add\",\"path\":\"/spec/template/spec/containers/0/volumeMounts\",\"value\":$m},
      {\"op\":\"add\",\"path\":\"/spec/template/spec/containers/1/volumeMounts\",\"value\":$(printf "$brmounts" $e)}]" >/dev/null ||
        wh_fail "etcd-druid cannot mount the data volume of $e"
    wh_as alice annotate etcd $e druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        wh_fail "alice cannot disable protection of $e"
done
wh_caught_up # the caches see the objects

holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }
held() { echo "held: $*"; }
# "<replicas> <claim>": the claim (for member 0) that container etcd of StatefulSet E, as
# stored, has at /var/etcd/data/new.etcd (its deepest mount on that path), "-" for none
etcd_data() {
    kc -n shoot get statefulset "$1" -o json 2>/dev/null | jq -r '
        . as $s | [.spec.volumeClaimTemplates[]?.metadata.name] as $vct |
        ([.spec.template.spec.containers[] | select(.name == "etcd") | .volumeMounts[]? |
          select(.mountPath as $p | "/var/etcd/data/new.etcd" | startswith($p)) |
          select((.subPath // "") == "")] | max_by(.mountPath | length)) as $m |
        "\($s.spec.replicas) " +
        (if $m != null and ($vct | index($m.name)) != null then "\($m.name)-\($s.metadata.name)-0" else "-" end)'
}
# the claim pod E-0 mounts, as stored
pod_claim() {
    kc -n shoot get pod "$1-0" -o jsonpath='{.spec.volumes[?(@.persistentVolumeClaim)].persistentVolumeClaim.claimName}'
}
judge() { # CASE E WHAT OUT
    local got want
    got=$(etcd_data "$2") want="3 $(pod_claim "$2")"
    [ "$want" = "3 $2-$2-0" ] || wh_fail "$1: pod $2-0 mounts \"$want\""
    if [ "${got%% *}" = 3 ] && [ "$got" != "$want" ]; then
        hole "$1: $3: StatefulSet $2 stored at 3 replicas with etcd's data directory on \"${got#* }\" while its running pod $2-0 holds its data on $2-$2-0 (no snapshot, no break glass)"
    else held "$1: refused (stored: \"$got\"): $(tr '\n' ' ' <<<"$4" | head -c 400)"; fi
}
recreate() { # E JQ-FILTER: orphan-delete StatefulSet E as alice and create it again, changed
    local obj
    obj=$(kc -n shoot get statefulset "$1" -o json | jq -c "del(.status, .metadata.uid,
        .metadata.resourceVersion, .metadata.creationTimestamp, .metadata.generation,
        .metadata.managedFields) | $2") || wh_fail "cannot read StatefulSet $1"
    wh_await_admitted 10 "alice's orphaning delete of StatefulSet $1 refused" \
        wh_as alice delete statefulset "$1" --cascade=orphan
    wh_as alice delete statefulset "$1" --cascade=orphan --wait=false >/dev/null 2>&1 ||
        wh_fail "alice's orphaning delete of StatefulSet $1 refused"
    ksim_wait 10 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n shoot get statefulset $1 >/dev/null 2>&1" ||
        wh_fail "StatefulSet $1 is still stored"
    kc -n shoot get pod "$1-0" >/dev/null 2>&1 || wh_fail "the pods of $1 did not survive the orphaning delete"
    wh_caught_up # the caches see it gone
    wh_as alice create -f - <<<"$obj" 2>&1
}
[ "$(etcd_data etcd-a)" = "3 etcd-a-etcd-a-0" ] || wh_fail "etcd-a does not keep its data on its claim: $(etcd_data etcd-a)"

# ---- control: the fifth attack's fix (the claim's mount swapped for an emptyDir by an UPDATE)
out=$(wh_as alice patch statefulset etcd-b --type json -p '[
  {"op":"add","path":"/spec/template/spec/volumes","value":[{"name":"scratch","emptyDir":{}}]},
  {"op":"replace","path":"/spec/template/spec/containers/0/volumeMounts/0/name","value":"scratch"}]' 2>&1)
[ "$(etcd_data etcd-b)" = "3 etcd-b-etcd-b-0" ] || wh_fail "control: the fifth attack's emptyDir swap is admitted: $out"
echo "ok: control: an UPDATE swapping the claim's mount for an emptyDir is refused"

# ---- D1: an emptyDir over the data directory, the claim's mount kept
out=$(wh_as alice patch statefulset etcd-a --type json -p '[
  {"op":"add","path":"/spec/template/spec/volumes","value":[{"name":"scratch","emptyDir":{}}]},
  {"op":"add","path":"/spec/template/spec/containers/0/volumeMounts/-","value":{"name":"scratch","mountPath":"/var/etcd/data/new.etcd"}},
  {"op":"add","path":"/spec/template/spec/containers/1/volumeMounts/-","value":{"name":"scratch","mountPath":"/var/etcd/data/new.etcd"}}]' 2>&1)
judge D1 etcd-a "alice (protection disabled) mounted an emptyDir at /var/etcd/data/new.etcd over the claim" "$out"

# ---- D2: re-created with an emptyDir at /var/etcd/data
out=$(recreate etcd-b '.spec.template.spec.volumes = [{"name":"scratch","emptyDir":{}}] |
    .spec.template.spec.containers |= map(.volumeMounts = [{"name":"scratch","mountPath":"/var/etcd/data"}])')
judge D2 etcd-b "alice (protection disabled) orphan-deleted it and created it again with an emptyDir at /var/etcd/data (it adopts the running pods and rolls them onto it)" "$out"

# ---- D3: re-created with its volumeClaimTemplate renamed
out=$(recreate etcd-c '.spec.volumeClaimTemplates[0].metadata.name = "data" |
    .spec.template.spec.containers |= map(.volumeMounts = [{"name":"data","mountPath":"/var/etcd/data"}])')
judge D3 etcd-c "alice (protection disabled) orphan-deleted it and created it again with its volumeClaimTemplate renamed \"data\" (it adopts the running pods and rolls them onto new, empty claims data-etcd-c-<n>)" "$out"

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): the members' data directory taken off their claims without a final snapshot"; exit 1; }
echo "attack6_data_dir: ok"
