#!/usr/bin/env bash
# A tenant of a Local BackupBucket partitioned by namespace leaves a lasting claim on the bucket's
# own directory: it moves its Etcd there with its Secret's hostPath while warden-controller runs,
# then moves it back. docs/backup-entries.md (Prefixes partitioned by namespace): "No two
# namespaces' claims overlap ... A new claim is therefore only ever in the way of its own
# namespace's claims"; "A Local bucket is partitioned the same way, by directory ... the
# bucket's directory itself (or a parent of it) are nobody's"; (Stores no BackupBucket owns) "An
# Etcd whose Secret now places it in another directory has moved away from the entry's (its
# entry turns PendingDeletion and stays; the new directory gets its own)". An entry kept for the
# bucket's directory would stay in the way of every tenant's claim until the operator deletes it.
#   BackupBucket local (Local, container bkt, hostPath /var/lib/lb, prefixScope Namespace)
#   selecting namespaces shoot and other. warden-controller running.
#   1. shoot: Etcd etcd-a at bkt/shoot/etcd-a (Secret etcd-backup at /var/lib/lb).
#   2. other: Etcd etcd-sq, Local, container lib, prefix lb/bkt, Secret sq at /var/lib/evil
#      (directory /var/lib/evil/lib/lb/bkt): admitted. other edits sq's hostPath to /var
#      (etcd-sq's directory: /var/lib/lb/bkt, the bucket's own), waits for warden-controller's
#      pass, and edits it back to /var/lib/evil.
#   Then, in shoot's own part:
#   L1. shoot's new Etcd etcd-b at bkt/shoot/etcd-b;
#   L2. shoot's EtcdRestore (dry run) from its bkt/shoot/etcd-a into bkt/shoot/restored-b;
#   L3. shoot's EtcdBackup (dry run) of etcd-a to bkt/shoot/copy-b.
# Control: before other's edit, the same three are admitted (L1 as etcd-c).
# Oracle: admission of shoot's requests in its own part once other's Secret is back. Fails
# (HOLE) while the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/snapshot.sh"
. "$(dirname "$0")/../lib/controller.sh"
. "$(dirname "$0")/../lib/localstore.sh"
ksim_on_exit snap_cleanups

. "$(dirname "$0")/../lib/localsquat.sh"
# no refusal of shoot's three requests (suffix $1)
admitted() { [ -z "$(tries "$1")" ]; }

localsquat_stage "--backup-entries --etcd-backups --local-volume-guard"
ctl_start
ksim_wait 30 part_known || ctl_fail "the webhook's caches never held BackupBucket local"

out=$(etcd shoot etcd-a bkt shoot/etcd-a etcd-backup 2>&1) || ctl_fail "shoot/etcd-a refused: $out"
out=$(etcd other etcd-sq lib lb/bkt sq 2>&1) || ctl_fail "other/etcd-sq at /var/lib/evil/lib/lb/bkt refused: $out"
ok "other's etcd-sq admitted at /var/lib/evil/lib/lb/bkt"
ksim_wait 30 backup copy-c || ctl_fail "etcd-a never in the webhook's caches (a copy of it refused)"
refused=$(tries c)
[ -z "$refused" ] || ctl_fail "control: shoot refused in its own part before other's edit: $refused"
ok "control: shoot's Etcd, EtcdRestore and EtcdBackup in its own part admitted"

entries() { kc get backupentries -o json | jq -c '[.items[] | {n: .metadata.name, b: .spec.bucketName, p: .spec.prefix, e: .spec.etcd.name, ns: .spec.etcd.namespace, h: .metadata.annotations["etcd-warden.io/local-host-path"], d: .spec.etcdDeletedAt}]'; }
sq_entry() { # an entry of other's etcd-sq with hostPath $1
    kc get backupentries -o json | jq -e --arg h "$1" '[.items[] | select(.spec.etcd.namespace == "other"
        and .spec.etcd.name == "etcd-sq" and .metadata.annotations["etcd-warden.io/local-host-path"] == $h)] | length > 0' >/dev/null
}
ksim_wait 60 sq_entry /var/lib/evil || echo "note: no entry for etcd-sq at /var/lib/evil: $(entries)"
local_host_path other sq /var # etcd-sq's directory: /var/lib/lb/bkt, the bucket's
# warden-controller's pass: the entry of /var/lib/evil/lib/lb/bkt released as moved away
# (the pass that released it decided on an entry for the new directory too)
sq_away() { # the entry of etcd-sq's directory /var/lib/evil/lib/lb/bkt released ($1 true) or not
    kc get backupentries -o json | jq -e --argjson away "$1" '[.items[] | select(.spec.etcd.name == "etcd-sq"
        and .metadata.annotations["etcd-warden.io/local-host-path"] == "/var/lib/evil"
        and (.spec.etcdDeletedAt != null) == $away)] | length > 0' >/dev/null
}
ksim_wait 150 sq_away true || ctl_fail "etcd-sq's move never seen: $(entries)"
local_host_path other sq /var/lib/evil # and back
# warden-controller's pass: the entry of /var/lib/evil/lib/lb/bkt reattached
ksim_wait 150 sq_away false || ctl_fail "etcd-sq's return never seen: $(entries)"
ok "entries: $(entries)"
# the webhook's caches follow; a block that lasts is still there at the deadline
ksim_wait 30 admitted b || true
refused=$(tries b)
ctl_stop
holes=0
while IFS= read -r line; do
    [ -n "$line" ] || continue
    echo "HOLE: $line (namespace other's Etcd etcd-sq was moved onto the bucket's directory /var/lib/lb/bkt by an edit of its Secret sq, and back)"
    holes=$((holes + 1))
done <<<"$refused"
[ "$holes" = 0 ] || { echo "FAIL: $holes hole(s): one tenant's Secret edits leave a lasting block on every tenant of a partitioned Local bucket"; exit 1; }
echo "attack11_local_bucket_squat_kept: ok"
