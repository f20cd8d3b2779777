#!/usr/bin/env bash
# warden-controller end to end (issue 7, test 5): a restore as Velero does it. The Etcd, its
# EtcdStatusBackup and its components are exported; everything is deleted (the garbage
# collector takes the components); the Etcd is re-created from its YAML with what Velero's
# resetMetadata and resetStatus strip removed (uid, resourceVersion, creationTimestamp,
# generation, ownerReferences, managedFields, status; Services lose their clusterIP) and
# Velero's restore labels added -> warden-webhook adds the restoring label, spec edits and
# deletes are refused with its message; then the rest comes back in Velero's order
# (roles, serviceaccounts, rolebindings, configmaps, services, then by resource.group:
# etcdstatusbackups, leases, poddisruptionbudgets, statefulsets) -> the restore progress
# moves from awaitingStatus to awaitingResources to done, the label goes, the status is
# the one backed up, and every owner reference points at the new UID. A restoring label removed
# by hand mid-restore leaves nothing of etcd-warden's behind (suspension, progress).
set -euo pipefail
. "$(dirname "$0")/../lib/controller.sh"
progress() { jp shoot etcd/etcd-main '{.metadata.annotations.etcd-warden\.io/restore-progress}'; }
await_progress() { # grep pattern, what
    ksim_wait 20 bash -c "kubectl --kubeconfig '$KUBECONFIG' -n shoot get etcd etcd-main \
        -o jsonpath='{.metadata.annotations.etcd-warden\.io/restore-progress}' | grep -q '$1'" ||
        ctl_fail "$2: restore progress is \"$(progress)\""
    ok "$2: $(progress)"
}

# Velero's resetMetadata + resetStatus (+ its Service action) on one object's YAML, and its
# restore labels.
velero_strip() {
    awk '
        /^status:/ { skip = 1; next }
        /^[^ ]/ { skip = 0 }
        /^  (uid|resourceVersion|creationTimestamp|generation|selfLink|deletionTimestamp|deletionGracePeriodSeconds):/ { next }
        /^  (ownerReferences|managedFields):/ { sub_skip = 1; next }
        sub_skip && /^  [^ -]/ { sub_skip = 0 }
        sub_skip && /^  [ -]/ { next }
        /^  clusterIPs?:/ && !/None/ { ip_skip = 1; next }
        ip_skip && /^  - / { next }
        { ip_skip = 0 }
        skip { next }
        { print }
        /^  labels:$/ { print "    velero.io/backup-name: nightly"; print "    velero.io/restore-name: nightly-restore" }
    '
}

ctl_stage
druid_etcd shoot etcd-main
ctl_start
backed_up() { [ "$(jp shoot etcdstatusbackup/etcd-main '{.spec.components[*].name}' 2>/dev/null | wc -w)" -ge 13 ]; }
ksim_wait 20 backed_up ||
    ctl_fail "no EtcdStatusBackup with the inventory: $(kc -n shoot get etcdstatusbackups -o yaml 2>&1 | head -40)"
expect "status-backup-exists" "true" \
    "$(jp shoot etcd/etcd-main '{.metadata.annotations.etcd-warden\.io/status-backup-exists}')"
old_uid=$(jp shoot etcd/etcd-main '{.metadata.uid}')
status_before=$(jp shoot etcd/etcd-main '{.status}')
inventory=$(jp shoot etcdstatusbackup/etcd-main '{range .spec.components[*]}{.kind}/{.name}{"\n"}{end}' | sort)
expect "inventory = the components etcd-druid built" "$(druid_component_names etcd-main 3 | sort)" "$inventory"

# ---- the backup
mkdir -p "$CTL_DIR/backup"
export_one() { # kind name
    kc -n shoot get "$1" "$2" -o yaml | velero_strip >"$CTL_DIR/backup/$1.$2.yaml"
}
export_one etcd etcd-main
export_one etcdstatusbackup etcd-main
while IFS=/ read -r kind name; do export_one "$kind" "$name"; done <<<"$inventory"
grep -q ownerReferences "$CTL_DIR"/backup/*.yaml && ctl_fail "ownerReferences left in the backup"
grep -q '^status:' "$CTL_DIR/backup/etcd.etcd-main.yaml" && ctl_fail "status left in the backup"
grep -q 'etcd-warden.io/status-backup-exists' "$CTL_DIR/backup/etcd.etcd-main.yaml" ||
    ctl_fail "the annotation did not survive the export"
ok "exported $(ls "$CTL_DIR/backup" | wc -l) objects, stripped as Velero does"

# ---- disaster: everything goes
kc -n shoot delete etcd etcd-main >/dev/null
all_gone() {
    [ -z "$(kc -n shoot get sa,role,rolebinding,svc,cm,pdb,sts,lease -o name -l app.kubernetes.io/part-of=etcd-main 2>/dev/null; kc -n shoot get etcdstatusbackups -o name)" ]
}
ksim_wait 20 all_gone ||
    ctl_fail "the garbage collector left: $(kc -n shoot get sa,role,rolebinding,svc,cm,pdb,sts,lease,etcdstatusbackups -o name)"
ok "the Etcd, its components and its status backup are gone"

# ---- restore: the Etcd first
kc create -f "$CTL_DIR/backup/etcd.etcd-main.yaml" >/dev/null
new_uid=$(jp shoot etcd/etcd-main '{.metadata.uid}')
[ "$new_uid" != "$old_uid" ] || ctl_fail "same uid after re-creation"
labels=$(jp shoot etcd/etcd-main '{.metadata.labels}')
grep -q '"etcd-warden.io/restoring":""' <<<"$labels" || ctl_fail "no restoring label: $labels"
ok "warden-webhook added the restoring label"
expect "suspend annotation added" "true" \
    "$(jp shoot etcd/etcd-main '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')"
await_progress '"awaitingStatus":true' "waiting for the status backup"

DENY='admission webhook "etcd.webhooks.etcd-warden.io" denied the request: '
out=$(kc -n shoot patch etcd etcd-main --type merge -p '{"spec":{"replicas":5}}' 2>&1) &&
    ctl_fail "spec edit allowed while restoring: $out"
grep -qF "${DENY}" <<<"$out" && grep -qF "spec changes not allowed while etcd-warden.io/restoring label exists" <<<"$out" ||
    ctl_fail "spec edit: $out"
ok "spec edit refused: $(tail -1 <<<"$out")"
out=$(kc -n shoot delete etcd etcd-main --wait=false 2>&1) && ctl_fail "delete allowed while restoring: $out"
grep -qF "delete not allowed while etcd-warden.io/restoring label exists, unless etcd-warden.io/allow-delete-while-restoring label also exists" <<<"$out" ||
    ctl_fail "delete: $out"
ok "delete refused: $(tail -1 <<<"$out")"

# ---- then the rest in Velero's order
restore_kind() { # kind: every exported object of it
    local f
    for f in "$CTL_DIR/backup/$1".*.yaml; do kc create -f "$f" >/dev/null || ctl_fail "cannot restore $f"; done
}
for kind in Role ServiceAccount RoleBinding ConfigMap Service; do restore_kind "$kind"; done
sleep 0.5
await_progress '"awaitingStatus":true' "high-priority kinds back, still waiting for the status"
restore_kind etcdstatusbackup
await_progress '"awaitingStatus":false' "status backup back"
grep -q '"awaitingResources":true' <<<"$(progress)" || ctl_fail "progress: $(progress)"
expect "status restored from the backup" "$status_before" "$(jp shoot etcd/etcd-main '{.status}')"
grep -q '"etcd-warden.io/restoring":""' <<<"$(jp shoot etcd/etcd-main '{.metadata.labels}')" ||
    ctl_fail "label gone before the components are back"
restore_kind Lease
restore_kind PodDisruptionBudget
sleep 0.5
await_progress '"awaitingResources":true' "leases and PDB back, waiting for the StatefulSet"
restore_kind StatefulSet
resumed() { [ -z "$(jp shoot etcd/etcd-main '{.metadata.labels.etcd-warden\.io/restoring}{.metadata.annotations.etcd-warden\.io/restore-progress}')" ]; }
ksim_wait 20 resumed ||
    ctl_fail "restore did not finish: labels $(jp shoot etcd/etcd-main '{.metadata.labels}'), progress $(progress)"
! jp shoot etcd/etcd-main '{.metadata.labels}' | grep -q 'etcd-warden.io/restoring' ||
    ctl_fail "restoring label left"
ok "restoring label and progress removed"
expect "suspend annotation removed" "" \
    "$(jp shoot etcd/etcd-main '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}')"

# ---- owner references point at the new UID
check_owner() { # kind name
    local refs
    refs=$(jp shoot "$1/$2" '{range .metadata.ownerReferences[*]}{.kind}/{.name}/{.uid}/{.controller}{"\n"}{end}')
    [ "$refs" = "Etcd/etcd-main/$new_uid/true" ] || return 1
}
await_owners() {
    local kind name
    while IFS=/ read -r kind name; do
        check_owner "$kind" "$name" || return 1
    done <<<"$inventory"
    check_owner etcdstatusbackup etcd-main
}
ksim_wait 20 await_owners || {
    while IFS=/ read -r kind name; do
        echo "$kind/$name: $(jp shoot "$kind/$name" '{.metadata.ownerReferences}')" >&2
    done <<<"$inventory"
    ctl_fail "owner references not repaired"
}
ok "all $(wc -l <<<"$inventory") components and the status backup owned by the new UID only"
expect "status still the backed-up one" "$status_before" "$(jp shoot etcd/etcd-main '{.status}')"
kc -n shoot patch etcd etcd-main --type merge -p '{"spec":{"etcd":{"quota":"10Gi"}}}' >/dev/null ||
    ctl_fail "spec edit refused after the restore"
ok "spec edits allowed again"
backup_owned() { [ "$(jp shoot etcdstatusbackup/etcd-main '{.metadata.ownerReferences[0].uid}')" = "$new_uid" ]; }
ksim_wait 10 backup_owned ||
    ctl_fail "status backup not owned by the new Etcd"
sleep 1
expect "the restored components survived the garbage collector" "$(wc -l <<<"$inventory")" \
    "$(kc -n shoot get sa,role,rolebinding,svc,cm,pdb,sts,lease -o name -l app.kubernetes.io/part-of=etcd-main | wc -l)"
# ---- the restoring label removed by hand (a toggle of docs/toggles.md) while the restore still
# waits for the status: etcd-warden lifts what it added (its suspension, the progress) and says
# what was skipped.
wh_restored_etcd shoot etcd-hand true "{store: {prefix: shoot--etcd-hand, container: bkt, provider: S3}}"
ksim_wait 10 wh_is_restoring shoot etcd-hand || ctl_fail "etcd-hand is not restoring"
hand_progress() { [ -n "$(jp shoot etcd/etcd-hand '{.metadata.annotations.etcd-warden\.io/restore-progress}')" ]; }
ksim_wait 20 hand_progress || ctl_fail "no restore progress on etcd-hand"
kc -n shoot label etcd etcd-hand etcd-warden.io/restoring- >/dev/null ||
    ctl_fail "the restoring label could not be removed by hand"
lifted() {
    [ -z "$(jp shoot etcd/etcd-hand '{.metadata.annotations.druid\.gardener\.cloud/suspend-etcd-spec-reconcile}{.metadata.annotations.etcd-warden\.io/suspend-added}{.metadata.annotations.etcd-warden\.io/restore-progress}')" ]
}
ksim_wait 20 lifted || ctl_fail "etcd-druid left suspended after the label was removed by hand: $(jp shoot etcd/etcd-hand '{.metadata.annotations}')"
ok "label removed by hand: suspension and progress lifted"
hand_event() { ctl_events shoot etcd-hand | grep -q '^Warning RestoreEndedByHand: the restoring label was removed by hand before the restore finished'; }
ksim_wait 10 hand_event || ctl_fail "no RestoreEndedByHand event: $(ctl_events shoot etcd-hand)"
ok "label removed by hand: Warning event RestoreEndedByHand"
ctl_stop
echo "PASS"
