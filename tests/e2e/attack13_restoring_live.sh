#!/usr/bin/env bash
# A namespace editor puts a live Etcd into the restore flow, on kube-sim with warden-webhook
# (registered as ctl_stage registers it), warden-controller and backup-double. Issue 30: "State
# the guard reads is etcd-warden's alone". docs/toggles.md: `etcd-warden.io/restoring` is the
# mark of an Etcd re-created from a backup (the mutating webhook adds it on that CREATE);
# "One UPDATE is anyone's who may update the Etcd: status-backup-exists set to false on an Etcd
# labelled etcd-warden.io/restoring". An UPDATE that adds the label to a live Etcd was admitted
# for anyone: warden-controller then runs only the restore steps on it (hibernation, the status
# backup and the scheduled backups stop until the restore ends), writes the EtcdStatusBackup's
# copy over the live Etcd's status, and refuses Gardener's spec changes meanwhile; and the
# toggle then lets the editor declare that no status backup exists for an Etcd whose status
# etcd-warden backs up.
#   R1. Etcd etcd-main (a store, writes acknowledged, its EtcdStatusBackup written by
#       warden-controller): alice (an editor) labels it etcd-warden.io/restoring, then
#       annotates it etcd-warden.io/status-backup-exists=false.
#   R0. control: an Etcd re-created from its manifest with status-backup-exists (the restore
#       path): the webhook marks it restoring; alice's status-backup-exists=false on it is
#       admitted, and the restore goes on without a status backup (to the components).
# Oracle: what kube-sim stores (the label and the annotation on the live Etcd) and the
# controller's events (a restore on an Etcd that was never re-created).
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
restoring() { kc -n "$1" get etcd "$2" -o jsonpath='{.metadata.labels.etcd-warden\.io/restoring}{"|"}{.metadata.labels}' | grep -q 'etcd-warden.io/restoring'; }
druid_etcd r1 etcd-main
druid_double_for r1 etcd-main
curl -sf -X POST "$DRUID_DOUBLE_URL/admin/write?n=5" >/dev/null || ctl_fail "the double takes no writes"
ctl_start
backed_up() { [ "$(kc -n r1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/status-backup-exists}')" = true ] &&
    kc -n r1 get etcdstatusbackup etcd-main >/dev/null 2>&1; }
ksim_wait 30 backed_up || ctl_fail "warden-controller did not back up etcd-main's status"
ok "R1: live Etcd r1/etcd-main, its status backed up (status-backup-exists=true)"
wh_caught_up

holes=0
ctl_stop # what alice leaves, before warden-controller acts on it
out=$(WH_AS_NS=r1 wh_as alice label etcd etcd-main etcd-warden.io/restoring= 2>&1)
if restoring r1 etcd-main; then
    out2=$(WH_AS_NS=r1 wh_as alice annotate --overwrite etcd etcd-main etcd-warden.io/status-backup-exists=false 2>&1)
    flipped=$(kc -n r1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/status-backup-exists}')
    ctl_start
    ev() { ctl_events r1 etcd-main | grep -q 'RestoreCompleted'; }
    ksim_wait 15 ev # what warden-controller makes of it (shown, not judged)
    echo "HOLE: R1: alice (an editor) put live Etcd r1/etcd-main into the restore flow (label etcd-warden.io/restoring added: $(tr '\n' ' ' <<<"$out" | head -c 120)); status-backup-exists then: $flipped ($(tr '\n' ' ' <<<"$out2" | head -c 120)); warden-controller's events: $(ctl_events r1 etcd-main | grep -E 'Restore|Status' | tr '\n' ';' | head -c 400)"
    holes=$((holes + 1))
    ctl_stop
else
    grep -q "etcd-warden.io/restoring" <<<"$out" || ctl_fail "R1: refused for another reason: $out"
    ok "R1: alice's restoring label on a live Etcd refused: $(tr '\n' ' ' <<<"$out" | head -c 300)"
    out2=$(WH_AS_NS=r1 wh_as alice annotate --overwrite etcd etcd-main etcd-warden.io/status-backup-exists=false 2>&1) &&
        ctl_fail "R1: status-backup-exists=false admitted on a live Etcd: $out2"
    ok "R1: status-backup-exists=false on the live Etcd refused"
fi

# R0: the restore path. The Etcd's manifest saved, the Etcd and its status backup deleted, the
# manifest (with status-backup-exists, as Velero restores it) created again
kc -n r1 get etcd etcd-main -o json | jq 'del(.metadata.uid, .metadata.resourceVersion,
    .metadata.creationTimestamp, .metadata.generation, .metadata.managedFields, .status,
    .metadata.labels["etcd-warden.io/restoring"])
    | .metadata.annotations = {"etcd-warden.io/status-backup-exists": "true"}' >"$CTL_DIR/etcd.json"
kc -n r1 delete etcdstatusbackup etcd-main --ignore-not-found >/dev/null
kc -n r1 label etcd etcd-main etcd-warden.io/restoring- >/dev/null 2>&1
kc -n r1 label etcd etcd-main etcd-warden.io/allow-delete-while-restoring= >/dev/null 2>&1
kc -n r1 delete etcd etcd-main --wait=false >/dev/null || ctl_fail "R0: cannot delete etcd-main"
ksim_wait 15 bash -c "! kubectl --kubeconfig '$KUBECONFIG' -n r1 get etcd etcd-main >/dev/null 2>&1" ||
    ctl_fail "R0: etcd-main was not deleted"
kc -n r1 create -f "$CTL_DIR/etcd.json" >/dev/null || ctl_fail "R0: cannot create etcd-main again"
restoring r1 etcd-main || ctl_fail "R0: the re-created Etcd is not marked restoring"
wh_caught_up
out0=$(WH_AS_NS=r1 wh_as alice annotate --overwrite etcd etcd-main etcd-warden.io/status-backup-exists=false 2>&1) ||
    ctl_fail "control: R0: alice's status-backup-exists=false on a restoring Etcd refused: $out0"
ok "control: R0: status-backup-exists=false on the re-created (restoring) Etcd admitted"
ctl_start
progress() { kc -n r1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/restore-progress}'; }
# Either the progress says so while components are awaited, or (every component there at the
# first pass) the restore ended in that pass: the label gone, StatusRecoveryImpossible recorded.
went_on() {
    { progress | grep -q '"awaitingStatus":false' && progress | grep -q 'status recovery is not possible'; } ||
        { ! restoring r1 etcd-main && ctl_events r1 etcd-main | grep -q 'StatusRecoveryImpossible'; }
}
ksim_wait 30 went_on || ctl_fail "control: R0: the restore did not go on without a status backup: $(progress)"
ok "control: R0: the restore went on without a status backup: $(progress | head -c 200)$(ctl_events r1 etcd-main | grep -E 'StatusRecovery|RestoreCompleted' | tr '\n' ';' | head -c 200)"
if [ "$holes" != 0 ]; then
    echo "FAIL: $holes hole(s): a namespace editor marks a live Etcd restoring and declares its status backup missing"
    exit 1
fi
echo "attack13_restoring_live: ok"
