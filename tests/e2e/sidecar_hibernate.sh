#!/usr/bin/env bash
# Hibernation with the real backup sidecar (etcd-backup-restore's etcdbrctl,
# $WARDEN_ETCDBRCTL) and Debian's etcd, driven with kubectl against kube-sim:
#
# - etcd member etcd-main-0 with `etcdbrctl server` beside it, its snapshots (gzip) under the
#   Etcd's prefix in s3rver, its HTTP API on a free port that the Etcd's spec.backup.port and
#   its client Service's backuprestore port name; no delta snapshots, so that whatever a
#   restore brings back comes from a full snapshot;
# - a client writes a key at a time for as long as the client Service has its client port
#   (the traffic the cut stops), logging when each write completed;
# - kubectl annotate etcd etcd-warden.io/hibernate=true: the phases go CuttingTraffic,
#   FinalSnapshot, ScalingDown, Hibernated; the final snapshot task asked the sidecar for
#   /snapshot/full?final=true and names its answer (a .final full snapshot, saved by it);
# - the sidecar reaches s3rver through tests/support/fault_proxy.py, which holds the upload
#   of that snapshot: for 3 s the StatefulSet stays at 1 replica (phase FinalSnapshot), and
#   once the upload is let through, spec.replicas (polled) is first seen at 0 with the
#   snapshot in the store;
# - the pod gone (sidecar and etcd stopped), etcdbrctl restore of the prefix, etcd started on
#   the restored data directory: exactly etcd-main-0's keys at the final snapshot's revision
#   (`etcdctl get "" --prefix --rev`), and among them every key whose write completed before
#   etcd-warden.io/traffic-cut-at.
#
# Skipped (77) without $WARDEN_ETCDBRCTL or etcd.
set -euo pipefail
. "$(dirname "$0")/../lib/sidecar.sh"

NS=shoot
SVC=/api/v1/namespaces/$NS/services/etcd-main-client
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
# the sidecar's uploads of a final snapshot wait for $release
release=$SNAP_WORK/release
proxy_start "$SNAP_S3_URL" --hold "PUT:.final:$release"
s3_via "$PROXY_URL"

peer=$(snap_free_port)
snap_etcd_start etcd-main-0 "" "$peer"
url=$SNAP_ETCD_URL etcd_pid=$SNAP_ETCD_PID
for i in 1 2 3; do snap_etcdctl "$url" put "/registry/pods/shoot/p$i" "pod-$i" >/dev/null; done
snap_brctl_server etcd-main-0 "$url" "$peer" shoot--etcd-main "$port" --delta-snapshot-period 0
initial=$(snap_s3 ls shoot--etcd-main/)

# The client: one key at a time while the Service has its client port; "N NANOSECONDS" per
# completed write in $SNAP_WORK/written. Ends by itself at the cut (or after 120 s).
writer() {
    local i=0 deadline=$((SECONDS + 120))
    while [ $SECONDS -lt $deadline ]; do
        ctl_get "$SVC" | jq -e '.spec.ports | any(.name == "client")' >/dev/null || return 0
        i=$((i + 1))
        snap_etcdctl "$url" put "/registry/leases/w$i" "value-$i" >/dev/null || return 1
        echo "$i $(date +%s%N)" >>"$SNAP_WORK/written"
    done
}
: >"$SNAP_WORK/written"
writer &
writer_pid=$!
ksim_on_exit "reap_child $writer_pid 10 TERM || true"

# spec.replicas of the StatefulSet, polled: when first seen at 0, the listing of the store then.
sts_watch() {
    local deadline=$((SECONDS + 120))
    while [ $SECONDS -lt $deadline ]; do
        if [ "$(ctl_get "$STS" | jq -r .spec.replicas)" = 0 ]; then
            snap_s3 ls shoot--etcd-main/ >"$SNAP_WORK/at-zero.tmp"
            mv "$SNAP_WORK/at-zero.tmp" "$SNAP_WORK/at-zero"
            return 0
        fi
        sleep 0.05
    done
}
sts_watch &
sts_pid=$!
ksim_on_exit "reap_child $sts_pid 10 TERM || true"

ctl_start
ctl_watch_phases "$NS" etcd-main "$CTL_DIR/phases"
# the client writes for two seconds at least before the hibernation
writing() { [ -s "$SNAP_WORK/written" ] && [ $(($(date +%s%N) - $(head -1 "$SNAP_WORK/written" | cut -d' ' -f2))) -gt 2000000000 ]; }
ksim_wait 30 writing || ctl_fail "the client wrote $(wc -l <"$SNAP_WORK/written") keys"
kc -n "$NS" annotate etcd etcd-main etcd-warden.io/hibernate=true >/dev/null
held() { grep -q 'fault-proxy: PUT .*\.final.*: holding' "$SNAP_WORK/proxy.log"; }
ksim_wait 60 held || ctl_fail "the sidecar did not upload a final snapshot (phases: $(ctl_phases "$CTL_DIR/phases"))"
at_one() { [ "$(ctl_get "$STS" | jq -r .spec.replicas)" = 1 ]; }
for _ in $(seq 30); do
    at_one || ctl_fail "the StatefulSet was scaled while the final snapshot's upload was held"
    sleep 0.1
done
expect "the phase while the upload is held" FinalSnapshot "$(ctl_phase "$NS" etcd-main)"
[ ! -f "$SNAP_WORK/at-zero" ] || ctl_fail "spec.replicas 0 seen while the upload was held"
ok "the final snapshot's upload held for 3 s: the StatefulSet stays at 1 replica"
touch "$release"
ctl_wait_phase "$NS" etcd-main Hibernated 90
ctl_await_phases "$CTL_DIR/phases" "- CuttingTraffic FinalSnapshot ScalingDown Hibernated"
expect "phases in order" "- CuttingTraffic FinalSnapshot ScalingDown Hibernated" "$(ctl_phases "$CTL_DIR/phases")"
st=0
reap_child "$writer_pid" 30 none || st=$?
[ "$REAP_KILLED" = 0 ] || ctl_fail "the client still wrote 30 s after Hibernated"
[ "$st" = 0 ] || ctl_fail "a write of the client failed"
n=$(wc -l <"$SNAP_WORK/written")
ok "Hibernated; the client wrote $n keys and stopped at the cut"

# the final snapshot: the sidecar's answer, a .final full snapshot it saved
task=$(jp "$NS" etcdopstasks '{range .items[?(@.spec.config.onDemandSnapshot.isFinal==true)]}{.metadata.name}{"\n"}{end}')
[ "$(wc -l <<<"$task")" -eq 1 ] && [ -n "$task" ] || ctl_fail "final snapshot tasks: $task"
expect "the final snapshot task" Succeeded "$(jp "$NS" "etcdopstask/$task" '{.status.state}')"
desc=$(jp "$NS" "etcdopstask/$task" '{.status.lastOperation.description}')
snap=$(sed -n 's/^full snapshot \(Full-[^ ]*\) taken (last revision [0-9]*, final)$/\1/p' <<<"$desc")
rev=$(sed -n 's/^full snapshot Full-[^ ]* taken (last revision \([0-9]*\), final)$/\1/p' <<<"$desc")
[[ $snap =~ ^Full-00000000-0*$rev-[0-9]+\.gz\.final$ ]] || ctl_fail "not a final full snapshot: $desc"
grep -q "Successfully saved full snapshot at: $snap\"" "$SNAP_WORK/br-etcd-main-0.log" ||
    ctl_fail "the sidecar's log does not show it saving $snap"
expect "the store: the initial and the final full snapshot" \
    "$(printf '%s\nshoot--etcd-main/v2/%s' "$initial" "$snap" | sort)" "$(snap_s3 ls shoot--etcd-main/ | sort)"
ok "the final snapshot: $snap (revision $rev), taken by the sidecar"

# the StatefulSet at 0 only once that snapshot was stored
expect "the StatefulSet at 0 (spec, status)" "0 0" "$(jp "$NS" sts/etcd-main '{.spec.replicas} {.status.replicas}')"
reap_child "$sts_pid" 10 none || true
[ -f "$SNAP_WORK/at-zero" ] || ctl_fail "spec.replicas 0 never seen"
grep -qxF "shoot--etcd-main/v2/$snap" "$SNAP_WORK/at-zero" ||
    ctl_fail "spec.replicas was 0 before $snap was stored (the store then: $(cat "$SNAP_WORK/at-zero"))"
ok "spec.replicas first seen at 0 with the final snapshot already stored"

# the pod gone; the sidecar's restore of the prefix
snap_kill "$SNAP_BR_PID"
snap_etcdctl "$url" get "" --prefix --rev="$rev" >"$SNAP_WORK/want"
snap_kill "$etcd_pid"
cut=$(jp "$NS" etcd/etcd-main '{.metadata.annotations.etcd-warden\.io/traffic-cut-at}')
cut_ns=$(($(date -u -d "$cut" +%s) * 1000000000))
awk -v c="$cut_ns" '$2 < c { print "/registry/leases/w" $1 }' "$SNAP_WORK/written" >"$SNAP_WORK/before-cut"
before=$(wc -l <"$SNAP_WORK/before-cut")
[ "$before" -ge 1 ] || ctl_fail "no write completed before the cut at $cut: $(head -3 "$SNAP_WORK/written")"
snap_brctl_restore shoot--etcd-main "$SNAP_WORK/restore"
snap_etcd_start restored "$SNAP_WORK/restore/data" "$SNAP_RESTORE_PEER"
snap_etcd_dump "$SNAP_ETCD_URL" >"$SNAP_WORK/got"
diff "$SNAP_WORK/want" "$SNAP_WORK/got" >&2 || ctl_fail "the restored keys differ from etcd-main-0's at revision $rev"
while read -r k; do
    grep -qxF "$k" "$SNAP_WORK/got" || ctl_fail "$k, written before the cut at $cut, is not restored"
done <"$SNAP_WORK/before-cut"
ok "etcdbrctl restore: etcd-main-0's keys at revision $rev, key for key; all $before writes completed before the cut ($cut) among them"
snap_kill "$SNAP_ETCD_PID"
ctl_stop
echo "sidecar_hibernate: ok"
