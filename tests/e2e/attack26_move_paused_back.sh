#!/usr/bin/env bash
# docs/backup-entries.md, T1: "An entry reattached (... an Etcd that moved away and back ...)
# gets spec.reattachedAt, and T1 is no earlier: between its release and the reattachment the
# prefix had no owner here, and whatever was written then may be another writer's ... so it
# stays"; "An Etcd that moves to another prefix leaves its old entry pending".
# A move away and back the controller does not see: warden-controller is paused (SIGSTOP, as a
# starved process; its watch unbroken, shorter than its Lease) for a few seconds;
# shoot moves etcd-a from shoot--etcd-a to shoot--away (warden-webhook admits it); the cluster
# on another seed writes into shoot--etcd-a; shoot moves etcd-a back. The controller resumes and
# finds the same Etcd (same uid) on its entry's prefix. etcd-a is later deleted; past the grace
# period the entry's deletion must keep what the other seed wrote while etcd-a was away.
# Oracle: s3rver's listing of shoot--etcd-a.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
ctl_start
rel_written
E=$REL_E
rel_away_back kc '{"prefix":"shoot--away"}' '{"prefix":"'"$P"'"}' "while etcd-a was away"
rel_judge "$REL_X" "by the cluster on another seed while etcd-a was moved away (away and back while warden-controller was paused)" "$REL_OWN"
echo "attack26_move_paused_back: ok"
