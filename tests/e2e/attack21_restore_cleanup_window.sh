#!/usr/bin/env bash
# Deleting a failed EtcdRestore deletes "only the objects the restore wrote"
# (docs/backups-and-restores.md, "Deleting a restore": delete-snapshots --written-since
# status.copyStartedAt, "the restore's creation: no later than the copy"). The window therefore
# opens at the restore's creation, while its copy Job may start much later (the Pod pending on
# a node, an image pull). Namespace shoot restores its etcd-main into writer--b. Before the
# copy Job runs, a backup sidecar of namespace other (a bare Pod, which no admission claims,
# and which warden-controller reads as a writer when it holds deletions) writes its first full
# snapshot into writer--b. The copy then fails (--require-empty-destination: it wrote
# nothing); shoot deletes the failed restore and its cleanup Job runs delete-snapshots on
# writer--b over [restore creation, failure]. Lost: other's snapshot, which the restore never
# wrote. Oracle: s3rver's listing of writer--b before and after.
set -uo pipefail
. "$(dirname "$0")/../lib/rcleanup.sh"
rc_judge attack21_restore_cleanup_window ""
