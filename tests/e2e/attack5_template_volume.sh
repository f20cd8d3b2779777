#!/usr/bin/env bash
# A running member's volume detached by an UPDATE of the StatefulSet's pod template, against the
# webhook registered as the chart registers it. Issue 30: a member's volume is never deleted or
# detached while it runs, whoever asks, break glass aside; the guard binds a tenant of an Etcd
# with component protection disabled too. A StatefulSet's volumeClaimTemplates cannot change,
# its pod template can: etcd-druid mounts the claim (named as the volumeClaimTemplate) at
# /var/etcd/data in containers etcd and backup-restore. A template that mounts an emptyDir
# there instead rolls every member, one by one, onto an empty data directory: the member's
# data stays on a claim nothing mounts, and a restart of all of them (or a single-member Etcd)
# comes back with what the store held, the writes since the last snapshot lost.
#   T1. protection disabled: a tenant's JSON patch adds volume "scratch" (emptyDir) and points
#       both containers' /var/etcd/data mounts at it, StatefulSet at 3 replicas.
#   T2. protection disabled: a tenant's JSON patch removes the data mounts altogether (the
#       containers write into their own filesystem).
#   T3. protection disabled: a tenant's JSON patch mounts a new, empty subPath of the claim at
#       /var/etcd/data (the data stays on the claim, out of the members' sight).
# Oracle: the StatefulSet kube-sim stores (spec.replicas 3, no container mounting its
# volumeClaimTemplate's volume, whole, at /var/etcd/data). Fails (HOLE) while the hole exists.
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
    # the data mounts as etcd-druid builds them (VolumeMountPathEtcdData, the claim's name)
    m=$(printf "$mounts" $e)
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
# the containers of StatefulSet E that mount its claim at /var/etcd/data, with spec.replicas
data_mounted() {
    kc -n shoot get statefulset "$1" -o json | jq -r '
        .spec.volumeClaimTemplates[0].metadata.name as $claim |
        "\(.spec.replicas) " + ([.spec.template.spec.containers[] |
            select(any(.volumeMounts[]?; .name == $claim and .mountPath == "/var/etcd/data" and
                (.subPath // "") == "")) |
            .name] | join(","))'
}
[ "$(data_mounted etcd-a)" = "3 etcd,backup-restore" ] || wh_fail "etcd-a does not mount its data: $(data_mounted etcd-a)"

# ---- T1: the data mounts moved to an emptyDir
out=$(wh_as alice patch statefulset etcd-a --type json -p '[
  {"op":"add","path":"/spec/template/spec/volumes","value":[{"name":"scratch","emptyDir":{}}]},
  {"op":"replace","path":"/spec/template/spec/containers/0/volumeMounts/0/name","value":"scratch"},
  {"op":"replace","path":"/spec/template/spec/containers/1/volumeMounts/0/name","value":"scratch"}]' 2>&1)
got=$(data_mounted etcd-a)
if [ "$got" = "3 " ]; then
    hole "T1: alice (protection disabled) moved /var/etcd/data of StatefulSet etcd-a (3 replicas) to an emptyDir: its members roll onto empty data directories, no snapshot, no break glass"
else held "T1: the emptyDir swap refused (stored: \"$got\"): $out"; fi

# ---- T2: the data mounts removed
out=$(wh_as alice patch statefulset etcd-b --type json -p '[
  {"op":"remove","path":"/spec/template/spec/containers/0/volumeMounts"},
  {"op":"remove","path":"/spec/template/spec/containers/1/volumeMounts"}]' 2>&1)
got=$(data_mounted etcd-b)
if [ "$got" = "3 " ]; then
    hole "T2: alice (protection disabled) removed the data mounts of StatefulSet etcd-b (3 replicas): its members roll onto their containers' own filesystems, no snapshot, no break glass"
else held "T2: the removal of the data mounts refused (stored: \"$got\"): $out"; fi

# ---- T3: a new, empty subPath of the claim
out=$(wh_as alice patch statefulset etcd-c --type json -p '[
  {"op":"add","path":"/spec/template/spec/containers/0/volumeMounts/0/subPath","value":"fresh"},
  {"op":"add","path":"/spec/template/spec/containers/1/volumeMounts/0/subPath","value":"fresh"}]' 2>&1)
got=$(data_mounted etcd-c)
if [ "$got" = "3 " ]; then
    hole "T3: alice (protection disabled) mounted an empty subPath of the claim at /var/etcd/data of StatefulSet etcd-c (3 replicas): its members roll onto empty data directories, no snapshot, no break glass"
else held "T3: the subPath swap refused (stored: \"$got\"): $out"; fi

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a running member's volume detached without a final snapshot"; exit 1; }
echo "attack5_template_volume: ok"
