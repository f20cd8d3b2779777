#!/usr/bin/env bash
# An EtcdBackup and an EtcdRestore with the real backup sidecar (etcd-backup-restore's
# etcdbrctl, $WARDEN_ETCDBRCTL) and Debian's etcd, driven with kubectl against kube-sim:
#
# 1. etcd member etcd-main-0 holds known keys; `etcdbrctl server` beside it writes its
#    snapshots (gzip) under the Etcd's prefix in s3rver, its HTTP API on a free port that
#    the Etcd's spec.backup.port and its client Service's backuprestore port name (the
#    clusterIP is on the loopback, the sidecar binds every address). More keys are written
#    after its initial full snapshot, and it takes no delta snapshots: only a snapshot taken
#    on demand holds them.
# 2. kubectl apply of an EtcdBackup into another bucket: warden-controller's EtcdOpsTask
#    executor asks the sidecar for a full snapshot (the task names the sidecar's answer,
#    at etcd's current revision), tests/support/job_exec.py runs the copy Job
#    (warden-snapshot): Completed, the copy byte for byte the sidecar's object.
# 3. kubectl apply of an EtcdRestore from that EtcdBackup into a new Etcd and prefix: the
#    restore copy puts exactly that snapshot under the new prefix, and the new Etcd uses it.
# 4. an EtcdRestore into shoot--etcd-main-restored (a sibling the sidecar lists with the
#    source's shoot--etcd-main) is refused naming Etcd shoot/etcd-main, nothing written;
# 5. etcdbrctl restore of the new prefix, etcd started on the restored data directory: every
#    key and value of etcd-main-0, key for key (`etcdctl get "" --prefix`);
# 6. the new cluster lives: more revisions than the source, and its own `etcdbrctl server`
#    takes a newer full snapshot under shoot--etcd-restored; check-prefixes finds no pair, and
#    etcdbrctl restore of the source's shoot--etcd-main still brings back etcd-main-0's keys,
#    key for key (the sibling, had it been admitted, would have made it fail: NoSuchKey).
#
# Skipped (77) without $WARDEN_ETCDBRCTL or etcd.
set -euo pipefail
. "$(dirname "$0")/../lib/sidecar.sh"

NS=shoot
OFFSITE=offsite
status() { jp "$NS" "etcdbackup/$1" "{.status.$2}"; }
terminal() { # kind name
    case $(jp "$NS" "$1/$2" '{.status.phase}') in Completed | Failed) return 0 ;; *) return 1 ;; esac
}
settled() { # kind name: wait (bounded) for a terminal phase, then want Completed
    ksim_wait 90 terminal "$1" "$2" ||
        ctl_fail "$1 $2: $(jp "$NS" "$1/$2" '{.status}'); jobs: $(tail -5 "$SNAP_WORK/job_exec.log")"
    [ "$(jp "$NS" "$1/$2" '{.status.phase}')" = Completed ] ||
        ctl_fail "$1 $2: $(jp "$NS" "$1/$2" '{.status}'); jobs: $(tail -5 "$SNAP_WORK/job_exec.log")"
}
restore_b1() { # name etcd-name prefix: an EtcdRestore of EtcdBackup b1 into a new Etcd
    kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply the EtcdRestore $1"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdRestore
metadata: {name: $1, namespace: $NS}
spec:
  source: {backupName: b1}
  target: {etcdName: $2, store: {container: $SNAP_BUCKET, prefix: $3}}
EOF
}
s3_secret() { # name
    kc -n "$NS" create secret generic "$1" --from-literal=accessKeyID=S3RVER \
        --from-literal=secretAccessKey=S3RVER --from-literal=region=us-east-1 \
        --from-literal=s3ForcePathStyle=true --from-literal=endpoint="$SNAP_S3_URL" >/dev/null
}

snap_s3_start
snap_s3_bucket "$OFFSITE"
ctl_stage
druid_etcd "$NS" etcd-main --replicas 1
kc -n "$NS" patch etcd etcd-main --type merge \
    -p "{\"spec\":{\"backup\":{\"store\":{\"container\":\"$SNAP_BUCKET\"}}}}" >/dev/null
s3_secret etcd-backup
s3_secret offsite
port=$(snap_free_port)
druid_backup_port "$NS" etcd-main "$port"

# 1. the member, its keys, its sidecar
peer=$(snap_free_port)
snap_etcd_start etcd-main-0 "" "$peer"
url=$SNAP_ETCD_URL etcd_pid=$SNAP_ETCD_PID
for i in 1 2 3 4 5; do snap_etcdctl "$url" put "/registry/pods/shoot/p$i" "pod-$i" >/dev/null; done
snap_brctl_server etcd-main-0 "$url" "$peer" shoot--etcd-main "$port" --delta-snapshot-period 0
initial=$(snap_s3 ls shoot--etcd-main/)
for i in 6 7 8; do snap_etcdctl "$url" put "/registry/pods/shoot/p$i" "pod-$i" >/dev/null; done
snap_etcdctl "$url" del /registry/pods/shoot/p2 >/dev/null
snap_etcdctl "$url" put /registry/configmaps/shoot/cm "$(printf 'line 1\nline 2')" >/dev/null
rev=$(snap_etcd_rev "$url")
snap_etcd_dump "$url" >"$SNAP_WORK/want"
[ "$(grep -c '^/registry/' "$SNAP_WORK/want")" -eq 8 ] || snap_fail "the member's keys: $(cat "$SNAP_WORK/want")"
ok "etcd-main-0 at revision $rev; the sidecar's initial full snapshot: $initial"

ctl_jobs_serve "$NS"
ctl_start

# 2. the EtcdBackup: a full snapshot from the sidecar, copied to the other bucket
kc apply -f - >/dev/null <<EOF || ctl_fail "cannot apply the EtcdBackup"
apiVersion: etcd-warden.io/v1alpha1
kind: EtcdBackup
metadata: {name: b1, namespace: $NS}
spec:
  etcdName: etcd-main
  destination: {provider: S3, container: $OFFSITE, prefix: copies/etcd-main, secretRef: {name: offsite}}
EOF
settled etcdbackup b1
desc=$(jp "$NS" etcdopstask/b1 '{.status.lastOperation.description}')
snap=$(status b1 snapshot.name)
[[ $snap =~ ^Full-00000000-0*$rev-[0-9]+\.gz$ ]] ||
    ctl_fail "the backup's snapshot $snap is not a full snapshot at revision $rev ($desc)"
expect "the task names the sidecar's snapshot" "full snapshot $snap taken (last revision $rev)" "$desc"
grep -qxF "shoot--etcd-main/v2/$snap" <<<"$initial" && ctl_fail "$snap is the initial full snapshot"
grep -q "Successfully saved full snapshot at: $snap\"" "$SNAP_WORK/br-etcd-main-0.log" ||
    ctl_fail "the sidecar's log does not show it saving $snap"
expect "status.snapshot.lastRevision" "$rev" "$(status b1 snapshot.lastRevision)"
expect "the copy in $OFFSITE" "copies/etcd-main/v2/$snap" "$(SNAP_BUCKET=$OFFSITE snap_s3 ls copies/)"
snap_s3 get "shoot--etcd-main/v2/$snap" >"$SNAP_WORK/source.gz"
SNAP_BUCKET=$OFFSITE snap_s3 get "copies/etcd-main/v2/$snap" >"$SNAP_WORK/copy.gz"
cmp -s "$SNAP_WORK/source.gz" "$SNAP_WORK/copy.gz" || ctl_fail "the copy differs from the sidecar's snapshot"
expect "status.snapshot.size" "$(stat -c %s "$SNAP_WORK/source.gz")" "$(status b1 snapshot.size)"
ok "EtcdBackup Completed: the sidecar's on-demand snapshot $snap, copied byte for byte"

# 3. the EtcdRestore from the backup into a new Etcd and prefix
restore_b1 r1 etcd-restored shoot--etcd-restored
settled etcdrestore r1
expect "the restored prefix" "shoot--etcd-restored/v2/$snap" "$(snap_s3 ls shoot--etcd-restored/)"
expect "the new Etcd's store" "$SNAP_BUCKET shoot--etcd-restored" \
    "$(jp "$NS" etcd/etcd-restored '{.spec.backup.store.container} {.spec.backup.store.prefix}')"
ok "EtcdRestore Completed: exactly the backup's snapshot under shoot--etcd-restored"

# 4. the old example of the docs: a target prefix the source's is the start of
restore_b1 r2 etcd-main-restored shoot--etcd-main-restored
ksim_wait 60 terminal etcdrestore r2 || ctl_fail "r2: $(jp "$NS" etcdrestore/r2 '{.status}')"
expect "the sibling's restore" Failed "$(jp "$NS" etcdrestore/r2 '{.status.phase}')"
jp "$NS" etcdrestore/r2 '{.status.error}' |
    grep -qF 'overlaps the prefix "shoot--etcd-main" of Etcd shoot/etcd-main' ||
    ctl_fail "r2's error: $(jp "$NS" etcdrestore/r2 '{.status.error}')"
expect "nothing under the sibling" "" "$(snap_s3 ls shoot--etcd-main-)"
kc -n "$NS" get etcd etcd-main-restored >/dev/null 2>&1 && ctl_fail "a refused restore created an Etcd"
ok "EtcdRestore into shoot--etcd-main-restored refused: it overlaps Etcd shoot/etcd-main's prefix"

# 5. the sidecar's own restore of the new prefix brings back every key of etcd-main-0
snap_kill "$SNAP_BR_PID"
snap_kill "$etcd_pid"
snap_restored_is shoot--etcd-restored "$SNAP_WORK/want"
expect "the restored revision" "$rev" "$(snap_etcd_rev "$SNAP_ETCD_URL")"
ok "etcdbrctl restore of shoot--etcd-restored: etcd-main-0's keys, key for key, at revision $rev"

# 6. the new cluster's own sidecar writes a newer full snapshot; the source still restores
url2=$SNAP_ETCD_URL etcd2_pid=$SNAP_ETCD_PID
for i in 1 2 3 4 5 6; do snap_etcdctl "$url2" put "/registry/pods/shoot/q$i" "new-$i" >/dev/null; done
rev2=$(snap_etcd_rev "$url2")
[ "$rev2" -gt "$rev" ] || ctl_fail "the new cluster's revision $rev2 is not above $rev"
port2=$(snap_free_port)
snap_brctl_server restored "$url2" "$SNAP_RESTORE_PEER" shoot--etcd-restored "$port2" \
    --delta-snapshot-period 0
curl -sf -X POST "http://127.0.0.1:$port2/snapshot/full" >/dev/null ||
    ctl_fail "the new cluster's sidecar took no full snapshot: $(tail -5 "$SNAP_WORK/br-restored.log")"
snap_wait_key shoot--etcd-restored/ "/v2/Full-00000000-0*$rev2-" 60
snap_kill "$SNAP_BR_PID"
snap_kill "$etcd2_pid"
snap_check_prefixes 0
snap_restored_is shoot--etcd-main "$SNAP_WORK/want"
ok "the new cluster's full snapshot at revision $rev2 under shoot--etcd-restored; check-prefixes: no pair; etcdbrctl restore of shoot--etcd-main: etcd-main-0's keys, key for key"
snap_kill "$SNAP_ETCD_PID"
ctl_stop
echo "sidecar_backup_restore: ok"
