#!/usr/bin/env bash
# warden-controller SIGKILLed while a BackupEntry is Deleting, its deletion Job made and not run
# yet (no Job runner while the controller is up). While it is down: the tenant creates its
# Etcd again on the prefix (respelled: "./P/", "P//", "/P", provider S3), another namespace
# claims the prefix and its neighbours ("P/x", a string prefix of P), each with provider aws
# or S3: each must be refused (docs/backup-entries.md: refused "until the entry is gone"), and
# whatever is admitted writes into its prefix at once (its sidecar). Then the Job runner
# and a new controller start. Ground truth: s3rver. The Deleting entry's own snapshots may go;
# nothing written after the deletion began (by a claim admitted meanwhile) and nothing of
# another namespace's live Etcd (neighbour prefix "other--etcd-b") may go.
set -uo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
ksim_on_exit snap_cleanups
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }

P=shoot--etcd-a
etcd() { # NS NAME PROVIDER PREFIX
    kc apply -f - 2>&1 <<EOF
apiVersion: druid.gardener.cloud/v1alpha1
kind: Etcd
metadata: {name: $2, namespace: $1}
spec:
  replicas: 1
  labels: {app: etcd-statefulset}
  etcd: {clientPort: 2379, serverPort: 2380}
  backup: {port: 8080, store: {provider: $3, container: $SNAP_BUCKET, prefix: "$4", secretRef: {name: etcd-backup}}}
EOF
}
CTL_WEBHOOK_FLAGS="--backup-entries --etcd-backups"
echo snapshot >"$SNAP_WORK/obj"
snap_s3_start
ctl_stage
ctl_takeover_timings
ctl_s3_bucket_secret
ctl_namespace shoot other
ctl_s3_bucket 2s
ctl_store_etcd shoot etcd-a aws "$SNAP_BUCKET" $P
ctl_store_etcd other etcd-b aws "$SNAP_BUCKET" other--etcd-b
ctl_members shoot etcd-a
ctl_members other etcd-b
ctl_start
for e in shoot/etcd-a other/etcd-b; do
    ksim_wait 20 ctl_has_entry "${e%/*}" "${e#*/}" || ctl_fail "no entry for $e"
    ctl_members_seen "${e%/*}" "${e#*/}"
done
E=$(ctl_entry_of shoot etcd-a)
sleep 1
snap_s3 put "$P/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
snap_s3 put "other--etcd-b/v2/Full-00000000-00000100-1700000000.gz" "$SNAP_WORK/obj"
b_keys=$(snap_s3 ls other--etcd-b/ | sort)

kc -n shoot delete pod etcd-a-0 --grace-period=0 >/dev/null 2>&1
kc -n shoot delete statefulset etcd-a >/dev/null 2>&1
kc -n shoot delete etcd etcd-a >/dev/null || ctl_fail "cannot delete etcd-a"
has_job() { [ -n "$(kc -n etcd-warden get jobs -o name 2>/dev/null)" ]; }
ksim_wait 40 has_job || ctl_fail "no deletion Job for $E: $(kc get backupentry "$E" -o jsonpath='{.status}')"
echo "entry $E: $(ctl_entry_phase "$E"), Job $(kc -n etcd-warden get jobs -o name)"
ctl_kill9
echo "warden-controller killed with $E $(ctl_entry_phase "$E")"

written="" admitted=0
try() { # NS NAME PROVIDER PREFIX
    local out
    if out=$(etcd "$@"); then
        local key
        key="$(echo "$4" | sed 's#^\./##; s#^/##; s#//*#/#g; s#/$##')/v2/Full-00000101-00000200-1800000000.gz"
        snap_s3 put "$key" "$SNAP_WORK/obj"
        written="$written $key"
        echo "HOLE: admitted while Deleting: $1/$2 $3 \"$4\" (docs: refused until the entry is gone; its sidecar wrote $key)"
        admitted=$((admitted + 1))
        kc -n "$1" delete etcd "$2" >/dev/null 2>&1
    else
        echo "held: refused while Deleting: $1/$2 $3 \"$4\": $(echo "$out" | tail -1 | cut -c1-200)"
    fi
}
try shoot etcd-a S3 "./$P/"
try shoot etcd-a aws "$P//"
try shoot etcd-a s3 "/$P"
try shoot etcd-c aws "$P/x"
try other etcd-a aws "$P"
try other etcd-x S3 "$P/x"
try other etcd-y aws "shoot--etcd-"

ctl_jobs_serve etcd-warden
ctl_start
ksim_wait 60 ksim_gone backupentry "$E" || echo "entry $E stays: $(kc get backupentry "$E" -o jsonpath='{.status.phase} {.status.message}')"
ctl_stop
holes=$admitted
for k in $written; do
    if [ -z "$(snap_s3 ls "$k")" ]; then
        echo "HOLE: $k, written by an Etcd admitted while $E was Deleting, was deleted"
        holes=$((holes + 1))
    fi
done
if [ "$(snap_s3 ls other--etcd-b/ | sort)" != "$b_keys" ]; then
    echo "HOLE: other/etcd-b's snapshots were deleted: left $(snap_s3 ls other--etcd-b/ | tr '\n' ' ')"
    holes=$((holes + 1))
fi
[ "$holes" = 0 ] || exit 1
echo "held: left under $P: $(snap_s3 ls "$P" | tr '\n' ' '); other/etcd-b's snapshots kept"
echo "attack20_kill_mid_deletion: ok"
