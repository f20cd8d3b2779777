#!/usr/bin/env bash
# warden-controller end to end (issue 7, test 6): components come back with their old owner
# references (a restore that does not strip them, or an old manifest applied again). Without
# help, kube-sim's garbage collector would delete them (their owner's UID is gone);
# warden-webhook drops the stale references on CREATE, the owner-reference repair then adds
# the live Etcd's, and foreign owners are kept. PVCs are left alone.
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
refs() { jp shoot "$1" '{range .metadata.ownerReferences[*]}{.kind}/{.name}/{.uid}/{.controller}{" "}{end}'; }
count() { kc -n shoot get sa,role,rolebinding,svc,cm,pdb,sts,lease -o name -l app.kubernetes.io/part-of=etcd-main | wc -l; }

ctl_stage
druid_etcd shoot etcd-main
ctl_start
ksim_wait 20 kc -n shoot get etcdstatusbackup etcd-main >/dev/null || ctl_fail "no status backup"
old_uid=$(jp shoot etcd/etcd-main '{.metadata.uid}')
inventory=$(druid_component_names etcd-main 3)
n=$(wc -l <<<"$inventory")

# A ConfigMap that will be a foreign owner of one restored component.
kc -n shoot create configmap keeper >/dev/null
keeper_uid=$(jp shoot cm/keeper '{.metadata.uid}')

# ---- export keeping the owner references (only what the API server sets is dropped)
mkdir -p "$CTL_DIR/backup"
strip() { grep -vE '^  (uid|resourceVersion|creationTimestamp|generation):' | awk '/^status:/ { s = 1; next } /^[^ ]/ { s = 0 } !s'; }
kc -n shoot get etcd etcd-main -o yaml | strip >"$CTL_DIR/backup/etcd.yaml"
while IFS=/ read -r kind name; do
    kc -n shoot get "$kind" "$name" -o yaml | strip |
        awk '/^  clusterIPs?:/ && !/None/ { ip = 1; next } ip && /^  - / { next } { ip = 0; print }' \
            >"$CTL_DIR/backup/$kind.$name.yaml"
done <<<"$inventory"
[ "$(grep -l "uid: $old_uid" "$CTL_DIR"/backup/*.*.yaml | wc -l)" = "$n" ] ||
    ctl_fail "the export lost owner references"
# The ConfigMap also has a foreign owner in the manifest that comes back.
sed -i "s|^  ownerReferences:\$|&\n  - {apiVersion: v1, kind: ConfigMap, name: keeper, uid: $keeper_uid}|" \
    "$CTL_DIR/backup/ConfigMap.etcd-main-config.yaml"
grep -q "name: keeper" "$CTL_DIR/backup/ConfigMap.etcd-main-config.yaml" || ctl_fail "no foreign owner added"
ok "exported $n components with owner references to $old_uid"

kc -n shoot delete etcd etcd-main >/dev/null
none_left() { [ "$(count)" = 0 ]; }
ksim_wait 20 none_left || ctl_fail "components left after the delete: $(count)"
ok "Etcd deleted, the garbage collector took the components"

# ---- the Etcd comes back (restoring), then the components with their stale references
kc create -f "$CTL_DIR/backup/etcd.yaml" >/dev/null
new_uid=$(jp shoot etcd/etcd-main '{.metadata.uid}')
while IFS=/ read -r kind name; do
    kc create -f "$CTL_DIR/backup/$kind.$name.yaml" >/dev/null || ctl_fail "cannot re-create $kind/$name"
done <<<"$inventory"
stale=$(while IFS=/ read -r kind name; do refs "$kind/$name"; done <<<"$inventory" | grep -c "$old_uid" || true)
expect "warden-webhook dropped every stale reference on CREATE" 0 "$stale"
expect "the foreign owner kept" "ConfigMap/keeper/$keeper_uid/" "$(refs cm/etcd-main-config | xargs)"
sleep 1.5 # several garbage-collector passes (200 ms)
expect "every component survived the garbage collector" "$n" "$(count)"

# The status backup was deleted with the Etcd: re-create it as the restore would, with
# its stale owner reference too, while the controller is stopped (so only the webhook can
# keep the garbage collector from taking it).
ctl_stop
kc -n shoot create -f - >/dev/null <<EOF
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdStatusBackup
metadata:
  name: etcd-main
  namespace: shoot
  ownerReferences:
  - {apiVersion: druid.gardener.cloud/v1alpha1, kind: Etcd, name: etcd-main, uid: $old_uid, controller: true, blockOwnerDeletion: true}
spec:
  statusBackup: {ready: true, replicas: 3}
  components: [$(while IFS=/ read -r kind name; do printf '{kind: %s, name: "%s"}, ' "$kind" "$name"; done <<<"$inventory")]
EOF
case "$(refs etcdstatusbackup/etcd-main)" in
*"$old_uid"*) ctl_fail "the status backup kept its stale owner reference" ;;
esac
sleep 1.5 # several garbage-collector passes
kc -n shoot get etcdstatusbackup etcd-main >/dev/null 2>&1 ||
    ctl_fail "the garbage collector deleted the restored status backup"
ok "warden-webhook dropped the status backup's stale reference on CREATE; it survived the collector"
ctl_start
resumed() { [ -z "$(jp shoot etcd/etcd-main '{.metadata.labels.etcd-warden\.io/restoring}')" ]; }
ksim_wait 20 resumed ||
    ctl_fail "the restore did not finish: $(jp shoot etcd/etcd-main '{.metadata.annotations}')"
ok "restore finished"

# ---- the repair: one controller reference to the live Etcd, foreign owners kept
check() {
    local kind name want
    while IFS=/ read -r kind name; do
        want="Etcd/etcd-main/$new_uid/true"
        [ "$kind/$name" != ConfigMap/etcd-main-config ] || want="ConfigMap/keeper/$keeper_uid/ $want"
        [ "$(refs "$kind/$name" | xargs -n1 | sort | xargs)" = "$(xargs -n1 <<<"$want" | sort | xargs)" ] || return 1
    done <<<"$inventory"
}
ksim_wait 20 check || {
    while IFS=/ read -r kind name; do echo "$kind/$name: $(refs "$kind/$name")" >&2; done <<<"$inventory"
    ctl_fail "owner references not repaired"
}
ok "every component has one controller reference to $new_uid; the foreign owner kept as it was"
sleep 1
expect "still every component" "$n" "$(count)"

# ---- an old manifest applied to the live Etcd: the same protection, without a restore
kc_druid -n shoot create -f - >/dev/null <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: etcd-main-old
  labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}
  ownerReferences: [{apiVersion: druid.gardener.cloud/v1alpha1, kind: Etcd, name: etcd-main, uid: $old_uid, controller: true, blockOwnerDeletion: true}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: etcd-main-etcd-main-0
  labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}
EOF
old_owned() { [ "$(refs cm/etcd-main-old | xargs)" = "Etcd/etcd-main/$new_uid/true" ]; }
ksim_wait 20 old_owned ||
    ctl_fail "old manifest: owner references $(refs cm/etcd-main-old)"
ok "a ConfigMap applied with the old UID is kept and owned by the live Etcd"
sleep 1
expect "the PVC has no owner reference (deleting an Etcd must not delete its data)" "" \
    "$(refs pvc/etcd-main-etcd-main-0)"
ctl_stop
echo "PASS"
