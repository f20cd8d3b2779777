#!/usr/bin/env bash
# The deletion of a deleted Etcd's backups beside a live cluster whose real backup sidecar
# (etcd-backup-restore's etcdbrctl, $WARDEN_ETCDBRCTL) writes into a prefix it overlaps,
# driven with kubectl against kube-sim; tests/support/job_exec.py runs the deletion Jobs:
#
# 1. etcd member etcd-main-0 holds known keys, and `etcdbrctl server` beside it writes Etcd
#    etcd-main's snapshots under shoot--etcd-main in s3rver;
# 2. three more Etcds of that bucket, made before the webhook's rule was there, are deleted
#    and their grace period (2 s) ends: etcd-twin on the same prefix (two Etcds, one entry:
#    its deletion would run delete-snapshots on the live cluster's prefix), etcd on
#    shoot--etcd (the sidecar lists shoot--etcd-main/... with it), and etcd-other on
#    shoot--other, which overlaps nothing;
# 3. etcd-other's prefix is emptied by its Job and its entry goes, so Jobs do run; the
#    deletions of the other two never start (PrefixConflict naming Etcd shoot/etcd-main), and
#    not one object under shoot--etcd-main is gone;
# 4. the sidecar and the member stopped, etcdbrctl restore of shoot--etcd-main, etcd started
#    on the restored data directory: every key and value of etcd-main-0, key for key.
#
# Skipped (77) without $WARDEN_ETCDBRCTL or etcd.
set -euo pipefail
. "$(dirname "$0")/../lib/sidecar.sh"

NS=shoot
conflict() { kc get backupentry "$1" -o jsonpath='{.status.conditions[?(@.type=="PrefixConflict")].message}'; }
blocked_by() { conflict "$1" | grep -qF "$2"; }
keys() { snap_s3 ls "$1" | sort; }

snap_s3_start
ctl_stage
ctl_s3_bucket_secret
kc create namespace "$NS" >/dev/null
ctl_backup_secret "$NS"
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply the BackupBucket"
apiVersion: etcd-warden.io/v1alpha1
kind: BackupBucket
metadata: {name: shared}
spec:
  provider: aws
  container: $SNAP_BUCKET
  secretRef: {namespace: etcd-warden, name: s3-bucket}
  deletionGracePeriod: 2s
EOF

# 1. the live cluster: its member, its keys, its sidecar
peer=$(snap_free_port)
snap_etcd_start etcd-main-0 "" "$peer"
url=$SNAP_ETCD_URL etcd_pid=$SNAP_ETCD_PID
for i in 1 2 3 4 5; do snap_etcdctl "$url" put "/registry/pods/$NS/p$i" "pod-$i" >/dev/null; done
snap_etcdctl "$url" put /registry/configmaps/$NS/cm "$(printf 'line 1\nline 2')" >/dev/null
snap_brctl_server etcd-main-0 "$url" "$peer" shoot--etcd-main "$(snap_free_port)" \
    --delta-snapshot-period 0
rev=$(snap_etcd_rev "$url")
snap_etcd_dump "$url" >"$SNAP_WORK/want"
[ "$(grep -c '^/registry/' "$SNAP_WORK/want")" -eq 6 ] || snap_fail "the member's keys: $(cat "$SNAP_WORK/want")"
main_before=$(keys shoot--etcd-main/)
[ -n "$main_before" ] || ctl_fail "the sidecar wrote nothing under shoot--etcd-main"
ok "etcd-main-0 at revision $rev; the sidecar's snapshots: $(tr '\n' ' ' <<<"$main_before")"

ctl_jobs_serve etcd-warden
ctl_start

# 2. the Etcds: etcd-twin takes the prefix's entry first, then the live etcd-main shares it
ctl_store_etcd "$NS" etcd-twin S3 "$SNAP_BUCKET" shoot--etcd-main
ksim_wait 20 ctl_has_entry "$NS" etcd-twin || ctl_fail "no entry for etcd-twin"
ctl_store_etcd "$NS" etcd-main S3 "$SNAP_BUCKET" shoot--etcd-main
ctl_store_etcd "$NS" etcd S3 "$SNAP_BUCKET" shoot--etcd
ctl_store_etcd "$NS" etcd-other S3 "$SNAP_BUCKET" shoot--other
ctl_members "$NS" etcd-other
for e in etcd etcd-other; do ksim_wait 20 ctl_has_entry "$NS" $e || ctl_fail "no entry for $e"; done
ctl_members_seen "$NS" etcd-other
# etcd-other's backups, written once its member was seen running (a deletion deletes only
# what was written from then on): a copy of the sidecar's full snapshot under its own prefix
sleep 1.1 # object times have seconds
snap_s3 get "$(head -1 <<<"$main_before")" >"$SNAP_WORK/full.gz"
other_key=shoot--other/v2/$(basename "$(head -1 <<<"$main_before")")
snap_s3 put "$other_key" "$SNAP_WORK/full.gz"
e_twin=$(ctl_entry_of "$NS" etcd-twin) e_short=$(ctl_entry_of "$NS" etcd) e_other=$(ctl_entry_of "$NS" etcd-other)
ok "entries: $e_twin (etcd-twin and etcd-main), $e_short, $e_other"
kc -n "$NS" delete etcd etcd-twin etcd etcd-other >/dev/null

# 3. the grace period over: the one that overlaps nothing is deleted, the others are blocked
ksim_wait 60 ksim_gone backupentry "$e_other" ||
    ctl_fail "$e_other stays: $(kc get backupentry "$e_other" -o jsonpath='{.status}')"
expect "etcd-other's prefix emptied" "" "$(keys shoot--other/)"
sleep 3 # the Jobs of the other entries, were they started with etcd-other's, would have run by now
expect "not one of etcd-main's objects deleted" "$main_before" "$(keys shoot--etcd-main/)"
for e in "$e_twin" "$e_short"; do
    ! ctl_events default "$e" | grep -q DeletionStarted || ctl_fail "$e: $(ctl_events default "$e")"
    ksim_wait 30 blocked_by "$e" 'the prefix "shoot--etcd-main" of Etcd shoot/etcd-main' ||
        ctl_fail "$e not blocked: $(kc get backupentry "$e" -o jsonpath='{.status}')"
    expect "$e: still PendingDeletion" PendingDeletion "$(ctl_entry_phase "$e")"
done
ok "the deletions beside the live cluster never started: $(conflict "$e_short")"

# 4. the live cluster's own restore
snap_kill "$SNAP_BR_PID"
snap_kill "$etcd_pid"
snap_restored_is shoot--etcd-main "$SNAP_WORK/want"
expect "the restored revision" "$rev" "$(snap_etcd_rev "$SNAP_ETCD_URL")"
ok "etcdbrctl restore of shoot--etcd-main: etcd-main-0's keys, key for key, at revision $rev"
snap_kill "$SNAP_ETCD_PID"
ctl_stop
echo "sidecar_bke_delete: ok"
