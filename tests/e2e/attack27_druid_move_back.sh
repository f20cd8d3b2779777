#!/usr/bin/env bash
# docs/backup-entries.md, T1/T2: "warden-webhook, when it admits an UPDATE that changes anything
# of an Etcd's spec.backup.store (no dry run), writes its time into the entries of the earlier
# and the new prefix that record this Etcd, as spec.etcdStoreChangedAt" -- whoever sends it.
# attack26_move_paused_back with the move away and back sent by a trusted reconciler (etcd-druid's
# service account, which warden-webhook lets through its component rules): warden-controller
# paused, etcd-a moved to shoot--away, the cluster on another seed writes into shoot--etcd-a,
# etcd-a moved back, the controller resumes. etcd-a is later deleted; past the grace period the
# entry's deletion must keep what the other seed wrote while etcd-a was away. Oracle: s3rver.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
rel_away_back kc_druid '{"prefix":"shoot--away"}' '{"prefix":"'"$P"'"}' "while etcd-a was away"
rel_judge "$REL_X" "by the cluster on another seed while etcd-a was moved away (away and back by etcd-druid's service account while warden-controller was paused)"
echo "attack27_druid_move_back: ok"
