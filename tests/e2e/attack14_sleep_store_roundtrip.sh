#!/usr/bin/env bash
# A hibernated Etcd's member claims freed after its final snapshot was deleted by etcd-warden's
# own BackupEntry, on kube-sim with warden-webhook, warden-controller, backup-double, s3rver and
# the deletion Jobs run (job_exec). Issue 30: no member PVC of an Etcd is deleted "while a write
# acknowledged before it is missing from the final snapshot". docs/toggles.md (State
# annotations): "a hibernated Etcd's member claims may go only while [final-snapshot-store]
# equals the stamp made afresh of the store the Etcd names". docs/backup-entries.md: "An Etcd
# that moves to another prefix leaves its old entry pending and gets the new prefix's entry";
# past the grace period the old entry's Job deletes what the Etcd wrote there, its final
# snapshot included. The stamp names a place, not what the place holds: once the old entry is
# gone, moving back (a revert of the backup configuration, a re-applied manifest) makes the
# stamp equal again over an empty prefix.
#   R1. Etcd r1/etcd-main (bucket etcd-bucket, grace 1h), members seen running, its final
#       snapshot uploaded under r1--etcd-main, hibernated (warden-controller: cut, final
#       snapshot, scaled to 0). alice (namespace edit rights) moves spec.backup.store.prefix to
#       moved/r1-etcd-main; the old entry is pending, the operator shortens the bucket's grace
#       period, the entry's Job empties r1--etcd-main. alice moves the prefix back, disables
#       protection and deletes the three member claims.
#   R0. control: r0/etcd-main, the same without the moves: its claims go (the final snapshot is
#       in the store the Etcd names); and in r1, while the store is moved away, they do not.
# After the fix: while r1 sleeps (its final-snapshot stamp exists) its entries are not deleted:
# the old entry's Job is held, and the move back finds the final snapshot where it was.
# Oracle: s3rver's listing (no snapshot under the prefix the Etcd names) and what kube-sim
# stores (member claims deleted). HOLE, exit 1, while the hole exists.
set -uo pipefail
export SNAP_BUCKET=etcd-bucket # druid_etcd's container
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
command -v jq >/dev/null || ksim_fail "jq is not installed"
ksim_on_exit snap_cleanups

snap_s3_start
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups" ctl_stage
ctl_s3_bucket_secret
ctl_s3_bucket 1h
ctl_jobs_serve etcd-warden 900

stored_rev() {
    curl -sf "$1/admin/requests" | grep '"code":200' | grep -o '"lastRevision":[0-9]*' |
        cut -d: -f2 | sort -n | tail -1
}
last_write() { curl -sf "$1/admin/writes" | tail -1 | grep -o '"revision":[0-9]*' | cut -d: -f2; }
prefix() { kc -n "$1" get etcd etcd-main -o jsonpath='{.spec.backup.store.prefix}'; }
gone() { # NS PVC: deleted or being deleted
    local ts
    ts=$(kc -n "$1" get pvc "$2" -o jsonpath='{.metadata.deletionTimestamp}' 2>/dev/null) || return 0
    [ -n "$ts" ]
}
move() { # NS PREFIX: alice edits the store's prefix
    local out
    out=$(WH_AS_NS=$1 wh_as alice patch etcd etcd-main --type merge \
        -p "{\"spec\":{\"backup\":{\"store\":{\"prefix\":\"$2\"}}}}" 2>&1) ||
        ctl_fail "$1: alice cannot move the store to $2: $out"
}

declare -A URL
for ns in r0 r1; do
    druid_etcd $ns etcd-main
    ctl_backup_secret $ns ||
        ctl_fail "cannot create the backup Secret in $ns" # an Etcd with credentials gets an entry
    for i in 0 1 2; do
        printf '%s\n' "---" "apiVersion: v1" "kind: PersistentVolumeClaim" \
            "metadata: {name: etcd-main-etcd-main-$i, labels: {app.kubernetes.io/managed-by: etcd-druid, app.kubernetes.io/part-of: etcd-main}}" \
            "spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 16Gi}}}"
    done | kc -n $ns create -f - >/dev/null || ctl_fail "cannot create the member claims of $ns"
    druid_double_for $ns etcd-main
    URL[$ns]=$DRUID_DOUBLE_URL
    curl -sf -X POST "${URL[$ns]}/admin/write?n=5" >/dev/null || ctl_fail "$ns: the double takes no writes"
done
ctl_start
for ns in r0 r1; do
    ksim_wait 30 ctl_has_entry $ns etcd-main || ctl_fail "no BackupEntry for $ns/etcd-main"
    ctl_members_seen $ns etcd-main
done
sleep 1 # the sidecar uploads after the members were seen (object times have seconds)
for ns in r0 r1; do
    kc -n $ns annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null || ctl_fail "cannot hibernate $ns"
done
snap_fixture "$SNAP_WORK/full" 4096 Full.gz
declare -A FINAL
for ns in r0 r1; do
    ctl_wait_phase $ns etcd-main Hibernated 60
    [ "$(kc -n $ns get statefulset etcd-main -o jsonpath='{.spec.replicas}')" = 0 ] || ctl_fail "$ns: Hibernated, StatefulSet not at 0"
    kc -n $ns delete pod etcd-main-0 etcd-main-1 etcd-main-2 --wait=false >/dev/null || ctl_fail "$ns: cannot delete the pods"
    w=$(last_write "${URL[$ns]}") s=$(stored_rev "${URL[$ns]}")
    [ "${s:-0}" -ge "${w:-1}" ] || ctl_fail "$ns: hibernated with write $w acknowledged and the store at ${s:-nothing}"
    # what the sidecar uploaded for that final snapshot (backup-double answers, s3rver stores)
    FINAL[$ns]=$ns--etcd-main/v2/Full-00000000-$(printf %08d "$s")-$(date +%s).gz
    snap_s3 put "${FINAL[$ns]}" "$SNAP_WORK/full" >/dev/null || ctl_fail "cannot upload ${FINAL[$ns]}"
    snap_s3 ls "$ns--etcd-main/" | grep -qF "${FINAL[$ns]}" || ctl_fail "$ns: ${FINAL[$ns]} not listed in the store"
    echo "$ns: hibernated (stamp $(kc -n $ns get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/final-snapshot-store}')), final snapshot ${FINAL[$ns]} (revision $s, write $w the last acknowledged)"
done
for ns in r0 r1; do
    WH_AS_NS=$ns wh_as alice annotate etcd etcd-main druid.gardener.cloud/disable-etcd-component-protection= >/dev/null ||
        ctl_fail "alice cannot disable protection of $ns"
done

# ---- R1: moved away; while away the claims stay (control of the stamp)
old=$(ctl_entry_of r1 etcd-main)
move r1 moved/r1-etcd-main
echo "R1: alice moved r1/etcd-main to $(prefix r1) (old entry $old)"
ksim_wait 30 ctl_entry_phase_is "$old" PendingDeletion || ctl_fail "R1: $old not pending: $(ctl_entry_phase "$old")"
wh_caught_up
out=$(WH_AS_NS=r1 wh_as alice delete pvc etcd-main-etcd-main-0 --wait=false --dry-run=server 2>&1) &&
    ctl_fail "R1: a claim of r1/etcd-main deletable while its store is moved away from the final snapshot: $out"
echo "ok: R1: while the store is moved away the claims are refused: $(tr '\n' ' ' <<<"$out" | head -c 200)"
ctl_s3_bucket 2s
# the old entry's deletion Job is held while r1 sleeps (or the entry went with its prefix, and
# the listing below says what its Job deleted)
held() { kc get backupentry "$1" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null | grep -q 'hibernated'; }
held_or_gone() { held "$1" || ksim_gone backupentry "$1"; }
ksim_wait 90 held_or_gone "$old" ||
    ctl_fail "R1: the old entry $old neither held nor deleted: $(kc get backupentry "$old" -o jsonpath='{.status}')"
left=$(snap_s3 ls r1--etcd-main/ | tr '\n' ' ')
echo "R1: old entry $old: $(kc get backupentry "$old" -o jsonpath='{.status.conditions[0].message}' 2>/dev/null || echo gone); left under r1--etcd-main/: ${left:-nothing}"
ctl_s3_bucket 1h
move r1 r1--etcd-main
echo "R1: alice moved r1/etcd-main back to $(prefix r1); stamp $(kc -n r1 get etcd etcd-main -o jsonpath='{.metadata.annotations.etcd-warden\.io/final-snapshot-store}'), phase $(ctl_phase r1 etcd-main)"

# ---- R0 control, then R1
WH_AS_NS=r0 wh_await_admitted 15 "control: the claims of hibernated r0/etcd-main were not deleted" \
    wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2
sleep 2
holes=0
for ns in r0 r1; do
    out=$(WH_AS_NS=$ns wh_as alice delete pvc etcd-main-etcd-main-0 etcd-main-etcd-main-1 etcd-main-etcd-main-2 --wait=false 2>&1)
    n=0
    for i in 0 1 2; do gone $ns etcd-main-etcd-main-$i && n=$((n + 1)); done
    snaps=$(snap_s3 ls "$(prefix $ns)/" | grep -c 'Full-' || true)
    if [ $ns = r0 ]; then
        [ "$n" = 3 ] || ctl_fail "control: the claims of hibernated r0/etcd-main were not deleted: $out"
        [ "$snaps" -gt 0 ] || ctl_fail "control: r0's final snapshot is not in the store"
        echo "ok: control: R0: the claims of a hibernated Etcd go while its final snapshot is in the store it names"
    elif [ "$n" -gt 0 ] && [ "$snaps" = 0 ]; then
        echo "HOLE: R1: $n member claim(s) of hibernated r1/etcd-main deleted while the store it names ($(prefix r1)) holds no snapshot: its final snapshot ${FINAL[r1]} (every acknowledged write) was deleted by the deletion Job of its own earlier entry $old after a move away and back; the wake's members start empty and restore nothing"
        holes=$((holes + 1))
    else echo "held: R1: $n claim(s) gone, $snaps full snapshot(s) under $(prefix r1): $(tr '\n' ' ' <<<"$out" | head -c 400)"; fi
done
ctl_stop

[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): a hibernated Etcd's claims freed over a final snapshot etcd-warden deleted"; exit 1; }
echo "attack14_sleep_store_roundtrip: ok"
