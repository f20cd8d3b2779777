#!/usr/bin/env bash
# docs/backup-entries.md, "The credentials held the whole time": the rule is compared again "at
# once when the Etcd's metadata.generation is not the one last compared (an edit of its
# secretRef, endpointOverride or provider is seen through the watch)"; the first comparison that
# does not hold writes spec.credentialsLostAt, and T2 is never later; "what was written between a
# loss and a later match cannot be shown to be the Etcd's". The Known gaps name only a Secret's
# *contents* edited and edited back (Secrets are not watched), not a secretRef edit.
# shoot/etcd-a (the bucket's credentials) runs; warden-controller is paused for a few seconds
# (SIGSTOP, a starved process, its watch unbroken); shoot points etcd-a's secretRef at its own
# Secret (its own keys and service: its sidecar writes there), the cluster on another seed writes
# into the operator's prefix, and shoot points the secretRef back. The controller resumes;
# etcd-a is later deleted: past the grace period the entry's deletion must keep what the other
# seed wrote while etcd-a's Secret was not the bucket's. Oracle: s3rver's listing.
set -uo pipefail
. "$(dirname "$0")/../lib/released.sh"

P=$REL_P
rel_stage "shoot" 30s
kc -n shoot create secret generic own --from-literal=accessKeyID=AKIATENANT \
    --from-literal=secretAccessKey=TENANT --from-literal=region=us-east-1 \
    --from-literal=s3ForcePathStyle=true --from-literal=endpoint=http://minio.shoot.example:9000 >/dev/null ||
    ctl_fail "cannot create Secret shoot/own"
ctl_start
rel_written
E=$REL_E
rel_away_back kc '{"secretRef":{"name":"own"}}' '{"secretRef":{"name":"etcd-backup"}}' "while etcd-a's secretRef named shoot/own"
rel_judge "$REL_X" "by the cluster on another seed while etcd-a's secretRef named the tenant's own Secret (edited and reverted while warden-controller was paused)" "$REL_OWN"
echo "attack26_secretref_paused_revert: ok"
