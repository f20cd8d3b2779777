#!/usr/bin/env bash
# Another namespace reads the Local backups a deleted Etcd left behind. Issue 29: no backup is
# handed to another tenant. docs/backup-entries.md (Stores no BackupBucket owns): when the Etcd
# is deleted its entry "stays ... and the prefix, with the snapshots the sidecar left there (the
# cluster's data, Secrets included), stays claimed for the Etcd's namespace: another
# namespace's Etcd, EtcdBackup or EtcdRestore there is refused at admission"; a drill's or
# restore's Local source is owned "when an Etcd of the namespace claims the directory and no claim of another
# namespace ... overlaps it". The old directory still holds every snapshot the sidecar wrote
# there (the cluster's data, its Secrets included), and nothing claims it for its namespace.
#   1. No BackupBucket. Namespace shoot: Etcd etcd-a, Local, container bkt, prefix
#      shoot--a/etcd, hostPath /var/lib/lb; its sidecar wrote a full snapshot to
#      /var/lib/lb/bkt/shoot--a/etcd. shoot deletes etcd-a (its snapshots stay on the node).
#   2. Namespace other: Etcd etcd-x, Local, container bkt, prefix shoot--a/etcd, hostPath
#      /var/lib/lb (no Secret edited after admission), then
#      D1. an EtcdRestoreDrill of etcd-x run by hand;
#      R1. an EtcdRestore r, source Local bkt/shoot--a/etcd (its Secret at /var/lib/lb), target
#          Local obkt/other/restored.
# Control: shoot's own drill of etcd-a, before the move, reads its snapshot (the fixture is no
# bbolt database: the verdict NotRestorable names it).
# Oracle: other's drill Jobs (their hostPath volumes) and its status (the snapshot it read), and
# the node's directories (shoot's snapshot under other's restore target). Fails (HOLE) while
# the hole exists.
set -euo pipefail
. "$(dirname "$0")/../lib/localleft.sh"
local_left_attack deleted attack10_local_deleted_away
