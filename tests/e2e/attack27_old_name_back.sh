#!/usr/bin/env bash
# docs/backup-entries.md, "Upgrading": "Entries made then keep their names: an entry is looked up
# under its claim's 16-digit name, then under the 8-digit one, and one of either name that is the
# claim is its entry"; T1/T2: "warden-webhook, when it admits an UPDATE that changes anything of
# an Etcd's spec.backup.store ..., writes its time into the entries of the earlier and the new
# prefix that record this Etcd, as spec.etcdStoreChangedAt ... The deletion window ends no later".
# shoot/etcd-a's entry was made by an earlier release, under its claim's 8-digit name (planted
# before warden-controller starts, as an upgrade finds it); the controller adopts it (members
# seen). Then the move away and back of attack26_move_paused_back: warden-controller paused,
# etcd-a moved to shoot--away, the cluster on another seed writes into shoot--etcd-a, etcd-a
# moved back, the controller resumes. etcd-a is later deleted; past the grace period the entry's
# deletion must keep what the other seed wrote while etcd-a was away. Oracle: s3rver's listing.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
OLD=$P--$(printf 'Object|%s|\n%s' "$SNAP_BUCKET" "$P" | sha256sum | cut -c1-8)
kc apply -f - >/dev/null <<YAML || ctl_fail "cannot plant the earlier release's entry $OLD"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupEntry
metadata: {name: $OLD, labels: {app.kubernetes.io/managed-by: etcd-warden}}
spec:
  bucketName: s3
  prefix: "$P"
  store: {provider: S3, container: $SNAP_BUCKET, endpointOverride: ""}
  etcd: {namespace: shoot, name: etcd-a, uid: "$(jp shoot etcd/etcd-a '{.metadata.uid}')"}
  claimedAt: "$(jp shoot etcd/etcd-a '{.metadata.creationTimestamp}')"
YAML
ctl_start
rel_written
E=$REL_E
[ "$E" = "$OLD" ] || echo "note: the entry of etcd-a is $E, not the earlier release's $OLD"
echo "entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.spec.etcd.name} {end}')"
kill -STOP "$CTL_PID" && stopped=$CTL_PID; ksim_on_exit "kill -CONT $CTL_PID 2>/dev/null || true"
echo "controller paused; entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-600)"
kc -n shoot patch etcd etcd-a --type merge -p '{"spec":{"backup":{"store":{"prefix":"shoot--away"}}}}' >/dev/null ||
    { echo "held: the move away refused"; exit 0; }
echo "etcd-a moved to shoot--away (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')); entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.status.phase} {end}')"
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000500-1800000000.gz" "$SNAP_WORK/obj"
snap_s3 put "$P/v2/Incr-00000501-00000600-1800000100.gz" "$SNAP_WORK/obj"
x_keys=$(snap_s3 ls "$P/v2/" | grep -- '-18000' | sort)
echo "the other seed wrote $(echo $x_keys) while etcd-a was away"
sleep 1
out=$(kc -n shoot patch etcd etcd-a --type merge -p "{\"spec\":{\"backup\":{\"store\":{\"prefix\":\"$P\"}}}}" 2>&1) ||
    { echo "held: the move back refused: $out"; exit 0; }
echo "etcd-a moved back (generation $(jp shoot etcd/etcd-a '{.metadata.generation}')); entry $E spec $(rel_entry_field "$E" '{.spec}' | cut -c1-700)"
kill -CONT "$stopped"
sleep 8
echo "after the pause: entry $E phase $(ctl_entry_phase "$E"); spec $(rel_entry_field "$E" '{.spec}' | cut -c1-900); entries: $(kc get backupentries -o jsonpath='{range .items[*]}{.metadata.name}:{.status.phase} {end}')"
sleep 1
kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
ksim_wait 20 ctl_entry_phase_is "$E" PendingDeletion || ctl_fail "$E: $(ctl_entry_phase "$E")"
echo "entry $E PendingDeletion: spec $(rel_entry_field "$E" '{.spec}' | cut -c1-900)"
ksim_wait 90 ctl_entry_settled "$E" ||
    echo "entry $E stays: $(rel_entry_field "$E" '{.status.phase} {.status.message}' | cut -c1-300)"
echo "events of $E: $(ctl_events default "$E" | tail -3 | tr '\n' '|' | cut -c1-500)"
left=$(snap_s3 ls "$P/v2/" | sort)
echo "left under $P: $(echo $left)"
ctl_jobs_stop
ctl_stop
lost=$(comm -23 <(echo "$x_keys") <(echo "$left"))
if [ -n "$lost" ]; then
    echo "HOLE: the deletion of shoot/etcd-a's entry deleted $(echo $lost), written into \"$P\" by the cluster on another seed while etcd-a was moved away (away and back while warden-controller was paused; its entry of an earlier release's 8-digit name)"
    exit 1
fi
echo "held: the other seed's snapshots stay"
echo "attack27_old_name_back: ok"
