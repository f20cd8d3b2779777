#!/usr/bin/env bash
# EtcdRestoreDrills on the whole stack, driven with kubectl: kube-sim, warden-controller, an
# Etcd whose store (s3rver) holds a real chain made by etcd-backup-restore's snapshotter beside
# Debian's etcd (a full snapshot of 30 keys, then deltas of puts and deletes), the Jobs run by
# tests/support/job_exec.py (warden-snapshot, and the real etcdbrctl for Restore mode's init
# container). The ground truth is etcd's own revision and key count, recorded while it ran,
# and the real `etcdbrctl restore` of the broken chain failing.
#
#   - Verify mode, run by hand (annotation, no minute boundary waited for): Restorable, the
#     restorable revision and key count etcd reported, the newest snapshot's time, a Normal
#     DrillSucceeded event, the per-Etcd metrics (restorable 1, the snapshot's time).
#   - A delta deleted from the store: etcdbrctl restore fails on it, and the drill says
#     NotRestorable naming the object, a Warning DrillFailed event, restorable 0, the newest
#     restorable snapshot's time unchanged (the recovery point no longer advances).
#   - The delta put back, Restore mode: etcdbrctl restore into the pod's emptyDir, then the
#     restored database's revision and key count equal etcd's; the delta deleted again: the
#     restore container fails and the drill is NotRestorable.
#   - History: at most failedJobsHistoryLimit (1) failed and successfulJobsHistoryLimit (3)
#     succeeded Jobs are kept.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
snap_need_sidecar
. "$(dirname "$0")/../lib/controller.sh"
# kubesim.sh's EXIT trap is the one left: it runs snapshot.sh's clean-ups (emulators, work dir).
ksim_on_exit snap_cleanups

NS=shoot
D=nightly
PREFIX=$NS--etcd-main
export CRONJOB_EXEC_PEER_PORT

# ---- the chain, made by the real snapshotter; etcd's revision and keys recorded ----
snap_s3_start
peer=$(snap_free_port)
snap_etcd_start src "" "$peer"
url=$SNAP_ETCD_URL
etcd_pid=$SNAP_ETCD_PID
for i in $(seq 1 30); do snap_etcdctl "$url" put "/registry/k/$i" "v$i" >/dev/null; done
snap_brctl_snapshot src "$url" "$PREFIX"
snap_wait_key "$PREFIX/v2/" "/Full-"
deltas() { snap_s3 ls "$PREFIX/v2/" | grep -c Incr- || true; }
for n in 1 2 3 4; do
    before=$(deltas)
    snap_etcdctl "$url" put "/registry/d/$n" "a$n" >/dev/null
    snap_etcdctl "$url" put "/registry/k/$n" "over$n" >/dev/null
    snap_etcdctl "$url" del "/registry/k/$((n + 10))" >/dev/null
    deadline=$((SECONDS + 60))
    until [ "$(deltas)" -gt "$before" ]; do
        [ $SECONDS -lt $deadline ] || snap_fail "no new delta snapshot"
        sleep 0.2
    done
done
rev=$(snap_etcd_rev "$url")
snap_wait_key "$PREFIX/v2/" "Incr-[0-9]+-$(printf %08d "$rev")-"
keys=$(snap_etcdctl "$url" get "" --prefix --keys-only | grep -c .)
snap_kill "$SNAP_BR_PID"
snap_kill "$etcd_pid"
chain=$(snap_s3 ls "$PREFIX/v2/" | sed -E 's/^(.*\/(Full|Incr)-[0-9]+-([0-9]+)-.*)$/\3 \1/' | sort -n | cut -d' ' -f2)
newest=$(echo "$chain" | tail -1)
newest_time=$(date -u -d "@$(echo "$newest" | sed -E 's/.*-([0-9]+)(\..*)?$/\1/')" +%Y-%m-%dT%H:%M:%SZ)
middle=$(echo "$chain" | grep Incr- | sed -n 2p)
echo "chain: $(echo "$chain" | wc -l) snapshots, etcd at revision $rev with $keys keys, newest $newest_time"

# ---- the cluster ----
ctl_stage
druid_etcd "$NS" etcd-main
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc -n "$NS" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
# The controller's test clock (the real one plus the offset in ms in $CTL_CLOCK): a drill's fire
# time is reached by moving it, not by waiting for 03:00.
ctl_clock_on
ctl_start
CRONJOB_EXEC_PEER_PORT=$(snap_free_port) # the restore's embedded etcd in Restore mode
ctl_jobs_serve "$NS"

dstatus() { jp "$NS" "etcdrestoredrill/$D" "{.status.$1}"; }
cond() { jp "$NS" "etcdrestoredrill/$D" "{.status.conditions[?(@.type==\"$1\")].$2}"; }
why() { echo "status: $(kc -n "$NS" get etcdrestoredrill "$D" -o jsonpath='{.status}'); jobs: $(tail -5 "$SNAP_WORK/job_exec.log" 2>/dev/null)"; }
# run-drill N: a drill by hand; waits until its Job's verdict is in the status
run_drill() {
    local before
    before=$(dstatus lastJob)
    kc -n "$NS" annotate --overwrite etcdrestoredrill "$D" "etcd-warden.io/run-drill=$1" >/dev/null
    ksim_wait 120 job_read "$before" || ctl_fail "drill $1: no verdict; $(why)"
}
job_read() { local j; j=$(dstatus lastJob); [ -n "$j" ] && [ "$j" != "$1" ]; }
metric() { # metric NAME: its value for the drill ("" when the series is absent)
    ctl_metrics | awk -v m="$1{etcd_namespace=\"$NS\",etcd=\"etcd-main\",drill=\"$D\"}" '$1 == m { printf "%.0f\n", $2 }'
}
metric_is() { [ "$(metric "$1")" = "$2" ]; }

kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply the drill"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestoreDrill
metadata: {name: $D, namespace: $NS}
spec:
  schedule: "0 3 * * *"
  mode: Verify
  target: {etcdName: etcd-main}
EOF
ksim_wait 30 test "$(cond Ready reason 2>/dev/null)" = Scheduled || ctl_fail "drill not scheduled: $(why)"
expect "no drill before its fire time" "" "$(dstatus lastResult)"

# ---- Verify mode on the good chain, on its schedule ----
# the controller's clock moved to 2 s past the next 03:00 (UTC), the drill reconciled
fire=$(date -u -d "$(date -u -d '+1 day' +%Y-%m-%d) 03:00:00" +%s)
echo $(((fire + 2) * 1000 - $(date +%s%3N))) >"$CTL_CLOCK.new" && mv "$CTL_CLOCK.new" "$CTL_CLOCK"
kc -n "$NS" annotate --overwrite etcdrestoredrill "$D" "test.etcd-warden.io/poke=1" >/dev/null
ksim_wait 120 job_read "" || ctl_fail "the drill did not fire at its schedule; $(why)"
expect "fired at its schedule" "$(date -u -d "@$fire" +%Y-%m-%dT%H:%M:%SZ)" "$(dstatus lastScheduleTime)"
expect "verdict" Restorable "$(dstatus lastResult)"
expect "restorable revision (etcd's)" "$rev" "$(dstatus restorableRevision)"
expect "key count (etcd's)" "$keys" "$(dstatus keyCount)"
expect "newest restorable snapshot" "$newest" "$(dstatus newestRestorableSnapshot)"
expect "its time" "$newest_time" "$(dstatus newestRestorableSnapshotTime)"
expect "condition Restorable" True "$(cond Restorable status)"
ctl_events "$NS" "$D" | grep -q "Normal DrillSucceeded: Etcd $NS/etcd-main is restorable" ||
    ctl_fail "no DrillSucceeded event: $(ctl_events "$NS" "$D")"
ok "Normal DrillSucceeded event"
ksim_wait 30 metric_is warden_etcd_restorable 1 || ctl_fail "restorable metric: $(metric warden_etcd_restorable)"
expect "newest restorable snapshot metric" "$(date -u -d "$newest_time" +%s)" \
    "$(metric warden_etcd_newest_restorable_snapshot_timestamp_seconds)"
[ -n "$(metric warden_etcd_last_successful_drill_timestamp_seconds)" ] || ctl_fail "no last successful drill metric"
kc -n "$NS" get erd "$D" | grep -qE "Verify +Restorable +$rev " || ctl_fail "printer columns: $(kc -n "$NS" get erd "$D")"
ok "kubectl get erd: MODE, LAST RESULT, RESTORABLE REVISION"

# ---- a delta gone from the store ----
snap_s3 get "$middle" >"$SNAP_WORK/middle"
snap_s3 rm "$middle"
d=$SNAP_WORK/oracle
mkdir -p "$d"
oport=$(snap_free_port)
if (cd "$d" && timeout 120 "$WARDEN_ETCDBRCTL" restore --storage-provider S3 --store-container "$SNAP_BUCKET" \
    --store-prefix "$PREFIX" --data-dir "$d/data" --name r \
    --initial-cluster "r=http://127.0.0.1:$oport" \
    --initial-advertise-peer-urls "http://127.0.0.1:$oport" \
    --snapstore-temp-directory "$d") >"$d.log" 2>&1; then
    ctl_fail "the oracle restored the chain without $middle"
fi
ok "etcdbrctl restore fails without $middle"
run_drill 2
expect "verdict without a delta" NotRestorable "$(dstatus lastResult)"
[ -n "$(dstatus failedObject)" ] || ctl_fail "no failedObject: $(why)"
expect "condition Restorable" "False/NotRestorable" "$(cond Restorable status)/$(cond Restorable reason)"
ctl_events "$NS" "$D" | grep -q "Warning DrillFailed: Etcd $NS/etcd-main is NOT restorable .*$(dstatus failedObject)" ||
    ctl_fail "no Warning DrillFailed naming the object: $(ctl_events "$NS" "$D")"
ok "Warning DrillFailed names $(dstatus failedObject): $(dstatus message)"
ksim_wait 30 metric_is warden_etcd_restorable 0 || ctl_fail "restorable metric: $(metric warden_etcd_restorable)"
expect "newest restorable snapshot: the last good drill's" "$newest_time" "$(dstatus newestRestorableSnapshotTime)"
expect "its metric unchanged" "$(date -u -d "$newest_time" +%s)" \
    "$(metric warden_etcd_newest_restorable_snapshot_timestamp_seconds)"

# ---- Restore mode: the real etcdbrctl restores into the emptyDir ----
snap_s3 put "$middle" "$SNAP_WORK/middle"
kc -n "$NS" patch etcdrestoredrill "$D" --type merge -p '{"spec":{"mode":"Restore"}}' >/dev/null
run_drill 3
[ "$(dstatus lastResult)" = Restorable ] || ctl_fail "Restore mode: $(why)"
ok "Restore mode verdict"
expect "restored revision (etcd's)" "$rev" "$(dstatus restoredRevision)"
expect "restored keys (etcd's)" "$keys" "$(dstatus restoredKeyCount)"
expect "restorable revision" "$rev" "$(dstatus restorableRevision)"
snap_s3 rm "$middle"
run_drill 4
expect "Restore mode verdict without a delta" NotRestorable "$(dstatus lastResult)"
dstatus message | grep -q "etcdbrctl restore exited with" || ctl_fail "not the restore's failure: $(why)"
ok "the restore container's failure: $(dstatus message | cut -c1-160)"

# ---- history: 1 failed Job kept, the succeeded ones ----
failed() { kc -n "$NS" get jobs -l "etcd-warden.io/copy-for=etcdrestoredrill.$D" \
    -o jsonpath='{range .items[?(@.status.failed)]}{.metadata.name}{"\n"}{end}' | grep -c . || true; }
ksim_wait 30 test "$(failed)" -eq 1 || ctl_fail "failed Jobs kept: $(failed)"
ok "one failed Job kept (failedJobsHistoryLimit 1)"
ctl_stop
