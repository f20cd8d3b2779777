#!/usr/bin/env bash
# The docs' own advice refused: two commands the user docs tell an operator to run write a
# state annotation, which the webhook refuses to anyone but warden-controller (docs/toggles.md
# "State annotations": "Anyone else (an admin included) is refused"). On kube-sim with
# warden-webhook (registered as ctl_stage registers it) and warden-controller. Issue 30 ("a
# legitimate user ... wrongly refused").
#   D1. docs/troubleshooting.md (RestoreAwaitingStatus) and docs/status-backup-and-restore.md:
#       a restored Etcd waits for its EtcdStatusBackup; "when status backups were not enabled,
#       kubectl annotate etcd NAME etcd-warden.io/status-backup-exists=false --overwrite and
#       the restore goes on with the StatefulSet alone". The admin runs it on an Etcd
#       re-created from a backup (its status-backup-exists came along, no EtcdStatusBackup).
#   D2. docs/upgrade-and-uninstall.md ("Upgrading with Etcds asleep"): an Etcd hibernated by an
#       earlier version carries the suspension without the record: "add the record before
#       waking it (kubectl annotate etcd NAME etcd-warden.io/suspend-added=true)". The admin
#       runs it on an Etcd carrying druid.gardener.cloud/suspend-etcd-spec-reconcile. (Now the
#       docs say to remove the suspension: that is admitted, and suspend-added stays
#       warden-controller's.)
#   D0. control: the admin's toggles on the same Etcds (hibernate=true) are admitted.
# Oracle: what kube-sim stores: the annotation the docs' command sets is absent after the
# command.
set -uo pipefail
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ctl_stage
ann() { kc -n "$1" get etcd etcd-main -o json | jq -r --arg k "$2" '.metadata.annotations[$k] // empty'; }
holes=0
hole() { echo "HOLE: $*"; holes=$((holes + 1)); }

# D1: an Etcd re-created from a backup of the cluster's objects (status-backup-exists kept on
# CREATE), with no EtcdStatusBackup (status backups were not enabled)
druid_etcd d1 etcd-main
kc -n d1 get etcd etcd-main -o json | jq 'del(.metadata.uid, .metadata.resourceVersion,
    .metadata.creationTimestamp, .metadata.managedFields, .metadata.generation, .status)
    | .metadata.annotations["etcd-warden.io/status-backup-exists"] = "true"' >"$CTL_DIR/d1.json"
ctl_start
ksim_wait 15 test -n "$(ann d1 etcd-warden.io/status-backup-exists)" ||
    ctl_fail "D1: warden-controller wrote no status-backup-exists on d1/etcd-main"
kc -n d1 delete etcd etcd-main --wait=true >/dev/null 2>&1 || true
ksim_wait 20 ksim_gone -n d1 etcd etcd-main || ctl_fail "D1: the Etcd is not gone"
ctl_stop
out=$(kc -n d1 create -f "$CTL_DIR/d1.json" 2>&1) || ctl_fail "D1: the re-creation from the backup refused: $out"
restoring() { kc -n d1 get etcd etcd-main -o jsonpath='{.metadata.labels}' | grep -q 'etcd-warden.io/restoring'; }
restoring || ctl_fail "D1: the re-created Etcd is not labelled restoring: $(kc -n d1 get etcd etcd-main -o jsonpath='{.metadata.labels}')"
echo "ok: D1: d1/etcd-main re-created from a backup, labelled restoring"
out=$(kc -n d1 annotate etcd etcd-main etcd-warden.io/status-backup-exists=false --overwrite 2>&1)
if [ "$(ann d1 etcd-warden.io/status-backup-exists)" != false ]; then
    hole "D1: the command docs/troubleshooting.md gives for RestoreAwaitingStatus is refused to the admin: $(tr '\n' ' ' <<<"$out" | head -c 300)"
else
    echo "held: D1: the admin's status-backup-exists=false is admitted"
fi

# D2: an Etcd hibernated by an earlier version: suspended, no record
druid_etcd d2 etcd-main
kc -n d2 annotate etcd etcd-main druid.gardener.cloud/suspend-etcd-spec-reconcile=true >/dev/null ||
    ctl_fail "D2: the admin cannot suspend d2/etcd-main"
# the docs' way (docs/upgrade-and-uninstall.md): the operator removes the suspension herself;
# the record stays warden-controller's (refused to her, as docs/toggles.md says)
out=$(kc -n d2 annotate etcd etcd-main etcd-warden.io/suspend-added=true 2>&1) &&
    hole "D2: an admin's suspend-added=true is admitted: the record is warden-controller's"
out=$(kc -n d2 annotate etcd etcd-main druid.gardener.cloud/suspend-etcd-spec-reconcile- 2>&1)
if [ -n "$(ann d2 druid.gardener.cloud/suspend-etcd-spec-reconcile)" ]; then
    hole "D2: the command docs/upgrade-and-uninstall.md gives (remove the suspension) is refused to the admin: $(tr '\n' ' ' <<<"$out" | head -c 300)"
else
    echo "held: D2: the admin removes the suspension as the docs say; her suspend-added is refused"
fi
grep -q 'etcd-warden.io/suspend-added=true' "$(dirname "$0")/../../docs/upgrade-and-uninstall.md" &&
    hole "D2: docs/upgrade-and-uninstall.md still tells the admin to set suspend-added"

# D0: control
for ns in d1 d2; do
    out=$(kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true 2>&1) ||
        ctl_fail "control: D0: the admin's hibernate=true on $ns refused: $out"
done
echo "ok: control: D0: the admin's toggle hibernate=true admitted on both Etcds"
if [ "$holes" -gt 0 ]; then
    echo "FAIL: $holes hole(s): the user docs' own commands write state annotations the webhook refuses to everyone but warden-controller"
    exit 1
fi
echo "attack13_doc_state_advice: ok"
