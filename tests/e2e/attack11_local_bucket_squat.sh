#!/usr/bin/env bash
# One tenant of a Local BackupBucket partitioned by namespace blocks every other tenant's Etcds,
# restores and backup copies in it, by editing the hostPath of its own Etcd's Secret after
# admission. docs/backup-entries.md (Prefixes partitioned by namespace): "No two namespaces'
# claims overlap ... A new claim is therefore only ever in the way of its own namespace's
# claims"; "A Local bucket is partitioned the same way, by directory ... with prefixScope:
# Namespace every directory below it belongs to the namespace named by the path below the
# bucket's directory ... the bucket's directory itself (or a parent of it) are nobody's".
# A Local claim is hostPath + "/" + container + "/" + prefix with hostPath in a Secret the
# namespace edits at any time, and warden-webhook reads every other claim's Secret fresh: an
# Etcd admitted outside the bucket is moved onto the bucket's directory itself by its Secret.
#   BackupBucket local (Local, container bkt, hostPath /var/lib/lb, prefixScope Namespace)
#   selecting namespaces shoot and other. warden-controller not running (admission only).
#   1. shoot: Etcd etcd-a at bkt/shoot/etcd-a (Secret etcd-backup at /var/lib/lb).
#   2. other: Etcd etcd-sq, Local, container lib, prefix lb/bkt, Secret sq at /var/lib/evil
#      (directory /var/lib/evil/lib/lb/bkt: no bucket's, no claim's): admitted. other edits sq's
#      hostPath to /var: etcd-sq's directory is now /var/lib/lb/bkt, the bucket's own.
#   Then, in shoot's own part:
#   L1. shoot's new Etcd etcd-b at bkt/shoot/etcd-b;
#   L2. shoot's EtcdRestore (dry run) from its bkt/shoot/etcd-a into bkt/shoot/restored;
#   L3. shoot's EtcdBackup (dry run) of etcd-a to bkt/shoot/copy.
# Control: before other's edit, the same three are admitted (L1 as etcd-c).
# Oracle: admission of shoot's requests in its own part. Fails (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

. "$(dirname "$0")/../lib/localsquat.sh"

localsquat_stage "--backup-entries --etcd-backups $(localsquat_guard)"
ksim_wait 30 part_known || ctl_fail "the webhook's caches never held BackupBucket local"

out=$(etcd shoot etcd-a bkt shoot/etcd-a etcd-backup 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
out=$(etcd other etcd-sq lib lb/bkt sq 2>&1) || ctl_fail "other/etcd-sq at /var/lib/evil/lib/lb/bkt refused: $out"
ok "other's etcd-sq admitted at /var/lib/evil/lib/lb/bkt"
ksim_wait 30 backup copy-c || ctl_fail "etcd-a never in the webhook's caches (a copy of it refused)"
# etcd-sq in the webhook's caches: its Etcd (a dry run) again at its own directory is admitted
sq_known() { etcd other etcd-sq lib lb/bkt sq --dry-run=server >/dev/null 2>&1 &&
    ! etcd other etcd-sq2 lib lb/bkt sq --dry-run=server >/dev/null 2>&1; }
ksim_wait 30 sq_known || ctl_fail "etcd-sq never in the webhook's caches"
refused=$(tries c)
[ -z "$refused" ] || ctl_fail "control: shoot refused in its own part before other's edit: $refused"
ok "control: shoot's Etcd, EtcdRestore and EtcdBackup in its own part admitted"

local_host_path other sq /var # etcd-sq's directory: /var/lib/lb/bkt, the bucket's
# (the webhook reads every Local claim's Secret fresh: the edit counts at once)
refused=$(tries b)
holes=0
while IFS= read -r line; do
    [ -n "$line" ] || continue
    echo "HOLE: $line (namespace other's Etcd etcd-sq was moved onto the bucket's directory /var/lib/lb/bkt by an edit of its Secret sq)"
    holes=$((holes + 1))
done <<<"$refused"
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): one tenant's Secret edit blocks every tenant of a partitioned Local bucket"; exit 1; }
echo "attack11_local_bucket_squat: ok"
