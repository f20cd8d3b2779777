#!/usr/bin/env bash
# Deleting a failed EtcdRestore deletes "only the objects the restore wrote"
# (docs/backups-and-restores.md, "Deleting a restore": delete-snapshots --written-since
# status.copyStartedAt, "the restore's creation: no later than the copy"); the cleanup keeps
# the target while any backup sidecar may write it. A writer that has finished writes no more
# and holds nothing, yet what it wrote stays in the window. Namespace shoot restores its
# etcd-main into writer--b. Before the copy Job runs, a backup sidecar of namespace other (a
# bare Pod) writes its first full snapshot into writer--b, then its Pod is gone (deleted: the
# cluster moved on). The copy then fails (--require-empty-destination: it wrote nothing);
# shoot deletes the failed restore and its cleanup Job runs delete-snapshots on writer--b over
# [restore creation, failure]. Lost: other's snapshot, which the restore never wrote.
# Oracle: s3rver's listing of writer--b before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/rcleanup.sh"
kc -n other delete pod writer --grace-period=0 >/dev/null 2>&1 || ctl_fail "cannot delete other's writer pod"
echo "other's writer pod is gone"
rc_judge attack22_restore_writer_gone " (the writer then gone)"
