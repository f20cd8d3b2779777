#!/usr/bin/env bash
# A write over a connection opened before the cut is in the store after hibernation, with the
# real backup sidecar (etcd-backup-restore's etcdbrctl, $WARDEN_ETCDBRCTL) and Debian's etcd,
# on kube-sim with warden-webhook and warden-controller (issue 30, item 6):
#
# - etcd member etcd-main-0 and `etcdbrctl server` beside it (no delta snapshots: what a
#   restore brings back comes from a full snapshot);
# - a client on one established connection to etcd (tests/support/etcd_writer.py, etcd's
#   gRPC gateway, kept alive): removing the client Service's ports does not stop it, as it
#   does not stop kube-apiserver's stream; it logs each acknowledged write with its revision;
# - kubectl annotate etcd etcd-warden.io/hibernate=true: the final snapshot is taken while the
#   client writes on; the controller asks the sidecar for etcd's revision, sees it move on
#   (Warning FinalSnapshotBehind) and keeps the StatefulSet up, polled: never seen at 0 while
#   the client writes;
# - the client stopped (kube-apiserver scaled down), the StatefulSet goes to 0 and, when first
#   seen there, the store is listed;
# - the pod gone, etcdbrctl restore of the prefix: every write the client saw acknowledged is
#   restored, with its value.
#
# Skipped (77) without $WARDEN_ETCDBRCTL or etcd.
set -euo pipefail
. "$(dirname "$0")/../lib/sidecar.sh"

NS=shoot
STS=/apis/apps/v1/namespaces/$NS/statefulsets/etcd-main
command -v jq >/dev/null || ksim_fail "jq is not installed"

snap_s3_start
ctl_stage
druid_etcd "$NS" etcd-main --replicas 1
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
kc -n "$NS" create secret generic etcd-backup --from-literal=accessKeyID=S3RVER \
    --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
port=$(snap_free_port)
druid_backup_port "$NS" etcd-main "$port"
s3_via "$SNAP_S3_URL"

peer=$(snap_free_port)
snap_etcd_start etcd-main-0 "" "$peer"
url=$SNAP_ETCD_URL etcd_pid=$SNAP_ETCD_PID
snap_brctl_server etcd-main-0 "$url" "$peer" shoot--etcd-main "$port" --delta-snapshot-period 0

written=$SNAP_WORK/written
: >"$written"
python3 "$(dirname "$0")/../support/etcd_writer.py" "$url" /registry/leases/w "$written" 0.05 \
    2>"$SNAP_WORK/writer.log" &
writer_pid=$!
ksim_on_exit "reap_child $writer_pid 10 TERM || true"
ksim_wait 30 bash -c "[ \$(wc -l <'$written') -ge 10 ]" || ctl_fail "the client did not write: $(cat "$SNAP_WORK/writer.log")"

# spec.replicas of the StatefulSet, polled: when first seen at 0, the time and the last write
# acknowledged before it.
sts_watch() {
    local deadline=$((SECONDS + 300)) w
    while [ $SECONDS -lt $deadline ]; do
        w=$(tail -1 "$written")
        if [ "$(ctl_get "$STS" | jq -r .spec.replicas)" = 0 ]; then
            echo "$w" >"$SNAP_WORK/at-zero.tmp"
            mv "$SNAP_WORK/at-zero.tmp" "$SNAP_WORK/at-zero"
            return 0
        fi
        sleep 0.05
    done
}
sts_watch &
sts_pid=$!
ksim_on_exit "reap_child $sts_pid 10 TERM || true"

ctl_start --snapshot-retries 1
kc -n "$NS" annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
behind() { ctl_events "$NS" etcd-main | grep -q "Warning FinalSnapshotBehind"; }
deadline=$((SECONDS + 120))
until behind; do
    [ ! -f "$SNAP_WORK/at-zero" ] || break # judged below, by what the restore holds
    [ $SECONDS -lt $deadline ] || ctl_fail "no Warning FinalSnapshotBehind: $(ctl_events "$NS" etcd-main | tail -5)"
    sleep 0.2
done
if [ ! -f "$SNAP_WORK/at-zero" ]; then
    ok "etcd moved on after the final snapshot: Warning FinalSnapshotBehind, the StatefulSet up"
    kill -0 "$writer_pid" 2>/dev/null || ctl_fail "the client stopped: $(cat "$SNAP_WORK/writer.log")"
    ok "the client on its established connection still writes after the cut"
    reap_child "$writer_pid" 10 TERM || true
    ctl_wait_phase "$NS" etcd-main Hibernated 120
fi
reap_child "$writer_pid" 10 TERM || true
reap_child "$sts_pid" 30 none || true
[ -f "$SNAP_WORK/at-zero" ] || ctl_fail "spec.replicas 0 never seen"
last=$(cut -d' ' -f1 "$SNAP_WORK/at-zero")
ok "the StatefulSet at 0; the last write acknowledged before: w$last (revision $(cut -d' ' -f2 "$SNAP_WORK/at-zero"))"

snap_kill "$SNAP_BR_PID"
snap_kill "$etcd_pid"
snap_brctl_restore shoot--etcd-main "$SNAP_WORK/restore"
snap_etcd_start restored "$SNAP_WORK/restore/data" "$SNAP_RESTORE_PEER"
snap_etcd_dump "$SNAP_ETCD_URL" >"$SNAP_WORK/got"
for ((i = 1; i <= last; i++)); do
    grep -qxF "/registry/leases/w$i" "$SNAP_WORK/got" ||
        ctl_fail "w$i, acknowledged before the StatefulSet reached 0 (last w$last), is not in the store"
done
ok "etcdbrctl restore: all $last writes acknowledged before the StatefulSet reached 0 are in the store"
snap_kill "$SNAP_ETCD_PID"
ctl_stop
echo "sidecar_established: ok"
