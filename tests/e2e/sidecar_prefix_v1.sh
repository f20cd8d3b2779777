#!/usr/bin/env bash
# Why a prefix with a segment ending in "v1" is refused at admission, shown with the real
# backup sidecar (etcd-backup-restore's etcdbrctl) against s3rver: its snapshots under
# "prod-v1/etcd" are written ("prod-v1/etcd/v2/Full-..."), but its listing parses "v1/"
# first and ignores them as invalid, so `etcdbrctl restore` of that prefix restores nothing
# (an etcd started on its data directory has none of the keys); the same cluster backed up
# under "prod-v2/etcd" restores every key. warden-webhook refuses the first, admits the other.
set -euo pipefail
. "$(dirname "$0")/../lib/sidecar.sh"

snap_s3_start
snap_etcd_start src
src=$SNAP_ETCD_URL
for i in 1 2 3; do snap_etcdctl "$src" put "/registry/k$i" "v$i" >/dev/null; done
snap_etcd_dump "$src" >"$SNAP_WORK/want"
for p in prod-v1/etcd prod-v2/etcd; do
    snap_brctl_snapshot "${p%%/*}" "$src" "$p"
    snap_wait_key "$p/" "^$p/v2/Full-"
    snap_kill "$SNAP_BR_PID"
done
snap_restored_is prod-v2/etcd "$SNAP_WORK/want"
snap_kill "$SNAP_ETCD_PID"
ok "prod-v2/etcd: every key restored"
d=$SNAP_WORK/restore-v1
snap_brctl_restore prod-v1/etcd "$d"
snap_etcd_start restored-v1 "$d/data" "$SNAP_RESTORE_PEER"
got=$(snap_etcd_dump "$SNAP_ETCD_URL")
[ -z "$got" ] || ctl_fail "prod-v1/etcd restored keys: $got"
grep -q 'v1/' "$d.log" || grep -qi 'no base snapshot\|not found\|invalid' "$d.log" ||
    ctl_fail "restore log: $(tail -5 "$d.log")"
ok "prod-v1/etcd: snapshots written, none restored"

CTL_WEBHOOK_FLAGS=--backup-entries ctl_stage
kc create namespace shoot >/dev/null
if out=$(ctl_store_etcd shoot etcd-v1 S3 "$SNAP_BUCKET" prod-v1/etcd 2>&1); then
    ctl_fail "prod-v1/etcd admitted"
fi
case $out in *'spec.backup.store.prefix "prod-v1/etcd": a segment ends in "v1"'*) ;; *) ctl_fail "$out" ;; esac
ctl_store_etcd shoot etcd-v2 S3 "$SNAP_BUCKET" prod-v2/etcd
ok "warden-webhook refuses prod-v1/etcd, admits prod-v2/etcd"
echo "sidecar_prefix_v1: ok"
